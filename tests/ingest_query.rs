//! Ingest then query through the real binary: spans, answers, idempotency,
//! media types, limits at their edges, resources, restart.

mod common;

use alayasiki_mcp::limits::*;
use alayasiki_mcp::query::MIN_RANKING_DEPTH;
use common::*;
use serde_json::{json, Value};

fn document_text(s: &mut Server, doc_id: &str) -> String {
    let r = s.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc_id}")}),
    );
    r["result"]["contents"][0]["text"]
        .as_str()
        .expect("document text")
        .to_string()
}

#[test]
fn ingested_text_is_found_with_exact_spans_and_metadata() {
    let dir = TempDir::new("spans");
    let mut s = Server::ready(dir.path());
    let text = "Quarterly notes.\n\nAcme Corp acquired Widgets Inc in May 2024. The deal closed quickly.\n\nWidgets makes bicycle gears.";
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": text, "source": "news/acme", "metadata": {"author": "bob", "tags": ["m&a"]}}),
    );
    let doc = r["document_id"].as_str().unwrap().to_string();
    assert_eq!(r["state"], "ready");
    s.ingest("An unrelated note about gardening and tomatoes.");
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Which company did Acme acquire?"}),
    );
    let top = &q["evidence"][0];
    assert_eq!(top["document_id"], doc.as_str());
    assert_eq!(top["source"], "news/acme");
    assert_eq!(top["metadata"], json!({"author": "bob", "tags": ["m&a"]}));
    assert_eq!(top["lanes"]["keyword"]["rank"], 1, "{top}");
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert!(top["chunk_id"].as_str().unwrap().starts_with(&doc));
    let stored = document_text(&mut s, &doc);
    let (start, end) = (
        top["span"]["start"].as_u64().unwrap() as usize,
        top["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(
        &stored[start..end],
        top["text"].as_str().unwrap(),
        "span must address the evidence bytes"
    );
    // The extractive answer cites the acquisition sentence, and its span
    // addresses that sentence in the document.
    let answer = &q["answer"];
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("Acme Corp acquired Widgets Inc in May 2024. [1]"),
        "{answer}"
    );
    let c = &answer["citations"][0];
    assert_eq!(c["marker"], 1);
    let (cs, ce) = (
        c["span"]["start"].as_u64().unwrap() as usize,
        c["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(
        &stored[cs..ce],
        "Acme Corp acquired Widgets Inc in May 2024."
    );
    assert_eq!(q["search_mode"]["requested"], "auto");
    assert_eq!(q["search_mode"]["ran"], "local");
}

#[test]
fn evidence_mode_has_no_answer_and_top_k_and_budget_bind() {
    let dir = TempDir::new("topk");
    let mut s = Server::ready(dir.path());
    for i in 0..12 {
        s.ingest(&format!(
            "Note {i}: the lighthouse keeper logged a storm on day {i}."
        ));
    }
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "lighthouse storm", "mode": "evidence", "top_k": 5}),
    );
    assert!(q.get("answer").is_none());
    assert_eq!(q["evidence"].as_array().unwrap().len(), 5);
    let ranks: Vec<u64> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [1, 2, 3, 4, 5]);
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "lighthouse storm", "mode": "evidence", "budget": 120}),
    );
    let used: usize = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap().chars().count())
        .sum();
    assert!(used <= 120, "budget exceeded: {used}");
    assert_eq!(q["budget"]["used_chars"].as_u64().unwrap() as usize, used);
    assert!(q["budget"]["omitted"].as_u64().unwrap() > 0);
}

