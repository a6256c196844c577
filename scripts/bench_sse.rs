//! Load figures for `alayasiki-api`: many concurrent MCP clients over
//! HTTP mixing queries and ingests for a fixed time, on one of its MCP
//! transports.
//!
//! ```sh
//! cargo build --release --bin alayasiki-api
//! cargo run --release --example bench_sse -- [--clients 128] [--seconds 30] \
//!     [--ingest-percent 20] [--preload 500] [--backoff-ms 100] \
//!     [--transport sse|streamable|stateless] [--binary target/release/alayasiki-api]
//! ```
//!
//! Each client is its own subject, in tenants of 32 clients (the SSE
//! transport's per-tenant stream cap). `--transport`: `sse` (default) is
//! the legacy HTTP+SSE transport: each client opens its own SSE stream and
//! initializes; `streamable` is Streamable HTTP at `/mcp` with a session
//! (`initialize` at 2025-11-25, then `Mcp-Session-Id` on every POST);
//! `stateless` is Streamable HTTP at revision 2026-07-28 (per-request
//! `_meta` and headers, no session). Each client then runs closed-loop:
//! one request at a time, an ingest
//! with the given probability (a unique idempotency key) or else a query,
//! latency measured from the POST to the reply (the event on the stream,
//! or the POST's response for Streamable HTTP). A POST
//! answered 429 is counted and retried after `--backoff-ms` plus jitter. Afterwards the
//! server gets SIGTERM, is restarted on the same directory, and every
//! acknowledged ingest must be there exactly once: each document id
//! readable, and the document count equal to the preload plus the
//! acknowledged ingests.
//!
//! Prints throughput, p50/p99 latency per operation, the 429 count and the
//! server's peak RSS (Linux: VmHWM). Loopback only; bounded in time.

use jwt_simple::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

const SECRET: &str = "bench-secret-0123456789abcdef-0123456789";
/// Clients are spread over tenants of at most this many, so that the SSE
/// transport's per-tenant stream cap (MAX_SSE_CONNECTIONS_PER_TENANT)
/// admits them all; the other transports get the same spread.
const CLIENTS_PER_TENANT: usize = 32;
const REPLY_TIMEOUT: StdDuration = StdDuration::from_secs(120);

struct Options {
    binary: String,
    clients: usize,
    seconds: u64,
    ingest_percent: u64,
    preload: usize,
    /// Pause after a 429 before the next attempt (plus up to as much again
    /// of jitter).
    backoff_ms: u64,
    transport: Transport,
}

#[derive(Clone, Copy, PartialEq)]
enum Transport {
    Sse,
    Streamable,
    Stateless,
}

