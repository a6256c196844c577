//! Builders for the tools' output schemas (`outputSchema`), and the parts
//! several tools return: evidence items, the budget report, lane errors.
//!
//! A tool's result is sent twice in a successful `tools/call`: as
//! `structuredContent` and, serialized, as the text block older clients
//! read. The output schema describes that one value, and clients that
//! speak 2025-06-18 or later validate `structuredContent` against it, so
//! the rules differ from the input schemas':
//! - objects are left open (no `additionalProperties: false`): a client
//!   holding a schema listed earlier must not refuse a result because the
//!   server has since learnt to say more; the maps whose keys are data
//!   (`metadata`, graph `properties`) say so with `additionalProperties:
//!   true`. The test suite still reads every declared object as closed,
//!   so a field added to a result without being described here fails it;
//! - `required` lists exactly the fields always present; a field the
//!   service leaves out when it has nothing to say is optional;
//! - a field that may be JSON `null` is an `anyOf` of its type and `null`;
//! - every property has a `description`.
//!
//! The keywords are the subset of JSON Schema 2020-12 the input schemas
//! use (checked by the tests below and by tests/tool_schemas.rs).

use serde_json::{json, Value};

/// An object schema: `properties` (a JSON object of schemas) and the
/// names among them that are always present.
pub fn record(description: &str, properties: Value, required: &[&str]) -> Value {
    let mut schema =
        json!({"type": "object", "description": description, "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// A JSON object whose keys are data (kept verbatim).
pub fn map(description: &str) -> Value {
    json!({"type": "object", "additionalProperties": true, "description": description})
}

pub fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A point in time as the server writes it (RFC 3339, UTC).
pub fn time(description: &str) -> Value {
    string(&format!("{description} (RFC 3339, UTC)."))
}

pub fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

pub fn number(description: &str) -> Value {
    json!({"type": "number", "description": description})
}

/// A whole number of at least `min`.
pub fn integer(description: &str, min: u64) -> Value {
    json!({"type": "integer", "minimum": min, "description": description})
}

/// A count: a whole number of at least 0.
pub fn count(description: &str) -> Value {
    integer(description, 0)
}

/// One of `choices`.
pub fn one_of(description: &str, choices: &[&str]) -> Value {
    json!({"type": "string", "enum": choices, "description": description})
}

/// An array of `items`.
pub fn list(description: &str, items: Value) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

/// `schema` or JSON `null`; the description moves to the property.
pub fn nullable(description: &str, mut schema: Value) -> Value {
    if let Some(o) = schema.as_object_mut() {
        o.remove("description");
    }
    json!({"description": description, "anyOf": [schema, {"type": "null"}]})
}

/// The states of a stored document, as ingest and promote report them.
pub const DOCUMENT_STATES: &[&str] = &["pending", "ready", "failed"];

/// A stored document's `state`.
pub fn document_state() -> Value {
    one_of(
        "pending: stored durably, not yet searchable (still indexing, or `wait` was false or \
         ran out); ready: searchable; failed: stored, but indexing failed (see `error`, and \
         alayasiki_status).",
        DOCUMENT_STATES,
    )
}

/// A byte span `{start, end}` of a document's (or note's) text.
pub fn span(description: &str) -> Value {
    record(
        description,
        json!({
            "start": count("Byte offset where the span starts."),
            "end": count("Byte offset just past the span's end.")
        }),
        &["start", "end"],
    )
}

/// Lanes that retrieve evidence.
const EVIDENCE_LANES: &[(&str, &str)] = &[
    ("keyword", "BM25 full-text search; the score is BM25 (higher is better)."),
    ("vector", "Embedding similarity; the score is the cosine."),
    ("graph", "The knowledge graph: chunks naming the question's entities, and evidence of their relations."),
    ("community", "Community summaries (global search)."),
    ("time", "Dated in a period the question names (from its metadata, else when it was stored); the score is its fused relevance among the wider pools ranked for such a question."),
    ("neighbour", "Lent by an item one or two places after or before it in reading order (same document, or same source); the rank is the best lender's in the fused list, the score the share lent (summed when lent to both by an item beside it and by one two away)."),
    ("label", "Filed under a name the question names: a short capitalised metadata value, or the speaker its text opens with (`Ann: ...`); the score is what that added (half the best item's fused score)."),
];

/// The evidence items of `alayasiki_query` and `alayasiki_memory_read`.
pub fn evidence(description: &str) -> Value {
    let lanes: serde_json::Map<String, Value> = EVIDENCE_LANES
        .iter()
        .map(|(name, what)| {
            let rank = record(
                &format!("Where the {name} lane ranked this item: {what}"),
                json!({
                    "rank": integer("1-based rank within the lane.", 1),
                    "score": number("The lane's own score (higher is better).")
                }),
                &["rank", "score"],
            );
            (name.to_string(), rank)
        })
        .collect();
    let relation = record(
        "A knowledge-graph relation whose evidence this item is.",
        json!({
            "subject": string("The relation's subject entity."),
            "predicate": string("The relation, e.g. `acquired`."),
            "object": string("The relation's object entity."),
            "confidence": json!({"type": "number", "minimum": 0, "maximum": 1, "description": "Confidence in the relation, decayed by the age of its evidence (0-1)."}),
            "provenance": one_of("The strongest provenance among the documents that support it.", &["external", "user", "agent"]),
            "extractor": one_of("What found the evidence shown: rules (the offline extractor), llm (the optional LLM, checked against the text) or declared (the document's own declared graph).", &["rules", "llm", "declared"]),
            "valid_to": time("When a newer fact superseded this one; absent while it is current")
        }),
        &[
            "subject",
            "predicate",
            "object",
            "confidence",
            "provenance",
            "extractor",
        ],
    );
    let successor = record(
        "The statement that superseded this one.",
        json!({
            "value": string("The value it states."),
            "document_id": string("Its document's id."),
            "chunk_id": string("Its chunk's id."),
            "stated_at": time("When its document says it was so")
        }),
        &["value", "document_id", "chunk_id", "stated_at"],
    );
    let fact = record(
        "A statement of a single-valued fact whose value changed (where someone lives, who leads a team, when a job runs, a version, a deadline ...).",
        json!({
            "holder": string("Who or what holds the fact."),
            "relation": string("The fact: place, employer, leader, owner, ceo, cto, time, role, deadline or version."),
            "predicate": string("The relation as the document put it, e.g. `lives in`."),
            "value": string("The value this item states."),
            "status": one_of("current: it holds (now, or at `as_of`); superseded: a later statement of another value replaced it; ended: a later statement denied it (\"no longer ...\").", &["current", "superseded", "ended"]),
            "stated_at": time("When this item's document says it was so (its observed date, else when it was stored)"),
            "valid_from": time("When the value was first stated"),
            "valid_to": time("When it stopped holding; absent while it holds"),
            "superseded_by": successor
        }),
        &["holder", "relation", "predicate", "value", "status", "stated_at", "valid_from"],
    );
    list(
        description,
        record(
            "One piece of evidence: a chunk of a stored document (or a working-memory note), or the part of it the budget left.",
            json!({
                "rank": integer("1-based position; the answer's [n] markers cite items by it.", 1),
                "document_id": string("The document's id; for a working-memory note, the note id `<session_id>/<seq>`."),
                "chunk_id": string("The chunk's id, `<document_id>:<ordinal>`."),
                "source": nullable("Where the content came from, as given at ingest; null if none.", string("")),
                "title": nullable("The document's title (a Markdown heading, a file's name, a PDF's title); null if none.", string("")),
                "metadata": nullable("The metadata stored with the document or note, verbatim (null only if the stored copy cannot be read).", map("")),
                "provenance": nullable("Who asserted it (external, user or agent), as given at ingest; null if not given.", string("")),
                "created_at": time("When the document was stored, or the note written"),
                "span": span("Byte span of `text` in the document's extracted text (or the note's text)."),
                "page": integer("The page `text` is on, for paginated documents (PDF); absent for others.", 1),
                "text": string("The evidence text: exactly the bytes of `span`."),
                "score": number("Fused relevance (higher is better; comparable within one response)."),
                "lanes": record(
                    "The lanes that found this item, with its rank and score in each.",
                    Value::Object(lanes),
                    &[],
                ),
                "relations": list("Knowledge-graph relations whose evidence this item is; absent if none.", relation),
                "truncated": boolean("Present (true) when the budget cut `text` short; `span` says where."),
                "origin": one_of("Where the item came from: memory (a stored document) or session (a working-memory note). Present when a working-memory session was searched.", &["memory", "session"]),
                "near_duplicates": list("Other documents whose matching text is this item's with small edits; they take no evidence slot of their own. Absent if none.", string("A document's id.")),
                "facts": list("Single-valued facts this item states whose value changed: the current statement ranks before the ones it superseded, which are marked. Absent if none.", fact)
            }),
            &[
                "rank",
                "document_id",
                "chunk_id",
                "source",
                "title",
                "metadata",
                "provenance",
                "created_at",
                "span",
                "text",
                "score",
                "lanes",
            ],
        ),
    )
}

/// How the character budget was spent.
pub fn budget(description: &str) -> Value {
    record(
        description,
        json!({
            "limit_chars": count("The budget: most characters of evidence text."),
            "used_chars": count("Characters of evidence text returned."),
            "omitted": count("Results that ranked but did not fit the budget.")
        }),
        &["limit_chars", "used_chars", "omitted"],
    )
}

/// Lanes that could not run, and why.
pub fn lane_errors(lanes: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = lanes
        .iter()
        .map(|lane| {
            (
                lane.to_string(),
                string(&format!("Why the {lane} lane could not run.")),
            )
        })
        .collect();
    record(
        "Lanes that could not run and why (e.g. the embedding server is down); the other lanes still answered. Absent when every lane ran.",
        Value::Object(properties),
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::super::TOOLS;
    use super::*;

    /// The keywords output schemas may use: the input schemas' subset,
    /// which tests/tool_schemas.rs validates by hand.
    const KEYWORDS: &[&str] = &[
        "type",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "minimum",
        "maximum",
        "items",
        "anyOf",
    ];

    fn walk(path: &str, schema: &Value, visit: &mut dyn FnMut(&str, &Value)) {
        visit(path, schema);
        if let Some(props) = schema["properties"].as_object() {
            for (name, p) in props {
                walk(&format!("{path}.{name}"), p, visit);
            }
        }
        if schema.get("items").is_some() {
            walk(&format!("{path}[]"), &schema["items"], visit);
        }
        for (i, b) in schema["anyOf"].as_array().into_iter().flatten().enumerate() {
            walk(&format!("{path}|{i}"), b, visit);
        }
    }

    #[test]
    fn every_output_schema_is_an_open_object_schema_in_the_subset() {
        for t in TOOLS {
            let schema = (t.output_schema)();
            assert_eq!(schema["type"], "object", "{}", t.name);
            walk(t.name, &schema, &mut |path, s| {
                let o = s.as_object().unwrap_or_else(|| panic!("{path}: {s}"));
                for k in o.keys() {
                    assert!(KEYWORDS.contains(&k.as_str()), "{path}: keyword {k}");
                }
                assert!(!s["type"].is_array(), "{path}: a type array");
                match s.get("additionalProperties") {
                    None => {}
                    Some(Value::Bool(true)) => {
                        assert!(
                            s.get("properties").is_none(),
                            "{path}: a map with properties"
                        )
                    }
                    Some(other) => panic!("{path}: additionalProperties {other}"),
                }
                // An anyOf branch of `required` alone names its parent's
                // properties.
                let branches = s["anyOf"].as_array().into_iter().flatten();
                for b in branches.filter(|b| b.get("properties").is_none()) {
                    for name in b["required"].as_array().into_iter().flatten() {
                        let name = name.as_str().unwrap();
                        assert!(s["properties"].get(name).is_some(), "{path}|: {name}");
                    }
                }
                if s.get("properties").is_some() {
                    for name in s["required"].as_array().into_iter().flatten() {
                        let name = name.as_str().unwrap();
                        assert!(s["properties"].get(name).is_some(), "{path}: {name}");
                    }
                }
                for (name, p) in s["properties"].as_object().into_iter().flatten() {
                    assert!(
                        p["description"].as_str().is_some_and(|d| !d.is_empty()),
                        "{path}.{name} lacks a description"
                    );
                }
            });
        }
    }
}
