//! `alayasiki-api` as an OAuth 2.1 resource server (MCP authorization,
//! revisions 2025-06-18 to 2026-07-28): protected resource metadata
//! (RFC 9728), `WWW-Authenticate` challenges (RFC 6750), audience binding
//! (RFC 8707), and keys from a JWKS file or URL with rotation and a bound
//! on reloads. Tokens are real JWTs signed with RSA, P-256 and Ed25519 keys
//! generated here; the JWKS URL is served by a small server in the test
//! that counts its requests.

mod http_common;

use http_common::{request, Api, Reply, Sse, TempDir};
use jwt_simple::prelude::*;
use serde_json::{json, Map, Value};
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use alayasiki_mcp::transport::jwks::JWKS_MIN_REFRESH_INTERVAL;

const RESOURCE: &str = "https://mcp.example.test/mcp";
const ISSUER: &str = "https://auth.example.test";
/// RFC 9728 §3.1: the well-known path between the host and the path.
const METADATA_URL: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";
const BASIC_SCOPES: &str = "query:execute ingest:write";
const LACKS: &str = "this token lacks the scope or role this request needs";

/// A signing key and its public JWK.
enum Signer {
    Rs(Box<RS256KeyPair>),
    Es(ES256KeyPair),
    Ed(Ed25519KeyPair),
}

impl Signer {
    fn rs(kid: &str) -> Signer {
        Signer::Rs(Box::new(
            RS256KeyPair::generate(2048).unwrap().with_key_id(kid),
        ))
    }

    fn es(kid: &str) -> Signer {
        Signer::Es(ES256KeyPair::generate().with_key_id(kid))
    }

    fn ed(kid: &str) -> Signer {
        Signer::Ed(Ed25519KeyPair::generate().with_key_id(kid))
    }

    /// The same key signing tokens without a `kid`.
    fn without_kid(&self) -> Signer {
        match self {
            Signer::Rs(k) => Signer::Rs(Box::new(
                RS256KeyPair::from_der(&k.to_der().unwrap()).unwrap(),
            )),
            Signer::Es(k) => Signer::Es(ES256KeyPair::from_bytes(&k.to_bytes()).unwrap()),
            Signer::Ed(k) => Signer::Ed(Ed25519KeyPair::from_bytes(&k.to_bytes()).unwrap()),
        }
    }

    /// Another key signing with this one's `kid`.
    fn impostor(&self, kid: &str) -> Signer {
        match self {
            Signer::Rs(_) => Signer::rs(kid),
            Signer::Es(_) => Signer::es(kid),
            Signer::Ed(_) => Signer::ed(kid),
        }
    }

    fn jwk(&self) -> String {
        match self {
            Signer::Rs(k) => k.public_key().to_jwk(),
            Signer::Es(k) => k.public_key().to_jwk(),
            Signer::Ed(k) => k.public_key().to_jwk(),
        }
    }

    fn sign(&self, claims: JWTClaims<Map<String, Value>>) -> String {
        match self {
            Signer::Rs(k) => k.sign(claims),
            Signer::Es(k) => k.sign(claims),
            Signer::Ed(k) => k.sign(claims),
        }
        .unwrap()
    }

    /// A token of this server's issuer and audience.
    fn token(&self, roles: &[&str], scope: &str) -> String {
        self.sign(claims(roles, scope))
    }
}

fn jwks(keys: &[&Signer]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| k.jwk()).collect();
    format!("{{\"keys\": [{}]}}", keys.join(","))
}

/// Claims from this server's issuer for its resource, valid five minutes.
fn claims(roles: &[&str], scope: &str) -> JWTClaims<Map<String, Value>> {
    let mut custom = Map::new();
    custom.insert("tenant".into(), json!("acme"));
    custom.insert("roles".into(), json!(roles));
    if !scope.is_empty() {
        custom.insert("scope".into(), json!(scope));
    }
    Claims::with_custom_claims(custom, Duration::from_mins(5))
        .with_subject("agent")
        .with_issuer(ISSUER)
        .with_audience(RESOURCE)
}

/// Starts the server with keys from `keys` (a JWKS source variable and its
/// value), this test's resource and authorization server, and `extra`.
fn start(dir: &TempDir, keys: (&str, &str), extra: &[(&str, &str)]) -> Api {
    let mut env = base_env();
    env.push(keys);
    env.extend_from_slice(extra);
    Api::start(dir.path(), &env)
}

