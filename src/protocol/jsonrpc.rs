//! JSON-RPC 2.0 framing-independent message handling: classify one parsed
//! JSON value as a request, notification or response, and build replies.
//!
//! Ids are echoed exactly as received, with their JSON type (`"1"` stays a
//! string, `1` a number). Ids that are neither strings nor integers (null,
//! floats, booleans, objects) make the message an invalid request.

use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: `resources/read` of an unknown URI.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response to a server-initiated request. This server sends none,
    /// so these are dropped.
    Response,
}

/// Classifies one JSON value; `Err` is the error reply to send.
pub fn classify(value: Value) -> Result<Incoming, Value> {
    let Value::Object(mut obj) = value else {
        return Err(error(
            Value::Null,
            INVALID_REQUEST,
            "a JSON-RPC message must be an object",
        ));
    };
    let id = obj.remove("id");
    let id_is_valid = |id: &Value| match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    let reply_id = match &id {
        Some(v) if id_is_valid(v) => v.clone(),
        _ => Value::Null,
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error(
            reply_id,
            INVALID_REQUEST,
            "\"jsonrpc\" must be \"2.0\"",
        ));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return Err(error(
                reply_id,
                INVALID_REQUEST,
                "\"method\" must be a string",
            ))
        }
        None => {
            if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) {
                return Ok(Incoming::Response);
            }
            return Err(error(reply_id, INVALID_REQUEST, "missing \"method\""));
        }
    };
    if let Some(id) = &id {
        if !id_is_valid(id) {
            return Err(error(
                Value::Null,
                INVALID_REQUEST,
                "\"id\" must be a string or an integer",
            ));
        }
    }
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(Value::Array(_)) => {
            return match id {
                Some(id) => Err(error(
                    id,
                    INVALID_PARAMS,
                    "params must be an object (named parameters)",
                )),
                // Notifications are never answered, even when malformed.
                None => Ok(Incoming::Notification {
                    method,
                    params: Map::new(),
                }),
            };
        }
        Some(_) => {
            return Err(error(
                reply_id,
                INVALID_REQUEST,
                "\"params\" must be an object",
            ))
        }
    };
    Ok(match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    })
}

/// The `id` of a message, for a reply to it: null when it has none, is a
/// batch, or has one no reply may carry (neither a string nor an integer,
/// as [`classify`] reads ids).
pub fn id_of(value: &Value) -> Value {
    match value.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
        _ => Value::Null,
    }
}

/// The `id` of a message not yet parsed, read without building its values
/// (members other than `id` are skipped, not kept): for refusing a message
/// too costly to parse. Null when it has none, is not a JSON object, or
/// has an id no reply may carry (as [`id_of`]).
pub fn peek_id(frame: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<Value>,
    }
    serde_json::from_slice::<IdOnly>(frame)
        .ok()
        .and_then(|m| m.id)
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .unwrap_or(Value::Null)
}

