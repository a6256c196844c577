//! Reading a fixture file: its format version, its steps with their line
//! numbers, and the checks that make a bad fixture fail before anything
//! runs (the line named in every error).
//!
//! A fixture is JSON Lines. Its first step states the format:
//! `{"fixture_format": 1}`. Each later line is one step, an object with
//! exactly one of these keys: `send` (a JSON-RPC message, written as one
//! line), `send_raw` (text written verbatim plus a newline, for malformed
//! input), `send_bytes` (base64 of bytes written as one line, for input
//! that is not UTF-8), `send_oversized` (a line of that many filler bytes,
//! over `MAX_FRAME_BYTES`: what the recorder keeps of a line too large to
//! hold), `expect` (a pattern the next reply must match; see
//! [`super::pattern`]), `expect_silence_ms` (nothing may arrive for that
//! many milliseconds) and `comment` (ignored). Blank lines are skipped.

use serde_json::Value;
use std::collections::HashSet;

use super::pattern;
use crate::limits::MAX_FRAME_BYTES;

/// The fixture format this binary reads. A fixture stating a newer one
/// is refused (it may use steps this binary does not know).
pub const FIXTURE_FORMAT: u64 = 1;

/// Longest line a `send_oversized` step may write (bytes).
pub const MAX_OVERSIZED_SEND_BYTES: usize = 1024 * 1024 * 1024;

/// Longest silence a step may ask for (milliseconds).
pub const MAX_SILENCE_MS: u64 = 60_000;

/// One step and the line it came from (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub line: usize,
    pub kind: StepKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    Send(Value),
    SendRaw(String),
    SendBytes(Vec<u8>),
    SendOversized(usize),
    Expect(Value),
    ExpectSilence(u64),
}

/// Why a fixture cannot run, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFixture {
    /// 1-based; 0 when the fixture as a whole is wrong (empty, unreadable).
    pub line: usize,
    pub message: String,
}

impl BadFixture {
    fn at(line: usize, message: impl Into<String>) -> BadFixture {
        BadFixture {
            line,
            message: message.into(),
        }
    }
}

/// Parses and checks a fixture's text.
pub fn parse(text: &str) -> Result<Vec<Step>, BadFixture> {
    let mut steps = Vec::new();
    let mut format_seen = false;
    // Captured by an earlier expect step: what a step may use.
    let mut captured: HashSet<String> = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(raw)
            .map_err(|e| BadFixture::at(line, format!("not a JSON object: {e}")))?;
        let Value::Object(step) = value else {
            return Err(BadFixture::at(line, "a step is a JSON object"));
        };
        if !format_seen {
            format_seen = true;
            check_format(line, &step)?;
            continue;
        }
        if step.len() != 1 {
            let keys: Vec<&String> = step.keys().collect();
            return Err(BadFixture::at(
                line,
                format!("a step has exactly one key (send, send_raw, send_bytes, send_oversized, expect, expect_silence_ms or comment), this one has {keys:?}"),
            ));
        }
        let (key, body) = step.into_iter().next().expect("one key");
        let kind = match key.as_str() {
            "comment" => continue,
            "send" => {
                if !body.is_object() && !body.is_array() {
                    return Err(BadFixture::at(line, "send takes a JSON-RPC message (an object, or an array for a batch)"));
                }
                check_size(line, serde_json::to_string(&body).map_or(0, |s| s.len()))?;
                check_uses(line, &body, false, &captured)?;
                StepKind::Send(body)
            }
            "send_raw" => {
                let Value::String(text) = body else {
                    return Err(BadFixture::at(line, "send_raw takes a string"));
                };
                check_size(line, text.len())?;
                StepKind::SendRaw(text)
            }
            "send_bytes" => {
                let bytes = body
                    .as_str()
                    .and_then(|b| crate::base64::decode(b).ok())
                    .ok_or_else(|| BadFixture::at(line, "send_bytes takes a base64 string"))?;
                check_size(line, bytes.len())?;
                StepKind::SendBytes(bytes)
            }
            "send_oversized" => match body.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n > MAX_FRAME_BYTES && n <= MAX_OVERSIZED_SEND_BYTES => {
                    StepKind::SendOversized(n)
                }
                _ => {
                    return Err(BadFixture::at(
                        line,
                        format!(
                            "send_oversized takes a byte count over MAX_FRAME_BYTES ({MAX_FRAME_BYTES}) \
                             and at most MAX_OVERSIZED_SEND_BYTES ({MAX_OVERSIZED_SEND_BYTES})"
                        ),
                    ))
                }
            },
            "expect" => {
                // A pattern may use what it captures itself (bound before
                // it is compared) and what earlier steps captured.
                let mut defined = Vec::new();
                pattern::captures_of(&body, &mut defined);
                captured.extend(defined);
                check_uses(line, &body, true, &captured)?;
                StepKind::Expect(body)
            }
            "expect_silence_ms" => match body.as_u64() {
                Some(ms) if ms <= MAX_SILENCE_MS => StepKind::ExpectSilence(ms),
                _ => {
                    return Err(BadFixture::at(
                        line,
                        format!("expect_silence_ms takes milliseconds from 0 to {MAX_SILENCE_MS}"),
                    ))
                }
            },
            other => {
                return Err(BadFixture::at(
                    line,
                    format!("unknown step kind {other:?} (known: send, send_raw, send_bytes, send_oversized, expect, expect_silence_ms, comment)"),
                ))
            }
        };
        steps.push(Step { line, kind });
    }
    if !format_seen {
        return Err(BadFixture::at(
            0,
            "empty fixture: it must start with {\"fixture_format\": 1}",
        ));
    }
    Ok(steps)
}

