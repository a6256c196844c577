//! `alayasiki_memory_promote`: copy a working-memory session's notes into
//! persistent memory as documents, idempotently.

use serde_json::{json, Map, Value};

use super::schema::{object, session_id};
use super::{Args, Tool};
use crate::error::Result;
use crate::service::{Memory, Permission};

pub static TOOL: Tool = Tool {
    name: "alayasiki_memory_promote",
    description: "Keep a working-memory session: copy each of its notes into persistent memory as \
a document (through the same path as alayasiki_ingest, source `working-memory:<session_id>`), so \
alayasiki_query finds them after the session expires. Idempotent: promoting again stores nothing \
new and returns the same document ids. Reports each note's document id and whether it was \
already promoted. Nodes and edges stay in the session.",
    input_schema: schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &["session_id", "wait"];

fn schema() -> Value {
    object(
        None,
        json!({
            "session_id": session_id("The session to promote."),
            "wait": {"type": "boolean", "description": "Wait until each document is searchable (default true); false returns at once with state `pending`."}
        }),
        &["session_id"],
    )
}

/// A validated `alayasiki_memory_promote` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPromote {
    pub session_id: String,
    pub wait: bool,
}

/// Parses `alayasiki_memory_promote` arguments.
pub fn parse(map: &Map<String, Value>) -> Result<MemoryPromote> {
    let args = Args::new(map, ARGS)?;
    Ok(MemoryPromote {
        session_id: args.required_string("session_id")?.to_string(),
        wait: args.boolean("wait")?.unwrap_or(true),
    })
}

fn run(memory: &Memory<'_>, req: MemoryPromote) -> Result<Value> {
    Ok(serde_json::to_value(
        memory.memory_promote(&req.session_id, req.wait)?,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_id_is_required_and_wait_defaults_to_true() {
        let p = parse(json!({"session_id": "s"}).as_object().unwrap()).unwrap();
        assert!(p.wait);
        assert!(parse(json!({}).as_object().unwrap()).is_err());
        assert!(parse(
            json!({"session_id": "s", "wait": "no"})
                .as_object()
                .unwrap()
        )
        .is_err());
    }
}
