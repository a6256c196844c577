//! The enricher: the thread that adds the optional LLM's triples to the
//! graph of documents already indexed.
//!
//! Runs only when LLM extraction is configured. The ingestion worker queues
//! an `llm_extract` job with every document it indexes (in the same
//! transaction), so a document is searchable, with its rule-based graph,
//! before any LLM is asked; a slow or dead LLM delays nothing else. The
//! enricher takes those jobs oldest first, one at a time: it reads the
//! document's chunks, sends them in batches of at most
//! [`MAX_LLM_EXTRACT_INPUT_BYTES`] (at most [`MAX_LLM_EXTRACT_REQUESTS`]
//! requests per document), keeps the triples that survive
//! [`crate::graph::llm_triples`]'s checks, and commits them with the job.
//!
//! Failure never costs the document anything: an unreachable or timed-out
//! server ends the document's extraction (what was accepted so far is
//! kept), an unusable reply costs only its batch, and the job is closed
//! with a note either way (it is not retried). Stopping takes effect
//! between requests; a job interrupted by a stop is not committed and runs
//! again at the next start.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::worker::{WorkerShared, IDLE_POLL};
use crate::clock::now_ms;
use crate::error::Result;
use crate::graph::fragment::Fragment;
use crate::graph::llm_triples::{self, FragmentBuilder, Passage, Tally};
use crate::limits::{MAX_LLM_EXTRACT_INPUT_BYTES, MAX_LLM_EXTRACT_REQUESTS};
use crate::llm::{Llm, LlmError, Task};
use crate::store::{JobQueue, PendingJob, StoredChunk};

/// How long stopping waits for a request in flight before leaving the
/// thread to finish it alone (its job is then not committed and runs again
/// at the next start).
pub const ENRICHER_STOP_WAIT: Duration = Duration::from_secs(2);

/// Handle to the running enricher thread.
pub struct Enricher {
    shared: Arc<WorkerShared>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<(JoinHandle<()>, crossbeam_channel::Receiver<()>)>>,
}

impl Enricher {
    /// Starts the enricher if LLM extraction is configured (`None`
    /// otherwise).
    pub fn start(shared: Arc<WorkerShared>) -> std::io::Result<Option<Enricher>> {
        let Some(llm) = shared.llm.clone() else {
            return Ok(None);
        };
        let stop = Arc::new(AtomicBool::new(false));
        let (exited_tx, exited_rx) = crossbeam_channel::bounded(1);
        let thread_stop = stop.clone();
        let thread_shared = shared.clone();
        let handle = std::thread::Builder::new()
            .name("llm-enricher".into())
            .spawn(move || {
                run(&thread_shared, &llm, &thread_stop);
                let _ = exited_tx.send(());
            })?;
        Ok(Some(Enricher {
            shared,
            stop,
            thread: Mutex::new(Some((handle, exited_rx))),
        }))
    }

    /// Stops between requests; waits at most [`ENRICHER_STOP_WAIT`] for a
    /// request in flight.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.shared.wake_enricher();
        let taken = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((handle, exited)) = taken {
            if exited.recv_timeout(ENRICHER_STOP_WAIT).is_ok() {
                let _ = handle.join();
            } else {
                log::info!(
                    "leaving an LLM request in flight; its document is enriched at the next start"
                );
            }
        }
    }
}

fn run(shared: &WorkerShared, llm: &Llm, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let job = match shared.store.pending_jobs(JobQueue::LlmExtraction, 1) {
            Ok(mut jobs) => jobs.pop(),
            Err(e) => {
                log::warn!("cannot read LLM extraction jobs: {e}");
                None
            }
        };
        let Some(job) = job else {
            let _ = shared.enrich_rx.recv_timeout(IDLE_POLL);
            continue;
        };
        if let Err(e) = enrich(shared, llm, job, stop) {
            log::warn!("LLM extraction failed, will retry: {e}");
            let _ = shared.enrich_rx.recv_timeout(IDLE_POLL);
        }
    }
}

