//! The JSON HTTP API: every tool of the tool table by name, convenience
//! routes for the common ones, and documents.
//!
//! Request bodies are the tools' argument objects, parsed by the tools' own
//! parsers, so the API and MCP share one definition of every request. A tool
//! result is the response body (200); a failure is
//! `{"error": {"code", "message"}}` with the stable code of
//! [`crate::error::Error::code`] and a status derived from it.

use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

use super::admission::{caller_key, Holder, RETRY_AFTER_SECS};
use super::body_readers;
use super::http::{
    admit_dispatch, error, is_json, json_response, make_header, refuse_dispatch, retry_after,
    Context, Method, Response,
};
use super::request::Request;
use crate::error::Error;
use crate::limits::MAX_REPLY_BYTES;
use crate::protocol::parse_budget::{ParseBudget, ParseCharge, Refusal};
use crate::protocol::tools;
use crate::service::{Memory, Permission, Principal};

pub const INGEST_TOOL: &str = "alayasiki_ingest";
pub const QUERY_TOOL: &str = "alayasiki_query";
pub const SHARE_TOOL: &str = "alayasiki_share";
pub const STATUS_TOOL: &str = "alayasiki_status";
/// Working memory, behind `/v1/memory/write` and `/v1/memory/read`.
pub const MEMORY_WRITE_TOOL: &str = "alayasiki_memory_write";
pub const MEMORY_READ_TOOL: &str = "alayasiki_memory_read";
/// `DELETE /v1/sessions/{id}` does what this tool does.
pub const MEMORY_DELETE_TOOL: &str = "alayasiki_memory_delete";
/// `DELETE /v1/documents/{id}` calls this tool with the id as
/// [`FORGET_ID_ARGUMENT`].
pub const FORGET_TOOL: &str = "alayasiki_forget";
pub const FORGET_ID_ARGUMENT: &str = "document_id";
/// `PATCH /v1/documents/{id}` calls this tool with the body's arguments
/// and the id as [`UPDATE_ID_ARGUMENT`].
pub const UPDATE_TOOL: &str = "alayasiki_update";
pub const UPDATE_ID_ARGUMENT: &str = "document_id";

/// Tools a convenience route names. Should one be missing from the tool
/// table (a build without it), its route answers 501 with a stable code
/// instead of 404, so clients can tell "not in this version" from a typo.
const ROUTED_TOOLS: &[&str] = &[
    MEMORY_WRITE_TOOL,
    MEMORY_READ_TOOL,
    FORGET_TOOL,
    UPDATE_TOOL,
];

pub(super) type Reply = Response;

/// The HTTP status for a service error.
pub fn status_of(e: &Error) -> u16 {
    match e {
        Error::InvalidInput(_) => 400,
        Error::Forbidden(_) => 403,
        Error::NotFound(_) => 404,
        Error::Conflict(_) => 409,
        Error::LimitExceeded(_) => 413,
        Error::Internal(_) => 500,
        Error::Unavailable(_)
        | Error::UnavailableFor(..)
        | Error::Unconfirmed(_)
        | Error::Storage(..)
        | Error::Unsynced(..) => 503,
    }
}

pub(super) fn service_error(e: Error, context: &str) -> Reply {
    let e = e.logged(context);
    let status = status_of(&e);
    let reply = error(status, e.code(), &e.client_message());
    // Unavailable: retrying later may work (no quorum, shutting down, a
    // disk being fixed), and a client is told when: as the error says
    // when it knows (a cluster without a leader), else soon.
    let wait = e
        .retry_after()
        .map_or(RETRY_AFTER_SECS, |d| d.as_secs_f64().ceil().max(1.0) as u64);
    match status {
        503 => reply.with_header(retry_after(wait)),
        _ => reply,
    }
}

pub(super) fn not_implemented(what: &str) -> Reply {
    error(
        501,
        "not_implemented",
        &format!("{what} is not available in this version of the server"),
    )
}

/// `GET /v1/tools`: the tool table.
pub(super) fn tools() -> Reply {
    let list: Vec<Value> = tools::TOOLS
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "input_schema": (t.input_schema)(),
                "permission": t.permission.scope(),
                "mutates": t.mutates,
                "route": format!("/v1/tools/{}", t.name),
            })
        })
        .collect();
    json_response(200, &json!({"tools": list}))
}

