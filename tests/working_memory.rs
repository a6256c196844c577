//! Working memory through the real binary (write → read → query merge →
//! promote, limits, TTL expiry, restart) and two identities sharing one
//! process through the protocol layer.

mod common;

use alayasiki_mcp::limits::*;
use common::*;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

fn read_session(s: &mut Server, session: &str) -> Value {
    s.ok("alayasiki_memory_read", json!({"session_id": session}))
}

/// The text `span` addresses in a note, as `alayasiki_memory_read` shows it.
fn span_text(session: &Value, item: &Value) -> String {
    let note = session["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["note_id"] == item["document_id"])
        .unwrap_or_else(|| panic!("no note {} in {session}", item["document_id"]));
    let text = note["text"].as_str().unwrap();
    let (a, b) = (
        item["span"]["start"].as_u64().unwrap() as usize,
        item["span"]["end"].as_u64().unwrap() as usize,
    );
    text[a..b].to_string()
}

#[test]
fn write_read_query_merge_and_promote_twice() {
    let dir = TempDir::new("wm-flow");
    let mut s = Server::ready(dir.path());
    let stored = s.ingest("The release train leaves every Thursday at noon.");

    let first = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "task-1", "content": "Hypothesis: the cache bug comes from the LRU eviction order.",
               "metadata": {"step": 1, "provenance": "agent"}}),
    );
    assert_eq!(first["seq"], 1);
    assert_eq!(first["note_id"], "task-1/1");
    assert_eq!(first["search_lanes"], json!(["keyword", "vector"]));
    assert_eq!(
        first["bytes_charged"],
        "Hypothesis: the cache bug comes from the LRU eviction order.".len()
            + r#"{"provenance":"agent","step":1}"#.len()
    );
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "task-1", "Text": {"content": "# Findings\n\nEviction happens before the write-back completes.",
               "media_type": "text/markdown"}}),
    );
    let png = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', 0, 0];
    let image = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "task-1", "File": {"filename": "trace.png", "content": png.to_vec(),
               "metadata": {"caption": "Flame graph of the eviction path", "alt_text": "evict() dominates"}}}),
    );
    assert_eq!(image["media_type"], "image/png");
    let graph = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "task-1",
               "nodes": [{"id": "cache", "label": "LRU cache", "kind": "component"},
                         {"id": "wb", "label": "write-back"}],
               "edges": [{"from": "cache", "to": "wb", "relation": "races_with"}]}),
    );
    assert_eq!(graph.get("note_id"), None);
    assert_eq!(
        (graph["nodes"].as_u64(), graph["edges"].as_u64()),
        (Some(2), Some(1))
    );

    // Read without a query: everything, in write order.
    let session = read_session(&mut s, "task-1");
    let seqs: Vec<u64> = session["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(session["writes"], 4);
    assert_eq!(
        session["notes"][2]["text"],
        "Flame graph of the eviction path\n\nevict() dominates"
    );
    assert_eq!(session["notes"][2]["file"]["filename"], "trace.png");
    assert_eq!(session["notes"][2]["file"]["bytes"], png.len());
    assert_eq!(session["nodes"][0]["written_by"], 4);
    assert_eq!(session["edges"][0]["relation"], "races_with");
    for key in ["created_at", "updated_at", "expires_at"] {
        assert!(session[key].as_str().unwrap().ends_with('Z'), "{key}");
    }

    // Read with a query: ranked evidence from the session, exact spans.
    let found = s.ok(
        "alayasiki_memory_read",
        json!({"session_id": "task-1", "query": "what does the write-back race with?", "top_k": 2}),
    );
    let evidence = found["evidence"].as_array().unwrap();
    assert!(!evidence.is_empty() && evidence.len() <= 2);
    assert_eq!(evidence[0]["document_id"], "task-1/2");
    assert_eq!(evidence[0]["chunk_id"], "task-1/2:0");
    assert_eq!(evidence[0]["origin"], "session");
    for item in evidence {
        assert_eq!(span_text(&session, item), item["text"].as_str().unwrap());
    }

    // Query merge: persistent and session evidence, each marked.
    let merged = s.ok(
        "alayasiki_query",
        json!({"query": "When does the release train leave, and what about eviction?", "session_id": "task-1"}),
    );
    let origins: Vec<&str> = merged["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["origin"]
                .as_str()
                .expect("every merged item has an origin")
        })
        .collect();
    assert!(
        origins.contains(&"session") && origins.contains(&"memory"),
        "{origins:?}"
    );
    let memory_item = merged["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["origin"] == "memory")
        .unwrap();
    assert_eq!(memory_item["document_id"], stored.as_str());
    // Without session_id, persistent results are as before: no origin.
    let plain = s.query("release train");
    assert!(plain["evidence"][0].get("origin").is_none(), "{plain}");

    // Promote: one document per note; again: nothing new, same ids.
    let promoted = s.ok("alayasiki_memory_promote", json!({"session_id": "task-1"}));
    assert_eq!(promoted["notes"], 3);
    assert_eq!(promoted["stored"], 3);
    assert_eq!(promoted["replayed"], 0);
    assert_eq!(promoted["nodes_not_promoted"], 2);
    let again = s.ok("alayasiki_memory_promote", json!({"session_id": "task-1"}));
    assert_eq!(again["stored"], 0);
    assert_eq!(again["replayed"], 3);
    let ids = |v: &Value| -> Vec<String> {
        v["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["document_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&promoted), ids(&again));
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 4);
    let kept = s.query("flame graph eviction path");
    assert_eq!(kept["evidence"][0]["source"], "working-memory:task-1");
    assert_eq!(kept["evidence"][0]["title"], "trace.png");

    // The session as a resource: the same JSON as memory_read.
    let r = s.request(
        "resources/read",
        json!({"uri": "alayasiki://sessions/task-1"}),
    );
    let content = &r["result"]["contents"][0];
    assert_eq!(content["mimeType"], "application/json");
    let as_resource: Value = serde_json::from_str(content["text"].as_str().unwrap()).unwrap();
    assert_eq!(as_resource["notes"], session["notes"]);
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(
        status["working_memory"]["sessions"][0]["session_id"],
        "task-1"
    );
    assert_eq!(status["working_memory"]["sessions"][0]["notes"], 3);
}

