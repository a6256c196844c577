//! `alayasiki-mcp record`: serves MCP on stdio by relaying to this binary
//! on a fresh temporary store, and writes the session as a fixture that
//! `replay` runs as it is.
//!
//! Point a client at `alayasiki-mcp record --out session.jsonl` instead of
//! the server: every line the client sends is passed on and recorded as a
//! `send` step, every line the server answers is passed back and recorded
//! as an `expect` step. When the client closes the session, values that
//! differ from run to run are turned into what matches any run: a document
//! id becomes a capture where it first appears (`<capture:doc1>`) and
//! `${doc1}` after, in replies and sends alike; times, versions, paths,
//! sizes and scores become `<string>` or `<number>`; JSON inside a text
//! block becomes `{"$json": ...}`, so it is matched as JSON. Text that
//! would read as fixture syntax is escaped (`$${`, `{"$literal": ...}`),
//! a client line that is not UTF-8 is kept as `send_bytes`, and one over
//! `MAX_FRAME_BYTES` as `send_oversized` (its length: the server skips it
//! whatever it holds), so the relay never holds more than one frame.
//!
//! SIGINT or SIGTERM (the handlers of [`crate::transport::signals`]) ends
//! the session as the client closing it would, but at once: the server is
//! killed, the session so far written, the temporary store deleted, and
//! the exit status is 128 + the signal's number. During `--seed` the import
//! is killed and nothing is written.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

use super::fixture::MAX_OVERSIZED_SEND_BYTES;
use super::pattern;
use super::server::{self, ScratchDir};
use crate::limits::MAX_FRAME_BYTES;
use crate::transport::framing::{Frame, FrameReader};
use crate::transport::signals;
use crossbeam_channel::{Receiver, RecvTimeoutError};

/// Keys whose string values differ from run to run.
const VOLATILE_STRINGS: &[&str] = &[
    "created_at",
    "data_dir",
    "since",
    "version",
    "built_at",
    "updated_at",
    "expires_at",
    "written_at",
];

/// Keys whose numbers differ from run to run (or from build to build).
const VOLATILE_NUMBERS: &[&str] = &["store_bytes", "score", "schema_version", "duration_ms"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    pub out: PathBuf,
    pub seed: Option<PathBuf>,
}

/// One line of the session, in the order it crossed the relay.
enum Event {
    Sent(String),
    /// A client line that is not UTF-8, passed on as it came.
    SentBytes(Vec<u8>),
    /// A client line over `MAX_FRAME_BYTES`, of this many bytes: the
    /// server skips it whatever it holds, so the relay passes on filler of
    /// the same length instead of holding it.
    SentOversized(usize),
    Received(String),
}

pub fn record(options: &RecordOptions) -> ExitCode {
    match relay(options) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("alayasiki-mcp record: {e}");
            ExitCode::FAILURE
        }
    }
}

