//! One run of the Leiden algorithm at a fixed resolution: fast local moving,
//! refinement into well-connected sub-communities, aggregation on the refined
//! partition, repeated until no node of the aggregate graph moves.
//!
//! Both quality functions are written in one "edge weight minus penalty"
//! form. A community `c` contributes `in_c - penalty * N_c^2 / 2`, where
//! `in_c` is the edge weight inside `c` and `N_c` the sum of its nodes'
//! null-model weights, so moving an isolated node `v` into `c` gains
//! `w(v, c) - penalty * n_v * N_c`:
//!
//! * modularity: `n_v` = weighted degree, `penalty = resolution / 2m`;
//! * CPM: `n_v` = number of input nodes, `penalty = resolution`.
//!
//! Gains are therefore in edge-weight units, the same units as the
//! `randomness` (θ) of the refinement step.

use std::collections::VecDeque;

use super::csr::WeightedGraph;
use super::rng::SplitMix64;
use super::Quality;

/// Settings of one Leiden run, already converted to edge-weight units.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunConfig {
    pub(super) quality: Quality,
    pub(super) resolution: f64,
    /// θ of the refinement step in edge-weight units; `0` means greedy.
    pub(super) theta: f64,
    /// A move must beat staying by more than this (edge-weight units), so
    /// rounding noise cannot make a node oscillate between communities.
    pub(super) tolerance: f64,
    /// `false` turns the run into plain Louvain (aggregate the unrefined
    /// partition); only tests use that, to show what refinement prevents.
    pub(super) refine: bool,
}

/// Queue pops allowed per node in one local-moving phase. Every accepted
/// move raises the quality by more than `tolerance`, so the phase ends on
/// its own; this bound only turns a floating-point pathology into an early
/// stop instead of a hang.
const MAX_POPS_PER_NODE: usize = 1_000;

/// Bound on move-refine-aggregate passes in one iteration. Each pass that
/// does not stop shrinks the aggregate graph by at least one node, and in
/// practice a pass halves it or better, so 64 is never reached; it only
/// guarantees termination.
const MAX_AGGREGATION_PASSES: usize = 64;

/// Null-model weight of every node for `quality`.
pub(super) fn null_weights(graph: &WeightedGraph, quality: Quality) -> Vec<f64> {
    match quality {
        Quality::Modularity => graph.strengths().to_vec(),
        Quality::Cpm => graph.sizes().iter().map(|&s| f64::from(s)).collect(),
    }
}

/// Penalty factor of the "weight minus penalty" form (see module docs).
pub(super) fn penalty(graph: &WeightedGraph, quality: Quality, resolution: f64) -> f64 {
    match quality {
        Quality::Modularity => {
            let two_m = 2.0 * graph.total_weight();
            if two_m > 0.0 {
                resolution / two_m
            } else {
                0.0
            }
        }
        Quality::Cpm => resolution,
    }
}

/// Quality of `membership` (dense ids `< count`) in edge-weight units:
/// `Σ_c (in_c - penalty * N_c^2 / 2)`. Differences divided by `m` are
/// modularity differences.
pub(super) fn quality(
    graph: &WeightedGraph,
    membership: &[u32],
    count: usize,
    config: &RunConfig,
) -> f64 {
    let null = null_weights(graph, config.quality);
    let penalty = penalty(graph, config.quality, config.resolution);
    let mut community_null = vec![0.0f64; count];
    let mut inside = 0.0;
    for v in 0..graph.node_count() {
        let c = membership[v];
        community_null[c as usize] += null[v];
        inside += graph.self_weights()[v];
        let (ts, ws) = graph.adjacency(v);
        for (&u, &w) in ts.iter().zip(ws) {
            // Each internal edge is seen from both ends: count it once.
            if membership[u as usize] == c && (u as usize) > v {
                inside += w;
            }
        }
    }
    // `(penalty * x) * x`: for modularity `penalty * x <= resolution`, so
    // the product cannot overflow even when `x * x` would.
    inside
        - community_null
            .iter()
            .map(|&x| penalty * x * x / 2.0)
            .sum::<f64>()
}

/// Renumbers community ids densely in order of first occurrence (hence by
/// smallest member) and returns the number of communities.
pub(super) fn renumber(membership: &mut [u32]) -> usize {
    let mut map: Vec<u32> = Vec::new();
    let mut next = 0u32;
    for c in membership.iter_mut() {
        let slot = *c as usize;
        if slot >= map.len() {
            map.resize(slot + 1, u32::MAX);
        }
        if map[slot] == u32::MAX {
            map[slot] = next;
            next += 1;
        }
        *c = map[slot];
    }
    next as usize
}

