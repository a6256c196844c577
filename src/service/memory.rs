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
use crate::clock::now_ms;
use crate::config::Durability;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::media::{self, MediaKind, SUPPORTED_MEDIA_TYPES};
use crate::ingest::worker::{IngestWorker, JobOutcome, WorkerShared};
use crate::ingest::Prepared;
use crate::limits::*;
use crate::query::{self, Fusion, QueryOutcome, QuerySpec};
use crate::store::{
    DocumentRow, DocumentSummary, NewDocument, Store, UsageRecord, UsageTotals, VectorSpec,
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
    /// What this caller (tenant and subject) has used over the HTTP API and
    /// SSE; calls over stdio are not charged.
    pub usage: UsageTotals,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobCounts {
    pub pending: i64,
    pub failed: i64,
}

/// The memory server's shared state: one per process.
pub struct MemoryService {
    data_dir: PathBuf,
    fusion: Fusion,
    store: Arc<Store>,
    worker: IngestWorker,
    shared: Arc<WorkerShared>,
}

impl MemoryService {
    /// Opens the store in `data_dir` (which the caller owns) and starts the
    /// ingestion worker, which replays any pending jobs.
    pub fn open(
        data_dir: &Path,
        durability: Durability,
        embedder: Arc<dyn Embedder>,
    ) -> Result<MemoryService> {
        let spec = VectorSpec {
            embedder_id: embedder.id().to_string(),
            dim: embedder.dim(),
        };
        let store = Arc::new(Store::open(data_dir, durability, spec)?);
        let (pending, failed) = store.journal_backlog()?;
        if pending > 0 {
            log::info!("replaying {pending} pending ingestion job(s)");
        }
        if failed > 0 {
            log::info!("{failed} ingestion job(s) have failed; see alayasiki_status");
        }
        let shared = Arc::new(WorkerShared::new(store.clone(), embedder));
        let worker = IngestWorker::start(shared.clone())?;
        let fusion = crate::config::fusion_from_env().map_err(Error::Unavailable)?;
        Ok(MemoryService {
            data_dir: data_dir.to_path_buf(),
            fusion,
            store,
            worker,
            shared,
        })
    }

    /// The service as seen by one caller.
    pub fn for_caller<'a>(&'a self, principal: &'a Principal) -> Memory<'a> {
        Memory {
            service: self,
            principal,
        }
    }

    /// Stops the worker at a job boundary, then closes the store (which
    /// checkpoints the WAL). Idempotent.
    pub fn shutdown(&self) {
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

    fn require(&self, p: Permission) -> Result<()> {
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
        let prepared = prepare_guarded(kind, &bytes, self.service.shared.embedder.as_ref())?;
        let chunk_count = prepared.chunks.len();
        let sha256 = ids::sha256_hex(&bytes);
        let media_type = kind.media_type().to_string();
        let idempotency = req.idempotency_key.map(|key| {
            let digest = ids::sha256_hex(
                serde_json::json!([media_type, sha256, metadata, req.source, filename, provenance])
                    .to_string()
                    .as_bytes(),
            );
            (key, digest)
        });
        let doc_id = ids::new_id("doc");
        let doc = NewDocument {
            doc_id: doc_id.clone(),
            source: req.source,
            title: title_for(&filename, &bytes, kind),
            media_type: media_type.clone(),
            original: bytes,
            sha256,
            metadata: metadata_json,
            provenance,
            created_by: self.principal.subject.clone(),
            idempotency,
        };
        let byte_len = doc.original.len();
        let shared = &self.service.shared;
        // Both are in place before the admission commits, so neither the
        // worker's look-up nor the outcome can come too early.
        let outcome_rx = req.wait.then(|| shared.waiters.register(&doc_id));
        shared.handoff.offer(&doc_id, prepared);
        let admitted = self
            .service
            .store
            .write(&self.principal.tenant, move |w| w.admit(doc, now_ms()));
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

    /// Answers a question from this tenant's memory.
    pub fn query(&self, spec: &QuerySpec) -> Result<QueryOutcome> {
        self.require(Permission::Query)?;
        let reader = self.service.store.reader(&self.principal.tenant)?;
        query::run(
            &reader,
            spec,
            self.service.shared.embedder.as_ref(),
            self.service.fusion,
        )
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

    pub fn status(&self) -> Result<Status> {
        self.require(Permission::Query)?;
        let reader = self.service.store.reader(&self.principal.tenant)?;
        let (pending, failed) = reader.job_counts()?;
        Ok(Status {
            version: env!("CARGO_PKG_VERSION"),
            data_dir: self.service.data_dir.display().to_string(),
            tenant: self.principal.tenant.name().to_string(),
            subject: self.principal.subject.clone(),
            schema_version: crate::store::latest_schema_version(),
            durability: self.service.store.durability().name(),
            documents: reader.document_count()?,
            chunks: reader.chunk_count()?,
            jobs: JobCounts { pending, failed },
            store_bytes: self.service.store.size_bytes(),
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
                Some(mt) => media::from_media_type(&mt).ok_or_else(|| {
                    Error::invalid(format!(
                        "media_type {mt:?} is not supported; use one of: {supported}"
                    ))
                })?,
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
                None => filename
                    .as_deref()
                    .and_then(media::from_filename)
                    .or_else(|| media::sniff(&bytes))
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "cannot tell this file's type (binary content); supported: {supported}"
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
fn prepare_guarded(kind: MediaKind, bytes: &[u8], embedder: &dyn Embedder) -> Result<Prepared> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::ingest::prepare(kind, bytes, embedder)
    }));
    match outcome {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(Error::InvalidInput(e.0)),
        Err(_) => Err(Error::internal("extraction panicked")),
    }
}

/// A display title: the filename, else the first non-empty line (without
/// Markdown heading marks), at most 80 characters.
fn title_for(filename: &Option<String>, bytes: &[u8], kind: MediaKind) -> Option<String> {
    if let Some(f) = filename {
        return Some(f.clone());
    }
    if kind == MediaKind::Json {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches('#').trim();
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title.push('…');
    }
    Some(title)
}
