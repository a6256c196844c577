//! No silent duplicates, through the real binary: content already stored
//! (the same text after white space and line endings are normalised, or
//! the same PDF bytes) is returned with `duplicate_of` instead of being
//! stored again, unless the caller sends `allow_duplicate`; over stdio and
//! through `alayasiki-mcp ingest`.

mod common;

use common::*;
use serde_json::{json, Value};

fn documents(s: &mut Server) -> u64 {
    s.ok("alayasiki_status", json!({}))["documents"]
        .as_u64()
        .unwrap()
}

#[test]
fn the_same_text_again_is_the_document_already_stored() {
    let dir = TempDir::new("dup-text");
    let mut s = Server::ready(dir.path());
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "The backups run at 03:00 on the NAS.\nThey take an hour."}),
    );
    let id = first["document_id"].as_str().unwrap().to_string();
    assert!(first.get("duplicate_of").is_none(), "{first}");

    // Other line endings, indentation and spacing: the same content.
    let again = s.ok(
        "alayasiki_ingest",
        json!({"content": "  The backups run at 03:00 on the NAS.\r\n\r\n\tThey  take an hour.\n",
               "source": "notes/ops.md", "idempotency_key": "ops-1"}),
    );
    assert_eq!(again["duplicate_of"], id.as_str(), "{again}");
    assert_eq!(again["document_id"], id.as_str());
    assert_eq!(again["idempotent_replay"], false);
    assert_eq!(again["state"], "ready");
    // The same through the canonical Text form, as Markdown.
    let md = s.ok(
        "alayasiki_ingest",
        json!({"Text": {"content": "The backups run at 03:00 on the NAS. They take an hour.",
                        "media_type": "text/markdown"}}),
    );
    assert_eq!(md["duplicate_of"], id.as_str(), "{md}");
    assert_eq!(documents(&mut s), 1);
    // One evidence slot, not three.
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "When do the backups run?", "mode": "evidence"}),
    );
    assert_eq!(q["evidence"].as_array().unwrap().len(), 1, "{q}");

    // A change of content is new content.
    let changed = s.ok(
        "alayasiki_ingest",
        json!({"content": "The backups run at 04:00 on the NAS.\nThey take an hour."}),
    );
    assert!(changed.get("duplicate_of").is_none(), "{changed}");
    assert_ne!(changed["document_id"], id.as_str());

    // Asked for, a duplicate is stored; later copies are still found.
    let kept = s.ok(
        "alayasiki_ingest",
        json!({"content": "The backups run at 03:00 on the NAS.\nThey take an hour.",
               "allow_duplicate": true}),
    );
    assert!(kept.get("duplicate_of").is_none(), "{kept}");
    assert_ne!(kept["document_id"], id.as_str());
    assert_eq!(documents(&mut s), 3);
    let (failed, why) = s.call(
        "alayasiki_ingest",
        json!({"content": "x", "allow_duplicate": "yes"}),
    );
    assert!(failed, "{why}");

    // Forgotten, the content may be stored anew (its other copy stays
    // the document a new one is found to duplicate).
    s.ok("alayasiki_forget", json!({"document_id": id}));
    let after = s.ok(
        "alayasiki_ingest",
        json!({"content": "The backups run at 03:00 on the NAS. They take an hour."}),
    );
    assert_eq!(after["duplicate_of"], kept["document_id"], "{after}");
    s.close();
}

#[test]
fn an_expired_document_is_not_what_new_content_duplicates() {
    let dir = TempDir::new("dup-expired");
    let mut s = Server::ready(dir.path());
    let now = alayasiki_mcp::clock::now_ms();
    let soon = s.ok(
        "alayasiki_ingest",
        json!({"content": "The pop-up market is on the pier this weekend.",
               "expires_at": alayasiki_mcp::clock::rfc3339(now + 1500)}),
    );
    let before = s.ok(
        "alayasiki_ingest",
        json!({"content": "The pop-up market is on the pier this weekend."}),
    );
    assert_eq!(before["duplicate_of"], soon["document_id"], "{before}");
    std::thread::sleep(std::time::Duration::from_millis(1600));
    let after = s.ok(
        "alayasiki_ingest",
        json!({"content": "The pop-up market is on the pier this weekend."}),
    );
    assert!(after.get("duplicate_of").is_none(), "{after}");
    assert_ne!(after["document_id"], soon["document_id"]);
    s.close();
}

