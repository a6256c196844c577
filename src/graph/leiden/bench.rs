//! Release-mode benchmark of graph construction and hierarchical Leiden,
//! run on demand:
//!
//! ```text
//! cargo test --release leiden::bench -- --ignored --nocapture --test-threads=1
//! ```
//!
//! Uses only the public API and its own generator so it can move to a
//! standalone script. Peak memory is the process high-water mark (Linux
//! `VmHWM`, reset through `/proc/self/clear_refs` before each case), so it
//! includes the generated edge list the caller holds.

use std::time::Instant;

use super::{hierarchical_leiden, LeidenParams, WeightedGraph};

/// Fraction of edges drawn between random nodes instead of within a block.
const MIXING: f64 = 0.3;

/// Tiny xorshift generator for test data (the algorithm has its own).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `m` edges over `n` nodes in `blocks` groups; with one block the graph is
/// uniformly random (no community structure: the hardest case).
fn clustered_edges(n: usize, m: usize, blocks: usize, seed: u64) -> Vec<(u32, u32, f64)> {
    let block = n / blocks;
    let mut rng = XorShift(seed | 1);
    (0..m)
        .map(|_| {
            let a = rng.below(n);
            let b = if blocks == 1 || rng.unit() < MIXING {
                rng.below(n)
            } else {
                a / block * block + rng.below(block)
            };
            (a as u32, b as u32, 1.0)
        })
        .collect()
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

#[test]
#[ignore = "benchmark: run in release mode on demand"]
fn benchmark_large_graphs() {
    let cases = [
        ("clustered", 10_000, 50_000, 100),
        ("clustered", 100_000, 500_000, 1_000),
        ("uniform", 100_000, 500_000, 1),
        ("clustered", 200_000, 1_000_000, 2_000),
    ];
    for (kind, n, m, blocks) in cases {
        let edges = clustered_edges(n, m, blocks, 0x00C0_FFEE);
        // Reset the high-water mark to the current footprint (edges held).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let base = status_kib("VmRSS:");
        let start = Instant::now();
        let graph = WeightedGraph::from_edges(n, &edges).expect("valid graph");
        let built = start.elapsed();
        let hierarchy = hierarchical_leiden(&graph, &LeidenParams::default()).expect("valid");
        let total = start.elapsed();
        let peak = status_kib("VmHWM:");
        let levels: Vec<String> = hierarchy
            .levels
            .iter()
            .map(|l| format!("{}@{:.3}", l.community_count, l.modularity))
            .collect();
        println!(
            "{kind:9} n={n:>7} edges={:>7} build={:>6.0}ms leiden={:>6.0}ms \
             rss_before={:>6}KiB peak={:>6}KiB (+{}KiB) levels(count@Q)=[{}]",
            graph.edge_count(),
            built.as_secs_f64() * 1e3,
            (total - built).as_secs_f64() * 1e3,
            base,
            peak,
            peak.saturating_sub(base),
            levels.join(", ")
        );
    }
}

#[test]
#[ignore]
fn explore_levels() {
    for (n, m, blocks) in [(100_000, 500_000, 1000), (10_000, 50_000, 100), (100_000, 500_000, 1)] {
        let edges = clustered_edges(n, m, blocks, 0x00C0_FFEE);
        let graph = WeightedGraph::from_edges(n, &edges).unwrap();
        let params = LeidenParams { max_levels: 40, ..LeidenParams::default() };
        let h = hierarchical_leiden(&graph, &params).unwrap();
        let levels: Vec<String> = h.levels.iter().map(|l| format!("{:.3}:{}@{:.3}", l.resolution, l.community_count, l.modularity)).collect();
        println!("n={n} blocks={blocks}: {}", levels.join(" "));
    }
}
