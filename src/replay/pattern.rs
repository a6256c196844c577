//! What an `expect` step matches, and how captured values are put back
//! into later steps.
//!
//! Patterns match exactly (same keys, same values, same array lengths)
//! except for these wildcards: `"<any>"` (any value), `"<string>"`,
//! `"<number>"`, `"<capture:NAME>"` (any string, remembered as NAME), and
//! `{"$json": PATTERN}`, which parses a string as JSON and matches the
//! result against PATTERN (tool results carry JSON inside a text block).
//! A string holding `${NAME}` is compared after NAME's captured value is
//! put in its place; sends use the same substitution. Text that would
//! otherwise read as syntax is escaped: `$${` stands for a literal `${`,
//! and `{"$literal": "TEXT"}` matches exactly the string TEXT (for a
//! reply that holds `"<any>"` or `"<capture:x>"` itself). The recorder
//! writes both ([`escape`], [`escaped_pattern`]).

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

/// `v` with every `${NAME}` in its strings replaced by NAME's capture and
/// every `$${` by a literal `${`, or `None` when its strings would then
/// hold more than `limit` bytes in all (a capture used many times can
/// multiply a small fixture into gigabytes). Names not captured are left
/// as they are (the fixture check refuses a fixture that uses one before
/// it is captured).
pub fn substitute(v: &Value, captures: &Captures, limit: usize) -> Option<Value> {
    let mut left = limit;
    substitute_within(v, captures, &mut left)
}

fn substitute_within(v: &Value, captures: &Captures, left: &mut usize) -> Option<Value> {
    Some(match v {
        Value::String(s) => Value::String(substitute_str(s, captures, left)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| substitute_within(i, captures, left))
                .collect::<Option<_>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| Some((k.clone(), substitute_within(i, captures, left)?)))
                .collect::<Option<_>>()?,
        ),
        other => other.clone(),
    })
}

/// `s` with every `${NAME}` replaced by NAME's capture and every `$${` by
/// `${`, taking its length from `left`; `None` if it would not fit.
fn substitute_str(s: &str, captures: &Captures, left: &mut usize) -> Option<String> {
    let mut out = String::new();
    let mut push = |out: &mut String, piece: &str| -> Option<()> {
        *left = left.checked_sub(piece.len())?;
        out.push_str(piece);
        Some(())
    };
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        if escaped_at(rest, at) {
            // `$${`: a literal `${`.
            push(&mut out, &rest[..at - 1])?;
            push(&mut out, "${")?;
            rest = &rest[at + 2..];
            continue;
        }
        push(&mut out, &rest[..at])?;
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) if captures.contains_key(&after[..end]) => {
                push(&mut out, &captures[&after[..end]])?;
                rest = &after[end + 1..];
            }
            _ => {
                push(&mut out, "${")?;
                rest = after;
            }
        }
    }
    push(&mut out, rest)?;
    Some(out)
}

/// Whether the `${` at `at` in `rest` is escaped (`$${`): a literal `${`,
/// no capture.
fn escaped_at(rest: &str, at: usize) -> bool {
    at > 0 && rest.as_bytes()[at - 1] == b'$'
}

/// The value of a `{"$literal": VALUE}` pattern.
fn literal(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(map) if map.len() == 1 => map.get("$literal"),
        _ => None,
    }
}

/// Whether an object would read as pattern syntax (`{"$json": ...}` or
/// `{"$literal": ...}`), so that a recorded reply holding one must be
/// written as a literal.
pub fn is_syntax_object(v: &Value) -> bool {
    matches!(v, Value::Object(map) if map.len() == 1
        && (map.contains_key("$json") || map.contains_key("$literal")))
}

/// `text` written so that a send reads it back as it is: `${` becomes
/// `$${`.
pub fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

/// `text` written so that a pattern matches exactly it: escaped as for a
/// send, or `{"$literal": text}` when it would read as a wildcard
/// (`"<any>"`, `"<capture:x>"`, ...).
pub fn escaped_pattern(text: &str) -> Value {
    match is_wildcard(text) {
        true => serde_json::json!({ "$literal": text }),
        false => Value::String(escape(text)),
    }
}

