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
        // Documents, each once however many of its chunks come back (a
        // neighbouring chunk of the hit is lent part of its score).
        let mut hits: Vec<&str> = q["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["document_id"].as_str().unwrap())
            .collect();
        hits.sort_unstable();
        hits.dedup();
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
        .env("ALAYASIKI_IN_PROCESS", "1")
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

/// `(state, attempts)` of every job, oldest first (read straight from
/// SQLite while no server runs, or beside a running one: WAL readers).
fn jobs(dir: &std::path::Path) -> Vec<(String, i64)> {
    let conn = Connection::open(dir.join("memory.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT state, attempts FROM jobs WHERE kind = 'ingest' ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap();
    rows
}

/// Waits until no indexing job is pending (status), then returns status.
fn settled(s: &mut Server) -> serde_json::Value {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let st = s.ok("alayasiki_status", json!({}));
        if st["jobs"]["pending"] == 0 {
            return st;
        }
        assert!(std::time::Instant::now() < deadline, "still pending: {st}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Documents with `marker` in their text, by keyword (each once, however
/// many of its chunks match).
fn keyword_hits(s: &mut Server, marker: &str) -> Vec<String> {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]}),
    );
    let mut ids: Vec<String> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["document_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Issue 21's minimal reproduction: start-ups that are killed before the
/// worker begins a job used to count as its attempts, so the fourth start
/// failed a document that was never tried.
#[test]
fn start_ups_that_never_begin_a_job_do_not_fail_it() {
    let dir = TempDir::new("neverbegun");
    let id = {
        let mut s = Server::ready(dir.path());
        let r = s.ok(
            "alayasiki_ingest",
            json!({"content": "The keeper logs the tide at dawn: marker qnb7x.", "wait": false,
                   "idempotency_key": "tide"}),
        );
        s.kill();
        r["document_id"].as_str().unwrap().to_string()
    };
    assert_eq!(
        jobs(dir.path()),
        [("pending".to_string(), 0)],
        "the kill should land before indexing"
    );
    for _ in 0..3 {
        let mut s = Server::start(dir.path());
        s.initialize();
        s.kill();
    }
    let mut s = Server::ready(dir.path());
    let st = settled(&mut s);
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    assert_eq!(keyword_hits(&mut s, "qnb7x"), [id]);
}

/// Attempts that did begin are counted: a document whose indexing is
/// interrupted `MAX_JOB_ATTEMPTS` (3) times is failed at the next start
/// instead of crash-looping the server, `alayasiki_status` says why, and
/// re-sending the same request (same key, same content) indexes it again.
#[test]
fn begun_attempts_are_bounded_and_a_failed_document_comes_back_by_its_key() {
    let dir = TempDir::new("bounded");
    // Slow to index again from the store, so a kill lands mid-attempt.
    let body = "The harbour crane lifts a container of marker kz4q. ".repeat(60_000);
    let args = json!({"content": body, "wait": false, "idempotency_key": "crane"});
    let id = {
        let mut s = Server::ready(dir.path());
        let r = s.ok("alayasiki_ingest", args.clone());
        s.kill();
        r["document_id"].as_str().unwrap().to_string()
    };
    assert_eq!(jobs(dir.path())[0].0, "pending", "indexed before the kill");
    for attempt in 1..=3 {
        let s = Server::start(dir.path());
        let deadline = std::time::Instant::now() + TIMEOUT;
        while jobs(dir.path())[0].1 < attempt {
            assert!(
                std::time::Instant::now() < deadline,
                "attempt {attempt} never began"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        s.kill();
        assert_eq!(
            jobs(dir.path())[0],
            ("pending".to_string(), attempt),
            "attempt {attempt} finished before the kill"
        );
    }
    let mut s = Server::ready(dir.path());
    let st = settled(&mut s);
    assert_eq!(st["jobs"]["failed"], 1, "{st}");
    assert_eq!(st["jobs"]["failed_by_reason"], json!({"interrupted": 1}));
    let recent = &st["jobs"]["recent_failures"][0];
    assert_eq!(recent["document_id"], id.as_str());
    assert_eq!(recent["reason"], "interrupted");
    let message = recent["message"].as_str().unwrap();
    assert!(message.contains("idempotency key"), "{message}");
    assert!(!message.contains(dir.path().to_str().unwrap()), "{message}");
    let (is_error, read) = s.call(
        "alayasiki_query",
        json!({"query": "kz4q", "mode": "evidence", "lanes": ["keyword"]}),
    );
    assert!(!is_error && read["evidence"].as_array().unwrap().is_empty());
    // The way back: the same request again.
    let mut again = args.clone();
    again["wait"] = json!(true);
    let r = s.ok("alayasiki_ingest", again);
    assert_eq!(
        (
            r["document_id"].as_str(),
            r["state"].as_str(),
            r["idempotent_replay"].as_bool()
        ),
        (Some(id.as_str()), Some("ready"), Some(true)),
        "{r}"
    );
    let st = settled(&mut s);
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    assert!(st["jobs"].get("recent_failures").is_none(), "{st}");
    assert_eq!(keyword_hits(&mut s, "kz4q"), [id]);
}

/// `alayasiki-mcp retry-failed` queues every failed document again and
/// indexes it.
#[test]
fn retry_failed_brings_every_failed_document_back() {
    failed_documents_come_back_with("retry-failed");
}

/// So does `alayasiki-mcp reindex` (which also re-embeds everything).
#[test]
fn reindex_brings_every_failed_document_back() {
    failed_documents_come_back_with("reindex");
}

fn failed_documents_come_back_with(command: &str) {
    let dir = TempDir::new("retryfailed");
    let ids: Vec<String> = {
        let mut s = Server::ready(dir.path());
        let ids = (0..3)
            .map(|i| {
                let r = s.ok(
                    "alayasiki_ingest",
                    json!({"content": format!("Ledger entry {i} with marker rf{i}x."), "wait": false}),
                );
                r["document_id"].as_str().unwrap().to_string()
            })
            .collect();
        s.kill();
        ids
    };
    // As if every attempt left had been begun and interrupted: the next
    // start gives the pending documents up.
    let failing = {
        let conn = Connection::open(dir.path().join("memory.db")).unwrap();
        conn.execute("UPDATE jobs SET attempts = 3 WHERE state = 'pending'", [])
            .unwrap()
    };
    assert!(failing > 0, "the kill should land before indexing");
    {
        let mut s = Server::ready(dir.path());
        let st = settled(&mut s);
        assert_eq!(st["jobs"]["failed"], failing as i64, "{st}");
        assert_eq!(
            st["jobs"]["failed_by_reason"]["interrupted"],
            failing as i64
        );
        s.close();
    }
    let out = cli(dir.path(), &[command]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{failing} failed document(s) queued again")),
        "{err}"
    );
    let mut s = Server::ready(dir.path());
    let st = settled(&mut s);
    assert_eq!(
        (st["jobs"]["failed"].as_i64(), st["documents"].as_i64()),
        (Some(0), Some(3))
    );
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            keyword_hits(&mut s, &format!("rf{i}x")),
            std::slice::from_ref(id)
        );
    }
}

/// Issue 21, point 10: deleting `alayasiki.lock` under a running owner
/// used to let a second owner start (two writers on one database).
#[test]
fn deleting_the_lock_file_does_not_let_a_second_owner_in() {
    let dir = TempDir::new("lockdeleted");
    let mut first = Server::ready(dir.path());
    let second = || {
        Command::new(BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg("--data-dir")
            .arg(dir.path())
            .env("ALAYASIKI_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    std::fs::remove_file(dir.path().join("alayasiki.lock")).unwrap();
    let out = second();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "second owner started: {err}");
    assert!(err.contains("is in use"), "{err}");
    assert!(err.contains(&format!("pid {}", first.child.id())), "{err}");
    // Both files gone: still refused, and the owner puts them back.
    let _ = std::fs::remove_file(dir.path().join("alayasiki.lock"));
    std::fs::remove_file(dir.path().join("alayasiki.owner")).unwrap();
    let out = second();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !(dir.path().join("alayasiki.lock").exists()
        && dir.path().join("alayasiki.owner").exists())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "lock file not recreated"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = second();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("pid {}", first.child.id())), "{err}");
    // The first server is unaffected.
    first.ingest("still the only writer");
}
