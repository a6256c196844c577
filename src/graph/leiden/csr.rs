//! The undirected weighted graph community detection runs on, stored in
//! compressed sparse row (CSR) form, and the structural operations the
//! optimiser needs: collapsing communities into an aggregate graph and
//! splitting communities into connected pieces.
//!
//! The same type represents both the caller's input graph and the aggregate
//! graphs built internally, where one node stands for a whole community: an
//! aggregate node carries the weight of the edges inside it (`self_weight`)
//! and the number of input nodes it covers (`size`). Input graphs never have
//! self weight, because input self loops are dropped.

use super::LeidenError;

/// Largest node count: node ids are `u32`, and `u32::MAX` itself is kept free
/// as an internal "unassigned" marker.
const MAX_NODE_COUNT: usize = u32::MAX as usize;
/// Marks a node not yet reached by a connectivity search.
const UNLABELLED: u32 = u32::MAX;

/// Undirected weighted graph in CSR form; build it with
/// [`WeightedGraph::from_edges`].
///
/// Memory is `O(nodes + edges)`: per undirected edge two adjacency entries of
/// 12 bytes, per node about 28 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedGraph {
    /// `offsets[v]..offsets[v + 1]` indexes node `v`'s adjacency entries.
    offsets: Vec<usize>,
    /// Neighbour of each adjacency entry; ascending within a node for input
    /// graphs, in deterministic first-encounter order for aggregates.
    targets: Vec<u32>,
    /// Weight of each adjacency entry; always strictly positive and finite.
    weights: Vec<f64>,
    /// Weight of edges inside a node, each counted once (aggregates only).
    self_weight: Vec<f64>,
    /// Weighted degree: incident edge weights plus twice the self weight.
    strength: Vec<f64>,
    /// Number of input nodes this node stands for (1 for input graphs).
    size: Vec<u32>,
    /// `m`: total edge weight, each undirected edge once, self weight included.
    total_weight: f64,
    /// Self loops dropped by [`WeightedGraph::from_edges`].
    dropped_self_loops: usize,
}

