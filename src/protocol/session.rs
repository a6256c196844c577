//! One client connection's protocol state: its identity, the revision its
//! `initialize` agreed on (or that it spoke a modern request), its log
//! level, the requests in flight and those sent to the client, and the
//! order its requests take effect in. [`super::mcp::Server`] reads and
//! sets it while dispatching; transports hold one per connection.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::call::PeerError;
use super::jsonrpc::{self, INTERNAL_ERROR};
use super::mcp::Server;
use super::ordering::{Kind, SessionOrder, Ticket};
use super::revision::{self, Revision};
use crate::service::Principal;

/// One client connection's state.
pub struct Session {
    principal: Principal,
    pub(super) initialized: AtomicBool,
    /// What `initialize` agreed on; `None` before it.
    pub(super) revision: Mutex<Option<Revision>>,
    /// Whether a request of the modern revision has been served here.
    pub(super) spoke_modern: AtomicBool,
    pub(super) log_level: Mutex<String>,
    /// The capabilities its `initialize` declared.
    pub(super) client_capabilities: Mutex<Map<String, Value>>,
    /// Requests being worked on (by serialized id) → cancelled?
    in_flight: Mutex<HashMap<String, bool>>,
    /// Requests sent to the client (by serialized id), awaiting responses.
    outbound: Mutex<HashMap<String, crossbeam_channel::Sender<Value>>>,
    next_outbound: std::sync::atomic::AtomicU64,
    /// The order its requests take effect in (read-your-writes).
    order: Arc<SessionOrder>,
}

impl Session {
    pub fn new(principal: Principal) -> Session {
        Session {
            principal,
            initialized: AtomicBool::new(false),
            revision: Mutex::new(None),
            spoke_modern: AtomicBool::new(false),
            log_level: Mutex::new("info".into()),
            client_capabilities: Mutex::new(Map::new()),
            in_flight: Mutex::new(HashMap::new()),
            outbound: Mutex::new(HashMap::new()),
            next_outbound: std::sync::atomic::AtomicU64::new(1),
            order: SessionOrder::new(),
        }
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> Map<String, Value> {
        lock(&self.client_capabilities).clone()
    }

    /// Sends a request to this session's client and waits up to `timeout`
    /// for its response, which a transport delivers to
    /// [`Server::handle`] (and so to [`Session::route_response`]) as it
    /// arrives. `send` carries the request message to the client; false
    /// if it could not.
    pub fn request_client(
        &self,
        method: &str,
        params: Value,
        timeout: std::time::Duration,
        send: impl FnOnce(&Value) -> bool,
    ) -> Result<Value, PeerError> {
        let n = self.next_outbound.fetch_add(1, Ordering::Relaxed);
        let id = json!(n);
        let (tx, rx) = crossbeam_channel::bounded(1);
        lock(&self.outbound).insert(id.to_string(), tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let outcome = if send(&message) {
            match rx.recv_timeout(timeout) {
                Ok(response) => response_outcome(response),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(PeerError::TimedOut),
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(
                    PeerError::Unavailable("the session ended before the client answered".into()),
                ),
            }
        } else {
            Err(PeerError::Unavailable(
                "the request could not be sent to the client".into(),
            ))
        };
        lock(&self.outbound).remove(&id.to_string());
        outcome
    }

    /// Gives up every request this session sent its client: their calls
    /// stop waiting at once (the session ended).
    pub fn abandon_requests(&self) {
        lock(&self.outbound).clear();
    }

    /// Hands a response of the client to the request waiting for it;
    /// false when none is (unknown id, or it gave up).
    pub fn route_response(&self, response: Value) -> bool {
        let Some(id) = response.get("id").map(Value::to_string) else {
            return false;
        };
        let waiting = lock(&self.outbound).remove(&id);
        waiting.is_some_and(|tx| tx.try_send(response).is_ok())
    }

    /// Issues `value` its place in this session's order; the transport
    /// calls this as it receives each request that is not handled inline,
    /// in arrival order, and hands the ticket to [`Server::handle_ordered`].
    pub fn ticket(&self, value: &Value) -> Queued {
        self.queued(self.order.issue(Server::kind(value)))
    }

    /// [`Session::ticket`], passing the ticket to `hand_over` (which
    /// queues the request) before any later request of the session can
    /// take one: for transports where requests arrive on several threads.
    /// `kind` is [`Server::kind`] of the request.
    pub fn ticket_then<R>(&self, kind: Kind, hand_over: impl FnOnce(Queued) -> R) -> R {
        self.order
            .issue_then(kind, |ticket| hand_over(self.queued(ticket)))
    }

    /// Whether the session was initialized is decided when a request
    /// arrives, not when a worker gets to it: a request sent before
    /// `initialize` is refused even if `initialize`, sent after it, was
    /// handled first.
    fn queued(&self, ticket: Ticket) -> Queued {
        Queued {
            ticket,
            initialized: self.is_initialized(),
        }
    }

    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::SeqCst)
    }

    /// The revision `initialize` agreed on, if it happened.
    pub fn revision(&self) -> Option<Revision> {
        *self.revision.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `reply` as this session's revision has errors to unreadable
    /// messages: without `id` once it speaks 2025-11-25 or later (by
    /// `initialize`, or by having sent a modern request), with JSON-RPC
    /// 2.0's `"id": null` before. For transports that carry one session's
    /// messages (stdio, legacy SSE).
    pub fn shape_reply(&self, reply: Value) -> Value {
        let omits = self.spoke_modern.load(Ordering::Relaxed)
            || self.revision().is_some_and(Revision::omits_unread_ids);
        if omits {
            jsonrpc::omit_unread_id(reply)
        } else {
            reply
        }
    }

    /// Whether a request with `params` is served statelessly: see
    /// [`Server::is_modern`].
    pub(super) fn serves_modern(&self, params: &Map<String, Value>) -> bool {
        let Some(named) = revision::modern_version_named(params) else {
            return false;
        };
        !self.is_initialized() || Revision::parse(named).is_none_or(Revision::is_modern)
    }

    /// The legacy revision requests of this session are served under.
    pub(super) fn legacy_revision(&self) -> Revision {
        self.revision().unwrap_or(Revision::V2024_11_05)
    }

    /// The level last set with `logging/setLevel`.
    pub fn log_level(&self) -> String {
        self.log_level
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(super) fn begin(&self, id: &Value) {
        self.flights().insert(id.to_string(), false);
    }

    /// Ends a request; true if it was cancelled meanwhile (so the reply
    /// must not be sent).
    pub(super) fn end(&self, id: &Value) -> bool {
        self.flights().remove(&id.to_string()).unwrap_or(false)
    }

    pub(super) fn cancel(&self, id: &Value) {
        if let Some(flag) = self.flights().get_mut(&id.to_string()) {
            *flag = true;
        }
    }

    fn flights(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A client's response as the outcome of the request it answers.
fn response_outcome(response: Value) -> Result<Value, PeerError> {
    if let Some(result) = response.get("result") {
        return Ok(result.clone());
    }
    let error = &response["error"];
    Err(PeerError::Client {
        code: error["code"].as_i64().unwrap_or(INTERNAL_ERROR),
        message: error["message"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(512)
            .collect(),
        data: error.get("data").cloned(),
    })
}

/// A request received and waiting for a worker: its place in the
/// session's order, and whether the session was initialized when it came.
pub struct Queued {
    pub(super) ticket: Ticket,
    pub(super) initialized: bool,
}
