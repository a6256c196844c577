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

use super::{hierarchical_leiden, LeidenParams, Partition, WeightedGraph};

/// Fraction of edges drawn between random nodes instead of within a block.
const MIXING: f64 = 0.3;
/// Exponent of the endpoint weights of the power-law case (degree
/// distribution tail exponent 1 + 1 / 0.6 ≈ 2.7).
const POWER_LAW_EXPONENT: f64 = 0.6;

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

/// Chung-Lu graph: node `i` is an endpoint with probability proportional to
/// `(i + 1)^-POWER_LAW_EXPONENT`, giving a heavy-tailed degree distribution
/// with hubs, like real entity graphs.
fn power_law_edges(n: usize, m: usize, seed: u64) -> Vec<(u32, u32, f64)> {
    let mut cumulative = Vec::with_capacity(n);
    let mut total = 0.0;
    for i in 0..n {
        total += ((i + 1) as f64).powf(-POWER_LAW_EXPONENT);
        cumulative.push(total);
    }
    let mut rng = XorShift(seed | 1);
    let mut pick = || {
        cumulative
            .partition_point(|&c| c < rng.unit() * total)
            .min(n - 1) as u32
    };
    (0..m).map(|_| (pick(), pick(), 1.0)).collect()
}

/// CPU time this thread has run, from the scheduler (Linux): wall time is
/// unreliable on a shared machine.
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e6)
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
    // (kind, nodes, edge draws, blocks; 0 blocks = power law)
    let cases = [
        ("clustered", 10_000, 50_000, 100),
        ("clustered", 100_000, 500_000, 1_000),
        ("uniform", 100_000, 500_000, 1),
        ("powerlaw", 100_000, 500_000, 0),
        ("clustered", 200_000, 1_000_000, 2_000),
    ];
    for (kind, n, m, blocks) in cases {
        let edges = if blocks == 0 {
            power_law_edges(n, m, 0x00C0_FFEE)
        } else {
            clustered_edges(n, m, blocks, 0x00C0_FFEE)
        };
        // Reset the high-water mark to the current footprint (edges held).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let base = status_kib("VmRSS:");
        let start = Instant::now();
        let cpu_start = thread_cpu_ms();
        let graph = WeightedGraph::from_edges(n, &edges).expect("valid graph");
        let built = start.elapsed();
        let hierarchy = hierarchical_leiden(&graph, &LeidenParams::default()).expect("valid");
        let total = start.elapsed();
        let cpu = thread_cpu_ms() - cpu_start;
        let single = LeidenParams {
            max_levels: 1,
            ..LeidenParams::default()
        };
        let level0_cpu_start = thread_cpu_ms();
        let level0 = hierarchical_leiden(&graph, &single).expect("valid");
        let level0_cpu = thread_cpu_ms() - level0_cpu_start;
        assert_eq!(
            level0.levels[0],
            Partition {
                parents: Vec::new(),
                ..hierarchy.levels[0].clone()
            }
        );
        let peak = status_kib("VmHWM:");
        let levels: Vec<String> = hierarchy
            .levels
            .iter()
            .map(|l| format!("{}@{:.3}", l.community_count, l.modularity))
            .collect();
        println!(
            "{kind:9} n={n:>7} edges={:>7} build={:>4.0}ms build+hierarchy={:>5.0}ms \
             (cpu {:>5.0}ms; level 0 alone cpu {:>5.0}ms) \
             rss_before={:>6}KiB peak={:>6}KiB (+{}KiB) levels(count@Q)=[{}]",
            graph.edge_count(),
            built.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            cpu,
            level0_cpu,
            base,
            peak,
            peak.saturating_sub(base),
            levels.join(", ")
        );
    }
}
