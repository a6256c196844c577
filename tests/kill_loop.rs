//! Bounded `kill -9` loops through both real binaries (issue 21): start,
//! ingest a burst (some with `wait: false`, some with `wait: true`, some
//! with idempotency keys that a client re-sends after a crash), kill at a
//! random moment, start again. After the last kill one clean start must
//! show every acknowledged document (its reply was received) searchable,
//! exactly once, nothing failed or pending, and SQLite's integrity check
//! must pass on the real file.
//!
//! `ALAYASIKI_KILL_ITERATIONS` (default [`ITERATIONS`]) and
//! `ALAYASIKI_KILL_SEED` (printed by every run) replay a loop;
//! `scripts/fault_long.py` runs long ones.

mod common;
mod http_common;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Kills per loop in CI.
const ITERATIONS: usize = 40;
/// A kill lands this long after the server is ready, at most.
const MAX_KILL_AFTER_MS: u64 = 300;
/// Requests a client keeps outstanding.
const WINDOW: usize = 4;
/// How long the clean start may take to index the backlog.
const SETTLE: Duration = Duration::from_secs(120);

/// A small deterministic generator (xorshift64*), so a failing seed can be
/// replayed.
struct Rng(u64);

impl Rng {
    fn from_env() -> Rng {
        let seed = std::env::var("ALAYASIKI_KILL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("kill loop seed: ALAYASIKI_KILL_SEED={seed}");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn iterations() -> usize {
    std::env::var("ALAYASIKI_KILL_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(ITERATIONS)
}

/// One ingest request of the loop: a unique marker in its text.
#[derive(Clone)]
struct Planned {
    marker: String,
    args: Value,
}

/// Plans request `n` of iteration `iter`: every fifth is large (so kills
/// land mid-backlog), half wait, a third carry an idempotency key.
fn plan(rng: &mut Rng, iter: usize, n: usize) -> Planned {
    let marker = format!("kl{iter}x{n}q");
    let mut content = format!("Kill loop note {iter}-{n}: the ferry log carries marker {marker}.");
    if rng.below(5) == 0 {
        content.push_str(&" The harbour master checks the moorings at every tide.".repeat(400));
    }
    let mut args = json!({"content": content, "wait": rng.below(2) == 0});
    if rng.below(3) == 0 {
        args["idempotency_key"] = json!(format!("key-{marker}"));
    }
    Planned { marker, args }
}

/// What the loop learnt: marker → the document id its acknowledgement
/// named.
type Acknowledged = BTreeMap<String, String>;

fn acknowledge(acked: &mut Acknowledged, marker: &str, reply: &Value) {
    let id = reply["document_id"]
        .as_str()
        .unwrap_or_else(|| panic!("acknowledgement without id: {reply}"));
    if let Some(earlier) = acked.insert(marker.to_string(), id.to_string()) {
        assert_eq!(earlier, id, "{marker} acknowledged as two documents");
    }
}

fn integrity_ok(dir: &Path) {
    let conn = rusqlite::Connection::open(dir.join("memory.db")).unwrap();
    let verdict: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "ok", "integrity check");
}

/// Checks every acknowledged marker finds exactly its document.
fn check_exactly_once(acked: &Acknowledged, mut query: impl FnMut(&str) -> Value) {
    for (marker, id) in acked {
        let q = query(marker);
        let mut ids: Vec<&str> = q["evidence"]
            .as_array()
            .unwrap_or_else(|| panic!("query for {marker} failed: {q}"))
            .iter()
            .map(|e| e["document_id"].as_str().unwrap())
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids, [id.as_str()], "acknowledged {marker} after the loop");
    }
}

// ---------------------------------------------------------------- stdio

/// A bare stdio client that tolerates the server dying under it.
struct StdioClient {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl StdioClient {
    fn start(dir: &Path) -> StdioClient {
        let mut child = Command::new(common::BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg("--data-dir")
            .arg(dir)
            .env("ALAYASIKI_LOG", "error")
            .env_remove("ALAYASIKI_DATA_DIR")
            .env_remove("ALAYASIKI_MCP_TENANT")
            .env_remove("ALAYASIKI_MCP_SUBJECT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioClient {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// False once the server is gone.
    fn send(&mut self, msg: &Value) -> bool {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        self.stdin
            .as_mut()
            .is_some_and(|s| s.write_all(&line).and_then(|_| s.flush()).is_ok())
    }
}

/// One iteration: requests left unanswered by the last kill first (with
/// their keys, as a client retries), then new ones until the kill.
fn stdio_iteration(
    dir: &Path,
    rng: &mut Rng,
    iter: usize,
    retry: Vec<Planned>,
    acked: &mut Acknowledged,
) -> Vec<Planned> {
    let mut c = StdioClient::start(dir);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "kill-loop", "version": "1"}}});
    assert!(c.send(&init));
    let reply = c.lines.recv_timeout(common::TIMEOUT).expect("initialize");
    assert!(reply.contains("protocolVersion"), "{reply}");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let pid = c.child.id();
    let after = Duration::from_millis(rng.below(MAX_KILL_AFTER_MS) + 1);
    let killer = std::thread::spawn(move || {
        std::thread::sleep(after);
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    });
    let mut queue: std::collections::VecDeque<Planned> = retry.into();
    let mut outstanding: BTreeMap<u64, Planned> = BTreeMap::new();
    let mut next_id = 1u64;
    let mut n = 0;
    loop {
        while outstanding.len() < WINDOW {
            let p = queue.pop_front().unwrap_or_else(|| {
                n += 1;
                plan(rng, iter, n)
            });
            let msg = json!({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                             "params": {"name": "alayasiki_ingest", "arguments": p.args}});
            outstanding.insert(next_id, p);
            next_id += 1;
            if !c.send(&msg) {
                break;
            }
        }
        match c.lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                // A line cut short by the kill is no acknowledgement.
                let Ok(reply) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let Some(p) = reply["id"].as_u64().and_then(|id| outstanding.remove(&id)) else {
                    continue;
                };
                let result = &reply["result"];
                assert_ne!(result["isError"], true, "ingest refused: {reply}");
                let text = result["content"][0]["text"].as_str().unwrap();
                let receipt: Value = serde_json::from_str(text).unwrap();
                assert_ne!(receipt["state"], "failed", "{receipt}");
                acknowledge(acked, &p.marker, &receipt);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    killer.join().unwrap();
    let _ = c.child.wait();
    // Unanswered requests with a key are retried next time; those
    // without are simply not acknowledged (stored or not, at most once).
    outstanding
        .into_values()
        .filter(|p| p.args.get("idempotency_key").is_some())
        .collect()
}

#[test]
fn stdio_kill_loop_keeps_every_acknowledged_document_exactly_once() {
    let dir = common::TempDir::new("killloop-stdio");
    let mut rng = Rng::from_env();
    let mut acked = Acknowledged::new();
    let mut retry = Vec::new();
    let started = Instant::now();
    let kills = iterations();
    for iter in 0..kills {
        retry = stdio_iteration(dir.path(), &mut rng, iter, retry, &mut acked);
    }
    eprintln!(
        "stdio kill loop: {kills} kills, {} acknowledged, in {:?}",
        acked.len(),
        started.elapsed()
    );
    assert!(!acked.is_empty(), "nothing was acknowledged");
    let mut s = common::Server::ready(dir.path());
    let deadline = Instant::now() + SETTLE;
    let st = loop {
        let st = s.ok("alayasiki_status", json!({}));
        if st["jobs"]["pending"] == 0 {
            break st;
        }
        assert!(Instant::now() < deadline, "never settled: {st}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    check_exactly_once(&acked, |marker| {
        s.ok(
            "alayasiki_query",
            json!({"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]}),
        )
    });
    let (status, _) = s.close();
    assert!(status.success());
    integrity_ok(dir.path());
}

// ----------------------------------------------------------------- HTTP

/// One request on a fresh connection; `None` if the server was gone
/// before the whole reply arrived.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> Option<(u16, Value)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(common::TIMEOUT)).ok()?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok()?;
    let text = String::from_utf8(reply).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    let length: Option<usize> = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse().ok())
            .flatten()
    });
    // A reply cut by the kill is not an acknowledgement.
    if length.is_some_and(|n| body.len() < n) {
        return None;
    }
    Some((status, serde_json::from_str(body).ok()?))
}

