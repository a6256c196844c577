//! Lifecycle and discovery through the real binary: initialize and version
//! negotiation, pre-initialize behaviour, listing tools, resources and
//! prompts, command-line flags, and a prompt, clean exit on EOF.

mod common;

use common::*;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

#[test]
fn initialize_answers_2024_11_05_with_instructions_and_capabilities() {
    let dir = TempDir::new("init");
    let mut s = Server::start(dir.path());
    for asked in ["2024-11-05"] {
        let r = s.request(
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        );
        let result = &r["result"];
        assert_eq!(result["protocolVersion"], "2024-11-05");
        assert_eq!(result["serverInfo"]["name"], "alayasiki-mcp");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        for cap in ["tools", "resources", "prompts", "logging"] {
            assert!(
                result["capabilities"][cap].is_object(),
                "missing capability {cap}"
            );
        }
        assert!(result["instructions"]
            .as_str()
            .unwrap()
            .contains("alayasiki_query"));
    }
}

#[test]
fn newer_or_unknown_versions_get_a_counter_offer() {
    // 2026-07-28 does not use initialize: the newest revision that does is
    // the counter-offer (tests/protocol_revisions.rs covers every one).
    for asked in ["2026-07-28", "1999-01-01", "garbage"] {
        let dir = TempDir::new("counter");
        let mut s = Server::start(dir.path());
        let r = s.request(
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        );
        assert_eq!(
            r["result"]["protocolVersion"], "2025-11-25",
            "asked {asked}"
        );
    }
}

#[test]
fn initialize_requires_its_fields() {
    let dir = TempDir::new("initfields");
    let mut s = Server::start(dir.path());
    for params in [
        json!({}),
        json!({"protocolVersion": 5, "capabilities": {}, "clientInfo": {}}),
        json!({"protocolVersion": "2024-11-05", "clientInfo": {}}),
        json!({"protocolVersion": "2024-11-05", "capabilities": {}}),
    ] {
        let r = s.request("initialize", params.clone());
        assert_eq!(r["error"]["code"], -32602, "{params}");
    }
    // Still usable afterwards.
    s.initialize();
    let again = s.request(
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    assert_eq!(
        again["error"]["code"], -32600,
        "second initialize is refused"
    );
}

#[test]
fn before_initialize_ping_works_unknown_is_32601_known_is_refused() {
    let dir = TempDir::new("preinit");
    let mut s = Server::start(dir.path());
    assert_eq!(s.request("ping", json!({}))["result"], json!({}));
    let discover = s.request("server/discover", json!({"_meta": {}}));
    assert_eq!(discover["error"]["code"], -32601);
    let early = s.request("tools/list", json!({}));
    assert_eq!(early["error"]["code"], -32600);
    assert!(early["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize"));
    // The client falls back to initialize on the same connection.
    s.initialize();
    assert!(s.request("tools/list", json!({}))["result"]["tools"].is_array());
    assert_eq!(
        s.request("completion/complete", json!({}))["error"]["code"],
        -32601
    );
    assert_eq!(
        s.request("server/discover", json!({}))["error"]["code"],
        -32601
    );
}

#[test]
fn discovery_lists_tools_resources_templates_and_prompts() {
    let dir = TempDir::new("discovery");
    let mut s = Server::ready(dir.path());
    let tools = s.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "alayasiki_ingest",
            "alayasiki_update",
            "alayasiki_query",
            "alayasiki_status",
            "alayasiki_forget",
            "alayasiki_share",
            "alayasiki_memory_write",
            "alayasiki_memory_read",
            "alayasiki_memory_promote",
            "alayasiki_memory_delete"
        ]
    );
    for t in tools.as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object");
        assert!(t["description"].as_str().unwrap().len() > 40);
    }
    let resources = s.request("resources/list", json!({}))["result"]["resources"].clone();
    assert_eq!(resources.as_array().unwrap().len(), 1);
    assert_eq!(resources[0]["uri"], "alayasiki://communities");
    let templates =
        s.request("resources/templates/list", json!({}))["result"]["resourceTemplates"].clone();
    assert_eq!(templates[0]["uriTemplate"], "alayasiki://documents/{id}");
    assert_eq!(
        templates[1]["uriTemplate"],
        "alayasiki://sessions/{session_id}"
    );
    assert_eq!(
        templates[2]["uriTemplate"],
        "alayasiki://documents/{id}/original"
    );
    assert_eq!(templates[3]["uriTemplate"], "alayasiki://entities/{name}");
    let prompts = s.request("prompts/list", json!({}))["result"]["prompts"].clone();
    assert_eq!(prompts[0]["name"], "alayasiki_reasoning");
    assert_eq!(prompts[0]["arguments"][0]["required"], true);
    // A cursor we never issued is invalid.
    assert_eq!(
        s.request("tools/list", json!({"cursor": "x"}))["error"]["code"],
        -32602
    );
    assert_eq!(
        s.request("resources/list", json!({"cursor": "x"}))["error"]["code"],
        -32602
    );
}

