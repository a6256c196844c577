//! MCP method dispatch, for every revision this server speaks
//! ([`super::revision`]).
//!
//! [`Server`] is shared by all sessions ([`super::session`]: one per
//! client connection) and turns one incoming JSON value (a message or a
//! batch) into at most one reply value. It never panics on input and never
//! answers a notification. What each revision is told at `initialize` or
//! `server/discover`, and how its results are shaped, is
//! `negotiation`.
//!
//! A request whose `params._meta` names a modern revision (2026-07-28) is
//! served statelessly whatever the session's state: its `_meta` is checked
//! ([`revision::request_meta`]), only the methods of that revision exist
//! (`server/discover` among them; `ping`, `initialize` and
//! `logging/setLevel` do not), and its result carries `resultType`, the
//! server's identity and, for lists and reads, caching hints.

use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::call::{Call, NoPeer, Peer};
use super::catalog::{Catalog, MemoryCatalog};
use super::jsonrpc::{
    self, Incoming, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
};
use super::methods::{is_legacy_method, is_modern_method};
use super::negotiation::gate_structured_output;
use super::ordering::{Kind, Turn};
use super::revision::{self, Revision};
pub use super::session::{Queued, Session};
use crate::limits::MAX_BATCH_MESSAGES;
use crate::service::{Memory, MemoryService, Principal};

/// The revision a session speaks until its `initialize` says otherwise
/// (and the one the stdio server's documentation is written for).
pub const PROTOCOL_VERSION: &str = "2024-11-05";

/// How long a client may cache what never changes while this binary runs
/// (the tool, prompt and template lists, `server/discover`), in ms.
pub const STATIC_RESULT_TTL_MS: u64 = 3_600_000;

/// How long a client may cache a caller's stored memory (resource lists and
/// reads): not at all, as any write or forget changes it.
pub const MEMORY_RESULT_TTL_MS: u64 = 0;

/// JSON-RPC error code for a caller lacking permission (implementation
/// range, outside the codes later MCP revisions reserve).
pub const FORBIDDEN: i64 = -32003;

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

/// Whether `value` is a JSON-RPC response (to a request this server sent).
fn is_response(value: &Value) -> bool {
    value.as_object().is_some_and(|o| {
        !o.contains_key("method")
            && o.contains_key("id")
            && (o.contains_key("result") || o.contains_key("error"))
            && o.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
    })
}

/// The dispatcher, shared by every session of the process.
pub struct Server {
    service: Arc<MemoryService>,
    catalog: Arc<dyn Catalog>,
}

impl Server {
    /// The memory's server ([`MemoryCatalog`]).
    pub fn new(service: Arc<MemoryService>) -> Server {
        Server::with_catalog(service, Arc::new(MemoryCatalog))
    }

    /// A server offering `catalog`'s content (the memory service still
    /// answers for identities, usage and read-your-writes).
    pub fn with_catalog(service: Arc<MemoryService>, catalog: Arc<dyn Catalog>) -> Server {
        Server { service, catalog }
    }

    pub fn service(&self) -> &MemoryService {
        &self.service
    }

    /// The memory service, shared.
    pub fn shared_service(&self) -> Arc<MemoryService> {
        self.service.clone()
    }

    pub fn catalog(&self) -> &dyn Catalog {
        &*self.catalog
    }

    /// True for messages cheap and order-sensitive enough that a transport
    /// should handle them in its reader, before anything queued after them:
    /// `initialize`, `ping`, `server/discover`, notifications and
    /// responses (a call may be waiting for one).
    pub fn is_inline(value: &Value) -> bool {
        match value {
            Value::Object(o) => {
                !o.contains_key("id")
                    || is_response(value)
                    || matches!(
                        o.get("method").and_then(Value::as_str),
                        Some("initialize" | "ping" | "server/discover")
                    )
            }
            _ => false,
        }
    }

