//! Broad recall filters through the real binary, as the tenant's admission
//! catalog answers them: a filter no index narrows (a media type, any of
//! several tags) sees every ingest, update and forget the moment it is
//! acknowledged, never admits another tenant's chunks, and past the
//! catalog's memory budget gives the same results the SQL way (the budget
//! test also shows, from the log, that these filters reach the catalog).

mod common;

use common::owner::{client_with, stop_owner, SHARED};
use common::*;
use serde_json::{json, Value};

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// `query` under `filter` (and `include_history`), evidence sources sorted.
fn filtered(s: &mut Server, query: &str, filter: Value, history: bool) -> Vec<String> {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": query, "mode": "evidence", "top_k": 20, "filter": filter,
               "include_history": history}),
    );
    sorted(evidence_sources(&q))
}

fn note(s: &mut Server, source: &str, media_type: &str, tags: &[&str], text: &str) -> String {
    let r = s.ok(
        "alayasiki_ingest",
        json!({"Text": {"content": text, "media_type": media_type, "source": source,
                        "metadata": {"tags": tags}}}),
    );
    assert_eq!(r["state"], "ready", "{r}");
    r["document_id"].as_str().unwrap().to_string()
}

#[test]
fn a_broad_filter_sees_each_ingest_update_and_forget_at_once() {
    let dir = TempDir::new("catalog-fresh");
    let mut s = Server::ready(dir.path());
    for i in 0..6 {
        note(
            &mut s,
            &format!("reports/{i}.txt"),
            "text/plain",
            &["reports"],
            &format!("Backup report {i}: the nightly backups of host-{i} ran."),
        );
    }
    let runbook = note(
        &mut s,
        "runbook/backups.md",
        "text/markdown",
        &["ops"],
        "# Backups\nRestore a backup with restic; the backups live on the NAS.",
    );
    let md = json!({"media_type": "text/markdown"});
    let tagged = json!({"tags": ["ops", "incident"]});
    assert_eq!(
        filtered(&mut s, "backups backup", md.clone(), false),
        ["runbook/backups.md"]
    );

    // An ingest, seen by the next query.
    note(
        &mut s,
        "runbook/restore.md",
        "text/markdown",
        &["incident"],
        "# Restore\nWhen a backup fails, restore the backups from the NAS.",
    );
    assert_eq!(
        filtered(&mut s, "backups backup", md.clone(), false),
        ["runbook/backups.md", "runbook/restore.md"]
    );
    assert_eq!(
        filtered(&mut s, "backups backup", tagged.clone(), false),
        ["runbook/backups.md", "runbook/restore.md"]
    );

    // An update that changes the tags: the new version answers for the
    // new ones, the old version only with its history asked for.
    let updated = s.ok(
        "alayasiki_update",
        json!({"document_id": runbook, "metadata": {"tags": ["archive"]}}),
    );
    assert_eq!(updated["supersedes"], json!([runbook]), "{updated}");
    assert_eq!(
        filtered(&mut s, "backups backup", tagged.clone(), false),
        ["runbook/restore.md"]
    );
    assert_eq!(
        filtered(&mut s, "backups backup", tagged.clone(), true),
        ["runbook/backups.md", "runbook/restore.md"],
        "the superseded version kept its tags, and counts with its history"
    );
    assert_eq!(
        filtered(
            &mut s,
            "backups backup",
            json!({"tags": ["archive", "x"]}),
            false
        ),
        ["runbook/backups.md"]
    );
    // A forget, gone from the next query.
    let forgot = s.ok("alayasiki_forget", json!({"source": "runbook/restore.md"}));
    assert_eq!(forgot["documents"], 1, "{forgot}");
    assert_eq!(
        filtered(&mut s, "backups backup", md.clone(), false),
        ["runbook/backups.md"]
    );
    assert!(filtered(
        &mut s,
        "backups backup",
        json!({"tags": ["incident", "y"]}),
        false
    )
    .is_empty());

    // A document of another media type is not admitted; one of this type is.
    note(
        &mut s,
        "notes/n.txt",
        "text/plain",
        &["ops"],
        "The backups moved to the NAS.",
    );
    note(
        &mut s,
        "notes/n.md",
        "text/markdown",
        &["ops"],
        "The backups moved to the new NAS.",
    );
    assert_eq!(
        filtered(&mut s, "backups backup", md, false),
        ["notes/n.md", "runbook/backups.md"]
    );
    assert_eq!(
        filtered(&mut s, "backups backup", tagged, false),
        ["notes/n.md", "notes/n.txt"]
    );
}

