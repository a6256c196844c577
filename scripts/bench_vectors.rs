//! Benchmarks of the semantic layer, below the protocol:
//!
//! - embedding throughput of the built-in model (MB/s of text, one thread);
//! - vector-lane search latency (p50/p99) at several sizes, dimension 256,
//!   with exact top-10 recall of the int8 scan plus re-scoring, measured
//!   against a brute-force f32 scan of the vectors as generated (the store
//!   keeps only their int8 rows; the check generates them again);
//! - the process's peak RSS and anonymous memory after building the
//!   largest index (vectors are mapped, not copied).
//!
//! `--corpus clusters` (the default) draws the vectors around 512 tight
//! centres, where a query's ten nearest differ below the int8 rows'
//! rounding. `--corpus notes` embeds generated notes with the built-in
//! model instead (16 words each, drawn from this repository's README with
//! a Zipf law, as `bench_filters.py` draws its notes; questions of three
//! such words): the geometry the store's vectors really have.
//!
//! Run: `cargo run --release --example bench_vectors -- [--sizes 100000,1000000]
//!       [--queries 200] [--recall-queries 20] [--corpus clusters|notes]`

use alayasiki_mcp::config::Durability;
use alayasiki_mcp::embed::{BuiltinEmbedder, Embedder};
use alayasiki_mcp::store::vectors::kernel::{dot_f32, TopK};
use alayasiki_mcp::store::vectors::{VectorIndex, VectorSpec};
use std::time::{Duration, Instant};

const DIM: usize = 256;

#[derive(Clone)]
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn gauss(&mut self) -> f32 {
        // Sum of uniforms: close enough to normal for direction sampling.
        (0..4)
            .map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32)
            .sum::<f32>()
            - 2.0
    }
}

/// Unit vectors clustered around a few hundred centres, like real text
/// embeddings (uniform random directions would all be near-orthogonal).
fn vectors(n: usize, rng: &mut Rng, centres: &[Vec<f32>]) -> Vec<Vec<f32>> {
    (0..n)
        .map(|_| {
            let c = &centres[(rng.next() % centres.len() as u64) as usize];
            let mut v: Vec<f32> = c
                .iter()
                .map(|x| x + 0.6 * rng.gauss() / (DIM as f32).sqrt())
                .collect();
            let norm = dot_f32(&v, &v).sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        })
        .collect()
}

/// Where the vectors come from (see the module's docs).
#[derive(Clone, Copy, PartialEq)]
enum Corpus {
    Clusters,
    Notes,
}

/// The README's words of three letters or more, lowercased, in order.
fn readme_words() -> Vec<String> {
    include_str!("../README.md")
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.len() > 2)
        .map(str::to_lowercase)
        .collect()
}

