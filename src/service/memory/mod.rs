//! [`MemoryService`] (one per process: the store, the ingestion worker) and
//! [`Memory`] (that service bound to one caller).
//!
//! Limits on what a caller may store or ask are enforced here, so every
//! transport gets the same rules.
//!
//! This module owns the service's lifetime (open, shutdown) and the
//! binding to a caller with its permission check; what a caller can do is
//! split by concern:
//! - [`content`]: what is stored, its type, extraction and title.
//! - [`ingest`]: storing a document and the receipt for it.
//! - [`update`]: storing a new version of a document, superseding it.
//! - [`documents`]: reading stored documents, their chunks and originals
//!   back.
//! - [`graph_view`]: the knowledge graph as the memory browser shows it.
//! - [`forget`]: deleting documents and what was derived from them.
//! - [`recall`]: queries and community summaries.
//! - [`status`]: the caller's status and usage charges.
//! - [`uploads`]: upload tickets; [`upload_parts`]: an upload larger than
//!   one document, stored as a series of parts.

mod content;
mod documents;
mod forget;
mod graph_view;
mod ingest;
mod recall;
mod sharing;
mod status;
mod update;
mod upload_parts;
pub mod uploads;

pub use content::Content;
pub use documents::{ChunkEntity, ChunkPage, ChunkView, Original};
pub use forget::{ForgetReport, FORGET_BATCH, FORGET_REPORT_ITEMS};
pub use graph_view::{
    CommunityRef, EntityCard, EntityRef, EntityView, EvidenceView, GraphEdgeView, GraphNode,
    GraphView, RelationView,
};
pub use ingest::{
    metadata_source, IngestReceipt, IngestRequest, PreparedIngest, QueuedIngest, Restore,
};
pub use sharing::{ShareReceipt, ShareTarget, ANONYMOUS_REFUSAL};
pub use status::{BrowserStatus, OwnerProcess, OwnerStatus, Status, STRANDED};
pub use update::UpdateRequest;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::principal::{Permission, Principal};
use super::working_memory::WorkingMemory;
use crate::clock::now_ms;
use crate::config::Durability;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::ingest::enrich::Enricher;
use crate::ingest::summarize::Summarizer;
use crate::ingest::worker::{IngestWorker, WorkerShared};
use crate::llm::Llm;
use crate::query::{self, Fusion};
use crate::store::{Compaction, Store, VectorPolicy, VectorSpec};

/// Closes LLM extraction jobs left pending by a run that had LLM
/// extraction configured, since this one does not.
fn skip_llm_extraction(store: &Store) -> Result<()> {
    for tenant in store.tenants_with_llm_jobs()? {
        let skipped = store.write(&tenant, |w| {
            w.skip_llm_extraction("skipped: LLM extraction is not configured", now_ms())
        })?;
        log::info!(
            "LLM extraction is not configured: {skipped} pending LLM extraction job(s) closed"
        );
    }
    Ok(())
}

/// Longest pause between two looks at a document awaited by
/// [`Memory::await_searchable`].
const MAX_SEARCHABLE_POLL: Duration = Duration::from_millis(20);

/// The memory server's shared state: one per process.
pub struct MemoryService {
    data_dir: PathBuf,
    fusion: Fusion,
    half_life_days: f64,
    fixed_depth: Option<usize>,
    store: Arc<Store>,
    worker: IngestWorker,
    /// Runs LLM extraction jobs, when LLM extraction is configured.
    enricher: Option<Enricher>,
    /// Adds LLM summaries to community snapshots, when configured.
    summarizer: Option<Summarizer>,
    shared: Arc<WorkerShared>,
    /// The LLM that composes answers, when configured for it.
    answer_llm: Option<Arc<Llm>>,
    /// Session graphs: one registry per process, shared by every transport.
    working: WorkingMemory,
    /// The loopback memory browser, while one is served ([`status`]).
    browser: Mutex<Option<status::BrowserStatus>>,
    /// This process as the memory owner of local clients, when it is one
    /// ([`status`]).
    owner: Mutex<Option<status::OwnerProcess>>,
    /// The cluster the memory lives on, when it does ([`status`]).
    cluster: Mutex<Option<Arc<crate::store::cluster::ClusterClient>>>,
    /// Community membership of each tenant's latest snapshot, for the
    /// graph views.
    memberships: graph_view::Memberships,
    /// Open upload tickets ([`uploads`]).
    uploads: uploads::UploadDesk,
}

