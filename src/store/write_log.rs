//! The writer's connection, and the statements a write transaction ran.
//!
//! Every statement the writer runs goes through a [`WriteConn`]. When a
//! [`WriteTap`] is set on the store, each statement that changes the
//! database is also recorded with the exact values bound to it, and the
//! tap sees a transaction's statements, in the order they ran, before the
//! transaction commits; if the tap refuses them, the transaction rolls
//! back and its writes fail. Run in the same order on a copy of the same
//! database, the statements make the same rows: every value a statement
//! stores is bound or computed from the rows (`tests/source_rules.rs`
//! keeps random values and clocks out of them), a new row's id is bound
//! ([`WriteConn::next_id`]), and SQLite lays out full-text pages
//! deterministically. Run twice, they leave what they left once: every
//! insert is an upsert on the id or key it binds, and every update binds
//! the values it sets (the same test holds the code to both).
//!
//! Without a tap nothing is recorded: the local store runs as before.
//! Reads (`query_row`, `query_map`, ...) are never recorded.

use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{CachedStatement, Connection, Params, Row, ToSql};
use std::cell::RefCell;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use super::vectors::VectorIndex;
use crate::error::Error;

/// The table a replicated log keeps vector rows in (the cluster's copy of
/// the local vector files; see `cluster::vector_cache`). Names that start
/// with `cluster_` belong to the cluster's machinery, not the memory: no
/// local database has them (but a node's note of its own jobs,
/// `cluster::own_jobs`), and copies and digests pass them over.
pub const VECTOR_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_vectors (
    tenant_id INTEGER NOT NULL,
    slot      INTEGER NOT NULL,
    vector    BLOB    NOT NULL,
    PRIMARY KEY (tenant_id, slot)
) WITHOUT ROWID";

/// Recorded, never run locally: vector `?3` (little-endian f32s) was
/// written to slot `?2` of tenant `?1`'s vector files.
pub const VECTOR_PUT: &str =
    "INSERT OR REPLACE INTO cluster_vectors(tenant_id, slot, vector) VALUES (?1, ?2, ?3)";

/// Recorded, never run locally: slot `?2` of tenant `?1` was zeroed (its
/// chunk forgotten).
pub const VECTOR_CLEAR: &str = "DELETE FROM cluster_vectors WHERE tenant_id = ?1 AND slot = ?2";

/// Recorded, never run locally, first in a compaction of tenant `?1`
/// (`maintenance`): the cluster drops vector rows no chunk names. A
/// follower that meets it builds the tenant's next generation of vector
/// files from the live slots of its own, in slot order.
pub const VECTOR_COMPACT: &str = "DELETE FROM cluster_vectors WHERE tenant_id = ?1
       AND slot NOT IN (SELECT vector_slot FROM chunks
                         WHERE tenant_id = ?1 AND vector_slot IS NOT NULL)";

/// Recorded, never run locally, after [`VECTOR_COMPACT`] and before the
/// chunks are renumbered: each of the cluster's vector rows of tenant `?1`
/// whose slot changes moves to the slot its chunk's rank names, negated;
/// then [`VECTOR_RENUMBERED`] makes them slots.
pub const VECTOR_RENUMBER: &str = "UPDATE cluster_vectors SET slot = -r.n
       FROM (SELECT vector_slot AS old, ROW_NUMBER() OVER (ORDER BY vector_slot) AS n
               FROM chunks WHERE tenant_id = ?1 AND vector_slot IS NOT NULL) AS r
      WHERE cluster_vectors.tenant_id = ?1 AND cluster_vectors.slot = r.old
        AND r.old <> r.n - 1";

/// Recorded, never run locally: see [`VECTOR_RENUMBER`].
pub const VECTOR_RENUMBERED: &str =
    "UPDATE cluster_vectors SET slot = -slot - 1 WHERE tenant_id = ?1 AND slot < 0";

/// Recorded around each operation the writer runs under a savepoint, and
/// run by a follower but never sent to the cluster (rqlite owns its
/// transactions): full-text indexes flush their pending terms at every
/// savepoint, so a follower that opens the same savepoints writes the same
/// full-text pages as the writer did.
pub const SAVEPOINT_MARK: &str = "SAVEPOINT op";

/// Recorded where the writer released (or rolled back and released) the
/// savepoint [`SAVEPOINT_MARK`] opened.
pub const RELEASE_MARK: &str = "RELEASE op";

