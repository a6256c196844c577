//! The tools' input schemas, as `tools/list` sends them from the real
//! binary, against what the same binary accepts over its pipes: a client
//! that validates arguments by the schema must neither send what the server
//! refuses nor be stopped from sending what it accepts.
//!
//! The schemas are read by a small validator below (only the keywords the
//! server publishes, all of them the same in JSON Schema draft-07 and
//! 2020-12); a keyword it does not know fails the shape test, so a schema
//! cannot grow past what these tests check.
//!
//! The output schemas (MCP 2025-06-18 and later) against what the binary
//! returns: every tool is called with realistic arguments, and each
//! result's `structuredContent` must equal the JSON of its text block and
//! be valid by the tool's `outputSchema`, read by the same validator with
//! every declared object closed, so a result field the schema does not
//! describe fails as surely as a missing or mistyped one. When a Python
//! with `jsonschema` is at hand (the venv `scripts/test` creates, or
//! `ALAYASIKI_TEST_PYTHON`), its Draft 2020-12 validator must agree on
//! every result and on drifted copies of them.

mod common;

use alayasiki_mcp::limits::{
    MAX_BYTE_ARRAY_ITEMS, MAX_CONTENT_BYTES, MAX_FRAME_BYTES, MAX_WM_CONTENT_BYTES,
};
use common::{Server, TempDir};
use serde_json::{json, Map, Value};
use std::path::Path;

/// Property name no tool has, added wherever an object is closed.
const UNKNOWN: &str = "not_in_schema";

/// Keywords (and their value kinds) that mean the same in draft-07 and
/// draft 2020-12; the schemas use no other.
const KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "contentEncoding",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "anyOf",
];

const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "null",
];

/// The patterns the schemas publish, with what each means: the test's
/// validator implements them by hand (no regex engine here), so a new
/// pattern must be taught to it.
fn matches_pattern(pattern: &str, s: &str) -> bool {
    match pattern {
        "\\S" => s.chars().any(|c| !c.is_whitespace()),
        p if p.starts_with("^[A-Za-z0-9._:-]{1,") && p.ends_with("}$") => {
            let max: usize = p["^[A-Za-z0-9._:-]{1,".len()..p.len() - 2].parse().unwrap();
            (1..=max).contains(&s.chars().count())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
        }
        other => panic!("the test validator does not know the pattern {other:?}"),
    }
}

/// Validates `v` against `schema`; the error names the path.
fn validate(schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    check(schema, v, path, Objects::AsDeclared)
}

/// Validates a tool's result against its output schema, reading every
/// object schema that declares `properties` as closed (unless it says
/// `additionalProperties: true`): the published output schemas are open so
/// that clients tolerate a newer server, but a result with a field the
/// schema does not describe is drift, and fails here.
fn validate_output(schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    check(schema, v, path, Objects::Closed)
}

/// How [`check`] treats properties an object schema does not declare.
#[derive(Clone, Copy, PartialEq)]
enum Objects {
    /// As JSON Schema does: refused only under `additionalProperties: false`.
    AsDeclared,
    /// Refused wherever `properties` are declared, unless
    /// `additionalProperties: true`.
    Closed,
}

fn check(schema: &Value, v: &Value, path: &str, objects: Objects) -> Result<(), String> {
    let fail = |why: String| Err(format!("{path}: {why}"));
    if let Some(branches) = schema["anyOf"].as_array() {
        if !branches.iter().any(|b| check(b, v, path, objects).is_ok()) {
            return fail(format!("{v} matches no anyOf branch"));
        }
    }
    if let Some(t) = schema["type"].as_str() {
        let ok = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "number" => v.is_number(),
            "null" => v.is_null(),
            // JSON Schema: a number whose fractional part is zero.
            "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
            other => panic!("unknown type {other}"),
        };
        if !ok {
            return fail(format!("{v} is not of type {t}"));
        }
    }
    if let Some(choices) = schema["enum"].as_array() {
        if !choices.contains(v) {
            return fail(format!("{v} is not one of {choices:?}"));
        }
    }
    if let Some(n) = v.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|m| n < m) {
            return fail(format!("{n} is below the minimum"));
        }
        if schema["maximum"].as_f64().is_some_and(|m| n > m) {
            return fail(format!("{n} is above the maximum"));
        }
    }
    if let Some(s) = v.as_str() {
        let chars = s.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| chars < m) {
            return fail(format!("{chars} characters is below minLength"));
        }
        if schema["maxLength"].as_u64().is_some_and(|m| chars > m) {
            return fail(format!("{chars} characters is above maxLength"));
        }
        if let Some(p) = schema["pattern"].as_str() {
            if !matches_pattern(p, s) {
                return fail(format!("does not match {p:?}"));
            }
        }
    }
    if let Some(items) = v.as_array() {
        let n = items.len() as u64;
        if schema["minItems"].as_u64().is_some_and(|m| n < m) {
            return fail(format!("{n} items is below minItems"));
        }
        if schema["maxItems"].as_u64().is_some_and(|m| n > m) {
            return fail(format!("{n} items is above maxItems"));
        }
        if schema["uniqueItems"] == true {
            for (i, a) in items.iter().enumerate() {
                if items[..i].contains(a) {
                    return fail(format!("item {a} repeats"));
                }
            }
        }
        if schema.get("items").is_some() {
            for (i, item) in items.iter().enumerate() {
                check(&schema["items"], item, &format!("{path}[{i}]"), objects)?;
            }
        }
    }
    if let Some(o) = v.as_object() {
        let n = o.len() as u64;
        if schema["minProperties"].as_u64().is_some_and(|m| n < m) {
            return fail(format!("{n} properties is below minProperties"));
        }
        if schema["maxProperties"].as_u64().is_some_and(|m| n > m) {
            return fail(format!("{n} properties is above maxProperties"));
        }
        for name in schema["required"].as_array().into_iter().flatten() {
            if !o.contains_key(name.as_str().unwrap()) {
                return fail(format!("lacks required {name}"));
            }
        }
        let closed = match objects {
            Objects::AsDeclared => schema["additionalProperties"] == false,
            Objects::Closed => {
                schema["additionalProperties"] == false
                    || (schema.get("properties").is_some()
                        && schema["additionalProperties"] != true)
            }
        };
        for (k, item) in o {
            match schema["properties"].get(k) {
                Some(p) => check(p, item, &format!("{path}.{k}"), objects)?,
                None if closed => return fail(format!("unknown property {k}")),
                None => {}
            }
        }
    }
    Ok(())
}

