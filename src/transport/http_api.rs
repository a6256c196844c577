//! The JSON HTTP API: every tool of the tool table by name, convenience
//! routes for the common ones, and documents.
//!
//! Request bodies are the tools' argument objects, parsed by the tools' own
//! parsers, so the API and MCP share one definition of every request. A tool
//! result is the response body (200); a failure is
//! `{"error": {"code", "message"}}` with the stable code of
//! [`crate::error::Error::code`] and a status derived from it.

use serde_json::{json, Map, Value};
use std::io::Cursor;
use std::sync::Arc;
use std::time::Instant;
use tiny_http::{Method, Request, Response};

use super::admission::RETRY_AFTER_SECS;
use super::body::{self, BodyError};
use super::http::{admit_dispatch, error, is_json, json_response, retry_after, too_large, Context};
use crate::error::Error;
use crate::protocol::tools::{self, Tool};
use crate::service::{Permission, Principal};

pub const INGEST_TOOL: &str = "alayasiki_ingest";
pub const QUERY_TOOL: &str = "alayasiki_query";
pub const STATUS_TOOL: &str = "alayasiki_status";
/// Working memory, behind `/v1/memory/write` and `/v1/memory/read`.
pub const MEMORY_WRITE_TOOL: &str = "alayasiki_memory_write";
pub const MEMORY_READ_TOOL: &str = "alayasiki_memory_read";
/// `DELETE /v1/documents/{id}` calls this tool with the id as
/// [`FORGET_ID_ARGUMENT`].
pub const FORGET_TOOL: &str = "alayasiki_forget";
pub const FORGET_ID_ARGUMENT: &str = "document_id";

/// Tools a convenience route names. Should one be missing from the tool
/// table (a build without it), its route answers 501 with a stable code
/// instead of 404, so clients can tell "not in this version" from a typo.
const ROUTED_TOOLS: &[&str] = &[MEMORY_WRITE_TOOL, MEMORY_READ_TOOL, FORGET_TOOL];

type Reply = Response<Cursor<Vec<u8>>>;

/// The HTTP status for a service error.
pub fn status_of(e: &Error) -> u16 {
    match e {
        Error::InvalidInput(_) => 400,
        Error::Forbidden(_) => 403,
        Error::NotFound(_) => 404,
        Error::Conflict(_) => 409,
        Error::LimitExceeded(_) => 413,
        Error::Internal(_) => 500,
        Error::Unavailable(_) => 503,
    }
}

fn service_error(e: Error, context: &str) -> Reply {
    let e = e.logged(context);
    error(status_of(&e), e.code(), &e.client_message())
}

fn not_implemented(what: &str) -> Reply {
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

/// `POST /v1/tools/{name}` and the convenience routes naming a tool.
pub(super) fn tool(ctx: &Arc<Context>, mut request: Request, principal: Principal, name: &str) {
    let Some(tool) = tools::find(name) else {
        let r = if ROUTED_TOOLS.contains(&name) {
            not_implemented(&format!("the tool {name}"))
        } else {
            error(404, "unknown_tool", &format!("no tool named {name:?}"))
        };
        return ctx.drains.respond(request, r);
    };
    if !principal.permits(tool.permission) {
        return ctx.drains.respond(request, forbidden(tool.permission));
    }
    let started = Instant::now();
    let (arguments, request_bytes) = if *request.method() == Method::Get {
        (Map::new(), 0)
    } else {
        match json_object_body(&mut request) {
            Ok(read) => read,
            Err(refused) => return refused.send(ctx, request),
        }
    };
    run(ctx, request, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match tools::invoke(tool, &memory, &arguments) {
            Ok(value) => {
                let body = value.to_string();
                memory.charge(
                    tool.name,
                    request_bytes,
                    body.len() as u64,
                    started.elapsed(),
                );
                json_body(200, body)
            }
            Err(e) => service_error(e, tool.name),
        }
    });
}

