//! `alayasiki_memory_read`: a working-memory session's contents in write
//! order, or, with a `query`, ranked evidence from that session alone.

use serde_json::{json, Map, Value};

use super::query::{question, question_schema, top_k_schema};
use super::schema::session_id;
use super::{output, Args, Tool};
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
    output_schema,
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

/// Fields of a read without `query` (`SessionSnapshot::to_json`).
const CONTENTS: &[&str] = &[
    "session_id",
    "created_at",
    "updated_at",
    "expires_at",
    "writes",
    "bytes_charged",
    "notes",
    "nodes",
    "edges",
];

/// Fields of a search (`Memory::memory_search`).
const SEARCH: &[&str] = &["session_id", "query", "terms", "evidence", "budget"];

/// The session's contents, or (with `query`) evidence from it: one object
/// schema with the fields of both, and an `anyOf` saying which set a
/// result has.
fn output_schema() -> Value {
    use output::{count, integer, list, map, record, string, time};
    let written_by = || integer("The seq of the write that last set it.", 1);
    let properties = || map("Its properties, verbatim; absent if none were written.");
    let note = record(
        "A note, as written.",
        json!({
            "note_id": string("The note's id, `<session_id>/<seq>` (evidence names it as `document_id`)."),
            "seq": integer("The write that stored it (1-based).", 1),
            "media_type": string("The note's media type."),
            "text": string("The searchable text; evidence spans are byte offsets into it."),
            "content": string("The content as written, when it differs from `text` (JSON is searched as `path: value` lines); absent otherwise."),
            "file": record(
                "The uploaded file the note describes (its bytes are not kept); absent for text notes.",
                json!({
                    "filename": string("The file's name, if given."),
                    "bytes": count("The file's size in bytes."),
                    "sha256": string("SHA-256 of the file's bytes, in hex.")
                }),
                &["bytes", "sha256"],
            ),
            "metadata": map("The metadata written with it, verbatim."),
            "written_at": time("When it was written"),
            "chunks": count("Searchable passages of the note.")
        }),
        &[
            "note_id",
            "seq",
            "media_type",
            "text",
            "metadata",
            "written_at",
            "chunks",
        ],
    );
    let node = record(
        "A graph node, as last written.",
        json!({
            "id": string("The node's id in this session."),
            "label": string("The node's label."),
            "kind": string("The node's kind; absent if none was written."),
            "properties": properties(),
            "written_by": written_by()
        }),
        &["id", "label", "written_by"],
    );
    let edge = record(
        "A graph edge, as last written.",
        json!({
            "from": string("Id of the edge's source node."),
            "to": string("Id of the edge's target node."),
            "relation": string("The relation."),
            "properties": properties(),
            "written_by": written_by()
        }),
        &["from", "to", "relation", "written_by"],
    );
    let mut schema = record(
        "Without `query`: the session's contents (session_id, created_at, updated_at, expires_at, writes, bytes_charged, notes, nodes, edges). With `query`: evidence from the session (session_id, query, terms, evidence, budget, and lane_errors when a lane could not run).",
        json!({
            "session_id": string("The session read."),
            "created_at": time("Without query: when the session was created"),
            "updated_at": time("Without query: when it was last written"),
            "expires_at": time("Without query: when it expires unless written again"),
            "writes": count("Without query: writes charged to it."),
            "bytes_charged": count("Without query: bytes charged to it against the shared budget."),
            "notes": list("Without query: its notes, in write order.", note),
            "nodes": list("Without query: its graph nodes.", node),
            "edges": list("Without query: its graph edges.", edge),
            "query": string("With query: the question, as asked."),
            "terms": list("With query: the question's search terms.", string("A term.")),
            "evidence": output::evidence("With query: ranked evidence from the session's notes, best first."),
            "budget": output::budget("With query: how the character budget for evidence text was spent."),
            "lane_errors": output::lane_errors(&["vector"])
        }),
        &["session_id"],
    );
    schema["anyOf"] = json!([
        {"description": "A read without `query`.", "required": CONTENTS},
        {"description": "A read with `query`.", "required": SEARCH}
    ]);
    schema
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