/// Words for generated notes, most frequent first, with their cumulative
/// Zipf weights.
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocabulary {
    fn from_readme() -> Vocabulary {
        let mut counts: std::collections::HashMap<String, usize> = Default::default();
        for w in readme_words() {
            *counts.entry(w).or_default() += 1;
        }
        let mut words: Vec<(String, usize)> = counts.into_iter().collect();
        words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|r| {
                total += 1.0 / (r + 1) as f64;
                total
            })
            .collect();
        Vocabulary {
            words: words.into_iter().map(|(w, _)| w).collect(),
            cumulative,
        }
    }

    fn text(&self, rng: &mut Rng, words: usize) -> String {
        let total = *self.cumulative.last().unwrap();
        (0..words)
            .map(|_| {
                let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
                let i = self.cumulative.partition_point(|c| *c <= x);
                self.words[i.min(self.words.len() - 1)].as_str()
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `n` vectors of the corpus: clustered directions, or the built-in
/// model's embeddings of generated notes (or of questions, `words` 3).
fn corpus_vectors(
    corpus: Corpus,
    n: usize,
    rng: &mut Rng,
    centres: &[Vec<f32>],
    vocabulary: &Vocabulary,
    words: usize,
) -> Vec<Vec<f32>> {
    match corpus {
        Corpus::Clusters => vectors(n, rng, centres),
        Corpus::Notes => {
            let texts: Vec<String> = (0..n).map(|_| vocabulary.text(rng, words)).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            refs.chunks(4096)
                .flat_map(|batch| BuiltinEmbedder.embed_batch(batch).unwrap())
                .collect()
        }
    }
}

fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

fn main() {
    let mut sizes = vec![100_000usize, 1_000_000];
    let mut queries = 200usize;
    let mut recall_queries = 20usize;
    let mut corpus = Corpus::Clusters;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().expect("flag value");
        match a.as_str() {
            "--sizes" => sizes = v.split(',').map(|s| s.parse().unwrap()).collect(),
            "--queries" => queries = v.parse().unwrap(),
            "--recall-queries" => recall_queries = v.parse().unwrap(),
            "--corpus" => {
                corpus = match v.as_str() {
                    "clusters" => Corpus::Clusters,
                    "notes" => Corpus::Notes,
                    other => panic!("unknown corpus {other}"),
                }
            }
            other => panic!("unknown flag {other}"),
        }
    }

    // Embedding throughput: ~1 KB texts of real words.
    let words = readme_words();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let texts: Vec<String> = (0..5000)
        .map(|_| {
            let mut t = String::new();
            while t.len() < 1000 {
                t.push_str(&words[(rng.next() % words.len() as u64) as usize]);
                t.push(' ');
            }
            t
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let model = BuiltinEmbedder;
    model.embed_batch(&refs[..1]).unwrap(); // load the model
    let t = Instant::now();
    model.embed_batch(&refs).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "built-in embedding: {} texts of ~1 KB in {:.2} s = {:.1} MB/s on one thread ({:.0} texts/s)",
        texts.len(),
        secs,
        bytes as f64 / secs / 1e6,
        texts.len() as f64 / secs
    );

    let centres: Vec<Vec<f32>> = vectors(512, &mut rng, &[vec![0.0; DIM]]);
    let vocabulary = Vocabulary::from_readme();
    let made = |n: usize, rng: &mut Rng, words: usize| {
        corpus_vectors(corpus, n, rng, &centres, &vocabulary, words)
    };
    let dir = std::env::temp_dir().join(format!("alayasiki-bench-vec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = VectorSpec {
        embedder_id: "bench".into(),
        dim: DIM,
    };
    let index = VectorIndex::new(&dir, spec, Durability::Normal).unwrap();
    let tenant = index.tenant(1, 0, 0).unwrap();
    let mut stored = 0usize;
    // Each batch appended: the generator's state before it, and its size.
    let mut batches: Vec<(Rng, usize)> = Vec::new();
    for &size in &sizes {
        let t = Instant::now();
        while stored < size {
            let n = (size - stored).min(50_000);
            batches.push((rng.clone(), n));
            tenant.append(&made(n, &mut rng, 16)).unwrap();
            stored += n;
        }
        tenant.publish(stored as u64).unwrap();
        println!(
            "built {size} vectors of dimension {DIM} in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let qs = made(queries, &mut rng, 3);
        // Warm the mapping once (a cold map pays disk faults, not the scan).
        tenant.search_every_row(&qs[0], 10);
        // Searches build the sign index of a large tenant on a helper
        // thread; here it is built first, and timed.
        let t = Instant::now();
        tenant.build_sign_index();
        println!("  sign index built in {:.2} s", t.elapsed().as_secs_f64());
        let mut lat = Vec::with_capacity(queries);
        for q in &qs {
            let t = Instant::now();
            let hits = tenant.search(q, 10);
            lat.push(t.elapsed());
            assert_eq!(hits.len(), 10);
        }
        lat.sort();
        // Before the brute-force check below touches every exact row.
        let rss_after_search = status_kib("VmRSS:").unwrap_or(0);
        let checked: Vec<&Vec<f32>> = qs.iter().take(recall_queries).collect();
        let mut exact: Vec<TopK> = checked.iter().map(|_| TopK::new(10)).collect();
        let mut slot = 0u64;
        for (state, n) in &batches {
            for v in made(*n, &mut state.clone(), 16) {
                for (q, top) in checked.iter().zip(exact.iter_mut()) {
                    top.push(dot_f32(q, &v), slot);
                }
                slot += 1;
            }
        }
        let (mut agree, mut agree_every_row, mut kept_by_signs) = (0, 0, 0);
        for (q, top) in checked.iter().zip(exact) {
            let got: Vec<u64> = tenant.search(q, 10).iter().map(|h| h.slot).collect();
            let every_row: Vec<u64> = tenant
                .search_every_row(q, 10)
                .iter()
                .map(|h| h.slot)
                .collect();
            let top = top.into_sorted();
            agree += top.iter().filter(|s| got.contains(&s.slot)).count();
            agree_every_row += top.iter().filter(|s| every_row.contains(&s.slot)).count();
            kept_by_signs += every_row.iter().filter(|s| got.contains(s)).count();
        }
        let share = |n: usize| n as f64 / (recall_queries * 10) as f64;
        let mut every_lat = Vec::with_capacity(queries);
        for q in &qs {
            let t = Instant::now();
            tenant.search_every_row(q, 10);
            every_lat.push(t.elapsed());
        }
        every_lat.sort();
        println!(
            "vector search at {size}: p50 {:.2} ms, p99 {:.2} ms; exact top-10 recall {:.3} ({recall_queries} queries)",
            pct(&lat, 0.5),
            pct(&lat, 0.99),
            share(agree)
        );
        println!(
            "  int8 scan of every row: p50 {:.2} ms, p99 {:.2} ms; exact top-10 recall {:.3}; \
             the search keeps {:.3} of its top 10",
            pct(&every_lat, 0.5),
            pct(&every_lat, 0.99),
            share(agree_every_row),
            share(kept_by_signs)
        );
        println!(
            "  RSS after the searches: {:.0} MiB (the int8 scan file is mapped and read by every \
             query; exact rows are touched only for candidates)",
            rss_after_search as f64 / 1024.0
        );
    }
    println!(
        "peak RSS {:.0} MiB (mapped vector files count as they are touched); anonymous memory {:.0} MiB",
        status_kib("VmHWM:").unwrap_or(0) as f64 / 1024.0,
        status_kib("RssAnon:").unwrap_or(0) as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
