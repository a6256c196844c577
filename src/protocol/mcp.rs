//! MCP 2024-11-05 method dispatch and per-connection session state.
//!
//! A [`Session`] is one client connection (a stdio process, an SSE stream):
//! its identity, whether `initialize` happened, its log level and the
//! requests in flight. [`Server`] is shared by all sessions and turns one
//! incoming JSON value (a message or a batch) into at most one reply value.
//! It never panics on input and never answers a notification.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::jsonrpc::{
    self, Incoming, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
};
use super::{prompts, resources, tools};
use crate::limits::MAX_BATCH_MESSAGES;
use crate::service::{MemoryService, Principal};

/// The protocol revision this server speaks.
pub const PROTOCOL_VERSION: &str = "2024-11-05";

/// JSON-RPC error code for a caller lacking permission (implementation
/// range, outside the codes later MCP revisions reserve).
pub const FORBIDDEN: i64 = -32003;

/// Methods this server implements (anything else is `-32601`).
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
];

/// Told to the model at `initialize`: when to reach for memory.
pub const INSTRUCTIONS: &str = "alayasiki is your persistent, local knowledge memory. \
Before answering anything that may depend on earlier sessions, the user's preferences, project \
facts, decisions or documents stored before, call alayasiki_query with the actual question and \
ground your answer in the evidence it returns, citing items by their [n] markers or chunk ids; \
say so when memory has no evidence. When you learn something durable (a fact, decision, \
preference, document or note worth keeping), call alayasiki_ingest with it, with a source and an \
idempotency_key so repeats are not stored twice. When the user asks you to forget something, \
or stored content is wrong, call alayasiki_forget. alayasiki_status reports what is stored and \
whether indexing is still pending.";

/// One client connection's state.
pub struct Session {
    principal: Principal,
    initialized: AtomicBool,
    log_level: Mutex<String>,
    /// Requests being worked on (by serialized id) → cancelled?
    in_flight: Mutex<HashMap<String, bool>>,
}

impl Session {
    pub fn new(principal: Principal) -> Session {
        Session {
            principal,
            initialized: AtomicBool::new(false),
            log_level: Mutex::new("info".into()),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::SeqCst)
    }

