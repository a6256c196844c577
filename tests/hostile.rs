//! Hostile input through the real binary: never a crash, never a silent
//! drop, always the right JSON-RPC error, and the connection stays usable.

mod common;

use common::*;
use serde_json::{json, Value};

fn still_alive(s: &mut Server) {
    assert_eq!(
        s.request("ping", json!({}))["result"],
        json!({}),
        "server stopped answering"
    );
}

#[test]
fn invalid_json_and_invalid_utf8_get_parse_errors_with_null_id() {
    let dir = TempDir::new("parse");
    let mut s = Server::ready(dir.path());
    for raw in [
        &b"{not json\n"[..],
        b"\xff\xfe{}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\n",
        b"\"\xc3\x28\"\n",
    ] {
        s.send_raw(raw);
        let r = s.recv();
        assert_eq!(
            r["error"]["code"],
            -32700,
            "{:?}",
            String::from_utf8_lossy(raw)
        );
        assert_eq!(r["id"], Value::Null);
    }
    still_alive(&mut s);
}

#[test]
fn invalid_requests_get_32600() {
    let dir = TempDir::new("invalid");
    let mut s = Server::ready(dir.path());
    for msg in [
        json!(42),
        json!("ping"),
        json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
        json!({"id": 1, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
        json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}),
        json!([]),
    ] {
        s.send(&msg);
        let r = s.recv();
        assert_eq!(r["error"]["code"], -32600, "{msg} -> {r}");
    }
    still_alive(&mut s);
}

#[test]
fn ids_of_every_valid_type_echo_exactly() {
    let dir = TempDir::new("ids");
    let mut s = Server::ready(dir.path());
    for id in [
        json!(0),
        json!(-1),
        json!(9007199254740993u64),
        json!(u64::MAX),
        json!(""),
        json!("1"),
        json!("ü🙂"),
        json!(i64::MIN),
    ] {
        s.send(&json!({"jsonrpc": "2.0", "id": id.clone(), "method": "ping"}));
        let r = s.recv();
        assert_eq!(r["id"], id, "id type or value changed");
        assert_eq!(r["result"], json!({}));
    }
    // Byte-for-byte: the raw line keeps a large integer intact.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"ping\"}\n");
    assert_eq!(s.recv()["id"].as_u64(), Some(u64::MAX));
}

#[test]
fn deep_nesting_is_refused_without_a_crash() {
    let dir = TempDir::new("deep");
    let mut s = Server::ready(dir.path());
    let depth = 100_000;
    let mut line = "[".repeat(depth);
    line.push_str(&"]".repeat(depth));
    line.push('\n');
    s.send_raw(line.as_bytes());
    assert_eq!(s.recv()["error"]["code"], -32700);
    // Deep but legal nesting inside tool arguments is a tool error, not a
    // crash: metadata is an object at any depth serde accepts.
    let mut nested = json!("leaf");
    for _ in 0..100 {
        nested = json!({"n": nested});
    }
    let (is_error, _) = s.call(
        "alayasiki_ingest",
        json!({"content": "deep meta", "metadata": nested}),
    );
    assert!(!is_error);
    still_alive(&mut s);
}

#[test]
fn nine_mib_line_is_refused_and_the_connection_survives() {
    let dir = TempDir::new("big");
    let mut s = Server::ready(dir.path());
    let filler = "a".repeat(9 * 1024 * 1024);
    let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{{\"name\":\"alayasiki_ingest\",\"arguments\":{{\"content\":\"{filler}\"}}}}}}\n");
    s.send_raw(line.as_bytes());
    let r = s.recv();
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["id"], Value::Null);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("MAX_FRAME_BYTES"));
    still_alive(&mut s);
    assert_eq!(
        s.ok("alayasiki_status", json!({}))["documents"],
        0,
        "the oversized ingest must not be stored"
    );
}

