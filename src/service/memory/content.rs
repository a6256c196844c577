//! What a caller hands over to be stored ([`Content`]) and what is made of
//! it before admission: its media kind and size checks, its extraction and
//! chunking (guarded against panics), and its display title.

use serde_json::{Map, Value};

use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::ingest::front_matter;
use crate::ingest::media::{self, MediaKind, SUPPORTED_MEDIA_TYPES, TEXT_MEDIA_TYPES};
use crate::ingest::Prepared;
use crate::limits::{MAX_CONTENT_BYTES, MAX_FILENAME_BYTES};

/// What to store.
#[derive(Debug, Clone)]
pub enum Content {
    /// Text given inline; `media_type` defaults to `text/plain`.
    Text {
        text: String,
        media_type: Option<String>,
    },
    /// A file's bytes, typed by `mime_type`, else the filename's extension,
    /// else the bytes themselves.
    File {
        filename: Option<String>,
        mime_type: Option<String>,
        bytes: Vec<u8>,
    },
}

/// Decides the media kind and returns the bytes to store.
pub(super) fn resolve_content(content: Content) -> Result<(MediaKind, Vec<u8>, Option<String>)> {
    let supported = SUPPORTED_MEDIA_TYPES.join(", ");
    let (kind, bytes, filename) = match content {
        Content::Text { text, media_type } => {
            let kind = match media_type {
                None => MediaKind::PlainText,
                Some(mt) => match media::from_media_type(&mt) {
                    Some(k) if k.is_text() => k,
                    Some(k) => {
                        return Err(Error::invalid(format!(
                            "{} content must be uploaded as a `File` (base64 bytes); inline \
                             text may be one of: {}",
                            k.media_type(),
                            TEXT_MEDIA_TYPES.join(", ")
                        )))
                    }
                    None => {
                        return Err(Error::invalid(format!(
                            "media_type {mt:?} is not supported; use one of: {supported}"
                        )))
                    }
                },
            };
            (kind, text.into_bytes(), None)
        }
        Content::File {
            filename,
            mime_type,
            bytes,
        } => {
            if let Some(f) = &filename {
                if f.len() > MAX_FILENAME_BYTES {
                    return Err(Error::LimitExceeded(format!(
                        "filename is {} bytes; the limit is {MAX_FILENAME_BYTES}",
                        f.len()
                    )));
                }
            }
            let declared = mime_type
                .as_deref()
                .filter(|m| !m.eq_ignore_ascii_case("application/octet-stream"));
            let kind = match declared {
                Some(mt) => media::from_media_type(mt).ok_or_else(|| {
                    Error::invalid(format!(
                        "mime_type {mt:?} is not supported; use one of: {supported}"
                    ))
                })?,
                None => media::detect(filename.as_deref(), &bytes).ok_or_else(|| {
                    Error::invalid(format!(
                        "cannot tell this file's type (binary content of no supported \
                         format); supported: {supported}"
                    ))
                })?,
            };
            (kind, bytes, filename)
        }
    };
    if bytes.len() > MAX_CONTENT_BYTES {
        return Err(Error::LimitExceeded(format!(
            "content is {} bytes; the limit is {MAX_CONTENT_BYTES} (MAX_CONTENT_BYTES)",
            bytes.len()
        )));
    }
    if bytes.is_empty() {
        return Err(Error::invalid(
            "content is empty; there is nothing to remember",
        ));
    }
    Ok((kind, bytes, filename))
}

/// Extracts and chunks, turning content problems into client errors and a
/// bug in extraction into an internal error instead of a dead thread.
pub(super) fn prepare_guarded(
    kind: MediaKind,
    bytes: &[u8],
    metadata: &Map<String, Value>,
    embedder: &dyn Embedder,
) -> Result<Prepared> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::ingest::prepare_described(kind, bytes, metadata, embedder)
    }));
    match outcome {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(Error::InvalidInput(e.0)),
        Err(_) => Err(Error::internal("extraction panicked")),
    }
}

/// The longest title derived from content (a metadata or front-matter
/// title, or the first line), in characters; longer ones are cut with `…`.
pub(super) const DERIVED_TITLE_CHARS: usize = 80;

/// A display title: a string `title` in the metadata, else the `title:` of
/// Markdown front matter, else the filename, else the first non-empty line
/// of the extracted text after any front matter (without Markdown heading
/// marks); cut to [`DERIVED_TITLE_CHARS`]. JSON has no title line.
pub(super) fn title_for(
    filename: &Option<String>,
    metadata: &Map<String, Value>,
    extracted: Option<&str>,
    original: &[u8],
    kind: MediaKind,
) -> Option<String> {
    let given = metadata
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty());
    if let Some(t) = given {
        return Some(cut_title(t));
    }
    let text = match extracted {
        Some(t) => Some(t),
        None => std::str::from_utf8(original).ok(),
    };
    if kind != MediaKind::Json {
        if let Some(t) = text.and_then(front_matter::title) {
            return Some(cut_title(&t));
        }
    }
    if let Some(f) = filename {
        return Some(f.clone());
    }
    if kind == MediaKind::Json {
        return None;
    }
    let line = front_matter::body(text?)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    Some(cut_title(line.trim_start_matches('#').trim()))
}

/// `line` cut to [`DERIVED_TITLE_CHARS`] characters, `…` marking a cut.
fn cut_title(line: &str) -> String {
    let mut title: String = line.chars().take(DERIVED_TITLE_CHARS).collect();
    if line.chars().count() > DERIVED_TITLE_CHARS {
        title.push('…');
    }
    title
}
