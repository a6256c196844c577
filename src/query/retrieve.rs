//! Candidate retrieval: the keyword lane (FTS5 BM25 over the tenant's
//! chunks) and the vector lane (cosine over the tenant's vector file).
//!
//! Ranking cost in FTS5 is proportional to the number of matching rows, so
//! a question containing a very common term ("project" in a memory full of
//! project notes) would rank most of the store. The planner looks up each
//! term's chunk frequency in the index's vocabulary and leaves out terms in
//! more than [`COMMON_TERM_FRACTION`] of the chunks (they barely move BM25
//! anyway), then bounds the rest by [`MAX_RANKED_POSTINGS`]. Small memories
//! (under [`COMMON_TERM_MIN_CHUNKS`] matches per term) are never pruned. A
//! question made only of common terms takes the newest chunks containing
//! all of them, ordered by BM25, instead of ranking everything.

use super::stem::stem;
use super::terms;
use crate::embed::{EmbedError, Embedder};
use crate::error::Result;
use crate::store::{ChunkHit, TenantReader};

/// Candidates fetched per requested result, so the diversity step has
/// something to choose from.
pub const CANDIDATES_PER_RESULT: usize = 3;

/// A term in more than this fraction of a tenant's chunks is "common".
pub const COMMON_TERM_FRACTION: f64 = 0.05;

/// ... but only if it is also in more than this many chunks: below it,
/// ranking every match is cheap and every term is kept.
pub const COMMON_TERM_MIN_CHUNKS: i64 = 1000;

/// Most matching rows (summed over kept terms) ranked by one query.
pub const MAX_RANKED_POSTINGS: i64 = 200_000;

/// How the keyword lane will search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeywordPlan {
    /// Terms in the search expression.
    pub searched: Vec<String>,
    /// Terms left out because they are too common to discriminate.
    pub ignored: Vec<String>,
    /// Only common terms: newest chunks containing all of them.
    pub newest_first: bool,
}

/// Decides which terms to search, from their frequencies in the index.
pub fn plan(reader: &TenantReader<'_>, terms: &[String]) -> Result<KeywordPlan> {
    let total = reader.chunk_count()?;
    // Only ASCII words are stemmed exactly like the index; for others the
    // frequency is unknown and the term is simply kept.
    let ascii: Vec<String> = terms
        .iter()
        .filter(|t| t.is_ascii())
        .map(|t| stem(t))
        .collect();
    let counts = reader.term_chunk_counts(&ascii)?;
    let mut known = ascii.iter().zip(counts);
    let threshold = ((total as f64 * COMMON_TERM_FRACTION) as i64).max(COMMON_TERM_MIN_CHUNKS);
    let mut selective: Vec<(i64, String)> = Vec::new();
    let mut common: Vec<String> = Vec::new();
    for t in terms {
        if !t.is_ascii() {
            selective.push((0, t.clone()));
            continue;
        }
        let (_, df) = known.next().expect("one count per ASCII term");
        match df {
            0 => {} // not in memory at all: cannot match
            df if df > threshold => common.push(t.clone()),
            df => selective.push((df, t.clone())),
        }
    }
    if selective.is_empty() {
        return Ok(KeywordPlan {
            searched: common,
            ignored: Vec::new(),
            newest_first: true,
        });
    }
    selective.sort_by_key(|(df, _)| *df);
    let mut searched = Vec::new();
    let mut ignored = common;
    let mut postings = 0;
    for (df, t) in selective {
        if searched.is_empty() || postings + df <= MAX_RANKED_POSTINGS {
            postings += df;
            searched.push(t);
        } else {
            ignored.push(t);
        }
    }
    Ok(KeywordPlan {
        searched,
        ignored,
        newest_first: false,
    })
}

/// The keyword lane: the best chunks for the question's terms.
pub fn keyword(
    reader: &TenantReader<'_>,
    plan: &KeywordPlan,
    top_k: usize,
) -> Result<Vec<ChunkHit>> {
    let limit = top_k * CANDIDATES_PER_RESULT;
    if !plan.newest_first {
        return match terms::fts_expression(&plan.searched, "OR") {
            Some(expr) => reader.keyword_search(&expr, limit),
            None => Ok(Vec::new()),
        };
    }
    for joiner in ["AND", "OR"] {
        if let Some(expr) = terms::fts_expression(&plan.searched, joiner) {
            let hits = reader.keyword_search_recent(&expr, limit)?;
            if !hits.is_empty() {
                return Ok(hits);
            }
        }
    }
    Ok(Vec::new())
}

/// The vector lane: chunks nearest the question's embedding. The inner
/// `Err` is an embedder failure, which costs this lane, not the query.
pub fn vector(
    reader: &TenantReader<'_>,
    question: &str,
    embedder: &dyn Embedder,
    top_k: usize,
) -> Result<std::result::Result<Vec<ChunkHit>, EmbedError>> {
    let query = match embedder.embed_batch(&[question]) {
        Ok(mut v) => v.pop().unwrap_or_default(),
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(
        reader.vector_search(&query, top_k * CANDIDATES_PER_RESULT)?
    ))
}
