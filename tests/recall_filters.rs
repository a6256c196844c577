//! Filtered recall through the real binary: `alayasiki_query`'s `filter`
//! (source exact or prefix, media type, metadata key = value, tags any or
//! all, since / until on the time a document is about) holds inside every
//! lane before it ranks, alone and combined, at its edges, and refuses what
//! it cannot mean; the CLI's `query --filter` reads the same object.

mod common;

use common::*;
use serde_json::{json, Value};

/// A memory where a filter matters: many notes about the backups rank
/// above the one of each kind a filter selects.
fn seeded(dir: &std::path::Path) -> Server {
    let mut s = Server::ready(dir);
    for i in 0..24 {
        s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Backup report {i}: the nightly backups of host-{i} ran at 03:00 and the backup copies were verified."),
                   "source": format!("reports/backup-{i}.txt"),
                   "metadata": {"tags": ["reports"], "date": "2026-10-01"}}),
        );
    }
    let notes = [
        (
            "runbook/backups.md",
            "text/markdown",
            json!({"tags": ["ops", "backups"], "team": "platform", "date": "2026-11-28"}),
            "# Backups\nRestore a backup with `restic restore latest`; backups live on the NAS.",
        ),
        (
            "runbook/dns.md",
            "text/markdown",
            json!({"tags": ["ops"], "team": "network", "date": "2026-12-02"}),
            "# DNS\nThe backup resolver is 10.0.0.53 when the primary is down.",
        ),
        (
            "notes/standup.txt",
            "text/plain",
            json!({"tags": ["meeting"], "team": "platform", "priority": 2, "date": "2026-12-03"}),
            "Standup: Dana said the backup window moves to 02:00 next week.",
        ),
        (
            "notes/retro.json",
            "application/json",
            json!({"tags": ["meeting", "ops"], "team": "platform", "urgent": true}),
            r#"{"retro": "We lost a backup because the disk filled up."}"#,
        ),
    ];
    for (source, media_type, metadata, content) in notes {
        s.ok(
            "alayasiki_ingest",
            json!({"Text": {"content": content, "media_type": media_type,
                            "source": source, "metadata": metadata}}),
        );
    }
    s
}

fn query(s: &mut Server, filter: Value, top_k: u32) -> Vec<String> {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "backups backup", "mode": "evidence", "top_k": top_k, "filter": filter}),
    );
    let mut got = evidence_sources(&q);
    got.sort();
    got
}

#[test]
fn every_filter_selects_inside_the_lanes_alone_and_combined() {
    let dir = TempDir::new("filters");
    let mut s = seeded(dir.path());
    // Unfiltered, the 24 reports take most of the first places.
    let plain = evidence_sources(&s.ok(
        "alayasiki_query",
        json!({"query": "backups backup", "mode": "evidence", "top_k": 4}),
    ));
    let reports = plain.iter().filter(|x| x.starts_with("reports/")).count();
    assert!(reports >= 2, "{plain:?}");
    assert!(!plain.contains(&"runbook/dns.md".to_string()), "{plain:?}");

    // Each filter alone, asked for fewer results than it admits or more.
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"source": "runbook/dns.md"}), vec!["runbook/dns.md"]),
        (
            json!({"source_prefix": "runbook/"}),
            vec!["runbook/backups.md", "runbook/dns.md"],
        ),
        (
            json!({"source_prefix": "notes/"}),
            vec!["notes/retro.json", "notes/standup.txt"],
        ),
        (
            json!({"media_type": "text/markdown"}),
            vec!["runbook/backups.md", "runbook/dns.md"],
        ),
        (
            json!({"media_type": "application/json"}),
            vec!["notes/retro.json"],
        ),
        (
            json!({"metadata": {"team": "network"}}),
            vec!["runbook/dns.md"],
        ),
        (
            json!({"metadata": {"priority": 2}}),
            vec!["notes/standup.txt"],
        ),
        (
            json!({"metadata": {"urgent": true}}),
            vec!["notes/retro.json"],
        ),
        (
            json!({"tags": ["meeting"]}),
            vec!["notes/retro.json", "notes/standup.txt"],
        ),
        (
            json!({"tags": ["backups", "meeting"]}),
            vec![
                "notes/retro.json",
                "notes/standup.txt",
                "runbook/backups.md",
            ],
        ),
        (
            json!({"tags": ["ops", "meeting"], "tags_match": "all"}),
            vec!["notes/retro.json"],
        ),
        // The time a document is about: the date in its metadata.
        (
            json!({"since": "2026-12-01", "until": "2026-12-02"}),
            vec!["runbook/dns.md"],
        ),
        (
            json!({"since": "2026-11-28", "until": "2026-11-28"}),
            vec!["runbook/backups.md"],
        ),
        // Combined: every condition holds.
        (
            json!({"source_prefix": "runbook/", "metadata": {"team": "platform"}}),
            vec!["runbook/backups.md"],
        ),
        (
            json!({"tags": ["ops"], "media_type": "text/markdown", "since": "2026-12-01"}),
            vec!["runbook/dns.md"],
        ),
        (
            json!({"metadata": {"team": "platform"}, "tags": ["meeting"], "until": "2026-12-04"}),
            vec!["notes/standup.txt"],
        ),
    ];
    for (filter, want) in cases {
        let mut want: Vec<String> = want.into_iter().map(String::from).collect();
        want.sort();
        assert_eq!(query(&mut s, filter.clone(), 10), want, "filter {filter}");
        // Asked for one, the lanes still find one: the filter did not cut
        // a ranked list the reports had filled.
        assert_eq!(query(&mut s, filter.clone(), 1).len(), 1, "filter {filter}");
    }
    // The reports are stored today but dated 2026-10-01 by their metadata.
    let reports = query(&mut s, json!({"until": "2026-10-02"}), 30);
    assert_eq!(reports.len(), 24, "{reports:?}");
    assert!(reports.iter().all(|x| x.starts_with("reports/")));
    // A document without a date is timed by when it was stored (today).
    let today = s.ok(
        "alayasiki_query",
        json!({"query": "retro disk", "mode": "evidence",
               "filter": {"since": "2026-12-04", "source_prefix": "notes/"}}),
    );
    assert_eq!(evidence_sources(&today), ["notes/retro.json"], "{today}");
}

