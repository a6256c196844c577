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
//! apply twice. Each operation the entry holds (each write the writer ran
//! under its own savepoint) has an id of its own as well, recorded in the
//! same transaction in `cluster_ops` under a unique key: whatever the
//! entry it travels in, an operation sent again is refused whole, nothing
//! of it applied twice.
//!
//! The writer commits each batch of writes as one transaction
//! ([`Replicator::whole_batches`]), so a batch is one entry and one round
//! trip, however many large writes it holds. The entry keeps the
//! savepoints the writer opened around each write
//! (`write_log::SAVEPOINT_MARK`); a follower opens them too, so its
//! full-text index flushes where the writer's did, while the cluster gets
//! the statements alone.
//!
//! Between transactions (before each batch, and every
//! [`FOLLOW_INTERVAL`] when idle) the node applies the entries it has not
//! seen, in order, in local transactions of their own: the same
//! statements on the same rows make the same rows (`tests/cluster.rs`).
//! The last `seq` applied is the local database's `user_version`, written
//! in the transaction that applied it, so a crash leaves the two in step.
//!
//! Vector rows travel in the log as statements on `cluster_vectors`
//! (`write_log::VECTOR_PUT`, `VECTOR_CLEAR`): the cluster keeps them as
//! rows, and a follower appends them to (or zeroes them in) its own vector
//! files, in the entry's transaction, so its vector lane sees what every
//! node wrote. A node whose files are missing or damaged rebuilds them
//! from the cluster's rows first (`vector_cache`).
//!
//! Every wait of a batch comes out of one budget, counted from when its
//! oldest write reached the writer ([`Deadlines`]): taking the turn,
//! following the log and the commit together wait at most
//! [`CLUSTER_WRITE_WAIT`] for a leader, and at most
//! [`CLUSTER_WRITE_DEADLINE`] in all, settling a lost answer included;
//! each request to the cluster ends by then (a frozen node, which accepts
//! connections and never answers, cannot hold the writer longer). A batch
//! whose turn found no leader for the whole wait is refused at once
//! ([`Refusal::NoQuorum`]), unsent. Losing and regaining the quorum is
//! logged once each ([`Quorum`]).
//!
//! Several nodes may write. They take turns (`cluster_turn`, a lease:
//! [`super::leases`]), and a node follows the log when its turn begins, so
//! each batch is built on every entry before it. Should a turn lapse and another node take the
//! entry's number first, the batch is refused ([`Refusal::NotApplied`]:
//! 503 with `Retry-After` to a client, nothing stored), the node applies
//! that entry as it follows, and its writer's name log starts afresh.

use rusqlite::Connection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::apply::apply_entry;
use super::client::{ClusterClient, ClusterError, ReadLevel};
use super::entry::{decode, encode};
use super::leases::{Leases, CHORES_TABLE, TURN_IDLE, TURN_LEASE, TURN_TABLE};
use super::ops::{operations, OPS_TABLE, RECORD_OPS};
use super::own_jobs;
use super::quorum::Quorum;
use super::wire::{Param, Statement};
use crate::limits::{
    CLUSTER_RETRY_PAUSE, CLUSTER_WRITE_DEADLINE, CLUSTER_WRITE_WAIT, MAX_CLUSTER_STATEMENTS,
};
use crate::store::vectors::VectorIndex;
use crate::store::write_log::{is_savepoint_mark, Recorded, Refusal, Replicator, VECTOR_TABLE};

/// How often an idle node looks for entries others wrote.
pub const FOLLOW_INTERVAL: Duration = Duration::from_millis(50);

/// Least time between two warnings that the log cannot be followed (for
/// a reason other than a lost quorum, which [`Quorum`] reports).
pub const FOLLOW_WARN_INTERVAL: Duration = Duration::from_secs(10);

/// Most log entries read from the cluster in one request.
pub const FOLLOW_BATCH: usize = 64;

/// How long a commit whose answer was lost is settled before it fails:
/// for a write, its [`CLUSTER_WRITE_DEADLINE`]; the same for the one-off
/// commits of a node joining the cluster.
pub const SETTLE_DEADLINE: Duration = CLUSTER_WRITE_DEADLINE;

/// The waits of one batch of writes, counted from when its oldest write
/// reached the writer.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    /// Past this, nothing waits for a leader any more
    /// ([`CLUSTER_WRITE_WAIT`]).
    leader: Instant,
    /// Past this, the batch is answered whatever the cluster says
    /// ([`CLUSTER_WRITE_DEADLINE`]).
    answer: Instant,
}

