//! Tokenization of one sentence into shaped tokens.
//!
//! Owns cutting a sentence into whitespace-delimited chunks, peeling
//! punctuation off their edges (keeping the period of abbreviations such as
//! "Corp." and the parentheses of calls such as "run()"), splitting off
//! possessive "'s", and caching each core's shape (see `shapes`) and lexicon
//! membership. Backtick spans and short double-quoted spans become single
//! tokens so that later stages treat them atomically.
//!
//! Must never: slice off a char boundary, look outside the sentence range,
//! or decide what is an entity (that is `mentions`' job; shapes only
//! describe how a token is written).

use super::lexicon::{self, ABBREVIATIONS_STRONG, ABBREVIATIONS_WEAK, STOPWORDS};
use super::shapes::classify;
pub(super) use super::shapes::Shape;
use crate::text::floor_char_boundary;

/// Longest backtick code span, in bytes, accepted as one token.
pub(super) const MAX_CODE_SPAN_BYTES: usize = 120;
/// Longest double-quoted span, in bytes, accepted as one quoted term.
pub(super) const MAX_QUOTED_BYTES: usize = 80;
/// Most words inside a double-quoted span accepted as one quoted term;
/// longer quotes are reported speech, not terms.
pub(super) const MAX_QUOTED_WORDS: usize = 6;

/// One token: a byte range into the whole text and its shape.
#[derive(Debug, Clone, Copy)]
pub(super) struct Token<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
    pub shape: Shape,
    /// The token was followed by "'s" (excluded from `text`/`end`).
    pub possessive: bool,
    /// First token on its line.
    pub line_start: bool,
    /// Lexicon lists containing the text (or the text without a final
    /// period), computed once: see [`lexicon::membership`].
    pub lex: u64,
}

impl Token<'_> {
    /// Whether this token's word is in `list` (case-insensitive).
    pub(super) fn is_in(&self, list: lexicon::Lex) -> bool {
        list.in_mask(self.lex)
    }

    pub(super) fn is_punct(&self, c: char) -> bool {
        self.shape == Shape::Punct && self.text.starts_with(c)
    }

    /// A name-like shape that can be part of a proper-noun span.
    pub(super) fn is_namey(&self) -> bool {
        matches!(self.shape, Shape::Cap | Shape::Upper | Shape::Camel)
    }
}

fn is_opener(c: char) -> bool {
    matches!(
        c,
        '(' | '[' | '{' | '"' | '\'' | '`' | '\u{201c}' | '\u{2018}' | '\u{ab}'
    )
}

fn is_closer(c: char) -> bool {
    matches!(
        c,
        ')' | ']'
            | '}'
            | '"'
            | '\''
            | '`'
            | '\u{201d}'
            | '\u{2019}'
            | '\u{bb}'
            | ','
            | ';'
            | ':'
            | '.'
            | '!'
            | '?'
            | '\u{2026}'
    )
}

/// Tokenizes `text[start..end]`, appending to `out`.
pub(super) fn tokenize<'a>(
    text: &'a str,
    start: usize,
    end: usize,
    starts_line: bool,
    out: &mut Vec<Token<'a>>,
) {
    let mut pos = start;
    let mut line_start = starts_line;
    while pos < end {
        // Skip whitespace, noting line breaks.
        let Some(c) = text[pos..end].chars().next() else {
            break;
        };
        if c.is_whitespace() {
            if c == '\n' {
                line_start = true;
            }
            pos += c.len_utf8();
            continue;
        }
        let chunk_end = text[pos..end]
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
            .map_or(end, |(i, _)| pos + i);
        let before = out.len();
        pos = chunk(text, pos, chunk_end, end, out);
        if line_start && out.len() > before {
            out[before].line_start = true;
            line_start = false;
        }
    }
}

fn punct<'a>(text: &'a str, at: usize, c: char) -> Token<'a> {
    let end = at + c.len_utf8();
    Token {
        start: at,
        end,
        text: &text[at..end],
        shape: Shape::Punct,
        possessive: false,
        line_start: false,
        lex: 0,
    }
}

/// Tokenizes one chunk; returns where scanning resumes (a backtick or quote
/// span may extend past the chunk).
fn chunk<'a>(
    text: &'a str,
    mut pos: usize,
    chunk_end: usize,
    limit: usize,
    out: &mut Vec<Token<'a>>,
) -> usize {
    // Leading openers, including spans introduced by backticks and quotes.
    while pos < chunk_end {
        let Some(c) = text[pos..chunk_end].chars().next() else {
            break;
        };
        if !is_opener(c) {
            break;
        }
        if let Some(resume) = delimited_span(text, pos, c, limit, out) {
            return resume;
        }
        out.push(punct(text, pos, c));
        pos += c.len_utf8();
    }
    if pos >= chunk_end {
        return chunk_end;
    }
    // Trailing closers, peeled from the end; emitted in text order after
    // the core.
    let mut core_end = chunk_end;
    while core_end > pos {
        let Some(c) = text[pos..core_end].chars().next_back() else {
            break;
        };
        if !is_closer(c) {
            break;
        }
        let cut = core_end - c.len_utf8();
        if c == '.' && keeps_period(&text[pos..cut]) {
            break;
        }
        if c == ')' && has_unclosed_paren(&text[pos..cut]) {
            break;
        }
        core_end = cut;
    }
    if core_end > pos {
        core(text, pos, core_end, out);
    }
    for (at, c) in text[core_end..chunk_end].char_indices() {
        out.push(punct(text, core_end + at, c));
    }
    chunk_end
}