#[test]
fn the_command_line_stores_a_copied_file_once() {
    let dir = TempDir::new("dup-cli");
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("copy")).unwrap();
    let text = "Dana leads the platform team since March.\n";
    std::fs::write(notes.join("team.md"), text).unwrap();
    std::fs::write(notes.join("copy/team.txt"), text.replace('\n', "\r\n")).unwrap();
    std::fs::write(notes.join("other.md"), "Sam runs the on-call rota.\n").unwrap();
    let mem = dir.path().join("m");
    let report = cli_ok(&mem, &["ingest", notes.to_str().unwrap()]);
    assert!(report.contains("stored:         2 file(s)"), "{report}");
    assert!(report.contains("duplicates:     1 file(s)"), "{report}");
    let status: Value = {
        let out = cli(&mem, &["status", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(status["documents"], 2, "{status}");
    // Run again: everything is recognised, nothing is stored.
    let again = cli_ok(&mem, &["ingest", notes.to_str().unwrap()]);
    assert!(again.contains("stored:         0 file(s)"), "{again}");
}

#[test]
fn status_lists_the_copies_a_store_holds_and_deletes_none() {
    let dir = TempDir::new("dup-report");
    let mut s = Server::ready(dir.path());
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "The staging database is rebuilt every Sunday night."}),
    );
    let copy = s.ok(
        "alayasiki_ingest",
        json!({"content": "The staging database is rebuilt\r\nevery Sunday night.\n",
               "allow_duplicate": true}),
    );
    s.ingest("Production backups are kept for ninety days.");
    s.close();
    let report = cli_ok(dir.path(), &["status", "--duplicates"]);
    assert!(
        report.contains("1 group(s)")
            && report.contains(&format!(
                "{} {}",
                first["document_id"].as_str().unwrap(),
                copy["document_id"].as_str().unwrap()
            )),
        "{report}"
    );
    let listed: Value =
        serde_json::from_str(&cli_ok(dir.path(), &["status", "--duplicates", "--json"])).unwrap();
    assert_eq!(listed["copies"], 1, "{listed}");
    assert_eq!(listed["groups"][0][0], first["document_id"]);
    // Nothing was deleted.
    let status: Value = serde_json::from_str(&cli_ok(dir.path(), &["status", "--json"])).unwrap();
    assert_eq!(status["documents"], 3, "{status}");
}

/// A note of about 40 words: long enough that one word changed leaves it
/// a near-duplicate.
const BACKUP_NOTE: &str = "The nightly backup of the build server runs at 03:00 and copies the \
    artifacts to the NAS in the basement; it takes about an hour and mails the ops channel \
    when it is done, or when it fails for any reason.";

#[test]
fn an_ingest_reply_names_the_documents_it_nearly_duplicates() {
    let dir = TempDir::new("dup-near");
    let mut s = Server::ready(dir.path());
    let base = BACKUP_NOTE;
    let first = s.ok("alayasiki_ingest", json!({"content": base}));
    assert!(first.get("near_duplicates").is_none(), "{first}");
    let other = s.ok(
        "alayasiki_ingest",
        json!({"content": "The restore drill is on the first Monday of each month, in room 4."}),
    );
    assert!(other.get("near_duplicates").is_none(), "{other}");
    // One word changed: stored (it is not the same content), and named.
    let edited = s.ok(
        "alayasiki_ingest",
        json!({"content": base.replace("about an hour", "about one hour")}),
    );
    assert!(edited.get("duplicate_of").is_none(), "{edited}");
    assert_eq!(
        edited["near_duplicates"],
        json!([first["document_id"]]),
        "{edited}"
    );
    // A longer text that quotes it is not a near-duplicate.
    let longer = s.ok(
        "alayasiki_ingest",
        json!({"content": format!("{base} The restore drill is on the first Monday of each month.")}),
    );
    assert!(longer.get("near_duplicates").is_none(), "{longer}");
    // Not waited for, nothing is judged yet.
    let unwaited = s.ok(
        "alayasiki_ingest",
        json!({"content": base.replace("03:00", "03:30"), "wait": false}),
    );
    assert!(unwaited.get("near_duplicates").is_none(), "{unwaited}");
}

#[test]
fn a_near_duplicate_is_named_behind_many_newer_texts_sharing_its_opening() {
    let dir = TempDir::new("dup-boilerplate");
    let mut s = Server::ready(dir.path());
    let base = BACKUP_NOTE;
    let first = s.ok("alayasiki_ingest", json!({"content": base}));
    // More newer notes share the opening than one probe of the index reads.
    for i in 0..80 {
        let note = format!(
            "The nightly backup of the build server runs at 03:00 and copies the \
             artifacts to host {i}, then rotates the logs of week {i}."
        );
        let r = s.ok("alayasiki_ingest", json!({"content": note, "wait": false}));
        assert!(r.get("near_duplicates").is_none(), "{r}");
    }
    let edited = s.ok(
        "alayasiki_ingest",
        json!({"content": base.replace("about an hour", "about one hour")}),
    );
    assert_eq!(
        edited["near_duplicates"],
        json!([first["document_id"]]),
        "{edited}"
    );
}
