//! Read-your-writes within one MCP session.
//!
//! A client that pipelines requests on one connection (stdio, an SSE
//! stream) expects them to take effect in the order it sent them: a query
//! sent after an ingest sees that document, a query sent before a forget
//! still sees what was forgotten. Transports hand requests to a pool of
//! workers, so without a rule a later query could run first.
//!
//! The rule, per session:
//! - the transport issues a [`Ticket`] to every request as it receives it,
//!   in arrival order, marking whether it changes stored memory;
//! - a write runs once every request issued before it has finished;
//! - a read runs once every write issued before it has finished, so reads
//!   still run side by side;
//! - before running, any request also waits (at most
//!   [`READ_YOUR_WRITES_WAIT_MS`]) until the documents that this
//!   session's earlier writes stored with `wait: false` are searchable; if
//!   the bound is hit it runs anyway and its reply says how many are not.
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

#[derive(Default)]
struct OrderState {
    next: u64,
    /// Requests issued and not finished: sequence → is a write.
    open: BTreeMap<u64, bool>,
    /// Documents this session's finished writes stored that may not be
    /// searchable yet (oldest first).
    unindexed: Vec<String>,
}

/// A request's place in its session's order. Dropping a ticket that was
/// never finished (a request refused before it ran) releases its place.
pub struct Ticket {
    order: Arc<SessionOrder>,
    seq: u64,
    write: bool,
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
    pub fn issue_then<R>(self: &Arc<Self>, write: bool, hand_over: impl FnOnce(Ticket) -> R) -> R {
        let _issuing = self.issuing.lock().unwrap_or_else(|p| p.into_inner());
        hand_over(self.issue(write))
    }

    /// Issues the next ticket. For a transport whose single reader queues
    /// requests in order by itself.
    pub fn issue(self: &Arc<Self>, write: bool) -> Ticket {
        let mut state = self.lock();
        let seq = state.next;
        state.next += 1;
        state.open.insert(seq, write);
        Ticket {
            order: self.clone(),
            seq,
            write,
            done: false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, OrderState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn blocked(state: &OrderState, seq: u64, write: bool) -> usize {
        state
            .open
            .range(..seq)
            .filter(|(_, &earlier_write)| write || earlier_write)
            .count()
    }
}

impl Ticket {
    pub fn is_write(&self) -> bool {
        self.write
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
            let blocked = SessionOrder::blocked(&state, self.seq, self.write);
            let left = deadline.saturating_duration_since(Instant::now());
            if blocked == 0 || left.is_zero() {
                if blocked > 0 {
                    log::warn!(
                        "request ran before {blocked} earlier request(s) of its session finished \
                         (READ_YOUR_WRITES_WAIT_MS)"
                    );
                }
                let earlier_unfinished = blocked;
                let pending = state.unindexed.clone();
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
        let write = order.issue(true);
        let read = order.issue(false);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            read.wait_turn(none);
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        write.finish(Vec::new());
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        t.join().unwrap();

        let first = order.issue(false);
        let second = order.issue(false);
        assert_eq!(second.wait_turn(none), Turn::default());
        drop(first);
    }

    #[test]
    fn a_write_waits_for_every_earlier_request() {
        let order = SessionOrder::new();
        let read = order.issue(false);
        let write = order.issue(true);
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
    fn later_requests_wait_for_documents_left_unindexed_and_say_what_they_miss() {
        let order = SessionOrder::new();
        let write = order.issue(true);
        write.finish(vec!["d1".into(), "d2".into()]);
        let read = order.issue(false);
        let turn = read.wait_turn(|ids, _| {
            assert_eq!(ids, ["d1".to_string(), "d2".to_string()]);
            1
        });
        assert_eq!(turn.unindexed, vec!["d2".to_string()]);
        // The confirmed one is not waited for again.
        let again = order.issue(false);
        let turn = again.wait_turn(|ids, _| {
            assert_eq!(ids, ["d2".to_string()]);
            1
        });
        assert!(turn.unindexed.is_empty());
        let last = order.issue(false);
        last.wait_turn(|_, _| panic!("nothing left to wait for"));
    }
}
