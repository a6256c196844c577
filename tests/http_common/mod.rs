//! Test harness for `alayasiki-api`: the real binary on a loopback port,
//! a minimal HTTP/1.1 client over raw TCP (so tests control every header,
//! including lying ones), an SSE client, and tokens minted with jwt-simple.
#![allow(dead_code)]

pub mod held_embedder;

use jwt_simple::prelude::*;
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

pub const API_BIN: &str = env!("CARGO_BIN_EXE_alayasiki-api");
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The HS256 secret every test server is started with unless told otherwise.
pub const SECRET: &[u8] = b"test-secret-0123456789abcdef-0123456789";
pub const ISSUER: &str = "https://issuer.test";
pub const AUDIENCE: &str = "alayasiki-test";

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "alayasiki-http-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
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

/// A running `alayasiki-api`.
pub struct Api {
    pub child: Child,
    pub addr: SocketAddr,
    /// What it has written to stderr since it started listening.
    pub stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// The environment of a default test server: HS256 with issuer and
/// audience checks, a generous rate limit.
pub fn default_env() -> Vec<(String, String)> {
    [
        ("ALAYASIKI_JWT_SECRET", std::str::from_utf8(SECRET).unwrap()),
        ("ALAYASIKI_JWT_ISSUER", ISSUER),
        ("ALAYASIKI_JWT_AUDIENCE", AUDIENCE),
        ("ALAYASIKI_API_RATE", "10000"),
        ("ALAYASIKI_API_BURST", "10000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

impl Api {
    /// Starts the server on `dir` with the default environment plus `extra`
    /// (an empty value removes a variable).
    pub fn start(dir: &Path, extra: &[(&str, &str)]) -> Api {
        Api::try_start(dir, extra).unwrap_or_else(|(status, err)| {
            panic!("alayasiki-api did not start ({status:?}): {err}")
        })
    }

    /// Starts the server; `Err` holds its exit status and stderr if it
    /// exited instead of listening.
    pub fn try_start(
        dir: &Path,
        extra: &[(&str, &str)],
    ) -> Result<Api, (Option<ExitStatus>, String)> {
        Api::try_start_limited(dir, extra, None)
    }

    /// Starts the server with its soft and hard limits on open descriptors
    /// (`RLIMIT_NOFILE`) set to `descriptors` (unix), so that exhausting
    /// them shows quickly.
    pub fn start_with_descriptors(dir: &Path, extra: &[(&str, &str)], descriptors: u64) -> Api {
        Api::try_start_limited(dir, extra, Some(descriptors)).unwrap_or_else(|(status, err)| {
            panic!("alayasiki-api did not start ({status:?}): {err}")
        })
    }

    fn try_start_limited(
        dir: &Path,
        extra: &[(&str, &str)],
        descriptors: Option<u64>,
    ) -> Result<Api, (Option<ExitStatus>, String)> {
        let mut cmd = Command::new(API_BIN);
        if let Some(n) = descriptors {
            limit_descriptors(&mut cmd, n);
        }
        cmd.arg("--bind")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(dir)
            .env("ALAYASIKI_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for var in [
            "ALAYASIKI_DATA_DIR",
            "ALAYASIKI_JWT_SECRET",
            "ALAYASIKI_JWT_SECRET_FILE",
            "ALAYASIKI_JWT_PUBLIC_KEY_FILE",
            "ALAYASIKI_JWT_ALGORITHM",
            "ALAYASIKI_JWT_ISSUER",
            "ALAYASIKI_JWT_AUDIENCE",
            "ALAYASIKI_MCP_ALLOWED_ORIGINS",
            "ALAYASIKI_API_ALLOWED_HOSTS",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in default_env() {
            cmd.env(k, v);
        }
        for (k, v) in extra {
            if v.is_empty() {
                cmd.env_remove(k);
            } else {
                cmd.env(k, v);
            }
        }
        let mut child = cmd.spawn().expect("spawn alayasiki-api");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[api] {line}");
                let _ = tx.send(line);
            }
        });
        let start = Instant::now();
        let mut seen = String::new();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    if let Some(addr) = line.strip_prefix("alayasiki-api: listening on http://") {
                        let addr = addr.trim().parse().expect("listening address");
                        // Keep draining stderr so the server never blocks on it.
                        let stderr = std::sync::Arc::<std::sync::Mutex<Vec<String>>>::default();
                        let kept = stderr.clone();
                        std::thread::spawn(move || {
                            for line in rx {
                                kept.lock().unwrap().push(line);
                            }
                        });
                        return Ok(Api {
                            child,
                            addr,
                            stderr,
                        });
                    }
                    seen.push_str(&line);
                    seen.push('\n');
                }
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        // Let the reader thread pass on the last lines.
                        std::thread::sleep(Duration::from_millis(100));
                        while let Ok(line) = rx.try_recv() {
                            seen.push_str(&line);
                            seen.push('\n');
                        }
                        return Err((Some(status), seen));
                    }
                    if start.elapsed() > TIMEOUT {
                        let _ = child.kill();
                        return Err((None, seen));
                    }
                }
            }
        }
    }

    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Sends SIGTERM (unix).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    /// Sends `signal` (`STOP`, `CONT`, ...; unix).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    /// Waits for the process to exit.
    pub fn wait(&mut self, d: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            if start.elapsed() > d {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A request with a token; JSON body when given.
    pub fn call(&self, method: &str, path: &str, token: &str, body: Option<&Value>) -> Reply {
        let mut headers = vec![("Authorization".to_string(), format!("Bearer {token}"))];
        let bytes = body.map(|b| {
            headers.push(("Content-Type".into(), "application/json".into()));
            b.to_string().into_bytes()
        });
        request(self.addr, method, path, &headers, bytes.as_deref())
    }
}

/// Sets the child's `RLIMIT_NOFILE` to `n` before it runs (Linux: the
/// resource number and `struct rlimit` below are Linux's).
#[cfg(target_os = "linux")]
fn limit_descriptors(cmd: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    #[repr(C)]
    struct Rlimit {
        cur: std::os::raw::c_ulong,
        max: std::os::raw::c_ulong,
    }
    const RLIMIT_NOFILE: std::os::raw::c_int = 7;
    extern "C" {
        fn setrlimit(resource: std::os::raw::c_int, rlim: *const Rlimit) -> std::os::raw::c_int;
    }
    let limit = Rlimit {
        cur: n as std::os::raw::c_ulong,
        max: n as std::os::raw::c_ulong,
    };
    // SAFETY: setrlimit(2) is async-signal-safe, so it may run between
    // fork and exec; it only reads `limit`, which the closure owns.
    unsafe {
        cmd.pre_exec(move || {
            if setrlimit(RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn limit_descriptors(_cmd: &mut Command, _n: u64) {}

/// What a process holds: threads, open descriptors, resident memory (Linux:
/// `/proc/PID/task`, `/proc/PID/fd`, `VmRSS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    pub threads: usize,
    pub descriptors: usize,
    pub rss_kib: usize,
}

impl Footprint {
    #[cfg(target_os = "linux")]
    pub fn of(pid: u32) -> Footprint {
        let count = |what: &str| {
            std::fs::read_dir(format!("/proc/{pid}/{what}"))
                .map(|d| d.count())
                .unwrap_or(0)
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        Footprint {
            threads: count("task"),
            descriptors: count("fd"),
            rss_kib,
        }
    }

    /// Whether this is back within `threads` threads, `descriptors`
    /// descriptors and `rss_kib` KiB of `idle`.
    pub fn within(
        &self,
        idle: &Footprint,
        threads: usize,
        descriptors: usize,
        rss_kib: usize,
    ) -> bool {
        self.threads <= idle.threads + threads
            && self.descriptors <= idle.descriptors + descriptors
            && self.rss_kib <= idle.rss_kib + rss_kib
    }
}

impl Api {
    /// Threads of the server named `name` (Linux), e.g. its body readers.
    #[cfg(target_os = "linux")]
    pub fn threads_named(&self, name: &str) -> usize {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else {
            return 0;
        };
        tasks
            .flatten()
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
            })
            .count()
    }

    /// The server's footprint now.
    #[cfg(target_os = "linux")]
    pub fn footprint(&self) -> Footprint {
        Footprint::of(self.child.id())
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().map(|s| s.is_none()).unwrap_or(false)
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The stable error code of a JSON error body.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`).
/// `Host` is added unless given.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        {
            head.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(b) = body {
        // The server may answer (and close) before reading everything.
        let _ = stream.write_all(b);
    }
    read_reply(&mut BufReader::new(stream))
}

/// Reads one response: status, headers, and a body framed by
/// `Content-Length`, chunked encoding, or the end of the connection.
pub fn read_reply<R: BufRead>(r: &mut R) -> Reply {
    let (status, headers) = read_head(r);
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if get("Transfer-Encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        while let Some(chunk) = read_chunk(r) {
            body.extend_from_slice(&chunk);
        }
    } else if let Some(n) = get("Content-Length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body).unwrap();
    } else {
        let _ = r.read_to_end(&mut body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

pub fn read_head<R: BufRead>(r: &mut R) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    r.read_line(&mut line).expect("status line");
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).expect("header line");
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    (status, headers)
}

/// One chunk of a chunked body; `None` at the last (empty) chunk or EOF.
pub fn read_chunk<R: BufRead>(r: &mut R) -> Option<Vec<u8>> {
    let mut size = String::new();
    if r.read_line(&mut size).ok()? == 0 {
        return None;
    }
    let n = usize::from_str_radix(size.trim(), 16).ok()?;
    if n == 0 {
        let mut end = String::new();
        let _ = r.read_line(&mut end);
        return None;
    }
    let mut chunk = vec![0; n + 2];
    r.read_exact(&mut chunk).ok()?;
    chunk.truncate(n);
    Some(chunk)
}

/// Claims for a token: `sub`, `tenant`, `roles`, `scope`, with issuer and
/// audience of the test servers, valid for five minutes.
pub fn claims(
    sub: &str,
    tenant: &str,
    roles: &[&str],
    scope: &str,
) -> JWTClaims<Map<String, Value>> {
    let mut custom = Map::new();
    custom.insert("tenant".into(), json!(tenant));
    custom.insert("roles".into(), json!(roles));
    if !scope.is_empty() {
        custom.insert("scope".into(), json!(scope));
    }
    Claims::with_custom_claims(custom, jwt_simple::prelude::Duration::from_mins(5))
        .with_subject(sub)
        .with_issuer(ISSUER)
        .with_audience(AUDIENCE)
}

/// An HS256 token signed with [`SECRET`].
pub fn sign(claims: JWTClaims<Map<String, Value>>) -> String {
    HS256Key::from_bytes(SECRET).authenticate(claims).unwrap()
}

/// An admin token for `sub` in `tenant`.
pub fn admin(sub: &str, tenant: &str) -> String {
    sign(claims(sub, tenant, &["admin"], ""))
}

/// An MCP client over SSE: the stream is read by a thread into a channel.
pub struct Sse {
    pub addr: SocketAddr,
    pub token: String,
    /// The `endpoint` event's data.
    pub endpoint: String,
    events: Receiver<(String, String)>,
    stream: TcpStream,
    next_id: i64,
}

impl Sse {
    /// Opens a stream; panics unless the server answers 200.
    pub fn open(addr: SocketAddr, token: &str) -> Sse {
        Sse::try_open(addr, token).unwrap_or_else(|r| panic!("GET /mcp/sse: {r:?}"))
    }

    /// Opens a stream, or returns the refusal.
    pub fn try_open(addr: SocketAddr, token: &str) -> Result<Sse, Reply> {
        let stream = TcpStream::connect(addr).expect("connect");
        let mut writer = stream.try_clone().unwrap();
        write!(
            writer,
            "GET /mcp/sse HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
             Authorization: Bearer {token}\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let (status, headers) = read_head(&mut reader);
        if status != 200 {
            let n: usize = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; n];
            let _ = reader.read_exact(&mut body);
            return Err(Reply {
                status,
                headers,
                body,
            });
        }
        let content_type = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone());
        assert_eq!(content_type.as_deref(), Some("text/event-stream"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut pending = String::new();
            while let Some(chunk) = read_chunk(&mut reader) {
                pending.push_str(&String::from_utf8(chunk).expect("UTF-8 events"));
                while let Some(end) = pending.find("\n\n") {
                    let block: String = pending.drain(..end + 2).collect();
                    if block.starts_with(':') {
                        continue; // a comment (keep-alive)
                    }
                    let mut event = "message".to_string();
                    let mut data = String::new();
                    for line in block.lines() {
                        if let Some(e) = line.strip_prefix("event: ") {
                            event = e.to_string();
                        } else if let Some(d) = line.strip_prefix("data: ") {
                            data.push_str(d);
                        }
                    }
                    if tx.send((event, data)).is_err() {
                        return;
                    }
                }
            }
        });
        let mut sse = Sse {
            addr,
            token: token.to_string(),
            endpoint: String::new(),
            events: rx,
            stream,
            next_id: 0,
        };
        let (event, data) = sse.next_event(TIMEOUT).expect("endpoint event");
        assert_eq!(event, "endpoint");
        sse.endpoint = data;
        Ok(sse)
    }

    pub fn next_event(&self, d: Duration) -> Option<(String, String)> {
        self.events.recv_timeout(d).ok()
    }

    /// The next `message` event as JSON.
    pub fn next_message(&self, d: Duration) -> Option<Value> {
        let (event, data) = self.next_event(d)?;
        assert_eq!(event, "message");
        Some(serde_json::from_str(&data).expect("message data is JSON"))
    }

    /// POSTs one message to the session with this stream's token.
    pub fn post(&self, message: &Value) -> Reply {
        self.post_as(&self.token, message)
    }

    pub fn post_as(&self, token: &str, message: &Value) -> Reply {
        let headers = vec![
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        request(
            self.addr,
            "POST",
            &self.endpoint,
            &headers,
            Some(message.to_string().as_bytes()),
        )
    }

    /// Sends a request and waits for its reply (other messages are not
    /// expected meanwhile).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let r = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        let reply = self.next_message(TIMEOUT).expect("a reply on the stream");
        assert_eq!(reply["id"], json!(id), "{reply}");
        reply
    }

    pub fn initialize(&mut self) {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "http-tests", "version": "1"}}),
        );
        assert_eq!(r["result"]["protocolVersion"], "2024-11-05");
        let n = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(n.status, 202);
    }

    /// Calls a tool: (isError, the JSON of its text block or the text).
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &reply["result"];
        assert!(result.is_object(), "tools/call failed: {reply}");
        let text = result["content"][0]["text"].as_str().unwrap().to_string();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (result["isError"].as_bool().unwrap_or(false), value)
    }

    /// Closes the connection.
    pub fn close(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