/// The harness's defaults (an HS256 secret, its issuer and audience)
/// replaced by this test's resource and authorization server.
fn base_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("ALAYASIKI_JWT_SECRET", ""),
        ("ALAYASIKI_JWT_ISSUER", ""),
        ("ALAYASIKI_JWT_AUDIENCE", ""),
        ("ALAYASIKI_JWKS_FILE", ""),
        ("ALAYASIKI_JWKS_URL", ""),
        ("ALAYASIKI_RESOURCE", RESOURCE),
        ("ALAYASIKI_AUTHORIZATION_SERVERS", ISSUER),
    ]
}

fn write_jwks(dir: &TempDir, doc: &str) -> String {
    let path = dir.path().join("jwks.json");
    std::fs::write(&path, doc).unwrap();
    path.to_str().unwrap().to_string()
}

fn get(api: &Api, path: &str, token: Option<&str>) -> Reply {
    let headers: Vec<(String, String)> = token
        .map(|t| vec![("Authorization".to_string(), format!("Bearer {t}"))])
        .unwrap_or_default();
    request(api.addr, "GET", path, &headers, None)
}

/// The challenge of a 401 for an invalid token.
fn invalid_token(description: &str, scope: &str) -> String {
    format!(
        "Bearer resource_metadata=\"{METADATA_URL}\", error=\"invalid_token\", \
         error_description=\"{description}\", scope=\"{scope}\""
    )
}

fn insufficient_scope(scope: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", \
         resource_metadata=\"{METADATA_URL}\", error_description=\"{LACKS}\""
    )
}

fn assert_refused(r: &Reply, status: u16, challenge: &str, case: &str) {
    assert_eq!(
        r.status,
        status,
        "{case}: {}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.header("WWW-Authenticate"), Some(challenge), "{case}");
}

/// A JWKS endpoint serving what it is given and counting its requests.
struct JwksServer {
    addr: SocketAddr,
    doc: Arc<Mutex<String>>,
    fetches: Arc<AtomicUsize>,
}

impl JwksServer {
    fn start(doc: String) -> JwksServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let doc = Arc::new(Mutex::new(doc));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (served, count) = (doc.clone(), fetches.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                if !head.starts_with(b"GET /jwks ") {
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    continue;
                }
                count.fetch_add(1, Ordering::SeqCst);
                let body = served.lock().unwrap().clone();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        JwksServer { addr, doc, fetches }
    }

    fn url(&self) -> String {
        format!("http://{}/jwks", self.addr)
    }

    fn serve(&self, doc: String) {
        *self.doc.lock().unwrap() = doc;
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

fn random_kid() -> String {
    let n = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("forged-{n:016x}")
}

#[test]
fn metadata_is_served_at_both_paths_without_a_token() {
    let dir = TempDir::new("oauth-prm");
    let key = Signer::es("k1");
    let api = start(
        &dir,
        ("ALAYASIKI_JWKS_FILE", &write_jwks(&dir, &jwks(&[&key]))),
        &[],
    );
    let expected = json!({
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["query:execute", "ingest:write", "admin:*"],
        "bearer_methods_supported": ["header"],
    });
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = get(&api, path, None);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.json(), expected, "{path}");
        assert_eq!(r.header("Content-Type"), Some("application/json"));
        assert_eq!(r.header("Cache-Control"), Some("public, max-age=3600"));
        assert_eq!(r.header("Vary"), None);
        // A token is not needed, and a bad one changes nothing.
        assert_eq!(get(&api, path, Some("garbage")).json(), expected);
    }
    assert_eq!(
        get(&api, "/.well-known/oauth-protected-resource/other", None).status,
        404
    );
    let post = request(
        api.addr,
        "POST",
        "/.well-known/oauth-protected-resource",
        &[],
        Some(b"{}"),
    );
    assert_eq!(post.status, 405);
    assert_eq!(post.header("Allow"), Some("GET"));
}

#[test]
fn metadata_of_an_unconfigured_server_names_it_by_its_host() {
    let dir = TempDir::new("oauth-prm-host");
    // The harness's HS256 server: no resource identifier, no authorization
    // server; a proxy's name is allowed as Host.
    let api = Api::start(dir.path(), &[("ALAYASIKI_API_ALLOWED_HOSTS", "proxy.test")]);
    let host = api.host();
    let r = get(&api, "/.well-known/oauth-protected-resource/mcp", None);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({
            "resource": format!("http://{host}"),
            "scopes_supported": ["query:execute", "ingest:write", "admin:*"],
            "bearer_methods_supported": ["header"],
        })
    );
    assert_eq!(r.header("Vary"), Some("Host"));
    let named = |h: &str, path: &str| {
        request(
            api.addr,
            "GET",
            path,
            &[("Host".to_string(), h.to_string())],
            None,
        )
    };
    let port = api.addr.port();
    let r = named(
        &format!("localhost:{port}"),
        "/.well-known/oauth-protected-resource",
    );
    assert_eq!(
        r.json()["resource"],
        json!(format!("http://localhost:{port}"))
    );
    let r = named(&format!("localhost:{port}"), "/v1/status");
    assert_eq!(
        r.header("WWW-Authenticate"),
        Some(
            format!(
                "Bearer resource_metadata=\"http://localhost:{port}/.well-known/\
                 oauth-protected-resource\", scope=\"query:execute\""
            )
            .as_str()
        )
    );
    // A Host the allow-list accepts by name but that is not host[:port]
    // never makes it into a URL.
    let odd = "proxy.test:1\"/evil";
    assert_eq!(
        named(odd, "/.well-known/oauth-protected-resource").status,
        400
    );
    let r = named(odd, "/mcp");
    assert_eq!(r.status, 401);
    assert_eq!(
        r.header("WWW-Authenticate"),
        Some("Bearer scope=\"query:execute ingest:write\"")
    );
}