/// Recognizes a backtick span or a short double-quoted term starting at
/// `pos`, pushing it as one token. Returns the resume position.
fn delimited_span<'a>(
    text: &'a str,
    pos: usize,
    open: char,
    limit: usize,
    out: &mut Vec<Token<'a>>,
) -> Option<usize> {
    let (closers, max_bytes, shape): (&[char], usize, Shape) = match open {
        '`' => (&['`'], MAX_CODE_SPAN_BYTES, Shape::Backtick),
        '"' => (&['"'], MAX_QUOTED_BYTES, Shape::Quoted),
        '\u{201c}' => (&['\u{201d}', '"'], MAX_QUOTED_BYTES, Shape::Quoted),
        _ => return None,
    };
    let inner_start = pos + open.len_utf8();
    let window_end = limit.min(inner_start.saturating_add(max_bytes + 1));
    let window_end = floor_char_boundary(text, window_end);
    let window = &text[inner_start..window_end];
    let rel = window.find(|c: char| closers.contains(&c) || c == '\n')?;
    let close_char = window[rel..].chars().next()?;
    if close_char == '\n' {
        return None;
    }
    let inner = &window[..rel];
    let after = inner_start + rel + close_char.len_utf8();
    let trimmed = inner.trim();
    if trimmed.is_empty() || trimmed.len() != inner.len() {
        return None;
    }
    if shape == Shape::Quoted {
        let words = inner.split_whitespace().count();
        let ends_clause = inner.ends_with(['.', '!', '?', ',', ';', ':']);
        let glued = text[after..limit]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        if words > MAX_QUOTED_WORDS || ends_clause || glued {
            return None;
        }
    }
    out.push(Token {
        start: inner_start,
        end: inner_start + rel,
        text: inner,
        shape,
        possessive: false,
        line_start: false,
        lex: 0,
    });
    Some(after)
}

/// Whether a word keeps its final period (abbreviation, initial, or dotted
/// acronym like "U.S").
fn keeps_period(word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let mut chars = word.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return c.is_uppercase();
    }
    if lexicon::contains(ABBREVIATIONS_STRONG, word) || lexicon::contains(ABBREVIATIONS_WEAK, word)
    {
        return true;
    }
    // Dotted acronym: single letters separated by periods ("U.S", "e.g").
    word.split('.')
        .all(|seg| seg.chars().count() == 1 && seg.chars().all(char::is_alphabetic))
}

fn has_unclosed_paren(s: &str) -> bool {
    s.matches('(').count() > s.matches(')').count()
}

/// Pushes the core of a chunk, splitting "NAME=value" assignments and the
/// possessive "'s".
fn core<'a>(text: &'a str, start: usize, end: usize, out: &mut Vec<Token<'a>>) {
    let s = &text[start..end];
    if let Some(eq) = s.find('=') {
        let (left, right) = (&s[..eq], &s[eq + 1..]);
        let ident = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        };
        if ident(left) && !right.is_empty() && !right.starts_with('=') {
            core(text, start, start + eq, out);
            out.push(punct(text, start + eq, '='));
            core(text, start + eq + 1, end, out);
            return;
        }
    }
    let mut core_end = end;
    let mut possessive = false;
    for suffix in ["'s", "\u{2019}s"] {
        if s.len() > suffix.len() + 1 && s.ends_with(suffix) && !lexicon::contains(STOPWORDS, s) {
            let head = &s[..s.len() - suffix.len()];
            if head.chars().next_back().is_some_and(char::is_alphanumeric) {
                core_end = end - suffix.len();
                possessive = true;
            }
        }
    }
    let word = &text[start..core_end];
    let mut lex = lexicon::membership(word);
    if let Some(bare) = word.strip_suffix('.') {
        lex |= lexicon::membership(bare);
    }
    out.push(Token {
        start,
        end: core_end,
        text: word,
        shape: classify(word),
        possessive,
        line_start: false,
        lex,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<(String, Shape)> {
        let mut out = Vec::new();
        tokenize(text, 0, text.len(), true, &mut out);
        out.iter().map(|t| (t.text.to_string(), t.shape)).collect()
    }

    #[test]
    fn punctuation_is_peeled_but_abbreviations_keep_their_period() {
        let t = toks("(Acme Corp.) said, e.g. Dr. Who.");
        let words: Vec<&str> = t.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            words,
            ["(", "Acme", "Corp.", ")", "said", ",", "e.g.", "Dr.", "Who", "."]
        );
    }

    #[test]
    fn possessive_is_split_off() {
        let mut out = Vec::new();
        tokenize("Acme's CEO", 0, 10, true, &mut out);
        assert_eq!(out[0].text, "Acme");
        assert!(out[0].possessive);
        assert_eq!(out[1].text, "CEO");
    }

    #[test]
    fn backticks_and_short_quotes_are_single_tokens() {
        let t = toks("run `cargo test --release` and call it \"project lantern\".");
        assert!(t.contains(&("cargo test --release".to_string(), Shape::Backtick)));
        assert!(t.contains(&("project lantern".to_string(), Shape::Quoted)));
        let long = toks("she said \"this is far too long to be a term really\" ok");
        assert!(long.iter().all(|(_, s)| *s != Shape::Quoted));
    }

    #[test]
    fn assignments_are_split() {
        let t = toks("Set RUST_LOG=debug now");
        assert_eq!(t[1], ("RUST_LOG".to_string(), Shape::Code));
    }
}
