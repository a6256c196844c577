//! The order in which an import's store threads queue their documents'
//! admissions: the order of the file's lines.
//!
//! Store threads prepare lines (extraction, chunking, embedding) in
//! parallel, but each waits for its line's turn before it queues the
//! admission on the writer, and the writer admits what is queued in the
//! order it came. So documents are journalled, and indexed, in file order
//! as when lines were stored one at a time: a relation line's document
//! comes after the entity lines before it, and a key repeated in the file
//! is first stored by its first line.
//!
//! Every line of the window (see `window`) has a sequence number and
//! passes its turn exactly once: after queueing its admission, or when it
//! has none to queue (already present, refused, read as a skip). A [`Turn`]
//! passes when dropped, so no path (an early return, a panic) can leave the
//! lines after it waiting.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The turns of the lines in flight.
#[derive(Default)]
pub struct FileOrder {
    state: Mutex<Turns>,
    passed: Condvar,
}

#[derive(Default)]
struct Turns {
    /// The first line that has not passed its turn: its turn is now.
    next: usize,
    /// Lines after `next` that passed already (they had nothing to
    /// queue); at most the window's lines.
    early: BTreeSet<usize>,
}

impl FileOrder {
    /// The turn of line `seq` (a sequence number given once, in file order).
    pub fn turn(&self, seq: usize) -> Turn<'_> {
        Turn { order: self, seq }
    }

    /// Line `seq` passed its turn; the turn moves past every line that
    /// passed early.
    fn pass(&self, seq: usize) {
        let mut turns = self.lock();
        turns.early.insert(seq);
        loop {
            let next = turns.next;
            if !turns.early.remove(&next) {
                break;
            }
            turns.next += 1;
        }
        drop(turns);
        self.passed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Turns> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One line's turn; passes when dropped.
pub struct Turn<'a> {
    order: &'a FileOrder,
    seq: usize,
}

impl Turn<'_> {
    /// Blocks until every line before this one has passed its turn. The
    /// lines before it are all held by other store threads (or already
    /// passed), which never wait on a later line, so the wait ends.
    pub fn wait(&self) {
        let mut turns = self.order.lock();
        while turns.next < self.seq {
            turns = self
                .order
                .passed
                .wait(turns)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.order.pass(self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn lines_take_their_turns_in_order_whatever_order_they_come_in() {
        let order = FileOrder::default();
        let queued = Mutex::new(Vec::new());
        let next = AtomicUsize::new(0);
        // Eight threads take lines 0..64; every third line has nothing to
        // queue and passes without waiting; the others wait, then queue.
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| loop {
                    let seq = next.fetch_add(1, Ordering::SeqCst);
                    if seq >= 64 {
                        break;
                    }
                    let turn = order.turn(seq);
                    if seq.is_multiple_of(3) {
                        continue;
                    }
                    std::thread::sleep(std::time::Duration::from_micros((64 - seq as u64) * 20));
                    turn.wait();
                    queued.lock().unwrap().push(seq);
                });
            }
        });
        let queued = queued.into_inner().unwrap();
        let want: Vec<usize> = (0..64).filter(|s| s % 3 != 0).collect();
        assert_eq!(queued, want);
        assert!(order.lock().early.is_empty());
        assert_eq!(order.lock().next, 64);
    }
}
