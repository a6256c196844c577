//! Graph generators and independent checks shared by the tests. Generators
//! use the algorithm's own seeded generator, so every test is reproducible.

use super::hierarchy::GAIN_TOLERANCE;
use super::optimise::{self, RunConfig};
use super::rng::SplitMix64;
use super::{Quality, WeightedGraph, DEFAULT_RANDOMNESS};

pub(super) fn graph(n: usize, edges: &[(u32, u32, f64)]) -> WeightedGraph {
    WeightedGraph::from_edges(n, edges).expect("valid test graph")
}

pub(super) fn unit_edges(pairs: &[(u32, u32)]) -> Vec<(u32, u32, f64)> {
    pairs.iter().map(|&(a, b)| (a, b, 1.0)).collect()
}

/// Every pair of nodes in `nodes` joined with weight 1.
pub(super) fn clique(nodes: std::ops::Range<u32>) -> Vec<(u32, u32, f64)> {
    let mut edges = Vec::new();
    for a in nodes.clone() {
        for b in a + 1..nodes.end {
            edges.push((a, b, 1.0));
        }
    }
    edges
}

/// Stochastic block model: `blocks` groups of `block_size` nodes, each pair
/// linked with probability `p_in` inside a group and `p_out` across.
pub(super) fn planted_partition(
    blocks: usize,
    block_size: usize,
    p_in: f64,
    p_out: f64,
    seed: u64,
) -> (usize, Vec<(u32, u32, f64)>, Vec<u32>) {
    let n = blocks * block_size;
    let truth: Vec<u32> = (0..n).map(|v| (v / block_size) as u32).collect();
    let mut rng = SplitMix64::new(seed);
    let mut edges = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let p = if truth[a] == truth[b] { p_in } else { p_out };
            if rng.next_f64() < p {
                edges.push((a as u32, b as u32, 1.0));
            }
        }
    }
    (n, edges, truth)
}

/// Uniformly random multigraph with `m` edge draws, weights in `[0.5, 2)`.
pub(super) fn random_graph(n: usize, m: usize, seed: u64) -> Vec<(u32, u32, f64)> {
    let mut rng = SplitMix64::new(seed);
    (0..m)
        .map(|_| {
            let a = rng.below(n) as u32;
            let b = rng.below(n) as u32;
            (a, b, 0.5 + 1.5 * rng.next_f64())
        })
        .collect()
}

/// `m` edge draws over `n` nodes split into `blocks` equal groups; an edge
/// leaves its group with probability `mixing`.
pub(super) fn clustered_graph(
    n: usize,
    m: usize,
    blocks: usize,
    mixing: f64,
    seed: u64,
) -> Vec<(u32, u32, f64)> {
    let block_size = n / blocks;
    let mut rng = SplitMix64::new(seed);
    (0..m)
        .map(|_| {
            let a = rng.below(n);
            let b = if rng.next_f64() < mixing {
                rng.below(n)
            } else {
                a / block_size * block_size + rng.below(block_size)
            };
            (a as u32, b as u32, 1.0)
        })
        .collect()
}

/// Zachary's karate club (1977), 34 members and 78 friendships, as
/// published (members numbered from 1 here, shifted to 0-based below).
pub(super) const KARATE_EDGES: [(u32, u32); 78] = [
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (1, 6),
    (1, 7),
    (1, 8),
    (1, 9),
    (1, 11),
    (1, 12),
    (1, 13),
    (1, 14),
    (1, 18),
    (1, 20),
    (1, 22),
    (1, 32),
    (2, 3),
    (2, 4),
    (2, 8),
    (2, 14),
    (2, 18),
    (2, 20),
    (2, 22),
    (2, 31),
    (3, 4),
    (3, 8),
    (3, 9),
    (3, 10),
    (3, 14),
    (3, 28),
    (3, 29),
    (3, 33),
    (4, 8),
    (4, 13),
    (4, 14),
    (5, 7),
    (5, 11),
    (6, 7),
    (6, 11),
    (6, 17),
    (7, 17),
    (9, 31),
    (9, 33),
    (9, 34),
    (10, 34),
    (14, 34),
    (15, 33),
    (15, 34),
    (16, 33),
    (16, 34),
    (19, 33),
    (19, 34),
    (20, 34),
    (21, 33),
    (21, 34),
    (23, 33),
    (23, 34),
    (24, 26),
    (24, 28),
    (24, 30),
    (24, 33),
    (24, 34),
    (25, 26),
    (25, 28),
    (25, 32),
    (26, 32),
    (27, 30),
    (27, 34),
    (28, 34),
    (29, 32),
    (29, 34),
    (30, 33),
    (30, 34),
    (31, 33),
    (31, 34),
    (32, 33),
    (32, 34),
    (33, 34),
];

pub(super) fn karate() -> WeightedGraph {
    let edges: Vec<(u32, u32, f64)> = KARATE_EDGES
        .iter()
        .map(|&(a, b)| (a - 1, b - 1, 1.0))
        .collect();
    graph(34, &edges)
}

pub(super) fn default_config(graph: &WeightedGraph) -> RunConfig {
    let mean = graph.total_weight() / graph.edge_count().max(1) as f64;
    RunConfig {
        quality: Quality::Modularity,
        resolution: 1.0,
        theta: DEFAULT_RANDOMNESS * mean,
        tolerance: GAIN_TOLERANCE * mean,
        refine: true,
    }
}

/// Number of communities of `membership` that are not connected.
pub(super) fn disconnected_communities(graph: &WeightedGraph, membership: &[u32]) -> usize {
    let mut dense = membership.to_vec();
    let count = optimise::renumber(&mut dense);
    let (pieces, _) = graph.split_into_connected(&dense);
    // A community is disconnected if its nodes fall into several pieces.
    let mut first_piece = vec![u32::MAX; count];
    let mut broken = vec![false; count];
    for (v, &c) in dense.iter().enumerate() {
        let c = c as usize;
        if first_piece[c] == u32::MAX {
            first_piece[c] = pieces[v];
        } else if first_piece[c] != pieces[v] {
            broken[c] = true;
        }
    }
    broken.iter().filter(|&&b| b).count()
}

/// Same partition up to renaming of community ids.
pub(super) fn same_partition(a: &[u32], b: &[u32]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    optimise::renumber(&mut a);
    optimise::renumber(&mut b);
    a == b
}

/// `Q = 1/2m Σ_ij (A_ij - γ k_i k_j / 2m) δ(c_i, c_j)` over a dense matrix.
pub(super) fn brute_force_modularity(
    n: usize,
    edges: &[(u32, u32, f64)],
    membership: &[u32],
    resolution: f64,
) -> f64 {
    let mut adjacency = vec![vec![0.0; n]; n];
    for &(a, b, w) in edges {
        if a != b {
            adjacency[a as usize][b as usize] += w;
            adjacency[b as usize][a as usize] += w;
        }
    }
    let degree: Vec<f64> = adjacency.iter().map(|row| row.iter().sum()).collect();
    let two_m: f64 = degree.iter().sum();
    if two_m == 0.0 {
        return 0.0;
    }
    let mut q = 0.0;
    for i in 0..n {
        for j in 0..n {
            if membership[i] == membership[j] {
                q += adjacency[i][j] - resolution * degree[i] * degree[j] / two_m;
            }
        }
    }
    q / two_m
}
