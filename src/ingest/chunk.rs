//! Extracted text → chunks with byte-accurate spans.
//!
//! Text is first cut into blocks (paragraphs; Markdown headings and fenced
//! code; one line per JSON leaf), blocks longer than the target are cut at
//! sentence ends (else whitespace, else a character boundary), and the
//! pieces are packed greedily into chunks of about the target size
//! ([`DEFAULT_CHUNK_TARGET_BYTES`], or `ALAYASIKI_CHUNK_TARGET_BYTES` read
//! once at start-up: see [`set_target_bytes`]).
//! A Markdown heading always opens a new chunk so it stays with the section
//! it titles. Every chunk's text is exactly `text[start..end]`, trimmed of
//! surrounding whitespace, so citations can point at the stored bytes.
//! Paginated text (PDF) is chunked page by page: no chunk spans two pages,
//! so every chunk has one page number to cite.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::extract::Page;
use super::media::MediaKind;
use crate::limits::{DEFAULT_CHUNK_TARGET_BYTES, MAX_CHUNK_TARGET_BYTES, MIN_CHUNK_TARGET_BYTES};
use crate::store::NewChunk;
use crate::text::{ceil_char_boundary, floor_char_boundary, tail};

/// The chunk target of this process (bytes); see [`set_target_bytes`].
static TARGET_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_CHUNK_TARGET_BYTES);

/// Chunks are packed up to about this many bytes: the configured target,
/// [`DEFAULT_CHUNK_TARGET_BYTES`] unless [`set_target_bytes`] changed it.
pub fn target_bytes() -> usize {
    TARGET_BYTES.load(Ordering::Relaxed)
}

/// Sets the chunk target for everything chunked afterwards in this process
/// (documents already stored keep their chunks). Called once at start-up
/// with the validated `ALAYASIKI_CHUNK_TARGET_BYTES`; a value outside
/// [`MIN_CHUNK_TARGET_BYTES`]..=[`MAX_CHUNK_TARGET_BYTES`] is clamped.
pub fn set_target_bytes(target: usize) {
    TARGET_BYTES.store(
        target.clamp(MIN_CHUNK_TARGET_BYTES, MAX_CHUNK_TARGET_BYTES),
        Ordering::Relaxed,
    );
}

/// A single block longer than the target is cut into pieces no longer than
/// the target; no chunk ever exceeds twice the target.
pub const fn max_chunk_bytes(target: usize) -> usize {
    2 * target
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
    heading: bool,
}

/// Bytes of preceding text kept as a chunk's context.
pub const CONTEXT_BYTES: usize = 400;

/// Cuts `text` into chunks at the configured target; each chunk after the
/// first gets the end of the one before as its context.
pub fn chunk(text: &str, kind: MediaKind) -> Vec<NewChunk> {
    chunk_with(text, kind, target_bytes())
}

/// [`chunk`] at a given target (bytes).
pub fn chunk_with(text: &str, kind: MediaKind, target: usize) -> Vec<NewChunk> {
    let mut chunks = chunk_unlinked(text, kind, target);
    link_contexts(&mut chunks);
    chunks
}

/// Cuts paginated text into chunks page by page (pages are byte spans of
/// `text`, in order) and returns them with the page number of each. Text
/// between pages (the separators) belongs to no chunk.
pub fn chunk_pages(text: &str, pages: &[Page]) -> (Vec<NewChunk>, Vec<u32>) {
    chunk_pages_with(text, pages, target_bytes())
}

/// [`chunk_pages`] at a given target (bytes).
pub fn chunk_pages_with(text: &str, pages: &[Page], target: usize) -> (Vec<NewChunk>, Vec<u32>) {
    let mut chunks = Vec::new();
    let mut numbers = Vec::new();
    for page in pages {
        let Some(body) = text.get(page.start..page.end) else {
            continue;
        };
        for mut c in chunk_unlinked(body, MediaKind::PlainText, target) {
            c.start += page.start;
            c.end += page.start;
            chunks.push(c);
            numbers.push(page.number);
        }
    }
    link_contexts(&mut chunks);
    (chunks, numbers)
}

/// Each chunk after the first gets the end of the one before as context.
fn link_contexts(chunks: &mut [NewChunk]) {
    for i in 1..chunks.len() {
        chunks[i].context = tail(&chunks[i - 1].text, CONTEXT_BYTES).to_string();
    }
}

fn chunk_unlinked(text: &str, kind: MediaKind, target: usize) -> Vec<NewChunk> {
    let mut pieces = Vec::new();
    for block in blocks(text, kind) {
        if block.end - block.start <= target {
            pieces.push(block);
        } else {
            split_long(text, block, target, &mut pieces);
        }
    }
    pack(text, &pieces, target)
}

