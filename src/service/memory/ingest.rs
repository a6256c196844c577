//! Storing a document: the request and its receipt, the checks on what a
//! caller may store, admission through the single writer, and the wait
//! for indexing. What the content is and how it is prepared is
//! [`super::content`]'s.

use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::{Duration, Instant};

use super::content::{prepare_guarded, resolve_content, title_for, Content};
use super::upload_parts::PartReceipt;
use super::{check_optional_len, Memory};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::worker::{deferred_reason, JobOutcome};
use crate::ingest::Prepared;
use crate::limits::{
    INGEST_FAULT_GRACE_MS, INGEST_WAIT_MS, MAX_IDEMPOTENCY_KEY_BYTES, MAX_METADATA_BYTES,
    MAX_SOURCE_BYTES, MAX_SUPERSEDES, MAX_TITLE_BYTES,
};
use crate::service::principal::Permission;
use crate::store::{AdmitOutcome, JobState, MemoryScope, NewDocument, QueuedWrite, Replaces};

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
    /// Store it even when a live document of the tenant has the same
    /// content (default false: that document is returned, `duplicate_of`
    /// naming it).
    pub allow_duplicate: bool,
    /// The documents this one is a new version of.
    pub replaces: Replaces,
    /// The title to show, instead of one taken from the content.
    pub title: Option<String>,
    /// The memory scopes to store it into (names, checked against what
    /// the caller may write). None: a scoped caller's first writable
    /// scope; for an unrestricted caller, no scope.
    pub scopes: Vec<String>,
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
    /// The live document with the same content that was returned instead
    /// of storing this one again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// The documents this one superseded (now its history).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    /// Current documents whose text this one repeats with small edits
    /// (judged on its first chunk, once it is indexed): stored anyway; a
    /// query gives such a pair one evidence slot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub near_duplicates: Vec<String>,
    /// An upload stored as a series of parts (`super::upload_parts`):
    /// every part, in order (`document_id` is the first's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartReceipt>,
}

