//! Sentence segmentation.
//!
//! Owns splitting a text into sentence byte ranges. A sentence ends at
//! `.`, `!`, `?` or `…` followed by whitespace (or the end of the text), at a
//! blank line, and at a line break that does not look like hard-wrapped
//! prose. A period after an abbreviation ("Dr.", "e.g.", "U.S."), an initial
//! ("J. Smith") or inside a token ("3.5", "example.com/a.b") does not end a
//! sentence.
//!
//! Must never: return ranges that are empty, overlapping, out of order or not
//! on char boundaries; allocate per character; or let one sentence grow past
//! [`MAX_SENTENCE_BYTES`] (later stages are linear per sentence, but a bound
//! keeps pathological inputs such as one megabyte without punctuation cheap).

use super::lexicon::{self, ABBREVIATIONS_STRONG, ABBREVIATIONS_WEAK, STOPWORDS};

/// Longest sentence, in bytes, before it is force-split at the next
/// whitespace. Real sentences are far shorter; this only guards run-ons.
pub(super) const MAX_SENTENCE_BYTES: usize = 2_000;

/// A sentence as a byte range into the text, plus whether it starts a line
/// (chat speakers and list items are line-scoped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sentence {
    pub start: usize,
    pub end: usize,
    pub starts_line: bool,
}

/// Characters that may close a sentence after its terminal punctuation.
fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | ')' | ']' | '}' | '\u{201d}' | '\u{2019}' | '\u{bb}'
    )
}

fn is_terminal(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '\u{2026}')
}

/// Splits `text` into sentences.
pub(super) fn split(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let c = match text[i..].chars().next() {
            Some(c) => c,
            None => break,
        };
        let next = i + c.len_utf8();
        if c == '\n' {
            if newline_ends_sentence(text, i) {
                push(text, start, i, &mut out);
                start = next;
            }
        } else if is_terminal(c) {
            // Swallow runs like "?!" or "..." and any closing quotes.
            let mut end = next;
            for d in text[end..].chars() {
                if is_terminal(d) || is_closer(d) {
                    end += d.len_utf8();
                } else {
                    break;
                }
            }
            let at_boundary = text[end..].chars().next().is_none_or(char::is_whitespace);
            if at_boundary && terminal_ends_sentence(text, i, c, end) {
                push(text, start, end, &mut out);
                start = end;
            }
            i = end;
            continue;
        } else if c.is_whitespace() && i - start >= MAX_SENTENCE_BYTES {
            push(text, start, i, &mut out);
            start = next;
        }
        i = next;
    }
    push(text, start, text.len(), &mut out);
    out
}

/// Trims whitespace and records a non-empty sentence.
fn push(text: &str, start: usize, end: usize, out: &mut Vec<Sentence>) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let trimmed = slice.trim();
    if trimmed.is_empty() {
        return;
    }
    let s = start + lead;
    let starts_line = text[..s]
        .chars()
        .rev()
        .find(|c| !matches!(c, ' ' | '\t'))
        .is_none_or(|c| c == '\n' || c == '\r');
    out.push(Sentence {
        start: s,
        end: s + trimmed.len(),
        starts_line,
    });
}

/// A line break ends a sentence unless it sits inside hard-wrapped prose:
/// the previous line ends mid-clause (a lowercase letter or a comma) and the
/// next line continues in lowercase.
fn newline_ends_sentence(text: &str, nl: usize) -> bool {
    let before = text[..nl].trim_end_matches([' ', '\t', '\r']);
    let after = text[nl + 1..].trim_start_matches([' ', '\t', '\r']);
    if after.starts_with('\n') || before.is_empty() {
        return true;
    }
    let prev = before.chars().next_back();
    let next = after.chars().next();
    let prev_open = prev.is_some_and(|c| c.is_lowercase() || c == ',');
    let next_cont = next.is_some_and(char::is_lowercase);
    !(prev_open && next_cont)
}

