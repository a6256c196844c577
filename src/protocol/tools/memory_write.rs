//! `alayasiki_memory_write`: add a note (and/or graph nodes and edges) to
//! a working-memory session.
//!
//! Content takes the same forms as `alayasiki_ingest` (flat `content`, or
//! the canonical `Text` / `File` objects; File content as base64 or a byte
//! array), parsed by the same code, with working memory's smaller limit.

use serde_json::{json, Map, Value};

use super::ingest::content_form;
use super::schema::{choice, file_content, free_form, label, object, session_id, text};
use super::{output, Args, Tool};
use crate::error::Result;
use crate::ingest::media::TEXT_MEDIA_TYPES;
use crate::limits::{
    MAX_FILENAME_BYTES, MAX_SESSION_ID_BYTES, MAX_WM_CONTENT_BYTES, MAX_WM_GRAPH_BYTES,
    MAX_WM_METADATA_BYTES, MAX_WM_NAME_BYTES,
};
use crate::service::working_memory::{EdgeInput, NodeInput};
use crate::service::{Memory, MemoryWrite, Permission};

pub static TOOL: Tool = Tool {
    name: "alayasiki_memory_write",
    description: "Write to a working-memory session: a scratchpad for the task at hand \
(notes, intermediate findings, small files), searchable like memory but kept out of it, and gone \
after the session is idle for its time-to-live (30 minutes by default) unless promoted with \
alayasiki_memory_promote. Pick any `session_id` (letters, digits, . _ : -); only your identity \
can see it. Give `content` (text; Markdown or JSON via `media_type`) or the canonical \
`Text`/`File` shape; image and audio files are accepted when metadata describes them (caption, \
alt_text, description, ocr_text or transcript), and that text is what is searched. Optionally add \
`nodes` and `edges` to the session's graph. At most 64 KiB of content and 4 KiB of metadata per \
write; store documents with alayasiki_ingest instead.",
    input_schema: schema,
    output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &[
    "session_id",
    "content",
    "media_type",
    "metadata",
    "Text",
    "File",
    "nodes",
    "edges",
];

fn schema() -> Value {
    let properties = || free_form("Arbitrary JSON object.");
    let name = |d: &str| {
        label(
            &format!("{d} (at most {MAX_WM_NAME_BYTES} bytes, MAX_WM_NAME_BYTES)."),
            MAX_WM_NAME_BYTES,
        )
    };
    let metadata = || {
        free_form(&format!(
            "JSON object kept with the note and returned with evidence (at most \
             {MAX_WM_METADATA_BYTES} bytes as compact JSON, MAX_WM_METADATA_BYTES). For image and \
             audio files, `caption`, `alt_text`, `description`, `ocr_text` and `transcript` are \
             the searchable text."
        ))
    };
    let content = text(
        &format!("The note's text (at most {MAX_WM_CONTENT_BYTES} bytes, MAX_WM_CONTENT_BYTES)."),
        MAX_WM_CONTENT_BYTES,
    );
    let media_type = choice("Type of `content` (default text/plain).", TEXT_MEDIA_TYPES);
    object(
        Some("Give `content`, `Text` or `File` (at most one of them), and/or `nodes` and `edges`. With `Text` or `File`, `metadata` goes inside that object."),
        json!({
            "session_id": session_id(&format!("The session to write to (1-{MAX_SESSION_ID_BYTES} of A-Z a-z 0-9 . _ : -); created by the first write.")),
            "content": content,
            "media_type": media_type,
            "metadata": metadata(),
            "Text": object(
                Some("Canonical text note: {content, media_type?, metadata?}."),
                json!({"content": content, "media_type": media_type, "metadata": metadata()}),
                &["content"],
            ),
            "File": object(
                Some("Canonical file: {filename?, mime_type?, content (base64 string or array of bytes), metadata?}. Text, Markdown and JSON files, or image/* and audio/* files described by metadata. Type comes from mime_type, else the filename's extension, else the bytes."),
                json!({
                    "filename": {"type": "string", "maxLength": MAX_FILENAME_BYTES, "description": format!("The file's name (at most {MAX_FILENAME_BYTES} bytes, MAX_FILENAME_BYTES).")},
                    "mime_type": {"type": "string", "description": format!("The file's media type: {}, image/* or audio/* (or application/octet-stream to tell it from the bytes).", TEXT_MEDIA_TYPES.join(", "))},
                    "content": file_content(MAX_WM_CONTENT_BYTES, "MAX_WM_CONTENT_BYTES"),
                    "metadata": metadata()
                }),
                &["content"],
            ),
            "nodes": {
                "type": "array",
                "description": format!("Graph nodes to add: [{{id, label, kind?, properties?}}]; nodes and edges together at most {MAX_WM_GRAPH_BYTES} bytes as compact JSON (MAX_WM_GRAPH_BYTES). A node id written again replaces that node; ids within one write are unique."),
                "items": object(
                    None,
                    json!({
                        "id": name("The node's id in this session"),
                        "label": name("The node's label"),
                        "kind": name("The node's kind"),
                        "properties": properties()
                    }),
                    &["id", "label"],
                )
            },
            "edges": {
                "type": "array",
                "description": "Graph edges between this session's nodes: [{from, to, relation, properties?}]. The same from, relation and to written again replaces that edge.",
                "items": object(
                    None,
                    json!({
                        "from": name("Id of the edge's source node"),
                        "to": name("Id of the edge's target node"),
                        "relation": name("The relation"),
                        "properties": properties()
                    }),
                    &["from", "to", "relation"],
                )
            }
        }),
        &["session_id"],
    )
}

/// What a write stored (`WriteReceipt`).
fn output_schema() -> Value {
    use output::{count, integer, list, one_of, record, string, time};
    record(
        "What the write stored.",
        json!({
            "session_id": string("The session written to."),
            "seq": integer("The write's position in the session (1-based).", 1),
            "note_id": string("The note's id, `<session_id>/<seq>` (evidence names it as `document_id`); present when the write had content."),
            "media_type": string("The note's media type; present when the write had content."),
            "chunks": count("Searchable passages of the note; present when the write had content."),
            "search_lanes": list(
                "Lanes that can find the note: keyword, plus vector unless embedding it failed; present when the write had content.",
                one_of("A lane.", &["keyword", "vector"]),
            ),
            "nodes": count("Graph nodes this write added or replaced."),
            "edges": count("Graph edges this write added or replaced."),
            "bytes_charged": count("Bytes this write counts against the shared working-memory budget."),
            "expires_at": time("When the session expires unless written again")
        }),
        &[
            "session_id",
            "seq",
            "nodes",
            "edges",
            "bytes_charged",
            "expires_at",
        ],
    )
}

/// Parses `alayasiki_memory_write` arguments.
pub fn parse(map: &Map<String, Value>) -> Result<MemoryWrite> {
    let args = Args::new(map, ARGS)?;
    let session_id = args.required_string("session_id")?.to_string();
    let form = content_form(
        &args,
        &["metadata"],
        MAX_WM_CONTENT_BYTES,
        "MAX_WM_CONTENT_BYTES",
    )?;
    let (content, metadata) = match form {
        Some((content, fields)) => (
            Some(content),
            fields.object("metadata")?.cloned().unwrap_or_default(),
        ),
        // Without content, top-level metadata has nothing to describe; the
        // service says so.
        None => (None, args.object("metadata")?.cloned().unwrap_or_default()),
    };
    let nodes = match args.value("nodes") {
        Some(v) => NodeInput::parse_list(v)?,
        None => Vec::new(),
    };
    let edges = match args.value("edges") {
        Some(v) => EdgeInput::parse_list(v)?,
        None => Vec::new(),
    };
    Ok(MemoryWrite {
        session_id,
        content,
        metadata,
        nodes,
        edges,
    })
}

fn run(memory: &Memory<'_>, req: MemoryWrite) -> Result<Value> {
    Ok(serde_json::to_value(memory.memory_write(req)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Content;

    fn parse_json(v: Value) -> Result<MemoryWrite> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn flat_and_canonical_forms_agree() {
        let flat =
            parse_json(json!({"session_id": "s", "content": "hi", "metadata": {"a": 1}})).unwrap();
        let canon =
            parse_json(json!({"session_id": "s", "Text": {"content": "hi", "metadata": {"a": 1}}}))
                .unwrap();
        for w in [flat, canon] {
            assert!(matches!(w.content, Some(Content::Text { ref text, .. }) if text == "hi"));
            assert_eq!(w.metadata["a"], 1);
        }
    }

    #[test]
    fn ingest_only_fields_and_unknown_arguments_are_refused() {
        for bad in [
            json!({"session_id": "s", "content": "x", "idempotency_key": "k"}),
            json!({"session_id": "s", "Text": {"content": "x", "source": "s"}}),
            json!({"session_id": "s", "content": "x", "Text": {"content": "y"}}),
            json!({"content": "x"}),
            json!({"session_id": "s", "nodes": {"id": "a"}}),
        ] {
            assert!(parse_json(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn oversized_files_are_refused_before_decoding() {
        let at = "A".repeat(MAX_WM_CONTENT_BYTES / 3 * 4);
        assert!(parse_json(json!({"session_id": "s", "File": {"content": at}})).is_ok());
        let over = "A".repeat(MAX_WM_CONTENT_BYTES / 3 * 4 + 8);
        let err = parse_json(json!({"session_id": "s", "File": {"content": over}}))
            .err()
            .unwrap();
        assert!(err.client_message().contains("MAX_WM_CONTENT_BYTES"));
    }

    #[test]
    fn graph_only_writes_parse() {
        let w = parse_json(json!({"session_id": "s",
            "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
            "edges": [{"from": "a", "to": "b", "relation": "r"}]}))
        .unwrap();
        assert!(w.content.is_none());
        assert_eq!((w.nodes.len(), w.edges.len()), (2, 1));
    }
}
