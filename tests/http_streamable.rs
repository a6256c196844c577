//! Streamable HTTP at `/mcp` through the real `alayasiki-api`: both eras,
//! the session rules, the stateless checks in the specification's order,
//! identity bound to sessions, and the bounds.

mod http_common;

use http_common::{admin, request, Api, Reply, TempDir};
use serde_json::{json, Value};
use std::io::BufReader;
use std::net::TcpStream;
use std::time::Duration;

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A POST to /mcp with `token`, the JSON `body` and extra headers.
fn post(api: &Api, token: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    post_raw(api, token, headers, body.to_string().as_bytes())
}

fn post_raw(api: &Api, token: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut all: Vec<(String, String)> = vec![
        ("Authorization".into(), format!("Bearer {token}")),
        ("Content-Type".into(), "application/json".into()),
        (ACCEPT.0.into(), ACCEPT.1.into()),
    ];
    for (k, v) in headers {
        all.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        all.push((k.to_string(), v.to_string()));
    }
    request(api.addr, "POST", "/mcp", &all, Some(body))
}

/// A stateless request with the headers a conforming client sends.
fn stateless(api: &Api, token: &str, id: u64, method: &str, mut params: Value) -> Reply {
    params["_meta"] = meta();
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .map(str::to_string);
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = name.as_deref() {
        headers.push(("Mcp-Name", name));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    post(api, token, &headers, &body)
}

/// An initialized session of `revision`: its id.
fn open_session(api: &Api, token: &str, revision: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": revision, "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}});
    let r = post(api, token, &[], &init);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["result"]["protocolVersion"], revision);
    let id = r
        .header("Mcp-Session-Id")
        .expect("a session id")
        .to_string();
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(api, token, &[("Mcp-Session-Id", &id)], &done);
    assert_eq!(r.status, 202);
    id
}

fn in_session(
    api: &Api,
    token: &str,
    session: &str,
    id: u64,
    method: &str,
    params: Value,
) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    post(api, token, &[("Mcp-Session-Id", session)], &body)
}

fn tool_json(reply: &Reply) -> Value {
    let v = reply.json();
    assert_eq!(v["result"]["isError"], false, "{v}");
    serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn a_session_based_client_ingests_queries_and_reads_back_then_deletes_its_session() {
    let dir = TempDir::new("streamable-session");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    for revision in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let s = open_session(&api, &token, revision);
        // Not waiting for indexing: the session's next read waits for it
        // (read-your-writes).
        let r = in_session(
            &api,
            &token,
            &s,
            1,
            "tools/call",
            json!({"name": "alayasiki_ingest",
            "arguments": {"content": format!("The {revision} pump is in hall seven."), "wait": false}}),
        );
        let doc = tool_json(&r)["document_id"].as_str().unwrap().to_string();
        let r = in_session(
            &api,
            &token,
            &s,
            2,
            "tools/call",
            json!({"name": "alayasiki_query",
            "arguments": {"query": format!("where is the {revision} pump"), "mode": "evidence"}}),
        );
        let found = tool_json(&r);
        assert_eq!(found["evidence"][0]["document_id"], doc.as_str(), "{found}");
        // Structured output from 2025-06-18 on.
        let structured = r.json()["result"].get("structuredContent").is_some();
        assert_eq!(structured, revision >= "2025-06-18", "{revision}");
        let r = in_session(
            &api,
            &token,
            &s,
            3,
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{doc}")}),
        );
        assert!(r.json()["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hall seven"));
        // The session's revision, and no other, in MCP-Protocol-Version.
        let body = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
        let r = post(
            &api,
            &token,
            &[("Mcp-Session-Id", &s), ("MCP-Protocol-Version", revision)],
            &body,
        );
        assert_eq!((r.status, r.json()["result"].clone()), (200, json!({})));
        let r = post(
            &api,
            &token,
            &[
                ("Mcp-Session-Id", &s),
                ("MCP-Protocol-Version", "1999-01-01"),
            ],
            &body,
        );
        assert_eq!(r.status, 400);
        // DELETE ends it; then 404.
        let headers = vec![
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Mcp-Session-Id".to_string(), s.clone()),
        ];
        assert_eq!(
            request(api.addr, "DELETE", "/mcp", &headers, None).status,
            200
        );
        assert_eq!(
            in_session(&api, &token, &s, 5, "tools/list", json!({})).status,
            404
        );
        assert_eq!(
            request(api.addr, "DELETE", "/mcp", &headers, None).status,
            404
        );
    }
}

