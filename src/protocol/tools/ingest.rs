//! `alayasiki_ingest`: store a document in persistent memory.
//!
//! Accepts either the flat form (`content` + optional fields) or the
//! canonical externally tagged shape shared with the HTTP API:
//! `{"Text": {"content", ...}}` or `{"File": {"filename", "mime_type",
//! "content" (base64 or a byte array), ...}}`.
//!
//! With `upload` instead of content (a file's name, size and SHA-256), it
//! stores nothing and answers with a one-time upload URL on the HTTP
//! server (see `service::uploads`); the file's bytes then bypass the
//! JSON-RPC message.

use serde_json::{json, Map, Value};

use super::args::whole_number;
use super::schema::{choice, file_content, free_form, label, max_base64_chars, object, text};
use super::{output, Args, Tool};
use crate::base64;
use crate::error::{Error, Result};
use crate::ingest::media::{SUPPORTED_MEDIA_TYPES, TEXT_MEDIA_TYPES};
use crate::limits::MAX_BYTE_ARRAY_ITEMS;
use crate::limits::{
    MAX_CONTENT_BYTES, MAX_FILENAME_BYTES, MAX_IDEMPOTENCY_KEY_BYTES, MAX_MEMORY_SCOPES_PER_TOKEN,
    MAX_MEMORY_SCOPE_NAME_BYTES, MAX_METADATA_BYTES, MAX_SOURCE_BYTES, MAX_SUPERSEDES,
};
use crate::limits::{MAX_UPLOAD_BYTES, UPLOAD_TICKET_TTL_SECS};
use crate::service::UploadDeclaration;
use crate::service::{Content, IngestRequest, Memory, Permission, Replaces};

pub static TOOL: Tool = Tool {
    name: super::INGEST,
    description: "Store a document, note or file in persistent memory so it can be found later \
with alayasiki_query. Give `content` (text; Markdown or JSON via `media_type`), or the canonical \
`Text`/`File` shape for files: PDF (its text is extracted, page by page), Markdown, JSON, plain \
text, and images or audio described in `metadata` (`caption`, `alt_text`, `ocr_text`, \
`description`, `transcript`); the exact bytes are kept and can be read back. The write is durable when this returns; by default it also waits \
until the content is searchable. Reusing an `idempotency_key` with the same content returns the \
first document instead of storing a duplicate. To replace stored documents with this one (a \
new version), name them in `supersedes`, or send `replace_source` to replace every current \
document of its `source`: they stay readable as its history (alayasiki_update changes one \
document in place of this). Over HTTP, a file too large to send inline (or that need not pass \
through the conversation) is declared with `upload` instead of content: nothing is stored yet, \
and the answer's `upload_url` takes the bytes in one `PUT` (no token) before `expires_at`.",
    input_schema: schema,
    output_schema: tool_output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call,
};

fn call(memory: &Memory<'_>, args: &Map<String, Value>) -> Result<Value> {
    if args.contains_key("upload") {
        let (declaration, request) = parse_upload(args)?;
        return Ok(serde_json::to_value(
            memory.declare_upload(declaration, request)?,
        )?);
    }
    run(memory, parse(args)?)
}

const ARGS: &[&str] = &[
    "content",
    "media_type",
    "metadata",
    "idempotency_key",
    "source",
    "provenance",
    "expires_at",
    "wait",
    "allow_duplicate",
    "supersedes",
    "replace_source",
    "scope",
    "scopes",
    "Text",
    "File",
    "upload",
];

