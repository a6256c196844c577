//! Protocol faults: requests sent before `initialize` never run, and
//! identities that only look blank are refused.

mod common;
mod http_common;

use common::{Server, TempDir};
use serde_json::{json, Value};

fn ingest(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "alayasiki_ingest",
                      "arguments": {"content": format!("early note {id}"), "wait": false}}})
}

#[test]
fn requests_sent_before_initialize_are_refused_even_when_it_follows_at_once() {
    const EARLY: i64 = 3000;
    let dir = TempDir::new("pre-init");
    let mut server = Server::start(dir.path());
    // One burst: thousands of ingests, then initialize right behind them,
    // so the reader handles initialize while workers still hold ingests.
    let mut burst = Vec::new();
    for id in 1..=EARLY {
        burst.extend(serde_json::to_vec(&ingest(id)).unwrap());
        burst.push(b'\n');
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                 "clientInfo": {"name": "early", "version": "1"}}});
    burst.extend(serde_json::to_vec(&init).unwrap());
    burst.push(b'\n');
    server.send_raw(&burst);
    let mut refused = 0;
    let mut initialized = false;
    for _ in 0..=EARLY {
        let r = server.recv();
        if r["id"] == 0 {
            initialized = r["result"]["protocolVersion"].is_string();
            continue;
        }
        assert_eq!(
            r["error"]["code"], -32600,
            "a request before initialize ran: {r}"
        );
        refused += 1;
    }
    assert!(initialized);
    assert_eq!(refused, EARLY);
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let status = server.ok("alayasiki_status", json!({}));
    assert_eq!(status["documents"], 0, "{status}");
    server.close();
}

#[test]
fn tokens_naming_an_invisible_subject_or_tenant_are_refused() {
    use http_common::{claims, sign, Api, TempDir};
    let dir = TempDir::new("invisible-ids");
    let api = Api::start(dir.path(), &[]);
    for (sub, tenant) in [
        ("\u{200B}", "acme"),
        ("agent", "\u{200B}"),
        ("\u{FEFF}\u{2060}", "acme"),
        ("agent", " \u{200D} "),
    ] {
        let token = sign(claims(sub, tenant, &["admin"], ""));
        let r = api.call("GET", "/v1/status", &token, None);
        assert_eq!(r.status, 401, "sub {sub:?} tenant {tenant:?} accepted");
        assert!(r.header("WWW-Authenticate").is_some());
    }
    let ok = sign(claims("agent\u{200B}1", "acme", &["admin"], ""));
    assert_eq!(api.call("GET", "/v1/status", &ok, None).status, 200);
}

#[test]
fn an_invisible_stdio_identity_is_refused_at_start() {
    let dir = TempDir::new("invisible-stdio");
    for var in ["ALAYASIKI_MCP_TENANT", "ALAYASIKI_MCP_SUBJECT"] {
        let out = std::process::Command::new(common::BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg("--data-dir")
            .arg(dir.path())
            .env(var, "\u{200B}")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{var}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("must not be blank"), "{var}: {stderr}");
    }
}

/// Identities that render as nothing though no character of them is a
/// space or a format character: a combining mark alone, a braille blank,
/// fillers, variation selectors, an enclosing mark.
const SHOWS_NOTHING: &[&str] = &[
    "\u{0301}",
    "\u{2800}",
    "\u{2800}\u{2800}",
    "\u{115F}\u{1160}",
    "\u{FFA0}",
    "\u{3164}\u{FE0F}",
    "\u{20DD}",
    "\u{0301}\u{200B}\u{E0100}",
];

#[test]
fn identities_with_no_visible_character_are_refused_at_start() {
    let dir = TempDir::new("no-glyph-stdio");
    for var in ["ALAYASIKI_MCP_TENANT", "ALAYASIKI_MCP_SUBJECT"] {
        for value in SHOWS_NOTHING {
            let out = std::process::Command::new(common::BIN)
                .env("ALAYASIKI_IN_PROCESS", "1")
                .arg("--data-dir")
                .arg(dir.path())
                .env(var, value)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{var}={value:?}: {stderr}");
            assert!(
                stderr.contains(var) && stderr.contains("needs a visible character"),
                "{var}={value:?}: {stderr}"
            );
        }
    }
    // A mark on a letter is a visible name.
    let out = std::process::Command::new(common::BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--data-dir")
        .arg(dir.path())
        .env("ALAYASIKI_MCP_SUBJECT", "Jose\u{0301}")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn tokens_whose_subject_or_tenant_shows_nothing_are_refused() {
    use http_common::{claims, sign, Api, TempDir};
    let dir = TempDir::new("no-glyph-ids");
    let api = Api::start(dir.path(), &[]);
    for blank in SHOWS_NOTHING {
        for (sub, tenant) in [(*blank, "acme"), ("agent", *blank)] {
            let token = sign(claims(sub, tenant, &["admin"], ""));
            let r = api.call("GET", "/v1/status", &token, None);
            assert_eq!(r.status, 401, "sub {sub:?} tenant {tenant:?} accepted");
            assert!(r.header("WWW-Authenticate").is_some());
        }
    }
    let ok = sign(claims("\u{2800}agent\u{0301}", "acme", &["admin"], ""));
    assert_eq!(api.call("GET", "/v1/status", &ok, None).status, 200);
}
