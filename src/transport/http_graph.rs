//! Knowledge-graph routes of the JSON API, for the memory browser:
//! `GET /v1/entities` (most mentioned, or matching `q`),
//! `GET /v1/entities/{entity_id}` (with relations and evidence),
//! `GET /v1/graph` (a neighbourhood) and `GET /v1/communities` (the
//! community summaries with their members).
//!
//! Thin: each parses its query string, then calls one `Memory` read that
//! binds the caller's tenant and bounds the reply. An entity id that is
//! malformed, unknown or another tenant's is the same 404 `not_found`.

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

use super::admission::Holder;
use super::http::Context;
use super::http_api::{forbidden, run, service_error, Charge};
use super::query_string::{limit_param, query_pairs};
use super::request::Request;
use crate::limits::{
    ENTITIES_DEFAULT_LIMIT, ENTITIES_MAX_LIMIT, GRAPH_DEFAULT_NODES, GRAPH_MAX_DEPTH,
    GRAPH_MAX_NODES, MAX_ENTITY_QUERY_BYTES,
};
use crate::protocol::entity_view::{card_json, entity_json};
use crate::service::{Memory, Permission, Principal};

/// Usage operation of `GET /v1/entities`.
pub const ENTITIES_OPERATION: &str = "entity.list";
/// Usage operation of `GET /v1/entities/{entity_id}`.
pub const ENTITY_OPERATION: &str = "entity.read";
/// Usage operation of `GET /v1/graph`.
pub const GRAPH_OPERATION: &str = "graph.read";
/// Usage operation of `GET /v1/communities`.
pub const COMMUNITIES_OPERATION: &str = "community.list";

/// Answers 400 `invalid_input` with `message`.
fn invalid(request: Request, message: &str) {
    request.respond(super::http::error(400, "invalid_input", message));
}

/// Runs `read` for the caller (who needs the query permission) and
/// answers its JSON, charged as `operation`.
fn read_json(
    ctx: &Arc<Context>,
    request: Request,
    principal: Principal,
    operation: &'static str,
    read: impl FnOnce(&Memory<'_>) -> crate::error::Result<Value> + Send + 'static,
) {
    if !principal.permits(Permission::Query) {
        return request.respond(forbidden(Permission::Query));
    }
    let started = Instant::now();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match read(&memory) {
            Ok(value) => Charge::new(operation, 0, started).reply(
                &memory,
                value.to_string().into_bytes(),
                "application/json",
            ),
            Err(e) => service_error(e, operation),
        }
    });
}

/// The parameters of `GET /v1/entities`: `(q, limit)`.
fn entities_query(query: &str) -> Result<(Option<String>, usize), String> {
    let (mut q, mut limit) = (None, ENTITIES_DEFAULT_LIMIT);
    for (name, value) in query_pairs(query)? {
        match name {
            "q" => {
                if value.len() > MAX_ENTITY_QUERY_BYTES {
                    return Err(format!("q is longer than {MAX_ENTITY_QUERY_BYTES} bytes"));
                }
                q = Some(value);
            }
            "limit" => limit = limit_param(&value, ENTITIES_MAX_LIMIT)?,
            _ => return Err(format!("unknown parameter {name:?} (q, limit)")),
        }
    }
    Ok((q, limit))
}

/// `GET /v1/entities[?q=TEXT&limit=N]`.
pub(super) fn entities(ctx: &Arc<Context>, request: Request, principal: Principal, query: &str) {
    let (q, limit) = match entities_query(query) {
        Ok(q) => q,
        Err(message) => return invalid(request, &message),
    };
    read_json(ctx, request, principal, ENTITIES_OPERATION, move |memory| {
        let cards = memory.entities(q.as_deref(), limit)?;
        Ok(json!({"entities": cards.iter().map(card_json).collect::<Vec<_>>()}))
    });
}

/// `GET /v1/entities/{entity_id}`.
pub(super) fn entity(ctx: &Arc<Context>, request: Request, principal: Principal, id: &str) {
    let id = id.to_string();
    read_json(ctx, request, principal, ENTITY_OPERATION, move |memory| {
        Ok(entity_json(&memory.entity(&id)?))
    });
}

