//! The writer thread: every write, one connection, group commit.
//!
//! Callers hand a closure to [`Writer::submit`]; the thread runs queued
//! closures back to back inside one transaction (each under its own
//! savepoint, so one failing operation does not undo its neighbours),
//! commits once, and only then tells each caller its result. A large write
//! may ask for a transaction of its own instead ([`Batching::Own`]), which
//! spares it the savepoint's cost; the batch then commits more than once
//! but still syncs once. Under load this turns N fsyncs into one, which is
//! what lets durable ingestion keep up; idle, a lone write commits at once.
//! A single writer also means SQLite never answers BUSY to our own writes.
//! Under a tap whose every commit is a round trip (a cluster's), a batch
//! is one transaction, large writes included, up to
//! [`WHOLE_BATCH_STATEMENTS`].
//!
//! Durability is the writer's own doing. The connection runs at
//! `synchronous=NORMAL` (SQLite never syncs the log at commit) and, under
//! [`Durability::Full`], the writer calls `fdatasync` on the write-ahead log
//! after each commit and before anyone hears of it ([`WalSync`]). SQLite's
//! own FULL level calls `fsync` (the bundled build has no `fdatasync`),
//! which also writes the log's changed timestamps through the file-system
//! journal. Measured per batch at 10k documents: commit and sync 2.1 ms
//! before, 1.0 + 0.85 ms now.
//!
//! That also lets a batch made only of [`Commit::Lazy`] writes skip the
//! sync: the next synced commit (or a checkpoint, which syncs the log
//! first) carries it to the disk. The indexing of journalled jobs is such a
//! write: a job stays pending until the transaction that indexes it marks
//! it done, so if a power cut loses that commit the job is replayed at the
//! next start. Vector rows are still synced before every commit that names
//! them.
//!
//! Once no write has come for `IDLE_CHECKPOINT_MS`, the writer checkpoints
//! with TRUNCATE (`checkpoint::idle`), so an idle server keeps no log on
//! disk; should readers keep it from finishing, it tries again every
//! `IDLE_CHECKPOINT_RETRY_MS` without writes.

use crossbeam_channel::{Receiver, RecvTimeoutError};
use rusqlite::Connection;
use std::collections::HashMap;
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::checkpoint::{self, IDLE_CHECKPOINT_MS, IDLE_CHECKPOINT_RETRY_MS};
use super::name_hints::NameLog;
use super::tenant::{create_tenant_tables, TenantWriter};
use super::vectors::VectorIndex;
use super::write_log::{Refusal, TapSlot, Tapping, WriteConn, RELEASE_MARK, SAVEPOINT_MARK};

mod submit;

use crate::config::Durability;
use crate::error::{Error, StorageFault};
use crate::knowledge::resolution::NamePolicy;
pub use submit::QueuedWrite;
pub(super) use submit::Writer;

/// Longest the writer sleeps without looking at its tap: a tap set on an
/// idle store that follows a log starts following within this.
const TAP_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// Most operations folded into one transaction.
pub const MAX_WRITE_BATCH: usize = 256;

/// Under a tap that wants whole batches ([`Replicator::whole_batches`]),
/// the recorded statements after which the batch's transaction is
/// committed and the next operation starts another: one write may still
/// make more (up to `MAX_CLUSTER_STATEMENTS`), but a batch of many does not
/// pile them into one request.
///
/// [`Replicator::whole_batches`]: super::write_log::Replicator::whole_batches
pub const WHOLE_BATCH_STATEMENTS: usize = 10_000;

/// Run after the transaction: `true` if it committed (see
/// [`TenantWriter::on_commit`]).
pub(super) type CommitHook = Box<dyn FnOnce(bool) + Send>;

