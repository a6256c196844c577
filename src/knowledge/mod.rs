//! The knowledge model's values: what the engine computes and the store
//! records, defined below both so that neither names the other's layer.
//!
//! - [`fragment`]: a document's contribution to the graph (entities and
//!   their kinds, mentions, relations and what found them) and the key a
//!   relation is recorded under.
//! - [`facts`]: the single-valued relation families and which of a
//!   fact's statements holds at a time (facts that change).
//! - [`confidence`]: provenance, and the Beta confidence of a relation
//!   from its evidence (pure math), decayed with age.
//! - [`resolution`]: the evidence of a cross-document merge, the kinds
//!   that are resolved, and the bounds and version of the name-term index.
//! - [`calendar`]: dates written in text, and the day a document is
//!   about.
//! - [`community`]: community summaries and the graph they are built from.
//! - [`stem`]: the Porter stemmer (as SQLite's FTS5 applies it), which
//!   relation keys and query terms share.
//!
//! Owns types, constants and pure functions only: no I/O, no store, no
//! engine. It may use the cross-cutting leaves and nothing else. The
//! algorithms that produce these values are in `graph` (extraction,
//! resolution policy, community detection); storing them is `store`'s.

pub mod calendar;
pub mod community;
pub mod confidence;
pub mod facts;
pub mod fragment;
pub mod resolution;
pub mod stem;