    /// Whether `value` is a request `session` serves statelessly under the
    /// modern revision: it carries the modern `_meta`, and the session has
    /// not agreed on a legacy revision that the `_meta` merely repeats (a
    /// legacy client may echo its revision there).
    pub fn is_modern(session: &Session, value: &Value) -> bool {
        value
            .get("params")
            .and_then(Value::as_object)
            .is_some_and(|params| session.serves_modern(params))
    }

    /// What a message does to stored memory, for its session's order, as
    /// the memory's own tools define it: a call of `alayasiki_ingest` is an
    /// ingest (under its idempotency key), a call of any other tool that
    /// mutates, or a batch holding one, is a write, and everything else a
    /// read. [`Server::kind_of`] asks this server's catalog instead.
    pub fn kind(value: &Value) -> Kind {
        kind_in(&MemoryCatalog, value)
    }

    /// [`Server::kind`] as this server's catalog defines its tools.
    pub fn kind_of(&self, value: &Value) -> Kind {
        kind_in(self.catalog(), value)
    }

    /// Handles a message or a batch; `None` when nothing is to be sent.
    pub fn handle(&self, session: &Session, value: Value) -> Option<Value> {
        self.handle_as(session, session.principal(), value)
    }

    /// The replies to a message that arrived before `initialize`, which
    /// is not run: an error for each request in it.
    pub fn refuse_uninitialized(&self, value: Value) -> Option<Value> {
        refuse_uninitialized(self.catalog(), value)
    }

    /// Handles a message in its session's order: once the requests its
    /// `ticket` must follow have taken effect (see [`super::ordering`]).
    pub fn handle_ordered(
        &self,
        session: &Session,
        caller: &Principal,
        value: Value,
        queued: Queued,
    ) -> Option<Value> {
        self.handle_ordered_with(session, caller, value, queued, &NoPeer)
    }

    /// [`Server::handle_ordered`], with `peer` carrying what the handler
    /// sends the client while it runs (progress, logs, requests). A request
    /// that stores a document and asked for progress hears when the
    /// document is stored, before its indexing is waited for.
    pub fn handle_ordered_with(
        &self,
        session: &Session,
        caller: &Principal,
        value: Value,
        queued: Queued,
        peer: &(dyn Peer + Sync),
    ) -> Option<Value> {
        let Queued {
            ticket,
            initialized,
        } = queued;
        if !initialized && !Server::is_modern(session, &value) {
            // Nothing ran, so the ticket is released at once.
            return refuse_uninitialized(self.catalog(), value);
        }
        // An ingest is applied as soon as its document is admitted.
        let token = progress_token(&value);
        let on_admitted = |doc_id: &str| {
            ticket.applied(doc_id);
            report_admitted(peer, token.as_ref(), doc_id);
        };
        let memory = match ticket.kind() {
            Kind::Ingest { .. } => self.service.for_caller_observing(caller, &on_admitted),
            _ => self.service.for_caller(caller),
        };
        let turn = ticket.wait_turn(|ids, deadline| memory.await_searchable(ids, deadline));
        let reply = self.handle_in(session, &memory, value, peer);
        // An ingest told the order of its document on admission already.
        let unindexed = match ticket.kind() {
            Kind::Ingest { .. } => Vec::new(),
            _ => memory.take_unindexed(),
        };
        drop(memory);
        ticket.finish(unindexed);
        reply.map(|r| annotate(r, &turn))
    }

    /// A request of the modern revision that arrived with no session (a
    /// Streamable HTTP POST of the stateless era): served as `caller`,
    /// whatever its `_meta` says (a request lacking the modern `_meta` is
    /// refused as malformed). `None` for a notification.
    pub fn handle_stateless(&self, caller: &Principal, value: Value) -> Option<Value> {
        self.handle_stateless_with(caller, value, &NoPeer)
    }

    /// [`Server::handle_stateless`], with `peer` carrying what the handler
    /// sends the client while it runs (progress, logs; as in
    /// [`Server::handle_ordered_with`], a stored document is reported).
    pub fn handle_stateless_with(
        &self,
        caller: &Principal,
        value: Value,
        peer: &(dyn Peer + Sync),
    ) -> Option<Value> {
        let token = progress_token(&value);
        let on_admitted = |doc_id: &str| report_admitted(peer, token.as_ref(), doc_id);
        let memory = self.service.for_caller_observing(caller, &on_admitted);
        match jsonrpc::classify(value) {
            Err(reply) => Some(reply),
            Ok(Incoming::Request { id, method, params }) => {
                Some(self.modern(&memory, id, &method, params, peer))
            }
            Ok(_) => None,
        }
    }

