//! [`MemoryService`] (one per process: the store, the ingestion worker) and
//! [`Memory`] (that service bound to one caller).
//!
//! Limits on what a caller may store or ask are enforced here, so every
//! transport gets the same rules.

use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::principal::{Permission, Principal};
use super::working_memory::{WorkingMemory, WorkingMemoryStatus};
use crate::clock::now_ms;
use crate::config::Durability;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::enrich::Enricher;
use crate::ingest::media::{self, MediaKind, SUPPORTED_MEDIA_TYPES, TEXT_MEDIA_TYPES};
use crate::ingest::summarize::Summarizer;
use crate::ingest::worker::{IngestWorker, JobOutcome, WorkerShared};
use crate::ingest::Prepared;
use crate::limits::*;
use crate::llm::Llm;
use crate::query::{self, Fusion, QueryOutcome, QuerySpec};
use crate::store::{
    Compaction, DocumentRow, DocumentSelector, DocumentSummary, ExportRow, Forgotten, NewDocument,
    Store, UsageRecord, UsageTotals, VectorPolicy, VectorSpec,
};

/// What to store.
#[derive(Debug, Clone)]
pub enum Content {
    /// Text given inline; `media_type` defaults to `text/plain`.
    Text {
        text: String,
        media_type: Option<String>,
    },
    /// A file's bytes, typed by `mime_type`, else the filename's extension,
    /// else the bytes themselves.
    File {
        filename: Option<String>,
        mime_type: Option<String>,
        bytes: Vec<u8>,
    },
}

/// A request to store one document.
#[derive(Debug, Clone)]
pub struct IngestRequest {
    pub content: Content,
    pub metadata: Map<String, Value>,
    pub idempotency_key: Option<String>,
    pub source: Option<String>,
    pub provenance: Option<String>,
    /// When the document expires (Unix ms): invisible from then on and
    /// purged by the ingestion worker.
    pub expires_at: Option<i64>,
    /// Wait for indexing before answering (default true).
    pub wait: bool,
}

/// What an ingest did.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReceipt {
    pub document_id: String,
    /// `pending` (stored, not yet searchable), `ready` or `failed`.
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub media_type: String,
    pub bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<i64>,
    /// True when this answer is an earlier request's, found by its key.
    pub idempotent_replay: bool,
}

/// What an import keeps of a document's identity in the memory it came
/// from: its id (if it has the shape of one and is free here) and its
/// creation time. Everything else goes through ingestion as usual.
#[derive(Debug, Clone, Default)]
pub struct Restore {
    pub doc_id: Option<String>,
    pub created_at: Option<i64>,
}

/// A document's original bytes, checked against their recorded hash.
#[derive(Debug, Clone)]
pub struct Original {
    pub document_id: String,
    pub media_type: String,
    pub title: Option<String>,
    pub sha256: String,
    pub bytes: Vec<u8>,
    /// True when the bytes are UTF-8 text of a text type (serve as text,
    /// not base64).
    pub is_text: bool,
}

/// What a forget did.
#[derive(Debug, Clone, Serialize)]
pub struct ForgetReport {
    /// Documents deleted.
    pub documents: usize,
    pub chunks: usize,
    pub vectors: usize,
    /// Originals deleted (an original another document shares is kept).
    pub originals_deleted: usize,
    /// The first [`FORGET_REPORT_ITEMS`] documents deleted.
    pub forgotten: Vec<Forgotten>,
}

/// Documents deleted per transaction when forgetting by source, so one
/// huge forget does not hold the writer (and every other write) at once.
pub const FORGET_BATCH: usize = 256;

/// Documents listed one by one in a [`ForgetReport`].
pub const FORGET_REPORT_ITEMS: usize = 100;