#[test]
fn bad_tokens_get_401_with_the_exact_challenge() {
    let dir = TempDir::new("oauth-401");
    let key = Signer::es("k1");
    let api = start(
        &dir,
        ("ALAYASIKI_JWKS_FILE", &write_jwks(&dir, &jwks(&[&key]))),
        &[],
    );
    let good = key.token(&[], "query:execute ingest:write");
    assert_eq!(get(&api, "/v1/status", Some(&good)).status, 200);

    // No credentials: no error code (RFC 6750 §3.1), but where to get some.
    let missing = format!("Bearer resource_metadata=\"{METADATA_URL}\", scope=\"{BASIC_SCOPES}\"");
    let r = request(api.addr, "POST", "/mcp", &[], Some(b"{}"));
    assert_refused(&r, 401, &missing, "no token on /mcp");
    assert_eq!(r.code(), "unauthorized");
    let basic = [(
        "Authorization".to_string(),
        "Basic dXNlcjpwYXNz".to_string(),
    )];
    let r = request(api.addr, "GET", "/v1/tools", &basic, None);
    assert_refused(&r, 401, &missing, "Basic credentials");
    // The scope named is what the route needs.
    let r = get(&api, "/v1/status", None);
    assert_refused(
        &r,
        401,
        &format!("Bearer resource_metadata=\"{METADATA_URL}\", scope=\"query:execute\""),
        "no token on /v1/status",
    );

    let expired = key.sign({
        let mut c = claims(&["admin"], "");
        c.issued_at = Some(Clock::now_since_epoch() - Duration::from_mins(20));
        c.expires_at = Some(Clock::now_since_epoch() - Duration::from_mins(10));
        c
    });
    let other_audience =
        key.sign(claims(&["admin"], "").with_audience("https://other.example/mcp"));
    let no_audience = key.sign({
        let mut c = claims(&["admin"], "");
        c.audiences = None;
        c
    });
    let other_issuer = key.sign(claims(&["admin"], "").with_issuer("https://evil.example"));
    let impostor = key.impostor("k1").token(&["admin"], "");
    let unknown_kid = key.impostor("k2").token(&["admin"], "");
    let hs256 = HS256Key::from_bytes(&[7u8; 32])
        .authenticate(claims(&["admin"], ""))
        .unwrap();
    let cases = [
        (
            "garbage",
            "not.a.jwt".to_string(),
            "token malformed or invalid",
        ),
        ("expired", expired, "token expired"),
        (
            "other audience",
            other_audience,
            "token audience is not this server",
        ),
        (
            "no audience",
            no_audience,
            "token audience is not this server",
        ),
        ("other issuer", other_issuer, "token issuer not accepted"),
        ("impostor key", impostor, "token signature invalid"),
        ("unknown kid", unknown_kid, "token signed by an unknown key"),
        ("HS256", hs256, "token algorithm not accepted"),
    ];
    for (case, token, description) in cases {
        let r = get(&api, "/v1/status", Some(&token));
        assert_refused(&r, 401, &invalid_token(description, "query:execute"), case);
        assert_eq!(r.code(), "unauthorized", "{case}");
        assert_eq!(r.json()["error"]["message"], json!(description), "{case}");
        let headers = [("Authorization".to_string(), format!("Bearer {token}"))];
        let r = request(api.addr, "POST", "/mcp", &headers, Some(b"{}"));
        assert_refused(&r, 401, &invalid_token(description, BASIC_SCOPES), case);
        assert!(
            !String::from_utf8_lossy(&r.body).contains(&token),
            "{case}: token echoed"
        );
    }
}

