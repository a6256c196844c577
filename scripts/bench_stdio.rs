//! Benchmark of the real `alayasiki-mcp` binary over stdio.
//!
//! Prints: time from spawn to the `initialize` result; ingest throughput
//! (documents/s and MB/s) for ~1 KB documents, pipelined with a window of
//! in-flight requests, each acknowledged only once durable and indexed
//! (`wait: true`), or with `--wait false` acknowledged once durable and
//! timed until the last one is indexed (what a bulk loader sees: the
//! journal absorbs bursts, the worker indexes in large batches); query latency p50/p99 (one query in flight, evidence
//! mode) at each store size; and the server's peak RSS.
//!
//! Run: `cargo run --release --example bench_stdio -- [--sizes 10000,100000]
//!       [--queries 1000] [--window 64] [--wait true|false] [--durability full|normal]
//!       [--corpus zipf|entities] [--modes local,global,drift,auto]
//!       [--lanes keyword,vector,graph] [--store DIR]
//!       [--binary target/release/alayasiki-mcp]`
//!
//! The corpus is synthetic but shaped like text: words drawn from a
//! Zipf-distributed vocabulary with a deterministic generator, so runs are
//! repeatable and the FTS index sees realistic term frequencies. With
//! `--corpus entities` every document also has sentences naming people,
//! organizations and places drawn from pools of about 100k names, with
//! verb phrases between them, so the knowledge-graph extraction has real
//! work (entities, relations, communities) and queries name entities.
//! `--modes` times queries once per search mode; after the run, the
//! community rebuild (reading the graph and building every level) is timed
//! on the final store.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: bench_stdio [--sizes 10000,100000] [--queries 1000] [--window 64] [--wait true|false]
    [--durability full|normal] [--corpus zipf|entities] [--modes local,global,drift,auto]
    [--lanes keyword,vector,graph] [--store DIR] [--binary target/release/alayasiki-mcp]";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A vocabulary of pronounceable pseudo-words and a Zipf sampler over it.
struct Corpus {
    words: Vec<String>,
    cdf: Vec<f64>,
    rng: Rng,
}

impl Corpus {
    fn new(vocab: usize) -> Corpus {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let syllables = [
            "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "del", "tor", "an", "qu", "ex", "po",
            "li", "ber", "gan", "zo",
        ];
        let words = (0..vocab)
            .map(|_| {
                let n = 1 + (rng.next() % 3) as usize;
                (0..n)
                    .map(|_| syllables[(rng.next() % syllables.len() as u64) as usize])
                    .collect::<String>()
            })
            .collect();
        let mut cdf = Vec::with_capacity(vocab);
        let mut acc = 0.0;
        for rank in 1..=vocab {
            acc += 1.0 / rank as f64;
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Corpus { words, cdf, rng }
    }

    fn word(&mut self) -> &str {
        let u = self.rng.unit();
        let i = self
            .cdf
            .partition_point(|&c| c < u)
            .min(self.words.len() - 1);
        &self.words[i]
    }

    fn document(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 16);
        while s.len() < bytes {
            let w = self.word().to_string();
            s.push_str(&w);
            // A sentence ends with ". ", as in text: a bare "word.word"
            // reads as a file or host name to the entity extractor.
            s.push_str(if self.rng.next().is_multiple_of(12) {
                ". "
            } else {
                " "
            });
        }
        s
    }

    /// A capitalized pseudo-name of 2-3 syllables for pool index `i`
    /// (deterministic, distinct enough to be told apart).
    fn name(i: u64, salt: u64) -> String {
        let syllables = [
            "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "del", "tor", "an", "bel", "gan", "zo",
            "mar", "ris", "dan", "eva",
        ];
        let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
        let n = 2 + (x % 2) as usize;
        let mut s = String::new();
        for _ in 0..n {
            x = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            s.push_str(syllables[(x % syllables.len() as u64) as usize]);
        }
        let mut c = s.chars();
        let first = c.next().unwrap().to_ascii_uppercase();
        std::iter::once(first).chain(c).collect()
    }

    fn person(&mut self) -> String {
        let first = self.rng.next() % 300;
        let last = self.rng.next() % 350;
        format!("{} {}", Corpus::name(first, 1), Corpus::name(last, 2))
    }

    fn organization(&mut self) -> String {
        let suffix = ["Labs", "Rail", "Systems", "Foods", "Bank", "Press"];
        let i = self.rng.next() % 5000;
        format!(
            "{} {}",
            Corpus::name(i, 3),
            suffix[(i % suffix.len() as u64) as usize]
        )
    }

