//! The ingestion worker: one thread that completes journal jobs.
//!
//! A job's work (extraction and chunking) is usually done already: the
//! request thread that received the ingest prepares the document in
//! parallel with other requests and hands the result over through
//! [`Handoff`] (which also resolves entity names ahead while the writer
//! is busy). The worker takes a batch of pending jobs from the journal
//! (when: see [`super::gather`]), uses the handed-over work where it has it
//! and redoes it from the stored original where it does not (a replay after
//! restart, or work dropped to stay within
//! [`super::handoff::MAX_HANDOFF_BYTES`]; the batch's work:
//! [`super::batch`]), then
//! commits each tenant's results in one write so the writer can group them
//! with other commits ([`super::commit`]). Callers waiting for a document
//! are told its outcome once that is committed. On a memory other nodes
//! write too, it leaves their fresh jobs to them ([`JOB_ADOPT_GRACE`]).
//!
//! Stopping takes effect between jobs: the job in hand is finished and
//! committed first; jobs not started stay pending and are replayed at the
//! next start.
//!
//! Attempts (what a crash is charged to): [`super::attempts`].

use crossbeam_channel::{Receiver, Sender};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::attempts::{begin, end_attempts, take_work, warm_up, Excused};
use super::batch::{prepare_batch, Backoff};
pub use super::commit::deferred_reason;
use super::commit::{commit, commit_groups, Done};
use super::gather::Gather;
use super::handoff::Handoff;
use crate::clock::now_ms;
use crate::embed::Embedder;
use crate::error::{Error, Result, StorageFault};
use crate::llm::Llm;
use crate::store::{JobQueue, PendingJob, Store, Tenant};

/// Jobs taken per round.
pub const JOB_BATCH: usize = 256;

/// Bytes of originals taken per round, at most (a job larger than this
/// still makes a round alone). A batch's work (text, chunks, vectors,
/// graph) is held until it commits and grows with its documents: without
/// it, the parts of one large upload (`service::memory::upload_parts`),
/// all pending at once, would be prepared together. A batch it cuts short
/// gathers behind the one the writer holds ([`Gather`]), so one batch's
/// work is held at a time.
pub const JOB_BATCH_BYTES: i64 = 2 * crate::limits::MAX_CONTENT_BYTES as i64;

/// Longest sleep without a wake-up, in case a wake-up was missed.
pub const IDLE_POLL: Duration = Duration::from_secs(2);

/// How a job ended, as told to whoever waits for its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    Indexed {
        chunks: usize,
    },
    Failed(String),
    /// Not indexed yet because the disk refused the write (full, failing,
    /// read-only): the job stays pending and is retried by itself; the
    /// text says why, for the client.
    Deferred(String),
}

/// Callers waiting for particular documents to be indexed.
#[derive(Default)]
pub struct JobWaiters {
    waiting: Mutex<HashMap<String, Vec<Sender<JobOutcome>>>>,
}

