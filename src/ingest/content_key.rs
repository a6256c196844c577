//! What makes two documents the same content: the key a document is
//! stored under so that storing it again is recognised (`duplicate_of`).
//!
//! Text (plain, Markdown, JSON) is compared after normalising what writers
//! and tools change without meaning to: line endings, runs of white space
//! (spaces, tabs, blank lines, indentation) and white space at either end.
//! A PDF is compared by its bytes. Images and audio have no key: what is
//! searched of them is the description in their metadata, which differs
//! between two uploads of one picture as often as not.

use super::media::MediaKind;
use crate::ids;

/// The content key of a document of `kind` with these bytes, or `None`
/// when its kind is not compared.
pub fn content_key(kind: MediaKind, bytes: &[u8]) -> Option<String> {
    match kind {
        MediaKind::PlainText | MediaKind::Markdown | MediaKind::Json => {
            let text = String::from_utf8_lossy(bytes);
            Some(format!(
                "text:{}",
                ids::sha256_hex(normalized(&text).as_bytes())
            ))
        }
        MediaKind::Pdf => Some(format!("bytes:{}", ids::sha256_hex(bytes))),
        MediaKind::Image(_) | MediaKind::Audio(_) => None,
    }
}

/// `text` with every run of white space (line breaks included) one space,
/// and none at either end.
fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_space_and_line_endings_do_not_make_new_content() {
        let key = |s: &str| content_key(MediaKind::PlainText, s.as_bytes());
        let a = key("The backup runs at 03:00.\nEvery night.");
        assert_eq!(
            a,
            key("  The backup  runs at 03:00.\r\n\r\n\tEvery night.  \n")
        );
        assert_eq!(
            a,
            content_key(
                MediaKind::Markdown,
                b"The backup runs at 03:00. Every night."
            )
        );
        assert_ne!(a, key("The backup runs at 04:00.\nEvery night."));
        assert_ne!(
            a,
            key("the backup runs at 03:00.\nEvery night."),
            "case is content"
        );
        assert!(content_key(MediaKind::Image("image/png"), b"png").is_none());
        assert_ne!(
            content_key(MediaKind::Pdf, b"%PDF-1.4 a"),
            content_key(MediaKind::Pdf, b"%PDF-1.4  a")
        );
    }
}