/// Whether `sql` is recorded for followers alone, never run by the cluster.
pub fn is_savepoint_mark(sql: &str) -> bool {
    sql == SAVEPOINT_MARK || sql == RELEASE_MARK
}

/// A vector as [`VECTOR_PUT`] records it.
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// [`vector_bytes`] read back (`None` unless whole f32s).
pub fn vector_from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    b.len().is_multiple_of(4).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// Why a tap refused a transaction, which then rolls back locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Applied nowhere (another node's write took its place): the same
    /// write again is safe, and may succeed at once.
    NotApplied(String),
    /// Applied nowhere: the cluster had no leader for the whole
    /// [`CLUSTER_WRITE_WAIT`](crate::limits::CLUSTER_WRITE_WAIT). The same
    /// write again is safe; sooner than that it would most likely wait
    /// as long and be refused again.
    NoQuorum(String),
    /// Its answer was lost and could not be settled: the log may still
    /// hold it, and the store then applies it as it follows. A retry under
    /// the same idempotency key finds it if so.
    Uncertain(String),
    /// More statements than one cluster transaction may hold
    /// ([`MAX_CLUSTER_STATEMENTS`](crate::limits::MAX_CLUSTER_STATEMENTS)):
    /// applied nowhere, and the same write again would be refused again.
    TooLarge(usize),
}

impl Refusal {
    /// The error the write's caller hears: unavailable, with advice and
    /// without the cluster's details (those are logged).
    pub fn to_error(&self) -> Error {
        match self {
            Refusal::NotApplied(_) => Error::Unavailable(
                "the memory's cluster did not commit the write (another node's write came \
                 first); nothing was stored: retry shortly"
                    .into(),
            ),
            Refusal::NoQuorum(_) => Error::UnavailableFor(
                format!(
                    "the memory's cluster has had no leader for {} s (no quorum of its nodes \
                     answers); nothing was stored: retry later",
                    crate::limits::CLUSTER_WRITE_WAIT.as_secs()
                ),
                crate::limits::CLUSTER_WRITE_WAIT,
            ),
            Refusal::Uncertain(_) => Error::Unconfirmed(
                "the memory's cluster did not confirm the write in time; it may still be \
                 stored: retry with the same idempotency key"
                    .into(),
            ),
            Refusal::TooLarge(n) => Error::LimitExceeded(format!(
                "the write needs {n} statements, more than one transaction of the memory's \
                 cluster may hold ({} statements, MAX_CLUSTER_STATEMENTS); nothing was stored",
                crate::limits::MAX_CLUSTER_STATEMENTS
            )),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotApplied(m) => write!(f, "not applied: {m}"),
            Refusal::NoQuorum(m) => write!(f, "not applied, no leader: {m}"),
            Refusal::Uncertain(m) => write!(f, "uncertain: {m}"),
            Refusal::TooLarge(n) => write!(f, "too large: {n} statements"),
        }
    }
}

/// One statement as it ran: its SQL and the values bound to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub sql: String,
    pub params: Vec<Value>,
}

/// What the writer hands each write transaction to before it commits,
/// and lets bring the database up to date between transactions: how a
/// store follows and feeds a replicated log (`cluster::replica`).
pub trait Replicator: Send + Sync {
    /// Sees a transaction's statements just before it commits; `conn` is
    /// the writer's connection inside that transaction, for bookkeeping of
    /// its own that is not recorded. An `Err` rolls the transaction back
    /// (its writes fail with [`Refusal::to_error`]).
    fn commit(&self, conn: &Connection, statements: &[Recorded]) -> Result<(), Refusal>;

    /// Runs on the writer thread, outside any transaction, once no write
    /// came for [`Replicator::idle_interval`] (and, by default, before
    /// each batch): applies what others wrote (vector rows to `vectors`),
    /// and says whether it wrote anything.
    fn catch_up(&self, _conn: &Connection, _vectors: &VectorIndex) -> bool {
        false
    }

    /// Runs on the writer thread before each batch, outside any
    /// transaction: may wait for this node's turn to write, then catches
    /// up ([`Replicator::catch_up`]); says whether it wrote anything.
    /// `submitted` is when the batch's oldest write reached the writer:
    /// whatever the tap waits for, in here and in the batch's commits,
    /// counts from then.
    fn before_batch(&self, conn: &Connection, vectors: &VectorIndex, submitted: Instant) -> bool {
        let _ = submitted;
        self.catch_up(conn, vectors)
    }

