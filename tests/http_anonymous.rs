//! The read-only anonymous caller, through the real `alayasiki-api`: off
//! by default (a request without a token is 401 as ever); with
//! `ALAYASIKI_ANONYMOUS_SCOPE` and `ALAYASIKI_ANONYMOUS_TENANT`, a request
//! that sends no `Authorization` header reads the documents of that one
//! scope and nothing else, over the JSON API and MCP alike, while every
//! writing tool and route (and working memory) refuses it with the way
//! out, and a bad token is still refused rather than downgraded.

mod http_common;

use http_common::{claims, request, sign, Api, Reply, TempDir};
use jwt_simple::prelude::{Clock, Duration};
use serde_json::{json, Value};

const TENANT: &str = "acme";
const PUBLIC: &str = "public";
const ANONYMOUS_ENV: [(&str, &str); 2] = [
    ("ALAYASIKI_ANONYMOUS_SCOPE", PUBLIC),
    ("ALAYASIKI_ANONYMOUS_TENANT", TENANT),
];

/// What every anonymous refusal says, so a model knows what to do.
const WAY_OUT: &str = "sign in (send an Authorization: Bearer token)";

/// A token of `sub` in `tenant`, with `memory_scopes` when given.
fn token(sub: &str, tenant: &str, roles: &[&str], memory_scopes: Option<Value>) -> String {
    let mut c = claims(sub, tenant, roles, "");
    if let Some(m) = memory_scopes {
        c.custom.insert("memory_scopes".into(), m);
    }
    sign(c)
}

/// A request without any `Authorization` header.
fn bare(api: &Api, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let mut headers = Vec::new();
    let bytes = body.map(|b| {
        headers.push(("Content-Type".to_string(), "application/json".to_string()));
        b.to_string().into_bytes()
    });
    request(api.addr, method, path, &headers, bytes.as_deref())
}

fn text(r: &Reply) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

