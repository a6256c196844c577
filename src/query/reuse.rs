//! What a second retrieval round reuses from the first.
//!
//! Drift may run a second round when the first finds little: the same
//! question, every pool twice as deep ([`WIDENED`]). The keyword and vector
//! lanes' rankings of the same question are the same list cut at another
//! depth, and at a million chunks each costs tens of milliseconds (the
//! vector lane reads every stored vector), so a query that may widen ranks
//! both lanes once, as deep as the second round would ask, and each round
//! takes the prefix it needs. The question is embedded once too, and the
//! keyword lane's plan (which counts each term's matches) made once.

use crate::error::Result;
use crate::store::ChunkHit;

use super::retrieve::{self, KeywordPlan};

/// How much deeper a second round ranks every lane than the first.
pub const WIDENED: usize = 2;

/// One lane's ranking of the question, as deep as it was ranked.
struct Ranked {
    depth: usize,
    hits: Vec<ChunkHit>,
}

impl Ranked {
    /// The first `depth` hits, if this ranking went at least that deep (or
    /// ran out of matches before it: then it holds every match).
    fn prefix(&self, depth: usize) -> Option<Vec<ChunkHit>> {
        (self.depth >= depth || self.hits.len() < self.depth)
            .then(|| self.hits[..depth.min(self.hits.len())].to_vec())
    }
}

/// One lane's ranking, shared by a query's rounds.
pub struct Shared {
    /// What a first ranking's depth is multiplied by: [`WIDENED`] when a
    /// second round may follow, else 1.
    ahead: usize,
    ranked: Option<Ranked>,
}

impl Shared {
    /// The lane's first `depth` hits; `rank(d)` ranks `d` deep, and runs
    /// only if no ranking as deep was kept.
    pub fn hits(
        &mut self,
        depth: usize,
        rank: impl FnOnce(usize) -> Result<Vec<ChunkHit>>,
    ) -> Result<Vec<ChunkHit>> {
        if let Some(hits) = self.ranked.as_ref().and_then(|r| r.prefix(depth)) {
            return Ok(hits);
        }
        let deepest = depth * self.ahead;
        let hits = rank(deepest)?;
        let out = hits[..depth.min(hits.len())].to_vec();
        self.ranked = Some(Ranked {
            depth: deepest,
            hits,
        });
        Ok(out)
    }
}

/// The rankings and embedding a query's rounds share.
pub struct Reuse {
    pub keyword: Shared,
    pub vector: Shared,
    embedding: Option<std::result::Result<Vec<f32>, String>>,
    plan: Option<KeywordPlan>,
}

impl Reuse {
    /// For a query that runs one round, or (`may_widen`) may run a second.
    pub fn new(may_widen: bool) -> Reuse {
        let ahead = if may_widen { WIDENED } else { 1 };
        Reuse {
            keyword: Shared {
                ahead,
                ranked: None,
            },
            vector: Shared {
                ahead,
                ranked: None,
            },
            embedding: None,
            plan: None,
        }
    }

    /// The keyword lane's plan for the question's terms: `make` runs for
    /// the first round only.
    pub fn plan(&mut self, make: impl FnOnce() -> Result<KeywordPlan>) -> Result<KeywordPlan> {
        if let Some(plan) = &self.plan {
            return Ok(plan.clone());
        }
        let plan = make()?;
        self.plan = Some(plan.clone());
        Ok(plan)
    }

    /// The question's embedding (the embedder's error, as the lane reports
    /// it, if it failed).
    pub fn embedding(
        &mut self,
        question: &str,
        embedder: &dyn crate::embed::Embedder,
    ) -> std::result::Result<Vec<f32>, String> {
        self.embedding
            .get_or_insert_with(|| retrieve::embed_question(question, embedder).map_err(|e| e.0))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(n: usize) -> Vec<ChunkHit> {
        (0..n)
            .map(|i| ChunkHit {
                page: None,
                chunk_key: i as i64,
                ordinal: 0,
                start: 0,
                end: 1,
                text: "x".into(),
                doc_id: format!("doc_{i}"),
                source: None,
                title: None,
                metadata: "{}".into(),
                provenance: None,
                created_at: 0,
                bm25: 0.0,
            })
            .collect()
    }

    fn keys(h: &[ChunkHit]) -> Vec<i64> {
        h.iter().map(|h| h.chunk_key).collect()
    }

    #[test]
    fn the_keyword_plan_is_made_once() {
        let mut reuse = Reuse::new(true);
        let mut made = 0;
        for _ in 0..2 {
            let plan = reuse
                .plan(|| {
                    made += 1;
                    Ok(KeywordPlan {
                        searched: vec!["term".into()],
                        ignored: Vec::new(),
                        newest_first: false,
                    })
                })
                .unwrap();
            assert_eq!(plan.searched, ["term"]);
        }
        assert_eq!(made, 1);
    }

    #[test]
    fn a_query_that_may_widen_ranks_once_as_deep_as_the_second_round() {
        let mut reuse = Reuse::new(true);
        let mut asked = Vec::new();
        let first = reuse
            .vector
            .hits(3, |d| {
                asked.push(d);
                Ok(hits(d))
            })
            .unwrap();
        assert_eq!(keys(&first), [0, 1, 2]);
        let second = reuse
            .vector
            .hits(6, |d| {
                asked.push(d);
                Ok(hits(d))
            })
            .unwrap();
        assert_eq!(keys(&second), [0, 1, 2, 3, 4, 5]);
        assert_eq!(asked, [6], "one ranking, as deep as the widened round");
        // Deeper than was ranked: ranked again.
        reuse.vector.hits(7, |d| Ok(hits(d))).unwrap();
        assert_eq!(reuse.vector.ranked.as_ref().unwrap().depth, 14);
    }

    #[test]
    fn a_ranking_that_ran_out_of_matches_serves_any_depth() {
        let mut reuse = Reuse::new(false);
        reuse.keyword.hits(4, |_| Ok(hits(2))).unwrap();
        let again = reuse
            .keyword
            .hits(40, |_| panic!("holds every match already"))
            .unwrap();
        assert_eq!(keys(&again), [0, 1]);
    }

    #[test]
    fn one_round_ranks_only_as_deep_as_asked() {
        let mut reuse = Reuse::new(false);
        let mut asked = 0;
        reuse
            .keyword
            .hits(5, |d| {
                asked = d;
                Ok(hits(d))
            })
            .unwrap();
        assert_eq!(asked, 5);
    }
}