fn schema() -> Value {
    let metadata = |d: &str| {
        free_form(&format!(
            "{d} (at most {MAX_METADATA_BYTES} bytes as compact JSON, MAX_METADATA_BYTES)."
        ))
    };
    let idempotency_key = label(
        &format!("Caller-chosen key (at most {MAX_IDEMPOTENCY_KEY_BYTES} bytes, MAX_IDEMPOTENCY_KEY_BYTES): the same key with the same request returns the first document; with different content it is a conflict."),
        MAX_IDEMPOTENCY_KEY_BYTES,
    );
    let source = label(
        &format!("Where the content came from (a URL, path or label; at most {MAX_SOURCE_BYTES} bytes, MAX_SOURCE_BYTES), returned with evidence."),
        MAX_SOURCE_BYTES,
    );
    let content = text(
        &format!("The text to remember (at most {MAX_CONTENT_BYTES} bytes, MAX_CONTENT_BYTES)."),
        MAX_CONTENT_BYTES,
    );
    let media_type = choice("Type of `content` (default text/plain).", TEXT_MEDIA_TYPES);
    json!({
        "type": "object",
        "description": "Give exactly one of `content`, `Text`, `File` or `upload`. With `Text` or `File`, `metadata`, `idempotency_key` and `source` go inside that object.",
        "properties": {
            "content": content,
            "media_type": media_type,
            "metadata": metadata("Arbitrary JSON object kept verbatim and returned with evidence (e.g. author, url, tags). `provenance` here is honoured too, and so is `source` when the `source` argument is not given"),
            "idempotency_key": idempotency_key,
            "source": source,
            "provenance": choice("Who asserted this: an external source, the user, or the agent itself.", PROVENANCES),
            "expires_at": {"type": "string", "minLength": 1, "description": "When to forget this document (RFC 3339, e.g. 2027-01-31T00:00:00Z, or a date): from then on no query or resource returns it, and it is purged."},
            "wait": {"type": "boolean", "description": "Wait until the document is searchable (default true); false returns at once with state `pending`."},
            "allow_duplicate": {"type": "boolean", "description": "Store it even if a document with the same content is already stored (default false: that document is returned, named in `duplicate_of`, and nothing new is stored). Text is compared after normalising white space and line endings; PDFs by their bytes. Documents this one supersedes, and superseded versions, do not count."},
            "supersedes": supersedes_schema(),
            "scope": label(&format!("The memory scope to store it into (a team's or a project's part of this memory; at most {MAX_MEMORY_SCOPE_NAME_BYTES} bytes of a-z, 0-9, '.', '_', '-'). A token limited to memory scopes must be allowed to write it, and stores into its first writable scope when none is named; an unrestricted caller's document is otherwise in no scope."), MAX_MEMORY_SCOPE_NAME_BYTES),
            "scopes": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_MEMORY_SCOPE_NAME_BYTES}, "maxItems": MAX_MEMORY_SCOPES_PER_TOKEN, "description": "Several memory scopes to store it into (instead of `scope`)."},
            "replace_source": {"type": "boolean", "description": format!("Supersede every current document whose `source` is this document's (default false; needs `source`, as the argument or in metadata; at most {MAX_SUPERSEDES} documents, MAX_SUPERSEDES).")},
            "Text": object(
                Some("Canonical text upload: {content, media_type?, metadata?, idempotency_key?, source?}."),
                json!({
                    "content": content,
                    "media_type": media_type,
                    "metadata": metadata("JSON object kept with the document"),
                    "idempotency_key": idempotency_key,
                    "source": source
                }),
                &["content"],
            ),
            "File": object(
                Some("Canonical file upload: {filename?, mime_type?, content (base64 string or array of bytes), metadata?, idempotency_key?, source?}. Type comes from mime_type, else the bytes' magic number (PDF, PNG, JPEG, GIF, WebP, WAV, MP3, OGG, FLAC, ...), else the filename's extension, else the bytes as text. Images and audio need a text description in metadata: caption, alt_text, ocr_text, description or transcript."),
                json!({
                    "filename": {"type": "string", "maxLength": MAX_FILENAME_BYTES, "description": format!("The file's name (at most {MAX_FILENAME_BYTES} bytes, MAX_FILENAME_BYTES); its extension types the bytes when mime_type does not.")},
                    "mime_type": {"type": "string", "description": format!("The file's media type; one of {}, or application/octet-stream to tell the type from the bytes.", SUPPORTED_MEDIA_TYPES.join(", "))},
                    "content": file_content(MAX_CONTENT_BYTES, "MAX_CONTENT_BYTES"),
                    "metadata": metadata("JSON object kept with the document; for images and audio, its description"),
                    "idempotency_key": idempotency_key,
                    "source": source
                }),
                &["content"],
            ),
            "upload": upload_schema()
        },
        "additionalProperties": false
    })
}

