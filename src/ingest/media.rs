//! Media types the memory accepts, and how an upload's type is decided:
//! the declared `mime_type` first, else the filename's extension, else a
//! look at the bytes.

/// Kinds of content the extractor understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    PlainText,
    Markdown,
    Json,
}

impl MediaKind {
    /// The canonical media type stored with the document.
    pub fn media_type(self) -> &'static str {
        match self {
            MediaKind::PlainText => "text/plain",
            MediaKind::Markdown => "text/markdown",
            MediaKind::Json => "application/json",
        }
    }
}

/// Canonical types, for error messages and documentation.
pub const SUPPORTED_MEDIA_TYPES: &[&str] = &["text/plain", "text/markdown", "application/json"];

/// Maps a declared media type (parameters such as `; charset=utf-8` are
/// ignored; UTF-8 is required regardless) to a kind.
pub fn from_media_type(declared: &str) -> Option<MediaKind> {
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "text/plain" => Some(MediaKind::PlainText),
        "text/markdown" | "text/x-markdown" => Some(MediaKind::Markdown),
        "application/json" | "text/json" => Some(MediaKind::Json),
        _ => None,
    }
}

/// Maps a filename's extension to a kind.
pub fn from_filename(name: &str) -> Option<MediaKind> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "text" | "log" => Some(MediaKind::PlainText),
        "md" | "markdown" => Some(MediaKind::Markdown),
        "json" => Some(MediaKind::Json),
        _ => None,
    }
}

/// Guesses from the bytes: JSON if it parses as a JSON object or array,
/// plain text if it is UTF-8 without NUL bytes, otherwise unknown.
pub fn sniff(bytes: &[u8]) -> Option<MediaKind> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.contains('\0') {
        return None;
    }
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(text).is_ok()
    {
        return Some(MediaKind::Json);
    }
    Some(MediaKind::PlainText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_type_ignores_parameters_and_case() {
        assert_eq!(
            from_media_type("Text/Markdown; charset=utf-8"),
            Some(MediaKind::Markdown)
        );
        assert_eq!(from_media_type("application/pdf"), None);
    }

    #[test]
    fn sniffing_tells_json_from_text_from_binary() {
        assert_eq!(sniff(br#"{"a": 1}"#), Some(MediaKind::Json));
        assert_eq!(sniff(b"{not json"), Some(MediaKind::PlainText));
        assert_eq!(sniff(&[0xff, 0xfe, 0x00]), None);
    }
}
