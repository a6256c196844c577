//! Document routes of the JSON API: `GET /v1/documents` (newest first),
//! `GET` and `DELETE /v1/documents/{id}`, and
//! `GET /v1/documents/{id}/original`.
//!
//! The original is served as the exact stored bytes (not JSON), with the
//! stored media type as `Content-Type`, after the same tenant check and
//! SHA-256 verification as the MCP resource
//! `alayasiki://documents/{id}/original` ([`Memory::original`]): a damaged
//! original is an error, never wrong bytes.

use super::http::{Context, Method};
use super::http_api::{
    forbidden, not_implemented, run, service_error, Charge, FORGET_ID_ARGUMENT, FORGET_TOOL,
};
use super::request::Request;
use crate::protocol::tools::{self, Tool};
use crate::service::{Memory, Permission, Principal};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// Usage operation of `GET /v1/documents`.
pub const LIST_OPERATION: &str = "document.list";
/// Documents in one page of `GET /v1/documents` unless `limit` says less.
pub const LIST_DEFAULT_LIMIT: usize = 50;
/// The largest `limit` of `GET /v1/documents`.
pub const LIST_MAX_LIMIT: usize = 200;
/// The longest `source` filter of `GET /v1/documents`, in bytes.
const LIST_MAX_SOURCE_BYTES: usize = 1024;

/// Usage operation of `GET /v1/documents/{id}`.
pub const READ_OPERATION: &str = "document.read";
/// Usage operation of `GET /v1/documents/{id}/original`.
pub const ORIGINAL_OPERATION: &str = "document.original";

/// `Content-Type` of an original whose stored media type cannot be a header
/// value.
const FALLBACK_MEDIA_TYPE: &str = "application/octet-stream";

/// `GET` and `DELETE /v1/documents/{id}`.
pub(super) fn document(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if *request.method() == Method::Delete {
        let Some(forget) = tools::find(FORGET_TOOL) else {
            let r = not_implemented("deleting documents (alayasiki_forget)");
            return request.respond(r);
        };
        return delete(ctx, request, principal, forget, id);
    }
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
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
                .to_string()
                .into_bytes();
                Charge::new(READ_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, READ_OPERATION),
        }
    });
}

/// The parameters of `GET /v1/documents`.
#[derive(Debug, PartialEq, Eq)]
struct ListQuery {
    limit: usize,
    before: Option<i64>,
    source: Option<String>,
}

fn list_query(query: &str) -> Result<ListQuery, String> {
    let mut q = ListQuery {
        limit: LIST_DEFAULT_LIMIT,
        before: None,
        source: None,
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let value = super::http::percent_decode(&raw.replace('+', " "))
            .ok_or_else(|| format!("the value of {name:?} is not percent-encoded UTF-8"))?;
        match name {
            "limit" => {
                q.limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=LIST_MAX_LIMIT).contains(n))
                    .ok_or_else(|| {
                        format!("limit must be a whole number from 1 to {LIST_MAX_LIMIT}")
                    })?;
            }
            "before" => {
                q.before = Some(
                    value
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or("before must be a next_before of an earlier page")?,
                );
            }
            "source" => {
                if value.len() > LIST_MAX_SOURCE_BYTES {
                    return Err(format!(
                        "source is longer than {LIST_MAX_SOURCE_BYTES} bytes"
                    ));
                }
                q.source = Some(value);
            }
            _ => {
                return Err(format!(
                    "unknown parameter {name:?} (limit, before, source)"
                ))
            }
        }
    }
    Ok(q)
}

