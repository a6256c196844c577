//! Original bytes → extracted text.
//!
//! The extracted text is what chunks and their byte spans refer to. For
//! plain text and Markdown it is the original itself; for JSON it is one
//! `path: value` line per leaf, so that keys are searchable next to values.

use serde_json::Value;
use std::fmt::Write;

use super::media::MediaKind;

pub mod pdf;

/// Why a document's text could not be extracted (client-safe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractError(pub String);

/// Extracts the text of `bytes` of the given kind.
pub fn extract(kind: MediaKind, bytes: &[u8]) -> Result<String, ExtractError> {
    let text = utf8(bytes)?;
    match kind {
        MediaKind::PlainText | MediaKind::Markdown => Ok(text.to_string()),
        MediaKind::Json => {
            let value: Value = serde_json::from_str(text).map_err(|e| {
                ExtractError(format!(
                    "content is not valid JSON (line {}, column {}): {}",
                    e.line(),
                    e.column(),
                    json_error_kind(&e)
                ))
            })?;
            Ok(flatten_json(&value))
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

/// One `path: value` line per leaf, depth-first in document order. Strings
/// are written as-is except that line breaks and other control characters
/// become spaces, so each leaf stays on its own line.
pub fn flatten_json(value: &Value) -> String {
    let mut out = String::new();
    let mut path = String::new();
    walk(value, &mut path, &mut out);
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

fn walk(value: &Value, path: &mut String, out: &mut String) {
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
                walk(child, path, out);
                path.truncate(mark);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, child) in items.iter().enumerate() {
                let mark = path.len();
                let _ = write!(path, "[{i}]");
                walk(child, path, out);
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
    fn scalar_root_uses_dollar() {
        assert_eq!(flatten_json(&json!("hi")), "$: hi");
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        let err = extract(MediaKind::PlainText, b"abc\xffdef").unwrap_err();
        assert!(err.0.contains("offset 3"), "{}", err.0);
    }

    #[test]
    fn invalid_json_is_reported_with_position() {
        let err = extract(MediaKind::Json, b"{\"a\": }").unwrap_err();
        assert!(err.0.contains("line 1"), "{}", err.0);
    }
}