/// The `source` a document's metadata names, if it names one as a
/// non-blank string.
pub fn metadata_source(metadata: &Map<String, Value>) -> Option<String> {
    metadata
        .get("source")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// What an import keeps of a document's identity in the memory it came
/// from: its id (if it has the shape of one and is free here) and its
/// creation time. Everything else goes through ingestion as usual.
#[derive(Debug, Clone, Default)]
pub struct Restore {
    pub doc_id: Option<String>,
    pub created_at: Option<i64>,
}

/// A document checked and prepared ([`Memory::prepare_ingest`]), not yet
/// stored.
pub struct PreparedIngest {
    doc: NewDocument,
    /// Its extraction, chunks, vectors and graph, for the worker.
    work: Prepared,
    created_at: Option<i64>,
    wait: bool,
    chunk_count: usize,
}

/// An ingest's arguments but its content, checked
/// ([`Memory::check_request`]).
pub(super) struct CheckedRequest {
    pub scopes: Vec<MemoryScope>,
    pub source: Option<String>,
    /// The metadata object, and as compact JSON within its limit.
    pub metadata: Value,
    pub metadata_json: String,
    pub provenance: Option<String>,
    pub idempotency_key: Option<String>,
    pub expires_at: Option<i64>,
    pub replaces: Replaces,
    pub title: Option<String>,
    pub wait: bool,
    pub allow_duplicate: bool,
}

impl CheckedRequest {
    /// The idempotency record of a document stored under `key` (the
    /// request's own key unless given): the key and the digest of the
    /// whole request, which a retry must match.
    pub fn idempotency_as(
        &self,
        key: Option<String>,
        media_type: &str,
        sha256: &str,
        metadata: &Value,
        filename: &Option<String>,
    ) -> Option<(String, String)> {
        let key = key.or_else(|| self.idempotency_key.clone())?;
        let mut fields = vec![
            serde_json::json!(media_type),
            serde_json::json!(sha256),
            metadata.clone(),
            serde_json::json!(self.source),
            serde_json::json!(filename),
            serde_json::json!(self.provenance),
        ];
        // Appended only when set, so digests stored before expiry
        // existed still match a retry of the same request.
        if let Some(at) = self.expires_at {
            fields.push(at.into());
        }
        if !self.replaces.is_empty() || self.title.is_some() {
            fields.push(serde_json::json!({
                "supersedes": self.replaces.documents,
                "replace_source": self.replaces.source,
                "title": self.title,
            }));
        }
        let digest = ids::sha256_hex(serde_json::Value::from(fields).to_string().as_bytes());
        Some((key, digest))
    }

    /// [`CheckedRequest::idempotency_as`] under the request's own key.
    pub fn idempotency(
        &self,
        media_type: &str,
        sha256: &str,
        metadata: &Value,
        filename: &Option<String>,
    ) -> Option<(String, String)> {
        self.idempotency_as(None, media_type, sha256, metadata, filename)
    }
}

/// A document whose admission is queued on the writer
/// ([`Memory::queue_ingest`]); [`Memory::ingest_receipt`] waits for it.
pub struct QueuedIngest {
    doc_id: String,
    admission: QueuedWrite<(AdmitOutcome, bool)>,
    outcome_rx: Option<Receiver<JobOutcome>>,
    wait: bool,
    media_type: String,
    byte_len: usize,
    chunk_count: usize,
}

impl Memory<'_> {
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
        let prepared = self.prepare_ingest(req, restore)?;
        let queued = self.queue_ingest(prepared)?;
        self.ingest_receipt(queued)
    }

    /// The first step of an ingest: checks the request and extracts,
    /// chunks and embeds its content on the caller's thread; nothing is
    /// stored. [`Memory::queue_ingest`] then stores it.
    ///
    /// The three steps apart let a caller (`alayasiki-mcp import`) prepare
    /// documents on several threads yet queue them in the order it chooses:
    /// the writer admits them in the order they were queued.
    pub fn prepare_ingest(&self, req: IngestRequest, restore: Restore) -> Result<PreparedIngest> {
        let (content, checked) = self.check_request(req)?;
        let (kind, bytes, filename) = resolve_content(content)?;
        let metadata = checked.metadata.as_object().expect("metadata is an object");
        let prepared = prepare_guarded(
            kind,
            &bytes,
            metadata,
            self.service.shared.embedder.as_ref(),
        )?;
        let chunk_count = prepared.chunks.len();
        let sha256 = ids::sha256_hex(&bytes);
        let content_key = crate::ingest::content_key(kind, &bytes);
        let media_type = kind.media_type().to_string();
        let idempotency = checked.idempotency(&media_type, &sha256, &checked.metadata, &filename);
        let doc_id = match restore.doc_id {
            Some(id) if ids::is_document_id(&id) && !self.document_exists(&id)? => id,
            _ => ids::new_document_id(),
        };
        let title = checked
            .title
            .clone()
            .or_else(|| title_for(&filename, metadata, prepared.text.as_deref(), &bytes, kind));
        let doc = NewDocument {
            doc_id,
            source: checked.source,
            title,
            media_type: media_type.clone(),
            original: bytes,
            sha256,
            metadata: checked.metadata_json,
            provenance: checked.provenance,
            created_by: self.principal.subject.clone(),
            idempotency,
            expires_at: checked.expires_at,
            content_key,
            dedupe: !checked.allow_duplicate,
            replaces: checked.replaces,
            sight: self.principal.sight(),
            scopes: checked.scopes,
        };
        Ok(PreparedIngest {
            doc,
            work: prepared,
            created_at: restore.created_at,
            wait: checked.wait,
            chunk_count,
        })
    }

    /// Checks everything an ingest asks but its content (which comes
    /// back as it was given): the caller may store, into these scopes,
    /// with these metadata, source, key, title, provenance and expiry.
    pub(super) fn check_request(&self, req: IngestRequest) -> Result<(Content, CheckedRequest)> {
        self.require_write(Permission::Ingest)?;
        let scopes = self.scopes_to_store_into(&req.scopes)?;
        check_optional_len(
            "idempotency_key",
            &req.idempotency_key,
            MAX_IDEMPOTENCY_KEY_BYTES,
        )?;
        // A `source` in metadata names the document's source unless the
        // caller gave one explicitly, which wins.
        let source = req.source.or_else(|| metadata_source(&req.metadata));
        check_optional_len("source", &source, MAX_SOURCE_BYTES)?;
        check_replaces(&req.replaces, source.is_some())?;
        check_optional_len("title", &req.title, MAX_TITLE_BYTES)?;
        let metadata = Value::Object(req.metadata);
        let metadata_json = checked_metadata(&metadata)?;
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
        if let Some(at) = req.expires_at {
            if at <= now_ms() {
                return Err(Error::invalid(
                    "`expires_at` is in the past: the document would be forgotten at once",
                ));
            }
        }
        let checked = CheckedRequest {
            scopes,
            source,
            metadata,
            metadata_json,
            provenance,
            idempotency_key: req.idempotency_key,
            expires_at: req.expires_at,
            replaces: req.replaces,
            title: req.title,
            wait: req.wait,
            allow_duplicate: req.allow_duplicate,
        };
        Ok((req.content, checked))
    }

    /// The second step of an ingest: queues the prepared document's
    /// admission on the writer and returns at once (the writer admits
    /// queued documents in the order they came). Nothing is acknowledged
    /// until [`Memory::ingest_receipt`] says so.
    pub fn queue_ingest(&self, prepared: PreparedIngest) -> Result<QueuedIngest> {
        let PreparedIngest {
            doc,
            work,
            created_at,
            wait,
            chunk_count,
        } = prepared;
        let doc_id = doc.doc_id.clone();
        let media_type = doc.media_type.clone();
        let byte_len = doc.original.len();
        let shared = &self.service.shared;
        // Both are in place before the admission commits, so neither the
        // worker's look-up nor the outcome can come too early.
        let outcome_rx = wait.then(|| shared.waiters.register(&doc_id));
        shared.handoff.offer(&doc_id, &self.principal.tenant, work);
        let admission = self
            .service
            .store
            .queue_write(&self.principal.tenant, move |w| {
                let now = now_ms();
                let admitted = w.admit(doc, now)?;
                if let (Some(at), false) = (created_at, admitted.replayed) {
                    w.set_created_at(admitted.document_key, at)?;
                }
                // The same request again for a document that failed: its way
                // back is to be indexed again, in this transaction.
                let requeued = admitted.replayed
                    && admitted.job_state == JobState::Failed
                    && w.requeue_failed(admitted.document_key, now)?;
                Ok((admitted, requeued))
            });
        let admission = match admission {
            Ok(a) => a,
            Err(e) => {
                shared.handoff.take(&doc_id);
                shared.waiters.forget(&doc_id);
                return Err(e);
            }
        };
        Ok(QueuedIngest {
            doc_id,
            admission,
            outcome_rx,
            wait,
            media_type,
            byte_len,
            chunk_count,
        })
    }

    /// The last step of an ingest: waits until the queued admission is
    /// committed (the document is then acknowledged: durable) and, if the
    /// request asked to wait, until it is searchable (or failed, or
    /// [`INGEST_WAIT_MS`] passed).
    pub fn ingest_receipt(&self, queued: QueuedIngest) -> Result<IngestReceipt> {
        let QueuedIngest {
            doc_id,
            admission,
            outcome_rx,
            wait,
            media_type,
            byte_len,
            chunk_count,
        } = queued;
        let shared = &self.service.shared;
        let admitted = match admission.wait() {
            Ok((a, _)) if !a.replayed => a,
            other => {
                shared.handoff.take(&doc_id);
                shared.waiters.forget(&doc_id);
                let (earlier, requeued) = other?;
                // A replay finds the document already stored.
                self.note_admitted(&earlier.doc_id);
                if requeued {
                    log::info!(
                        "document {} failed before; indexing it again",
                        earlier.doc_id
                    );
                    self.await_retried(&earlier.doc_id, wait)?;
                }
                if earlier.duplicate {
                    log::debug!(
                        "content already stored as {}: not stored again",
                        earlier.doc_id
                    );
                    let mut receipt = self.receipt_from_store(&earlier.doc_id, byte_len, false)?;
                    receipt.duplicate_of = Some(earlier.doc_id);
                    // Nothing was superseded now.
                    receipt.supersedes.clear();
                    return Ok(receipt);
                }
                return self.receipt_from_store(&earlier.doc_id, byte_len, true);
            }
        };
        self.service.worker.wake();
        self.note_admitted(&admitted.doc_id);
        let outcome = outcome_rx.and_then(|rx| {
            let got = self.await_outcome(&rx, &doc_id);
            if got.is_none() || matches!(got, Some(JobOutcome::Deferred(_))) {
                shared.waiters.forget(&doc_id);
            }
            got
        });
        let (state, chunks, error) = match outcome {
            Some(JobOutcome::Indexed { chunks }) => ("ready", Some(chunks as i64), None),
            Some(JobOutcome::Failed(why)) => ("failed", None, Some(why)),
            Some(JobOutcome::Deferred(why)) => ("pending", None, Some(why)),
            None => ("pending", None, None),
        };
        debug_assert!(chunks.is_none() || chunks == Some(chunk_count as i64));
        if state == "pending" {
            self.note_unindexed(&admitted.doc_id);
        }
        let near_duplicates = match state {
            "ready" => {
                let reader = self.reader()?;
                crate::query::near_duplicates::of_document(&reader, &admitted.doc_id)?
            }
            _ => Vec::new(),
        };
        Ok(IngestReceipt {
            document_id: admitted.doc_id,
            state: state.to_string(),
            error,
            media_type,
            bytes: byte_len,
            chunks,
            idempotent_replay: false,
            duplicate_of: None,
            supersedes: admitted.superseded,
            near_duplicates,
            parts: Vec::new(),
        })
    }

    /// After a failed document was queued again: wakes the worker and,
    /// with `wait`, waits (up to [`INGEST_WAIT_MS`]) for its new outcome.
    fn await_retried(&self, doc_id: &str, wait: bool) -> Result<()> {
        let shared = &self.service.shared;
        let outcome = wait.then(|| shared.waiters.register(doc_id));
        self.service.worker.wake();
        let Some(rx) = outcome else {
            return Ok(());
        };
        // Registered after the commit: the worker may be done already, and
        // then the store says so (it commits before it tells waiters).
        let pending = self
            .reader()?
            .document(doc_id)?
            .is_some_and(|row| row.state == "pending");
        if !pending
            || matches!(
                self.await_outcome(&rx, doc_id),
                None | Some(JobOutcome::Deferred(_))
            )
        {
            shared.waiters.forget(doc_id);
        }
        Ok(())
    }

    /// Waits for a document's outcome, up to [`INGEST_WAIT_MS`]; but if
    /// the disk refused the indexer's writes since the wait began, answers
    /// after [`INGEST_FAULT_GRACE_MS`] that the document is stored and
    /// waits, naming the fault (the outcome of the job's own commit may
    /// never come: a failing disk can refuse the indexer's reads first).
    /// `None` when the wait ran out.
    fn await_outcome(&self, rx: &Receiver<JobOutcome>, doc_id: &str) -> Option<JobOutcome> {
        let deadline = Instant::now() + Duration::from_millis(INGEST_WAIT_MS);
        self.await_outcome_until(rx, doc_id, deadline)
    }

    /// [`Memory::await_outcome`] until `deadline` (several documents
    /// waited for in turn share one).
    pub(super) fn await_outcome_until(
        &self,
        rx: &Receiver<JobOutcome>,
        doc_id: &str,
        deadline: Instant,
    ) -> Option<JobOutcome> {
        /// How often the wait looks at the indexer's storage fault.
        const LOOK: Duration = Duration::from_millis(100);
        /// How many looks between reads of the stored state, on a cluster:
        /// there the job may be completed by an entry this node applies as
        /// it follows the log (its own commit settled late, or another
        /// node indexed it), which tells no waiter.
        const LOOKS_PER_READ: u32 = 5;
        let mut looks = 0u32;
        let began = Instant::now();
        let grace = began + Duration::from_millis(INGEST_FAULT_GRACE_MS);
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match rx.recv_timeout(left.min(LOOK)) {
                Ok(outcome) => return Some(outcome),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= grace {
                if let Some(fault) = self.service.shared.storage_fault_since(began) {
                    return Some(JobOutcome::Deferred(deferred_reason(fault)));
                }
            }
            looks += 1;
            if looks.is_multiple_of(LOOKS_PER_READ) && self.service.on_cluster() {
                if let Ok(stored) = self.receipt_from_store(doc_id, 0, false) {
                    match stored.state.as_str() {
                        "ready" => {
                            return Some(JobOutcome::Indexed {
                                chunks: stored.chunks.unwrap_or(0) as usize,
                            })
                        }
                        "failed" => {
                            return Some(JobOutcome::Failed(stored.error.unwrap_or_default()))
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// The receipt of an already stored document (an idempotent replay).
    pub(super) fn receipt_from_store(
        &self,
        doc_id: &str,
        bytes: usize,
        replayed: bool,
    ) -> Result<IngestReceipt> {
        let reader = self.reader()?;
        let row = reader
            .document(doc_id)?
            .ok_or_else(|| Error::internal("admitted document vanished"))?;
        let chunks = match row.state.as_str() {
            "ready" => Some(reader.document_chunk_count(&row.doc_id)?),
            _ => None,
        };
        if row.state == "pending" {
            self.note_unindexed(&row.doc_id);
        }
        let supersedes = reader.superseded_by_document(&row.doc_id)?;
        Ok(IngestReceipt {
            document_id: row.doc_id,
            state: row.state,
            error: row.error,
            media_type: row.media_type,
            bytes,
            chunks,
            idempotent_replay: replayed,
            duplicate_of: None,
            supersedes,
            near_duplicates: Vec::new(),
            parts: Vec::new(),
        })
    }
}

/// Checks what a request supersedes before anything is prepared: at most
/// [`MAX_SUPERSEDES`] ids, each no longer than an id can be, and a source
/// to replace when it asks to replace one. Whether each document exists
/// and is current is the writer's to check, as it admits the new version.
fn check_replaces(replaces: &Replaces, has_source: bool) -> Result<()> {
    if replaces.documents.len() > MAX_SUPERSEDES && !replaces.if_current {
        return Err(Error::LimitExceeded(format!(
            "`supersedes` names {} documents; at most {MAX_SUPERSEDES} (MAX_SUPERSEDES)",
            replaces.documents.len()
        )));
    }
    for id in &replaces.documents {
        check_optional_len("supersedes", &Some(id.clone()), MAX_SOURCE_BYTES)?;
    }
    if replaces.source && !has_source {
        return Err(Error::invalid(
            "`replace_source` needs a `source` (the argument, or `source` in metadata): it \
             supersedes the current documents with that source",
        ));
    }
    Ok(())
}

/// `metadata` as compact JSON, refused past [`MAX_METADATA_BYTES`].
pub(super) fn checked_metadata(metadata: &Value) -> Result<String> {
    let json = metadata.to_string();
    if json.len() > MAX_METADATA_BYTES {
        return Err(Error::LimitExceeded(format!(
            "metadata is {} bytes as JSON; the limit is {MAX_METADATA_BYTES} \
             (MAX_METADATA_BYTES)",
            json.len()
        )));
    }
    Ok(json)
}