fn options() -> Options {
    let mut o = Options {
        binary: "target/release/alayasiki-api".into(),
        clients: 128,
        seconds: 30,
        ingest_percent: 20,
        preload: 500,
        backoff_ms: 100,
        transport: Transport::Sse,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--binary" => o.binary = value,
            "--clients" => o.clients = value.parse().expect("--clients N"),
            "--seconds" => o.seconds = value.parse().expect("--seconds N"),
            "--ingest-percent" => o.ingest_percent = value.parse().expect("--ingest-percent N"),
            "--preload" => o.preload = value.parse().expect("--preload N"),
            "--backoff-ms" => o.backoff_ms = value.parse().expect("--backoff-ms N"),
            "--transport" => {
                o.transport = match value.as_str() {
                    "sse" => Transport::Sse,
                    "streamable" => Transport::Streamable,
                    "stateless" => Transport::Stateless,
                    other => panic!("--transport sse|streamable|stateless, not {other}"),
                }
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    o
}

fn tenant_of(client: usize) -> String {
    format!("bench-{}", client / CLIENTS_PER_TENANT)
}

fn token(tenant: &str, subject: &str) -> String {
    let mut custom = serde_json::Map::new();
    custom.insert("tenant".into(), json!(tenant));
    custom.insert("roles".into(), json!(["admin"]));
    let claims = Claims::with_custom_claims(custom, Duration::from_hours(2)).with_subject(subject);
    HS256Key::from_bytes(SECRET.as_bytes())
        .authenticate(claims)
        .unwrap()
}

fn start(binary: &str, dir: &std::path::Path) -> (Child, SocketAddr) {
    let mut child = Command::new(binary)
        .args(["--bind", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .env("ALAYASIKI_JWT_SECRET", SECRET)
        .env("ALAYASIKI_API_RATE", "100000")
        .env("ALAYASIKI_API_BURST", "100000")
        .env("ALAYASIKI_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start alayasiki-api (build it with cargo build --release)");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let Some(Ok(line)) = lines.next() else {
            let status = child.wait();
            panic!("server exited before listening: {status:?}");
        };
        if let Some(a) = line.strip_prefix("alayasiki-api: listening on http://") {
            let addr = a.trim().parse().unwrap();
            std::thread::spawn(move || {
                lines.for_each(|l| eprintln!("[api] {}", l.unwrap_or_default()))
            });
            return (child, addr);
        }
        eprintln!("[api] {line}");
    }
}

/// A keep-alive HTTP/1.1 connection for POSTs and API calls.
struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    /// The `Mcp-Session-Id` of the last response that named one.
    session: Option<String>,
}

impl Conn {
    fn new(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        Conn {
            addr,
            reader: BufReader::new(s),
            session: None,
        }
    }

    /// Sends a request, reconnecting once if the server closed the
    /// connection; returns (status, body).
    fn send(&mut self, method: &str, path: &str, token: &str, body: &[u8]) -> (u16, Vec<u8>) {
        self.send_with(method, path, token, "", body)
    }

    /// [`Conn::send`] with extra header lines (each ending in CRLF).
    fn send_with(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        extra: &str,
        body: &[u8],
    ) -> (u16, Vec<u8>) {
        for attempt in 0..2 {
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n",
                self.addr,
                body.len()
            );
            let s = self.reader.get_mut();
            let sent = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
            if sent.is_ok() {
                if let Some(r) = self.read() {
                    return r;
                }
            }
            assert!(attempt == 0, "request failed twice");
            *self = Conn::new(self.addr);
        }
        unreachable!()
    }

    fn read(&mut self) -> Option<(u16, Vec<u8>)> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let status = line.split_whitespace().nth(1)?.parse().ok()?;
        let mut len = 0;
        let mut close = false;
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).ok()?;
            let h = h.trim_end().to_ascii_lowercase();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h.strip_prefix("content-length:") {
                len = v.trim().parse().ok()?;
            }
            if h.starts_with("connection:") && h.contains("close") {
                close = true;
            }
            if let Some(v) = h.strip_prefix("mcp-session-id:") {
                self.session = Some(v.trim().to_string());
            }
        }
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).ok()?;
        if close {
            let session = self.session.take();
            *self = Conn::new(self.addr);
            self.session = session;
        }
        Some((status, body))
    }
}

/// Opens an SSE stream; replies arrive on the returned channel.
fn open_stream(addr: SocketAddr, token: &str) -> (String, mpsc::Receiver<Value>, TcpStream) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /mcp/sse HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let keep = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.contains(" 200 "), "GET /mcp/sse: {line}");
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
    }
    let (tx, rx) = mpsc::channel::<(String, String)>();
    std::thread::spawn(move || {
        let mut pending = String::new();
        loop {
            let mut size = String::new();
            if r.read_line(&mut size).unwrap_or(0) == 0 {
                return;
            }
            let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
                return;
            };
            if n == 0 {
                return;
            }
            let mut chunk = vec![0; n + 2];
            if r.read_exact(&mut chunk).is_err() {
                return;
            }
            pending.push_str(&String::from_utf8_lossy(&chunk[..n]));
            while let Some(end) = pending.find("\n\n") {
                let block: String = pending.drain(..end + 2).collect();
                let mut event = String::new();
                let mut data = String::new();
                for l in block.lines() {
                    if let Some(e) = l.strip_prefix("event: ") {
                        event = e.into();
                    } else if let Some(d) = l.strip_prefix("data: ") {
                        data = d.into();
                    }
                }
                if !event.is_empty() && tx.send((event, data)).is_err() {
                    return;
                }
            }
        }
    });
    let (event, endpoint) = rx.recv_timeout(REPLY_TIMEOUT).expect("endpoint event");
    assert_eq!(event, "endpoint");
    let (mtx, mrx) = mpsc::channel();
    std::thread::spawn(move || {
        for (_, data) in rx {
            if let Ok(v) = serde_json::from_str::<Value>(&data) {
                if mtx.send(v).is_err() {
                    return;
                }
            }
        }
    });
    (endpoint, mrx, keep)
}

