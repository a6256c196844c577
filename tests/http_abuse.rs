//! `alayasiki-api` under hostile clients, through the real binary with a
//! lowered descriptor limit (so exhaustion would show at once): huge
//! declared lengths, HTTP/2 request lines, idle and slowloris connections
//! beyond every cap, conflicting `Content-Length`s, one token opening many
//! SSE streams, SSE clients that vanish. For each the server's threads,
//! descriptors and resident memory are measured before, during and after:
//! they must return to their idle values, the server must stay up, and a
//! well-behaved authenticated client must be served throughout.
#![cfg(target_os = "linux")]

mod http_common;

use http_common::*;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The server's descriptor limit in these tests: `MAX_CONNECTIONS` is
/// lowered to 256 - `RESERVED_DESCRIPTORS` = 192, and
/// `MAX_UNAUTHENTICATED_CONNECTIONS` to half that.
const DESCRIPTORS: u64 = 256;
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
const REFUSED_BODY_LINGER: Duration = Duration::from_secs(5);
const MAX_SSE_CONNECTIONS_PER_CALLER: usize = 8;
const HANGUP_POLL: Duration = Duration::from_millis(250);

/// How far above idle the footprint may stay: a thread or descriptor
/// that comes and goes (a store checkpoint), memory the allocator keeps.
const SLACK_THREADS: usize = 1;
const SLACK_DESCRIPTORS: usize = 2;
const SLACK_RSS_KIB: usize = 8 * 1024;

/// A server with few descriptors, a token, and its idle footprint (after a
/// first request of each kind, so that what loads once is loaded).
fn server(tag: &str) -> (TempDir, Api, String, Footprint) {
    let dir = TempDir::new(tag);
    let api = Api::start_with_descriptors(dir.path(), &[], DESCRIPTORS);
    let token = admin("agent", "acme");
    served(&api, &token);
    let sse = Sse::open(api.addr, &token);
    sse.close();
    assert_eq!(request(api.addr, "GET", "/health", &[], None).status, 200);
    let idle = settle(&api, None, Duration::from_secs(3));
    (dir, api, token, idle)
}

/// Waits until the footprint is back within the slack of `idle` (or, with
/// none, until it stops falling), for at most `limit`; the lowest seen.
fn settle(api: &Api, idle: Option<&Footprint>, limit: Duration) -> Footprint {
    let until = Instant::now() + limit;
    let mut least = api.footprint();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = api.footprint();
        least = Footprint {
            threads: least.threads.min(now.threads),
            descriptors: least.descriptors.min(now.descriptors),
            rss_kib: least.rss_kib.min(now.rss_kib),
        };
        let done = match idle {
            Some(idle) => now.within(idle, SLACK_THREADS, SLACK_DESCRIPTORS, SLACK_RSS_KIB),
            None => Instant::now() + limit / 2 > until,
        };
        if done || Instant::now() > until {
            return if idle.is_some() { now } else { least };
        }
    }
}

/// Asserts that the footprint returns to `idle` within `limit`.
fn back_to_idle(api: &Api, idle: &Footprint, limit: Duration, case: &str) -> Footprint {
    let now = settle(api, Some(idle), limit);
    assert!(
        now.within(idle, SLACK_THREADS, SLACK_DESCRIPTORS, SLACK_RSS_KIB),
        "{case}: {now:?} after, {idle:?} idle"
    );
    eprintln!("{case}: idle {idle:?}, after {now:?}");
    now
}

