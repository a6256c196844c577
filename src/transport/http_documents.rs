//! Document routes of the JSON API: `GET /v1/documents` (newest first,
//! filtered, with the filter's total), `GET`, `PATCH` (a new version:
//! `alayasiki_update`) and `DELETE /v1/documents/{id}`, `GET /v1/documents/{id}/chunks` (the chunks with
//! the entities they mention) and `GET /v1/documents/{id}/original`.
//!
//! The original is served as the exact stored bytes (not JSON), with the
//! stored media type as `Content-Type`, after the same tenant check and
//! SHA-256 verification as the MCP resource
//! `alayasiki://documents/{id}/original` ([`Memory::original`]): a damaged
//! original is an error, never wrong bytes.

use super::admission::Holder;
use super::http::{Context, Method};
use super::http_api::{
    call_with_body, forbidden, not_implemented, run, service_error, Charge, FORGET_ID_ARGUMENT,
    FORGET_TOOL, UPDATE_ID_ARGUMENT, UPDATE_TOOL,
};
use super::query_string::{limit_param, query_pairs};
use super::reply_fit::fit;
use super::request::Request;
use crate::ingest::front_matter;
use crate::limits::{CHUNKS_DEFAULT_LIMIT, CHUNKS_MAX_LIMIT, MAX_REPLY_BYTES};
use crate::protocol::resources::version_meta;
use crate::protocol::tools::{self, Tool};
use crate::service::{DocumentFilter, DocumentOrder, Memory, Permission, Principal};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// Usage operation of `GET /v1/documents`.
pub const LIST_OPERATION: &str = "document.list";
/// Documents in one page of `GET /v1/documents` unless `limit` says less.
pub const LIST_DEFAULT_LIMIT: usize = 50;
/// The largest `limit` of `GET /v1/documents`.
pub const LIST_MAX_LIMIT: usize = 200;
/// The longest `source`, `media_type` or `provenance` filter of
/// `GET /v1/documents`, in bytes.
pub const LIST_MAX_FILTER_BYTES: usize = 1024;

/// The longest `snippet` of an item of `GET /v1/documents`, in characters
/// (a longer text is cut and ends with `…`).
pub const LIST_SNIPPET_CHARS: usize = 160;

/// Usage operation of `GET /v1/documents/{id}`.
pub const READ_OPERATION: &str = "document.read";
/// Usage operation of `GET /v1/documents/{id}/chunks`.
pub const CHUNKS_OPERATION: &str = "document.chunks";
/// Usage operation of `GET /v1/documents/{id}/original`.
pub const ORIGINAL_OPERATION: &str = "document.original";

/// `Content-Type` of an original whose stored media type cannot be a header
/// value.
const FALLBACK_MEDIA_TYPE: &str = "application/octet-stream";