/// One client's MCP connection, on the chosen transport.
enum McpClient {
    /// The POST endpoint, the replies from the stream, and the stream
    /// (held open: dropping it ends the session).
    Sse(String, mpsc::Receiver<Value>, #[allow(dead_code)] TcpStream),
    /// The session id.
    Streamable(String),
    Stateless,
}

const STREAMABLE_REVISION: &str = "2025-11-25";
const STATELESS_REVISION: &str = "2026-07-28";
const ACCEPT: &str = "Accept: application/json, text/event-stream\r\n";

impl McpClient {
    fn open(transport: Transport, addr: SocketAddr, tok: &str, conn: &mut Conn) -> McpClient {
        let init = |version: &str| {
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": version, "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}})
            .to_string()
        };
        match transport {
            Transport::Sse => {
                let (endpoint, replies, stream) = open_stream(addr, tok);
                let sent = conn.send("POST", &endpoint, tok, init("2024-11-05").as_bytes());
                assert_eq!(sent.0, 202);
                replies
                    .recv_timeout(REPLY_TIMEOUT)
                    .expect("initialize reply");
                McpClient::Sse(endpoint, replies, stream)
            }
            Transport::Streamable => {
                let (status, _) = conn.send_with(
                    "POST",
                    "/mcp",
                    tok,
                    ACCEPT,
                    init(STREAMABLE_REVISION).as_bytes(),
                );
                assert_eq!(status, 200, "initialize");
                let id = conn.session.clone().expect("Mcp-Session-Id");
                let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                let extra = format!("{ACCEPT}Mcp-Session-Id: {id}\r\n");
                let (status, _) =
                    conn.send_with("POST", "/mcp", tok, &extra, done.to_string().as_bytes());
                assert_eq!(status, 202, "initialized");
                McpClient::Streamable(id)
            }
            Transport::Stateless => McpClient::Stateless,
        }
    }

    /// Calls a tool; `None` when the POST was answered 429.
    fn call(&mut self, conn: &mut Conn, tok: &str, n: u64, mut params: Value) -> Option<Value> {
        if let McpClient::Stateless = self {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_REVISION,
                "io.modelcontextprotocol/clientCapabilities": {}
            });
        }
        let name = params["name"].as_str().unwrap_or("").to_string();
        let msg = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params});
        let body = msg.to_string();
        let (status, reply) = match self {
            McpClient::Sse(endpoint, replies, _) => {
                let (status, _) = conn.send("POST", endpoint, tok, body.as_bytes());
                if status == 429 {
                    return None;
                }
                assert_eq!(status, 202, "POST");
                let reply = replies
                    .recv_timeout(REPLY_TIMEOUT)
                    .expect("reply on the stream");
                return Some(reply);
            }
            McpClient::Streamable(id) => {
                let extra = format!(
                    "{ACCEPT}Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {STREAMABLE_REVISION}\r\n"
                );
                conn.send_with("POST", "/mcp", tok, &extra, body.as_bytes())
            }
            McpClient::Stateless => {
                let extra = format!(
                    "{ACCEPT}MCP-Protocol-Version: {STATELESS_REVISION}\r\n\
                     Mcp-Method: tools/call\r\nMcp-Name: {name}\r\n"
                );
                conn.send_with("POST", "/mcp", tok, &extra, body.as_bytes())
            }
        };
        if status == 429 {
            return None;
        }
        assert_eq!(
            status,
            200,
            "POST /mcp: {}",
            String::from_utf8_lossy(&reply)
        );
        Some(serde_json::from_slice(&reply).expect("a JSON-RPC reply"))
    }
}

