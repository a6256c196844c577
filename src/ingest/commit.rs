//! Committing what the ingestion worker did: each job's outcome (indexed,
//! failed, embedded) written in the tenant's write, cut to a size one
//! transaction (on a cluster, one of the cluster's) carries well, and the
//! waiters told once the writer has decided it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::attempts::end_attempts;
use super::worker::{lock_set, JobOutcome, WorkerShared};
use super::Prepared;
use crate::clock::now_ms;
use crate::error::{Error, Result, StorageFault};
use crate::store::{Batching, Commit, FailureKind, PageSpan, PendingJob, Tenant};

/// The result of one job, to be committed.
pub(super) enum Done {
    /// Boxed: a prepared document (text, chunks, two graph fragments) is
    /// far larger than the other outcomes.
    Indexed(PendingJob, Box<Prepared>),
    Failed(PendingJob, FailureKind, String),
    Embedded(PendingJob, Vec<i64>, Vec<Vec<f32>>),
}

impl Done {
    pub(super) fn job(&self) -> &PendingJob {
        match self {
            Done::Indexed(j, _) | Done::Failed(j, _, _) | Done::Embedded(j, _, _) => j,
        }
    }

    /// The chunks its commit writes (at least 1: every outcome writes).
    fn chunks(&self) -> usize {
        match self {
            Done::Indexed(_, p) => p.chunks.len(),
            Done::Embedded(_, _, vectors) => vectors.len(),
            Done::Failed(..) => 0,
        }
        .max(1)
    }
}

/// Most chunks one commit of indexed documents writes; a document with
/// more is committed alone. On a cluster a commit is one transaction of
/// the cluster's (about 28 statements a chunk): this keeps its requests to
/// seconds. Locally it changes nothing for documents of a few chunks.
pub const MAX_COMMIT_CHUNKS: usize = 2_000;

/// `done` in commit order, cut into groups of at most
/// [`MAX_COMMIT_CHUNKS`] chunks (a larger document alone in its group).
pub(super) fn commit_groups(done: Vec<Done>) -> Vec<Vec<Done>> {
    let mut groups: Vec<Vec<Done>> = Vec::new();
    let mut size = 0;
    for d in done {
        let chunks = d.chunks();
        match groups.last_mut() {
            Some(group) if size + chunks <= MAX_COMMIT_CHUNKS => {
                size += chunks;
                group.push(d);
            }
            _ => {
                size = chunks;
                groups.push(vec![d]);
            }
        }
    }
    groups
}