fn relay(options: &RecordOptions) -> Result<ExitCode, String> {
    // Refuse before serving anything if the recording cannot be written.
    std::fs::File::create(&options.out)
        .map_err(|e| format!("cannot write {}: {e}", options.out.display()))?;
    // From here on a signal ends the session through the code below, which
    // deletes the temporary store, instead of killing the process.
    signals::install().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let scratch = ScratchDir::new().map_err(|e| format!("cannot make a temporary store: {e}"))?;
    if let Some(seed) = &options.seed {
        if let Err(e) = server::seed(scratch.path(), seed, &[]) {
            if signals::requested() {
                eprintln!(
                    "alayasiki-mcp record: interrupted by {} while the seed was imported; \
                     nothing recorded, the temporary store is deleted",
                    super::interruption()
                );
                return Ok(interrupted());
            }
            return Err(format!("the seed {} did not import: {e}", seed.display()));
        }
    }
    let mut child = server::this_binary(&[])
        .and_then(|mut cmd| {
            cmd.arg("--data-dir")
                .arg(scratch.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
        })
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let mut to_server = child.stdin.take().expect("piped");
    let from_server = child.stdout.take().expect("piped");
    let (tx, events) = crossbeam_channel::unbounded::<Event>();
    let replies = {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut out = std::io::stdout();
            for line in BufReader::new(from_server).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(Event::Received(line.clone()));
                if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
                    break;
                }
            }
        })
    };
    let frames = client_frames();
    loop {
        let frame = match frames.recv_timeout(server::SIGNAL_POLL) {
            Ok(frame) => frame,
            Err(RecvTimeoutError::Timeout) if !signals::requested() => continue,
            // The client closed its side, or a signal came.
            Err(_) => break,
        };
        if signals::requested() {
            break;
        }
        let passed = match frame {
            // Each line is noted before it is passed on, so that it comes
            // before the server's answer to it in the recording.
            Frame::Line(bytes) => {
                let _ = tx.send(match std::str::from_utf8(&bytes) {
                    Ok(line) => Event::Sent(line.to_string()),
                    Err(_) => Event::SentBytes(bytes.clone()),
                });
                to_server
                    .write_all(&bytes)
                    .and_then(|_| to_server.write_all(b"\n"))
            }
            Frame::TooLarge { bytes } => {
                // Past what a fixture may replay, the server is sent (and
                // answers about) the longest line a fixture may write.
                let bytes = bytes.min(MAX_OVERSIZED_SEND_BYTES);
                eprintln!(
                    "alayasiki-mcp record: a line over MAX_FRAME_BYTES ({MAX_FRAME_BYTES}) \
                     is passed on and recorded as {bytes} bytes of filler (send_oversized)"
                );
                let _ = tx.send(Event::SentOversized(bytes));
                server::write_filler(&mut to_server, bytes).and_then(|_| to_server.write_all(b"\n"))
            }
        };
        if passed.and_then(|_| to_server.flush()).is_err() {
            break;
        }
    }
    drop(to_server);
    if signals::requested() {
        // Stopped, not waited for: its store is about to be deleted.
        let _ = child.kill();
    }
    let _ = replies.join();
    let status = child.wait().map_err(|e| e.to_string())?;
    drop(tx);
    let fixture = fixture_of(events.try_iter().collect());
    std::fs::write(&options.out, fixture)
        .map_err(|e| format!("cannot write {}: {e}", options.out.display()))?;
    eprintln!(
        "alayasiki-mcp record: session written to {}; check it with `alayasiki-mcp replay {}`",
        options.out.display(),
        options.out.display()
    );
    drop(scratch);
    if signals::requested() {
        eprintln!(
            "alayasiki-mcp record: interrupted by {}: the session so far is written, the \
             temporary store deleted",
            super::interruption()
        );
        return Ok(interrupted());
    }
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The client's lines, read on a thread of their own so that the relay
/// can look for a termination signal while the client is silent. One frame
/// waits at most: the reader holds the next until the relay takes it.
fn client_frames() -> Receiver<Frame> {
    let (tx, frames) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let mut reader = FrameReader::new(std::io::stdin().lock(), MAX_FRAME_BYTES);
        // A read error on the client's side ends the session like its end
        // of input does.
        while let Ok(Some(frame)) = reader.next_frame() {
            if tx.send(frame).is_err() {
                break;
            }
        }
    });
    frames
}

/// The exit status of a recording a signal stopped: 128 + its number.
fn interrupted() -> ExitCode {
    let signal = signals::received().unwrap_or(signals::SIGINT);
    ExitCode::from((crate::cli::SIGNAL_EXIT_BASE + signal) as u8)
}

/// The fixture text for a session.
fn fixture_of(events: Vec<Event>) -> String {
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut out = String::from("{\"fixture_format\":1}\n");
    out.push_str(
        "{\"comment\":\"Recorded by alayasiki-mcp record: document ids are captured, volatile values are wildcards.\"}\n",
    );
    for event in events {
        let step = match event {
            // Only a message (an object, or an array for a batch) is a
            // `send`; any other line, JSON or not, is sent as it was.
            Event::Sent(line) => match serde_json::from_str::<Value>(&line) {
                Ok(v @ (Value::Object(_) | Value::Array(_))) => {
                    serde_json::json!({"send": known_ids(&v, &ids)})
                }
                _ => serde_json::json!({"send_raw": line}),
            },
            Event::SentBytes(bytes) => {
                serde_json::json!({"send_bytes": crate::base64::encode(&bytes)})
            }
            Event::SentOversized(n) => serde_json::json!({"send_oversized": n}),
            Event::Received(line) => match serde_json::from_str::<Value>(&line) {
                Ok(v) => {
                    // Ids first seen in this reply are named first, so a
                    // use that sorts before the capture still refers to it
                    // (the matcher binds captures before it compares).
                    let mut fresh = Vec::new();
                    new_ids(&v, &ids, None, &mut fresh);
                    for id in &fresh {
                        let name = format!("doc{}", ids.len() + 1);
                        ids.insert(id.clone(), name);
                    }
                    let mut fresh: std::collections::HashSet<String> = fresh.into_iter().collect();
                    serde_json::json!({"expect": wildcard(&v, &ids, &mut fresh, None)})
                }
                Err(_) => {
                    serde_json::json!({"comment": format!("the server wrote a line that is not JSON: {line}")})
                }
            },
        };
        out.push_str(&step.to_string());
        out.push('\n');
    }
    out
}