/// The schemas the binary lists, by tool name, in listing order.
fn listed_schemas(server: &mut Server) -> Vec<(String, Value)> {
    let reply = server.request("tools/list", json!({}));
    reply["result"]["tools"]
        .as_array()
        .expect("tools/list result has tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["inputSchema"].clone(),
            )
        })
        .collect()
}

/// Calls `visit` on every subschema with its path.
fn walk(path: &str, schema: &Value, visit: &mut dyn FnMut(&str, &Value)) {
    visit(path, schema);
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            walk(&format!("{path}.{name}"), p, visit);
        }
    }
    if let Some(items) = schema.get("items") {
        walk(&format!("{path}[]"), items, visit);
    }
    for (i, b) in schema["anyOf"].as_array().into_iter().flatten().enumerate() {
        walk(&format!("{path}|{i}"), b, visit);
    }
}

/// What a valid call names as a stored document's id (`document_id` of an
/// update, an ingest's `supersedes`): the document the call before it
/// stored, bound by [`bind_stored`] when the call is sent.
const STORED: &str = "$stored";

/// `args` with every [`STORED`] replaced by `stored`.
fn bind_stored(args: &Value, stored: Option<&str>) -> Value {
    match args {
        Value::String(s) if s == STORED => {
            json!(stored.expect("a document was stored before the call naming it"))
        }
        Value::Array(items) => items.iter().map(|v| bind_stored(v, stored)).collect(),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), bind_stored(v, stored)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Calls that match the schemas, in an order that works on a fresh data
/// directory (forget removes what ingest stored; an update or a
/// superseding ingest names the document the call before stored; read and
/// promote find the session written before). Every tool has at least one.
fn valid_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("alayasiki_status", json!({})),
        (
            "alayasiki_ingest",
            json!({"content": "The lighthouse keeper logs the tide at dawn.", "source": "log.txt",
                   "media_type": "text/plain", "provenance": "user", "wait": true,
                   "metadata": {"tags": ["sea"]}, "expires_at": "2999-01-31"}),
        ),
        (
            "alayasiki_ingest",
            json!({"Text": {"content": "# Tides\n\nHigh tide at noon.", "media_type": "text/markdown",
                            "idempotency_key": "schema-text", "source": "tides.md",
                            "metadata": {"author": "k"}}}),
        ),
        (
            "alayasiki_ingest",
            json!({"File": {"filename": "a.md", "mime_type": "text/markdown",
                            "content": "IyBCdW95cwoKUmVkIGJ1b3lzIG1hcmsgcG9ydC4=",
                            "idempotency_key": "schema-file-b64", "source": "a.md",
                            "metadata": {"k": 1}}}),
        ),
        // Bytes as an array, written as floats: JSON Schema integers.
        (
            "alayasiki_ingest",
            json!({"File": {"filename": "b.txt", "content": [72.0, 105, 32, 116, 104, 101, 114, 101]}}),
        ),
        (
            "alayasiki_query",
            json!({"query": "When is high tide?", "search_mode": "local", "mode": "evidence",
                   "top_k": 5, "budget": 100, "lanes": ["keyword", "vector"]}),
        ),
        // 5.0 is an integer to JSON Schema, so it must be one to the server.
        ("alayasiki_query", json!({"query": "tide", "top_k": 5.0})),
        // New versions of what the call before stored ([`STORED`]).
        (
            "alayasiki_update",
            json!({"document_id": STORED, "content": "The keeper logs the tide at dusk.",
                   "media_type": "text/plain", "metadata": {"tags": ["sea"]}, "title": "Log",
                   "source": "log.txt", "wait": true, "idempotency_key": "schema-update"}),
        ),
        (
            "alayasiki_update",
            json!({"document_id": STORED,
                   "Text": {"content": "# Tides\n\nLow tide at six.", "media_type": "text/markdown"}}),
        ),
        (
            "alayasiki_update",
            json!({"document_id": STORED,
                   "File": {"filename": "c.txt", "mime_type": "text/plain", "content": [72, 105, 33]}}),
        ),
        (
            "alayasiki_ingest",
            json!({"content": "The keeper logs the tide at night.", "supersedes": [STORED]}),
        ),
        (
            "alayasiki_ingest",
            json!({"content": "The keeper logs every tide.", "source": "log.txt",
                   "replace_source": true}),
        ),
        (
            "alayasiki_share",
            json!({"document_ids": [STORED], "scope": "team-a"}),
        ),
        (
            "alayasiki_share",
            json!({"filter": {"source": "log.txt"}, "scope": "team-b"}),
        ),
        (
            "alayasiki_forget",
            json!({"idempotency_key": "schema-text"}),
        ),
        ("alayasiki_forget", json!({"source": "a.md"})),
        (
            "alayasiki_memory_write",
            json!({"session_id": "schema.s-1", "content": "Buoy 7 is red.", "media_type": "text/plain",
                   "metadata": {"seen": "today"}}),
        ),
        (
            "alayasiki_memory_write",
            json!({"session_id": "schema.s-1",
                   "Text": {"content": "{\"buoy\": 8}", "media_type": "application/json", "metadata": {}}}),
        ),
        (
            "alayasiki_memory_write",
            json!({"session_id": "schema.s-1",
                   "File": {"filename": "n.txt", "mime_type": "text/plain", "content": [111, 107],
                            "metadata": {"k": "v"}}}),
        ),
        (
            "alayasiki_memory_write",
            json!({"session_id": "schema.s-1",
                   "nodes": [{"id": "b7", "label": "Buoy 7", "kind": "buoy", "properties": {"colour": "red"}},
                             {"id": "port", "label": "Port"}],
                   "edges": [{"from": "b7", "to": "port", "relation": "marks", "properties": {}}]}),
        ),
        ("alayasiki_memory_read", json!({"session_id": "schema.s-1"})),
        (
            "alayasiki_memory_read",
            json!({"session_id": "schema.s-1", "query": "which buoy is red", "top_k": 3.0}),
        ),
        (
            "alayasiki_memory_promote",
            json!({"session_id": "schema.s-1", "wait": true}),
        ),
        (
            "alayasiki_memory_delete",
            json!({"session_id": "schema.s-1"}),
        ),
    ]
}