impl Deadlines {
    fn from(submitted: Instant) -> Deadlines {
        Deadlines {
            leader: submitted + CLUSTER_WRITE_WAIT,
            answer: submitted + CLUSTER_WRITE_DEADLINE,
        }
    }
}

/// What [`ClusterReplicator::before_batch`] found for the batch's commits.
#[derive(Debug, Clone)]
struct Batch {
    deadlines: Deadlines,
    /// Set when its turn found no leader for the whole leader wait: its
    /// commits are refused unsent.
    no_quorum: Option<String>,
}

/// The log's table, created in the cluster by [`ClusterReplicator::new`].
pub const LOG_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_log (
    seq        INTEGER PRIMARY KEY,
    batch      TEXT    NOT NULL UNIQUE,
    statements TEXT    NOT NULL
)";

/// Entries are only ever added after the newest: with old entries pruned
/// ([`Replicator::prune_log`]), a number below the newest could otherwise
/// be taken again by a node that fell behind, and no node would ever apply
/// it. The abort fails the whole rqlite transaction, as a taken number does.
pub const LOG_ORDER_TRIGGER: &str = "CREATE TRIGGER IF NOT EXISTS cluster_log_in_order
    BEFORE INSERT ON cluster_log
    WHEN NEW.seq <= (SELECT COALESCE(MAX(seq), 0) FROM cluster_log)
    BEGIN SELECT RAISE(ABORT, 'cluster_log: an entry after the newest only'); END";

/// Facts about the cluster's memory: `id`, the name every replica of it
/// keeps (`cluster::node`).
pub const META_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
)";

/// When the log's newest entry was seen (`seq` as of `at_ms`, by the clock
/// of the node that looked): what pruning the log by age goes by, since
/// entries carry no time of their own.
pub const LOG_MARKS_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_log_marks (
    seq   INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL
)";

/// Feeds and follows the log for one local store.
pub struct ClusterReplicator {
    client: ClusterClient,
    /// The turn to write and the chores this node holds.
    leases: Leases,
    /// This process's prefix for batch names (unique per start).
    node: String,
    batches: AtomicU64,
    /// Operations named so far (see [`OPS_TABLE`]).
    ops: AtomicU64,
    /// How long the log keeps an entry ([`Replicator::prune_log`]).
    log_retention: Duration,
    /// When this node last looked at pruning the log.
    pruned_at: std::sync::Mutex<Option<Instant>>,
    /// When a failure to follow the log was last logged as a warning.
    follow_warned: std::sync::Mutex<Option<Instant>>,
    /// Set when the log no longer holds the next entry this node needs
    /// ([`Replicator::stranded`]).
    stranded: std::sync::atomic::AtomicBool,
    /// Whether the cluster has a leader, as last found.
    quorum: Quorum,
    /// The batch being written (set before it, read by its commits).
    batch: std::sync::Mutex<Option<Batch>>,
    /// The largest job id the local journal held before the open
    /// transaction ([`own_jobs`]).
    jobs_seen: std::sync::atomic::AtomicI64,
}

impl ClusterReplicator {
    /// A replicator for `client`'s cluster, naming its batches after
    /// `node` and the moment it starts.
    pub fn new(client: ClusterClient, node: &str) -> Result<ClusterReplicator, ClusterError> {
        create_cluster_tables(&client)?;
        let node = format!("{node}-{}", crate::clock::now_ms());
        Ok(ClusterReplicator {
            leases: Leases::new(&client, node.clone())?,
            client,
            node,
            batches: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            log_retention: crate::limits::DEFAULT_CLUSTER_LOG_RETENTION,
            pruned_at: std::sync::Mutex::new(None),
            follow_warned: std::sync::Mutex::new(None),
            stranded: Default::default(),
            quorum: Quorum::default(),
            batch: std::sync::Mutex::new(None),
            jobs_seen: Default::default(),
        })
    }

