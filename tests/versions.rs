//! Update and supersede through the real binary over stdio: a new version
//! of a document (`alayasiki_update`, or `alayasiki_ingest` with
//! `supersedes` / `replace_source`) supersedes the old one, which stays
//! readable as history with its chain of versions in
//! `alayasiki://documents/{id}`; refusals (unknown, already superseded,
//! too many); forgetting any version forgets them all; an update retried
//! under its key answers as the first time; and a superseded version no
//! longer supports graph relations.

mod common;

use alayasiki_mcp::limits::{MAX_SUPERSEDES, MAX_TITLE_BYTES};
use common::*;
use serde_json::{json, Value};

/// Reads `alayasiki://documents/{id}`: the content item (text and
/// `_meta`), or the JSON-RPC error.
fn read(s: &mut Server, id: &str) -> Result<Value, Value> {
    let r = s.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{id}")}),
    );
    match r.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(r["result"]["contents"][0].clone()),
    }
}

fn original(s: &mut Server, id: &str) -> String {
    let r = s.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{id}/original")}),
    );
    r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("original of {id}: {r}"))
        .to_string()
}

/// The ids of a chain as the resource lists them, and which is current.
fn chain(meta: &Value) -> Vec<(String, bool)> {
    meta["versions"]
        .as_array()
        .unwrap_or_else(|| panic!("no versions in {meta}"))
        .iter()
        .map(|v| {
            (
                v["document_id"].as_str().unwrap().to_string(),
                v["current"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn id_of(receipt: &Value) -> String {
    receipt["document_id"].as_str().unwrap().to_string()
}

fn listed(s: &mut Server) -> Vec<String> {
    let r = s.request("resources/list", json!({}));
    r["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str()?.strip_prefix("alayasiki://documents/"))
        .map(str::to_string)
        .collect()
}

fn documents(s: &mut Server) -> u64 {
    s.ok("alayasiki_status", json!({}))["documents"]
        .as_u64()
        .unwrap()
}

/// A failed tool call's text (`code: message`).
fn refused(s: &mut Server, tool: &str, args: Value) -> String {
    let (is_error, value) = s.call(tool, args);
    assert!(is_error, "{tool} should have been refused: {value}");
    value.as_str().unwrap().to_string()
}

#[test]
fn an_update_of_the_content_is_a_new_version_and_the_old_stays_as_history() {
    let dir = TempDir::new("versions-content");
    let mut s = Server::ready(dir.path());
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "The backups run at 02:00 on the NAS.", "source": "notes/ops.md",
               "metadata": {"team": "ops"}, "provenance": "user"}),
    );
    let old = id_of(&first);
    let alone = read(&mut s, &old).unwrap();
    assert!(
        alone.get("_meta").is_none(),
        "a document without other versions reads as it always did: {alone}"
    );
    let updated = s.ok(
        "alayasiki_update",
        json!({"document_id": old, "content": "The backups run at 03:00 on the NAS."}),
    );
    let new = id_of(&updated);
    assert_ne!(new, old, "a new version has its own id");
    assert_eq!(updated["supersedes"], json!([old]), "{updated}");
    assert_eq!(updated["state"], "ready");
    assert_eq!(updated["idempotent_replay"], false);

    // The old version: its text, its original bytes, and where it went.
    let was = read(&mut s, &old).expect("the old version is still readable");
    assert_eq!(was["text"], "The backups run at 02:00 on the NAS.");
    assert_eq!(was["_meta"]["superseded_by"], new.as_str(), "{was}");
    assert!(was["_meta"]["superseded_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert_eq!(
        original(&mut s, &old),
        "The backups run at 02:00 on the NAS."
    );
    let now = read(&mut s, &new).unwrap();
    assert_eq!(now["text"], "The backups run at 03:00 on the NAS.");
    assert!(now["_meta"].get("superseded_by").is_none(), "{now}");
    let versions = vec![(old.clone(), false), (new.clone(), true)];
    assert_eq!(
        chain(&was["_meta"]),
        versions,
        "oldest first, from any version"
    );
    assert_eq!(chain(&now["_meta"]), versions);

    // The listing shows current versions; both are stored.
    let list = listed(&mut s);
    assert!(list.contains(&new) && !list.contains(&old), "{list:?}");
    assert_eq!(documents(&mut s), 2);

    // What was not given is kept: source, metadata, provenance.
    let q = s.query("When do the backups run on the NAS?");
    let item = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["document_id"] == new.as_str())
        .unwrap_or_else(|| panic!("the new version is found: {q}"))
        .clone();
    assert_eq!(item["source"], "notes/ops.md", "{item}");
    assert_eq!(item["metadata"]["team"], "ops", "{item}");
    assert_eq!(item["provenance"], "user", "{item}");
}

#[test]
fn an_update_of_the_metadata_alone_keeps_the_original_bytes_and_title() {
    let dir = TempDir::new("versions-metadata");
    let mut s = Server::ready(dir.path());
    let bytes = "# Release checklist\n\nTag, build, sign.\n";
    let first = s.ok(
        "alayasiki_ingest",
        json!({"Text": {"content": bytes, "media_type": "text/markdown",
                        "metadata": {"owner": "dana"}}}),
    );
    let old = id_of(&first);
    let updated = s.ok(
        "alayasiki_update",
        json!({"document_id": old, "metadata": {"owner": "lee", "tags": ["release"]}}),
    );
    let new = id_of(&updated);
    assert_ne!(new, old);
    assert!(
        updated.get("duplicate_of").is_none(),
        "the same bytes are not a duplicate of what they supersede: {updated}"
    );
    assert_eq!(updated["media_type"], "text/markdown");
    assert_eq!(updated["bytes"], first["bytes"]);
    assert_eq!(original(&mut s, &new), bytes, "the same original bytes");
    assert_eq!(
        read(&mut s, &new).unwrap()["text"],
        read(&mut s, &old).unwrap()["text"]
    );
    // (The metadata and title kept are read back in tests/http_versions.rs.)

    // An update that changes nothing is refused; nothing is stored.
    let why = refused(&mut s, "alayasiki_update", json!({"document_id": new}));
    assert!(why.starts_with("invalid_input"), "{why}");
    assert_eq!(documents(&mut s), 2);

    // A title of MAX_TITLE_BYTES is taken, one byte more is not.
    let why = refused(
        &mut s,
        "alayasiki_update",
        json!({"document_id": new, "title": "t".repeat(MAX_TITLE_BYTES + 1)}),
    );
    assert!(
        why.starts_with("limit_exceeded") && why.contains(&MAX_TITLE_BYTES.to_string()),
        "{why}"
    );
    assert_eq!(documents(&mut s), 2);
    let titled = s.ok(
        "alayasiki_update",
        json!({"document_id": new, "title": "t".repeat(MAX_TITLE_BYTES)}),
    );
    assert_eq!(titled["supersedes"], json!([new]));
}

#[test]
fn an_ingest_supersedes_the_documents_it_names_or_its_source() {
    let dir = TempDir::new("versions-ingest");
    let mut s = Server::ready(dir.path());
    let a = s.ingest("Dana leads the storage team.");
    let b = s.ingest("Lee leads the storage team.");
    let merged = s.ok(
        "alayasiki_ingest",
        json!({"content": "Dana and Lee lead the storage team together.",
               "supersedes": [a, b]}),
    );
    let c = id_of(&merged);
    assert_eq!(merged["supersedes"], json!([a, b]), "{merged}");
    for old in [&a, &b] {
        let was = read(&mut s, old).unwrap();
        assert_eq!(was["_meta"]["superseded_by"], c.as_str(), "{was}");
    }
    let ids: Vec<String> = chain(&read(&mut s, &c).unwrap()["_meta"])
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, vec![a.clone(), b.clone(), c.clone()]);

    // The same source, every current document of it.
    let r1 = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: restart the proxy.", "source": "runbook.md"}),
    );
    let r2 = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: rotate the logs.", "source": "runbook.md"}),
    );
    let other = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook for another team.", "source": "other.md"}),
    );
    let r3 = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: restart the proxy, then rotate the logs.",
               "source": "runbook.md", "replace_source": true}),
    );
    assert_eq!(
        r3["supersedes"],
        json!([id_of(&r1), id_of(&r2)]),
        "only current documents of that source: {r3}"
    );
    assert!(read(&mut s, &id_of(&other)).unwrap()["_meta"]
        .get("superseded_by")
        .is_none());
    // The source may come from metadata, as for any ingest.
    let r4 = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: restart the proxy at night.",
               "metadata": {"source": "runbook.md"}, "replace_source": true}),
    );
    assert_eq!(r4["supersedes"], json!([id_of(&r3)]), "{r4}");
    let why = refused(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "No source here.", "replace_source": true}),
    );
    assert!(
        why.starts_with("invalid_input") && why.contains("source"),
        "{why}"
    );

    // A version is not a duplicate of what it supersedes, and a superseded
    // version is not live: the same text again is the current one's copy.
    let same = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: restart the proxy at night.",
               "supersedes": [id_of(&r4)]}),
    );
    assert!(same.get("duplicate_of").is_none(), "{same}");
    assert_ne!(id_of(&same), id_of(&r4));
    let copy = s.ok(
        "alayasiki_ingest",
        json!({"content": "Runbook: restart the proxy at night."}),
    );
    assert_eq!(copy["duplicate_of"], id_of(&same).as_str(), "{copy}");
    assert!(copy.get("supersedes").is_none(), "{copy}");
}

