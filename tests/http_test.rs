//! `alayasiki-api` through the real binary on loopback: the SSE transport
//! with every tool, the JSON API, JWT verification, permissions, tenancy,
//! session binding, origins, usage accounting and the command line.

mod http_common;

use http_common::*;
use jwt_simple::prelude::*;
use serde_json::{json, Value};
use std::time::Duration as StdDuration;

/// Arguments that make each known tool succeed; tools added by other
/// changes are called with `{}` and must at least be reachable.
fn arguments_for(tool: &str) -> Value {
    match tool {
        "alayasiki_ingest" => json!({"content": "The lighthouse keeper logs the tide at dawn.",
                                     "source": "sse-test", "idempotency_key": "sse-1"}),
        "alayasiki_query" => json!({"query": "When is the tide logged?"}),
        "alayasiki_memory_write" => json!({"session_id": "sse-every-tool", "content": "a note"}),
        "alayasiki_memory_read" => json!({"session_id": "sse-every-tool"}),
        "alayasiki_memory_promote" => json!({"session_id": "sse-every-tool"}),
        "alayasiki_forget" => json!({"source": "no-such-source"}),
        _ => json!({}),
    }
}

#[test]
fn sse_handshake_then_every_tool_over_sse() {
    let dir = TempDir::new("sse");
    let api = Api::start(dir.path(), &[]);
    let mut sse = Sse::open(api.addr, &admin("agent", "acme"));
    let id = sse
        .endpoint
        .strip_prefix("/mcp/messages?session_id=")
        .unwrap_or_else(|| panic!("endpoint {:?}", sse.endpoint));
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    sse.initialize();
    let ping = sse.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    let tools = sse.request("tools/list", json!({}));
    let names: Vec<String> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 3, "{names:?}");
    // Ingest first so that every later tool has something to find.
    let mut order = names.clone();
    order.sort_by_key(|n| n != "alayasiki_ingest");
    for name in &order {
        let reply = sse.request(
            "tools/call",
            json!({"name": name, "arguments": arguments_for(name)}),
        );
        assert!(
            reply["result"]["content"][0]["text"].is_string(),
            "{name} not reachable over SSE: {reply}"
        );
        if ["alayasiki_ingest", "alayasiki_query", "alayasiki_status"].contains(&name.as_str()) {
            assert_eq!(reply["result"]["isError"], false, "{name}: {reply}");
        }
    }
    let (_, answer) = sse.call(
        "alayasiki_query",
        json!({"query": "When is the tide logged?"}),
    );
    assert_eq!(answer["evidence"][0]["source"], "sse-test");
    let resources = sse.request("resources/list", json!({}));
    // The ingested document (and a promoted working-memory session, where
    // that tool exists).
    assert!(!resources["result"]["resources"]
        .as_array()
        .unwrap()
        .is_empty());
    let prompts = sse.request("prompts/list", json!({}));
    assert!(prompts["result"]["prompts"].is_array());
}

