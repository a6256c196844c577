//! MCP over the HTTP+SSE transport of protocol 2024-11-05, deprecated by
//! the specification and kept for older clients ([`super::streamable`]
//! is the current transport).
//!
//! `GET /mcp/sse` opens a `text/event-stream` whose first event, `endpoint`,
//! names `/mcp/messages?session_id=<random UUID>`. The client POSTs each
//! JSON-RPC message there; the POST is answered `202 Accepted` and the
//! reply arrives on the stream as an `event: message`. Comments keep idle
//! streams alive every [`KEEPALIVE_INTERVAL`].
//!
//! An SSE session is transport state only: the stream, its reply queue and
//! its MCP protocol state (initialized, log level, requests in flight). It
//! is bound to the tenant and subject that opened it; every POST is
//! authenticated again and acts with that POST's current roles and scopes,
//! and a POST from another tenant or subject gets 404, exactly as for an
//! unknown session. Working-memory sessions are a different thing, owned by
//! the caller's identity, so they survive reconnects.
//!
//! Streams are shared fairly: at most
//! [`MAX_SSE_CONNECTIONS_PER_CALLER`] per caller and
//! [`MAX_SSE_CONNECTIONS_PER_TENANT`] per tenant, of
//! [`MAX_SSE_CONNECTIONS`](super::admission::MAX_SSE_CONNECTIONS) in all.
//!
//! A disconnect releases the session (its id then answers 404), its place
//! and its thread, and drops replies still queued for it: the writer looks
//! for a hang-up every [`HANGUP_POLL`] while it has nothing to send, and a
//! failed write ends it too. Operations already running are not
//! cancelled, so an acknowledged ingest stays acknowledged.

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::admission::{
    caller_key, Gate, Holder, NoShare, Permit, SharePermit, MAX_QUEUED_REPLIES,
    MAX_SSE_CONNECTIONS_PER_CALLER, MAX_SSE_CONNECTIONS_PER_TENANT, RETRY_AFTER_SECS,
};
use super::event_stream::{EventStream, HANGUP_POLL};
use super::http::{
    admit_dispatch, error, is_json, make_header, query_param, refuse_dispatch, retry_after,
    Context, Response,
};
use super::mcp_http::{
    bounded_reply, is_session_id, new_session_id, parse_message, Call, Unparsed,
};
use super::request::Request;
use super::{body, body_readers};
use crate::protocol::jsonrpc::{self, PARSE_ERROR};
use crate::protocol::mcp::{self, Server};
use crate::service::Principal;

pub use super::event_stream::KEEPALIVE_INTERVAL;

/// The path clients POST to.
pub const MESSAGES_PATH: &str = "/mcp/messages";

/// A serialized reply with the queue slot it was reserved under.
struct Outbound {
    text: String,
    _slot: Permit,
}

/// One open stream.
pub(super) struct SseSession {
    id: String,
    /// Tenant and subject that opened it ([`caller_key`]).
    owner: String,
    protocol: mcp::Session,
    /// Reply-queue places, reserved before a message is dispatched.
    slots: Arc<Gate>,
    replies: Sender<Outbound>,
    /// Dropped to tell the writer to finish.
    close: Mutex<Option<Sender<()>>>,
}

impl SseSession {
    /// Reserves a place for one reply, if the queue has room.
    fn reserve(&self) -> Option<Permit> {
        self.slots.try_enter()
    }

    /// Queues a reply under a reservation, shaped for the session's
    /// revision ([`mcp::Session::shape_reply`]); a closed stream drops it.
    fn send(&self, reply: &Value, slot: Permit) -> usize {
        let text = if jsonrpc::has_unread_id(reply) {
            bounded_reply(&self.protocol.shape_reply(reply.clone()))
        } else {
            bounded_reply(reply)
        };
        let bytes = text.len();
        let _ = self.replies.try_send(Outbound { text, _slot: slot });
        bytes
    }