/// `GET`, `PATCH` and `DELETE /v1/documents/{id}`.
pub(super) fn document(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    if *request.method() == Method::Delete {
        let Some(forget) = tools::find(FORGET_TOOL) else {
            let r = not_implemented("deleting documents (alayasiki_forget)");
            return request.respond(r);
        };
        return delete(ctx, request, principal, forget, id);
    }
    if *request.method() == Method::Patch {
        let Some(update) = tools::find(UPDATE_TOOL) else {
            let r = not_implemented("updating documents (alayasiki_update)");
            return request.respond(r);
        };
        if !principal.permits(update.permission) {
            return request.respond(forbidden(update.permission));
        }
        let mut from_path = Map::new();
        from_path.insert(UPDATE_ID_ARGUMENT.into(), Value::String(id.to_string()));
        return call_with_body(ctx, request, principal, update, from_path);
    }
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory
            .document(&id)
            .and_then(|d| Ok((memory.versions(&id)?, d)))
            .and_then(|(v, d)| Ok((memory.document_scopes(&id)?, v, d)))
        {
            Ok((scopes, versions, d)) => {
                let metadata: Value = serde_json::from_str(&d.metadata).unwrap_or(Value::Null);
                let mut body = json!({
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
                    "text_truncated": false,
                    "error": d.error,
                    "scopes": scopes.iter().map(|g| json!({
                        "scope": g.scope,
                        "granted_by": g.granted_by,
                        "granted_at": crate::clock::rfc3339(g.granted_at),
                    })).collect::<Vec<_>>(),
                });
                if let Value::Object(history) =
                    version_meta(d.superseded_by, d.superseded_at, &versions)
                {
                    body.as_object_mut().expect("an object").extend(history);
                }
                // A text whose escaping passes the cap is cut (and
                // `text_truncated` set), so every accepted document can be
                // opened, and so forgotten; the original and chunks stay whole.
                let body = fit(&mut body, &[(String::new(), "text")], MAX_REPLY_BYTES);
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
    /// `order=`: newest first (the default, paged with `before`), oldest
    /// first or by title (both paged with `after`).
    order: DocumentOrder,
    /// The page's cursor: `before` (newest first) or `after` (oldest first,
    /// by title).
    cursor: Option<i64>,
    filter: DocumentFilter,
}

/// An exact-match filter value: at most [`LIST_MAX_FILTER_BYTES`].
fn filter_value(name: &str, value: String) -> Result<String, String> {
    if value.len() > LIST_MAX_FILTER_BYTES {
        return Err(format!(
            "{name} is longer than {LIST_MAX_FILTER_BYTES} bytes"
        ));
    }
    Ok(value)
}

/// `since` or `until` (`end`) as Unix ms: an RFC 3339 date-time with its
/// offset, or a bare date `YYYY-MM-DD` (UTC) meaning the whole day, so a
/// bare `until` ends at the next midnight.
fn time_bound(name: &str, value: &str, end: bool) -> Result<i64, String> {
    let refused = || {
        format!(
            "{name} must be an RFC 3339 date (YYYY-MM-DD) or date-time with offset \
             (YYYY-MM-DDTHH:MM:SSZ; send an offset's + as %2B)"
        )
    };
    crate::clock::parse_time_bound(value, end).ok_or_else(refused)
}

fn list_query(query: &str) -> Result<ListQuery, String> {
    let mut q = ListQuery {
        limit: LIST_DEFAULT_LIMIT,
        order: DocumentOrder::Newest,
        cursor: None,
        filter: DocumentFilter::default(),
    };
    let (mut before, mut after) = (None, None);
    for (name, value) in query_pairs(query)? {
        match name {
            "limit" => q.limit = limit_param(&value, LIST_MAX_LIMIT)?,
            "before" => {
                before = Some(
                    value
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or("before must be a next_before of an earlier page")?,
                );
            }
            "after" => {
                after = Some(
                    value
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or("after must be a next_after of an earlier page")?,
                );
            }
            "order" => {
                q.order = match value.as_str() {
                    "newest" => DocumentOrder::Newest,
                    "oldest" => DocumentOrder::Oldest,
                    "title" => DocumentOrder::Title,
                    _ => return Err("order must be newest, oldest or title".into()),
                }
            }
            "source" => q.filter.source = Some(filter_value(name, value)?),
            "media_type" => q.filter.media_type = Some(filter_value(name, value)?),
            "provenance" => q.filter.provenance = Some(filter_value(name, value)?),
            "since" => q.filter.since = Some(time_bound(name, &value, false)?),
            "until" => q.filter.until = Some(time_bound(name, &value, true)?),
            "include_history" => {
                q.filter.include_history = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err("include_history must be true or false".into()),
                }
            }
            _ => {
                return Err(format!(
                    "unknown parameter {name:?} (limit, order, before, after, source, \
                     media_type, provenance, since, until, include_history)"
                ))
            }
        }
    }
    let newest = q.order == DocumentOrder::Newest;
    q.cursor = match (newest, before, after) {
        (true, _, Some(_)) => {
            return Err(
                "after pages order=oldest and order=title; newest first pages with before".into(),
            )
        }
        (false, Some(_), _) => {
            return Err(
                "before pages newest first; order=oldest and order=title page with after".into(),
            )
        }
        (true, cursor, None) | (false, None, cursor) => cursor,
    };
    Ok(q)
}

/// `GET /v1/documents[?limit=N&before=CURSOR&source=S&media_type=M&
/// provenance=P&since=T&until=T&include_history=B]`: this tenant's ready
/// documents the filters take (current versions only unless
/// `include_history=true`), newest first; `next_before` pages on (null at the end);
/// `total` counts every document the filters take, whatever the cursor.
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
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        let page = memory.list_documents_page(q.order, q.cursor, &q.filter, q.limit + 1);
        let listed = page.and_then(|rows| Ok((rows, memory.count_documents(&q.filter)?)));
        match listed {
            Ok((mut rows, total)) => {
                let more = rows.len() > q.limit;
                rows.truncate(q.limit);
                let next = more
                    .then(|| rows.last().map(|r| r.summary.cursor))
                    .flatten();
                let documents: Vec<Value> = rows
                    .iter()
                    .map(|r| {
                        json!({
                            "document_id": r.summary.doc_id,
                            "title": r.summary.title,
                            "source": r.summary.source,
                            "media_type": r.summary.media_type,
                            "provenance": r.provenance,
                            "bytes": r.summary.byte_size,
                            "created_at": crate::clock::rfc3339(r.created_at),
                            "superseded_at": r.superseded_at.map(crate::clock::rfc3339),
                            "snippet": snippet(&r.lead),
                        })
                    })
                    .collect();
                let cursor_name = if q.order == DocumentOrder::Newest {
                    "next_before"
                } else {
                    "next_after"
                };
                let body = json!({
                    "documents": documents,
                    cursor_name: next,
                    "total": total,
                })
                .to_string()
                .into_bytes();
                Charge::new(LIST_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, LIST_OPERATION),
        }
    });
}

