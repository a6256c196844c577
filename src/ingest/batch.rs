//! The work of one batch of jobs, before it is committed.
//!
//! Owns what the worker does with each begun job: an ingest job's
//! extraction and chunking, handed over by the request that received it
//! or redone from the stored original; the context a document's first
//! chunk takes from the previous document of its source; an embed job's
//! vectors for chunks stored without them, and when such a job is tried
//! again ([`Backoff`]). Content problems become the job's failure; only
//! the store's errors are returned, and the batch is retried.
//!
//! Must never: commit anything (the worker hands the outcomes to
//! `commit`), or let a panic in one document's extraction end the batch.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::attempts::Work;
use super::chunk::CONTEXT_BYTES;
use super::commit::Done;
use super::worker::WorkerShared;
use super::{embed_chunks, embed_texts, media, mix_into, prepare_described, Prepared};
use crate::error::Result;
use crate::store::{FailureKind, JobKind, NewChunk, PendingJob, Tenant};
use crate::text::tail;

/// First wait before retrying an embed job whose embedder failed; doubles
/// up to [`MAX_RETRY_DELAY`].
pub const FIRST_RETRY_DELAY: Duration = Duration::from_secs(1);
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(300);

/// When each failing job may be tried again.
#[derive(Default)]
pub(super) struct Backoff {
    waits: HashMap<i64, (Instant, Duration)>,
}

impl Backoff {
    pub(super) fn ready(&self, job_id: i64) -> bool {
        self.waits
            .get(&job_id)
            .is_none_or(|(at, _)| Instant::now() >= *at)
    }

    fn failed(&mut self, job_id: i64) {
        let delay = self
            .waits
            .get(&job_id)
            .map_or(FIRST_RETRY_DELAY, |(_, d)| (*d * 2).min(MAX_RETRY_DELAY));
        self.waits.insert(job_id, (Instant::now() + delay, delay));
    }

    fn succeeded(&mut self, job_id: i64) {
        self.waits.remove(&job_id);
    }

    pub(super) fn next_wait(&self) -> Option<Duration> {
        let now = Instant::now();
        self.waits
            .values()
            .map(|(at, _)| at.saturating_duration_since(now))
            .min()
    }
}

/// Does the work of a batch's begun jobs, filing each outcome under its
/// tenant in `by_tenant` and the jobs that wait (for the embedder, or for
/// the next start) in `waiting`. Errors are the store's (reading a job's
/// input or context).
pub(super) fn prepare_batch(
    shared: &Arc<WorkerShared>,
    work: Vec<Work>,
    stop: &AtomicBool,
    backoff: &mut Backoff,
    recent: &mut HashMap<(String, String), String>,
    waiting: &mut Vec<(Tenant, i64)>,
    by_tenant: &mut Vec<(Tenant, Vec<Done>)>,
) -> Result<()> {
    let mut work = work.into_iter();
    for (job, handed) in work.by_ref() {
        if stop.load(Ordering::SeqCst) {
            // An orderly stop (a subcommand's end, a signal) is no fault
            // of the jobs not reached: their attempts are taken back, or
            // every short command that opens the memory would use them up.
            waiting.push((job.tenant.clone(), job.job_id));
            waiting.extend(work.map(|(job, _)| (job.tenant, job.job_id)));
            break;
        }
        let done = match job.kind {
            JobKind::Ingest => {
                let prepared = match handed {
                    Some(prepared) => Ok(prepared),
                    None => prepare_from_store(shared, &job)?,
                };
                match prepared {
                    Ok(mut prepared) => {
                        link_to_previous(shared, &job, &mut prepared, recent)?;
                        Done::Indexed(job, Box::new(prepared))
                    }
                    Err((kind, reason)) => Done::Failed(job, kind, reason),
                }
            }
            // Never queued as indexing work (see `JobQueue`).
            JobKind::LlmExtract => continue,
            JobKind::Embed => match embed_stored(shared, &job)? {
                Some((keys, vectors)) => {
                    shared.note_embedding(true);
                    backoff.succeeded(job.job_id);
                    Done::Embedded(job, keys, vectors)
                }
                None => {
                    shared.note_embedding(false);
                    backoff.failed(job.job_id);
                    waiting.push((job.tenant.clone(), job.job_id));
                    continue;
                }
            },
        };
        let tenant = done.job().tenant.clone();
        match by_tenant.iter_mut().find(|(t, _)| *t == tenant) {
            Some((_, list)) => list.push(done),
            None => by_tenant.push((tenant, vec![done])),
        }
    }
    Ok(())
}