/// Decides whether terminal punctuation `c` at byte `at` (with the run ending
/// at `end`) closes the sentence.
fn terminal_ends_sentence(text: &str, at: usize, c: char, end: usize) -> bool {
    if c != '.' || end > at + 1 {
        // "!", "?", "…", "..." and "." followed by a quote always end.
        return true;
    }
    let word = preceding_word(text, at);
    let next_word = following_word(text, end);
    if word.is_empty() {
        return true;
    }
    // An initial such as the "J" in "J. Smith".
    let mut chars = word.chars();
    if let (Some(first), None) = (chars.next(), chars.next()) {
        if first.is_uppercase() {
            return false;
        }
    }
    if lexicon::contains(ABBREVIATIONS_STRONG, word) {
        return false;
    }
    if lexicon::contains(ABBREVIATIONS_WEAK, word) {
        // "Widgets Inc. for $30" continues; "Widgets Inc. The deal" ends.
        let opener = next_word.chars().next().is_some_and(char::is_uppercase)
            && lexicon::contains(STOPWORDS, next_word);
        return opener || next_word.is_empty();
    }
    true
}

/// The run of non-space characters right before byte `at`, without leading
/// brackets or quotes.
fn preceding_word(text: &str, at: usize) -> &str {
    let head = &text[..at];
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    head[start..].trim_start_matches(['(', '[', '"', '\'', '\u{201c}', '\u{2018}'])
}

/// The next word after byte `from`, stripped of punctuation.
fn following_word(text: &str, from: usize) -> &str {
    let rest = text[from..].trim_start();
    let rest = rest.trim_start_matches(['(', '[', '"', '\'', '\u{201c}', '\u{2018}']);
    let end = rest
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '\'' || *c == '\u{2019}'))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        split(text).iter().map(|s| &text[s.start..s.end]).collect()
    }

    #[test]
    fn splits_on_terminal_punctuation() {
        assert_eq!(
            texts("Acme grew. Did it? Yes! Done"),
            ["Acme grew.", "Did it?", "Yes!", "Done"]
        );
    }

    #[test]
    fn abbreviations_and_initials_do_not_split() {
        assert_eq!(
            texts("Dr. Smith met J. R. Tolkien, e.g. in the U.S. Department of State."),
            ["Dr. Smith met J. R. Tolkien, e.g. in the U.S. Department of State."]
        );
    }

    #[test]
    fn corporate_suffix_splits_only_before_a_sentence_opener() {
        assert_eq!(
            texts("Acme bought Widgets Inc. for $3. The deal closed."),
            ["Acme bought Widgets Inc. for $3.", "The deal closed."]
        );
        assert_eq!(
            texts("Acme bought Widgets Inc. The deal closed."),
            ["Acme bought Widgets Inc.", "The deal closed."]
        );
    }

    #[test]
    fn decimals_and_urls_do_not_split() {
        assert_eq!(
            texts("It runs at 3.5 GHz, see https://a.example.com/x.html. Next one."),
            [
                "It runs at 3.5 GHz, see https://a.example.com/x.html.",
                "Next one."
            ]
        );
    }

    #[test]
    fn line_breaks_split_chat_turns_but_not_wrapped_prose() {
        assert_eq!(
            texts("Caroline: hi there\nMelanie: hello"),
            ["Caroline: hi there", "Melanie: hello"]
        );
        assert_eq!(
            texts("the cache was\nflushed twice"),
            ["the cache was\nflushed twice"]
        );
        let s = split("a.\n  b");
        assert!(s[0].starts_line && s[1].starts_line);
    }

    #[test]
    fn run_on_text_is_force_split() {
        let text = "word ".repeat(2 * MAX_SENTENCE_BYTES);
        let parts = split(&text);
        assert!(parts.len() >= 4);
        assert!(parts
            .iter()
            .all(|s| s.end - s.start <= MAX_SENTENCE_BYTES + 8));
    }
}
