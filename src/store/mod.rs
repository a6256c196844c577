//! The store: one SQLite database (WAL) in the data directory, reached only
//! through tenant-bound handles.
//!
//! Layout of this layer:
//! - [`owner`]: the lock that makes one process the owner of a directory.
//! - `db`: connections, pragmas, migrations.
//! - `writer`: the single writer thread with group commit.
//! - `write_log`: the writer's connection, which records each write
//!   transaction's statements for a tap to see before it commits.
//! - `checkpoint`: folding the write-ahead log back, off the writer thread.
//! - `tenant`: [`Tenant`], [`TenantReader`], [`TenantWriter`].
//! - `admission`: per-tenant in-memory catalogs that admit a lane's
//!   candidates under a broad recall filter without reading SQLite.
//! - `documents`, `chunks`, `journal`, `audit`, `usage`: the SQL for each table,
//!   as methods on the tenant handles.
//! - `originals`: reading original bytes back, page spans, export rows.
//! - `forget`: deleting a document and everything derived from it.
//! - `versions`: documents superseded by newer versions, their chains.
//! - `retention`: expiry, the retention period, and the sweep that purges.
//! - `resolution`: entity resolution across documents (the name-term
//!   index, merges recorded as aliases).
//! - `name_hints`: names resolved in a read snapshot while a document is
//!   prepared, and the writer's log that says when to trust them.
//! - [`cluster`]: the rqlite cluster a store can be copied into and back,
//!   and the replicator that feeds a store's write transactions to the
//!   cluster's log and applies everyone else's.
//! - `graph`: the knowledge graph's tables: recording a document's
//!   fragment, forgetting it, evidence and confidence, and the readers'
//!   graph queries.
//!
//! Durability: a write is acknowledged only after its transaction commits;
//! with [`Durability::Full`] (the default) the commit has been fsynced.

mod admission;
mod audit;
mod checkpoint;
mod chunks;
pub mod cluster;
mod communities;
mod db;
mod documents;
pub mod fields;
mod forget;
mod graph;
mod journal;
mod lanes;
mod maintenance;
mod name_hints;
mod originals;
pub mod owner;
mod packed_keys;
mod resolution;
mod retention;
mod scope;
mod sharing;
mod tenant;
#[cfg(test)]
pub(crate) mod test_support;
mod usage;
pub mod vectors;
mod versions;
mod write_log;
mod writer;

pub use chunks::{Adjacent, ChunkHit, ChunkMention, DocumentChunk, NewChunk, UnembeddedChunk};
pub use communities::Snapshot as CommunitySnapshot;
pub use db::{latest_schema_version, DB_FILE};
pub use documents::{
    AdmitOutcome, DocumentFilter, DocumentListing, DocumentOrder, DocumentRow, DocumentSummary,
    NewDocument,
};
pub use forget::{DocumentSelector, Forgotten};
pub use graph::{
    EntityDetail, EntityRelation, EntityRow, FactStatement, GraphEdge, RelationEvidence,
    RelationRow, MAX_FACT_STATEMENTS,
};
pub use journal::{
    interrupted_reason, Attempt, FailureKind, IndexedDocument, JobInput, JobKind, JobQueue,
    JobState, PendingJob, RecentFailure, StoredChunk,
};
pub use maintenance::Compaction;
pub use name_hints::{NameAnswer, NameHint, NameHints};
pub use originals::{ExportRow, PageSpan, StoredOriginal};
pub use retention::RETENTION_SUBJECT;
pub use scope::{RecallFilter, Scope, SourceMatch, TagMatch, MAX_LISTED_CHUNKS};
pub use sharing::{MemoryScope, ScopeGrant, Sight};
pub use tenant::{Tenant, TenantReader, TenantWriter};
pub use usage::{UsageRecord, UsageTotals};
pub use vectors::VectorSpec;
pub use versions::{Replaces, Version};
pub use write_log::{Recorded, Refusal, Replicator, WriteTap, VECTOR_CLEAR, VECTOR_PUT};
pub use writer::{Batching, Commit, QueuedWrite};

use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use crate::config::Durability;
use crate::error::{Error, Result};
use crate::knowledge::resolution::NamePolicy;
use tenant::PooledConn;
use vectors::VectorIndex;
use writer::{TenantIds, Writer};

/// What opening a store does with its vector files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorPolicy {
    /// Use them (refusing files of another embedder).
    Keep,
    /// Start a new, empty generation for every tenant and queue every
    /// document to be embedded again (`alayasiki-mcp reindex`).
    Rebuild,
}

/// Idle read connections kept for reuse.
const MAX_IDLE_READERS: usize = 32;