    fn close(&self) {
        self.close.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// The open sessions by id.
#[derive(Default)]
pub(super) struct Sessions {
    by_id: Mutex<HashMap<String, Arc<SseSession>>>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<SseSession>>> {
        self.by_id.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Option<Arc<SseSession>> {
        self.lock().get(id).cloned()
    }

    fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Ends every stream (at shutdown): writers send what is queued and
    /// finish.
    pub fn close_all(&self) {
        let all: Vec<Arc<SseSession>> = self.lock().drain().map(|(_, s)| s).collect();
        for s in all {
            s.close();
        }
    }
}

/// `GET /mcp/sse`: admit the connection, register a session and hand the
/// socket to a writer thread.
pub(super) fn open(ctx: &Arc<Context>, request: Request, principal: Principal) {
    if body::has_body(&request) {
        let r = error(400, "invalid_request", "GET /mcp/sse takes no body");
        return request.respond(r);
    }
    let owner = caller_key(principal.tenant.name(), &principal.subject);
    let place = match ctx.streams.try_enter(principal.tenant.name(), &owner) {
        Ok(p) => p,
        Err(why) => return request.respond(refuse_stream(why)),
    };
    let (replies_tx, replies_rx) = crossbeam_channel::bounded(MAX_QUEUED_REPLIES);
    let (close_tx, close_rx) = crossbeam_channel::bounded::<()>(0);
    let session = Arc::new(SseSession {
        id: new_session_id(),
        owner,
        protocol: mcp::Session::new(principal),
        slots: Gate::new("replies", MAX_QUEUED_REPLIES),
        replies: replies_tx,
        close: Mutex::new(Some(close_tx)),
    });
    let chunked = request.is_http11();
    let Some(conn) = request.into_conn() else {
        return;
    };
    let (out, connection) = conn.into_stream();
    ctx.sessions
        .lock()
        .insert(session.id.clone(), session.clone());
    let stream = Stream {
        ctx: ctx.clone(),
        session,
        _stream: place,
        _connection: connection,
    };
    let spawned = std::thread::Builder::new()
        .name("sse-writer".into())
        .spawn(move || stream.run(out, chunked, replies_rx, close_rx));
    if let Err(e) = spawned {
        // The stream (and with it the session) was dropped with the closure.
        log::error!("cannot start an SSE writer thread: {e}");
    }
}

/// The answer to a stream refused by a cap, with `Retry-After`.
pub(super) fn refuse_stream(why: NoShare) -> Response {
    let r = match why {
        NoShare::Full => error(
            503,
            "too_many_streams",
            &format!(
                "{} SSE streams are open (MAX_SSE_CONNECTIONS); retry later",
                super::admission::MAX_SSE_CONNECTIONS
            ),
        ),
        NoShare::TenantFull => error(
            429,
            "too_many_streams_for_tenant",
            &format!(
                "this tenant already holds {MAX_SSE_CONNECTIONS_PER_TENANT} SSE streams \
                 (MAX_SSE_CONNECTIONS_PER_TENANT); close one or retry later"
            ),
        ),
        NoShare::CallerFull => error(
            429,
            "too_many_streams_for_caller",
            &format!(
                "this caller already holds {MAX_SSE_CONNECTIONS_PER_CALLER} SSE streams \
                 (MAX_SSE_CONNECTIONS_PER_CALLER); close one or retry later"
            ),
        ),
    };
    r.with_header(retry_after(RETRY_AFTER_SECS))
}

/// The writer of one stream: the only code that touches its socket.
struct Stream {
    ctx: Arc<Context>,
    session: Arc<SseSession>,
    _stream: SharePermit,
    /// The connection's place under `MAX_CONNECTIONS`.
    _connection: Permit,
}

impl Stream {
    fn run(
        self,
        out: std::net::TcpStream,
        chunked: bool,
        replies: Receiver<Outbound>,
        close: Receiver<()>,
    ) {
        let id = self.session.id.clone();
        log::debug!("SSE session {id} opened");
        let outcome = EventStream::open(out, chunked).and_then(|mut events| {
            self.serve(&mut events, &replies, &close)?;
            events.finish()
        });
        self.ctx.sessions.remove(&id);
        match outcome {
            Ok(()) => log::debug!("SSE session {id} closed"),
            Err(e) => log::debug!("SSE session {id} ended: {e}"),
        }
    }

    fn serve(
        &self,
        events: &mut EventStream,
        replies: &Receiver<Outbound>,
        close: &Receiver<()>,
    ) -> std::io::Result<()> {
        let endpoint = format!("{MESSAGES_PATH}?session_id={}", self.session.id);
        events.event(&format!("event: endpoint\ndata: {endpoint}\n\n"))?;
        loop {
            crossbeam_channel::select! {
                recv(replies) -> reply => match reply {
                    Ok(reply) => events.message(&reply.text)?,
                    Err(_) => return Ok(()),
                },
                recv(close) -> _ => {
                    // Shutdown: send what is already queued, then end.
                    while let Ok(reply) = replies.try_recv() {
                        events.message(&reply.text)?;
                    }
                    return Ok(());
                },
                default(HANGUP_POLL) => events.tend()?,
            }
        }
    }
}

/// `POST /mcp/messages?session_id=…`: check, admit, dispatch, answer 202.
/// The body is read by a body reader ([`body_readers`]), never here.
pub(super) fn post(ctx: &Arc<Context>, request: Request, principal: Principal, query: &str) {
    let Some(id) = query_param(query, "session_id").filter(|id| is_session_id(id)) else {
        let r = error(
            400,
            "invalid_session_id",
            "session_id is missing or malformed; use the endpoint sent on the SSE stream",
        );
        return request.respond(r);
    };
    // Another principal's session reads exactly like an unknown one.
    let owner = caller_key(principal.tenant.name(), &principal.subject);
    let Some(session) = ctx.sessions.get(id).filter(|s| s.owner == owner) else {
        let r = error(
            404,
            "unknown_session",
            "no such SSE session (closed or expired)",
        );
        return request.respond(r);
    };
    if !is_json(&request) {
        let r = error(
            400,
            "invalid_content_type",
            "Content-Type must be application/json",
        );
        return request.respond(r);
    }
    let started = Instant::now();
    let caller = caller_key(principal.tenant.name(), &principal.subject);
    body_readers::read_then(ctx, request, &caller, move |ctx, request, body| {
        deliver(ctx, request, principal, &session, body, started)
    });
}

/// Runs the message a POST carried (`body`, read whole) on `session`.
fn deliver(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    session: &Arc<SseSession>,
    body: Vec<u8>,
    started: Instant,
) {
    let (value, parsed) = match parse_message(&body) {
        Ok(parsed) => parsed,
        Err(Unparsed::Refused(r)) => return request.respond(r),
        Err(Unparsed::Invalid(why)) => {
            // Also tell the session, as JSON-RPC clients expect a -32700.
            if let Some(slot) = session.reserve() {
                session.send(&jsonrpc::error(Value::Null, PARSE_ERROR, &why), slot);
            }
            request.respond(error(400, "parse_error", &why));
            return;
        }
    };
    // Read-your-writes across a cluster's nodes: the message runs once
    // this node has what the client saw elsewhere (or is refused here, on
    // the POST, as nothing has run). Waits on this connection's thread.
    if let Err(refused) = ctx.await_position(&request) {
        return request.respond(refused);
    }
    // Every message that may produce a reply holds a place in the reply
    // queue before it runs: when the client does not read its stream, the
    // server refuses new work instead of doing it and dropping the answer.
    let Some(slot) = session.reserve() else {
        let r = error(
            429,
            "reply_queue_full",
            &format!(
                "{MAX_QUEUED_REPLIES} replies are already waiting on this stream \
                 (MAX_QUEUED_REPLIES); read the stream, then retry"
            ),
        )
        .with_header(retry_after(RETRY_AFTER_SECS));
        request.respond(r);
        return;
    };
    let call = Call::new(&value, body.len(), started);
    if Server::is_inline(&value) {
        // initialize, ping and notifications: cheap, and ordered before
        // anything the client posts after them.
        let reply = ctx.server.handle_as(&session.protocol, &principal, value);
        complete(call, ctx, session, &principal, reply, slot);
        request.respond(accepted());
        return;
    }
    let permit = match admit_dispatch(ctx, &Holder::of(&principal)) {
        Ok(p) => p,
        Err(why) => {
            request.respond(refuse_dispatch(why));
            return;
        }
    };
    let job_ctx = ctx.clone();
    let job_session = session.clone();
    // The ticket fixes this message's place in the session's order before
    // the 202 tells the client it was accepted (read-your-writes).
    let kind = Server::kind(&value);
    let submitted = session.protocol.ticket_then(kind, |ticket| {
        ctx.submit(Box::new(move || {
            let _permit = permit;
            let _parsed = parsed;
            let reply =
                job_ctx
                    .server
                    .handle_ordered(&job_session.protocol, &principal, value, ticket);
            complete(call, &job_ctx, &job_session, &principal, reply, slot);
        }))
    });
    if submitted {
        request.respond(accepted());
    } else {
        let r = error(
            429,
            "overloaded",
            "the dispatch queue is full; retry shortly",
        )
        .with_header(retry_after(RETRY_AFTER_SECS));
        request.respond(r);
    }
}

/// Queues the reply (if any) and charges the caller when it succeeded.
fn complete(
    call: Call,
    ctx: &Context,
    session: &SseSession,
    principal: &Principal,
    reply: Option<Value>,
    slot: Permit,
) {
    let Some(reply) = reply else {
        return; // a notification: nothing to send, nothing to charge
    };
    let reply_bytes = session.send(&reply, slot);
    call.charge(ctx, principal, &reply, reply_bytes);
}

fn accepted() -> Response {
    Response::from_string("Accepted")
        .with_status_code(202)
        .with_header(make_header("Content-Type", "text/plain; charset=utf-8"))
}