#[test]
fn json_api_routes_use_the_tool_schemas() {
    let dir = TempDir::new("api");
    let api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    let health = request(api.addr, "GET", "/health", &[], None);
    assert_eq!(
        (health.status, health.json()["status"].clone()),
        (200, json!("ok"))
    );

    let r = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(
            &json!({"Text": {"content": "# Ops\n\nBackups run nightly at 02:00 UTC.",
                              "media_type": "text/markdown", "source": "runbook"}}),
        ),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let doc = r.json()["document_id"].as_str().unwrap().to_string();
    assert_eq!(r.json()["state"], "ready");
    let file = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"File": {"filename": "notes.txt", "content": "UmVzdG9yZXMgYXJlIHRlc3RlZCBtb250aGx5Lg=="}})),
    );
    assert_eq!(file.status, 200, "{}", String::from_utf8_lossy(&file.body));

    let q = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "When do backups run?", "mode": "evidence"})),
    );
    assert_eq!(q.status, 200);
    assert_eq!(q.json()["evidence"][0]["document_id"], json!(doc));

    let status = api.call("GET", "/v1/status", &token, None);
    assert_eq!(status.json()["documents"], 2);
    let by_name = api.call(
        "POST",
        "/v1/tools/alayasiki_status",
        &token,
        Some(&json!({})),
    );
    assert_eq!(by_name.json()["documents"], 2);
    let listed = api.call("GET", "/v1/tools", &token, None);
    assert!(listed.json()["tools"].as_array().unwrap().len() >= 3);

    let read = api.call("GET", &format!("/v1/documents/{doc}"), &token, None);
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["source"], "runbook");
    assert!(read.json()["text"].as_str().unwrap().contains("nightly"));
    let missing = api.call("GET", "/v1/documents/doc_nope", &token, None);
    assert_eq!((missing.status, missing.code()), (404, "not_found".into()));

    // Forgetting and working memory arrive with other changes: until their
    // tools exist the routes say so with a stable code.
    for (method, path, tool) in [
        ("DELETE", format!("/v1/documents/{doc}"), "alayasiki_forget"),
        (
            "POST",
            "/v1/memory/write".to_string(),
            "alayasiki_memory_write",
        ),
        (
            "POST",
            "/v1/memory/read".to_string(),
            "alayasiki_memory_read",
        ),
    ] {
        let listed_tools = listed.json()["tools"].clone();
        let exists = listed_tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tool);
        if !exists {
            let r = api.call(
                method,
                &path,
                &token,
                Some(&json!({})).filter(|_| method == "POST"),
            );
            assert_eq!(
                (r.status, r.code()),
                (501, "not_implemented".into()),
                "{path}"
            );
        }
    }

    // Working memory through its convenience routes, once it exists.
    let has_tool = |name: &str| {
        listed.json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == name)
    };
    if has_tool("alayasiki_memory_write") {
        let w = api.call(
            "POST",
            "/v1/memory/write",
            &token,
            Some(&json!({"session_id": "api-1", "content": "Draft: rotate the keys on Friday."})),
        );
        assert_eq!(w.status, 200, "{}", String::from_utf8_lossy(&w.body));
        let r = api.call(
            "POST",
            "/v1/memory/read",
            &token,
            Some(&json!({"session_id": "api-1"})),
        );
        assert_eq!(r.status, 200);
        assert!(
            r.json().to_string().contains("rotate the keys"),
            "{}",
            r.json()
        );
        let other = api.call(
            "POST",
            "/v1/memory/read",
            &admin("someone-else", "acme"),
            Some(&json!({"session_id": "api-1"})),
        );
        assert_ne!(other.status, 200, "another identity read the session");
    }
    // Forgetting through DELETE, once it exists.
    if has_tool("alayasiki_forget") {
        let d = api.call("DELETE", &format!("/v1/documents/{doc}"), &token, None);
        assert_eq!(d.status, 200, "{}", String::from_utf8_lossy(&d.body));
        assert_eq!(
            api.call("GET", &format!("/v1/documents/{doc}"), &token, None)
                .status,
            404
        );
        let reader = sign(claims("r", "acme", &["reader"], ""));
        let file_doc = file.json()["document_id"].as_str().unwrap().to_string();
        let denied = api.call(
            "DELETE",
            &format!("/v1/documents/{file_doc}"),
            &reader,
            None,
        );
        assert_eq!(denied.status, 403);
    }

    let bad = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "x", "top_k": 0})),
    );
    assert_eq!((bad.status, bad.code()), (400, "invalid_input".into()));
    let conflict = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"content": "a", "idempotency_key": "k"})),
    );
    assert_eq!(conflict.status, 200);
    let conflict = api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"content": "b", "idempotency_key": "k"})),
    );
    assert_eq!((conflict.status, conflict.code()), (409, "conflict".into()));
    let unknown = api.call("POST", "/v1/tools/nope", &token, Some(&json!({})));
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, "unknown_tool".into())
    );
    let wrong_method = api.call("GET", "/v1/query", &token, None);
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.header("Allow"), Some("POST"));
    let no_route = api.call("GET", "/v2/whatever", &token, None);
    assert_eq!(no_route.status, 404);
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "text/plain".to_string()),
    ];
    let not_json = request(
        api.addr,
        "POST",
        "/v1/query",
        &headers,
        Some(b"{\"query\":\"x\"}"),
    );
    assert_eq!(not_json.status, 415);
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let broken = request(
        api.addr,
        "POST",
        "/v1/query",
        &headers,
        Some(b"{\"query\":"),
    );
    assert_eq!((broken.status, broken.code()), (400, "invalid_json".into()));
}