#[test]
fn query_arguments_are_validated_as_tool_errors() {
    let dir = TempDir::new("qargs");
    let mut s = Server::ready(dir.path());
    for args in [
        json!({}),
        json!({"query": 5}),
        json!({"query": "x", "top_k": 0}),
        json!({"query": "x", "top_k": MAX_TOP_K + 1}),
        json!({"query": "x", "budget": MIN_BUDGET_CHARS - 1}),
        json!({"query": "x", "search_mode": "deep"}),
        json!({"query": "x", "mode": "essay"}),
        json!({"query": "x", "topk": 3}),
        json!({"query": "a".repeat(MAX_QUERY_BYTES + 1)}),
    ] {
        let (is_error, msg) = s.call("alayasiki_query", args.clone());
        assert!(is_error, "accepted {args}");
        assert!(msg.as_str().unwrap().len() < 300, "message too long: {msg}");
    }
    let (is_error, _) = s.call(
        "alayasiki_query",
        json!({"query": "a".repeat(MAX_QUERY_BYTES), "top_k": MAX_TOP_K}),
    );
    assert!(!is_error, "a query exactly at the limits must pass");
    // Unknown tool and non-object arguments are protocol errors.
    assert_eq!(
        s.request("tools/call", json!({"name": "nope"}))["error"]["code"],
        -32602
    );
    assert_eq!(
        s.request(
            "tools/call",
            json!({"name": "alayasiki_query", "arguments": [1]})
        )["error"]["code"],
        -32602
    );
    assert_eq!(s.request("tools/call", json!({}))["error"]["code"], -32602);
}

#[test]
fn idempotency_same_content_returns_first_and_different_content_conflicts() {
    let dir = TempDir::new("idem");
    let mut s = Server::ready(dir.path());
    let first = s.ok(
        "alayasiki_ingest",
        json!({"content": "The launch is on Friday.", "idempotency_key": "launch-1"}),
    );
    assert_eq!(first["idempotent_replay"], false);
    let again = s.ok(
        "alayasiki_ingest",
        json!({"content": "The launch is on Friday.", "idempotency_key": "launch-1"}),
    );
    assert_eq!(again["document_id"], first["document_id"]);
    assert_eq!(again["idempotent_replay"], true);
    let canonical = s.ok(
        "alayasiki_ingest",
        json!({"Text": {"content": "The launch is on Friday.", "idempotency_key": "launch-1"}}),
    );
    assert_eq!(
        canonical["document_id"], first["document_id"],
        "both shapes are the same request"
    );
    let (is_error, msg) = s.call(
        "alayasiki_ingest",
        json!({"content": "The launch is on Monday.", "idempotency_key": "launch-1"}),
    );
    assert!(is_error);
    assert!(msg.as_str().unwrap().starts_with("conflict:"), "{msg}");
    let st = s.ok("alayasiki_status", json!({}));
    assert_eq!(st["documents"], 1, "nothing stored twice");
    let q = s.query("launch Friday");
    assert_eq!(q["evidence"].as_array().unwrap().len(), 1);
}

