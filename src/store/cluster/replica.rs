//! A local store that feeds and follows the cluster's write log.
//!
//! The cluster holds `cluster_log`: one row per committed write
//! transaction of any node, numbered `seq` 1, 2, 3, ... with the
//! statements that transaction ran (`write_log`). A node commits its
//! transaction to the cluster as one rqlite transaction (one Raft entry)
//! holding the log row and the statements themselves, so the cluster's own
//! tables follow too; only then does the transaction commit locally, and
//! only then does its writer hear of it. The log row's `seq` is the one
//! after the last the node applied, and `seq` is the table's key: should
//! another node have taken that number first, the cluster refuses the
//! whole transaction, which rolls back here too. Each transaction's
//! `batch`, unique as well, names it, so an answer lost in a leader change
//! is settled by reading back who holds the number: a retry can never
//! apply twice.
//!
//! Between transactions (before each batch, and every
//! [`FOLLOW_INTERVAL`] when idle) the node applies the entries it has not
//! seen, in order, in local transactions of their own: the same
//! statements on the same rows make the same rows (`tests/cluster.rs`).
//! The last `seq` applied is the local database's `user_version`, written
//! in the transaction that applied it, so a crash leaves the two in step.
//!
//! Not yet replicated: the vector files (a follower's vector lane misses
//! what others wrote) and the writer's in-memory name log; until they
//! are, one node writes and the others follow.