fn bad_token_matrix() -> Vec<(&'static str, String)> {
    let ok = || claims("agent", "acme", &["admin"], "");
    let now = Clock::now_since_epoch();
    let other_key = HS256Key::from_bytes(b"another-secret-0123456789abcdef-xyz");
    let es = ES256KeyPair::generate();
    let header_none =
        Base64UrlSafeNoPadding::encode_to_string(br#"{"alg":"none","typ":"JWT"}"#).unwrap();
    let payload =
        Base64UrlSafeNoPadding::encode_to_string(serde_json::to_vec(&ok()).unwrap()).unwrap();
    let mut expired = ok();
    expired.expires_at = Some(now - Duration::from_mins(10));
    expired.issued_at = Some(now - Duration::from_mins(20));
    let mut not_yet = ok();
    not_yet.invalid_before = Some(now + Duration::from_mins(10));
    let mut no_exp = ok();
    no_exp.expires_at = None;
    let mut no_sub = ok();
    no_sub.subject = None;
    let mut blank_sub = ok();
    blank_sub.subject = Some(" \t ".into());
    let mut no_tenant = ok();
    no_tenant.custom.remove("tenant");
    let mut blank_tenant = ok();
    blank_tenant.custom.insert("tenant".into(), json!("   "));
    vec![
        ("alg none", format!("{header_none}.{payload}.")),
        ("wrong key", other_key.authenticate(ok()).unwrap()),
        ("wrong algorithm", es.sign(ok()).unwrap()),
        ("expired", sign(expired)),
        ("not yet valid", sign(not_yet)),
        ("no exp", sign(no_exp)),
        ("wrong issuer", sign(ok().with_issuer("https://evil.test"))),
        ("wrong audience", sign(ok().with_audience("someone-else"))),
        ("missing subject", sign(no_sub)),
        ("blank subject", sign(blank_sub)),
        ("missing tenant", sign(no_tenant)),
        ("blank tenant", sign(blank_tenant)),
        ("malformed", "not-a-jwt".to_string()),
        ("malformed three parts", "a.b.c".to_string()),
    ]
}

#[test]
fn bad_tokens_are_rejected_with_401_and_a_bearer_challenge() {
    let dir = TempDir::new("jwt");
    let api = Api::start(dir.path(), &[]);
    let good = admin("agent", "acme");
    assert_eq!(api.call("GET", "/v1/status", &good, None).status, 200);
    let sse = Sse::open(api.addr, &good);
    for (case, token) in bad_token_matrix() {
        let replies = [
            api.call("GET", "/v1/status", &token, None),
            Sse::try_open(api.addr, &token)
                .err()
                .unwrap_or_else(|| panic!("{case}: stream opened")),
            sse.post_as(
                &token,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            ),
        ];
        for r in replies {
            assert_eq!(r.status, 401, "{case}");
            let challenge = r.header("WWW-Authenticate").unwrap_or("");
            assert!(
                challenge.starts_with("Bearer ") && challenge.contains("error=\"invalid_token\""),
                "{case}: {challenge}"
            );
            assert!(!challenge.contains(&token), "{case}: token echoed");
        }
    }
    let missing = request(api.addr, "GET", "/v1/status", &[], None);
    assert_eq!(missing.status, 401);
    // No credentials: a challenge without an error code (RFC 6750 §3.1).
    let challenge = missing.header("WWW-Authenticate").unwrap();
    assert!(
        challenge.starts_with("Bearer resource_metadata=") && !challenge.contains("error="),
        "{challenge}"
    );
    // Tokens in query strings are refused, not read.
    let in_query = request(
        api.addr,
        "GET",
        &format!("/v1/status?access_token={good}"),
        &[],
        None,
    );
    assert_eq!(in_query.status, 400);
}

#[test]
fn public_key_algorithms_verify_their_own_tokens_only() {
    let dir = TempDir::new("pk");
    let keys = TempDir::new("pk-keys");
    let rs_private = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/jwt/rs256-test-private.pem"
    ))
    .unwrap();
    let rs = RS256KeyPair::from_pem(&rs_private).unwrap();
    let es = ES256KeyPair::generate();
    let ed = Ed25519KeyPair::generate();
    let cases: Vec<(&str, String, String)> = vec![
        (
            "RS256",
            rs.public_key().to_pem().unwrap(),
            rs.sign(claims("a", "t", &["reader"], "")).unwrap(),
        ),
        (
            "ES256",
            es.public_key().to_pem().unwrap(),
            es.sign(claims("a", "t", &["reader"], "")).unwrap(),
        ),
        (
            "EdDSA",
            ed.public_key().to_pem(),
            ed.sign(claims("a", "t", &["reader"], "")).unwrap(),
        ),
    ];
    for (alg, pem, token) in &cases {
        let path = keys.path().join(format!("{alg}.pem"));
        std::fs::write(&path, pem).unwrap();
        let api = Api::start(
            dir.path(),
            &[
                ("ALAYASIKI_JWT_SECRET", ""),
                ("ALAYASIKI_JWT_PUBLIC_KEY_FILE", path.to_str().unwrap()),
                ("ALAYASIKI_JWT_ALGORITHM", alg),
            ],
        );
        assert_eq!(
            api.call("GET", "/v1/status", token, None).status,
            200,
            "{alg}"
        );
        for (other, _, other_token) in &cases {
            if other != alg {
                let r = api.call("GET", "/v1/status", other_token, None);
                assert_eq!(r.status, 401, "{alg} server accepted a {other} token");
            }
        }
        // An HS256 token made with the public key as secret (algorithm
        // confusion) is refused too.
        let confused = HS256Key::from_bytes(pem.as_bytes())
            .authenticate(claims("a", "t", &["admin"], ""))
            .unwrap();
        assert_eq!(
            api.call("GET", "/v1/status", &confused, None).status,
            401,
            "{alg}"
        );
        drop(api);
    }
}