#[derive(Default)]
struct Totals {
    query_ms: Vec<f64>,
    ingest_ms: Vec<f64>,
    /// (tenant, document id) of every acknowledged ingest.
    acknowledged: Vec<(String, String)>,
    errors: u64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn words(seed: u64, n: usize) -> String {
    const W: &[&str] = &[
        "harbour", "ledger", "copper", "meadow", "signal", "lantern", "orchard", "glacier",
        "summit", "archive", "beacon", "canyon", "delta", "ember", "falcon", "granite", "horizon",
        "island", "juniper", "kestrel", "lagoon", "marble", "nectar", "obsidian",
    ];
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51afd7ed558ccd);
            W[(x % W.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    let o = options();
    let dir = std::env::temp_dir().join(format!("alayasiki-bench-sse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (mut child, addr) = start(&o.binary, &dir);
    let tenants: Vec<String> = (0..o.clients.max(1))
        .step_by(CLIENTS_PER_TENANT)
        .map(tenant_of)
        .collect();
    let admin = token(&tenants[0], "bench-admin");
    let mut conn = Conn::new(addr);
    let preload_start = Instant::now();
    for i in 0..o.preload {
        let body = json!({"content": format!("Preloaded note {i}: {}.", words(i as u64, 60)),
                          "idempotency_key": format!("preload-{i}"), "wait": false});
        let (status, _) = conn.send("POST", "/v1/ingest", &admin, body.to_string().as_bytes());
        assert_eq!(status, 200, "preload ingest");
    }
    eprintln!(
        "preloaded {} documents in {:.1} s",
        o.preload,
        preload_start.elapsed().as_secs_f64()
    );

    let stop = Arc::new(AtomicBool::new(false));
    let rejected = Arc::new(AtomicU64::new(0));
    let totals = Arc::new(Mutex::new(Totals::default()));
    let ready = Arc::new(std::sync::Barrier::new(o.clients + 1));
    let mut threads = Vec::new();
    for c in 0..o.clients {
        let (stop, rejected, totals, ready) = (
            stop.clone(),
            rejected.clone(),
            totals.clone(),
            ready.clone(),
        );
        let ingest_percent = o.ingest_percent;
        let backoff_ms = o.backoff_ms;
        let transport = o.transport;
        threads.push(std::thread::spawn(move || {
            let tok = token(&tenant_of(c), &format!("bench-{c}"));
            let mut conn = Conn::new(addr);
            let mut client = McpClient::open(transport, addr, &tok, &mut conn);
            ready.wait();
            let mut local = Totals::default();
            let mut n: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let seed = (c as u64) << 32 | n;
                let is_ingest = seed.wrapping_mul(2654435761) % 100 < ingest_percent;
                let args = if is_ingest {
                    json!({"name": "alayasiki_ingest", "arguments": {
                        "content": format!("Client {c} note {n}: {}.", words(seed, 80)),
                        "idempotency_key": format!("bench-{c}-{n}")}})
                } else {
                    json!({"name": "alayasiki_query", "arguments": {
                        "query": format!("what about the {}?", words(seed, 3)), "mode": "evidence"}})
                };
                let sent = Instant::now();
                let Some(reply) = client.call(&mut conn, &tok, n, args) else {
                    rejected.fetch_add(1, Ordering::Relaxed);
                    let jitter = seed.wrapping_mul(0x9e3779b97f4a7c15) % (backoff_ms + 1);
                    std::thread::sleep(StdDuration::from_millis(backoff_ms + jitter));
                    continue;
                };
                let ms = sent.elapsed().as_secs_f64() * 1000.0;
                assert_eq!(reply["id"], json!(n));
                if reply["result"]["isError"] != false {
                    if local.errors < 3 {
                        eprintln!("client {c}: error reply {reply}");
                    }
                    local.errors += 1;
                    continue;
                }
                if is_ingest {
                    local.ingest_ms.push(ms);
                    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
                    let receipt: Value = serde_json::from_str(text).unwrap();
                    local.acknowledged.push((
                        tenant_of(c),
                        receipt["document_id"].as_str().unwrap().to_string(),
                    ));
                } else {
                    local.query_ms.push(ms);
                }
            }
            let mut t = totals.lock().unwrap();
            t.query_ms.extend(local.query_ms);
            t.ingest_ms.extend(local.ingest_ms);
            t.acknowledged.extend(local.acknowledged);
            t.errors += local.errors;
        }));
    }
    ready.wait();
    let began = Instant::now();
    std::thread::sleep(StdDuration::from_secs(o.seconds));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let elapsed = began.elapsed().as_secs_f64();
    let rss = peak_rss_kib(child.id());
    let mut t = std::mem::take(&mut *totals.lock().unwrap());
    t.query_ms.sort_by(f64::total_cmp);
    t.ingest_ms.sort_by(f64::total_cmp);
    let calls = t.query_ms.len() + t.ingest_ms.len();

    // Durability check: restart, then every acknowledged ingest is there
    // exactly once.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let exit = child.wait().unwrap();
    let (mut child, addr) = start(&o.binary, &dir);
    let mut conn = Conn::new(addr);
    let unique: HashSet<&(String, String)> = t.acknowledged.iter().collect();
    assert_eq!(
        unique.len(),
        t.acknowledged.len(),
        "a document id was acknowledged twice"
    );
    let mut missing = 0;
    for (tenant, id) in &t.acknowledged {
        let tok = token(tenant, "bench-admin");
        let (status, _) = conn.send("GET", &format!("/v1/documents/{id}"), &tok, b"");
        if status != 200 {
            missing += 1;
        }
    }
    let mut documents = 0;
    for tenant in &tenants {
        let (_, status) = conn.send("GET", "/v1/status", &token(tenant, "bench-admin"), b"");
        let status: Value = serde_json::from_slice(&status).unwrap();
        documents += status["documents"].as_u64().unwrap();
    }
    let expected = (o.preload + t.acknowledged.len()) as u64;
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let transport = match o.transport {
        Transport::Sse => "HTTP+SSE",
        Transport::Streamable => "Streamable HTTP (sessions, 2025-11-25)",
        Transport::Stateless => "Streamable HTTP (stateless, 2026-07-28)",
    };
    println!(
        "alayasiki-api {transport} load: {} clients in {} tenants, {:.0} s, {}% ingests, {} \
         preloaded documents",
        o.clients,
        tenants.len(),
        elapsed,
        o.ingest_percent,
        o.preload
    );
    println!(
        "  completed calls     {calls} ({:.1}/s)",
        calls as f64 / elapsed
    );
    println!(
        "  queries             {} ({:.1}/s)  p50 {:.1} ms  p99 {:.1} ms",
        t.query_ms.len(),
        t.query_ms.len() as f64 / elapsed,
        percentile(&t.query_ms, 0.5),
        percentile(&t.query_ms, 0.99)
    );
    println!(
        "  ingests             {} ({:.1}/s)  p50 {:.1} ms  p99 {:.1} ms",
        t.ingest_ms.len(),
        t.ingest_ms.len() as f64 / elapsed,
        percentile(&t.ingest_ms, 0.5),
        percentile(&t.ingest_ms, 0.99)
    );
    println!("  429 answers         {}", rejected.load(Ordering::Relaxed));
    println!("  tool errors         {}", t.errors);
    match rss {
        Some(kib) => println!("  server peak RSS     {:.1} MiB", kib as f64 / 1024.0),
        None => println!("  server peak RSS     n/a"),
    }
    println!("  shutdown exit       {exit}");
    println!(
        "  after restart       {documents} documents; expected {expected}; \
         {missing} acknowledged ids missing"
    );
    if documents != expected || missing != 0 || !exit.success() {
        eprintln!("FAIL: acknowledged ingests are not all present exactly once");
        std::process::exit(1);
    }
    println!("  every acknowledged ingest is present exactly once");
}