/// `args` with [`UNKNOWN`] added at every closed object the schema
/// describes along the way, one variant per position (with its path).
fn with_unknown_property(schema: &Value, args: &Value, path: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(o) = args.as_object() {
        if schema["additionalProperties"] == false {
            let mut extended = o.clone();
            extended.insert(UNKNOWN.into(), json!(1));
            out.push((path.to_string(), Value::Object(extended)));
        }
        for (k, v) in o {
            let Some(p) = schema["properties"].get(k) else {
                continue;
            };
            for (at, inner) in with_unknown_property(p, v, &format!("{path}.{k}")) {
                let mut copy = o.clone();
                copy.insert(k.clone(), inner);
                out.push((at, Value::Object(copy)));
            }
        }
    }
    if let (Some(items), Some(first)) =
        (schema.get("items"), args.as_array().and_then(|a| a.first()))
    {
        for (at, inner) in with_unknown_property(items, first, &format!("{path}[0]")) {
            let mut copy = args.as_array().unwrap().clone();
            copy[0] = inner;
            out.push((at, Value::Array(copy)));
        }
    }
    out
}

/// A value just outside each bound a top-level property's schema states,
/// with the bound's name.
fn past_each_bound(p: &Value) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if let Some(max) = p["maximum"].as_u64() {
        out.push(("maximum", json!(max + 1)));
    }
    if let Some(min) = p["minimum"].as_u64() {
        if min > 0 {
            out.push(("minimum", json!(min - 1)));
        }
    }
    if let Some(max) = p["maxLength"].as_u64() {
        out.push(("maxLength", json!("a".repeat(max as usize + 1))));
    }
    if p["minLength"].as_u64() == Some(1) {
        out.push(("minLength", json!("")));
    }
    if p["pattern"].is_string() {
        out.push(("pattern", json!("   ")));
    }
    if p["enum"].is_array() {
        out.push(("enum", json!("not-a-choice")));
    }
    if p["type"] == "integer" {
        out.push(("type", json!(2.5)));
    }
    if let Some(max) = p["maxItems"].as_u64() {
        let item = p["items"]["enum"][0].clone();
        out.push(("maxItems", Value::Array(vec![item; max as usize + 1])));
    }
    if p["minItems"].as_u64() == Some(1) {
        out.push(("minItems", json!([])));
    }
    out
}

fn first_valid_call(name: &str) -> Map<String, Value> {
    valid_calls()
        .into_iter()
        .find(|(tool, _)| *tool == name)
        .and_then(|(_, args)| args.as_object().cloned())
        .unwrap_or_else(|| panic!("{name} has no valid call in valid_calls()"))
}

/// The refusal text of a call that must fail as `invalid_input` or
/// `limit_exceeded`.
fn refused(server: &mut Server, tool: &str, args: &Value) -> String {
    let (is_error, value) = server.call(tool, args.clone());
    assert!(is_error, "{tool} accepted {args}: {value}");
    let text = value.as_str().unwrap_or_default().to_string();
    assert!(
        text.starts_with("invalid_input: ") || text.starts_with("limit_exceeded: "),
        "{tool}: refusal of {args} is not a clear input error: {text}"
    );
    text
}

#[test]
fn listed_schemas_close_every_object_and_give_every_value_one_type() {
    let dir = TempDir::new("schema-closed");
    let mut server = Server::ready(dir.path());
    for (tool, schema) in listed_schemas(&mut server) {
        walk(&tool, &schema, &mut |path, s| {
            assert!(
                !s["type"].is_array(),
                "{path}: `type` is an array ({}); use anyOf of single types",
                s["type"]
            );
            if s["type"] == "object" {
                let closed = s["additionalProperties"] == false;
                let free_form = s["additionalProperties"] == true && s.get("properties").is_none();
                assert!(
                    closed || free_form,
                    "{path}: an object schema without additionalProperties: false: {s}"
                );
            }
        });
    }
    server.close();
}

/// Asserts that a (sub)schema keeps to the shared subset: known keywords,
/// each with a value of its kind, consistent bounds, `required` names that
/// are properties, `enum` values of the schema's type.
fn assert_shape(path: &str, s: &Value) {
    let o = s
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not a schema object: {s}"));
    for (k, v) in o {
        assert!(
            KEYWORDS.contains(&k.as_str()),
            "{path}: keyword {k} is outside the shared subset"
        );
        let count = |v: &Value| v.as_u64().is_some();
        let ok = match k.as_str() {
            "type" => v.as_str().is_some_and(|t| TYPES.contains(&t)),
            "description" | "pattern" | "contentEncoding" => v.is_string(),
            "properties" => v
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_object)),
            "additionalProperties" | "uniqueItems" => v.is_boolean(),
            "items" => v.is_object(),
            "minimum" | "maximum" => v.is_number(),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" => count(v),
            "required" | "enum" => v.as_array().is_some_and(|a| {
                !a.is_empty() && a.iter().enumerate().all(|(i, x)| !a[..i].contains(x))
            }),
            "anyOf" => v
                .as_array()
                .is_some_and(|a| a.len() >= 2 && a.iter().all(Value::is_object)),
            _ => unreachable!(),
        };
        assert!(ok, "{path}.{k}: {v} is not a valid value of {k}");
    }
    for (lo, hi) in [
        ("minimum", "maximum"),
        ("minLength", "maxLength"),
        ("minItems", "maxItems"),
        ("minProperties", "maxProperties"),
    ] {
        if let (Some(a), Some(b)) = (s[lo].as_f64(), s[hi].as_f64()) {
            assert!(a <= b, "{path}: {lo} {a} > {hi} {b}");
        }
    }
    // `required` names properties: its own, or, in an anyOf branch that
    // states only which are required, its parent's.
    let branches = s["anyOf"].as_array().into_iter().flatten();
    for b in branches.filter(|b| b.get("properties").is_none() && b.get("type").is_none()) {
        for name in b["required"].as_array().into_iter().flatten() {
            assert!(
                s["properties"].get(name.as_str().unwrap()).is_some(),
                "{path}|: required {name} is not a property"
            );
        }
    }
    if s.get("properties").is_some() || s.get("type").is_some() {
        for name in s["required"].as_array().into_iter().flatten() {
            assert!(
                s["properties"].get(name.as_str().unwrap()).is_some(),
                "{path}: required {name} is not a property"
            );
        }
    }
    if let Some(choices) = s["enum"].as_array() {
        for c in choices {
            assert!(
                validate(&json!({"type": s["type"]}), c, path).is_ok(),
                "{path}: enum value {c} is not of its type"
            );
        }
    }
}

