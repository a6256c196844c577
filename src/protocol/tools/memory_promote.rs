//! `alayasiki_memory_promote`: copy a working-memory session's notes into
//! persistent memory as documents, idempotently.

use serde_json::{json, Map, Value};

use super::schema::{object, session_id};
use super::{output, Args, Tool};
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
    output_schema,
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

/// What a promotion wrote (`PromoteReceipt`).
fn output_schema() -> Value {
    use output::{boolean, count, list, record, string};
    let document = record(
        "A note and the document that keeps it.",
        json!({
            "note_id": string("The note's id, `<session_id>/<seq>`."),
            "document_id": string("The document's id in persistent memory."),
            "state": output::document_state(),
            "idempotent_replay": boolean("True when the note was promoted earlier: its document was returned, nothing new stored."),
            "error": string("Why indexing failed or is deferred, as alayasiki_ingest reports it; absent otherwise.")
        }),
        &["note_id", "document_id", "state", "idempotent_replay"],
    );
    record(
        "What the promotion stored.",
        json!({
            "session_id": string("The session promoted."),
            "notes": count("Notes in the session."),
            "stored": count("Documents this call stored."),
            "replayed": count("Notes promoted earlier, whose documents were returned."),
            "documents": list("One per note, in write order.", document),
            "nodes_not_promoted": count("Graph nodes left in the session (persistent memory has no explicit graph)."),
            "edges_not_promoted": count("Graph edges left in the session.")
        }),
        &[
            "session_id",
            "notes",
            "stored",
            "replayed",
            "documents",
            "nodes_not_promoted",
            "edges_not_promoted",
        ],
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