use rusqlite::types::Value;
use rusqlite::Connection;
use serde_json::{json, Value as Json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::client::{ClusterClient, ClusterError, ReadLevel};
use super::wire::{Param, Statement};
use crate::limits::CLUSTER_RETRY_PAUSE;
use crate::store::write_log::{Recorded, Replicator};

/// How often an idle node looks for entries others wrote.
pub const FOLLOW_INTERVAL: Duration = Duration::from_millis(50);

/// Most log entries read from the cluster in one request.
pub const FOLLOW_BATCH: usize = 64;

/// How long a commit whose answer was lost is settled before it fails.
pub const SETTLE_DEADLINE: Duration = Duration::from_secs(30);

/// The log's table, created in the cluster by [`ClusterReplicator::new`].
pub const LOG_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_log (
    seq        INTEGER PRIMARY KEY,
    batch      TEXT    NOT NULL UNIQUE,
    statements TEXT    NOT NULL
)";

/// Feeds and follows the log for one local store.
pub struct ClusterReplicator {
    client: ClusterClient,
    /// This process's prefix for batch names (unique per start).
    node: String,
    batches: AtomicU64,
}

impl ClusterReplicator {
    /// A replicator for `client`'s cluster, naming its batches after
    /// `node` and the moment it starts.
    pub fn new(client: ClusterClient, node: &str) -> Result<ClusterReplicator, ClusterError> {
        client.commit(
            &[Statement::plain(LOG_TABLE)],
            Instant::now() + SETTLE_DEADLINE,
        )?;
        Ok(ClusterReplicator {
            client,
            node: format!("{node}-{}", crate::clock::now_ms()),
            batches: AtomicU64::new(0),
        })
    }

    /// Commits `statements` as entry `seq` named `batch`: `Ok` once the
    /// cluster holds it, `Err` if another batch took `seq` or it could not
    /// be settled in time.
    fn append(&self, seq: i64, batch: &str, statements: &[Statement]) -> Result<(), String> {
        let deadline = Instant::now() + SETTLE_DEADLINE;
        loop {
            match self.client.transaction(statements) {
                Ok(_) => return Ok(()),
                Err(ClusterError::Rejected(e)) if e.contains("cluster_log") => {
                    // seq or batch taken: by us on an earlier try, or not.
                    return match self.holder_of(seq) {
                        Ok(Some(b)) if b == batch => Ok(()),
                        Ok(_) => Err(format!("another node wrote entry {seq} first; retry")),
                        Err(e) => Err(e.to_string()),
                    };
                }
                Err(e @ ClusterError::Uncertain(_)) => {
                    log::warn!("entry {seq} uncertain, settling: {e}");
                    match self.holder_of(seq) {
                        Ok(Some(b)) if b == batch => return Ok(()),
                        Ok(Some(_)) => {
                            return Err(format!("another node wrote entry {seq} first; retry"))
                        }
                        // Not there (yet): sending it again cannot apply it twice.
                        Ok(None) | Err(_) => {}
                    }
                }
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e.to_string()),
            }
            if Instant::now() + CLUSTER_RETRY_PAUSE >= deadline {
                return Err(format!(
                    "entry {seq} not settled within {SETTLE_DEADLINE:?}"
                ));
            }
            std::thread::sleep(CLUSTER_RETRY_PAUSE);
        }
    }

    /// Which batch holds entry `seq`, read at the leader.
    fn holder_of(&self, seq: i64) -> Result<Option<String>, ClusterError> {
        let rows = self.client.query(
            &[Statement::new(
                "SELECT batch FROM cluster_log WHERE seq = ?",
                vec![Param::Int(seq)],
            )],
            ReadLevel::Leader,
        )?;
        Ok(rows[0]
            .rows
            .first()
            .and_then(|r| r[0].as_str())
            .map(str::to_string))
    }

    /// Applies the entries after the local position, in order, setting
    /// `applied_any` as it goes (so that it holds even when a later entry
    /// cannot be applied).
    fn follow(&self, conn: &Connection, applied_any: &mut bool) -> Result<(), String> {
        loop {
            let position = position(conn).map_err(|e| e.to_string())?;
            let rows = self
                .client
                .query(
                    &[Statement::new(
                        format!(
                            "SELECT seq, statements FROM cluster_log WHERE seq > ? \
                             ORDER BY seq LIMIT {FOLLOW_BATCH}"
                        ),
                        vec![Param::Int(position)],
                    )],
                    ReadLevel::Leader,
                )
                .map_err(|e| e.to_string())?;
            let entries = &rows[0].rows;
            if entries.is_empty() {
                return Ok(());
            }
            for (expected, entry) in (position + 1..).zip(entries) {
                let seq = entry[0].as_i64().ok_or("an entry without a number")?;
                if seq != expected {
                    return Err(format!("entry {expected} is missing (found {seq})"));
                }
                let text = entry[1].as_str().ok_or("an entry without statements")?;
                apply_entry(conn, seq, &decode(text)?)?;
                *applied_any = true;
            }
        }
    }
}