#[test]
fn markdown_json_and_file_uploads_are_typed_and_chunked() {
    let dir = TempDir::new("types");
    let mut s = Server::ready(dir.path());
    let md = "# Runbook\n\nIntro.\n\n## Restart\n\nRun `systemctl restart alayasiki` as root.\n";
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": md, "media_type": "text/markdown"}),
    );
    assert_eq!(r["media_type"], "text/markdown");
    assert_eq!(r["chunks"], 2);
    let q = s.query("restart systemctl");
    assert!(q["evidence"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("## Restart"));

    let json_doc =
        r#"{"service": {"name": "billing", "owner": "Dana Scully", "ports": [8080, 8443]}}"#;
    let b64 = alayasiki_mcp::base64::encode(json_doc.as_bytes());
    let r = s.ok(
        "alayasiki_ingest",
        json!({"File": {"filename": "svc.json", "content": b64}}),
    );
    assert_eq!(r["media_type"], "application/json");
    let text = {
        let id = r["document_id"].as_str().unwrap().to_string();
        let rr = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{id}")}),
        );
        rr["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(text, "service.name: billing\nservice.owner: Dana Scully\nservice.ports[0]: 8080\nservice.ports[1]: 8443");
    let q = s.query("who owns billing");
    assert!(q["evidence"][0]["text"]
        .as_str()
        .unwrap()
        .contains("service.owner: Dana Scully"));

    let bytes: Vec<u8> = b"plain bytes about zeppelins".to_vec();
    let r = s.ok(
        "alayasiki_ingest",
        json!({"File": {"content": bytes, "mime_type": "text/plain", "metadata": {"k": 1}}}),
    );
    assert_eq!(r["state"], "ready");
    assert_eq!(
        s.query("zeppelins")["evidence"][0]["metadata"],
        json!({"k": 1})
    );
}

#[test]
fn bad_content_is_refused_before_anything_is_stored() {
    let dir = TempDir::new("badcontent");
    let mut s = Server::ready(dir.path());
    let cases = [
        (
            json!({"File": {"filename": "x.txt", "content": [0x61, 0xff, 0x62]}}),
            "offset 1",
        ),
        (
            json!({"File": {"filename": "a.pdf", "mime_type": "application/pdf", "content": "JVBERg=="}}),
            "the PDF could not be read",
        ),
        (
            json!({"File": {"filename": "a.zip", "mime_type": "application/zip", "content": "UEsDBA=="}}),
            "application/pdf, image/png",
        ),
        (json!({"File": {"content": [0, 159, 146, 150]}}), "binary"),
        (
            json!({"content": "{oops", "media_type": "application/json"}),
            "not valid JSON",
        ),
        (json!({"content": ""}), "empty"),
        (
            json!({"content": "x", "media_type": "image/png"}),
            "must be uploaded as a `File`",
        ),
        (
            json!({"content": "x", "media_type": "application/zip"}),
            "not supported",
        ),
        (
            json!({"content": "x", "provenance": "rumour"}),
            "provenance",
        ),
        (
            json!({"content": "x", "metadata": "not an object"}),
            "metadata",
        ),
        (json!({"content": "x", "wait": "yes"}), "wait"),
        (json!({"Text": {"content": "x"}, "source": "s"}), "inside"),
    ];
    for (args, needle) in cases {
        let (is_error, msg) = s.call("alayasiki_ingest", args.clone());
        assert!(is_error, "accepted {args}");
        assert!(msg.as_str().unwrap().contains(needle), "{args} -> {msg}");
    }
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 0);
}

#[test]
fn content_and_metadata_limits_hold_at_their_edges() {
    let dir = TempDir::new("limits");
    let mut s = Server::ready(dir.path());
    let at_limit = "a ".repeat(MAX_CONTENT_BYTES / 2);
    assert_eq!(at_limit.len(), MAX_CONTENT_BYTES);
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": at_limit, "wait": false}),
    );
    assert_eq!(r["bytes"], MAX_CONTENT_BYTES);
    let over = "a".repeat(MAX_CONTENT_BYTES + 1);
    let (is_error, msg) = s.call("alayasiki_ingest", json!({"content": over}));
    assert!(
        is_error && msg.as_str().unwrap().contains("MAX_CONTENT_BYTES"),
        "{msg}"
    );

    // {"k":"..."} is 8 bytes of overhead around the value.
    let meta_at = json!({"k": "x".repeat(MAX_METADATA_BYTES - 8)});
    assert_eq!(meta_at.to_string().len(), MAX_METADATA_BYTES);
    assert!(
        !s.call(
            "alayasiki_ingest",
            json!({"content": "m", "metadata": meta_at})
        )
        .0
    );
    let meta_over = json!({"k": "x".repeat(MAX_METADATA_BYTES - 7)});
    let (is_error, msg) = s.call(
        "alayasiki_ingest",
        json!({"content": "m", "metadata": meta_over}),
    );
    assert!(
        is_error && msg.as_str().unwrap().contains("MAX_METADATA_BYTES"),
        "{msg}"
    );

    let key_at = "k".repeat(MAX_IDEMPOTENCY_KEY_BYTES);
    assert!(
        !s.call(
            "alayasiki_ingest",
            json!({"content": "m", "idempotency_key": key_at})
        )
        .0
    );
    let key_over = "k".repeat(MAX_IDEMPOTENCY_KEY_BYTES + 1);
    assert!(
        s.call(
            "alayasiki_ingest",
            json!({"content": "m", "idempotency_key": key_over})
        )
        .0
    );
    let source_over = "s".repeat(MAX_SOURCE_BYTES + 1);
    assert!(
        s.call(
            "alayasiki_ingest",
            json!({"content": "m", "source": source_over})
        )
        .0
    );
}