/// Called once the batch's fate is known: `None` if it committed.
pub(super) type Deliver = Box<dyn FnOnce(Option<Error>) + Send>;
/// Runs inside the transaction; says whether it succeeded and how to report.
pub(super) type Op = Box<dyn FnOnce(&mut TenantWriter<'_>) -> (bool, Deliver) + Send>;

pub(super) struct Request {
    pub tenant: String,
    pub op: Op,
    pub commit: Commit,
    pub batching: Batching,
    /// When it was queued: a tap that waits (a cluster's) counts a
    /// write's waits from here, its time in the queue included.
    pub submitted: std::time::Instant,
}

/// What a write's commit must guarantee before its caller hears of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// On disk as the store's durability level says (an acknowledgement).
    Durable,
    /// Atomic, but its fsync may wait for the next durable commit or
    /// checkpoint. Only for writes whose loss to a power cut is harmless:
    /// indexing that the journal redoes, best-effort usage records.
    Lazy,
}

/// Whether a write shares its transaction with the writes queued beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// In the batch's transaction, under a savepoint, so that its failure
    /// undoes it alone. For the many small writes.
    Shared,
    /// In a transaction of its own, without a savepoint. Under a savepoint
    /// SQLite copies every page the write changes into a statement journal
    /// first, and fully-text indexes flush at each one: for a large write
    /// (indexing dozens of documents, their chunks and graph) that was
    /// about a tenth of the writer's time. It costs one more commit, whose
    /// log frames repeat the pages it shares with its neighbours.
    Own,
    /// In a transaction of its own under every tap, whole batches or not:
    /// for a write that replaces what the writes beside it would append
    /// to (a compaction's new vector files).
    Alone,
}

/// Tenant name → id, shared with readers. Ids are never reused or removed,
/// so a cached entry can never be wrong.
pub(super) type TenantIds = Arc<RwLock<HashMap<String, i64>>>;

/// What the writer thread keeps from one batch to the next.
struct WriterState {
    tenants: TenantIds,
    vectors: Arc<VectorIndex>,
    /// What it wrote to the tenants' name indexes (see `name_hints`).
    names: NameLog,
    wal: WalSync,
    resolver: &'static dyn NamePolicy,
    tapping: Tapping,
}

pub(super) fn run(
    conn: Connection,
    requests: Receiver<Request>,
    tenants: TenantIds,
    vectors: Arc<VectorIndex>,
    wal: WalSync,
    resolver: &'static dyn NamePolicy,
    tap: TapSlot,
) {
    let mut state = WriterState {
        tenants,
        vectors,
        names: NameLog::default(),
        wal,
        resolver,
        tapping: Tapping::new(tap),
    };
    // Whether the log may hold frames the idle checkpoint has not emptied,
    // and how long to wait for the next write before checkpointing.
    let mut unfolded = false;
    let mut idle_wait = Duration::from_millis(IDLE_CHECKPOINT_MS);
    let mut idle_since = std::time::Instant::now();
    loop {
        // A store that follows a replicated log wakes to catch up too.
        let follow = state.tapping.idle_interval();
        let checkpoint_in = unfolded.then(|| idle_wait.saturating_sub(idle_since.elapsed()));
        let wait = [checkpoint_in, follow, Some(TAP_CHECK_INTERVAL)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(TAP_CHECK_INTERVAL);
        let first = match requests.recv_timeout(wait) {
            Ok(r) => r,
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                if follow.is_some() && caught_up(&conn, &mut state, None) {
                    unfolded = true;
                    idle_wait = Duration::from_millis(IDLE_CHECKPOINT_MS);
                    idle_since = std::time::Instant::now();
                }
                if unfolded && idle_since.elapsed() >= idle_wait {
                    // No write for the whole wait: empty the log file.
                    unfolded = !checkpoint::idle(&conn);
                    idle_wait = Duration::from_millis(IDLE_CHECKPOINT_RETRY_MS);
                    idle_since = std::time::Instant::now();
                }
                continue;
            }
        };
        unfolded = true;
        idle_wait = Duration::from_millis(IDLE_CHECKPOINT_MS);
        let mut batch = vec![first];
        while batch.len() < MAX_WRITE_BATCH {
            match requests.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        // What others wrote comes first: this batch runs on top of it.
        let oldest = batch.iter().map(|r| r.submitted).min();
        caught_up(&conn, &mut state, oldest);
        commit_batch(&conn, batch, &mut state);
        idle_since = std::time::Instant::now();
    }
    // All senders are gone: the store is closing. Fold the WAL back into
    // the database so the next start (or a copy of the file) is clean.
    if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
        log::warn!("final checkpoint failed: {e}");
    }
}

