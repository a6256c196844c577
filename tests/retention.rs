//! Retention through the real binary: a document ingested with
//! `expires_at`, or older than `ALAYASIKI_RETENTION_DAYS`, disappears from
//! every read the moment it expires and is then purged for real by the
//! idle worker (audited as retention); bad expiry values are refused with
//! a clear error; export and import carry the expiry.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use alayasiki_mcp::clock::rfc3339;
use common::*;
use rusqlite::Connection;
use serde_json::{json, Value};

const EPHEMERAL: &str = "Ephemeral note: the staging password rotates to PELICANQUARTZ on Friday.";
const LASTING: &str =
    "Lasting note: Dana Reyes manages the Orion release train. Dana Reyes works at Acme Rail in Lisbon.";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn keyword_texts(s: &mut Server, words: &str) -> (Vec<String>, Value) {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": words, "mode": "evidence", "lanes": ["keyword"], "top_k": 20}),
    );
    let texts = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    (texts, q)
}

fn read_resource(s: &mut Server, uri: &str) -> Value {
    s.request("resources/read", json!({"uri": uri}))
}

fn sleep_until(ms: i64) {
    let wait = ms - now_ms();
    if wait > 0 {
        std::thread::sleep(Duration::from_millis(wait as u64));
    }
}

/// Polls `status` until the tenant holds `n` documents (the sweep ran).
fn wait_for_documents(s: &mut Server, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = s.ok("alayasiki_status", json!({}));
        if status["documents"] == n {
            return;
        }
        assert!(Instant::now() < deadline, "no purge: {status}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn retention_audits(dir: &std::path::Path) -> Vec<(String, String, String)> {
    let db = Connection::open(dir.join("memory.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT subject, action, detail FROM audit WHERE action = 'forget' ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn an_expired_document_vanishes_at_once_and_is_purged_later() {
    let dir = TempDir::new("retention-expiry");
    let mut s = Server::ready(dir.path());
    let expires = now_ms() + 2_500;
    let stored = s.ok(
        "alayasiki_ingest",
        json!({"content": EPHEMERAL, "source": "chat", "wait": true,
               "expires_at": rfc3339(expires)}),
    );
    let doc = stored["document_id"].as_str().unwrap().to_string();
    s.ingest(LASTING);
    let uri = format!("alayasiki://documents/{doc}");

    let (before, _) = keyword_texts(&mut s, "PELICANQUARTZ staging password");
    assert_eq!(before, vec![EPHEMERAL.to_string()]);
    let communities = read_resource(&mut s, "alayasiki://communities").to_string();
    assert!(communities.contains("PELICANQUARTZ"), "{communities}");
    assert!(read_resource(&mut s, &uri)["result"].is_object());

    sleep_until(expires + 50);
    let (after, q) = keyword_texts(&mut s, "PELICANQUARTZ staging password");
    assert_eq!(after, Vec::<String>::new(), "{q}");
    let gone = read_resource(&mut s, &uri);
    assert!(gone["error"].is_object(), "{gone}");
    let listing = read_resource(&mut s, "alayasiki://documents");
    assert!(!listing.to_string().contains(&doc), "{listing}");
    // Community summaries built while it was visible are never served
    // again: the resource summarizes what is still visible.
    let communities = read_resource(&mut s, "alayasiki://communities").to_string();
    assert!(!communities.contains("PELICANQUARTZ"), "{communities}");
    assert!(communities.contains("Dana Reyes"), "{communities}");
    // The unrelated document is untouched.
    let (lasting, _) = keyword_texts(&mut s, "Orion release train");
    assert_eq!(lasting, vec![LASTING.to_string()]);

    wait_for_documents(&mut s, 1);
    let audits = retention_audits(dir.path());
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(audits[0].0, "alayasiki:retention");
    assert!(audits[0].2.contains("\"selected_by\":\"retention\""));
    assert!(!audits[0].2.contains("PELICAN"));
    let q = keyword_texts(&mut s, "PELICANQUARTZ").1;
    assert_eq!(q["explain"]["excluded"]["retention_expired"], 0, "{q}");
    s.close();
}

#[test]
fn the_retention_period_hides_and_purges_old_documents_across_restarts() {
    let dir = TempDir::new("retention-period");
    let mut s = Server::ready(dir.path());
    s.ingest(EPHEMERAL);
    s.close();
    std::thread::sleep(Duration::from_millis(4_500));

    // Four seconds of retention, as a fraction of a day: the document
    // stored before the restart is already too old.
    let period = format!("{}", 4.0 / 86_400.0);
    let env = [("ALAYASIKI_RETENTION_DAYS", period.as_str())];
    let mut s = Server::start_with(dir.path(), &env);
    s.initialize();
    s.ingest(LASTING);
    let (old, _) = keyword_texts(&mut s, "PELICANQUARTZ");
    assert_eq!(old, Vec::<String>::new());
    let (fresh, _) = keyword_texts(&mut s, "Orion release train");
    assert_eq!(fresh.len(), 1);
    wait_for_documents(&mut s, 1);
    // The newer document follows four seconds after it was stored.
    wait_for_documents(&mut s, 0);
    assert_eq!(keyword_texts(&mut s, "Orion release train").0.len(), 0);
    assert_eq!(retention_audits(dir.path()).len(), 2);
    s.close();
}

#[test]
fn bad_expiries_and_periods_are_refused_clearly() {
    let dir = TempDir::new("retention-bad");
    let mut s = Server::ready(dir.path());
    for (value, why) in [
        (json!("2001-01-01T00:00:00Z"), "in the past"),
        (json!("next tuesday"), "RFC 3339"),
        (json!("2027-02-30"), "RFC 3339"),
        (json!(1_900_000_000_000i64), "string"),
    ] {
        let (is_error, body) = s.call(
            "alayasiki_ingest",
            json!({"content": "anything", "expires_at": value}),
        );
        assert!(is_error, "{value}: {body}");
        assert!(body.to_string().contains(why), "{value}: {body}");
    }
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 0);
    s.close();

    for bad in ["0", "-1", "forever", "36501", "NaN"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
            .args(["query", "anything"])
            .env("ALAYASIKI_DATA_DIR", dir.path())
            .env("ALAYASIKI_RETENTION_DAYS", bad)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ALAYASIKI_RETENTION_DAYS"), "{bad}: {err}");
    }
}

#[test]
fn export_and_import_carry_the_expiry() {
    let dir = TempDir::new("retention-export");
    let mut s = Server::ready(dir.path());
    let expires = now_ms() + 3_600_000;
    s.ok(
        "alayasiki_ingest",
        json!({"content": EPHEMERAL, "wait": true, "expires_at": rfc3339(expires)}),
    );
    s.close();
    let export = cli_ok(dir.path(), &["export"]);
    let line: Value = serde_json::from_str(export.lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["expires_at"], expires);

    let other = TempDir::new("retention-import");
    let file = other.path().join("export.jsonl");
    std::fs::write(&file, &export).unwrap();
    cli_ok(other.path(), &["import", file.to_str().unwrap()]);
    let again = cli_ok(other.path(), &["export"]);
    let line: Value = serde_json::from_str(again.lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["expires_at"], expires);
}