    /// Whether writes are refused for want of a quorum right now (the
    /// last try found no leader, and none has since): best-effort writes
    /// (usage rows) are then kept back instead of holding the writer.
    fn quorum_lost(&self) -> bool {
        false
    }

    /// Whether each batch of writes should be one transaction, its large
    /// writes ([`Batching::Own`](super::writer::Batching::Own)) included:
    /// for a tap whose every commit is a round trip (a cluster's), one
    /// commit per batch instead of one per large write.
    fn whole_batches(&self) -> bool {
        false
    }

    /// Whether other stores write the same memory (the other nodes of a
    /// cluster): jobs journalled here may then be another node's work.
    fn has_other_writers(&self) -> bool {
        false
    }

    /// How long the writer may wait idle before calling
    /// [`Replicator::catch_up`] again (`None`: only before batches).
    fn idle_interval(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether this store may do the background chore `name` for the
    /// next `lease` (renewed by claiming it again): among stores writing
    /// one memory, one at a time does it, the others skip it. Always, for
    /// a store that writes alone.
    fn claim_chore(&self, _name: &str, _lease: std::time::Duration) -> bool {
        true
    }

    /// Whether this store can no longer follow the log at all: it serves
    /// what it has, and only joining again (a restart) brings it up to
    /// date. Passing faults (no quorum) are not this. (Why is logged where
    /// it was found.)
    fn stranded(&self) -> bool {
        false
    }

    /// Deletes what the log no longer needs to keep, when that is due;
    /// how many entries went. Called by the upkeep thread.
    fn prune_log(&self) -> usize {
        0
    }
}

/// A plain function as a tap: sees each transaction, follows nothing.
impl<F> Replicator for F
where
    F: Fn(&[Recorded]) -> Result<(), String> + Send + Sync,
{
    fn commit(&self, _conn: &Connection, statements: &[Recorded]) -> Result<(), Refusal> {
        self(statements).map_err(Refusal::NotApplied)
    }
}

/// The tap a store may have: see [`Replicator`].
pub type WriteTap = Box<dyn Replicator>;

/// Where the store keeps its tap (set and cleared from any thread).
pub(super) type TapSlot = Arc<RwLock<Option<WriteTap>>>;

/// The writer thread's side of the tap: the slot, and what the open
/// transaction has recorded.
pub(super) struct Tapping {
    slot: TapSlot,
    recording: Recording,
}

impl Tapping {
    pub(super) fn new(slot: TapSlot) -> Tapping {
        Tapping {
            slot,
            recording: Recording::default(),
        }
    }

    /// The writer's connection, recording while a tap is set.
    pub(super) fn conn<'c>(&'c self, conn: &'c Connection) -> WriteConn<'c> {
        let tapped = self
            .slot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        WriteConn::new(conn, tapped.then_some(&self.recording))
    }

    pub(super) fn mark(&self) -> usize {
        self.recording.mark()
    }

    /// Forgets the statements of an operation that was rolled back.
    pub(super) fn rewind(&self, mark: usize) {
        self.recording.rewind(mark);
    }

    /// Forgets everything recorded (the transaction is rolling back).
    pub(super) fn discard(&self) {
        self.recording.take();
    }

    /// Hands the transaction's statements to the tap, if one is set and
    /// there are any; `Err` means the transaction must roll back.
    pub(super) fn before_commit(&self, conn: &Connection) -> Result<(), Refusal> {
        let statements = self.recording.take();
        // Savepoints around writes that changed nothing replicate nothing.
        if statements.iter().all(|r| is_savepoint_mark(&r.sql)) {
            return Ok(());
        }
        match &*self.slot.read().unwrap_or_else(|p| p.into_inner()) {
            Some(tap) => tap.commit(conn, &statements),
            None => Ok(()),
        }
    }

    /// Lets the tap apply what others wrote (between transactions).
    pub(super) fn catch_up(&self, conn: &Connection, vectors: &VectorIndex) -> bool {
        match &*self.slot.read().unwrap_or_else(|p| p.into_inner()) {
            Some(tap) => tap.catch_up(conn, vectors),
            None => false,
        }
    }