/// Lets the tap apply what others wrote (before a batch whose oldest
/// write was queued at `batch`, once it is this node's turn to write);
/// whether it applied anything. Tenants it registered join the map
/// readers use.
fn caught_up(
    conn: &Connection,
    state: &mut WriterState,
    batch: Option<std::time::Instant>,
) -> bool {
    let applied = match batch {
        Some(submitted) => state.tapping.before_batch(conn, &state.vectors, submitted),
        None => state.tapping.catch_up(conn, &state.vectors),
    };
    if !applied {
        return false;
    }
    // Others wrote names this log never saw: hints older than now are
    // distrusted until the next graph write logs afresh.
    state.names = NameLog::default();
    let known = conn
        .prepare("SELECT name, id FROM tenants")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        });
    match known {
        Ok(rows) => state
            .tenants
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .extend(rows),
        Err(e) => log::error!("cannot read the tenants after catching up: {e}"),
    }
    true
}

/// Makes commits durable by syncing the write-ahead log (see the module
/// docs).
pub(super) struct WalSync {
    /// The log, opened for syncing only; `None` when commits need no sync
    /// of ours (relaxed durability, or SQLite syncs them itself).
    log: Option<File>,
}

impl WalSync {
    /// Takes over the log sync of `conn` (the writer connection of the
    /// database in `dir`) when `durability` asks for synced commits.
    /// Should the log not open, SQLite keeps syncing it itself.
    pub fn open(conn: &Connection, dir: &Path, durability: Durability) -> WalSync {
        if durability != Durability::Full {
            return WalSync { log: None };
        }
        let path = dir.join(format!("{}-wal", super::db::DB_FILE));
        // Writable: Windows flushes only handles opened for writing. Never
        // written through; the log exists while the writer is open.
        let opened = std::fs::OpenOptions::new().write(true).open(&path);
        match opened.map_err(Error::from).and_then(|log| {
            conn.execute_batch("PRAGMA synchronous=NORMAL")?;
            Ok(log)
        }) {
            Ok(log) => WalSync { log: Some(log) },
            Err(e) => {
                log::warn!("the write-ahead log is synced by SQLite: {e}");
                WalSync { log: None }
            }
        }
    }

    /// Waits until every frame written so far is on disk.
    fn sync(&self) -> std::io::Result<()> {
        match &self.log {
            Some(log) => log.sync_data(),
            None => Ok(()),
        }
    }
}

/// Why a transaction failed.
#[derive(Clone)]
enum Failed {
    /// SQLite or the vector files failed: the message for the log, and the
    /// disk's fault when it was one (so the caller hears "storage full",
    /// not "internal").
    Store(String, Option<StorageFault>),
    /// The tap (a replicated log) refused it.
    Refused(Refusal),
}

/// An operation's reply, what it asked for, and how its transaction ended.
type Decided = (Deliver, Commit, Option<Failed>);

/// One transaction of a batch: what its operations asked for once its
/// fate is known.
#[derive(Default)]
struct Segment {
    /// Each operation's reply, with whether it was asked to be durable.
    deliveries: Vec<(Deliver, Commit)>,
    hooks: Vec<CommitHook>,
    /// Tenants registered in this transaction, published when it commits.
    new_tenants: Vec<(String, i64)>,
}