/// Where each document id starts in `s`.
fn document_ids(s: &str) -> Vec<(usize, &str)> {
    const LEN: usize = 4 + 24;
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = s[from..].find("doc_").map(|i| i + from) {
        let candidate = s.get(at..at + LEN);
        match candidate.filter(|c| crate::ids::is_document_id(c)) {
            Some(id) => {
                found.push((at, id));
                from = at + LEN;
            }
            None => from = at + 4,
        }
    }
    found
}

/// `text` with each `id` in it replaced by `${name}`, except one right
/// after a `$`: `$${name}` would read as an escaped `${`, so that one is
/// kept as written (the recording then sends and expects the id it saw).
fn refer(text: &str, id: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(id) {
        out.push_str(&rest[..at]);
        let after_dollar = out.ends_with('$');
        out.push_str(&match after_dollar {
            true => id.to_string(),
            false => format!("${{{name}}}"),
        });
        rest = &rest[at + id.len()..];
    }
    out.push_str(rest);
    out
}

/// `v` with every document id already captured replaced by its `${name}`.
fn known_ids(v: &Value, ids: &HashMap<String, String>) -> Value {
    match v {
        Value::String(s) => {
            let mut out = pattern::escape(s);
            for (_, id) in document_ids(s) {
                if let Some(name) = ids.get(id) {
                    out = refer(&out, id, name);
                }
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| known_ids(i, ids)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), known_ids(i, ids)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The document ids `v` holds as whole strings that `ids` does not know,
/// in the order [`wildcard`] meets them.
fn new_ids(v: &Value, ids: &HashMap<String, String>, key: Option<&str>, out: &mut Vec<String>) {
    match v {
        // Written as a literal (see `wildcard`): nothing in it is captured.
        Value::Object(_) if pattern::is_syntax_object(v) => {}
        Value::Object(map) => map.iter().for_each(|(k, i)| new_ids(i, ids, Some(k), out)),
        Value::Array(items) => items.iter().for_each(|i| new_ids(i, ids, None, out)),
        // Replaced by a wildcard, never captured.
        Value::String(_) if key.is_some_and(|k| VOLATILE_STRINGS.contains(&k)) => {}
        Value::String(s) => {
            if key == Some("text") {
                if let Ok(inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str(s) {
                    return new_ids(&inner, ids, None, out);
                }
            }
            if crate::ids::is_document_id(s) && !ids.contains_key(s) && !out.contains(s) {
                out.push(s.clone());
            }
        }
        _ => {}
    }
}

/// A reply as a pattern any run of the same session matches. `fresh`
/// holds the ids first seen in this reply: the first place each is met
/// becomes its capture.
fn wildcard(
    v: &Value,
    ids: &HashMap<String, String>,
    fresh: &mut std::collections::HashSet<String>,
    key: Option<&str>,
) -> Value {
    let key_is = |list: &[&str]| key.is_some_and(|k| list.contains(&k));
    match v {
        // An object that would read as pattern syntax is matched exactly.
        Value::Object(_) if pattern::is_syntax_object(v) => serde_json::json!({ "$literal": v }),
        Value::Object(map) => {
            let out: Map<String, Value> = map
                .iter()
                .map(|(k, i)| (k.clone(), wildcard(i, ids, fresh, Some(k))))
                .collect();
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| wildcard(i, ids, fresh, None))
                .collect(),
        ),
        Value::Number(_) if key_is(VOLATILE_NUMBERS) => Value::String("<number>".into()),
        Value::String(_) if key_is(VOLATILE_STRINGS) => Value::String("<string>".into()),
        Value::String(s) => {
            if key == Some("text") {
                if let Ok(inner @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str(s) {
                    return serde_json::json!({"$json": wildcard(&inner, ids, fresh, None)});
                }
            }
            if fresh.remove(s) {
                return Value::String(format!("<capture:{}>", ids[s]));
            }
            let mut out = match pattern::escaped_pattern(s) {
                Value::String(out) => out,
                literal => return literal,
            };
            for (_, id) in document_ids(s) {
                match ids.get(id) {
                    Some(name) => out = refer(&out, id, name),
                    // A new id only inside a longer string cannot be
                    // captured: any string matches.
                    None => return Value::String("<string>".into()),
                }
            }
            Value::String(out)
        }
        other => other.clone(),
    }
}

/// For [`crate::cli`]: the flags `record` takes.
pub fn options(out: Option<PathBuf>, seed: Option<PathBuf>) -> Result<RecordOptions, String> {
    let out = out.ok_or("record needs --out FILE")?;
    if Path::new(&out).is_dir() {
        return Err("--out names a directory; give the fixture's file name".into());
    }
    Ok(RecordOptions { out, seed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_captured_once_and_reused_and_volatile_values_become_wildcards() {
        let id = "doc_0123456789abcdef01234567";
        let events = vec![
            Event::Sent(json!({"id": 1, "method": "ping"}).to_string()),
            Event::Received(
                json!({"id": 1, "result": {"content": [{"type": "text", "text": json!({"document_id": id, "created_at": "2026-01-01T00:00:00Z", "score": 0.5, "chunk": format!("{id}:0")}).to_string()}]}})
                    .to_string(),
            ),
            Event::Sent(json!({"id": 2, "params": {"uri": format!("alayasiki://documents/{id}")}}).to_string()),
            Event::Sent("not json".into()),
            Event::Sent(json!({"id": 3, "params": {"content": "${HOME} and <any>"}}).to_string()),
            Event::Received(json!({"id": 3, "result": {"echo": "${HOME}", "id": "<capture:x>"}}).to_string()),
            Event::SentBytes(vec![b'{', 0xff]),
            Event::SentOversized(MAX_FRAME_BYTES + 1),
            Event::Sent("null".into()),
            Event::Sent(json!({"id": 4, "params": {"price": format!("US${id}"), "m": {"$literal": "${HOME}"}}}).to_string()),
            Event::Received(json!({"id": 4, "result": {"a": {"$literal": "plain"}, "b": {"$json": 1}, "c": format!("US${id}")}}).to_string()),
        ];
        let text = fixture_of(events);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0], json!({"fixture_format": 1}));
        assert_eq!(
            lines[3]["expect"]["result"]["content"][0]["text"]["$json"],
            json!({"document_id": "<capture:doc1>", "created_at": "<string>", "score": "<number>", "chunk": "${doc1}:0"})
        );
        assert_eq!(
            lines[4]["send"]["params"]["uri"],
            "alayasiki://documents/${doc1}"
        );
        assert_eq!(lines[5], json!({"send_raw": "not json"}));
        // Text that reads as syntax is escaped; sends are never patterns.
        assert_eq!(lines[6]["send"]["params"]["content"], "$${HOME} and <any>");
        assert_eq!(
            lines[7]["expect"]["result"],
            json!({"echo": "$${HOME}", "id": {"$literal": "<capture:x>"}})
        );
        assert_eq!(lines[8], json!({"send_bytes": "e/8="}));
        assert_eq!(lines[9], json!({"send_oversized": MAX_FRAME_BYTES + 1}));
        // A bare JSON value is no message: sent as it was.
        assert_eq!(lines[10], json!({"send_raw": "null"}));
        // An id right after `$` is kept as written (`$${doc1}` would read
        // as an escaped `${`); `$literal` means nothing in a send.
        assert_eq!(
            lines[11]["send"]["params"],
            json!({"price": format!("US${id}"), "m": {"$literal": "$${HOME}"}})
        );
        // Reply objects that read as pattern syntax are matched exactly.
        assert_eq!(
            lines[12]["expect"]["result"],
            json!({"a": {"$literal": {"$literal": "plain"}}, "b": {"$literal": {"$json": 1}}, "c": format!("US${id}")})
        );
        // What it wrote is a fixture replay reads.
        assert!(super::super::fixture::parse(&text).is_ok());
    }
}
