//! Every protocol revision over stdio, through the real binary: what
//! `initialize` agrees on, what each revision adds or removes, and the
//! stateless 2026-07-28 requests served beside (and before) a session.

mod common;

use common::{Server, TempDir};
use serde_json::{json, Value};

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    })
}

fn initialize(s: &mut Server, version: &str) -> Value {
    s.request(
        "initialize",
        json!({"protocolVersion": version, "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    )
}

#[test]
fn initialize_echoes_each_legacy_revision_and_counters_the_rest_with_2025_11_25() {
    let dir = TempDir::new("revisions-init");
    for (asked, agreed) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut s = Server::start(dir.path());
        let r = initialize(&mut s, asked);
        assert_eq!(r["result"]["protocolVersion"], agreed, "{asked}: {r}");
        assert_eq!(r["result"]["serverInfo"]["name"], "alayasiki-mcp");
        s.close();
    }
}

#[test]
fn structured_output_and_batches_follow_the_agreed_revision() {
    let dir = TempDir::new("revisions-gates");
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut s = Server::start(dir.path());
        initialize(&mut s, version);
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let structured = version >= "2025-06-18";
        let tools = s.request("tools/list", json!({}));
        for t in tools["result"]["tools"].as_array().unwrap() {
            assert_eq!(
                t.get("outputSchema").is_some(),
                structured,
                "{version}: {t}"
            );
        }
        let r = s.request(
            "tools/call",
            json!({"name": "alayasiki_status", "arguments": {}}),
        );
        assert_eq!(
            r["result"].get("structuredContent").is_some(),
            structured,
            "{version}: {r}"
        );
        // Batches: part of JSON-RPC through 2025-03-26, removed after.
        s.send(&json!([{"jsonrpc": "2.0", "id": "b1", "method": "ping"},
                       {"jsonrpc": "2.0", "id": "b2", "method": "tools/list"}]));
        let reply = s.recv();
        if version <= "2025-03-26" {
            assert_eq!(
                reply.as_array().map(Vec::len),
                Some(2),
                "{version}: {reply}"
            );
        } else {
            assert_eq!(reply["error"]["code"], -32600, "{version}: {reply}");
        }
        // An unknown resource: MCP's -32002 in every legacy revision.
        let r = s.request(
            "resources/read",
            json!({"uri": "alayasiki://documents/doc_000000000000000000000000"}),
        );
        assert_eq!(r["error"]["code"], -32002, "{version}");
        s.close();
    }
}

#[test]
fn stateless_requests_are_served_with_no_initialize_and_beside_a_session() {
    let dir = TempDir::new("revisions-stateless");
    let mut s = Server::start(dir.path());
    // The stdio probe of a dual-era client, before anything else.
    let d = s.request("server/discover", json!({"_meta": meta()}));
    let result = &d["result"];
    assert_eq!(result["supportedVersions"][0], MODERN, "{d}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].is_u64());
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["capabilities"].get("logging").is_none());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "alayasiki-mcp"
    );
    // Tools work statelessly, with structured output.
    let r = s.request(
        "tools/call",
        json!({"name": "alayasiki_ingest", "_meta": meta(),
               "arguments": {"content": "The modern lighthouse keeper is Ines."}}),
    );
    let doc = r["result"]["structuredContent"]["document_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    assert_eq!(r["result"]["resultType"], "complete");
    let r = s.request(
        "tools/call",
        json!({"name": "alayasiki_query", "_meta": meta(),
               "arguments": {"query": "who keeps the modern lighthouse", "mode": "evidence"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["evidence"][0]["document_id"],
        doc.as_str()
    );
    let r = s.request(
        "resources/read",
        json!({"uri": format!("alayasiki://documents/{doc}"), "_meta": meta()}),
    );
    assert_eq!(r["result"]["cacheScope"], "private");
    assert_eq!(r["result"]["ttlMs"], 0);
    // What 2026-07-28 removed, and what it changed.
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "completion/complete",
    ] {
        let r = s.request(method, json!({"_meta": meta()}));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    let r = s.request(
        "resources/read",
        json!({"uri": "alayasiki://documents/doc_000000000000000000000000", "_meta": meta()}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // An unknown revision names what we speak; missing fields are invalid.
    let r = s.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    let r = s.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Legacy requests still need initialize...
    let r = s.request("tools/list", json!({}));
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // ...and after it, both eras are served side by side.
    assert_eq!(
        initialize(&mut s, "2025-11-25")["result"]["protocolVersion"],
        "2025-11-25"
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(s.request("tools/list", json!({}))["result"]["tools"].is_array());
    let r = s.request("tools/list", json!({"_meta": meta()}));
    assert_eq!(r["result"]["resultType"], "complete");
    // A legacy client that repeats its own revision in _meta stays legacy.
    let r = s.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}),
    );
    assert!(r["result"].get("resultType").is_none(), "{r}");
    s.close();
}