#[test]
fn valid_tokens_lacking_a_scope_get_403_insufficient_scope() {
    let dir = TempDir::new("oauth-403");
    let key = Signer::rs("r1");
    let api = start(
        &dir,
        ("ALAYASIKI_JWKS_FILE", &write_jwks(&dir, &jwks(&[&key]))),
        &[],
    );
    let reader = key.token(&[], "query:execute");
    let writer = key.token(&[], "ingest:write");
    let nothing = key.token(&["wizard"], "profile:read");
    let ingest = json!({"content": "Scopes are checked before the body is read."});

    let r = api.call("POST", "/v1/ingest", &reader, Some(&ingest));
    assert_refused(
        &r,
        403,
        &insufficient_scope("ingest:write"),
        "reader ingests",
    );
    assert_eq!(r.code(), "forbidden");
    let r = api.call("POST", "/v1/tools/alayasiki_ingest", &reader, Some(&ingest));
    assert_refused(
        &r,
        403,
        &insufficient_scope("ingest:write"),
        "reader by name",
    );
    let r = api.call("GET", "/v1/documents/doc_x", &writer, None);
    assert_refused(
        &r,
        403,
        &insufficient_scope("query:execute"),
        "writer reads",
    );
    let r = api.call("GET", "/v1/status", &writer, None);
    assert_refused(
        &r,
        403,
        &insufficient_scope("query:execute"),
        "writer's status",
    );
    for (method, path) in [("POST", "/mcp"), ("GET", "/v1/tools"), ("GET", "/mcp/sse")] {
        let r = api.call(method, path, &nothing, None);
        assert_refused(&r, 403, &insufficient_scope(BASIC_SCOPES), path);
    }
    // Permitted calls pass.
    let r = api.call("POST", "/v1/ingest", &writer, Some(&ingest));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(api.call("GET", "/v1/status", &reader, None).status, 200);
    // Over MCP a tool the token may not call stays a tool error.
    let mut sse = Sse::open(api.addr, &reader);
    sse.initialize();
    let (is_error, text) = sse.call("alayasiki_ingest", ingest.clone());
    assert!(is_error);
    assert!(text.as_str().unwrap().starts_with("forbidden"), "{text}");
}

#[test]
fn a_jwks_file_verifies_rsa_ec_and_ed25519_keys() {
    let dir = TempDir::new("oauth-jwks-file");
    let (rs, es, ed) = (Signer::rs("r1"), Signer::es("e1"), Signer::ed("d1"));
    let api = start(
        &dir,
        (
            "ALAYASIKI_JWKS_FILE",
            &write_jwks(&dir, &jwks(&[&rs, &es, &ed])),
        ),
        &[],
    );
    for (name, signer) in [("RS256", &rs), ("ES256", &es), ("EdDSA", &ed)] {
        let r = get(&api, "/v1/status", Some(&signer.token(&["reader"], "")));
        assert_eq!(
            r.status,
            200,
            "{name}: {}",
            String::from_utf8_lossy(&r.body)
        );
        // Without a kid, every key of the token's algorithm is tried.
        let r = get(
            &api,
            "/v1/status",
            Some(&signer.without_kid().token(&["reader"], "")),
        );
        assert_eq!(r.status, 200, "{name} without kid");
        let stranger = signer.impostor("x").without_kid().token(&["reader"], "");
        let r = get(&api, "/v1/status", Some(&stranger));
        assert_refused(
            &r,
            401,
            &invalid_token("token signature invalid", "query:execute"),
            name,
        );
    }
    // A kid is matched together with the algorithm: an RSA token naming the
    // EC key's kid finds no key.
    let crossed = Signer::Rs(Box::new(
        RS256KeyPair::generate(2048).unwrap().with_key_id("e1"),
    ));
    let r = get(&api, "/v1/status", Some(&crossed.token(&["reader"], "")));
    assert_refused(
        &r,
        401,
        &invalid_token("token signed by an unknown key", "query:execute"),
        "crossed kid",
    );
}

