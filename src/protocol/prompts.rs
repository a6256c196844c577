//! MCP prompts: `alayasiki_reasoning`, a template that makes the model
//! consult memory and cite what it found.

use serde_json::{json, Map, Value};

use super::jsonrpc::INVALID_PARAMS;
use super::mcp::Fault;

/// Longest `question` argument (bytes).
pub const MAX_QUESTION_BYTES: usize = 4096;

pub fn list() -> Vec<Value> {
    vec![json!({
        "name": PROMPT,
        "description": "Answer a question grounded in persistent memory: query alayasiki first, \
    reason only from the returned evidence, and cite it.",
        "arguments": [{
            "name": "question",
            "description": "The question to answer.",
            "required": true
        }]
    })]
}

/// The prompt `prompts/get` serves.
const PROMPT: &str = "alayasiki_reasoning";

pub fn get(params: &Map<String, Value>) -> Result<Value, Fault> {
    let name = match params.get("name") {
        Some(Value::String(name)) => name,
        _ => {
            return Err(Fault::new(
                INVALID_PARAMS,
                format!("prompts/get needs `name`, a string: {PROMPT}"),
            ))
        }
    };
    if name != PROMPT {
        let shown: String = name.chars().take(64).collect();
        return Err(Fault::new(
            INVALID_PARAMS,
            format!("unknown prompt {shown:?}; the prompts are: {PROMPT}"),
        ));
    }
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(a)) => Some(a),
        Some(_) => {
            return Err(Fault::new(
                INVALID_PARAMS,
                "arguments must be an object of strings ({\"question\": \"...\"})",
            ))
        }
    };
    let question = match arguments.and_then(|a| a.get("question")) {
        Some(Value::String(q)) if !q.trim().is_empty() => q,
        Some(Value::String(_)) | None => {
            return Err(Fault::new(
                INVALID_PARAMS,
                "missing required argument: question",
            ))
        }
        Some(_) => {
            return Err(Fault::new(
                INVALID_PARAMS,
                "argument question must be a string",
            ))
        }
    };
    if question.len() > MAX_QUESTION_BYTES {
        return Err(Fault::new(
            INVALID_PARAMS,
            format!("question is longer than {MAX_QUESTION_BYTES} bytes"),
        ));
    }
    let text = format!(
        "Answer the question below using the alayasiki memory.\n\n\
1. Call the alayasiki_query tool with the question (mode \"answer\"). If the evidence is thin, \
query again with the key entities or terms rephrased.\n\
2. Reason only from the returned evidence. Do not fill gaps from general knowledge without \
saying so.\n\
3. Cite every claim with the evidence item it rests on, as [n] (the item's rank) or its \
chunk_id.\n\
4. If memory holds no evidence for the answer, say that plainly.\n\n\
Question: {question}"
    );
    Ok(json!({
        "description": "Memory-grounded answer with citations",
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_unknown_name_and_odd_arguments_are_named_as_such() {
        let message = |p: Value| get(p.as_object().unwrap()).unwrap_err().message;
        assert!(message(json!({})).contains("needs `name`"));
        assert!(message(json!({"name": 3})).contains("needs `name`"));
        let long = message(json!({"name": "x".repeat(10_000)}));
        assert!(
            long.contains("unknown prompt") && long.len() < 200,
            "{long}"
        );
        let odd = message(json!({"name": PROMPT, "arguments": [1]}));
        assert!(odd.contains("arguments must be an object"), "{odd}");
    }

    #[test]
    fn missing_question_is_invalid_params() {
        let p = json!({"name": "alayasiki_reasoning", "arguments": {}});
        let f = get(p.as_object().unwrap()).unwrap_err();
        assert_eq!(f.code, INVALID_PARAMS);
    }

    #[test]
    fn question_is_embedded_in_the_template() {
        let p = json!({"name": "alayasiki_reasoning", "arguments": {"question": "Who won?"}});
        let r = get(p.as_object().unwrap()).unwrap();
        assert!(r["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .ends_with("Question: Who won?"));
    }
}