#[test]
fn a_tenants_catalog_never_admits_another_tenants_chunks() {
    let dir = TempDir::new("catalog-tenants");
    let env = |tenant: &'static str| {
        let mut e = SHARED.to_vec();
        e.push(("ALAYASIKI_MCP_TENANT", tenant));
        e
    };
    let mut a = client_with(dir.path(), &env("acme"));
    let mut b = client_with(dir.path(), &env("globex"));
    let md = json!({"media_type": "text/markdown"});
    // Interleaved, so that the two tenants' chunk keys and documents sit
    // side by side.
    for i in 0..4 {
        for (s, who) in [(&mut a, "acme"), (&mut b, "globex")] {
            note(
                s,
                &format!("{who}/{i}.md"),
                "text/markdown",
                &["ops", who],
                &format!("The backups of {who} host {i} run nightly to the NAS."),
            );
        }
        let got_b = filtered(&mut b, "backups nightly", md.clone(), false);
        assert_eq!(got_b.len(), i + 1, "{got_b:?}");
        assert!(got_b.iter().all(|s| s.starts_with("globex/")), "{got_b:?}");
        let got_a = filtered(
            &mut a,
            "backups nightly",
            json!({"tags": ["ops", "z"]}),
            false,
        );
        assert_eq!(got_a.len(), i + 1, "{got_a:?}");
        assert!(got_a.iter().all(|s| s.starts_with("acme/")), "{got_a:?}");
    }
    // A tag only the other tenant's documents carry admits nothing.
    assert!(filtered(
        &mut b,
        "backups nightly",
        json!({"tags": ["acme", "z"]}),
        false
    )
    .is_empty());
    drop(a);
    drop(b);
    stop_owner(dir.path());
}

/// Every query of `filters`, each result's (document, chunk) ids in order.
fn answers(dir: &std::path::Path, env: &[(&str, &str)], filters: &[Value]) -> (Vec<Value>, String) {
    let mut s = Server::capturing(dir, &[], env);
    s.initialize();
    let mut out = Vec::new();
    for filter in filters {
        for query in ["backups restore", "NAS host", "report ran"] {
            let q = s.ok(
                "alayasiki_query",
                json!({"query": query, "mode": "evidence", "top_k": 8, "filter": filter}),
            );
            let ids: Vec<Value> = q["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| json!([e["document_id"], e["chunk_id"], e["source"]]))
                .collect();
            out.push(json!({"filter": filter, "query": query, "evidence": ids}));
        }
    }
    let log = s.stderr();
    s.close();
    (out, log)
}

#[test]
fn past_the_catalog_budget_a_broad_filter_gives_the_same_results() {
    let dir = TempDir::new("catalog-budget");
    {
        let mut s = Server::ready(dir.path());
        let media = ["text/plain", "text/markdown", "application/json"];
        let tags = ["ops", "meeting", "incident", "design"];
        for i in 0..60 {
            let text = format!(
                "Note {i}: the backups of host-{} ran at 0{}:00; restore from the NAS if report {i} failed.",
                i % 7,
                i % 5
            );
            let content = if media[i % 3] == "application/json" {
                json!({"note": text}).to_string()
            } else {
                text
            };
            note(
                &mut s,
                &format!("notes/{i}"),
                media[i % 3],
                &[tags[i % 4], tags[(i / 4) % 4]],
                &content,
            );
        }
        // History too: a few superseded versions.
        for i in 0..5 {
            let q = s.ok(
                "alayasiki_query",
                json!({"query": format!("Note {i}"), "mode": "evidence", "top_k": 1,
                       "filter": {"source": format!("notes/{i}")}}),
            );
            let id = q["evidence"][0]["document_id"]
                .as_str()
                .unwrap()
                .to_string();
            s.ok(
                "alayasiki_update",
                json!({"document_id": id, "metadata": {"tags": ["archive"]}}),
            );
        }
        s.close();
    }
    let filters = [
        json!({"media_type": "text/markdown"}),
        json!({"media_type": "application/json"}),
        json!({"tags": ["ops", "incident"]}),
        json!({"tags": ["archive", "design"]}),
        json!({"tags": ["nobody", "nothing"]}),
        json!({"media_type": "image/png"}),
    ];
    let info = ("ALAYASIKI_LOG", "info");
    let (with_catalog, log) = answers(dir.path(), &[info], &filters);
    assert!(log.contains("admission catalog of tenant"), "{log}");
    assert!(
        with_catalog
            .iter()
            .any(|a| a["evidence"].as_array().unwrap().len() >= 4),
        "the filters admit something: {with_catalog:?}"
    );
    let (sql_only, log) = answers(
        dir.path(),
        &[info, ("ALAYASIKI_ADMISSION_CATALOG_BYTES", "0")],
        &filters,
    );
    assert!(!log.contains("admission catalog of tenant"), "{log}");
    assert_eq!(with_catalog, sql_only);
    // A budget smaller than the tenant's catalog: refused, then SQL.
    let (over, log) = answers(
        dir.path(),
        &[info, ("ALAYASIKI_ADMISSION_CATALOG_BYTES", "1000")],
        &filters,
    );
    assert!(log.contains("over its budget"), "{log}");
    assert_eq!(with_catalog, over);
}

#[test]
fn a_catalog_budget_that_is_not_a_size_is_refused_at_start() {
    let dir = TempDir::new("catalog-knob");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .env("ALAYASIKI_IN_PROCESS", "1")
        .env("ALAYASIKI_ADMISSION_CATALOG_BYTES", "67108865")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("ALAYASIKI_ADMISSION_CATALOG_BYTES") && err.contains("67108864"),
        "{err}"
    );
}
