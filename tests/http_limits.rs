//! `alayasiki-api` at its limits, through the real binary: reply-queue
//! saturation, the SSE connection cap, the 8 MiB body limit (including
//! lying and chunked bodies) and graceful shutdown.

mod http_common;

use http_common::*;
use serde_json::{json, Value};
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const MAX_SSE_CONNECTIONS: usize = 128;
const MAX_QUEUED_REPLIES: usize = 32;
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// An SSE stream the test reads only when it chooses to.
struct RawStream {
    reader: BufReader<TcpStream>,
    endpoint: String,
}

impl RawStream {
    fn open(addr: std::net::SocketAddr, token: &str) -> Result<RawStream, u16> {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET /mcp/sse HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
        )
        .unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut reader = BufReader::new(stream);
        let (status, _) = read_head(&mut reader);
        if status != 200 {
            return Err(status);
        }
        let first = String::from_utf8(read_chunk(&mut reader).unwrap()).unwrap();
        let endpoint = first
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap()
            .to_string();
        Ok(RawStream { reader, endpoint })
    }

    /// The next `message` event's JSON, skipping keep-alives.
    fn next_message(&mut self) -> Option<Value> {
        loop {
            let chunk = String::from_utf8(read_chunk(&mut self.reader)?).unwrap();
            if let Some(data) = chunk.lines().find_map(|l| l.strip_prefix("data: ")) {
                return Some(serde_json::from_str(data).unwrap());
            }
        }
    }
}

fn post(api: &Api, endpoint: &str, token: &str, message: &Value) -> Reply {
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    request(
        api.addr,
        "POST",
        endpoint,
        &headers,
        Some(message.to_string().as_bytes()),
    )
}

#[test]
fn saturated_reply_queue_answers_429_before_anything_is_written() {
    let dir = TempDir::new("saturate");
    let api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    // Replies of about 2 MB: a few fill the socket buffers of a client
    // that does not read, and the rest wait in the queue.
    let paragraph = "Saturation test paragraph with enough words to make a chunk. ";
    let big: String = (0..32_000).map(|i| format!("{paragraph}{i}\n\n")).collect();
    let r = api.call("POST", "/v1/ingest", &token, Some(&json!({"content": big})));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let doc = r.json()["document_id"].as_str().unwrap().to_string();

    let mut stream = RawStream::open(api.addr, &token).unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post(&api, &stream.endpoint, &token, &init).status, 202);
    let read = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
               "params": {"uri": format!("alayasiki://documents/{doc}")}})
    };
    let mut accepted = 0;
    let refusal = (1..=400).find_map(|id| {
        let r = post(&api, &stream.endpoint, &token, &read(id));
        if r.status == 202 {
            accepted += 1;
            None
        } else {
            Some(r)
        }
    });
    let refusal = refusal.expect("the reply queue never filled");
    assert_eq!(
        (refusal.status, refusal.code()),
        (429, "reply_queue_full".into())
    );
    assert!(refusal.header("Retry-After").is_some());
    assert!(accepted >= MAX_QUEUED_REPLIES, "only {accepted} accepted");

    // A mutation posted now is refused before it runs.
    let ingest = json!({"jsonrpc": "2.0", "id": 9999, "method": "tools/call",
                        "params": {"name": "alayasiki_ingest",
                                   "arguments": {"content": "This must never be stored: QUOKKA.",
                                                 "idempotency_key": "refused-write"}}});
    let r = post(&api, &stream.endpoint, &token, &ingest);
    assert_eq!((r.status, r.code()), (429, "reply_queue_full".into()));

    // Reading the stream drains the queue: every accepted message is
    // answered, and nothing else.
    let mut answered = 0;
    while answered < accepted + 1 {
        let m = stream.next_message().expect("queued replies arrive");
        assert_ne!(m["id"], 9999);
        answered += 1;
    }
    let status = api.call("GET", "/v1/status", &token, None).json();
    assert_eq!(status["documents"], 1, "{status}");
    let q = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "QUOKKA"})),
    );
    let evidence = q.json()["evidence"].to_string();
    assert!(
        !evidence.contains("QUOKKA"),
        "the refused write is searchable"
    );
    // Once drained the same ingest goes through.
    let r = post(&api, &stream.endpoint, &token, &ingest);
    assert_eq!(r.status, 202);
}

#[test]
fn the_sse_connection_cap_refuses_the_next_stream_with_retry_after() {
    let dir = TempDir::new("cap");
    let api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    let streams: Vec<RawStream> = (0..MAX_SSE_CONNECTIONS)
        .map(|i| RawStream::open(api.addr, &token).unwrap_or_else(|s| panic!("stream {i}: {s}")))
        .collect();
    let refused = Sse::try_open(api.addr, &token)
        .err()
        .expect("stream 129 opened");
    assert_eq!(
        (refused.status, refused.code()),
        (503, "too_many_streams".into())
    );
    assert!(refused.header("Retry-After").is_some());
    // The JSON API is unaffected by the stream cap.
    assert_eq!(api.call("GET", "/v1/status", &token, None).status, 200);
    drop(streams);
}

