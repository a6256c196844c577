//! The ingestion worker: one thread that turns journal jobs into chunks.
//!
//! It wakes when an ingest is admitted (or every [`IDLE_POLL`] as a safety
//! net), takes a batch of pending jobs, extracts and chunks each document
//! outside any transaction, then commits each tenant's results in one write
//! so the writer can group them. Waiters registered in [`JobWaiters`] are
//! told once a job's outcome is committed. Stopping takes effect between
//! jobs: the job in hand is finished and committed first; jobs not started
//! stay pending and are replayed at the next start.

use crossbeam_channel::{Receiver, Sender};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{chunk, extract, media};
use crate::clock::now_ms;
use crate::error::Result;
use crate::store::{NewChunk, PendingJob, Store, Tenant};

/// Jobs taken per round.
pub const JOB_BATCH: usize = 64;

/// Longest sleep without a wake-up, in case a wake-up was missed.
pub const IDLE_POLL: Duration = Duration::from_secs(2);

/// Callers waiting for particular jobs to finish.
#[derive(Default)]
pub struct JobWaiters {
    waiting: Mutex<HashMap<i64, Vec<Sender<()>>>>,
}

impl JobWaiters {
    /// Returns a receiver that gets a message (or is closed) once job
    /// `job_id`'s outcome is committed. Register before checking the job's
    /// state, so a completion between the two cannot be missed.
    pub fn register(&self, job_id: i64) -> Receiver<()> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lock().entry(job_id).or_default().push(tx);
        rx
    }

    /// Drops the waiters of a job (after a timeout, say).
    pub fn forget(&self, job_id: i64) {
        self.lock().remove(&job_id);
    }

    fn notify(&self, job_ids: &[i64]) {
        let mut map = self.lock();
        for id in job_ids {
            if let Some(senders) = map.remove(id) {
                for s in senders {
                    let _ = s.try_send(());
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Vec<Sender<()>>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Handle to the running worker thread.
pub struct IngestWorker {
    wake: Sender<()>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl IngestWorker {
    /// Starts the worker; it immediately replays whatever is pending.
    pub fn start(store: Arc<Store>, waiters: Arc<JobWaiters>) -> std::io::Result<IngestWorker> {
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("ingest-worker".into())
            .spawn(move || run(&store, &waiters, &wake_rx, &thread_stop))?;
        Ok(IngestWorker {
            wake: wake_tx,
            stop,
            thread: Mutex::new(Some(handle)),
        })
    }

    /// Tells the worker that new jobs were committed.
    pub fn wake(&self) {
        let _ = self.wake.try_send(());
    }

    /// Stops at the next job boundary and waits for the thread.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

fn run(store: &Store, waiters: &JobWaiters, wake: &Receiver<()>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let jobs = match store.pending_jobs(JOB_BATCH) {
            Ok(jobs) => jobs,
            Err(e) => {
                log::error!("cannot read the journal: {e}");
                let _ = wake.recv_timeout(IDLE_POLL);
                continue;
            }
        };
        if jobs.is_empty() {
            let _ = wake.recv_timeout(IDLE_POLL);
            continue;
        }
        if let Err(e) = run_batch(store, waiters, jobs, stop) {
            log::error!("ingestion batch failed, will retry: {e}");
            let _ = wake.recv_timeout(IDLE_POLL);
        }
    }
}

/// What processing one job produced.
enum Outcome {
    Indexed { text: String, chunks: Vec<NewChunk> },
    Failed(String),
}

fn run_batch(
    store: &Store,
    waiters: &JobWaiters,
    jobs: Vec<PendingJob>,
    stop: &AtomicBool,
) -> Result<()> {
    let mut by_tenant: Vec<(Tenant, Vec<(i64, i64, Outcome)>)> = Vec::new();
    for job in jobs {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let outcome = process(store, &job)?;
        match by_tenant.iter_mut().find(|(t, _)| *t == job.tenant) {
            Some((_, list)) => list.push((job.job_id, job.document_key, outcome)),
            None => by_tenant.push((
                job.tenant.clone(),
                vec![(job.job_id, job.document_key, outcome)],
            )),
        }
    }
    for (tenant, results) in by_tenant {
        let ids: Vec<i64> = results.iter().map(|(id, _, _)| *id).collect();
        store.write(&tenant, move |w| {
            let now = now_ms();
            for (job_id, document_key, outcome) in &results {
                match outcome {
                    Outcome::Indexed { text, chunks } => {
                        w.complete_job(*job_id, *document_key, text, chunks, now)?
                    }
                    Outcome::Failed(reason) => w.fail_job(*job_id, *document_key, reason, now)?,
                };
            }
            Ok(())
        })?;
        waiters.notify(&ids);
    }
    Ok(())
}

/// Extracts and chunks one job's document. Content problems become a
/// failed job; only store errors are returned (and retried).
fn process(store: &Store, job: &PendingJob) -> Result<Outcome> {
    let Some(input) = store.reader(&job.tenant)?.job_input(job.document_key)? else {
        return Ok(Outcome::Failed("the document's original is missing".into()));
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        let Some(kind) = media::from_media_type(&input.media_type) else {
            return Outcome::Failed(format!("unsupported media type {}", input.media_type));
        };
        match extract::extract(kind, &input.original) {
            Ok(text) => {
                let chunks = chunk::chunk(&text, kind);
                Outcome::Indexed { text, chunks }
            }
            Err(e) => Outcome::Failed(e.0),
        }
    }));
    Ok(result.unwrap_or_else(|_| {
        log::error!(
            "indexing document {} panicked; marking it failed",
            input.doc_id
        );
        Outcome::Failed("internal error while indexing this document".into())
    }))
}
