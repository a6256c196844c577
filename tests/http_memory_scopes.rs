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
        // The graph is built over the whole tenant: only a caller who sees
        // all of it is told its size.
        let whole = sees.iter().all(|s| *s);
        assert_eq!(status["entities"].is_u64(), whole, "{name}: {body}");
        assert_eq!(status["relations"].is_u64(), whole, "{name}: {body}");

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

/// The entity `name` as `token` sees it (its id, and the detail view).
fn entity_view(api: &Api, token: &str, name: &str) -> Value {
    let (status, body) = text_of(api, "GET", &format!("/v1/entities?q={name}"), token, None);
    assert_eq!(status, 200, "{body}");
    let found: Value = serde_json::from_str(&body).unwrap();
    let id = found["entities"][0]["entity_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no {name}: {found}"))
        .to_string();
    let (status, body) = text_of(api, "GET", &format!("/v1/entities/{id}"), token, None);
    assert_eq!(status, 200, "{body}");
    let mut view: Value = serde_json::from_str(&body).unwrap();
    // The listing's count, beside the detail's.
    view["listed_mentions"] = found["entities"][0]["mentions"].clone();
    view
}

/// The counts of an entity view: its mentions (in the list and the
/// detail) and each relation's support and contradiction, by predicate.
fn counts(view: &Value) -> Value {
    let mut relations: Vec<Value> = view["relations"]
        .as_array()
        .unwrap_or_else(|| panic!("{view}"))
        .iter()
        .map(|r| {
            json!([
                r["predicate"],
                r["other"]["name"],
                r["support"],
                r["contradict"]
            ])
        })
        .collect();
    relations.sort_by_key(|r| r.to_string());
    json!({"mentions": view["mentions"], "listed": view["listed_mentions"],
           "relations": relations})
}

#[test]
fn entity_and_relation_counts_count_only_seen_documents() {
    let f = fixture("scopes-counts");
    let api = &f.api;
    // Acme is only in A's document so far: A and U count the same.
    let before = counts(&entity_view(api, &f.u, "acme"));
    assert_eq!(counts(&entity_view(api, &f.a, "acme")), before);
    assert!(before["mentions"].as_i64().unwrap() > 0, "{before}");
    assert!(
        !before["relations"].as_array().unwrap().is_empty(),
        "{before}"
    );

    // A document A cannot see mentions Acme twice and repeats its facts.
    let twice = "Acme Corp. acquired Widgets Inc. in Quartz Bay. \
                 Acme Corp. runs the Quartz depot.";
    ingest(api, &f.u, json!({"content": twice, "scope": "team-b"}));
    let whole = counts(&entity_view(api, &f.u, "acme"));
    assert!(
        whole["mentions"].as_i64() > before["mentions"].as_i64(),
        "{whole} vs {before}"
    );
    assert_ne!(whole["relations"], before["relations"], "{whole}");
    // A's counts do not move; B counts only the new document.
    assert_eq!(counts(&entity_view(api, &f.a, "acme")), before);
    let b = counts(&entity_view(api, &f.b, "acme"));
    assert_eq!(
        b["mentions"].as_i64().unwrap(),
        whole["mentions"].as_i64().unwrap() - before["mentions"].as_i64().unwrap(),
        "{b} {whole} {before}"
    );
}

/// The communities `token` is shown: each as its member names, sorted.
fn community_names(api: &Api, token: &str) -> Vec<Vec<String>> {
    let (status, body) = text_of(api, "GET", "/v1/communities", token, None);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["communities"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|c| {
            let mut names: Vec<String> = c["entities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect();
            names.sort();
            names
        })
        .collect()
}

fn with_member<'a>(communities: &'a [Vec<String>], name: &str) -> Vec<&'a Vec<String>> {
    communities
        .iter()
        .filter(|c| c.iter().any(|n| n == name))
        .collect()
}

#[test]
fn a_community_touching_an_unseen_document_is_dropped_for_a_scoped_caller() {
    let dir = TempDir::new("scopes-communities");
    let api = Api::start(dir.path(), &[]);
    let u = token("root", &["admin"], None);
    let a = token("alice", &["reader"], Some(json!(["team-a:read"])));
    let b = token("bob", &["reader"], Some(json!(["team-b:read"])));
    for (text, scope) in [
        // Umbrella's group: team-a's documents only.
        (
            "Umbrella Corp. hired Albert Wesker. Umbrella Corp. funds the Raccoon Clinic.",
            "team-a",
        ),
        // Globex's group: team-b's only.
        (
            "Globex Corp. hired Hank Scorpio. Globex Corp. acquired Initech Inc.",
            "team-b",
        ),
        // Acme's group: evidence in both scopes.
        (
            "Acme Corp. hired Jane Doe. Acme Corp. acquired Widgets Inc.",
            "team-a",
        ),
        ("Acme Corp. partnered with Widgets Inc.", "team-b"),
    ] {
        ingest(&api, &u, json!({"content": text, "scope": scope}));
    }
    let whole = community_names(&api, &u);
    let acme = with_member(&whole, "Acme Corp.");
    let umbrella = with_member(&whole, "Umbrella Corp.");
    let globex = with_member(&whole, "Globex Corp.");
    assert!(
        !acme.is_empty() && !umbrella.is_empty() && !globex.is_empty(),
        "{whole:?}"
    );

    let seen_by_a = community_names(&api, &a);
    let seen_by_b = community_names(&api, &b);
    // Acme's communities quote both scopes: neither A nor B is shown one.
    for (who, seen) in [("A", &seen_by_a), ("B", &seen_by_b)] {
        assert!(
            with_member(seen, "Acme Corp.").is_empty(),
            "{who}: {seen:?}"
        );
    }
    // Those of one scope alone are shown, whole, to that scope's caller
    // (and only to it).
    assert_eq!(with_member(&seen_by_a, "Umbrella Corp."), umbrella);
    assert!(with_member(&seen_by_a, "Globex Corp.").is_empty());
    assert_eq!(with_member(&seen_by_b, "Globex Corp."), globex);
    assert!(with_member(&seen_by_b, "Umbrella Corp.").is_empty());
}

