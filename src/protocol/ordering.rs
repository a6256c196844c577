//! Read-your-writes within one MCP session.
//!
//! A client that pipelines requests on one connection (stdio, an SSE
//! stream) expects them to take effect in the order it sent them: a query
//! sent after an ingest sees that document, a query sent before a forget
//! still sees what was forgotten. Transports hand requests to a pool of
//! workers, so without a rule a later query could run first.
//!
//! The rule, per session. The transport issues a [`Ticket`] to every
//! request as it receives it, in arrival order, with its [`Kind`]: a read,
//! an ingest, or another write (forget, working-memory writes, promote).
//! An ingest is *applied* once its document is admitted (stored durably),
//! before it is indexed; any other request is applied when it finishes.
//! - A read runs once every earlier write is applied, so reads run side
//!   by side, and pipelined ingests do not wait for each other's indexing.
//! - An ingest runs once every earlier read and non-ingest write has
//!   finished, and every earlier ingest with the same idempotency key is
//!   applied. Ingests with different keys commute: they run side by side
//!   and are committed in groups, as from separate clients.
//! - Any other write runs once every earlier request is applied (earlier
//!   reads: finished).
//! - Before running, any request but an ingest also waits (at most
//!   [`READ_YOUR_WRITES_WAIT_MS`]) until the documents that this session's
//!   earlier ingests stored are searchable; if the bound is hit it runs
//!   anyway and its reply says how many are not. An ingest reads nothing,
//!   so a client storing one document after another with `wait: false`
//!   is never slowed to the pace of indexing.
//!
//! Other sessions are never waited for. Deadlock is impossible as long as
//! a transport hands tickets to its workers in the order it issued them
//! (a FIFO queue; [`SessionOrder::issue_then`] keeps issuing and handing
//! over atomic): a worker then only ever waits for requests that other
//! workers already hold. The wait for earlier requests is bounded all the
//! same, so a bug elsewhere costs ordering, never a hung session.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use crate::limits::READ_YOUR_WRITES_WAIT_MS;

/// One session's order of requests.
#[derive(Default)]
pub struct SessionOrder {
    state: Mutex<OrderState>,
    changed: Condvar,
    /// Held while a ticket is issued and handed to the workers.
    issuing: Mutex<()>,
}

/// What a request does to stored memory, for ordering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Changes nothing.
    Read,
    /// Stores one document (`alayasiki_ingest`), under this idempotency
    /// key if it has one.
    Ingest { key: Option<String> },
    /// Any other change (forget, working-memory writes, promote, a batch
    /// holding a write).
    Write,
}

/// A request issued and not finished.
struct Open {
    kind: Kind,
    applied: bool,
}

impl Open {
    /// Whether a request of `later` kind, issued after this one, must wait
    /// for it.
    fn holds_back(&self, later: &Kind) -> bool {
        match (&self.kind, later) {
            (Kind::Read, Kind::Read) => false,
            (Kind::Read, _) => true,
            (Kind::Write, _) => true,
            (Kind::Ingest { .. }, _) if self.applied => false,
            (Kind::Ingest { .. }, Kind::Read | Kind::Write) => true,
            (Kind::Ingest { key: mine }, Kind::Ingest { key: theirs }) => {
                mine.is_some() && mine == theirs
            }
        }
    }
}

#[derive(Default)]
struct OrderState {
    next: u64,
    /// Requests issued and not finished, by sequence.
    open: BTreeMap<u64, Open>,
    /// Documents this session's finished writes stored that may not be
    /// searchable yet (oldest first).
    unindexed: Vec<String>,
}

/// A request's place in its session's order. Dropping a ticket that was
/// never finished (a request refused before it ran) releases its place.
pub struct Ticket {
    order: Arc<SessionOrder>,
    seq: u64,
    kind: Kind,
    done: bool,
}

/// What waiting for a turn found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turn {
    /// Earlier requests still running when the bound ran out (0 normally).
    pub earlier_unfinished: usize,
    /// Documents this session stored earlier that this request may not
    /// see, because they were still being indexed when the bound ran out.
    pub unindexed: Vec<String>,
}

