//! Original bytes → extracted text.
//!
//! The extracted text is what chunks and their byte spans refer to. For
//! plain text and Markdown it is the original itself; for JSON it is one
//! `path: value` line per leaf, so that keys are searchable next to values;
//! for PDF it is the text of each page (see [`pdf`]), with every page's byte
//! span kept; for images and audio, whose bytes hold no text we can read,
//! it is the description the uploader gave in metadata hints (see
//! [`described`]).

use serde_json::{Map, Value};
use std::fmt::Write;

use super::media::MediaKind;
pub use crate::limits::{MAX_JSON_EXPANSION, MIN_JSON_TEXT_ALLOWANCE};

pub mod described;
pub mod pdf;

/// Why a document's text could not be extracted (client-safe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractError(pub String);

/// A page of a paginated document: `text[start..end]` of the extracted
/// text (byte offsets, `end` exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// 1-based page number.
    pub number: u32,
    pub start: usize,
    pub end: usize,
}

/// A document's extracted text, and its pages when it has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub text: String,
    /// Empty for documents without pages.
    pub pages: Vec<Page>,
}

impl Extracted {
    fn unpaged(text: String) -> Extracted {
        Extracted {
            text,
            pages: Vec::new(),
        }
    }
}

/// Extracts the text of `bytes` of the given kind. `metadata` is the
/// document's metadata object, which describes images and audio.
pub fn extract(
    kind: MediaKind,
    bytes: &[u8],
    metadata: &Map<String, Value>,
) -> Result<Extracted, ExtractError> {
    match kind {
        MediaKind::PlainText | MediaKind::Markdown => {
            let text = utf8(bytes)?;
            Ok(Extracted::unpaged(match described::attached(metadata) {
                Some(described) if text.trim().is_empty() => described,
                Some(described) => format!("{}\n\n{described}", text.trim_end()),
                None => text.to_string(),
            }))
        }
        MediaKind::Json => {
            let value: Value = serde_json::from_str(utf8(bytes)?).map_err(|e| {
                ExtractError(format!(
                    "content is not valid JSON (line {}, column {}): {}",
                    e.line(),
                    e.column(),
                    json_error_kind(&e)
                ))
            })?;
            let limit = json_text_limit(bytes.len());
            let text = flatten_json_within(&value, limit).ok_or_else(|| {
                ExtractError(format!(
                    "the JSON flattens to more than {limit} bytes of text ({MAX_JSON_EXPANSION}x \
                     its {} bytes, MAX_JSON_EXPANSION): its key paths repeat too much; store it \
                     as text/plain, or split it",
                    bytes.len()
                ))
            })?;
            Ok(Extracted::unpaged(text))
        }
        MediaKind::Pdf => {
            let out = pdf::extract_text(bytes).map_err(|e| ExtractError(e.to_string()))?;
            let pages = out
                .pages
                .iter()
                .map(|p| Page {
                    number: p.number,
                    start: p.start,
                    end: p.end,
                })
                .collect();
            Ok(Extracted {
                text: out.text,
                pages,
            })
        }
        MediaKind::Image(_) | MediaKind::Audio(_) => {
            described::text_from_hints(kind, metadata).map(Extracted::unpaged)
        }
    }
}