/// One Leiden iteration (paper, Algorithm A.1) on `graph` starting from
/// `initial` (dense ids `< n`): passes of move, refine, aggregate until no
/// aggregate node joins another. Returns each node's community (dense ids,
/// not yet canonical). On a normal finish every community is one node of
/// the last aggregate, i.e. one refined piece, hence connected; only when
/// `MAX_AGGREGATION_PASSES` cuts the run short can a community have been
/// left disconnected, which the caller's safety net repairs.
pub(super) fn run(
    graph: &WeightedGraph,
    initial: Vec<u32>,
    config: &RunConfig,
    rng: &mut SplitMix64,
) -> Vec<u32> {
    let n = graph.node_count();
    // Which node of the current aggregate graph each input node sits in.
    let mut node_to_current: Vec<u32> = (0..n as u32).collect();
    let mut aggregate: Option<WeightedGraph> = None;
    let mut partition = initial;
    for _ in 0..MAX_AGGREGATION_PASSES {
        let current = aggregate.as_ref().unwrap_or(graph);
        let current_n = current.node_count();
        let null = null_weights(current, config.quality);
        let penalty = penalty(current, config.quality, config.resolution);
        move_nodes_fast(
            current,
            &null,
            penalty,
            config.tolerance,
            &mut partition,
            rng,
        );
        let count = renumber(&mut partition);
        if count == current_n {
            // No aggregate node joined another: the partition is stable.
            break;
        }
        let mut collapse = if config.refine {
            refine_partition(current, &null, penalty, config.theta, &partition, rng)
        } else {
            partition.clone()
        };
        let mut collapse_count = renumber(&mut collapse);
        if collapse_count == current_n {
            // Refinement merged nothing (possible only when every merge is a
            // near tie and θ chose to stay). Collapsing the unrefined
            // communities, cut into connected pieces so connectivity is
            // kept, still makes progress.
            let (split, split_count) = current.split_into_connected(&partition);
            if split_count == current_n {
                // Every community is a set of mutually unlinked nodes:
                // apart they score higher and are trivially connected.
                partition = split;
                break;
            }
            collapse = split;
            collapse_count = split_count;
        }
        let next = current.aggregate(&collapse, collapse_count);
        // The aggregate starts from the unrefined partition: refined pieces
        // of one community begin together and may still move apart.
        let mut next_partition = vec![0u32; collapse_count];
        for (v, &piece) in collapse.iter().enumerate() {
            next_partition[piece as usize] = partition[v];
        }
        for slot in &mut node_to_current {
            *slot = collapse[*slot as usize];
        }
        partition = next_partition;
        aggregate = Some(next);
    }
    node_to_current
        .iter()
        .map(|&a| partition[a as usize])
        .collect()
}

/// Queue-based fast local moving (Leiden paper, Algorithm A.2): visit nodes
/// in random order, move each to the neighbouring community (or an empty
/// one) with the best strictly positive gain, and re-queue neighbours left
/// outside the node's new community. `community` holds ids `< n` on entry
/// and on exit. Returns whether any node moved.
pub(super) fn move_nodes_fast(
    graph: &WeightedGraph,
    null: &[f64],
    penalty: f64,
    tolerance: f64,
    community: &mut [u32],
    rng: &mut SplitMix64,
) -> bool {
    let n = graph.node_count();
    let mut community_null = vec![0.0f64; n];
    let mut community_size = vec![0u32; n];
    for v in 0..n {
        community_null[community[v] as usize] += null[v];
        community_size[community[v] as usize] += 1;
    }
    // Unused ids, so "move to an empty community" always has an id: with n
    // ids for n nodes, a node sharing its community leaves one id unused.
    let mut empty: Vec<u32> = (0..n as u32)
        .rev()
        .filter(|&c| community_size[c as usize] == 0)
        .collect();

    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&v| graph.degree_count(v as usize) > 0)
        .collect();
    rng.shuffle(&mut order);
    let mut in_queue = vec![false; n];
    for &v in &order {
        in_queue[v as usize] = true;
    }
    let mut queue: VecDeque<u32> = order.into();

    let mut weight_to = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut moved_any = false;
    let mut pops_left = n.saturating_mul(MAX_POPS_PER_NODE);
    while let Some(v) = queue.pop_front() {
        if pops_left == 0 {
            break;
        }
        pops_left -= 1;
        let v = v as usize;
        in_queue[v] = false;
        let (ts, ws) = graph.adjacency(v);
        for (&u, &w) in ts.iter().zip(ws) {
            let c = community[u as usize];
            if weight_to[c as usize] == 0.0 {
                touched.push(c);
            }
            weight_to[c as usize] += w;
        }
        let old = community[v];
        community_null[old as usize] -= null[v];
        community_size[old as usize] -= 1;

        let own = null[v] * penalty;
        let stay_gain = weight_to[old as usize] - own * community_null[old as usize];
        let mut best = old;
        let mut best_gain = stay_gain + tolerance;
        for &c in &touched {
            if c != old {
                let gain = weight_to[c as usize] - own * community_null[c as usize];
                if gain > best_gain {
                    best = c;
                    best_gain = gain;
                }
            }
        }
        // An empty community gains exactly 0. Only worth it if v is not
        // alone already (then staying is the same as being alone).
        if community_size[old as usize] > 0 && best_gain < 0.0 {
            if let Some(&fresh) = empty.last() {
                best = fresh;
            }
        }
        if best != old && community_size[best as usize] == 0 {
            empty.pop();
        }
        community_null[best as usize] += null[v];
        community_size[best as usize] += 1;
        community[v] = best;
        if best != old {
            moved_any = true;
            if community_size[old as usize] == 0 {
                empty.push(old);
            }
            for &u in ts {
                if !in_queue[u as usize] && community[u as usize] != best {
                    in_queue[u as usize] = true;
                    queue.push_back(u);
                }
            }
        }
        for &c in &touched {
            weight_to[c as usize] = 0.0;
        }
        touched.clear();
    }
    moved_any
}

