//! Candidate retrieval: the keyword lane (FTS5 BM25 over the tenant's
//! chunks) and the vector lane (cosine over the tenant's vector file).
//!
//! Ranking cost in FTS5 is proportional to the number of matching rows, so
//! a question containing a very common term ("project" in a memory full of
//! project notes) would rank most of the store. The planner counts each
//! term's matching chunks (stopping at the threshold) and leaves out terms in
//! more than [`COMMON_TERM_FRACTION`] of the chunks (they barely move BM25,
//! and the vector lane still sees the whole question), then bounds the rest
//! by [`MAX_RANKED_POSTINGS`]. Small memories
//! (under [`COMMON_TERM_MIN_CHUNKS`] matches per term) are never pruned. A
//! question made only of common terms takes the newest chunks containing
//! all of them, ordered by BM25, instead of ranking everything.

use super::terms;
use crate::embed::{EmbedError, Embedder};
use crate::error::Result;
use crate::store::{ChunkHit, Scope, TenantReader};

/// Candidates fetched per requested result, so the diversity step has
/// something to choose from.
pub const CANDIDATES_PER_RESULT: usize = 3;

/// A term in more than this fraction of a tenant's chunks is "common".
/// Ranking costs about a microsecond per matching chunk (FTS5 looks up each
/// match's length for BM25); 1% keeps a 100k-chunk query to a few
/// milliseconds.
pub const COMMON_TERM_FRACTION: f64 = 0.01;

/// ... but only if it is also in more than this many chunks: below it,
/// ranking every match is cheap and every term is kept.
pub const COMMON_TERM_MIN_CHUNKS: i64 = 1000;

/// Most matching rows (summed over kept terms) ranked by one query.
pub const MAX_RANKED_POSTINGS: i64 = 20_000;

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

/// Decides which terms to search, from how many chunks match each (counted
/// only up to the "common" threshold, so planning itself stays cheap).
pub fn plan(reader: &TenantReader<'_>, terms: &[String]) -> Result<KeywordPlan> {
    let total = reader.chunk_count()?;
    let threshold = ((total as f64 * COMMON_TERM_FRACTION) as i64).max(COMMON_TERM_MIN_CHUNKS);
    let exprs: Vec<String> = terms
        .iter()
        .filter_map(|t| terms::fts_expression(std::slice::from_ref(t), "OR"))
        .collect();
    let counts = reader.match_counts(&exprs, threshold + 1)?;
    let mut selective: Vec<(i64, String)> = Vec::new();
    let mut common: Vec<String> = Vec::new();
    for (t, count) in terms.iter().zip(counts) {
        match count {
            0 => {} // not in memory at all: cannot match
            n if n > threshold => common.push(t.clone()),
            n => selective.push((n, t.clone())),
        }
    }
    if selective.is_empty() {
        return Ok(KeywordPlan {
            searched: common,
            ignored: Vec::new(),
            newest_first: true,
        });
    }
    selective.sort_by_key(|(n, _)| *n);
    let mut searched = Vec::new();
    let mut ignored = common;
    let mut postings = 0;
    for (n, t) in selective {
        if searched.is_empty() || postings + n <= MAX_RANKED_POSTINGS {
            postings += n;
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

/// The keyword lane: the best `limit` chunks for the question's terms.
pub fn keyword(
    reader: &TenantReader<'_>,
    plan: &KeywordPlan,
    limit: usize,
    scope: &Scope,
) -> Result<Vec<ChunkHit>> {
    if !plan.newest_first {
        return match terms::fts_expression(&plan.searched, "OR") {
            Some(expr) => reader.keyword_search(&expr, limit, scope),
            None => Ok(Vec::new()),
        };
    }
    for joiner in ["AND", "OR"] {
        if let Some(expr) = terms::fts_expression(&plan.searched, joiner) {
            let hits = reader.keyword_search_recent(&expr, limit, scope)?;
            if !hits.is_empty() {
                return Ok(hits);
            }
        }
    }
    Ok(Vec::new())
}

/// The vector lane: the `limit` chunks nearest the question's embedding. The inner
/// `Err` is an embedder failure, which costs this lane, not the query.
pub fn vector(
    reader: &TenantReader<'_>,
    question: &str,
    embedder: &dyn Embedder,
    limit: usize,
    scope: &Scope,
) -> Result<std::result::Result<Vec<ChunkHit>, EmbedError>> {
    let query = match embed_question(question, embedder) {
        Ok(q) => q,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(reader.vector_search(&query, limit, scope)?))
}

/// The question's embedding, for the vector lane and the lanes that search
/// again within a narrower scope.
pub fn embed_question(
    question: &str,
    embedder: &dyn Embedder,
) -> std::result::Result<Vec<f32>, EmbedError> {
    Ok(embedder.embed_batch(&[question])?.pop().unwrap_or_default())
}
