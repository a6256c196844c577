//! Semantic retrieval through the real binary: the vector lane finds
//! meaning without shared words, exact rare terms still rank first, the
//! vector lane is tenant-isolated, and vectors survive kill -9 aligned.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

fn corpus() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/semantic/corpus.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Ingests the corpus; returns fixture id → document id.
fn load(s: &mut Server) -> HashMap<String, String> {
    let mut ids = HashMap::new();
    for d in corpus()["documents"].as_array().unwrap() {
        let doc = s.ingest(d["text"].as_str().unwrap());
        ids.insert(d["id"].as_str().unwrap().to_string(), doc);
    }
    ids
}

fn top(s: &mut Server, q: &str, lanes: &[&str], k: usize) -> Vec<String> {
    let r = s.ok(
        "alayasiki_query",
        json!({"query": q, "mode": "evidence", "top_k": k, "lanes": lanes}),
    );
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["document_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn hybrid_finds_answers_that_share_no_words_with_the_question() {
    let dir = TempDir::new("semantic");
    let mut s = Server::ready(dir.path());
    let ids = load(&mut s);
    let mut found = HashMap::new();
    for lanes in [vec!["keyword"], vec!["keyword", "vector"]] {
        let mut hits = 0;
        for q in corpus()["questions"].as_array().unwrap() {
            let want = &ids[q["answer"].as_str().unwrap()];
            if top(&mut s, q["q"].as_str().unwrap(), &lanes, 3).contains(want) {
                hits += 1;
            }
        }
        found.insert(lanes.join("+"), hits);
    }
    let keyword = found["keyword"];
    let hybrid = found["keyword+vector"];
    assert!(hybrid >= 7, "hybrid found {hybrid}/10 answers in the top 3");
    assert!(hybrid > keyword + 3, "hybrid {hybrid} vs keyword {keyword}");
}

#[test]
fn rare_exact_terms_still_rank_first() {
    let dir = TempDir::new("exact");
    let mut s = Server::ready(dir.path());
    let ids = load(&mut s);
    for e in corpus()["exact"].as_array().unwrap() {
        let got = top(&mut s, e["q"].as_str().unwrap(), &["keyword", "vector"], 5);
        assert_eq!(got[0], ids[e["answer"].as_str().unwrap()]);
    }
    // Evidence says which lanes found it, with per-lane ranks.
    let r = s.ok(
        "alayasiki_query",
        json!({"query": "error code E4021", "mode": "evidence"}),
    );
    let first = &r["evidence"][0];
    assert_eq!(first["lanes"]["keyword"]["rank"], 1);
    assert!(
        first["lanes"]["vector"]["rank"].as_u64().is_some(),
        "{first}"
    );
}

#[test]
fn the_vector_lane_never_crosses_tenants() {
    let dir = TempDir::new("vec-tenants");
    {
        let mut a = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "a")]);
        a.initialize();
        a.ingest("The startup bought a smaller firm last spring.");
        a.close();
    }
    let mut b = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "b")]);
    b.initialize();
    assert!(top(&mut b, "What did the company acquire?", &["vector"], 10).is_empty());
    b.ingest("Tenant b's note about gardening.");
    let got = top(&mut b, "What did the company acquire?", &["vector"], 10);
    assert_eq!(got.len(), 1, "only b's own document: {got:?}");
}

#[test]
fn vectors_stay_aligned_with_chunks_after_kill_9() {
    let dir = TempDir::new("vec-kill");
    let texts: Vec<String> = (0..60)
        .map(|i| {
            format!(
                "Note {i}: the {} {} of the {}.",
                ["red", "blue", "green", "gold"][i % 4],
                ["fox", "owl", "eel", "yak", "ant"][i % 5],
                ["valley", "harbour", "forest"][i % 3]
            )
        })
        .collect();
    {
        let mut s = Server::ready(dir.path());
        for t in &texts {
            s.ok("alayasiki_ingest", json!({"content": t, "wait": false}));
        }
        s.kill();
    }
    let mut s = Server::ready(dir.path());
    let deadline = std::time::Instant::now() + TIMEOUT;
    while s.ok("alayasiki_status", json!({}))["jobs"]["pending"] != 0 {
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Every document's own text finds that document first by vector alone:
    // no slot points at another chunk's row, no orphan row is visible.
    for t in &texts {
        let r = s.ok(
            "alayasiki_query",
            json!({"query": t, "mode": "evidence", "top_k": 1, "lanes": ["vector"]}),
        );
        assert_eq!(r["evidence"][0]["text"], t.as_str());
        let score = r["evidence"][0]["lanes"]["vector"]["score"]
            .as_f64()
            .unwrap();
        assert!(score > 0.99, "{t}: {score}");
    }
}

#[test]
fn compact_keeps_answers_and_leaves_files_without_a_free_slot_alone() {
    let dir = TempDir::new("compact");
    let before = {
        let mut s = Server::ready(dir.path());
        load(&mut s);
        let r = top(&mut s, "Where did we move to?", &["vector"], 5);
        s.close();
        r
    };
    let out = std::process::Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["compact", "--data-dir"])
        .arg(dir.path())
        .env("ALAYASIKI_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("16 vector rows -> 16"));
    let files: Vec<String> = std::fs::read_dir(dir.path().join("vectors"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Nothing was forgotten: no slot is free, and the files stay as they
    // are (tests/forget.rs compacts a memory with a freed slot).
    assert!(files.iter().all(|f| f.contains(".g0.")), "{files:?}");
    let mut s = Server::ready(dir.path());
    assert_eq!(top(&mut s, "Where did we move to?", &["vector"], 5), before);
}
