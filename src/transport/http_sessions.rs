//! Working-memory routes of the JSON API, for the memory browser:
//! `GET /v1/sessions` (the caller's live sessions),
//! `GET /v1/sessions/{id}` (one session's contents, as the MCP resource
//! `alayasiki://sessions/{id}` gives them) and `DELETE /v1/sessions/{id}`
//! (the session ended before it expires, as `alayasiki_memory_delete`
//! does).
//!
//! Sessions belong to an identity (tenant and subject): another identity's
//! session, an expired one, one never written and a malformed id all read
//! as the same 404 `not_found`. A session whose notes would pass
//! [`MAX_REPLY_BYTES`] is shown with their texts cut to one length (each
//! cut flagged `text_truncated` or `content_truncated`).

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

use super::admission::Holder;
use super::http::{Context, Method};
use super::http_api::{forbidden, run, service_error, Charge, MEMORY_DELETE_TOOL};
use super::reply_fit::{fit, Cuttable};
use super::request::Request;
use crate::clock::rfc3339;
use crate::limits::MAX_REPLY_BYTES;
use crate::service::{Permission, Principal};

/// Usage operation of `GET /v1/sessions`.
pub const SESSIONS_OPERATION: &str = "session.list";
/// Usage operation of `GET /v1/sessions/{id}`.
pub const SESSION_OPERATION: &str = "session.read";

/// `GET /v1/sessions`.
pub(super) fn list(ctx: &Arc<Context>, request: Request, principal: Principal) {
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let started = Instant::now();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.memory_sessions() {
            Ok(sessions) => {
                let sessions: Vec<Value> = sessions
                    .iter()
                    .map(|s| {
                        json!({
                            "session_id": s.session_id,
                            "notes": s.notes,
                            "nodes": s.nodes,
                            "edges": s.edges,
                            "writes": s.writes,
                            "bytes_charged": s.bytes_charged,
                            "created_at": rfc3339(s.created_at_ms),
                            "updated_at": rfc3339(s.updated_at_ms),
                            "expires_at": rfc3339(s.expires_at_ms),
                            "ms_left": s.ms_left,
                        })
                    })
                    .collect();
                let body = json!({"sessions": sessions}).to_string().into_bytes();
                Charge::new(SESSIONS_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, SESSIONS_OPERATION),
        }
    });
}

/// `GET /v1/sessions/{id}`, or `DELETE`.
pub(super) fn session(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if *request.method() == Method::Delete {
        return delete(ctx, request, principal, id);
    }
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.find_memory_session(&id) {
            Ok(snapshot) => {
                let mut body = snapshot.to_json();
                let notes = body["notes"].as_array().map_or(0, Vec::len);
                let cuttable: Vec<Cuttable> = (0..notes)
                    .flat_map(|i| {
                        [
                            (format!("/notes/{i}"), "text"),
                            (format!("/notes/{i}"), "content"),
                        ]
                    })
                    .collect();
                let body = fit(&mut body, &cuttable, MAX_REPLY_BYTES);
                Charge::new(SESSION_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, SESSION_OPERATION),
        }
    });
}

/// `DELETE /v1/sessions/{id}`: `alayasiki_memory_delete`'s reply.
fn delete(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if !principal.permits(Permission::Ingest) {
        return request.respond(forbidden(Permission::Ingest));
    }
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.memory_delete(&id) {
            Ok(deleted) => {
                let body = json!(deleted).to_string().into_bytes();
                Charge::new(MEMORY_DELETE_TOOL, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, MEMORY_DELETE_TOOL),
        }
    });
}
