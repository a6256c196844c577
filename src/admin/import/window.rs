//! The lines of an import in flight: read, not yet accounted for.
//!
//! The reader opens a slot for every line that has an outcome to report
//! (a document to store, or a skip), in file order; store threads finish
//! lines in any order, and the window hands the outcomes to the [`Tally`]
//! in file order, so skips are listed by line number and a disk fault is
//! reported at the first line it stopped. Memory is bounded: at most
//! [`MAX_IMPORT_LINES_IN_FLIGHT`] lines and [`MAX_IMPORT_BYTES_IN_FLIGHT`]
//! bytes of them are held at once (a longer line waits for the window to
//! empty, and then goes alone).

use std::collections::{BTreeMap, HashSet};

use super::{Outcome, Tally};
use crate::limits::{MAX_IMPORT_BYTES_IN_FLIGHT, MAX_IMPORT_LINES_IN_FLIGHT};

/// A line in flight.
struct Slot {
    /// Its line number in the file.
    number: usize,
    /// The bytes of the line, held while it is in flight.
    bytes: usize,
    /// The document id it asks to keep (an export's), if any.
    restored: Option<String>,
    outcome: Option<Outcome>,
}

#[derive(Default)]
pub struct Window {
    /// The sequence number the next slot gets.
    next_seq: usize,
    /// Slots by sequence number, from the first not yet accounted for.
    slots: BTreeMap<usize, Slot>,
    bytes: usize,
    /// Document ids that lines in flight ask to keep.
    restored: HashSet<String>,
}

impl Window {
    /// Whether a line of `bytes` may be opened now: within both bounds,
    /// or alone.
    pub fn has_room(&self, bytes: usize) -> bool {
        self.slots.is_empty()
            || (self.slots.len() < MAX_IMPORT_LINES_IN_FLIGHT
                && self.bytes + bytes <= MAX_IMPORT_BYTES_IN_FLIGHT)
    }

    /// Opens a slot for line `number` of `bytes` (check [`Window::has_room`]
    /// first); returns its sequence number.
    pub fn open(&mut self, number: usize, bytes: usize, restored: Option<String>) -> usize {
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(id) = &restored {
            self.restored.insert(id.clone());
        }
        self.bytes += bytes;
        self.slots.insert(
            seq,
            Slot {
                number,
                bytes,
                restored,
                outcome: None,
            },
        );
        seq
    }

    /// Whether a line in flight asks to keep document id `id`: a later
    /// line asking for the same id gets a new one, as it would once the
    /// first is stored.
    pub fn restores(&self, id: &str) -> bool {
        self.restored.contains(id)
    }

    /// Line `seq` is done; every line done up to the first still in flight
    /// goes to `tally`, in file order.
    pub fn close(&mut self, seq: usize, outcome: Outcome, tally: &mut Tally) {
        if let Some(slot) = self.slots.get_mut(&seq) {
            slot.outcome = Some(outcome);
        }
        while let Some(entry) = self.slots.first_entry() {
            if entry.get().outcome.is_none() {
                break;
            }
            let slot = entry.remove();
            self.bytes -= slot.bytes;
            if let Some(id) = &slot.restored {
                self.restored.remove(id);
            }
            if let Some(outcome) = slot.outcome {
                tally.record(slot.number, outcome);
            }
        }
    }

    /// Whether every line opened is accounted for.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_IMPORT_LINE_BYTES;

    #[test]
    fn outcomes_reach_the_tally_in_file_order() {
        let mut window = Window::default();
        let mut tally = Tally::default();
        let a = window.open(1, 10, None);
        let b = window.open(2, 10, None);
        let c = window.open(4, 10, None);
        let skip = |why: &str| Outcome::Skipped {
            code: "invalid_input",
            reason: why.to_string(),
        };
        window.close(c, skip("fourth"), &mut tally);
        window.close(b, skip("second"), &mut tally);
        assert_eq!(tally.skipped, 0, "line 1 is still in flight");
        window.close(a, Outcome::Imported, &mut tally);
        assert!(window.is_empty());
        assert_eq!(tally.imported, 1);
        assert_eq!(
            tally.listed,
            [(2, "second".to_string()), (4, "fourth".to_string())]
        );
    }

    #[test]
    fn lines_in_flight_are_bounded_in_number_and_bytes() {
        let mut window = Window::default();
        let mut tally = Tally::default();
        // Up to MAX_IMPORT_LINES_IN_FLIGHT lines, and not one more.
        for n in 0..MAX_IMPORT_LINES_IN_FLIGHT {
            assert!(window.has_room(1), "line {n}");
            window.open(n + 1, 1, None);
        }
        assert!(!window.has_room(1));
        window.close(0, Outcome::Imported, &mut tally);
        assert!(window.has_room(1));
        for seq in 1..MAX_IMPORT_LINES_IN_FLIGHT {
            window.close(seq, Outcome::Imported, &mut tally);
        }
        assert!(window.is_empty());
        // Up to MAX_IMPORT_BYTES_IN_FLIGHT bytes, and not one more...
        let first = window.open(1, MAX_IMPORT_BYTES_IN_FLIGHT - 10, None);
        assert!(window.has_room(10));
        assert!(!window.has_room(11));
        window.close(first, Outcome::Imported, &mut tally);
        // ...but a line longer than the window's bytes still goes, alone
        // (the longest line read fits several times over).
        const { assert!(MAX_IMPORT_LINE_BYTES * 4 <= MAX_IMPORT_BYTES_IN_FLIGHT) };
        let long = MAX_IMPORT_BYTES_IN_FLIGHT + 1;
        assert!(window.has_room(long));
        let seq = window.open(2, long, None);
        assert!(!window.has_room(1));
        window.close(seq, Outcome::Imported, &mut tally);
        assert!(window.has_room(1));
    }

    #[test]
    fn a_restored_id_is_in_flight_until_its_line_is_accounted_for() {
        let mut window = Window::default();
        let mut tally = Tally::default();
        let seq = window.open(1, 1, Some("doc_1".into()));
        assert!(window.restores("doc_1"));
        window.close(seq, Outcome::Imported, &mut tally);
        assert!(!window.restores("doc_1"));
    }
}
