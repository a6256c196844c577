//! Crash safety and ownership through the real binary: acknowledged writes
//! survive `kill -9`, interrupted jobs are replayed exactly once, and a data
//! directory has one owner at a time.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::json;
use std::process::{Command, Stdio};

/// Pending jobs in a store whose owner is dead (read straight from SQLite).
fn pending_jobs(dir: &std::path::Path) -> i64 {
    let conn = Connection::open(dir.join("memory.db")).unwrap();
    conn.query_row(
        "SELECT count(*) FROM jobs WHERE state = 'pending'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn jobs_interrupted_by_kill_9_are_replayed_exactly_once() {
    let dir = TempDir::new("kill9");
    let docs = 24;
    // Large documents keep the worker busy, so the kill lands mid-backlog.
    let body = "Paragraph about the harbour and its cranes. ".repeat(3_000);
    let mut ids = Vec::new();
    {
        let mut s = Server::ready(dir.path());
        for i in 0..docs {
            let r = s.ok(
                "alayasiki_ingest",
                json!({"content": format!("Marker zq{i}x. {body}"), "wait": false, "idempotency_key": format!("k{i}")}),
            );
            ids.push(r["document_id"].as_str().unwrap().to_string());
        }
        s.kill();
    }
    let interrupted = pending_jobs(dir.path());
    assert!(
        interrupted > 0,
        "the kill should have interrupted indexing (none pending)"
    );
    let mut s = Server::ready(dir.path());
    // Every acknowledged document is there, each exactly once.
    for (i, id) in ids.iter().enumerate() {
        let deadline = std::time::Instant::now() + TIMEOUT;
        let q = loop {
            let q = s.ok(
                "alayasiki_query",
                json!({"query": format!("zq{i}x"), "mode": "evidence", "top_k": 100, "lanes": ["keyword"]}),
            );
            if !q["evidence"].as_array().unwrap().is_empty() || std::time::Instant::now() > deadline
            {
                break q;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let hits: Vec<&str> = q["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["document_id"].as_str().unwrap())
            .collect();
        assert_eq!(hits, [id.as_str()], "document {i} after replay");
    }
    let st = s.ok("alayasiki_status", json!({}));
    assert_eq!(st["documents"], docs);
    assert_eq!(st["jobs"]["pending"], 0);
    assert_eq!(st["jobs"]["failed"], 0);
    // Re-sending an acknowledged request after the crash is a replay.
    let again = s.ok(
        "alayasiki_ingest",
        json!({"content": format!("Marker zq0x. {body}"), "idempotency_key": "k0"}),
    );
    assert_eq!(again["document_id"], ids[0].as_str());
    assert_eq!(again["idempotent_replay"], true);
}

#[test]
fn acknowledged_writes_survive_kill_9_immediately_after_the_reply() {
    let dir = TempDir::new("ack");
    let mut ids = Vec::new();
    {
        let mut s = Server::ready(dir.path());
        for i in 0..25 {
            let r = s.ok(
                "alayasiki_ingest",
                json!({"content": format!("ack note {i} about otters"), "wait": false}),
            );
            ids.push(r["document_id"].as_str().unwrap().to_string());
        }
        s.kill();
    }
    let mut s = Server::ready(dir.path());
    for id in &ids {
        // resources/read answers for every acknowledged id once indexed;
        // wait for the replay to finish first.
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            let r = s.request(
                "resources/read",
                json!({"uri": format!("alayasiki://documents/{id}")}),
            );
            if r["result"].is_object() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{id} lost: {r}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 25);
}

#[test]
fn second_process_on_same_dir_is_refused_with_holder_and_advice() {
    let dir = TempDir::new("owner");
    let mut first = Server::ready(dir.path());
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "refused with the documented status"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("pid {}", first.child.id())), "{err}");
    assert!(err.contains("alayasiki-api"), "{err}");
    // The first server is unaffected.
    first.ingest("still working");
}

#[test]
fn stale_lock_from_a_killed_process_is_recovered() {
    let dir = TempDir::new("stale");
    let s = Server::ready(dir.path());
    s.kill();
    assert!(
        dir.path().join("alayasiki.lock").exists(),
        "the lock file is left behind"
    );
    let mut again = Server::ready(dir.path());
    again.ingest("took over the directory");
}