/// `POST /v1/tools/{name}` and the convenience routes naming a tool. The
/// body is read by a body reader ([`body_readers`]), never here.
pub(super) fn tool(ctx: &Arc<Context>, request: Request, principal: Principal, name: &str) {
    let Some(tool) = tools::find(name) else {
        let r = if ROUTED_TOOLS.contains(&name) {
            not_implemented(&format!("the tool {name}"))
        } else {
            error(404, "unknown_tool", &format!("no tool named {name:?}"))
        };
        return request.respond(r);
    };
    if !principal.permits(tool.permission) {
        return request.respond(forbidden(tool.permission));
    }
    if *request.method() == Method::Get {
        let holder = Holder::of(&principal);
        let call = call_tool(tool, principal, Map::new(), 0, Instant::now());
        return run(ctx, request, holder, call);
    }
    call_with_body(ctx, request, principal, tool, Map::new());
}

/// Reads the body (the tool's arguments, a JSON object) and calls `tool`
/// with it and `from_path` (arguments the route's path gives, such as a
/// document id, which the body may not give again).
pub(super) fn call_with_body(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    tool: &'static tools::Tool,
    from_path: Map<String, Value>,
) {
    let started = Instant::now();
    let holder = Holder::of(&principal);
    let caller = caller_key(principal.tenant.name(), &principal.subject);
    body_readers::read_then(ctx, request, &caller, move |ctx, request, body| {
        let read = json_object(&request, &body).and_then(|(mut arguments, parsed)| {
            for (name, value) in from_path {
                if arguments.contains_key(&name) {
                    let why = format!("`{name}` is given by the path; leave it out of the body");
                    return Err(error(400, "invalid_input", &why));
                }
                arguments.insert(name, value);
            }
            Ok((arguments, parsed))
        });
        match read {
            Ok((arguments, parsed)) => {
                let call = call_tool(tool, principal, arguments, body.len() as u64, started);
                // The parsed arguments' share of the parse budget is held
                // until the call has been answered.
                run(ctx, request, holder, move |ctx| {
                    let reply = call(ctx);
                    drop(parsed);
                    reply
                })
            }
            Err(refused) => {
                // The body was read whole: answering cannot wait for it.
                request.respond(refused);
            }
        }
    });
}

/// The dispatch job of one tool call.
fn call_tool(
    tool: &'static tools::Tool,
    principal: Principal,
    arguments: Map<String, Value>,
    request_bytes: u64,
    started: Instant,
) -> impl FnOnce(&Context) -> Reply + Send + 'static {
    move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match tools::invoke(tool, &memory, &arguments) {
            Ok(value) => {
                let body = value.to_string().into_bytes();
                let call = Charge::new(tool.name, request_bytes, started);
                call.reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, tool.name),
        }
    }
}

pub(super) fn forbidden(p: Permission) -> Reply {
    error(
        403,
        "forbidden",
        &format!(
            "this token may not do this (needs scope {} or a role granting it)",
            p.scope()
        ),
    )
}