#[test]
fn listed_schemas_have_the_shape_of_draft_07_and_2020_12_schemas() {
    let dir = TempDir::new("schema-shape");
    let mut server = Server::ready(dir.path());
    for (tool, schema) in listed_schemas(&mut server) {
        assert_eq!(
            schema["type"], "object",
            "{tool}: inputSchema is not an object schema"
        );
        walk(&tool, &schema, &mut assert_shape);
    }
    server.close();
}

#[test]
fn calls_that_match_the_schema_are_accepted() {
    let dir = TempDir::new("schema-valid");
    let mut server = Server::ready(dir.path());
    let schemas: Map<String, Value> = listed_schemas(&mut server).into_iter().collect();
    for (tool, _) in &schemas {
        first_valid_call(tool);
    }
    let mut stored: Option<String> = None;
    for (tool, args) in valid_calls() {
        let schema = &schemas[tool];
        validate(schema, &args, tool).unwrap_or_else(|e| panic!("example does not match: {e}"));
        let args = bind_stored(&args, stored.as_deref());
        let (is_error, value) = server.call(tool, args.clone());
        if let Some(id) = value["document_id"].as_str() {
            stored = Some(id.to_string());
        }
        assert!(
            !is_error,
            "{tool} refused a call its schema allows: {args}: {value}"
        );
    }
    server.close();
}

#[test]
fn an_unknown_property_anywhere_is_refused_by_schema_and_server_alike() {
    let dir = TempDir::new("schema-unknown");
    let mut server = Server::ready(dir.path());
    let mut positions = 0;
    for (tool, schema) in listed_schemas(&mut server) {
        for (_, args) in valid_calls().into_iter().filter(|(t, _)| *t == tool) {
            for (at, bad) in with_unknown_property(&schema, &args, &tool) {
                assert!(
                    validate(&schema, &bad, &tool).is_err(),
                    "{at}: the schema allows {bad}"
                );
                let text = refused(&mut server, &tool, &bad);
                assert!(
                    text.starts_with("invalid_input: ") && text.contains(UNKNOWN),
                    "{at}: the refusal does not name the unknown property: {text}"
                );
                positions += 1;
            }
        }
    }
    // Top level of every tool, Text, File, and a node and an edge.
    assert!(
        positions >= 20,
        "only {positions} closed objects were tried"
    );
    server.close();
}

#[test]
fn a_value_past_any_stated_bound_is_refused_by_schema_and_server_alike() {
    let dir = TempDir::new("schema-bounds");
    let mut server = Server::ready(dir.path());
    let mut tried = 0;
    for (tool, schema) in listed_schemas(&mut server) {
        let valid = first_valid_call(&tool);
        for (name, p) in schema["properties"].as_object().unwrap() {
            for (bound, value) in past_each_bound(p) {
                let mut args = valid.clone();
                // Exactly one selector: forget's other selectors make way.
                if tool == "alayasiki_forget" {
                    args.clear();
                }
                args.insert(name.clone(), value);
                let args = Value::Object(args);
                assert!(
                    validate(&schema, &args, &tool).is_err(),
                    "{tool}.{name}: the schema allows a value past its {bound}"
                );
                refused(&mut server, &tool, &args);
                tried += 1;
            }
        }
    }
    assert!(tried >= 25, "only {tried} bounds were tried");
    server.close();
}

#[test]
fn file_content_past_its_decoded_limit_is_refused_in_either_form() {
    let dir = TempDir::new("schema-file");
    let mut server = Server::ready(dir.path());
    let schemas: Map<String, Value> = listed_schemas(&mut server).into_iter().collect();
    for (tool, base, decoded_limit) in [
        ("alayasiki_ingest", json!({}), MAX_CONTENT_BYTES),
        (
            "alayasiki_memory_write",
            json!({"session_id": "files"}),
            MAX_WM_CONTENT_BYTES,
        ),
    ] {
        let content = &schemas[tool]["properties"]["File"]["properties"]["content"];
        let b64 = &content["anyOf"][0];
        let bytes = &content["anyOf"][1];
        assert_eq!(b64["type"], "string", "{tool}");
        assert_eq!(bytes["type"], "array", "{tool}");
        let max_chars = b64["maxLength"].as_u64().unwrap() as usize;
        let max_items = bytes["maxItems"].as_u64().unwrap() as usize;
        // Base64 of exactly the byte limit is the longest text allowed; as
        // an array of numbers, at most MAX_BYTE_ARRAY_ITEMS of it.
        assert_eq!(max_chars, decoded_limit.div_ceil(3) * 4, "{tool}");
        assert_eq!(max_items, decoded_limit.min(MAX_BYTE_ARRAY_ITEMS), "{tool}");
        let mut too_long = vec![
            json!("A".repeat(max_chars + 4)),
            json!("A".repeat(max_chars + 1)),
        ];
        // One byte too many as an array, where that still fits one stdio
        // frame (ingest's limit as an array is beyond MAX_FRAME_BYTES).
        if (max_items + 1) * "65,".len() < MAX_FRAME_BYTES {
            too_long.push(Value::Array(vec![json!(65); max_items + 1]));
        }
        for too_long in too_long {
            let mut args = base.clone();
            args["File"] = json!({"mime_type": "text/plain", "content": too_long});
            assert!(validate(&schemas[tool], &args, tool).is_err(), "{tool}");
            refused(&mut server, tool, &args);
        }
    }
    server.close();
}