/// Applies one entry in a local transaction of its own, as its writer ran
/// it in one: the full-text index then flushes the same segments, and the
/// follower's pages come out byte for byte the writer's.
fn apply_entry(conn: &Connection, seq: i64, statements: &[Recorded]) -> Result<(), String> {
    conn.execute_batch("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
        .map_err(|e| e.to_string())?;
    let outcome = statements
        .iter()
        .try_for_each(|r| apply(conn, r))
        .and_then(|()| conn.execute_batch(&format!("PRAGMA user_version = {seq}")))
        .and_then(|()| conn.execute_batch("COMMIT"));
    outcome.map_err(|e| {
        let _ = conn.execute_batch("ROLLBACK");
        format!("entry {seq}: {e}")
    })
}

impl Replicator for ClusterReplicator {
    fn commit(&self, conn: &Connection, statements: &[Recorded]) -> Result<(), String> {
        let seq = position(conn).map_err(|e| e.to_string())? + 1;
        let batch = format!(
            "{}-{}",
            self.node,
            self.batches.fetch_add(1, Ordering::Relaxed)
        );
        let mut out = Vec::with_capacity(1 + statements.len());
        out.push(Statement::new(
            "INSERT INTO cluster_log(seq, batch, statements) VALUES (?, ?, ?)",
            vec![
                Param::Int(seq),
                batch.clone().into(),
                encode(statements).into(),
            ],
        ));
        for r in statements {
            out.push(Statement::from_recorded(&r.sql, &r.params)?);
        }
        self.append(seq, &batch, &out)?;
        // In the local transaction: committed with it, or not at all.
        conn.execute_batch(&format!("PRAGMA user_version = {seq}"))
            .map_err(|e| e.to_string())
    }

    fn catch_up(&self, conn: &Connection) -> bool {
        let mut applied_any = false;
        if let Err(e) = self.follow(conn, &mut applied_any) {
            log::warn!("cannot follow the cluster's log: {e}");
        }
        applied_any
    }

    fn idle_interval(&self) -> Option<Duration> {
        Some(FOLLOW_INTERVAL)
    }
}

/// The last entry the local database applied.
fn position(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

fn apply(conn: &Connection, r: &Recorded) -> rusqlite::Result<()> {
    if r.params.is_empty() {
        conn.execute_batch(&r.sql)
    } else {
        conn.execute(&r.sql, rusqlite::params_from_iter(&r.params))
            .map(|_| ())
    }
}

/// Statements as the log stores them: `[[sql, [[kind, value], ...]], ...]`,
/// every value typed and exact (a REAL as the hex of its bits, a BLOB as
/// hex), so a follower binds what the writer bound.
pub fn encode(statements: &[Recorded]) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    Json::Array(
        statements
            .iter()
            .map(|r| {
                let params: Vec<Json> = r
                    .params
                    .iter()
                    .map(|v| match v {
                        Value::Null => json!(["n"]),
                        Value::Integer(i) => json!(["i", i]),
                        Value::Real(f) => json!(["r", format!("{:016x}", f.to_bits())]),
                        Value::Text(t) => json!(["t", t]),
                        Value::Blob(b) => json!(["b", hex(b)]),
                    })
                    .collect();
                json!([r.sql, params])
            })
            .collect(),
    )
    .to_string()
}

/// [`encode`] read back.
pub fn decode(text: &str) -> Result<Vec<Recorded>, String> {
    let bad = || "a log entry that is not what encode writes".to_string();
    let json: Json = serde_json::from_str(text).map_err(|_| bad())?;
    let unhex = |h: &str| -> Option<Vec<u8>> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
            .collect()
    };
    json.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|s| {
            let sql = s[0].as_str().ok_or_else(bad)?.to_string();
            let params = s[1]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|p| {
                    Ok(match (p[0].as_str(), &p[1]) {
                        (Some("n"), _) => Value::Null,
                        (Some("i"), v) => Value::Integer(v.as_i64().ok_or_else(bad)?),
                        (Some("r"), v) => Value::Real(f64::from_bits(
                            u64::from_str_radix(v.as_str().ok_or_else(bad)?, 16)
                                .map_err(|_| bad())?,
                        )),
                        (Some("t"), v) => Value::Text(v.as_str().ok_or_else(bad)?.to_string()),
                        (Some("b"), v) => {
                            Value::Blob(unhex(v.as_str().ok_or_else(bad)?).ok_or_else(bad)?)
                        }
                        _ => return Err(bad()),
                    })
                })
                .collect::<Result<_, String>>()?;
            Ok(Recorded { sql, params })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_every_value_exactly() {
        let statements = vec![
            Recorded {
                sql: "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)".into(),
                params: vec![
                    Value::Null,
                    Value::Integer(i64::MIN),
                    Value::Real(0.1 + 0.2),
                    Value::Text("é \"quoted\" ?1".into()),
                    Value::Blob(vec![0, 255, 16]),
                ],
            },
            Recorded {
                sql: "CREATE TABLE x(a)".into(),
                params: vec![],
            },
        ];
        assert_eq!(decode(&encode(&statements)).unwrap(), statements);
        assert!(decode("[[\"SELECT 1\", [[\"q\", 1]]]]").is_err());
        assert!(decode("{}").is_err());
    }
}