#[test]
fn a_jwks_file_is_reloaded_for_a_rotated_key() {
    let dir = TempDir::new("oauth-jwks-file-rotation");
    let (a, b) = (Signer::es("a"), Signer::ed("b"));
    let path = write_jwks(&dir, &jwks(&[&a]));
    let api = start(&dir, ("ALAYASIKI_JWKS_FILE", &path), &[]);
    let token_a = a.token(&["reader"], "");
    assert_eq!(get(&api, "/v1/status", Some(&token_a)).status, 200);
    write_jwks(&dir, &jwks(&[&b]));
    assert_eq!(
        get(&api, "/v1/status", Some(&b.token(&["reader"], ""))).status,
        200
    );
    let r = get(&api, "/v1/status", Some(&token_a));
    assert_refused(
        &r,
        401,
        &invalid_token("token signed by an unknown key", "query:execute"),
        "removed key",
    );
}

#[test]
fn a_jwks_url_follows_key_rotation() {
    let dir = TempDir::new("oauth-jwks-url");
    let (a, b) = (Signer::rs("key-a"), Signer::es("key-b"));
    let server = JwksServer::start(jwks(&[&a]));
    let api = start(&dir, ("ALAYASIKI_JWKS_URL", &server.url()), &[]);
    assert_eq!(server.fetches(), 1, "loaded at start-up");
    let token_a = a.token(&["reader"], "");
    for _ in 0..3 {
        assert_eq!(get(&api, "/v1/status", Some(&token_a)).status, 200);
    }
    assert_eq!(server.fetches(), 1, "known keys need no fetch");

    // The issuer rotates: key A is replaced by key B.
    server.serve(jwks(&[&b]));
    let token_b = b.token(&["reader"], "");
    let r = get(&api, "/v1/status", Some(&token_b));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(server.fetches(), 2, "one reload for the new kid");
    assert_eq!(get(&api, "/v1/status", Some(&token_b)).status, 200);
    let r = get(&api, "/v1/status", Some(&token_a));
    assert_refused(
        &r,
        401,
        &invalid_token("token signed by an unknown key", "query:execute"),
        "removed key A",
    );
    assert_eq!(server.fetches(), 2);
}

#[test]
fn unknown_kids_cause_at_most_one_fetch_per_interval() {
    let dir = TempDir::new("oauth-jwks-bound");
    let (known, later) = (Signer::es("known"), Signer::es("later"));
    let server = JwksServer::start(jwks(&[&known]));
    let api = start(&dir, ("ALAYASIKI_JWKS_URL", &server.url()), &[]);
    assert_eq!(server.fetches(), 1);
    let good = known.token(&["reader"], "");
    let unknown = invalid_token("token signed by an unknown key", "query:execute");
    for i in 0..100 {
        let forged = Signer::es(&random_kid()).token(&["admin"], "");
        let r = get(&api, "/v1/status", Some(&forged));
        assert_refused(&r, 401, &unknown, &format!("forged kid {i}"));
        if i % 25 == 0 {
            assert_eq!(get(&api, "/v1/status", Some(&good)).status, 200);
        }
    }
    assert_eq!(
        server.fetches(),
        2,
        "100 unknown kids: the load at start-up and one reload"
    );

    // A key rotated in now waits for the interval to pass, then is taken.
    server.serve(jwks(&[&known, &later]));
    let token_later = later.token(&["reader"], "");
    let r = get(&api, "/v1/status", Some(&token_later));
    assert_refused(&r, 401, &unknown, "within the interval");
    assert_eq!(server.fetches(), 2);
    std::thread::sleep(JWKS_MIN_REFRESH_INTERVAL + std::time::Duration::from_secs(1));
    let r = get(&api, "/v1/status", Some(&token_later));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(server.fetches(), 3);
    for _ in 0..20 {
        let forged = Signer::es(&random_kid()).token(&["admin"], "");
        assert_eq!(get(&api, "/v1/status", Some(&forged)).status, 401);
    }
    assert_eq!(server.fetches(), 3);
}

