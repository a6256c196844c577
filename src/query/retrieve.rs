//! Candidate retrieval. Today one lane: FTS5 BM25 over the tenant's chunks.

use super::terms;
use crate::error::Result;
use crate::store::{ChunkHit, TenantReader};

/// Candidates fetched per requested result, so the diversity step has
/// something to choose from.
pub const CANDIDATES_PER_RESULT: usize = 3;

/// The keyword lane: chunks matching any term, best BM25 first.
pub fn keyword(reader: &TenantReader<'_>, terms: &[String], top_k: usize) -> Result<Vec<ChunkHit>> {
    let Some(expr) = terms::fts_or_expression(terms) else {
        return Ok(Vec::new());
    };
    reader.keyword_search(&expr, top_k * CANDIDATES_PER_RESULT)
}