    /// [`Replicator::before_batch`], when a tap is set.
    pub(super) fn before_batch(
        &self,
        conn: &Connection,
        vectors: &VectorIndex,
        submitted: Instant,
    ) -> bool {
        match &*self.slot.read().unwrap_or_else(|p| p.into_inner()) {
            Some(tap) => tap.before_batch(conn, vectors, submitted),
            None => false,
        }
    }

    /// [`Replicator::whole_batches`], when a tap is set.
    pub(super) fn whole_batches(&self) -> bool {
        self.slot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| t.whole_batches())
    }

    /// How long the writer may sleep with nothing to write.
    pub(super) fn idle_interval(&self) -> Option<std::time::Duration> {
        self.slot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|t| t.idle_interval())
    }
}

/// The statements recorded in the open transaction.
#[derive(Default)]
pub(super) struct Recording {
    statements: RefCell<Vec<Recorded>>,
}

impl Recording {
    /// Where the recording stands (for undoing a rolled-back savepoint).
    pub(super) fn mark(&self) -> usize {
        self.statements.borrow().len()
    }

    /// Forgets what was recorded after `mark`.
    pub(super) fn rewind(&self, mark: usize) {
        self.statements.borrow_mut().truncate(mark);
    }

    /// Everything recorded, leaving the recording empty.
    pub(super) fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut self.statements.borrow_mut())
    }

    fn push(&self, sql: &str, params: &dyn Bind) -> rusqlite::Result<()> {
        let params = params.bound();
        let mut values = Vec::with_capacity(params.len());
        for p in params {
            values.push(match p.to_sql()? {
                ToSqlOutput::Borrowed(v) => owned(v),
                ToSqlOutput::Owned(v) => v,
                other => {
                    return Err(rusqlite::Error::ToSqlConversionFailure(
                        format!("a parameter that cannot be recorded: {other:?}").into(),
                    ))
                }
            });
        }
        self.statements.borrow_mut().push(Recorded {
            sql: sql.to_string(),
            params: values,
        });
        Ok(())
    }
}

fn owned(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Parameters as the recording reads them: whatever rusqlite binds
/// (`params![...]`, arrays, tuples).
pub(super) trait Bind {
    fn bound(&self) -> Vec<&dyn ToSql>;
}

impl Bind for &[&dyn ToSql] {
    fn bound(&self) -> Vec<&dyn ToSql> {
        self.to_vec()
    }
}

impl<T: ToSql, const N: usize> Bind for [T; N] {
    fn bound(&self) -> Vec<&dyn ToSql> {
        self.iter().map(|p| p as &dyn ToSql).collect()
    }
}

macro_rules! bind_tuple {
    ($($t:ident $i:tt),+) => {
        impl<$($t: ToSql),+> Bind for ($($t,)+) {
            fn bound(&self) -> Vec<&dyn ToSql> {
                vec![$(&self.$i as &dyn ToSql),+]
            }
        }
    };
}
bind_tuple!(A 0);
bind_tuple!(A 0, B 1);
bind_tuple!(A 0, B 1, C 2);
bind_tuple!(A 0, B 1, C 2, D 3);
bind_tuple!(A 0, B 1, C 2, D 3, E 4);
bind_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

/// The writer's connection: rusqlite's, recording writes when asked.
#[derive(Clone, Copy)]
pub(super) struct WriteConn<'c> {
    conn: &'c Connection,
    recording: Option<&'c Recording>,
}

