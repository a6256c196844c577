//! Replays every recorded session in `fixtures/sessions/` against the real
//! binary on a fresh data directory.
//!
//! A fixture is JSON Lines; each line is one step:
//! - `{"send": <message>}` writes the message as one line. Strings in it may
//!   use `${name}` to insert a value captured earlier.
//! - `{"send_raw": "<text>"}` writes the text verbatim plus a newline (for
//!   malformed input).
//! - `{"expect": <pattern>}` reads the next reply and matches it.
//! - `{"expect_silence_ms": n}` asserts nothing arrives for `n` ms.
//! - `{"comment": "..."}` is ignored.
//!
//! Patterns match exactly (same keys, same values) except for these
//! wildcards: `"<any>"` (any value), `"<string>"`, `"<number>"`,
//! `"<capture:name>"` (any string, remembered as `name`; later patterns
//! and sends use it as `${name}`), and
//! `{"$json": <pattern>}`, which parses a string as JSON and matches the
//! result (tool results carry JSON inside a text block).
//!
//! Set `FIXTURE_PRINT=1` to print each actual reply while writing a new
//! fixture.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;

#[test]
fn every_recorded_session_replays() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sessions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "expected at least three fixtures, found {}",
        files.len()
    );
    for file in files {
        replay(&file);
    }
}

fn replay(file: &std::path::Path) {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let data = TempDir::new("fixture");
    let mut server = Server::start(data.path());
    let mut captures: HashMap<String, String> = HashMap::new();
    let text = std::fs::read_to_string(file).unwrap();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", n + 1);
        let step: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{at}: bad step: {e}"));
        if let Some(msg) = step.get("send") {
            server.send(&substitute(msg, &captures));
        } else if let Some(raw) = step.get("send_raw").and_then(Value::as_str) {
            server.send_raw(format!("{raw}\n").as_bytes());
        } else if let Some(pattern) = step.get("expect") {
            let actual = server
                .recv_within(TIMEOUT)
                .unwrap_or_else(|| panic!("{at}: no reply"));
            if std::env::var_os("FIXTURE_PRINT").is_some() {
                eprintln!("{at}: {actual}");
            }
            if let Err(why) = matches(pattern, &actual, &mut captures, "$") {
                panic!("{at}: {why}\n  expected: {pattern}\n  actual:   {actual}");
            }
        } else if let Some(ms) = step.get("expect_silence_ms").and_then(Value::as_u64) {
            if let Some(extra) = server.recv_within(std::time::Duration::from_millis(ms)) {
                panic!("{at}: expected no reply, got {extra}");
            }
        } else if step.get("comment").is_none() {
            panic!("{at}: unknown step {step}");
        }
    }
    let (status, _) = server.close();
    assert!(status.success(), "{name}: server exited with {status:?}");
}

fn substitute(v: &Value, captures: &HashMap<String, String>) -> Value {
    match v {
        Value::String(s) if s.contains("${") => {
            let mut out = s.clone();
            for (k, val) in captures {
                out = out.replace(&format!("${{{k}}}"), val);
            }
            Value::String(out)
        }
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

fn matches(
    pattern: &Value,
    actual: &Value,
    captures: &mut HashMap<String, String>,
    path: &str,
) -> Result<(), String> {
    match pattern {
        Value::String(p) if p == "<any>" => Ok(()),
        Value::String(p) if p == "<string>" => actual
            .is_string()
            .then_some(())
            .ok_or(format!("{path}: not a string")),
        Value::String(p) if p == "<number>" => actual
            .is_number()
            .then_some(())
            .ok_or(format!("{path}: not a number")),
        Value::String(p) if p.contains("${") => {
            let want = substitute(pattern, captures);
            (&want == actual)
                .then_some(())
                .ok_or(format!("{path}: expected {want}, got {actual}"))
        }
        Value::String(p) if p.starts_with("<capture:") && p.ends_with('>') => {
            let name = &p["<capture:".len()..p.len() - 1];
            let s = actual
                .as_str()
                .ok_or(format!("{path}: capture needs a string"))?;
            captures.insert(name.to_string(), s.to_string());
            Ok(())
        }
        Value::Object(p) if p.len() == 1 && p.contains_key("$json") => {
            let s = actual
                .as_str()
                .ok_or(format!("{path}: $json needs a string"))?;
            let parsed: Value =
                serde_json::from_str(s).map_err(|e| format!("{path}: not JSON: {e}"))?;
            matches(&p["$json"], &parsed, captures, path)
        }
        Value::Object(p) => {
            let a = actual.as_object().ok_or(format!("{path}: not an object"))?;
            let mut pk: Vec<&String> = p.keys().collect();
            let mut ak: Vec<&String> = a.keys().collect();
            pk.sort();
            ak.sort();
            if pk != ak {
                return Err(format!("{path}: keys differ: expected {pk:?}, got {ak:?}"));
            }
            for (k, v) in p {
                matches(v, &a[k], captures, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        Value::Array(p) => {
            let a = actual.as_array().ok_or(format!("{path}: not an array"))?;
            if p.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} items, got {}",
                    p.len(),
                    a.len()
                ));
            }
            for (i, (pv, av)) in p.iter().zip(a).enumerate() {
                matches(pv, av, captures, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        other => (other == actual)
            .then_some(())
            .ok_or(format!("{path}: expected {other}, got {actual}")),
    }
}
