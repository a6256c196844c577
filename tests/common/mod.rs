//! Test harness: the real `alayasiki-mcp` binary over real pipes.
//!
//! [`Server::start`] spawns the binary on a fresh data directory; a thread
//! forwards each stdout line into a channel so tests can wait with a
//! timeout, and every line is checked to be a JSON-RPC message (stdout
//! purity is asserted on every test, not just one).
#![allow(dead_code)]

pub mod owner;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_alayasiki-mcp");
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "alayasiki-test-{tag}-{}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    /// What it wrote to stderr so far, when captured ([`Server::capturing`]).
    stderr: Option<Arc<Mutex<String>>>,
}

impl Server {
    /// Spawns the binary on `dir` with extra environment variables.
    pub fn start_with(dir: &Path, env: &[(&str, &str)]) -> Server {
        Server::spawn(Path::new(BIN), dir, &[], env, false)
    }

    /// [`Server::start_with`] running `program` instead of this build's
    /// binary (another version of it, say).
    pub fn start_program(program: &Path, dir: &Path, env: &[(&str, &str)]) -> Server {
        Server::spawn(program, dir, &[], env, false)
    }

    /// Spawns the binary on `dir` with extra arguments and environment
    /// variables, keeping what it writes to stderr ([`Server::stderr`]).
    pub fn capturing(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn(Path::new(BIN), dir, args, env, true)
    }

    fn spawn(
        program: &Path,
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        capture: bool,
    ) -> Server {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .arg("--data-dir")
            .arg(dir)
            .env("ALAYASIKI_LOG", "warn")
            // These tests own their store: the server is the process they
            // start, kill and wait for. (`tests/local_owner.rs` reaches a
            // shared owner instead, giving this variable an empty value.)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .env_remove("ALAYASIKI_DATA_DIR")
            .env_remove("ALAYASIKI_MCP_TENANT")
            .env_remove("ALAYASIKI_MCP_SUBJECT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if capture {
                Stdio::piped()
            } else {
                Stdio::inherit()
            });
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn alayasiki-mcp");
        let stderr = child.stderr.take().map(|pipe| {
            let text = Arc::new(Mutex::new(String::new()));
            let sink = text.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    eprintln!("{line}");
                    let mut t = sink.lock().unwrap();
                    t.push_str(&line);
                    t.push('\n');
                }
            });
            text
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                assert_json_rpc(&line);
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 1000,
            stderr,
        }
    }

    /// What the server wrote to stderr so far (started with
    /// [`Server::capturing`]).
    pub fn stderr(&self) -> String {
        let text = self.stderr.as_ref().expect("stderr is captured");
        text.lock().unwrap().clone()
    }

    pub fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[])
    }

    /// Spawns and initializes.
    pub fn ready(dir: &Path) -> Server {
        let mut s = Server::start(dir);
        s.initialize();
        s
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next stdout message, or panic after `TIMEOUT`.
    pub fn recv(&mut self) -> Value {
        self.recv_within(TIMEOUT)
            .expect("no reply from server within the timeout")
    }

    pub fn recv_within(&mut self, d: Duration) -> Option<Value> {
        match self.lines.recv_timeout(d) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap()),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Sends a request and returns its reply (replies to other ids are
    /// not expected here: tests using this send one request at a time).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.recv();
        assert_eq!(reply["id"], json!(id), "reply to another request: {reply}");
        reply
    }

    pub fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "tests", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// Calls a tool; returns (isError, parsed JSON of the text block, or
    /// the text itself when it is not JSON).
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &reply["result"];
        assert!(
            result.is_object(),
            "tools/call failed at protocol level: {reply}"
        );
        let text = result["content"][0]["text"]
            .as_str()
            .expect("text block")
            .to_string();
        let is_error = result["isError"].as_bool().unwrap_or(false);
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (is_error, value)
    }

    /// Calls a tool that must succeed.
    pub fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (is_error, value) = self.call(tool, args);
        assert!(!is_error, "{tool} failed: {value}");
        value
    }

    pub fn ingest(&mut self, content: &str) -> String {
        let r = self.ok("alayasiki_ingest", json!({"content": content}));
        assert_eq!(r["state"], "ready", "{r}");
        r["document_id"].as_str().unwrap().to_string()
    }

    pub fn query(&mut self, q: &str) -> Value {
        self.ok("alayasiki_query", json!({"query": q, "mode": "evidence"}))
    }

    /// Closes stdin and waits for exit; returns the status and how long
    /// the exit took.
    pub fn close(mut self) -> (ExitStatus, Duration) {
        drop(self.stdin.take());
        let start = Instant::now();
        let status = wait_timeout(&mut self.child, TIMEOUT).expect("server did not exit after EOF");
        (status, start.elapsed())
    }

    /// `kill -9`.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn wait_timeout(child: &mut Child, d: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if start.elapsed() > d {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every stdout line must be one JSON-RPC 2.0 message (or a batch of them).
/// The `source` of each evidence item of a query's result, in rank order
/// ("" for a document without one).
pub fn evidence_sources(q: &Value) -> Vec<String> {
    q["evidence"]
        .as_array()
        .unwrap_or_else(|| panic!("no evidence: {q}"))
        .iter()
        .map(|e| e["source"].as_str().unwrap_or("").to_string())
        .collect()
}

pub fn assert_json_rpc(line: &str) {
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.200}"));
    let check = |m: &Value| {
        assert_eq!(m["jsonrpc"], "2.0", "not JSON-RPC: {line:.200}");
        assert!(
            m.get("result").is_some() || m.get("error").is_some() || m.get("method").is_some(),
            "not a JSON-RPC message: {line:.200}"
        );
    };
    match &v {
        Value::Array(items) => items.iter().for_each(check),
        m => check(m),
    }
}

/// Runs a subcommand of the binary on `dir` (`--data-dir` is appended) and
/// returns its output; stdin is empty. It opens the memory itself, as the
/// servers this harness starts do (tests/local_owner.rs runs commands
/// through the directory's owner).
pub fn cli(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .env_remove("ALAYASIKI_MCP_SUBJECT")
        .stdin(Stdio::null())
        .output()
        .expect("run alayasiki-mcp")
}

/// [`cli`] that must succeed; returns its stdout.
pub fn cli_ok(dir: &Path, args: &[&str]) -> String {
    let out = cli(dir, args);
    assert!(
        out.status.success(),
        "alayasiki-mcp {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 stdout")
}

/// Copies the directory tree `from` into `to` (a stored fixture, say a
/// data directory an earlier release wrote).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A file of `fixtures/`.
pub fn fixture_bytes(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Standard base64 (for File uploads in tests).
pub fn b64(bytes: &[u8]) -> String {
    alayasiki_mcp::base64::encode(bytes)
}

/// A Python that runs `imports` (the `jsonschema` package, say):
/// `ALAYASIKI_TEST_PYTHON`, which must (`scripts/test` sets it, so CI never
/// skips), else the venv `scripts/test` creates, else `python3`; `None`
/// when none does.
pub fn python_with(imports: &str) -> Option<std::path::PathBuf> {
    let works = |p: &Path| {
        Command::new(p)
            .args(["-c", imports])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Some(p) = std::env::var_os("ALAYASIKI_TEST_PYTHON") {
        let p = std::path::PathBuf::from(p);
        assert!(
            works(&p),
            "ALAYASIKI_TEST_PYTHON={} cannot run {imports:?}",
            p.display()
        );
        return Some(p);
    }
    [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/py-venv/bin/python"),
        "python3".into(),
    ]
    .into_iter()
    .find(|p| works(p))
}
