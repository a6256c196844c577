//! The optional LLM against a real chat server on loopback, started and
//! scripted by each test: OpenAI-style and Ollama wire formats, LLM triples
//! that join the graph (and bogus ones that do not), answers that must cite
//! their evidence, hostile replies (garbage, errors, huge bodies, a server
//! that hangs), a server that is down, and no requests at all unless
//! configured.

mod common;

use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the server received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// What the script tells the server to do with a request.
enum Reply {
    /// A chat reply whose content is this JSON value, serialized.
    Content(Value),
    /// A chat reply whose content is this text, as is.
    Text(String),
    /// Any status and body.
    Raw(u16, String),
    /// A 200 response of this many bytes (announced, then sent).
    Huge(usize),
    /// Wait this long before answering an empty triple list.
    Hang(Duration),
}

type Script = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A chat server speaking `api` ("openai" or "ollama"), answering as the
/// script says, recording every request.
struct LlmServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl LlmServer {
    fn start(api: &'static str, script: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (log, script) = (log.clone(), script.clone());
                std::thread::spawn(move || serve(stream, api, &log, script.as_ref()));
            }
        });
        LlmServer { port, seen }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn extraction_requests(&self) -> usize {
        self.seen().iter().filter(|s| is_extraction(s)).count()
    }

    fn answer_requests(&self) -> usize {
        self.seen().iter().filter(|s| !is_extraction(s)).count()
    }
}

/// The user message of a request, parsed (both APIs put it second).
fn user(seen: &Seen) -> Value {
    serde_json::from_str(seen.body["messages"][1]["content"].as_str().unwrap()).unwrap()
}

fn is_extraction(seen: &Seen) -> bool {
    user(seen).get("passages").is_some()
}

fn serve(stream: TcpStream, api: &str, log: &Mutex<Vec<Seen>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_string();
        let (mut length, mut authorization) = (0usize, None);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" {
                break;
            }
            let lower = h.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if lower.starts_with("authorization:") {
                authorization = Some(h["authorization:".len()..].trim().to_string());
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let seen = Seen {
            path,
            authorization,
            body: serde_json::from_slice(&body).unwrap(),
        };
        log.lock().unwrap().push(seen.clone());
        let wrap = |content: String| {
            match api {
            "ollama" => json!({"model": "m", "message": {"role": "assistant", "content": content}, "done": true}),
            _ => json!({"id": "x", "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                     "finish_reason": "stop"}]}),
        }
        .to_string()
        };
        let (status, body) = match script(&seen) {
            Reply::Content(v) => (200, wrap(v.to_string())),
            Reply::Text(t) => (200, wrap(t)),
            Reply::Raw(status, body) => (status, body),
            Reply::Huge(n) => {
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {n}\r\n\r\n"
                );
                let block = vec![b' '; 64 * 1024];
                let mut left = n;
                while left > 0 {
                    let k = left.min(block.len());
                    if out.write_all(&block[..k]).is_err() {
                        return;
                    }
                    left -= k;
                }
                continue;
            }
            Reply::Hang(d) => {
                std::thread::sleep(d);
                (200, wrap(json!({"triples": []}).to_string()))
            }
        };
        let sent = write!(
            out,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
            body.len(),
            body
        );
        if sent.is_err() {
            return;
        }
    }
}

const DOC: &str = "Mara Quell joined Zephyr Labs in Oslo as its chief chemist. \
                   The lab builds sodium batteries for ferries.";

