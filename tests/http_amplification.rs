//! What one authenticated HTTP caller can make the server hold: a body of
//! small numbers is refused before it is parsed (413), many at once never
//! take the server's memory far from idle, and JSON whose flattened text
//! would multiply is refused when ingested.

mod http_common;

use http_common::{admin, request, Api, Footprint, TempDir};
use serde_json::json;

/// Peak resident memory (VmHWM) of a process, in KiB.
fn peak_kib(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn bodies_of_small_numbers_are_refused_before_they_are_parsed_even_48_at_once() {
    let dir = TempDir::new("amplify");
    let api = Api::start(dir.path(), &[]);
    let token = admin("a", "t");
    let idle: Footprint = api.footprint();
    let numbers = vec!["1"; 4_000_000].join(",");
    let body = format!(r#"{{"File": {{"content": [{numbers}]}}}}"#);
    assert!(body.len() < 8 << 20);
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let body = std::sync::Arc::new(body);
    let threads: Vec<_> = (0..48)
        .map(|_| {
            let (body, headers, addr) = (body.clone(), headers.clone(), api.addr);
            std::thread::spawn(move || {
                request(addr, "POST", "/v1/ingest", &headers, Some(body.as_bytes()))
            })
        })
        .collect();
    for t in threads {
        let r = t.join().unwrap();
        // 413 for the cost itself; 503/429 when the server is busy
        // receiving others; never a parse of the whole.
        assert!(
            matches!(r.status, 413 | 503 | 429),
            "{} {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
        if r.status == 413 {
            assert_eq!(r.code(), "body_too_costly");
        }
    }
    let grew = peak_kib(api.child.id()).saturating_sub(idle.rss_kib);
    // 48 bodies of 8 MiB read at once are ~400 MB on the wire alone when
    // all are buffered; parsed they were 4.5 GB. Each is now dropped
    // after its cost is estimated.
    assert!(grew < 600 * 1024, "peak RSS grew by {} MiB", grew / 1024);
    assert_eq!(api.call("GET", "/health", &token, None).status, 200);
}

#[test]
fn json_that_would_multiply_when_flattened_is_refused_on_ingest() {
    let dir = TempDir::new("amplify-json");
    let api = Api::start(dir.path(), &[]);
    let token = admin("a", "t");
    let key = "k".repeat(100);
    let mut doc = String::new();
    for _ in 0..60 {
        doc.push_str(&format!("{{\"{key}\": "));
    }
    let leaves: Vec<String> = (0..20_000).map(|i| (i % 10).to_string()).collect();
    doc.push_str(&format!("[{}]", leaves.join(",")));
    doc.push_str(&"}".repeat(60));
    let r = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"content": doc, "media_type": "application/json"})),
    );
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert!(
        String::from_utf8_lossy(&r.body).contains("MAX_JSON_EXPANSION"),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let status = api.call("GET", "/v1/status", &token, None).json();
    assert_eq!(status["documents"], 0);
}
