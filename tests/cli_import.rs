//! `alayasiki-mcp import FILE` through the real binary: a pipe or a device
//! is refused at once instead of read forever, a line over
//! `MAX_IMPORT_LINE_BYTES` is named as too long (also when it is the only
//! line); many lines are stored in flight, their commits grouped, yet
//! admitted and reported in file order.

mod common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use alayasiki_mcp::limits::{
    MAX_IMPORT_LINES_IN_FLIGHT, MAX_IMPORT_LINE_BYTES, MAX_METADATA_BYTES,
};
use serde_json::json;

/// `import FILE` on `mem`, killed if it has not exited within `limit`;
/// exit code (`None`: it had to be killed), stdout, stderr.
fn import_within(mem: &Path, file: &Path, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = Command::new(BIN)
        .arg("import")
        .arg(file)
        .arg("--data-dir")
        .arg(mem)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let exit = wait_timeout(&mut child, limit);
    if exit.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        exit.and_then(|e| e.code()),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn import_refuses_a_device_or_a_pipe_at_once() {
    let dir = TempDir::new("import-device");
    let fifo = dir.path().join("memory.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mem = dir.path().join("m");
    for file in [Path::new("/dev/zero"), &fifo, dir.path()] {
        let (exit, _, stderr) = import_within(&mem, file, Duration::from_secs(10));
        assert_eq!(exit, Some(1), "{file:?} was read: {stderr}");
        assert!(stderr.contains("not a regular file"), "{file:?}: {stderr}");
        assert!(!mem.exists(), "{file:?}: no data directory is made");
    }
}

#[test]
fn a_line_over_the_limit_is_named_as_too_long_not_as_an_empty_file() {
    let dir = TempDir::new("import-long");
    let mem = dir.path().join("m");
    let file = dir.path().join("long.jsonl");
    // One line a byte over the limit, then one exactly at it: both are
    // skipped as too long / not JSON, and the file is not "empty".
    let entity = |len: usize| {
        let head = r#"{"type":"entity","name":"Ada","entityType":"person","observations":[""#;
        let tail = r#""]}"#;
        format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
    };
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES + 1).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let (exit, stdout, stderr) = import_within(&mem, &file, Duration::from_secs(60));
    assert_eq!(exit, Some(1), "{stdout}{stderr}");
    assert!(!stderr.contains("empty"), "{stderr}");
    assert!(
        stderr.contains("line 1 is too long") && stderr.contains("MAX_IMPORT_LINE_BYTES"),
        "{stderr}"
    );

    // After a line that tells the format, a line over the limit is skipped
    // and listed; one exactly at the limit is read (and imported: the
    // observation is stored, over the content limit or not, as ingestion
    // decides, never as "too long").
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(
        f,
        r#"{{"type":"entity","name":"Lisbon","entityType":"city","observations":["A port"]}}"#
    )
    .unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES + 1).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    f.write_all(entity(MAX_IMPORT_LINE_BYTES).as_bytes())
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let (exit, stdout, stderr) = import_within(&mem, &file, Duration::from_secs(60));
    assert_eq!(exit, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("line 2: too long"), "{stdout}");
    assert!(!stdout.contains("line 3: too long"), "{stdout}");
}

/// An MCP memory-server file: `entities` entity lines, then a relation
/// line between each entity and the next.
fn memory_lines(entities: usize) -> Vec<String> {
    let name = |i: usize| format!("Keeper {i}");
    let mut lines: Vec<String> = (0..entities)
        .map(|i| {
            json!({"type": "entity", "name": name(i), "entityType": "person",
                   "observations": [format!("tends lighthouse number {i}")]})
            .to_string()
        })
        .collect();
    lines.extend((1..entities).map(|i| {
        json!({"type": "relation", "from": name(i - 1), "to": name(i), "relationType": "relieves"})
            .to_string()
    }));
    lines
}

/// The writer's commits an import made, from its debug log (one line per
/// committed group of writes).
fn commits(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("store::writer: committed"))
        .count()
}