#[test]
fn wait_false_returns_pending_and_the_document_becomes_searchable() {
    let dir = TempDir::new("nowait");
    let mut s = Server::ready(dir.path());
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": "The quokka smiled at the camera.", "wait": false}),
    );
    assert!(r["state"] == "pending" || r["state"] == "ready", "{r}");
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        if s.query("quokka")["evidence"].as_array().unwrap().len() == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never became searchable"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn restart_keeps_documents_and_search() {
    let dir = TempDir::new("restart");
    let doc = {
        let mut s = Server::ready(dir.path());
        let d = s.ingest("The archive room is in the basement, behind the blue door.");
        let (status, _) = s.close();
        assert!(status.success());
        d
    };
    let mut s = Server::ready(dir.path());
    let q = s.query("where is the archive room");
    assert_eq!(q["evidence"][0]["document_id"], doc.as_str());
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 1);
}

#[test]
fn resources_list_pages_and_read_refuses_unknown_ids() {
    let dir = TempDir::new("resources");
    let mut s = Server::ready(dir.path());
    let n = RESOURCES_PAGE_SIZE + 5;
    for i in 0..n {
        s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Resource note number {i}"), "wait": i + 1 == n}),
        );
    }
    let first = s.request("resources/list", json!({}))["result"].clone();
    // The communities resource leads the first page, then the documents.
    assert_eq!(first["resources"][0]["uri"], "alayasiki://communities");
    assert_eq!(
        first["resources"].as_array().unwrap().len(),
        RESOURCES_PAGE_SIZE + 1
    );
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    let second = s.request("resources/list", json!({"cursor": cursor}))["result"].clone();
    assert_eq!(second["resources"].as_array().unwrap().len(), 5);
    assert!(second.get("nextCursor").is_none());
    let uri = first["resources"][1]["uri"].as_str().unwrap().to_string();
    let read = s.request("resources/read", json!({"uri": uri}));
    assert_eq!(
        read["result"]["contents"][0]["text"],
        "Resource note number 0"
    );
    for bad in [
        "alayasiki://documents/doc_000000000000000000000000",
        "file:///etc/passwd",
        "alayasiki://nothing",
    ] {
        let r = s.request("resources/read", json!({"uri": bad}));
        assert_eq!(r["error"]["code"], -32002, "{bad}");
        assert_eq!(r["error"]["data"]["uri"], bad);
    }
    assert_eq!(
        s.request("resources/read", json!({}))["error"]["code"],
        -32602
    );
}

#[test]
fn tenants_do_not_see_each_other() {
    let dir = TempDir::new("tenants");
    let doc_a = {
        let mut a = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "a")]);
        a.initialize();
        let r = a.ok(
            "alayasiki_ingest",
            json!({"content": "Tenant A secret: the vault code is 4417.", "idempotency_key": "shared"}),
        );
        let d = r["document_id"].as_str().unwrap().to_string();
        a.close();
        d
    };
    let mut b = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "b")]);
    b.initialize();
    assert_eq!(b.query("vault code")["evidence"], json!([]));
    let r = b.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc_a}")}),
    );
    assert_eq!(r["error"]["code"], -32002);
    let listed = b.request("resources/list", json!({}))["result"]["resources"].clone();
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "only b's communities resource: {listed}"
    );
    let communities = b.request("resources/read", json!({"uri": "alayasiki://communities"}));
    let text = communities["result"]["contents"][0]["text"]
        .as_str()
        .unwrap();
    assert!(!text.contains("4417") && !text.contains("vault"), "{text}");
    let st = b.ok("alayasiki_status", json!({}));
    assert_eq!(st["documents"], 0);
    // Same idempotency key in another tenant is a different namespace.
    let r = b.ok(
        "alayasiki_ingest",
        json!({"content": "b's note", "idempotency_key": "shared"}),
    );
    assert_eq!(r["idempotent_replay"], false);
    let _: Value = r;
}

