//! The store threads of an import: each takes a line's request, prepares
//! it (the extraction, chunking and embedding of `Memory::ingest`), waits
//! for the line's turn in file order ([`super::file_order`]) and queues its
//! admission on the writer. One receipt thread then waits for the queued
//! admissions' commits, in the order they were queued (the writer's).
//! No store thread waits for a commit, so the lines of the whole window
//! can be queued at once and the writer commits them in groups. The store
//! threads are as many as `ingest PATH` runs (several per core).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::file_order::FileOrder;
use super::Outcome;
use crate::error::Error;
use crate::service::{IngestRequest, Memory, QueuedIngest, Restore};

/// A line whose document is to be stored.
pub struct Line {
    /// Its sequence number in the window (and its turn).
    pub seq: usize,
    pub request: IngestRequest,
    pub restore: Restore,
}

/// The earliest line (sequence number) at which the disk refused a write:
/// lines after it queue nothing more. `usize::MAX` while none has.
pub struct Stop(AtomicUsize);

impl Default for Stop {
    fn default() -> Stop {
        Stop(AtomicUsize::new(usize::MAX))
    }
}

impl Stop {
    fn at(&self, seq: usize) {
        self.0.fetch_min(seq, Ordering::SeqCst);
    }

    /// Whether line `seq` comes after a line the disk refused.
    fn after(&self, seq: usize) -> bool {
        self.0.load(Ordering::SeqCst) < seq
    }

    /// Whether the disk refused a line.
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst) != usize::MAX
    }
}

/// What a store thread made of a line.
pub enum Stored {
    /// Its outcome is known (nothing queued).
    Done(Outcome),
    /// Its admission is queued; [`receipt`] waits for it.
    Queued(QueuedIngest),
}

/// Prepares one line's document and queues its admission in its turn.
pub fn store_line(memory: &Memory<'_>, line: Line, order: &FileOrder, stop: &Stop) -> Stored {
    let Line {
        seq,
        request,
        restore,
    } = line;
    // Passed on every return: the lines after this one never wait for it
    // in vain.
    let turn = order.turn(seq);
    if stop.after(seq) {
        return Stored::Done(Outcome::NotAttempted);
    }
    // A key stored before means this line was imported before: skip the
    // extraction and embedding ingestion would do before finding that out.
    if let Some(key) = &request.idempotency_key {
        if let Ok(Some(_)) = memory.document_for_key(key) {
            return Stored::Done(Outcome::AlreadyPresent);
        }
    }
    let prepared = match memory.prepare_ingest(request, restore) {
        Ok(p) => p,
        Err(e) => return Stored::Done(refused(e, seq, stop)),
    };
    turn.wait();
    if stop.after(seq) {
        return Stored::Done(Outcome::NotAttempted);
    }
    match memory.queue_ingest(prepared) {
        Ok(queued) => Stored::Queued(queued),
        Err(e) => Stored::Done(refused(e, seq, stop)),
    }
}

/// Waits for line `seq`'s queued admission to commit; a disk that refuses
/// it stops the lines after it (every later line would be refused the
/// same way).
pub fn receipt(memory: &Memory<'_>, queued: QueuedIngest, seq: usize, stop: &Stop) -> Outcome {
    match memory.ingest_receipt(queued) {
        Ok(r) if r.idempotent_replay => Outcome::AlreadyPresent,
        Ok(_) => Outcome::Imported,
        // The key is taken by a line before this one, still in flight when
        // this one was prepared: stored one after the other, this line
        // would have found the key stored, and a stored key is a line
        // already present, whatever its content.
        Err(Error::Conflict(_)) => Outcome::AlreadyPresent,
        Err(e) => refused(e, seq, stop),
    }
}

/// Runs `f` for one line; a panic in it (a bug) becomes the line's skip,
/// so that the lines after it are still stored and the report, which waits
/// for every line's outcome, still comes.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Outcome> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| Outcome::Skipped {
        code: "internal",
        reason: "internal error while storing this line (the log says more)".into(),
    })
}

/// The outcome of a line ingestion refused: skipped, or, when the disk
/// refused it, where the import stops.
fn refused(e: Error, seq: usize, stop: &Stop) -> Outcome {
    let e = e.logged("import");
    let reason = e.client_message();
    if e.storage_fault().is_some() {
        stop.at(seq);
        return Outcome::Stopped { reason };
    }
    Outcome::Skipped {
        code: e.code(),
        reason,
    }
}