#[test]
fn unknown_sessions_and_bad_input_are_refused_clearly() {
    let dir = TempDir::new("wm-errors");
    let mut s = Server::ready(dir.path());
    for (tool, args) in [
        ("alayasiki_memory_read", json!({"session_id": "nope"})),
        (
            "alayasiki_memory_read",
            json!({"session_id": "nope", "query": "x"}),
        ),
        ("alayasiki_memory_promote", json!({"session_id": "nope"})),
        (
            "alayasiki_query",
            json!({"query": "x", "session_id": "nope"}),
        ),
    ] {
        let (is_error, v) = s.call(tool, args);
        assert!(is_error, "{tool}");
        assert!(v.as_str().unwrap().starts_with("not_found: "), "{v}");
    }
    let unknown = s.request(
        "resources/read",
        json!({"uri": "alayasiki://sessions/nope"}),
    );
    assert_eq!(unknown["error"]["code"], -32002);
    // A malformed id names no session: the same error.
    let malformed = s.request("resources/read", json!({"uri": "alayasiki://sessions/a/b"}));
    assert_eq!(malformed["error"]["code"], unknown["error"]["code"]);
    assert_eq!(malformed["error"]["message"], unknown["error"]["message"]);

    let (is_error, v) = s.call(
        "alayasiki_memory_write",
        json!({"session_id": "s", "content": "x".repeat(MAX_WM_CONTENT_BYTES + 1)}),
    );
    assert!(is_error);
    assert!(v.as_str().unwrap().contains("MAX_WM_CONTENT_BYTES"), "{v}");
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "s", "content": "x".repeat(MAX_WM_CONTENT_BYTES)}),
    );
    let (is_error, v) = s.call(
        "alayasiki_memory_write",
        json!({"session_id": "s", "File": {"filename": "spec.pdf", "mime_type": "application/pdf", "content": "JVBERi0xLjc="}}),
    );
    assert!(is_error);
    assert!(v.as_str().unwrap().contains("alayasiki_ingest"), "{v}");
    let (is_error, v) = s.call(
        "alayasiki_memory_write",
        json!({"session_id": "bad/id", "content": "x"}),
    );
    assert!(is_error);
    assert!(v.as_str().unwrap().starts_with("invalid_input"), "{v}");
    // A refused write stored nothing.
    assert_eq!(read_session(&mut s, "s")["writes"], 1);
}

