//! The memory browser at `/ui` through the real `alayasiki-api`: the page
//! and its assets with their security headers, their embedded size, the
//! same-origin requests the page makes, and `GET /v1/documents` (the list
//! the page shows): authentication, limits, the `before` cursor, the source
//! filter and tenant isolation.

mod http_common;

use http_common::{admin, claims, request, sign, Api, TempDir};
use serde_json::{json, Value};

/// The page and every asset, with the media type each is served as.
const ASSETS: &[(&str, &str)] = &[
    ("/ui", "text/html; charset=utf-8"),
    ("/ui/", "text/html; charset=utf-8"),
    ("/ui/app.js", "text/javascript; charset=utf-8"),
    ("/ui/app.css", "text/css; charset=utf-8"),
];

/// The page's size budget (issue 24: under 300 KB).
const MAX_ASSET_BYTES: usize = 300 * 1000;

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

fn get(api: &Api, path: &str, headers: &[(&str, &str)]) -> http_common::Reply {
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    request(api.addr, "GET", path, &headers, None)
}

fn assert_security_headers(r: &http_common::Reply, path: &str) {
    assert_eq!(r.header("Content-Security-Policy"), Some(CSP), "{path}");
    assert_eq!(
        r.header("X-Content-Type-Options"),
        Some("nosniff"),
        "{path}"
    );
    assert_eq!(r.header("X-Frame-Options"), Some("DENY"), "{path}");
    assert_eq!(r.header("Referrer-Policy"), Some("no-referrer"), "{path}");
}

