//! The knowledge graph: what was stored, as entities and the relations
//! between them.
//!
//! - [`extract`]: text → entity mentions and relation triples (offline,
//!   rule-based).
//! - [`fragment`]: a document's chunks → its contribution to the graph.
//! - [`llm_triples`]: triples proposed by the optional LLM, checked against
//!   the text and keyed like the rule-based ones.
//! - [`declared`]: facts a document declares in its metadata (an imported
//!   MCP memory-server file's entities and relations), checked the same way.
//! - [`confidence`]: Beta confidence of relations from corroborating and
//!   contradicting evidence, weighted by provenance, decayed with age
//!   (`knowledge::confidence`, re-exported).
//! - [`leiden`]: hierarchical community detection over the entity graph.
//! - [`communities`]: building community summaries from the store.
//! - [`llm_summaries`]: community summaries written by the optional LLM,
//!   accepted only when they cite the chunks they were given.
//! - [`resolution`]: whether a name new to the memory is another name of
//!   an entity it holds (across documents), and which stored entities a
//!   question names.
//!
//! The values these produce (fragments, provenance and confidence,
//! resolution evidence, community summaries) are defined in
//! [`crate::knowledge`], below the store, and re-exported here at their old
//! paths. Storage of entities, mentions, relations and communities is in
//! `store::graph`; retrieval through the graph is in `query::graph`.

pub mod communities;
pub mod declared;
pub mod extract;
pub mod fragment;
pub mod leiden;
pub mod llm_summaries;
pub mod llm_triples;
pub mod resolution;

/// The Beta confidence math is a value of the knowledge model, below the
/// store; kept at this path.
pub use crate::knowledge::confidence;
