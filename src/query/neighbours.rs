//! Reading-order neighbours: a chunk's fused score lends a share to the
//! chunks just before and after it (its own document's, or the neighbouring
//! document's from the same `source`).
//!
//! In a conversation or a note split into parts, the words a question uses
//! are often in one turn and the answer in the next ("Is that your third
//! one?" / "Yes, finished it last week"). Each chunk already indexes the end
//! of the one before it as context, which finds the reply by what it
//! answers; this stage covers the other direction, and a neighbour no lane
//! found at all can enter the list. A chunk that asks a question lends
//! far more to the chunk after it ([`ANSWER_SHARE`]): that is where the
//! answer is. The chunks two places away get a smaller share
//! ([`SECOND_NEIGHBOUR_SHARE`]): in a dialogue that is the same speaker's
//! turn before or after, where a thought begun in one turn goes on after
//! the other speaker's reply ("The opening is tomorrow" / "Good luck!" /
//! "I'm excited, and ready to give it my best"). A neighbour takes the
//! largest share lent to it in a round, never a sum, so a run of good
//! chunks cannot lift a weak one above them.
//!
//! The query path lends in two rounds ([`BESIDE`] and [`SECOND`]) with the
//! labels between them ([`super::labels`]): the second round lends from the
//! scores the labels left, so the turns two away from those of whoever the
//! question names (their own earlier and later turns) gain, not the other
//! speaker's.

use std::collections::HashMap;

use super::fuse::{Fused, LaneRank};
use crate::error::Result;
use crate::store::{Scope, TenantReader};

/// The share of a chunk's fused score lent to each neighbour.
pub const NEIGHBOUR_SHARE: f64 = 0.2;

/// The share a chunk that asks a question lends to the chunk after it,
/// where its answer usually is.
pub const ANSWER_SHARE: f64 = 0.8;

/// The share of a chunk's fused score lent to each chunk two places away.
pub const SECOND_NEIGHBOUR_SHARE: f64 = 0.15;

/// Candidates, best first, that lend to their neighbours.
pub const LENDING_CANDIDATES: usize = 20;

/// Name under which a lent score is reported in an item's `lanes`.
pub const LANE: &str = "neighbour";

/// Whether `text` asks something: a question mark ending it or a sentence.
fn asks_a_question(text: &str) -> bool {
    let t = text.trim_end();
    t.ends_with('?') || t.contains("? ")
}

/// What a lending chunk lends, as shares of its fused score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    /// To the chunks just before and after it.
    pub beside: f64,
    /// Instead of `beside`, to the chunk after it when it asks a question.
    pub answer: f64,
    /// To the chunks two places before and after it.
    pub second: f64,
}

/// The query path's first round of lending, before the labels: to the
/// chunks beside the best.
pub const BESIDE: Shares = Shares {
    beside: NEIGHBOUR_SHARE,
    answer: ANSWER_SHARE,
    second: 0.0,
};

/// Its second round, after the labels: to the chunks two away.
pub const SECOND: Shares = Shares {
    beside: 0.0,
    answer: 0.0,
    second: SECOND_NEIGHBOUR_SHARE,
};