/// `upload`: a file declared now and sent to the answer's `upload_url`.
fn upload_schema() -> Value {
    object(
        Some(&format!("Declare a file instead of sending it (HTTP server only; over stdio send `File`): nothing is stored, and the answer gives a one-time `upload_url` to `PUT` exactly these bytes to, without a token, before `expires_at` ({UPLOAD_TICKET_TTL_SECS} s at most, UPLOAD_TICKET_TTL_SECS). The bytes are checked against `size` and `sha256`, then stored as this ingest's other arguments say (`wait` included). At most {MAX_UPLOAD_BYTES} bytes (MAX_UPLOAD_BYTES); a file of more than {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES) must be plain text or Markdown and is stored as a series of part documents, listed in the `PUT`'s receipt as `parts`.")),
        json!({
            "filename": {"type": "string", "minLength": 1, "maxLength": MAX_FILENAME_BYTES, "description": format!("The file's name (at most {MAX_FILENAME_BYTES} bytes, MAX_FILENAME_BYTES); its extension types the bytes when media_type does not.")},
            "media_type": {"type": "string", "description": format!("The file's media type; one of {}, or application/octet-stream to tell the type from the bytes.", SUPPORTED_MEDIA_TYPES.join(", "))},
            "size": {"type": "integer", "minimum": 1, "maximum": MAX_UPLOAD_BYTES, "description": format!("The file's exact size in bytes (at most {MAX_UPLOAD_BYTES}, MAX_UPLOAD_BYTES): the upload's Content-Length.")},
            "sha256": {"type": "string", "minLength": 64, "maxLength": 64, "description": "SHA-256 of the file's bytes, as 64 hex digits."}
        }),
        &["filename", "size", "sha256"],
    )
}

/// `supersedes`: the documents an ingest replaces.
fn supersedes_schema() -> Value {
    json!({
        "type": "array",
        "items": label("A document id (as alayasiki_ingest returned it).", MAX_SOURCE_BYTES),
        "maxItems": MAX_SUPERSEDES,
        "description": format!("Ids of stored documents this one is a new version of (at most {MAX_SUPERSEDES}, MAX_SUPERSEDES). Each must be current: a document superseded before is refused, naming its current version. They are kept as history, leave default search, and lose their support in the knowledge graph.")
    })
}

/// The receipt of a stored document (`IngestReceipt`), also of a new
/// version stored by alayasiki_update.
pub(super) fn output_schema() -> Value {
    output::record(
        "The stored document's receipt.",
        json!({
            "document_id": output::string("The document's id: name it to alayasiki_forget, find it in query evidence."),
            "state": output::document_state(),
            "error": output::string("Why indexing failed (state failed) or is deferred (state pending, e.g. the embedding server is unreachable); absent otherwise."),
            "media_type": output::string("The media type the content was stored as (given, or told from the bytes)."),
            "bytes": output::count("Size of the stored original, in bytes."),
            "chunks": output::count("Searchable chunks the document was split into; present when state is ready."),
            "idempotent_replay": output::boolean("True when this is the receipt of a document stored earlier with the same idempotency_key and content: nothing new was stored."),
            "duplicate_of": output::string("Present when a document with the same content was already stored: its id (this receipt is that document's) and nothing new was stored. Send `allow_duplicate` to store it anyway."),
            "supersedes": output::list("Present when this document superseded others: their ids. They are kept as its history (alayasiki://documents/{id} lists the versions).", output::string("A superseded document's id.")),
            "near_duplicates": output::list("Present when the stored document, once indexed (wait), repeats current documents with small edits (judged on its first chunk): their ids. It is stored anyway; a query gives such a pair one evidence slot.", output::string("A nearly duplicated document's id."))
        }),
        &[
            "document_id",
            "state",
            "media_type",
            "bytes",
            "idempotent_replay",
        ],
    )
}

