//! The two chat wire formats, and digging the JSON object out of a reply.
//!
//! - OpenAI-compatible `POST /v1/chat/completions`: the schema goes in
//!   `response_format: {type: "json_schema", json_schema: {name, strict,
//!   schema}}`; the reply is `choices[0].message.content`, a string.
//! - Ollama `POST /api/chat`: the schema goes in `format`; the reply is
//!   `message.content`, a string.
//!
//! Both are asked for temperature 0 and no streaming. A reply's content
//! must be one JSON object; a Markdown code fence around it (which some
//! models add whatever they are told) is tolerated, nothing else is.

use serde_json::{json, Value};

use super::Task;
use crate::model_endpoint::Api;

/// The request body for `task`.
pub fn request(api: Api, model: &str, task: &Task<'_>) -> Value {
    let messages = json!([
        {"role": "system", "content": task.system},
        {"role": "user", "content": task.user},
    ]);
    match api {
        Api::OpenAi => json!({
            "model": model,
            "messages": messages,
            "temperature": 0,
            "stream": false,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": task.name, "strict": true, "schema": task.schema},
            },
        }),
        Api::Ollama => json!({
            "model": model,
            "messages": messages,
            "stream": false,
            "format": task.schema,
            "options": {"temperature": 0},
        }),
    }
}

/// The JSON object a reply carries, if it carries exactly one.
pub fn reply_object(api: Api, response: &Value) -> Option<Value> {
    let content = match api {
        Api::OpenAi => response
            .get("choices")?
            .get(0)?
            .get("message")?
            .get("content")?,
        Api::Ollama => response.get("message")?.get("content")?,
    };
    parse_content(content.as_str()?)
}

/// Parses a reply's content as one JSON object, without or within a
/// Markdown code fence.
pub fn parse_content(content: &str) -> Option<Value> {
    let mut text = content.trim();
    if let Some(rest) = text.strip_prefix("```") {
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        text = rest.strip_suffix("```")?.trim();
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(schema: &Value) -> Task<'_> {
        Task {
            name: "t",
            system: "sys",
            user: "{\"q\":1}",
            schema,
        }
    }

    #[test]
    fn requests_carry_the_schema_where_each_api_wants_it() {
        let schema = json!({"type": "object"});
        let o = request(Api::OpenAi, "m", &task(&schema));
        assert_eq!(o["response_format"]["json_schema"]["schema"], schema);
        assert_eq!(o["response_format"]["type"], "json_schema");
        assert_eq!(o["messages"][1]["content"], "{\"q\":1}");
        let l = request(Api::Ollama, "m", &task(&schema));
        assert_eq!(l["format"], schema);
        assert_eq!(l["stream"], false);
        assert_eq!(l["model"], "m");
    }

    #[test]
    fn replies_of_both_apis_yield_their_object() {
        let openai =
            json!({"choices": [{"message": {"role": "assistant", "content": "{\"a\": 1}"}}]});
        assert_eq!(reply_object(Api::OpenAi, &openai), Some(json!({"a": 1})));
        let ollama =
            json!({"message": {"role": "assistant", "content": " {\"a\": 2} "}, "done": true});
        assert_eq!(reply_object(Api::Ollama, &ollama), Some(json!({"a": 2})));
        assert_eq!(reply_object(Api::Ollama, &openai), None);
        assert_eq!(reply_object(Api::OpenAi, &json!({"choices": []})), None);
        assert_eq!(
            reply_object(
                Api::OpenAi,
                &json!({"choices": [{"message": {"content": null, "refusal": "no"}}]})
            ),
            None
        );
    }

    #[test]
    fn content_must_be_one_object_fences_allowed() {
        assert_eq!(
            parse_content("```json\n{\"a\":1}\n```"),
            Some(json!({"a": 1}))
        );
        assert_eq!(parse_content("```\n{\"a\":1}```"), Some(json!({"a": 1})));
        assert_eq!(parse_content("[1, 2]"), None);
        assert_eq!(parse_content("Sure! {\"a\":1}"), None);
        assert_eq!(parse_content("{\"a\":1} {\"b\":2}"), None);
        assert_eq!(parse_content("```json\n{\"a\":1}"), None);
        assert_eq!(parse_content(""), None);
    }
}