impl JobWaiters {
    /// Returns a receiver that gets the outcome of `doc_id`'s job once it
    /// is committed. Register before the document is admitted, so the
    /// outcome cannot be missed.
    pub fn register(&self, doc_id: &str) -> Receiver<JobOutcome> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lock().entry(doc_id.to_string()).or_default().push(tx);
        rx
    }

    /// Drops the waiters of a document (after a timeout, say).
    pub fn forget(&self, doc_id: &str) {
        self.lock().remove(doc_id);
    }

    pub(super) fn notify(&self, doc_id: &str, outcome: &JobOutcome) {
        if let Some(senders) = self.lock().remove(doc_id) {
            for s in senders {
                let _ = s.try_send(outcome.clone());
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Sender<JobOutcome>>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Handle to the running worker thread.
pub struct IngestWorker {
    shared: Arc<WorkerShared>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The upkeep thread, started and stopped with the worker.
    upkeep: Mutex<Option<super::upkeep::Upkeep>>,
}

/// What the worker shares with the request threads.
pub struct WorkerShared {
    pub store: Arc<Store>,
    pub embedder: Arc<dyn Embedder>,
    pub waiters: JobWaiters,
    pub handoff: Handoff,
    /// Counts forget operations: when it changes, the worker drops the
    /// neighbour text it remembers, which may be a forgotten document's.
    pub forgets: AtomicU64,
    /// The LLM that extracts triples, when LLM extraction is configured:
    /// every indexed document then gets an LLM extraction job, which the
    /// enricher (`super::enrich`) runs.
    pub llm: Option<Arc<Llm>>,
    /// Set while the last indexing commit failed on the disk (full,
    /// failing, read-only), with when that was last seen; cleared by the
    /// next commit that succeeds: waits for indexing end early instead of
    /// running out their bounds.
    storage_fault: Mutex<Option<(StorageFault, Instant)>>,
    /// Attempts ended by the disk whose taking back it refused too.
    pub(super) excused: Excused,
    /// Since when every embedding of stored chunks has failed (the
    /// embedding server is down or refusing); cleared by the next that
    /// succeeds. Jobs then wait with backoff, so waits for indexing must
    /// know to stop waiting.
    embed_failing_since: Mutex<Option<Instant>>,
    /// Wakes the worker (new jobs admitted, or a commit freed capacity).
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
    /// Wakes the enricher (LLM extraction jobs committed).
    enrich_tx: Sender<()>,
    pub(super) enrich_rx: Receiver<()>,
}

impl WorkerShared {
    /// `llm` is used for extraction only if its configuration asks for it.
    pub fn new(
        store: Arc<Store>,
        embedder: Arc<dyn Embedder>,
        llm: Option<Arc<Llm>>,
    ) -> WorkerShared {
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        let (enrich_tx, enrich_rx) = crossbeam_channel::bounded(1);
        WorkerShared {
            store,
            embedder,
            waiters: JobWaiters::default(),
            handoff: Handoff::default(),
            forgets: AtomicU64::new(0),
            llm: llm.filter(|l| l.config().extract),
            storage_fault: Mutex::new(None),
            excused: Excused::default(),
            embed_failing_since: Mutex::new(None),
            wake_tx,
            wake_rx,
            enrich_tx,
            enrich_rx,
        }
    }

    /// For how long every embedding of stored chunks has failed, if the
    /// last one did.
    pub fn embed_failing_for(&self) -> Option<Duration> {
        self.embed_failing_since
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|since| since.elapsed())
    }

    pub(super) fn note_embedding(&self, succeeded: bool) {
        let mut since = self
            .embed_failing_since
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if succeeded {
            *since = None;
        } else {
            since.get_or_insert_with(Instant::now);
        }
    }

    /// The disk's fault, while indexing is held up by one.
    pub fn storage_fault(&self) -> Option<StorageFault> {
        self.storage_fault_seen().map(|(fault, _)| fault)
    }

    /// The disk's fault, if indexing met it at or after `since`: a fault
    /// seen only before (the disk may have recovered, with no commit to
    /// prove it yet) says nothing about work begun since.
    pub fn storage_fault_since(&self, since: Instant) -> Option<StorageFault> {
        self.storage_fault_seen()
            .filter(|&(_, seen)| seen >= since)
            .map(|(fault, _)| fault)
    }

    fn storage_fault_seen(&self) -> Option<(StorageFault, Instant)> {
        *self.storage_fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn set_storage_fault(&self, fault: Option<StorageFault>) {
        *self.storage_fault.lock().unwrap_or_else(|p| p.into_inner()) =
            fault.map(|f| (f, Instant::now()));
    }

    /// Records the disk's fault behind `e`, if it is one: indexing is held
    /// up until a commit succeeds again.
    fn note_storage_error(&self, e: &Error) {
        if let Some(fault) = e.storage_fault() {
            self.set_storage_fault(Some(fault));
        }
    }

    /// Tells the worker there is work (a full channel means it will look
    /// anyway).
    pub fn wake_worker(&self) {
        let _ = self.wake_tx.try_send(());
    }

    /// Tells the enricher there may be LLM extraction jobs.
    pub fn wake_enricher(&self) {
        let _ = self.enrich_tx.try_send(());
    }

    /// After a document was forgotten: drops work prepared for it, tells
    /// whoever waits for it, and makes the worker forget neighbour text.
    pub fn forgotten(&self, doc_id: &str) {
        self.handoff.take(doc_id);
        self.waiters.notify(
            doc_id,
            &JobOutcome::Failed("the document was forgotten before it was indexed".into()),
        );
        self.forgets.fetch_add(1, Ordering::SeqCst);
    }
}

impl IngestWorker {
    /// Starts the worker (it immediately replays whatever is pending) and
    /// the upkeep thread.
    pub fn start(shared: Arc<WorkerShared>) -> std::io::Result<IngestWorker> {
        // Deterministic mode runs upkeep's chores at defined points
        // instead (`super::upkeep::run_now`), never on a timer.
        let upkeep = match crate::clock::is_fixed() {
            true => None,
            false => Some(super::upkeep::Upkeep::start(shared.clone())?),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread_shared = shared.clone();
        let handle = std::thread::Builder::new()
            .name("ingest-worker".into())
            .spawn(move || {
                let wake = thread_shared.wake_rx.clone();
                run(&thread_shared, &wake, &thread_stop)
            })?;
        Ok(IngestWorker {
            shared,
            stop,
            thread: Mutex::new(Some(handle)),
            upkeep: Mutex::new(upkeep),
        })
    }

    /// Tells the worker that new jobs were committed.
    pub fn wake(&self) {
        self.shared.wake_worker();
    }

    /// Stops at the next job boundary and waits for the thread.
    pub fn stop(&self) {
        if let Some(mut upkeep) = self.upkeep.lock().unwrap_or_else(|p| p.into_inner()).take() {
            upkeep.stop();
        }
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

/// Most jobs submitted to the writer and not yet committed. With a backlog
/// (a whole [`JOB_BATCH`] ready, as when jobs are replayed at start-up) the
/// worker prepares the next batch while the last one commits; otherwise
/// the next batch gathers behind it ([`super::gather`]). This bounds how
/// far ahead the worker runs.
pub const MAX_IN_FLIGHT_JOBS: usize = 2 * JOB_BATCH;

/// Most (tenant, source) neighbours remembered between batches.
pub const MAX_REMEMBERED_NEIGHBOURS: usize = 4096;

/// What the worker carries from one batch to the next.
struct WorkerState {
    backoff: Backoff,
    /// Jobs whose results are queued in the writer, not yet committed.
    in_flight: Arc<Mutex<HashSet<i64>>>,
    /// Last chunk per (tenant, source) written or in flight, for the next
    /// document's context while its predecessor may not be committed.
    recent: HashMap<(String, String), String>,
    /// `WorkerShared::forgets` when `recent` was last trusted.
    forgets_seen: u64,
    /// Whether the embedder was used once already (see [`warm_up`]).
    warm: bool,
    /// Jobs whose work this node's request threads handed over: its own,
    /// still its own should a commit fail and the job come round again
    /// (see [`ours_or_abandoned`]). At most [`MAX_REMEMBERED_NEIGHBOURS`].
    own: HashSet<i64>,
}

fn run(shared: &Arc<WorkerShared>, wake: &Receiver<()>, stop: &AtomicBool) {
    // On a cluster, the jobs this node journalled before it stopped (or
    // was killed) are still its own: taken up now, as a local store
    // replays its journal, not left for the grace.
    let own = shared.store.own_pending_jobs().unwrap_or_else(|e| {
        log::warn!("cannot read this node's own jobs: {e}");
        Vec::new()
    });
    let mut state = WorkerState {
        backoff: Backoff::default(),
        in_flight: Arc::default(),
        recent: HashMap::new(),
        forgets_seen: 0,
        warm: false,
        own: own.into_iter().take(MAX_REMEMBERED_NEIGHBOURS).collect(),
    };
    let mut gather = Gather::default();
    while !stop.load(Ordering::SeqCst) {
        let busy = lock_set(&state.in_flight).len();
        if busy >= MAX_IN_FLIGHT_JOBS {
            let _ = wake.recv_timeout(Duration::from_millis(5));
            continue;
        }
        // Other nodes' fresh jobs are passed over (see `ours_or_abandoned`):
        // look further so that they cannot crowd this node's own out.
        let others = shared.store.has_other_writers();
        let look = if others { 4 * JOB_BATCH } else { JOB_BATCH };
        let jobs = match shared.store.pending_jobs(JobQueue::Indexing, look + busy) {
            Ok(jobs) => jobs,
            Err(e) => {
                log::error!("cannot read the journal: {e}");
                shared.note_storage_error(&e);
                let _ = wake.recv_timeout(IDLE_POLL);
                continue;
            }
        };
        let jobs: Vec<PendingJob> = {
            let in_flight = lock_set(&state.in_flight);
            let now = now_ms();
            jobs.into_iter()
                .filter(|j| !in_flight.contains(&j.job_id) && state.backoff.ready(j.job_id))
                .filter(|j| !others || ours_or_abandoned(shared, &state.own, j, now))
                .take(JOB_BATCH)
                .collect()
        };
        let jobs = within_batch_bytes(jobs);
        if let Some(wait) = gather.wait(jobs.len(), busy) {
            if busy > 0 {
                // The writer holds the previous batch: meanwhile, spare it
                // the next batch's name look-ups.
                let holding = || !lock_set(&state.in_flight).is_empty();
                shared.handoff.resolve_ahead(&shared.store, holding);
            }
            // Woken early when a batch commits or new jobs are journalled.
            let _ = wake.recv_timeout(wait);
            continue;
        }
        if jobs.is_empty() {
            let wait = state
                .backoff
                .next_wait()
                .unwrap_or(IDLE_POLL)
                .min(IDLE_POLL);
            let _ = wake.recv_timeout(wait);
            continue;
        }
        if let Err(e) = run_batch(shared, jobs, stop, &mut state) {
            log::error!("ingestion batch failed, will retry: {e}");
            shared.note_storage_error(&e);
            let _ = wake.recv_timeout(IDLE_POLL);
        }
    }
}

/// How long a job another node journalled is left to that node before
/// this one takes it up (measured from the job's last change). Nodes of a
/// cluster share one journal: without it each busy node would index every
/// document, the second commit of each would change nothing, and the
/// turns they take would be spent on work already done. A node that dies
/// with jobs it acknowledged has them indexed by the others this long
/// after.
pub const JOB_ADOPT_GRACE: Duration = Duration::from_secs(30);

/// On a memory other nodes write too: whether `job` is this node's to do
/// now. Its own documents are those whose prepared work its request
/// threads handed over (held, or taken before: `own`, which starts with
/// the jobs it journalled before a restart); any other job once
/// no node changed it for [`JOB_ADOPT_GRACE`]. (Work dropped from a full
/// hand-off waits the grace as well.)
fn ours_or_abandoned(
    shared: &WorkerShared,
    own: &HashSet<i64>,
    job: &PendingJob,
    now: i64,
) -> bool {
    own.contains(&job.job_id)
        || shared.handoff.holds(&job.doc_id)
        || now.saturating_sub(job.updated_at) >= JOB_ADOPT_GRACE.as_millis() as i64
}

/// The first of `jobs` whose originals come to at most
/// [`JOB_BATCH_BYTES`] (the first job whatever its size).
fn within_batch_bytes(mut jobs: Vec<PendingJob>) -> Vec<PendingJob> {
    let mut total = 0i64;
    let keep = jobs
        .iter()
        .position(|j| {
            total = total.saturating_add(j.bytes);
            total > JOB_BATCH_BYTES
        })
        .map_or(jobs.len(), |over| over.max(1));
    jobs.truncate(keep);
    jobs
}

pub(super) fn lock_set(set: &Mutex<HashSet<i64>>) -> MutexGuard<'_, HashSet<i64>> {
    set.lock().unwrap_or_else(|p| p.into_inner())
}

fn run_batch(
    shared: &Arc<WorkerShared>,
    jobs: Vec<PendingJob>,
    stop: &AtomicBool,
    state: &mut WorkerState,
) -> Result<()> {
    let count = jobs.len();
    let forgets = shared.forgets.load(Ordering::SeqCst);
    if state.recent.len() > MAX_REMEMBERED_NEIGHBOURS || forgets != state.forgets_seen {
        // Forgetting only costs a look-up in the store next time; after a
        // document was forgotten, its text must not be lent as context.
        state.recent.clear();
        state.forgets_seen = forgets;
    }
    let work = take_work(shared, jobs);
    if state.own.len() > MAX_REMEMBERED_NEIGHBOURS {
        state.own.clear();
    }
    state.own.extend(
        work.iter()
            .filter(|(_, handed)| handed.is_some())
            .map(|(j, _)| j.job_id),
    );
    if !state.warm && work.iter().any(|(_, handed)| handed.is_none()) {
        warm_up(shared);
        state.warm = true;
    }
    // Alone: a crash during this batch could only be this job's doing.
    let alone = work.len() == 1 && work[0].1.is_none();
    let work = begin(shared, work, alone)?;
    let begun: Vec<(Tenant, i64)> = work
        .iter()
        .map(|(job, _)| (job.tenant.clone(), job.job_id))
        .collect();
    let backoff = &mut state.backoff;
    let recent = &mut state.recent;
    let mut waiting: Vec<(Tenant, i64)> = Vec::new();
    let mut by_tenant: Vec<(Tenant, Vec<Done>)> = Vec::new();
    let done = prepare_batch(
        shared,
        work,
        stop,
        backoff,
        recent,
        &mut waiting,
        &mut by_tenant,
    );
    if let Err(e) = done {
        // Reading what the jobs need failed on the store (the disk, or
        // the cluster): none of this batch's work was the documents'
        // doing, and none of it is committed.
        if e.storage_fault().is_some() || matches!(e, Error::Unavailable(_)) {
            end_attempts(shared, begun, alone);
        }
        return Err(e);
    }
    end_attempts(shared, waiting, alone);
    // Results are committed asynchronously: the worker moves on to the next
    // batch while the writer commits this one, and waiters hear the outcome
    // from the writer thread once it is decided.
    let commits = by_tenant.into_iter().flat_map(|(tenant, done)| {
        commit_groups(done)
            .into_iter()
            .map(move |group| (tenant.clone(), group))
    });
    for (tenant, done) in commits {
        commit(shared, &state.in_flight, tenant, done, alone);
    }
    log::debug!("prepared {count} job(s)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::pending_job;
    use crate::store::JobKind;

    fn job(id: i64, bytes: i64) -> PendingJob {
        pending_job(id, JobKind::Ingest, bytes)
    }

    fn ids(jobs: Vec<PendingJob>) -> Vec<i64> {
        jobs.into_iter().map(|j| j.job_id).collect()
    }

    #[test]
    fn a_batch_takes_originals_up_to_its_byte_budget_and_one_large_job_alone() {
        let half = JOB_BATCH_BYTES / 2;
        let taken = within_batch_bytes(vec![job(1, half), job(2, half), job(3, 1)]);
        assert_eq!(ids(taken), vec![1, 2], "exactly the budget");
        let taken = within_batch_bytes(vec![job(1, JOB_BATCH_BYTES + 1), job(2, 1)]);
        assert_eq!(ids(taken), vec![1], "a larger job goes alone");
        let small: Vec<PendingJob> = (0..JOB_BATCH as i64).map(|i| job(i, 1000)).collect();
        assert_eq!(within_batch_bytes(small).len(), JOB_BATCH);
    }
}
