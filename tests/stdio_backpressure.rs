//! What one stdio client can make the server hold, and what it can never
//! block: a backlog of requests does not delay `ping`, memory stays flat
//! past the named bounds, a message of small numbers is refused before it
//! is parsed, and a stderr pipe nobody reads never stalls a write.

mod common;

use common::{Server, TempDir, BIN};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Peak resident memory of a process, in bytes (Linux).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

fn init_lines() -> Vec<u8> {
    let mut out = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "flood", "version": "1"}}}),
    )
    .unwrap();
    out.push(b'\n');
    out.extend(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    out.push(b'\n');
    out
}

#[test]
fn ping_is_answered_at_once_behind_a_backlog_of_20000_calls_and_memory_stays_flat() {
    const CALLS: usize = 20_000;
    let dir = TempDir::new("flood");
    let mut server = Server::start(dir.path());
    let pid = server.child.id();
    let mut burst = init_lines();
    for i in 0..CALLS {
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "alayasiki_ingest",
                       "arguments": {"content": format!("flood note {i} about the pumps")}}});
        burst.extend(serde_json::to_vec(&call).unwrap());
        burst.push(b'\n');
    }
    burst.extend(br#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#);
    burst.push(b'\n');
    let sent = Instant::now();
    server.send_raw(&burst);
    let written = sent.elapsed();
    let (mut answered, mut busy, mut ping_after) = (0usize, 0usize, None);
    while answered + busy < CALLS || ping_after.is_none() {
        let r = server.recv();
        match &r["id"] {
            Value::String(s) if s == "ping" => ping_after = Some(sent.elapsed()),
            Value::String(_) => {}
            _ if r["error"]["code"] == -32000 => busy += 1,
            _ => answered += 1,
        }
    }
    let ping_after = ping_after.unwrap();
    // The ping was read as soon as it was written and answered then, not
    // after the backlog drained.
    assert!(
        ping_after < written + Duration::from_secs(2),
        "ping answered {ping_after:?} after the burst began (burst written in {written:?})"
    );
    assert!(busy > 0, "the backlog never reached STDIO_QUEUE");
    assert!(answered >= 1024, "queued requests were served: {answered}");
    let peak = peak_rss(pid);
    assert!(peak < 300 << 20, "peak RSS {} MiB", peak >> 20);
    let status = server.ok("alayasiki_status", json!({}));
    assert_eq!(status["documents"], answered as u64, "{status}");
    server.close();
}

#[test]
fn messages_of_small_numbers_are_refused_before_they_are_parsed() {
    let dir = TempDir::new("numbers");
    let mut server = Server::ready(dir.path());
    let pid = server.child.id();
    let baseline = peak_rss(pid);
    // 40 frames of just under 8 MiB, each four million small numbers: as
    // values, about 140 MB apiece.
    let numbers = vec!["1"; 4_000_000].join(",");
    for i in 0..40 {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"alayasiki_ingest","arguments":{{"File":{{"content":[{numbers}]}}}}}}}}"#
        );
        server.send_raw(format!("{frame}\n").as_bytes());
    }
    for _ in 0..40 {
        let r = server.recv();
        let message = r["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("MAX_PARSED_MESSAGE_BYTES"),
            "not refused by its parse cost: {r}"
        );
    }
    let grew = peak_rss(pid).saturating_sub(baseline);
    assert!(grew < 120 << 20, "peak RSS grew by {} MiB", grew >> 20);
    // A file as an array of bytes within MAX_BYTE_ARRAY_ITEMS still works.
    let bytes: Vec<u8> = b"pump maintenance log".to_vec();
    let r = server.ok(
        "alayasiki_ingest",
        json!({"File": {"content": bytes, "filename": "log.txt"}}),
    );
    assert_eq!(r["state"], "ready", "{r}");
    server.close();
}

#[test]
fn a_client_that_never_reads_stderr_never_stalls_the_server() {
    let dir = TempDir::new("stderr");
    let mut child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--data-dir")
        .arg(dir.path())
        .env("ALAYASIKI_LOG", "trace")
        .env_remove("ALAYASIKI_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // A pipe held open and never read: it fills after 64 KiB.
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stderr = child.stderr.take();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(serde_json::from_str::<Value>(&line).unwrap());
        }
    });
    stdin.write_all(&init_lines()).unwrap();
    rx.recv_timeout(Duration::from_secs(30))
        .expect("initialize");
    let started = Instant::now();
    for i in 0..300 {
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "alayasiki_ingest",
                       "arguments": {"content": format!("note {i}: the valve on line {i} was replaced")}}});
        stdin
            .write_all(format!("{}\n", serde_json::to_string(&call).unwrap()).as_bytes())
            .unwrap();
        let r = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("ingest {i} stalled (stderr full?)"));
        assert_eq!(r["id"], i, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("\"ready\""), "{text}");
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    drop(stdin);
    let _ = child.wait();
}