/// Paragraph-level blocks, never empty.
fn blocks(text: &str, kind: MediaKind) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None; // start of the current paragraph
    let mut in_fence = false;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let body = line.trim();
        let close = |open: &mut Option<usize>, out: &mut Vec<Piece>, end: usize| {
            if let Some(s) = open.take() {
                out.push(Piece {
                    start: s,
                    end,
                    heading: false,
                });
            }
        };
        match kind {
            MediaKind::Json => {
                if !body.is_empty() {
                    out.push(Piece {
                        start: line_start,
                        end: pos,
                        heading: false,
                    });
                }
                continue;
            }
            MediaKind::Markdown => {
                if body.starts_with("```") || body.starts_with("~~~") {
                    in_fence = !in_fence;
                }
                if !in_fence && is_heading(line) {
                    close(&mut open, &mut out, line_start);
                    out.push(Piece {
                        start: line_start,
                        end: pos,
                        heading: true,
                    });
                    continue;
                }
            }
            MediaKind::PlainText | MediaKind::Pdf | MediaKind::Image(_) | MediaKind::Audio(_) => {}
        }
        if body.is_empty() && !in_fence {
            close(&mut open, &mut out, line_start);
        } else if open.is_none() {
            open = Some(line_start);
        }
    }
    if let Some(s) = open {
        out.push(Piece {
            start: s,
            end: text.len(),
            heading: false,
        });
    }
    out
}

