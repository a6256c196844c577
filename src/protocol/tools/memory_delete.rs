//! `alayasiki_memory_delete`: end a working-memory session before it
//! expires.

use serde_json::{json, Map, Value};

use super::schema::{object, session_id};
use super::{output, Args, Tool};
use crate::error::Result;
use crate::service::{Memory, Permission};

pub static TOOL: Tool = Tool {
    name: "alayasiki_memory_delete",
    description: "Delete a working-memory session written with alayasiki_memory_write before it \
expires: its notes, nodes and edges are gone at once, and what it was charged returns to the \
working-memory budget (sessions otherwise expire on their own after their time to live). \
Persistent memory is not touched: documents promoted from the session stay (alayasiki_forget \
removes them). Reports what was removed.",
    input_schema: schema,
    output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &["session_id"];

fn schema() -> Value {
    object(
        None,
        json!({"session_id": session_id("The session to delete.")}),
        &["session_id"],
    )
}

/// What a deletion removed (`DeletedSession`).
fn output_schema() -> Value {
    use output::{count, record, string};
    record(
        "What the deletion removed.",
        json!({
            "session_id": string("The session deleted."),
            "notes": count("Notes it held."),
            "nodes": count("Graph nodes it held."),
            "edges": count("Graph edges it held."),
            "writes": count("Writes it was charged for, returned to the budget."),
            "bytes_released": count("Bytes it was charged for, returned to the budget.")
        }),
        &[
            "session_id",
            "notes",
            "nodes",
            "edges",
            "writes",
            "bytes_released",
        ],
    )
}

/// Parses `alayasiki_memory_delete` arguments: the session's id.
pub fn parse(map: &Map<String, Value>) -> Result<String> {
    let args = Args::new(map, ARGS)?;
    Ok(args.required_string("session_id")?.to_string())
}

fn run(memory: &Memory<'_>, session_id: String) -> Result<Value> {
    Ok(serde_json::to_value(memory.memory_delete(&session_id)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_id_is_required_and_nothing_else_taken() {
        let ok = parse(json!({"session_id": "s"}).as_object().unwrap()).unwrap();
        assert_eq!(ok, "s");
        assert!(parse(json!({}).as_object().unwrap()).is_err());
        assert!(parse(
            json!({"session_id": "s", "wait": true})
                .as_object()
                .unwrap()
        )
        .is_err());
    }
}