    /// Like [`Server::handle`], but acting as `caller` instead of the
    /// principal the session was opened with. Transports that authenticate
    /// every message (SSE re-checks the token of each POST) pass the
    /// identity and permissions of that message here; the session keeps
    /// only its protocol state.
    pub fn handle_as(&self, session: &Session, caller: &Principal, value: Value) -> Option<Value> {
        self.handle_in(session, &self.service.for_caller(caller), value, &NoPeer)
    }

    fn handle_in(
        &self,
        session: &Session,
        memory: &Memory<'_>,
        value: Value,
        peer: &dyn Peer,
    ) -> Option<Value> {
        match value {
            Value::Array(_) if !session.legacy_revision().accepts_batches() => {
                Some(jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!(
                        "JSON-RPC batches are not part of protocol revision {}; send one \
                         message at a time",
                        session.legacy_revision().as_str()
                    ),
                ))
            }
            Value::Array(items) => self.handle_batch(session, memory, items, peer),
            single => self.handle_one(session, memory, single, false, peer),
        }
    }

    fn handle_batch(
        &self,
        session: &Session,
        memory: &Memory<'_>,
        items: Vec<Value>,
        peer: &dyn Peer,
    ) -> Option<Value> {
        if let Some(fault) = batch_fault(&items) {
            return Some(fault);
        }
        let replies: Vec<Value> = items
            .into_iter()
            .filter_map(|item| self.handle_one(session, memory, item, true, peer))
            .collect();
        (!replies.is_empty()).then_some(Value::Array(replies))
    }

    fn handle_one(
        &self,
        session: &Session,
        memory: &Memory<'_>,
        value: Value,
        in_batch: bool,
        peer: &dyn Peer,
    ) -> Option<Value> {
        if is_response(&value) {
            // The answer to a request a call of this session sent.
            session.route_response(value);
            return None;
        }
        match jsonrpc::classify(value) {
            Err(reply) => Some(reply),
            Ok(Incoming::Response) => None,
            Ok(Incoming::Notification { method, params }) => {
                self.notification(session, &method, &params);
                None
            }
            Ok(Incoming::Request { id, method, params }) => {
                if !in_batch && session.serves_modern(&params) {
                    session.spoke_modern.store(true, Ordering::Relaxed);
                    session.begin(&id);
                    let reply = self.modern(memory, id.clone(), &method, params, peer);
                    let cancelled = session.end(&id);
                    return (!cancelled).then_some(reply);
                }
                if in_batch && method == "initialize" {
                    return Some(jsonrpc::error(
                        id,
                        INVALID_REQUEST,
                        "initialize must not be sent inside a batch",
                    ));
                }
                session.begin(&id);
                let reply = self.request(session, memory, id.clone(), &method, params, peer);
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
        memory: &Memory<'_>,
        id: Value,
        method: &str,
        params: Map<String, Value>,
        peer: &dyn Peer,
    ) -> Value {
        if !is_legacy_method(self.catalog(), method) {
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
        if method == "logging/setLevel" {
            return match set_log_level(session, &params) {
                Ok(result) => jsonrpc::result(id, result),
                Err(fault) => fault.into_reply(id),
            };
        }
        let revision = session.legacy_revision();
        guarded(id, method, || {
            let call = Call::legacy(
                memory,
                revision,
                peer,
                method,
                &params,
                session.client_capabilities(),
                &session.log_level(),
            );
            self.dispatch(call, method, &params, revision)
                .map(|result| gate_structured_output(method, result, revision))
        })
    }

    /// A request of the modern revision: its `_meta` checked, then served
    /// with no session state.
    fn modern(
        &self,
        memory: &Memory<'_>,
        id: Value,
        method: &str,
        params: Map<String, Value>,
        peer: &dyn Peer,
    ) -> Value {
        let meta = match revision::request_meta(&params) {
            Ok(meta) => meta,
            Err(f) => {
                let fault = Fault {
                    code: f.code,
                    message: f.message,
                    data: f.data,
                };
                return fault.into_reply(id);
            }
        };
        if !is_modern_method(self.catalog(), method) {
            return jsonrpc::error(id, METHOD_NOT_FOUND, &format!("method not found: {method}"));
        }
        guarded(id, method, || {
            let result = if method == "server/discover" {
                Ok(self.discover())
            } else {
                let call = Call::modern(
                    memory,
                    meta.revision,
                    peer,
                    method,
                    &params,
                    meta.client_capabilities,
                )?;
                self.dispatch(call, method, &params, meta.revision)
            };
            result.map(|r| self.modern_result(method, r))
        })
    }

    /// The methods both eras share (and the catalog's feature methods), as
    /// `revision` defines them.
    fn dispatch(
        &self,
        call: Call<'_>,
        method: &str,
        params: &Map<String, Value>,
        revision: Revision,
    ) -> Result<Value, Fault> {
        let catalog = self.catalog();
        match method {
            "tools/list" => {
                no_cursor(params)?;
                Ok(json!({"tools": catalog.tools(revision)}))
            }
            "tools/call" => {
                let outcome = catalog.call_tool(&call, params);
                call.finish(outcome)
            }
            "resources/list" => catalog.resources(call.memory(), params),
            "resources/templates/list" => {
                no_cursor(params)?;
                Ok(json!({"resourceTemplates": catalog.resource_templates()}))
            }
            "resources/read" => {
                let outcome = catalog.read_resource(&call, params);
                call.finish(outcome).map_err(|mut fault| {
                    if fault.code == jsonrpc::RESOURCE_NOT_FOUND {
                        fault.code = revision.resource_not_found_code();
                    }
                    fault
                })
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let Some(Value::String(uri)) = params.get("uri") else {
                    return Err(Fault::new(
                        INVALID_PARAMS,
                        format!("{method} needs uri (a string)"),
                    ));
                };
                catalog
                    .subscribe(&call, uri, method == "resources/subscribe")
                    .map(|()| json!({}))
            }
            "prompts/list" => {
                no_cursor(params)?;
                Ok(json!({"prompts": catalog.prompts()}))
            }
            "prompts/get" => {
                let outcome = catalog.get_prompt(&call, params);
                call.finish(outcome)
            }
            "completion/complete" => catalog.complete(&call, params),
            _ => Err(Fault::new(METHOD_NOT_FOUND, "method not found")),
        }
    }
}

/// A single request's `_meta.progressToken`.
fn progress_token(value: &Value) -> Option<Value> {
    value
        .get("params")?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned()
}

/// Tells a request that asked for progress that the document it stores
/// is stored (step 1 of 2; its reply is the second).
fn report_admitted(peer: &dyn Peer, token: Option<&Value>, doc_id: &str) {
    if let Some(token) = token {
        peer.notify(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": token,
                "progress": 1,
                "total": 2,
                "message": format!("document {doc_id} stored; indexing it")
            }
        }));
    }
}