/// A success reply.
pub fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error reply.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// An error reply with `data`.
pub fn error_with_data(id: Value, code: i64, message: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

/// `reply` with the `"id": null` of an error answering a message whose id
/// could not be read taken out (in a batch of replies, each), as MCP asks
/// from revision 2025-11-25 on, and Streamable HTTP on every revision
/// ("a JSON-RPC error response that has no id"). JSON-RPC 2.0 and the
/// older revisions keep the null, so each transport decides when to call
/// this.
pub fn omit_unread_id(mut reply: Value) -> Value {
    fn omit(one: &mut Value) {
        if is_unread(one) {
            one.as_object_mut().map(|m| m.remove("id"));
        }
    }
    match &mut reply {
        Value::Array(items) => items.iter_mut().for_each(omit),
        one => omit(one),
    }
    reply
}

/// Whether [`omit_unread_id`] would change `reply`.
pub fn has_unread_id(reply: &Value) -> bool {
    match reply {
        Value::Array(items) => items.iter().any(is_unread),
        one => is_unread(one),
    }
}

fn is_unread(one: &Value) -> bool {
    one.get("id") == Some(&Value::Null) && one.get("error").is_some()
}

/// A notification from the server.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(reply: &Value) -> i64 {
        reply["error"]["code"].as_i64().unwrap()
    }

    #[test]
    fn ids_keep_their_json_type() {
        for id in [
            json!(1),
            json!("1"),
            json!(0),
            json!(""),
            json!(u64::MAX),
            json!(-5),
        ] {
            let m = classify(json!({"jsonrpc":"2.0","id":id.clone(),"method":"ping"})).unwrap();
            assert_eq!(
                m,
                Incoming::Request {
                    id,
                    method: "ping".into(),
                    params: Map::new()
                }
            );
        }
    }

    #[test]
    fn unread_ids_are_omitted_only_from_errors() {
        let unread = error(Value::Null, PARSE_ERROR, "x");
        assert!(omit_unread_id(unread).get("id").is_none());
        let read = error(json!(7), INVALID_PARAMS, "x");
        assert_eq!(omit_unread_id(read)["id"], 7);
        let batch = json!([
            error(Value::Null, PARSE_ERROR, "x"),
            result(json!("a"), json!({}))
        ]);
        let batch = omit_unread_id(batch);
        assert!(batch[0].get("id").is_none());
        assert_eq!(batch[1]["id"], "a");
        // Only errors: a result's id is never touched.
        let odd = json!({"jsonrpc": "2.0", "id": null, "result": {}});
        assert!(!has_unread_id(&odd));
        assert_eq!(omit_unread_id(odd.clone()), odd);
    }

    #[test]
    fn bad_ids_are_invalid_requests() {
        for id in [
            json!(null),
            json!(1.5),
            json!(true),
            json!([1]),
            json!({"a":1}),
        ] {
            let reply = classify(json!({"jsonrpc":"2.0","id":id,"method":"ping"})).unwrap_err();
            assert_eq!(code(&reply), INVALID_REQUEST);
            assert_eq!(reply["id"], Value::Null);
        }
    }

    #[test]
    fn replies_carry_only_ids_a_reply_may_carry() {
        for id in [json!(7), json!("7"), json!(u64::MAX)] {
            assert_eq!(id_of(&json!({"jsonrpc":"2.0","id":id.clone()})), id);
        }
        for id in [
            json!(1.5),
            json!(true),
            json!([1]),
            json!({"a":1}),
            json!(null),
        ] {
            assert_eq!(id_of(&json!({"jsonrpc":"2.0","id":id})), Value::Null);
        }
        assert_eq!(id_of(&json!([{"id": 1}])), Value::Null);
        assert_eq!(peek_id(br#"{"id": "a", "x": [0]}"#), json!("a"));
        assert_eq!(peek_id(br#"{"id": 3, "x": [0]}"#), json!(3));
        for frame in [
            &br#"{"id": 1.5}"#[..],
            br#"{"id": true}"#,
            br#"[{"id": 1}]"#,
        ] {
            assert_eq!(peek_id(frame), Value::Null);
        }
    }

    #[test]
    fn missing_method_or_version_is_invalid() {
        let r = classify(json!({"jsonrpc":"2.0","id":7})).unwrap_err();
        assert_eq!((code(&r), r["id"].clone()), (INVALID_REQUEST, json!(7)));
        let r = classify(json!({"id":7,"method":"ping"})).unwrap_err();
        assert_eq!(code(&r), INVALID_REQUEST);
        let r = classify(json!({"jsonrpc":"2.0","id":7,"method":5})).unwrap_err();
        assert_eq!(code(&r), INVALID_REQUEST);
    }

    #[test]
    fn notifications_and_responses_are_told_apart() {
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Incoming::Notification { .. })
        ));
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","id":3,"result":{}})),
            Ok(Incoming::Response)
        );
    }

    #[test]
    fn positional_params_are_invalid_params() {
        let r =
            classify(json!({"jsonrpc":"2.0","id":"a","method":"ping","params":[1]})).unwrap_err();
        assert_eq!((code(&r), r["id"].clone()), (INVALID_PARAMS, json!("a")));
        let r = classify(json!({"jsonrpc":"2.0","id":"a","method":"ping","params":3})).unwrap_err();
        assert_eq!(code(&r), INVALID_REQUEST);
    }
}
