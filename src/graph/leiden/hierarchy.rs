//! Builds the [`Hierarchy`]: level 0 by Leiden on the input graph, each
//! coarser level by Leiden on the aggregate graph of the level below at a
//! lower resolution (the module docs of [`super`] say why). Also owns the
//! per-level post-processing: the connectivity safety net and the merging
//! of communities below the minimum size.

use super::csr::WeightedGraph;
use super::optimise::{self, RunConfig};
use super::rng::SplitMix64;
use super::{Hierarchy, LeidenParams, Partition};

/// Moves must beat staying by this much, relative to the mean edge weight,
/// so float rounding cannot make nodes oscillate.
pub(super) const GAIN_TOLERANCE: f64 = 1e-10;
/// Iterations stop early once one improves modularity by less than this.
const MIN_ITERATION_GAIN: f64 = 1e-4;
/// Probes per coarser level; with the default step this spans an 800-fold
/// drop in resolution, far past where everything has merged.
const MAX_PROBES_PER_LEVEL: usize = 64;
/// Bound on rounds of small-community merging; each round merges every
/// small community that has a neighbour, so a handful suffice.
const MAX_SMALL_MERGE_ROUNDS: usize = 64;

/// Runs the whole hierarchy; `params` must be valid.
pub(super) fn build(graph: &WeightedGraph, params: &LeidenParams) -> Hierarchy {
    let mut rng = SplitMix64::new(params.seed);
    // Express θ and the move tolerance in the graph's own weight units.
    let mean_edge_weight = if graph.edge_count() > 0 {
        graph.total_weight() / graph.edge_count() as f64
    } else {
        1.0
    };
    let base = RunConfig {
        quality: params.quality,
        resolution: params.resolution,
        theta: params.randomness * mean_edge_weight,
        tolerance: GAIN_TOLERANCE * mean_edge_weight,
        refine: true,
    };
    let component_count = graph.split_into_connected(&vec![0; graph.node_count()]).1;

    let mut membership = detect_level(graph, &base, params, &mut rng);
    let mut count = optimise::renumber(&mut membership);
    let mut level_graph = graph.aggregate(&membership, count);
    let mut levels = vec![Partition {
        membership,
        community_count: count,
        modularity: collapsed_quality(&level_graph, 1.0),
        resolution: params.resolution,
        parents: Vec::new(),
    }];

    while levels.len() < params.max_levels && count > component_count {
        let Some(previous) = levels.last_mut() else {
            break;
        };
        let Some(next) = probe_coarser_level(
            &level_graph,
            previous.resolution,
            component_count,
            &base,
            params,
            &mut rng,
        ) else {
            break;
        };
        let membership = previous
            .membership
            .iter()
            .map(|&c| next.parents[c as usize])
            .collect();
        level_graph = level_graph.aggregate(&next.parents, next.count);
        previous.parents = next.parents;
        count = next.count;
        levels.push(Partition {
            membership,
            community_count: count,
            modularity: collapsed_quality(&level_graph, 1.0),
            resolution: next.resolution,
            parents: Vec::new(),
        });
    }
    Hierarchy { levels }
}

/// A partition of a level's communities found by one or more consecutive
/// probes.
struct Run {
    /// Coarser community of each node of the level graph (canonical ids).
    parents: Vec<u32>,
    count: usize,
    /// Highest resolution at which the partition was found.
    resolution: f64,
    /// Number of consecutive probes that returned exactly this partition.
    length: usize,
}

/// Searches for the next coarser level: Leiden on `level_graph` (whose
/// nodes are the current communities) at resolutions stepping down from
/// `resolution`, until everything has merged into components or the probes
/// run out. Of the distinct partitions seen, those with at most
/// `level_shrink` times the current count are eligible, and the one found
/// over the longest run of consecutive probes wins (ties: the finer one):
/// a partition that persists over a wide range of resolutions reflects
/// structure, one that flickers past reflects the step size. If none is
/// eligible, the most persistent partition that merged anything is used.
fn probe_coarser_level(
    level_graph: &WeightedGraph,
    resolution: f64,
    component_count: usize,
    base: &RunConfig,
    params: &LeidenParams,
    rng: &mut SplitMix64,
) -> Option<Run> {
    let count = level_graph.node_count();
    let target = ((count as f64 * params.level_shrink) as usize).max(component_count);
    let mut best_eligible: Option<Run> = None;
    let mut best_other: Option<Run> = None;
    let mut finish = |run: Run| {
        let best = if run.count <= target {
            &mut best_eligible
        } else {
            &mut best_other
        };
        if best.as_ref().is_none_or(|b| run.length > b.length) {
            *best = Some(run);
        }
    };
    let mut current: Option<Run> = None;
    let mut probe_resolution = resolution;
    for _ in 0..MAX_PROBES_PER_LEVEL {
        probe_resolution *= params.resolution_step;
        let config = RunConfig {
            resolution: probe_resolution,
            ..*base
        };
        let mut parents = detect_level(level_graph, &config, params, rng);
        let parent_count = optimise::renumber(&mut parents);
        if parent_count >= count {
            continue; // Nothing merged yet.
        }
        match current.as_mut() {
            Some(run) if run.parents == parents => run.length += 1,
            _ => {
                if let Some(done) = current.take() {
                    finish(done);
                }
                current = Some(Run {
                    parents,
                    count: parent_count,
                    resolution: probe_resolution,
                    length: 1,
                });
            }
        }
        if parent_count <= component_count {
            break; // Every component is one community: nothing further.
        }
    }
    if let Some(done) = current.take() {
        finish(done);
    }
    best_eligible.or(best_other)
}

