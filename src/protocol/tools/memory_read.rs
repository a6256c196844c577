//! `alayasiki_memory_read`: a working-memory session's contents in write
//! order, or, with a `query`, ranked evidence from that session alone.

use serde_json::{json, Map, Value};

use super::query::{question, question_schema, top_k_schema};
use super::schema::session_id;
use super::{Args, Tool};
use crate::error::{Error, Result};
use crate::limits::{DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K};
use crate::service::{Memory, Permission};

pub static TOOL: Tool = Tool {
    name: "alayasiki_memory_read",
    description: "Read a working-memory session written with alayasiki_memory_write. Without \
`query`: its notes in write order, its nodes and edges, and when it expires. With `query`: ranked \
evidence from the session only (note id, byte span into the note, text, metadata, score), cited \
like persistent evidence. To search the session and persistent memory together, use \
alayasiki_query with `session_id`.",
    input_schema: schema,
    permission: Permission::Query,
    mutates: false,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &["session_id", "query", "top_k"];

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "session_id": session_id("The session to read."),
            "query": question_schema("A question to rank the session's notes by"),
            "top_k": top_k_schema("With `query` only: most evidence items to return")
        },
        "required": ["session_id"],
        "additionalProperties": false
    })
}

/// A validated `alayasiki_memory_read` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRead {
    pub session_id: String,
    pub query: Option<String>,
    pub top_k: usize,
}

/// Parses `alayasiki_memory_read` arguments.
pub fn parse(map: &Map<String, Value>) -> Result<MemoryRead> {
    let args = Args::new(map, ARGS)?;
    let session_id = args.required_string("session_id")?.to_string();
    let query = question(&args)?.map(str::to_string);
    let top_k = args.integer("top_k", MIN_TOP_K.into(), MAX_TOP_K.into())?;
    if top_k.is_some() && query.is_none() {
        return Err(Error::invalid(
            "`top_k` ranks search results; give it with `query`",
        ));
    }
    Ok(MemoryRead {
        session_id,
        query,
        top_k: top_k.unwrap_or(DEFAULT_TOP_K.into()) as usize,
    })
}

fn run(memory: &Memory<'_>, req: MemoryRead) -> Result<Value> {
    match &req.query {
        None => Ok(memory.memory_session(&req.session_id)?.to_json()),
        Some(q) => memory.memory_search(&req.session_id, q, req.top_k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<MemoryRead> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn query_and_top_k_are_optional_together() {
        let r = parse_json(json!({"session_id": "s"})).unwrap();
        assert_eq!((r.query, r.top_k), (None, DEFAULT_TOP_K as usize));
        let r = parse_json(json!({"session_id": "s", "query": "q", "top_k": 3})).unwrap();
        assert_eq!((r.query.as_deref(), r.top_k), (Some("q"), 3));
        assert!(parse_json(json!({"session_id": "s", "top_k": 3})).is_err());
        assert!(parse_json(json!({"session_id": "s", "query": " "})).is_err());
        assert!(parse_json(json!({"query": "q"})).is_err());
    }
}