#[test]
fn roles_and_scopes_grant_exactly_their_permissions() {
    let dir = TempDir::new("roles");
    let api = Api::start(dir.path(), &[]);
    let reader = sign(claims("r", "acme", &["reader"], ""));
    let ingestor = sign(claims("i", "acme", &["ingestor"], ""));
    let ingest_scope = sign(claims("s", "acme", &[], "ingest:write"));
    let query_scope = sign(claims("q", "acme", &[], "query:execute"));
    let nothing = sign(claims("n", "acme", &["wizard"], "profile:read"));
    let ingest = json!({"content": "Permissions are checked per request."});
    let query = json!({"query": "permissions"});

    let r = api.call("POST", "/v1/ingest", &reader, Some(&ingest));
    assert_eq!((r.status, r.code()), (403, "forbidden".into()));
    assert_eq!(
        api.call("POST", "/v1/query", &reader, Some(&query)).status,
        200
    );
    assert_eq!(
        api.call("POST", "/v1/ingest", &ingestor, Some(&ingest))
            .status,
        200
    );
    assert_eq!(
        api.call("POST", "/v1/query", &ingestor, Some(&query))
            .status,
        403
    );
    assert_eq!(
        api.call("POST", "/v1/ingest", &ingest_scope, Some(&ingest))
            .status,
        200
    );
    assert_eq!(
        api.call("POST", "/v1/query", &query_scope, Some(&query))
            .status,
        200
    );
    assert_eq!(
        api.call("POST", "/v1/ingest", &query_scope, Some(&ingest))
            .status,
        403
    );
    // A valid token granting nothing here is forbidden, not unauthenticated.
    assert_eq!(api.call("GET", "/v1/status", &nothing, None).status, 403);
    assert_eq!(Sse::try_open(api.addr, &nothing).err().unwrap().status, 403);

    // Over SSE a denied tool is a tool error the model can read.
    let mut sse = Sse::open(api.addr, &reader);
    sse.initialize();
    let (is_error, text) = sse.call("alayasiki_ingest", ingest.clone());
    assert!(is_error);
    assert!(text.as_str().unwrap().starts_with("forbidden"), "{text}");
    let (is_error, _) = sse.call("alayasiki_query", query.clone());
    assert!(!is_error);
    // Each POST acts with its own token's permissions: the same subject
    // with an ingestor role may ingest on the stream opened as a reader.
    let upgraded = sign(claims("r", "acme", &["ingestor"], ""));
    let r = sse.post_as(
        &upgraded,
        &json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "alayasiki_ingest", "arguments": ingest}}),
    );
    assert_eq!(r.status, 202);
    let reply = sse.next_message(TIMEOUT).unwrap();
    assert_eq!(reply["result"]["isError"], false, "{reply}");
}

