//! Memory scopes within a tenant, through the real `alayasiki-api` with
//! real HS256 tokens: callers A (`team-a`), B (`team-b`), C (`team-a:read`)
//! and U (no `memory_scopes` claim: the whole tenant), each against every
//! route that returns or changes memory. Each caller sees exactly the
//! documents of its scopes and those it wrote; an unseen document reads
//! like an unknown one everywhere (lists, reads, originals, chunks, every
//! query mode, entities, the graph, communities, status counts), cannot be
//! forgotten, updated or shared, and is never named as a duplicate.

mod http_common;

use http_common::{claims, sign, Api, TempDir};
use serde_json::{json, Value};

const TENANT: &str = "acme";

/// A token of `sub` in [`TENANT`] with `roles` and, when given, the
/// `memory_scopes` claim.
fn token(sub: &str, roles: &[&str], memory_scopes: Option<Value>) -> String {
    let mut c = claims(sub, TENANT, roles, "");
    if let Some(m) = memory_scopes {
        c.custom.insert("memory_scopes".into(), m);
    }
    sign(c)
}

/// One stored document: who stores it (and into which scope), the word a
/// query finds it by, and a word only its text holds.
struct Doc {
    text: &'static str,
    find: &'static str,
    secret: &'static str,
}

const ALPHA: Doc = Doc {
    text: "Acme Corp. acquired Widgets Inc. near the Zanzibar lighthouse.",
    find: "Zanzibar",
    secret: "Widgets",
};
const BRAVO: Doc = Doc {
    text: "Globex Corp. hired Hank Scorpio at the Quixotic observatory.",
    find: "Quixotic",
    secret: "Scorpio",
};
const UNSCOPED: Doc = Doc {
    text: "Initech Corp. moved the Vermilion archive to Austin.",
    find: "Vermilion",
    secret: "Initech",
};
const SHARED_A: Doc = Doc {
    text: "Umbrella Corp. funds the Saffron clinic in Raccoon City.",
    find: "Saffron",
    secret: "Umbrella",
};