#[test]
fn very_common_terms_are_left_out_of_ranking_and_reported() {
    let dir = TempDir::new("common");
    let mut s = Server::ready(dir.path());
    let n = 1_200; // above COMMON_TERM_MIN_CHUNKS, so pruning applies
    for i in 0..n {
        let extra = if i == 77 { " The zebra escaped." } else { "" };
        s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Project status report {i}.{extra}"), "wait": i + 1 == n}),
        );
    }
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "project zebra", "mode": "evidence"}),
    );
    assert_eq!(
        q["ignored_terms"],
        json!(["project"]),
        "{}",
        q["ignored_terms"]
    );
    assert!(q["evidence"][0]["text"].as_str().unwrap().contains("zebra"));
    // Only common terms: the newest chunks containing all of them.
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "project status", "mode": "evidence", "top_k": 3, "lanes": ["keyword"]}),
    );
    let texts: Vec<&str> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 3);
    assert!(
        texts
            .iter()
            .all(|t| t.starts_with("Project status report 11")),
        "{texts:?}"
    );
}

/// Stores one conversation turn as its own document; returns its id.
fn store_turn(s: &mut Server, content: &str, source: &str) -> String {
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": content, "source": source}),
    );
    r["document_id"].as_str().unwrap().to_string()
}

/// The document ids of a query's evidence, best first.
fn evidence_documents(q: &Value) -> Vec<String> {
    q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["document_id"].as_str().unwrap().to_string())
        .collect()
}

/// A keyword-only query in evidence mode.
fn keyword_query(s: &mut Server, question: &str) -> Value {
    s.ok(
        "alayasiki_query",
        json!({"query": question, "mode": "evidence", "lanes": ["keyword"]}),
    )
}

#[test]
fn the_turn_before_a_found_turn_comes_back_as_its_neighbour() {
    let dir = TempDir::new("neighbour");
    let mut s = Server::ready(dir.path());
    let ask = store_turn(
        &mut s,
        "Ann: Did you finish the thing you were building?",
        "chat/1",
    );
    // Another conversation stored in between is nobody's neighbour here.
    let other = store_turn(&mut s, "Cy: Lunch at noon?", "chat/2");
    let reply = store_turn(&mut s, "Bo: Yes, the cedar canoe is done.", "chat/1");
    let q = keyword_query(&mut s, "cedar canoe");
    let ids = evidence_documents(&q);
    assert_eq!(ids, [reply, ask], "{q}");
    assert!(!ids.contains(&other));
    let lent = &q["evidence"][1]["lanes"]["neighbour"];
    assert_eq!(lent["rank"], 1, "{q}");
    assert!(q["evidence"][1]["lanes"].get("keyword").is_none());
    assert!(lent["score"].as_f64().unwrap() < q["evidence"][0]["score"].as_f64().unwrap());
}

#[test]
fn the_same_speakers_turn_two_away_comes_back_after_the_reply_between() {
    let dir = TempDir::new("second-neighbour");
    let mut s = Server::ready(dir.path());
    let said = store_turn(
        &mut s,
        "Jon: The grand opening of my dance studio is tomorrow night.",
        "chat/1",
    );
    let reply = store_turn(
        &mut s,
        "Gina: Good luck, you worked so hard for it!",
        "chat/1",
    );
    let went_on = store_turn(
        &mut s,
        "Jon: Thanks! I'm nervous but ready to savour every second.",
        "chat/1",
    );
    let q = keyword_query(&mut s, "grand opening of the dance studio");
    // The hit, the reply beside it (a fifth of its score), then Jon's next
    // turn two away (a smaller share), which no lane found.
    assert_eq!(evidence_documents(&q)[..3], [said, reply, went_on], "{q}");
    let two_away = &q["evidence"][2]["lanes"];
    assert!(two_away.get("keyword").is_none(), "{q}");
    assert_eq!(two_away["neighbour"]["rank"], 1, "{q}");
    let top = q["evidence"][0]["score"].as_f64().unwrap();
    let lent = q["evidence"][2]["score"].as_f64().unwrap();
    assert!((lent - 0.15 * top).abs() < 1e-9 * top, "{q}");
}

