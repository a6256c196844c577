//! The memory browser's reads through the real `alayasiki-api`: the
//! document list's filters and `total`, a document's chunks with their
//! entities, entities and one entity's relations with evidence, the graph
//! neighbourhood, communities with their members, and working-memory
//! sessions. Each with its shape and values, its limits at their edge,
//! tenant isolation (another tenant's id reads like an unknown one),
//! malformed ids, and who may read.

mod http_common;

use alayasiki_mcp::limits::MAX_REPLY_BYTES;
use alayasiki_mcp::transport::http_documents::LIST_SNIPPET_CHARS;
use http_common::{admin, claims, request, sign, Api, TempDir};
use serde_json::{json, Value};

/// Two topics that share no entities (as in tests/graph.rs), with the
/// provenance, source and media type each is stored with.
const CORPUS: &[(&str, &str, &str, &str)] = &[
    (
        "Acme Corp. acquired Widgets Inc. in 2023.",
        "external",
        "news.txt",
        "text/plain",
    ),
    (
        "Dana Scully works at Acme Corp. as chief engineer.",
        "user",
        "people.md",
        "text/markdown",
    ),
    (
        "Widgets Inc. makes gears for bicycles.",
        "user",
        "news.txt",
        "text/plain",
    ),
    (
        "Acme Corp. acquired Widgets Inc. after a long negotiation.",
        "agent",
        "news.txt",
        "text/plain",
    ),
    (
        "Lisbon is the capital of Portugal.",
        "external",
        "travel.txt",
        "text/plain",
    ),
    (
        "Porto is a city in Portugal famous for wine.",
        "external",
        "travel.txt",
        "text/plain",
    ),
    (
        "The Lisbon tram climbs steep hills.",
        "user",
        "travel.txt",
        "text/plain",
    ),
];

fn ingest(api: &Api, token: &str, body: Value) -> String {
    let mut body = body;
    body["wait"] = json!(true);
    let r = api.call("POST", "/v1/ingest", token, Some(&body));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["state"], "ready", "{}", r.json());
    r.json()["document_id"].as_str().unwrap().to_string()
}

/// Stores [`CORPUS`] for `token`; the document ids in corpus order.
fn load(api: &Api, token: &str) -> Vec<String> {
    CORPUS
        .iter()
        .map(|(text, provenance, source, media_type)| {
            ingest(
                api,
                token,
                json!({"content": text, "provenance": provenance, "source": source,
                       "media_type": media_type}),
            )
        })
        .collect()
}

fn get(api: &Api, path: &str, token: &str) -> Value {
    let r = api.call("GET", path, token, None);
    assert_eq!(
        r.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.header("Cache-Control"), Some("no-store"), "{path}");
    r.json()
}