/// The parameters of `GET /v1/graph`: `(entity, depth, limit)`.
fn graph_query(query: &str) -> Result<(Option<String>, usize, usize), String> {
    let (mut entity, mut depth, mut limit) = (None, 1, GRAPH_DEFAULT_NODES);
    for (name, value) in query_pairs(query)? {
        match name {
            // Blank is no centre: the starting picture.
            "entity" => entity = Some(value).filter(|v| !v.trim().is_empty()),
            "depth" => {
                depth = value
                    .parse::<usize>()
                    .ok()
                    .filter(|d| (1..=GRAPH_MAX_DEPTH).contains(d))
                    .ok_or_else(|| {
                        format!("depth must be a whole number from 1 to {GRAPH_MAX_DEPTH}")
                    })?;
            }
            "limit" => limit = limit_param(&value, GRAPH_MAX_NODES)?,
            _ => return Err(format!("unknown parameter {name:?} (entity, depth, limit)")),
        }
    }
    Ok((entity, depth, limit))
}

/// `GET /v1/graph[?entity=ID&depth=1|2&limit=N]`.
pub(super) fn graph(ctx: &Arc<Context>, request: Request, principal: Principal, query: &str) {
    let (entity, depth, limit) = match graph_query(query) {
        Ok(q) => q,
        Err(message) => return invalid(request, &message),
    };
    read_json(ctx, request, principal, GRAPH_OPERATION, move |memory| {
        let g = memory.graph(entity.as_deref(), depth, limit)?;
        let nodes: Vec<Value> = g
            .nodes
            .iter()
            .map(|n| {
                json!({
                    "entity_id": n.entity_id,
                    "name": n.name,
                    "kind": n.kind,
                    "mentions": n.mentions,
                    "community": n.community,
                })
            })
            .collect();
        let edges: Vec<Value> = g
            .edges
            .iter()
            .map(|e| {
                json!({
                    "relation_id": e.relation_id,
                    "source": e.source,
                    "target": e.target,
                    "label": e.label,
                    "confidence": e.confidence,
                })
            })
            .collect();
        Ok(json!({"nodes": nodes, "edges": edges, "truncated": g.truncated}))
    });
}

/// `GET /v1/communities`: what `alayasiki://communities` answers, each
/// community with its members' entity ids.
pub(super) fn communities(ctx: &Arc<Context>, request: Request, principal: Principal) {
    read_json(ctx, request, principal, COMMUNITIES_OPERATION, |memory| {
        memory.communities_with_members()
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_parameters_are_checked_at_their_edges() {
        assert_eq!(entities_query("").unwrap(), (None, ENTITIES_DEFAULT_LIMIT));
        let max = format!("q=Acme+Corp&limit={ENTITIES_MAX_LIMIT}");
        assert_eq!(
            entities_query(&max).unwrap(),
            (Some("Acme Corp".into()), ENTITIES_MAX_LIMIT)
        );
        let longest = format!("q={}", "a".repeat(MAX_ENTITY_QUERY_BYTES));
        assert!(entities_query(&longest).is_ok());
        for bad in [
            format!("limit={}", ENTITIES_MAX_LIMIT + 1),
            "limit=0".into(),
            format!("{longest}a"),
            "query=x".into(),
        ] {
            assert!(entities_query(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn graph_parameters_are_checked_at_their_edges() {
        assert_eq!(graph_query("").unwrap(), (None, 1, GRAPH_DEFAULT_NODES));
        assert_eq!(
            graph_query("entity=").unwrap(),
            (None, 1, GRAPH_DEFAULT_NODES)
        );
        let max = format!("entity=ent_1&depth={GRAPH_MAX_DEPTH}&limit={GRAPH_MAX_NODES}");
        assert_eq!(
            graph_query(&max).unwrap(),
            (Some("ent_1".into()), GRAPH_MAX_DEPTH, GRAPH_MAX_NODES)
        );
        for bad in [
            format!("depth={}", GRAPH_MAX_DEPTH + 1),
            "depth=0".into(),
            format!("limit={}", GRAPH_MAX_NODES + 1),
            "centre=ent_1".into(),
        ] {
            assert!(graph_query(&bad).is_err(), "{bad}");
        }
    }
}