/// What a list item shows of a document's text: its start after any front
/// matter, runs of white space made one space, at most
/// [`LIST_SNIPPET_CHARS`] characters.
fn snippet(lead: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for (i, word) in front_matter::body(lead).split_whitespace().enumerate() {
        let space = (i > 0).then_some(' ');
        for c in space.into_iter().chain(word.chars()) {
            if chars == LIST_SNIPPET_CHARS {
                // More text than fits: its last character gives way to `…`.
                out.pop();
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

/// The parameters of `GET /v1/documents/{id}/chunks`: `(after, limit)`.
fn chunks_query(query: &str) -> Result<(Option<i64>, usize), String> {
    let (mut after, mut limit) = (None, CHUNKS_DEFAULT_LIMIT);
    for (name, value) in query_pairs(query)? {
        match name {
            "after" => {
                after = Some(
                    value
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n >= 0)
                        .ok_or("after must be a chunk ordinal (a whole number from 0)")?,
                );
            }
            "limit" => limit = limit_param(&value, CHUNKS_MAX_LIMIT)?,
            _ => return Err(format!("unknown parameter {name:?} (after, limit)")),
        }
    }
    Ok((after, limit))
}

/// `GET /v1/documents/{id}/chunks[?after=ORDINAL&limit=N]`: the chunks in
/// reading order, each with the entities it mentions; `next_after` pages
/// on (null at the end).
pub(super) fn chunks(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    id: &str,
    query: &str,
) {
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let (after, limit) = match chunks_query(query) {
        Ok(q) => q,
        Err(message) => {
            return request.respond(super::http::error(400, "invalid_input", &message));
        }
    };
    let started = Instant::now();
    let id = id.to_string();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.document_chunks(&id, after, limit) {
            Ok(page) => {
                let chunks: Vec<Value> = page
                    .chunks
                    .iter()
                    .map(|c| {
                        let entities: Vec<Value> = c
                            .entities
                            .iter()
                            .map(|e| {
                                json!({
                                    "entity_id": e.entity_id,
                                    "name": e.name,
                                    "kind": e.kind,
                                    "byte_start": e.byte_start,
                                    "byte_end": e.byte_end,
                                })
                            })
                            .collect();
                        json!({
                            "chunk_id": c.chunk_id,
                            "ordinal": c.ordinal,
                            "byte_start": c.byte_start,
                            "byte_end": c.byte_end,
                            "text": c.text,
                            "entities": entities,
                        })
                    })
                    .collect();
                let body = json!({
                    "document_id": page.document_id,
                    "chunks": chunks,
                    "next_after": page.next_after,
                })
                .to_string()
                .into_bytes();
                Charge::new(CHUNKS_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, CHUNKS_OPERATION),
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
    run(ctx, request, Holder::of(&principal), move |ctx| {
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
    run(ctx, request, Holder::of(&principal), move |ctx| {
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

    /// A day in milliseconds.
    const DAY_MS: i64 = 86_400_000;

    #[test]
    fn a_snippet_skips_front_matter_folds_white_space_and_is_cut_at_its_limit() {
        assert_eq!(
            snippet("---\ntitle: T\n---\n# Head\n\n  a\tb\n"),
            "# Head a b"
        );
        let fits = "x".repeat(LIST_SNIPPET_CHARS);
        assert_eq!(snippet(&fits), fits);
        let cut = snippet(&format!("{fits}y"));
        assert_eq!(cut.chars().count(), LIST_SNIPPET_CHARS);
        assert!(cut.ends_with('…'));
        let words = snippet(&"é ".repeat(LIST_SNIPPET_CHARS));
        assert_eq!(words.chars().count(), LIST_SNIPPET_CHARS);
        assert_eq!(snippet(""), "");
    }

    #[test]
    fn list_parameters_are_checked() {
        assert_eq!(
            list_query("").unwrap(),
            ListQuery {
                limit: LIST_DEFAULT_LIMIT,
                order: DocumentOrder::Newest,
                cursor: None,
                filter: DocumentFilter::default(),
            }
        );
        let q = list_query(
            "limit=2&before=7&source=notes%2Fa+b&media_type=text%2Fmarkdown&provenance=user",
        )
        .unwrap();
        assert_eq!(
            (q.limit, q.order, q.cursor),
            (2, DocumentOrder::Newest, Some(7))
        );
        let oldest = list_query("order=oldest&after=9").unwrap();
        assert_eq!(
            (oldest.order, oldest.cursor),
            (DocumentOrder::Oldest, Some(9))
        );
        let title = list_query("order=title&after=4").unwrap();
        assert_eq!((title.order, title.cursor), (DocumentOrder::Title, Some(4)));
        assert_eq!(q.filter.source.as_deref(), Some("notes/a b"));
        assert_eq!(q.filter.media_type.as_deref(), Some("text/markdown"));
        assert_eq!(q.filter.provenance.as_deref(), Some("user"));
        assert_eq!(list_query("limit=200").unwrap().limit, LIST_MAX_LIMIT);
        let longest = "s".repeat(LIST_MAX_FILTER_BYTES);
        assert!(list_query(&format!("media_type={longest}")).is_ok());
        for bad in [
            "limit=0",
            "limit=201",
            "order=oldest&before=3",
            "after=3",
            "order=title&before=3",
            "order=alphabetical",
            "after=0",
            "limit=x",
            "before=-1",
            "before=",
            "x=1",
            "source=%zz",
            "since=yesterday",
            "until=2026-13-01",
            "since=",
        ] {
            assert!(list_query(bad).is_err(), "{bad}");
        }
        let too_long = format!("provenance={longest}s");
        assert!(list_query(&too_long).unwrap_err().contains("provenance"));
        assert!(list_query("until=x").unwrap_err().starts_with("until"));
    }

    #[test]
    fn a_bare_date_bounds_the_whole_day() {
        let day = crate::clock::parse_rfc3339("2026-12-01").unwrap();
        assert_eq!(time_bound("since", "2026-12-01", false), Ok(day));
        assert_eq!(time_bound("until", "2026-12-01", true), Ok(day + DAY_MS));
        let q = list_query("since=2026-12-01&until=2026-12-01").unwrap();
        assert_eq!(
            (q.filter.since, q.filter.until),
            (Some(day), Some(day + DAY_MS))
        );
    }

    #[test]
    fn date_times_bound_at_their_instant_with_their_offset() {
        let noon = crate::clock::parse_rfc3339("2026-12-01T12:00:00Z").unwrap();
        assert_eq!(time_bound("until", "2026-12-01T12:00:00Z", true), Ok(noon));
        assert_eq!(
            time_bound("since", "2026-12-01T14:00:00.000+02:00", false),
            Ok(noon)
        );
        // A `+` is kept as itself in the time bounds (not a space).
        let q = list_query("since=2026-12-01T14:00:00+02:00&until=2026-12-01T12:00:00%2B00:00")
            .unwrap();
        assert_eq!((q.filter.since, q.filter.until), (Some(noon), Some(noon)));
        for bad in [
            "2026-12-01T12:00:00",
            "2026-12-1",
            "2026-02-30",
            " 2026-12-01",
            "2026-12-01T25:00:00Z",
            "12/01/2026",
        ] {
            let refused = time_bound("since", bad, false).unwrap_err();
            assert!(refused.starts_with("since must be"), "{bad}: {refused}");
        }
    }

    #[test]
    fn chunk_parameters_are_checked_at_their_edges() {
        assert_eq!(chunks_query("").unwrap(), (None, CHUNKS_DEFAULT_LIMIT));
        let max = format!("after=0&limit={CHUNKS_MAX_LIMIT}");
        assert_eq!(chunks_query(&max).unwrap(), (Some(0), CHUNKS_MAX_LIMIT));
        let over = format!("limit={}", CHUNKS_MAX_LIMIT + 1);
        for bad in ["limit=0", &over, "after=-1", "after=x", "before=1"] {
            assert!(chunks_query(bad).is_err(), "{bad}");
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
