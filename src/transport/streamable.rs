//! MCP over Streamable HTTP at `/mcp`, for both eras of the protocol.
//!
//! Every client message is a POST to `/mcp`; the reply is the POST's
//! response (`application/json`, or one `text/event-stream` event when the
//! client accepts only that). A call that talks to the client before it
//! answers (progress, logs, a request to the client: see
//! [`crate::protocol::call`]) gets a live `text/event-stream` instead,
//! opened at its first message and ended by its reply (module `reply`); the
//! memory's own tools never do, so `alayasiki-api` answers JSON. Which era
//! a POST belongs to is read from it:
//!
//! - **Session-based** (2025-03-26 through 2025-11-25, and 2024-11-05
//!   for a client that asks for it here rather than over the deprecated
//!   HTTP+SSE transport): a POST of `initialize` with no session opens one and names it in the
//!   `Mcp-Session-Id` response header; every later POST carries it (404
//!   once the session is gone: deleted, idle for
//!   [`HTTP_SESSION_IDLE_TIMEOUT`], or evicted). `MCP-Protocol-Version`,
//!   when sent, must be the session's revision. `GET /mcp` with the session
//!   opens its listening stream (keep-alive comments only: requests to the
//!   client go on the stream of the call that sends them), or, with a
//!   `Last-Event-ID` of one of its response streams, resumes that stream
//!   (SEP-1699); `DELETE /mcp` ends the session. A POST carrying a
//!   response goes to the call waiting for it (202). Requests of one
//!   session take effect in the order they arrive (read-your-writes, as on
//!   stdio and SSE).
//! - **Stateless** (2026-07-28): a POST without a session whose
//!   `MCP-Protocol-Version` header or `params._meta` names a revision that
//!   is not a legacy one. It is checked in the order the specification
//!   and its conformance suite use: the version header is present
//!   (`HeaderMismatch` -32020), `_meta` holds the version and client
//!   capabilities (-32602), header and `_meta` agree (-32020), the version
//!   is one we speak (`UnsupportedProtocolVersion` -32022, listing them),
//!   and `Mcp-Method` (and `Mcp-Name` for `tools/call`, `resources/read`,
//!   `prompts/get`) match the body (-32020), as must the `Mcp-Param-*`
//!   headers of the arguments a tool's input schema marks `x-mcp-header`
//!   (SEP-2243: -32020); each with 400. A missing client capability
//!   (-32021) is 400 too, an unknown method 404 with -32601.
//!   `Mcp-Session-Id` is then ignored, and GET and DELETE without a
//!   session answer 405. Such a call never sends the client a request: it
//!   asks with an input-required result.
//!
//! Identity works as everywhere else: every request is authenticated
//! (routing did so before this module runs), a session is bound to the
//! tenant and subject that opened it (another caller's session reads as
//! unknown: 404), and each request acts with its own token's roles and
//! scopes. Sessions are capped in all, per tenant and per caller (a caller
//! opening one more than its share ends its least recently used);
//! listening streams share the SSE streams' caps; dispatches share the
//! [`MAX_CONCURRENT_DISPATCHES`](super::admission::MAX_CONCURRENT_DISPATCHES)
//! permits, taken before anything runs, so a 429 never follows a write.
//!
//! Parts: `sessions` (the session table, its caps and expiry), `stateless`
//! (the 2026-07-28 header checks), `reply` (response streams and their
//! resumption).

mod reply;
mod sessions;
mod stateless;

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

use reply::{Reply, ReplyPeer};
pub use reply::{MAX_KEPT_EVENTS, SSE_RETRY_MS};
pub(super) use sessions::HttpSessions;
use sessions::{lock, HttpSession};
pub use sessions::{
    HTTP_SESSION_IDLE_TIMEOUT, HTTP_SESSION_SCARCE_IDLE_TIMEOUT, MAX_HTTP_SESSIONS,
    MAX_HTTP_SESSIONS_PER_CALLER, MAX_HTTP_SESSIONS_PER_TENANT, SESSIONS_SCARCE_AT,
};
use stateless::{check_param_headers, check_stateless};