#[test]
fn prompt_needs_its_question() {
    let dir = TempDir::new("prompt");
    let mut s = Server::ready(dir.path());
    let ok = s.request(
        "prompts/get",
        json!({"name": "alayasiki_reasoning", "arguments": {"question": "Where is Bob?"}}),
    );
    let text = ok["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("alayasiki_query") && text.contains("Where is Bob?"));
    let missing = s.request(
        "prompts/get",
        json!({"name": "alayasiki_reasoning", "arguments": {}}),
    );
    assert_eq!(missing["error"]["code"], -32602);
    let unknown = s.request("prompts/get", json!({"name": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602);
}

#[test]
fn logging_set_level_validates_levels() {
    let dir = TempDir::new("loglevel");
    let mut s = Server::ready(dir.path());
    assert_eq!(
        s.request("logging/setLevel", json!({"level": "warning"}))["result"],
        json!({})
    );
    assert_eq!(
        s.request("logging/setLevel", json!({"level": "loud"}))["error"]["code"],
        -32602
    );
}

#[test]
fn notifications_are_never_answered() {
    let dir = TempDir::new("notify");
    let mut s = Server::ready(dir.path());
    for m in [
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/unknown",
        "tools/list",
    ] {
        s.send(&json!({"jsonrpc": "2.0", "method": m}));
    }
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/x", "params": [1, 2]}));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(
        s.recv_within(Duration::from_millis(300)),
        None,
        "a notification was answered"
    );
}

#[test]
fn eof_exits_promptly_with_status_zero() {
    let dir = TempDir::new("eof");
    let mut s = Server::ready(dir.path());
    s.ingest("something to flush before exit");
    let (status, took) = s.close();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_millis(1000), "exit took {took:?}");
    // The WAL was checkpointed on the way out.
    let wal = dir.path().join("memory.db-wal");
    assert!(
        std::fs::metadata(&wal)
            .map(|m| m.len() == 0)
            .unwrap_or(true),
        "WAL not checkpointed"
    );
}

#[test]
fn help_and_version_exit_zero_without_opening_a_store() {
    let dir = TempDir::new("help");
    let data = dir.path().join("never-created");
    for flag in ["--help", "-h", "--version", "-V"] {
        let out = Command::new(BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg(flag)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("alayasiki-mcp"), "{flag}: {stdout}");
    }
    assert!(
        !data.exists(),
        "--help/--version must not create the data directory"
    );
    let v = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(v.stdout).unwrap().trim(),
        format!("alayasiki-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_flags_exit_2_with_one_line_naming_the_flag() {
    for (args, needle) in [
        (vec!["--frobnicate"], "--frobnicate"),
        (vec!["--data-dir"], "--data-dir"),
        (vec!["stray"], "stray"),
    ] {
        let out = Command::new(BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn data_dir_comes_from_env_and_is_owner_only() {
    let dir = TempDir::new("envdir");
    let data = dir.path().join("nested/memory");
    let mut child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .env("ALAYASIKI_DATA_DIR", &data)
        .env("ALAYASIKI_LOG", "error")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_timeout(&mut child, TIMEOUT).unwrap().success());
    assert!(data.join("memory.db").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}

#[test]
fn identity_comes_from_the_environment() {
    let dir = TempDir::new("identity");
    let mut s = Server::start_with(
        dir.path(),
        &[
            ("ALAYASIKI_MCP_TENANT", "team-a"),
            ("ALAYASIKI_MCP_SUBJECT", "bot-7"),
        ],
    );
    s.initialize();
    let status = s.ok("alayasiki_status", json!({}));
    assert_eq!(
        (status["tenant"].as_str(), status["subject"].as_str()),
        (Some("team-a"), Some("bot-7"))
    );
    let out = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--data-dir")
        .arg(dir.path().join("other"))
        .env("ALAYASIKI_MCP_TENANT", " ")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ALAYASIKI_MCP_TENANT"));
}

#[test]
fn status_reports_counts_and_settings() {
    let dir = TempDir::new("status");
    let mut s = Server::ready(dir.path());
    s.ingest("one");
    s.ingest("two");
    let st = s.ok("alayasiki_status", json!({}));
    assert_eq!(st["documents"], 2);
    assert_eq!(st["chunks"], 2);
    assert_eq!((&st["entities"], &st["relations"]), (&json!(0), &json!(0)));
    s.ingest("Ada Lovelace joined Acme Corp in London.");
    let graph = s.ok("alayasiki_status", json!({}));
    assert_eq!(graph["entities"], 3, "{graph}");
    assert_eq!(graph["relations"], 2, "{graph}"); // joined Acme Corp, in London
    assert_eq!(st["jobs"], json!({"pending": 0, "failed": 0}));
    assert_eq!(st["durability"], "full");
    assert_eq!(st["version"], env!("CARGO_PKG_VERSION"));
    assert!(st["store_bytes"].as_u64().unwrap() > 0);
    assert!(st["data_dir"].as_str().is_some());
    let (is_error, msg) = s.call("alayasiki_status", json!({"verbose": true}));
    assert!(is_error, "unknown argument accepted: {msg}");
    let _: Value = msg;
}
