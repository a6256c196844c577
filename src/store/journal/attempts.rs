//! Attempts and failures of the journal's jobs.
//!
//! Before the worker does a job's work from the stored original
//! (a replay, or work the hand-off dropped) it commits that the job was
//! begun ([`TenantWriter::begin_attempts`]), not the start-ups that found it
//! pending. A job begun in a batch with others is marked `begun`: a crash
//! then cannot be blamed on any one of them, so nothing is counted, and each
//! runs alone next time. A job begun alone counts one attempt; one begun
//! alone [`MAX_JOB_ATTEMPTS`] times is failed instead of begun again: a
//! document that crashes the process cannot crash-loop it, and kills that
//! merely land during indexing almost never add up to that.
//! A failed job keeps a client-safe reason and a reason code
//! ([`FailureKind`]); [`TenantWriter::requeue_failed`] (one document) and
//! [`TenantWriter::requeue_tenant_failed`] give failed documents a way back.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::limits::MAX_JOB_ATTEMPTS;
use crate::store::tenant::TenantWriter;

/// What [`TenantWriter::begin_attempts`] decided for one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Recorded (and counted, if alone): do the work.
    Begun,
    /// Begun too often: failed instead ([`FailureKind::Interrupted`]).
    GaveUp,
    /// No longer pending (forgotten, or finished meanwhile): skip it.
    Gone,
}

/// Why a job failed, as a stable code clients may count (`jobs.failure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Begun [`MAX_JOB_ATTEMPTS`] times and never finished: the server
    /// stopped, crashed or could not write the result each time.
    Interrupted,
    /// The stored content could not be read as its type.
    Content,
    /// A bug while indexing it (a panic, caught).
    Internal,
    /// The document's original bytes are gone.
    MissingOriginal,
}

impl FailureKind {
    pub fn code(self) -> &'static str {
        match self {
            FailureKind::Interrupted => "interrupted",
            FailureKind::Content => "content",
            FailureKind::Internal => "internal",
            FailureKind::MissingOriginal => "missing_original",
        }
    }
}

/// The client-safe reason of a job failed as [`FailureKind::Interrupted`].
pub fn interrupted_reason() -> String {
    format!(
        "indexing was begun on its own {MAX_JOB_ATTEMPTS} times and never finished (the server \
         stopped or crashed during it each time); re-send the same request with its \
         idempotency key, or run `alayasiki-mcp retry-failed`, to try again"
    )
}

/// Start-up bookkeeping: says how many pending jobs were begun and
/// interrupted. Nothing is counted here: an attempt is counted when the
/// worker begins it ([`TenantWriter::begin_attempts`]).
pub(in crate::store) fn note_restart(conn: &Connection) -> Result<()> {
    let interrupted: i64 = conn.query_row(
        "SELECT count(*) FROM jobs WHERE state = 'pending' AND (begun OR attempts > 0)",
        [],
        |r| r.get(0),
    )?;
    if interrupted > 0 {
        log::warn!(
            "{interrupted} job(s) were interrupted while being indexed; each is retried alone \
             (at most {MAX_JOB_ATTEMPTS} attempts alone)"
        );
    }
    Ok(())
}