/// A stateless (2026-07-28) MCP request at `/mcp` with `token`: the
/// JSON-RPC answer.
fn mcp(api: &Api, token: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut headers: Vec<(String, String)> = vec![
        ("Authorization".into(), format!("Bearer {token}")),
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
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = http_common::request(
        api.addr,
        "POST",
        "/mcp",
        &headers,
        Some(body.to_string().as_bytes()),
    );
    assert_eq!(
        r.status,
        200,
        "{method}: {}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

#[test]
fn each_caller_sees_exactly_its_scopes_over_mcp_tools_and_resources() {
    let f = fixture("scopes-mcp");
    let api = &f.api;
    let callers: [(&str, &str, [bool; 4]); 4] = [
        ("A", &f.a, [true, false, false, true]),
        ("B", &f.b, [false, true, false, false]),
        ("C", &f.c, [true, false, false, true]),
        ("U", &f.u, [true, true, true, true]),
    ];
    for (name, tok, sees) in callers {
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
                assert!(!body.contains(id.as_str()), "{name} {what} names {id}");
                assert!(
                    !body.contains(doc.secret),
                    "{name} {what} quotes {}",
                    doc.secret
                );
            }
        };
        let call = |tool: &str, args: Value| {
            let v = mcp(
                api,
                tok,
                "tools/call",
                json!({"name": tool, "arguments": args}),
            );
            assert_eq!(v["result"]["isError"], false, "{name} {tool}: {v}");
            v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };

        // tools/call: every query mode, and the status counts.
        for ((id, doc), seen) in f.ids.iter().zip(DOCS).zip(sees) {
            for (search_mode, mode) in [
                ("auto", "evidence"),
                ("global", "evidence"),
                ("drift", "answer"),
            ] {
                let q = json!({"query": format!("What is at the {}?", doc.find),
                               "search_mode": search_mode, "mode": mode});
                let body = call("alayasiki_query", q.clone());
                leaks(&format!("MCP query {q}"), &body);
            }
            let body = call(
                "alayasiki_query",
                json!({"query": format!("What is at the {}?", doc.find)}),
            );
            assert_eq!(body.contains(id.as_str()), seen, "{name}: {body}");
        }
        let status: Value = serde_json::from_str(&call("alayasiki_status", json!({}))).unwrap();
        let want = sees.iter().filter(|s| **s).count();
        assert_eq!(status["documents"], want, "{name}: {status}");

        // resources/read of each document and original: a seen one reads,
        // an unseen one is not found.
        for ((id, doc), seen) in f.ids.iter().zip(DOCS).zip(sees) {
            for uri in [
                format!("alayasiki://documents/{id}"),
                format!("alayasiki://documents/{id}/original"),
            ] {
                let v = mcp(api, tok, "resources/read", json!({"uri": uri}));
                if seen {
                    assert!(v["result"]["contents"].is_array(), "{name} {uri}: {v}");
                } else {
                    assert_eq!(
                        v["error"]["message"], "resource not found",
                        "{name} {uri}: {v}"
                    );
                    assert!(!v.to_string().contains(doc.secret), "{name} {uri}: {v}");
                }
            }
        }
        // The communities resource, and the resource list: exactly the
        // seen documents.
        let v = mcp(
            api,
            tok,
            "resources/read",
            json!({"uri": "alayasiki://communities"}),
        );
        assert!(v["result"]["contents"].is_array(), "{name}: {v}");
        leaks("communities resource", &v.to_string());
        let v = mcp(api, tok, "resources/list", json!({}));
        let mut listed: Vec<String> = v["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {v}"))
            .iter()
            .filter_map(|r| r["uri"].as_str()?.strip_prefix("alayasiki://documents/"))
            .map(str::to_string)
            .collect();
        listed.sort();
        let mut want: Vec<String> = f
            .ids
            .iter()
            .zip(sees)
            .filter(|(_, s)| *s)
            .map(|(i, _)| i.clone())
            .collect();
        want.sort();
        assert_eq!(listed, want, "{name}: {v}");
    }
}