#[test]
fn what_cannot_be_superseded_is_refused_and_nothing_is_stored() {
    let dir = TempDir::new("versions-refusals");
    let mut s = Server::ready(dir.path());
    let a = s.ingest("The office opens at nine.");
    let why = refused(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "The office opens at ten.", "supersedes": ["doc_unknown"]}),
    );
    assert!(
        why.starts_with("not_found") && why.contains("doc_unknown"),
        "{why}"
    );
    let why = refused(
        &mut s,
        "alayasiki_update",
        json!({"document_id": "doc_unknown", "content": "x"}),
    );
    assert!(why.starts_with("not_found"), "{why}");
    let b = id_of(&s.ok(
        "alayasiki_update",
        json!({"document_id": a, "content": "The office opens at ten."}),
    ));
    // No forks: the old version names its current one.
    for (tool, args) in [
        (
            "alayasiki_update",
            json!({"document_id": a, "content": "The office opens at eleven."}),
        ),
        (
            "alayasiki_ingest",
            json!({"content": "The office opens at eleven.", "supersedes": [a]}),
        ),
    ] {
        let why = refused(&mut s, tool, args);
        assert!(why.starts_with("conflict") && why.contains(&b), "{why}");
    }
    // A refused request in the same call as a valid id stores nothing.
    let why = refused(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "The office opens at noon.", "supersedes": [b, "doc_unknown"]}),
    );
    assert!(why.starts_with("not_found"), "{why}");
    assert!(read(&mut s, &b).unwrap()["_meta"]
        .get("superseded_by")
        .is_none());
    assert_eq!(documents(&mut s), 2);
    let (is_error, _) = s.call(
        "alayasiki_ingest",
        json!({"content": "x", "supersedes": "not-a-list"}),
    );
    assert!(is_error);
}

