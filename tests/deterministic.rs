//! Deterministic mode through the real binary: the same session, run 20
//! times on fresh stores at the same path, gives the same replies byte for
//! byte (times from the fixed clock, ids from the seeded sequence, one
//! request at a time, background work before each request); and each knob
//! does what it says.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// The session: every tool, the resources and the prompt, with a
/// `wait: false` ingest whose indexing must settle before the next
/// request. `${doc}` is the first document's id, read from its receipt.
const SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alayasiki_ingest","arguments":{"content":"Dana owns the release checklist. The release ships on Friday.","source":"notes/a","idempotency_key":"a"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alayasiki_ingest","arguments":{"content":"Lee reviews the deploy runbook with Dana before each release.","source":"notes/b","wait":false}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"alayasiki_query","arguments":{"query":"Who owns the release checklist?"}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"alayasiki://communities"}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"alayasiki_memory_write","arguments":{"session_id":"s1","content":"Ask Lee about the runbook."}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alayasiki_query","arguments":{"query":"runbook","session_id":"s1","mode":"evidence","search_mode":"global"}}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"alayasiki_memory_read","arguments":{"session_id":"s1"}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alayasiki_memory_promote","arguments":{"session_id":"s1"}}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"alayasiki://documents/${doc}"}}"#,
    r#"{"jsonrpc":"2.0","id":11,"method":"resources/list","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"alayasiki_reasoning","arguments":{"question":"Who owns the checklist?"}}}"#,
    r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"alayasiki_forget","arguments":{"document_id":"${doc}"}}}"#,
    r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"alayasiki_status","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":15,"method":"ping"}"#,
];

/// Runs the session on a fresh store at `dir` with `env`; everything the
/// server wrote on stdout.
fn run(dir: &Path, env: &[(&str, &str)]) -> Vec<u8> {
    let _ = std::fs::remove_dir_all(dir);
    let mut child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start alayasiki-mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut out = Vec::new();
    let mut doc = String::new();
    for line in SESSION {
        writeln!(stdin, "{}", line.replace("${doc}", &doc)).unwrap();
        stdin.flush().unwrap();
        if !line.contains("\"id\"") {
            continue;
        }
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        if doc.is_empty() && reply.contains("document_id") {
            let v: serde_json::Value = serde_json::from_str(&reply).unwrap();
            let text = v["result"]["content"][0]["text"].as_str().unwrap();
            let receipt: serde_json::Value = serde_json::from_str(text).unwrap();
            doc = receipt["document_id"].as_str().unwrap().to_string();
        }
        out.extend_from_slice(reply.as_bytes());
    }
    drop(stdin);
    let status = wait_timeout(&mut child, TIMEOUT).expect("the server exits");
    assert!(status.success(), "{status}");
    out
}

#[test]
fn the_same_session_twenty_times_gives_the_same_bytes() {
    let tmp = TempDir::new("deterministic");
    let dir = tmp.path().join("store");
    let det = [("ALAYASIKI_DETERMINISTIC", "1")];
    let first = run(&dir, &det);
    let text = String::from_utf8_lossy(&first);
    assert_eq!(first.iter().filter(|&&b| b == b'\n').count(), 15, "{text}");
    assert!(!text.contains("\"isError\":true"), "{text}");
    assert!(
        text.contains("2026-01-01T00:00:"),
        "times from the fixed clock: {text}"
    );
    for n in 2..=20 {
        let again = run(&dir, &det);
        assert!(
            again == first,
            "run {n} differs:\n{}\n---\n{text}",
            String::from_utf8_lossy(&again)
        );
    }
}

#[test]
fn each_knob_changes_what_it_says_and_the_default_is_not_deterministic() {
    let tmp = TempDir::new("deterministic-knobs");
    let dir = tmp.path().join("store");
    let base = run(&dir, &[("ALAYASIKI_DETERMINISTIC", "1")]);
    let seeded = run(
        &dir,
        &[("ALAYASIKI_DETERMINISTIC", "1"), ("ALAYASIKI_ID_SEED", "7")],
    );
    assert_ne!(base, seeded, "another seed, other ids");
    let later = String::from_utf8(run(
        &dir,
        &[
            ("ALAYASIKI_DETERMINISTIC", "1"),
            ("ALAYASIKI_CLOCK_START", "2030-06-01T12:00:00Z"),
            ("ALAYASIKI_CLOCK_STEP_MS", "5"),
        ],
    ))
    .unwrap();
    assert!(later.contains("2030-06-01T12:00:00.015Z"), "{later}");
    // The flag is the variable's twin.
    let mut child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["--deterministic", "--data-dir"])
        .arg(tmp.path().join("flag"))
        .env("ALAYASIKI_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_timeout(&mut child, TIMEOUT).unwrap().success());
    // A bad value is refused at start, naming the variable.
    let out = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["--data-dir"])
        .arg(tmp.path().join("bad"))
        .env("ALAYASIKI_DETERMINISTIC", "yes")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ALAYASIKI_DETERMINISTIC must be 1 or 0"));
    // Without the mode, two runs differ (ids, times).
    assert_ne!(run(&dir, &[]), run(&dir, &[]));
}