#[test]
fn bodies_are_limited_to_8_mib() {
    let dir = TempDir::new("body");
    let api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    let auth = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let body_of = |len: usize| {
        let prefix = br#"{"content":""#;
        let suffix = br#""}"#;
        let mut b = prefix.to_vec();
        b.resize(len - suffix.len(), b'a');
        b.extend_from_slice(suffix);
        b
    };
    // Exactly at the limit the body is read and parsed; the tool then
    // refuses content over its own (smaller) limit.
    let at = request(
        api.addr,
        "POST",
        "/v1/ingest",
        &auth,
        Some(&body_of(MAX_BODY_BYTES)),
    );
    assert_eq!((at.status, at.code()), (413, "limit_exceeded".into()));
    let over = request(
        api.addr,
        "POST",
        "/v1/ingest",
        &auth,
        Some(&body_of(MAX_BODY_BYTES + 1)),
    );
    assert_eq!((over.status, over.code()), (413, "body_too_large".into()));

    // The same over SSE.
    let sse = Sse::open(api.addr, &token);
    let r = request(
        api.addr,
        "POST",
        &sse.endpoint,
        &auth,
        Some(&body_of(MAX_BODY_BYTES + 1)),
    );
    assert_eq!(r.status, 413);

    // A chunked body declares no length: it is cut off at the limit.
    let mut s = TcpStream::connect(api.addr).unwrap();
    write!(
        s,
        "POST /v1/ingest HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        api.addr
    )
    .unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..9 {
        if write!(s, "{:x}\r\n", chunk.len()).is_err() || s.write_all(&chunk).is_err() {
            break;
        }
        let _ = s.write_all(b"\r\n");
    }
    let _ = s.write_all(b"0\r\n\r\n");
    let r = read_reply(&mut BufReader::new(s));
    assert_eq!((r.status, r.code()), (413, "body_too_large".into()));

    // A declared length far past the limit is refused without reading (or
    // allocating) it, and the server carries on.
    let mut s = TcpStream::connect(api.addr).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(
        s,
        "POST /v1/ingest HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 1099511627776\r\n\r\n{{",
        api.addr
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 413");
    assert_eq!(request(api.addr, "GET", "/health", &[], None).status, 200);
    assert_eq!(api.call("GET", "/v1/status", &token, None).status, 200);
}

#[cfg(unix)]
#[test]
fn sigterm_drains_in_flight_work_then_exits_zero() {
    let dir = TempDir::new("shutdown");
    let mut api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    let mut sse = Sse::open(api.addr, &token);
    sse.initialize();
    let text: String = (0..2000)
        .map(|i| format!("Shutdown drain paragraph number {i} about the harbour.\n\n"))
        .collect();
    let ingest = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                        "params": {"name": "alayasiki_ingest",
                                   "arguments": {"content": text, "idempotency_key": "drain"}}});
    assert_eq!(sse.post(&ingest).status, 202);
    api.terminate();
    // The in-flight ingest finishes and its reply is delivered before the
    // stream ends.
    let reply = sse.next_message(TIMEOUT).expect("the in-flight reply");
    assert_eq!(reply["id"], 77);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let started = Instant::now();
    let status = api
        .wait(Duration::from_secs(60))
        .expect("exited after SIGTERM");
    assert_eq!(status.code(), Some(0), "exit status");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        sse.next_event(Duration::from_secs(2)).is_none(),
        "stream still open"
    );
    // The acknowledged write is there after a restart, exactly once.
    let api = Api::start(dir.path(), &[]);
    let status = api.call("GET", "/v1/status", &token, None).json();
    assert_eq!(status["documents"], 1, "{status}");
    assert_eq!(status["jobs"]["pending"], 0, "{status}");
}

/// The socket timeouts are set on the listener and so also bound `accept`;
/// the server must still accept connections after being idle for longer.
#[test]
fn the_server_keeps_accepting_after_an_idle_io_timeout() {
    const IO_TIMEOUT: Duration = Duration::from_secs(30);
    let dir = TempDir::new("idle");
    let api = Api::start(dir.path(), &[]);
    assert_eq!(request(api.addr, "GET", "/health", &[], None).status, 200);
    std::thread::sleep(IO_TIMEOUT + Duration::from_secs(5));
    assert_eq!(request(api.addr, "GET", "/health", &[], None).status, 200);
}