fn begin(conn: &Connection) -> std::result::Result<Segment, String> {
    match conn.execute_batch("BEGIN IMMEDIATE") {
        Ok(()) => Ok(Segment::default()),
        Err(e) => {
            let msg = format!("cannot begin a write transaction: {e}");
            log::error!("{msg}");
            Err(msg)
        }
    }
}

/// Commits `segment`'s transaction (after syncing the vector rows it
/// names) or rolls it back, runs its hooks accordingly, and files each of
/// its deliveries with the outcome in `decided`.
fn finish(
    conn: &Connection,
    segment: Segment,
    tenants: &TenantIds,
    vectors: &VectorIndex,
    tapping: &Tapping,
    decided: &mut Vec<Decided>,
) -> bool {
    // Vector rows the transaction wrote must be on disk before the commit
    // that names them: after a crash SQLite may never point past what
    // survived. A tap sees the statements last, and may still refuse them.
    let outcome = match vectors.sync_dirty() {
        Ok(()) => match tapping.before_commit(conn) {
            Ok(()) => conn.execute_batch("COMMIT").map_err(|e| {
                log::error!("commit failed, transaction rolled back: {e}");
                Failed::Store(e.to_string(), StorageFault::of_sqlite(&e))
            }),
            Err(refusal) => {
                // The tap says what an operator needs of its own faults
                // (a cluster: once per loss of quorum); each refused
                // transaction is detail.
                log::debug!("the write tap refused the transaction: {refusal}");
                Err(Failed::Refused(refusal))
            }
        },
        Err(e) => {
            log::error!("cannot flush vector files: {e}");
            tapping.discard();
            Err(Failed::Store(e.to_string(), e.storage_fault()))
        }
    };
    // Side effects outside SQLite (vector rows) follow the transaction's
    // fate before any caller hears of it: published on commit, undone in
    // reverse order on rollback.
    let error = match outcome {
        Ok(()) => {
            if !segment.new_tenants.is_empty() {
                let mut map = tenants.write().unwrap_or_else(|p| p.into_inner());
                map.extend(segment.new_tenants);
            }
            segment.hooks.into_iter().for_each(|h| h(true));
            None
        }
        Err(failed) => {
            let _ = conn.execute_batch("ROLLBACK");
            segment.hooks.into_iter().rev().for_each(|h| h(false));
            Some(failed)
        }
    };
    let committed = error.is_none();
    decided.extend(
        segment
            .deliveries
            .into_iter()
            .map(|(d, commit)| (d, commit, error.clone())),
    );
    committed
}