/// `GET` and `DELETE /v1/documents/{id}`.
pub(super) fn document(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if *request.method() == Method::Delete {
        let Some(forget) = tools::find(FORGET_TOOL) else {
            let r = not_implemented("deleting documents (alayasiki_forget)");
            return ctx.drains.respond(request, r);
        };
        return delete(ctx, request, principal, forget, id);
    }
    if !principal.permits(Permission::Query) {
        return ctx.drains.respond(request, forbidden(Permission::Query));
    }
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.document(&id) {
            Ok(d) => {
                let metadata: Value = serde_json::from_str(&d.metadata).unwrap_or(Value::Null);
                let body = json!({
                    "document_id": d.doc_id,
                    "source": d.source,
                    "title": d.title,
                    "media_type": d.media_type,
                    "sha256": d.sha256,
                    "bytes": d.byte_size,
                    "metadata": metadata,
                    "provenance": d.provenance,
                    "created_by": d.created_by,
                    "created_at": crate::clock::rfc3339(d.created_at),
                    "state": d.state,
                    "text": d.text,
                    "error": d.error,
                })
                .to_string();
                memory.charge("document.read", 0, body.len() as u64, started.elapsed());
                json_body(200, body)
            }
            Err(e) => service_error(e, "document.read"),
        }
    });
}

fn delete(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    forget: &'static Tool,
    id: &str,
) {
    if !principal.permits(forget.permission) {
        return ctx.drains.respond(request, forbidden(forget.permission));
    }
    let started = Instant::now();
    let mut arguments = Map::new();
    arguments.insert(FORGET_ID_ARGUMENT.into(), Value::String(id.to_string()));
    run(ctx, request, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match tools::invoke(forget, &memory, &arguments) {
            Ok(value) => {
                let body = value.to_string();
                memory.charge(forget.name, 0, body.len() as u64, started.elapsed());
                json_body(200, body)
            }
            Err(e) => service_error(e, forget.name),
        }
    });
}

fn forbidden(p: Permission) -> Reply {
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
fn run(
    ctx: &Arc<Context>,
    request: Request,
    work: impl FnOnce(&Context) -> Reply + Send + 'static,
) {
    let permit = match admit_dispatch(ctx) {
        Ok(p) => p,
        Err(r) => return ctx.drains.respond(request, r),
    };
    let job_ctx = ctx.clone();
    let (tx, rx) = crossbeam_channel::bounded::<Request>(1);
    // The request travels with the job: a worker answers it.
    let submitted = ctx.submit(Box::new(move || {
        let _permit = permit;
        if let Ok(request) = rx.recv() {
            let reply = work(&job_ctx);
            let _ = request.respond(reply);
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
        ctx.drains.respond(request, r);
    }
}

/// Why a body was refused: the answer, and whether the body was read to
/// the end (if not, the answer goes through the drain threads).
struct Refused {
    reply: Reply,
    body_read: bool,
}

impl Refused {
    fn send(self, ctx: &Context, request: Request) {
        if self.body_read {
            let _ = request.respond(self.reply);
        } else {
            ctx.drains.respond(request, self.reply);
        }
    }
}

/// Reads a JSON object body (an empty body means `{}`) and its length.
fn json_object_body(request: &mut Request) -> Result<(Map<String, Value>, u64), Refused> {
    let read = |reply| Refused {
        reply,
        body_read: true,
    };
    let body = match body::read(request) {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            return Err(Refused {
                reply: too_large(),
                body_read: false,
            })
        }
        Err(BodyError::Io(e)) => {
            log::debug!("reading a request body failed: {e}");
            return Err(Refused {
                reply: error(400, "incomplete_body", "the request body could not be read"),
                body_read: false,
            });
        }
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok((Map::new(), body.len() as u64));
    }
    if !is_json(request) {
        return Err(read(error(
            415,
            "unsupported_media_type",
            "Content-Type must be application/json",
        )));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(map)) => Ok((map, body.len() as u64)),
        Ok(_) => Err(read(error(
            400,
            "invalid_input",
            "the body must be a JSON object of the tool's arguments",
        ))),
        Err(e) => Err(read(error(
            400,
            "invalid_json",
            &format!("invalid JSON at line {} column {}", e.line(), e.column()),
        ))),
    }
}

/// A 200-style response whose body is already serialized JSON.
fn json_body(status: u16, body: String) -> Reply {
    Response::from_data(body.into_bytes())
        .with_status_code(status)
        .with_header(super::http::make_header("Content-Type", "application/json"))
        .with_header(super::http::make_header("Cache-Control", "no-store"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
