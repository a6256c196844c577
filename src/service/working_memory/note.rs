//! From a write's content to a note ready to store: what working memory
//! accepts, the searchable text, its passages, and the write's charge.
//!
//! Working memory takes small, bounded things: text (plain, Markdown,
//! JSON) and image or audio files described in their metadata (`caption`,
//! `alt_text`, `description`, `ocr_text`, `transcript`), whose description
//! becomes the searchable text. Documents that need extraction (PDF and
//! the like) belong in persistent memory, and the refusal says so.
//!
//! Everything here runs before admission, on the caller's thread and
//! without any lock; nothing here stores anything.

use serde_json::{Map, Value};

use super::budget::Charge;
use super::search::term_counts;
use super::session_graph::{EdgeInput, FileFacts, GraphWrite, NodeInput, NoteChunk};
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::media::{self, MediaKind, SUPPORTED_MEDIA_TYPES};
use crate::ingest::{chunk, extract};
use crate::service::Content;
use crate::store::NewChunk;

/// Metadata keys whose text describes an image or audio file, in the order
/// their text is joined into the note.
pub const DESCRIPTION_HINTS: &[&str] = &[
    "caption",
    "alt_text",
    "description",
    "ocr_text",
    "transcript",
];

/// Longest declared media type considered (RFC 6838 allows 127 + 1 + 127).
const MAX_MEDIA_TYPE_BYTES: usize = 255;

/// A write, prepared: its note (if it has content), its graph elements and
/// its charge.
#[derive(Debug)]
pub struct WriteDraft {
    pub note: Option<NoteDraft>,
    pub graph: GraphWrite,
    pub charge: Charge,
}

/// A note before admission (it gets its seq and id when admitted).
#[derive(Debug)]
pub struct NoteDraft {
    pub media_type: String,
    pub text: String,
    pub original: Option<String>,
    pub file: Option<FileFacts>,
    pub metadata: Map<String, Value>,
    /// The passages with their context, kept for embedding after admission.
    pub passages: Vec<NewChunk>,
    pub chunks: Vec<NoteChunk>,
}

/// Validates and prepares a write. Per-write limits are checked on the
/// sizes first, so oversized input costs no extraction.
pub fn prepare(
    content: Option<Content>,
    metadata: Map<String, Value>,
    nodes: Vec<NodeInput>,
    edges: Vec<EdgeInput>,
) -> Result<WriteDraft> {
    let metadata_len = if metadata.is_empty() {
        0
    } else {
        serde_json::to_string(&metadata)?.len()
    };
    let graph_len = json_len(&nodes)? + json_len(&edges)?;
    let (content_len, filename_len) = match &content {
        None => (0, 0),
        Some(Content::Text { text, .. }) => (text.len(), 0),
        Some(Content::File {
            bytes, filename, ..
        }) => (bytes.len(), filename.as_ref().map_or(0, String::len)),
    };
    let charge = Charge {
        content: content_len,
        metadata: metadata_len,
        graph: graph_len,
        filename: filename_len,
    };
    charge.check_per_write_limits()?;
    if filename_len > crate::limits::MAX_FILENAME_BYTES {
        return Err(Error::LimitExceeded(format!(
            "filename is {filename_len} bytes; the limit is {} (MAX_FILENAME_BYTES)",
            crate::limits::MAX_FILENAME_BYTES
        )));
    }
    let note = match content {
        Some(c) => Some(prepare_note(c, metadata)?),
        None if !metadata.is_empty() => {
            return Err(Error::invalid(
                "`metadata` describes a note; give `content` (or `Text`/`File`) with it",
            ))
        }
        None if nodes.is_empty() && edges.is_empty() => {
            return Err(Error::invalid(
                "a write needs `content` (or `Text`/`File`), `nodes` or `edges`",
            ))
        }
        None => None,
    };
    Ok(WriteDraft {
        note,
        graph: GraphWrite { nodes, edges },
        charge,
    })
}

fn json_len<T: serde::Serialize>(items: &[T]) -> Result<usize> {
    if items.is_empty() {
        return Ok(0);
    }
    Ok(serde_json::to_string(items)?.len())
}

/// What kind of note a content makes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoteKind {
    Text(MediaKind),
    /// An image or audio file (its media type), searchable by description.
    Described(String),
}

