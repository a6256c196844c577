//! PDF text extraction, written for this project (no PDF library).
//!
//! [`extract_text`] reads a PDF from memory and returns its text page by
//! page. It reads classic and stream cross-references, object streams and
//! incremental updates, recovers from broken cross-references by scanning
//! for objects, decodes the usual stream filters, walks the page tree, and
//! interprets content streams to rebuild words and lines from positioned
//! glyphs. Fonts are mapped to Unicode through `/ToUnicode` CMaps or their
//! encodings. Encrypted files are refused.
//!
//! Output format: text comes in content-stream order (for nearly all
//! producers, reading order: a column is finished before the next starts).
//! Within a page, lines are separated by `\n` and words by a space (runs of
//! spaces drawn by the PDF itself are kept); a line that starts clearly
//! further down than the line spacing starts a paragraph, marked by a blank
//! line; a word hyphenated across a line end is rejoined. Pages are separated
//! by `"\n\x0c\n"` (a form feed on a line of its own), and
//! [`PdfText::pages`] gives each page's byte range, excluding separators.
//! Ligatures are spelled out ("fi"), no-break spaces become spaces, and
//! control characters are dropped.
//!
//! Hostile input cannot panic, loop, recurse or allocate without bound: every
//! resource is capped by a [`Limits`] value (see `limits.rs`), and only
//! exceeding a limit, encryption, an unreadable file, or a document without
//! text are errors; damage is otherwise worked around.
//!
//! Module map: `lexer` → `parser` → `object` (syntax and objects);
//! `xref`, `stream`, `filters`, `document` (file structure); `pages`;
//! `content`, `matrix`, `layout` (drawing text); `font`, `encoding`,
//! `glyphs`, `cmap`, `type1` (characters); `limits`, `error`.

mod cmap;
mod content;
mod document;
mod encoding;
mod error;
mod filters;
mod font;
mod glyphs;
mod layout;
mod lexer;
mod limits;
mod matrix;
mod object;
mod pages;
mod parser;
mod stream;
mod type1;
mod xref;

#[cfg(test)]
mod tests;

pub use error::{Limit, LimitKind, PdfError};
pub use limits::{
    Limits, MAX_INPUT_BYTES, MAX_INTERPRETED_BYTES, MAX_NESTING_DEPTH, MAX_OBJECTS, MAX_PAGES,
    MAX_STREAM_DECODED_BYTES, MAX_TEXT_BYTES, MAX_TOTAL_DECODED_BYTES,
};

use content::Interpreter;
use document::Document;

/// Separator between the text of consecutive pages.
pub const PAGE_SEPARATOR: &str = "\n\x0c\n";

/// The text of a PDF and where each page's text lies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfText {
    pub text: String,
    pub pages: Vec<PageSpan>,
}

/// One page's text: `text[start..end]` (byte offsets, `end` exclusive).
/// Pages without text have `start == end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// 1-based page number.
    pub number: u32,
    pub start: usize,
    pub end: usize,
}

/// Extracts the text of a PDF with the default [`Limits`].
pub fn extract_text(bytes: &[u8]) -> Result<PdfText, PdfError> {
    extract_text_with_limits(bytes, &Limits::default())
}

/// Extracts the text of a PDF with explicit limits.
pub fn extract_text_with_limits(bytes: &[u8], limits: &Limits) -> Result<PdfText, PdfError> {
    if bytes.len() > limits.max_input_bytes {
        return Err(limits::too_large(
            LimitKind::InputBytes,
            limits.max_input_bytes,
        ));
    }
    let doc = Document::open(bytes, limits)?;
    let pages = pages::collect(&doc)?;
    if pages.is_empty() {
        return Err(PdfError::Malformed("no pages found".into()));
    }
    let mut interpreter = Interpreter::new(&doc);
    let mut text = String::new();
    let mut spans = Vec::with_capacity(pages.len());
    for (number, page) in (1u32..).zip(&pages) {
        if number > 1 {
            text.push_str(PAGE_SEPARATOR);
        }
        let remaining = limits.max_text_bytes.saturating_sub(text.len());
        let page_text = interpreter.page_text(page, remaining)?;
        let start = text.len();
        text.push_str(&page_text);
        spans.push(PageSpan {
            number,
            start,
            end: text.len(),
        });
    }
    if text.len() > limits.max_text_bytes {
        // Only separators can get here: pages were each kept within limit.
        return Err(limits::too_large(
            LimitKind::TextBytes,
            limits.max_text_bytes,
        ));
    }
    if text.trim().is_empty() {
        return Err(PdfError::NoText);
    }
    Ok(PdfText { text, pages: spans })
}
