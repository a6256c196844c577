//! Community summaries as values: what the builder reads of the graph
//! ([`GraphInput`]), what it writes ([`Summary`], with its
//! [`CommunityCitation`]s), and the optional LLM's addition to one
//! ([`LlmSummary`]).
//!
//! Owns the types only (and their serialized form, which is how a stored
//! snapshot keeps them). Detecting communities and summarising them is
//! `graph::communities`; storing snapshots is `store::communities`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The graph as the builder needs it.
pub struct GraphInput {
    /// (entity id, name, mention count)
    pub entities: Vec<(i64, String, i64)>,
    /// (subject id, object id, label, confidence, is pattern)
    pub relations: Vec<(i64, i64, String, f64, bool)>,
    /// entity id → chunk keys mentioning it (newest first, bounded)
    pub mentions: HashMap<i64, Vec<i64>>,
}

/// A cited chunk.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommunityCitation {
    pub chunk_key: i64,
    /// How many members the chunk mentions.
    pub members: usize,
}

/// One community's summary.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub level: usize,
    pub community: u32,
    pub parent: Option<u32>,
    pub title: String,
    pub size: usize,
    /// Member names, most mentioned first (at most 20).
    pub entities: Vec<String>,
    /// The strongest relations, as sentences.
    pub facts: Vec<String>,
    pub citations: Vec<CommunityCitation>,
    /// Store ids of all its members, most mentioned first: which
    /// community an entity belongs to, for the memory browser. Empty in
    /// snapshots stored before membership was kept (until the next
    /// rebuild).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_ids: Vec<i64>,
    /// A summary written by the optional LLM, added to a stored snapshot
    /// after it was built; absent otherwise (and in snapshots stored before
    /// it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_summary: Option<LlmSummary>,
}

/// A community summary written by the optional LLM, accepted because it
/// cites chunks it was given.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LlmSummary {
    pub text: String,
    /// Chunk keys of the chunks it cites (a subset of the summary's
    /// citations).
    pub citations: Vec<i64>,
    /// SHA-256 of the request's input: while a community's input is the
    /// same, its summary is reused rather than asked for again.
    pub input_digest: String,
}