impl<'c> WriteConn<'c> {
    pub(super) fn new(conn: &'c Connection, recording: Option<&'c Recording>) -> WriteConn<'c> {
        WriteConn { conn, recording }
    }

    pub(super) fn prepare_cached(&self, sql: &str) -> rusqlite::Result<WriteStatement<'c>> {
        Ok(WriteStatement {
            inner: self.conn.prepare_cached(sql)?,
            sql: self.recording.map(|_| sql.to_string()),
            recording: self.recording,
        })
    }

    /// Writes without parameters (recorded whole).
    pub(super) fn execute_batch(&self, sql: &str) -> rusqlite::Result<()> {
        if let Some(r) = self.recording {
            r.push(sql, &[0i64; 0])?;
        }
        self.conn.execute_batch(sql)
    }

    /// Records a statement for the log without running it here (see
    /// [`VECTOR_PUT`]); nothing happens without a tap.
    pub(super) fn record_only<P: Bind>(&self, sql: &str, params: P) -> rusqlite::Result<()> {
        match self.recording {
            Some(r) => r.push(sql, &params),
            None => Ok(()),
        }
    }

    /// Whether this connection's writes are being recorded.
    pub(super) fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// A read.
    pub(super) fn query_row<T, P: Params, F>(
        &self,
        sql: &str,
        params: P,
        f: F,
    ) -> rusqlite::Result<T>
    where
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    {
        self.conn.query_row(sql, params, f)
    }

    /// The id the next new row of `table` (a table with an integer `id`
    /// key) takes: one past the largest, which is what SQLite itself would
    /// assign. The writer binds it into the insert, so the recorded
    /// statement names its row: run again, it meets its own row and
    /// changes nothing ([`Self::insert_new`]). A read, never recorded.
    pub(super) fn next_id(&self, table: &'static str) -> rusqlite::Result<i64> {
        self.conn
            .prepare_cached(&format!("SELECT COALESCE(MAX(id), 0) + 1 FROM {table}"))?
            .query_row([], |r| r.get(0))
    }

    /// Runs an upsert that must add its row here (`INSERT … ON CONFLICT DO
    /// NOTHING` with the row's id or natural key bound): on this store the
    /// row is new, so a conflict means the caller's check before it was
    /// wrong, and fails the write as a constraint violation would have. On
    /// a replica that runs the statement a second time, the conflict is
    /// what keeps it from applying twice.
    pub(super) fn insert_new<P: Params + Bind>(
        &self,
        sql: &str,
        params: P,
    ) -> rusqlite::Result<()> {
        match self.prepare_cached(sql)?.execute(params)? {
            1 => Ok(()),
            n => Err(rusqlite::Error::StatementChangedRows(n)),
        }
    }

    /// The connection itself, for what records nothing: reads (the
    /// reader-side queries the writer shares) and settings that change no
    /// rows (`secure_delete`).
    pub(super) fn raw(&self) -> &'c Connection {
        self.conn
    }
}

/// A cached statement of the writer's: `execute` records, reads do not.
pub(super) struct WriteStatement<'c> {
    inner: CachedStatement<'c>,
    sql: Option<String>,
    recording: Option<&'c Recording>,
}

impl<'c> WriteStatement<'c> {
    pub(super) fn execute<P: Params + Bind>(&mut self, params: P) -> rusqlite::Result<usize> {
        if let (Some(r), Some(sql)) = (self.recording, &self.sql) {
            r.push(sql, &params)?;
        }
        self.inner.execute(params)
    }
}

impl<'c> std::ops::Deref for WriteStatement<'c> {
    type Target = CachedStatement<'c>;
    fn deref(&self) -> &CachedStatement<'c> {
        &self.inner
    }
}

impl std::ops::DerefMut for WriteStatement<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_travel_as_exact_little_endian_floats() {
        let v = vec![0.5f32, -1.25, 3.0e-7, f32::MIN_POSITIVE];
        let bytes = vector_bytes(&v);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[..4], &0.5f32.to_le_bytes());
        assert_eq!(vector_from_bytes(&bytes).unwrap(), v);
        assert!(vector_from_bytes(&[1, 2, 3]).is_none());
    }

    #[test]
    fn a_refusal_tells_the_caller_to_retry_and_nothing_of_the_cluster() {
        let detail = "http://10.0.0.7:4001: HTTP 503: leader not found; INSERT INTO cluster_log";
        let not_applied = Refusal::NotApplied(detail.into()).to_error();
        let no_quorum = Refusal::NoQuorum(detail.into()).to_error();
        let uncertain = Refusal::Uncertain(detail.into()).to_error();
        for e in [&not_applied, &no_quorum, &uncertain] {
            assert_eq!(e.code(), "unavailable");
            let m = e.client_message();
            assert!(!m.contains("10.0.0.7") && !m.contains("INSERT"), "{m}");
        }
        assert!(not_applied.client_message().contains("nothing was stored"));
        assert!(no_quorum.client_message().contains("nothing was stored"));
        // A retry is worth it once a leader could have been elected.
        assert_eq!(not_applied.retry_after(), None);
        assert_eq!(
            no_quorum.retry_after(),
            Some(crate::limits::CLUSTER_WRITE_WAIT)
        );
        assert!(uncertain.client_message().contains("idempotency key"));
    }
}