#[test]
fn an_import_commits_many_lines_at_once() {
    let dir = TempDir::new("import-groups");
    let file = dir.path().join("memory.jsonl");
    let lines = memory_lines(400);
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mem = dir.path().join("m");
    // In this process, whose log is the writer's.
    let out = Command::new(BIN)
        .arg("import")
        .arg(&file)
        .arg("--data-dir")
        .arg(&mem)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .env("ALAYASIKI_LOG", "debug")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("799 document(s) imported, 0 already present, 0 line(s) skipped"),
        "{stdout}"
    );
    // Each line waiting for its own commit made a commit per line (and
    // more for indexing); lines in flight share them.
    let commits = commits(&stderr);
    assert!(
        commits > 0 && commits * 10 <= lines.len(),
        "{commits} commits for {} lines",
        lines.len()
    );
    // Every relation joins the entities its entity lines made.
    let mut s = Server::ready(&mem);
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(status["documents"], 799, "{status}");
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Keeper 200", "mode": "evidence", "search_mode": "local"}),
    );
    let relations: Vec<(String, String, String)> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["relations"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            let f = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (f("subject"), f("predicate"), f("object"))
        })
        .collect();
    for want in [("Keeper 199", "Keeper 200"), ("Keeper 200", "Keeper 201")] {
        assert!(
            relations
                .iter()
                .any(|(s, p, o)| (s.as_str(), o.as_str()) == want && p == "relieves"),
            "{want:?} not in {relations:?}"
        );
    }
    s.close();
}

#[test]
fn skips_are_listed_in_file_order_and_a_repeated_key_is_kept_from_its_first_line() {
    let dir = TempDir::new("import-order");
    let file = dir.path().join("memory.jsonl");
    let mut lines = memory_lines(300);
    assert!(lines.len() > 2 * MAX_IMPORT_LINES_IN_FLIGHT);
    // Every 25th line is broken, in turns three ways: two the reader finds
    // (not JSON, no name), one ingestion refuses in a store thread
    // (metadata over MAX_METADATA_BYTES).
    let mut broken = Vec::new();
    for (k, at) in (24..lines.len()).step_by(25).enumerate() {
        lines[at] = match k % 3 {
            0 => "{not json".to_string(),
            1 => json!({"type": "entity", "name": " ", "entityType": "person"}).to_string(),
            _ => json!({"type": "entity", "name": format!("Big {at}"),
                        "entityType": "x".repeat(MAX_METADATA_BYTES)})
            .to_string(),
        };
        broken.push(at + 1);
    }
    // Line 102 names the entity of line 101 again with other content: in
    // flight together, the first is stored, and the second finds its key
    // taken (already present, as it would one line after the other).
    lines[101] = json!({"type": "entity", "name": "Keeper 100", "entityType": "person",
                        "observations": ["keeps another light"]})
    .to_string();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mem = dir.path().join("m");
    let stored = lines.len() - broken.len() - 1;
    for again in [false, true] {
        let out = cli_ok(&mem, &["import", file.to_str().unwrap()]);
        let want = match again {
            false => format!("{stored} document(s) imported, 1 already present"),
            true => format!("0 document(s) imported, {} already present", stored + 1),
        };
        assert!(
            out.contains(&format!("{want}, {} line(s) skipped", broken.len())),
            "{out}"
        );
        assert_eq!(listed_skips(&out), broken[..20], "{out}");
        assert!(
            out.contains(&format!("... {} more", broken.len() - 20)),
            "{out}"
        );
        assert!(out.contains("skipped (limit_exceeded): 7"), "{out}");
    }

    let mut s = Server::ready(&mem);
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Keeper 100 lighthouse", "mode": "evidence", "lanes": ["keyword"]}),
    );
    let texts: Vec<&str> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        texts.contains(&"Keeper 100 (person): tends lighthouse number 100"),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("another light")),
        "{texts:?}"
    );
    s.close();
}

/// The line numbers of the skips a report lists, in its order.
fn listed_skips(report: &str) -> Vec<usize> {
    report
        .lines()
        .filter_map(|l| l.trim().strip_prefix("line "))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}
