//! The 2026-07-28 stateless era's request checks at `/mcp`: the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers against the
//! body's `_meta`, method and name, and the `Mcp-Param-*` headers a tool's
//! schema asks for (with their `=?base64?...?=` wrapper), in the
//! specification's order. Each refusal is the 400 the specification names.

use serde_json::{Map, Value};

use super::super::http::{headers, Context, Response};
use super::super::request::Request;
use super::{rpc_response, METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, VERSION_HEADER};
use crate::protocol::jsonrpc::{self, INVALID_PARAMS};
use crate::protocol::revision::{self, Revision, HEADER_MISMATCH};

/// The stateless checks, in the specification's order; `Err` is the 400.
pub(super) fn check_stateless(
    request: &Request,
    version: Option<&str>,
    method: &str,
    params: &Map<String, Value>,
    id: &Value,
) -> Result<(), Response> {
    let refuse = |code: i64, message: &str, data: Option<Value>| {
        let reply = match data {
            Some(d) => jsonrpc::error_with_data(id.clone(), code, message, d),
            None => jsonrpc::error(id.clone(), code, message),
        };
        rpc_response(400, &reply)
    };
    let mismatch = |message: String| refuse(HEADER_MISMATCH, &message, None);
    let Some(version) = version else {
        return Err(mismatch(format!("the {VERSION_HEADER} header is required")));
    };
    let checked = revision::request_meta(params);
    if let Err(f) = &checked {
        if f.code == INVALID_PARAMS {
            return Err(refuse(f.code, &f.message, f.data.clone()));
        }
    }
    let named = revision::modern_version_named(params).unwrap_or("");
    if named != version {
        return Err(mismatch(format!(
            "header mismatch: {VERSION_HEADER} {:?} is not the _meta protocol version {:?}",
            clip(version),
            clip(named)
        )));
    }
    if let Err(f) = checked {
        return Err(refuse(f.code, &f.message, f.data));
    }
    let sent: Vec<&str> = headers(request, METHOD_HEADER)
        .into_iter()
        .map(str::trim)
        .collect();
    if sent.is_empty() || sent.iter().any(|m| *m != method) {
        return Err(mismatch(format!(
            "header mismatch: {METHOD_HEADER} must be present and equal the method {:?}",
            clip(method)
        )));
    }
    let named_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = named_field {
        let body = params.get(field).and_then(Value::as_str);
        let sent: Vec<Option<String>> = headers(request, NAME_HEADER)
            .into_iter()
            .map(decode_header_value)
            .collect();
        let agrees = !sent.is_empty()
            && sent
                .iter()
                .all(|v| v.is_some() && v.as_deref() == body && body.is_some());
        if !agrees {
            return Err(mismatch(format!(
                "header mismatch: {NAME_HEADER} must be present and equal params.{field}"
            )));
        }
    }
    Ok(())
}

/// 2026-07-28 (SEP-2243): the arguments of a `tools/call` that the tool's
/// input schema mirrors into headers (`x-mcp-header` on a top-level
/// string, integer or boolean property) must come with their
/// `Mcp-Param-{name}` header, equal to the argument once decoded (strict
/// Base64 inside `=?base64?…?=`, literal otherwise; integers compare as
/// numbers). An argument that is absent or null expects no header.
/// `Err` says what disagrees.
pub(super) fn check_param_headers(
    ctx: &Context,
    request: &Request,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), String> {
    if method != "tools/call" {
        return Ok(());
    }
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let tools = ctx.server.catalog().tools(Revision::V2026_07_28);
    let Some(properties) = tools
        .iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t["inputSchema"]["properties"].as_object())
    else {
        return Ok(());
    };
    let arguments = params.get("arguments").and_then(Value::as_object);
    for (property, schema) in properties {
        let Some(suffix) = schema.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        if !matches!(
            schema.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            // Not a valid annotation: not enforced.
            continue;
        }
        let Some(argument) = arguments
            .and_then(|a| a.get(property))
            .filter(|a| !a.is_null())
        else {
            continue;
        };
        let header_name = format!("{PARAM_HEADER_PREFIX}{suffix}");
        let sent: Vec<&str> = request
            .headers()
            .iter()
            .filter(|h| h.is(&header_name))
            .map(|h| h.value.as_str())
            .collect();
        if sent.is_empty() {
            return Err(format!(
                "header mismatch: arguments.{property} is in the body, so the {header_name} \
                 header is required"
            ));
        }
        for raw in sent {
            let Some(value) = decode_param_value(raw) else {
                return Err(format!(
                    "header mismatch: {header_name} is not valid =?base64?...?= (strict \
                     Base64 of UTF-8)"
                ));
            };
            let agrees = match argument {
                Value::String(s) => *s == value,
                Value::Bool(b) => value == b.to_string(),
                Value::Number(n) => value
                    .parse::<f64>()
                    .ok()
                    .zip(n.as_f64())
                    .is_some_and(|(h, b)| h == b),
                _ => false,
            };
            if !agrees {
                return Err(format!(
                    "header mismatch: {header_name} does not equal arguments.{property}"
                ));
            }
        }
    }
    Ok(())
}

/// An `Mcp-Param-*` value as meant: trimmed, and decoded when it is
/// exactly `=?base64?…?=` (the payload strict Base64: padded, standard
/// alphabet); `None` when such a payload is not valid Base64 of UTF-8.
fn decode_param_value(raw: &str) -> Option<String> {
    let v = raw.trim();
    let Some(payload) = v
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Some(v.to_string());
    };
    let padding = payload.bytes().rev().take_while(|&b| b == b'=').count();
    let data = &payload[..payload.len() - padding];
    let strict = payload.len() % 4 == 0
        && padding <= 2
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if !strict {
        return None;
    }
    crate::base64::decode(payload)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

/// A header value as sent: trimmed, and decoded when it uses the
/// `=?base64?…?=` form; `None` when that form does not decode to UTF-8.
fn decode_header_value(raw: &str) -> Option<String> {
    let v = raw.trim();
    match v
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => crate::base64::decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(v.to_string()),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_headers_decode_strict_base64_only_inside_the_wrapper() {
        assert_eq!(decode_param_value(" Hello ").as_deref(), Some("Hello"));
        assert_eq!(
            decode_param_value("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
        assert_eq!(decode_param_value("=?base64?SGVsbG8?="), None);
        assert_eq!(decode_param_value("=?base64?SGVs!!!bG8=?="), None);
        assert_eq!(
            decode_param_value("=?base64?SGVsbG8=").as_deref(),
            Some("=?base64?SGVsbG8=")
        );
        assert_eq!(decode_param_value("SGVsbG8=").as_deref(), Some("SGVsbG8="));
    }

    #[test]
    fn header_values_are_trimmed_and_base64_decoded() {
        assert_eq!(decode_header_value("  tool  ").as_deref(), Some("tool"));
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode_header_value("=?base64?!!!?="), None);
        assert_eq!(
            decode_header_value("=?base64?abc").as_deref(),
            Some("=?base64?abc")
        );
    }
}
