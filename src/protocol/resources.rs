//! MCP resources: stored documents as `alayasiki://documents/{id}` (the
//! extracted text) and `alayasiki://documents/{id}/original` (the exact
//! uploaded bytes: `text` for text types, base64 `blob` otherwise, with the
//! document's media type); the caller's community summaries as
//! `alayasiki://communities`; one entity of the graph, with its relations,
//! their evidence and history, as `alayasiki://entities/{id}`; the caller's
//! working-memory sessions as `alayasiki://sessions/{id}`.
//!
//! A document with other versions names them in its content's `_meta`
//! (see [`version_meta`]); any version can be read, superseded ones
//! included.
//!
//! `resources/list` pages through the caller's ready current documents with an
//! opaque cursor; `resources/read` answers after the same tenant-bound
//! lookup every other read uses, so another tenant's id reads exactly like
//! an unknown one. Originals are checked against their SHA-256 on every
//! read (see `Memory::original`). Sessions are read the same way: another
//! identity's session, an expired one and one never written all give the
//! same not-found error.

use serde_json::{json, Map, Value};

use super::jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use super::mcp::{Fault, FORBIDDEN};
use crate::base64;
use crate::error::Error;
use crate::limits::RESOURCES_PAGE_SIZE;
use crate::service::{Memory, Version};

const DOCUMENT_PREFIX: &str = "alayasiki://documents/";
/// The caller's community summaries.
pub const COMMUNITIES_URI: &str = "alayasiki://communities";
const SESSION_PREFIX: &str = "alayasiki://sessions/";
/// One entity of the knowledge graph, with its relations and their history.
const ENTITY_PREFIX: &str = "alayasiki://entities/";
const ORIGINAL_SUFFIX: &str = "/original";
/// Longest URI accepted by `resources/read`.
pub const MAX_URI_BYTES: usize = 2048;

pub fn templates() -> Vec<Value> {
    vec![
        json!({
            "uriTemplate": "alayasiki://documents/{id}",
            "name": "document",
            "description": "A stored document's extracted text, by document id (as returned by \
        alayasiki_ingest and in query evidence). A document with other versions names them in \
        `_meta`: `versions` (oldest first) and, once a newer one replaced it, `superseded_by` \
        and `superseded_at`.",
            "mimeType": "text/plain"
        }),
        json!({
            "uriTemplate": "alayasiki://sessions/{session_id}",
            "name": "working-memory session",
            "description": "One of your working-memory sessions (see alayasiki_memory_write) as JSON: \
        notes in write order, nodes, edges, and its created, updated and expiry times.",
            "mimeType": "application/json"
        }),
        json!({
            "uriTemplate": "alayasiki://documents/{id}/original",
            "name": "original",
            "description": "A stored document's original bytes, exactly as uploaded (text for text \
        types, base64 blob otherwise), with its media type. Checked against the SHA-256 recorded \
        when it was stored."
        }),
        json!({
            "uriTemplate": "alayasiki://entities/{name}",
            "name": "entity",
            "description": "One entity of the knowledge graph as JSON, by its name as query results \
        show it (percent-encoded; case does not matter) or its entity id: its name, kind, aliases and mentions, and its relations \
        with confidence, evidence and history: a fact that changed keeps its old statement with \
        `valid_to` and `superseded_by` naming the statement that holds now.",
            "mimeType": "application/json"
        }),
    ]
}

