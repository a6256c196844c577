//! The recorded sessions in `fixtures/sessions/` replayed through the real
//! `alayasiki-mcp replay` command, and that command's own contract: what
//! it reports, its exit status, its refusal of bad fixtures, seeding from
//! an export, and that nothing is left behind.
//!
//! Set `FIXTURE_PRINT=1` to print the full report of the recorded
//! sessions.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn sessions() -> Vec<PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sessions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// `alayasiki-mcp replay ARGS...` with `TMPDIR` set to `tmp`.
fn replay(tmp: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("replay")
        .args(args)
        .env("TMPDIR", tmp)
        .env_remove("ALAYASIKI_DATA_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("run alayasiki-mcp replay")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes `lines` as a fixture named `name` in `dir`.
fn fixture(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

const INIT: &str = r#"{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}}"#;
const INIT_OK: &str = r#"{"expect": {"jsonrpc": "2.0", "id": 1, "result": "<any>"}}"#;

#[test]
fn every_recorded_session_replays_through_the_replay_command() {
    let files = sessions();
    assert!(
        files.len() >= 4,
        "expected the recorded sessions, found {files:?}"
    );
    let tmp = TempDir::new("replay-sessions");
    let args: Vec<&std::ffi::OsStr> = files.iter().map(|f| f.as_os_str()).collect();
    let out = replay(tmp.path(), &args);
    let report = stdout(&out);
    if std::env::var_os("FIXTURE_PRINT").is_some() {
        eprintln!("{report}");
    }
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.ends_with(&format!(
            "{n} fixture(s): {n} passed, 0 failed, 0 could not run\n",
            n = files.len()
        )),
        "{report}"
    );
    // And in deterministic mode, as a CI suite would run them.
    let mut det = vec![std::ffi::OsStr::new("--deterministic")];
    det.extend(&args);
    let out = replay(tmp.path(), &det);
    assert!(out.status.success(), "{}", stdout(&out));
    // And as agents are served: through a relay to a memory owner. Every
    // reply is the same but `alayasiki_status`'s, which names the owner
    // serving the session (an `owner` key an in-process server has not):
    // the only difference allowed.
    let mut relayed = vec![std::ffi::OsStr::new("--through-owner")];
    relayed.extend(&args);
    let out = replay(tmp.path(), &relayed);
    let report = stdout(&out);
    let differences: Vec<&str> = report
        .lines()
        .filter(|l| l.trim_start().starts_with("at $"))
        .collect();
    assert!(
        differences
            .iter()
            .all(|l| l.ends_with(r#"keys differ: missing [], unexpected ["owner"]"#)),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passed = report.lines().filter(|l| l.starts_with("PASS ")).count();
    assert_eq!(passed + differences.len(), files.len(), "{report}");
    assert!(passed >= 2, "{report}");
    // Every scratch store is gone. A scratch directory whose path is too
    // long for a socket (it depends on the test's temporary path) has its
    // owner's socket in this user's runtime directory under the temporary
    // directory, `alayasiki-mcp-UID`: that directory stays, as a runtime
    // directory does, but empty (each owner removes its socket).
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| {
            let runtime = e
                .file_name()
                .to_string_lossy()
                .starts_with("alayasiki-mcp-")
                && e.path().is_dir();
            !(runtime && std::fs::read_dir(e.path()).unwrap().next().is_none())
        })
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_mismatch_exits_1_naming_the_line_the_path_and_both_values() {
    let tmp = TempDir::new("replay-mismatch");
    let f = fixture(
        tmp.path(),
        "m.jsonl",
        &[
            r#"{"fixture_format": 1}"#,
            INIT,
            INIT_OK,
            r#"{"send": {"jsonrpc": "2.0", "id": 2, "method": "ping"}}"#,
            r#"{"expect": {"jsonrpc": "2.0", "id": 2, "result": {"pong": true}}}"#,
            r#"{"send": {"jsonrpc": "2.0", "id": 3, "method": "ping"}}"#,
            r#"{"expect": {"jsonrpc": "2.0", "id": 3, "result": {}}}"#,
        ],
    );
    let out = replay(tmp.path(), &[f.as_os_str()]);
    let report = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("m.jsonl:5: expect id 2"), "{report}");
    assert!(
        report.contains("at $.result: keys differ: missing [\"pong\"]"),
        "{report}"
    );
    assert!(
        report.contains("actual:   {\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}"),
        "{report}"
    );
    assert!(report.contains("skip line 7: expect id 3"), "{report}");
    // The same, for CI systems.
    let junit = stdout(&replay(
        tmp.path(),
        &["--format".as_ref(), "junit".as_ref(), f.as_os_str()],
    ));
    assert!(
        junit.contains("failures=\"1\"")
            && junit.contains("<failure message=\"at $.result: keys differ"),
        "{junit}"
    );
    let tap = stdout(&replay(
        tmp.path(),
        &["--format".as_ref(), "tap".as_ref(), f.as_os_str()],
    ));
    assert!(tap.starts_with("TAP version 13\n1..6\n"), "{tap}");
    assert!(
        tap.contains("not ok 4 - ") && tap.contains("ok 6 - ") && tap.contains("# SKIP"),
        "{tap}"
    );
}

#[test]
fn bad_fixtures_exit_2_naming_the_line_and_store_nothing() {
    let tmp = TempDir::new("replay-bad");
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "nojson.jsonl",
            &[r#"{"fixture_format": 1}"#, "{not json"],
            "nojson.jsonl:2: not a JSON object",
        ),
        (
            "kind.jsonl",
            &[r#"{"fixture_format": 1}"#, r#"{"sned": {}}"#],
            "kind.jsonl:2: unknown step kind \"sned\"",
        ),
        (
            "capture.jsonl",
            &[
                r#"{"fixture_format": 1}"#,
                r#"{"send": {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "${doc}"}}}"#,
            ],
            "capture.jsonl:2: ${doc} is used before",
        ),
        (
            "newer.jsonl",
            &[r#"{"fixture_format": 99}"#],
            "newer.jsonl:1: fixture format 99 is newer",
        ),
        (
            "noformat.jsonl",
            &[INIT],
            "noformat.jsonl:1: a fixture starts with its format",
        ),
    ];
    for (name, lines, want) in cases {
        let f = fixture(tmp.path(), name, lines);
        let out = replay(tmp.path(), &[f.as_os_str()]);
        let report = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {report}");
        assert!(report.contains(want), "{name}: want {want:?} in {report}");
    }
    // A byte-order mark before the format line is not a step.
    let bom = tmp.path().join("bom.jsonl");
    std::fs::write(
        &bom,
        format!("\u{feff}{{\"fixture_format\": 1}}\n{INIT}\n{INIT_OK}\n"),
    )
    .unwrap();
    let out = replay(tmp.path(), &[bom.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    std::fs::remove_file(&bom).unwrap();
    // A send over MAX_FRAME_BYTES (8 MiB), refused before anything runs.
    let big = format!(r#"{{"send_raw": "{}"}}"#, "x".repeat(8 * 1024 * 1024 + 1));
    let f = fixture(tmp.path(), "big.jsonl", &[r#"{"fixture_format": 1}"#, &big]);
    let report = stdout(&replay(tmp.path(), &[f.as_os_str()]));
    assert!(
        report.contains(
            "big.jsonl:2: the message is 8388609 bytes; a frame holds at most MAX_FRAME_BYTES"
        ),
        "{report}"
    );
    // No scratch store was made for any of them, nor left.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".jsonl"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_seed_export_is_imported_into_every_fixtures_store() {
    let tmp = TempDir::new("replay-seed");
    let source = TempDir::new("replay-seed-source");
    {
        let mut s = Server::ready(source.path());
        s.ingest("The lighthouse keeper logs the tide at dawn: marker zq8w.");
        s.close();
    }
    let export = cli_ok(source.path(), &["export"]);
    let seed = tmp.path().join("seed.jsonl");
    std::fs::write(&seed, export).unwrap();
    let f = fixture(
        tmp.path(),
        "seeded.jsonl",
        &[
            r#"{"fixture_format": 1}"#,
            INIT,
            INIT_OK,
            r#"{"send": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "alayasiki_query", "arguments": {"query": "zq8w", "mode": "evidence", "lanes": ["keyword"]}}}}"#,
            r#"{"expect": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": {"$json": {"evidence": [{"text": "The lighthouse keeper logs the tide at dawn: marker zq8w.", "chunk_id": "<string>", "created_at": "<string>", "document_id": "<capture:doc>", "lanes": "<any>", "metadata": {}, "provenance": null, "rank": 1, "score": "<number>", "source": null, "span": "<any>", "title": "<any>"}], "budget": "<any>", "explain": "<any>", "mode": "evidence", "query": "zq8w", "search_mode": "<any>", "terms": "<any>"}}}], "isError": false}}}"#,
        ],
    );
    let out = replay(
        tmp.path(),
        &["--seed".as_ref(), seed.as_os_str(), f.as_os_str()],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    // Without the seed the store is empty and the same fixture fails.
    let out = replay(tmp.path(), &[f.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

/// A client driving `alayasiki-mcp record` one request at a time.
struct Recorder {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Recorder {
    fn start(tmp: &Path, out: &Path) -> Recorder {
        let mut child = Command::new(BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg("record")
            .arg("--out")
            .arg(out)
            .env("TMPDIR", tmp)
            .env("ALAYASIKI_LOG", "warn")
            .env_remove("ALAYASIKI_DATA_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run alayasiki-mcp record");
        Recorder {
            stdin: child.stdin.take().unwrap(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 0,
        }
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let msg = serde_json::json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let reply = self.raw(msg.to_string().as_bytes());
        assert_eq!(reply["id"], self.next_id, "{reply}");
        reply
    }

    /// A recorder whose session is initialized.
    fn initialized(tmp: &Path, out: &Path) -> Recorder {
        let mut c = Recorder::start(tmp, out);
        c.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "recorder-test", "version": "1"}}),
        );
        c
    }

    /// Writes `bytes` and a newline as they are, and reads one reply line.
    fn raw(&mut self, bytes: &[u8]) -> serde_json::Value {
        use std::io::{BufRead, Write};
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("a JSON reply")
    }

    fn tool(&mut self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let r = self.request(
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .expect("a text result");
        serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
    }

    fn finish(self) {
        drop(self.stdin);
        let mut child = self.child;
        let status = wait_timeout(&mut child, TIMEOUT).expect("record exits");
        assert!(status.success(), "record exited with {status}");
    }
}

/// Issue 25: a session recorded with every tool, resource and prompt
/// replays green on the first try, untouched.
#[test]
fn a_recorded_session_of_every_tool_resource_and_prompt_replays_as_it_is() {
    use serde_json::json;
    let tmp = TempDir::new("record");
    let out = tmp.path().join("session.jsonl");
    let mut c = Recorder::initialized(tmp.path(), &out);
    let doc = c.tool(
        "alayasiki_ingest",
        json!({"content": "The night ferry leaves the north pier at 23:40 on weekdays.", "source": "timetable", "idempotency_key": "ferry"}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.tool(
        "alayasiki_ingest",
        json!({"Text": {"content": "# Ferry\n\nTickets are sold on board.", "media_type": "text/markdown"}}),
    );
    c.tool(
        "alayasiki_query",
        json!({"query": "When does the night ferry leave?"}),
    );
    c.tool(
        "alayasiki_query",
        json!({"query": "ferry tickets", "mode": "evidence", "top_k": 2}),
    );
    c.tool(
        "alayasiki_memory_write",
        json!({"session_id": "trip", "content": "The traveller prefers a window seat."}),
    );
    c.tool("alayasiki_memory_read", json!({"session_id": "trip"}));
    c.tool("alayasiki_memory_promote", json!({"session_id": "trip"}));
    c.request("resources/list", json!({}));
    c.request("resources/templates/list", json!({}));
    c.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc}")}),
    );
    c.request("resources/read", json!({"uri": "alayasiki://communities"}));
    c.request("prompts/list", json!({}));
    c.request(
        "prompts/get",
        json!({"name": "alayasiki_reasoning", "arguments": {"question": "When does the ferry leave?"}}),
    );
    c.tool("alayasiki_forget", json!({"document_id": doc}));
    c.tool("alayasiki_status", json!({}));
    c.finish();
    let recorded = std::fs::read_to_string(&out).unwrap();
    assert!(
        recorded.starts_with("{\"fixture_format\":1}\n"),
        "{recorded:.200}"
    );
    assert!(
        recorded.contains("<capture:doc1>") && recorded.contains("${doc1}"),
        "{recorded}"
    );
    for _ in 0..2 {
        let run = replay(tmp.path(), &[out.as_os_str()]);
        assert!(run.status.success(), "{}", stdout(&run));
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "session.jsonl")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_session_with_hostile_lines_and_syntax_in_its_text_records_and_replays_as_it_is() {
    use serde_json::json;
    let tmp = TempDir::new("record-hostile");
    let out = tmp.path().join("session.jsonl");
    let mut c = Recorder::initialized(tmp.path(), &out);
    // Text that reads as fixture syntax: a `${...}`, an escaped `$${`, and
    // strings that are wildcards, sent and echoed back.
    let content = "Add ${HOME}/bin and $${PATH} to <capture:x>, <any> and <string>.";
    let doc = c.tool(
        "alayasiki_ingest",
        json!({"content": content, "idempotency_key": "<any>"}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    let read = c.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc}")}),
    );
    assert!(read.to_string().contains("${HOME}"), "{read}");
    // An id right after a `$`, and metadata that reads as pattern syntax,
    // echoed back by a query.
    c.tool(
        "alayasiki_ingest",
        json!({"content": "The tide table is pinned by the harbour door.", "idempotency_key": "tide",
               "metadata": {"shape": {"$json": 1}, "kind": {"$literal": "${HOME}"}}}),
    );
    let q = c.tool(
        "alayasiki_query",
        json!({"query": format!("tide table US${doc}"), "mode": "evidence"}),
    );
    assert_eq!(q["query"], format!("tide table US${doc}"), "{q}");
    let bare = c.raw(b"42");
    assert!(bare["error"].is_object(), "{bare}");
    let ping = c.raw(br#"{"jsonrpc":"2.0","id":"<capture:y>","method":"ping"}"#);
    assert_eq!(ping["id"], "<capture:y>");
    // A line that is not UTF-8, and one over MAX_FRAME_BYTES (8 MiB): the
    // server answers both with an error and goes on.
    let bad = c.raw(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"\xff\"}");
    assert_eq!(bad["error"]["code"], -32700, "{bad}");
    let big = c.raw(&vec![b'a'; 8 * 1024 * 1024 + 5]);
    assert_eq!(big["error"]["code"], -32600, "{big}");
    c.request("ping", json!({}));
    c.finish();
    let recorded = std::fs::read_to_string(&out).unwrap();
    for want in [
        "$${HOME}",
        "$$${PATH}",
        r#"{"$literal":"<capture:y>"}"#,
        r#""send_bytes":"#,
        r#"{"send_oversized":8388613}"#,
        r#"{"send_raw":"42"}"#,
        r#"{"$literal":{"$json":1}}"#,
        "US$doc_",
    ] {
        assert!(recorded.contains(want), "want {want} in {recorded}");
    }
    let run = replay(tmp.path(), &[out.as_os_str()]);
    assert!(run.status.success(), "{}", stdout(&run));
}

#[test]
fn a_capture_multiplied_past_max_frame_bytes_fails_its_step_without_building_the_message() {
    let tmp = TempDir::new("replay-amplify");
    // A 1 MiB capture used 10,000 times would make a 10 GiB message.
    let long = "y".repeat(1024 * 1024);
    let echo = format!(r#"{{"send": {{"jsonrpc": "2.0", "id": "{long}", "method": "ping"}}}}"#);
    let capture = r#"{"expect": {"jsonrpc": "2.0", "id": "<capture:y>", "result": {}}}"#;
    let uses = "${y}".repeat(10_000);
    let amplify = format!(
        r#"{{"send": {{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {{"x": "{uses}"}}}}}}"#
    );
    let f = fixture(
        tmp.path(),
        "amplify.jsonl",
        &[
            r#"{"fixture_format": 1}"#,
            INIT,
            INIT_OK,
            &echo,
            capture,
            &amplify,
        ],
    );
    let out = replay(tmp.path(), &[f.as_os_str()]);
    let report = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("amplify.jsonl:6")
            && report.contains("with its captures put in, the message is over MAX_FRAME_BYTES"),
        "{report}"
    );
}

/// Names of the replay's temporary data directories left in `tmp`.
fn scratch_dirs(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("alayasiki-replay"))
        .collect()
}

#[test]
fn sigterm_stops_a_replay_and_deletes_its_temporary_store() {
    let tmp = TempDir::new("replay-sigterm");
    let f = fixture(
        tmp.path(),
        "waits.jsonl",
        &[
            r#"{"fixture_format": 1}"#,
            INIT,
            INIT_OK,
            r#"{"expect_silence_ms": 60000}"#,
        ],
    );
    let mut child = Command::new(BIN)
        .arg("replay")
        .arg(&f)
        .env("TMPDIR", tmp.path())
        .env_remove("ALAYASIKI_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the fixture's server to have opened its store.
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !scratch_dirs(tmp.path())
        .iter()
        .any(|d| tmp.path().join(d).join("memory.db").exists())
    {
        assert!(std::time::Instant::now() < deadline, "no store made");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let exit = wait_timeout(&mut child, Duration::from_secs(10));
    if exit.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{out:?}");
    let report = stdout(&out);
    assert!(report.contains("interrupted by SIGTERM"), "{report}");
    assert!(
        scratch_dirs(tmp.path()).is_empty(),
        "left behind: {:?}",
        scratch_dirs(tmp.path())
    );
}

#[test]
fn sigterm_stops_a_recording_writes_the_session_and_deletes_its_temporary_store() {
    let tmp = TempDir::new("record-sigterm");
    let out = tmp.path().join("session.jsonl");
    // Initialized: its server has answered, so its store is open; the
    // client then stays silent, its input open.
    let mut c = Recorder::initialized(tmp.path(), &out);
    c.tool(
        "alayasiki_ingest",
        serde_json::json!({"content": "the tide turns at noon"}),
    );
    assert!(!scratch_dirs(tmp.path()).is_empty(), "no temporary store");
    let sent = Command::new("kill")
        .args(["-TERM", &c.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let exit = wait_timeout(&mut c.child, Duration::from_secs(10));
    if exit.is_none() {
        let _ = c.child.kill();
    }
    assert_eq!(exit.and_then(|s| s.code()), Some(143), "{exit:?}");
    assert!(
        scratch_dirs(tmp.path()).is_empty(),
        "left behind: {:?}",
        scratch_dirs(tmp.path())
    );
    // The session so far is a fixture, its ingest included.
    let recorded = std::fs::read_to_string(&out).unwrap();
    assert!(
        recorded.starts_with("{\"fixture_format\":1}\n"),
        "{recorded}"
    );
    assert!(recorded.contains("the tide turns at noon"), "{recorded}");
    drop(c);
}

#[test]
fn a_seed_that_is_not_a_regular_file_is_refused_at_once() {
    let tmp = TempDir::new("replay-seed-device");
    let f = fixture(tmp.path(), "empty.jsonl", &[r#"{"fixture_format": 1}"#]);
    let fifo = tmp.path().join("seed.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for seed in [Path::new("/dev/zero"), &fifo] {
        let mut child = Command::new(BIN)
            .args(["replay", "--seed"])
            .arg(seed)
            .arg(&f)
            .env("TMPDIR", tmp.path())
            .env_remove("ALAYASIKI_DATA_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let exit = wait_timeout(&mut child, Duration::from_secs(20));
        if exit.is_none() {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{seed:?} {out:?}");
        let report = stdout(&out);
        assert!(report.contains("not a regular file"), "{seed:?}: {report}");
        assert!(scratch_dirs(tmp.path()).is_empty(), "{seed:?}");
    }
}