/// ATX headings: up to three spaces, one to six `#`, then space or end.
fn is_heading(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    (1..=6).contains(&hashes)
        && rest[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t' || c == '\n' || c == '\r')
}

/// Cuts an oversized block into pieces of at most the target size,
/// preferring sentence ends in the second half of each window, then
/// whitespace, then any character boundary.
fn split_long(text: &str, block: Piece, target: usize, out: &mut Vec<Piece>) {
    let mut pos = block.start;
    while block.end - pos > target {
        let limit = floor_char_boundary(text, pos + target);
        let window = &text[pos..limit];
        let half = floor_char_boundary(window, window.len() / 2);
        let cut = last_sentence_end(window, half)
            .or_else(|| last_whitespace_end(window, half))
            .map(|i| pos + i)
            .filter(|&c| c > pos)
            .unwrap_or(limit.max(ceil_char_boundary(text, pos + 1)));
        out.push(Piece {
            start: pos,
            end: cut,
            heading: block.heading,
        });
        pos = cut;
    }
    if pos < block.end {
        out.push(Piece {
            start: pos,
            end: block.end,
            heading: false,
        });
    }
}

/// Offset just after the last `.`, `!`, `?` (or newline) that is followed by
/// whitespace, at or after `from`.
fn last_sentence_end(window: &str, from: usize) -> Option<usize> {
    let bytes = window.as_bytes();
    (from.max(1)..bytes.len()).rev().find(|&i| {
        let prev = bytes[i - 1];
        let ends = matches!(prev, b'.' | b'!' | b'?') && bytes[i].is_ascii_whitespace();
        ends || prev == b'\n'
    })
}

/// Offset just after the last whitespace character at or after `from`.
fn last_whitespace_end(window: &str, from: usize) -> Option<usize> {
    window[from..]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map(|(i, c)| from + i + c.len_utf8())
}

/// Greedy packing of pieces into chunks, trimmed, never empty.
fn pack(text: &str, pieces: &[Piece], target: usize) -> Vec<NewChunk> {
    let mut chunks = Vec::new();
    let mut current: Option<(usize, usize, bool)> = None; // (start, end, has_body)
    for p in pieces {
        current = match current {
            None => Some((p.start, p.end, !p.heading)),
            Some((s, e, has_body)) => {
                let heading_after_body = p.heading && has_body;
                if heading_after_body || p.end - s > target {
                    emit(text, s, e, &mut chunks);
                    Some((p.start, p.end, !p.heading))
                } else {
                    Some((s, p.end, has_body || !p.heading))
                }
            }
        };
    }
    if let Some((s, e, _)) = current {
        emit(text, s, e, &mut chunks);
    }
    chunks
}

fn emit(text: &str, start: usize, end: usize, out: &mut Vec<NewChunk>) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let trimmed = slice.trim();
    if trimmed.is_empty() {
        return;
    }
    let s = start + lead;
    out.push(NewChunk {
        start: s,
        end: s + trimmed.len(),
        text: trimmed.to_string(),
        context: String::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_spans(text: &str, chunks: &[NewChunk]) {
        check_spans_at(text, chunks, DEFAULT_CHUNK_TARGET_BYTES);
    }

    fn check_spans_at(text: &str, chunks: &[NewChunk], target: usize) {
        for c in chunks {
            assert_eq!(
                &text[c.start..c.end],
                c.text,
                "span must point at the chunk's bytes"
            );
            assert!(c.text.len() <= max_chunk_bytes(target));
            assert!(!c.text.trim().is_empty());
        }
    }

    #[test]
    fn short_text_is_one_trimmed_chunk() {
        let text = "  The startup acquired a company.  \n";
        let chunks = chunk(text, MediaKind::PlainText);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "The startup acquired a company.");
        check_spans(text, &chunks);
    }

    #[test]
    fn paragraphs_pack_up_to_the_target() {
        let para = "Sentence one is here. Sentence two follows it.\n\n";
        let text = para.repeat(60);
        let chunks = chunk(&text, MediaKind::PlainText);
        assert!(chunks.len() > 1);
        for c in &chunks {
            assert!(c.text.len() <= DEFAULT_CHUNK_TARGET_BYTES);
        }
        check_spans(&text, &chunks);
    }

    #[test]
    fn the_target_sets_the_chunk_size_at_both_ends_of_its_range() {
        let para = "Sentence one is here. Sentence two follows it.\n\n";
        let text = para.repeat(400);
        let long = "Alpha beta gamma delta. ".repeat(800);
        let mut counts = Vec::new();
        for target in [MIN_CHUNK_TARGET_BYTES, 1000, MAX_CHUNK_TARGET_BYTES] {
            let chunks = chunk_with(&text, MediaKind::PlainText, target);
            check_spans_at(&text, &chunks, target);
            for c in &chunks {
                assert!(c.text.len() <= target, "{} > {target}", c.text.len());
            }
            // Greedy packing: no chunk but the last had room for another
            // paragraph.
            for c in &chunks[..chunks.len() - 1] {
                assert!(c.text.len() + para.len() > target, "{}", c.text.len());
            }
            let cut = chunk_with(&long, MediaKind::PlainText, target);
            check_spans_at(&long, &cut, target);
            assert!(cut[..cut.len() - 1].iter().all(|c| c.text.ends_with('.')));
            let (paged, _) = chunk_pages_with(
                &text,
                &[Page {
                    number: 1,
                    start: 0,
                    end: text.len(),
                }],
                target,
            );
            assert_eq!(paged.len(), chunks.len());
            counts.push(chunks.len());
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    }

    #[test]
    fn long_paragraph_is_cut_at_sentence_ends() {
        let text = "Alpha beta gamma delta. ".repeat(200);
        let chunks = chunk(&text, MediaKind::PlainText);
        assert!(chunks.len() >= 4);
        for c in &chunks[..chunks.len() - 1] {
            assert!(
                c.text.ends_with('.'),
                "cut mid-sentence: {:?}",
                &c.text[c.text.len() - 10..]
            );
        }
        check_spans(&text, &chunks);
    }

    #[test]
    fn text_without_spaces_is_cut_on_char_boundaries() {
        let text = "é".repeat(3000) + &"漢".repeat(1000);
        let chunks = chunk(&text, MediaKind::PlainText);
        check_spans(&text, &chunks);
        let total: usize = chunks.iter().map(|c| c.text.len()).sum();
        assert_eq!(total, text.len(), "nothing lost");
    }

    #[test]
    fn markdown_heading_opens_a_chunk_with_its_section() {
        let text = "# Title\n\nIntro text.\n\n## Install\n\nRun cargo build.\n";
        let chunks = chunk(text, MediaKind::Markdown);
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert_eq!(chunks[0].text, "# Title\n\nIntro text.");
        assert_eq!(chunks[1].text, "## Install\n\nRun cargo build.");
        check_spans(text, &chunks);
    }

    #[test]
    fn fenced_code_with_blank_lines_stays_whole() {
        let text = "## Code\n\n```\nfn a() {}\n\n# not a heading\nfn b() {}\n```\n";
        let chunks = chunk(text, MediaKind::Markdown);
        assert_eq!(chunks.len(), 1, "{chunks:?}");
        check_spans(text, &chunks);
    }

    #[test]
    fn pages_are_chunked_apart_and_numbered() {
        let text = "Page one text.\n\x0c\nPage two.\n\nMore of two.\n\x0c\n\n\x0c\nFour.";
        let pages = [
            Page {
                number: 1,
                start: 0,
                end: 14,
            },
            Page {
                number: 2,
                start: 17,
                end: 40,
            },
            Page {
                number: 3,
                start: 43,
                end: 43,
            },
            Page {
                number: 4,
                start: 46,
                end: 51,
            },
        ];
        let (chunks, numbers) = chunk_pages(text, &pages);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            ["Page one text.", "Page two.\n\nMore of two.", "Four."]
        );
        assert_eq!(numbers, [1, 2, 4]);
        assert_eq!(chunks[1].context, "Page one text.");
        check_spans(text, &chunks);
    }

    #[test]
    fn empty_and_blank_text_give_no_chunks() {
        assert!(chunk("", MediaKind::PlainText).is_empty());
        assert!(chunk(" \n\n\t ", MediaKind::Markdown).is_empty());
    }

    #[test]
    fn arbitrary_text_never_breaks_spans() {
        let mut seed = 7u64;
        let alphabet = [
            "a", " ", "\n", ".", "é", "漢", "#", "\n\n", "```", "!", "😀", "\r\n",
        ];
        for _ in 0..200 {
            let mut text = String::new();
            for _ in 0..(seed % 3000) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            for kind in [MediaKind::PlainText, MediaKind::Markdown, MediaKind::Json] {
                check_spans(&text, &chunk(&text, kind));
            }
        }
    }
}