#[test]
fn the_resource_binds_the_audience_beside_configured_audiences() {
    let dir = TempDir::new("oauth-audience");
    // The harness's HS256 server (issuer and audience configured) with a
    // resource identifier too: either audience is accepted, nothing else.
    let api = Api::start(dir.path(), &[("ALAYASIKI_RESOURCE", RESOURCE)]);
    let token = |aud: &str| {
        http_common::sign(http_common::claims("a", "acme", &["reader"], "").with_audience(aud))
    };
    assert_eq!(get(&api, "/v1/status", Some(&token(RESOURCE))).status, 200);
    let legacy = token(http_common::AUDIENCE);
    assert_eq!(get(&api, "/v1/status", Some(&legacy)).status, 200);
    let r = get(
        &api,
        "/v1/status",
        Some(&token("https://other.example/mcp")),
    );
    assert_refused(
        &r,
        401,
        &invalid_token("token audience is not this server", "query:execute"),
        "other audience",
    );
}

#[test]
fn tokens_in_query_strings_are_refused() {
    let dir = TempDir::new("oauth-query");
    let key = Signer::es("k1");
    let api = start(
        &dir,
        ("ALAYASIKI_JWKS_FILE", &write_jwks(&dir, &jwks(&[&key]))),
        &[],
    );
    let good = key.token(&["admin"], "");
    for (token, path) in [
        (None, format!("/v1/status?access_token={good}")),
        (
            Some(good.as_str()),
            format!("/v1/status?x=1&access_token={good}"),
        ),
        (None, format!("/mcp?access_token={good}")),
    ] {
        let r = get(&api, &path, token);
        assert_eq!(
            (r.status, r.code()),
            (400, "token_in_query".into()),
            "{path}"
        );
        assert!(!String::from_utf8_lossy(&r.body).contains(&good));
    }
    assert_eq!(get(&api, "/v1/status", Some(&good)).status, 200);
}

#[test]
fn unsafe_key_configurations_stop_the_start() {
    let dir = TempDir::new("oauth-config");
    let key = Signer::es("k1");
    let file = write_jwks(&dir, &jwks(&[&key]));
    let refused = |env: &[(&str, &str)], needle: &str| {
        let mut all = base_env();
        all.extend_from_slice(env);
        match Api::try_start(dir.path(), &all) {
            Ok(_) => panic!("started with {env:?}"),
            Err((status, err)) => {
                assert_eq!(status.and_then(|s| s.code()), Some(1), "{err}");
                assert!(err.contains(needle), "{env:?}: {err}");
            }
        }
    };
    // A JWKS without anything binding tokens to this server.
    refused(
        &[("ALAYASIKI_JWKS_FILE", &file), ("ALAYASIKI_RESOURCE", "")],
        "ALAYASIKI_RESOURCE",
    );
    refused(
        &[("ALAYASIKI_JWKS_URL", "http://auth.example.test/jwks")],
        "https",
    );
    refused(
        &[
            ("ALAYASIKI_JWKS_FILE", &file),
            ("ALAYASIKI_JWT_SECRET", "x".repeat(40).leak()),
        ],
        "exactly one",
    );
    refused(
        &[(
            "ALAYASIKI_JWKS_FILE",
            dir.path().join("none.json").to_str().unwrap(),
        )],
        "cannot load the JWKS",
    );
    refused(
        &[("ALAYASIKI_JWKS_FILE", &write_jwks(&dir, r#"{"keys": []}"#))],
        "no usable key",
    );
    let file = write_jwks(&dir, &jwks(&[&key]));
    refused(
        &[
            ("ALAYASIKI_JWKS_FILE", &file),
            ("ALAYASIKI_RESOURCE", "mcp.example.test"),
        ],
        "ALAYASIKI_RESOURCE",
    );
    refused(
        &[
            ("ALAYASIKI_JWKS_FILE", &file),
            (
                "ALAYASIKI_AUTHORIZATION_SERVERS",
                "http://auth.example.test",
            ),
        ],
        "ALAYASIKI_AUTHORIZATION_SERVERS",
    );
    // ALAYASIKI_JWT_AUDIENCE alone binds tokens too.
    let mut env = base_env();
    env.extend_from_slice(&[
        ("ALAYASIKI_JWKS_FILE", file.as_str()),
        ("ALAYASIKI_RESOURCE", ""),
        ("ALAYASIKI_JWT_AUDIENCE", "alayasiki"),
    ]);
    let api = Api::start(dir.path(), &env);
    let token = key.sign(claims(&["reader"], "").with_audience("alayasiki"));
    assert_eq!(get(&api, "/v1/status", Some(&token)).status, 200);
}