#[test]
fn sessions_expire_after_the_ttl_and_do_not_survive_a_restart() {
    let dir = TempDir::new("wm-ttl");
    let mut s = Server::start_with(dir.path(), &[("ALAYASIKI_WM_TTL_SECS", "2")]);
    s.initialize();
    // The first write loads the embedding model, which in a debug build
    // can take longer than this TTL: load it before the timed part.
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "warm-up", "content": "load the model"}),
    );
    let w = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "short", "content": "remember me briefly"}),
    );
    assert_eq!(w["seq"], 1);
    assert_eq!(
        read_session(&mut s, "short")["notes"][0]["text"],
        "remember me briefly"
    );
    std::thread::sleep(Duration::from_millis(2300));
    let (is_error, v) = s.call("alayasiki_memory_read", json!({"session_id": "short"}));
    assert!(
        is_error && v.as_str().unwrap().starts_with("not_found"),
        "{v}"
    );
    assert_eq!(
        s.ok("alayasiki_status", json!({}))["working_memory"]["sessions"],
        json!([])
    );
    // The id can be used again; it is a new session.
    let again = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "short", "content": "second life"}),
    );
    assert_eq!(again["seq"], 1);
    assert!(s.close().0.success());

    // A restart forgets every session (TTL or not).
    let mut s = Server::ready(dir.path());
    let (is_error, _) = s.call("alayasiki_memory_read", json!({"session_id": "short"}));
    assert!(is_error);
}

#[test]
fn a_bad_ttl_setting_stops_the_server_at_start() {
    let dir = TempDir::new("wm-bad-ttl");
    let mut s = Server::start_with(dir.path(), &[("ALAYASIKI_WM_TTL_SECS", "0")]);
    let status = wait_timeout(&mut s.child, TIMEOUT).expect("server should exit");
    assert_eq!(status.code(), Some(1));
}