/// Runs one job. Store errors are returned (and the job retried); LLM
/// failures are the job's note.
fn enrich(shared: &WorkerShared, llm: &Llm, job: PendingJob, stop: &AtomicBool) -> Result<()> {
    let chunks = shared
        .store
        .reader(&job.tenant)?
        .document_chunks(job.document_key)?;
    let outcome = catch_unwind(AssertUnwindSafe(|| extract(llm, &chunks, stop)));
    let Extracted {
        fragment,
        tally,
        note,
        stopped,
    } = outcome.unwrap_or_else(|_| {
        log::error!("LLM extraction of document {} panicked", job.doc_id);
        Extracted {
            note: Some("internal error during LLM extraction".into()),
            ..Extracted::default()
        }
    });
    if stopped {
        return Ok(());
    }
    log::info!(
        "LLM extraction of document {}: {} triple(s) kept, {} not quoted from the text, \
         {} naming what the text does not, {} malformed{}",
        job.doc_id,
        tally.accepted,
        tally.unquoted,
        tally.unresolved,
        tally.invalid,
        note.as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default()
    );
    let chunk_keys: Vec<i64> = chunks.iter().map(|c| c.chunk_key).collect();
    let tenant = job.tenant.clone();
    shared.store.write(&tenant, move |w| {
        w.complete_llm_job(&job, &chunk_keys, &fragment, note.as_deref(), now_ms())
    })?;
    Ok(())
}

/// The result of asking the LLM about one document.
#[derive(Default)]
pub struct Extracted {
    pub fragment: Fragment,
    pub tally: Tally,
    /// What went wrong, client-safe; `None` when every request succeeded.
    pub note: Option<String>,
    /// A stop was requested before the document was finished.
    pub stopped: bool,
}

/// Asks `llm` for the triples of a document's chunks, batch by batch, and
/// keeps those that pass the checks. `chunks[i]` becomes the fragment's
/// chunk `i`.
pub fn extract(llm: &Llm, chunks: &[StoredChunk], stop: &AtomicBool) -> Extracted {
    let passages = Passage::of_chunks(chunks.iter().map(|c| (c.start, c.text.as_str())));
    let batches = llm_triples::batches(&passages, MAX_LLM_EXTRACT_INPUT_BYTES);
    let schema = llm_triples::schema();
    let mut builder = FragmentBuilder::default();
    let mut out = Extracted::default();
    let mut failed: Vec<LlmError> = Vec::new();
    let mut asked = 0;
    for batch in batches.iter().take(MAX_LLM_EXTRACT_REQUESTS) {
        if stop.load(Ordering::SeqCst) {
            out.stopped = true;
            return out;
        }
        let batch = &passages[batch.clone()];
        let user = llm_triples::prompt(batch);
        asked += 1;
        let reply = llm.complete_json(&Task {
            name: llm_triples::SCHEMA_NAME,
            system: llm_triples::SYSTEM_PROMPT,
            user: &user,
            schema: &schema,
        });
        let proposals =
            reply.and_then(|r| llm_triples::parse(&r, &mut out.tally).ok_or(LlmError::Malformed));
        match proposals {
            Ok(p) => builder.add(batch, &p, &mut out.tally),
            Err(e) => {
                let give_up = e.is_unavailable();
                failed.push(e);
                if give_up {
                    break;
                }
            }
        }
    }
    let mut notes = Vec::new();
    if let Some(last) = failed.last() {
        notes.push(format!(
            "{} of {asked} LLM request(s) failed ({last})",
            failed.len()
        ));
    }
    if asked < batches.len() && failed.last().is_none_or(|e| !e.is_unavailable()) {
        notes.push(format!(
            "only the first {MAX_LLM_EXTRACT_REQUESTS} request(s) of {} were sent \
             (MAX_LLM_EXTRACT_REQUESTS)",
            batches.len()
        ));
    }
    if !notes.is_empty() {
        out.note = Some(notes.join("; "));
    }
    out.fragment = builder.finish();
    out
}
