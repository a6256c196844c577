//! The tools' input schemas, as `tools/list` sends them from the real
//! binary, against what the same binary accepts over its pipes: a client
//! that validates arguments by the schema must neither send what the server
//! refuses nor be stopped from sending what it accepts.
//!
//! The schemas are read by a small validator below (only the keywords the
//! server publishes, all of them the same in JSON Schema draft-07 and
//! 2020-12); a keyword it does not know fails the shape test, so a schema
//! cannot grow past what these tests check.

mod common;

use alayasiki_mcp::limits::{
    MAX_BYTE_ARRAY_ITEMS, MAX_CONTENT_BYTES, MAX_FRAME_BYTES, MAX_WM_CONTENT_BYTES,
};
use common::{Server, TempDir};
use serde_json::{json, Map, Value};

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
    let fail = |why: String| Err(format!("{path}: {why}"));
    if let Some(branches) = schema["anyOf"].as_array() {
        if !branches.iter().any(|b| validate(b, v, path).is_ok()) {
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
                validate(&schema["items"], item, &format!("{path}[{i}]"))?;
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
        for (k, item) in o {
            match schema["properties"].get(k) {
                Some(p) => validate(p, item, &format!("{path}.{k}"))?,
                None if schema["additionalProperties"] == false => {
                    return fail(format!("unknown property {k}"))
                }
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

/// Calls that match the schemas, in an order that works on a fresh data
/// directory (forget removes what ingest stored; read and promote find the
/// session written before). Every tool has at least one.
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

#[test]
fn listed_schemas_have_the_shape_of_draft_07_and_2020_12_schemas() {
    let dir = TempDir::new("schema-shape");
    let mut server = Server::ready(dir.path());
    for (tool, schema) in listed_schemas(&mut server) {
        assert_eq!(
            schema["type"], "object",
            "{tool}: inputSchema is not an object schema"
        );
        walk(&tool, &schema, &mut |path, s| {
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
            for name in s["required"].as_array().into_iter().flatten() {
                assert!(
                    s["properties"].get(name.as_str().unwrap()).is_some(),
                    "{path}: required {name} is not a property"
                );
            }
            if let Some(choices) = s["enum"].as_array() {
                for c in choices {
                    assert!(
                        validate(&json!({"type": s["type"]}), c, path).is_ok(),
                        "{path}: enum value {c} is not of its type"
                    );
                }
            }
        });
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
    for (tool, args) in valid_calls() {
        let schema = &schemas[tool];
        validate(schema, &args, tool).unwrap_or_else(|e| panic!("example does not match: {e}"));
        let (is_error, value) = server.call(tool, args.clone());
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
