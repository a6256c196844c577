//! The HTTP embedder against a real embedding server on loopback, started
//! and scripted by the test: OpenAI-style and Ollama wire formats, an
//! unreachable server (documents are kept and embedded later), a wrong
//! dimension, and switching embedders (refused loudly until `reindex`).

mod common;

use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A deterministic toy embedding: each word adds a fixed pattern.
fn embed(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = w
            .to_lowercase()
            .bytes()
            .fold(1469598103934665603u64, |h, b| {
                (h ^ b as u64).wrapping_mul(1099511628211)
            });
        v[(h % dim as u64) as usize] += 1.0;
        v[((h >> 20) % dim as u64) as usize] -= 0.5;
    }
    v
}

/// An embedding server speaking `api` ("openai" or "ollama") that returns
/// vectors of `dim`; counts requests.
struct EmbedServer {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl EmbedServer {
    fn start(api: &'static str, dim: usize) -> EmbedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        EmbedServer::serve(listener, api, dim)
    }

    fn serve(listener: TcpListener, api: &'static str, dim: usize) -> EmbedServer {
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let count = count.clone();
                std::thread::spawn(move || handle(stream, api, dim, &count));
            }
        });
        EmbedServer { port, requests }
    }

    fn url(&self, api: &str) -> String {
        match api {
            "ollama" => format!("http://127.0.0.1:{}/api/embed", self.port),
            _ => format!("http://127.0.0.1:{}/v1/embeddings", self.port),
        }
    }
}

fn handle(stream: TcpStream, api: &str, dim: usize, count: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        count.fetch_add(1, Ordering::SeqCst);
        let req: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(req["model"], "toy-model");
        let inputs: Vec<&str> = req["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let vectors: Vec<Vec<f32>> = inputs.iter().map(|t| embed(t, dim)).collect();
        let reply = match api {
            "ollama" => json!({"model": "toy-model", "embeddings": vectors}),
            _ => json!({"object": "list", "data": vectors.iter().enumerate().map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v})).collect::<Vec<_>>()}),
        }
        .to_string();
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
            reply.len(),
            reply
        );
    }
}

fn env(url: &str, dim: usize) -> Vec<(&'static str, String)> {
    vec![
        ("ALAYASIKI_EMBED_URL", url.to_string()),
        ("ALAYASIKI_EMBED_MODEL", "toy-model".to_string()),
        ("ALAYASIKI_EMBED_DIM", dim.to_string()),
        ("ALAYASIKI_EMBED_TIMEOUT_MS", "2000".to_string()),
    ]
}

/// Runs `alayasiki-mcp ARGS --data-dir DIR` with the embedder `vars`.
fn subcommand(
    dir: &std::path::Path,
    vars: &[(&'static str, String)],
    args: &[&str],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
    cmd.env("ALAYASIKI_IN_PROCESS", "1");
    cmd.args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.stdin(std::process::Stdio::null()).output().unwrap()
}

fn start(dir: &std::path::Path, vars: &[(&'static str, String)]) -> Server {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut s = Server::start_with(dir, &pairs);
    s.initialize();
    s
}

fn vector_top(s: &mut Server, q: &str) -> Value {
    s.ok(
        "alayasiki_query",
        json!({"query": q, "mode": "evidence", "lanes": ["vector"], "top_k": 1}),
    )
}

#[test]
fn openai_and_ollama_servers_embed_documents_and_queries() {
    for api in ["openai", "ollama"] {
        let server = EmbedServer::start(api, 16);
        let dir = TempDir::new(api);
        let mut s = start(dir.path(), &env(&server.url(api), 16));
        s.ingest("zebras graze on the savanna");
        s.ingest("compilers translate source code");
        let r = vector_top(&mut s, "zebras savanna");
        assert_eq!(
            r["evidence"][0]["text"], "zebras graze on the savanna",
            "{api}"
        );
        assert!(
            server.requests.load(Ordering::SeqCst) >= 3,
            "{api}: the server was used"
        );
    }
}

#[test]
fn an_unreachable_server_keeps_documents_and_embeds_them_later() {
    // Reserve a port, then free it: nothing listens there yet.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/v1/embeddings");
    let dir = TempDir::new("unreachable");
    let mut s = start(dir.path(), &env(&url, 8));
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": "the lighthouse keeper"}),
    );
    assert_eq!(r["state"], "ready", "stored and searchable by keyword: {r}");
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "lighthouse keeper", "mode": "evidence"}),
    );
    assert_eq!(q["evidence"][0]["text"], "the lighthouse keeper");
    let lane_error = q["lane_errors"]["vector"].as_str().unwrap();
    assert!(lane_error.contains("unreachable"), "{lane_error}");
    assert!(
        !lane_error.contains("127.0.0.1"),
        "no addresses in client messages: {lane_error}"
    );
    assert_eq!(
        s.ok("alayasiki_status", json!({}))["jobs"]["pending"],
        1,
        "an embed job waits"
    );
    // The server comes up: the embed job succeeds on a retry.
    let _server = EmbedServer::serve(TcpListener::bind(("127.0.0.1", port)).unwrap(), "openai", 8);
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        if vector_top(&mut s, "lighthouse keeper")["evidence"][0]["text"] == "the lighthouse keeper"
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never embedded");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn a_wrong_dimension_is_a_clear_error() {
    let server = EmbedServer::start("openai", 4);
    let dir = TempDir::new("wrongdim");
    let mut s = start(dir.path(), &env(&server.url("openai"), 8));
    s.ok("alayasiki_ingest", json!({"content": "dimension check"}));
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "dimension", "mode": "evidence"}),
    );
    let e = q["lane_errors"]["vector"].as_str().unwrap();
    assert!(
        e.contains("dimension 4") && e.contains("ALAYASIKI_EMBED_DIM is 8"),
        "{e}"
    );
}

