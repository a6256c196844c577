//! Leases on the cluster: the turn to write, and the background chores.
//!
//! Several nodes may write one memory. A node takes the turn
//! (`cluster_turn`, one row) before a batch, keeps it while it stays busy
//! for up to [`TURN_MAX_HOLD`], and gives it back when idle, so two busy
//! nodes alternate rather than keep taking each other's log numbers.
//! Chores that one node should do at a time (pruning the log) are claimed
//! the same way, a row each in `cluster_chores`. A lease is held until its
//! `until_ms` by the clock of the node that took it; a node that dies
//! holding one delays the others for the lease at most.
//!
//! Leases are for progress only: what keeps writes safe is the log's `seq`
//! ([`super::replica`]). Every request here is bounded by [`TURN_LEASE`],
//! so taking a lease never holds a write up for long.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::client::{ClusterClient, ClusterError};
use super::quorum::Quorum;
use super::wire::{Param, Statement};
use crate::limits::{CLUSTER_RETRY_PAUSE, CLUSTER_WRITE_WAIT};

/// Whose turn it is to write: one row, held by a node until `until_ms`
/// (its clock). Taking turns is for progress, not safety (the log's `seq`
/// is that): without it two busy nodes would keep taking each other's
/// numbers, and one of them would have to refuse its batch each time.
pub const TURN_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_turn (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    holder   TEXT    NOT NULL,
    until_ms INTEGER NOT NULL
)";

/// Who does each background chore (`Replicator::claim_chore`): one row
/// per chore, held by a node until `until_ms` (its clock), like a turn.
pub const CHORES_TABLE: &str = "CREATE TABLE IF NOT EXISTS cluster_chores (
    name     TEXT    PRIMARY KEY,
    holder   TEXT    NOT NULL,
    until_ms INTEGER NOT NULL
)";

/// How long a turn lasts unless renewed (a node that dies holding it
/// delays the others this long at most).
pub const TURN_LEASE: Duration = Duration::from_millis(1000);

/// Longest a busy node keeps the turn before giving it back, so that
/// another busy node gets its own.
pub const TURN_MAX_HOLD: Duration = Duration::from_millis(200);

/// How long a node keeps a turn with nothing to write. Giving it back at
/// once, whenever the queue ran empty, cost two more round trips per batch
/// (give back, take again) to a node whose clients wait for each answer
/// before they send again.
pub const TURN_IDLE: Duration = Duration::from_millis(10);

/// How often a node waiting for the turn asks again.
const TURN_POLL: Duration = Duration::from_millis(5);

/// The turn this node holds, if any.
#[derive(Default)]
struct Turn {
    since: Option<Instant>,
    until: Option<Instant>,
    /// The log was followed while this turn was held: nobody else can have
    /// written since, so the next batch need not look.
    caught_up: bool,
}

/// This node's leases on one cluster.
pub(super) struct Leases {
    /// The cluster, with requests bounded by [`TURN_LEASE`].
    client: ClusterClient,
    /// The holder name this node writes (its batches' prefix).
    node: String,
    turn: Mutex<Turn>,
}

impl Leases {
    pub(super) fn new(cluster: &ClusterClient, node: String) -> Result<Leases, ClusterError> {
        Ok(Leases {
            client: ClusterClient::new(cluster.address().clone(), TURN_LEASE)
                .map_err(ClusterError::Protocol)?,
            node,
            turn: Mutex::new(Turn::default()),
        })
    }

