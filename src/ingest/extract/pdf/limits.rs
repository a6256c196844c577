//! Resource limits that keep hostile PDFs from exhausting memory or time.
//!
//! Every limit has a named constant (the production value) and a field in
//! [`Limits`], so tests can exercise the exact edge of each limit with small
//! inputs. [`Budget`] tracks the limits that are cumulative over a whole
//! document (decompressed bytes, interpreted content bytes).

use std::cell::Cell;

use super::error::{Limit, LimitKind, PdfError};

/// Largest PDF file accepted at all.
pub const MAX_INPUT_BYTES: usize = 256 << 20;
/// Largest decoded size of a single stream (stops decompression bombs early).
pub const MAX_STREAM_DECODED_BYTES: usize = 64 << 20;
/// Largest decoded size of all streams of one document taken together
/// (the same stream counts each time it is decoded again).
pub const MAX_TOTAL_DECODED_BYTES: usize = 256 << 20;
/// Longest content of one page: its `/Contents` streams decoded and
/// joined. The parts are joined before they are read (a token may
/// straddle two), so this bounds what one page holds in memory however
/// often its parts repeat one stream.
pub const MAX_PAGE_CONTENT_BYTES: usize = 64 << 20;
/// Most objects a cross-reference table (or the recovery scan) may declare.
pub const MAX_OBJECTS: usize = 2_000_000;
/// Deepest nesting of arrays and dictionaries, and of the page tree.
pub const MAX_NESTING_DEPTH: usize = 64;
/// Most pages a document may have.
pub const MAX_PAGES: usize = 20_000;
/// Largest extracted text (UTF-8 bytes, all pages): four times the largest
/// input (`MAX_CONTENT_BYTES`), far more than any real 4 MiB PDF holds,
/// while a compressed "text bomb" cannot make the store chunk, embed and
/// index tens of megabytes from one upload.
pub const MAX_TEXT_BYTES: usize = 16 << 20;
/// Most content-stream bytes interpreted per document, counting every time a
/// form XObject is drawn again. Bounds "draw this form 1000 times" chains.
pub const MAX_INTERPRETED_BYTES: usize = 1 << 30;

/// Fixed structural limits that need no tuning, so they are not in [`Limits`].
///
/// Indirect-reference hops and nested object loads followed at once.
pub(super) const MAX_RESOLVE_DEPTH: usize = 32;
/// Sections followed along a `/Prev` chain of incremental updates.
pub(super) const MAX_XREF_SECTIONS: usize = 1024;
/// Nested form XObjects (`Do` inside a form inside a form ...).
pub(super) const MAX_FORM_DEPTH: usize = 16;
/// Nested `q` (save graphics state) kept on the stack.
pub(super) const MAX_GSTATE_DEPTH: usize = 256;
/// Operands kept for one content-stream operator; real operators need <= 6
/// (arrays count as one), so anything longer is garbage.
pub(super) const MAX_OPERANDS: usize = 64;

/// Tunable limits; [`Limits::default`] gives the `MAX_*` constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub max_input_bytes: usize,
    pub max_stream_decoded_bytes: usize,
    pub max_total_decoded_bytes: usize,
    pub max_page_content_bytes: usize,
    pub max_objects: usize,
    pub max_nesting_depth: usize,
    pub max_pages: usize,
    pub max_text_bytes: usize,
    pub max_interpreted_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: MAX_INPUT_BYTES,
            max_stream_decoded_bytes: MAX_STREAM_DECODED_BYTES,
            max_total_decoded_bytes: MAX_TOTAL_DECODED_BYTES,
            max_page_content_bytes: MAX_PAGE_CONTENT_BYTES,
            max_objects: MAX_OBJECTS,
            max_nesting_depth: MAX_NESTING_DEPTH,
            max_pages: MAX_PAGES,
            max_text_bytes: MAX_TEXT_BYTES,
            max_interpreted_bytes: MAX_INTERPRETED_BYTES,
        }
    }
}

/// Builds the error for an exceeded limit.
pub(super) fn too_large(kind: LimitKind, max: usize) -> PdfError {
    PdfError::TooLarge(Limit { kind, max })
}

/// Cumulative per-document counters checked against [`Limits`].
#[derive(Debug)]
pub(super) struct Budget {
    decoded: Cell<usize>,
    interpreted: Cell<usize>,
    max_decoded: usize,
    max_interpreted: usize,
}

impl Budget {
    pub(super) fn new(limits: &Limits) -> Self {
        Budget {
            decoded: Cell::new(0),
            interpreted: Cell::new(0),
            max_decoded: limits.max_total_decoded_bytes,
            max_interpreted: limits.max_interpreted_bytes,
        }
    }

    /// Bytes that may still be decoded before the total limit is exceeded.
    pub(super) fn decoded_remaining(&self) -> usize {
        self.max_decoded - self.decoded.get()
    }

    /// Records `n` decoded bytes; fails once the total would pass the limit.
    pub(super) fn charge_decoded(&self, n: usize) -> Result<(), PdfError> {
        let total = self.decoded.get().saturating_add(n);
        if total > self.max_decoded {
            return Err(too_large(LimitKind::DecodedBytes, self.max_decoded));
        }
        self.decoded.set(total);
        Ok(())
    }

    /// Records `n` content bytes about to be interpreted.
    pub(super) fn charge_interpreted(&self, n: usize) -> Result<(), PdfError> {
        let total = self.interpreted.get().saturating_add(n);
        if total > self.max_interpreted {
            return Err(too_large(LimitKind::Work, self.max_interpreted));
        }
        self.interpreted.set(total);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_constants() {
        let l = Limits::default();
        assert_eq!(l.max_input_bytes, MAX_INPUT_BYTES);
        assert_eq!(l.max_stream_decoded_bytes, MAX_STREAM_DECODED_BYTES);
        assert_eq!(l.max_total_decoded_bytes, MAX_TOTAL_DECODED_BYTES);
        assert_eq!(l.max_page_content_bytes, MAX_PAGE_CONTENT_BYTES);
        assert_eq!(l.max_objects, MAX_OBJECTS);
        assert_eq!(l.max_nesting_depth, MAX_NESTING_DEPTH);
        assert_eq!(l.max_pages, MAX_PAGES);
        assert_eq!(l.max_text_bytes, MAX_TEXT_BYTES);
        assert_eq!(l.max_interpreted_bytes, MAX_INTERPRETED_BYTES);
    }

    #[test]
    fn budget_allows_exactly_the_limit() {
        let limits = Limits {
            max_total_decoded_bytes: 10,
            max_interpreted_bytes: 5,
            ..Limits::default()
        };
        let b = Budget::new(&limits);
        assert!(b.charge_decoded(4).is_ok());
        assert!(b.charge_decoded(6).is_ok());
        assert_eq!(b.decoded_remaining(), 0);
        assert!(b.charge_decoded(1).is_err());
        assert!(b.charge_interpreted(5).is_ok());
        assert!(b.charge_interpreted(1).is_err());
    }
}
