//! Reading-order neighbours: a chunk's fused score lends a share to the
//! chunks just before and after it (its own document's, or the neighbouring
//! document's from the same `source`).
//!
//! In a conversation or a note split into parts, the words a question uses
//! are often in one turn and the answer in the next ("Is that your third
//! one?" / "Yes, finished it last week"). Each chunk already indexes the end
//! of the one before it as context, which finds the reply by what it
//! answers; this stage covers the other direction, and a neighbour no lane
//! found at all can enter the list. A neighbour takes the largest share
//! lent to it, never a sum, so a run of good chunks cannot lift a weak one
//! above them.

use std::collections::HashMap;

use super::fuse::{Fused, LaneRank};
use crate::error::Result;
use crate::store::TenantReader;

/// The share of a chunk's fused score lent to each neighbour.
pub const NEIGHBOUR_SHARE: f64 = 0.2;

/// Candidates, best first, that lend to their neighbours.
pub const LENDING_CANDIDATES: usize = 10;

/// Name under which a lent score is reported in an item's `lanes`.
pub const LANE: &str = "neighbour";

/// Adds the neighbours' lent scores to `fused` (new candidates for
/// neighbours no lane found) and sorts it again, best first.
pub fn lend(
    reader: &TenantReader<'_>,
    mut fused: Vec<Fused>,
    share: f64,
    lenders: usize,
) -> Result<Vec<Fused>> {
    if share <= 0.0 || fused.is_empty() {
        return Ok(fused);
    }
    let position: HashMap<i64, usize> = fused
        .iter()
        .enumerate()
        .map(|(i, f)| (f.hit.chunk_key, i))
        .collect();
    // Largest share lent to each chunk, and the rank of its lender.
    let mut lent: HashMap<i64, (f64, usize)> = HashMap::new();
    for (i, f) in fused.iter().take(lenders).enumerate() {
        let (before, after) = reader.adjacent_chunks(f.hit.chunk_key)?;
        for key in [before, after].into_iter().flatten() {
            let amount = share * f.score;
            let e = lent.entry(key).or_insert((0.0, i + 1));
            if amount > e.0 {
                *e = (amount, i + 1);
            }
        }
    }
    let mut missing: Vec<(i64, f64)> = Vec::new();
    let mut lender_of: HashMap<i64, usize> = HashMap::new();
    let mut lent: Vec<(i64, (f64, usize))> = lent.into_iter().collect();
    lent.sort_by_key(|(k, _)| *k);
    for (key, (amount, lender)) in lent {
        let rank = LaneRank {
            rank: lender,
            score: amount,
        };
        match position.get(&key) {
            Some(&i) => {
                fused[i].score += amount;
                fused[i].lanes.insert(LANE, rank);
            }
            None => {
                missing.push((key, amount));
                lender_of.insert(key, lender);
            }
        }
    }
    for hit in reader.chunks_by_keys(&missing)? {
        let amount = -hit.bm25;
        let rank = LaneRank {
            rank: lender_of[&hit.chunk_key],
            score: amount,
        };
        fused.push(Fused {
            hit,
            score: amount,
            lanes: [(LANE, rank)].into_iter().collect(),
            origin: None,
        });
    }
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.hit.chunk_key.cmp(&b.hit.chunk_key))
    });
    Ok(fused)
}