#[test]
fn a_question_naming_a_speaker_prefers_what_they_said() {
    let dir = TempDir::new("labels");
    let mut s = Server::ready(dir.path());
    // Bo's turns name Ann and the topic; Ann's own turn names neither
    // "Ann" nor the question's wording as often.
    let bo = store_turn(
        &mut s,
        "Bo: Ann, did your family like the lake? Ann, the family trip sounded fun.",
        "chat/1",
    );
    let ann = store_turn(
        &mut s,
        "Ann: we swam in the lake with the kids, a lovely family day",
        "chat/2",
    );
    let tagged = s.ok(
        "alayasiki_ingest",
        json!({"content": "Kayaks rented for the whole family at the lake.",
               "metadata": {"speaker": "Ann", "session_date": "8 May 2023"}, "source": "chat/3"}),
    );
    let tagged = tagged["document_id"].as_str().unwrap();
    // Without the name, keyword ranking puts Bo's turn first.
    let plain = keyword_query(&mut s, "what did the family do at the lake");
    assert_eq!(evidence_documents(&plain)[0], bo, "{plain}");
    assert!(
        plain["evidence"][0]["lanes"].get("label").is_none(),
        "{plain}"
    );
    // Naming Ann: what she said comes before what was said to her.
    let named = keyword_query(&mut s, "What did Ann do with her family at the lake?");
    let order = evidence_documents(&named);
    let pos = |id: &str| order.iter().position(|d| d == id).unwrap();
    assert!(pos(&ann) < pos(&bo), "{named}");
    // The note is filed under her name by its metadata: it gains too, and
    // what was said to her does not.
    let lanes_of = |id: &str| named["evidence"][pos(id)]["lanes"].clone();
    assert!(lanes_of(tagged)["label"].is_object(), "{named}");
    assert!(lanes_of(&bo).get("label").is_none(), "{named}");
    let gain = &named["evidence"][0]["lanes"]["label"];
    assert_eq!(gain["rank"], 1, "{named}");
    assert!(gain["score"].as_f64().unwrap() > 0.0, "{named}");
}

#[test]
fn a_question_naming_a_period_prefers_what_was_dated_in_it() {
    let dir = TempDir::new("period");
    let mut s = Server::ready(dir.path());
    let autumn = s.ok(
        "alayasiki_ingest",
        json!({"content": "Jo: I finished the quilt at last.", "metadata": {"date": "20 September 2022"}}),
    );
    let spring = s.ok(
        "alayasiki_ingest",
        json!({"content": "Jo: I finished the quilt, finally.", "metadata": {"session_date": "10:00 am on 2 March, 2022"}}),
    );
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "What did Jo finish in March 2022?", "mode": "evidence"}),
    );
    let top = &q["evidence"][0];
    assert_eq!(top["document_id"], spring["document_id"], "{q}");
    assert!(top["lanes"].get("time").is_some(), "{q}");
    let other = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["document_id"] == autumn["document_id"])
        .expect("the other quilt note is still evidence");
    assert!(other["lanes"].get("time").is_none(), "{q}");
    // Without a period in the question there is no time lane.
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "What did Jo finish?", "mode": "evidence"}),
    );
    assert!(q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["lanes"].get("time").is_none()));
}