/// Validates UTF-8, naming the first bad byte's offset.
pub fn utf8(bytes: &[u8]) -> Result<&str, ExtractError> {
    std::str::from_utf8(bytes).map_err(|e| {
        ExtractError(format!(
            "content is not valid UTF-8 (first invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

fn json_error_kind(e: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match e.classify() {
        Category::Syntax => "syntax error",
        Category::Eof => "unexpected end of input",
        Category::Data => "invalid data",
        Category::Io => "read error",
    }
}

/// The most bytes of flattened text a JSON document of `input` bytes may
/// extract to.
pub fn json_text_limit(input: usize) -> usize {
    input
        .saturating_mul(MAX_JSON_EXPANSION)
        .max(MIN_JSON_TEXT_ALLOWANCE)
}

/// One `path: value` line per leaf, depth-first in document order. Strings
/// are written as-is except that line breaks and other control characters
/// become spaces, so each leaf stays on its own line.
pub fn flatten_json(value: &Value) -> String {
    flatten_json_within(value, usize::MAX).expect("no limit")
}

/// [`flatten_json`], stopping as soon as the text passes `limit` bytes
/// (`None`), so an expanding document never builds its whole text.
pub fn flatten_json_within(value: &Value, limit: usize) -> Option<String> {
    let mut out = String::new();
    let mut path = String::new();
    // The text under construction ends with the newline that is removed
    // at the end.
    walk(value, &mut path, &mut out, limit.saturating_add(1)).ok()?;
    if out.ends_with('\n') {
        out.pop();
    }
    Some(out)
}

/// The flattened text passed its limit.
struct TooLong;

fn walk(value: &Value, path: &mut String, out: &mut String, limit: usize) -> Result<(), TooLong> {
    if out.len() > limit {
        return Err(TooLong);
    }
    let label = |path: &str| {
        if path.is_empty() {
            "$".to_string()
        } else {
            path.to_string()
        }
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let mark = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                walk(child, path, out, limit)?;
                path.truncate(mark);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                let mark = path.len();
                let _ = write!(path, "[{i}]");
                walk(child, path, out, limit)?;
                path.truncate(mark);
            }
        }
        Value::Object(_) => {
            let _ = writeln!(out, "{}: {{}}", label(path));
        }
        Value::Array(_) => {
            let _ = writeln!(out, "{}: []", label(path));
        }
        Value::String(s) => {
            let clean: String = s
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            let _ = writeln!(out, "{}: {}", label(path), clean);
        }
        other => {
            let _ = writeln!(out, "{}: {}", label(path), other);
        }
    }
    if out.len() > limit {
        return Err(TooLong);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_flattened_into_path_value_lines() {
        let v = json!({"project": {"name": "alayasiki", "tags": ["mcp", "memory"]}, "stars": 3,
                       "empty": {}, "note": "two\nlines"});
        let text = flatten_json(&v);
        assert_eq!(
            text,
            "empty: {}\nnote: two lines\nproject.name: alayasiki\nproject.tags[0]: mcp\n\
             project.tags[1]: memory\nstars: 3"
        );
    }

    #[test]
    fn json_that_expands_past_its_bound_is_refused_with_the_limit_named() {
        // Deep nesting repeats the key path on every leaf: 2 KB of keys
        // above 1,000 small numbers flatten to about 2 MB.
        let key = "k".repeat(100);
        let mut doc = String::new();
        for _ in 0..20 {
            doc.push_str(&format!("{{\"{key}\": "));
        }
        let numbers: Vec<String> = (0..1000).map(|i| (i % 10).to_string()).collect();
        doc.push_str(&format!("[{}]", numbers.join(",")));
        doc.push_str(&"}".repeat(20));
        let err = extract(MediaKind::Json, doc.as_bytes(), &no_metadata()).unwrap_err();
        assert!(err.0.contains("MAX_JSON_EXPANSION"), "{}", err.0);
        // Just within the bound is accepted: the same text limit, met.
        let ok = r#"{"a": [1, 2, 3], "b": {"c": "d"}}"#;
        let text = extract(MediaKind::Json, ok.as_bytes(), &no_metadata()).unwrap();
        assert!(text.text.len() <= json_text_limit(ok.len()));
        let value: Value = serde_json::from_str(&doc).unwrap();
        let full = flatten_json(&value);
        assert!(flatten_json_within(&value, full.len()).is_some());
        assert!(flatten_json_within(&value, full.len() - 1).is_none());
    }

    #[test]
    fn scalar_root_uses_dollar() {
        assert_eq!(flatten_json(&json!("hi")), "$: hi");
    }

    fn no_metadata() -> Map<String, Value> {
        Map::new()
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        let err = extract(MediaKind::PlainText, b"abc\xffdef", &no_metadata()).unwrap_err();
        assert!(err.0.contains("offset 3"), "{}", err.0);
    }

    #[test]
    fn invalid_json_is_reported_with_position() {
        let err = extract(MediaKind::Json, b"{\"a\": }", &no_metadata()).unwrap_err();
        assert!(err.0.contains("line 1"), "{}", err.0);
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/fixtures/pdf/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn pdf_text_comes_with_page_spans() {
        let out = extract(
            MediaKind::Pdf,
            &fixture("libreoffice-report.pdf"),
            &no_metadata(),
        )
        .unwrap();
        assert_eq!(out.pages.len(), 3);
        assert_eq!(out.pages[0].number, 1);
        for p in &out.pages {
            assert!(p.start <= p.end && p.end <= out.text.len());
            assert!(out.text.is_char_boundary(p.start) && out.text.is_char_boundary(p.end));
        }
        assert!(out.text[out.pages[0].start..out.pages[0].end].contains("Zürich"));
    }

    #[test]
    fn encrypted_and_image_only_pdfs_say_so() {
        let err = extract(MediaKind::Pdf, &fixture("encrypted.pdf"), &no_metadata()).unwrap_err();
        assert!(err.0.contains("encrypted"), "{}", err.0);
        let err = extract(MediaKind::Pdf, &fixture("image-only.pdf"), &no_metadata()).unwrap_err();
        assert!(err.0.contains("no extractable text"), "{}", err.0);
        assert!(err.0.contains("OCR"), "{}", err.0);
        let err = extract(MediaKind::Pdf, b"%PDF-1.4 garbage", &no_metadata()).unwrap_err();
        assert!(err.0.contains("could not be read"), "{}", err.0);
    }
}