fn refused(api: &Api, path: &str, token: &str, status: u16, code: &str) -> Value {
    let r = api.call("GET", path, token, None);
    assert_eq!(
        r.status,
        status,
        "{path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.code(), code, "{path}");
    r.json()
}

/// The 404 body for `id`, with the id itself blanked: what must be the
/// same for an unknown id and another tenant's.
fn not_found_body(api: &Api, path: &str, id: &str, token: &str) -> String {
    let body = refused(api, path, token, 404, "not_found");
    body.to_string().replace(id, "ID")
}

fn document_ids(v: &Value) -> Vec<String> {
    v["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["document_id"].as_str().unwrap().to_string())
        .collect()
}

fn entity_named<'a>(v: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
}

#[test]
fn documents_page_by_title_without_case_ties_in_creation_order() {
    let dir = TempDir::new("browse-title");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let titled = |title: &str, text: &str, source: &str| {
        ingest(
            &api,
            &alice,
            json!({"content": text, "metadata": {"title": title}, "source": source}),
        )
    };
    let beta = titled("beta", "Second letter.", "a");
    let alpha = titled("Alpha", "First letter.", "a");
    let gamma = titled("Gamma", "Third letter.", "b");
    let alpha_again = titled("alpha", "First letter, lower case.", "a");
    let delta = titled("Delta", "Fourth letter.", "a");

    // Every page's `next_after` leads on; the pages joined are the order.
    let mut seen = Vec::new();
    let mut path = "/v1/documents?order=title&limit=2".to_string();
    loop {
        let page = get(&api, &path, &alice);
        assert_eq!(page["total"], 5, "{page}");
        assert!(page.get("next_before").is_none(), "{page}");
        seen.extend(document_ids(&page));
        match page["next_after"].as_i64() {
            Some(after) => path = format!("/v1/documents?order=title&limit=2&after={after}"),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            alpha.clone(),
            alpha_again.clone(),
            beta.clone(),
            delta.clone(),
            gamma
        ]
    );

    // Filters hold in title order too.
    let from_a = get(&api, "/v1/documents?order=title&source=a", &alice);
    assert_eq!(document_ids(&from_a), [alpha, alpha_again, beta, delta]);
    assert_eq!(from_a["total"], 4);
}

#[test]
fn documents_are_filtered_by_media_type_provenance_and_time_with_their_total() {
    let dir = TempDir::new("browse-list");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let made = load(&api, &alice);
    let n = made.len() as i64;

    let all = get(&api, "/v1/documents", &alice);
    assert_eq!(all["total"], n);
    let newest = &all["documents"][0];
    assert_eq!(newest["document_id"], made[made.len() - 1].as_str());
    assert_eq!(newest["provenance"], "user");
    assert_eq!(all["documents"][1]["provenance"], "external");

    // The total ignores the cursor and the page's limit.
    let page = get(&api, "/v1/documents?limit=1", &alice);
    assert_eq!(document_ids(&page).len(), 1);
    assert_eq!(page["total"], n);
    let cursor = page["next_before"].as_i64().unwrap();
    let rest = get(&api, &format!("/v1/documents?before={cursor}"), &alice);
    assert_eq!(document_ids(&rest).len() as i64, n - 1);
    assert_eq!(rest["total"], n);

    // Oldest first, paged with `after`, filters and total as newest first.
    let first = get(&api, "/v1/documents?order=oldest&limit=4", &alice);
    assert_eq!(document_ids(&first), made[..4].to_vec());
    assert_eq!(first["total"], n);
    assert!(first.get("next_before").is_none(), "{first}");
    let after = first["next_after"].as_i64().unwrap();
    let rest = get(
        &api,
        &format!("/v1/documents?order=oldest&after={after}"),
        &alice,
    );
    assert_eq!(document_ids(&rest), made[4..].to_vec());
    assert_eq!(rest["next_after"], Value::Null);
    let oldest_user = get(&api, "/v1/documents?order=oldest&provenance=user", &alice);
    assert_eq!(
        document_ids(&oldest_user),
        vec![made[1].clone(), made[2].clone(), made[6].clone()]
    );
    refused(
        &api,
        "/v1/documents?order=oldest&before=3",
        &alice,
        400,
        "invalid_input",
    );
    refused(&api, "/v1/documents?after=3", &alice, 400, "invalid_input");
    refused(
        &api,
        "/v1/documents?order=title&before=3",
        &alice,
        400,
        "invalid_input",
    );
    refused(
        &api,
        "/v1/documents?order=alphabetical",
        &alice,
        400,
        "invalid_input",
    );

    let markdown = get(&api, "/v1/documents?media_type=text%2Fmarkdown", &alice);
    assert_eq!(document_ids(&markdown), vec![made[1].clone()]);
    assert_eq!(markdown["total"], 1);
    let user = get(&api, "/v1/documents?provenance=user", &alice);
    assert_eq!(
        document_ids(&user),
        vec![made[6].clone(), made[2].clone(), made[1].clone()]
    );
    assert_eq!(user["total"], 3);
    // Combined with the source (what forgetting a source would delete).
    let news_user = get(
        &api,
        "/v1/documents?source=news.txt&provenance=user",
        &alice,
    );
    assert_eq!(document_ids(&news_user), vec![made[2].clone()]);
    let news = get(&api, "/v1/documents?source=news.txt&limit=1", &alice);
    assert_eq!(news["total"], 3);
    assert_eq!(document_ids(&news).len(), 1);
    let none = get(&api, "/v1/documents?provenance=User", &alice);
    assert_eq!(
        (none["total"].as_i64(), document_ids(&none).len()),
        (Some(0), 0)
    );

    // Time bounds against created_at: a bare date is the whole day.
    let created = newest["created_at"].as_str().unwrap().to_string();
    let oldest = all["documents"][n as usize - 1]["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    let day = &created[..10];
    assert_eq!(&oldest[..10], day, "the corpus is stored within one day");
    let within = get(
        &api,
        &format!("/v1/documents?since={day}&until={day}"),
        &alice,
    );
    assert_eq!(within["total"], n);
    let next_day = next_date(day);
    let after = get(&api, &format!("/v1/documents?since={next_day}"), &alice);
    assert_eq!(after["total"], 0);
    let before_day = get(
        &api,
        &format!("/v1/documents?until={}", prev_date(day)),
        &alice,
    );
    assert_eq!(before_day["total"], 0);
    // `until` is exclusive: the newest document's own instant leaves it out.
    let until = get(&api, &format!("/v1/documents?until={created}"), &alice);
    assert_eq!(until["total"], n - 1);
    assert!(!document_ids(&until).contains(&made[made.len() - 1]));
    let since = get(&api, &format!("/v1/documents?since={created}"), &alice);
    assert_eq!(document_ids(&since), vec![made[made.len() - 1].clone()]);
    // An offset's `+`, sent as itself or as %2B.
    let plus = created.replace('Z', "+00:00");
    let since = get(&api, &format!("/v1/documents?since={plus}"), &alice);
    assert_eq!(since["total"], 1);
    let encoded = created.replace('Z', "%2B00:00");
    assert_eq!(
        get(&api, &format!("/v1/documents?since={encoded}"), &alice)["total"],
        1
    );

    for (bad, parameter) in [
        ("since=yesterday", "since"),
        ("until=2026-02-30", "until"),
        ("since=2026-12-01T10:00:00", "since"),
    ] {
        let body = refused(
            &api,
            &format!("/v1/documents?{bad}"),
            &alice,
            400,
            "invalid_input",
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(parameter), "{bad}: {message}");
    }
    let longest = "m".repeat(1024);
    assert_eq!(
        get(&api, &format!("/v1/documents?media_type={longest}"), &alice)["total"],
        0
    );
    let body = refused(
        &api,
        &format!("/v1/documents?provenance={longest}m"),
        &alice,
        400,
        "invalid_input",
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("provenance"));

    // Another tenant counts none of it.
    let bob = admin("bob", "globex");
    let theirs = get(&api, "/v1/documents?provenance=user", &bob);
    assert_eq!(
        (theirs["total"].as_i64(), document_ids(&theirs).len()),
        (Some(0), 0)
    );
}

/// `YYYY-MM-DD` a day later or earlier (enough calendar for a test: the
/// server parses the result strictly).
fn shift_date(day: &str, by: i64) -> String {
    let (y, m, d): (i64, i64, i64) = (
        day[..4].parse().unwrap(),
        day[5..7].parse().unwrap(),
        day[8..10].parse().unwrap(),
    );
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in = |m: i64| match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let (mut y, mut m, mut d) = (y, m, d + by);
    if d > days_in(m) {
        d = 1;
        m += 1;
        if m > 12 {
            m = 1;
            y += 1;
        }
    } else if d < 1 {
        m -= 1;
        if m < 1 {
            m = 12;
            y -= 1;
        }
        d = days_in(m);
    }
    format!("{y:04}-{m:02}-{d:02}")
}

fn next_date(day: &str) -> String {
    shift_date(day, 1)
}

fn prev_date(day: &str) -> String {
    shift_date(day, -1)
}

#[test]
fn a_documents_chunks_are_paged_with_the_entities_they_mention() {
    let dir = TempDir::new("browse-chunks");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let bob = admin("bob", "globex");
    let short = ingest(
        &api,
        &alice,
        json!({"content": "Dana Scully works at Acme Corp. as chief engineer."}),
    );
    let page = get(&api, &format!("/v1/documents/{short}/chunks"), &alice);
    assert_eq!(page["document_id"], short.as_str());
    assert_eq!(page["next_after"], Value::Null);
    let chunk = &page["chunks"][0];
    assert_eq!(chunk["chunk_id"], format!("{short}:0"));
    assert_eq!(chunk["ordinal"], 0);
    let text = chunk["text"].as_str().unwrap();
    assert_eq!(text, "Dana Scully works at Acme Corp. as chief engineer.");
    assert_eq!(chunk["byte_start"], 0);
    assert_eq!(chunk["byte_end"], text.len());
    let entities = chunk["entities"].as_array().unwrap();
    for name in ["Dana Scully", "Acme Corp."] {
        let e = entities
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {entities:?}"));
        assert!(e["entity_id"].as_str().unwrap().starts_with("ent_"));
        assert!(e["kind"].is_string());
        let (start, end) = (
            e["byte_start"].as_u64().unwrap() as usize,
            e["byte_end"].as_u64().unwrap() as usize,
        );
        assert!(
            name.starts_with(&text[start..end]),
            "{name}: {}",
            &text[start..end]
        );
    }

    // A long document, page by page, one chunk at a time.
    let paragraphs: Vec<String> = (0..24)
        .map(|i| {
            format!(
                "Paragraph {i} of the field report: the survey team crossed the river at \
                 dawn, measured the water level, and wrote down what they saw there."
            )
        })
        .collect();
    let long = ingest(&api, &alice, json!({"content": paragraphs.join("\n\n")}));
    let whole = get(&api, &format!("/v1/documents/{long}/chunks"), &alice);
    let all = whole["chunks"].as_array().unwrap().clone();
    assert!(all.len() >= 3, "{} chunks", all.len());
    assert_eq!(whole["next_after"], Value::Null);
    let mut seen = Vec::new();
    let mut path = format!("/v1/documents/{long}/chunks?limit=1");
    loop {
        let page = get(&api, &path, &alice);
        let chunks = page["chunks"].as_array().unwrap();
        assert_eq!(chunks.len(), 1);
        seen.push(chunks[0].clone());
        match page["next_after"].as_i64() {
            Some(after) => {
                assert_eq!(chunks[0]["ordinal"], after);
                path = format!("/v1/documents/{long}/chunks?limit=1&after={after}");
            }
            None => break,
        }
    }
    assert_eq!(seen, all);
    let ordinals: Vec<i64> = all.iter().map(|c| c["ordinal"].as_i64().unwrap()).collect();
    assert_eq!(ordinals, (0..all.len() as i64).collect::<Vec<_>>());
    let after_first = get(
        &api,
        &format!("/v1/documents/{long}/chunks?after=0"),
        &alice,
    );
    assert_eq!(
        after_first["chunks"].as_array().unwrap().len(),
        all.len() - 1
    );

    // Limits at their edge.
    get(
        &api,
        &format!("/v1/documents/{long}/chunks?limit=500"),
        &alice,
    );
    for bad in ["limit=501", "limit=0", "after=-1", "after=x", "before=1"] {
        refused(
            &api,
            &format!("/v1/documents/{long}/chunks?{bad}"),
            &alice,
            400,
            "invalid_input",
        );
    }

    // Another tenant's document reads as an unknown one.
    let unknown = "doc_000000000000000000000000";
    let foreign = not_found_body(&api, &format!("/v1/documents/{long}/chunks"), &long, &bob);
    let missing = not_found_body(
        &api,
        &format!("/v1/documents/{unknown}/chunks"),
        unknown,
        &bob,
    );
    assert_eq!(foreign, missing);
    assert!(
        !foreign.contains("SELECT") && !foreign.contains('/'),
        "{foreign}"
    );
    refused(
        &api,
        "/v1/documents/nonsense/chunks",
        &alice,
        404,
        "not_found",
    );
    let r = api.call(
        "POST",
        &format!("/v1/documents/{long}/chunks"),
        &alice,
        None,
    );
    assert_eq!(r.status, 405);
}

#[test]
fn entities_relations_graph_and_communities_are_browsed_within_the_tenant() {
    let dir = TempDir::new("browse-graph");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let bob = admin("bob", "globex");
    let made = load(&api, &alice);

    // The most mentioned first.
    let listed = get(&api, "/v1/entities", &alice);
    let mentions: Vec<i64> = listed["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["mentions"].as_i64().unwrap())
        .collect();
    assert!(mentions.windows(2).all(|w| w[0] >= w[1]), "{mentions:?}");
    let acme = entity_named(&listed, "entities", "Acme Corp.")
        .unwrap_or_else(|| panic!("{listed}"))
        .clone();
    assert!(acme["mentions"].as_i64().unwrap() >= 3, "{acme}");
    assert!(acme["aliases"].is_array() && acme["kind"].is_string());
    let acme_id = acme["entity_id"].as_str().unwrap().to_string();
    assert!(acme_id.starts_with("ent_"), "{acme_id}");
    let first = get(&api, "/v1/entities?limit=1", &alice);
    assert_eq!(first["entities"].as_array().unwrap().len(), 1);

    // By a piece of a name, whatever its case.
    for q in ["acme", "ACME", "Acme+Corp", "cme%20C"] {
        let found = get(&api, &format!("/v1/entities?q={q}"), &alice);
        let names: Vec<&str> = found["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Acme Corp."], "{q}");
    }
    let nothing = get(&api, "/v1/entities?q=zzzz%25", &alice);
    assert!(nothing["entities"].as_array().unwrap().is_empty());
    get(&api, "/v1/entities?limit=200", &alice);
    get(&api, &format!("/v1/entities?q={}", "a".repeat(256)), &alice);
    for bad in [
        "limit=201".to_string(),
        "limit=0".into(),
        format!("q={}", "a".repeat(257)),
        "name=acme".into(),
    ] {
        refused(
            &api,
            &format!("/v1/entities?{bad}"),
            &alice,
            400,
            "invalid_input",
        );
    }
    assert!(get(&api, "/v1/entities", &bob)["entities"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(get(&api, "/v1/entities?q=acme", &bob)["entities"]
        .as_array()
        .unwrap()
        .is_empty());

    // One entity: its relations, both ways, with their evidence.
    let path = format!("/v1/entities/{acme_id}");
    let e = get(&api, &path, &alice);
    assert_eq!(e["entity_id"], acme_id.as_str());
    assert_eq!(e["name"], "Acme Corp.");
    assert_eq!(e["mentions"], acme["mentions"]);
    assert!(e["first_seen"].as_str().unwrap().ends_with('Z'));
    assert!(e["last_seen"].as_str().unwrap() >= e["first_seen"].as_str().unwrap());
    assert_eq!(e["truncated"], false);
    let relations = e["relations"].as_array().unwrap();
    let acquired = relations
        .iter()
        .find(|r| r["predicate"] == "acquired")
        .unwrap_or_else(|| panic!("{e}"));
    assert!(acquired["relation_id"]
        .as_str()
        .unwrap()
        .starts_with("rel_"));
    assert_eq!(acquired["direction"], "out");
    assert_eq!(acquired["other"]["name"], "Widgets Inc.");
    assert!(acquired["other"]["entity_id"]
        .as_str()
        .unwrap()
        .starts_with("ent_"));
    assert_eq!(acquired["support"], 2);
    assert_eq!(acquired["contradict"], 0);
    let confidence = acquired["confidence"].as_f64().unwrap();
    assert!(confidence > 0.5 && confidence < 1.0, "{confidence}");
    assert!(acquired["valid_from"].as_str().unwrap().ends_with('Z'));
    assert_eq!(acquired["valid_to"], Value::Null);
    assert_eq!(acquired["evidence_truncated"], false);
    let evidence = acquired["evidence"].as_array().unwrap();
    assert_eq!(evidence.len(), 2, "{evidence:?}");
    for ev in evidence {
        let doc = ev["document_id"].as_str().unwrap();
        assert!(doc == made[0] || doc == made[3], "{ev}");
        assert_eq!(ev["chunk_id"], format!("{doc}:0"));
        assert_eq!(ev["supports"], true);
        let quote = ev["quote"].as_str().unwrap();
        assert!(quote.contains("acquired"), "{ev}");
        let (start, end) = (
            ev["byte_start"].as_u64().unwrap() as usize,
            ev["byte_end"].as_u64().unwrap() as usize,
        );
        let text = CORPUS[if doc == made[0] { 0 } else { 3 }].0;
        assert_eq!(&text[start..end], quote);
        let expected = if doc == made[0] { "external" } else { "agent" };
        assert_eq!(ev["provenance"], expected);
    }
    let works_at = relations
        .iter()
        .find(|r| r["other"]["name"] == "Dana Scully" && r["direction"] == "in")
        .unwrap_or_else(|| panic!("{e}"));
    assert!(
        works_at["predicate"].as_str().unwrap().contains("work"),
        "{works_at}"
    );

    // Malformed, unknown and other tenants' ids: one 404.
    let foreign = not_found_body(&api, &path, &acme_id, &bob);
    let unknown = "ent_999999999";
    let missing = not_found_body(&api, &format!("/v1/entities/{unknown}"), unknown, &alice);
    assert_eq!(foreign, missing);
    for bad in [
        "ent_0", "ent_01", "ent_x", "acme", "ent_-1", "rel_1", "ent_%20",
    ] {
        refused(
            &api,
            &format!("/v1/entities/{bad}"),
            &alice,
            404,
            "not_found",
        );
    }

    // The neighbourhood of Acme: its topic, not the other one.
    let g = get(&api, &format!("/v1/graph?entity={acme_id}"), &alice);
    let names: Vec<&str> = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "Acme Corp.");
    for name in ["Widgets Inc.", "Dana Scully"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(
        !names.contains(&"Lisbon") && !names.contains(&"Portugal"),
        "{names:?}"
    );
    let node_ids: Vec<&str> = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["entity_id"].as_str().unwrap())
        .collect();
    let edges = g["edges"].as_array().unwrap();
    for edge in edges {
        assert!(
            node_ids.contains(&edge["source"].as_str().unwrap()),
            "{edge}"
        );
        assert!(
            node_ids.contains(&edge["target"].as_str().unwrap()),
            "{edge}"
        );
    }
    let edge = edges
        .iter()
        .find(|x| x["label"] == "acquired")
        .unwrap_or_else(|| panic!("{g}"));
    assert_eq!(edge["source"], acme_id.as_str());
    assert_eq!(edge["target"], acquired["other"]["entity_id"]);
    assert_eq!(edge["relation_id"], acquired["relation_id"]);
    assert_eq!(edge["confidence"], acquired["confidence"]);
    assert_eq!(g["truncated"], false);
    let deeper = get(
        &api,
        &format!("/v1/graph?entity={acme_id}&depth=2&limit=200"),
        &alice,
    );
    assert!(deeper["nodes"].as_array().unwrap().len() >= names.len());
    let just = get(&api, &format!("/v1/graph?entity={acme_id}&limit=1"), &alice);
    assert_eq!(just["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(just["truncated"], true);
    assert!(just["edges"].as_array().unwrap().is_empty());
    for bad in ["depth=3", "depth=0", "limit=201", "limit=0", "center=x"] {
        refused(
            &api,
            &format!("/v1/graph?{bad}"),
            &alice,
            400,
            "invalid_input",
        );
    }
    let start = get(&api, "/v1/graph?limit=200", &alice);
    let start_nodes = start["nodes"].as_array().unwrap();
    assert_eq!(
        start_nodes.len(),
        listed["entities"].as_array().unwrap().len().min(200)
    );
    assert_eq!(
        start_nodes[0]["entity_id"],
        listed["entities"][0]["entity_id"]
    );
    assert!(!start["edges"].as_array().unwrap().is_empty());
    let theirs = get(&api, "/v1/graph", &bob);
    assert!(theirs["nodes"].as_array().unwrap().is_empty());
    assert!(theirs["edges"].as_array().unwrap().is_empty());
    let foreign = not_found_body(&api, &format!("/v1/graph?entity={acme_id}"), &acme_id, &bob);
    assert_eq!(foreign, missing);
    refused(&api, "/v1/graph?entity=ent_x", &alice, 404, "not_found");

    // Communities with their members; graph nodes carry their community.
    let c = get(&api, "/v1/communities", &alice);
    assert!(c["graph_version"].is_i64(), "{c}");
    let communities = c["communities"].as_array().unwrap();
    let finest = communities
        .iter()
        .map(|x| x["level"].as_u64().unwrap())
        .min()
        .expect("communities");
    let company = communities
        .iter()
        .find(|x| {
            x["level"] == finest
                && x["entity_ids"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(acme_id))
        })
        .unwrap_or_else(|| panic!("{c}"));
    assert_eq!(company["entity_ids_truncated"], false);
    assert_eq!(
        company["entity_ids"].as_array().unwrap().len(),
        company["size"].as_u64().unwrap() as usize
    );
    assert!(company["entities"]
        .as_array()
        .unwrap()
        .contains(&json!("Acme Corp.")));
    let g = get(&api, &format!("/v1/graph?entity={acme_id}"), &alice);
    assert_eq!(g["nodes"][0]["community"], company["community"]);
    let e = get(&api, &path, &alice);
    assert_eq!(e["community"]["community"], company["community"]);
    assert_eq!(e["community"]["level"], finest);
    assert_eq!(e["community"]["title"], company["title"]);
    let theirs = get(&api, "/v1/communities", &bob);
    assert!(theirs["communities"].as_array().unwrap().is_empty());

    // A reader reads everything; a token without the query permission
    // and no token do not.
    let reader = sign(claims("rita", "acme", &["reader"], ""));
    let writer = sign(claims("ingo", "acme", &["ingestor"], ""));
    for route in [
        "/v1/entities".to_string(),
        format!("/v1/entities/{acme_id}"),
        format!("/v1/graph?entity={acme_id}"),
        "/v1/communities".into(),
        format!("/v1/documents/{}/chunks", made[0]),
        "/v1/sessions".into(),
    ] {
        get(&api, &route, &reader);
        refused(&api, &route, &writer, 403, "forbidden");
        let r = request(api.addr, "GET", &route, &[], None);
        assert_eq!(r.status, 401, "{route}");
        assert!(r.header("WWW-Authenticate").is_some(), "{route}");
    }
}

#[test]
fn a_fact_that_changed_shows_its_history_by_the_documents_own_dates() {
    let dir = TempDir::new("browse-history");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    // The newer note is stored first: the older one becomes history.
    ingest(
        &api,
        &alice,
        json!({"content": "Ines Moreau lives in Lyon.", "metadata": {"date": "2024-04-01"}}),
    );
    ingest(
        &api,
        &alice,
        json!({"content": "Ines Moreau lives in Nantes.", "metadata": {"date": "2021-04-01"}}),
    );
    let found = get(&api, "/v1/entities?q=ines", &alice);
    let ines = entity_named(&found, "entities", "Ines Moreau").unwrap_or_else(|| panic!("{found}"));
    let id = ines["entity_id"].as_str().unwrap();
    let e = get(&api, &format!("/v1/entities/{id}"), &alice);
    let lives = |town: &str| {
        e["relations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["other"]["name"] == town)
            .cloned()
            .unwrap_or_else(|| panic!("{town}: {e}"))
    };
    let (lyon, nantes) = (lives("Lyon"), lives("Nantes"));
    assert_eq!(lyon["valid_from"], "2024-04-01T00:00:00.000Z", "{lyon}");
    assert_eq!(lyon["valid_to"], Value::Null, "{lyon}");
    assert_eq!(lyon["superseded_by"], Value::Null, "{lyon}");
    assert_eq!(nantes["valid_from"], "2021-04-01T00:00:00.000Z", "{nantes}");
    assert_eq!(nantes["valid_to"], "2024-04-01T00:00:00.000Z", "{nantes}");
    assert_eq!(nantes["superseded_by"], lyon["relation_id"], "{nantes}");
    // The query says the same, and as of 2022 Nantes held.
    let q = |body: Value| {
        let r = api.call("POST", "/v1/query", &alice, Some(&body));
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    };
    let now = q(json!({"query": "Where does Ines Moreau live?", "mode": "evidence"}));
    assert!(
        now["evidence"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Lyon"),
        "{now}"
    );
    let then = q(
        json!({"query": "Where does Ines Moreau live?", "mode": "evidence", "as_of": "2022-01-01"}),
    );
    assert!(
        then["evidence"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Nantes"),
        "{then}"
    );
    assert_eq!(
        then["evidence"][0]["facts"][0]["status"], "current",
        "{then}"
    );
}

#[test]
fn an_entity_is_found_and_shown_by_another_of_its_names() {
    let dir = TempDir::new("browse-alias");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    ingest(
        &api,
        &alice,
        json!({"content": "Marie Sklodowska Curie was born in Warsaw."}),
    );
    ingest(
        &api,
        &alice,
        json!({"content": "Marie Curie works at the University of Paris."}),
    );
    // The name does not contain "marie curie"; the other name does.
    let found = get(&api, "/v1/entities?q=marie+curie", &alice);
    let marie = entity_named(&found, "entities", "Marie Sklodowska Curie")
        .unwrap_or_else(|| panic!("{found}"));
    assert!(
        marie["aliases"]
            .as_array()
            .unwrap()
            .contains(&json!("Marie Curie")),
        "{marie}"
    );
    let id = marie["entity_id"].as_str().unwrap();
    let e = get(&api, &format!("/v1/entities/{id}"), &alice);
    assert_eq!(e["aliases"], marie["aliases"]);
    let others: Vec<&str> = e["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["other"]["name"].as_str().unwrap())
        .collect();
    assert!(
        others.contains(&"Warsaw") && others.contains(&"University of Paris"),
        "one entity holds both documents' relations: {others:?}"
    );
}

#[test]
fn working_memory_sessions_are_listed_and_read_only_by_their_identity() {
    let dir = TempDir::new("browse-sessions");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let w = api.call(
        "POST",
        "/v1/memory/write",
        &alice,
        Some(&json!({"session_id": "plan-1", "content": "Draft: rotate the keys on Friday."})),
    );
    assert_eq!(w.status, 200, "{}", String::from_utf8_lossy(&w.body));

    let listed = get(&api, "/v1/sessions", &alice);
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    let s = &sessions[0];
    assert_eq!(s["session_id"], "plan-1");
    assert_eq!(s["notes"], 1);
    assert_eq!(s["writes"], 1);
    assert!(s["bytes_charged"].as_u64().unwrap() > 0);
    for time in ["created_at", "updated_at", "expires_at"] {
        assert!(s[time].as_str().unwrap().ends_with('Z'), "{time}");
    }
    assert!(s["created_at"].as_str() <= s["updated_at"].as_str());
    let left = s["ms_left"].as_u64().unwrap();
    assert!(left > 0 && left <= 30 * 60 * 1000, "{left}");

    let one = get(&api, "/v1/sessions/plan-1", &alice);
    assert_eq!(one["session_id"], "plan-1");
    assert_eq!(one["notes"][0]["text"], "Draft: rotate the keys on Friday.");
    assert_eq!(one["expires_at"], s["expires_at"]);

    // Another identity, in the same tenant or another, sees none of it.
    let carol = admin("carol", "acme");
    let bob = admin("bob", "globex");
    for other in [&carol, &bob] {
        assert!(get(&api, "/v1/sessions", other)["sessions"]
            .as_array()
            .unwrap()
            .is_empty());
        let foreign = not_found_body(&api, "/v1/sessions/plan-1", "plan-1", other);
        let missing = not_found_body(&api, "/v1/sessions/plan-2", "plan-2", other);
        assert_eq!(foreign, missing);
    }
    for bad in ["bad%20id", "%C3%A9", &"x".repeat(300)] {
        refused(
            &api,
            &format!("/v1/sessions/{bad}"),
            &alice,
            404,
            "not_found",
        );
    }
    let reader = sign(claims("alice", "acme", &["reader"], ""));
    assert_eq!(
        get(&api, "/v1/sessions/plan-1", &reader)["notes"][0]["seq"],
        1
    );
    let r = request(api.addr, "GET", "/v1/sessions/plan-1", &[], None);
    assert_eq!(r.status, 401);

    // Deleting: a reader may not; another identity finds nothing to
    // delete; the owner's DELETE ends the session and says what went.
    let r = api.call("DELETE", "/v1/sessions/plan-1", &reader, None);
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    for other in [&carol, &bob] {
        let r = api.call("DELETE", "/v1/sessions/plan-1", other, None);
        assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
    }
    let r = api.call("DELETE", "/v1/sessions/plan-1", &alice, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let deleted: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(deleted["session_id"], "plan-1");
    assert_eq!(deleted["notes"], 1);
    assert_eq!(deleted["bytes_released"], s["bytes_charged"]);
    assert!(get(&api, "/v1/sessions", &alice)["sessions"]
        .as_array()
        .unwrap()
        .is_empty());
    not_found_body(&api, "/v1/sessions/plan-1", "plan-1", &alice);
    let r = api.call("DELETE", "/v1/sessions/plan-1", &alice, None);
    assert_eq!(
        r.status,
        404,
        "deleted once: {}",
        String::from_utf8_lossy(&r.body)
    );
}

/// `n` distinct company names, capitalised words as the extractor finds
/// them ("Barton Inc.").
fn companies(n: usize) -> Vec<String> {
    const HEADS: &[&str] = &[
        "Bar", "Cor", "Dal", "Fen", "Gor", "Hal", "Jor", "Kel", "Mor", "Nor", "Pel", "Quin",
    ];
    const TAILS: &[&str] = &[
        "ton", "vik", "mar", "dor", "lin", "ris", "bek", "sen", "wald", "ford",
    ];
    (0..n)
        .map(|i| format!("{}{} Inc.", HEADS[i / TAILS.len()], TAILS[i % TAILS.len()]))
        .collect()
}

#[test]
fn the_largest_replies_are_cut_at_their_limits_and_say_so() {
    let dir = TempDir::new("browse-caps");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");

    // RELATION_MAX_EVIDENCE (5): five documents' evidence is shown whole,
    // a sixth's cuts it.
    let evidence_of = |api: &Api| {
        let found = get(api, "/v1/entities?q=acme", &alice);
        let id = found["entities"][0]["entity_id"]
            .as_str()
            .unwrap()
            .to_string();
        let e = get(api, &format!("/v1/entities/{id}"), &alice);
        let r = e["relations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["predicate"] == "acquired")
            .unwrap_or_else(|| panic!("{e}"))
            .clone();
        (
            r["evidence"].as_array().unwrap().len(),
            r["evidence_truncated"].clone(),
        )
    };
    for i in 0..5 {
        ingest(
            &api,
            &alice,
            json!({"content": format!("Acme Corp. acquired Widgets Inc. (report {i}).")}),
        );
    }
    assert_eq!(evidence_of(&api), (5, json!(false)));
    ingest(
        &api,
        &alice,
        json!({"content": "Acme Corp. acquired Widgets Inc. (report 5)."}),
    );
    assert_eq!(evidence_of(&api), (5, json!(true)));

    // ENTITY_MAX_RELATIONS (100) and GRAPH_RELATIONS_PER_NODE (50): one
    // entity with more relations than either.
    let names = companies(110);
    let text: Vec<String> = names
        .iter()
        .map(|n| format!("Globex Corp. acquired {n}"))
        .collect();
    ingest(&api, &alice, json!({"content": text.join("\n\n")}));
    let found = get(&api, "/v1/entities?q=globex", &alice);
    let globex = found["entities"][0]["entity_id"]
        .as_str()
        .unwrap()
        .to_string();
    let e = get(&api, &format!("/v1/entities/{globex}"), &alice);
    assert_eq!(e["relations"].as_array().unwrap().len(), 100, "{e}");
    assert_eq!(e["truncated"], true);
    let g = get(
        &api,
        &format!("/v1/graph?entity={globex}&limit=200"),
        &alice,
    );
    let nodes = g["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1 + 50, "the centre and its 50 strongest");
    assert_eq!(g["truncated"], true);
    assert!(g["edges"].as_array().unwrap().len() >= 50);

    // GRAPH_MAX_NODES (200) with depth 2 and a starting picture of 200.
    let g = get(
        &api,
        &format!("/v1/graph?entity={globex}&depth=2&limit=200"),
        &alice,
    );
    assert!(g["nodes"].as_array().unwrap().len() <= 200);
    let start = get(&api, "/v1/graph?limit=200", &alice);
    assert!(start["nodes"].as_array().unwrap().len() <= 200);
    let listed = get(&api, "/v1/entities?limit=200", &alice);
    assert!(listed["entities"].as_array().unwrap().len() > 100);
}

/// A document whose reply JSON escaping would blow past `MAX_REPLY_BYTES`
/// (8 MiB; its text full of quotes) is answered with its text cut to fit
/// and `text_truncated`, not 413: the memory browser can still open it,
/// and so forget it. Its original stays whole.
#[test]
fn a_document_too_large_to_show_whole_is_shown_cut_and_can_be_forgotten() {
    let dir = TempDir::new("browse-quotes");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let quotes = "\"".repeat(4 * 1024 * 1024 - 16);
    let content = alayasiki_mcp::base64::encode(quotes.as_bytes());
    let id = ingest(
        &api,
        &alice,
        json!({"File": {"filename": "quotes.txt", "mime_type": "text/plain", "content": content}}),
    );
    let d = get(&api, &format!("/v1/documents/{id}"), &alice);
    assert_eq!(d["text_truncated"], true);
    let shown = d["text"].as_str().unwrap();
    assert!(
        shown.len() > 3 * 1024 * 1024 && quotes.starts_with(shown),
        "{}",
        shown.len()
    );
    let r = api.call("GET", &format!("/v1/documents/{id}/original"), &alice, None);
    assert_eq!((r.status, r.body.len()), (200, quotes.len()));
    let r = api.call("DELETE", &format!("/v1/documents/{id}"), &alice, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    refused(
        &api,
        &format!("/v1/documents/{id}"),
        &alice,
        404,
        "not_found",
    );
}

/// A working-memory session whose notes JSON escaping would blow past
/// `MAX_REPLY_BYTES` (8 MiB; each note 64 KiB of control characters, six
/// bytes each escaped) is answered with every note's text cut to one
/// length and `text_truncated`, not 413, and a short note stays whole.
#[test]
fn a_session_too_large_to_show_whole_is_shown_with_its_notes_cut() {
    let dir = TempDir::new("browse-big-session");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let write = |content: &str| {
        let body = json!({"session_id": "big", "content": content});
        let w = api.call("POST", "/v1/memory/write", &alice, Some(&body));
        assert_eq!(w.status, 200, "{}", String::from_utf8_lossy(&w.body));
    };
    write("a short note");
    let noisy = "\u{1}".repeat(64 * 1024);
    for _ in 0..24 {
        write(&noisy);
    }
    let s = get(&api, "/v1/sessions/big", &alice);
    let notes = s["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 25);
    assert_eq!(notes[0]["text"], "a short note");
    assert!(notes[0].get("text_truncated").is_none(), "{}", notes[0]);
    let mut cut_lens = Vec::new();
    for n in &notes[1..] {
        assert_eq!(n["text_truncated"], true);
        let text = n["text"].as_str().unwrap();
        assert!(noisy.starts_with(text));
        cut_lens.push(text.len());
    }
    cut_lens.dedup();
    assert_eq!(cut_lens.len(), 1, "one common length: {cut_lens:?}");
    // Cut no more than needed: the 24 notes share what the cap leaves.
    assert!(
        cut_lens[0] * 24 * 6 > MAX_REPLY_BYTES * 9 / 10,
        "{cut_lens:?}"
    );
}

#[test]
fn a_query_filter_holds_over_the_json_api_and_a_bad_one_is_a_clear_400() {
    let dir = TempDir::new("browse-filter");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    load(&api, &alice);
    let ask = |filter: Value| {
        let r = api.call(
            "POST",
            "/v1/query",
            &alice,
            Some(&json!({"query": "Acme Lisbon Portugal", "mode": "evidence", "filter": filter})),
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let mut sources: Vec<String> = r.json()["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["source"].as_str().unwrap().to_string())
            .collect();
        sources.sort();
        sources.dedup();
        sources
    };
    assert_eq!(ask(json!({"source": "travel.txt"})), ["travel.txt"]);
    assert_eq!(ask(json!({"media_type": "text/markdown"})), ["people.md"]);
    assert_eq!(
        ask(json!({"source_prefix": "n", "until": "2000-01-01"})),
        Vec::<String>::new()
    );
    let r = api.call(
        "POST",
        "/v1/query",
        &alice,
        Some(&json!({"query": "Acme", "filter": {"since": "tomorrow"}})),
    );
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    let body = String::from_utf8_lossy(&r.body);
    assert!(
        body.contains("`filter.since` must be an RFC 3339"),
        "{body}"
    );
    assert!(!body.contains("SELECT") && !body.contains(dir.path().to_str().unwrap()));
}

#[test]
fn titles_come_from_metadata_or_front_matter_and_the_list_shows_a_bounded_snippet() {
    let dir = TempDir::new("browse-titles");
    let api = Api::start(dir.path(), &[]);
    let alice = admin("alice", "acme");
    let front =
        "---\ntitle: \"Running the zstd tests\"\nlayout: page\n---\n\n# Tests\n\nRun make check.";
    let inline = ingest(
        &api,
        &alice,
        json!({"content": front, "media_type": "text/markdown"}),
    );
    let file = ingest(
        &api,
        &alice,
        json!({"File": {"filename": "TESTING.md", "mime_type": "text/markdown",
                         "content": alayasiki_mcp::base64::encode(front.as_bytes())}}),
    );
    // Front matter without a title: the first line after it.
    let untitled = ingest(
        &api,
        &alice,
        json!({"content": "---\nlayout: page\n---\n# Install\nsteps", "media_type": "text/markdown"}),
    );
    let described = ingest(
        &api,
        &alice,
        json!({"content": "---\ntitle: not this\n---\nbody", "media_type": "text/markdown",
               "metadata": {"title": "Given in metadata"}}),
    );
    let fits = "w".repeat(LIST_SNIPPET_CHARS);
    let exact = ingest(&api, &alice, json!({"content": fits}));
    let long = ingest(&api, &alice, json!({"content": format!("{fits} more")}));

    let list = get(&api, "/v1/documents", &alice);
    let item = |id: &str| -> Value {
        list["documents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["document_id"] == id)
            .unwrap()
            .clone()
    };
    for (id, title) in [
        (&inline, "Running the zstd tests"),
        (&file, "Running the zstd tests"),
        (&untitled, "Install"),
        (&described, "Given in metadata"),
    ] {
        assert_eq!(item(id)["title"], title, "{id}");
        assert_eq!(
            get(&api, &format!("/v1/documents/{id}"), &alice)["title"],
            title
        );
    }
    // The snippet starts after the front matter, white space folded.
    assert_eq!(item(&inline)["snippet"], "# Tests Run make check.");
    assert_eq!(item(&untitled)["snippet"], "# Install steps");
    // At the limit whole; past it cut to the limit, ending with `…`.
    assert_eq!(item(&exact)["snippet"], fits.as_str());
    let cut = item(&long)["snippet"].as_str().unwrap().to_string();
    assert_eq!(cut.chars().count(), LIST_SNIPPET_CHARS);
    assert!(cut.ends_with('…'), "{cut}");
}