#[test]
fn a_question_naming_a_month_ranks_every_note_dated_in_it_not_only_the_pools() {
    let dir = TempDir::new("window");
    let mut s = Server::ready(dir.path());
    // 600 notes from 2021 match the question's words better than the one
    // note from May 2023: by words alone it ranks below every one of them,
    // past any pool a lane ranks. (Notes on other things keep the words
    // rare enough to rank by. The May note is stored first: where its
    // score ties a log's, the order of storing decides.)
    let may = s.ok(
        "alayasiki_ingest",
        json!({"content": "Jo: we picked tomatoes by the shed and then read a long novel about ships.",
               "source": "chat/jo", "metadata": {"session_date": "14 May 2023"}}),
    );
    for i in 0..100 {
        s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Note {i}: the weather was mild and the river ran high."),
                   "source": format!("note/{i}"), "wait": false}),
        );
    }
    // Each log in words of its own, so no two are near-duplicates (which
    // would share one place in a pool).
    let colours = [
        "red", "blue", "green", "amber", "violet", "silver", "golden", "coral", "ivory", "olive",
        "teal", "crimson",
    ];
    let sides = [
        "north", "south", "east", "west", "upper", "lower", "inner", "outer", "old", "new",
    ];
    let walls = ["wall", "gate", "fence", "path", "shed"];
    for i in 0..600 {
        let (colour, side, wall) = (colours[i % 12], sides[i / 12 % 10], walls[i / 120]);
        s.ok(
            "alayasiki_ingest",
            json!({"content": format!("Log {i}: {colour} garden tomatoes by the {side} {wall}, garden tomatoes again."),
                   "source": format!("log/{i}"), "wait": false,
                   "metadata": {"date": format!("{} March 2021", i % 28 + 1)}}),
        );
    }
    let deadline = std::time::Instant::now() + TIMEOUT;
    while s.ok("alayasiki_status", json!({}))["jobs"]["pending"] != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "indexing did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let ask = |s: &mut Server, q: &str| {
        s.ok(
            "alayasiki_query",
            json!({"query": q, "mode": "evidence", "lanes": ["keyword"]}),
        )
    };
    let q = ask(&mut s, "What happened to the garden tomatoes in May 2023?");
    // The window's keyword lane finds it: the only note in the window.
    let found = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["document_id"] == may["document_id"])
        .unwrap_or_else(|| panic!("the May note is evidence: {q}"));
    assert_eq!(found["lanes"]["time"]["rank"], 1, "{q}");
    assert!(found["lanes"].get("keyword").is_none(), "{q}");
    // A period ending before it leaves it to the words.
    let before = ask(&mut s, "What happened to the garden tomatoes before 2022?");
    assert!(
        !evidence_documents(&before).contains(&may["document_id"].as_str().unwrap().to_string()),
        "{before}"
    );
    // Without the month, the words alone leave it out.
    let plain = ask(&mut s, "What happened to the garden tomatoes?");
    assert!(
        !evidence_documents(&plain).contains(&may["document_id"].as_str().unwrap().to_string()),
        "{plain}"
    );
}