/// Refinement (Leiden paper, Algorithms A.3-A.4): starting from singletons,
/// merge nodes only within their community of `partition`, and only
/// well-connected nodes into well-connected sub-communities they are
/// attached to, choosing among non-negative gains with probability
/// proportional to `exp(gain / theta)`. Every refined community is
/// therefore connected and lies inside one community of `partition`.
/// Returned ids are node ids of a representative (not dense).
pub(super) fn refine_partition(
    graph: &WeightedGraph,
    null: &[f64],
    penalty: f64,
    theta: f64,
    partition: &[u32],
    rng: &mut SplitMix64,
) -> Vec<u32> {
    let n = graph.node_count();
    let mut community_null = vec![0.0f64; n];
    for v in 0..n {
        community_null[partition[v] as usize] += null[v];
    }
    // Weight from each node to the rest of its community.
    let node_inside: Vec<f64> = (0..n)
        .map(|v| {
            let (ts, ws) = graph.adjacency(v);
            ts.iter()
                .zip(ws)
                .filter(|(&u, _)| partition[u as usize] == partition[v])
                .map(|(_, &w)| w)
                .sum()
        })
        .collect();

    let mut refined: Vec<u32> = (0..n as u32).collect();
    // Per refined community: null weight, size, and weight to the rest of
    // its enclosing community (what well-connectedness is judged on).
    let mut refined_null = null.to_vec();
    let mut refined_size = vec![1u32; n];
    let mut refined_outside = node_inside.clone();

    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    let mut weight_to = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut candidates: Vec<(u32, f64)> = Vec::new();
    for &v in &order {
        let v = v as usize;
        if refined_size[refined[v] as usize] != 1 {
            continue; // Someone already joined v: only singletons move.
        }
        let s = partition[v] as usize;
        let s_null = community_null[s];
        let well_connected_node = node_inside[v] >= penalty * null[v] * (s_null - null[v]);
        if !well_connected_node || node_inside[v] == 0.0 {
            continue;
        }
        let (ts, ws) = graph.adjacency(v);
        for (&u, &w) in ts.iter().zip(ws) {
            if partition[u as usize] as usize != s {
                continue;
            }
            let r = refined[u as usize];
            if weight_to[r as usize] == 0.0 {
                touched.push(r);
            }
            weight_to[r as usize] += w;
        }
        // Staying alone gains 0 and is always a candidate (paper: v's own
        // singleton is a well-connected subset of the community).
        candidates.clear();
        candidates.push((v as u32, 0.0));
        let own = penalty * null[v];
        for &r in &touched {
            let ri = r as usize;
            let well_connected =
                refined_outside[ri] >= penalty * refined_null[ri] * (s_null - refined_null[ri]);
            if !well_connected {
                continue;
            }
            let gain = weight_to[ri] - own * refined_null[ri];
            if gain >= 0.0 {
                candidates.push((r, gain));
            }
        }
        let chosen = choose(&candidates, theta, rng).unwrap_or(v as u32);
        if chosen != v as u32 {
            let ci = chosen as usize;
            refined_outside[ci] += node_inside[v] - 2.0 * weight_to[ci];
            refined_null[ci] += null[v];
            refined_size[ci] += 1;
            refined_size[v] = 0;
            refined[v] = chosen;
        }
        for &r in &touched {
            weight_to[r as usize] = 0.0;
        }
        touched.clear();
    }
    refined
}

/// Draws a candidate with probability proportional to `exp(gain / theta)`;
/// with `theta == 0` takes the best gain, earliest candidate on ties.
/// `None` only for an empty list.
fn choose(candidates: &[(u32, f64)], theta: f64, rng: &mut SplitMix64) -> Option<u32> {
    let &first = candidates.first()?;
    let mut best = first;
    for &candidate in candidates {
        if candidate.1 > best.1 {
            best = candidate;
        }
    }
    if candidates.len() == 1 || theta <= 0.0 {
        return Some(best.0);
    }
    // Subtracting the best gain keeps every exponent <= 0: no overflow, and
    // the best candidate has weight exactly 1, so the total is >= 1.
    let total: f64 = candidates
        .iter()
        .map(|&(_, gain)| ((gain - best.1) / theta).exp())
        .sum();
    let mut target = rng.next_f64() * total;
    for &(id, gain) in candidates {
        target -= ((gain - best.1) / theta).exp();
        if target < 0.0 {
            return Some(id);
        }
    }
    Some(best.0) // Rounding left a sliver of `target`: take the best.
}
