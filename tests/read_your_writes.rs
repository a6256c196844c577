//! Read-your-writes per session: requests a client pipelines on one
//! connection take effect in the order it sent them, over stdio and SSE.

mod common;
mod http_common;

use common::{Server, TempDir};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
           "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                      "clientInfo": {"name": "pipelined", "version": "1"}}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// The README's first session: initialize, initialized, an ingest (id 3)
/// and a query about it (id 4), written as one burst.
fn readme_session(fact: &str, wait: bool) -> Vec<Value> {
    vec![
        initialize(1),
        initialized(),
        call(
            3,
            "alayasiki_ingest",
            json!({"content": fact, "metadata": {"source": "notes.md"}, "wait": wait}),
        ),
        call(
            4,
            "alayasiki_query",
            json!({"query": "When does the deploy key rotate?", "mode": "evidence"}),
        ),
    ]
}

fn burst(messages: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend(serde_json::to_vec(m).unwrap());
        out.push(b'\n');
    }
    out
}

/// The JSON of a tool result's first text block.
fn tool_json(reply: &Value) -> Value {
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {reply}"));
    serde_json::from_str(text).unwrap_or(Value::String(text.to_string()))
}

fn evidence_texts(reply: &Value) -> Vec<String> {
    tool_json(reply)["evidence"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|e| e["text"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn check_readme_replies(replies: &HashMap<i64, Value>, fact: &str, run: usize) {
    let ingest = tool_json(&replies[&3]);
    assert!(ingest["document_id"].is_string(), "run {run}: {ingest}");
    let query = &replies[&4];
    let evidence = tool_json(query);
    assert_eq!(
        evidence["evidence"][0]["text"], fact,
        "run {run}: the query did not see the ingest sent before it: {query}"
    );
    assert_eq!(evidence["evidence"][0]["source"], "notes.md", "run {run}");
    assert!(
        query["result"].get("_meta").is_none(),
        "run {run}: no wait ran out: {query}"
    );
}

fn stdio_replies(server: &mut Server, n: usize) -> HashMap<i64, Value> {
    let mut replies = HashMap::new();
    while replies.len() < n {
        let r = server.recv();
        replies.insert(r["id"].as_i64().expect("a reply with an id"), r);
    }
    replies
}

#[test]
fn the_readme_session_pipelined_sees_its_own_ingest_100_times_over_stdio() {
    for run in 0..100 {
        let dir = TempDir::new("ryw-stdio");
        let mut server = Server::start(dir.path());
        // Half the runs ingest without waiting: the query must wait for
        // the document to become searchable all the same.
        let wait = run % 2 == 0;
        let fact = format!("The deploy key rotates every Friday at noon (run {run}).");
        server.send_raw(&burst(&readme_session(&fact, wait)));
        let replies = stdio_replies(&mut server, 3);
        check_readme_replies(&replies, &fact, run);
        let (status, _) = server.close();
        assert!(status.success());
    }
}

#[test]
fn the_readme_session_pipelined_sees_its_own_ingest_100_times_over_sse() {
    let dir = http_common::TempDir::new("ryw-sse");
    let api = http_common::Api::start(dir.path(), &[]);
    for run in 0..100 {
        // A tenant per run, so earlier runs' facts are not in its memory.
        let token = http_common::admin("ryw", &format!("t-ryw-{run}"));
        let sse = http_common::Sse::open(api.addr, &token);
        let wait = run % 2 == 0;
        let fact = format!("The deploy key rotates every Friday at noon (SSE run {run}).");
        // Every POST is answered 202 before its reply is computed, so the
        // four are in flight together, as a pipelining client sends them.
        for m in readme_session(&fact, wait) {
            let r = sse.post(&m);
            assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
        }
        let mut replies = HashMap::new();
        while replies.len() < 3 {
            let r = sse
                .next_message(Duration::from_secs(30))
                .expect("a reply on the stream");
            replies.insert(r["id"].as_i64().unwrap(), r);
        }
        check_readme_replies(&replies, &fact, run);
        sse.close();
    }
}

/// ingest, query, forget, query, ingest, query: each step's answer,
/// reduced to what must not depend on timing.
fn mixed_script() -> Vec<Value> {
    let q = |id| {
        call(
            id,
            "alayasiki_query",
            json!({"query": "Which colour is the staging banner?", "mode": "evidence"}),
        )
    };
    vec![
        call(
            10,
            "alayasiki_ingest",
            json!({"content": "The staging banner is orange.", "source": "ops/staging.md",
                   "wait": false}),
        ),
        q(11),
        call(12, "alayasiki_forget", json!({"source": "ops/staging.md"})),
        q(13),
        call(
            14,
            "alayasiki_ingest",
            json!({"content": "The staging banner is teal since the rebrand.",
                   "source": "ops/staging-v2.md", "wait": false}),
        ),
        q(15),
        call(16, "alayasiki_status", json!({})),
    ]
}

fn outcome(id: i64, reply: &Value) -> Value {
    let v = tool_json(reply);
    match id {
        10 | 14 => json!({"state": v["state"], "replay": v["idempotent_replay"]}),
        12 => json!({"deleted": v["documents"]}),
        16 => json!({"documents": v["documents"], "pending": v["jobs"]["pending"]}),
        _ => json!(evidence_texts(reply)),
    }
}

#[test]
fn a_pipelined_mixed_script_answers_exactly_as_the_sequential_run() {
    let script = mixed_script();
    let sequential = {
        let dir = TempDir::new("ryw-seq");
        let mut server = Server::ready(dir.path());
        let mut out = Vec::new();
        for m in &script {
            server.send(m);
            let r = server.recv();
            out.push(outcome(r["id"].as_i64().unwrap(), &r));
        }
        server.close();
        out
    };
    // What the sequential run must have seen, so the comparison means
    // something: the first query finds the fact, the one after the forget
    // does not, the last finds only the new one.
    assert_eq!(sequential[1], json!(["The staging banner is orange."]));
    assert_eq!(sequential[2], json!({"deleted": 1}));
    assert_eq!(sequential[3], json!([]), "{sequential:?}");
    assert_eq!(
        sequential[5],
        json!(["The staging banner is teal since the rebrand."])
    );
    assert_eq!(sequential[6], json!({"documents": 1, "pending": 0}));
    for run in 0..20 {
        let dir = TempDir::new("ryw-pipe");
        let mut server = Server::ready(dir.path());
        server.send_raw(&burst(&script));
        let replies = stdio_replies(&mut server, script.len());
        let pipelined: Vec<Value> = script
            .iter()
            .map(|m| {
                let id = m["id"].as_i64().unwrap();
                outcome(id, &replies[&id])
            })
            .collect();
        assert_eq!(pipelined, sequential, "run {run}");
        server.close();
    }
}
