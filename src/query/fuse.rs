//! Fusion: one ranked list from the lanes' ranked lists.
//!
//! Two methods, both measured on LoCoMo (see BENCHMARKS.md); calibrated is
//! the default because it was better at every lane weight tried:
//! - [`Fusion::Rrf`], weighted reciprocal rank fusion: `Σ weight / (k + rank)`
//!   over the lanes that found a chunk. Scale-free, so BM25 and cosine need
//!   no calibration.
//! - [`Fusion::Calibrated`]: each lane's scores min-max normalized to
//!   [0, 1] within the candidate list, then summed with lane weights.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::config::{env, FUSION_ENV};
use crate::store::ChunkHit;

/// The `k` of reciprocal rank fusion (the customary 60).
pub const RRF_K: f64 = 60.0;

/// Lane weights. On LoCoMo the keyword lane (with neighbour context) is
/// much stronger than the static-model vector lane; weighting the vector
/// lane at a quarter lifts hybrid recall above both lanes alone (measured
/// 0.10 to 1.0 in steps; see BENCHMARKS.md).
pub const KEYWORD_LANE_WEIGHT: f64 = 1.0;
pub const VECTOR_LANE_WEIGHT: f64 = 0.25;
/// The graph lane's weight (measured on LoCoMo like the others).
pub const GRAPH_LANE_WEIGHT: f64 = 0.1;
/// The time lane's weight: chunks dated in a period the question names.
pub const TIME_LANE_WEIGHT: f64 = 1.0;
/// The community lane's weight in global search: the summaries' chunks are
/// what a global question is about.
pub const COMMUNITY_LANE_WEIGHT: f64 = 1.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fusion {
    Rrf,
    Calibrated,
}

impl Fusion {
    pub fn parse(s: &str) -> Option<Fusion> {
        match s {
            "rrf" => Some(Fusion::Rrf),
            "calibrated" => Some(Fusion::Calibrated),
            _ => None,
        }
    }

    /// How the retrieval lanes are fused: `ALAYASIKI_FUSION` = `calibrated`
    /// (default) or `rrf`. An evaluation knob; see BENCHMARKS.md for figures.
    pub fn from_env() -> Result<Fusion, String> {
        match env(FUSION_ENV) {
            None => Ok(Fusion::Calibrated),
            Some(v) => Fusion::parse(&v)
                .ok_or_else(|| format!("{FUSION_ENV}={v:?} is not one of: rrf, calibrated")),
        }
    }
}

/// Where one lane ranked a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaneRank {
    /// 1-based rank within the lane.
    pub rank: usize,
    /// The lane's own score (BM25 for keyword, cosine for vector; higher is
    /// better).
    pub score: f64,
}

/// A fused candidate.
#[derive(Debug, Clone)]
pub struct Fused {
    pub hit: ChunkHit,
    pub score: f64,
    pub lanes: BTreeMap<&'static str, LaneRank>,
    /// Set when candidates from several sources are merged.
    pub origin: Option<super::Origin>,
}

/// A lane's ranked hits, best first. `ChunkHit::bm25` holds the lane score
/// negated (lower is better), as the store returns it.
#[derive(Clone)]
pub struct Lane {
    pub name: &'static str,
    pub weight: f64,
    pub hits: Vec<ChunkHit>,
}

/// Fuses the lanes into one list, best first (ties broken by chunk key so
/// the order is deterministic).
pub fn fuse(lanes: Vec<Lane>, method: Fusion) -> Vec<Fused> {
    let mut by_chunk: HashMap<i64, Fused> = HashMap::new();
    for lane in lanes {
        let scores: Vec<f64> = lane.hits.iter().map(|h| -h.bm25).collect();
        let (lo, hi) = scores
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
                (lo.min(*s), hi.max(*s))
            });
        for (i, (hit, raw)) in lane.hits.into_iter().zip(scores).enumerate() {
            let rank = i + 1;
            let contribution = match method {
                Fusion::Rrf => lane.weight / (RRF_K + rank as f64),
                Fusion::Calibrated => {
                    let norm = if hi > lo { (raw - lo) / (hi - lo) } else { 1.0 };
                    lane.weight * norm
                }
            };
            let entry = by_chunk.entry(hit.chunk_key).or_insert_with(|| Fused {
                hit,
                score: 0.0,
                lanes: BTreeMap::new(),
                origin: None,
            });
            entry.score += contribution;
            entry.lanes.insert(lane.name, LaneRank { rank, score: raw });
        }
    }
    let mut fused: Vec<Fused> = by_chunk.into_values().collect();
    sort_best_first(&mut fused);
    fused
}

/// Orders candidates best first; equal scores by chunk key, so that an
/// order never depends on how the candidates were gathered.
pub fn sort_best_first(fused: &mut [Fused]) {
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.hit.chunk_key.cmp(&b.hit.chunk_key))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(key: i64, score: f64) -> ChunkHit {
        ChunkHit {
            chunk_key: key,
            ordinal: 0,
            start: 0,
            end: 1,
            text: "x".into(),
            doc_id: format!("d{key}"),
            source: None,
            title: None,
            metadata: "{}".into(),
            provenance: None,
            created_at: 0,
            bm25: -score,
            page: None,
        }
    }

    #[test]
    fn a_chunk_found_by_both_lanes_beats_one_found_by_one() {
        let lanes = [
            Lane {
                name: "keyword",
                weight: 1.0,
                hits: vec![hit(1, 9.0), hit(2, 5.0), hit(7, 1.0)],
            },
            Lane {
                name: "vector",
                weight: 1.0,
                hits: vec![hit(3, 0.9), hit(2, 0.8), hit(8, 0.1)],
            },
        ];
        for method in [Fusion::Rrf, Fusion::Calibrated] {
            let fused = fuse(
                lanes
                    .iter()
                    .map(|l| Lane {
                        name: l.name,
                        weight: l.weight,
                        hits: l.hits.clone(),
                    })
                    .collect(),
                method,
            );
            assert_eq!(fused[0].hit.chunk_key, 2, "{method:?}");
            assert_eq!(fused[0].lanes["keyword"].rank, 2);
            assert_eq!(fused[0].lanes["vector"].rank, 2);
            assert_eq!(fused.len(), 5);
        }
    }

    #[test]
    fn one_lane_keeps_its_order() {
        let fused = fuse(
            vec![Lane {
                name: "keyword",
                weight: 1.0,
                hits: vec![hit(5, 3.0), hit(4, 2.0), hit(6, 1.0)],
            }],
            Fusion::Rrf,
        );
        let keys: Vec<i64> = fused.iter().map(|f| f.hit.chunk_key).collect();
        assert_eq!(keys, [5, 4, 6]);
    }
}
