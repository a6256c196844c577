//! What a server offers over MCP: its tools, resources and prompts, and
//! the optional features (completion, resource subscriptions) it has.
//!
//! [`super::mcp::Server`] knows the protocol (sessions, revisions, errors,
//! batches, ordering, the stateless era's `_meta`); a [`Catalog`] knows
//! the content. The shipped binaries serve [`MemoryCatalog`]: the memory's
//! tools, its documents as resources and its reasoning prompt. The
//! conformance fixture server (`tests/conformance_fixtures`) serves the
//! official suite's fixture content through the same protocol and
//! transport code, so the suite judges that code with content a memory
//! server has no business offering.
//!
//! Every handler that may talk to the client while it runs (`tools/call`,
//! `resources/read`, `prompts/get`) gets a [`Call`]: progress and log
//! notifications, server-to-client requests in the session-based era, and
//! input-required results in the stateless one.

use serde_json::{json, Map, Value};

use super::call::Call;
use super::jsonrpc::METHOD_NOT_FOUND;
use super::mcp::Fault;
use super::ordering::Kind;
use super::revision::Revision;
use super::{prompts, resources, tools};
use crate::service::Memory;

/// A feature a catalog may offer beyond tools, resources and prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// `completion/complete` (and the `completions` capability).
    Completion,
    /// `resources/subscribe` and `resources/unsubscribe` (session-based
    /// revisions only; 2026-07-28 removed them).
    Subscriptions,
}

/// The content a server offers. Lists answer one page: a cursor the
/// catalog did not issue is refused by the server before it asks.
pub trait Catalog: Send + Sync {
    /// `serverInfo`: the server's name and version.
    fn server_info(&self) -> Value;

    /// Told to the model at `initialize` and in `server/discover`.
    fn instructions(&self) -> Option<&str>;

    /// Whether the catalog offers `feature`.
    fn supports(&self, feature: Feature) -> bool {
        let _ = feature;
        false
    }

    /// What a `tools/call` of `name` with `arguments` does to stored
    /// memory, for its session's order (see [`super::ordering`]).
    fn tool_kind(&self, name: &str, arguments: Option<&Value>) -> Kind;

    /// The `tools` array of `tools/list` (with `outputSchema` where a tool
    /// has one; the server drops it for revisions without it).
    fn tools(&self, revision: Revision) -> Vec<Value>;

    /// `tools/call`: unknown tools and malformed params are faults; what
    /// the tool itself rejects is an `isError` result.
    fn call_tool(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault>;

    /// `resources/list` (the catalog reads its own cursor).
    fn resources(&self, memory: &Memory<'_>, params: &Map<String, Value>) -> Result<Value, Fault>;

    /// The `resourceTemplates` array of `resources/templates/list`.
    fn resource_templates(&self) -> Vec<Value>;

    /// `resources/read`; an unknown URI is
    /// [`RESOURCE_NOT_FOUND`](super::jsonrpc::RESOURCE_NOT_FOUND) (the
    /// server gives it each revision's code).
    fn read_resource(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault>;

    /// `resources/subscribe` (`on`) or `resources/unsubscribe` of `uri`,
    /// when [`Feature::Subscriptions`] is offered.
    fn subscribe(&self, call: &Call<'_>, uri: &str, on: bool) -> Result<(), Fault> {
        let _ = (call, uri, on);
        Err(Fault::new(METHOD_NOT_FOUND, "method not found"))
    }

    /// The `prompts` array of `prompts/list`.
    fn prompts(&self) -> Vec<Value>;

    /// `prompts/get`.
    fn get_prompt(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault>;

    /// `completion/complete`, when [`Feature::Completion`] is offered.
    fn complete(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        let _ = (call, params);
        Err(Fault::new(METHOD_NOT_FOUND, "method not found"))
    }
}

/// The memory's own catalog: what `alayasiki-mcp` and `alayasiki-api`
/// serve.
pub struct MemoryCatalog;

impl Catalog for MemoryCatalog {
    fn server_info(&self) -> Value {
        json!({"name": "alayasiki-mcp", "version": env!("CARGO_PKG_VERSION")})
    }

    fn instructions(&self) -> Option<&str> {
        Some(super::mcp::INSTRUCTIONS)
    }

    fn tool_kind(&self, name: &str, arguments: Option<&Value>) -> Kind {
        match tools::find(name) {
            Some(t) if !t.mutates => Kind::Read,
            // An ingest that supersedes reads what it replaces: ordered
            // as any other write, after every earlier request.
            Some(t)
                if t.name == tools::INGEST
                    && !arguments.is_some_and(|a| {
                        a.get("supersedes").is_some() || a.get("replace_source").is_some()
                    }) =>
            {
                let key = ["Text", "File"]
                    .iter()
                    .filter_map(|shape| arguments.and_then(|a| a.get(shape)))
                    .chain(arguments)
                    .find_map(|a| a.get("idempotency_key"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Kind::Ingest { key }
            }
            // Unknown tools are refused; ordered as writes to be safe.
            _ => Kind::Write,
        }
    }

    fn tools(&self, _revision: Revision) -> Vec<Value> {
        tools::list()
    }

    fn call_tool(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        tools::call(call.memory(), params)
    }

    fn resources(&self, memory: &Memory<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        resources::list(memory, params)
    }

    fn resource_templates(&self) -> Vec<Value> {
        resources::templates()
    }

    fn read_resource(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        resources::read(call.memory(), params)
    }

    fn prompts(&self) -> Vec<Value> {
        prompts::list()
    }

    fn get_prompt(&self, _call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        prompts::get(params)
    }
}