impl TenantWriter<'_> {
    /// Marks the job failed with a client-safe reason and its code, and
    /// (for an ingest job) its document too. A failed embed job leaves its
    /// document ready: its chunks are searchable by keyword.
    pub fn fail_job(
        &mut self,
        job_id: i64,
        document_key: i64,
        kind: FailureKind,
        reason: &str,
        now: i64,
    ) -> Result<bool> {
        if !self.claim(job_id, document_key)? {
            return Ok(false);
        }
        self.exec(
            "UPDATE documents SET state = 'failed', error = ?4
              WHERE tenant_id = ?1 AND id = ?2
                AND EXISTS (SELECT 1 FROM jobs WHERE id = ?3 AND kind = 'ingest')",
            params![self.tenant_id, document_key, job_id, reason],
        )?;
        self.exec(
            "UPDATE jobs SET state = 'failed', error = ?3, failure = ?4, updated_at = ?5
              WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, job_id, reason, kind.code(), now],
        )?;
        Ok(true)
    }

    /// Records that each job `(job_id, document_key, excused)` is about to
    /// be worked on: marks it begun, and if it runs `alone` counts one more
    /// attempt, or fails it if it was begun alone [`MAX_JOB_ATTEMPTS`] times
    /// already. `excused` attempts of it ended harmlessly (the disk refused
    /// their commit) but could not be taken back then (the disk refused
    /// that write too): they are taken back here first, in the same
    /// transaction, so a disk fault never counts whatever else it refused.
    /// Commit this before the work: then an attempt that crashes the process
    /// is counted, and a start-up that never reaches the job is not.
    pub fn begin_attempts(
        &mut self,
        jobs: &[(i64, i64, i64)],
        alone: bool,
        now: i64,
    ) -> Result<Vec<Attempt>> {
        let mut out = Vec::with_capacity(jobs.len());
        for &(job_id, document_key, excused) in jobs {
            let attempts: Option<i64> = self
                .conn
                .prepare_cached(
                    "SELECT attempts FROM jobs WHERE tenant_id = ?1 AND id = ?2
                        AND document_id = ?3 AND state = 'pending'",
                )?
                .query_row(params![self.tenant_id, job_id, document_key], |r| r.get(0))
                .optional()?;
            let attempt = match attempts.map(|n| (n - excused).max(0)) {
                None => Attempt::Gone,
                Some(n) if alone && n >= MAX_JOB_ATTEMPTS => {
                    let reason = interrupted_reason();
                    self.fail_job(job_id, document_key, FailureKind::Interrupted, &reason, now)?;
                    Attempt::GaveUp
                }
                Some(n) => {
                    self.exec(
                        "UPDATE jobs SET begun = 1, attempts = ?3, updated_at = ?4
                          WHERE tenant_id = ?1 AND id = ?2",
                        params![self.tenant_id, job_id, n + i64::from(alone), now],
                    )?;
                    Attempt::Begun
                }
            };
            out.push(attempt);
        }
        Ok(out)
    }

    /// Takes back what [`Self::begin_attempts`] recorded for jobs whose
    /// attempt ended without finishing but also without harm (the embedder
    /// was unavailable, or the disk refused the commit: the job waits and is
    /// retried), so retries of that kind never use the attempts up nor keep
    /// a job running alone. `alone` as it was begun.
    pub fn end_attempts(&mut self, job_ids: &[i64], alone: bool, now: i64) -> Result<()> {
        for id in job_ids {
            let attempts: Option<i64> = self
                .conn
                .prepare_cached(
                    "SELECT attempts FROM jobs WHERE tenant_id = ?1 AND id = ?2 AND state = 'pending'",
                )?
                .query_row(params![self.tenant_id, id], |r| r.get(0))
                .optional()?;
            let Some(attempts) = attempts else { continue };
            let left = (attempts - i64::from(alone)).max(0);
            self.exec(
                "UPDATE jobs SET attempts = ?3, begun = ?4, updated_at = ?5
                  WHERE tenant_id = ?1 AND id = ?2 AND state = 'pending'",
                params![self.tenant_id, id, left, left > 0, now],
            )?;
        }
        Ok(())
    }

    /// Puts every failed indexing job of this tenant back in the queue, its
    /// attempts forgotten, and its document back to `pending`. Returns how
    /// many jobs were queued again.
    pub fn requeue_tenant_failed(&mut self, now: i64) -> Result<usize> {
        self.exec(
            "UPDATE documents SET state = 'pending', error = NULL
              WHERE tenant_id = ?1 AND state = 'failed'
                AND id IN (SELECT document_id FROM jobs
                            WHERE tenant_id = ?1 AND state = 'failed' AND kind = 'ingest')",
            params![self.tenant_id],
        )?;
        Ok(self.exec(
            "UPDATE jobs SET state = 'pending', attempts = 0, begun = 0, error = NULL, failure = NULL,
                    updated_at = ?2
              WHERE tenant_id = ?1 AND state = 'failed' AND kind != 'llm_extract'",
            params![self.tenant_id, now],
        )?)
    }

    /// Puts a failed document's failed indexing jobs back in the queue
    /// (its attempts forgotten) and the document back to `pending`. False
    /// if nothing of it had failed.
    pub fn requeue_failed(&mut self, document_key: i64, now: i64) -> Result<bool> {
        let requeued = self.exec(
            "UPDATE jobs SET state = 'pending', attempts = 0, begun = 0, error = NULL, failure = NULL,
                    updated_at = ?3
              WHERE tenant_id = ?1 AND document_id = ?2 AND state = 'failed'
                AND kind != 'llm_extract'",
            params![self.tenant_id, document_key, now],
        )?;
        self.exec(
            "UPDATE documents SET state = 'pending', error = NULL
              WHERE tenant_id = ?1 AND id = ?2 AND state = 'failed'",
            params![self.tenant_id, document_key],
        )?;
        Ok(requeued > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{plain_document, temp_store};
    use crate::store::Tenant;
    use crate::store::{JobQueue, Store};

    /// Admits `n` documents whose jobs stay pending; returns their
    /// `(job_id, document_key)`.
    fn admitted(store: &Store, tenant: &Tenant, n: usize) -> Vec<(i64, i64)> {
        (0..n)
            .map(|i| {
                let doc = plain_document(format!("note {i}").into_bytes());
                store
                    .write(tenant, move |w| {
                        let a = w.admit(doc, 1)?;
                        Ok((a.job_id, a.document_key))
                    })
                    .unwrap()
            })
            .collect()
    }

    fn marks(store: &Store) -> Vec<(bool, i64)> {
        let jobs = store.pending_jobs(JobQueue::Indexing, 100).unwrap();
        jobs.iter().map(|j| (j.begun, j.attempts)).collect()
    }

    fn begin(store: &Store, tenant: &Tenant, keys: &[(i64, i64)], alone: bool) -> Vec<Attempt> {
        excused(store, tenant, keys, alone, 0)
    }

    fn excused(
        store: &Store,
        tenant: &Tenant,
        keys: &[(i64, i64)],
        alone: bool,
        excused: i64,
    ) -> Vec<Attempt> {
        let keys: Vec<(i64, i64, i64)> = keys.iter().map(|&(j, d)| (j, d, excused)).collect();
        store
            .write(tenant, move |w| w.begin_attempts(&keys, alone, 2))
            .unwrap()
    }

    #[test]
    fn a_shared_batch_marks_its_jobs_begun_and_counts_no_attempt() {
        let (dir, store) = temp_store("journal-batch");
        let tenant = Tenant::new("t").unwrap();
        let keys = admitted(&store, &tenant, 3);
        assert_eq!(marks(&store), [(false, 0); 3]);
        for _ in 0..=MAX_JOB_ATTEMPTS {
            assert_eq!(begin(&store, &tenant, &keys, false), [Attempt::Begun; 3]);
        }
        assert_eq!(marks(&store), [(true, 0); 3]);
        // Taken back (the disk refused the batch's commit): back in a batch.
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        store
            .write(&tenant, move |w| w.end_attempts(&ids, false, 3))
            .unwrap();
        assert_eq!(marks(&store), [(false, 0); 3]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn only_attempts_begun_alone_count_and_the_last_one_fails_the_job() {
        let (dir, store) = temp_store("journal-alone");
        let tenant = Tenant::new("t").unwrap();
        let key = admitted(&store, &tenant, 1);
        for n in 1..=MAX_JOB_ATTEMPTS {
            assert_eq!(begin(&store, &tenant, &key, true), [Attempt::Begun]);
            assert_eq!(marks(&store), [(true, n)]);
        }
        // One taken back, one begun again: still within the bound.
        let id = vec![key[0].0];
        store
            .write(&tenant, move |w| w.end_attempts(&id, true, 3))
            .unwrap();
        assert_eq!(marks(&store), [(true, MAX_JOB_ATTEMPTS - 1)]);
        assert_eq!(begin(&store, &tenant, &key, true), [Attempt::Begun]);
        assert_eq!(begin(&store, &tenant, &key, true), [Attempt::GaveUp]);
        assert!(marks(&store).is_empty(), "failed, no longer pending");
        assert_eq!(begin(&store, &tenant, &key, true), [Attempt::Gone]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn excused_attempts_are_taken_back_when_the_job_is_begun_again() {
        let (dir, store) = temp_store("journal-excused");
        let tenant = Tenant::new("t").unwrap();
        let key = admitted(&store, &tenant, 1);
        for n in 1..=MAX_JOB_ATTEMPTS {
            assert_eq!(begin(&store, &tenant, &key, true), [Attempt::Begun]);
            assert_eq!(marks(&store), [(true, n)]);
        }
        // Every one of those ended on the disk and was not taken back: the
        // next begins alone, counted once, instead of failing the job.
        let all = MAX_JOB_ATTEMPTS;
        assert_eq!(excused(&store, &tenant, &key, true, all), [Attempt::Begun]);
        assert_eq!(marks(&store), [(true, 1)]);
        // Never below none.
        assert_eq!(excused(&store, &tenant, &key, false, 5), [Attempt::Begun]);
        assert_eq!(marks(&store), [(true, 0)]);
        std::fs::remove_dir_all(dir).ok();
    }
}