/// A well-behaved authenticated request, answered 200.
fn served(api: &Api, token: &str) {
    let r = api.call("GET", "/v1/status", token, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

fn connect(api: &Api) -> TcpStream {
    let s = TcpStream::connect(api.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Sends `head` on a fresh connection; the status answered and whether
/// the server then ended the connection (within `REFUSED_BODY_LINGER`).
fn refused(api: &Api, head: &str) -> (u16, bool) {
    let mut s = connect(api);
    s.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(s);
    let (status, headers) = read_head(&mut reader);
    let closing = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close"));
    let mut rest = Vec::new();
    let ended = reader.read_to_end(&mut rest).is_ok();
    (status, closing && ended)
}

/// The largest of two footprints, field by field.
fn peak(a: Footprint, b: Footprint) -> Footprint {
    Footprint {
        threads: a.threads.max(b.threads),
        descriptors: a.descriptors.max(b.descriptors),
        rss_kib: a.rss_kib.max(b.rss_kib),
    }
}

/// Declared lengths far past `MAX_BODY_BYTES`, 1 TiB among them (more than
/// this machine's memory), sent 300 times (more than the 128 that used to
/// stop the server) to `/health` and to an authenticated route: each is
/// answered 413 from its header and closed, nothing is allocated, and the
/// server keeps serving.
#[test]
fn huge_declared_lengths_are_refused_and_never_stop_the_server() {
    let (_dir, mut api, token, idle) = server("huge");
    let lengths: [u64; 3] = [1 << 40, 1 << 62, (1 << 63) + 1];
    let addr = api.host();
    let senders: Vec<_> = (0..4)
        .map(|t| {
            let (addr, token) = (addr.clone(), token.clone());
            let api_addr = api.addr;
            std::thread::spawn(move || {
                (0..75)
                    .map(|i| {
                        let length = lengths[i % lengths.len()];
                        let head = if (i + t) % 2 == 0 {
                            format!(
                                "GET /health HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {length}\r\n\r\n"
                            )
                        } else {
                            format!(
                                "POST /v1/ingest HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer \
                                 {token}\r\nContent-Type: application/json\r\nContent-Length: \
                                 {length}\r\n\r\n{{\"content\": \"x"
                            )
                        };
                        let mut s = TcpStream::connect(api_addr).unwrap();
                        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                        s.write_all(head.as_bytes()).unwrap();
                        let mut reader = BufReader::new(s);
                        let (status, _) = read_head(&mut reader);
                        let mut rest = Vec::new();
                        let ended = reader.read_to_end(&mut rest).is_ok();
                        (status, ended)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut during = idle;
    while senders.iter().any(|s| !s.is_finished()) {
        served(&api, &token);
        during = peak(during, api.footprint());
        std::thread::sleep(Duration::from_millis(50));
    }
    for sender in senders {
        for (status, ended) in sender.join().unwrap() {
            assert_eq!(status, 413);
            assert!(ended, "the connection was not ended");
        }
    }
    eprintln!("huge lengths: during {during:?}");
    assert!(api.running(), "the server exited");
    served(&api, &token);
    back_to_idle(&api, &idle, Duration::from_secs(5), "huge lengths");
    let log = api.stderr.lock().unwrap().join("\n");
    assert!(!log.contains("panicked"), "{log}");
}

/// HTTP/2 request lines (and the HTTP/2 preface) are answered 505 and
/// closed: 300 of them, their clients holding the sockets open, leave no
/// thread or descriptor behind.
#[test]
fn http2_request_lines_get_505_and_hold_nothing() {
    let (_dir, mut api, token, idle) = server("http2");
    let (status, closed) = refused(&api, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert_eq!((status, closed), (505, true));
    let mut held = Vec::new();
    let mut during = idle;
    for i in 0..300 {
        let mut s = connect(&api);
        write!(s, "GET /health HTTP/2.0\r\nHost: {}\r\n\r\n", api.addr).unwrap();
        let mut reader = BufReader::new(s.try_clone().unwrap());
        let (status, _) = read_head(&mut reader);
        assert_eq!(status, 505, "request {i}");
        held.push(s);
        if i % 50 == 0 {
            served(&api, &token);
            during = peak(during, api.footprint());
        }
    }
    eprintln!("HTTP/2.0: during {during:?}");
    assert!(api.running());
    served(&api, &token);
    // Released within the linger, though every client keeps its socket.
    back_to_idle(
        &api,
        &idle,
        REFUSED_BODY_LINGER + Duration::from_secs(3),
        "HTTP/2.0",
    );
    for s in &held {
        let mut b = [0u8; 256];
        let mut s = s;
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        while let Ok(n) = s.read(&mut b) {
            if n == 0 {
                break;
            }
        }
    }
    drop(held);
}

/// 1,000 idle connections and 500 slowloris ones (a header line a second,
/// never the end of the head), far more than the descriptors allow: the
/// server holds at most its caps, closes the longest-waiting to let new
/// clients in, serves a well-behaved client throughout, and ends every
/// such connection by `HEADER_READ_TIMEOUT`, though their clients keep
/// them open.
#[test]
fn idle_and_slowloris_connections_are_capped_and_cut_off() {
    let (_dir, mut api, token, idle) = server("slowloris");
    let started = Instant::now();
    let addr = api.addr;
    let flood = std::thread::spawn(move || {
        let opened = |n: usize| -> Vec<TcpStream> {
            (0..n)
                .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok())
                .collect()
        };
        let idlers = opened(1000);
        let mut lorises = opened(500);
        for s in &mut lorises {
            let _ = write!(s, "GET /health HTTP/1.1\r\nHost: {addr}\r\n");
        }
        eprintln!(
            "slowloris: {} connections opened in {:?}",
            idlers.len() + lorises.len(),
            started.elapsed()
        );
        // A header line a second, until every head deadline has passed.
        let until = Instant::now() + HEADER_READ_TIMEOUT + Duration::from_secs(2);
        while Instant::now() < until {
            for s in &mut lorises {
                let _ = s.write_all(b"X-Slow: 1\r\n");
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        (idlers, lorises)
    });
    let mut during = idle;
    let mut served_count = 0;
    // Served while the flood opens and trickles.
    while !flood.is_finished() {
        served(&api, &token);
        served_count += 1;
        during = peak(during, api.footprint());
        std::thread::sleep(Duration::from_millis(100));
    }
    let (idlers, lorises) = flood.join().unwrap();
    assert!(idlers.len() + lorises.len() > 1000, "could not connect");
    eprintln!("slowloris: during {during:?}, {served_count} requests served");
    // Bounded by the connection cap (192 for 256 descriptors).
    assert!(during.descriptors <= idle.descriptors + 192 + SLACK_DESCRIPTORS);
    assert!(during.threads <= idle.threads + 192 + SLACK_THREADS);
    assert!(api.running());
    // Every head deadline has passed by now.
    assert!(started.elapsed() > HEADER_READ_TIMEOUT);
    served(&api, &token);
    back_to_idle(&api, &idle, Duration::from_secs(3), "slowloris");
    // The clients see their connections ended.
    for s in lorises.iter().chain(&idlers).take(50) {
        let mut s = s;
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut all = Vec::new();
        assert!(
            s.read_to_end(&mut all).is_ok(),
            "a connection is still open"
        );
    }
}

/// Connections that pipeline many requests for a public asset and never
/// read an answer: more of them than the server holds. The server's writes
/// to them block, yet they stay among the connections that may be closed
/// to make room (none of them was ever authenticated), so an authenticated
/// client is served throughout; and each answer has
/// `ANSWER_WRITE_TIMEOUT` to be written, so every such connection is gone
/// soon after, though its client keeps it open.
#[test]
fn unread_pipelined_answers_never_shut_authenticated_callers_out() {
    const ANSWER_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
    const PIPELINED: usize = 400;
    let (_dir, api, token, idle) = server("pipelined");
    let addr = api.addr;
    let started = Instant::now();
    let requests = format!("GET /ui/app.js HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(PIPELINED);
    let mut flood = Vec::new();
    for _ in 0..300 {
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
            continue;
        };
        s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
        let _ = s.write_all(requests.as_bytes());
        flood.push(s);
    }
    assert!(flood.len() > 192, "only {} connected", flood.len());
    // Let the server fill what the sockets take.
    std::thread::sleep(Duration::from_secs(2));
    let mut during = idle;
    for _ in 0..20 {
        served(&api, &token);
        during = peak(during, api.footprint());
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("pipelined: {} connections, during {during:?}", flood.len());
    // At most half the places (96 of 192) ever held such connections.
    assert!(during.threads <= idle.threads + 96 + 20 + SLACK_THREADS);
    // Every blocked answer has run out of time by now.
    let until = started + ANSWER_WRITE_TIMEOUT + Duration::from_secs(5);
    std::thread::sleep(until.saturating_duration_since(Instant::now()));
    served(&api, &token);
    back_to_idle(&api, &idle, Duration::from_secs(5), "pipelined");
    drop(flood);
}

/// Ambiguous framing (request smuggling behind a proxy) is refused 400 and
/// the connection closed: two `Content-Length`s, one with
/// `Transfer-Encoding`, chunked twice; nothing is stored.
#[test]
fn conflicting_lengths_are_refused_and_the_connection_closed() {
    let (_dir, api, token, idle) = server("smuggle");
    let addr = api.addr;
    let body = r#"{"content":"smuggled"}"#;
    for framing in [
        "Content-Length: 13\r\nContent-Length: 14",
        "Content-Length: 22\r\nContent-Length: 22",
        "Content-Length: 22\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 22",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: gzip, chunked",
    ] {
        for (path, auth) in [
            ("/v1/ingest", format!("Authorization: Bearer {token}\r\n")),
            ("/health", String::new()),
        ] {
            let method = if path == "/health" { "GET" } else { "POST" };
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: \
                 application/json\r\n{framing}\r\n\r\n{body}GET /health HTTP/1.1\r\n\r\n"
            );
            let (status, closed) = refused(&api, &head);
            assert_eq!((status, closed), (400, true), "{framing:?} to {path}");
        }
    }
    let status = api.call("GET", "/v1/status", &token, None).json();
    assert_eq!(status["documents"], 0, "{status}");
    back_to_idle(&api, &idle, Duration::from_secs(3), "conflicting lengths");
}

/// Waits up to `limit` until the server has `n` SSE writers; how long it took.
fn writers_become(api: &Api, n: usize, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if api.threads_named("sse-writer") == n {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// One token holds at most its share of the SSE streams: its next gets 429
/// while another tenant's token still opens one; closed streams release
/// everything they held.
#[test]
fn one_token_cannot_hold_every_stream() {
    let (_dir, api, token, idle) = server("sse-share");
    let mine: Vec<Sse> = (0..MAX_SSE_CONNECTIONS_PER_CALLER)
        .map(|_| Sse::open(api.addr, &token))
        .collect();
    let r = Sse::try_open(api.addr, &token)
        .err()
        .expect("one stream too many");
    assert_eq!(
        (r.status, r.code()),
        (429, "too_many_streams_for_caller".into())
    );
    assert!(r.header("Retry-After").is_some());
    let theirs = Sse::open(api.addr, &admin("someone", "other-tenant"));
    served(&api, &token);
    let during = api.footprint();
    eprintln!("one token: during {during:?}");
    assert!(during.threads >= idle.threads + MAX_SSE_CONNECTIONS_PER_CALLER);
    for s in mine {
        s.close();
    }
    theirs.close();
    assert!(writers_become(&api, 0, Duration::from_secs(2)).is_some());
    back_to_idle(&api, &idle, Duration::from_secs(2), "one token");
}

/// A client that disconnects frees its stream's place, thread and
/// descriptor within a hang-up poll or two, not at the next keep-alive.
#[test]
fn a_vanished_sse_client_frees_its_place_at_once() {
    let (_dir, api, token, idle) = server("sse-gone");
    let mut streams: Vec<Sse> = (0..MAX_SSE_CONNECTIONS_PER_CALLER)
        .map(|_| Sse::open(api.addr, &token))
        .collect();
    assert_eq!(
        writers_become(&api, MAX_SSE_CONNECTIONS_PER_CALLER, Duration::from_secs(2)).map(|_| ()),
        Some(())
    );
    streams.pop().unwrap().close();
    let freed = writers_become(
        &api,
        MAX_SSE_CONNECTIONS_PER_CALLER - 1,
        Duration::from_secs(5),
    )
    .expect("the writer of a closed stream is still running");
    assert!(freed < HANGUP_POLL * 4, "freed after {freed:?}");
    // Its place is the caller's again.
    streams.push(Sse::open(api.addr, &token));
    let mut sse = streams.pop().unwrap();
    sse.initialize();
    served(&api, &token);
    sse.close();
    for s in streams {
        s.close();
    }
    let freed = writers_become(&api, 0, Duration::from_secs(5)).expect("writers still running");
    assert!(freed < HANGUP_POLL * 4, "freed after {freed:?}");
    back_to_idle(&api, &idle, Duration::from_secs(2), "vanished client");
}