#[test]
fn at_most_max_supersedes_documents_are_superseded_at_once() {
    let dir = TempDir::new("versions-limit");
    let mut s = Server::ready(dir.path());
    let store = |s: &mut Server, i: usize, source: &str| {
        id_of(&s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Note {i} of {source}."), "source": source,
                   "wait": false}),
        ))
    };
    let ids: Vec<String> = (0..=MAX_SUPERSEDES)
        .map(|i| store(&mut s, i, "a"))
        .collect();
    let why = refused(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "All notes, merged.", "supersedes": ids}),
    );
    assert!(
        why.starts_with("limit_exceeded") && why.contains("MAX_SUPERSEDES"),
        "{why}"
    );
    let merged = s.ok(
        "alayasiki_ingest",
        json!({"content": "All notes but one, merged.",
               "supersedes": ids[..MAX_SUPERSEDES]}),
    );
    assert_eq!(
        merged["supersedes"].as_array().unwrap().len(),
        MAX_SUPERSEDES
    );
    // The same bound on a source's current documents: the one left of
    // "a" and the others make one too many.
    for i in 0..MAX_SUPERSEDES {
        store(&mut s, i, "a");
    }
    let why = refused(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "Everything from a.", "source": "a", "replace_source": true}),
    );
    assert!(why.starts_with("limit_exceeded"), "{why}");
    s.ok(
        "alayasiki_forget",
        json!({"document_id": ids[MAX_SUPERSEDES]}),
    );
    let replaced = s.ok(
        "alayasiki_ingest",
        json!({"content": "Everything from a.", "source": "a", "replace_source": true}),
    );
    assert_eq!(
        replaced["supersedes"].as_array().unwrap().len(),
        MAX_SUPERSEDES,
        "{replaced}"
    );
}