#[test]
fn sessions_are_bound_to_their_caller_and_need_initialize() {
    let dir = TempDir::new("streamable-identity");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let s = open_session(&api, &alice, "2025-11-25");
    // Another subject, or another tenant, sees no such session.
    for other in [admin("bob", "acme"), admin("alice", "globex")] {
        let r = in_session(&api, &other, &s, 1, "tools/list", json!({}));
        assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
    }
    // No session and no modern _meta: initialize first.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let r = post(&api, &alice, &[], &list);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32600);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize"));
    // A second initialize in a session is refused; the session stays.
    let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    let r = post(&api, &alice, &[("Mcp-Session-Id", &s)], &init);
    assert!(r.json()["error"].is_object());
    assert_eq!(
        in_session(&api, &alice, &s, 3, "tools/list", json!({})).status,
        200
    );
    // A refused initialize opens no session.
    let bad = json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}});
    let r = post(&api, &alice, &[], &bad);
    assert_eq!(r.status, 400);
    assert!(r.header("Mcp-Session-Id").is_none());
    // No token: 401 before anything else.
    let r = request(
        api.addr,
        "POST",
        "/mcp",
        &[("Content-Type".into(), "application/json".into())],
        Some(b"{}"),
    );
    assert_eq!(r.status, 401);
    assert!(r.header("WWW-Authenticate").is_some());
}

#[test]
fn a_caller_past_its_share_of_sessions_loses_its_least_recently_used() {
    let dir = TempDir::new("streamable-cap");
    let api = Api::start(dir.path(), &[]);
    let token = admin("carol", "acme");
    const PER_CALLER: usize = 32; // MAX_HTTP_SESSIONS_PER_CALLER
    let sessions: Vec<String> = (0..PER_CALLER)
        .map(|_| open_session(&api, &token, "2025-11-25"))
        .collect();
    // Touch the first so the second is the least recently used.
    assert_eq!(
        in_session(&api, &token, &sessions[0], 1, "tools/list", json!({})).status,
        200
    );
    let newest = open_session(&api, &token, "2025-11-25");
    assert_eq!(
        in_session(&api, &token, &sessions[1], 2, "tools/list", json!({})).status,
        404
    );
    for s in [
        &sessions[0],
        &sessions[2],
        &sessions[PER_CALLER - 1],
        &newest,
    ] {
        assert_eq!(
            in_session(&api, &token, s, 3, "tools/list", json!({})).status,
            200
        );
    }
    // Other callers keep theirs.
    let other = admin("dave", "acme");
    let theirs = open_session(&api, &other, "2025-11-25");
    assert_eq!(
        in_session(&api, &other, &theirs, 4, "tools/list", json!({})).status,
        200
    );
}

/// Sessions hoarded idle by a few tenants never keep another tenant, or
/// another caller of a full tenant, out: four tenants of eight callers
/// each fill `MAX_HTTP_SESSIONS` (each tenant its 256), yet a fifth tenant
/// and a new caller of a full tenant both open sessions. Each takes the
/// place of the longest idle session of the largest holder (that session
/// then answers 404, as an expired one does); the others go on working.
#[test]
fn idle_sessions_hoarded_by_a_few_tenants_never_keep_another_out() {
    const MAX_HTTP_SESSIONS: usize = 1024;
    const PER_CALLER: usize = 32; // MAX_HTTP_SESSIONS_PER_CALLER
    let dir = TempDir::new("streamable-hoard");
    let api = Api::start(dir.path(), &[]);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "hoarder", "version": "1"}}});
    let initialize = |token: &str| -> Reply { post(&api, token, &[], &init) };
    let mut hoard: Vec<(String, String)> = Vec::new();
    for tenant in 0..4 {
        for caller in 0..8 {
            let token = admin(&format!("hoarder-{caller}"), &format!("hoard-{tenant}"));
            for _ in 0..PER_CALLER {
                let r = initialize(&token);
                assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
                let id = r.header("Mcp-Session-Id").unwrap().to_string();
                hoard.push((token.clone(), id));
            }
        }
    }
    assert_eq!(hoard.len(), MAX_HTTP_SESSIONS);

    // A fifth tenant opens a session and works in it.
    let newcomer = admin("dana", "fresh");
    let session = open_session(&api, &newcomer, "2025-11-25");
    assert_eq!(
        in_session(&api, &newcomer, &session, 1, "tools/list", json!({})).status,
        200
    );
    // The longest idle session of the largest tenant gave way.
    let (first_token, first_id) = &hoard[0];
    assert_eq!(
        in_session(&api, first_token, first_id, 2, "tools/list", json!({})).status,
        404
    );
    // A new caller of a full tenant opens one too.
    let late = admin("late", "hoard-3");
    let r = initialize(&late);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    // The hoarders' other sessions still work.
    for (token, id) in [&hoard[1], &hoard[600], &hoard[MAX_HTTP_SESSIONS - 1]] {
        assert_eq!(
            in_session(&api, token, id, 3, "tools/list", json!({})).status,
            200
        );
    }
}