/// The tool's result: a stored document's receipt or, for an `upload`
/// declaration, where to send the file. One object schema with the fields
/// of both, and an `anyOf` saying which set a result has.
fn tool_output_schema() -> Value {
    let mut schema = output_schema();
    schema["description"] = json!("The stored document's receipt; for an `upload` declaration, where and until when to send the file.");
    let required = schema
        .as_object_mut()
        .and_then(|o| o.remove("required"))
        .unwrap_or_default();
    if let Some(props) = schema["properties"].as_object_mut() {
        props.insert("upload_url".into(), output::string("With `upload`: the one-time URL to PUT the file's bytes to (no token; the URL is the grant)."));
        props.insert(
            "method".into(),
            output::one_of("With `upload`: the HTTP method of the upload.", &["PUT"]),
        );
        props.insert(
            "expires_at".into(),
            output::time("With `upload`: when the URL stops accepting the upload"),
        );
        props.insert(
            "max_bytes".into(),
            output::count("With `upload`: the largest file an upload accepts (MAX_UPLOAD_BYTES)."),
        );
        props.insert(
            "size".into(),
            output::count(
                "With `upload`: the declared size, which the upload's Content-Length must equal.",
            ),
        );
        props.insert(
            "sha256".into(),
            output::string("With `upload`: the declared SHA-256 (hex) the bytes must have."),
        );
    }
    schema["anyOf"] = json!([
        {"description": "A stored document's receipt.", "required": required},
        {"description": "An upload declaration's answer.", "required": UPLOAD_OFFER}
    ]);
    schema
}

/// The fields of an upload declaration's answer (`UploadOffer`).
const UPLOAD_OFFER: &[&str] = &[
    "upload_url",
    "method",
    "expires_at",
    "max_bytes",
    "size",
    "sha256",
];

/// `provenance` values: who asserted a document.
const PROVENANCES: &[&str] = &["external", "user", "agent"];

/// Parses `alayasiki_ingest` arguments (also the HTTP API's ingest body).
pub fn parse(map: &Map<String, Value>) -> Result<IngestRequest> {
    let args = Args::new(map, ARGS)?;
    let (content, fields) = content_form(
        &args,
        &["metadata", "idempotency_key", "source"],
        MAX_CONTENT_BYTES,
        "MAX_CONTENT_BYTES",
    )?
    .ok_or_else(|| Error::invalid(ONE_FORM))?;
    Ok(IngestRequest {
        content,
        metadata: fields.object("metadata")?.cloned().unwrap_or_default(),
        idempotency_key: fields.string("idempotency_key")?.map(str::to_string),
        source: fields.string("source")?.map(str::to_string),
        ..request_fields(&args)?
    })
}

/// The arguments of an ingest besides its content, read at the top level
/// (`metadata`, `idempotency_key` and `source` too: callers reading them
/// from a canonical `Text` or `File` object override those).
fn request_fields(args: &Args<'_>) -> Result<IngestRequest> {
    let wait = args.boolean("wait")?.unwrap_or(true);
    let provenance = args.choice("provenance", PROVENANCES)?.map(str::to_string);
    let expires_at = match args.string("expires_at")? {
        None => None,
        Some(t) => Some(crate::clock::parse_rfc3339(t).ok_or_else(|| {
            Error::invalid("`expires_at` must be an RFC 3339 time (2027-01-31T00:00:00Z) or a date (2027-01-31)")
        })?),
    };
    Ok(IngestRequest {
        expires_at,
        content: Content::Text {
            text: String::new(),
            media_type: None,
        },
        metadata: args.object("metadata")?.cloned().unwrap_or_default(),
        idempotency_key: args.string("idempotency_key")?.map(str::to_string),
        source: args.string("source")?.map(str::to_string),
        provenance,
        wait,
        allow_duplicate: args.boolean("allow_duplicate")?.unwrap_or(false),
        replaces: Replaces {
            documents: supersedes(args)?,
            source: args.boolean("replace_source")?.unwrap_or(false),
            if_current: false,
        },
        title: None,
        scopes: scopes(args)?,
    })
}