/// Chunk keys and their new vectors, in the same order.
type EmbeddedChunks = (Vec<i64>, Vec<Vec<f32>>);

/// Vectors for a document's stored chunks that have none, with the same
/// neighbour context fresh ingestion uses. `None` if the embedder failed.
fn embed_stored(shared: &WorkerShared, job: &PendingJob) -> Result<Option<EmbeddedChunks>> {
    let reader = shared.store.reader(&job.tenant)?;
    let stored = reader.unembedded_chunks(job.document_key)?;
    let mut chunks = Vec::with_capacity(stored.len());
    for c in &stored {
        let previous = match (&c.previous, c.ordinal, &job.source) {
            (Some(p), _, _) => Some(p.clone()),
            (None, 0, Some(source)) => reader.last_chunk_before(source, job.document_key)?,
            _ => None,
        };
        chunks.push(NewChunk {
            start: 0,
            end: c.text.len(),
            text: c.text.clone(),
            context: previous
                .map(|p| tail(&p, CONTEXT_BYTES).to_string())
                .unwrap_or_default(),
        });
    }
    Ok(embed_chunks(&chunks, shared.embedder.as_ref())
        .map(|vectors| (stored.iter().map(|c| c.chunk_key).collect(), vectors)))
}

/// Gives a document's first chunk its context: the end of the previous
/// document from the same source (a chat's previous turn, a file's
/// previous part), found in this batch or in the store. Jobs run in
/// admission order, so this is deterministic. The chunk's vector gets the
/// context mixed in as `prepare` does for later chunks.
fn link_to_previous(
    shared: &WorkerShared,
    job: &PendingJob,
    prepared: &mut Prepared,
    recent: &mut HashMap<(String, String), String>,
) -> Result<()> {
    let Some(source) = &job.source else {
        return Ok(());
    };
    let key = (job.tenant.name().to_string(), source.clone());
    let previous = match recent.get(&key) {
        Some(text) => Some(text.clone()),
        None => shared
            .store
            .reader(&job.tenant)?
            .last_chunk_before(source, job.document_key)?,
    };
    if let Some(last) = prepared.chunks.last() {
        recent.insert(key, last.text.clone());
    }
    let (Some(previous), Some(first)) = (previous, prepared.chunks.first_mut()) else {
        return Ok(());
    };
    first.context = tail(&previous, CONTEXT_BYTES).to_string();
    if let Some(vectors) = &mut prepared.vectors {
        if let Some(context) = embed_texts(&[first.context.as_str()], shared.embedder.as_ref()) {
            mix_into(&mut vectors[0], &context[0]);
        }
    }
    Ok(())
}

/// Re-derives a job's work from its stored original. Content problems
/// become the job's failure; only store errors are returned (and retried).
fn prepare_from_store(
    shared: &WorkerShared,
    job: &PendingJob,
) -> Result<std::result::Result<Prepared, (FailureKind, String)>> {
    let Some(input) = shared
        .store
        .reader(&job.tenant)?
        .job_input(job.document_key)?
    else {
        return Ok(Err((
            FailureKind::MissingOriginal,
            "the document's original is missing".into(),
        )));
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let kind = media::from_media_type(&input.media_type)
            .ok_or_else(|| format!("unsupported media type {}", input.media_type))?;
        let metadata: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&input.metadata).unwrap_or_default();
        prepare_described(kind, &input.original, &metadata, shared.embedder.as_ref())
            .map_err(|e| e.0)
    }));
    Ok(match outcome {
        Ok(prepared) => prepared.map_err(|reason| (FailureKind::Content, reason)),
        Err(_) => {
            log::error!(
                "indexing document {} panicked; marking it failed",
                input.doc_id
            );
            Err((
                FailureKind::Internal,
                "internal error while indexing this document".into(),
            ))
        }
    })
}
