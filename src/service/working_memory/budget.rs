//! The shared working-memory budget: what one write is charged, and the
//! running totals every live session graph counts against.
//!
//! Owns the arithmetic only. It never stores anything and never decides
//! what is live: the registry ([`super::WorkingMemory`]) calls
//! [`Usage::admit`] under its lock before it stores a write and
//! [`Usage::release`] when it reclaims an expired graph, so the totals are
//! exactly the sum over live graphs at every moment anyone can observe.
//!
//! # What a write is charged ("serialized input")
//!
//! [`Charge::bytes`] is the sum of:
//! - the content's bytes as stored: the UTF-8 bytes of text, or a file's
//!   bytes after base64 decoding (a described image's bytes count although
//!   only their size and hash are kept: the charge is for what was sent);
//! - the `metadata` object as compact JSON (0 when absent or empty);
//! - the `nodes` array and the `edges` array, each as compact JSON of their
//!   canonical form (absent optional fields omitted; 0 when absent or
//!   empty);
//! - a file's `filename` (bytes).
//!
//! Per-note bookkeeping (ids, times, the canonical media type, search
//! terms and vectors) is not charged: it is bounded by the number of
//! writes and by the charged text it is derived from.

use crate::error::{Error, Result};
use crate::limits::{
    MAX_WM_BYTES, MAX_WM_CONTENT_BYTES, MAX_WM_GRAPH_BYTES, MAX_WM_METADATA_BYTES, MAX_WM_SESSIONS,
    MAX_WM_WRITES, WM_TENANT_SHARE_QUARTERS,
};

/// The most of a budget of `total` one tenant may hold.
pub const fn tenant_share(total: usize) -> usize {
    total / 4 * WM_TENANT_SHARE_QUARTERS
}

/// One tenant's share of every working-memory budget: what its graphs are
/// admitted against and what `alayasiki_status` tells it.
pub const TENANT_SHARE: Usage = Usage {
    graphs: tenant_share(MAX_WM_SESSIONS),
    writes: tenant_share(MAX_WM_WRITES),
    bytes: tenant_share(MAX_WM_BYTES),
};

/// What one write costs, part by part (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Charge {
    pub content: usize,
    pub metadata: usize,
    pub graph: usize,
    pub filename: usize,
}

impl Charge {
    /// The bytes counted against [`MAX_WM_BYTES`].
    pub fn bytes(&self) -> usize {
        self.content + self.metadata + self.graph + self.filename
    }

    /// Refuses a write whose parts exceed the per-write limits, naming the
    /// limit.
    pub fn check_per_write_limits(&self) -> Result<()> {
        let parts = [
            (
                "content",
                self.content,
                MAX_WM_CONTENT_BYTES,
                "MAX_WM_CONTENT_BYTES",
            ),
            (
                "metadata (as compact JSON)",
                self.metadata,
                MAX_WM_METADATA_BYTES,
                "MAX_WM_METADATA_BYTES",
            ),
            (
                "nodes and edges (as compact JSON)",
                self.graph,
                MAX_WM_GRAPH_BYTES,
                "MAX_WM_GRAPH_BYTES",
            ),
        ];
        for (what, size, max, name) in parts {
            if size > max {
                return Err(Error::LimitExceeded(format!(
                    "{what} is {size} bytes; one working-memory write takes at most {max} \
                     ({name})"
                )));
            }
        }
        Ok(())
    }
}

/// The limit a write would cross.
enum Crossed {
    Sessions,
    Writes,
    Bytes,
}

/// Totals over all live session graphs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub graphs: usize,
    pub writes: usize,
    pub bytes: usize,
}

impl Usage {
    /// Counts one write (and, with `new_graph`, the graph it creates) if
    /// that keeps every total within its limit; otherwise changes nothing
    /// and names the first limit it would cross. Equality is allowed: a
    /// budget is fully usable.
    ///
    /// The message never says how much others use: the budget is shared
    /// across identities, and their activity is not this caller's business.
    pub fn admit(&mut self, new_graph: bool, bytes: usize) -> Result<()> {
        let limits = Usage {
            graphs: MAX_WM_SESSIONS,
            writes: MAX_WM_WRITES,
            bytes: MAX_WM_BYTES,
        };
        self.admit_within(limits, new_graph, bytes)
            .map_err(|crossed| {
                Error::LimitExceeded(match crossed {
                    Crossed::Sessions => format!(
                        "working memory already holds its limit of {MAX_WM_SESSIONS} live \
                         sessions (MAX_WM_SESSIONS, shared by every caller); write to an \
                         existing session or retry when one expires"
                    ),
                    Crossed::Writes => format!(
                        "working memory already holds its limit of {MAX_WM_WRITES} writes \
                         (MAX_WM_WRITES, shared by every caller); retry when sessions expire"
                    ),
                    Crossed::Bytes => format!(
                        "this write ({bytes} bytes) would exceed working memory's limit of \
                         {MAX_WM_BYTES} bytes of input (MAX_WM_BYTES, shared by every \
                         caller); retry when sessions expire, or promote and write less"
                    ),
                })
            })
    }