    /// Logs a failure to follow the log: a lost quorum as [`Quorum`]
    /// does (once), anything else as a warning at most every
    /// [`FOLLOW_WARN_INTERVAL`] (an idle node tries every
    /// [`FOLLOW_INTERVAL`]), the repeats at debug level.
    fn follow_failed(&self, e: &FollowError) {
        let e = match e {
            FollowError::Cluster(c) if c.is_transient() => return self.quorum.failed(c),
            FollowError::Cluster(c) => c.to_string(),
            FollowError::Local(m) => m.clone(),
        };
        let mut warned = self.follow_warned.lock().unwrap_or_else(|p| p.into_inner());
        if warned.is_none_or(|t| t.elapsed() >= FOLLOW_WARN_INTERVAL) {
            *warned = Some(Instant::now());
            log::warn!("cannot follow the cluster's log: {e}");
        } else {
            log::debug!("cannot follow the cluster's log: {e}");
        }
    }

    /// The same, keeping log entries for `retention`.
    pub fn with_log_retention(mut self, retention: Duration) -> ClusterReplicator {
        self.log_retention = retention;
        self
    }

    /// Commits `statements` as entry `seq` named `batch`: `Ok` once the
    /// cluster holds it. Waits for a leader until the batch's leader
    /// deadline. A try whose answer was lost is settled by asking who
    /// holds `seq`: until the answer deadline, but waiting no longer than
    /// [`CLUSTER_WRITE_WAIT`] without a leader to ask (a cluster without a
    /// quorum cannot say, and the writer must not hang on it).
    fn append(
        &self,
        seq: i64,
        batch: &str,
        statements: &[Statement],
        deadlines: Deadlines,
    ) -> Result<(), Refusal> {
        if statements.len() > MAX_CLUSTER_STATEMENTS {
            return Err(Refusal::TooLarge(statements.len()));
        }
        let taken = || Refusal::NotApplied(format!("another node wrote entry {seq} first"));
        let uncertain = |why: String| {
            // Without a quorum that is what every write comes to, and the
            // loss was logged once already.
            if self.quorum.lost() {
                log::debug!("entry {seq} may or may not be in the cluster's log: {why}");
            } else {
                log::warn!("entry {seq} may or may not be in the cluster's log: {why}");
            }
            Refusal::Uncertain(why)
        };
        // Since when a try may have applied and no leader has said whether
        // it did: then only settling ends it.
        let mut unsettled: Option<Instant> = None;
        let mut last: String;
        loop {
            match self
                .client
                .transaction_by(statements, Some(deadlines.answer))
            {
                Ok(_) => {
                    self.quorum.reached();
                    return Ok(());
                }
                Err(ClusterError::Rejected(e)) if e.contains("cluster_ops") => {
                    // An operation of this entry is in another entry: it
                    // was applied there, and following applies it here.
                    return Err(uncertain(format!(
                        "entry {seq} repeats an operation the log holds: {e}"
                    )));
                }
                Err(ClusterError::Rejected(e)) if e.contains("cluster_log") => {
                    // seq or batch taken: by us on an earlier try, or not.
                    let by = deadlines.answer.min(Instant::now() + CLUSTER_WRITE_WAIT);
                    return match self.holder_of(seq, by) {
                        Ok(Some(b)) if b == batch => Ok(()),
                        Ok(_) => Err(taken()),
                        Err(e) => Err(uncertain(e.to_string())),
                    };
                }
                Err(e @ (ClusterError::Uncertain(_) | ClusterError::Protocol(_))) => {
                    log::debug!("entry {seq} uncertain, settling: {e}");
                    self.quorum.failed(&e);
                    last = e.to_string();
                    let since = *unsettled.get_or_insert_with(Instant::now);
                    // Only a leader can say: asked no longer than one may
                    // take to be elected.
                    let by = deadlines
                        .answer
                        .min(deadlines.leader.max(since + CLUSTER_WRITE_WAIT));
                    match self.holder_of(seq, by) {
                        Ok(Some(b)) if b == batch => return Ok(()),
                        Ok(Some(_)) => return Err(taken()),
                        // Not there, a leader says: sending it again cannot
                        // apply it twice.
                        Ok(None) => unsettled = Some(Instant::now()),
                        Err(e) => self.quorum.failed(&e),
                    }
                }
                Err(e) if e.is_transient() => {
                    self.quorum.failed(&e);
                    last = e.to_string();
                }
                Err(e) if unsettled.is_some() => return Err(uncertain(e.to_string())),
                Err(e) => return Err(Refusal::NotApplied(e.to_string())),
            }
            // No leader to commit it, or to say whether it was: the wait
            // for one is the batch's, or (once a try may have applied)
            // CLUSTER_WRITE_WAIT from then, within the answer deadline.
            let next = Instant::now() + CLUSTER_RETRY_PAUSE;
            match unsettled {
                None if next >= deadlines.leader || next >= deadlines.answer => {
                    return Err(Refusal::NoQuorum(last));
                }
                Some(since)
                    if next >= deadlines.leader.max(since + CLUSTER_WRITE_WAIT)
                        || next >= deadlines.answer =>
                {
                    return Err(uncertain(format!(
                        "entry {seq} unsettled, no leader to say within {CLUSTER_WRITE_WAIT:?}: \
                         {last}"
                    )));
                }
                _ => {}
            }
            std::thread::sleep(CLUSTER_RETRY_PAUSE);
        }
    }