fn prepare_note(content: Content, metadata: Map<String, Value>) -> Result<NoteDraft> {
    // Persistent memory honours `metadata.provenance`; checking it here
    // keeps a note from becoming unpromotable.
    if let Some(p) = metadata.get("provenance") {
        if !p
            .as_str()
            .is_some_and(|p| matches!(p, "external" | "user" | "agent"))
        {
            return Err(Error::invalid(
                "metadata.provenance must be one of: external, user, agent",
            ));
        }
    }
    let (kind, bytes, file_name) = match content {
        Content::Text { text, media_type } => {
            let kind = match media_type.as_deref() {
                None => MediaKind::PlainText,
                Some(mt) if is_describable(&essence(mt)) => {
                    return Err(Error::invalid(format!(
                        "{mt:?} content is a file: send it as `File` (base64 or bytes) with a \
                         description in metadata ({})",
                        DESCRIPTION_HINTS.join(", ")
                    )))
                }
                Some(mt) => media::from_media_type(mt).ok_or_else(|| not_accepted(mt, true))?,
            };
            (note_kind(kind)?, text.into_bytes(), None)
        }
        Content::File {
            filename,
            mime_type,
            bytes,
        } => (
            file_kind(&filename, &mime_type, &bytes)?,
            bytes,
            Some(filename),
        ),
    };
    if bytes.is_empty() {
        return Err(Error::invalid(
            "content is empty; there is nothing to remember",
        ));
    }
    let file = file_name.map(|filename| FileFacts {
        filename,
        bytes: bytes.len(),
        sha256: ids::sha256_hex(&bytes),
    });
    let (media_type, text, original, chunk_kind) = match kind {
        NoteKind::Text(k) => {
            let text = extract::extract(k, &bytes, &metadata)
                .map_err(|e| Error::InvalidInput(e.0))?
                .text;
            let original = (text.as_bytes() != bytes.as_slice())
                .then(|| String::from_utf8_lossy(&bytes).into_owned());
            (k.media_type().to_string(), text, original, k)
        }
        NoteKind::Described(mt) => {
            let text = description(&mt, &metadata)?;
            (mt, text, None, MediaKind::PlainText)
        }
    };
    if text.trim().is_empty() {
        return Err(Error::invalid(
            "content has no text to remember (it is blank)",
        ));
    }
    let passages = chunk::chunk(&text, chunk_kind);
    let chunks = passages
        .iter()
        .enumerate()
        .map(|(ordinal, p)| {
            let (counts, length) = term_counts(&p.text);
            NoteChunk {
                ordinal,
                start: p.start,
                end: p.end,
                term_counts: counts,
                length,
            }
        })
        .collect();
    Ok(NoteDraft {
        media_type,
        text,
        original,
        file,
        metadata,
        passages,
        chunks,
    })
}

/// Decides a file's kind: the declared type, else the filename's
/// extension, else the bytes.
fn file_kind(
    filename: &Option<String>,
    mime_type: &Option<String>,
    bytes: &[u8],
) -> Result<NoteKind> {
    let declared = mime_type
        .as_deref()
        .map(essence)
        .filter(|m| m != "application/octet-stream");
    if let Some(mt) = declared {
        if let Some(k) = media::from_media_type(&mt) {
            return note_kind(k);
        }
        if is_describable(&mt) {
            return Ok(NoteKind::Described(mt));
        }
        return Err(not_accepted(&mt, false));
    }
    // Bytes before the name, as for persistent ingestion: a PDF called
    // notes.txt is still a PDF (and refused with the pointer to
    // `alayasiki_ingest`), not a text note that fails as invalid UTF-8.
    if let Some(mt) = sniff_binary(bytes) {
        return match mt {
            "application/pdf" => Err(not_accepted(mt, false)),
            _ => Ok(NoteKind::Described(mt.into())),
        };
    }
    if let Some(k) = filename.as_deref().and_then(media::from_filename) {
        return note_kind(k);
    }
    if let Some(mt) = filename.as_deref().and_then(describable_extension) {
        return Ok(NoteKind::Described(mt.into()));
    }
    media::sniff(bytes).map(NoteKind::Text).ok_or_else(|| {
        Error::invalid(
            "cannot tell this file's type (binary content); give `mime_type` (text/plain, \
             text/markdown, application/json, image/* or audio/*)",
        )
    })
}