    /// [`Usage::admit`] against one tenant's share of every budget
    /// ([`TENANT_SHARE`]), for the totals of that tenant's graphs.
    pub fn admit_tenant_share(&mut self, new_graph: bool, bytes: usize) -> Result<()> {
        let share = TENANT_SHARE;
        let why = "WM_TENANT_SHARE_QUARTERS: one tenant may hold three quarters of each \
                   working-memory budget, so the others always have room";
        self.admit_within(share, new_graph, bytes)
            .map_err(|crossed| {
                Error::LimitExceeded(match crossed {
                    Crossed::Sessions => format!(
                        "this tenant already holds its share of {} live working-memory \
                         sessions ({why}); write to an existing session or retry when one \
                         expires",
                        share.graphs
                    ),
                    Crossed::Writes => format!(
                        "this tenant already holds its share of {} working-memory writes \
                         ({why}); retry when sessions expire",
                        share.writes
                    ),
                    Crossed::Bytes => format!(
                        "this write ({bytes} bytes) would exceed this tenant's share of {} \
                         bytes of working-memory input ({why}); retry when sessions expire, \
                         or promote and write less",
                        share.bytes
                    ),
                })
            })
    }

    /// Counts the write if every total stays within `limits`; otherwise
    /// changes nothing and says which limit it would cross first.
    fn admit_within(
        &mut self,
        limits: Usage,
        new_graph: bool,
        bytes: usize,
    ) -> Result<(), Crossed> {
        let graphs = self.graphs + usize::from(new_graph);
        if graphs > limits.graphs {
            return Err(Crossed::Sessions);
        }
        if self.writes + 1 > limits.writes {
            return Err(Crossed::Writes);
        }
        // `bytes` is at most a frame's size, so the sum cannot overflow;
        // saturating anyway keeps the check a check.
        if self.bytes.saturating_add(bytes) > limits.bytes {
            return Err(Crossed::Bytes);
        }
        self.graphs = graphs;
        self.writes += 1;
        self.bytes += bytes;
        Ok(())
    }

    /// Gives back what a reclaimed graph held.
    pub fn release(&mut self, writes: usize, bytes: usize) {
        // Never below zero: an accounting bug must not wrap into a huge
        // free budget. Debug builds catch the bug itself.
        debug_assert!(self.graphs >= 1 && self.writes >= writes && self.bytes >= bytes);
        self.graphs = self.graphs.saturating_sub(1);
        self.writes = self.writes.saturating_sub(writes);
        self.bytes = self.bytes.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charge_is_the_sum_of_its_parts() {
        let c = Charge {
            content: 10,
            metadata: 20,
            graph: 30,
            filename: 4,
        };
        assert_eq!(c.bytes(), 64);
    }

    #[test]
    fn per_write_limits_are_exact() {
        let at = Charge {
            content: MAX_WM_CONTENT_BYTES,
            metadata: MAX_WM_METADATA_BYTES,
            graph: MAX_WM_GRAPH_BYTES,
            filename: 0,
        };
        assert!(at.check_per_write_limits().is_ok());
        for (over, name) in [
            (
                Charge {
                    content: MAX_WM_CONTENT_BYTES + 1,
                    ..at
                },
                "MAX_WM_CONTENT_BYTES",
            ),
            (
                Charge {
                    metadata: MAX_WM_METADATA_BYTES + 1,
                    ..at
                },
                "MAX_WM_METADATA_BYTES",
            ),
            (
                Charge {
                    graph: MAX_WM_GRAPH_BYTES + 1,
                    ..at
                },
                "MAX_WM_GRAPH_BYTES",
            ),
        ] {
            let err = over.check_per_write_limits().unwrap_err();
            assert_eq!(err.code(), "limit_exceeded");
            assert!(err.client_message().contains(name), "{err}");
        }
    }

    #[test]
    fn a_refused_admission_changes_nothing() {
        let mut u = Usage {
            graphs: MAX_WM_SESSIONS,
            writes: 5,
            bytes: 7,
        };
        let before = u;
        let err = u.admit(true, 1).unwrap_err();
        assert!(err.client_message().contains("MAX_WM_SESSIONS"));
        assert_eq!(u, before);
        // An existing graph may still take writes.
        u.admit(false, 1).unwrap();
        assert_eq!(u.writes, 6);
    }

    #[test]
    fn totals_may_reach_each_limit_exactly() {
        let mut u = Usage {
            graphs: MAX_WM_SESSIONS - 1,
            writes: MAX_WM_WRITES - 1,
            bytes: MAX_WM_BYTES - 10,
        };
        u.admit(true, 10).unwrap();
        assert_eq!(
            u,
            Usage {
                graphs: MAX_WM_SESSIONS,
                writes: MAX_WM_WRITES,
                bytes: MAX_WM_BYTES
            }
        );
        assert!(u
            .admit(false, 0)
            .unwrap_err()
            .client_message()
            .contains("MAX_WM_WRITES"));
        u.release(2, 10);
        assert!(u
            .admit(false, 11)
            .unwrap_err()
            .client_message()
            .contains("MAX_WM_BYTES"));
        u.admit(false, 10).unwrap();
    }
}