    /// Which batch holds entry `seq`, read at the leader by `deadline`.
    fn holder_of(&self, seq: i64, deadline: Instant) -> Result<Option<String>, ClusterError> {
        self.client.query_text_by(
            "SELECT batch FROM cluster_log WHERE seq = ?",
            vec![Param::Int(seq)],
            Some(deadline),
        )
    }

    /// Asks the cluster, through consensus, whether it has a leader again
    /// (see [`Quorum`]): when it lost one, at most every
    /// `QUORUM_PROBE_INTERVAL`.
    fn probe_quorum(&self) {
        if !self.quorum.probe_due() {
            return;
        }
        let asked = self.client.query_by(
            &[Statement::plain("SELECT 1")],
            ReadLevel::Consensus,
            Some(Instant::now() + TURN_LEASE),
        );
        match asked {
            Ok(_) => self.quorum.reached(),
            Err(e) => self.quorum.failed(&e),
        }
    }

    /// Applies the entries after the local position, in order, setting
    /// `applied_any` as it goes (so that it holds even when a later entry
    /// cannot be applied).
    fn follow(
        &self,
        conn: &Connection,
        vectors: &VectorIndex,
        applied_any: &mut bool,
        deadline: Instant,
    ) -> Result<(), FollowError> {
        let local = |e: String| FollowError::Local(e);
        loop {
            let position = position(conn).map_err(|e| local(e.to_string()))?;
            let rows = self
                .client
                .query_by(
                    &[Statement::new(
                        format!(
                            "SELECT seq, statements FROM cluster_log WHERE seq > ? \
                             ORDER BY seq LIMIT {FOLLOW_BATCH}"
                        ),
                        vec![Param::Int(position)],
                    )],
                    ReadLevel::Leader,
                    Some(deadline),
                )
                .map_err(FollowError::Cluster)?;
            let entries = &rows[0].rows;
            if entries.is_empty() {
                return Ok(());
            }
            for (expected, entry) in (position + 1..).zip(entries) {
                let seq = entry[0]
                    .as_i64()
                    .ok_or_else(|| local("an entry without a number".into()))?;
                if seq != expected {
                    let why = format!(
                        "entry {expected} is no longer in the log (it keeps entries for \
                         {:?}; the oldest is {seq}): restart this node to join again from a \
                         snapshot",
                        self.log_retention
                    );
                    self.stranded
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(local(why));
                }
                let text = entry[1]
                    .as_str()
                    .ok_or_else(|| local("an entry without statements".into()))?;
                apply_entry(conn, vectors, seq, &decode(text).map_err(local)?).map_err(local)?;
                *applied_any = true;
            }
        }
    }
}

/// Why the log could not be followed.
enum FollowError {
    /// Reading the cluster's log failed.
    Cluster(ClusterError),
    /// An entry could not be applied here, or is missing.
    Local(String),
}

/// Creates the tables only the cluster has: the log, the vector rows and
/// the memory's facts (names starting `cluster_`, which copies pass over).
pub fn create_cluster_tables(client: &ClusterClient) -> Result<(), ClusterError> {
    client
        .commit(
            &[
                Statement::plain(LOG_TABLE),
                Statement::plain(LOG_ORDER_TRIGGER),
                Statement::plain(OPS_TABLE),
                Statement::plain(VECTOR_TABLE),
                Statement::plain(META_TABLE),
                Statement::plain(TURN_TABLE),
                Statement::plain(CHORES_TABLE),
                Statement::plain(LOG_MARKS_TABLE),
                Statement::plain("INSERT OR IGNORE INTO cluster_turn VALUES (1, '', 0)"),
            ],
            Instant::now() + SETTLE_DEADLINE,
        )
        .map(|_| ())
}