/// Parses an `upload` declaration and the ingest it is for: every argument
/// of an ingest but content, which the upload brings.
pub fn parse_upload(map: &Map<String, Value>) -> Result<(UploadDeclaration, IngestRequest)> {
    if ["content", "Text", "File", "media_type"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        return Err(Error::invalid(
            "with `upload`, send no `content`, `Text`, `File` or `media_type`: the upload \
             brings the content (its type goes in `upload.media_type`)",
        ));
    }
    let args = Args::new(map, ARGS)?;
    let inner_map = args
        .object("upload")?
        .ok_or_else(|| Error::invalid("`upload` must be an object"))?;
    let inner = Args::new(inner_map, &["filename", "media_type", "size", "sha256"])
        .map_err(|e| Error::invalid(format!("in `upload`: {}", e.client_message())))?;
    let declaration = UploadDeclaration {
        filename: inner.required_string("filename")?.to_string(),
        media_type: inner.string("media_type")?.map(str::to_string),
        size: inner
            .integer("size", 0, u64::MAX)?
            .ok_or_else(|| Error::invalid("`upload` needs `size`"))?,
        sha256: inner.required_string("sha256")?.to_string(),
    };
    let request = IngestRequest {
        content: Content::File {
            filename: Some(declaration.filename.clone()),
            mime_type: declaration.media_type.clone(),
            bytes: Vec::new(),
        },
        ..request_fields(&args)?
    };
    Ok((declaration, request))
}

/// The memory scopes named by `scope` or `scopes` (not both), at most
/// [`MAX_MEMORY_SCOPES_PER_TOKEN`] (no token could write more).
fn scopes(args: &Args<'_>) -> Result<Vec<String>> {
    if let Some(one) = args.string("scope")? {
        if args.has("scopes") {
            return Err(Error::invalid("give `scope` or `scopes`, not both"));
        }
        return Ok(vec![one.to_string()]);
    }
    let Some(items) = args.value("scopes").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let items = items
        .as_array()
        .ok_or_else(|| Error::invalid("`scopes` must be a list of memory scope names"))?;
    if items.len() > MAX_MEMORY_SCOPES_PER_TOKEN {
        return Err(Error::LimitExceeded(format!(
            "`scopes` names {} memory scopes; at most {MAX_MEMORY_SCOPES_PER_TOKEN} (MAX_MEMORY_SCOPES_PER_TOKEN)",
            items.len()
        )));
    }
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::invalid("`scopes` must be a list of memory scope names"))
        })
        .collect()
}

/// The ids in `supersedes`, refused past [`MAX_SUPERSEDES`] before any is
/// read.
fn supersedes(args: &Args<'_>) -> Result<Vec<String>> {
    let items = match args.value("supersedes") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(Error::invalid(
                "`supersedes` must be a list of document ids",
            ))
        }
    };
    if items.len() > MAX_SUPERSEDES {
        return Err(Error::LimitExceeded(format!(
            "`supersedes` names {} documents; at most {MAX_SUPERSEDES} (MAX_SUPERSEDES)",
            items.len()
        )));
    }
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| Error::invalid("`supersedes` must be a list of document ids"))
        })
        .collect()
}

const ONE_FORM: &str = "give exactly one of `content`, `Text`, `File` or `upload`";

/// Reads the content of a request given in one of its forms: flat
/// `content` (typed by `media_type`), or the canonical `Text` / `File`
/// objects. Returns the content and the arguments its `companions` (fields
/// such as `metadata` that travel with it) are read from: the top level for
/// flat content, the inner object for the canonical shapes, where a flat
/// companion is refused. `None` when no form is given; more than one is an
/// error. File content above `max_bytes` is refused before decoding.
pub(super) fn content_form<'a>(
    args: &Args<'a>,
    companions: &[&str],
    max_bytes: usize,
    limit_name: &str,
) -> Result<Option<(Content, Args<'a>)>> {
    let forms = ["content", "Text", "File"]
        .iter()
        .filter(|k| args.has(k))
        .count();
    if forms > 1 {
        return Err(Error::invalid(ONE_FORM));
    }
    if forms == 0 {
        return Ok(None);
    }
    if let Some(text) = args.string("content")? {
        let content = Content::Text {
            text: text.to_string(),
            media_type: args.string("media_type")?.map(str::to_string),
        };
        return Ok(Some((content, *args)));
    }
    for flat in ["media_type"].iter().chain(companions) {
        if args.has(flat) {
            return Err(Error::invalid(format!(
                "with `Text` or `File`, put `{flat}` inside that object"
            )));
        }
    }
    let (tag, mut allowed) = if args.has("Text") {
        ("Text", vec!["content", "media_type"])
    } else {
        ("File", vec!["filename", "mime_type", "content"])
    };
    allowed.extend_from_slice(companions);
    let inner_map = args
        .object(tag)?
        .ok_or_else(|| Error::invalid(format!("`{tag}` must be an object")))?;
    let inner = Args::new(inner_map, &allowed)
        .map_err(|e| Error::invalid(format!("in `{tag}`: {}", e.client_message())))?;
    let content = if tag == "Text" {
        Content::Text {
            text: inner.required_string("content")?.to_string(),
            media_type: inner.string("media_type")?.map(str::to_string),
        }
    } else {
        Content::File {
            filename: inner.string("filename")?.map(str::to_string),
            mime_type: inner.string("mime_type")?.map(str::to_string),
            bytes: file_bytes(inner.value("content"), max_bytes, limit_name)?,
        }
    };
    Ok(Some((content, inner)))
}

