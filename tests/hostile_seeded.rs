//! A seeded run of generated hostile input over stdio: malformed frames,
//! every JSON-RPC shape, and every tool called with arguments of random
//! shape and content. Whatever arrives, the server answers each request
//! exactly once, leaks no path or internal name, and stays up.
//!
//! `ALAYASIKI_HOSTILE_CASES` (default 3000) and `ALAYASIKI_HOSTILE_SEED`
//! choose the run; the long runs use the same test with more cases.

mod common;

use common::{Server, TempDir};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// xorshift64*: small, seeded, the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TOOLS: &[&str] = &[
    "alayasiki_ingest",
    "alayasiki_update",
    "alayasiki_query",
    "alayasiki_status",
    "alayasiki_forget",
    "alayasiki_memory_write",
    "alayasiki_memory_read",
    "alayasiki_memory_promote",
    "alayasiki_memory_delete",
    "no_such_tool",
];

const KEYS: &[&str] = &[
    "content",
    "query",
    "session_id",
    "document_id",
    "source",
    "idempotency_key",
    "metadata",
    "top_k",
    "budget",
    "mode",
    "search_mode",
    "lanes",
    "wait",
    "media_type",
    "Text",
    "File",
    "nodes",
    "edges",
    "expires_at",
    "provenance",
    "filename",
    "mime_type",
    "topk",
    "",
];

const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
    "ping",
    "initialize",
    "nope/nothing",
];

fn string(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "memory",
        "Alice",
        "' OR 1=1 --",
        "\"quoted\"",
        "NEAR(a b)",
        "*",
        "\u{200B}",
        "\u{0}",
        "\n",
        "é",
        "日本語",
        "🦀",
        "../../etc/passwd",
        "%s%n",
        "<script>",
        "AND",
        "\\",
        "2026-13-45",
        "local",
        "doc_00000000000000000000",
        "working-memory:x",
    ];
    let n = rng.below(6);
    let mut s = String::new();
    for _ in 0..n {
        let piece: &&str = rng.pick(PIECES);
        s.push_str(piece);
    }
    if rng.below(40) == 0 {
        s.push_str(&"x".repeat(rng.below(70_000)));
    }
    s
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!(rng.below(300) as i64 - 50),
        4 => json!((rng.next() as f64) / 7.0),
        5 => json!(string(rng)),
        6 => Value::Array((0..rng.below(5)).map(|_| value(rng, depth + 1)).collect()),
        _ => Value::Object(arguments(rng, depth + 1)),
    }
}

fn arguments(rng: &mut Rng, depth: usize) -> Map<String, Value> {
    (0..rng.below(5))
        .map(|_| (rng.pick(KEYS).to_string(), value(rng, depth)))
        .collect()
}

/// One generated line, and whether a reply with that id is owed.
fn case(rng: &mut Rng, id: i64) -> (Vec<u8>, bool) {
    match rng.below(10) {
        // Not JSON-RPC at all: bytes, truncations, wrong types.
        0 => {
            let junk: Vec<u8> = (0..rng.below(200))
                .map(|_| rng.next() as u8)
                .filter(|b| *b != b'\n')
                .collect();
            (junk, false)
        }
        1 => (
            serde_json::to_vec(&value(rng, 0)).unwrap(),
            false, // maybe a request by chance, never with our id
        ),
        // A request of a random method with random params.
        2 | 3 => {
            let mut m = json!({"jsonrpc": "2.0", "id": id, "method": rng.pick(METHODS)});
            if rng.below(4) > 0 {
                m["params"] = value(rng, 0);
            }
            (serde_json::to_vec(&m).unwrap(), true)
        }
        // A tool call with random arguments.
        _ => {
            let mut params = json!({"name": rng.pick(TOOLS)});
            if rng.below(6) > 0 {
                params["arguments"] = if rng.below(8) == 0 {
                    value(rng, 0)
                } else {
                    Value::Object(arguments(rng, 0))
                };
            }
            let m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
            (serde_json::to_vec(&m).unwrap(), true)
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_hostile_input_is_answered_once_each_without_leaks() {
    let cases = env_number("ALAYASIKI_HOSTILE_CASES", 3000) as i64;
    let seed = env_number("ALAYASIKI_HOSTILE_SEED", 0x5EED_0A1A_7A51_C1F0).max(1);
    let dir = TempDir::new("hostile-seeded");
    let secret_path = dir.path().to_str().unwrap().to_string();
    let mut server = Server::ready(dir.path());
    let mut rng = Rng(seed);
    let mut owed: HashMap<i64, ()> = HashMap::new();
    // Ids from 1e9 up cannot collide with ids a generated value carries
    // by chance (those are small or u64-sized).
    let base = 1_000_000_000i64;
    let mut answered = 0usize;
    for i in 0..cases {
        let id = base + i;
        let (mut line, needs_reply) = case(&mut rng, id);
        line.push(b'\n');
        server.send_raw(&line);
        if needs_reply {
            owed.insert(id, ());
        }
        // Keep the pipe moving: collect what has arrived.
        while let Some(r) = server.recv_within(std::time::Duration::from_millis(0)) {
            answered += check(&r, &secret_path, &mut owed);
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !owed.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} requests never answered (seed {seed})",
            owed.len()
        );
        if let Some(r) = server.recv_within(std::time::Duration::from_secs(5)) {
            answered += check(&r, &secret_path, &mut owed);
        }
    }
    assert!(answered > 0);
    // Replies owed to no id (errors for frames that were not requests) may
    // still be queued behind the last owed one: collect them before the
    // final ping, whose reply must then be the next message.
    while let Some(r) = server.recv_within(std::time::Duration::from_millis(500)) {
        check(&r, &secret_path, &mut owed);
    }
    assert_eq!(
        server.request("ping", json!({}))["result"],
        json!({}),
        "server stopped answering (seed {seed})"
    );
    let (status, _) = server.close();
    assert!(status.success(), "exit {status:?} (seed {seed})");
}

/// Checks one reply; returns 1 when it answered an owed request.
fn check(reply: &Value, secret_path: &str, owed: &mut HashMap<i64, ()>) -> usize {
    // The local stdio identity is an admin, told the data directory by
    // alayasiki_status; anywhere else the path is a leak.
    let text = reply
        .to_string()
        .replace(&format!("\\\"data_dir\\\":\\\"{secret_path}\\\""), "");
    for leak in [
        secret_path,
        "sqlite",
        "SQLITE",
        "rusqlite",
        "panicked",
        "src/",
        ".rs:",
    ] {
        assert!(!text.contains(leak), "reply leaks {leak:?}: {text:.400}");
    }
    for item in reply
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![reply.clone()])
    {
        if let Some(id) = item["id"].as_i64() {
            if id >= 1_000_000_000 {
                assert!(
                    owed.remove(&id).is_some(),
                    "a second reply, or one never owed, for id {id}: {text:.400}"
                );
                return 1;
            }
        }
    }
    0
}