/// The vectors `embedder` makes, as the store records them (a store built
/// by another embedder is refused).
pub fn vector_spec(embedder: &dyn Embedder) -> VectorSpec {
    VectorSpec {
        embedder_id: embedder.id().to_string(),
        dim: embedder.dim(),
    }
}

impl MemoryService {
    /// Opens the store in `data_dir` (which the caller owns) and starts the
    /// ingestion worker, which replays any pending jobs.
    pub fn open(
        data_dir: &Path,
        durability: Durability,
        embedder: Arc<dyn Embedder>,
    ) -> Result<MemoryService> {
        MemoryService::open_with(data_dir, durability, embedder, VectorPolicy::Keep)
    }

    /// [`MemoryService::open`], choosing what happens to stored vectors
    /// (`Rebuild` for `reindex`).
    pub fn open_with(
        data_dir: &Path,
        durability: Durability,
        embedder: Arc<dyn Embedder>,
        policy: VectorPolicy,
    ) -> Result<MemoryService> {
        MemoryService::open_tapped(data_dir, durability, embedder, policy, None)
    }

    /// [`MemoryService::open_with`] for a replica of a replicated log: `tap`
    /// sees every write from the first (see `store::write_log`).
    pub fn open_tapped(
        data_dir: &Path,
        durability: Durability,
        embedder: Arc<dyn Embedder>,
        policy: VectorPolicy,
        tap: Option<crate::store::WriteTap>,
    ) -> Result<MemoryService> {
        // A cluster node's replica changes only through the cluster's log:
        // a write of its own would make it differ from every other copy.
        if tap.is_none()
            && data_dir
                .join(crate::store::cluster::node::MARKER_FILE)
                .exists()
        {
            return Err(Error::InvalidInput(
                "this data directory is a cluster node's replica: serve it with \
                 `alayasiki-api --store rqlite://...`, or pull a copy of the memory \
                 (`alayasiki-mcp cluster pull`) to use it on its own"
                    .into(),
            ));
        }
        // Uploads a killed process was receiving were never stored.
        uploads::remove_partial_uploads(data_dir);
        let spec = vector_spec(embedder.as_ref());
        // Before the worker starts: replayed jobs are chunked at this size.
        crate::ingest::chunk::set_target_bytes(
            crate::config::chunk_target_from_env().map_err(Error::Unavailable)?,
        );
        let store = Arc::new(Store::open_tapped(
            data_dir,
            durability,
            spec,
            policy,
            &crate::graph::resolution::POLICY,
            tap,
        )?);
        // Before the worker starts: its first sweep must see the period.
        store.set_retention(crate::config::retention_from_env().map_err(Error::Unavailable)?);
        let (pending, failed) = store.journal_backlog()?;
        if pending > 0 {
            log::info!("replaying {pending} pending ingestion job(s)");
        }
        if failed > 0 {
            log::info!("{failed} ingestion job(s) have failed; see alayasiki_status");
        }
        let llm = crate::llm::LlmConfig::from_env()
            .map_err(Error::Unavailable)?
            .map(|c| Arc::new(Llm::new(c)));
        if let Some(llm) = &llm {
            let c = llm.config();
            log::info!(
                "LLM {} ({}) configured for{}{}{}",
                c.model,
                c.api.name(),
                if c.extract { " extraction" } else { "" },
                if c.answer { " answers" } else { "" },
                if c.summarize {
                    " community summaries"
                } else {
                    ""
                }
            );
        }
        if !llm.as_ref().is_some_and(|l| l.config().extract) {
            skip_llm_extraction(&store)?;
        }
        let shared = Arc::new(WorkerShared::new(store.clone(), embedder, llm.clone()));
        let worker = IngestWorker::start(shared.clone())?;
        let enricher = Enricher::start(shared.clone())?;
        let summarizer = Summarizer::start(store.clone(), llm.clone())?;
        let fusion = crate::query::Fusion::from_env().map_err(Error::Unavailable)?;
        let fixed_depth = crate::config::ranking_depth_from_env().map_err(Error::Unavailable)?;
        let half_life_days =
            crate::knowledge::confidence::half_life_from_env().map_err(Error::Unavailable)?;
        let wm_ttl = crate::config::wm_ttl_from_env().map_err(Error::Unavailable)?;
        Ok(MemoryService {
            data_dir: data_dir.to_path_buf(),
            fusion,
            half_life_days,
            fixed_depth,
            store,
            worker,
            enricher,
            summarizer,
            shared,
            answer_llm: llm.filter(|l| l.config().answer),
            working: WorkingMemory::new(wm_ttl),
            browser: Mutex::new(None),
            owner: Mutex::new(None),
            cluster: Mutex::new(None),
            memberships: graph_view::Memberships::default(),
            uploads: uploads::UploadDesk::new(),
        })
    }