/// A File's content: base64 text or an array of byte values. Sizes are
/// checked before decoding so an oversized upload costs no allocation; the
/// bounds are the ones the schema publishes ([`file_content`]).
fn file_bytes(value: Option<&Value>, max_bytes: usize, limit_name: &str) -> Result<Vec<u8>> {
    let too_big = || {
        Error::LimitExceeded(format!(
            "File content exceeds {max_bytes} bytes ({limit_name})"
        ))
    };
    match value {
        Some(Value::String(b64)) => {
            if b64.len() > max_base64_chars(max_bytes) {
                return Err(too_big());
            }
            base64::decode(b64).map_err(|e| {
                Error::invalid(format!(
                    "File content is not valid base64 (bad character at offset {})",
                    e.offset
                ))
            })
        }
        Some(Value::Array(items)) => {
            if items.len() > max_bytes {
                return Err(too_big());
            }
            if items.len() > MAX_BYTE_ARRAY_ITEMS {
                return Err(Error::LimitExceeded(format!(
                    "File content as an array holds at most {MAX_BYTE_ARRAY_ITEMS} bytes \
                     (MAX_BYTE_ARRAY_ITEMS); send larger files as base64 text"
                )));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    whole_number(v)
                        .filter(|b| *b <= 255)
                        .map(|b| b as u8)
                        .ok_or_else(|| {
                            Error::invalid(format!("File content[{i}] is not a byte (0-255)"))
                        })
                })
                .collect()
        }
        Some(_) => Err(Error::invalid(
            "File content must be a base64 string or an array of bytes",
        )),
        None => Err(Error::invalid("`File` needs `content`")),
    }
}

fn run(memory: &Memory<'_>, req: IngestRequest) -> Result<Value> {
    Ok(serde_json::to_value(memory.ingest(req)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<IngestRequest> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn flat_and_canonical_text_forms_agree() {
        let flat = parse_json(json!({"content": "hi", "idempotency_key": "k"})).unwrap();
        let canon = parse_json(json!({"Text": {"content": "hi", "idempotency_key": "k"}})).unwrap();
        assert!(matches!(flat.content, Content::Text { ref text, .. } if text == "hi"));
        assert!(matches!(canon.content, Content::Text { ref text, .. } if text == "hi"));
        assert_eq!(flat.idempotency_key, canon.idempotency_key);
        assert!(flat.wait && canon.wait);
    }

    #[test]
    fn file_content_accepts_base64_and_byte_arrays() {
        let a = parse_json(json!({"File": {"filename": "a.md", "content": "aGk="}})).unwrap();
        let b = parse_json(json!({"File": {"filename": "a.md", "content": [104, 105]}})).unwrap();
        for r in [a, b] {
            assert!(matches!(r.content, Content::File { ref bytes, .. } if bytes == b"hi"));
        }
        assert!(parse_json(json!({"File": {"content": [256]}})).is_err());
        assert!(parse_json(json!({"File": {"content": "a*b"}})).is_err());
    }

    #[test]
    fn exactly_one_form_is_required() {
        assert!(parse_json(json!({})).is_err());
        assert!(parse_json(json!({"content": "a", "Text": {"content": "b"}})).is_err());
    }

    #[test]
    fn oversized_file_is_refused_before_decoding() {
        let huge = "A".repeat(MAX_CONTENT_BYTES / 3 * 4 + 8);
        let err = parse_json(json!({"File": {"content": huge}}))
            .err()
            .unwrap();
        assert_eq!(err.code(), "limit_exceeded");
    }
}