/// The open store. Cheap to share by reference; close with [`Store::close`].
pub struct Store {
    dir: PathBuf,
    readers: ReaderPool,
    tenants: TenantIds,
    writer: Mutex<Option<Writer>>,
    writer_thread: Mutex<Option<JoinHandle<()>>>,
    durability: Durability,
    vectors: Arc<VectorIndex>,
    /// The tenant retention period (see `retention`).
    retention: retention::RetentionPeriod,
    /// The entity-resolution policy (the engine's, handed in at open).
    resolver: &'static dyn NamePolicy,
    /// Sees each write transaction's statements (see `write_log`).
    tap: write_log::TapSlot,
    /// Usage rows kept back while the tap's cluster has no quorum.
    held_usage: Arc<usage::HeldUsage>,
    /// Held by the compaction running (one at a time, `maintenance`).
    compacting: Mutex<()>,
    /// What broad recall filters admit, per tenant (see `admission`).
    catalogs: admission::Catalogs,
}

/// Read connections for reuse across threads.
pub(crate) struct ReaderPool {
    dir: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl ReaderPool {
    fn get(&self) -> Result<Connection> {
        let pooled = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(c) => Ok(c),
            None => db::open_reader(&self.dir),
        }
    }

    fn put_back(&self, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
    }
}

impl Store {
    /// Opens (creating if needed) the store in `dir`, which the caller must
    /// own (see [`owner::OwnerLock`]), for vectors of `spec`. Pending jobs
    /// are replayed by the worker, which counts an attempt only when it
    /// begins one (see `journal`). Vector files written by another
    /// embedder are refused. `resolver` is the entity-resolution policy
    /// its name lookups and term index run (`graph::resolution::POLICY`).
    pub fn open(
        dir: &Path,
        durability: Durability,
        spec: VectorSpec,
        resolver: &'static dyn NamePolicy,
    ) -> Result<Store> {
        Store::open_with(dir, durability, spec, VectorPolicy::Keep, resolver)
    }

    /// [`Store::open`], choosing what happens to the stored vectors.
    pub fn open_with(
        dir: &Path,
        durability: Durability,
        spec: VectorSpec,
        policy: VectorPolicy,
        resolver: &'static dyn NamePolicy,
    ) -> Result<Store> {
        Store::open_tapped(dir, durability, spec, policy, resolver, None)
    }