pub fn list(memory: &Memory<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
    let after = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => {
            decode_cursor(c).ok_or_else(|| Fault::new(INVALID_PARAMS, "invalid cursor"))?
        }
        Some(_) => return Err(Fault::new(INVALID_PARAMS, "invalid cursor")),
    };
    let page = memory
        .list_documents(after, RESOURCES_PAGE_SIZE + 1)
        .map_err(service_fault)?;
    let more = page.len() > RESOURCES_PAGE_SIZE;
    let shown = &page[..page.len().min(RESOURCES_PAGE_SIZE)];
    let resources: Vec<Value> = shown
        .iter()
        .map(|d| {
            let name = d
                .title
                .clone()
                .or_else(|| d.source.clone())
                .unwrap_or_else(|| d.doc_id.clone());
            json!({
                "uri": format!("{DOCUMENT_PREFIX}{}", d.doc_id),
                "name": name,
                "mimeType": "text/plain",
                "description": match &d.source {
                    Some(source) => format!(
                        "{} document ({} bytes) from {source}",
                        d.media_type, d.byte_size
                    ),
                    None => format!("{} document ({} bytes)", d.media_type, d.byte_size),
                }
            })
        })
        .collect();
    let mut resources = resources;
    if after == 0 {
        resources.insert(
            0,
            json!({
                "uri": COMMUNITIES_URI,
                "name": "community summaries",
                "mimeType": "application/json",
                "description": "Groups of related entities in this memory, each with a title, its strongest facts and cited chunks (rebuilt when the graph changed)."
            }),
        );
    }
    let mut result = json!({"resources": resources});
    if more {
        if let Some(last) = shown.last() {
            result["nextCursor"] = Value::String(encode_cursor(last.cursor));
        }
    }
    Ok(result)
}

pub fn read(memory: &Memory<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
    let Some(Value::String(uri)) = params.get("uri") else {
        return Err(Fault::new(
            INVALID_PARAMS,
            "resources/read needs uri (a string)",
        ));
    };
    if uri.len() > MAX_URI_BYTES {
        return Err(Fault::new(
            INVALID_PARAMS,
            format!("uri longer than {MAX_URI_BYTES} bytes"),
        ));
    }
    let not_found =
        || Fault::new(RESOURCE_NOT_FOUND, "resource not found").with_data(json!({"uri": uri}));
    if uri == COMMUNITIES_URI {
        let value = memory.communities().map_err(service_fault)?;
        return Ok(json!({
            "contents": [{"uri": uri, "mimeType": "application/json", "text": value.to_string()}]
        }));
    }
    if let Some(named) = uri.strip_prefix(ENTITY_PREFIX) {
        let Some(named) = crate::text::percent_decode(named) else {
            return Err(not_found());
        };
        return match entity_named(memory, &named) {
            Ok(entity) => Ok(json!({
                "contents": [{
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": super::entity_view::entity_json(&entity).to_string()
                }]
            })),
            // Malformed, unknown, another tenant's or out of the caller's
            // sight: all the same not-found.
            Err(Error::NotFound(_) | Error::InvalidInput(_)) => Err(not_found()),
            Err(e) => Err(service_fault(e)),
        };
    }
    if let Some(session_id) = uri.strip_prefix(SESSION_PREFIX) {
        return match memory.memory_session(session_id) {
            Ok(snapshot) => Ok(json!({
                "contents": [{
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": snapshot.to_json().to_string()
                }]
            })),
            // A malformed id cannot name a session: not found, like any
            // other id this caller has no session for.
            Err(Error::NotFound(_) | Error::InvalidInput(_)) => Err(not_found()),
            Err(e) => Err(service_fault(e)),
        };
    }
    let Some(id) = uri.strip_prefix(DOCUMENT_PREFIX) else {
        return Err(not_found());
    };
    if let Some(id) = id.strip_suffix(ORIGINAL_SUFFIX) {
        return read_original(memory, uri, id);
    }
    let doc = match memory.document(id) {
        Ok(d) => d,
        Err(Error::NotFound(_)) => return Err(not_found()),
        Err(e) => return Err(service_fault(e)),
    };
    let versions = match memory.versions(id) {
        Ok(v) => v,
        Err(Error::NotFound(_)) => return Err(not_found()),
        Err(e) => return Err(service_fault(e)),
    };
    match (doc.state.as_str(), doc.text) {
        ("ready", Some(text)) => {
            let mut content = json!({"uri": uri, "mimeType": "text/plain", "text": text});
            // A document that never had another version reads as before
            // versions existed (recorded sessions replay unchanged).
            if versions.len() > 1 {
                content["_meta"] = version_meta(doc.superseded_by, doc.superseded_at, &versions);
            }
            Ok(json!({"contents": [content]}))
        }
        ("failed", _) => Err(Fault::new(
            RESOURCE_NOT_FOUND,
            format!(
                "document could not be indexed: {}",
                doc.error.unwrap_or_default()
            ),
        )
        .with_data(json!({"uri": uri}))),
        _ => Err(Fault::new(
            RESOURCE_NOT_FOUND,
            "document is still being indexed; try again shortly",
        )
        .with_data(json!({"uri": uri}))),
    }
}