fn is_wildcard(s: &str) -> bool {
    matches!(s, "<any>" | "<string>" | "<number>") || capture_name(s).is_some()
}

/// The names a value uses as `${NAME}`, in order (an escaped `$${` uses
/// none, nor, in a pattern, a `$literal`).
pub fn uses(v: &Value, in_pattern: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${") {
                let after = &rest[at + 2..];
                if escaped_at(rest, at) {
                    rest = after;
                    continue;
                }
                match after.find('}') {
                    Some(end) => {
                        out.push(after[..end].to_string());
                        rest = &after[end + 1..];
                    }
                    None => break,
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| uses(i, in_pattern, out)),
        Value::Object(_) if in_pattern && literal(v).is_some() => {}
        Value::Object(map) => map.values().for_each(|i| uses(i, in_pattern, out)),
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
        Value::Object(_) if literal(pattern).is_some() => {}
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
            // A string longer than the actual one cannot equal it: stop
            // putting captures in there.
            let mut room = actual.as_str().map_or(0, str::len);
            match substitute_str(p, captures, &mut room) {
                Some(want) if actual.as_str() == Some(want.as_str()) => Ok(()),
                Some(want) => fail(
                    path,
                    format!("expected {}, got {actual}", Value::String(want)),
                ),
                None => fail(
                    path,
                    format!("expected {}, got {actual}", Value::String(p.clone())),
                ),
            }
        }
        Value::Object(_) if literal(pattern).is_some() => {
            let want = literal(pattern).unwrap_or(&Value::Null);
            match want == actual {
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
            substitute(&json!(["${doc}", "${nope}"]), &c, 100),
            Some(json!(["doc_1", "${nope}"]))
        );
    }

    #[test]
    fn escaped_syntax_reads_back_as_the_text_it_stands_for() {
        let mut c = Captures::new();
        c.insert("x".into(), "doc_1".into());
        let text = "Add ${HOME} and ${x} to $${PATH}";
        let sent = escape(text);
        assert_eq!(sent, "Add $${HOME} and $${x} to $$${PATH}");
        assert_eq!(substitute(&json!(sent), &c, 100), Some(json!(text)));
        let mut used = Vec::new();
        uses(&json!(sent), false, &mut used);
        assert!(used.is_empty(), "{used:?}");
        // A pattern of escaped text matches the text, captures untouched.
        assert_eq!(matches(&json!(sent), &json!(text), &mut c), Ok(()));
        for wildcard in ["<any>", "<string>", "<number>", "<capture:y>"] {
            let pattern = escaped_pattern(wildcard);
            assert_eq!(pattern, json!({ "$literal": wildcard }));
            assert_eq!(matches(&pattern, &json!(wildcard), &mut c), Ok(()));
            assert!(matches(&pattern, &json!("other"), &mut c).is_err());
            let mut defined = Vec::new();
            captures_of(&pattern, &mut defined);
            assert!(defined.is_empty(), "{defined:?}");
        }
        assert!(!c.contains_key("y"));
    }

    #[test]
    fn substitution_stops_at_its_byte_limit() {
        let mut c = Captures::new();
        c.insert("y".into(), "y".repeat(1000));
        let many = json!({"a": "${y}".repeat(10), "b": ["${y}"]});
        assert_eq!(substitute(&many, &c, 10_999), None);
        assert!(substitute(&many, &c, 11_000).is_some());
        // A pattern longer than the reply fails without being built whole.
        let m = matches(&json!("${y}${y}"), &json!("y"), &mut c).unwrap_err();
        assert!(m.why.contains("${y}${y}"), "{m:?}");
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
            true,
            &mut u,
        );
        assert_eq!(u, ["one", "two", "three"]);
        let mut c = Vec::new();
        captures_of(&json!({"a": "<capture:k>", "b": ["<capture:>"]}), &mut c);
        assert_eq!(c, ["k"]);
    }
}
