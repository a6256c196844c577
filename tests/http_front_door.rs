//! What a newcomer meets first at `alayasiki-api`: status that does not
//! tell remote callers where the server keeps its files, and a prompt exit
//! on SIGTERM.

mod http_common;

use http_common::held_embedder::HeldEmbedder;
use http_common::{admin, claims, sign, Api, Sse, TempDir, TIMEOUT};
use serde_json::json;
use std::time::{Duration, Instant};

/// How soon after its last in-flight request finished the server must
/// have exited (issue: within 300 ms).
const EXIT_AFTER_LAST_REQUEST: Duration = Duration::from_millis(300);

#[test]
fn status_tells_the_data_dir_to_admins_only() {
    let dir = TempDir::new("status-paths");
    let api = Api::start(dir.path(), &[]);
    let path = dir.path().to_str().unwrap().to_string();
    let reader = sign(claims("reader", "acme", &["reader"], ""));
    let scoped = sign(claims("bot", "acme", &[], "query:execute ingest:write"));
    for token in [&reader, &scoped] {
        // The JSON API ...
        let r = api.call("GET", "/v1/status", token, None);
        assert_eq!(r.status, 200);
        let body = String::from_utf8(r.body.clone()).unwrap();
        assert!(!body.contains(&path), "{body}");
        assert!(r.json().get("data_dir").is_none(), "{body}");
        assert!(r.json()["documents"].is_number(), "counts are still told");
        // ... and MCP over SSE.
        let mut sse = Sse::open(api.addr, token);
        sse.initialize();
        let (is_error, status) = sse.call("alayasiki_status", json!({}));
        assert!(!is_error, "{status}");
        assert!(status.get("data_dir").is_none(), "{status}");
        assert!(!status.to_string().contains(&path));
        sse.close();
    }
    let r = api.call("GET", "/v1/status", &admin("root", "acme"), None);
    assert_eq!(r.json()["data_dir"], path.as_str());
}

#[test]
fn sigterm_with_nothing_in_flight_exits_at_once() {
    let dir = TempDir::new("exit-idle");
    let mut api = Api::start(dir.path(), &[]);
    let token = admin("a", "t");
    let r = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"content": "The boiler is serviced every October."})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let started = Instant::now();
    api.terminate();
    let status = api.wait(TIMEOUT).expect("exited");
    let took = started.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took <= EXIT_AFTER_LAST_REQUEST,
        "exit took {took:?} after SIGTERM with nothing in flight"
    );
}

#[test]
fn sigterm_exits_soon_after_the_last_in_flight_request_finishes() {
    let embedder = HeldEmbedder::start();
    let env = embedder.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let dir = TempDir::new("exit-drain");
    let mut api = Api::start(dir.path(), &env);
    let token = admin("a", "t");
    embedder.hold();
    let (addr, query_token) = (api.addr, token.clone());
    let in_flight = std::thread::spawn(move || {
        let headers = vec![
            ("Authorization".to_string(), format!("Bearer {query_token}")),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        let body = json!({"query": "When is the boiler serviced?"}).to_string();
        let reply =
            http_common::request(addr, "POST", "/v1/query", &headers, Some(body.as_bytes()));
        (reply.status, Instant::now())
    });
    assert!(
        embedder.wait_for_waiting(1, TIMEOUT),
        "the query never reached the embedder"
    );
    api.terminate();
    // The server drains: it must not exit while the query runs.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        api.child.try_wait().unwrap().is_none(),
        "exited mid-request"
    );
    embedder.release();
    let (status, answered) = in_flight.join().unwrap();
    assert_eq!(status, 200, "the in-flight query was answered");
    let exit = api.wait(TIMEOUT).expect("exited");
    let after = answered.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(
        after <= EXIT_AFTER_LAST_REQUEST,
        "exited {after:?} after the last in-flight request finished"
    );
}