    /// Sets the tap that sees every write transaction's statements before
    /// it commits, and may refuse it ([`Store::set_write_tap`]).
    pub fn set_write_tap(&self, tap: Option<crate::store::WriteTap>) {
        self.store.set_write_tap(tap);
    }

    /// The last entry of the cluster's log this node's replica applied
    /// (0 when the memory is not on a cluster).
    pub fn log_position(&self) -> Result<i64> {
        self.store.log_position()
    }

    /// Jobs waiting, across tenants (cheap; bulk ingestion paces itself
    /// on it).
    pub fn pending_jobs(&self) -> Result<i64> {
        self.store.pending_job_count()
    }

    /// The disk's fault, while indexing is held up by one.
    pub fn storage_fault(&self) -> Option<crate::error::StorageFault> {
        self.shared.storage_fault()
    }

    /// For how long every embedding of stored chunks has failed, while
    /// the last one did (the embedding server is down or refusing).
    pub fn embed_failing_for(&self) -> Option<Duration> {
        self.shared.embed_failing_for()
    }

    /// Jobs waiting and failed, across tenants (for maintenance progress).
    pub fn backlog(&self) -> Result<(i64, i64)> {
        self.store.journal_backlog()
    }

    /// Rewrites every tenant's vector files without deleted chunks' slots
    /// and merges their full-text indexes (dropping forgotten chunks'
    /// entries), each tenant in a write of its own, between other writes
    /// (`alayasiki-mcp compact`; `POST /v1/compact` for one tenant).
    pub fn compact(&self) -> Result<Vec<Compaction>> {
        self.store.compact()
    }

    /// The service as seen by one caller.
    pub fn for_caller<'a>(&'a self, principal: &'a Principal) -> Memory<'a> {
        Memory {
            service: self,
            principal,
            unindexed: Mutex::new(Vec::new()),
            on_admitted: None,
        }
    }

    /// [`MemoryService::for_caller`], telling `on_admitted` the id of each
    /// document the moment it is admitted (stored durably), before it is
    /// indexed: the protocol's ordering lets later requests go then.
    pub fn for_caller_observing<'a>(
        &'a self,
        principal: &'a Principal,
        on_admitted: &'a (dyn Fn(&str) + Sync),
    ) -> Memory<'a> {
        Memory {
            on_admitted: Some(on_admitted),
            ..self.for_caller(principal)
        }
    }

    pub(super) fn working_memory(&self) -> &WorkingMemory {
        &self.working
    }

    pub(super) fn embedder(&self) -> &dyn Embedder {
        self.shared.embedder.as_ref()
    }

    /// How queries run (fusion, confidence decay, a fixed ranking depth).
    pub(super) fn settings(&self) -> query::Settings {
        query::Settings {
            fusion: self.fusion,
            half_life_days: self.half_life_days,
            fixed_depth: self.fixed_depth,
        }
    }

    pub(super) fn fusion(&self) -> Fusion {
        self.fusion
    }

    pub(super) fn store(&self) -> &Store {
        &self.store
    }

    /// Deterministic mode's defined point, before each request: waits
    /// (up to [`crate::limits::INGEST_WAIT_MS`]) until indexing has caught
    /// up, then runs upkeep's chores (retention purges, community
    /// rebuilds) at once. Whatever the machine's speed, every request then
    /// finds the memory in the same state.
    pub fn settle_background(&self) {
        let deadline = Instant::now() + Duration::from_millis(crate::limits::INGEST_WAIT_MS);
        while self.store.pending_job_count().is_ok_and(|n| n > 0) && Instant::now() < deadline {
            self.worker.wake();
            std::thread::sleep(Duration::from_millis(1));
        }
        crate::ingest::upkeep::run_now(&self.shared);
    }

    /// Stops the worker at a job boundary, then closes the store (which
    /// checkpoints the WAL). Idempotent.
    pub fn shutdown(&self) {
        // Both LLM threads are told at once, so their waits overlap.
        if let Some(summarizer) = &self.summarizer {
            summarizer.request_stop();
        }
        if let Some(enricher) = &self.enricher {
            enricher.stop();
        }
        if let Some(summarizer) = &self.summarizer {
            summarizer.stop();
        }
        self.worker.stop();
        self.store.close();
    }
}