#[test]
fn wrong_argument_types_are_tool_errors_with_short_messages() {
    let dir = TempDir::new("types");
    let mut s = Server::ready(dir.path());
    for (tool, args) in [
        ("alayasiki_ingest", json!({"content": 5})),
        ("alayasiki_ingest", json!({"content": ["a"]})),
        ("alayasiki_ingest", json!({"File": "x"})),
        ("alayasiki_ingest", json!({"File": {"content": {"a": 1}}})),
        (
            "alayasiki_ingest",
            json!({"Text": {"content": "a", "extra": 1}}),
        ),
        (
            "alayasiki_ingest",
            json!({"content": "a", "idempotency_key": 7}),
        ),
        ("alayasiki_query", json!({"query": {"q": 1}})),
        ("alayasiki_query", json!({"query": "x", "top_k": "10"})),
        ("alayasiki_query", json!({"query": "x", "top_k": -1})),
        ("alayasiki_query", json!({"query": "x", "top_k": 1e300})),
    ] {
        let (is_error, msg) = s.call(tool, args.clone());
        assert!(is_error, "{tool} accepted {args}");
        let msg = msg.as_str().unwrap().to_string();
        assert!(
            msg.starts_with("invalid_input:") || msg.starts_with("limit_exceeded:"),
            "{msg}"
        );
        for leak in ["/tmp", "sqlite", "SELECT", "panicked", ".rs:"] {
            assert!(!msg.contains(leak), "message leaks internals: {msg}");
        }
    }
    still_alive(&mut s);
}

#[test]
fn fts_syntax_in_queries_is_just_text() {
    let dir = TempDir::new("fts");
    let mut s = Server::ready(dir.path());
    s.ingest("Plain words: near and or not column star.");
    for q in [
        "NEAR(\"a\" b)",
        "a AND",
        "\"unbalanced",
        "col:val",
        "x*",
        "-",
        "^",
        "'; DROP TABLE documents; --",
        "🙂🙂",
        "((()))",
    ] {
        let (is_error, msg) = s.call("alayasiki_query", json!({"query": q}));
        assert!(!is_error, "{q} -> {msg}");
    }
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 1);
}

#[test]
fn batches_are_answered_per_json_rpc() {
    let dir = TempDir::new("batch");
    let mut s = Server::ready(dir.path());
    s.send(&json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "nope"},
        {"jsonrpc": "2.0", "id": "c", "method": "initialize", "params": {}},
        7
    ]));
    let r = s.recv();
    let items = r.as_array().expect("a batch reply is an array");
    assert_eq!(items.len(), 4, "notifications contribute nothing: {r}");
    assert_eq!(items[0], json!({"jsonrpc": "2.0", "id": "a", "result": {}}));
    assert_eq!(items[1]["error"]["code"], -32601);
    assert_eq!(
        items[2]["error"]["code"], -32600,
        "initialize inside a batch"
    );
    assert_eq!(items[3]["error"]["code"], -32600);
    // All-notification batch: no output at all.
    s.send(&json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]));
    assert_eq!(s.recv_within(std::time::Duration::from_millis(300)), None);
    still_alive(&mut s);
}

#[test]
fn blank_lines_and_crlf_are_tolerated() {
    let dir = TempDir::new("crlf");
    let mut s = Server::ready(dir.path());
    s.send_raw(b"\n   \n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n");
    assert_eq!(s.recv()["id"], 5);
}

#[test]
fn many_pipelined_requests_all_get_exactly_one_reply() {
    let dir = TempDir::new("pipeline");
    let mut s = Server::ready(dir.path());
    let n = 300;
    let mut batch = Vec::new();
    for i in 0..n {
        let msg = if i % 3 == 0 {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "alayasiki_ingest", "arguments": {"content": format!("pipelined {i}")}}})
        } else {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "alayasiki_query", "arguments": {"query": "pipelined"}}})
        };
        batch.extend(serde_json::to_vec(&msg).unwrap());
        batch.push(b'\n');
    }
    s.send_raw(&batch);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..n {
        let r = s.recv();
        assert!(r["result"]["isError"] == false, "{r}");
        assert!(seen.insert(r["id"].as_i64().unwrap()), "duplicate reply");
    }
    assert_eq!(s.recv_within(std::time::Duration::from_millis(200)), None);
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 100);
}