/// [`Server::kind`] as `catalog` defines its tools.
fn kind_in(catalog: &dyn Catalog, value: &Value) -> Kind {
    match value {
        Value::Array(items) => {
            if items.iter().all(|i| kind_in(catalog, i) == Kind::Read) {
                Kind::Read
            } else {
                Kind::Write
            }
        }
        Value::Object(o) if o.get("method").and_then(Value::as_str) == Some("tools/call") => {
            let params = o.get("params");
            match params.and_then(|p| p.get("name")).and_then(Value::as_str) {
                Some(name) => catalog.tool_kind(name, params.and_then(|p| p.get("arguments"))),
                // Refused; ordered as a write to be safe.
                None => Kind::Write,
            }
        }
        _ => Kind::Read,
    }
}
/// Runs a handler so that a bug in it costs one request, not the
/// connection.
fn guarded(id: Value, method: &str, run: impl FnOnce() -> Result<Value, Fault>) -> Value {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(result)) => jsonrpc::result(id, result),
        Ok(Err(fault)) => fault.into_reply(id),
        Err(_) => {
            log::error!("handler for {method} panicked");
            jsonrpc::error(id, INTERNAL_ERROR, "internal error")
        }
    }
}

/// `logging/setLevel` (legacy revisions): the session's level.
fn set_log_level(session: &Session, params: &Map<String, Value>) -> Result<Value, Fault> {
    let level = params.get("level").and_then(Value::as_str).unwrap_or("");
    if crate::logging::level_from_mcp(level).is_none() {
        return Err(Fault::new(
            INVALID_PARAMS,
            "level must be one of: debug, info, notice, warning, error, critical, alert, \
             emergency",
        ));
    }
    *session.log_level.lock().unwrap_or_else(|p| p.into_inner()) = level.to_string();
    Ok(json!({}))
}