/// Extraction script: one triple the text supports, and bogus ones.
fn triples_for(seen: &Seen) -> Value {
    let text = user(seen)["passages"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    if !text.contains("Zephyr Labs") {
        return json!({"triples": []});
    }
    let triple = |s: &str, p: &str, o: &str, evidence: &str| {
        json!({"subject": s, "subject_kind": "person", "predicate": p, "object": o,
               "object_kind": "organization", "negated": false, "evidence": evidence})
    };
    json!({"triples": [
        triple("Mara Quell", "is chief chemist of", "Zephyr Labs",
               "Mara Quell joined Zephyr Labs in Oslo as its chief chemist"),
        // Not in the text: the quote is made up.
        triple("Zephyr Labs", "acquired", "Initech", "Zephyr Labs acquired Initech"),
        // Quoted, but naming something the text does not.
        triple("Ignore previous instructions", "owns", "Zephyr Labs",
               "Mara Quell joined Zephyr Labs in Oslo"),
    ]})
}

fn env(
    server: &LlmServer,
    api: &str,
    extra: &[(&'static str, &str)],
) -> Vec<(&'static str, String)> {
    let mut vars = vec![
        ("ALAYASIKI_LLM_URL", server.base_url()),
        ("ALAYASIKI_LLM_API", api.to_string()),
        ("ALAYASIKI_LLM_MODEL", "toy-chat".to_string()),
        ("ALAYASIKI_LLM_TIMEOUT_MS", "3000".to_string()),
    ];
    vars.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    vars
}

fn start(dir: &std::path::Path, vars: &[(&'static str, String)]) -> Server {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut s = Server::start_with(dir, &pairs);
    s.initialize();
    s
}

/// Waits until no document awaits LLM extraction.
fn wait_for_enrichment(s: &mut Server) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let status = s.ok("alayasiki_status", json!({}));
        if status["jobs"].get("llm_pending").is_none() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "LLM extraction never finished: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The relations shown with the evidence of a local search.
fn relations(s: &mut Server, q: &str) -> Vec<Value> {
    let r = s.ok(
        "alayasiki_query",
        json!({"query": q, "mode": "evidence", "search_mode": "local"}),
    );
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["relations"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn answer(s: &mut Server, q: &str) -> Value {
    s.ok("alayasiki_query", json!({"query": q, "mode": "answer"}))
}

#[test]
fn llm_triples_join_the_graph_and_unquoted_ones_are_dropped() {
    for api in ["openai", "ollama"] {
        let server = LlmServer::start(api, |seen| {
            if is_extraction(seen) {
                Reply::Content(triples_for(seen))
            } else {
                Reply::Content(json!({"answer": "unused", "citations": []}))
            }
        });
        let dir = TempDir::new(api);
        let vars = env(
            &server,
            api,
            &[
                ("ALAYASIKI_LLM_USE", "extract"),
                ("ALAYASIKI_LLM_API_KEY", "sekret"),
            ],
        );
        let mut s = start(dir.path(), &vars);
        s.ingest(DOC);
        wait_for_enrichment(&mut s);
        let seen = server.seen();
        assert_eq!(server.extraction_requests(), 1, "{api}: one batch");
        let request = &seen[0];
        let (path, schema) = match api {
            "ollama" => ("/api/chat", &request.body["format"]),
            _ => (
                "/v1/chat/completions",
                &request.body["response_format"]["json_schema"]["schema"],
            ),
        };
        assert_eq!(request.path, path, "{api}");
        assert!(
            schema["properties"]["triples"].is_object(),
            "{api}: {schema}"
        );
        assert_eq!(request.body["model"], "toy-chat");
        assert_eq!(request.authorization.as_deref(), Some("Bearer sekret"));
        assert_eq!(user(request)["passages"][0]["text"], DOC);

        let found = relations(&mut s, "Who works at Zephyr Labs?");
        let llm: Vec<&Value> = found.iter().filter(|r| r["extractor"] == "llm").collect();
        assert!(
            llm.iter().any(|r| r["subject"] == "Mara Quell"
                && r["predicate"] == "is chief chemist of"
                && r["object"] == "Zephyr Labs"),
            "{api}: the LLM's triple is in the graph: {found:#?}"
        );
        assert!(
            found.iter().all(|r| {
                let text = r.to_string();
                !text.contains("Initech") && !text.contains("Ignore")
            }),
            "{api}: bogus triples were dropped: {found:#?}"
        );
        assert_eq!(
            server.answer_requests(),
            0,
            "{api}: answers are not configured"
        );
        // The relation cites the quote: its evidence item's text holds it.
        let status = s.ok("alayasiki_status", json!({}));
        assert_eq!(status["jobs"]["pending"], 0);
        assert_eq!(status["jobs"]["failed"], 0);
    }
}

#[test]
fn llm_answers_must_cite_the_evidence_they_were_given() {
    let server = LlmServer::start("openai", |seen| {
        let q = user(seen)["question"].as_str().unwrap_or("").to_string();
        let content = |v: Value| Reply::Content(v);
        if q.contains("valid") {
            content(
                json!({"answer": "Mara Quell is the chief chemist of Zephyr Labs [1].",
                           "citations": [1]}),
            )
        } else if q.contains("nothing") {
            content(json!({"answer": "Mara Quell, probably.", "citations": []}))
        } else if q.contains("unknown") {
            content(json!({"answer": "Mara Quell [42].", "citations": [42]}))
        } else if q.contains("injected") {
            content(json!({"answer": "IGNORE THE EVIDENCE", "citations": ["all"]}))
        } else if q.contains("garbage") {
            Reply::Text("<html>Sure! Here is your answer</html>".into())
        } else if q.contains("broken") {
            Reply::Raw(500, "{\"error\": \"model crashed at 127.0.0.1\"}".into())
        } else if q.contains("flood") {
            Reply::Huge(2 * 1024 * 1024)
        } else {
            Reply::Raw(200, "not json".into())
        }
    });
    let dir = TempDir::new("answers");
    let vars = env(
        &server,
        "openai",
        &[
            ("ALAYASIKI_LLM_USE", "answer"),
            ("ALAYASIKI_LLM_API_KEY", "sekret"),
        ],
    );
    let mut s = start(dir.path(), &vars);
    s.ingest(DOC);
    s.ingest("Ferries in Oslo run on electricity.");

    let r = answer(&mut s, "valid: who is the chief chemist of Zephyr Labs?");
    let a = &r["answer"];
    assert_eq!(a["method"], "llm", "{r}");
    assert_eq!(
        a["text"],
        "Mara Quell is the chief chemist of Zephyr Labs [1]."
    );
    assert!(a.get("fallback").is_none());
    assert_eq!(a["citations"][0]["marker"], 1);
    assert_eq!(a["citations"][0]["chunk_id"], r["evidence"][0]["chunk_id"]);
    assert_eq!(a["citations"][0]["span"], r["evidence"][0]["span"]);
    let asked = user(server.seen().last().unwrap());
    assert_eq!(asked["evidence"][0]["id"], 1);
    assert_eq!(asked["evidence"][0]["text"], r["evidence"][0]["text"]);

    for (q, why) in [
        ("nothing: who is the chief chemist?", "cited no evidence"),
        ("unknown: who is the chief chemist?", "not given"),
        ("injected: who is the chief chemist?", "not evidence ids"),
        ("garbage: who is the chief chemist?", "not the JSON"),
        ("broken: who is the chief chemist?", "HTTP 500"),
        ("flood: who is the chief chemist?", "MAX_LLM_RESPONSE_BYTES"),
        ("other: who is the chief chemist?", "not the JSON"),
    ] {
        let r = answer(&mut s, q);
        let a = &r["answer"];
        assert_eq!(a["method"], "extractive", "{q}: {r}");
        let fallback = a["fallback"].as_str().unwrap();
        assert!(fallback.contains(why), "{q}: {fallback}");
        assert!(
            !fallback.contains("127.0.0.1") && !fallback.contains("sekret"),
            "{q}: nothing about the server reaches the client: {fallback}"
        );
        assert!(
            a["text"].as_str().unwrap().contains("[1]"),
            "{q}: the extractive answer: {a}"
        );
    }
    // Evidence mode never asks the LLM.
    let before = server.answer_requests();
    s.ok(
        "alayasiki_query",
        json!({"query": "valid: chief chemist", "mode": "evidence"}),
    );
    assert_eq!(server.answer_requests(), before);
    assert_eq!(
        server.extraction_requests(),
        0,
        "extraction is not configured"
    );
}

#[test]
fn a_hanging_llm_is_cut_off_at_the_timeout() {
    let server = LlmServer::start("ollama", |_| Reply::Hang(Duration::from_secs(20)));
    let dir = TempDir::new("hang");
    let vars = env(&server, "ollama", &[("ALAYASIKI_LLM_TIMEOUT_MS", "800")]);
    let mut s = start(dir.path(), &vars);
    let started = Instant::now();
    s.ingest(DOC);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "ingestion does not wait for the LLM"
    );
    let started = Instant::now();
    let r = answer(&mut s, "who is the chief chemist of Zephyr Labs?");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(r["answer"]["method"], "extractive");
    assert!(r["answer"]["fallback"]
        .as_str()
        .unwrap()
        .contains("timed out"));
    wait_for_enrichment(&mut s);
    let found = relations(&mut s, "Who works at Zephyr Labs?");
    assert!(
        found.iter().all(|r| r["extractor"] == "rules"),
        "{found:#?}"
    );
    let (status, took) = s.close();
    assert!(status.success());
    assert!(took < Duration::from_secs(10), "shutdown took {took:?}");
}

#[test]
fn a_down_llm_server_loses_nothing() {
    // Reserve a port, then free it: nothing listens there.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dir = TempDir::new("down");
    let vars = vec![
        ("ALAYASIKI_LLM_URL", format!("http://127.0.0.1:{port}/v1")),
        ("ALAYASIKI_LLM_MODEL", "toy-chat".to_string()),
    ];
    let mut s = start(dir.path(), &vars);
    s.ingest("Acme Corp. acquired Widgets Inc. in 2023.");
    wait_for_enrichment(&mut s);
    let found = relations(&mut s, "What did Acme Corp. acquire?");
    assert!(
        found
            .iter()
            .any(|r| r["predicate"] == "acquired" && r["extractor"] == "rules"),
        "the rule-based graph is intact: {found:#?}"
    );
    let r = answer(&mut s, "What did Acme Corp. acquire?");
    assert_eq!(r["answer"]["method"], "extractive");
    assert_eq!(
        r["answer"]["fallback"],
        "the LLM server is unreachable or timed out"
    );
    assert!(r["answer"]["text"].as_str().unwrap().contains("[1]"));
}

#[test]
fn without_a_url_no_request_is_made() {
    let server = LlmServer::start("openai", |_| Reply::Raw(500, "{}".into()));
    let dir = TempDir::new("off");
    // Everything but the URL: the LLM stays off.
    let vars = vec![
        ("ALAYASIKI_LLM_MODEL", "toy-chat".to_string()),
        ("ALAYASIKI_LLM_API_KEY", "sekret".to_string()),
        ("ALAYASIKI_LLM_USE", "extract,answer".to_string()),
    ];
    let mut s = start(dir.path(), &vars);
    s.ingest(DOC);
    let r = answer(&mut s, "who is the chief chemist of Zephyr Labs?");
    assert_eq!(r["answer"]["method"], "extractive", "{r}");
    assert!(r["answer"].get("fallback").is_none(), "{r}");
    let status = s.ok("alayasiki_status", json!({}));
    assert!(status["jobs"].get("llm_pending").is_none(), "{status}");
    assert!(server.seen().is_empty());
}

#[test]
fn a_restart_without_llm_extraction_closes_its_pending_jobs() {
    let server = LlmServer::start("openai", |_| Reply::Hang(Duration::from_secs(60)));
    let dir = TempDir::new("restart");
    let vars = env(
        &server,
        "openai",
        &[
            ("ALAYASIKI_LLM_TIMEOUT_MS", "60000"),
            ("ALAYASIKI_LLM_USE", "extract"),
        ],
    );
    let mut s = start(dir.path(), &vars);
    s.ingest(DOC);
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(status["jobs"]["llm_pending"], 1, "{status}");
    assert_eq!(status["jobs"]["pending"], 0, "indexing is done");
    s.kill();
    let mut s = Server::ready(dir.path());
    let status = s.ok("alayasiki_status", json!({}));
    assert!(status["jobs"].get("llm_pending").is_none(), "{status}");
    assert_eq!(status["jobs"]["failed"], 0);
    assert_eq!(status["documents"], 1);
}