impl SessionOrder {
    pub fn new() -> Arc<SessionOrder> {
        Arc::new(SessionOrder::default())
    }

    /// Issues the next ticket and passes it to `hand_over` (which queues
    /// the request for a worker) while no other ticket of this session can
    /// be issued, so the workers receive tickets in order.
    pub fn issue_then<R>(self: &Arc<Self>, kind: Kind, hand_over: impl FnOnce(Ticket) -> R) -> R {
        let _issuing = self.issuing.lock().unwrap_or_else(|p| p.into_inner());
        hand_over(self.issue(kind))
    }

    /// Issues the next ticket. For a transport whose single reader queues
    /// requests in order by itself.
    pub fn issue(self: &Arc<Self>, kind: Kind) -> Ticket {
        let mut state = self.lock();
        let seq = state.next;
        state.next += 1;
        state.open.insert(
            seq,
            Open {
                kind: kind.clone(),
                applied: false,
            },
        );
        Ticket {
            order: self.clone(),
            seq,
            kind,
            done: false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, OrderState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn blocked(state: &OrderState, seq: u64, kind: &Kind) -> usize {
        state
            .open
            .range(..seq)
            .filter(|(_, earlier)| earlier.holds_back(kind))
            .count()
    }
}

impl Ticket {
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// An ingest's document is admitted (stored durably): later requests
    /// that only needed it stored may run, and later reads wait until it
    /// is searchable.
    pub fn applied(&self, doc_id: &str) {
        let mut state = self.order.lock();
        if let Some(open) = state.open.get_mut(&self.seq) {
            open.applied = true;
        }
        state.unindexed.push(doc_id.to_string());
        drop(state);
        self.order.changed.notify_all();
    }

    /// Waits until the requests this one must follow have finished, then
    /// until `searchable` says the session's earlier unindexed documents
    /// are searchable, all within [`READ_YOUR_WRITES_WAIT_MS`].
    ///
    /// `searchable(ids, deadline)` waits for documents oldest first and
    /// returns how many of `ids` (from the front) it confirmed.
    pub fn wait_turn(&self, searchable: impl FnOnce(&[String], Instant) -> usize) -> Turn {
        let deadline = Instant::now() + Duration::from_millis(READ_YOUR_WRITES_WAIT_MS);
        let order = &self.order;
        let mut state = order.lock();
        loop {
            let blocked = SessionOrder::blocked(&state, self.seq, &self.kind);
            let left = deadline.saturating_duration_since(Instant::now());
            if blocked == 0 || left.is_zero() {
                if blocked > 0 {
                    log::warn!(
                        "request ran before {blocked} earlier request(s) of its session finished \
                         (READ_YOUR_WRITES_WAIT_MS)"
                    );
                }
                let earlier_unfinished = blocked;
                let pending = match self.kind {
                    Kind::Ingest { .. } => Vec::new(),
                    _ => state.unindexed.clone(),
                };
                drop(state);
                let confirmed = if pending.is_empty() {
                    0
                } else {
                    searchable(&pending, deadline).min(pending.len())
                };
                if confirmed > 0 {
                    let mut state = order.lock();
                    // Only the confirmed prefix is dropped: writes that
                    // finished meanwhile appended after it.
                    let drop_n = state
                        .unindexed
                        .iter()
                        .zip(&pending[..confirmed])
                        .take_while(|(a, b)| a == b)
                        .count();
                    state.unindexed.drain(..drop_n);
                }
                return Turn {
                    earlier_unfinished,
                    unindexed: pending[confirmed..].to_vec(),
                };
            }
            state = order
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Ends the request; `unindexed` are documents it stored that may not
    /// be searchable yet, which later requests of the session wait for.
    pub fn finish(mut self, unindexed: Vec<String>) {
        self.release(unindexed);
    }

    fn release(&mut self, unindexed: Vec<String>) {
        if self.done {
            return;
        }
        self.done = true;
        let mut state = self.order.lock();
        state.open.remove(&self.seq);
        state.unindexed.extend(unindexed);
        drop(state);
        self.order.changed.notify_all();
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.release(Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &[String], _: Instant) -> usize {
        0
    }

    #[test]
    fn a_read_waits_for_an_earlier_write_but_not_for_an_earlier_read() {
        let order = SessionOrder::new();
        let write = order.issue(Kind::Write);
        let read = order.issue(Kind::Read);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            read.wait_turn(none);
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        write.finish(Vec::new());
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        t.join().unwrap();

        let first = order.issue(Kind::Read);
        let second = order.issue(Kind::Read);
        assert_eq!(second.wait_turn(none), Turn::default());
        drop(first);
    }

    #[test]
    fn a_write_waits_for_every_earlier_request() {
        let order = SessionOrder::new();
        let read = order.issue(Kind::Read);
        let write = order.issue(Kind::Write);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            write.wait_turn(none);
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        drop(read); // a refused request releases its place
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn ingests_with_different_keys_run_side_by_side_once_admitted_reads_follow() {
        let order = SessionOrder::new();
        let a = order.issue(Kind::Ingest { key: None });
        let b = order.issue(Kind::Ingest { key: None });
        // b need not wait for a at all.
        assert_eq!(b.wait_turn(none), Turn::default());
        // A read waits until a is applied (admitted) ...
        let read = order.issue(Kind::Read);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let turn = read.wait_turn(|ids, _| ids.len());
            tx.send(turn).unwrap();
        });
        b.applied("doc-b");
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        a.applied("doc-a");
        // ... not until it is indexed; it then waits for both documents.
        let turn = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(turn.unindexed.is_empty());
        t.join().unwrap();
        drop((a, b));
    }

    #[test]
    fn an_ingest_does_not_wait_for_earlier_documents_to_be_indexed() {
        let order = SessionOrder::new();
        let first = order.issue(Kind::Ingest { key: None });
        first.applied("d1");
        first.finish(Vec::new());
        let second = order.issue(Kind::Ingest { key: None });
        second.wait_turn(|_, _| panic!("an ingest waited for indexing"));
        // A read after them still does.
        drop(second);
        let read = order.issue(Kind::Read);
        let turn = read.wait_turn(|ids, _| {
            assert_eq!(ids, ["d1".to_string()]);
            1
        });
        assert!(turn.unindexed.is_empty());
    }

    #[test]
    fn an_ingest_waits_for_an_earlier_one_with_its_key_and_for_earlier_forgets() {
        let order = SessionOrder::new();
        let keyed = |k: &str| Kind::Ingest {
            key: Some(k.to_string()),
        };
        let first = order.issue(keyed("k"));
        let other = order.issue(keyed("other"));
        let same = order.issue(keyed("k"));
        assert_eq!(other.wait_turn(none), Turn::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            same.wait_turn(none);
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        first.applied("d");
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        t.join().unwrap();
        // A forget holds back every later ingest until it has finished.
        let forget = order.issue(Kind::Write);
        let after = order.issue(Kind::Ingest { key: None });
        assert_eq!(
            SessionOrder::blocked(&order.lock(), after.seq, after.kind()),
            1,
            "held back by the forget alone"
        );
        drop((forget, after, other));
    }

    #[test]
    fn later_requests_wait_for_documents_left_unindexed_and_say_what_they_miss() {
        let order = SessionOrder::new();
        let write = order.issue(Kind::Write);
        write.finish(vec!["d1".into(), "d2".into()]);
        let read = order.issue(Kind::Read);
        let turn = read.wait_turn(|ids, _| {
            assert_eq!(ids, ["d1".to_string(), "d2".to_string()]);
            1
        });
        assert_eq!(turn.unindexed, vec!["d2".to_string()]);
        // The confirmed one is not waited for again.
        let again = order.issue(Kind::Read);
        let turn = again.wait_turn(|ids, _| {
            assert_eq!(ids, ["d2".to_string()]);
            1
        });
        assert!(turn.unindexed.is_empty());
        let last = order.issue(Kind::Read);
        last.wait_turn(|_, _| panic!("nothing left to wait for"));
    }
}