// Structured output: every tool's `outputSchema` against what the binary
// returns as `structuredContent`.

/// The first revision with `outputSchema` and `structuredContent`.
const STRUCTURED_REVISION: &str = "2025-06-18";

/// A server whose session speaks [`STRUCTURED_REVISION`].
fn structured_server(dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut server = Server::start_with(dir, env);
    let reply = server.request(
        "initialize",
        json!({"protocolVersion": STRUCTURED_REVISION, "capabilities": {},
               "clientInfo": {"name": "tests", "version": "1"}}),
    );
    assert_eq!(
        reply["result"]["protocolVersion"], STRUCTURED_REVISION,
        "{reply}"
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server
}

/// The output schemas the binary lists, by tool name.
fn output_schemas(server: &mut Server) -> Map<String, Value> {
    let reply = server.request("tools/list", json!({}));
    reply["result"]["tools"]
        .as_array()
        .expect("tools/list result has tools")
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_string();
            let schema = t
                .get("outputSchema")
                .unwrap_or_else(|| panic!("{name} lists no outputSchema"))
                .clone();
            (name, schema)
        })
        .collect()
}

/// Keywords the output schemas may use: a part of [`KEYWORDS`], all of
/// which [`check`] implements.
const OUTPUT_KEYWORDS: &[&str] = &[
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

/// Successful results of a run of calls, each checked as it arrives.
struct Results {
    schemas: Map<String, Value>,
    /// (tool, arguments, structuredContent), in call order.
    seen: Vec<(String, Value, Value)>,
}

impl Results {
    fn new(server: &mut Server) -> Results {
        Results {
            schemas: output_schemas(server),
            seen: Vec::new(),
        }
    }

    /// Calls `tool`, which must succeed with `structuredContent` equal to
    /// the JSON of its text block and valid by its output schema (objects
    /// read as closed); returns the structured content.
    fn ok(&mut self, server: &mut Server, tool: &str, args: Value) -> Value {
        let reply = server.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &reply["result"];
        assert_eq!(result["isError"], false, "{tool} failed: {args}: {reply}");
        let structured = result
            .get("structuredContent")
            .unwrap_or_else(|| panic!("{tool}: no structuredContent: {reply}"))
            .clone();
        assert!(
            structured.is_object(),
            "{tool}: structuredContent is not an object"
        );
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: no text block: {reply}"));
        let parsed: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{tool}: the text block is not JSON ({e}): {text}"));
        assert_eq!(
            parsed, structured,
            "{tool}: the text block and structuredContent differ"
        );
        validate_output(&self.schemas[tool], &structured, tool).unwrap_or_else(|e| {
            panic!("{tool} returned what its outputSchema does not describe: {e}\n  arguments: {args}\n  result: {structured}")
        });
        self.seen.push((tool.to_string(), args, structured.clone()));
        structured
    }
}

/// Every property path an output schema declares (`tool.a[].b`),
/// following `properties`, `items` and typed `anyOf` branches.
fn declared_paths(path: &str, schema: &Value, out: &mut Vec<String>) {
    for (name, p) in schema["properties"].as_object().into_iter().flatten() {
        let at = format!("{path}.{name}");
        out.push(at.clone());
        declared_paths(&at, p, out);
    }
    if let Some(items) = schema.get("items") {
        declared_paths(&format!("{path}[]"), items, out);
    }
    for b in schema["anyOf"].as_array().into_iter().flatten() {
        declared_paths(path, b, out);
    }
}

/// Every path a value has, in the same notation.
fn value_paths(path: &str, v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let at = format!("{path}.{k}");
                out.insert(at.clone());
                value_paths(&at, x, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                value_paths(&format!("{path}[]"), x, out);
            }
        }
        _ => {}
    }
}

/// Declared fields (with everything inside them) the calls below cannot
/// make the server return, with why. Any other declared field must be
/// returned at least once, so the schema of every field is checked against
/// a real value.
const NOT_PRODUCED: &[(&str, &str)] = &[
    (
        "alayasiki_ingest.upload_url",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_ingest.method",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_ingest.expires_at",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_ingest.max_bytes",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_ingest.size",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_ingest.sha256",
        "an upload declaration's answer: these runs are on stdio, which gives no upload URL (tests/http_uploads.rs declares over HTTP)",
    ),
    (
        "alayasiki_memory_read.evidence[].near_duplicates",
        "needs two notes of one session that are near-duplicates (the query's are produced)",
    ),
    (
        "alayasiki_ingest.error",
        "needs a failed or deferred index job",
    ),
    (
        "alayasiki_update.error",
        "needs a failed or deferred index job",
    ),
    (
        "alayasiki_update.near_duplicates",
        "needs a version repeating another current document (the ingest's are produced)",
    ),
    (
        "alayasiki_memory_promote.documents[].error",
        "needs a failed index job",
    ),
    (
        "alayasiki_query.ignored_terms",
        "needs a term in more than 1,000 chunks",
    ),
    ("alayasiki_query.answer.fallback", "needs a configured LLM"),
    (
        "alayasiki_query.communities[].llm_summary",
        "needs a configured LLM",
    ),
    (
        "alayasiki_query.evidence[].relations[].valid_to",
        "needs a superseded fact",
    ),
    (
        "alayasiki_query.lane_errors.session.vector",
        "needs an embedder that fails between a write and a query",
    ),
    (
        "alayasiki_memory_read.lane_errors",
        "needs an embedder that fails between a write and a read",
    ),
    (
        "alayasiki_memory_read.evidence[].page",
        "notes have no pages",
    ),
    (
        "alayasiki_memory_read.evidence[].relations",
        "notes carry no graph facts",
    ),
    (
        "alayasiki_memory_read.evidence[].facts",
        "notes carry no graph facts",
    ),
    (
        "alayasiki_memory_read.evidence[].lanes.graph",
        "the session search has no graph lane",
    ),
    (
        "alayasiki_memory_read.evidence[].lanes.community",
        "the session search has no community lane",
    ),
    (
        "alayasiki_memory_read.evidence[].lanes.time",
        "the session search has no time lane",
    ),
    (
        "alayasiki_memory_read.evidence[].lanes.neighbour",
        "the session search lends no scores to neighbours",
    ),
    (
        "alayasiki_memory_read.evidence[].lanes.label",
        "the session search has no labels stage",
    ),
    (
        "alayasiki_memory_read.evidence[].truncated",
        "the session search's budget is larger than any passage",
    ),
    (
        "alayasiki_status.jobs.failed_by_reason",
        "needs a failed index job",
    ),
    (
        "alayasiki_status.jobs.recent_failures",
        "needs a failed index job",
    ),
    (
        "alayasiki_status.jobs.llm_pending",
        "needs a configured LLM",
    ),
    (
        "alayasiki_status.usage.by_operation[]",
        "stdio calls are not charged",
    ),
];