#[test]
fn a_filter_matching_nothing_finds_nothing_and_says_so() {
    let dir = TempDir::new("filters-empty");
    let mut s = seeded(dir.path());
    for filter in [
        json!({"source": "runbook/missing.md"}),
        json!({"source_prefix": "archive/"}),
        json!({"metadata": {"no-such-key": "x"}}),
        json!({"metadata": {"team": "Platform"}}),
        json!({"tags": ["ops", "reports"], "tags_match": "all"}),
        json!({"since": "2030-01-01"}),
        json!({"media_type": "application/pdf"}),
    ] {
        let q = s.ok(
            "alayasiki_query",
            json!({"query": "backups", "filter": filter}),
        );
        assert_eq!(q["evidence"], json!([]), "filter {filter}: {q}");
        assert!(
            q["answer"]["text"]
                .as_str()
                .unwrap()
                .contains("No stored evidence"),
            "{q}"
        );
    }
}

#[test]
fn bad_filters_are_refused_with_a_clear_message() {
    let dir = TempDir::new("filters-bad");
    let mut s = Server::ready(dir.path());
    for (filter, says) in [
        (
            json!({"since": "last monday"}),
            "`filter.since` must be an RFC 3339",
        ),
        (
            json!({"until": "2026-02-30"}),
            "`filter.until` must be an RFC 3339",
        ),
        (
            json!({"since": "2026-12-05", "until": "2026-12-01"}),
            "`filter.since` must be before `filter.until`",
        ),
        (json!({"tag": ["ops"]}), "unknown argument `filter.tag`"),
        (json!({"source": "a", "source_prefix": "a"}), "not both"),
        (
            json!({"metadata": {"team": ["a"]}}),
            "strings, numbers or booleans",
        ),
        (
            json!({"tags": (0..33).map(|i| i.to_string()).collect::<Vec<_>>()}),
            "MAX_FILTER_TAGS",
        ),
    ] {
        let (failed, reply) = s.call(
            "alayasiki_query",
            json!({"query": "backups", "filter": filter}),
        );
        assert!(failed, "filter {filter} was accepted: {reply}");
        let text = reply.to_string();
        assert!(text.contains(says), "filter {filter}: {text}");
    }
}

#[test]
fn the_cli_query_reads_the_same_filter() {
    let dir = TempDir::new("filters-cli");
    seeded(dir.path()).close();
    let out = cli(
        dir.path(),
        &[
            "query",
            "backups",
            "--filter",
            r#"{"source_prefix": "runbook/", "tags": ["backups"]}"#,
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("runbook/backups.md"), "{stdout}");
    assert!(!stdout.contains("reports/"), "{stdout}");
    let bad = cli(
        dir.path(),
        &["query", "backups", "--filter", r#"{"since": "soon"}"#],
    );
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("`filter.since` must be an RFC 3339"),
        "{stderr}"
    );
    let not_json = cli(dir.path(), &["query", "backups", "--filter", "tags=ops"]);
    assert_eq!(not_json.status.code(), Some(2));
}