impl WeightedGraph {
    /// Builds the graph on nodes `0..node_count` from an undirected edge list.
    ///
    /// * Duplicate edges (in either orientation) are merged by summing their
    ///   weights. Edges are put in a canonical order first, so the result,
    ///   down to the last bit of every sum, does not depend on the order or
    ///   orientation of `edges`.
    /// * Self loops are validated, then dropped and counted (see
    ///   [`WeightedGraph::dropped_self_loops`]): an entity related to itself
    ///   says nothing about which community it belongs to.
    /// * Zero-weight edges are dropped: they connect nothing as far as
    ///   modularity is concerned.
    ///
    /// # Errors
    /// Non-finite or negative weights, node ids `>= node_count`, more than
    /// `u32::MAX - 1` nodes, or weights whose total overflows `f64`.
    pub fn from_edges(
        node_count: usize,
        edges: &[(u32, u32, f64)],
    ) -> Result<WeightedGraph, LeidenError> {
        if node_count > MAX_NODE_COUNT - 1 {
            return Err(LeidenError::TooManyNodes { node_count });
        }
        let mut kept = Vec::with_capacity(edges.len());
        let mut dropped_self_loops = 0;
        for (edge_index, &(a, b, weight)) in edges.iter().enumerate() {
            if !weight.is_finite() || weight < 0.0 {
                return Err(LeidenError::InvalidWeight { edge_index, weight });
            }
            for node in [a, b] {
                if node as usize >= node_count {
                    return Err(LeidenError::NodeOutOfRange {
                        edge_index,
                        node,
                        node_count,
                    });
                }
            }
            if a == b {
                dropped_self_loops += 1;
            } else if weight > 0.0 {
                kept.push((a.min(b), a.max(b), weight));
            }
        }
        kept.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.total_cmp(&y.2)));
        // Merge duplicates in place; equal keys are adjacent after sorting.
        let mut merged_len = 0;
        for i in 0..kept.len() {
            let edge = kept[i];
            if merged_len > 0 {
                let last = &mut kept[merged_len - 1];
                if last.0 == edge.0 && last.1 == edge.1 {
                    last.2 += edge.2;
                    continue;
                }
            }
            kept[merged_len] = edge;
            merged_len += 1;
        }
        kept.truncate(merged_len);
        kept.shrink_to_fit();

        let mut offsets = vec![0usize; node_count + 1];
        for &(a, b, _) in &kept {
            offsets[a as usize + 1] += 1;
            offsets[b as usize + 1] += 1;
        }
        for v in 0..node_count {
            offsets[v + 1] += offsets[v];
        }
        let entries = offsets[node_count];
        let mut targets = vec![0u32; entries];
        let mut weights = vec![0f64; entries];
        let mut cursor = offsets[..node_count].to_vec();
        // Edges are sorted by (low, high), so each node receives its lower
        // neighbours in ascending order before its higher ones: adjacency
        // lists come out sorted without a second sort.
        for &(a, b, w) in &kept {
            for (from, to) in [(a, b), (b, a)] {
                let slot = cursor[from as usize];
                targets[slot] = to;
                weights[slot] = w;
                cursor[from as usize] += 1;
            }
        }
        drop(kept);

        let strength: Vec<f64> = (0..node_count)
            .map(|v| weights[offsets[v]..offsets[v + 1]].iter().sum())
            .collect();
        let total_weight = strength.iter().sum::<f64>() / 2.0;
        if !strength.iter().all(|s| s.is_finite()) || !(2.0 * total_weight).is_finite() {
            return Err(LeidenError::WeightOverflow);
        }
        Ok(WeightedGraph {
            offsets,
            targets,
            weights,
            self_weight: vec![0.0; node_count],
            strength,
            size: vec![1; node_count],
            total_weight,
            dropped_self_loops,
        })
    }

    /// Number of nodes, isolated ones included.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.strength.len()
    }

    /// Number of distinct undirected edges between different nodes.
    #[must_use]
    pub fn edge_count(&self) -> usize {
        self.targets.len() / 2
    }

    /// Total edge weight `m` (each undirected edge counted once).
    #[must_use]
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }

    /// Number of self loops the edge list contained (all dropped).
    #[must_use]
    pub fn dropped_self_loops(&self) -> usize {
        self.dropped_self_loops
    }

    /// Weighted degree of `node`; `None` when out of range.
    #[must_use]
    pub fn strength(&self, node: u32) -> Option<f64> {
        self.strength.get(node as usize).copied()
    }

    /// Neighbours of `node` with edge weights, ascending by neighbour id;
    /// empty when `node` is out of range.
    pub fn neighbors(&self, node: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        let range = match (
            self.offsets.get(node as usize),
            self.offsets.get(node as usize + 1),
        ) {
            (Some(&start), Some(&end)) => start..end,
            _ => 0..0,
        };
        self.targets[range.clone()]
            .iter()
            .copied()
            .zip(self.weights[range].iter().copied())
    }

    // ----- crate-internal accessors (indices are trusted) -----

    pub(super) fn adjacency(&self, v: usize) -> (&[u32], &[f64]) {
        let range = self.offsets[v]..self.offsets[v + 1];
        (&self.targets[range.clone()], &self.weights[range])
    }

    pub(super) fn degree_count(&self, v: usize) -> usize {
        self.offsets[v + 1] - self.offsets[v]
    }

    pub(super) fn strengths(&self) -> &[f64] {
        &self.strength
    }

    pub(super) fn sizes(&self) -> &[u32] {
        &self.size
    }

    pub(super) fn self_weights(&self) -> &[f64] {
        &self.self_weight
    }

    /// Collapses each community of `membership` (dense ids `< count`) into
    /// one node. Edges inside a community become its self weight; edges
    /// between two communities are summed into one edge. Node `c` of the
    /// result is community `c`.
    pub(super) fn aggregate(&self, membership: &[u32], count: usize) -> WeightedGraph {
        let n = self.node_count();
        // Bucket the nodes by community (counting sort, stable by node id).
        let mut start = vec![0usize; count + 1];
        for &c in membership {
            start[c as usize + 1] += 1;
        }
        for c in 0..count {
            start[c + 1] += start[c];
        }
        let mut members = vec![0u32; n];
        let mut cursor = start[..count].to_vec();
        for (v, &c) in membership.iter().enumerate() {
            members[cursor[c as usize]] = v as u32;
            cursor[c as usize] += 1;
        }

        let mut offsets = Vec::with_capacity(count + 1);
        offsets.push(0);
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        let mut self_weight = vec![0.0; count];
        let mut strength = vec![0.0; count];
        let mut size = vec![0u32; count];
        let mut accumulated = vec![0.0f64; count];
        let mut touched: Vec<u32> = Vec::new();
        for c in 0..count {
            for &v in &members[start[c]..start[c + 1]] {
                let v = v as usize;
                self_weight[c] += self.self_weight[v];
                strength[c] += self.strength[v];
                size[c] = size[c].saturating_add(self.size[v]);
                let (ts, ws) = self.adjacency(v);
                for (&u, &w) in ts.iter().zip(ws) {
                    let t = membership[u as usize];
                    if t as usize == c {
                        // Seen from both endpoints; count the edge once.
                        if u as usize > v {
                            self_weight[c] += w;
                        }
                    } else {
                        if accumulated[t as usize] == 0.0 {
                            touched.push(t);
                        }
                        accumulated[t as usize] += w;
                    }
                }
            }
            // First-encounter order: deterministic, and skipping a sort
            // saves a few percent; nothing downstream needs sorted lists.
            for &t in &touched {
                targets.push(t);
                weights.push(accumulated[t as usize]);
                accumulated[t as usize] = 0.0;
            }
            touched.clear();
            offsets.push(targets.len());
        }
        WeightedGraph {
            offsets,
            targets,
            weights,
            self_weight,
            strength,
            size,
            total_weight: self.total_weight,
            dropped_self_loops: self.dropped_self_loops,
        }
    }

    /// Splits every community of `membership` into its connected pieces
    /// (edges with both ends inside the community). Returns the new
    /// membership, numbered by smallest member, and the number of pieces.
    /// With a constant membership this labels the connected components.
    pub(super) fn split_into_connected(&self, membership: &[u32]) -> (Vec<u32>, usize) {
        let n = self.node_count();
        let mut label = vec![UNLABELLED; n];
        let mut stack = Vec::new();
        let mut count = 0u32;
        for root in 0..n {
            if label[root] != UNLABELLED {
                continue;
            }
            label[root] = count;
            stack.push(root as u32);
            while let Some(v) = stack.pop() {
                let (ts, _) = self.adjacency(v as usize);
                for &u in ts {
                    if label[u as usize] == UNLABELLED
                        && membership[u as usize] == membership[v as usize]
                    {
                        label[u as usize] = count;
                        stack.push(u);
                    }
                }
            }
            count += 1;
        }
        (label, count as usize)
    }
}