#[test]
fn a_question_naming_an_open_bound_prefers_what_was_dated_inside_it() {
    let dir = TempDir::new("bound");
    let mut s = Server::ready(dir.path());
    let early = s.ok(
        "alayasiki_ingest",
        json!({"content": "Jo: I finished the quilt.", "metadata": {"date": "2 March 2021"}}),
    );
    let late = s.ok(
        "alayasiki_ingest",
        json!({"content": "Jo: I finished the quilt at last, and the blanket too.", "metadata": {"date": "20 September 2023"}}),
    );
    let first = |s: &mut Server, q: &str| {
        let r = s.ok("alayasiki_query", json!({"query": q, "mode": "evidence"}));
        r["evidence"][0]["document_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        first(&mut s, "What did Jo finish before 2022?"),
        early["document_id"]
    );
    assert_eq!(
        first(&mut s, "What did Jo finish since June 2023?"),
        late["document_id"]
    );
    assert_eq!(
        first(&mut s, "What did Jo finish by 2021-12-31?"),
        early["document_id"]
    );
    assert_eq!(
        first(&mut s, "What did Jo finish after 2022?"),
        late["document_id"]
    );
}

#[test]
fn a_small_top_k_returns_the_first_results_of_a_deeper_ranking() {
    let dir = TempDir::new("depth");
    let mut s = Server::ready(dir.path());
    // Bo's turns repeat the question's words and outrank Ann's turn by
    // keyword. Ranked only as deep as one result, the pools hold Bo's turns
    // and Ann's is out of the keyword pool; ranked deep enough to see it,
    // the question naming Ann puts her turn first, whatever `top_k` asked.
    // (Each names its day early: turns that differ only at their end are
    // near-duplicates, which share one evidence slot.)
    const DAYS: [&str; 7] = ["one", "two", "three", "four", "five", "six", "seven"];
    for (i, day) in DAYS.iter().enumerate() {
        store_turn(
            &mut s,
            &format!("Bo: Ann, day {day}: the kayak on the lake! Kayak, lake, kayak, lake."),
            &format!("chat/bo{i}"),
        );
    }
    let ann = store_turn(&mut s, "Ann: I took the kayak out on the lake.", "chat/ann");
    for (i, n) in ["first", "second", "third", "fourth"].iter().enumerate() {
        store_turn(
            &mut s,
            &format!("Cy: {n} note: the lake was cold this morning, about the weather."),
            &format!("chat/cy{i}"),
        );
    }
    let ask = |s: &mut Server, top_k: usize| {
        evidence_documents(&s.ok(
            "alayasiki_query",
            json!({"query": "What did Ann say about the kayak on the lake?",
                   "mode": "evidence", "lanes": ["keyword", "vector"], "top_k": top_k}),
        ))
    };
    let deep = ask(&mut s, MIN_RANKING_DEPTH);
    assert_eq!(deep[0], ann, "{deep:?}");
    for top_k in 1..MIN_RANKING_DEPTH {
        assert_eq!(ask(&mut s, top_k), deep[..top_k], "top_k {top_k}");
    }
    s.close();
    // ALAYASIKI_RANKING_DEPTH fixes the depth, for evaluation: ranked one
    // deep, Bo's turn comes first; ranked as deep as the default while
    // asking for more, the default's results come first, then the rest.
    let depth = |d: &str| Server::start_with(dir.path(), &[("ALAYASIKI_RANKING_DEPTH", d)]);
    let mut s = depth("1");
    s.initialize();
    assert_ne!(ask(&mut s, MIN_RANKING_DEPTH)[0], ann);
    s.close();
    let mut s = depth(&MIN_RANKING_DEPTH.to_string());
    s.initialize();
    let more = ask(&mut s, MIN_RANKING_DEPTH + 2);
    assert_eq!(more[..deep.len()], deep[..], "{more:?}");
    assert_eq!(more.len(), deep.len() + 2, "{more:?}");
    s.close();
    for bad in ["0", "101", "ten"] {
        let mut s = Server::capturing(dir.path(), &[], &[("ALAYASIKI_RANKING_DEPTH", bad)]);
        let status = wait_timeout(&mut s.child, TIMEOUT).expect("server should exit");
        assert_eq!(status.code(), Some(1), "{bad}");
        // The reader thread may still be draining what it wrote.
        let said = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            s.stderr().contains("ALAYASIKI_RANKING_DEPTH")
        });
        assert!(said, "{}", s.stderr());
    }
}

#[test]
fn an_upload_declaration_over_stdio_says_to_send_the_file_instead() {
    let dir = TempDir::new("upload-stdio");
    let mut s = Server::ready(dir.path());
    let digest = "0".repeat(64);
    let (is_error, value) = s.call(
        "alayasiki_ingest",
        json!({"upload": {"filename": "big.pdf", "size": 1000, "sha256": digest}}),
    );
    assert!(is_error, "{value}");
    let message = value
        .as_str()
        .map(str::to_string)
        .unwrap_or(value.to_string());
    assert!(
        message.contains("alayasiki-api") && message.contains("`File`"),
        "{message}"
    );
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(status["documents"], 0, "{status}");
    s.close();
}