#[test]
fn the_page_and_its_assets_are_served_with_strict_headers_and_no_token() {
    let dir = TempDir::new("ui-assets");
    let api = Api::start(dir.path(), &[]);
    let mut total = 0;
    for (path, media_type) in ASSETS {
        let r = get(&api, path, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("Content-Type"), Some(*media_type), "{path}");
        assert_eq!(r.header("Cache-Control"), Some("no-cache"), "{path}");
        assert_security_headers(&r, path);
        if *path != "/ui/" {
            total += r.body.len();
        }
    }
    assert!(
        total > 0 && total <= MAX_ASSET_BYTES,
        "assets are {total} bytes"
    );
    eprintln!("memory browser assets: {total} bytes");

    let page = String::from_utf8(get(&api, "/ui", &[]).body).unwrap();
    assert!(page.contains(r#"<script src="/ui/app.js" defer></script>"#));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing external"
    );
    let script = String::from_utf8(get(&api, "/ui/app.js", &[]).body).unwrap();
    assert!(!script.contains("innerHTML") && !script.contains("outerHTML"));
    assert!(!script.contains("http://") && !script.contains("https://"));
    assert!(script.contains("sessionStorage") && !script.contains("localStorage"));
    assert!(!script.contains("document.cookie"));

    let missing = get(&api, "/ui/nope.js", &[]);
    assert_eq!(missing.status, 404);
    assert_security_headers(&missing, "/ui/nope.js");
    assert_eq!(get(&api, "/uix", &[]).status, 404);
    let post = request(api.addr, "POST", "/ui", &[], Some(b""));
    assert_eq!(post.status, 405);
}

#[test]
fn the_pages_same_origin_requests_pass_and_foreign_origins_do_not() {
    let dir = TempDir::new("ui-origin");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let same = format!("http://{}", api.addr);
    let headers = |origin: &str| {
        vec![
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Origin".to_string(), origin.to_string()),
        ]
    };
    let body = json!({"content": "same origin note", "wait": true}).to_string();
    let r = request(
        api.addr,
        "POST",
        "/v1/ingest",
        &headers(&same),
        Some(body.as_bytes()),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    for foreign in [
        "http://evil.example",
        &format!("{same}.evil.example"),
        "null",
    ] {
        let r = request(
            api.addr,
            "POST",
            "/v1/ingest",
            &headers(foreign),
            Some(body.as_bytes()),
        );
        assert_eq!(r.status, 403, "{foreign}");
        assert_eq!(r.code(), "origin_forbidden", "{foreign}");
    }
    // A rebinding page names its own host: the Host check still refuses it.
    let rebound = vec![
        ("Host".to_string(), "evil.example".to_string()),
        ("Origin".to_string(), "http://evil.example".to_string()),
        ("Authorization".to_string(), format!("Bearer {token}")),
    ];
    let r = request(api.addr, "GET", "/v1/status", &rebound, None);
    assert_eq!(r.status, 403);
    assert_eq!(r.code(), "host_forbidden");
}

fn ingest(api: &Api, token: &str, content: &str, source: &str) -> String {
    let r = api.call(
        "POST",
        "/v1/ingest",
        token,
        Some(&json!({"content": content, "source": source, "wait": true})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["document_id"].as_str().unwrap().to_string()
}

fn ids(v: &Value) -> Vec<String> {
    v["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["document_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn documents_are_listed_newest_first_by_page_source_and_tenant() {
    let dir = TempDir::new("ui-list");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let mut made = Vec::new();
    for i in 0..5 {
        let source = if i % 2 == 0 { "even.txt" } else { "odd.txt" };
        made.push(ingest(&api, &alice, &format!("note number {i}"), source));
    }
    let newest_first: Vec<String> = made.iter().rev().cloned().collect();

    let all = api.call("GET", "/v1/documents", &alice, None);
    assert_eq!(all.status, 200);
    assert_eq!(all.header("Cache-Control"), Some("no-store"));
    assert_eq!(ids(&all.json()), newest_first);
    assert_eq!(all.json()["next_before"], Value::Null);
    let first = &all.json()["documents"][0];
    assert_eq!(first["source"], "even.txt");
    assert_eq!(first["media_type"], "text/plain");
    assert!(first["created_at"].as_str().unwrap().ends_with('Z'));

    // Pages of two, following next_before.
    let mut seen = Vec::new();
    let mut path = "/v1/documents?limit=2".to_string();
    loop {
        let page = api.call("GET", &path, &alice, None).json();
        assert!(ids(&page).len() <= 2);
        seen.extend(ids(&page));
        match page["next_before"].as_i64() {
            Some(cursor) => path = format!("/v1/documents?limit=2&before={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, newest_first);

    let odd = api.call("GET", "/v1/documents?source=odd.txt", &alice, None);
    assert_eq!(ids(&odd.json()), vec![made[3].clone(), made[1].clone()]);
    let none = api.call("GET", "/v1/documents?source=odd%2Etxt%20", &alice, None);
    assert!(ids(&none.json()).is_empty());

    for bad in [
        "limit=0",
        "limit=201",
        "limit=two",
        "before=0",
        "before=x",
        "sort=old",
    ] {
        let r = api.call("GET", &format!("/v1/documents?{bad}"), &alice, None);
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.code(), "invalid_input", "{bad}");
    }
    let r = api.call(
        "GET",
        &format!("/v1/documents?source={}", "s".repeat(1025)),
        &alice,
        None,
    );
    assert_eq!(r.status, 400);

    // Another tenant sees none of it, nor by cursor.
    let bob = admin("bob", "globex");
    assert!(ids(&api.call("GET", "/v1/documents", &bob, None).json()).is_empty());
    let cursor = api
        .call("GET", "/v1/documents?limit=1", &alice, None)
        .json()["next_before"]
        .as_i64()
        .unwrap();
    let r = api.call(
        "GET",
        &format!("/v1/documents?before={}", cursor + 10),
        &bob,
        None,
    );
    assert!(ids(&r.json()).is_empty());
    let theirs = ingest(&api, &bob, "globex only", "even.txt");
    assert_eq!(
        ids(&api.call("GET", "/v1/documents", &bob, None).json()),
        vec![theirs.clone()]
    );
    assert!(!ids(&api.call("GET", "/v1/documents", &alice, None).json()).contains(&theirs));

    // Authentication and permission.
    let r = request(api.addr, "GET", "/v1/documents", &[], None);
    assert_eq!(r.status, 401);
    let reader = sign(claims("rita", "acme", &["reader"], ""));
    assert_eq!(
        ids(&api.call("GET", "/v1/documents", &reader, None).json()),
        newest_first
    );
    let writer = sign(claims("ingo", "acme", &["ingestor"], ""));
    let r = api.call("GET", "/v1/documents", &writer, None);
    assert_eq!(r.status, 403);
    assert_eq!(
        api.call("DELETE", "/v1/documents", &alice, None).status,
        405
    );

    // A forgotten document leaves the list.
    let r = api.call(
        "DELETE",
        &format!("/v1/documents/{}", made[4]),
        &alice,
        None,
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        ids(&api
            .call("GET", "/v1/documents?limit=1", &alice, None)
            .json()),
        vec![made[3].clone()]
    );
}