#[test]
fn tenants_are_isolated_between_tokens() {
    let dir = TempDir::new("tenants");
    let api = Api::start(dir.path(), &[]);
    let a = admin("agent", "tenant-a");
    let b = admin("agent", "tenant-b");
    let r = api.call(
        "POST",
        "/v1/ingest",
        &a,
        Some(&json!({"content": "Tenant A's launch code is TANGERINE.", "idempotency_key": "k1"})),
    );
    let doc = r.json()["document_id"].as_str().unwrap().to_string();
    let q = api.call(
        "POST",
        "/v1/query",
        &b,
        Some(&json!({"query": "launch code TANGERINE"})),
    );
    assert_eq!(q.json()["evidence"], json!([]));
    assert_eq!(
        api.call("GET", &format!("/v1/documents/{doc}"), &b, None)
            .status,
        404
    );
    assert_eq!(
        api.call("GET", "/v1/status", &b, None).json()["documents"],
        0
    );
    // The same idempotency key in B is B's own, not a conflict with A's.
    let r = api.call(
        "POST",
        "/v1/ingest",
        &b,
        Some(&json!({"content": "Something else.", "idempotency_key": "k1"})),
    );
    assert_eq!(r.status, 200);
    let mut sse_b = Sse::open(api.addr, &b);
    sse_b.initialize();
    let read = sse_b.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc}")}),
    );
    assert!(read["error"].is_object(), "{read}");
    assert_eq!(
        api.call("GET", &format!("/v1/documents/{doc}"), &a, None)
            .status,
        200
    );
}

#[test]
fn sse_posts_are_bound_to_the_streams_principal() {
    let dir = TempDir::new("bind");
    let api = Api::start(dir.path(), &[]);
    let mut sse = Sse::open(api.addr, &admin("alice", "acme"));
    sse.initialize();
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
    for other in [admin("bob", "acme"), admin("alice", "other-tenant")] {
        let r = sse.post_as(&other, &ping);
        assert_eq!((r.status, r.code()), (404, "unknown_session".into()));
    }
    let token = sse.token.clone();
    let auth = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let body = ping.to_string();
    let post = |path: &str| request(api.addr, "POST", path, &auth, Some(body.as_bytes()));
    assert_eq!(
        post("/mcp/messages?session_id=0123456789abcdef0123456789abcdef").status,
        404
    );
    assert_eq!(post("/mcp/messages?session_id=short").status, 400);
    assert_eq!(post("/mcp/messages").status, 400);
    let r = request(api.addr, "POST", "/mcp/sse", &auth, Some(body.as_bytes()));
    assert_eq!((r.status, r.header("Allow")), (405, Some("GET")));
    let r = request(api.addr, "GET", &sse.endpoint, &auth, None);
    assert_eq!((r.status, r.header("Allow")), (405, Some("POST")));
    let text_plain = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "text/plain".to_string()),
    ];
    let r = request(
        api.addr,
        "POST",
        &sse.endpoint,
        &text_plain,
        Some(body.as_bytes()),
    );
    assert_eq!(r.status, 400);
    let r = request(api.addr, "POST", &sse.endpoint, &auth, Some(b"{not json"));
    assert_eq!(r.status, 400);
    let parse_error = sse.next_message(TIMEOUT).unwrap();
    assert_eq!(parse_error["error"]["code"], -32700);
    // The owner's POSTs still work after all that.
    assert_eq!(sse.request("ping", json!({}))["result"], json!({}));
    // A closed stream's session is gone.
    let endpoint = sse.endpoint.clone();
    sse.close();
    let gone = (0..100).find_map(|_| {
        std::thread::sleep(StdDuration::from_millis(200));
        let r = request(api.addr, "POST", &endpoint, &auth, Some(body.as_bytes()));
        (r.status == 404).then_some(r)
    });
    // The writer notices a closed socket when it next writes (the 202'd
    // pings above give it something to write).
    assert!(gone.is_some(), "session survived its stream");
}

#[test]
fn origins_and_hosts_are_checked_before_anything_else() {
    let dir = TempDir::new("origin");
    let api = Api::start(
        dir.path(),
        &[
            ("ALAYASIKI_MCP_ALLOWED_ORIGINS", "https://app.example"),
            ("ALAYASIKI_API_ALLOWED_HOSTS", "memory.example.com"),
        ],
    );
    let token = admin("agent", "acme");
    let with = |extra: &[(&str, &str)]| {
        let mut h = vec![("Authorization".to_string(), format!("Bearer {token}"))];
        h.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        request(api.addr, "GET", "/v1/status", &h, None)
    };
    assert_eq!(with(&[]).status, 200);
    assert_eq!(with(&[("Origin", "https://app.example")]).status, 200);
    let foreign = with(&[("Origin", "https://evil.example")]);
    assert_eq!(
        (foreign.status, foreign.code()),
        (403, "origin_forbidden".into())
    );
    assert_eq!(with(&[("Origin", "null")]).status, 403);
    // Refused before authentication: no token needed to be refused.
    let r = request(
        api.addr,
        "GET",
        "/mcp/sse",
        &[("Origin".into(), "https://evil.example".into())],
        None,
    );
    assert_eq!(r.status, 403);
    let rebinding = with(&[("Host", "attacker.example:80")]);
    assert_eq!(
        (rebinding.status, rebinding.code()),
        (403, "host_forbidden".into())
    );
    assert_eq!(with(&[("Host", "memory.example.com")]).status, 200);
    assert_eq!(
        with(&[("Host", &format!("localhost:{}", api.addr.port()))]).status,
        200
    );
}