/// The memory, bound to one caller. Cheap; make one per request.
pub struct Memory<'a> {
    service: &'a MemoryService,
    principal: &'a Principal,
    /// Documents this caller's calls stored that were not searchable yet
    /// when the call returned (ingests with `wait: false`), for the
    /// protocol's read-your-writes order.
    unindexed: Mutex<Vec<String>>,
    /// Told of each document admitted through this `Memory`.
    on_admitted: Option<&'a (dyn Fn(&str) + Sync)>,
}

impl Memory<'_> {
    pub fn principal(&self) -> &Principal {
        self.principal
    }

    pub(super) fn service(&self) -> &MemoryService {
        self.service
    }

    /// The documents stored through this `Memory` that were still pending
    /// when their call returned; empties the list.
    pub fn take_unindexed(&self) -> Vec<String> {
        std::mem::take(&mut *self.unindexed.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(super) fn note_admitted(&self, doc_id: &str) {
        if let Some(observe) = self.on_admitted {
            observe(doc_id);
        }
    }

    pub(super) fn note_unindexed(&self, doc_id: &str) {
        self.unindexed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(doc_id.to_string());
    }

    /// Waits until `doc_ids` (of this caller's tenant) are searchable,
    /// failed or gone, oldest first, until `deadline`; returns how many
    /// from the front it confirmed. The worker indexes in admission order,
    /// so this polls only the oldest document not yet confirmed.
    pub fn await_searchable(&self, doc_ids: &[String], deadline: Instant) -> usize {
        let mut confirmed = 0;
        let mut pause = Duration::from_millis(1);
        let began = Instant::now();
        while confirmed < doc_ids.len() {
            let settled = self
                .reader()
                .and_then(|r| r.document(&doc_ids[confirmed]))
                .map(|row| row.is_none_or(|d| d.state != "pending"));
            match settled {
                Ok(true) => {
                    confirmed += 1;
                    pause = Duration::from_millis(1);
                    continue;
                }
                Ok(false) => {}
                // A disk that fails the check will not finish the
                // indexing either: the reply says what it may miss.
                Err(Error::Storage(fault, cause)) => {
                    log::debug!("read-your-writes check failed: storage {fault:?}: {cause}");
                    break;
                }
                // Any other failure is waited out like a document still
                // pending.
                Err(e) => log::debug!("read-your-writes check failed: {e}"),
            }
            let now = Instant::now();
            // Indexing held up by the disk will not finish within any
            // wait: the reply says what it may miss instead. (A fault seen
            // only before the wait may be over: the worker looks again.)
            if now >= deadline || self.service.shared.storage_fault_since(began).is_some() {
                break;
            }
            self.service.worker.wake();
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(MAX_SEARCHABLE_POLL);
        }
        confirmed
    }

    /// Read access to what this caller may see: its tenant, limited to
    /// its memory scopes when its token names any (see `store::sharing`).
    pub(super) fn reader(&self) -> Result<crate::store::TenantReader<'_>> {
        self.service
            .store
            .reader_seeing(&self.principal.tenant, &self.principal.sight())
    }

    pub(super) fn require(&self, p: Permission) -> Result<()> {
        if self.principal.permits(p) {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "this identity lacks permission for this operation (needs a role granting it or \
                 scope {})",
                p.scope()
            )))
        }
    }
}

/// Refuses an optional request field that is over `max` bytes or blank.
fn check_optional_len(field: &str, value: &Option<String>, max: usize) -> Result<()> {
    match value {
        Some(v) if v.len() > max => Err(Error::LimitExceeded(format!(
            "{field} is {} bytes; the limit is {max}",
            v.len()
        ))),
        Some(v) if v.trim().is_empty() => Err(Error::invalid(format!("{field} must not be blank"))),
        _ => Ok(()),
    }
}