fn check_format(line: usize, step: &serde_json::Map<String, Value>) -> Result<(), BadFixture> {
    let Some(version) = step.get("fixture_format") else {
        return Err(BadFixture::at(
            line,
            format!("a fixture starts with its format: {{\"fixture_format\": {FIXTURE_FORMAT}}}"),
        ));
    };
    match version.as_u64() {
        Some(v) if (1..=FIXTURE_FORMAT).contains(&v) && step.len() == 1 => Ok(()),
        Some(v) if v > FIXTURE_FORMAT => Err(BadFixture::at(
            line,
            format!(
                "fixture format {v} is newer than this alayasiki-mcp reads (up to {FIXTURE_FORMAT}); \
                 upgrade alayasiki-mcp to replay it"
            ),
        )),
        _ => Err(BadFixture::at(
            line,
            format!("the format line is exactly {{\"fixture_format\": N}}, N from 1 to {FIXTURE_FORMAT}"),
        )),
    }
}

fn check_size(line: usize, bytes: usize) -> Result<(), BadFixture> {
    if bytes > MAX_FRAME_BYTES {
        return Err(BadFixture::at(
            line,
            format!("the message is {bytes} bytes; a frame holds at most MAX_FRAME_BYTES ({MAX_FRAME_BYTES})"),
        ));
    }
    Ok(())
}

fn check_uses(
    line: usize,
    v: &Value,
    in_pattern: bool,
    captured: &HashSet<String>,
) -> Result<(), BadFixture> {
    let mut used = Vec::new();
    pattern::uses(v, in_pattern, &mut used);
    match used.into_iter().find(|name| !captured.contains(name)) {
        Some(name) => Err(BadFixture::at(
            line,
            format!("${{{name}}} is used before an earlier expect step captures it (\"<capture:{name}>\")"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> BadFixture {
        parse(text).unwrap_err()
    }

    #[test]
    fn a_good_fixture_keeps_its_lines() {
        let text = "{\"fixture_format\": 1}\n\n{\"comment\": \"hi\"}\n{\"send\": {\"id\": 1}}\n{\"expect\": {\"id\": \"<capture:x>\"}}\n{\"send\": {\"id\": \"${x}\"}}\n{\"expect_silence_ms\": 5}\n";
        let steps = parse(text).unwrap();
        let lines: Vec<usize> = steps.iter().map(|s| s.line).collect();
        assert_eq!(lines, [4, 5, 6, 7]);
    }

    #[test]
    fn bad_fixtures_name_their_line() {
        assert_eq!(err("").line, 0);
        assert_eq!(err("{\"send\": {}}").line, 1);
        let newer = err("{\"fixture_format\": 2}");
        assert!(newer.message.contains("newer"), "{newer:?}");
        let e = err("{\"fixture_format\": 1}\n{\"sned\": {}}");
        assert_eq!(
            (e.line, e.message.contains("unknown step kind \"sned\"")),
            (2, true)
        );
        let e = err("{\"fixture_format\": 1}\nnot json");
        assert_eq!(e.line, 2);
        let e = err("{\"fixture_format\": 1}\n{\"send\": {\"id\": \"${later}\"}}\n{\"expect\": \"<capture:later>\"}");
        assert_eq!((e.line, e.message.contains("${later}")), (2, true));
        let e = err("{\"fixture_format\": 1}\n{\"send\": {}, \"expect\": {}}");
        assert_eq!(e.line, 2);
        let e = err("{\"fixture_format\": 1}\n{\"expect_silence_ms\": 9999999}");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn a_send_over_the_frame_limit_is_refused_at_its_edge() {
        let over = format!(
            "{{\"fixture_format\": 1}}\n{{\"send_raw\": \"{}\"}}",
            "a".repeat(MAX_FRAME_BYTES + 1)
        );
        assert!(err(&over).message.contains("MAX_FRAME_BYTES"));
        let at = format!(
            "{{\"fixture_format\": 1}}\n{{\"send_raw\": \"{}\"}}",
            "a".repeat(MAX_FRAME_BYTES)
        );
        assert!(parse(&at).is_ok());
    }

    #[test]
    fn bytes_and_oversized_sends_are_checked_at_their_edges() {
        let step = |body: &str| format!("{{\"fixture_format\": 1}}\n{{{body}}}");
        let kinds =
            |text: &str| parse(text).map(|s| s.into_iter().map(|s| s.kind).collect::<Vec<_>>());
        assert_eq!(
            kinds(&step("\"send_bytes\": \"/w==\"")),
            Ok(vec![StepKind::SendBytes(vec![0xff])])
        );
        assert!(err(&step("\"send_bytes\": \"not base64!\""))
            .message
            .contains("base64"));
        assert!(err(&step("\"send_bytes\": 3")).message.contains("base64"));
        let over = crate::base64::encode(&vec![b'a'; MAX_FRAME_BYTES + 1]);
        let e = err(&step(&format!("\"send_bytes\": \"{over}\"")));
        assert!(e.message.contains("MAX_FRAME_BYTES"), "{e:?}");
        for n in [MAX_FRAME_BYTES + 1, MAX_OVERSIZED_SEND_BYTES] {
            assert_eq!(
                kinds(&step(&format!("\"send_oversized\": {n}"))),
                Ok(vec![StepKind::SendOversized(n)])
            );
        }
        for n in [MAX_FRAME_BYTES, MAX_OVERSIZED_SEND_BYTES + 1] {
            let e = err(&step(&format!("\"send_oversized\": {n}")));
            assert!(e.message.contains("MAX_OVERSIZED_SEND_BYTES"), "{e:?}");
        }
    }
}