#[test]
fn completed_calls_are_charged_and_failed_ones_are_not() {
    let dir = TempDir::new("usage");
    let api = Api::start(dir.path(), &[]);
    let token = admin("meter", "acme");
    api.call(
        "POST",
        "/v1/ingest",
        &token,
        Some(&json!({"content": "Usage is metered per call."})),
    );
    for _ in 0..2 {
        assert_eq!(
            api.call(
                "POST",
                "/v1/query",
                &token,
                Some(&json!({"query": "metered"}))
            )
            .status,
            200
        );
    }
    assert_eq!(
        api.call("POST", "/v1/query", &token, Some(&json!({"query": ""})))
            .status,
        400
    );
    let mut sse = Sse::open(api.addr, &token);
    sse.initialize();
    sse.call("alayasiki_query", json!({"query": "metered"}));
    let (is_error, _) = sse.call("alayasiki_query", json!({"top_k": 5}));
    assert!(is_error);
    // Rows join the writer's next group commit; give it a moment.
    let mut usage = Value::Null;
    for _ in 0..50 {
        usage = api.call("GET", "/v1/status", &token, None).json()["usage"].clone();
        let queries = usage["by_operation"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["operation"] == "alayasiki_query")
            .map(|o| o["calls"].as_i64().unwrap());
        if queries == Some(3) {
            break;
        }
        std::thread::sleep(StdDuration::from_millis(100));
    }
    let ops = usage["by_operation"].as_array().unwrap();
    let calls = |name: &str| {
        ops.iter()
            .find(|o| o["operation"] == name)
            .map(|o| o["calls"].as_i64().unwrap())
    };
    assert_eq!(calls("alayasiki_query"), Some(3), "{usage}");
    assert_eq!(calls("alayasiki_ingest"), Some(1), "{usage}");
    let query_op = ops
        .iter()
        .find(|o| o["operation"] == "alayasiki_query")
        .unwrap();
    assert!(query_op["request_bytes"].as_i64().unwrap() > 0);
    assert!(query_op["reply_bytes"].as_i64().unwrap() > 0);
    // Usage is per caller: another subject of the tenant has none.
    let other = api.call("GET", "/v1/status", &admin("someone", "acme"), None);
    assert_eq!(other.json()["usage"]["calls"], 0);
}

#[test]
fn rate_limit_answers_429_with_retry_after_per_caller() {
    let dir = TempDir::new("rate");
    let api = Api::start(
        dir.path(),
        &[("ALAYASIKI_API_RATE", "0.01"), ("ALAYASIKI_API_BURST", "3")],
    );
    let token = admin("busy", "acme");
    for _ in 0..3 {
        assert_eq!(api.call("GET", "/v1/status", &token, None).status, 200);
    }
    let r = api.call("GET", "/v1/status", &token, None);
    assert_eq!((r.status, r.code()), (429, "rate_limited".into()));
    let retry: u64 = r.header("Retry-After").unwrap().parse().unwrap();
    assert!(retry >= 1);
    assert_eq!(
        api.call("GET", "/v1/status", &admin("calm", "acme"), None)
            .status,
        200
    );
}