#[test]
fn forgetting_any_version_forgets_every_version() {
    let dir = TempDir::new("versions-forget");
    let mut s = Server::ready(dir.path());
    let a = s.ingest("The cafeteria closes at three.");
    let b = id_of(&s.ok(
        "alayasiki_update",
        json!({"document_id": a, "content": "The cafeteria closes at four."}),
    ));
    let c = id_of(&s.ok(
        "alayasiki_update",
        json!({"document_id": b, "content": "The cafeteria closes at five."}),
    ));
    let keep = s.ingest("The library closes at six.");
    let report = s.ok("alayasiki_forget", json!({"document_id": b}));
    assert_eq!(report["documents"], 3, "{report}");
    for id in [&a, &b, &c] {
        assert!(read(&mut s, id).is_err(), "{id} is forgotten");
    }
    assert!(read(&mut s, &keep).is_ok());

    // By source too, whatever source the other versions have.
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "Parking is free on Sundays.", "source": "old.md"}),
    );
    let moved = s.ok(
        "alayasiki_update",
        json!({"document_id": id_of(&first), "source": "new.md"}),
    );
    let report = s.ok("alayasiki_forget", json!({"source": "old.md"}));
    assert_eq!(report["documents"], 2, "{report}");
    assert!(read(&mut s, &id_of(&moved)).is_err());
    assert_eq!(documents(&mut s), 1);
}

#[test]
fn an_update_retried_with_its_key_answers_as_the_first_time() {
    let dir = TempDir::new("versions-idempotent");
    let mut s = Server::ready(dir.path());
    let a = s.ingest("The standup is at 09:30.");
    let args = json!({"document_id": a, "content": "The standup is at 10:00.",
                      "idempotency_key": "standup-v2"});
    let first = s.ok("alayasiki_update", args.clone());
    let again = s.ok("alayasiki_update", args);
    assert_eq!(again["document_id"], first["document_id"]);
    assert_eq!(again["idempotent_replay"], true, "{again}");
    assert_eq!(again["supersedes"], json!([a]), "{again}");
    // The same key for another change is a conflict, not a fork.
    let why = refused(
        &mut s,
        "alayasiki_update",
        json!({"document_id": a, "content": "The standup is at 11:00.",
               "idempotency_key": "standup-v2"}),
    );
    assert!(why.starts_with("conflict"), "{why}");
    assert_eq!(documents(&mut s), 2);
}

/// The relations named `predicate` on any evidence of a local search.
fn relations(s: &mut Server, q: &str, predicate: &str) -> Vec<Value> {
    let r = s.ok(
        "alayasiki_query",
        json!({"query": q, "mode": "evidence", "search_mode": "local"}),
    );
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["relations"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["predicate"] == predicate)
        .collect()
}