/// Counts and settings for `alayasiki_status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub version: &'static str,
    pub data_dir: String,
    pub tenant: String,
    pub subject: String,
    pub schema_version: i64,
    pub durability: &'static str,
    pub documents: i64,
    pub chunks: i64,
    pub jobs: JobCounts,
    pub store_bytes: u64,
    /// The caller's working-memory sessions and the shared limits.
    pub working_memory: WorkingMemoryStatus,
    /// What this caller (tenant and subject) has used over the HTTP API and
    /// SSE; calls over stdio are not charged.
    pub usage: UsageTotals,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobCounts {
    /// Documents waiting to be indexed (or embedded).
    pub pending: i64,
    pub failed: i64,
    /// Indexed documents waiting for LLM extraction (shown only when some
    /// are).
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_pending: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

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

/// The memory server's shared state: one per process.
pub struct MemoryService {
    data_dir: PathBuf,
    fusion: Fusion,
    half_life_days: f64,
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
        let spec = VectorSpec {
            embedder_id: embedder.id().to_string(),
            dim: embedder.dim(),
        };
        // Before the worker starts: replayed jobs are chunked at this size.
        crate::ingest::chunk::set_target_bytes(
            crate::config::chunk_target_from_env().map_err(Error::Unavailable)?,
        );
        let store = Arc::new(Store::open_with(data_dir, durability, spec, policy)?);
        // Before the worker starts: its first sweep must see the period.
        store.set_retention(crate::config::retention_from_env().map_err(Error::Unavailable)?);
        let (pending, failed) = store.journal_backlog()?;
        if pending > 0 {
            log::info!("replaying {pending} pending ingestion job(s)");
        }
        if failed > 0 {
            log::info!("{failed} ingestion job(s) have failed; see alayasiki_status");
        }
        let llm = crate::config::llm_from_env()
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
        let fusion = crate::config::fusion_from_env().map_err(Error::Unavailable)?;
        let half_life_days =
            crate::graph::confidence::half_life_from_env().map_err(Error::Unavailable)?;
        let wm_ttl = crate::config::wm_ttl_from_env().map_err(Error::Unavailable)?;
        Ok(MemoryService {
            data_dir: data_dir.to_path_buf(),
            fusion,
            half_life_days,
            store,
            worker,
            enricher,
            summarizer,
            shared,
            answer_llm: llm.filter(|l| l.config().answer),
            working: WorkingMemory::new(wm_ttl),
        })
    }

    /// Jobs waiting, across tenants (cheap; bulk ingestion paces itself
    /// on it).
    pub fn pending_jobs(&self) -> Result<i64> {
        self.store.pending_job_count()
    }

    /// Jobs waiting and failed, across tenants (for maintenance progress).
    pub fn backlog(&self) -> Result<(i64, i64)> {
        self.store.journal_backlog()
    }

    /// Rewrites every tenant's vector files without deleted chunks' slots
    /// and merges their full-text indexes (dropping forgotten chunks'
    /// entries). Run offline (`alayasiki-mcp compact`).
    pub fn compact(&self) -> Result<Vec<Compaction>> {
        let report = self.store.compact_vectors()?;
        self.store.optimize_fulltext()?;
        Ok(report)
    }

    /// The service as seen by one caller.
    pub fn for_caller<'a>(&'a self, principal: &'a Principal) -> Memory<'a> {
        Memory {
            service: self,
            principal,
        }
    }

    pub(super) fn working_memory(&self) -> &WorkingMemory {
        &self.working
    }

    pub(super) fn embedder(&self) -> &dyn Embedder {
        self.shared.embedder.as_ref()
    }

    /// How queries run (fusion, confidence decay).
    pub(super) fn settings(&self) -> query::Settings {
        query::Settings {
            fusion: self.fusion,
            half_life_days: self.half_life_days,
        }
    }

    pub(super) fn fusion(&self) -> Fusion {
        self.fusion
    }

    pub(super) fn store(&self) -> &Store {
        &self.store
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
}

impl Memory<'_> {
    pub fn principal(&self) -> &Principal {
        self.principal
    }

    pub(super) fn service(&self) -> &MemoryService {
        self.service
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

    /// Stores a document durably; with `wait`, also waits until it is
    /// searchable (or failed, or [`INGEST_WAIT_MS`] passed).
    ///
    /// The document is extracted and chunked here, on the caller's thread,
    /// before anything is stored: bad content is refused while the caller
    /// listens, and the work runs in parallel with other requests instead of
    /// queueing on the single ingestion worker, which receives it through
    /// the hand-off.
    pub fn ingest(&self, req: IngestRequest) -> Result<IngestReceipt> {
        self.ingest_as(req, Restore::default())
    }

    /// [`Memory::ingest`] for a document copied from another memory
    /// (`alayasiki-mcp import`): it keeps its id and creation time where
    /// it can (see [`Restore`]).
    pub fn ingest_restored(&self, req: IngestRequest, restore: Restore) -> Result<IngestReceipt> {
        self.ingest_as(req, restore)
    }

    fn ingest_as(&self, req: IngestRequest, restore: Restore) -> Result<IngestReceipt> {
        self.require(Permission::Ingest)?;
        let (kind, bytes, filename) = resolve_content(req.content)?;
        check_optional_len(
            "idempotency_key",
            &req.idempotency_key,
            MAX_IDEMPOTENCY_KEY_BYTES,
        )?;
        check_optional_len("source", &req.source, MAX_SOURCE_BYTES)?;
        let metadata = Value::Object(req.metadata);
        let metadata_json = metadata.to_string();
        if metadata_json.len() > MAX_METADATA_BYTES {
            return Err(Error::LimitExceeded(format!(
                "metadata is {} bytes as JSON; the limit is {MAX_METADATA_BYTES} \
                 (MAX_METADATA_BYTES)",
                metadata_json.len()
            )));
        }
        let provenance = req.provenance.or_else(|| {
            metadata
                .get("provenance")
                .and_then(|p| p.as_str())
                .map(str::to_string)
        });
        if let Some(p) = &provenance {
            if !matches!(p.as_str(), "external" | "user" | "agent") {
                return Err(Error::invalid(
                    "provenance must be one of: external, user, agent",
                ));
            }
        }
        let prepared = prepare_guarded(
            kind,
            &bytes,
            metadata.as_object().expect("metadata is an object"),
            self.service.shared.embedder.as_ref(),
        )?;
        let chunk_count = prepared.chunks.len();
        let sha256 = ids::sha256_hex(&bytes);
        let media_type = kind.media_type().to_string();
        let idempotency = req.idempotency_key.map(|key| {
            let mut fields = vec![
                serde_json::json!(media_type),
                serde_json::json!(sha256),
                metadata.clone(),
                serde_json::json!(req.source),
                serde_json::json!(filename),
                serde_json::json!(provenance),
            ];
            // Appended only when set, so digests stored before expiry
            // existed still match a retry of the same request.
            if let Some(at) = req.expires_at {
                fields.push(at.into());
            }
            let digest = ids::sha256_hex(serde_json::Value::from(fields).to_string().as_bytes());
            (key, digest)
        });
        let doc_id = match restore.doc_id {
            Some(id) if ids::is_document_id(&id) && !self.document_exists(&id)? => id,
            _ => ids::new_id("doc"),
        };
        let title = title_for(&filename, prepared.text.as_deref(), &bytes, kind);
        if let Some(at) = req.expires_at {
            if at <= now_ms() {
                return Err(Error::invalid(
                    "`expires_at` is in the past: the document would be forgotten at once",
                ));
            }
        }
        let doc = NewDocument {
            doc_id: doc_id.clone(),
            source: req.source,
            title,
            media_type: media_type.clone(),
            original: bytes,
            sha256,
            metadata: metadata_json,
            provenance,
            created_by: self.principal.subject.clone(),
            idempotency,
            expires_at: req.expires_at,
        };
        let byte_len = doc.original.len();
        let shared = &self.service.shared;
        // Both are in place before the admission commits, so neither the
        // worker's look-up nor the outcome can come too early.
        let outcome_rx = req.wait.then(|| shared.waiters.register(&doc_id));
        shared.handoff.offer(&doc_id, prepared);
        let created_at = restore.created_at;
        let admitted = self.service.store.write(&self.principal.tenant, move |w| {
            let admitted = w.admit(doc, now_ms())?;
            if let (Some(at), false) = (created_at, admitted.replayed) {
                w.set_created_at(admitted.document_key, at)?;
            }
            Ok(admitted)
        });
        let admitted = match admitted {
            Ok(a) if !a.replayed => a,
            other => {
                shared.handoff.take(&doc_id);
                shared.waiters.forget(&doc_id);
                let earlier = other?;
                return self.receipt_from_store(&earlier.doc_id, byte_len, true);
            }
        };
        self.service.worker.wake();
        let outcome = outcome_rx.and_then(|rx| {
            let got = rx.recv_timeout(Duration::from_millis(INGEST_WAIT_MS)).ok();
            if got.is_none() {
                shared.waiters.forget(&doc_id);
            }
            got
        });
        let (state, chunks, error) = match outcome {
            Some(JobOutcome::Indexed { chunks }) => ("ready", Some(chunks as i64), None),
            Some(JobOutcome::Failed(why)) => ("failed", None, Some(why)),
            None => ("pending", None, None),
        };
        debug_assert!(chunks.is_none() || chunks == Some(chunk_count as i64));
        Ok(IngestReceipt {
            document_id: admitted.doc_id,
            state: state.to_string(),
            error,
            media_type,
            bytes: byte_len,
            chunks,
            idempotent_replay: false,
        })
    }

    /// The receipt of an already stored document (an idempotent replay).
    fn receipt_from_store(
        &self,
        doc_id: &str,
        bytes: usize,
        replayed: bool,
    ) -> Result<IngestReceipt> {
        let reader = self.service.store.reader(&self.principal.tenant)?;
        let row = reader
            .document(doc_id)?
            .ok_or_else(|| Error::internal("admitted document vanished"))?;
        let chunks = match row.state.as_str() {
            "ready" => Some(reader.document_chunk_count(&row.doc_id)?),
            _ => None,
        };
        Ok(IngestReceipt {
            document_id: row.doc_id,
            state: row.state,
            error: row.error,
            media_type: row.media_type,
            bytes,
            chunks,
            idempotent_replay: replayed,
        })
    }

    /// Answers a question from this tenant's memory, merged with the
    /// caller's working-memory session when `spec.session_id` names one.
    ///
    /// In answer mode, an LLM configured for answers composes the answer
    /// from the evidence; if it fails or cites nothing it was given, the
    /// extractive answer stays (see [`query::synthesis`]).
    pub fn query(&self, spec: &QuerySpec) -> Result<QueryOutcome> {
        self.require(Permission::Query)?;
        let mut outcome = match &spec.session_id {
            Some(session_id) => self.query_with_session(spec, session_id)?,
            None => {
                let reader = self.service.store.reader(&self.principal.tenant)?;
                query::run(
                    &reader,
                    spec,
                    self.service.shared.embedder.as_ref(),
                    self.service.settings(),
                )?
            }
        };
        if let Some(llm) = &self.service.answer_llm {
            if let Some(extractive) = outcome.answer.take() {
                outcome.answer = Some(query::synthesis::synthesize(
                    llm,
                    &spec.text,
                    extractive,
                    &outcome.evidence,
                ));
            }
        }
        Ok(outcome)
    }

    /// The tenant's community summaries, rebuilt first if the graph changed
    /// since the last build, as JSON (citations as chunk ids).
    pub fn communities(&self) -> Result<Value> {
        self.require(Permission::Query)?;
        crate::graph::communities::refresh(&self.service.store, &self.principal.tenant)?;
        let reader = self.service.store.reader(&self.principal.tenant)?;
        let snapshot = match reader.latest_communities()? {
            Some(snapshot) => snapshot,
            // The stored snapshot may quote documents that have expired
            // since it was built (see `store::retention`): summarize the
            // visible data now, without storing it (the worker rebuilds
            // once the sweep has purged them).
            None => crate::store::CommunitySnapshot {
                graph_version: reader.community_versions()?.0,
                built_at: crate::clock::now_ms(),
                summaries: crate::graph::communities::build(&reader.graph_input()?),
            },
        };
        if snapshot.summaries.is_empty() {
            return Ok(
                serde_json::json!({"graph_version": snapshot.graph_version, "communities": []}),
            );
        }
        let keys: Vec<(i64, f64)> = snapshot
            .summaries
            .iter()
            .flat_map(|s| s.citations.iter().map(|c| (c.chunk_key, 0.0)))
            .collect();
        let chunk_ids: std::collections::HashMap<i64, String> = reader
            .chunks_by_keys(&keys)?
            .into_iter()
            .map(|h| (h.chunk_key, format!("{}:{}", h.doc_id, h.ordinal)))
            .collect();
        let communities: Vec<Value> = snapshot
            .summaries
            .iter()
            .map(|s| {
                let mut community = serde_json::json!({
                    "level": s.level,
                    "community": s.community,
                    "parent": s.parent,
                    "title": s.title,
                    "size": s.size,
                    "entities": s.entities,
                    "facts": s.facts,
                    "citations": s.citations.iter().filter_map(|c| chunk_ids.get(&c.chunk_key)).collect::<Vec<_>>(),
                });
                // Written by the LLM: shown apart from the extractive fields,
                // and only while a chunk it cites can still be shown.
                if let Some(llm) = &s.llm_summary {
                    let cited: Vec<&String> = llm
                        .citations
                        .iter()
                        .filter_map(|k| chunk_ids.get(k))
                        .collect();
                    if !cited.is_empty() {
                        community["llm_summary"] =
                            serde_json::json!({"text": llm.text, "citations": cited});
                    }
                }
                community
            })
            .collect();
        Ok(serde_json::json!({
            "graph_version": snapshot.graph_version,
            "built_at": crate::clock::rfc3339(snapshot.built_at),
            "communities": communities,
        }))
    }

    /// A stored document of this tenant.
    pub fn document(&self, doc_id: &str) -> Result<DocumentRow> {
        self.require(Permission::Query)?;
        self.service
            .store
            .reader(&self.principal.tenant)?
            .document(doc_id)?
            .ok_or_else(|| Error::NotFound(format!("no document {doc_id:?} in this memory")))
    }

    /// Ready documents after the pagination position `after`.
    pub fn list_documents(&self, after: i64, limit: usize) -> Result<Vec<DocumentSummary>> {
        self.require(Permission::Query)?;
        self.service
            .store
            .reader(&self.principal.tenant)?
            .list_documents(after, limit)
    }

    /// A document's original bytes, exactly as uploaded. The bytes are
    /// hashed and compared with the SHA-256 recorded at admission: damaged
    /// bytes are reported, never returned.
    pub fn original(&self, doc_id: &str) -> Result<Original> {
        self.require(Permission::Query)?;
        let row = self
            .service
            .store
            .reader(&self.principal.tenant)?
            .original(doc_id)?
            .ok_or_else(|| Error::NotFound(format!("no document {doc_id:?} in this memory")))?;
        if ids::sha256_hex(&row.bytes) != row.sha256 {
            log::error!(
                "original of document {doc_id} (tenant {:?}) does not match its SHA-256 {}",
                self.principal.tenant.name(),
                row.sha256
            );
            return Err(Error::Unavailable(format!(
                "the stored original of document {doc_id} is corrupted: its bytes no longer \
                 match the SHA-256 recorded when it was stored, so they are not returned; \
                 forget the document and ingest the file again"
            )));
        }
        let is_text = media::from_media_type(&row.media_type).is_some_and(MediaKind::is_text)
            && std::str::from_utf8(&row.bytes).is_ok();
        Ok(Original {
            document_id: row.doc_id,
            media_type: row.media_type,
            title: row.title,
            sha256: row.sha256,
            bytes: row.bytes,
            is_text,
        })
    }

    /// Deletes the selected documents and everything derived from them:
    /// chunks, full-text rows, vectors, jobs, idempotency records, originals
    /// no other document shares, and the context they lent a neighbour (see
    /// `store::forget`). Forgetting by source deletes every document from
    /// that source, [`FORGET_BATCH`] per transaction. Each deletion is
    /// audited (who, which document, when; no content).
    pub fn forget(&self, selector: &DocumentSelector) -> Result<ForgetReport> {
        self.require(Permission::Ingest)?;
        let (field, value, max) = match selector {
            DocumentSelector::Id(v) => ("document_id", v, MAX_SOURCE_BYTES),
            DocumentSelector::IdempotencyKey(v) => {
                ("idempotency_key", v, MAX_IDEMPOTENCY_KEY_BYTES)
            }
            DocumentSelector::Source(v) => ("source", v, MAX_SOURCE_BYTES),
        };
        check_optional_len(field, &Some(value.clone()), max)?;
        let shared = &self.service.shared;
        let mut report = ForgetReport {
            documents: 0,
            chunks: 0,
            vectors: 0,
            originals_deleted: 0,
            forgotten: Vec::new(),
        };
        loop {
            let wanted = selector.clone();
            let subject = self.principal.subject.clone();
            let batch = self.service.store.write(&self.principal.tenant, move |w| {
                let now = now_ms();
                let mut done = Vec::new();
                for key in w.select_documents(&wanted, FORGET_BATCH)? {
                    let forgotten = w.forget_document(
                        key,
                        &subject,
                        wanted.kind(),
                        crate::ingest::chunk::CONTEXT_BYTES,
                        now,
                    )?;
                    done.extend(forgotten);
                }
                Ok(done)
            })?;
            let more = batch.len() == FORGET_BATCH;
            for f in batch {
                shared.forgotten(&f.document_id);
                report.documents += 1;
                report.chunks += f.chunks;
                report.vectors += f.vectors;
                report.originals_deleted += usize::from(f.original_deleted);
                if report.forgotten.len() < FORGET_REPORT_ITEMS {
                    report.forgotten.push(f);
                }
            }
            if !more || !matches!(selector, DocumentSelector::Source(_)) {
                break;
            }
        }
        if report.documents == 0 {
            return Err(Error::NotFound(format!(
                "no document in this memory matches that {field}"
            )));
        }
        Ok(report)
    }

    /// The document stored under an idempotency key, if any (lets bulk
    /// ingestion skip files it stored before without preparing them).
    pub fn document_for_key(&self, key: &str) -> Result<Option<String>> {
        self.require(Permission::Query)?;
        self.service
            .store
            .reader(&self.principal.tenant)?
            .doc_id_by_idempotency_key(key)
    }

    /// Documents (any state) after `after`, with their originals, in
    /// creation order: one page of an export.
    pub fn export_page(&self, after: i64, limit: usize) -> Result<Vec<ExportRow>> {
        self.require(Permission::Query)?;
        self.service
            .store
            .reader(&self.principal.tenant)?
            .export_documents(after, limit)
    }

    /// Whether this caller's tenant has ever written to this memory (an
    /// unknown tenant reads as empty; `export` refuses it instead, so a
    /// misspelt `--tenant` does not make an empty backup).
    pub fn tenant_exists(&self) -> Result<bool> {
        self.require(Permission::Query)?;
        Ok(self.service.store.reader(&self.principal.tenant)?.exists())
    }

    fn document_exists(&self, doc_id: &str) -> Result<bool> {
        Ok(self
            .service
            .store
            .reader(&self.principal.tenant)?
            .document(doc_id)?
            .is_some())
    }

    pub fn status(&self) -> Result<Status> {
        self.require(Permission::Query)?;
        let reader = self.service.store.reader(&self.principal.tenant)?;
        let (pending, failed, llm_pending) = reader.job_counts()?;
        Ok(Status {
            version: env!("CARGO_PKG_VERSION"),
            data_dir: self.service.data_dir.display().to_string(),
            tenant: self.principal.tenant.name().to_string(),
            subject: self.principal.subject.clone(),
            schema_version: crate::store::latest_schema_version(),
            durability: self.service.store.durability().name(),
            documents: reader.document_count()?,
            chunks: reader.chunk_count()?,
            jobs: JobCounts {
                pending,
                failed,
                llm_pending,
            },
            store_bytes: self.service.store.size_bytes(),
            working_memory: self.memory_status(),
            usage: reader.usage(&self.principal.subject)?,
        })
    }

    /// Charges a completed call to this caller. Returns at once: the row
    /// joins the writer's next group commit, and a failure to write it is
    /// logged, never the caller's problem.
    pub fn charge(&self, operation: &str, request_bytes: u64, reply_bytes: u64, took: Duration) {
        let record = UsageRecord {
            subject: self.principal.subject.clone(),
            operation: operation.to_string(),
            request_bytes,
            reply_bytes,
            duration_us: took.as_micros().min(u64::MAX as u128) as u64,
            at: now_ms(),
        };
        let queued = self.service.store.write_then(
            &self.principal.tenant,
            move |w| w.record_usage(&record),
            |outcome| {
                if let Err(e) = outcome {
                    log::warn!("usage row not written: {e}");
                }
            },
        );
        if let Err(e) = queued {
            log::debug!("usage row not queued: {e}");
        }
    }
}

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

/// Decides the media kind and returns the bytes to store.
fn resolve_content(content: Content) -> Result<(MediaKind, Vec<u8>, Option<String>)> {
    let supported = SUPPORTED_MEDIA_TYPES.join(", ");
    let (kind, bytes, filename) = match content {
        Content::Text { text, media_type } => {
            let kind = match media_type {
                None => MediaKind::PlainText,
                Some(mt) => match media::from_media_type(&mt) {
                    Some(k) if k.is_text() => k,
                    Some(k) => {
                        return Err(Error::invalid(format!(
                            "{} content must be uploaded as a `File` (base64 bytes); inline \
                             text may be one of: {}",
                            k.media_type(),
                            TEXT_MEDIA_TYPES.join(", ")
                        )))
                    }
                    None => {
                        return Err(Error::invalid(format!(
                            "media_type {mt:?} is not supported; use one of: {supported}"
                        )))
                    }
                },
            };
            (kind, text.into_bytes(), None)
        }
        Content::File {
            filename,
            mime_type,
            bytes,
        } => {
            if let Some(f) = &filename {
                if f.len() > MAX_FILENAME_BYTES {
                    return Err(Error::LimitExceeded(format!(
                        "filename is {} bytes; the limit is {MAX_FILENAME_BYTES}",
                        f.len()
                    )));
                }
            }
            let declared = mime_type
                .as_deref()
                .filter(|m| !m.eq_ignore_ascii_case("application/octet-stream"));
            let kind = match declared {
                Some(mt) => media::from_media_type(mt).ok_or_else(|| {
                    Error::invalid(format!(
                        "mime_type {mt:?} is not supported; use one of: {supported}"
                    ))
                })?,
                None => media::detect(filename.as_deref(), &bytes).ok_or_else(|| {
                    Error::invalid(format!(
                        "cannot tell this file's type (binary content of no supported \
                         format); supported: {supported}"
                    ))
                })?,
            };
            (kind, bytes, filename)
        }
    };
    if bytes.len() > MAX_CONTENT_BYTES {
        return Err(Error::LimitExceeded(format!(
            "content is {} bytes; the limit is {MAX_CONTENT_BYTES} (MAX_CONTENT_BYTES)",
            bytes.len()
        )));
    }
    if bytes.is_empty() {
        return Err(Error::invalid(
            "content is empty; there is nothing to remember",
        ));
    }
    Ok((kind, bytes, filename))
}

/// Extracts and chunks, turning content problems into client errors and a
/// bug in extraction into an internal error instead of a dead thread.
fn prepare_guarded(
    kind: MediaKind,
    bytes: &[u8],
    metadata: &Map<String, Value>,
    embedder: &dyn Embedder,
) -> Result<Prepared> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::ingest::prepare_described(kind, bytes, metadata, embedder)
    }));
    match outcome {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(Error::InvalidInput(e.0)),
        Err(_) => Err(Error::internal("extraction panicked")),
    }
}

/// A display title: the filename, else the first non-empty line of the
/// extracted text (without Markdown heading marks), at most 80 characters.
/// JSON has no title line.
fn title_for(
    filename: &Option<String>,
    extracted: Option<&str>,
    original: &[u8],
    kind: MediaKind,
) -> Option<String> {
    if let Some(f) = filename {
        return Some(f.clone());
    }
    if kind == MediaKind::Json {
        return None;
    }
    let text = match extracted {
        Some(t) => t,
        None => std::str::from_utf8(original).ok()?,
    };
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches('#').trim();
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title.push('…');
    }
    Some(title)
}