/// Modularity of the partition whose communities are the nodes of the
/// aggregate graph `collapsed`: `Σ_c in_c / m - γ Σ_c (K_c / 2m)^2`.
pub(super) fn collapsed_quality(collapsed: &WeightedGraph, resolution: f64) -> f64 {
    let m = collapsed.total_weight();
    if m <= 0.0 {
        return 0.0;
    }
    let inside: f64 = collapsed.self_weights().iter().sum();
    let expected: f64 = collapsed
        .strengths()
        .iter()
        .map(|k| (k / (2.0 * m)).powi(2))
        .sum();
    inside / m - resolution * expected
}

/// Leiden iterations on `graph` until the partition stops changing or
/// improving, then the safety net and small-community merging. Returns
/// dense ids.
fn detect_level(
    graph: &WeightedGraph,
    config: &RunConfig,
    params: &LeidenParams,
    rng: &mut SplitMix64,
) -> Vec<u32> {
    let n = graph.node_count();
    let mut membership: Vec<u32> = (0..n as u32).collect();
    let mut current = optimise::quality(graph, &membership, n, config);
    let min_gain = MIN_ITERATION_GAIN * graph.total_weight();
    for _ in 0..params.max_iterations {
        let mut next = optimise::run(graph, membership.clone(), config, rng);
        let count = optimise::renumber(&mut next);
        let next_quality = optimise::quality(graph, &next, count, config);
        if next == membership || next_quality < current {
            break; // Stable, or (rarely) a θ-driven step backwards.
        }
        membership = next;
        let gained = next_quality - current;
        current = next_quality;
        if gained < min_gain {
            break;
        }
    }
    // Safety net: refinement already makes every community connected, so
    // this normally changes nothing; it keeps the guarantee unconditional.
    let (mut membership, _) = graph.split_into_connected(&membership);
    merge_small_communities(graph, &mut membership, config, params.min_community_size);
    membership
}

/// Merges every community with fewer than `min_size` input nodes into the
/// adjacent community where the merge loses least quality, in rounds, until
/// none is left that has a neighbour. `membership` holds dense ids.
fn merge_small_communities(
    graph: &WeightedGraph,
    membership: &mut [u32],
    config: &RunConfig,
    min_size: usize,
) {
    if min_size <= 1 {
        return;
    }
    let penalty = optimise::penalty(graph, config.quality, config.resolution);
    for _ in 0..MAX_SMALL_MERGE_ROUNDS {
        let count = optimise::renumber(membership);
        let communities = graph.aggregate(membership, count);
        let mut null = optimise::null_weights(&communities, config.quality);
        let mut size: Vec<usize> = communities.sizes().iter().map(|&s| s as usize).collect();
        let mut small: Vec<u32> = (0..count as u32)
            .filter(|&c| size[c as usize] < min_size && communities.degree_count(c as usize) > 0)
            .collect();
        if small.is_empty() {
            return;
        }
        // Smallest first, so tiny fragments join real communities rather
        // than each other when both are possible.
        small.sort_by_key(|&c| (size[c as usize], c));
        let mut root: Vec<u32> = (0..count as u32).collect();
        let mut weight_to = vec![0.0f64; count];
        let mut touched: Vec<u32> = Vec::new();
        let mut merged_any = false;
        for &a in &small {
            let ai = a as usize;
            if root[ai] != a || size[ai] >= min_size {
                continue; // Absorbed already, or grown big enough.
            }
            // Only `a`'s own edges are scanned, not those of communities it
            // absorbed this round; the next round sees the merged whole.
            let (ts, ws) = communities.adjacency(ai);
            for (&t, &w) in ts.iter().zip(ws) {
                let b = find_root(&mut root, t);
                if b == a {
                    continue;
                }
                if weight_to[b as usize] == 0.0 {
                    touched.push(b);
                }
                weight_to[b as usize] += w;
            }
            let mut best: Option<(u32, f64)> = None;
            for &b in &touched {
                let gain = weight_to[b as usize] - penalty * null[ai] * null[b as usize];
                if best.is_none_or(|(_, g)| gain > g) {
                    best = Some((b, gain));
                }
                weight_to[b as usize] = 0.0;
            }
            touched.clear();
            if let Some((b, _)) = best {
                root[ai] = b;
                size[b as usize] += size[ai];
                null[b as usize] += null[ai];
                merged_any = true;
            }
        }
        if !merged_any {
            return;
        }
        for c in membership.iter_mut() {
            *c = find_root(&mut root, *c);
        }
    }
    optimise::renumber(membership);
}

/// Union-find root with path halving.
fn find_root(root: &mut [u32], mut x: u32) -> u32 {
    while root[x as usize] != x {
        let up = root[root[x as usize] as usize];
        root[x as usize] = up;
        x = up;
    }
    x
}