use super::admission::{caller_key, Holder, SharePermit, RETRY_AFTER_SECS};
use super::event_stream::{EventStream, HANGUP_POLL};
use super::http::{
    admit_dispatch, dispatch_refusal, header, headers, is_json, make_header, retry_after, Context,
    Response,
};
use super::mcp_http::{is_session_id, parse_message, streamable_reply, Call, Unparsed};
use super::request::Request;
use super::{body_readers, sse};
use crate::protocol::jsonrpc::{self, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};
use crate::protocol::mcp::Server;
use crate::protocol::parse_budget::ParseCharge;
use crate::protocol::revision::{
    Revision, HEADER_MISMATCH, META_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::service::Principal;

/// The MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The header naming a session-based session.
const SESSION_HEADER: &str = "Mcp-Session-Id";
/// The header naming the protocol revision of a request.
const VERSION_HEADER: &str = "MCP-Protocol-Version";
/// 2026-07-28: the request's method, mirrored from the body.
const METHOD_HEADER: &str = "Mcp-Method";
/// 2026-07-28: the tool, prompt or resource a request names.
const NAME_HEADER: &str = "Mcp-Name";
/// 2026-07-28: a tool argument mirrored into a header (`Mcp-Param-{x-mcp-header}`).
const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";
/// The last event a client saw of a stream it resumes.
const LAST_EVENT_ID_HEADER: &str = "Last-Event-ID";

/// A response stream's event id, `{stream}-{seq}`.
fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// A JSON-RPC message as the whole response.
fn rpc_response(status: u16, message: &Value) -> Response {
    Response::from_data(streamable_reply(message).into_bytes())
        .with_status_code(status)
        .with_header(make_header("Content-Type", "application/json"))
        .with_header(make_header("Cache-Control", "no-store"))
}

/// A JSON-RPC error with no request to name (or `id`) as the response.
fn rpc_refusal(status: u16, id: Value, code: i64, message: &str) -> Response {
    rpc_response(status, &jsonrpc::error(id, code, message))
}

/// The reply to a request, in the form the client accepts: JSON, or one
/// SSE event when it accepts only `text/event-stream`.
fn reply_response(request: &Request, status: u16, reply: &Value) -> (Response, usize) {
    let text = streamable_reply(reply);
    let len = text.len();
    let response = if wants_only_events(request) {
        Response::from_data(format!("event: message\ndata: {text}\n\n").into_bytes())
            .with_status_code(status)
            .with_header(make_header("Content-Type", "text/event-stream"))
            .with_header(make_header("Cache-Control", "no-cache"))
            .with_header(make_header("X-Accel-Buffering", "no"))
    } else {
        Response::from_data(text.into_bytes())
            .with_status_code(status)
            .with_header(make_header("Content-Type", "application/json"))
            .with_header(make_header("Cache-Control", "no-store"))
    };
    (response, len)
}

/// The media types an `Accept` header lists (parameters dropped).
fn accepted_types(request: &Request) -> Vec<String> {
    headers(request, "Accept")
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

fn accepts(request: &Request, wanted: &str) -> bool {
    let types = accepted_types(request);
    let family = format!("{}/*", wanted.split('/').next().unwrap_or(""));
    types.is_empty()
        || types
            .iter()
            .any(|t| t == wanted || t == "*/*" || *t == family)
}

fn wants_only_events(request: &Request) -> bool {
    accepts(request, "text/event-stream") && !accepts(request, "application/json")
}

/// `POST /mcp`: the checks a body need not be read for, then the body.
pub(super) fn post(ctx: &Arc<Context>, request: Request, principal: Principal) {
    if !is_json(&request) {
        let r = rpc_refusal(
            415,
            Value::Null,
            INVALID_REQUEST,
            "Content-Type must be application/json",
        );
        return request.respond(r);
    }
    if !accepts(&request, "application/json") && !accepts(&request, "text/event-stream") {
        let r = rpc_refusal(
            406,
            Value::Null,
            INVALID_REQUEST,
            "Accept must list application/json or text/event-stream",
        );
        return request.respond(r);
    }
    let started = Instant::now();
    let caller = caller_key(principal.tenant.name(), &principal.subject);
    body_readers::read_then(ctx, request, &caller, move |ctx, request, body| {
        deliver(ctx, request, principal, body, started)
    });
}

/// What a POST without a session is.
#[derive(Debug, PartialEq)]
enum Era {
    /// `initialize` of a session-based revision: opens a session.
    Initialize,
    /// A 2026-07-28 request (or one claiming a revision we do not know).
    Stateless,
    /// Anything else of a session-based revision: needs a session.
    NeedsSession,
}

fn era(value: &Value, version_header: Option<&str>) -> Era {
    let legacy_header =
        version_header.is_none_or(|v| Revision::parse(v).is_some_and(|r| !r.is_modern()));
    let has_meta = value
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some();
    if !legacy_header || has_meta {
        Era::Stateless
    } else if value.get("method").and_then(Value::as_str) == Some("initialize") {
        Era::Initialize
    } else {
        Era::NeedsSession
    }
}

/// Runs the message a POST carried (`body`, read whole).
fn deliver(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    body: Vec<u8>,
    started: Instant,
) {
    let (value, parsed) = match parse_message(&body) {
        Ok(parsed) => parsed,
        Err(Unparsed::Refused(r)) => return request.respond(r),
        Err(Unparsed::Invalid(why)) => {
            return request.respond(rpc_refusal(400, Value::Null, PARSE_ERROR, &why))
        }
    };
    let call = Call::new(&value, body.len(), started);
    drop(body);
    let message = Message {
        value,
        call,
        parsed,
    };
    let version = header(&request, VERSION_HEADER).map(|v| v.trim().to_string());
    if let Some(id) = header(&request, SESSION_HEADER).map(str::to_string) {
        if era(&message.value, version.as_deref()) != Era::Stateless {
            return in_session(ctx, request, principal, message, &id, version.as_deref());
        }
        // A stateless request's Mcp-Session-Id is ignored.
    }
    match era(&message.value, version.as_deref()) {
        Era::Stateless => stateless(ctx, request, principal, message, version.as_deref()),
        Era::Initialize => initialize(ctx, request, principal, message),
        Era::NeedsSession => {
            let r = rpc_refusal(
                400,
                jsonrpc::id_of(&message.value),
                INVALID_REQUEST,
                "no Mcp-Session-Id: send initialize first (protocol revisions up to \
                 2025-11-25), or give every request the 2026-07-28 _meta and \
                 MCP-Protocol-Version header",
            );
            request.respond(r)
        }
    }
}

/// One parsed message with what it is charged.
struct Message {
    value: Value,
    call: Call,
    /// Its share of the parse budget, held until it has been handled.
    parsed: ParseCharge,
}

/// `initialize` without a session: open one, answer with its id.
fn initialize(ctx: &Arc<Context>, request: Request, principal: Principal, message: Message) {
    let session = match ctx.mcp_sessions.open(&principal) {
        Ok(s) => s,
        Err(r) => return request.respond(r),
    };
    let Message { value, call, .. } = message;
    let reply = ctx
        .server
        .handle_as(&session.protocol, &principal, value)
        .unwrap_or(Value::Null);
    if reply.get("result").is_none() {
        // Nothing was agreed: no session.
        ctx.mcp_sessions.remove(&session.id, &session.owner);
        let (r, _) = reply_response(&request, 400, &reply);
        return request.respond(r);
    }
    let (r, len) = reply_response(&request, 200, &reply);
    call.charge(ctx, &principal, &reply, len);
    log::debug!("HTTP session {} opened", session.id);
    request.respond(r.with_header(make_header(SESSION_HEADER, &session.id)));
}

/// A message of an open session-based session.
fn in_session(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    message: Message,
    id: &str,
    version: Option<&str>,
) {
    let owner = caller_key(principal.tenant.name(), &principal.subject);
    let session = is_session_id(id)
        .then(|| ctx.mcp_sessions.get(id, &owner))
        .flatten();
    let Some(session) = session else {
        let r = rpc_refusal(
            404,
            jsonrpc::id_of(&message.value),
            INVALID_REQUEST,
            "no such session (ended, expired or never opened): send initialize again",
        );
        return request.respond(r);
    };
    if let (Some(v), Some(agreed)) = (version, session.protocol.revision()) {
        if v != agreed.as_str() {
            let r = rpc_refusal(
                400,
                jsonrpc::id_of(&message.value),
                INVALID_REQUEST,
                &format!(
                    "MCP-Protocol-Version {:?} is not this session's revision {}",
                    v.chars().take(64).collect::<String>(),
                    agreed.as_str()
                ),
            );
            return request.respond(r);
        }
    }
    let Message {
        value,
        call,
        parsed,
    } = message;
    if Server::is_inline(&value) {
        // initialize (refused: the session has one), ping, notifications
        // and responses: cheap, and ordered before what follows them.
        let reply = ctx.server.handle_as(&session.protocol, &principal, value);
        return answer(ctx, request, &principal, call, 200, reply);
    }
    let permit = match admit(ctx, &principal) {
        Ok(p) => p,
        Err(r) => return request.respond(r),
    };
    // The ticket fixes this message's place in the session's order as it
    // arrives (read-your-writes), before any later POST can take one.
    let kind = ctx.server.kind_of(&value);
    session.protocol.ticket_then(kind, |ticket| {
        let job_session = session.clone();
        let stream_session = Some(session.clone());
        answer_from_worker(
            ctx,
            request,
            principal,
            call,
            stream_session,
            move |ctx, principal, peer| {
                let _permit = permit;
                let _parsed = parsed;
                let reply = ctx.server.handle_ordered_with(
                    &job_session.protocol,
                    principal,
                    value,
                    ticket,
                    peer,
                );
                (200, reply)
            },
        )
    });
}

/// Answers `request` with `reply` (202 when there is none: a
/// notification or a response), charging the caller for it.
fn answer(
    ctx: &Context,
    request: Request,
    principal: &Principal,
    call: Call,
    status: u16,
    reply: Option<Value>,
) {
    match reply {
        None => request.respond(accepted()),
        Some(reply) => {
            let (r, len) = reply_response(&request, status, &reply);
            call.charge(ctx, principal, &reply, len);
            request.respond(r)
        }
    }
}

/// Queues `work` for a dispatch worker, which answers `request` with the
/// status and reply it returns ([`reply`]: JSON, or a stream when the
/// work sent the client something first through the peer it is given;
/// resumable when it is `session`'s); 429 when the queue is full. The
/// request travels to the worker over a channel, so it is still here to
/// be answered should the job not be queued.
fn answer_from_worker<W>(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    call: Call,
    session: Option<Arc<HttpSession>>,
    work: W,
) -> bool
where
    W: FnOnce(
            &Context,
            &Principal,
            &(dyn crate::protocol::call::Peer + Sync),
        ) -> (u16, Option<Value>)
        + Send
        + 'static,
{
    let (tx, rx) = crossbeam_channel::bounded::<Request>(1);
    let job_ctx = ctx.clone();
    let submitted = ctx.submit(Box::new(move || {
        let Ok(request) = rx.recv() else {
            return;
        };
        if let Err(refused) = job_ctx.await_position(&request) {
            return request.respond(refused);
        }
        let reply = Reply::new(request, session);
        let (status, value) = work(&job_ctx, &principal, &ReplyPeer { reply: &reply });
        reply.finish(&job_ctx, &principal, call, status, value);
    }));
    if submitted {
        let _ = tx.send(request);
    } else {
        request.respond(overloaded());
    }
    submitted
}

/// A request of the stateless revision: its headers and `_meta` checked,
/// then dispatched.
fn stateless(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    message: Message,
    version: Option<&str>,
) {
    let Message {
        value,
        call,
        parsed,
    } = message;
    let id = jsonrpc::id_of(&value);
    let Some(obj) = value.as_object() else {
        let r = rpc_refusal(
            400,
            Value::Null,
            INVALID_REQUEST,
            "a 2026-07-28 request is one JSON-RPC object (batches do not exist there)",
        );
        return request.respond(r);
    };
    if !obj.contains_key("id") {
        // Notifications mean nothing over stateless HTTP (closing a
        // response stream is the cancellation): accepted, ignored.
        return request.respond(accepted());
    }
    let empty = Map::new();
    let params = obj
        .get("params")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let method = obj.get("method").and_then(Value::as_str).unwrap_or("");
    if let Err(r) = check_stateless(&request, version, method, params, &id) {
        return request.respond(r);
    }
    if let Err(why) = check_param_headers(ctx, &request, method, params) {
        return request.respond(rpc_refusal(400, id, HEADER_MISMATCH, &why));
    }
    let permit = match admit(ctx, &principal) {
        Ok(p) => p,
        Err(r) => return request.respond(r),
    };
    answer_from_worker(
        ctx,
        request,
        principal,
        call,
        None,
        move |ctx, principal, peer| {
            let _permit = permit;
            let _parsed = parsed;
            let reply = ctx.server.handle_stateless_with(principal, value, peer);
            let status = match reply.as_ref().and_then(|r| r["error"]["code"].as_i64()) {
                Some(METHOD_NOT_FOUND) => 404,
                Some(
                    UNSUPPORTED_PROTOCOL_VERSION
                    | HEADER_MISMATCH
                    | MISSING_REQUIRED_CLIENT_CAPABILITY,
                ) => 400,
                _ => 200,
            };
            (status, reply)
        },
    );
}

fn accepted() -> Response {
    Response::from_data(Vec::new()).with_status_code(202)
}

/// A dispatch permit, or the 429 refusing one (as a JSON-RPC error, like
/// every other refusal of this endpoint, with the HTTP API's message).
fn admit(ctx: &Context, principal: &Principal) -> Result<SharePermit, Response> {
    admit_dispatch(ctx, &Holder::of(principal)).map_err(|why| {
        let (code, message) = dispatch_refusal(why);
        rpc_refusal(
            429,
            Value::Null,
            INVALID_REQUEST,
            &format!("{code}: {message}"),
        )
        .with_header(retry_after(RETRY_AFTER_SECS))
    })
}

fn overloaded() -> Response {
    rpc_refusal(
        429,
        Value::Null,
        INVALID_REQUEST,
        "the dispatch queue is full; retry shortly",
    )
    .with_header(retry_after(RETRY_AFTER_SECS))
}

/// 405 for GET and DELETE without a session (the stateless revision has
/// neither).
fn no_session_method() -> Response {
    rpc_refusal(
        405,
        Value::Null,
        INVALID_REQUEST,
        "GET and DELETE /mcp need an Mcp-Session-Id (protocol revisions up to 2025-11-25); \
         2026-07-28 has neither",
    )
    .with_header(make_header("Allow", "POST"))
}

/// `GET /mcp`: a session's listening stream.
pub(super) fn get(ctx: &Arc<Context>, request: Request, principal: Principal) {
    let Some(id) = header(&request, SESSION_HEADER).map(str::to_string) else {
        return request.respond(no_session_method());
    };
    let owner = caller_key(principal.tenant.name(), &principal.subject);
    let Some(session) = is_session_id(&id)
        .then(|| ctx.mcp_sessions.get(&id, &owner))
        .flatten()
    else {
        let r = rpc_refusal(404, Value::Null, INVALID_REQUEST, "no such session");
        return request.respond(r);
    };
    if !accepts(&request, "text/event-stream") {
        let r = rpc_refusal(
            406,
            Value::Null,
            INVALID_REQUEST,
            "Accept must list text/event-stream",
        );
        return request.respond(r);
    }
    let place = match ctx.streams.try_enter(principal.tenant.name(), &owner) {
        Ok(p) => p,
        Err(why) => return request.respond(sse::refuse_stream(why)),
    };
    // A response stream of the session being resumed (SEP-1699); an id
    // naming none (finished, dropped, or never issued) opens the
    // listening stream instead.
    let resumed = header(&request, LAST_EVENT_ID_HEADER)
        .and_then(parse_event_id)
        .and_then(|(stream, seq)| session.find_stream(stream).map(|r| (r, seq)));
    if let Some((reply, after)) = resumed {
        let chunked = request.is_http11();
        let Some(conn) = request.into_conn() else {
            return;
        };
        let (out, connection) = conn.into_stream();
        match EventStream::open(out, chunked) {
            Ok(events) => reply.resume(after, events, connection, place),
            Err(e) => log::debug!(
                "resuming a stream of HTTP session {} failed: {e}",
                session.id
            ),
        }
        return;
    }
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    {
        let mut listening = lock(&session.listening);
        if listening.is_some() {
            let r = rpc_refusal(
                409,
                Value::Null,
                INVALID_REQUEST,
                "this session already has a listening stream",
            );
            return request.respond(r);
        }
        *listening = Some(stop_tx);
    }
    let chunked = request.is_http11();
    let Some(conn) = request.into_conn() else {
        session.end_listening();
        return;
    };
    let (out, connection) = conn.into_stream();
    let spawned = std::thread::Builder::new()
        .name("mcp-listen".into())
        .spawn(move || {
            let _place = place;
            let _connection = connection;
            let outcome = EventStream::open(out, chunked).and_then(|mut events| {
                loop {
                    crossbeam_channel::select! {
                        recv(stop_rx) -> _ => break,
                        default(HANGUP_POLL) => events.tend()?,
                    }
                }
                events.finish()
            });
            session.end_listening();
            session.touch();
            if let Err(e) = outcome {
                log::debug!("listening stream of HTTP session {} ended: {e}", session.id);
            }
        });
    if let Err(e) = spawned {
        log::error!("cannot start a listening stream thread: {e}");
    }
}

/// `DELETE /mcp`: ends a session.
pub(super) fn delete(ctx: &Arc<Context>, request: Request, principal: Principal) {
    let Some(id) = header(&request, SESSION_HEADER).map(str::to_string) else {
        return request.respond(no_session_method());
    };
    let owner = caller_key(principal.tenant.name(), &principal.subject);
    if ctx.mcp_sessions.remove(&id, &owner) {
        log::debug!("HTTP session {id} deleted");
        request.respond(Response::from_data(Vec::new()).with_status_code(200))
    } else {
        let r = rpc_refusal(404, Value::Null, INVALID_REQUEST, "no such session");
        request.respond(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_era_is_read_from_header_and_meta() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        assert_eq!(era(&init, None), Era::Initialize);
        assert_eq!(era(&init, Some("2025-11-25")), Era::Initialize);
        assert_eq!(era(&init, Some("2026-07-28")), Era::Stateless);
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(era(&list, None), Era::NeedsSession);
        assert_eq!(era(&list, Some("2025-06-18")), Era::NeedsSession);
        assert_eq!(era(&list, Some("v999.0.0")), Era::Stateless);
        let modern = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}});
        assert_eq!(era(&modern, None), Era::Stateless);
    }

    #[test]
    fn event_ids_name_a_stream_and_a_sequence() {
        assert_eq!(parse_event_id("3-0"), Some((3, 0)));
        assert_eq!(parse_event_id(" 12-7 "), Some((12, 7)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id("5"), None);
    }
}
