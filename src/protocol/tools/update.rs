//! `alayasiki_update`: store a new version of a document, with what the
//! caller gives changed and the rest kept (`Memory::update`). The content
//! takes the same forms as `alayasiki_ingest`'s (flat `content`, or the
//! canonical `Text` / `File` objects); the other fields sit at the top.

use serde_json::{json, Map, Value};

use super::ingest::content_form;
use super::schema::{choice, free_form, label, object, text};
use super::{Args, Tool};
use crate::error::{Error, Result};
use crate::ingest::media::TEXT_MEDIA_TYPES;
use crate::limits::{
    MAX_CONTENT_BYTES, MAX_IDEMPOTENCY_KEY_BYTES, MAX_METADATA_BYTES, MAX_SOURCE_BYTES,
    MAX_TITLE_BYTES,
};
use crate::service::{Memory, Permission, UpdateRequest};

pub static TOOL: Tool = Tool {
    name: "alayasiki_update",
    description: "Change a stored document: stores a new version of `document_id` with what you \
give (`content`, `metadata`, `title`, `source`) and everything else kept (content kept means the \
same original bytes; `metadata` given replaces it whole), and supersedes the old version. The new \
version has its own id, returned with `supersedes` naming the old one; the old version stays \
readable as history (alayasiki://documents/{id} lists every version) but leaves default search, \
and facts only it stated lose their support. Use it when a stored fact changed (\"the backups \
now run at 03:00\"). A version already superseded is refused, naming its current version.",
    input_schema: schema,
    output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &[
    "document_id",
    "content",
    "media_type",
    "Text",
    "File",
    "metadata",
    "title",
    "source",
    "wait",
    "idempotency_key",
];

fn schema() -> Value {
    let ingest = (super::find(super::INGEST)
        .expect("the ingest tool")
        .input_schema)();
    let props = &ingest["properties"];
    let content = text(
        &format!("New text content (at most {MAX_CONTENT_BYTES} bytes, MAX_CONTENT_BYTES); omit to keep the current version's."),
        MAX_CONTENT_BYTES,
    );
    object(
        Some("Give `document_id` and at least one of `content` (or `Text` / `File`), `metadata`, `title` or `source`. With `Text` or `File`, only the content goes inside that object."),
        json!({
            "document_id": label("The document to change: its current version's id (as alayasiki_ingest returned it, or in query evidence).", MAX_SOURCE_BYTES),
            "content": content,
            "media_type": choice("Type of `content` (default text/plain).", TEXT_MEDIA_TYPES),
            "Text": object(
                Some("New content in the canonical text shape: {content, media_type?}."),
                json!({
                    "content": props["Text"]["properties"]["content"].clone(),
                    "media_type": props["Text"]["properties"]["media_type"].clone()
                }),
                &["content"],
            ),
            "File": object(
                Some("New content as a file: {filename?, mime_type?, content}, typed as in alayasiki_ingest."),
                json!({
                    "filename": props["File"]["properties"]["filename"].clone(),
                    "mime_type": props["File"]["properties"]["mime_type"].clone(),
                    "content": props["File"]["properties"]["content"].clone()
                }),
                &["content"],
            ),
            "metadata": free_form(&format!("New metadata, replacing the current version's whole (at most {MAX_METADATA_BYTES} bytes as compact JSON, MAX_METADATA_BYTES); omit to keep it.")),
            "title": label(&format!("New title (at most {MAX_TITLE_BYTES} bytes, MAX_TITLE_BYTES); omitted, the title is kept with the content, or taken from new content as an ingest takes it."), MAX_TITLE_BYTES),
            "source": label(&format!("New source (at most {MAX_SOURCE_BYTES} bytes, MAX_SOURCE_BYTES); omit to keep it."), MAX_SOURCE_BYTES),
            "wait": {"type": "boolean", "description": "Wait until the new version is searchable (default true); false returns at once with state `pending`."},
            "idempotency_key": label(&format!("Caller-chosen key (at most {MAX_IDEMPOTENCY_KEY_BYTES} bytes, MAX_IDEMPOTENCY_KEY_BYTES): a retry of the same update with the same key returns the first result instead of refusing a version already superseded."), MAX_IDEMPOTENCY_KEY_BYTES)
        }),
        &["document_id"],
    )
}

/// Parses `alayasiki_update` arguments (also the body of
/// `PATCH /v1/documents/{id}`, with the id from the path).
pub fn parse(map: &Map<String, Value>) -> Result<UpdateRequest> {
    let args = Args::new(map, ARGS)?;
    let content = content_form(&args, &[], MAX_CONTENT_BYTES, "MAX_CONTENT_BYTES")?
        .map(|(content, _)| content);
    if content.is_none() && args.has("media_type") {
        return Err(Error::invalid(
            "`media_type` types new `content`: give it with `content`",
        ));
    }
    Ok(UpdateRequest {
        document_id: args.required_string("document_id")?.to_string(),
        content,
        metadata: args.object("metadata")?.cloned(),
        title: args.string("title")?.map(str::to_string),
        source: args.string("source")?.map(str::to_string),
        wait: args.boolean("wait")?.unwrap_or(true),
        idempotency_key: args.string("idempotency_key")?.map(str::to_string),
    })
}

/// The new version's receipt: an ingest's, but never a duplicate's (an
/// update stores its version whatever else holds the same content).
fn output_schema() -> Value {
    let mut schema = super::ingest::output_schema();
    if let Some(props) = schema["properties"].as_object_mut() {
        props.remove("duplicate_of");
    }
    schema["description"] = json!("The new version's receipt.");
    schema
}

fn run(memory: &Memory<'_>, req: UpdateRequest) -> Result<Value> {
    Ok(serde_json::to_value(memory.update(req)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<UpdateRequest> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn content_is_optional_and_takes_the_ingest_forms() {
        let kept = parse_json(json!({"document_id": "d", "metadata": {"a": 1}})).unwrap();
        assert!(kept.content.is_none() && kept.metadata.is_some());
        let text = parse_json(json!({"document_id": "d", "Text": {"content": "x"}})).unwrap();
        assert!(text.content.is_some());
        let file = parse_json(json!({"document_id": "d", "File": {"content": "aGk="}})).unwrap();
        assert!(file.content.is_some());
    }

    #[test]
    fn the_document_id_is_required_and_companions_stay_outside_the_content() {
        assert!(parse_json(json!({"content": "x"})).is_err());
        let inside =
            parse_json(json!({"document_id": "d", "Text": {"content": "x", "metadata": {}}}));
        assert!(inside.is_err());
    }
}