    /// The level last set with `logging/setLevel`.
    pub fn log_level(&self) -> String {
        self.log_level
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn begin(&self, id: &Value) {
        self.flights().insert(id.to_string(), false);
    }

    /// Ends a request; true if it was cancelled meanwhile (so the reply
    /// must not be sent).
    fn end(&self, id: &Value) -> bool {
        self.flights().remove(&id.to_string()).unwrap_or(false)
    }

    fn cancel(&self, id: &Value) {
        if let Some(flag) = self.flights().get_mut(&id.to_string()) {
            *flag = true;
        }
    }

    fn flights(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The dispatcher, shared by every session of the process.
pub struct Server {
    service: Arc<MemoryService>,
}

impl Server {
    pub fn new(service: Arc<MemoryService>) -> Server {
        Server { service }
    }

    pub fn service(&self) -> &MemoryService {
        &self.service
    }

    /// True for messages cheap and order-sensitive enough that a transport
    /// should handle them in its reader, before anything queued after them:
    /// `initialize`, `ping` and notifications.
    pub fn is_inline(value: &Value) -> bool {
        match value {
            Value::Object(o) => {
                !o.contains_key("id")
                    || matches!(
                        o.get("method").and_then(Value::as_str),
                        Some("initialize" | "ping")
                    )
            }
            _ => false,
        }
    }

    /// Handles a message or a batch; `None` when nothing is to be sent.
    pub fn handle(&self, session: &Session, value: Value) -> Option<Value> {
        self.handle_as(session, session.principal(), value)
    }

    /// Like [`Server::handle`], but acting as `caller` instead of the
    /// principal the session was opened with. Transports that authenticate
    /// every message (SSE re-checks the token of each POST) pass the
    /// identity and permissions of that message here; the session keeps
    /// only its protocol state.
    pub fn handle_as(&self, session: &Session, caller: &Principal, value: Value) -> Option<Value> {
        match value {
            Value::Array(items) => self.handle_batch(session, caller, items),
            single => self.handle_one(session, caller, single, false),
        }
    }

    fn handle_batch(
        &self,
        session: &Session,
        caller: &Principal,
        items: Vec<Value>,
    ) -> Option<Value> {
        if items.is_empty() {
            return Some(jsonrpc::error(Value::Null, INVALID_REQUEST, "empty batch"));
        }
        if items.len() > MAX_BATCH_MESSAGES {
            return Some(jsonrpc::error(
                Value::Null,
                INVALID_REQUEST,
                &format!(
                    "batch has {} messages; the limit is {MAX_BATCH_MESSAGES}",
                    items.len()
                ),
            ));
        }
        let replies: Vec<Value> = items
            .into_iter()
            .filter_map(|item| self.handle_one(session, caller, item, true))
            .collect();
        (!replies.is_empty()).then_some(Value::Array(replies))
    }

    fn handle_one(
        &self,
        session: &Session,
        caller: &Principal,
        value: Value,
        in_batch: bool,
    ) -> Option<Value> {
        match jsonrpc::classify(value) {
            Err(reply) => Some(reply),
            Ok(Incoming::Response) => None,
            Ok(Incoming::Notification { method, params }) => {
                self.notification(session, &method, &params);
                None
            }
            Ok(Incoming::Request { id, method, params }) => {
                if in_batch && method == "initialize" {
                    return Some(jsonrpc::error(
                        id,
                        INVALID_REQUEST,
                        "initialize must not be sent inside a batch",
                    ));
                }
                session.begin(&id);
                let reply = self.request(session, caller, id.clone(), &method, params);
                let cancelled = session.end(&id);
                (!cancelled).then_some(reply)
            }
        }
    }

    fn notification(&self, session: &Session, method: &str, params: &Map<String, Value>) {
        match method {
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId") {
                    session.cancel(id);
                }
            }
            // `initialized`, progress, roots changes and anything unknown
            // need no action and never an answer.
            _ => log::trace!("notification {method}"),
        }
    }

    fn request(
        &self,
        session: &Session,
        caller: &Principal,
        id: Value,
        method: &str,
        params: Map<String, Value>,
    ) -> Value {
        if !METHODS.contains(&method) {
            return jsonrpc::error(id, METHOD_NOT_FOUND, &format!("method not found: {method}"));
        }
        if method == "initialize" {
            return self.initialize(session, id, &params);
        }
        if method == "ping" {
            return jsonrpc::result(id, json!({}));
        }
        if !session.is_initialized() {
            return jsonrpc::error(
                id,
                INVALID_REQUEST,
                "server not initialized: send initialize first",
            );
        }
        // A handler bug must cost one request, not the connection.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.dispatch(session, caller, method, &params)
        }));
        match outcome {
            Ok(Ok(result)) => jsonrpc::result(id, result),
            Ok(Err(fault)) => fault.into_reply(id),
            Err(_) => {
                log::error!("handler for {method} panicked");
                jsonrpc::error(id, INTERNAL_ERROR, "internal error")
            }
        }
    }

    fn dispatch(
        &self,
        session: &Session,
        caller: &Principal,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, Fault> {
        let memory = self.service.for_caller(caller);
        match method {
            "tools/list" => {
                no_cursor(params)?;
                Ok(json!({"tools": tools::list()}))
            }
            "tools/call" => tools::call(&memory, params),
            "resources/list" => resources::list(&memory, params),
            "resources/templates/list" => {
                no_cursor(params)?;
                Ok(json!({"resourceTemplates": resources::templates()}))
            }
            "resources/read" => resources::read(&memory, params),
            "prompts/list" => {
                no_cursor(params)?;
                Ok(json!({"prompts": prompts::list()}))
            }
            "prompts/get" => prompts::get(params),
            "logging/setLevel" => {
                let level = params.get("level").and_then(Value::as_str).unwrap_or("");
                if crate::logging::level_from_mcp(level).is_none() {
                    return Err(Fault::new(
                        INVALID_PARAMS,
                        "level must be one of: debug, info, notice, warning, error, critical, \
                         alert, emergency",
                    ));
                }
                *session.log_level.lock().unwrap_or_else(|p| p.into_inner()) = level.to_string();
                Ok(json!({}))
            }
            _ => Err(Fault::new(METHOD_NOT_FOUND, "method not found")),
        }
    }

    fn initialize(&self, session: &Session, id: Value, params: &Map<String, Value>) -> Value {
        let version = params.get("protocolVersion");
        let Some(Value::String(requested)) = version else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs protocolVersion (a string)",
            );
        };
        if !params.get("capabilities").is_some_and(Value::is_object) {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs capabilities (an object)",
            );
        }
        let Some(Value::Object(client)) = params.get("clientInfo") else {
            return jsonrpc::error(
                id,
                INVALID_PARAMS,
                "initialize needs clientInfo (an object)",
            );
        };
        if session.initialized.swap(true, Ordering::SeqCst) {
            return jsonrpc::error(id, INVALID_REQUEST, "this session is already initialized");
        }
        let name = client.get("name").and_then(Value::as_str).unwrap_or("?");
        log::info!("client {name:?} initialized (asked for protocol {requested})");
        // Answer with the client's version when we speak it, else counter-
        // offer ours; the client decides whether it can continue.
        let version = if requested == PROTOCOL_VERSION {
            requested.as_str()
        } else {
            PROTOCOL_VERSION
        };
        jsonrpc::result(
            id,
            json!({
                "protocolVersion": version,
                "capabilities": {
                    "tools": {},
                    "resources": {},
                    "prompts": {},
                    "logging": {}
                },
                "serverInfo": {"name": "alayasiki-mcp", "version": env!("CARGO_PKG_VERSION")},
                "instructions": INSTRUCTIONS
            }),
        )
    }
}

/// A protocol-level failure (a JSON-RPC error reply).
#[derive(Debug)]
pub struct Fault {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl Fault {
    pub fn new(code: i64, message: impl Into<String>) -> Fault {
        Fault {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Fault {
        self.data = Some(data);
        self
    }

    fn into_reply(self, id: Value) -> Value {
        match self.data {
            Some(d) => jsonrpc::error_with_data(id, self.code, &self.message, d),
            None => jsonrpc::error(id, self.code, &self.message),
        }
    }
}

/// Lists here fit one page, so any cursor is one we never issued.
fn no_cursor(params: &Map<String, Value>) -> Result<(), Fault> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(Fault::new(INVALID_PARAMS, "invalid cursor")),
    }
}
