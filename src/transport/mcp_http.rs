//! What the two MCP-over-HTTP transports ([`super::sse`] and
//! [`super::streamable`]) share: session ids, replies bounded to
//! [`MAX_REPLY_BYTES`], and usage accounting of each message.

use serde_json::Value;
use std::time::Instant;

use super::http::{Context, Response};
use super::http_api;
use crate::limits::MAX_REPLY_BYTES;
use crate::protocol::jsonrpc::{self, INTERNAL_ERROR};
use crate::protocol::parse_budget::{ParseBudget, ParseCharge};
use crate::service::Principal;

/// Why a posted body is no message.
pub(super) enum Unparsed {
    /// The parse budget refused it: the answer to send.
    Refused(Response),
    /// Not JSON: why, for a -32700 error.
    Invalid(String),
}

/// Parses a posted body (read whole) under the shared parse budget; the
/// charge is held until the message has been handled (see
/// `parse_budget`).
pub(super) fn parse_message(body: &[u8]) -> Result<(Value, ParseCharge), Unparsed> {
    let charge = ParseBudget::shared()
        .charge(body)
        .map_err(|refusal| Unparsed::Refused(http_api::parse_refused(&refusal)))?;
    match serde_json::from_slice(body) {
        Ok(value) => Ok((value, charge)),
        Err(e) => Err(Unparsed::Invalid(format!(
            "parse error: invalid JSON at line {} column {}",
            e.line(),
            e.column()
        ))),
    }
}

/// Hex digits of a session id (a random UUID without dashes).
pub(super) const SESSION_ID_LEN: usize = 32;

/// A fresh session id: a random (version 4) UUID as 32 hex digits.
pub(super) fn new_session_id() -> String {
    let mut b = crate::ids::random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    crate::ids::hex(&b)
}

pub(super) fn is_session_id(s: &str) -> bool {
    s.len() == SESSION_ID_LEN
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// One message received, for usage accounting.
pub(super) struct Call {
    operation: String,
    request_bytes: usize,
    started: Instant,
}

impl Call {
    pub fn new(value: &Value, request_bytes: usize, started: Instant) -> Call {
        Call {
            operation: operation(value),
            request_bytes,
            started,
        }
    }

    /// Charges the caller for a reply of `reply_bytes` that succeeded.
    pub fn charge(self, ctx: &Context, principal: &Principal, reply: &Value, reply_bytes: usize) {
        if succeeded(reply) {
            ctx.service.for_caller(principal).charge(
                &self.operation,
                self.request_bytes as u64,
                reply_bytes as u64,
                self.started.elapsed(),
            );
        }
    }
}

/// What a message asks for, as usage records it: the tool name for
/// `tools/call`, else the method; `batch` for a batch.
pub(super) fn operation(value: &Value) -> String {
    match value {
        Value::Array(_) => "batch".into(),
        Value::Object(o) => {
            let method = o.get("method").and_then(Value::as_str).unwrap_or("invalid");
            let tool = o
                .get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .filter(|_| method == "tools/call")
                .filter(|name| crate::protocol::tools::find(name).is_some());
            tool.unwrap_or(method).chars().take(128).collect()
        }
        _ => "invalid".into(),
    }
}

/// A reply without a JSON-RPC error or a tool error (a batch: none of its
/// replies failed).
pub(super) fn succeeded(reply: &Value) -> bool {
    match reply {
        Value::Array(items) => items.iter().all(succeeded),
        one => {
            one.get("error").is_none()
                && !one
                    .get("result")
                    .and_then(|r| r.get("isError"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
        }
    }
}

/// The reply as Streamable HTTP sends it: [`bounded_reply`], with no
/// `id` on an error to a message whose id could not be read (the
/// transport's rule on every revision; see [`jsonrpc::omit_unread_id`]).
pub(super) fn streamable_reply(reply: &Value) -> String {
    if jsonrpc::has_unread_id(reply) {
        bounded_reply(&jsonrpc::omit_unread_id(reply.clone()))
    } else {
        bounded_reply(reply)
    }
}

/// The reply as sent: compact JSON, or an error naming the limit if it
/// exceeds [`MAX_REPLY_BYTES`].
pub(super) fn bounded_reply(reply: &Value) -> String {
    let text = reply.to_string();
    if text.len() <= MAX_REPLY_BYTES {
        return text;
    }
    let id = reply.get("id").cloned().unwrap_or(Value::Null);
    jsonrpc::error(
        id,
        INTERNAL_ERROR,
        &format!(
            "the reply is {} bytes, over the {MAX_REPLY_BYTES}-byte limit (MAX_REPLY_BYTES); ask \
             for less (a smaller top_k or budget)",
            text.len()
        ),
    )
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_ids_are_random_v4_uuids_in_hex() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert!(is_session_id(&a), "{a}");
        assert_eq!(&a[12..13], "4");
        assert!("89ab".contains(&a[16..17]));
        assert!(!is_session_id(&a.to_uppercase()));
        assert!(!is_session_id(&a[1..]));
        assert!(!is_session_id("../../etc/passwd"));
    }

    #[test]
    fn operations_name_the_tool_or_the_method() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "alayasiki_query", "arguments": {}}});
        assert_eq!(operation(&call), "alayasiki_query");
        let unknown = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "x".repeat(500)}});
        assert_eq!(operation(&unknown), "tools/call");
        assert_eq!(operation(&json!({"method": "ping"})), "ping");
        assert_eq!(operation(&json!([1])), "batch");
    }

    #[test]
    fn failures_are_not_successes() {
        assert!(succeeded(&json!({"result": {}})));
        assert!(!succeeded(&json!({"error": {"code": 1}})));
        assert!(!succeeded(&json!({"result": {"isError": true}})));
        assert!(!succeeded(&json!([{"result": {}}, {"error": {}}])));
    }

    #[test]
    fn oversized_replies_become_errors_naming_the_limit() {
        let big = json!({"jsonrpc": "2.0", "id": 7, "result": {"x": "a".repeat(MAX_REPLY_BYTES)}});
        let sent: Value = serde_json::from_str(&bounded_reply(&big)).unwrap();
        assert_eq!(sent["id"], 7);
        assert!(sent["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MAX_REPLY_BYTES"));
        let small = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
        assert_eq!(bounded_reply(&small), small.to_string());
    }
}