/// The error for a batch that is empty or over [`MAX_BATCH_MESSAGES`].
fn batch_fault(items: &[Value]) -> Option<Value> {
    if items.is_empty() {
        return Some(jsonrpc::error(Value::Null, INVALID_REQUEST, "empty batch"));
    }
    (items.len() > MAX_BATCH_MESSAGES).then(|| {
        jsonrpc::error(
            Value::Null,
            INVALID_REQUEST,
            &format!(
                "batch has {} messages; the limit is {MAX_BATCH_MESSAGES}",
                items.len()
            ),
        )
    })
}

/// The replies to requests that arrived before `initialize`: an error for
/// each request (notifications and responses get none).
fn refuse_uninitialized(catalog: &dyn Catalog, value: Value) -> Option<Value> {
    let refuse = |item: Value| match jsonrpc::classify(item) {
        Err(reply) => Some(reply),
        // As once initialized, a method we do not have is named as such.
        Ok(Incoming::Request { id, method, .. }) if !is_legacy_method(catalog, &method) => Some(
            jsonrpc::error(id, METHOD_NOT_FOUND, &format!("method not found: {method}")),
        ),
        Ok(Incoming::Request { id, .. }) => Some(jsonrpc::error(
            id,
            INVALID_REQUEST,
            "server not initialized: send initialize first",
        )),
        Ok(_) => None,
    };
    match value {
        Value::Array(items) => {
            if let Some(fault) = batch_fault(&items) {
                return Some(fault);
            }
            let replies: Vec<Value> = items.into_iter().filter_map(refuse).collect();
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
        single => refuse(single),
    }
}

/// Tells a reply's reader what its request may not have seen, when the
/// read-your-writes wait ran out (see [`super::ordering`]): in `_meta`
/// of every result and, for tool results, in a text block the model reads.
fn annotate(reply: Value, turn: &Turn) -> Value {
    if turn.unindexed.is_empty() && turn.earlier_unfinished == 0 {
        return reply;
    }
    match reply {
        Value::Array(items) => Value::Array(items.into_iter().map(|r| annotate(r, turn)).collect()),
        Value::Object(mut o) => {
            if let Some(Value::Object(result)) = o.get_mut("result") {
                let n = turn.unindexed.len();
                let note = format!(
                    "note: {n} document(s) this session stored earlier are still being indexed \
                     and {} earlier request(s) had not finished after {} ms \
                     (READ_YOUR_WRITES_WAIT_MS); this result may not reflect them",
                    turn.earlier_unfinished,
                    super::ordering::READ_YOUR_WRITES_WAIT_MS
                );
                if let Some(Value::Array(content)) = result.get_mut("content") {
                    content.push(json!({"type": "text", "text": note}));
                }
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(
                        "alayasiki/readYourWrites".into(),
                        json!({
                            "unindexed_documents": turn.unindexed,
                            "earlier_requests_unfinished": turn.earlier_unfinished
                        }),
                    );
                }
            }
            Value::Object(o)
        }
        other => other,
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