#[test]
fn a_superseded_version_no_longer_supports_graph_relations() {
    let dir = TempDir::new("versions-graph");
    let mut s = Server::ready(dir.path());
    let external = s.ok(
        "alayasiki_ingest",
        json!({"content": "Acme Corp. acquired Widgets Inc. in 2023.", "provenance": "external"}),
    );
    let agent = s.ok(
        "alayasiki_ingest",
        json!({"content": "Acme Corp. acquired Widgets Inc. after a long negotiation.",
               "provenance": "agent"}),
    );
    let q = "What did Acme Corp. acquire?";
    let before = relations(&mut s, q, "acquired");
    assert!(!before.is_empty(), "two documents support it");
    let confidence = |r: &[Value]| r[0]["confidence"].as_f64().unwrap();
    let both = confidence(&before);

    // One supporter replaced: the relation stands on the other alone.
    s.ok(
        "alayasiki_update",
        json!({"document_id": id_of(&agent),
               "content": "Acme Corp. opened an office in Porto."}),
    );
    let one = relations(&mut s, q, "acquired");
    assert!(!one.is_empty(), "still supported by the external document");
    assert!(confidence(&one) < both, "{} !< {both}", confidence(&one));

    // The last supporter replaced: nothing states it any more.
    s.ok(
        "alayasiki_ingest",
        json!({"content": "Acme Corp. walked away from Widgets Inc. in 2024.",
               "supersedes": [id_of(&external)]}),
    );
    assert!(
        relations(&mut s, q, "acquired").is_empty(),
        "a fact only superseded versions stated has no support"
    );
}

/// A subcommand run from the shell beside `agent`: it reaches the
/// directory's owner (no `ALAYASIKI_IN_PROCESS`).
#[cfg(unix)]
fn shell(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .env_remove("ALAYASIKI_MCP_SUBJECT")
        .stdin(std::process::Stdio::null());
    for (k, v) in common::owner::SHARED {
        cmd.env(k, v);
    }
    cmd.output().expect("run alayasiki-mcp")
}

/// The id after "stored " in a command's report.
#[cfg(unix)]
fn stored_id(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text.split_whitespace()
        .skip_while(|w| *w != "stored")
        .nth(1)
        .unwrap_or_else(|| panic!("no id in {text}"))
        .to_string()
}