    /// [`Store::open_with`] with its write tap set before the writer's
    /// first write (a replica of a cluster: see [`Store::set_write_tap`]).
    pub fn open_tapped(
        dir: &Path,
        durability: Durability,
        spec: VectorSpec,
        policy: VectorPolicy,
        resolver: &'static dyn NamePolicy,
        tap: Option<WriteTap>,
    ) -> Result<Store> {
        crate::disk_health::watch(dir, &dir.join(db::DB_FILE));
        let mut conn = db::open_writer(dir, durability)?;
        journal::note_restart(&conn)?;
        if policy == VectorPolicy::Rebuild {
            journal::schedule_reembedding(&conn)?;
        }
        let vectors = Arc::new(VectorIndex::new(dir, spec, durability)?);
        let mut current = Vec::new();
        let mut ids = HashMap::new();
        {
            let mut stmt =
                conn.prepare("SELECT name, id, vector_rows, vector_generation FROM tenants")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })?;
            for row in rows {
                let (name, id, vector_rows, generation) = row?;
                current.push((id, generation, vector_rows));
                ids.insert(name, id);
            }
        }
        let heads: Vec<(i64, i64)> = current.iter().map(|&(id, g, _)| (id, g)).collect();
        vectors.check_existing(&heads)?;
        for (id, generation, vector_rows) in current {
            // Open each tenant's vectors at the committed count now, so rows
            // of an interrupted transaction (and files of an interrupted
            // compaction) are dropped before anything can read them.
            vectors.tenant(id, vector_rows as u64, generation)?;
        }
        let tenants: TenantIds = Arc::new(RwLock::new(ids));
        let (tx, rx) = crossbeam_channel::unbounded();
        let thread_tenants = tenants.clone();
        let thread_vectors = vectors.clone();
        let budget =
            crate::config::admission_catalog_bytes_from_env().map_err(Error::InvalidInput)?;
        let catalogs = admission::Catalogs::new(budget);
        let publish = catalogs.watch(&mut conn)?;
        let checkpointer = checkpoint::start(&mut conn, dir, durability, publish)?;
        let wal = writer::WalSync::open(&conn, dir, durability);
        let tap: write_log::TapSlot = Arc::new(RwLock::new(tap));
        let thread_tap = tap.clone();
        let handle = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || {
                writer::run(
                    conn,
                    rx,
                    thread_tenants,
                    thread_vectors,
                    wal,
                    resolver,
                    thread_tap,
                );
                // The connection is gone, and with it the checkpointer's
                // only sender: it ends; closing the store waits for it.
                let _ = checkpointer.join();
            })?;
        Ok(Store {
            dir: dir.to_path_buf(),
            readers: ReaderPool {
                dir: dir.to_path_buf(),
                idle: Mutex::new(Vec::new()),
            },
            tenants,
            writer: Mutex::new(Some(Writer { tx })),
            writer_thread: Mutex::new(Some(handle)),
            durability,
            vectors,
            retention: retention::RetentionPeriod::default(),
            resolver,
            tap,
            held_usage: Arc::default(),
            compacting: Mutex::new(()),
            catalogs,
        })
    }

    /// Sets (or, with `None`, clears) the tap that sees every write
    /// transaction's statements before it commits and may refuse it (see
    /// `write_log`). Set it before writing: a transaction already open
    /// when it is set is not recorded whole.
    pub fn set_write_tap(&self, tap: Option<WriteTap>) {
        *self.tap.write().unwrap_or_else(|p| p.into_inner()) = tap;
    }

    /// Read access bound to `tenant`, seeing all of it.
    pub fn reader(&self, tenant: &Tenant) -> Result<TenantReader<'_>> {
        self.reader_seeing(tenant, &Sight::Whole)
    }

    /// Read access bound to `tenant` that sees only what `sight` admits
    /// (see `sharing`).
    pub fn reader_seeing(&self, tenant: &Tenant, sight: &Sight) -> Result<TenantReader<'_>> {
        let mut conn = PooledConn::new(self.readers.get()?, &self.readers);
        let tenant_id = self.tenant_id_seen(&conn, tenant.name())?;
        conn.see(sight)?;
        Ok(TenantReader {
            conn,
            tenant_id,
            vectors: &self.vectors,
            visible: self.visibility(),
            limited: sight.is_limited(),
            resolver: self.resolver,
            catalogs: &self.catalogs,
        })
    }

    /// The id of tenant `name`, if a commit `conn` can see created it.
    ///
    /// The map answers for every tenant this node's writer created or has
    /// seen applied; one created by another node's write becomes visible
    /// with that commit, and a replica adds it to the map only after it
    /// (`writer::caught_up`). A reader that arrives in between (say, one
    /// that waited for that very position) reads the row itself rather
    /// than answering as though the tenant had nothing. Ids are never
    /// reused, so what it reads is cached for good.
    fn tenant_id_seen(&self, conn: &Connection, name: &str) -> Result<Option<i64>> {
        let known = self
            .tenants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .copied();
        if known.is_some() {
            return Ok(known);
        }
        let found: Option<i64> = conn
            .prepare_cached("SELECT id FROM tenants WHERE name = ?1")?
            .query_row([name], |r| r.get(0))
            .optional()?;
        if let Some(id) = found {
            self.tenants
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(name.to_string(), id);
        }
        Ok(found)
    }

    /// Runs `f` in the writer's next transaction, bound to `tenant`, and
    /// returns once it is committed (durably, per the durability setting).
    pub fn write<T, F>(&self, tenant: &Tenant, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
    {
        self.writer()?.submit(tenant.name(), Batching::Shared, f)
    }

    /// Like [`Store::write`], but returns once `f` is queued; the
    /// [`QueuedWrite`] waits for its commit. The writer takes its queue in
    /// order, so writes queued one after the other are committed in that
    /// order (and, queued together, in one group).
    pub fn queue_write<T, F>(&self, tenant: &Tenant, f: F) -> Result<QueuedWrite<T>>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
    {
        self.writer()?.queue(tenant.name(), Batching::Shared, f)
    }

    /// Like [`Store::write`], in a transaction of its own
    /// ([`Batching::Alone`]).
    pub(super) fn write_alone<T, F>(&self, tenant: &Tenant, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
    {
        self.writer()?.submit(tenant.name(), Batching::Alone, f)
    }

    /// The writer thread's submitting side, until the store closes.
    fn writer(&self) -> Result<Writer> {
        self.writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| Error::Unavailable("the memory server is shutting down".into()))
    }

    /// Like [`Store::write`] but returns at once; `done` gets the result on
    /// the writer thread after the transaction is decided (exactly once).
    /// `commit` says whether the commit must reach the disk on its own or
    /// is replayable from the journal (see [`Commit`]), and `batching`
    /// whether it shares a transaction with its neighbours (see
    /// [`Batching`]).
    pub fn write_then<T, F, D>(
        &self,
        tenant: &Tenant,
        commit: Commit,
        batching: Batching,
        f: F,
        done: D,
    ) -> Result<()>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static,
    {
        self.writer()?
            .submit_then(tenant.name(), commit, batching, f, done)
    }

    /// Jobs waiting in `queue`, in the order they should run, across
    /// tenants. Only the workers call this; they bind each job's tenant
    /// before touching the job's data.
    pub fn pending_jobs(&self, queue: JobQueue, limit: usize) -> Result<Vec<PendingJob>> {
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        journal::pending(&conn, queue, limit)
    }

    /// Tenants with LLM extraction jobs pending.
    pub fn tenants_with_llm_jobs(&self) -> Result<Vec<Tenant>> {
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        journal::tenants_with_llm_jobs(&conn)
    }

    /// Queues every failed indexing job of every tenant again, its
    /// attempts forgotten (`alayasiki-mcp retry-failed`). Returns how many.
    pub fn requeue_all_failed(&self) -> Result<usize> {
        let mut total = 0;
        for tenant in self.known_tenants()? {
            total += self.write(&tenant, |w| w.requeue_tenant_failed(crate::clock::now_ms()))?;
        }
        Ok(total)
    }

    /// Every tenant the store has rows for, for maintenance across them.
    pub(crate) fn known_tenants(&self) -> Result<Vec<Tenant>> {
        let names: Vec<String> = self
            .tenants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect();
        names
            .iter()
            .map(|name| Tenant::new(name).map_err(Error::internal))
            .collect()
    }

    /// Pending and failed job counts across all tenants (for start-up logs).
    pub fn journal_backlog(&self) -> Result<(i64, i64)> {
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        journal::backlog(&conn)
    }

    /// Pending jobs across all tenants (cheap; for pacing bulk ingestion).
    pub fn pending_job_count(&self) -> Result<i64> {
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        journal::pending_count(&conn)
    }

    /// Whether other stores write this memory too (its tap says so: the
    /// other nodes of a cluster).
    pub fn has_other_writers(&self) -> bool {
        self.tap
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| t.has_other_writers())
    }

    /// Whether the tap refuses writes for want of a quorum right now (see
    /// [`Replicator::quorum_lost`]).
    pub fn quorum_lost(&self) -> bool {
        self.tap
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| t.quorum_lost())
    }

    /// On a cluster node, the pending jobs this node journalled itself
    /// (`cluster::own_jobs`): its worker takes them up at once after a
    /// restart. Empty on a store that writes alone (it replays every
    /// pending job anyway).
    pub fn own_pending_jobs(&self) -> Result<Vec<i64>> {
        if !self.has_other_writers() {
            return Ok(Vec::new());
        }
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        Ok(cluster::own_jobs::pending(&conn)?)
    }

    /// Whether this store may do the background chore `name` for the
    /// next `lease` (see [`Replicator::claim_chore`]): always, unless other
    /// stores write this memory and one of them holds it.
    pub fn claim_chore(&self, name: &str, lease: std::time::Duration) -> bool {
        self.tap
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_none_or(|t| t.claim_chore(name, lease))
    }

    /// Lets the tap delete what its log no longer needs to keep (see
    /// [`Replicator::prune_log`]); how many entries went.
    pub fn prune_log(&self) -> usize {
        self.tap
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map_or(0, |t| t.prune_log())
    }

    /// Whether this store can no longer follow its cluster's log
    /// (`Replicator::stranded`): its replica stays where it is until the
    /// node joins again.
    pub fn stranded(&self) -> bool {
        self.tap
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| t.stranded())
    }

    /// The last entry of a replicated log this database applied (its
    /// `user_version`; 0 for a store that is no replica).
    pub fn log_position(&self) -> Result<i64> {
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// What vectors this store holds.
    pub fn vector_spec(&self) -> &VectorSpec {
        self.vectors.spec()
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Bytes on disk: the database plus its WAL.
    pub fn size_bytes(&self) -> u64 {
        [DB_FILE.to_string(), format!("{DB_FILE}-wal")]
            .iter()
            .filter_map(|f| std::fs::metadata(self.dir.join(f)).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Stops the writer after the writes already queued, checkpoints the WAL
    /// and waits for it. Later writes fail as "shutting down".
    pub fn close(&self) {
        drop(self.writer.lock().unwrap_or_else(|p| p.into_inner()).take());
        let handle = self
            .writer_thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(h) = handle {
            let _ = h.join();
        }
        self.readers
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.close();
    }
}