#[test]
fn stateless_requests_are_checked_in_the_specifications_order() {
    let dir = TempDir::new("streamable-stateless");
    let api = Api::start(dir.path(), &[]);
    let token = admin("erin", "acme");
    let body = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let check = |r: Reply, status: u16, code: i64, id: u64| {
        let v = r.json();
        assert_eq!(
            (r.status, v["error"]["code"].as_i64()),
            (status, Some(code)),
            "{v}"
        );
        assert_eq!(v["id"], id, "{v}");
        v
    };
    // 1. The version header is required.
    let r = post(
        &api,
        &token,
        &[("Mcp-Method", "tools/list")],
        &body(1, "tools/list", json!({"_meta": meta()})),
    );
    check(r, 400, -32020, 1);
    let h = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "server/discover"),
    ];
    // 2. _meta with the version and client capabilities.
    check(
        post(&api, &token, &h, &body(2, "server/discover", json!({}))),
        400,
        -32602,
        2,
    );
    let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}});
    check(
        post(&api, &token, &h, &body(3, "server/discover", no_caps)),
        400,
        -32602,
        3,
    );
    // 3. Header and _meta agree.
    let other = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0",
                                 "io.modelcontextprotocol/clientCapabilities": {}}});
    check(
        post(&api, &token, &h, &body(4, "server/discover", other.clone())),
        400,
        -32020,
        4,
    );
    // 4. A version we speak: the error lists them and echoes the request.
    let h999 = [
        ("MCP-Protocol-Version", "v999.0.0"),
        ("Mcp-Method", "server/discover"),
    ];
    let v = check(
        post(&api, &token, &h999, &body(5, "server/discover", other)),
        400,
        -32022,
        5,
    );
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(v["error"]["data"]["supported"][0], MODERN);
    // 5. Mcp-Method and Mcp-Name match the body (values are case-sensitive,
    //    surrounding spaces are not part of them, base64 is decoded).
    let list = body(6, "tools/list", json!({"_meta": meta()}));
    for method in ["prompts/list", "TOOLS/LIST"] {
        let r = post(
            &api,
            &token,
            &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)],
            &list,
        );
        check(r, 400, -32020, 6);
    }
    let r = post(
        &api,
        &token,
        &[
            ("MCP-Protocol-Version", MODERN),
            ("mcp-method", " tools/list "),
        ],
        &list,
    );
    assert_eq!(r.status, 200);
    let call = body(
        7,
        "tools/call",
        json!({"name": "alayasiki_status", "arguments": {}, "_meta": meta()}),
    );
    let h = |name: &'static str| {
        [
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ]
    };
    check(
        post(&api, &token, &h("alayasiki_query"), &call),
        400,
        -32020,
        7,
    );
    check(
        post(
            &api,
            &token,
            &[
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/call"),
            ],
            &call,
        ),
        400,
        -32020,
        7,
    );
    let encoded = "=?base64?YWxheWFzaWtpX3N0YXR1cw==?="; // alayasiki_status
    assert_eq!(post(&api, &token, &h(encoded), &call).status, 200);
    // Unknown and removed methods: 404 with -32601.
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "unknown/method",
    ] {
        check(
            stateless(&api, &token, 8, method, json!({})),
            404,
            -32601,
            8,
        );
    }
    // GET and DELETE without a session: 405.
    let auth = vec![("Authorization".to_string(), format!("Bearer {token}"))];
    for method in ["GET", "DELETE"] {
        let r = request(api.addr, method, "/mcp", &auth, None);
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("Allow"), Some("POST"));
    }
}