#[test]
fn working_memory_and_its_accounting_survive_an_sse_reconnect() {
    let dir = TempDir::new("wm");
    let api = Api::start(dir.path(), &[]);
    let token = admin("agent", "acme");
    let session_of = |sse: &mut Sse| {
        let (_, status) = sse.call("alayasiki_status", json!({}));
        status["working_memory"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_id"] == "reconnect-1")
            .cloned()
    };
    let mut first = Sse::open(api.addr, &token);
    first.initialize();
    for note in [
        "Scratch: the build is green.",
        "Scratch: deploy after lunch.",
    ] {
        let (is_error, out) = first.call(
            "alayasiki_memory_write",
            json!({"session_id": "reconnect-1", "content": note}),
        );
        assert!(!is_error, "{out}");
    }
    let before = session_of(&mut first).expect("the session is listed");
    assert_eq!(before["writes"], 2, "{before}");
    first.close();

    // A new stream (a new SSE session id) of the same identity finds the
    // same working memory, charged the same.
    let mut second = Sse::open(api.addr, &token);
    second.initialize();
    let after = session_of(&mut second).expect("the session survived the reconnect");
    assert_eq!(after["writes"], before["writes"]);
    assert_eq!(after["bytes_charged"], before["bytes_charged"]);
    let (is_error, read) = second.call(
        "alayasiki_memory_read",
        json!({"session_id": "reconnect-1"}),
    );
    assert!(!is_error, "{read}");
    assert!(read.to_string().contains("the build is green"), "{read}");
    // Another identity neither sees nor reaches it.
    let mut other = Sse::open(api.addr, &admin("intruder", "acme"));
    other.initialize();
    assert!(session_of(&mut other).is_none());
    let (is_error, _) = other.call(
        "alayasiki_memory_read",
        json!({"session_id": "reconnect-1"}),
    );
    assert!(is_error);
}

#[test]
fn command_line_and_configuration_errors() {
    let out = std::process::Command::new(API_BIN)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--allow-remote"));
    let out = std::process::Command::new(API_BIN)
        .args(["--bind", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reverse proxy"));

    let dir = TempDir::new("cli");
    let (status, err) = Api::try_start(dir.path(), &[("ALAYASIKI_JWT_SECRET", "")])
        .err()
        .unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(err.contains("ALAYASIKI_JWT_SECRET"), "{err}");
    let (status, err) = Api::try_start(dir.path(), &[("ALAYASIKI_JWT_SECRET", "short")])
        .err()
        .unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(err.contains("at least 32"), "{err}");
    // One process per data directory, shared with alayasiki-mcp.
    let _first = Api::start(dir.path(), &[]);
    let (status, err) = Api::try_start(dir.path(), &[]).err().unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(3), "{err}");
}

/// A stored original, exactly as uploaded, over the JSON API and over SSE
/// (`resources/read`), for the caller's tenant only; damaged bytes are an
/// error, never returned.
#[test]
fn originals_round_trip_exactly_over_http_and_sse() {
    use alayasiki_mcp::base64;
    let dir = TempDir::new("originals");
    let mut api = Api::start(dir.path(), &[]);
    let writer = admin("agent", "acme");
    let reader = sign(claims("reader", "acme", &["reader"], ""));
    let ingestor = sign(claims("writer", "acme", &["ingestor"], ""));
    let stranger = admin("agent", "other");
    let pdf = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/pdf/libreoffice-report.pdf"
    ))
    .unwrap();
    assert!(std::str::from_utf8(&pdf).is_err(), "the fixture is binary");
    let r = api.call(
        "POST",
        "/v1/ingest",
        &writer,
        Some(&json!({"File": {"filename": "report.pdf", "content": base64::encode(&pdf)}})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["document_id"].as_str().unwrap().to_string();
    let path = format!("/v1/documents/{id}/original");

    // The reader role suffices; the bytes and their type are the upload's.
    let got = api.call("GET", &path, &reader, None);
    assert_eq!(got.status, 200);
    assert_eq!(got.header("Content-Type"), Some("application/pdf"));
    assert_eq!(got.header("X-Content-Type-Options"), Some("nosniff"));
    assert!(got.body == pdf, "the original came back altered");
    // Charged as document.original (usage rows are group-committed).
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let usage = api.call("GET", "/v1/status", &reader, None).json()["usage"].clone();
        if usage["by_operation"]
            .to_string()
            .contains("document.original")
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not charged: {usage}");
        std::thread::sleep(StdDuration::from_millis(50));
    }

    // Another tenant's id reads as not found; so does an unknown id.
    let r = api.call("GET", &path, &stranger, None);
    assert_eq!((r.status, r.code()), (404, "not_found".into()));
    assert!(!String::from_utf8_lossy(&r.body).contains("%PDF"));
    let r = api.call("GET", "/v1/documents/doc_nope/original", &reader, None);
    assert_eq!((r.status, r.code()), (404, "not_found".into()));
    // No token: 401 with a challenge; a token without the query permission: 403.
    let r = request(api.addr, "GET", &path, &[], None);
    assert_eq!(r.status, 401);
    assert!(r.header("WWW-Authenticate").is_some());
    let r = api.call("GET", &path, &ingestor, None);
    assert_eq!((r.status, r.code()), (403, "forbidden".into()));
    let r = api.call("POST", &path, &writer, Some(&json!({})));
    assert_eq!((r.status, r.header("Allow")), (405, Some("GET")));

    // The same bytes through the MCP resource over SSE.
    let mut sse = Sse::open(api.addr, &reader);
    sse.initialize();
    let read = sse.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{id}/original")}),
    );
    let content = &read["result"]["contents"][0];
    assert_eq!(content["mimeType"], "application/pdf", "{read}");
    let blob = base64::decode(content["blob"].as_str().expect("a blob")).unwrap();
    assert!(blob == pdf, "the SSE original came back altered");
    sse.close();

    // Damage the stored bytes behind the server's back: the route reports
    // it and returns none of them.
    let _ = api.child.kill();
    let _ = api.child.wait();
    {
        let conn = rusqlite::Connection::open(dir.path().join("memory.db")).unwrap();
        let changed = conn
            .execute(
                "UPDATE originals SET bytes = CAST('%PDF-damaged' AS BLOB)",
                [],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    api = Api::start(dir.path(), &[]);
    let r = api.call("GET", &path, &reader, None);
    assert_eq!((r.status, r.code()), (503, "unavailable".into()));
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("is corrupted"), "{message}");
    assert!(!String::from_utf8_lossy(&r.body).contains("damaged"));
    assert!(!message.contains(dir.path().to_str().unwrap()), "{message}");
}

/// Closing an SSE stream does not cancel the work it started: an ingest
/// held in flight (its chunks waiting at the embedding server) when the
/// client disconnects is stored, exactly once, and a retry with the same
/// idempotency key finds it.
#[test]
fn an_sse_disconnect_does_not_cancel_an_in_flight_ingest() {
    use http_common::held_embedder::HeldEmbedder;
    let embedder = HeldEmbedder::start();
    let env = embedder.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let dir = TempDir::new("disconnect");
    let api = Api::start(dir.path(), &env);
    let token = admin("agent", "acme");
    let mut sse = Sse::open(api.addr, &token);
    sse.initialize();
    let endpoint = sse.endpoint.clone();

    embedder.hold();
    let arguments = json!({"content": "The PELICAN survey counted nesting pairs on the spit.",
                           "idempotency_key": "pelican-survey", "wait": true});
    let ingest = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                        "params": {"name": "alayasiki_ingest", "arguments": arguments}});
    assert_eq!(sse.post(&ingest).status, 202);
    assert!(
        embedder.wait_for_held_text("PELICAN", TIMEOUT),
        "the ingest never reached the embedder"
    );
    sse.close();
    embedder.release();

    // The session is gone (a posted message reveals the closed socket; its
    // id then answers 404), and the ingest completed regardless.
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let r = request(
            api.addr,
            "POST",
            &endpoint,
            &headers,
            Some(ping.to_string().as_bytes()),
        );
        if r.status == 404 {
            break;
        }
        assert_eq!(r.status, 202);
        assert!(
            std::time::Instant::now() < deadline,
            "the session outlived its stream"
        );
        std::thread::sleep(StdDuration::from_millis(100));
    }
    let deadline = std::time::Instant::now() + TIMEOUT;
    let status = loop {
        let status = api.call("GET", "/v1/status", &token, None).json();
        if status["jobs"]["pending"] == 0 && status["documents"] == 1 {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(StdDuration::from_millis(100));
    };
    assert_eq!(status["documents"], 1, "{status}");
    let retry = api
        .call("POST", "/v1/ingest", &token, Some(&arguments))
        .json();
    assert_eq!(retry["idempotent_replay"], true, "{retry}");
    let id = retry["document_id"].as_str().unwrap().to_string();
    assert_eq!(retry["state"], "ready", "{retry}");
    let q = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "PELICAN survey"})),
    );
    let evidence = q.json()["evidence"].clone();
    assert_eq!(evidence[0]["document_id"], id.as_str(), "{evidence}");
    assert_eq!(
        api.call("GET", "/v1/status", &token, None).json()["documents"],
        1
    );
}
