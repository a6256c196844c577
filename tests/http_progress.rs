//! Progress from the real `alayasiki-api` over Streamable HTTP: a
//! `tools/call` of `alayasiki_ingest` that sends a `progressToken` hears
//! when its document is stored, before the indexing it waits for, on a
//! response stream (resumable in a session: a priming event and ids);
//! without a token the answer is the usual JSON.

mod http_common;

use http_common::{admin, read_chunk, read_head, Api, TempDir};
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// An event's `id` (if any) and `data`.
type Event = (Option<String>, String);

/// POSTs `body` to /mcp with `headers`; the status, headers and, for an
/// event stream, its events, else the body as one entry.
fn post(
    api: &Api,
    token: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Vec<(String, String)>, Vec<Event>) {
    let mut stream = TcpStream::connect(api.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAuthorization: Bearer \
         {token}\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nContent-Length: {}\r\n",
        api.addr,
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .unwrap();
    let mut r = BufReader::new(stream);
    let (status, headers) = read_head(&mut r);
    let is_stream = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream");
    let mut events = Vec::new();
    if is_stream {
        while let Some(chunk) = read_chunk(&mut r) {
            let text = String::from_utf8(chunk).unwrap();
            let id = text
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .map(str::to_string);
            let data: String = text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            events.push((id, data));
        }
    } else {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut r, &mut rest);
        events.push((None, rest));
    }
    (status, headers, events)
}

fn json_of(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or(Value::Null)
}

fn ingest(id: u64, content: &str, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "alayasiki_ingest",
                      "arguments": {"content": content},
                      "_meta": meta}})
}

#[test]
fn an_ingest_asking_for_progress_hears_its_document_stored() {
    let dir = TempDir::new("http-progress");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");

    // A session of 2025-11-25.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}});
    let (status, headers, _) = post(&api, &token, &[], &init);
    assert_eq!(status, 200);
    let session = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
        .map(|(_, v)| v.clone())
        .expect("a session");
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];

    let call = ingest(
        1,
        "The progress pump is in hall nine.",
        json!({"progressToken": "ingest-1"}),
    );
    let (status, _, events) = post(&api, &token, &in_session, &call);
    assert_eq!(status, 200);
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        events[0].0.is_some() && events[0].1.is_empty(),
        "{events:?}"
    );
    let progress = json_of(&events[1].1);
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "ingest-1");
    assert_eq!(progress["params"]["progress"], 1);
    assert_eq!(progress["params"]["total"], 2);
    let reply = json_of(&events[2].1);
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert!(events.iter().all(|(id, _)| id.is_some()), "{events:?}");

    // Without a token: JSON, as ever.
    let call = ingest(2, "The quiet pump is in hall ten.", json!({}));
    let (status, headers, body) = post(&api, &token, &in_session, &call);
    assert_eq!(status, 200);
    assert!(headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "application/json"));
    assert_eq!(json_of(&body[0].1)["result"]["isError"], false);

    // Stateless (2026-07-28): the same, on a stream without ids.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "progressToken": 9});
    let call = ingest(3, "The stateless pump is in hall eleven.", meta);
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "alayasiki_ingest"),
    ];
    let (status, _, events) = post(&api, &token, &headers, &call);
    assert_eq!(status, 200);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|(id, _)| id.is_none()), "{events:?}");
    assert_eq!(json_of(&events[0].1)["params"]["progressToken"], 9);
    let reply = json_of(&events[1].1);
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
}
