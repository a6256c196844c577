//! What parsing a message may cost in memory, bounded before it is parsed.
//!
//! A frame is capped in bytes
//! ([`MAX_FRAME_BYTES`](crate::limits::MAX_FRAME_BYTES)), but bytes on the
//! wire are not memory: as a `serde_json::Value`, 8 MiB of small numbers
//! (`[1,1,1,...]`) becomes four million values of 32 bytes and more, about
//! 140 MB, and a few dozen such frames held at once took gigabytes. So
//! before a frame is parsed, a quick scan counts its values
//! ([`estimate`]); a frame whose estimate is over
//! [`MAX_PARSED_MESSAGE_BYTES`] is refused, and every parsed message holds
//! its estimate from a [`ParseBudget`] shared by the whole process until
//! its request has finished, so all requests queued or running together
//! stay within [`MAX_PARSED_BYTES_IN_FLIGHT`]. A transport that finds the
//! budget spent answers "busy" at once instead of queueing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use crate::limits::{MAX_PARSED_BYTES_IN_FLIGHT, MAX_PARSED_MESSAGE_BYTES};

/// Bytes of memory charged per JSON value (array item, object member,
/// scalar) on top of the frame's own length: a `Value` is 32 bytes, and
/// growing arrays and maps may hold up to twice what they use.
pub const BYTES_PER_VALUE: usize = 80;

/// The memory a frame may take once parsed: its length (strings are kept
/// once) plus [`BYTES_PER_VALUE`] per value. One pass over the bytes,
/// skipping string contents; it never allocates.
pub fn estimate(frame: &[u8]) -> usize {
    let mut values = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    for &b in frame {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                in_scalar = false;
                values += 1;
            }
            b'{' | b'[' => {
                in_scalar = false;
                values += 1;
            }
            b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
            _ => {
                if !in_scalar {
                    in_scalar = true;
                    values += 1;
                }
            }
        }
    }
    frame
        .len()
        .saturating_add(values.saturating_mul(BYTES_PER_VALUE))
}

/// Why a frame was not parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The frame alone would take more than [`MAX_PARSED_MESSAGE_BYTES`].
    TooCostly { estimate: usize },
    /// Messages already parsed hold the whole budget: retry shortly.
    Busy,
}

impl Refusal {
    /// A client-safe explanation.
    pub fn message(&self) -> String {
        match self {
            Refusal::TooCostly { estimate } => format!(
                "message would take about {estimate} bytes of memory once parsed (too many \
                 values); the limit is {MAX_PARSED_MESSAGE_BYTES} (MAX_PARSED_MESSAGE_BYTES): \
                 send file bytes as base64 text, not as an array of numbers"
            ),
            Refusal::Busy => format!(
                "server busy: requests already received hold {MAX_PARSED_BYTES_IN_FLIGHT} bytes \
                 of memory (MAX_PARSED_BYTES_IN_FLIGHT); retry once replies have arrived"
            ),
        }
    }
}

/// The process-wide memory budget of parsed messages.
#[derive(Debug)]
pub struct ParseBudget {
    used: AtomicUsize,
    capacity: usize,
}

/// A parsed message's share of the budget, returned on drop.
#[derive(Debug)]
pub struct ParseCharge {
    budget: Arc<ParseBudget>,
    bytes: usize,
}

impl ParseBudget {
    pub fn new(capacity: usize) -> Arc<ParseBudget> {
        Arc::new(ParseBudget {
            used: AtomicUsize::new(0),
            capacity,
        })
    }

    /// The budget every transport of the process shares.
    pub fn shared() -> Arc<ParseBudget> {
        static SHARED: std::sync::OnceLock<Arc<ParseBudget>> = std::sync::OnceLock::new();
        SHARED
            .get_or_init(|| ParseBudget::new(MAX_PARSED_BYTES_IN_FLIGHT))
            .clone()
    }

    /// Charges `frame`'s estimated cost, or says why it may not be parsed.
    pub fn charge(self: &Arc<Self>, frame: &[u8]) -> Result<ParseCharge, Refusal> {
        let bytes = estimate(frame);
        if bytes > MAX_PARSED_MESSAGE_BYTES {
            return Err(Refusal::TooCostly { estimate: bytes });
        }
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            if used.saturating_add(bytes) > self.capacity {
                return Err(Refusal::Busy);
            }
            match self.used.compare_exchange_weak(
                used,
                used + bytes,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Ok(ParseCharge {
                        budget: self.clone(),
                        bytes,
                    })
                }
                Err(now) => used = now,
            }
        }
    }

    /// Bytes charged now.
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

impl Drop for ParseCharge {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_and_string_contents_skipped() {
        let values = |s: &str| (estimate(s.as_bytes()) - s.len()) / BYTES_PER_VALUE;
        assert_eq!(values(r#"[1,2,3]"#), 4);
        assert_eq!(values(r#"{"a": 1, "b": [true, null]}"#), 7);
        assert_eq!(values(r#""a,b:[{c}]""#), 1);
        assert_eq!(values(r#""esc\"aped, still string""#), 1);
        assert_eq!(values(r#"[-1.5e3, 22]"#), 3);
    }

    #[test]
    fn numbers_cost_more_than_their_bytes_and_text_costs_its_length() {
        let numbers = format!("[{}1]", "1,".repeat(1000));
        assert!(estimate(numbers.as_bytes()) > 1000 * BYTES_PER_VALUE);
        let text = format!("\"{}\"", "x".repeat(100_000));
        assert_eq!(estimate(text.as_bytes()), text.len() + BYTES_PER_VALUE);
    }

    #[test]
    fn the_budget_refuses_past_capacity_and_is_returned_on_drop() {
        let budget = ParseBudget::new(1000);
        let frame = [b'x'; 400];
        let a = budget.charge(&frame).unwrap();
        let b = budget.charge(&frame).unwrap();
        assert_eq!(budget.charge(&frame).unwrap_err(), Refusal::Busy);
        drop(a);
        let c = budget.charge(&frame).unwrap();
        drop((b, c));
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn one_frame_over_the_message_limit_is_refused_whatever_the_budget() {
        let budget = ParseBudget::new(usize::MAX);
        let n = MAX_PARSED_MESSAGE_BYTES / BYTES_PER_VALUE + 1;
        let frame = format!("[{}0]", "0,".repeat(n));
        assert!(matches!(
            budget.charge(frame.as_bytes()),
            Err(Refusal::TooCostly { .. })
        ));
    }
}