/// Adds the neighbours' lent scores to `fused` (new candidates for
/// neighbours no lane found) and sorts it again, best first: each of the
/// first `lenders` lends its [`Shares`] to the chunks around it. A
/// neighbour no lane found is read only if its share could place it among
/// the first `top_k`.
pub fn lend(
    reader: &TenantReader<'_>,
    mut fused: Vec<Fused>,
    shares: Shares,
    lenders: usize,
    top_k: usize,
    scope: &Scope,
) -> Result<Vec<Fused>> {
    let lends = [shares.beside, shares.answer, shares.second]
        .iter()
        .any(|&s| s > 0.0);
    if !lends || fused.is_empty() || lenders == 0 {
        return Ok(fused);
    }
    let position: HashMap<i64, usize> = fused
        .iter()
        .enumerate()
        .map(|(i, f)| (f.hit.chunk_key, i))
        .collect();
    let keys: Vec<i64> = fused
        .iter()
        .take(lenders)
        .map(|f| f.hit.chunk_key)
        .collect();
    let beside = reader.adjacent_chunks(&keys)?;
    // The second hop: the neighbours of the neighbours, read at once.
    let mut second: HashMap<i64, (Option<i64>, Option<i64>)> = HashMap::new();
    if shares.second > 0.0 {
        let mut hop: Vec<i64> = beside
            .iter()
            .flat_map(|a| [a.before, a.after])
            .flatten()
            .collect();
        hop.sort_unstable();
        hop.dedup();
        for a in reader.adjacent_chunks(&hop)? {
            second.insert(a.chunk_key, (a.before, a.after));
        }
    }
    // Largest share lent to each chunk, and the rank of its lender.
    let mut lent: HashMap<i64, (f64, usize)> = HashMap::new();
    for a in &beside {
        let Some(&i) = position.get(&a.chunk_key) else {
            continue;
        };
        let f = &fused[i];
        let to_after = if asks_a_question(&f.hit.text) {
            shares.answer
        } else {
            shares.beside
        };
        let two_before = a.before.and_then(|k| second.get(&k)).and_then(|s| s.0);
        let two_after = a.after.and_then(|k| second.get(&k)).and_then(|s| s.1);
        let targets = [
            (a.before, shares.beside),
            (a.after, to_after),
            (two_before, shares.second),
            (two_after, shares.second),
        ];
        for (key, share) in targets
            .into_iter()
            .filter(|&(_, s)| s > 0.0)
            .filter_map(|(k, s)| k.filter(|&k| k != a.chunk_key).map(|k| (k, s)))
        {
            let amount = share * f.score;
            let e = lent.entry(key).or_insert((0.0, i + 1));
            if amount > e.0 {
                *e = (amount, i + 1);
            }
        }
    }
    let mut lent: Vec<(i64, (f64, usize))> = lent.into_iter().collect();
    lent.sort_by_key(|(k, _)| *k);
    let mut missing: Vec<(i64, f64)> = Vec::new();
    let mut lender_of: HashMap<i64, usize> = HashMap::new();
    for (key, (amount, lender)) in lent {
        let rank = LaneRank {
            rank: lender,
            score: amount,
        };
        match position.get(&key) {
            Some(&i) => {
                fused[i].score += amount;
                // Lent to in both rounds: the lane reports the sum, and
                // the better lender.
                fused[i]
                    .lanes
                    .entry(LANE)
                    .and_modify(|r| {
                        r.score += amount;
                        r.rank = r.rank.min(lender);
                    })
                    .or_insert(rank);
            }
            None => {
                missing.push((key, amount));
                lender_of.insert(key, lender);
            }
        }
    }
    // The score a newcomer must beat to be among the first `top_k`.
    let mut scores: Vec<f64> = fused.iter().map(|f| f.score).collect();
    let bar = if scores.len() >= top_k && top_k > 0 {
        scores.select_nth_unstable_by(top_k - 1, |a, b| b.total_cmp(a));
        scores[top_k - 1]
    } else {
        f64::NEG_INFINITY
    };
    missing.retain(|(_, amount)| *amount > bar);
    for hit in reader.scoped_chunks_by_keys(&missing, usize::MAX, scope)? {
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
    super::fuse::sort_best_first(&mut fused);
    Ok(fused)
}

#[cfg(test)]
mod tests {
    use super::asks_a_question;

    #[test]
    fn a_question_mark_ending_the_text_or_a_sentence_asks() {
        assert!(asks_a_question("Ann: Which wood did you use? "));
        assert!(asks_a_question(
            "Ann: Nice! Did you paint it? It looks great."
        ));
        assert!(!asks_a_question("Bo: Cedar, all of it."));
        assert!(!asks_a_question("See https://example.com/?q=1 for more."));
    }
}
