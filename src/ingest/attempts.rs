//! Attempts: what the ingestion worker records before it redoes a job's
//! work, so that a crash is charged to the document that caused it.
//!
//! Work redone from the store (and embedding) is the work that
//! could crash the process on a hostile document, so before doing it the
//! worker commits that each such job was begun
//! ([`crate::store::TenantWriter::begin_attempts`]). Work handed over by the
//! request thread already ran once without harm and is not recorded. A job
//! that was begun and interrupted before runs in a batch of its own, and
//! only such a lone run counts as an attempt: a crash is charged to the
//! document that caused it, never to the batch it happened to share (a
//! `kill -9` during a large replay would otherwise charge hundreds of
//! documents at once). A job begun alone
//! [`crate::limits::MAX_JOB_ATTEMPTS`] times is failed instead.
//!
//! An attempt that ends without harm (the disk or the cluster refused its
//! commit, the embedder was unavailable, the server is stopping) is taken
//! back ([`end_attempts`]). That is a write too, and the disk that refused
//! the commit often refuses it as well; so what it could not take back is
//! kept in memory ([`Excused`]) and taken back by the job's next begin, in
//! the same transaction. A disk fault therefore never counts as an
//! attempt while the process lives (only a stop or crash before the disk
//! recovers leaves such an attempt counted, as it would any interrupted
//! one).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::worker::{JobOutcome, WorkerShared};
use super::Prepared;
use crate::clock::now_ms;
use crate::error::Result;
use crate::store::{Attempt, Batching, Commit, JobKind, PendingJob, Tenant};

/// A job and the work the request thread handed over for it, if any.
pub(super) type Work = (PendingJob, Option<Prepared>);

/// Attempts that ended without harm but whose taking back the store
/// refused: job id → attempts to take back at the job's next begin. Read
/// and settled on the writer thread only (inside and after the begin's
/// write), so an entry is applied exactly once; at most one entry per
/// pending job.
#[derive(Default)]
pub struct Excused(Mutex<HashMap<i64, i64>>);

impl Excused {
    fn lock(&self) -> MutexGuard<'_, HashMap<i64, i64>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Attempts of `job_id` still to be taken back.
    fn of(&self, job_id: i64) -> i64 {
        self.lock().get(&job_id).copied().unwrap_or(0)
    }

    fn add(&self, job_ids: &[i64], attempts: i64) {
        if attempts == 0 {
            return;
        }
        let mut map = self.lock();
        for id in job_ids {
            *map.entry(*id).or_default() += attempts;
        }
    }

    /// Forgets what a committed begin took back (all of it once the job
    /// is no longer pending).
    fn settle(&self, applied: &[(i64, i64, Attempt)]) {
        let mut map = self.lock();
        for &(id, taken, attempt) in applied {
            let left = map.get(&id).map_or(0, |n| n - taken);
            if left > 0 && attempt == Attempt::Begun {
                map.insert(id, left);
            } else {
                map.remove(&id);
            }
        }
    }
}

/// Takes the handed-over work of `jobs`, in order, up to the first job
/// that was begun and interrupted before and has none: that one runs
/// alone, in a batch of its own (if it is first; else the batch ends
/// before it and it runs alone next).
pub(super) fn take_work(shared: &WorkerShared, jobs: Vec<PendingJob>) -> Vec<Work> {
    let mut work = Vec::with_capacity(jobs.len());
    for job in jobs {
        let handed = match job.kind {
            JobKind::Ingest => shared.handoff.take(&job.doc_id),
            _ => None,
        };
        if handed.is_none() && job.begun {
            if work.is_empty() {
                work.push((job, None));
            }
            break;
        }
        work.push((job, handed));
    }
    work
}

/// Makes the embedder load its model (the built-in one loads lazily, and a
/// start-up that is stopped while it loads never began any job's work),
/// before the first attempt is counted: loading is not the document's
/// doing, and a kill during it must not count against it.
pub(super) fn warm_up(shared: &WorkerShared) {
    let started = Instant::now();
    if let Err(e) = shared.embedder.embed_batch(&["warm up"]) {
        log::debug!("embedder not warmed up: {e}");
    }
    log::debug!("embedder warmed up in {:?}", started.elapsed());
}

