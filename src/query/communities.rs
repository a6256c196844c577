//! The community lane of `global` search: community summaries ranked
//! against the question, and the chunks they cite.

use std::collections::HashSet;

use serde::Serialize;

use super::stem::stem;
use crate::error::Result;
use crate::graph::communities::Summary;
use crate::store::{ChunkHit, CommunitySnapshot, EntityRow, Scope, TenantReader};

/// Summaries used per query.
pub const COMMUNITIES_PER_QUERY: usize = 3;

/// A summary as returned with a global answer.
#[derive(Debug, Clone, Serialize)]
pub struct CommunityUse {
    pub level: usize,
    pub title: String,
    pub size: usize,
    pub entities: Vec<String>,
    pub facts: Vec<String>,
    /// Chunk ids of the cited evidence.
    pub citations: Vec<String>,
    /// The optional LLM's summary of the community, when it wrote one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_summary: Option<LlmSummaryUse>,
    pub score: f64,
}

/// A community summary written by the optional LLM, with the chunk ids it
/// cites.
#[derive(Debug, Clone, Serialize)]
pub struct LlmSummaryUse {
    pub text: String,
    pub citations: Vec<String>,
}

fn stems(text: &str) -> HashSet<String> {
    super::terms::words(text).map(|w| stem(&w)).collect()
}

/// How well a summary matches the question: its words (an LLM summary's
/// included) that are question terms, plus the question's entities among its members (these count
/// double: they are what the question is about).
fn score(summary: &Summary, question: &HashSet<String>, entities: &[EntityRow]) -> f64 {
    let text = format!(
        "{} {} {} {}",
        summary.title,
        summary.entities.join(" "),
        summary.facts.join(" "),
        summary
            .llm_summary
            .as_ref()
            .map_or("", |llm| llm.text.as_str())
    );
    let words = stems(&text);
    let overlap = question.iter().filter(|t| words.contains(*t)).count() as f64;
    let named = entities
        .iter()
        .filter(|e| summary.entities.contains(&e.name))
        .count() as f64;
    overlap + 2.0 * named
}

/// The best summaries and the chunks they cite (as a lane).
pub fn lane(
    reader: &TenantReader<'_>,
    snapshot: &CommunitySnapshot,
    terms: &[String],
    entities: &[EntityRow],
    scope: &Scope,
) -> Result<(Vec<ChunkHit>, Vec<CommunityUse>)> {
    let question: HashSet<String> = terms.iter().map(|t| stem(t)).collect();
    let mut ranked: Vec<(f64, &Summary)> = snapshot
        .summaries
        .iter()
        .map(|s| (score(s, &question, entities), s))
        .collect();
    // Best match first; then larger, then finer communities (deterministic).
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.size.cmp(&a.1.size))
            .then(a.1.level.cmp(&b.1.level))
            .then(a.1.community.cmp(&b.1.community))
    });
    ranked.truncate(COMMUNITIES_PER_QUERY);
    let mut scored_chunks: Vec<(i64, f64)> = Vec::new();
    for (s, summary) in &ranked {
        for c in &summary.citations {
            if !scored_chunks.iter().any(|(k, _)| *k == c.chunk_key) {
                scored_chunks.push((c.chunk_key, s + c.members as f64 * 0.01));
            }
        }
    }
    scored_chunks.sort_by(|a, b| b.1.total_cmp(&a.1));
    let hits = reader.scoped_chunks_by_keys(&scored_chunks, usize::MAX, scope)?;
    let chunk_ids = |keys: &mut dyn Iterator<Item = i64>| -> Vec<String> {
        keys.filter_map(|k| hits.iter().find(|h| h.chunk_key == k))
            .map(|h| format!("{}:{}", h.doc_id, h.ordinal))
            .collect()
    };
    let uses = ranked
        .into_iter()
        .map(|(score, s)| CommunityUse {
            level: s.level,
            title: s.title.clone(),
            size: s.size,
            entities: s.entities.iter().take(8).cloned().collect(),
            facts: s.facts.clone(),
            citations: chunk_ids(&mut s.citations.iter().map(|c| c.chunk_key)),
            // Its citations are among the summary's, so among `hits`.
            llm_summary: s.llm_summary.as_ref().and_then(|llm| {
                let citations = chunk_ids(&mut llm.citations.iter().copied());
                (!citations.is_empty()).then(|| LlmSummaryUse {
                    text: llm.text.clone(),
                    citations,
                })
            }),
            score,
        })
        .collect();
    Ok((hits, uses))
}