/// Admits `work` as a dispatch and answers with what it returns.
pub(super) fn run(
    ctx: &Arc<Context>,
    request: Request,
    holder: Holder,
    work: impl FnOnce(&Context) -> Reply + Send + 'static,
) {
    let permit = match admit_dispatch(ctx, &holder) {
        Ok(p) => p,
        Err(why) => return request.respond(refuse_dispatch(why)),
    };
    let job_ctx = ctx.clone();
    let (tx, rx) = crossbeam_channel::bounded::<Request>(1);
    // The request travels with the job: a worker answers it.
    let submitted = ctx.submit(Box::new(move || {
        let _permit = permit;
        if let Ok(request) = rx.recv() {
            let reply = match job_ctx.await_position(&request) {
                Ok(()) => work(&job_ctx),
                Err(refused) => refused,
            };
            let reply = match job_ctx.position_header() {
                Some(h) => reply.with_header(h),
                None => reply,
            };
            request.respond(reply);
        }
    }));
    if submitted {
        let _ = tx.send(request);
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

/// The JSON object `body` holds (an empty body means `{}`) with its share
/// of the parse budget, or the answer refusing it.
pub(super) fn json_object(
    request: &Request,
    body: &[u8],
) -> Result<(Map<String, Value>, Option<ParseCharge>), Reply> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok((Map::new(), None));
    }
    if !is_json(request) {
        return Err(error(
            415,
            "unsupported_media_type",
            "Content-Type must be application/json",
        ));
    }
    let charge = ParseBudget::shared()
        .charge(body)
        .map_err(|refusal| parse_refused(&refusal))?;
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok((map, Some(charge))),
        Ok(_) => Err(error(
            400,
            "invalid_input",
            "the body must be a JSON object of the tool's arguments",
        )),
        Err(e) => Err(error(
            400,
            "invalid_json",
            &format!("invalid JSON at line {} column {}", e.line(), e.column()),
        )),
    }
}

/// The answer to a body the parse budget refuses: 413 when it alone would
/// cost too much memory parsed, 503 with `Retry-After` when requests
/// already received hold the budget.
pub(super) fn parse_refused(refusal: &Refusal) -> Reply {
    match refusal {
        Refusal::TooCostly { .. } => error(413, "body_too_costly", &refusal.message()),
        Refusal::Busy => {
            error(503, "busy", &refusal.message()).with_header(retry_after(RETRY_AFTER_SECS))
        }
    }
}

/// A completed call, to be answered and charged for.
pub(super) struct Charge {
    operation: &'static str,
    request_bytes: u64,
    started: Instant,
}

impl Charge {
    pub fn new(operation: &'static str, request_bytes: u64, started: Instant) -> Charge {
        Charge {
            operation,
            request_bytes,
            started,
        }
    }

    /// A 200 answer with `body`, charged to the caller; or, when `body` is
    /// over [`MAX_REPLY_BYTES`], a `413 reply_too_large` error instead (not
    /// charged: the call did not complete). Nothing of an oversize body is
    /// ever sent, so a client never mistakes a cut-off body for a reply.
    pub fn reply(self, memory: &Memory<'_>, body: Vec<u8>, content_type: &str) -> Reply {
        if let Err(refused) = within_reply_cap(self.operation, body.len()) {
            return refused;
        }
        memory.charge(
            self.operation,
            self.request_bytes,
            body.len() as u64,
            self.started.elapsed(),
        );
        Response::from_data(body)
            .with_status_code(200)
            .with_header(make_header("Content-Type", content_type))
            .with_header(make_header("Cache-Control", "no-store"))
    }
}

/// `Err` with the `413 reply_too_large` answer when a reply of `len` bytes
/// is over [`MAX_REPLY_BYTES`].
fn within_reply_cap(operation: &str, len: usize) -> Result<(), Reply> {
    if len <= MAX_REPLY_BYTES {
        return Ok(());
    }
    log::warn!("a {operation} reply of {len} bytes exceeds MAX_REPLY_BYTES; not sent");
    Err(error(
        413,
        "reply_too_large",
        &format!(
            "the reply is {len} bytes, over the {MAX_REPLY_BYTES}-byte limit \
             (MAX_REPLY_BYTES); ask for less (a smaller top_k or budget, a query instead of a \
             whole session)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_over_the_cap_are_refused_whole() {
        assert!(within_reply_cap("x", MAX_REPLY_BYTES).is_ok());
        let refused = within_reply_cap("x", MAX_REPLY_BYTES + 1).unwrap_err();
        assert_eq!(refused.status_code(), 413);
    }

    #[test]
    fn every_error_code_has_a_distinct_status() {
        let errors = [
            Error::invalid("x"),
            Error::LimitExceeded("x".into()),
            Error::Conflict("x".into()),
            Error::NotFound("x".into()),
            Error::Forbidden("x".into()),
            Error::Unavailable("x".into()),
            Error::internal("x"),
        ];
        let statuses: std::collections::HashSet<u16> = errors.iter().map(status_of).collect();
        assert_eq!(statuses.len(), errors.len());
    }
}
