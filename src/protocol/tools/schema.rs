//! Builders for the tools' input schemas, so that every schema says exactly
//! what its parser accepts, in the subset of JSON Schema that every client
//! reads the same way.
//!
//! The rules, checked for every tool by the tests below:
//! - every object is closed (`additionalProperties: false`), so a client
//!   that validates refuses `{"topk": 5}` just as the server does; only
//!   the free-form maps (`metadata`, graph `properties`) are open, and
//!   they say so (`additionalProperties: true`);
//! - every value has one `type` (no `type` arrays: clients that map tool
//!   schemas onto a single-type dialect reject or loosen them); a value of
//!   two shapes is an `anyOf` of single-typed branches;
//! - every bound is quoted from [`crate::limits`], never typed again.
//!
//! Byte limits become `maxLength` (which counts characters): a string the
//! server accepts is never longer than its byte limit in characters, so
//! the schema refuses nothing the server would take, and for ASCII the two
//! agree exactly.

use crate::limits::MAX_BYTE_ARRAY_ITEMS;
use serde_json::{json, Value};

use crate::limits::MAX_SESSION_ID_BYTES;

/// `pattern` of a string that must not be blank (the parsers refuse a
/// value that is only whitespace).
pub const NOT_BLANK: &str = "\\S";

/// A closed object schema: `properties` (a JSON object of schemas) and
/// the names among them that are `required`.
pub fn object(description: Option<&str>, properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    if let Some(d) = description {
        schema["description"] = json!(d);
    }
    schema
}

/// A free-form JSON object, kept verbatim: any properties.
pub fn free_form(description: &str) -> Value {
    json!({"type": "object", "additionalProperties": true, "description": description})
}

/// A non-blank string of at most `max_bytes` bytes.
pub fn label(description: &str, max_bytes: usize) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": max_bytes,
        "pattern": NOT_BLANK,
        "description": description
    })
}

/// Text content: non-empty, at most `max_bytes` bytes.
pub fn text(description: &str, max_bytes: usize) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max_bytes, "description": description})
}

/// One of `choices`.
pub fn choice(description: &str, choices: &[&str]) -> Value {
    json!({"type": "string", "enum": choices, "description": description})
}

/// A working-memory session id, as `SessionId::parse` accepts it.
pub fn session_id(description: &str) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_SESSION_ID_BYTES,
        "pattern": format!("^[A-Za-z0-9._:-]{{1,{MAX_SESSION_ID_BYTES}}}$"),
        "description": description
    })
}

/// Longest base64 text accepted for a file of at most `max_bytes`: the
/// padded encoding of `max_bytes` bytes. The parser refuses longer text
/// before decoding it, so schema and server draw the line at one place.
pub const fn max_base64_chars(max_bytes: usize) -> usize {
    max_bytes.div_ceil(3) * 4
}

/// A File's `content`: base64 text, or an array of byte values; either way
/// at most `max_bytes` bytes once decoded (quoted as `limit_name`).
pub fn file_content(max_bytes: usize, limit_name: &str) -> Value {
    json!({
        "description": format!(
            "The file's bytes: base64 text (standard alphabet, padding optional), or an array \
             of byte values (0-255, at most {items} of them, MAX_BYTE_ARRAY_ITEMS: larger files \
             as base64); at most {max_bytes} bytes once decoded ({limit_name}).",
            items = max_bytes.min(MAX_BYTE_ARRAY_ITEMS)
        ),
        "anyOf": [
            {
                "type": "string",
                "contentEncoding": "base64",
                "minLength": 1,
                "maxLength": max_base64_chars(max_bytes)
            },
            {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 255},
                "minItems": 1,
                "maxItems": max_bytes.min(MAX_BYTE_ARRAY_ITEMS)
            }
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::super::TOOLS;
    use super::*;

    /// The objects whose properties are free-form by design (metadata and
    /// graph properties kept verbatim), by path. Any other open object is
    /// a schema that accepts what the server refuses.
    const FREE_FORM: &[&str] = &[
        "alayasiki_ingest.metadata",
        "alayasiki_ingest.Text.metadata",
        "alayasiki_ingest.File.metadata",
        "alayasiki_update.metadata",
        "alayasiki_memory_write.metadata",
        "alayasiki_query.filter.metadata",
        "alayasiki_memory_write.Text.metadata",
        "alayasiki_memory_write.File.metadata",
        "alayasiki_memory_write.nodes[].properties",
        "alayasiki_memory_write.edges[].properties",
    ];

    /// Calls `visit` on every subschema of `schema` with its path.
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
        for (i, branch) in schema["anyOf"].as_array().into_iter().flatten().enumerate() {
            walk(&format!("{path}|{i}"), branch, visit);
        }
    }

    fn every_subschema() -> Vec<(String, Value)> {
        let mut all = Vec::new();
        for t in TOOLS {
            walk(t.name, &(t.input_schema)(), &mut |path, s| {
                all.push((path.to_string(), s.clone()))
            });
        }
        all
    }

    #[test]
    fn every_object_schema_is_closed_unless_free_form_by_design() {
        let mut open = Vec::new();
        for (path, s) in every_subschema() {
            if s["type"] != "object" {
                continue;
            }
            match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) if s.get("properties").is_none() => open.push(path.clone()),
                other => panic!("{path}: additionalProperties is {other:?}, not false"),
            }
        }
        open.sort();
        let mut expected = FREE_FORM.to_vec();
        expected.sort();
        assert_eq!(open, expected);
    }

    #[test]
    fn every_schema_has_one_type_or_typed_branches() {
        const TYPES: &[&str] = &[
            "object", "array", "string", "integer", "number", "boolean", "null",
        ];
        for (path, s) in every_subschema() {
            assert!(s.is_object(), "{path}: a bare boolean schema");
            match (&s["type"], s["anyOf"].as_array()) {
                (Value::String(t), None) => assert!(TYPES.contains(&t.as_str()), "{path}: {t}"),
                (Value::Null, Some(branches)) => {
                    assert!(branches.len() >= 2, "{path}: anyOf of one");
                    assert!(branches.iter().all(|b| b["type"].is_string()), "{path}");
                }
                (t, _) => panic!("{path}: type {t} is not one type name"),
            }
        }
    }

    #[test]
    fn every_required_name_is_a_declared_property() {
        for (path, s) in every_subschema() {
            for name in s["required"].as_array().into_iter().flatten() {
                let name = name.as_str().expect("required names are strings");
                assert!(s["properties"].get(name).is_some(), "{path}.{name}");
            }
        }
    }

    #[test]
    fn base64_bound_is_the_padded_encoding_of_the_byte_limit() {
        assert_eq!(max_base64_chars(0), 0);
        assert_eq!(max_base64_chars(1), 4);
        assert_eq!(max_base64_chars(3), 4);
        assert_eq!(max_base64_chars(4), 8);
        let limit = crate::limits::MAX_WM_CONTENT_BYTES;
        let full = crate::base64::encode(&vec![0u8; limit]);
        assert_eq!(full.len(), max_base64_chars(limit));
    }
}
