//! An entity as JSON, the same over every transport: its card (name, kind,
//! mentions, aliases) and, for one entity, its relations with their
//! history (`valid_from`, `valid_to`, `superseded_by`: a single-valued fact
//! that changed keeps its old statement, marked) and evidence. The JSON
//! API's `GET /v1/entities/{id}` and the MCP resource
//! `alayasiki://entities/{id}` both answer with [`entity_json`].

use serde_json::{json, Value};

use crate::clock::rfc3339;
use crate::service::{EntityCard, EntityView};

/// An entity's card.
pub fn card_json(c: &EntityCard) -> Value {
    json!({
        "entity_id": c.entity_id,
        "name": c.name,
        "kind": c.kind,
        "mentions": c.mentions,
        "aliases": c.aliases,
    })
}

/// One entity with its relations, their history and evidence.
pub fn entity_json(e: &EntityView) -> Value {
    let relations: Vec<Value> = e
        .relations
        .iter()
        .map(|r| {
            let evidence: Vec<Value> = r
                .evidence
                .iter()
                .map(|ev| {
                    json!({
                        "document_id": ev.document_id,
                        "chunk_id": ev.chunk_id,
                        "byte_start": ev.byte_start,
                        "byte_end": ev.byte_end,
                        "quote": ev.quote,
                        "provenance": ev.provenance,
                        "supports": ev.supports,
                    })
                })
                .collect();
            json!({
                "relation_id": r.relation_id,
                "direction": if r.outgoing { "out" } else { "in" },
                "predicate": r.predicate,
                "other": {
                    "entity_id": r.other.entity_id,
                    "name": r.other.name,
                    "kind": r.other.kind,
                },
                "confidence": r.confidence,
                "support": r.support,
                "contradict": r.contradict,
                "valid_from": rfc3339(r.valid_from),
                "valid_to": r.valid_to.map(rfc3339),
                "superseded_by": r.superseded_by,
                "evidence": evidence,
                "evidence_truncated": r.evidence_truncated,
            })
        })
        .collect();
    let mut body = card_json(&e.card);
    body["first_seen"] = json!(rfc3339(e.first_seen));
    body["last_seen"] = json!(rfc3339(e.last_seen));
    body["community"] = match &e.community {
        Some(c) => json!({"level": c.level, "community": c.community, "title": c.title}),
        None => Value::Null,
    };
    body["relations"] = json!(relations);
    body["truncated"] = json!(e.truncated);
    body
}
