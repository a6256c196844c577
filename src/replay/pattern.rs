//! What an `expect` step matches, and how captured values are put back
//! into later steps.
//!
//! Patterns match exactly (same keys, same values, same array lengths)
//! except for these wildcards: `"<any>"` (any value), `"<string>"`,
//! `"<number>"`, `"<capture:NAME>"` (any string, remembered as NAME), and
//! `{"$json": PATTERN}`, which parses a string as JSON and matches the
//! result against PATTERN (tool results carry JSON inside a text block).
//! A string holding `${NAME}` is compared after NAME's captured value is
//! put in its place; sends use the same substitution.

use serde_json::Value;
use std::collections::HashMap;

/// Values captured so far, by name.
pub type Captures = HashMap<String, String>;

/// Where a match failed (a JSON path from `$`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub path: String,
    pub why: String,
}

/// `v` with every `${NAME}` in its strings replaced by NAME's capture.
/// Names not captured are left as they are (the fixture check refuses a
/// fixture that uses one before it is captured).
pub fn substitute(v: &Value, captures: &Captures) -> Value {
    match v {
        Value::String(s) => Value::String(substitute_str(s, captures)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| substitute(i, captures)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), substitute(i, captures)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `s` with every `${NAME}` replaced by NAME's capture.
pub fn substitute_str(s: &str, captures: &Captures) -> String {
    if !s.contains("${") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) if captures.contains_key(&after[..end]) => {
                out.push_str(&captures[&after[..end]]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names a value uses as `${NAME}`, in order.
pub fn uses(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${") {
                let after = &rest[at + 2..];
                match after.find('}') {
                    Some(end) => {
                        out.push(after[..end].to_string());
                        rest = &after[end + 1..];
                    }
                    None => break,
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| uses(i, out)),
        Value::Object(map) => map.values().for_each(|i| uses(i, out)),
        _ => {}
    }
}

/// The names a pattern captures (`<capture:NAME>`).
pub fn captures_of(pattern: &Value, out: &mut Vec<String>) {
    match pattern {
        Value::String(s) => {
            if let Some(name) = capture_name(s) {
                out.push(name.to_string());
            }
        }
        Value::Array(items) => items.iter().for_each(|i| captures_of(i, out)),
        Value::Object(map) => map.values().for_each(|i| captures_of(i, out)),
        _ => {}
    }
}

fn capture_name(s: &str) -> Option<&str> {
    s.strip_prefix("<capture:")?
        .strip_suffix('>')
        .filter(|n| !n.is_empty())
}

/// Matches `actual` against `pattern`, recording captures.
pub fn matches(pattern: &Value, actual: &Value, captures: &mut Captures) -> Result<(), Mismatch> {
    match_at(pattern, actual, captures, "$")
}

fn fail(path: &str, why: String) -> Result<(), Mismatch> {
    Err(Mismatch {
        path: path.to_string(),
        why,
    })
}

fn match_at(
    pattern: &Value,
    actual: &Value,
    captures: &mut Captures,
    path: &str,
) -> Result<(), Mismatch> {
    match pattern {
        Value::String(p) if p == "<any>" => Ok(()),
        Value::String(p) if p == "<string>" => match actual.is_string() {
            true => Ok(()),
            false => fail(path, format!("expected a string, got {actual}")),
        },
        Value::String(p) if p == "<number>" => match actual.is_number() {
            true => Ok(()),
            false => fail(path, format!("expected a number, got {actual}")),
        },
        Value::String(p) if capture_name(p).is_some() => match actual.as_str() {
            Some(s) => {
                let name = capture_name(p).unwrap_or_default();
                captures.insert(name.to_string(), s.to_string());
                Ok(())
            }
            None => fail(path, format!("a capture needs a string, got {actual}")),
        },
        Value::String(p) if p.contains("${") => {
            let want = Value::String(substitute_str(p, captures));
            match &want == actual {
                true => Ok(()),
                false => fail(path, format!("expected {want}, got {actual}")),
            }
        }
        Value::Object(p) if p.len() == 1 && p.contains_key("$json") => {
            let Some(s) = actual.as_str() else {
                return fail(path, format!("$json needs a string, got {actual}"));
            };
            match serde_json::from_str::<Value>(s) {
                Ok(parsed) => match_at(&p["$json"], &parsed, captures, &format!("{path}.$json")),
                Err(e) => fail(path, format!("expected JSON text, got {actual} ({e})")),
            }
        }
        Value::Object(p) => {
            let Some(a) = actual.as_object() else {
                return fail(path, format!("expected an object, got {actual}"));
            };
            let missing: Vec<&String> = p.keys().filter(|k| !a.contains_key(*k)).collect();
            let extra: Vec<&String> = a.keys().filter(|k| !p.contains_key(*k)).collect();
            if !missing.is_empty() || !extra.is_empty() {
                return fail(
                    path,
                    format!("keys differ: missing {missing:?}, unexpected {extra:?}"),
                );
            }
            for (k, v) in p {
                match_at(v, &a[k], captures, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        Value::Array(p) => {
            let Some(a) = actual.as_array() else {
                return fail(path, format!("expected an array, got {actual}"));
            };
            if p.len() != a.len() {
                return fail(path, format!("expected {} items, got {}", p.len(), a.len()));
            }
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                match_at(pv, av, captures, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        other => match other == actual {
            true => Ok(()),
            false => fail(path, format!("expected {other}, got {actual}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wildcards_captures_and_json_text_match() {
        let mut c = Captures::new();
        let pattern =
            json!({"id": "<capture:doc>", "n": "<number>", "t": {"$json": {"a": "<any>"}}});
        let actual = json!({"id": "doc_1", "n": 3, "t": "{\"a\": [1]}"});
        assert_eq!(matches(&pattern, &actual, &mut c), Ok(()));
        assert_eq!(c["doc"], "doc_1");
        assert_eq!(
            matches(&json!({"x": "${doc}:0"}), &json!({"x": "doc_1:0"}), &mut c),
            Ok(())
        );
        assert_eq!(
            substitute(&json!(["${doc}", "${nope}"]), &c),
            json!(["doc_1", "${nope}"])
        );
    }

    #[test]
    fn a_mismatch_names_its_path() {
        let mut c = Captures::new();
        let m = matches(
            &json!({"r": {"items": [1, {"state": "ready"}]}}),
            &json!({"r": {"items": [1, {"state": "pending"}]}}),
            &mut c,
        )
        .unwrap_err();
        assert_eq!(m.path, "$.r.items[1].state");
        assert!(
            m.why.contains("\"ready\"") && m.why.contains("\"pending\""),
            "{m:?}"
        );
        let m = matches(&json!({"a": 1}), &json!({"a": 1, "b": 2}), &mut c).unwrap_err();
        assert!(m.why.contains("unexpected [\"b\"]"), "{m:?}");
    }

    #[test]
    fn uses_and_captures_are_found() {
        let mut u = Vec::new();
        uses(
            &json!({"a": "x ${one} y ${two}", "b": ["${three}"]}),
            &mut u,
        );
        assert_eq!(u, ["one", "two", "three"]);
        let mut c = Vec::new();
        captures_of(&json!({"a": "<capture:k>", "b": ["<capture:>"]}), &mut c);
        assert_eq!(c, ["k"]);
    }
}
