//! When the ingestion worker takes its next batch of jobs: at once when a
//! document arrives alone, after a short gathering while documents stream
//! in, and, while the writer still holds the previous batch, once that
//! batch is committed; so one indexing commit carries many of them.
//!
//! Documents stream in when jobs were already waiting as the last batch
//! was taken or committed. A job that arrives after the worker found the
//! journal empty with nothing uncommitted is taken at once however soon
//! after the last batch: a client writing one document at a time and
//! waiting for each would otherwise pay the whole gather wait on every
//! write, for company that cannot come.

use std::time::{Duration, Instant};

use super::worker::JOB_BATCH;

/// While documents stream in, a batch waits until it holds this many jobs
/// or its first job has waited [`GATHER_WAIT`]. One commit of many
/// documents writes fewer, larger full-text segments (less merging later)
/// and dirties each hot index page once: at 10k Zipf documents, batches of
/// ~19 documents became ~63, and the writer's time per document fell 10%.
pub const GATHER_JOBS: usize = 64;

/// Longest a job waits for others to join its batch.
pub const GATHER_WAIT: Duration = Duration::from_millis(8);

/// Documents are streaming in when the last batch was taken less than
/// this long ago; otherwise a job is taken at once, so a lone ingest is
/// indexed without delay.
pub const STREAMING_GAP: Duration = Duration::from_millis(50);

/// When to take a batch of jobs (see [`GATHER_JOBS`]).
#[derive(Default)]
pub(super) struct Gather {
    /// When the last batch was taken.
    last_batch: Option<Instant>,
    /// When jobs were first seen waiting for the next batch.
    since: Option<Instant>,
    /// The worker found no job ready and none uncommitted since the last
    /// batch was taken: whatever arrives next arrives alone.
    drained: bool,
}

impl Gather {
    /// How long to wait for more jobs before looking again, or `None` to
    /// take the `ready` jobs now (or to idle, when there are none).
    /// `uncommitted`: jobs of earlier batches the writer has not committed.
    pub(super) fn wait(&mut self, ready: usize, uncommitted: usize) -> Option<Duration> {
        let now = Instant::now();
        if ready == 0 {
            self.drained |= uncommitted == 0;
            self.since = None;
            return None;
        }
        // A batch handed over now would mostly wait behind the one the
        // writer holds; gathered until that one commits it is larger, and
        // one commit of many documents writes each hot page once. On
        // entity-rich text batches were ~20 documents (each admission
        // commit released about that many) with ~850 log pages per commit.
        if ready < JOB_BATCH && uncommitted > 0 {
            self.since.get_or_insert(now);
            return Some(BEHIND_STEP);
        }
        let streaming = !self.drained
            && self
                .last_batch
                .is_some_and(|at| now.duration_since(at) < STREAMING_GAP);
        if ready < GATHER_JOBS && streaming {
            let since = *self.since.get_or_insert(now);
            let left = GATHER_WAIT.saturating_sub(now.duration_since(since));
            if !left.is_zero() {
                return Some(left.min(GATHER_STEP));
            }
        }
        self.last_batch = Some(now);
        self.drained = false;
        self.since = None;
        None
    }
}

/// How often a gathering batch looks for more jobs.
const GATHER_STEP: Duration = Duration::from_millis(2);

/// Longest wait between two looks while a batch gathers behind an
/// uncommitted one (the worker is woken sooner when that one commits).
const BEHIND_STEP: Duration = Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_job_is_taken_at_once() {
        let mut gather = Gather::default();
        assert_eq!(gather.wait(1, 0), None);
    }

    #[test]
    fn while_streaming_a_small_batch_waits_up_to_the_gather_wait() {
        let mut gather = Gather::default();
        assert_eq!(gather.wait(GATHER_JOBS, 0), None, "a full batch goes now");
        // The next jobs arrive right after: they wait for company...
        let first = gather.wait(3, 0).expect("gathers");
        assert!(first <= GATHER_STEP);
        let started = Instant::now();
        while gather.wait(3, 0).is_some() {
            std::thread::sleep(GATHER_STEP);
            assert!(started.elapsed() < Duration::from_secs(1), "never gave up");
        }
        // ...for GATHER_WAIT in all (counted from the first look).
        assert!(started.elapsed() + GATHER_STEP >= GATHER_WAIT);
        // A full batch never waits.
        assert_eq!(gather.wait(GATHER_JOBS, 0), None);
    }

    #[test]
    fn a_job_arriving_after_the_journal_was_found_empty_is_taken_at_once() {
        let mut gather = Gather::default();
        assert_eq!(gather.wait(1, 0), None, "a write, taken at once");
        // It commits; the worker looks and finds nothing: drained.
        assert_eq!(gather.wait(0, 0), None);
        // The client's next write, right after: no company is coming.
        assert_eq!(gather.wait(1, 0), None);
        // Jobs found waiting as that batch was taken gather as before.
        assert!(gather.wait(2, 0).is_some());
        // An empty look while a batch is uncommitted is not drained.
        let mut gather = Gather::default();
        assert_eq!(gather.wait(GATHER_JOBS, 0), None);
        assert_eq!(gather.wait(0, GATHER_JOBS), None);
        assert!(gather.wait(3, 0).is_some(), "still streaming");
    }

    #[test]
    fn after_a_pause_jobs_are_taken_at_once_again() {
        let mut gather = Gather::default();
        assert_eq!(gather.wait(GATHER_JOBS, 0), None);
        std::thread::sleep(STREAMING_GAP + GATHER_STEP);
        assert_eq!(gather.wait(1, 0), None);
        // No jobs: nothing to gather, and no batch was taken.
        assert_eq!(gather.wait(0, 0), None);
    }

    #[test]
    fn behind_an_uncommitted_batch_jobs_gather_until_it_commits_or_a_batch_is_full() {
        let mut gather = Gather::default();
        assert_eq!(
            gather.wait(GATHER_JOBS, 0),
            None,
            "the batch the writer holds"
        );
        // Even a lone job waits while that batch is uncommitted...
        assert_eq!(gather.wait(1, GATHER_JOBS), Some(BEHIND_STEP));
        assert_eq!(gather.wait(JOB_BATCH - 1, GATHER_JOBS), Some(BEHIND_STEP));
        // ...and the gathered jobs go once it commits (the gather wait, counted
        // from the first look, is over by then).
        std::thread::sleep(GATHER_WAIT);
        assert_eq!(gather.wait(5, 0), None);
        // A whole batch cannot grow by waiting: it goes even behind another.
        assert_eq!(gather.wait(JOB_BATCH, GATHER_JOBS), None);
        // Nothing ready: nothing to wait for.
        assert_eq!(gather.wait(0, GATHER_JOBS), None);
    }
}