#[cfg(unix)]
#[test]
fn the_command_line_updates_and_supersedes_through_the_owner() {
    let dir = TempDir::new("versions-cli");
    let mut agent = common::owner::client(dir.path());
    let a = agent.ingest("The canteen serves lunch from noon.");

    let out = shell(
        dir.path(),
        &["update", &a, "--text", "The canteen serves lunch from one."],
    );
    let b = stored_id(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("superseding {a}")),
        "{out:?}"
    );
    // The agent sees the new version and the chain at once.
    let now = read(&mut agent, &b).unwrap();
    assert_eq!(now["text"], "The canteen serves lunch from one.");
    assert_eq!(
        chain(&now["_meta"]),
        vec![(a.clone(), false), (b.clone(), true)]
    );

    // Metadata and title only, from the shell.
    let c = stored_id(&shell(
        dir.path(),
        &[
            "update",
            &b,
            "--metadata",
            r#"{"site": "north"}"#,
            "--title",
            "Canteen",
        ],
    ));
    assert_eq!(
        original(&mut agent, &c),
        "The canteen serves lunch from one."
    );

    // A file ingested as a new version of the current one.
    let file = dir.path().join("canteen.md");
    std::fs::write(&file, "# Canteen\n\nLunch from half past twelve.\n").unwrap();
    let path = file.to_str().unwrap();
    let d = stored_id(&shell(dir.path(), &["ingest", path, "--supersedes", &c]));
    let was = read(&mut agent, &c).unwrap();
    assert_eq!(was["_meta"]["superseded_by"], d.as_str(), "{was}");

    // Refusals: a superseded version (exit 1, naming the current one),
    // and bad command lines (exit 2).
    let out = shell(dir.path(), &["update", &a, "--text", "x"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&d), "{out:?}");
    for bad in [
        vec!["update", &d],
        vec!["update", &d, "--text", "x", "--file", path],
        vec!["update", &d, "--metadata", "[1]"],
        vec!["ingest", path, path, "--supersedes", &d],
        vec!["query", "x", "--supersedes", &d],
    ] {
        let out = shell(dir.path(), &bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
    agent.close();
}

#[test]
fn an_export_imported_keeps_every_version_and_which_is_current() {
    let from = TempDir::new("versions-export");
    let mut s = Server::ready(from.path());
    let a = s.ingest("The ferry leaves at seven.");
    let b = id_of(&s.ok(
        "alayasiki_update",
        json!({"document_id": a, "content": "The ferry leaves at eight."}),
    ));
    let c = s.ingest("The ferry returns at noon.");
    let d = id_of(&s.ok(
        "alayasiki_ingest",
        json!({"content": "The ferry runs from eight to noon.", "supersedes": [b, c]}),
    ));
    s.close();
    let export = from.path().join("memory.jsonl");
    std::fs::write(&export, cli_ok(from.path(), &["export"])).unwrap();

    let to = TempDir::new("versions-import");
    cli_ok(to.path(), &["import", export.to_str().unwrap()]);
    let mut s = Server::ready(to.path());
    let all = vec![
        (a.clone(), false),
        (b.clone(), false),
        (c.clone(), false),
        (d.clone(), true),
    ];
    for id in [&a, &b, &c, &d] {
        let doc = read(&mut s, id).unwrap();
        assert_eq!(chain(&doc["_meta"]), all, "{id}: {doc}");
    }
    assert_eq!(
        read(&mut s, &a).unwrap()["_meta"]["superseded_by"],
        b.as_str()
    );
    assert_eq!(
        read(&mut s, &c).unwrap()["_meta"]["superseded_by"],
        d.as_str()
    );
    assert_eq!(listed(&mut s), vec![d.clone()]);
    s.close();
}

#[test]
fn a_version_is_not_reported_as_a_copy_of_the_one_it_replaced() {
    let dir = TempDir::new("versions-dup-report");
    let mut s = Server::ready(dir.path());
    let a = s.ingest("The staging database is rebuilt every Sunday night.");
    s.ok(
        "alayasiki_update",
        json!({"document_id": a, "metadata": {"env": "staging"}}),
    );
    s.close();
    let listed: Value =
        serde_json::from_str(&cli_ok(dir.path(), &["status", "--duplicates", "--json"])).unwrap();
    assert_eq!(listed["copies"], 0, "{listed}");
}

#[test]
fn queries_search_current_versions_and_include_history_reaches_the_old_ones() {
    let dir = TempDir::new("versions-recall");
    let mut s = Server::ready(dir.path());
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "The quarterly offsite is in Lisbon, near the river.",
               "source": "notes/offsite.md", "metadata": {"tags": ["travel"]}}),
    );
    let old = id_of(&first);
    let new = id_of(&s.ok(
        "alayasiki_update",
        json!({"document_id": old, "content": "The quarterly offsite moved to Porto, by the sea."}),
    ));
    let ids = |q: &Value| -> Vec<String> {
        q["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["document_id"].as_str().unwrap().to_string())
            .collect()
    };
    // Even a question in the old version's words finds the current one
    // only: the old left default search in every lane.
    for q in ["Lisbon river offsite", "Where is the quarterly offsite?"] {
        let found = s.ok("alayasiki_query", json!({"query": q, "mode": "evidence"}));
        assert_eq!(ids(&found), std::slice::from_ref(&new), "{q}: {found}");
    }
    let both = s.ok(
        "alayasiki_query",
        json!({"query": "Lisbon river offsite", "mode": "evidence", "include_history": true}),
    );
    let got = ids(&both);
    assert!(got.contains(&old) && got.contains(&new), "{both}");
    assert_eq!(
        got[0], old,
        "in its own words the old version ranks first: {both}"
    );
    // With a filter too: history is filtered like the rest.
    let tagged = s.ok(
        "alayasiki_query",
        json!({"query": "Lisbon river offsite", "mode": "evidence", "include_history": true,
               "filter": {"tags": ["travel"], "source": "notes/offsite.md"}}),
    );
    assert_eq!(ids(&tagged).len(), 2, "{tagged}");
    let (failed, why) = s.call(
        "alayasiki_query",
        json!({"query": "offsite", "include_history": "yes"}),
    );
    assert!(failed, "{why}");
}