    /// Waits, until `leader` (the batch's leader deadline), for this
    /// node's turn to write (renewing one it holds); no request outlives
    /// `answer`. Without it the batch still runs: its
    /// commit is then refused if another node took its number. Returns
    /// whether the log need not be followed first (the turn was held, and
    /// the log followed, without a break), or why no node could be asked
    /// at all: the cluster had no leader for the whole wait.
    pub(super) fn take_turn(
        &self,
        quorum: &Quorum,
        leader: Instant,
        answer: Instant,
    ) -> Result<bool, ClusterError> {
        let mut turn = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if let (Some(since), Some(until)) = (turn.since, turn.until) {
            if now.duration_since(since) < TURN_MAX_HOLD && until > now + TURN_LEASE / 2 {
                return Ok(turn.caught_up);
            }
            if now.duration_since(since) >= TURN_MAX_HOLD {
                // Held long enough: give it back, and let a waiting node in.
                self.release(&mut turn);
                std::thread::sleep(TURN_POLL * 4);
            }
        }
        loop {
            let asked = Instant::now();
            let now_ms = crate::clock::now_ms();
            let taken = self.client.transaction_by(
                &[Statement::new(
                    "UPDATE cluster_turn SET holder = ?, until_ms = ? \
                     WHERE id = 1 AND (holder = ? OR until_ms < ?)",
                    vec![
                        self.node.clone().into(),
                        Param::Int(now_ms + TURN_LEASE.as_millis() as i64),
                        self.node.clone().into(),
                        Param::Int(now_ms),
                    ],
                )],
                Some(answer),
            );
            let mut pause = TURN_POLL;
            let failed = match taken {
                Ok(done) if done.first().is_some_and(|d| d.rows_affected == 1) => {
                    quorum.reached();
                    turn.since.get_or_insert(asked);
                    turn.until = Some(asked + TURN_LEASE);
                    turn.caught_up = false;
                    return Ok(false);
                }
                // Another node holds it: the cluster answered.
                Ok(_) => {
                    quorum.reached();
                    None
                }
                Err(e) if e.is_transient() => {
                    quorum.failed(&e);
                    // No leader answers the next ask in 5 ms either.
                    pause = CLUSTER_RETRY_PAUSE;
                    Some(e)
                }
                Err(e) => {
                    log::warn!("cannot take the turn to write: {e}");
                    return Ok(false);
                }
            };
            if Instant::now() + pause >= leader {
                return match failed {
                    Some(e) => Err(e),
                    None => {
                        log::warn!("no turn to write within {CLUSTER_WRITE_WAIT:?}");
                        Ok(false)
                    }
                };
            }
            std::thread::sleep(pause);
        }
    }

    /// Gives back the turn this node holds, if any.
    pub(super) fn give_back(&self) {
        self.release(&mut self.turn.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// The log was followed while the turn is held: the next batch need not
    /// look again unless the turn is lost meanwhile.
    pub(super) fn caught_up(&self) {
        let mut turn = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        turn.caught_up = turn.since.is_some();
    }

    /// Whether this node holds the turn.
    pub(super) fn holding(&self) -> bool {
        self.turn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .since
            .is_some()
    }

    fn release(&self, turn: &mut Turn) {
        turn.caught_up = false;
        if turn.since.take().is_none() {
            return;
        }
        turn.until = None;
        let released = self.client.transaction(&[Statement::new(
            "UPDATE cluster_turn SET until_ms = 0 WHERE id = 1 AND holder = ?",
            vec![self.node.clone().into()],
        )]);
        if let Err(e) = released {
            log::debug!("turn not given back (it lapses): {e}");
        }
    }

    /// Claims chore `name` for `lease` (or renews this node's claim):
    /// whether this node is to do it.
    pub(super) fn claim_chore(&self, name: &str, lease: Duration) -> bool {
        let now_ms = crate::clock::now_ms();
        let claimed = self.client.transaction(&[Statement::new(
            "INSERT INTO cluster_chores(name, holder, until_ms) VALUES (?, ?, ?) \
             ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms \
             WHERE cluster_chores.holder = excluded.holder OR cluster_chores.until_ms < ?",
            vec![
                name.to_string().into(),
                self.node.clone().into(),
                Param::Int(now_ms + lease.as_millis() as i64),
                Param::Int(now_ms),
            ],
        )]);
        match claimed {
            Ok(done) => done.first().is_some_and(|d| d.rows_affected == 1),
            // Without a cluster to ask, nobody writes the chore's result.
            Err(e) => {
                log::debug!("chore {name} not claimed: {e}");
                false
            }
        }
    }
}
