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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use super::worker::{JobOutcome, WorkerShared};
use super::Prepared;
use crate::clock::now_ms;
use crate::error::Result;
use crate::store::{Attempt, Batching, Commit, JobKind, PendingJob, Tenant};

/// A job and the work the request thread handed over for it, if any.
pub(super) type Work = (PendingJob, Option<Prepared>);

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
        // Lazy: the attempt must outlive a crash of this process (a commit
        // does, in the OS's cache), not a power cut; an attempt lost that
        // way is one not counted. Never a fsync of its own.
        shared.store.write_then(
            &tenant,
            Commit::Lazy,
            Batching::Shared,
            move |w| {
                let decided = w.begin_attempts(&keys, alone, now_ms())?;
                Ok(keys.into_iter().map(|(id, _)| id).zip(decided).collect())
            },
            move |result: Result<Vec<(i64, Attempt)>>| {
                let _ = tx.send(result);
            },
        )?;
    }
    let mut decided: HashMap<i64, Attempt> = HashMap::new();
    for _ in 0..tenants {
        let outcome = rx
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
/// Best effort: an attempt not taken back only brings a later failure
/// closer.
pub(super) fn end_attempts(shared: &WorkerShared, waiting: Vec<(Tenant, i64)>, alone: bool) {
    let mut by_tenant: Vec<(Tenant, Vec<i64>)> = Vec::new();
    for (tenant, id) in waiting {
        match by_tenant.iter_mut().find(|(t, _)| *t == tenant) {
            Some((_, ids)) => ids.push(id),
            None => by_tenant.push((tenant, vec![id])),
        }
    }
    for (tenant, ids) in by_tenant {
        let queued = shared.store.write_then(
            &tenant,
            Commit::Lazy,
            Batching::Shared,
            move |w| w.end_attempts(&ids, alone, now_ms()),
            |outcome| {
                if let Err(e) = outcome {
                    log::warn!("attempts not taken back: {e}");
                }
            },
        );
        if let Err(e) = queued {
            log::debug!("attempts not taken back: {e}");
        }
    }
}