/// Records an attempt (counted if `alone`) for each job whose work will be
/// done here (no hand-off), waiting for the commit before any of that work
/// starts. Returns the work to do: jobs given up (failed as interrupted,
/// their waiters told) and jobs no longer pending are left out.
pub(super) fn begin(shared: &Arc<WorkerShared>, work: Vec<Work>, alone: bool) -> Result<Vec<Work>> {
    let mut by_tenant: Vec<(Tenant, Vec<(i64, i64)>)> = Vec::new();
    for (job, _) in work.iter().filter(|(_, handed)| handed.is_none()) {
        let key = (job.job_id, job.document_key);
        match by_tenant.iter_mut().find(|(t, _)| *t == job.tenant) {
            Some((_, keys)) => keys.push(key),
            None => by_tenant.push((job.tenant.clone(), vec![key])),
        }
    }
    if by_tenant.is_empty() {
        return Ok(work);
    }
    let (tx, rx) = crossbeam_channel::unbounded();
    let tenants = by_tenant.len();
    for (tenant, keys) in by_tenant {
        let tx = tx.clone();
        let (reading, settling) = (shared.clone(), shared.clone());
        // Lazy: the attempt must outlive a crash of this process (a commit
        // does, in the OS's cache), not a power cut; an attempt lost that
        // way is one not counted. Never a fsync of its own.
        shared.store.write_then(
            &tenant,
            Commit::Lazy,
            Batching::Shared,
            move |w| {
                // Read on the writer thread: a take-back refused just
                // before (its outcome is told before this write runs) is
                // already here.
                let keys: Vec<(i64, i64, i64)> = keys
                    .into_iter()
                    .map(|(id, doc)| (id, doc, reading.excused.of(id)))
                    .collect();
                let decided = w.begin_attempts(&keys, alone, now_ms())?;
                Ok(keys
                    .into_iter()
                    .zip(decided)
                    .map(|((id, _, taken), attempt)| (id, taken, attempt))
                    .collect())
            },
            move |result: Result<Vec<(i64, i64, Attempt)>>| {
                let result = result.map(|applied| {
                    settling.excused.settle(&applied);
                    applied.into_iter().map(|(id, _, a)| (id, a)).collect()
                });
                let _ = tx.send(result);
            },
        )?;
    }
    let mut decided: HashMap<i64, Attempt> = HashMap::new();
    for _ in 0..tenants {
        let outcome: Result<Vec<(i64, Attempt)>> = rx
            .recv()
            .map_err(|_| crate::error::Error::internal("attempt write vanished"))?;
        decided.extend(outcome?);
    }
    let mut kept = Vec::with_capacity(work.len());
    for (job, handed) in work {
        match (handed.is_some(), decided.get(&job.job_id)) {
            (true, _) | (false, Some(Attempt::Begun)) => kept.push((job, handed)),
            (false, Some(Attempt::GaveUp)) => {
                log::warn!(
                    "document {} failed: indexing was begun alone {} times and never finished",
                    job.doc_id,
                    crate::limits::MAX_JOB_ATTEMPTS
                );
                shared.waiters.notify(
                    &job.doc_id,
                    &JobOutcome::Failed(crate::store::interrupted_reason()),
                );
            }
            (false, _) => {}
        }
    }
    Ok(kept)
}

/// Takes back the attempts of jobs whose run ended harmlessly: embed jobs
/// that wait for the embedder, jobs whose commit the disk refused (see
/// [`crate::store::TenantWriter::end_attempts`]). `alone` as in [`begin`].
/// Should the store refuse this write too, the attempts are kept in
/// [`Excused`] and taken back when each job is begun again; so queue this
/// before the jobs can be begun again (the writer runs writes in order).
pub(super) fn end_attempts(shared: &Arc<WorkerShared>, waiting: Vec<(Tenant, i64)>, alone: bool) {
    let mut by_tenant: Vec<(Tenant, Vec<i64>)> = Vec::new();
    for (tenant, id) in waiting {
        match by_tenant.iter_mut().find(|(t, _)| *t == tenant) {
            Some((_, ids)) => ids.push(id),
            None => by_tenant.push((tenant, vec![id])),
        }
    }
    for (tenant, ids) in by_tenant {
        let refused = ids.clone();
        let keeping = shared.clone();
        let queued = shared.store.write_then(
            &tenant,
            Commit::Lazy,
            Batching::Shared,
            move |w| w.end_attempts(&ids, alone, now_ms()),
            move |outcome| {
                if let Err(e) = outcome {
                    log::debug!("attempts taken back at the next begin: {e}");
                    keeping.excused.add(&refused, i64::from(alone));
                }
            },
        );
        if let Err(e) = queued {
            log::debug!("attempts not taken back: {e}");
        }
    }
}