/// What a note of a media kind is: text is extracted, images and audio
/// are described by their metadata, and PDFs (unbounded text) are refused
/// with a pointer to `alayasiki_ingest`.
fn note_kind(kind: MediaKind) -> Result<NoteKind> {
    match kind {
        MediaKind::Pdf => Err(not_accepted(kind.media_type(), false)),
        k if k.is_described() => Ok(NoteKind::Described(k.media_type().to_string())),
        k => Ok(NoteKind::Text(k)),
    }
}

/// The lowercase `type/subtype` of a declared media type.
fn essence(declared: &str) -> String {
    declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn is_describable(essence: &str) -> bool {
    let Some((top, sub)) = essence.split_once('/') else {
        return false;
    };
    matches!(top, "image" | "audio")
        && !sub.is_empty()
        && essence.len() <= MAX_MEDIA_TYPE_BYTES
        && sub
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
}

fn describable_extension(filename: &str) -> Option<&'static str> {
    let ext = filename.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" | "oga" => "audio/ogg",
        "m4a" => "audio/mp4",
        "flac" => "audio/flac",
        _ => return None,
    })
}

/// Recognizes common binary formats by their first bytes.
fn sniff_binary(bytes: &[u8]) -> Option<&'static str> {
    let riff = |kind: &[u8]| bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == kind;
    Some(if bytes.starts_with(b"%PDF-") {
        "application/pdf"
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        "image/gif"
    } else if riff(b"WEBP") {
        "image/webp"
    } else if riff(b"WAVE") {
        "audio/wav"
    } else if bytes.starts_with(b"ID3") || bytes.starts_with(&[0xff, 0xfb]) {
        "audio/mpeg"
    } else if bytes.starts_with(b"OggS") {
        "audio/ogg"
    } else if bytes.starts_with(b"fLaC") {
        "audio/flac"
    } else {
        return None;
    })
}

/// The searchable text of an image or audio file: its description hints,
/// in [`DESCRIPTION_HINTS`] order, one per paragraph.
fn description(media_type: &str, metadata: &Map<String, Value>) -> Result<String> {
    let mut parts = Vec::new();
    for key in DESCRIPTION_HINTS {
        match metadata.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.trim().is_empty() => {}
            Some(Value::String(s)) => parts.push(s.trim()),
            Some(_) => {
                return Err(Error::invalid(format!(
                    "metadata.{key} must be a string (it is the file's searchable text)"
                )))
            }
        }
    }
    if parts.is_empty() {
        return Err(Error::invalid(format!(
            "a {media_type} file is searchable only by its description: give at least one of \
             metadata.{}",
            DESCRIPTION_HINTS.join(", metadata.")
        )));
    }
    Ok(parts.join("\n\n"))
}

/// The text types a note may be (of every type persistent memory takes:
/// not PDFs, whose text is unbounded, nor the described image and audio
/// types).
fn note_text_types() -> Vec<&'static str> {
    SUPPORTED_MEDIA_TYPES
        .iter()
        .copied()
        .filter(|t| {
            media::from_media_type(t).is_some_and(|k| k != MediaKind::Pdf && !k.is_described())
        })
        .collect()
}