/// Realistic calls of every tool on two servers (the built-in embedder,
/// and an embedding server that is down), every result checked by
/// [`Results::ok`].
fn run_every_tool() -> Vec<(String, Value, Value)> {
    let mut seen = Vec::new();
    let dir = TempDir::new("output-a");
    // With the memory browser on, so that the status names it.
    let mut s = structured_server(dir.path(), &[("ALAYASIKI_UI", "1")]);
    let mut r = Results::new(&mut s);
    r.ok(&mut s, "alayasiki_status", json!({}));
    // Through a memory owner, so that the status names it.
    {
        let owned = TempDir::new("output-owner");
        let shared = [
            ("ALAYASIKI_IN_PROCESS", ""),
            ("ALAYASIKI_OWNER_IDLE_SECS", "1"),
        ];
        let mut o = structured_server(owned.path(), &shared);
        r.ok(&mut o, "alayasiki_status", json!({}));
        o.close();
    }
    // A small graph corpus: relations, communities, a global search.
    for (text, provenance) in [
        ("Acme Corp. acquired Widgets Inc. in 2023.", "external"),
        ("Dana Scully works at Acme Corp. as chief engineer.", "user"),
        ("Widgets Inc. makes gears for bicycles.", "user"),
        (
            "Acme Corp. acquired Widgets Inc. after a long negotiation.",
            "agent",
        ),
        ("Lisbon is the capital of Portugal.", "external"),
        ("Porto is a city in Portugal famous for wine.", "external"),
        ("The Lisbon tram climbs steep hills.", "user"),
    ] {
        let receipt = r.ok(
            &mut s,
            "alayasiki_ingest",
            json!({"content": text, "provenance": provenance, "source": "graph-corpus"}),
        );
        assert_eq!(receipt["state"], "ready", "{receipt}");
    }
    // The input schema's examples: every argument form of every tool.
    let mut stored: Option<String> = None;
    for (tool, args) in valid_calls() {
        let result = r.ok(&mut s, tool, bind_stored(&args, stored.as_deref()));
        if let Some(id) = result["document_id"].as_str() {
            stored = Some(id.to_string());
        }
    }
    let pdf = common::fixture_bytes("pdf/libreoffice-report.pdf");
    let pdf_receipt = r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"File": {"filename": "report.pdf", "mime_type": "application/pdf",
                        "content": common::b64(&pdf), "source": "report.pdf"}}),
    );
    let replayed =
        json!({"Text": {"content": "Buoy 9 is green.", "idempotency_key": "out-replay"}});
    r.ok(&mut s, "alayasiki_ingest", replayed.clone());
    let again = r.ok(&mut s, "alayasiki_ingest", replayed);
    assert_eq!(again["idempotent_replay"], true, "{again}");
    let copy = r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "Buoy 9 is  green.\n"}),
    );
    assert!(copy["duplicate_of"].is_string(), "{copy}");
    let passage = "The harbour dredger works the north channel every second Tuesday, \
                   starting at the tide table's low water and finishing before the ferries \
                   of the evening run leave the quay, weather and the pilot's leave allowing.";
    r.ok(&mut s, "alayasiki_ingest", json!({"content": passage}));
    r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"content": passage.replace("every second Tuesday", "every other Tuesday")}),
    );
    let near = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "When does the harbour dredger work the north channel?", "mode": "evidence"}),
    );
    assert!(near["evidence"][0]["near_duplicates"].is_array(), "{near}");
    // A fact that changed: the current statement and the superseded one,
    // both marked.
    for (text, date) in [
        ("The tide gauge is located in Dover.", "2023-01-01"),
        ("The tide gauge was moved to Calais.", "2024-01-01"),
    ] {
        r.ok(
            &mut s,
            "alayasiki_ingest",
            json!({"content": text, "metadata": {"date": date}}),
        );
    }
    let facts = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "Where is the tide gauge located?", "mode": "evidence", "as_of": "2025-01-01"}),
    );
    assert_eq!(
        facts["evidence"][1]["facts"][0]["status"], "superseded",
        "{facts}"
    );
    r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "The harbour master rings the bell at noon.", "wait": false}),
    );
    // Builds the community summaries a global search reads.
    let communities = s.request("resources/read", json!({"uri": "alayasiki://communities"}));
    assert!(communities["result"].is_object(), "{communities}");
    let local = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "What did Acme Corp. acquire?", "search_mode": "local"}),
    );
    assert!(local["answer"]["citations"][0].is_object(), "{local}");
    let global = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "What are the main themes overall?"}),
    );
    assert_eq!(global["search_mode"]["ran"], "global", "{global}");
    r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "xylophone", "search_mode": "drift", "mode": "evidence"}),
    );
    let cut = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "alpine garden soil water", "budget": 100, "mode": "evidence"}),
    );
    assert_eq!(cut["evidence"][0]["truncated"], true, "{cut}");
    // A question naming a period: the time lane.
    r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "The lighthouse lamp was replaced.", "metadata": {"date": "3 March 2021"}}),
    );
    let dated = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "What was replaced in March 2021?", "mode": "evidence"}),
    );
    assert!(dated["evidence"][0]["lanes"]["time"].is_object(), "{dated}");
    // A question naming a speaker: the labels stage.
    for line in [
        "Ann: the ferry leaves at dawn",
        "Bo: Ann, is the ferry late?",
    ] {
        r.ok(
            &mut s,
            "alayasiki_ingest",
            json!({"content": line, "source": "ferry-chat"}),
        );
    }
    let named = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "What did Ann say about the ferry?", "mode": "evidence"}),
    );
    assert!(
        named["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["lanes"]["label"].is_object()),
        "{named}"
    );
    // Working memory: every kind of note, a graph, both reads, a merged
    // query, two promotions.
    let session = "out.s-2";
    for args in [
        json!({"session_id": session, "content": "{\"buoy\": 8, \"colour\": \"red\"}",
               "media_type": "application/json", "metadata": {"seen": "dawn"}}),
        json!({"session_id": session, "File": {"filename": "notes.md", "mime_type": "text/markdown",
               "content": common::b64(b"# Buoys\n\nBuoy 8 marks the reef.")}}),
        json!({"session_id": session, "nodes": [{"id": "b8", "label": "Buoy 8", "kind": "buoy",
               "properties": {"colour": "red"}}, {"id": "reef", "label": "Reef"}],
               "edges": [{"from": "b8", "to": "reef", "relation": "marks", "properties": {"since": 1999}}]}),
    ] {
        r.ok(&mut s, "alayasiki_memory_write", args);
    }
    r.ok(
        &mut s,
        "alayasiki_memory_read",
        json!({"session_id": session}),
    );
    r.ok(
        &mut s,
        "alayasiki_memory_read",
        json!({"session_id": session, "query": "which buoy marks the reef", "top_k": 2}),
    );
    let merged = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "buoy reef", "session_id": session}),
    );
    assert!(merged["evidence"][0]["origin"].is_string(), "{merged}");
    r.ok(
        &mut s,
        "alayasiki_memory_promote",
        json!({"session_id": session}),
    );
    let second = r.ok(
        &mut s,
        "alayasiki_memory_promote",
        json!({"session_id": session, "wait": false}),
    );
    assert_eq!(second["stored"], 0, "{second}");
    let deleted = r.ok(
        &mut s,
        "alayasiki_memory_delete",
        json!({"session_id": session}),
    );
    assert!(deleted["bytes_released"].as_u64() > Some(0), "{deleted}");
    r.ok(&mut s, "alayasiki_status", json!({}));
    r.ok(
        &mut s,
        "alayasiki_forget",
        json!({"document_id": pdf_receipt["document_id"]}),
    );
    r.ok(
        &mut s,
        "alayasiki_forget",
        json!({"idempotency_key": "out-replay"}),
    );
    r.ok(
        &mut s,
        "alayasiki_forget",
        json!({"source": "graph-corpus"}),
    );
    seen.append(&mut r.seen);
    s.close();

    // An embedding server that is down: lane errors, keyword-only notes,
    // a pending embed job.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1/embeddings",
        listener.local_addr().unwrap().port()
    );
    drop(listener);
    let dir = TempDir::new("output-b");
    let mut s = structured_server(
        dir.path(),
        &[
            ("ALAYASIKI_EMBED_URL", &url),
            ("ALAYASIKI_EMBED_MODEL", "toy-model"),
            ("ALAYASIKI_EMBED_DIM", "8"),
            ("ALAYASIKI_EMBED_TIMEOUT_MS", "2000"),
        ],
    );
    let mut r = Results::new(&mut s);
    r.ok(
        &mut s,
        "alayasiki_ingest",
        json!({"content": "The lighthouse keeper logs the tide."}),
    );
    let q = r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "lighthouse keeper", "mode": "evidence"}),
    );
    assert!(q["lane_errors"]["vector"].is_string(), "{q}");
    let w = r.ok(
        &mut s,
        "alayasiki_memory_write",
        json!({"session_id": "down", "content": "The keeper's lamp is out."}),
    );
    assert_eq!(w["search_lanes"], json!(["keyword"]), "{w}");
    r.ok(
        &mut s,
        "alayasiki_query",
        json!({"query": "keeper lamp", "session_id": "down"}),
    );
    r.ok(
        &mut s,
        "alayasiki_memory_read",
        json!({"session_id": "down", "query": "lamp"}),
    );
    r.ok(
        &mut s,
        "alayasiki_memory_promote",
        json!({"session_id": "down"}),
    );
    let status = r.ok(&mut s, "alayasiki_status", json!({}));
    assert!(status["jobs"]["pending"].as_u64() > Some(0), "{status}");
    seen.append(&mut r.seen);
    s.close();
    seen
}