#[test]
fn switching_embedders_is_refused_until_reindex() {
    let dir = TempDir::new("switch");
    {
        let mut s = Server::ready(dir.path());
        s.ingest("zebras graze on the savanna");
        s.ingest("compilers translate source code");
        s.close();
    }
    let server = EmbedServer::start("openai", 16);
    let vars = env(&server.url("openai"), 16);
    let run = |args: &[&str]| subcommand(dir.path(), &vars, args);
    let refused = run(&[]);
    assert!(!refused.status.success());
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("alayasiki-mcp reindex") && msg.contains("dimension 256"),
        "{msg}"
    );
    let reindexed = run(&["reindex"]);
    assert!(
        reindexed.status.success(),
        "{}",
        String::from_utf8_lossy(&reindexed.stderr)
    );
    assert!(String::from_utf8_lossy(&reindexed.stderr).contains("2/2 documents embedded"));
    let mut s = start(dir.path(), &vars);
    assert_eq!(
        vector_top(&mut s, "zebras savanna")["evidence"][0]["text"],
        "zebras graze on the savanna"
    );
}

/// A server answering every request with a flood of numbers (valid JSON,
/// 4 MiB, far more than the vectors asked for could take) is refused
/// before the reply is parsed: the vector lane says so, and keywords
/// still answer. (Parsed whole, such a reply took some 16 times its size
/// in memory per request.)
#[test]
fn a_reply_longer_than_its_vectors_could_be_is_refused_unparsed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut out = stream;
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                let numbers = "0,".repeat(2 * 1024 * 1024);
                let reply = format!("{{\"data\":[{{\"embedding\":[{numbers}0]}}]}}");
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
                    reply.len()
                );
            });
        }
    });
    let dir = TempDir::new("flood");
    let url = format!("http://127.0.0.1:{port}/v1/embeddings");
    let mut s = start(dir.path(), &env(&url, 8));
    s.ok(
        "alayasiki_ingest",
        json!({"content": "flooded memory", "wait": false}),
    );
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "flooded memory", "mode": "evidence"}),
    );
    let e = q["lane_errors"]["vector"].as_str().unwrap();
    assert!(e.contains("longer than"), "{e}");
    assert!(!q["evidence"].as_array().unwrap().is_empty(), "{q}");
}

/// A server that accepts and never answers costs the timeout once: for a
/// growing cool-down after that, queries' vector lanes and ingests fail at
/// once with the reason (instead of each waiting out the timeout), and
/// keywords answer.
#[test]
fn a_hung_server_costs_its_timeout_once_not_per_request() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            held.push(stream);
        }
    });
    let dir = TempDir::new("hung");
    let url = format!("http://127.0.0.1:{port}/v1/embeddings");
    let mut s = start(dir.path(), &env(&url, 8));
    let began = std::time::Instant::now();
    s.ok(
        "alayasiki_ingest",
        json!({"content": "a lighthouse keeper's log"}),
    );
    assert!(began.elapsed() >= std::time::Duration::from_millis(1900));
    for i in 0..3 {
        let began = std::time::Instant::now();
        let q = s.ok(
            "alayasiki_query",
            json!({"query": format!("lighthouse keeper {i}"), "mode": "evidence"}),
        );
        assert!(
            began.elapsed() < std::time::Duration::from_millis(1000),
            "{:?}",
            began.elapsed()
        );
        let e = q["lane_errors"]["vector"].as_str().unwrap();
        assert!(e.contains("not tried again"), "{e}");
        assert!(!q["evidence"].as_array().unwrap().is_empty(), "{q}");
    }
}

/// `reindex`, `ingest PATH` and `retry-failed` against an embedding server
/// that refuses every connection stop once it has failed for
/// `BULK_FAULT_GIVE_UP_MS`, with status 1 and the reason, keeping what
/// they stored (they waited forever, printing progress that never moved).
#[test]
fn maintenance_against_a_dead_embedding_server_stops_saying_so() {
    let dir = TempDir::new("dead-embedder");
    {
        let mut s = Server::ready(dir.path());
        s.ingest("zebras graze on the savanna");
        s.close();
    }
    // A port nothing listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let vars = env(&format!("http://127.0.0.1:{port}/v1/embeddings"), 16);
    let notes = TempDir::new("dead-embedder-notes");
    std::fs::write(notes.path().join("herd.txt"), "the herd crossed the river").unwrap();
    let run = |args: &[&str]| {
        let started = std::time::Instant::now();
        let out = subcommand(dir.path(), &vars, args);
        (out, started.elapsed())
    };
    for args in [
        &["reindex"][..],
        &["ingest", notes.path().to_str().unwrap()][..],
    ] {
        let (out, took) = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("the embedding server has failed every request for 10 s"),
            "{args:?}: {stderr}"
        );
        assert!(
            took < std::time::Duration::from_secs(60),
            "{args:?}: {took:?}"
        );
    }
    // What was stored is kept and found by keyword.
    let mut s = start(dir.path(), &vars);
    let found = s.ok(
        "alayasiki_query",
        json!({"query": "herd river", "mode": "evidence", "lanes": ["keyword"]}),
    );
    assert_eq!(
        found["evidence"][0]["text"], "the herd crossed the river",
        "{found}"
    );
}