fn ingest(api: &Api, token: &str, body: Value) -> Value {
    let mut body = body;
    body["wait"] = json!(true);
    let r = api.call("POST", "/v1/ingest", token, Some(&body));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

fn text_of(
    api: &Api,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> (u16, String) {
    let r = api.call(method, path, token, body);
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

struct Fixture {
    _dir: TempDir,
    api: Api,
    a: String,
    b: String,
    c: String,
    u: String,
    /// Document ids of ALPHA, BRAVO, UNSCOPED, SHARED_A.
    ids: [String; 4],
}

fn fixture(tag: &str) -> Fixture {
    let dir = TempDir::new(tag);
    let api = Api::start(dir.path(), &[]);
    let writer = &["reader", "ingestor"];
    let a = token("alice", writer, Some(json!(["team-a"])));
    let b = token("bob", writer, Some(json!("team-b")));
    let c = token("carol", writer, Some(json!(["team-a:read"])));
    let u = token("root", &["admin"], None);
    let alpha = ingest(&api, &a, json!({"content": ALPHA.text}));
    let bravo = ingest(&api, &b, json!({"content": BRAVO.text}));
    let unscoped = ingest(&api, &u, json!({"content": UNSCOPED.text}));
    let shared = ingest(
        &api,
        &u,
        json!({"content": SHARED_A.text, "scope": "team-a"}),
    );
    let ids = [alpha, bravo, unscoped, shared].map(|r| {
        assert_eq!(r["state"], "ready", "{r}");
        r["document_id"].as_str().unwrap().to_string()
    });
    Fixture {
        _dir: dir,
        api,
        a,
        b,
        c,
        u,
        ids,
    }
}

const DOCS: [&Doc; 4] = [&ALPHA, &BRAVO, &UNSCOPED, &SHARED_A];

#[test]
fn each_caller_sees_exactly_its_scopes_and_its_own_documents_on_every_route() {
    let f = fixture("scopes-matrix");
    let api = &f.api;
    // Which of DOCS each caller sees.
    let callers: [(&str, &str, [bool; 4]); 4] = [
        ("A", &f.a, [true, false, false, true]),
        ("B", &f.b, [false, true, false, false]),
        ("C", &f.c, [true, false, false, true]),
        ("U", &f.u, [true, true, true, true]),
    ];
    for (name, tok, sees) in callers {
        let seen_ids: Vec<&String> = f
            .ids
            .iter()
            .zip(sees)
            .filter(|(_, s)| *s)
            .map(|(i, _)| i)
            .collect();
        let hidden: Vec<(&String, &Doc)> = f
            .ids
            .iter()
            .zip(DOCS)
            .zip(sees)
            .filter(|(_, s)| !*s)
            .map(|(d, _)| d)
            .collect();
        let leaks = |what: &str, body: &str| {
            for (id, doc) in &hidden {
                assert!(
                    !body.contains(id.as_str()),
                    "{name} {what} names {id}: {body}"
                );
                assert!(
                    !body.contains(doc.secret),
                    "{name} {what} quotes {}: {body}",
                    doc.secret
                );
            }
        };

        // The document list and status counts.
        let (status, body) = text_of(api, "GET", "/v1/documents?limit=100", tok, None);
        assert_eq!(status, 200, "{name}: {body}");
        let listed: Value = serde_json::from_str(&body).unwrap();
        let mut got: Vec<String> = listed["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["document_id"].as_str().unwrap().to_string())
            .collect();
        got.sort();
        let mut want: Vec<String> = seen_ids.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(got, want, "{name}: {body}");
        assert_eq!(listed["total"], want.len(), "{name}: {body}");
        let (_, body) = text_of(api, "GET", "/v1/status", tok, None);
        let status: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(status["documents"], want.len(), "{name}: {body}");
        assert_eq!(status["chunks"], want.len(), "{name}: {body}");

        // Reads by id: a document, its original, its chunks.
        for ((id, doc), seen) in f.ids.iter().zip(DOCS).zip(sees) {
            for path in [
                format!("/v1/documents/{id}"),
                format!("/v1/documents/{id}/original"),
                format!("/v1/documents/{id}/chunks"),
            ] {
                let (status, body) = text_of(api, "GET", &path, tok, None);
                if seen {
                    assert_eq!(status, 200, "{name} {path}: {body}");
                } else {
                    assert_eq!(status, 404, "{name} {path}: {body}");
                    assert!(!body.contains(doc.secret), "{name} {path}: {body}");
                }
            }
        }

        // Every query mode: a seen document is found by its word, an
        // unseen one is neither found nor quoted.
        for doc in DOCS {
            for (search_mode, mode) in [
                ("auto", "evidence"),
                ("local", "evidence"),
                ("global", "evidence"),
                ("drift", "answer"),
                ("auto", "answer"),
            ] {
                let q = json!({"query": format!("What is at the {}?", doc.find),
                               "search_mode": search_mode, "mode": mode});
                let (status, body) = text_of(api, "POST", "/v1/query", tok, Some(&q));
                assert_eq!(status, 200, "{name} {q}: {body}");
                leaks(&format!("query {q}"), &body);
            }
        }
        for ((id, doc), seen) in f.ids.iter().zip(DOCS).zip(sees) {
            let q = json!({"query": format!("What is at the {}?", doc.find)});
            let (_, body) = text_of(api, "POST", "/v1/query", tok, Some(&q));
            assert_eq!(body.contains(id.as_str()), seen, "{name} {q}: {body}");
        }

        // The graph: entities, one entity, a neighbourhood, communities.
        let (status, body) = text_of(api, "GET", "/v1/entities?limit=200", tok, None);
        assert_eq!(status, 200, "{name}: {body}");
        leaks("entities", &body);
        let entities: Value = serde_json::from_str(&body).unwrap();
        for e in entities["entities"].as_array().unwrap() {
            let id = e["entity_id"].as_str().unwrap();
            let (status, body) = text_of(api, "GET", &format!("/v1/entities/{id}"), tok, None);
            assert_eq!(status, 200, "{name}: {body}");
            leaks("entity", &body);
            let (_, body) = text_of(api, "GET", &format!("/v1/graph?entity={id}"), tok, None);
            leaks("graph", &body);
        }
        let (_, body) = text_of(api, "GET", "/v1/graph", tok, None);
        leaks("graph", &body);
        let (_, body) = text_of(api, "GET", "/v1/communities", tok, None);
        leaks("communities", &body);
    }

    // An entity only unseen documents mention reads like an unknown one.
    let (_, body) = text_of(api, "GET", "/v1/entities?q=scorpio", &f.u, None);
    let scorpio: Value = serde_json::from_str(&body).unwrap();
    let scorpio = scorpio["entities"][0]["entity_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _) = text_of(api, "GET", &format!("/v1/entities/{scorpio}"), &f.a, None);
    assert_eq!(status, 404);
    let (status, _) = text_of(api, "GET", &format!("/v1/entities/{scorpio}"), &f.b, None);
    assert_eq!(status, 200);
}

#[test]
fn unseen_documents_cannot_be_forgotten_updated_shared_or_named_as_duplicates() {
    let f = fixture("scopes-writes");
    let api = &f.api;
    let [alpha, bravo, unscoped, _] = &f.ids;

    // B cannot forget, update or share A's document: it is not found.
    for (method, body) in [
        ("DELETE", None),
        ("PATCH", Some(json!({"title": "mine now"}))),
    ] {
        let (status, text) = text_of(
            api,
            method,
            &format!("/v1/documents/{alpha}"),
            &f.b,
            body.as_ref(),
        );
        assert_eq!(status, 404, "{method}: {text}");
    }
    for by in [json!({"document_id": alpha}), json!({"source": "x"})] {
        let mut args = by.clone();
        args["wait"] = json!(true);
        let (status, text) = text_of(api, "POST", "/v1/tools/alayasiki_forget", &f.b, Some(&by));
        assert!(status == 404 || text.contains("not_found"), "{by}: {text}");
    }
    let share = json!({"document_ids": [alpha], "scope": "team-b"});
    let (status, text) = text_of(api, "POST", "/v1/share", &f.b, Some(&share));
    assert_eq!(status, 404, "{text}");
    // Nor U's unscoped one; A still reads its own.
    let (status, _) = text_of(
        api,
        "DELETE",
        &format!("/v1/documents/{unscoped}"),
        &f.a,
        None,
    );
    assert_eq!(status, 404);
    let (status, _) = text_of(api, "GET", &format!("/v1/documents/{alpha}"), &f.a, None);
    assert_eq!(status, 200);

    // The same content stored by B is B's own document, not A's.
    let again = ingest(api, &f.b, json!({"content": ALPHA.text}));
    assert_eq!(again["duplicate_of"], Value::Null, "{again}");
    assert_ne!(again["document_id"], alpha.as_str(), "{again}");
    assert!(!again.to_string().contains(alpha.as_str()), "{again}");
    // While A storing it again finds its own.
    let mine = ingest(api, &f.a, json!({"content": ALPHA.text}));
    assert_eq!(mine["duplicate_of"], alpha.as_str(), "{mine}");

    // C may read team-a but not write it; B may not write team-a.
    let (status, text) = text_of(
        api,
        "POST",
        "/v1/ingest",
        &f.c,
        Some(&json!({"content": "x"})),
    );
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("memory scope"), "{text}");
    let into_a = json!({"content": "y", "scope": "team-a"});
    let (status, text) = text_of(api, "POST", "/v1/ingest", &f.b, Some(&into_a));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("team-a") && text.contains("team-b"), "{text}");
    let (status, text) = text_of(
        api,
        "PATCH",
        &format!("/v1/documents/{alpha}"),
        &f.c,
        Some(&json!({"title": "t"})),
    );
    assert_eq!(status, 403, "{text}");

    // A updates its own document: the new version stays in team-a, C
    // sees it and B does not.
    let (status, text) = text_of(
        api,
        "PATCH",
        &format!("/v1/documents/{alpha}"),
        &f.a,
        Some(&json!({"title": "Lighthouse", "wait": true})),
    );
    assert_eq!(status, 200, "{text}");
    let v2: Value = serde_json::from_str(&text).unwrap();
    let v2 = v2["document_id"].as_str().unwrap().to_string();
    let (status, _) = text_of(api, "GET", &format!("/v1/documents/{v2}"), &f.c, None);
    assert_eq!(status, 200);
    let (status, _) = text_of(api, "GET", &format!("/v1/documents/{v2}"), &f.b, None);
    assert_eq!(status, 404);

    // A forgets its own; B's stays.
    let (status, text) = text_of(api, "DELETE", &format!("/v1/documents/{v2}"), &f.a, None);
    assert_eq!(status, 200, "{text}");
    let (status, _) = text_of(api, "GET", &format!("/v1/documents/{bravo}"), &f.b, None);
    assert_eq!(status, 200);
}

#[test]
fn sharing_grants_a_seen_document_into_a_writable_scope_once_with_who_and_when() {
    let f = fixture("scopes-share");
    let api = &f.api;
    let [alpha, bravo, ..] = &f.ids;
    // A writes both scopes here.
    let a2 = token(
        "alice",
        &["reader", "ingestor"],
        Some(json!(["team-a", "team-b"])),
    );
    let (status, _) = text_of(api, "GET", &format!("/v1/documents/{alpha}"), &f.b, None);
    assert_eq!(status, 404);

    // Only into a scope the caller may write.
    let share = json!({"document_ids": [alpha], "scope": "team-b"});
    let (status, text) = text_of(api, "POST", "/v1/share", &f.a, Some(&share));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("team-b"), "{text}");

    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (status, text) = text_of(api, "POST", "/v1/share", &a2, Some(&share));
    assert_eq!(status, 200, "{text}");
    let receipt: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(receipt["scope"], "team-b");
    assert_eq!(receipt["shared"], json!([alpha]));
    assert_eq!(receipt["granted_by"], "alice");
    assert!(
        receipt["granted_at"].as_i64().unwrap() >= before,
        "{receipt}"
    );

    // B sees it now, in lists, reads and queries; the document names its
    // scopes with who granted each.
    let (status, text) = text_of(api, "GET", &format!("/v1/documents/{alpha}"), &f.b, None);
    assert_eq!(status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let scopes = doc["scopes"].as_array().unwrap_or_else(|| panic!("{doc}"));
    let names: Vec<&str> = scopes
        .iter()
        .map(|s| s["scope"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["team-a", "team-b"], "{doc}");
    assert!(scopes.iter().all(|s| s["granted_by"] == "alice"), "{doc}");
    let q = json!({"query": "What is at the Zanzibar lighthouse?"});
    let (_, text) = text_of(api, "POST", "/v1/query", &f.b, Some(&q));
    assert!(text.contains(alpha.as_str()), "{text}");

    // Again: nothing changes, the first grant stands.
    let (status, text) = text_of(api, "POST", "/v1/share", &a2, Some(&share));
    assert_eq!(status, 200, "{text}");
    let again: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(again["shared"], json!([]));
    assert_eq!(again["already_shared"], json!([alpha]));

    // A cannot share what it does not see; by filter, only what it sees.
    let theirs = json!({"document_ids": [bravo], "scope": "team-a"});
    let (status, _) = text_of(api, "POST", "/v1/share", &f.a, Some(&theirs));
    assert_eq!(status, 404);

    // The limit, at its edge.
    let max = alayasiki_mcp::limits::MAX_SHARE_DOCUMENTS;
    let many: Vec<String> = (0..=max).map(|_| alpha.clone()).collect();
    let (status, text) = text_of(
        api,
        "POST",
        "/v1/share",
        &a2,
        Some(&json!({"document_ids": many, "scope": "team-b"})),
    );
    assert_eq!(status, 413, "{text}");
    let (status, text) = text_of(
        api,
        "POST",
        "/v1/share",
        &a2,
        Some(&json!({"document_ids": many[..max], "scope": "team-b"})),
    );
    assert_eq!(status, 200, "{text}");
}

#[test]
fn a_malformed_memory_scopes_claim_is_refused_not_widened() {
    let dir = TempDir::new("scopes-claims");
    let api = Api::start(dir.path(), &[]);
    let max = alayasiki_mcp::limits::MAX_MEMORY_SCOPES_PER_TOKEN;
    let names = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
    for bad in [
        json!(["Team A"]),
        json!([1]),
        json!(names(max + 1)),
        json!(["a:write"]),
    ] {
        let t = token("eve", &["admin"], Some(bad.clone()));
        let (status, text) = text_of(&api, "GET", "/v1/documents", &t, None);
        assert_eq!(status, 401, "{bad}: {text}");
    }
    let t = token("eve", &["admin"], Some(json!(names(max))));
    let (status, text) = text_of(&api, "GET", "/v1/documents", &t, None);
    assert_eq!(status, 200, "{text}");
}