/// A value of no type `schema` allows.
fn wrong_type_for(schema: &Value) -> Value {
    [
        json!({"x": 1}),
        json!([1.5]),
        json!("s"),
        json!(1.5),
        json!(true),
    ]
    .into_iter()
    .find(|v| validate(schema, v, "").is_err())
    .expect("some value is of another type")
}

/// Results that drifted from the schema, one change each: a required field
/// gone, a field of another type, a field the schema does not describe.
/// Each must be refused.
fn drifted(schema: &Value, result: &Value) -> Vec<(String, Value)> {
    let o = result.as_object().unwrap();
    let mut out = Vec::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        let mut v = o.clone();
        v.remove(name);
        out.push((format!("without {name}"), Value::Object(v)));
    }
    for (name, field) in schema["properties"].as_object().unwrap() {
        if o.contains_key(name) {
            let mut v = o.clone();
            v.insert(name.clone(), wrong_type_for(field));
            out.push((format!("{name} of another type"), Value::Object(v)));
        }
    }
    let mut v = o.clone();
    v.insert(UNKNOWN.into(), json!(1));
    out.push((format!("with {UNKNOWN}"), Value::Object(v)));
    out
}

/// The same cases through the `jsonschema` package's Draft 2020-12
/// validator: each schema checked against the 2020-12 meta-schema, each
/// value valid or not as expected, read as the schema says and (for
/// `closed` cases) with every object that declares properties closed.
const PYTHON_CHECK: &str = r#"
import json, sys
from jsonschema import Draft202012Validator

