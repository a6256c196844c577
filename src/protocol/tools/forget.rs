//! `alayasiki_forget`: permanently delete documents from memory.
//!
//! Exactly one selector: `document_id`, `idempotency_key` or `source`
//! (every document whose source is exactly that). The deletion itself is
//! `Memory::forget`, shared with the HTTP API and the CLI.

use serde_json::{json, Map, Value};

use super::output::{boolean, count, integer, list, record, string};
use super::schema::{label, object};
use super::{Args, Tool};
use crate::error::{Error, Result};
use crate::limits::{MAX_IDEMPOTENCY_KEY_BYTES, MAX_SOURCE_BYTES};
use crate::service::{DocumentSelector, Memory, Permission, FORGET_REPORT_ITEMS};

pub static TOOL: Tool = Tool {
    name: "alayasiki_forget",
    description: "Permanently delete documents from persistent memory: one by `document_id`, \
the one stored with an `idempotency_key`, or every document from a `source` (give exactly one). \
Its text, chunks, search index entries, vectors and original bytes are removed (the original is \
kept only if another document has identical bytes); afterwards no query or resource returns it. \
Cannot be undone. Use it when the user asks to forget or remove something, or when stored \
content is wrong and must not be used again.",
    input_schema: schema,
    output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &["document_id", "idempotency_key", "source"];

fn schema() -> Value {
    let mut schema = object(
        Some("Give exactly one of `document_id`, `idempotency_key` or `source`."),
        json!({
            "document_id": label("Id of the document to delete (as returned by alayasiki_ingest and in query evidence).", MAX_SOURCE_BYTES),
            "idempotency_key": label("Delete the document stored with this idempotency_key.", MAX_IDEMPOTENCY_KEY_BYTES),
            "source": label("Delete every document whose `source` is exactly this.", MAX_SOURCE_BYTES)
        }),
        &[],
    );
    // Exactly one selector: with the object closed, one property of three.
    schema["minProperties"] = json!(1);
    schema["maxProperties"] = json!(1);
    schema
}

/// What a forget deleted (`ForgetReport`). Forgetting nothing is a
/// `not_found` error, so a result always names at least one document.
fn output_schema() -> Value {
    let forgotten = record(
        "A deleted document.",
        json!({
            "document_id": string("The deleted document's id."),
            "chunks": count("Its chunks deleted."),
            "vectors": count("Its vectors deleted."),
            "original_deleted": boolean("False when another document of the tenant has identical bytes, so the original was kept.")
        }),
        &["document_id", "chunks", "vectors", "original_deleted"],
    );
    record(
        "What was deleted.",
        json!({
            "documents": integer("Documents deleted (at least one: forgetting nothing is a not_found error).", 1),
            "chunks": count("Chunks deleted, with their search index entries."),
            "vectors": count("Vectors deleted."),
            "originals_deleted": count("Original files deleted (an original another document shares is kept)."),
            "forgotten": list(
                &format!("The deleted documents, the first {FORGET_REPORT_ITEMS} of them (FORGET_REPORT_ITEMS); `documents` counts all."),
                forgotten,
            )
        }),
        &[
            "documents",
            "chunks",
            "vectors",
            "originals_deleted",
            "forgotten",
        ],
    )
}

/// Parses `alayasiki_forget` arguments (also the HTTP API's forget body).
pub fn parse(map: &Map<String, Value>) -> Result<DocumentSelector> {
    let args = Args::new(map, ARGS)?;
    let given: Vec<&str> = ARGS.iter().copied().filter(|k| args.has(k)).collect();
    let [field] = given.as_slice() else {
        return Err(Error::invalid(
            "give exactly one of `document_id`, `idempotency_key` or `source`",
        ));
    };
    let value = args.required_string(field)?.to_string();
    Ok(match *field {
        "document_id" => DocumentSelector::Id(value),
        "idempotency_key" => DocumentSelector::IdempotencyKey(value),
        _ => DocumentSelector::Source(value),
    })
}

fn run(memory: &Memory<'_>, selector: DocumentSelector) -> Result<Value> {
    Ok(serde_json::to_value(memory.forget(&selector)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<DocumentSelector> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn exactly_one_selector() {
        assert_eq!(
            parse_json(json!({"document_id": "doc_1"})).unwrap(),
            DocumentSelector::Id("doc_1".into())
        );
        assert_eq!(
            parse_json(json!({"source": "s", "document_id": null})).unwrap(),
            DocumentSelector::Source("s".into())
        );
        assert!(parse_json(json!({})).is_err());
        assert!(parse_json(json!({"document_id": "a", "source": "b"})).is_err());
        assert!(parse_json(json!({"document_id": 3})).is_err());
        assert!(parse_json(json!({"id": "a"})).is_err());
    }
}