#[test]
fn http_kill_loop_keeps_every_acknowledged_document_exactly_once() {
    let dir = http_common::TempDir::new("killloop-http");
    let token = http_common::admin("agent", "acme");
    let mut rng = Rng::from_env();
    let acked = Arc::new(Mutex::new(Acknowledged::new()));
    let mut retry: Vec<Planned> = Vec::new();
    let started = Instant::now();
    let kills = iterations();
    for iter in 0..kills {
        let mut api = http_common::Api::start(dir.path(), &[]);
        let addr = api.addr;
        let killed = Arc::new(AtomicBool::new(false));
        let plans: Vec<Vec<Planned>> = (0..WINDOW)
            .map(|client| {
                let mut mine: Vec<Planned> =
                    retry.iter().skip(client).step_by(WINDOW).cloned().collect();
                mine.extend((0..400).map(|n| plan(&mut rng, iter, client * 1000 + n)));
                mine
            })
            .collect();
        let clients: Vec<_> = plans
            .into_iter()
            .map(|mine| {
                let (acked, killed, token) = (acked.clone(), killed.clone(), token.clone());
                std::thread::spawn(move || {
                    let mut unanswered = Vec::new();
                    for p in mine {
                        if killed.load(Ordering::SeqCst) {
                            unanswered.push(p);
                            continue;
                        }
                        match http(addr, "POST", "/v1/ingest", &token, Some(&p.args)) {
                            Some((200, receipt)) => {
                                assert_ne!(receipt["state"], "failed", "{receipt}");
                                acknowledge(&mut acked.lock().unwrap(), &p.marker, &receipt);
                            }
                            Some((status, reply)) if status < 500 && status != 429 => {
                                panic!("ingest refused ({status}): {reply}")
                            }
                            _ => unanswered.push(p),
                        }
                    }
                    unanswered
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.below(MAX_KILL_AFTER_MS) + 1));
        api.child.kill().unwrap();
        let _ = api.child.wait();
        killed.store(true, Ordering::SeqCst);
        retry = clients
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .filter(|p| p.args.get("idempotency_key").is_some())
            // Far more are planned than a run sends: retry only a few.
            .take(2 * WINDOW)
            .collect();
    }
    let acked = acked.lock().unwrap().clone();
    eprintln!(
        "HTTP kill loop: {kills} kills, {} acknowledged, in {:?}",
        acked.len(),
        started.elapsed()
    );
    assert!(!acked.is_empty(), "nothing was acknowledged");
    let mut api = http_common::Api::start(dir.path(), &[]);
    let deadline = Instant::now() + SETTLE;
    let st = loop {
        let (_, st) = http(api.addr, "GET", "/v1/status", &token, None).expect("status");
        if st["jobs"]["pending"] == 0 {
            break st;
        }
        assert!(Instant::now() < deadline, "never settled: {st}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    let addr = api.addr;
    check_exactly_once(&acked, |marker| {
        let body = json!({"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]});
        http(addr, "POST", "/v1/query", &token, Some(&body))
            .expect("query")
            .1
    });
    api.terminate();
    assert!(api.wait(common::TIMEOUT).is_some_and(|s| s.success()));
    integrity_ok(dir.path());
}