/// Two identities in one process (as over HTTP/SSE): the protocol layer on
/// one shared `MemoryService`, each caller with its own session object.
#[test]
fn two_identities_in_one_process_are_kept_apart() {
    use alayasiki_mcp::protocol::mcp::{Server as Mcp, Session};
    use alayasiki_mcp::service::{MemoryService, Principal, Role};
    use alayasiki_mcp::store::Tenant;

    let dir = TempDir::new("wm-two");
    let service = Arc::new(
        MemoryService::open(
            dir.path(),
            alayasiki_mcp::config::Durability::Normal,
            Arc::new(alayasiki_mcp::embed::BuiltinEmbedder),
        )
        .unwrap(),
    );
    let mcp = Mcp::new(service.clone());
    let session_for = |subject: &str| {
        let s = Session::new(Principal {
            tenant: Tenant::new("team").unwrap(),
            subject: subject.into(),
            roles: vec![Role::Admin],
            scopes: vec![],
            memory: alayasiki_mcp::service::MemoryAccess::Unrestricted,
            anonymous: false,
        });
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": subject, "version": "1"}}});
        assert!(mcp.handle(&s, init).unwrap()["result"].is_object());
        s
    };
    let (alice, bob) = (session_for("alice"), session_for("bob"));
    let call = |s: &Session, method: &str, params: Value| -> Value {
        mcp.handle(
            s,
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
        .unwrap()
    };
    let tool = |s: &Session, name: &str, args: Value| -> (bool, String) {
        let r = call(s, "tools/call", json!({"name": name, "arguments": args}));
        (
            r["result"]["isError"].as_bool().unwrap(),
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let (err, _) = tool(
        &alice,
        "alayasiki_memory_write",
        json!({"session_id": "plan", "content": "Alice's secret plan: acquire Widgets."}),
    );
    assert!(!err);
    // Bob sees Alice's session exactly as a session nobody has written.
    let bob_view = |id: &str| {
        [
            tool(&bob, "alayasiki_memory_read", json!({"session_id": id})),
            tool(
                &bob,
                "alayasiki_memory_read",
                json!({"session_id": id, "query": "plan"}),
            ),
            tool(&bob, "alayasiki_memory_promote", json!({"session_id": id})),
            tool(
                &bob,
                "alayasiki_query",
                json!({"query": "plan", "session_id": id}),
            ),
        ]
        .map(|(e, text)| (e, text.replace(id, "<id>")))
    };
    assert_eq!(bob_view("plan"), bob_view("never-written"));
    assert!(bob_view("plan")
        .iter()
        .all(|(e, t)| *e && t.starts_with("not_found")));
    let resource = |s: &Session, id: &str| {
        let mut r = call(
            s,
            "resources/read",
            json!({"uri": format!("alayasiki://sessions/{id}")}),
        );
        r["error"]["data"] = Value::Null;
        r
    };
    assert_eq!(resource(&bob, "plan"), resource(&bob, "never-written"));
    assert!(resource(&alice, "plan")["result"].is_object());
    // Bob's write to the same id is his own session; Alice's is untouched.
    let (err, _) = tool(
        &bob,
        "alayasiki_memory_write",
        json!({"session_id": "plan", "content": "Bob's plan: lunch."}),
    );
    assert!(!err);
    let (_, alice_read) = tool(
        &alice,
        "alayasiki_memory_read",
        json!({"session_id": "plan"}),
    );
    let alice_read: Value = serde_json::from_str(&alice_read).unwrap();
    assert_eq!(alice_read["notes"].as_array().unwrap().len(), 1);
    assert!(alice_read["notes"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Alice"));
    let (_, status) = tool(&bob, "alayasiki_status", json!({}));
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(
        status["working_memory"]["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(status["working_memory"]["sessions"][0]["notes"], 1);
    service.shutdown();
}

/// Images and audio are stored as their description when promoted, with
/// or without a filename (an image written without one used to fail the
/// promotion, and one with a name was stored as an image whose bytes were
/// its caption).
#[test]
fn described_files_are_promoted_as_their_description() {
    let dir = TempDir::new("wm-described");
    let mut s = Server::ready(dir.path());
    let png = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', 0, 0];
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "media", "File": {"content": png.to_vec(), "mime_type": "image/png",
               "metadata": {"caption": "Whiteboard sketch of the ferry timetable"}}}),
    );
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "media", "File": {"filename": "standup.wav", "content": b"RIFF....WAVE".to_vec(),
               "metadata": {"transcript": "The night ferry moves to the south pier on Monday"}}}),
    );
    let promoted = s.ok("alayasiki_memory_promote", json!({"session_id": "media"}));
    assert_eq!(
        (promoted["notes"].as_u64(), promoted["stored"].as_u64()),
        (Some(2), Some(2)),
        "{promoted}"
    );
    for (doc, text) in promoted["documents"].as_array().unwrap().iter().zip([
        "Whiteboard sketch of the ferry timetable",
        "The night ferry moves to the south pier on Monday",
    ]) {
        let id = doc["document_id"].as_str().unwrap();
        let read = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{id}")}),
        );
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["mimeType"], "text/plain", "{read}");
        assert!(contents["text"].as_str().unwrap().contains(text), "{read}");
    }
    let found = s.query("Where does the night ferry leave from on Monday?");
    assert!(
        found["evidence"][0]["text"]
            .as_str()
            .unwrap()
            .contains("south pier"),
        "{found}"
    );
}

#[test]
fn a_deleted_session_is_gone_at_once_and_its_budget_returns() {
    let dir = TempDir::new("wm-delete");
    let mut s = Server::start(dir.path());
    s.initialize();
    let write = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "scratch-1", "content": "The reef buoy is red and blinks twice.",
               "nodes": [{"id": "buoy", "label": "Reef buoy"}]}),
    );
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "scratch-2", "content": "Keep this one."}),
    );
    let charged = write["bytes_charged"].as_u64().unwrap();
    let deleted = s.ok(
        "alayasiki_memory_delete",
        json!({"session_id": "scratch-1"}),
    );
    assert_eq!(
        deleted,
        json!({"session_id": "scratch-1", "notes": 1, "nodes": 1, "edges": 0, "writes": 1,
               "bytes_released": charged})
    );
    // Gone for reads, searches and status; the other session stays.
    let (failed, why) = s.call("alayasiki_memory_read", json!({"session_id": "scratch-1"}));
    assert!(failed, "{why}");
    let status = s.ok("alayasiki_status", json!({}));
    let live: Vec<&str> = status["working_memory"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(live, ["scratch-2"], "{status}");
    let (failed, why) = s.call(
        "alayasiki_memory_delete",
        json!({"session_id": "scratch-1"}),
    );
    assert!(failed, "a session is deleted once: {why}");
    let (failed, why) = s.call("alayasiki_memory_delete", json!({"session_id": "bad id"}));
    assert!(failed, "{why}");
    // The same id starts a new, empty session.
    let again = s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "scratch-1", "content": "A fresh start."}),
    );
    assert_eq!(again["seq"], 1, "{again}");
    s.close();
}