impl Replicator for ClusterReplicator {
    fn commit(&self, conn: &Connection, statements: &[Recorded]) -> Result<(), Refusal> {
        let seq = position(conn).map_err(|e| Refusal::NotApplied(e.to_string()))? + 1;
        let batch = format!(
            "{}-{}",
            self.node,
            self.batches.fetch_add(1, Ordering::Relaxed)
        );
        let ops: Vec<String> = (0..operations(statements))
            .map(|_| {
                format!(
                    "{}-op{}",
                    self.node,
                    self.ops.fetch_add(1, Ordering::Relaxed)
                )
            })
            .collect();
        let mut out = Vec::with_capacity(2 + statements.len());
        out.push(Statement::new(
            "INSERT INTO cluster_log(seq, batch, statements) VALUES (?, ?, ?)",
            vec![
                Param::Int(seq),
                batch.clone().into(),
                encode(statements).into(),
            ],
        ));
        out.push(Statement::new(
            RECORD_OPS,
            vec![Param::Int(seq), serde_json::json!(ops).to_string().into()],
        ));
        // Savepoints are the followers' alone: rqlite owns its transaction.
        for r in statements.iter().filter(|r| !is_savepoint_mark(&r.sql)) {
            out.push(Statement::from_recorded(&r.sql, &r.params).map_err(Refusal::NotApplied)?);
        }
        let this = self.batch.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let this = this.unwrap_or_else(|| Batch {
            deadlines: Deadlines::from(Instant::now()),
            no_quorum: None,
        });
        if let Some(why) = this.no_quorum {
            return Err(Refusal::NoQuorum(why));
        }
        self.append(seq, &batch, &out, this.deadlines)?;
        // In the local transaction: committed with it, or not at all (the
        // cluster holds it then, and following applies it).
        conn.execute_batch(&format!("PRAGMA user_version = {seq}"))
            .map_err(|e| Refusal::Uncertain(e.to_string()))?;
        // Bookkeeping of this node's own: a failure costs only the quick
        // start of its jobs after a crash.
        match own_jobs::record(conn, self.jobs_seen.load(Ordering::Relaxed)) {
            Ok(newest) => self.jobs_seen.store(newest, Ordering::Relaxed),
            Err(e) => log::warn!("this node's own jobs not noted: {e}"),
        }
        Ok(())
    }

    fn catch_up(&self, conn: &Connection, vectors: &VectorIndex) -> bool {
        // Called when no write came for `idle_interval`: a turn held is
        // given back, so that another node's writes need not wait for it
        // to lapse.
        self.leases.give_back();
        self.probe_quorum();
        let mut applied_any = false;
        // Bounded like a write's leader wait: a write that arrives
        // meanwhile waits for it in the queue, and counts that in.
        let deadline = Instant::now() + CLUSTER_WRITE_WAIT;
        if let Err(e) = self.follow(conn, vectors, &mut applied_any, deadline) {
            self.follow_failed(&e);
        }
        applied_any
    }

    fn before_batch(&self, conn: &Connection, vectors: &VectorIndex, submitted: Instant) -> bool {
        let deadlines = Deadlines::from(submitted);
        let mut batch = Batch {
            deadlines,
            no_quorum: None,
        };
        let mut applied_any = false;
        let turn = self
            .leases
            .take_turn(&self.quorum, deadlines.leader, deadlines.answer);
        match turn {
            Ok(true) => {}
            Ok(false) => match self.follow(conn, vectors, &mut applied_any, deadlines.answer) {
                Ok(()) => self.leases.caught_up(),
                Err(e) => self.follow_failed(&e),
            },
            // No leader for the whole wait: nothing to follow from, and
            // the commits are refused unsent.
            Err(e) => batch.no_quorum = Some(e.to_string()),
        }
        // Jobs past this one are this batch's own (see `own_jobs`).
        match own_jobs::newest(conn) {
            Ok(newest) => self.jobs_seen.store(newest, Ordering::Relaxed),
            Err(e) => log::warn!("cannot read the journal's newest job: {e}"),
        }
        *self.batch.lock().unwrap_or_else(|p| p.into_inner()) = Some(batch);
        applied_any
    }

    fn quorum_lost(&self) -> bool {
        self.quorum.lost()
    }

