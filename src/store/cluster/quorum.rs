//! Whether the cluster has a quorum, as this node last found it, and what
//! an operator hears of it.
//!
//! A cluster that loses its quorum is an expected fault (two of three
//! nodes down, a partition), and every write and every look at the log
//! during it fails the same way. So it is one warning when the node first
//! finds no leader, one note when a leader answers again (with how long
//! it was gone), and nothing in between but debug lines. What proves a
//! quorum is a request that went through consensus: a write, or a read at
//! the consensus level; a leader-level read may still be answered by a
//! leader that is cut off and does not know it yet, so it only ever
//! reports a loss.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::client::ClusterError;

/// How often a node that found no leader, and has nothing to write, asks
/// again whether the cluster has one (a consensus read): what brings the
/// recovery note, and the usage rows held back meanwhile, without waiting
/// for a write.
pub const QUORUM_PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// The quorum as this node last found it.
#[derive(Default)]
pub struct Quorum {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Since when no request found a leader, while none has since.
    lost_since: Option<Instant>,
    /// When the cluster was last asked whether it has a leader again.
    probed: Option<Instant>,
}

impl Quorum {
    /// A request went through consensus: the cluster has a leader.
    pub fn reached(&self) {
        let lost = self.lock().lost_since.take();
        if let Some(since) = lost {
            log::info!(
                "the cluster has a leader again after {:.1} s without one: writes are accepted",
                since.elapsed().as_secs_f64()
            );
        }
    }

    /// A request failed with `e`: when that says there is no leader (or
    /// no node answered), the quorum is lost until a request reaches one.
    pub fn failed(&self, e: &ClusterError) {
        if !e.is_transient() {
            return;
        }
        let mut state = self.lock();
        if state.lost_since.is_some() {
            log::debug!("still no leader: {e}");
            return;
        }
        state.lost_since = Some(Instant::now());
        state.probed = Some(Instant::now());
        log::warn!(
            "the cluster has no leader ({e}): writes are refused with 503 until it elects one; \
             reads go on from this node's replica"
        );
    }

    /// Whether the last request found no leader (and none has since).
    pub fn lost(&self) -> bool {
        self.lock().lost_since.is_some()
    }

    /// Whether to ask the cluster again if it has a leader: the quorum is
    /// lost and the last ask was [`QUORUM_PROBE_INTERVAL`] ago. Counts as
    /// asking.
    pub fn probe_due(&self) -> bool {
        let mut state = self.lock();
        let due = state.lost_since.is_some()
            && state
                .probed
                .is_none_or(|at| at.elapsed() >= QUORUM_PROBE_INTERVAL);
        if due {
            state.probed = Some(Instant::now());
        }
        due
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_fault_that_says_no_leader_loses_the_quorum_and_a_success_ends_it() {
        let q = Quorum::default();
        q.failed(&ClusterError::Rejected("no such table".into()));
        assert!(!q.lost());
        q.failed(&ClusterError::NoQuorum("leader not found".into()));
        assert!(q.lost());
        // Just lost: asked already.
        assert!(!q.probe_due());
        q.failed(&ClusterError::Unreachable("refused".into()));
        assert!(q.lost());
        q.reached();
        assert!(!q.lost());
        assert!(!q.probe_due());
    }
}