/// Runs a batch of queued writes and tells each caller its outcome.
///
/// [`Batching::Shared`] operations run back to back in one transaction,
/// each under a savepoint. A [`Batching::Own`] operation gets a transaction
/// of its own, with no savepoint: the transaction before it is committed
/// first and the next one begins after it. The log is synced once, after
/// the last commit, before anyone hears of a durable write.
fn commit_batch(conn: &Connection, batch: Vec<Request>, state: &mut WriterState) {
    let WriterState {
        tenants,
        vectors,
        names,
        wal,
        resolver,
        tapping,
    } = state;
    let (tenants, vectors, wal, resolver, tapping) =
        (&*tenants, &*vectors, &*wal, *resolver, &*tapping);
    let started = std::time::Instant::now();
    let ops = batch.len();
    let durable = batch.iter().any(|r| r.commit == Commit::Durable);
    // A cluster pays a round trip per commit: its batches commit whole.
    let whole = tapping.whole_batches();
    let mut decided: Vec<Decided> = Vec::with_capacity(ops);
    let mut committed = false;
    let mut open: Option<Segment> = None;
    for req in batch {
        let own = match req.batching {
            Batching::Shared => false,
            Batching::Own => !whole,
            Batching::Alone => true,
        };
        let commit = req.commit;
        // A whole batch still ends its transaction once it is large, so
        // that no one commit (a cluster's request) grows without bound.
        let full = whole && tapping.mark() >= WHOLE_BATCH_STATEMENTS;
        if own || full {
            if let Some(segment) = open.take() {
                committed |= finish(conn, segment, tenants, vectors, tapping, &mut decided);
            }
        }
        let segment = match open.take().map_or_else(|| begin(conn), Ok) {
            Ok(segment) => open.insert(segment),
            Err(msg) => {
                let (_, deliver) = fail_op(req.op, &msg);
                decided.push((deliver, commit, Some(Failed::Store(msg, None))));
                continue;
            }
        };
        let tenant_id = match tenant_id(
            tapping.conn(conn),
            &req.tenant,
            tenants,
            &mut segment.new_tenants,
        ) {
            Ok(id) => id,
            Err(e) => {
                let msg = format!("cannot register tenant: {e}");
                log::error!("{msg}");
                let (_, deliver) = fail_op(req.op, &msg);
                segment.deliveries.push((deliver, commit));
                continue;
            }
        };
        let writer = TenantWriter {
            conn: tapping.conn(conn),
            tenant_id,
            vectors,
            names,
            resolver,
            hooks: Vec::new(),
            ids: Default::default(),
        };
        let (ok, deliver, hooks) = run_op(conn, writer, tapping, req.op, !own);
        segment.deliveries.push((deliver, commit));
        segment.hooks.extend(hooks);
        // Vector rows this operation wrote start for the disk now, while
        // the rest of the batch runs; the sync before the commit waits.
        if let Err(e) = vectors.start_sync(tenant_id) {
            log::warn!("vector rows will be synced at commit: {e}");
        }
        if own {
            let segment = open.take().expect("a transaction is open");
            if ok {
                committed |= finish(conn, segment, tenants, vectors, tapping, &mut decided);
            } else {
                // The operation was alone in its transaction: rolling the
                // transaction back undoes it and nothing else. Its caller
                // hears its own error (a failed operation ignores the
                // commit's outcome), and its hooks have already run.
                if let Err(e) = conn.execute_batch("ROLLBACK") {
                    log::error!("rollback failed: {e}");
                }
                // Whatever the transaction recorded (a tenant it registered
                // before the operation ran) went with it.
                tapping.discard();
                decided.extend(
                    segment
                        .deliveries
                        .into_iter()
                        .map(|(d, commit)| (d, commit, None)),
                );
            }
        }
    }
    if let Some(segment) = open.take() {
        committed |= finish(conn, segment, tenants, vectors, tapping, &mut decided);
    }
    // Nobody hears of a durable write before the log holding it is on
    // disk. Should that fail, the batch is committed but perhaps not
    // durable: its durable writes get an error that says they may be
    // stored (a retry with the same idempotency key finds what was
    // committed). Lazy writes asked for no sync: theirs did not fail.
    let mut sync_error = None;
    if durable && committed {
        if let Err(e) = wal.sync() {
            log::error!("cannot sync the write-ahead log: {e}");
            sync_error = Some((
                format!("cannot sync the write-ahead log: {e}"),
                StorageFault::of_io(&e),
            ));
        }
    }
    for (deliver, commit, error) in decided {
        let error = match (error, &sync_error) {
            (Some(Failed::Store(msg, fault)), _) => Some(Error::from_store(msg, fault)),
            (Some(Failed::Refused(refusal)), _) => Some(refusal.to_error()),
            (None, Some((msg, fault))) if commit == Commit::Durable => {
                Some(Error::unsynced(msg.clone(), *fault))
            }
            (None, _) => None,
        };
        deliver(error);
    }
    log::debug!("committed {ops} write(s) in {:?}", started.elapsed());
}