    fn place(&mut self) -> String {
        Corpus::name(self.rng.next() % 2000, 4)
    }

    /// A sentence relating entities, in one of a few shapes the extractor
    /// reads (verb phrases, copulas, "X of Y", appositives).
    fn fact(&mut self) -> String {
        match self.rng.next() % 5 {
            0 => format!(
                "{} works at {} in {}.",
                self.person(),
                self.organization(),
                self.place()
            ),
            1 => format!(
                "{} acquired {} in {}.",
                self.organization(),
                self.organization(),
                1990 + self.rng.next() % 35
            ),
            2 => format!(
                "{} met {} at the {} office.",
                self.person(),
                self.person(),
                self.organization()
            ),
            3 => format!(
                "{}, the founder of {}, moved to {}.",
                self.person(),
                self.organization(),
                self.place()
            ),
            _ => format!("{} is the CEO of {}.", self.person(), self.organization()),
        }
    }

    /// ~`bytes` of text: facts between Zipf filler sentences.
    fn entity_document(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 64);
        while s.len() < bytes {
            if self.rng.next().is_multiple_of(2) {
                s.push_str(&self.fact());
            } else {
                for _ in 0..8 {
                    let w = self.word().to_string();
                    s.push_str(&w);
                    s.push(' ');
                }
                s.pop();
                s.push('.');
            }
            s.push(' ');
        }
        s
    }

    /// A question naming an entity, as an agent would ask it.
    fn entity_question(&mut self) -> String {
        match self.rng.next() % 4 {
            0 => format!("Where does {} work?", self.person()),
            1 => format!("Who acquired {}?", self.organization()),
            2 => format!("Who did {} meet?", self.person()),
            _ => format!("What happened in {}?", self.place()),
        }
    }

    fn query(&mut self) -> String {
        (0..3)
            .map(|_| self.word().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(binary: &str, dir: &std::path::Path, durability: &str) -> Server {
        let mut child = Command::new(binary)
            .arg("--data-dir")
            .arg(dir)
            .env("ALAYASIKI_LOG", "warn")
            .env("ALAYASIKI_DURABILITY", durability)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn server (build it with cargo build --release)");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("server reply")
    }

    /// The server's `alayasiki_status` report.
    fn status(&mut self) -> Value {
        self.send(&json!({"jsonrpc":"2.0","id":-2,"method":"tools/call","params":{"name":"alayasiki_status","arguments":{}}}));
        self.stdin.flush().unwrap();
        let r = self.recv();
        serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
    }

    /// Indexing jobs not yet done.
    fn pending_jobs(&mut self) -> u64 {
        self.status()["jobs"]["pending"].as_u64().unwrap()
    }

    fn initialize(&mut self) {
        self.send(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}));
        self.stdin.flush().unwrap();
        let r = self.recv();
        assert!(r["result"].is_object(), "{r}");
    }

    /// CPU time the server has used so far, user + system (Linux only):
    /// a figure that, unlike wall time, does not grow when other work
    /// shares the machine.
    fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the command name (which may hold spaces) in ")".
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 =
            fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
        // USER_HZ is 100 on every Linux this runs on.
        Some(ticks / 100.0)
    }

    /// CPU seconds per thread name so far, worker pools summed under their
    /// name without the number (Linux only).
    fn thread_cpu(&self) -> std::collections::BTreeMap<String, f64> {
        let mut out = std::collections::BTreeMap::new();
        let tasks = format!("/proc/{}/task", self.child.id());
        for entry in std::fs::read_dir(tasks).into_iter().flatten().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let name =
                stat[open + 1..close].trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
            let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
            let ticks = |i: usize| {
                fields
                    .get(i)
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            *out.entry(name.to_string()).or_insert(0.0) += (ticks(11) + ticks(12)) / 100.0;
        }
        out
    }

    /// A `/proc/<pid>/status` field in KiB (Linux only).
    fn status_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find(|l| l.starts_with(field))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let mut sizes = vec![10_000usize, 100_000];
    let mut queries = 1000usize;
    let mut window = 64usize;
    let mut wait = true;
    let mut durability = "full".to_string();
    let mut binary = "target/release/alayasiki-mcp".to_string();
    let mut lanes: Option<Vec<String>> = None;
    let mut store_dir: Option<std::path::PathBuf> = None;
    let mut entities = false;
    let mut modes: Vec<Option<String>> = vec![None];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--help" || a == "-h" {
            println!("{USAGE}");
            return;
        }
        let Some(v) = args.next() else {
            eprintln!("{a} needs a value\n{USAGE}");
            std::process::exit(2);
        };
        match a.as_str() {
            "--sizes" => sizes = v.split(',').map(|s| s.parse().unwrap()).collect(),
            "--queries" => queries = v.parse().unwrap(),
            "--window" => window = v.parse().unwrap(),
            "--wait" => wait = v.parse().unwrap(),
            "--durability" => durability = v,
            "--binary" => binary = v,
            "--lanes" => lanes = Some(v.split(',').map(str::to_string).collect()),
            "--store" => store_dir = Some(v.into()),
            "--corpus" => entities = v == "entities",
            "--modes" => modes = v.split(',').map(|m| Some(m.to_string())).collect(),
            other => {
                eprintln!("unknown flag {other}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let tmp = std::env::temp_dir().join(format!("alayasiki-bench-{}", std::process::id()));

    // Spawn → initialize answered, on a fresh directory each time.
    let mut starts = Vec::new();
    for i in 0..20 {
        let dir = tmp.join(format!("start{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let t = Instant::now();
        let mut s = Server::spawn(&binary, &dir, &durability);
        s.initialize();
        starts.push(t.elapsed());
        drop(s.stdin);
        s.child.wait().unwrap();
    }
    starts.sort();
    println!(
        "spawn -> initialize result: p50 {:.1} ms, max {:.1} ms (20 fresh starts)",
        percentile(&starts, 0.5).as_secs_f64() * 1e3,
        starts.last().unwrap().as_secs_f64() * 1e3
    );

    let dir = store_dir.clone().unwrap_or_else(|| tmp.join("store"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = Server::spawn(&binary, &dir, &durability);
    s.initialize();
    let mut corpus = Corpus::new(50_000);
    // A kept store (--store) is topped up, not rebuilt: the corpus is
    // deterministic, so skip the documents it already holds.
    let mut stored = s.status()["documents"].as_u64().unwrap_or(0) as usize;
    let document = |c: &mut Corpus| {
        if entities {
            c.entity_document(1000)
        } else {
            c.document(1000)
        }
    };
    for _ in 0..stored {
        document(&mut corpus);
    }
    let mut next_id = 1u64;
    let kind = if entities { "entity-rich" } else { "Zipf" };
    println!("durability={durability}, window={window}, ~1 KB {kind} documents, wait={wait}");
    for &target in &sizes {
        let to_add = target.saturating_sub(stored);
        let docs: Vec<String> = (0..to_add).map(|_| document(&mut corpus)).collect();
        let bytes: usize = docs.iter().map(|d| d.len()).sum();
        let t = Instant::now();
        let cpu_before = s.cpu_seconds();
        let threads_before = s.thread_cpu();
        let mut in_flight = 0usize;
        for d in &docs {
            s.send(&json!({"jsonrpc":"2.0","id":next_id,"method":"tools/call","params":{"name":"alayasiki_ingest","arguments":{"content":d,"wait":wait}}}));
            next_id += 1;
            in_flight += 1;
            if in_flight == window {
                s.stdin.flush().unwrap();
                let r = s.recv();
                assert_eq!(r["result"]["isError"], false, "{r}");
                in_flight -= 1;
            }
        }
        s.stdin.flush().unwrap();
        while in_flight > 0 {
            let r = s.recv();
            assert_eq!(r["result"]["isError"], false, "{r}");
            in_flight -= 1;
        }
        if !wait {
            // Acknowledged is durable, not yet searchable: the figure is
            // until the journal is drained.
            while s.pending_jobs() > 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let secs = t.elapsed().as_secs_f64();
        stored = stored.max(target);
        if to_add > 0 {
            let cpu = match (cpu_before, s.cpu_seconds()) {
                (Some(a), Some(b)) => format!(
                    "; server CPU {:.2} s = {:.2} ms/doc",
                    b - a,
                    (b - a) * 1e3 / to_add as f64
                ),
                _ => String::new(),
            };
            println!(
                "ingest to {target} docs: {to_add} docs in {secs:.2} s = {:.0} docs/s, {:.2} MB/s{cpu}",
                to_add as f64 / secs,
                bytes as f64 / secs / 1e6
            );
            let per_thread: Vec<String> = s
                .thread_cpu()
                .into_iter()
                .map(|(name, after)| {
                    (
                        after - threads_before.get(&name).copied().unwrap_or(0.0),
                        name,
                    )
                })
                .filter(|(cpu, _)| *cpu >= 0.01)
                .map(|(cpu, name)| format!("{name} {:.2} ms", cpu * 1e3 / to_add as f64))
                .collect();
            if !per_thread.is_empty() {
                println!("  server CPU per doc by thread: {}", per_thread.join(", "));
            }
        }

        // Query targets are stated per chunk count; documents split into
        // chunks at the chunk target, so report both.
        let chunks = s.status()["chunks"].as_u64().unwrap_or(0);
        println!("store at {target} docs: {chunks} chunks");
        for mode in &modes {
            let mut lat = Vec::with_capacity(queries);
            let mut hits = 0usize;
            let mut ran = std::collections::BTreeMap::<String, usize>::new();
            for _ in 0..queries {
                let q = if entities {
                    corpus.entity_question()
                } else {
                    corpus.query()
                };
                let t = Instant::now();
                let mut args = json!({"query": q, "mode": "evidence"});
                if let Some(l) = &lanes {
                    args["lanes"] = json!(l);
                }
                if let Some(m) = mode {
                    args["search_mode"] = json!(m);
                }
                s.send(&json!({"jsonrpc":"2.0","id":next_id,"method":"tools/call","params":{"name":"alayasiki_query","arguments":args}}));
                s.stdin.flush().unwrap();
                let r = s.recv();
                lat.push(t.elapsed());
                next_id += 1;
                let body: Value =
                    serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap())
                        .unwrap();
                hits += body["evidence"].as_array().map_or(0, |e| e.len());
                if let Some(m) = body["search_mode"]["ran"].as_str() {
                    *ran.entry(m.to_string()).or_default() += 1;
                }
            }
            lat.sort();
            let label = mode
                .as_deref()
                .map_or(String::new(), |m| format!(" search_mode={m}"));
            println!("query at {target} docs{label}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({queries} queries, {:.1} evidence items each; ran {ran:?})",
            percentile(&lat, 0.5).as_secs_f64() * 1e3, percentile(&lat, 0.99).as_secs_f64() * 1e3,
            lat.last().unwrap().as_secs_f64() * 1e3, hits as f64 / queries as f64);
        }
    }
    // Peak RSS counts pages of the memory-mapped database and vector files
    // that queries touched (shared with the page cache); RssAnon is the
    // server's own heap and stacks.
    let rss = s.status_kib("VmHWM:");
    let anon = s.status_kib("RssAnon:");
    drop(s.stdin);
    let t = Instant::now();
    s.child.wait().unwrap();
    println!("exit after EOF: {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    if let (Some(peak), Some(anon)) = (rss, anon) {
        println!(
            "server peak RSS: {:.1} MiB (including mapped files); anonymous memory at the end: {:.1} MiB",
            peak as f64 / 1024.0,
            anon as f64 / 1024.0
        );
    }
    let db = std::fs::metadata(dir.join("memory.db"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!("store size: {:.1} MiB", db as f64 / 1048576.0);
    time_community_rebuild(&dir);
    let _ = std::fs::remove_dir_all(&tmp);
    if store_dir.is_some() {
        println!("store kept in {}", dir.display());
    }
}

/// Times what the worker does to rebuild community summaries (read the
/// graph, Leiden at every level, summarize), on the final store, after the
/// server exited.
fn time_community_rebuild(dir: &std::path::Path) {
    use alayasiki_mcp::embed::{BuiltinEmbedder, Embedder};
    use alayasiki_mcp::store::{vectors::VectorSpec, Store, Tenant};
    let spec = VectorSpec {
        embedder_id: BuiltinEmbedder.id().to_string(),
        dim: BuiltinEmbedder.dim(),
    };
    let store = Store::open(
        dir,
        alayasiki_mcp::config::Durability::Normal,
        spec,
        &alayasiki_mcp::graph::resolution::POLICY,
    )
    .unwrap();
    let reader = store.reader(&Tenant::new("local").unwrap()).unwrap();
    let (entities, relations) = reader.graph_counts().unwrap();
    let t = Instant::now();
    let input = reader.graph_input().unwrap();
    let read = t.elapsed();
    let summaries = alayasiki_mcp::graph::communities::build(&input);
    println!(
        "community rebuild: {entities} entities, {relations} relations: graph read {:.2} s, \
         build {:.2} s ({} summaries)",
        read.as_secs_f64(),
        (t.elapsed() - read).as_secs_f64(),
        summaries.len()
    );
}