def closed(s):
    if isinstance(s, dict):
        s = {k: closed(v) for k, v in s.items()}
        if "properties" in s and "additionalProperties" not in s:
            s["additionalProperties"] = False
    elif isinstance(s, list):
        s = [closed(v) for v in s]
    return s

cases = json.load(open(sys.argv[1]))
checked, wrong = set(), []
for c in cases:
    schema = c["schema"]
    key = json.dumps(schema, sort_keys=True)
    if key not in checked:
        Draft202012Validator.check_schema(schema)
        checked.add(key)
    if c["closed"]:
        schema = closed(schema)
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(c["value"])]
    if (not errors) != c["valid"]:
        wrong.append((c["what"], c["valid"], errors[:3]))
for w in wrong:
    print("jsonschema disagrees: %s (expected valid=%s): %s" % w)
print("%d cases, %d schemas" % (len(cases), len(checked)))
sys.exit(1 if wrong else 0)
"#;

#[test]
fn output_schemas_are_open_object_schemas_in_the_shared_subset() {
    let dir = TempDir::new("output-shape");
    let mut server = structured_server(dir.path(), &[]);
    let schemas = output_schemas(&mut server);
    assert_eq!(schemas.len(), 10, "every tool lists an outputSchema");
    for (tool, schema) in &schemas {
        assert_eq!(
            schema["type"], "object",
            "{tool}: outputSchema is not an object schema"
        );
        walk(tool, schema, &mut |path, s| {
            assert_shape(path, s);
            for k in s.as_object().unwrap().keys() {
                assert!(
                    OUTPUT_KEYWORDS.contains(&k.as_str()),
                    "{path}: keyword {k} is outside what output schemas use"
                );
            }
            assert!(
                !s["type"].is_array(),
                "{path}: `type` is an array; use anyOf"
            );
            // Open, so that a client tolerates a newer server's extra
            // fields; maps of data say so.
            match s.get("additionalProperties") {
                None => {}
                Some(Value::Bool(true)) => assert!(
                    s.get("properties").is_none(),
                    "{path}: a map of data that declares properties"
                ),
                Some(other) => panic!("{path}: additionalProperties is {other}"),
            }
            for (name, p) in s["properties"].as_object().into_iter().flatten() {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{path}.{name} has no description"
                );
            }
        });
    }
    server.close();
}

#[test]
fn every_result_is_structured_content_that_its_output_schema_describes() {
    let seen = run_every_tool();
    let dir = TempDir::new("output-schemas");
    let mut server = structured_server(dir.path(), &[]);
    let schemas = output_schemas(&mut server);
    server.close();

    // Every tool ran, and every field its schema declares was returned
    // (bar those no call here can produce).
    let mut returned = std::collections::BTreeSet::new();
    for (tool, _, value) in &seen {
        value_paths(tool, value, &mut returned);
    }
    let mut missing = Vec::new();
    for (tool, schema) in &schemas {
        assert!(seen.iter().any(|(t, _, _)| t == tool), "{tool} never ran");
        let mut declared = Vec::new();
        declared_paths(tool, schema, &mut declared);
        for path in declared {
            let excused = NOT_PRODUCED.iter().any(|(p, _)| {
                path.strip_prefix(p)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            });
            if !returned.contains(&path) && !excused {
                missing.push(path);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "declared fields no result had (return them in run_every_tool, or list them in NOT_PRODUCED): {missing:?}"
    );
    for (path, _) in NOT_PRODUCED {
        assert!(
            !returned.contains(*path),
            "{path} was returned after all; take it off NOT_PRODUCED"
        );
    }

    // Drift is caught: each result changed one way is refused.
    let mut cases = Vec::new();
    for (i, (tool, args, value)) in seen.iter().enumerate() {
        let schema = &schemas[tool];
        let what = format!("{tool} #{i} ({args})");
        cases.push(
            json!({"what": what, "schema": schema, "value": value, "valid": true, "closed": true}),
        );
        for (change, bad) in drifted(schema, value) {
            assert!(
                validate_output(schema, &bad, tool).is_err(),
                "{what}: a result {change} passes"
            );
            // Open schemas accept an undescribed field; only the closed
            // reading refuses it.
            let open_ok = change.starts_with("with ");
            assert_eq!(
                validate(schema, &bad, tool).is_ok(),
                open_ok,
                "{what}: {change}"
            );
            cases.push(json!({"what": format!("{what} {change}"), "schema": schema, "value": bad, "valid": false, "closed": true}));
            cases.push(json!({"what": format!("{what} {change}, open"), "schema": schema, "value": bad, "valid": open_ok, "closed": false}));
        }
    }

    // A real Draft 2020-12 validator agrees with the one above.
    let Some(python) = common::python_with("import jsonschema; jsonschema.Draft202012Validator")
    else {
        eprintln!(
            "note: no Python with jsonschema (scripts/test creates target/py-venv; or set \
             ALAYASIKI_TEST_PYTHON): {} cases checked by the Rust validator only",
            cases.len()
        );
        return;
    };
    let work = TempDir::new("output-python");
    let file = work.path().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(PYTHON_CHECK)
        .arg(&file)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{} disagrees:\n{}\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "jsonschema ({}): {}",
        python.display(),
        String::from_utf8_lossy(&out.stdout).trim()
    );
}

#[test]
fn error_results_carry_no_structured_content() {
    let dir = TempDir::new("output-errors");
    let mut server = structured_server(dir.path(), &[]);
    for (tool, args) in [
        ("alayasiki_forget", json!({"document_id": "doc_missing"})),
        (
            "alayasiki_memory_read",
            json!({"session_id": "never-written"}),
        ),
        ("alayasiki_query", json!({"query": " "})),
        ("alayasiki_ingest", json!({})),
    ] {
        let reply = server.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &reply["result"];
        assert_eq!(result["isError"], true, "{tool}: {reply}");
        assert!(
            result.get("structuredContent").is_none(),
            "{tool}: an error result with structuredContent: {reply}"
        );
        assert!(result["content"][0]["text"].is_string(), "{reply}");
    }
    server.close();
}