/// The refusal for a type working memory does not hold.
fn not_accepted(media_type: &str, inline: bool) -> Error {
    let text = note_text_types().join(", ");
    let what = if inline {
        format!("inline `content` must be one of: {text}")
    } else {
        format!("working memory holds {text}, and image/* or audio/* files described in metadata")
    };
    let media_type: String = media_type.chars().take(MAX_MEDIA_TYPE_BYTES).collect();
    Error::invalid(format!(
        "media type {media_type:?} is not accepted: {what}; store documents in persistent \
         memory with alayasiki_ingest"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_name_only_the_types_a_note_may_be() {
        assert_eq!(
            note_text_types(),
            ["text/plain", "text/markdown", "application/json"]
        );
        for inline in [true, false] {
            let e = not_accepted("application/pdf", inline).to_string();
            let listed = e.split_once("not accepted:").unwrap().1;
            assert!(!listed.contains("application/pdf"), "{e}");
            assert!(!listed.contains("image/png"), "{e}");
            assert!(listed.contains("text/markdown"), "{e}");
        }
    }

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn text(t: &str, mt: Option<&str>) -> Content {
        Content::Text {
            text: t.into(),
            media_type: mt.map(str::to_string),
        }
    }

    fn file(name: Option<&str>, mt: Option<&str>, bytes: &[u8]) -> Content {
        Content::File {
            filename: name.map(str::to_string),
            mime_type: mt.map(str::to_string),
            bytes: bytes.to_vec(),
        }
    }

    fn note(c: Content, m: Value) -> Result<NoteDraft> {
        prepare(Some(c), meta(m), vec![], vec![]).map(|d| d.note.unwrap())
    }

    #[test]
    fn json_notes_are_flattened_and_keep_their_original() {
        let n = note(
            text(r#"{"a": {"b": 1}}"#, Some("application/json")),
            json!({}),
        )
        .unwrap();
        assert_eq!(n.text, "a.b: 1");
        assert_eq!(n.original.as_deref(), Some(r#"{"a": {"b": 1}}"#));
        assert_eq!(n.chunks.len(), 1);
        let plain = note(text("hello there", None), json!({})).unwrap();
        assert_eq!(plain.original, None);
        assert_eq!(plain.media_type, "text/plain");
    }

    #[test]
    fn images_and_audio_are_searchable_by_their_description() {
        let png = b"\x89PNG\r\n\x1a\nrest";
        let n = note(
            file(None, None, png),
            json!({"caption": "Whiteboard sketch", "transcript": "  ", "ocr_text": "QUEUE -> WORKER"}),
        )
        .unwrap();
        assert_eq!(n.media_type, "image/png");
        assert_eq!(n.text, "Whiteboard sketch\n\nQUEUE -> WORKER");
        let facts = n.file.unwrap();
        assert_eq!(facts.bytes, png.len());
        let audio = note(
            file(Some("standup.MP3"), None, b"\0\x01"),
            json!({"transcript": "we ship friday"}),
        )
        .unwrap();
        assert_eq!(audio.media_type, "audio/mpeg");
        let err = note(file(None, Some("image/png"), png), json!({"author": "x"})).unwrap_err();
        assert!(err.client_message().contains("metadata.caption"), "{err}");
        assert!(note(file(None, Some("image/png"), png), json!({"caption": 3})).is_err());
    }

    #[test]
    fn documents_are_sent_to_persistent_memory() {
        for c in [
            file(Some("a.pdf"), Some("application/pdf"), b"%PDF-1.7"),
            file(None, None, b"%PDF-1.7 binary"),
            // The bytes decide, not the name.
            file(Some("notes.txt"), None, b"%PDF-1.7 \xff\xfe binary"),
            file(Some("notes.md"), None, b"%PDF-1.4"),
            file(None, Some("video/mp4"), b"...."),
            text("x", Some("application/pdf")),
        ] {
            let err = note(c, json!({"caption": "c"})).unwrap_err();
            assert_eq!(err.code(), "invalid_input");
            assert!(err.client_message().contains("alayasiki_ingest"), "{err}");
        }
        // An image given as inline text is pointed at `File`.
        let err = note(text("x", Some("image/png")), json!({"caption": "c"})).unwrap_err();
        assert!(err.client_message().contains("`File`"), "{err}");
        // Unknown binary without a declared type cannot be guessed.
        assert!(note(file(None, None, &[0, 159, 146, 150]), json!({})).is_err());
    }

    #[test]
    fn a_write_needs_something_to_store() {
        assert!(prepare(None, Map::new(), vec![], vec![]).is_err());
        assert!(prepare(None, meta(json!({"a": 1})), vec![], vec![]).is_err());
        assert!(note(text("", None), json!({})).is_err());
        assert!(note(text("  \n ", None), json!({})).is_err());
        let nodes = NodeInput::parse_list(&json!([{"id": "a", "label": "A"}])).unwrap();
        let graph_only = prepare(None, Map::new(), nodes, vec![]).unwrap();
        assert!(graph_only.note.is_none());
        assert_eq!(graph_only.charge.graph, r#"[{"id":"a","label":"A"}]"#.len());
    }

    #[test]
    fn charge_counts_content_metadata_graph_and_filename() {
        let d = prepare(
            Some(file(Some("n.txt"), None, b"hello")),
            meta(json!({"k": "v"})),
            vec![],
            vec![],
        )
        .unwrap();
        assert_eq!(
            d.charge,
            Charge {
                content: 5,
                metadata: r#"{"k":"v"}"#.len(),
                graph: 0,
                filename: 5
            }
        );
    }
}