#[test]
fn stateless_results_carry_type_identity_and_caching_hints() {
    let dir = TempDir::new("streamable-results");
    let api = Api::start(dir.path(), &[]);
    let token = admin("frank", "acme");
    let d = stateless(&api, &token, 1, "server/discover", json!({})).json();
    assert_eq!(d["result"]["supportedVersions"][0], MODERN);
    assert_eq!(d["result"]["resultType"], "complete");
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "alayasiki-mcp"
    );
    for (method, scope) in [
        ("tools/list", "public"),
        ("prompts/list", "public"),
        ("resources/templates/list", "public"),
        ("resources/list", "private"),
    ] {
        let v = stateless(&api, &token, 2, method, json!({})).json();
        assert_eq!(v["result"]["cacheScope"], scope, "{method}: {v}");
        assert!(v["result"]["ttlMs"].as_u64().is_some(), "{method}");
        assert_eq!(v["result"]["resultType"], "complete");
    }
    // Same order every time (clients cache it).
    let names = |v: Value| -> Vec<String> {
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let first = names(stateless(&api, &token, 3, "tools/list", json!({})).json());
    assert_eq!(
        first,
        names(stateless(&api, &token, 4, "tools/list", json!({})).json())
    );
    // Ingest, query, read back; an unknown resource is -32602 naming it.
    let r = stateless(
        &api,
        &token,
        5,
        "tools/call",
        json!({"name": "alayasiki_ingest",
        "arguments": {"content": "The stateless ferry leaves at dawn."}}),
    );
    let receipt = &r.json()["result"]["structuredContent"];
    let doc = receipt["document_id"]
        .as_str()
        .expect("structured receipt")
        .to_string();
    let r = stateless(
        &api,
        &token,
        6,
        "tools/call",
        json!({"name": "alayasiki_query",
        "arguments": {"query": "when does the stateless ferry leave", "mode": "evidence"}}),
    );
    assert_eq!(
        r.json()["result"]["structuredContent"]["evidence"][0]["document_id"],
        doc.as_str()
    );
    let uri = format!("alayasiki://documents/{doc}");
    let v = stateless(&api, &token, 7, "resources/read", json!({"uri": uri})).json();
    assert_eq!(v["result"]["cacheScope"], "private");
    assert!(v["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .contains("dawn"));
    let missing = "alayasiki://documents/doc_000000000000000000000000";
    let v = stateless(&api, &token, 8, "resources/read", json!({"uri": missing})).json();
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["data"]["uri"], missing);
    // Another tenant's document reads as missing.
    let other = admin("frank", "globex");
    let v = stateless(
        &api,
        &other,
        9,
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc}")}),
    )
    .json();
    assert_eq!(v["error"]["code"], -32602);
}

#[test]
fn bad_input_gets_the_status_the_specification_names() {
    let dir = TempDir::new("streamable-bad");
    let api = Api::start(dir.path(), &[]);
    let token = admin("gina", "acme");
    let auth = ("Authorization".to_string(), format!("Bearer {token}"));
    // Wrong content type: 415; nothing acceptable: 406.
    let r = request(
        api.addr,
        "POST",
        "/mcp",
        &[auth.clone(), ("Content-Type".into(), "text/plain".into())],
        Some(b"{}"),
    );
    assert_eq!(r.status, 415);
    let r = post(&api, &token, &[("Accept", "text/html")], &json!({}));
    assert_eq!(r.status, 406);
    // Not JSON: 400 with a parse error.
    let r = post_raw(&api, &token, &[], b"{not json");
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32700))
    );
    // An unknown or malformed session: 404.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for id in ["0123456789abcdef0123456789abcdef", "../../etc/passwd"] {
        assert_eq!(
            post(&api, &token, &[("Mcp-Session-Id", id)], &list).status,
            404
        );
    }
    // Over the body limit: 413 without reading it.
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(9 << 20));
    assert_eq!(post_raw(&api, &token, &[], big.as_bytes()).status, 413);
    // An SSE-only client gets its reply as one event.
    let s = open_session(&api, &token, "2025-11-25");
    let r = post(
        &api,
        &token,
        &[("Mcp-Session-Id", &s), ("Accept", "text/event-stream")],
        &json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    );
    assert_eq!(r.header("Content-Type"), Some("text/event-stream"));
    let text = String::from_utf8(r.body).unwrap();
    assert!(text.starts_with("event: message\ndata: {"), "{text}");
    // The server is still fine, and nothing said "internal".
    assert_eq!(
        in_session(&api, &token, &s, 10, "tools/list", json!({})).status,
        200
    );
}

#[test]
fn a_listening_stream_stays_open_until_its_session_is_deleted() {
    let dir = TempDir::new("streamable-listen");
    let api = Api::start(dir.path(), &[]);
    let token = admin("hank", "acme");
    let s = open_session(&api, &token, "2025-11-25");
    let mut stream = TcpStream::connect(api.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    use std::io::Write;
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
                    Accept: text/event-stream\r\nMcp-Session-Id: {s}\r\n\r\n",
        api.addr
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let (status, headers) = http_common::read_head(&mut reader);
    assert_eq!(status, 200);
    assert!(headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream"));
    // A second stream for the session: 409.
    let second = request(
        api.addr,
        "GET",
        "/mcp",
        &[
            ("Authorization".into(), format!("Bearer {token}")),
            ("Accept".into(), "text/event-stream".into()),
            ("Mcp-Session-Id".into(), s.clone()),
        ],
        None,
    );
    assert_eq!(second.status, 409);
    // The session works meanwhile; DELETE ends the stream.
    assert_eq!(
        in_session(&api, &token, &s, 1, "tools/list", json!({})).status,
        200
    );
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Mcp-Session-Id".to_string(), s.clone()),
    ];
    assert_eq!(
        request(api.addr, "DELETE", "/mcp", &headers, None).status,
        200
    );
    // The stream ends at once (its last chunk), not at the read timeout.
    let started = std::time::Instant::now();
    while http_common::read_chunk(&mut reader).is_some() {}
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the stream outlived its session"
    );
}