/// Queues the commit of `done` (one tenant's, at most
/// [`MAX_COMMIT_CHUNKS`]) and returns at once: the writer commits it
/// while the worker goes on, and the outcome reaches waiters from the
/// writer thread. `in_flight` holds the jobs until it is decided; `alone`
/// as the batch's attempts were counted.
pub(super) fn commit(
    shared: &Arc<WorkerShared>,
    in_flight: &Arc<Mutex<HashSet<i64>>>,
    tenant: Tenant,
    done: Vec<Done>,
    alone: bool,
) {
    let ids: Vec<i64> = done.iter().map(|d| d.job().job_id).collect();
    let doc_ids: Vec<String> = done.iter().map(|d| d.job().doc_id.clone()).collect();
    lock_set(in_flight).extend(&ids);
    let in_flight = in_flight.clone();
    let notify = shared.clone();
    let job_tenant = tenant.clone();
    let llm_extraction = shared.llm.is_some();
    // Lazy: until this commit marks them done the jobs stay pending,
    // so a commit lost to a power cut is replayed at the next start.
    // Its own transaction: a batch's indexing is the largest write
    // there is, and should one document fail, the whole batch is
    // retried anyway.
    let submitted = shared.store.write_then(
        &tenant,
        Commit::Lazy,
        Batching::Own,
        move |w| {
            let now = now_ms();
            for d in &done {
                match d {
                    Done::Indexed(job, p) => {
                        let stored = w.complete_job(
                            job.job_id,
                            job.document_key,
                            p.indexed(),
                            job.provenance,
                            now,
                        )?;
                        if stored && llm_extraction && !p.chunks.is_empty() {
                            w.queue_llm_extraction(job.document_key, now)?;
                        }
                        if stored && !p.pages.is_empty() {
                            let pages: Vec<PageSpan> = p
                                .pages
                                .iter()
                                .map(|pg| PageSpan {
                                    page: pg.number,
                                    start: pg.start,
                                    end: pg.end,
                                })
                                .collect();
                            w.record_pages(job.document_key, &pages, &p.chunk_pages)?;
                        }
                        stored
                    }
                    Done::Failed(job, kind, reason) => {
                        w.fail_job(job.job_id, job.document_key, *kind, reason, now)?
                    }
                    Done::Embedded(job, keys, vectors) => {
                        w.complete_embed_job(job.job_id, job.document_key, keys, vectors, now)?
                    }
                };
            }
            Ok(done)
        },
        move |result: Result<Vec<Done>>| {
            // The jobs leave `in_flight` (and may be begun again) only
            // after what their failure takes back is queued: the writer
            // then runs that before their next begin.
            let release = || {
                let mut set = lock_set(&in_flight);
                for id in &ids {
                    set.remove(id);
                }
            };
            match result {
                Ok(done) => {
                    release();
                    notify.set_storage_fault(None);
                    notify_outcomes(&notify, done);
                    if llm_extraction {
                        notify.wake_enricher();
                    }
                    notify.wake_worker();
                }
                // The disk refused the write: the jobs stay pending and
                // are retried at the worker's next look (within
                // IDLE_POLL, not at once, so a full disk is not
                // hammered), and whoever waits for them hears why now.
                Err(Error::Storage(fault, cause)) => {
                    log::error!("committing indexed documents failed: storage {fault:?}: {cause}");
                    notify.set_storage_fault(Some(fault));
                    // The disk, not the documents, ended these
                    // attempts: they must not count towards
                    // MAX_JOB_ATTEMPTS, or a long-full disk would fail
                    // acknowledged documents for good.
                    let retried = ids.iter().map(|id| (job_tenant.clone(), *id)).collect();
                    end_attempts(&notify, retried, alone);
                    release();
                    let why = deferred_reason(fault);
                    for id in &doc_ids {
                        notify
                            .waiters
                            .notify(id, &JobOutcome::Deferred(why.clone()));
                    }
                }
                // The memory's cluster refused the commit (no quorum,
                // or another node wrote first): like a full disk, not
                // the documents' doing, so it costs them no attempt.
                Err(
                    e @ (Error::Unavailable(_) | Error::UnavailableFor(..) | Error::Unconfirmed(_)),
                ) => {
                    log::debug!("committing indexed documents failed: {e}");
                    let retried = ids.iter().map(|id| (job_tenant.clone(), *id)).collect();
                    end_attempts(&notify, retried, alone);
                    release();
                    notify.wake_worker();
                }
                // The jobs stay pending and are retried.
                Err(e) => {
                    release();
                    log::error!("committing indexed documents failed: {e}");
                    notify.wake_worker();
                }
            }
        },
    );
    if let Err(e) = submitted {
        log::warn!("cannot queue indexed documents: {e}");
    }
}

/// What a caller waiting for a document hears while the disk refuses to
/// index it: it is stored (its admission committed), not yet searchable.
pub fn deferred_reason(fault: StorageFault) -> String {
    format!(
        "stored, not yet searchable: {}; indexing resumes by itself once the disk accepts writes",
        fault.describe()
    )
}

fn notify_outcomes(shared: &WorkerShared, done: Vec<Done>) {
    for d in done {
        let (job, outcome) = match d {
            Done::Indexed(job, p) => (
                job,
                JobOutcome::Indexed {
                    chunks: p.chunks.len(),
                },
            ),
            Done::Failed(job, _, reason) => (job, JobOutcome::Failed(reason)),
            Done::Embedded(..) => continue,
        };
        shared.waiters.notify(&job.doc_id, &outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::pending_job;
    use crate::store::JobKind;

    fn job(id: i64) -> PendingJob {
        pending_job(id, JobKind::Embed, 0)
    }

    fn embedded(id: i64, chunks: usize) -> Done {
        Done::Embedded(job(id), vec![0; chunks], vec![vec![0.0]; chunks])
    }

    fn ids(groups: &[Vec<Done>]) -> Vec<Vec<i64>> {
        groups
            .iter()
            .map(|g| g.iter().map(|d| d.job().job_id).collect())
            .collect()
    }

    #[test]
    fn commits_hold_at_most_max_commit_chunks_and_keep_their_order() {
        let half = MAX_COMMIT_CHUNKS / 2;
        let done = vec![
            embedded(1, half),
            embedded(2, half),
            // One more chunk than fits beside the first two.
            embedded(3, 1),
            Done::Failed(job(4), FailureKind::Content, "bad".into()),
            // Larger than a whole commit: alone.
            embedded(5, MAX_COMMIT_CHUNKS + 1),
            embedded(6, 1),
        ];
        let groups = commit_groups(done);
        assert_eq!(ids(&groups), vec![vec![1, 2], vec![3, 4], vec![5], vec![6]]);
        assert!(commit_groups(Vec::new()).is_empty());
    }
}
