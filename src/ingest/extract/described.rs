//! Images and audio: their text is what the uploader says about them.
//!
//! The memory cannot see or hear, and it ships no OCR or speech model, so
//! an image or a recording is searchable through the descriptions given
//! with it in metadata ([`HINTS`]: a caption, alt text, OCR output, a
//! description, a transcript). The extracted text is one paragraph per
//! hint, in the fixed order of [`HINTS`], each starting with the hint's
//! name (`caption: ...`) so evidence shows where its words came from. The
//! original bytes are stored unchanged beside it.
//!
//! A text message may carry the same descriptions of something sent with it
//! (a chat turn with a photo and its caption): they follow its text, so the
//! caption is searched like the words of the message ([`attached`]).

use serde_json::{Map, Value};

use super::ExtractError;
use crate::ingest::media::MediaKind;

/// Metadata keys whose text describes an image or a recording, in the
/// order their paragraphs appear in the extracted text.
pub const HINTS: &[&str] = &[
    "caption",
    "alt_text",
    "ocr_text",
    "description",
    "transcript",
];

/// The descriptions a text message carries of what was attached to it
/// (a photo's caption, a voice note's transcript), as [`HINTS`]
/// paragraphs, so they are searched with the message; `None` when it
/// carries none. A value that is not a string describes nothing here and
/// is left alone: the metadata of text is the client's own.
pub fn attached(metadata: &Map<String, Value>) -> Option<String> {
    let parts: Vec<String> = HINTS
        .iter()
        .filter_map(|&hint| match metadata.get(hint) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(format!("{hint}: {}", s.trim())),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The extracted text of an image or audio document from its metadata.
pub fn text_from_hints(
    kind: MediaKind,
    metadata: &Map<String, Value>,
) -> Result<String, ExtractError> {
    let mut parts = Vec::new();
    for &hint in HINTS {
        match metadata.get(hint) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.trim().is_empty() => {}
            Some(Value::String(s)) => parts.push(format!("{hint}: {}", s.trim())),
            Some(_) => {
                return Err(ExtractError(format!(
                    "metadata `{hint}` must be a string describing the {}",
                    noun(kind)
                )))
            }
        }
    }
    if parts.is_empty() {
        return Err(ExtractError(format!(
            "{} holds no text the memory can read; describe it in metadata with at least one \
             of: {}",
            kind.media_type(),
            HINTS.join(", ")
        )));
    }
    Ok(parts.join("\n\n"))
}

fn noun(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Audio(_) => "recording",
        _ => "image",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn hints_become_labelled_paragraphs_in_fixed_order() {
        let m = meta(
            json!({"transcript": " Hello there. ", "caption": "A red barn",
                            "author": "ignored", "alt_text": ""}),
        );
        let text = text_from_hints(MediaKind::Image("image/png"), &m).unwrap();
        assert_eq!(text, "caption: A red barn\n\ntranscript: Hello there.");
    }

    #[test]
    fn no_hint_is_refused_naming_them() {
        let err =
            text_from_hints(MediaKind::Audio("audio/wav"), &meta(json!({"a": 1}))).unwrap_err();
        assert!(err.0.starts_with("audio/wav holds no text"), "{}", err.0);
        assert!(err.0.contains("transcript"), "{}", err.0);
    }

    #[test]
    fn non_string_hint_is_refused() {
        let err = text_from_hints(MediaKind::Image("image/gif"), &meta(json!({"caption": 3})))
            .unwrap_err();
        assert!(err.0.contains("`caption` must be a string"), "{}", err.0);
    }
}
