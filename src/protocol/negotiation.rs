//! What each revision is told about this server, and how its results are
//! shaped: `initialize`'s version negotiation (echo a supported revision,
//! else the newest that still uses `initialize`), the capabilities each
//! era declares, the stateless era's `server/discover`, its results'
//! `resultType`, server identity and caching hints, and the structured
//! output older revisions do not define.

use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;

use super::catalog::Feature;
use super::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST};
use super::mcp::{Server, MEMORY_RESULT_TTL_MS, STATIC_RESULT_TTL_MS};
use super::revision::{self, Revision};
use super::session::{lock, Session};

impl Server {
    pub(super) fn initialize(
        &self,
        session: &Session,
        id: Value,
        params: &Map<String, Value>,
    ) -> Value {
        let version = params.get("protocolVersion");
        let Some(Value::String(requested)) = version else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs protocolVersion (a string)",
            );
        };
        let Some(Value::Object(declared)) = params.get("capabilities") else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs capabilities (an object)",
            );
        };
        let Some(Value::Object(client)) = params.get("clientInfo") else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs clientInfo (an object)",
            );
        };
        // Answer with the client's revision when we speak it through
        // initialize, else counter-offer the newest that uses it; the
        // client decides whether it can continue.
        let agreed = Revision::for_initialize(requested);
        {
            // Set before the flag, so no request sees a session that is
            // initialized at no revision.
            let mut revision = session.revision.lock().unwrap_or_else(|p| p.into_inner());
            if session.initialized.load(Ordering::SeqCst) {
                return jsonrpc::error(id, INVALID_REQUEST, "this session is already initialized");
            }
            *revision = Some(agreed);
            *lock(&session.client_capabilities) = declared.clone();
            session.initialized.store(true, Ordering::SeqCst);
        }
        let name = client.get("name").and_then(Value::as_str).unwrap_or("?");
        log::info!(
            "client {name:?} initialized (asked for protocol {requested}, speaking {})",
            agreed.as_str()
        );
        let version = agreed.as_str();
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(false),
            "serverInfo": self.catalog().server_info(),
        });
        if let Some(instructions) = self.catalog().instructions() {
            result["instructions"] = json!(instructions);
        }
        jsonrpc::result(id, result)
    }

    /// What this server offers: tools, resources and prompts, logging in
    /// the legacy revisions, and the catalog's features (no list-changed
    /// notifications are sent).
    pub(super) fn capabilities(&self, modern: bool) -> Value {
        let catalog = self.catalog();
        let mut caps = json!({"tools": {}, "resources": {}, "prompts": {}});
        if !modern {
            // Logging is deprecated in the modern revision (a request asks
            // for logs in its `_meta`).
            caps["logging"] = json!({});
            if catalog.supports(Feature::Subscriptions) {
                caps["resources"]["subscribe"] = json!(true);
            }
        }
        if catalog.supports(Feature::Completion) {
            caps["completions"] = json!({});
        }
        caps
    }

    /// `server/discover`: the revisions, capabilities and identity.
    pub(super) fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": revision::supported_versions(),
            "capabilities": self.capabilities(true),
        });
        if let Some(instructions) = self.catalog().instructions() {
            result["instructions"] = json!(instructions);
        }
        result
    }

    /// A modern result: `resultType` (`complete` unless the handler said
    /// otherwise), the server's identity in `_meta`, and caching hints on
    /// lists and reads.
    pub(super) fn modern_result(&self, method: &str, mut result: Value) -> Value {
        let Value::Object(o) = &mut result else {
            return result;
        };
        let input_required = o.get("resultType").and_then(Value::as_str) == Some("input_required");
        o.entry("resultType").or_insert_with(|| json!("complete"));
        let meta = o
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                revision::META_SERVER_INFO.into(),
                self.catalog().server_info(),
            );
        }
        let cache = match method {
            "server/discover" | "tools/list" | "prompts/list" | "resources/templates/list" => {
                Some((STATIC_RESULT_TTL_MS, "public"))
            }
            "resources/list" | "resources/read" => Some((MEMORY_RESULT_TTL_MS, "private")),
            _ => None,
        };
        if let Some((ttl, scope)) = cache.filter(|_| !input_required) {
            o.insert("ttlMs".into(), json!(ttl));
            o.insert("cacheScope".into(), json!(scope));
        }
        result
    }
}

/// Drops what revisions before 2025-06-18 do not define: tools'
/// `outputSchema` and results' `structuredContent`.
pub(super) fn gate_structured_output(method: &str, mut result: Value, revision: Revision) -> Value {
    if revision.has_structured_output() {
        return result;
    }
    match method {
        "tools/list" => {
            if let Some(Value::Array(list)) = result.get_mut("tools") {
                for tool in list.iter_mut().filter_map(Value::as_object_mut) {
                    tool.remove("outputSchema");
                }
            }
        }
        "tools/call" => {
            if let Some(o) = result.as_object_mut() {
                o.remove("structuredContent");
            }
        }
        _ => {}
    }
    result
}