/// The entity `named` names: its id, else an entity of that exact name
/// (compared without case), as query results show names.
fn entity_named(
    memory: &Memory<'_>,
    named: &str,
) -> crate::error::Result<crate::service::EntityView> {
    match memory.entity(named) {
        Err(Error::NotFound(_) | Error::InvalidInput(_)) => {
            let cards = memory.entities(Some(named), ENTITY_NAME_CANDIDATES)?;
            let card = cards
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(named))
                .ok_or_else(|| Error::NotFound("entity".into()))?;
            memory.entity(&card.entity_id)
        }
        found => found,
    }
}

/// Entities matching a name that are looked through for the one of
/// exactly that name.
const ENTITY_NAME_CANDIDATES: usize = 20;

/// A document's place among its versions, as the `_meta` of its content:
/// `superseded_by` and `superseded_at` (RFC 3339) when a newer version
/// replaced it, and `versions`, the whole chain oldest first.
pub fn version_meta(
    superseded_by: Option<String>,
    superseded_at: Option<i64>,
    versions: &[Version],
) -> Value {
    let mut meta = json!({
        "versions": versions
            .iter()
            .map(|v| {
                json!({
                    "document_id": v.doc_id,
                    "created_at": crate::clock::rfc3339(v.created_at),
                    "superseded_at": v.superseded_at.map(crate::clock::rfc3339),
                    "current": v.is_current(),
                })
            })
            .collect::<Vec<_>>()
    });
    if let Some(by) = superseded_by {
        meta["superseded_by"] = json!(by);
    }
    if let Some(at) = superseded_at {
        meta["superseded_at"] = json!(crate::clock::rfc3339(at));
    }
    meta
}

fn read_original(memory: &Memory<'_>, uri: &str, id: &str) -> Result<Value, Fault> {
    let original = match memory.original(id) {
        Ok(o) => o,
        Err(Error::NotFound(_)) => {
            return Err(
                Fault::new(RESOURCE_NOT_FOUND, "resource not found").with_data(json!({"uri": uri}))
            )
        }
        Err(e) => return Err(service_fault(e)),
    };
    let mut content = json!({"uri": uri, "mimeType": original.media_type});
    if original.is_text {
        content["text"] = Value::String(String::from_utf8(original.bytes).unwrap_or_default());
    } else {
        content["blob"] = Value::String(base64::encode(&original.bytes));
    }
    Ok(json!({"contents": [content]}))
}

fn service_fault(e: Error) -> Fault {
    let e = e.logged("resources");
    let code = match e {
        Error::Forbidden(_) => FORBIDDEN,
        Error::InvalidInput(_) | Error::LimitExceeded(_) => INVALID_PARAMS,
        Error::NotFound(_) => RESOURCE_NOT_FOUND,
        _ => super::jsonrpc::INTERNAL_ERROR,
    };
    Fault::new(code, e.client_message())
}

fn encode_cursor(position: i64) -> String {
    base64::encode(format!("documents:{position}").as_bytes())
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    let bytes = base64::decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    text.strip_prefix("documents:")?
        .parse()
        .ok()
        .filter(|n: &i64| *n >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        assert_eq!(decode_cursor(&encode_cursor(42)), Some(42));
        assert_eq!(decode_cursor("nonsense"), None);
        assert_eq!(decode_cursor(&base64::encode(b"documents:-1")), None);
    }
}