/// A stateless (2026-07-28) MCP request to `/mcp`, with `authorization`
/// as the header's value when given.
fn mcp(api: &Api, authorization: Option<&str>, method: &str, mut params: Value) -> Reply {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut headers: Vec<(String, String)> = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ("Mcp-Method".into(), method.into()),
    ];
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        headers.push(("Mcp-Name".into(), name.into()));
    }
    if let Some(a) = authorization {
        headers.push(("Authorization".into(), a.into()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    request(
        api.addr,
        "POST",
        "/mcp",
        &headers,
        Some(body.to_string().as_bytes()),
    )
}

/// A tool call over MCP without credentials: (isError, its text).
fn anonymous_tool(api: &Api, name: &str, arguments: Value) -> (bool, String) {
    let r = mcp(
        api,
        None,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    assert_eq!(r.status, 200, "{name}: {}", text(&r));
    let v = r.json();
    let result = &v["result"];
    assert!(result.is_object(), "{name}: {v}");
    (
        result["isError"].as_bool().unwrap_or(false),
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn ingest(api: &Api, token: &str, body: Value) -> String {
    let mut body = body;
    body["wait"] = json!(true);
    let r = api.call("POST", "/v1/ingest", token, Some(&body));
    assert_eq!(r.status, 200, "{}", text(&r));
    let v = r.json();
    assert_eq!(v["state"], "ready", "{v}");
    v["document_id"].as_str().unwrap().to_string()
}

/// One stored document: the word a query finds it by, and a word only
/// its text holds.
struct Doc {
    text: &'static str,
    find: &'static str,
    secret: &'static str,
}

const OPEN: Doc = Doc {
    text: "The Zanzibar lighthouse opens to visitors at nine on Sundays.",
    find: "Zanzibar",
    secret: "Sundays",
};
const TEAM: Doc = Doc {
    text: "Globex Corp. hired Hank Scorpio at the Quixotic observatory.",
    find: "Quixotic",
    secret: "Scorpio",
};
const UNSCOPED: Doc = Doc {
    text: "Initech Corp. moved the Vermilion archive to Austin.",
    find: "Vermilion",
    secret: "Initech",
};
/// Written by a token whose `sub` is "anonymous", into a private scope.
const NAMESAKE: Doc = Doc {
    text: "Umbrella Corp. funds the Saffron clinic in Raccoon City.",
    find: "Saffron",
    secret: "Umbrella",
};
/// Another tenant's document in a scope of the same name.
const OTHER_TENANT: Doc = Doc {
    text: "Hooli Inc. keeps the Tangerine servers in Palo Alto.",
    find: "Tangerine",
    secret: "Hooli",
};

struct Fixture {
    _dir: TempDir,
    api: Api,
    admin: String,
    /// Ids of OPEN, TEAM, UNSCOPED, NAMESAKE, OTHER_TENANT.
    ids: [String; 5],
}

fn fixture(tag: &str) -> Fixture {
    let dir = TempDir::new(tag);
    let api = Api::start(dir.path(), &ANONYMOUS_ENV);
    let admin = token("root", TENANT, &["admin"], None);
    let namesake = token(
        "anonymous",
        TENANT,
        &["reader", "ingestor"],
        Some(json!(["team"])),
    );
    let other = token("root", "globex", &["admin"], None);
    let ids = [
        ingest(&api, &admin, json!({"content": OPEN.text, "scope": PUBLIC})),
        ingest(&api, &admin, json!({"content": TEAM.text, "scope": "team"})),
        ingest(&api, &admin, json!({"content": UNSCOPED.text})),
        ingest(&api, &namesake, json!({"content": NAMESAKE.text})),
        ingest(
            &api,
            &other,
            json!({"content": OTHER_TENANT.text, "scope": PUBLIC}),
        ),
    ];
    Fixture {
        _dir: dir,
        api,
        admin,
        ids,
    }
}

#[test]
fn without_the_setting_a_request_without_a_token_is_refused() {
    let dir = TempDir::new("anon-off");
    let api = Api::start(dir.path(), &[]);
    for (method, path) in [("GET", "/v1/documents"), ("POST", "/v1/query")] {
        let r = bare(
            &api,
            method,
            path,
            Some(&json!({"query": "x"})).filter(|_| method == "POST"),
        );
        assert_eq!(r.status, 401, "{path}: {}", text(&r));
        assert!(r.header("WWW-Authenticate").is_some(), "{path}");
    }
    let r = mcp(&api, None, "tools/list", json!({}));
    assert_eq!(r.status, 401, "{}", text(&r));
}

#[test]
fn a_half_or_invalid_setting_stops_the_server_at_start_with_a_clear_error() {
    let dir = TempDir::new("anon-config");
    for (env, names) in [
        (
            vec![("ALAYASIKI_ANONYMOUS_SCOPE", PUBLIC)],
            "ALAYASIKI_ANONYMOUS_TENANT",
        ),
        (
            vec![("ALAYASIKI_ANONYMOUS_TENANT", TENANT)],
            "ALAYASIKI_ANONYMOUS_SCOPE",
        ),
        (
            vec![
                ("ALAYASIKI_ANONYMOUS_SCOPE", "Public Docs"),
                ("ALAYASIKI_ANONYMOUS_TENANT", TENANT),
            ],
            "ALAYASIKI_ANONYMOUS_SCOPE",
        ),
    ] {
        let Err((status, err)) = Api::try_start(dir.path(), &env) else {
            panic!("{env:?} started");
        };
        assert_eq!(status.and_then(|s| s.code()), Some(1), "{env:?}: {err}");
        assert!(err.contains(names), "{env:?}: {err}");
    }
}

#[test]
fn an_anonymous_caller_reads_only_the_public_scope_over_the_api_and_mcp() {
    let f = fixture("anon-reads");
    let api = &f.api;
    let [open, hidden @ ..] = &f.ids;
    let hidden_docs = [&TEAM, &UNSCOPED, &NAMESAKE, &OTHER_TENANT];
    let leaks = |what: &str, body: &str| {
        for (id, doc) in hidden.iter().zip(hidden_docs) {
            assert!(!body.contains(id.as_str()), "{what} names {id}: {body}");
            assert!(
                !body.contains(doc.secret),
                "{what} quotes {}: {body}",
                doc.secret
            );
        }
    };

    // The JSON API: the list, status, reads by id.
    let r = bare(api, "GET", "/v1/documents?limit=100", None);
    assert_eq!(r.status, 200, "{}", text(&r));
    let listed = r.json();
    let ids: Vec<&str> = listed["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["document_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [open.as_str()], "{listed}");
    let status = bare(api, "GET", "/v1/status", None).json();
    assert_eq!(status["documents"], 1, "{status}");
    for path in [
        format!("/v1/documents/{open}"),
        format!("/v1/documents/{open}/original"),
        format!("/v1/documents/{open}/chunks"),
    ] {
        assert_eq!(bare(api, "GET", &path, None).status, 200, "{path}");
    }
    for id in hidden {
        for path in [
            format!("/v1/documents/{id}"),
            format!("/v1/documents/{id}/original"),
            format!("/v1/documents/{id}/chunks"),
        ] {
            let r = bare(api, "GET", &path, None);
            assert_eq!(r.status, 404, "{path}: {}", text(&r));
        }
    }

    // Queries: the public document is found, the others neither found nor
    // quoted, in every mode.
    for doc in [&OPEN, &TEAM, &UNSCOPED, &NAMESAKE, &OTHER_TENANT] {
        for (search_mode, mode) in [
            ("auto", "evidence"),
            ("global", "evidence"),
            ("drift", "answer"),
        ] {
            let q = json!({"query": format!("What is at the {}?", doc.find),
                           "search_mode": search_mode, "mode": mode});
            let r = bare(api, "POST", "/v1/query", Some(&q));
            assert_eq!(r.status, 200, "{q}: {}", text(&r));
            leaks(&format!("query {q}"), &text(&r));
        }
    }
    let q = json!({"query": "When does the Zanzibar lighthouse open?"});
    let body = text(&bare(api, "POST", "/v1/query", Some(&q)));
    assert!(body.contains(open.as_str()), "{body}");

    // The graph.
    let r = bare(api, "GET", "/v1/entities?limit=200", None);
    assert_eq!(r.status, 200, "{}", text(&r));
    leaks("entities", &text(&r));
    for path in ["/v1/graph", "/v1/communities"] {
        let r = bare(api, "GET", path, None);
        assert_eq!(r.status, 200, "{path}: {}", text(&r));
        leaks(path, &text(&r));
    }

    // MCP at /mcp: the tool list, a query, a read of the public document;
    // the others read as unknown.
    let r = mcp(api, None, "tools/list", json!({}));
    assert_eq!(r.status, 200, "{}", text(&r));
    assert!(r.json()["result"]["tools"].as_array().unwrap().len() > 2);
    let (is_error, body) = anonymous_tool(
        api,
        "alayasiki_query",
        json!({"query": "When does the Zanzibar lighthouse open?"}),
    );
    assert!(!is_error, "{body}");
    assert!(
        body.contains(open.as_str()) && body.contains("Zanzibar"),
        "{body}"
    );
    for doc in [&TEAM, &UNSCOPED, &NAMESAKE, &OTHER_TENANT] {
        let (_, body) = anonymous_tool(
            api,
            "alayasiki_query",
            json!({"query": format!("What is at the {}?", doc.find)}),
        );
        leaks("MCP query", &body);
    }
    let read = |id: &str| {
        let uri = format!("alayasiki://documents/{id}");
        mcp(api, None, "resources/read", json!({"uri": uri})).json()
    };
    let v = read(open);
    assert!(v["result"]["contents"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("Zanzibar")));
    for id in hidden {
        let v = read(id);
        // (The error echoes the URI asked for; nothing more.)
        assert!(v["error"].is_object(), "{id}: {v}");
        assert_eq!(v["error"]["message"], "resource not found", "{id}: {v}");
    }
    let v = mcp(api, None, "resources/list", json!({})).json();
    leaks("resources/list", &v.to_string());
}

#[test]
fn every_writing_tool_and_route_refuses_the_anonymous_caller_with_the_way_out() {
    let f = fixture("anon-writes");
    let api = &f.api;
    let open = &f.ids[0];
    let count = || {
        api.call("GET", "/v1/status", &f.admin, None).json()["documents"]
            .as_i64()
            .unwrap()
    };
    let before = count();

    // Routes: 401 with a challenge a client can sign in from, and the
    // refusal in the body.
    let doc = format!("/v1/documents/{open}");
    let routes: Vec<(&str, &str, Option<Value>)> = vec![
        ("POST", "/v1/ingest", Some(json!({"content": "mine now"}))),
        (
            "POST",
            "/v1/tools/alayasiki_ingest",
            Some(json!({"content": "x"})),
        ),
        (
            "POST",
            "/v1/tools/alayasiki_update",
            Some(json!({"document_id": open, "title": "t"})),
        ),
        (
            "POST",
            "/v1/tools/alayasiki_forget",
            Some(json!({"document_id": open})),
        ),
        (
            "POST",
            "/v1/share",
            Some(json!({"document_ids": [open], "scope": PUBLIC})),
        ),
        (
            "POST",
            "/v1/memory/write",
            Some(json!({"session_id": "s1", "content": "x"})),
        ),
        ("POST", "/v1/memory/read", Some(json!({"session_id": "s1"}))),
        (
            "POST",
            "/v1/tools/alayasiki_memory_promote",
            Some(json!({"session_id": "s1"})),
        ),
        (
            "POST",
            "/v1/tools/alayasiki_memory_delete",
            Some(json!({"session_id": "s1"})),
        ),
        ("POST", "/v1/compact", None),
        (
            "POST",
            "/v1/uploads",
            Some(json!({"upload": {"filename": "a.md",
                                   "size": 3, "sha256": "0".repeat(64)}})),
        ),
        ("DELETE", &doc, None),
        ("PATCH", &doc, Some(json!({"title": "t"}))),
        ("GET", "/v1/sessions", None),
        ("GET", "/v1/sessions/s1", None),
        ("DELETE", "/v1/sessions/s1", None),
    ];
    for (method, path, body) in &routes {
        let r = bare(api, method, path, body.as_ref());
        assert_eq!(r.status, 401, "{method} {path}: {}", text(&r));
        let challenge = r.header("WWW-Authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer ") && challenge.contains("resource_metadata="),
            "{method} {path}: {challenge}"
        );
        let v = r.json();
        assert_eq!(v["error"]["code"], "unauthorized", "{method} {path}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("anonymous") && message.contains(WAY_OUT),
            "{method} {path}: {message}"
        );
    }

    // MCP: each writing tool, and working memory, is a tool error the
    // model can read.
    for (tool, args) in [
        ("alayasiki_ingest", json!({"content": "mine now"})),
        (
            "alayasiki_ingest",
            json!({"upload": {"filename": "a.md",
                              "size": 3, "sha256": "0".repeat(64)}}),
        ),
        (
            "alayasiki_update",
            json!({"document_id": open, "title": "t"}),
        ),
        ("alayasiki_forget", json!({"document_id": open})),
        (
            "alayasiki_share",
            json!({"document_ids": [open], "scope": PUBLIC}),
        ),
        (
            "alayasiki_memory_write",
            json!({"session_id": "s1", "content": "x"}),
        ),
        ("alayasiki_memory_read", json!({"session_id": "s1"})),
        ("alayasiki_memory_promote", json!({"session_id": "s1"})),
        ("alayasiki_memory_delete", json!({"session_id": "s1"})),
        (
            "alayasiki_query",
            json!({"query": "Zanzibar", "session_id": "s1"}),
        ),
    ] {
        let (is_error, body) = anonymous_tool(api, tool, args.clone());
        assert!(is_error, "{tool} {args}: {body}");
        assert!(
            body.contains("anonymous") && body.contains(WAY_OUT),
            "{tool} {args}: {body}"
        );
    }
    let v = mcp(
        api,
        None,
        "resources/read",
        json!({"uri": "alayasiki://sessions/s1"}),
    )
    .json();
    assert!(v["error"].is_object(), "{v}");

    // Nothing was stored, changed or forgotten.
    assert_eq!(count(), before);
    let r = api.call("GET", &doc, &f.admin, None);
    assert_eq!(r.status, 200);
    assert_ne!(r.json()["title"], "t");

    // A token that is bad in any way is refused, never read as anonymous.
    let mut expired = claims("root", TENANT, &["admin"], "");
    expired.expires_at = Some(Clock::now_since_epoch() - Duration::from_mins(10));
    expired.issued_at = Some(Clock::now_since_epoch() - Duration::from_mins(20));
    let expired = format!("Bearer {}", sign(expired));
    for authorization in [
        "Bearer not.a.token",
        expired.as_str(),
        "Basic cm9vdDpyb290",
        "Bearer ",
    ] {
        let headers = vec![("Authorization".to_string(), authorization.to_string())];
        let r = request(api.addr, "GET", "/v1/documents", &headers, None);
        assert_eq!(r.status, 401, "{authorization}: {}", text(&r));
        let r = mcp(api, Some(authorization), "tools/list", json!({}));
        assert_eq!(r.status, 401, "{authorization}: {}", text(&r));
    }
}