/// `GET /v1/documents[?limit=N&before=CURSOR&source=S]`: this tenant's
/// ready documents, newest first; `next_before` pages on (null at the end).
pub(super) fn list(ctx: &Arc<Context>, request: Request, principal: Principal, query: &str) {
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let q = match list_query(query) {
        Ok(q) => q,
        Err(message) => {
            return request.respond(super::http::error(400, "invalid_input", &message));
        }
    };
    let started = Instant::now();
    run(ctx, request, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.list_documents_newest(q.before, q.source.as_deref(), q.limit + 1) {
            Ok(mut rows) => {
                let more = rows.len() > q.limit;
                rows.truncate(q.limit);
                let next_before = more.then(|| rows.last().map(|r| r.summary.cursor));
                let documents: Vec<Value> = rows
                    .iter()
                    .map(|r| {
                        json!({
                            "document_id": r.summary.doc_id,
                            "title": r.summary.title,
                            "source": r.summary.source,
                            "media_type": r.summary.media_type,
                            "bytes": r.summary.byte_size,
                            "created_at": crate::clock::rfc3339(r.created_at),
                        })
                    })
                    .collect();
                let body = json!({"documents": documents, "next_before": next_before.flatten()})
                    .to_string()
                    .into_bytes();
                Charge::new(LIST_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, LIST_OPERATION),
        }
    });
}

/// `GET /v1/documents/{id}/original`: the exact uploaded bytes.
pub(super) fn original(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, move |ctx| {
        let memory: Memory<'_> = ctx.service.for_caller(&principal);
        match memory.original(&id) {
            Ok(o) => {
                let media_type = header_safe(&o.media_type);
                let reply =
                    Charge::new(ORIGINAL_OPERATION, 0, started).reply(&memory, o.bytes, media_type);
                // The bytes are the caller's upload: never let a browser
                // guess another type for them.
                reply.with_header(super::http::make_header(
                    "X-Content-Type-Options",
                    "nosniff",
                ))
            }
            Err(e) => service_error(e, ORIGINAL_OPERATION),
        }
    });
}

/// `media_type` if it can be sent as a header value as is, else
/// [`FALLBACK_MEDIA_TYPE`].
fn header_safe(media_type: &str) -> &str {
    let ok = !media_type.is_empty()
        && media_type.len() <= 255
        && media_type.bytes().all(|b| (0x20..0x7f).contains(&b));
    if ok {
        media_type
    } else {
        FALLBACK_MEDIA_TYPE
    }
}

fn delete(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    forget: &'static Tool,
    id: &str,
) {
    if !principal.permits(forget.permission) {
        return request.respond(forbidden(forget.permission));
    }
    let started = Instant::now();
    let mut arguments = Map::new();
    arguments.insert(FORGET_ID_ARGUMENT.into(), Value::String(id.to_string()));
    run(ctx, request, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match tools::invoke(forget, &memory, &arguments) {
            Ok(value) => Charge::new(forget.name, 0, started).reply(
                &memory,
                value.to_string().into_bytes(),
                "application/json",
            ),
            Err(e) => service_error(e, forget.name),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_parameters_are_checked() {
        assert_eq!(
            list_query("").unwrap(),
            ListQuery {
                limit: LIST_DEFAULT_LIMIT,
                before: None,
                source: None
            }
        );
        let q = list_query("limit=2&before=7&source=notes%2Fa+b").unwrap();
        assert_eq!((q.limit, q.before), (2, Some(7)));
        assert_eq!(q.source.as_deref(), Some("notes/a b"));
        for bad in [
            "limit=0",
            "limit=201",
            "limit=x",
            "before=-1",
            "before=",
            "x=1",
            "source=%zz",
        ] {
            assert!(list_query(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn media_types_unfit_for_a_header_fall_back_to_octet_stream() {
        assert_eq!(header_safe("application/pdf"), "application/pdf");
        assert_eq!(
            header_safe("text/plain; charset=utf-8"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(header_safe("text/plain\r\nX-Evil: 1"), FALLBACK_MEDIA_TYPE);
        assert_eq!(header_safe("bild/ä"), FALLBACK_MEDIA_TYPE);
        assert_eq!(header_safe(""), FALLBACK_MEDIA_TYPE);
    }
}