    fn whole_batches(&self) -> bool {
        true
    }

    fn has_other_writers(&self) -> bool {
        true
    }

    fn claim_chore(&self, name: &str, lease: Duration) -> bool {
        self.leases.claim_chore(name, lease)
    }

    fn stranded(&self) -> bool {
        self.stranded.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn prune_log(&self) -> usize {
        // A quarter of the retention apart, between a second and a minute:
        // entries leave within about 1.25 times the retention.
        let every = (self.log_retention / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
        {
            let mut at = self.pruned_at.lock().unwrap_or_else(|p| p.into_inner());
            if at.is_some_and(|t| t.elapsed() < every) {
                return 0;
            }
            *at = Some(Instant::now());
        }
        if !self.claim_chore("log", every * 3) {
            return 0;
        }
        let now_ms = crate::clock::now_ms();
        let cut = now_ms - self.log_retention.as_millis() as i64;
        // The newest entry always stays: a node joining from a snapshot
        // takes its position from it.
        let pruned = self.client.transaction(&[
            Statement::new(
                "INSERT OR IGNORE INTO cluster_log_marks(seq, at_ms) \
                 SELECT seq, ? FROM cluster_log ORDER BY seq DESC LIMIT 1",
                vec![Param::Int(now_ms)],
            ),
            Statement::new(
                "DELETE FROM cluster_log \
                 WHERE seq <= (SELECT MAX(seq) FROM cluster_log_marks WHERE at_ms <= ?) \
                   AND seq < (SELECT MAX(seq) FROM cluster_log)",
                vec![Param::Int(cut)],
            ),
            Statement::new(
                "DELETE FROM cluster_log_marks \
                 WHERE seq < (SELECT MAX(seq) FROM cluster_log_marks WHERE at_ms <= ?)",
                vec![Param::Int(cut)],
            ),
            Statement::plain(
                "DELETE FROM cluster_ops WHERE seq < (SELECT MIN(seq) FROM cluster_log)",
            ),
        ]);
        match pruned {
            Ok(done) => {
                let n = done.get(1).map_or(0, |d| d.rows_affected as usize);
                if n > 0 {
                    log::info!("pruned {n} log entries older than {:?}", self.log_retention);
                }
                n
            }
            Err(e) => {
                log::debug!("log not pruned: {e}");
                0
            }
        }
    }

    fn idle_interval(&self) -> Option<Duration> {
        Some(if self.leases.holding() {
            TURN_IDLE
        } else {
            FOLLOW_INTERVAL
        })
    }
}

/// The last entry the local database applied.
pub(super) fn position(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cluster::address::ClusterAddress;

    /// A replicator for a cluster nobody listens at (a closed port).
    fn unreachable() -> ClusterReplicator {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let client = || {
            let address = ClusterAddress::parse(&format!("rqlite://127.0.0.1:{port}")).unwrap();
            ClusterClient::new(address, Duration::from_secs(1)).unwrap()
        };
        ClusterReplicator {
            leases: Leases::new(&client(), "test".into()).unwrap(),
            client: client(),
            node: "test".into(),
            batches: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            log_retention: crate::limits::DEFAULT_CLUSTER_LOG_RETENTION,
            pruned_at: std::sync::Mutex::new(None),
            follow_warned: std::sync::Mutex::new(None),
            stranded: Default::default(),
            quorum: Quorum::default(),
            batch: std::sync::Mutex::new(None),
            jobs_seen: Default::default(),
        }
    }

    #[test]
    fn an_entry_of_more_than_max_cluster_statements_is_refused_unsent() {
        let r = unreachable();
        let many = |n: usize| vec![Statement::plain("SELECT 1"); n];
        let started = Instant::now();
        assert_eq!(
            r.append(
                1,
                "b",
                &many(MAX_CLUSTER_STATEMENTS + 1),
                Deadlines::from(Instant::now())
            ),
            Err(Refusal::TooLarge(MAX_CLUSTER_STATEMENTS + 1))
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(
            Refusal::TooLarge(MAX_CLUSTER_STATEMENTS + 1)
                .to_error()
                .code(),
            "limit_exceeded"
        );
        // At the limit the request is made: here it finds nobody to take it.
        match r.client.transaction(&many(MAX_CLUSTER_STATEMENTS)) {
            Err(ClusterError::Unreachable(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}