/// Runs one operation, under a savepoint when `guarded` (rolled back alone
/// on failure; unguarded, the caller rolls its transaction back). Returns
/// whether it succeeded, how to report it and the commit hooks it
/// registered (already run with `false` if the operation itself failed).
fn run_op(
    conn: &Connection,
    mut writer: TenantWriter<'_>,
    tapping: &Tapping,
    op: Op,
    guarded: bool,
) -> (bool, Deliver, Vec<CommitHook>) {
    if guarded {
        if let Err(e) = conn
            .prepare_cached(SAVEPOINT_MARK)
            .and_then(|mut s| s.execute([]))
        {
            let (_, deliver) = fail_op(op, &format!("savepoint: {e}"));
            return (false, deliver, Vec::new());
        }
        record_mark(conn, tapping, SAVEPOINT_MARK);
    }
    let mark = tapping.mark();
    // A bug in one operation must not take the writer thread (and with it
    // every later write) down: a panic becomes that operation's error.
    let result = catch_unwind(AssertUnwindSafe(|| op(&mut writer)));
    let (ok, deliver) = match result {
        Ok(r) => r,
        Err(_) => {
            log::error!("a write operation panicked; it was rolled back");
            let deliver: Deliver = Box::new(|_| {});
            (false, deliver)
        }
    };
    if guarded {
        let end = if ok {
            conn.prepare_cached(RELEASE_MARK)
                .and_then(|mut s| s.execute([]))
        } else {
            conn.execute_batch("ROLLBACK TO op; RELEASE op").map(|_| 0)
        };
        if let Err(e) = end {
            log::error!("savepoint end failed: {e}");
        }
    }
    let hooks = std::mem::take(&mut writer.hooks);
    if !ok {
        // Nothing of it stays, but its savepoint did open (and flushed
        // the full-text terms before it): a follower opens one too.
        tapping.rewind(mark);
    }
    if guarded {
        record_mark(conn, tapping, RELEASE_MARK);
    }
    if ok {
        (true, deliver, hooks)
    } else {
        hooks.into_iter().rev().for_each(|h| h(false));
        (false, deliver, Vec::new())
    }
}

/// Records a savepoint mark for followers (`write_log::SAVEPOINT_MARK`)
/// while a tap is set. A statement without parameters cannot fail to
/// record.
fn record_mark(conn: &Connection, tapping: &Tapping, mark: &str) {
    let _ = tapping.conn(conn).record_only(mark, [0i64; 0]);
}

/// Delivers `msg` as an internal error without running the operation's body.
fn fail_op(op: Op, msg: &str) -> (bool, Deliver) {
    // The op owns the caller's reply channel; dropping it unanswered makes
    // the caller see a closed channel, which `Store::write` reports as an
    // internal error. Log the reason here so it is not lost.
    log::error!("write dropped: {msg}");
    drop(op);
    (false, Box::new(|_| {}))
}

fn tenant_id(
    conn: WriteConn<'_>,
    name: &str,
    tenants: &TenantIds,
    new_tenants: &mut Vec<(String, i64)>,
) -> rusqlite::Result<i64> {
    if let Some(id) = tenants.read().unwrap_or_else(|p| p.into_inner()).get(name) {
        return Ok(*id);
    }
    if let Some((_, id)) = new_tenants.iter().find(|(n, _)| n == name) {
        return Ok(*id);
    }
    use rusqlite::OptionalExtension;
    let existing: Option<i64> = conn
        .query_row("SELECT id FROM tenants WHERE name = ?1", [name], |r| {
            r.get(0)
        })
        .optional()?;
    let id = match existing {
        Some(id) => id,
        None => {
            let id = conn.next_id("tenants")?;
            conn.insert_new(
                "INSERT INTO tenants(id, name, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
                (id, name, crate::clock::now_ms()),
            )?;
            create_tenant_tables(conn, id)?;
            id
        }
    };
    new_tenants.push((name.to_string(), id));
    Ok(id)
}

#[cfg(test)]
mod tests;
