//! Tokenization of one sentence into shaped tokens.
//!
//! Owns cutting a sentence into whitespace-delimited chunks, peeling
//! punctuation off their edges (keeping the period of abbreviations such as
//! "Corp." and the parentheses of calls such as "run()"), splitting off
//! possessive "'s", and classifying each core by its *shape*: capitalized
//! word, acronym, CamelCase, number, time, ISO date, code identifier, URL,
//! email. Backtick spans and short double-quoted spans become single tokens
//! so that later stages treat them atomically.
//!
//! Must never: slice off a char boundary, look outside the sentence range,
//! or decide what is an entity (that is `mentions`' job; shapes only
//! describe how a token is written).

use super::lexicon::{self, ABBREVIATIONS_STRONG, ABBREVIATIONS_WEAK, STOPWORDS};

/// Longest backtick code span, in bytes, accepted as one token.
pub(super) const MAX_CODE_SPAN_BYTES: usize = 120;
/// Longest double-quoted span, in bytes, accepted as one quoted term.
pub(super) const MAX_QUOTED_BYTES: usize = 80;
/// Most words inside a double-quoted span accepted as one quoted term;
/// longer quotes are reported speech, not terms.
pub(super) const MAX_QUOTED_WORDS: usize = 6;

/// How a token is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Starts with a lowercase letter: "support", "p99", "login-refactor".
    Lower,
    /// Capitalized word: "Paris", "Jean-Luc", "Corp.", "O'Brien", "I".
    Cap,
    /// All capitals (acronym), possibly with digits: "NASA", "GPT-4", "M3".
    Upper,
    /// Mixed case inside the word: "OpenAI", "iPhone", "PostgreSQL".
    Camel,
    /// Starts with a digit or currency sign: "30", "3.5", "8th", "$1.2M".
    Number,
    /// Clock time: "1:56", "10:30am", "5pm".
    Time,
    /// ISO-8601 date, optionally with a time: "2024-05-01".
    IsoDate,
    /// Code identifier, path, file name or flag: "parse_config",
    /// "foo::bar", "src/main.rs", "--release", "v2.3.0".
    Code,
    Url,
    Email,
    /// Inner text of a short double-quoted span.
    Quoted,
    /// Inner text of a backtick span.
    Backtick,
    /// A single punctuation character.
    Punct,
    /// Anything else ("#42", "C#", emoji).
    Other,
}

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
}

impl Token<'_> {
    pub(super) fn is_punct(&self, c: char) -> bool {
        self.shape == Shape::Punct && self.text.starts_with(c)
    }

    /// A name-like shape that can be part of a proper-noun span.
    pub(super) fn is_namey(&self) -> bool {
        matches!(self.shape, Shape::Cap | Shape::Upper | Shape::Camel)
    }

    /// The token text lowercased for comparisons that need ownership.
    pub(super) fn lower(&self) -> String {
        self.text.chars().map(super::lexicon::fold).collect()
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
    // Trailing closers, kept on a stack to emit in text order afterwards.
    let mut core_end = chunk_end;
    let mut trailing: Vec<(usize, char)> = Vec::new();
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
        trailing.push((cut, c));
        core_end = cut;
    }
    if core_end > pos {
        core(text, pos, core_end, out);
    }
    for &(at, c) in trailing.iter().rev() {
        out.push(punct(text, at, c));
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
        let glued = text[after..limit].chars().next().is_some_and(char::is_alphanumeric);
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
    });
    Some(after)
}

/// Largest char boundary not after `i`.
pub(super) fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
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
            !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
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
    out.push(Token {
        start,
        end: core_end,
        text: word,
        shape: classify(word),
        possessive,
        line_start: false,
    });
}

const CURRENCY: [char; 6] = ['$', '\u{20ac}', '\u{a3}', '\u{a5}', '\u{20b9}', '\u{20a9}'];

/// File extensions that make "name.ext" a file name.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "conf", "cpp", "cs", "css", "csv", "db", "go", "h", "hpp", "html", "ini",
    "java", "js", "json", "jsonl", "jsx", "kt", "lock", "log", "md", "parquet", "pdf", "php",
    "png", "py", "rb", "rs", "sh", "sql", "sqlite", "svg", "swift", "toml", "ts", "tsx", "txt",
    "xml", "yaml", "yml", "zip",
];

/// Classifies a token core by how it is written.
pub(super) fn classify(w: &str) -> Shape {
    let Some(first) = w.chars().next() else {
        return Shape::Other;
    };
    let lower_w = |p: &str| w.len() > p.len() && w[..p.len()].eq_ignore_ascii_case(p);
    if lower_w("http://") || lower_w("https://") || lower_w("www.") {
        return Shape::Url;
    }
    if is_email(w) {
        return Shape::Email;
    }
    if is_iso_date(w) {
        return Shape::IsoDate;
    }
    if is_time(w) {
        return Shape::Time;
    }
    if first.is_ascii_digit() || (CURRENCY.contains(&first) && w[first.len_utf8()..].starts_with(|c: char| c.is_ascii_digit()))
    {
        if let Some(shape) = classify_numeric(w) {
            return shape;
        }
    }
    if is_code(w) {
        return Shape::Code;
    }
    if !first.is_alphabetic() {
        return if w.chars().count() == 1 { Shape::Punct } else { Shape::Other };
    }
    let letters = w.chars().filter(|c| c.is_alphabetic());
    let (mut upper, mut lower) = (0usize, 0usize);
    for c in letters {
        if c.is_uppercase() {
            upper += 1;
        } else if c.is_lowercase() {
            lower += 1;
        }
    }
    let has_digit = w.chars().any(|c| c.is_ascii_digit());
    if first.is_uppercase() {
        if lower == 0 {
            return if upper >= 2 || has_digit { Shape::Upper } else { Shape::Cap };
        }
        if upper >= 2 && lower == 1 && w.ends_with('s') {
            return Shape::Upper; // "APIs"
        }
        if is_camel(w) {
            return Shape::Camel;
        }
        return Shape::Cap;
    }
    if first.is_lowercase() && upper > 0 && is_camel(w) {
        return Shape::Camel;
    }
    Shape::Lower
}

/// Numbers, money, percentages, ordinals and number+unit glued ("10MB").
fn classify_numeric(w: &str) -> Option<Shape> {
    let body = w.trim_start_matches(CURRENCY);
    let digits_end = body
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == ',' || *c == '.'))
        .map_or(body.len(), |(i, _)| i);
    let (num, rest) = body.split_at(digits_end);
    if num.ends_with(['.', ',']) || num.matches('.').count() > 1 {
        return None; // "1.2.3" is a version, handled as code
    }
    if rest.is_empty() || rest == "%" || rest.chars().all(char::is_alphabetic) {
        return Some(Shape::Number);
    }
    None
}

/// An uppercase letter directly after a lowercase one, outside name
/// prefixes like "Mc"/"Mac"/"O'".
fn is_camel(w: &str) -> bool {
    let tail = if w.starts_with("Mc") {
        &w[2..]
    } else if w.starts_with("Mac") {
        &w[3..]
    } else {
        w
    };
    let mut prev_lower = false;
    for c in tail.chars() {
        if c.is_uppercase() && prev_lower {
            return true;
        }
        prev_lower = c.is_lowercase();
    }
    false
}

fn is_email(w: &str) -> bool {
    let Some((local, domain)) = w.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-'))
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '-'))
}

fn is_iso_date(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && (b.len() == 10 || b[10] == b'T' || b[10] == b't')
}

/// "1:56", "13:45:10", "10:30am", "5pm".
fn is_time(w: &str) -> bool {
    if !w.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let lower = w.to_ascii_lowercase();
    let body = lower
        .strip_suffix("am")
        .or_else(|| lower.strip_suffix("pm"))
        .unwrap_or(&lower);
    let has_meridiem = body.len() != lower.len();
    let parts: Vec<&str> = body.split(':').collect();
    let all_digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [h] => has_meridiem && all_digits(h) && h.len() <= 2,
        [h, m] | [h, m, _] => {
            parts.iter().all(all_digits) && h.len() <= 2 && m.len() == 2
        }
        _ => false,
    }
}

/// Identifiers, paths, file names, flags and versions.
fn is_code(w: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    if w.starts_with("--") && w[2..].starts_with(|c: char| c.is_alphanumeric()) {
        return true;
    }
    if w.contains("::") {
        return true;
    }
    let mut prev: Option<char> = None;
    let mut chars = w.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            let left = prev.is_none_or(char::is_alphanumeric);
            let right = chars.peek().is_some_and(|n| n.is_alphanumeric());
            if left && right {
                return true;
            }
        }
        prev = Some(c);
    }
    if w.ends_with("()") && w.len() > 2 {
        return true;
    }
    if let Some(open) = w.find(['(', '<']) {
        if open > 0 && w[..open].chars().all(|c| ident(c) || c == '.') && w.ends_with([')', '>']) {
            return true;
        }
    }
    if w.contains('/') {
        return is_path(w);
    }
    if w.contains('.') && !w.ends_with('.') {
        let segs: Vec<&str> = w.split('.').collect();
        if segs.iter().any(|s| s.is_empty() || !s.chars().all(|c| ident(c) || c == '-')) {
            return false;
        }
        let version = segs.iter().all(|s| {
            let s = s.strip_prefix(['v', 'V']).unwrap_or(s);
            !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
        });
        if version {
            return segs.len() >= 3 || w.starts_with(['v', 'V']);
        }
        let ext = segs.last().copied().unwrap_or("");
        if segs.len() >= 2 && FILE_EXTENSIONS.contains(&ext) {
            return true;
        }
        // "foo.bar" with at least one multi-letter lowercase segment.
        return segs.len() >= 2
            && segs.iter().all(|s| s.chars().count() >= 2 || s.bytes().all(|b| b.is_ascii_digit()))
            && segs.iter().any(|s| s.chars().next().is_some_and(char::is_lowercase));
    }
    false
}

/// A path needs more evidence than a slash ("and/or" is not one): a leading
/// "/", "./" or "~/", a trailing "/", a file extension, three segments, or a
/// hyphen/underscore/digit in a segment.
fn is_path(w: &str) -> bool {
    let segs: Vec<&str> = w.split('/').collect();
    let seg_ok = |s: &&str| {
        s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '~' | '*' | '@'))
    };
    if !segs.iter().all(seg_ok) || segs.iter().filter(|s| !s.is_empty()).count() == 0 {
        return false;
    }
    if w.starts_with('/') || w.starts_with("./") || w.starts_with("~/") || w.starts_with("../") {
        return segs.iter().filter(|s| !s.is_empty()).count() >= 1 && w.len() > 2;
    }
    if segs.iter().any(|s| s.is_empty()) && !w.ends_with('/') {
        return false;
    }
    if segs.iter().all(|s| s.bytes().all(|b| b.is_ascii_digit())) {
        return false; // "24/7", "3/4"
    }
    let last = segs.iter().rev().find(|s| !s.is_empty()).copied().unwrap_or("");
    let has_ext = last
        .rsplit_once('.')
        .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext));
    let marked = segs
        .iter()
        .any(|s| s.contains(['-', '_']) || s.bytes().any(|b| b.is_ascii_digit()));
    w.ends_with('/') || has_ext || segs.len() >= 3 || marked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<(String, Shape)> {
        let mut out = Vec::new();
        tokenize(text, 0, text.len(), true, &mut out);
        out.iter().map(|t| (t.text.to_string(), t.shape)).collect()
    }

    fn shape_of(w: &str) -> Shape {
        classify(w)
    }

    #[test]
    fn shapes_describe_how_words_are_written() {
        assert_eq!(shape_of("Paris"), Shape::Cap);
        assert_eq!(shape_of("NASA"), Shape::Upper);
        assert_eq!(shape_of("GPT-4"), Shape::Upper);
        assert_eq!(shape_of("APIs"), Shape::Upper);
        assert_eq!(shape_of("OpenAI"), Shape::Camel);
        assert_eq!(shape_of("iPhone"), Shape::Camel);
        assert_eq!(shape_of("McDonald"), Shape::Cap);
        assert_eq!(shape_of("3.5"), Shape::Number);
        assert_eq!(shape_of("$1.2M"), Shape::Number);
        assert_eq!(shape_of("20%"), Shape::Number);
        assert_eq!(shape_of("1:56"), Shape::Time);
        assert_eq!(shape_of("5pm"), Shape::Time);
        assert_eq!(shape_of("2024-05-01"), Shape::IsoDate);
        assert_eq!(shape_of("parse_config"), Shape::Code);
        assert_eq!(shape_of("foo::bar"), Shape::Code);
        assert_eq!(shape_of("pandas.read_csv()"), Shape::Code);
        assert_eq!(shape_of("src/main.rs"), Shape::Code);
        assert_eq!(shape_of("Cargo.toml"), Shape::Code);
        assert_eq!(shape_of("v2.3.0"), Shape::Code);
        assert_eq!(shape_of("--release"), Shape::Code);
        assert_eq!(shape_of("and/or"), Shape::Lower);
        assert_eq!(shape_of("ops@example.com"), Shape::Email);
        assert_eq!(shape_of("https://x.org/a"), Shape::Url);
    }

    #[test]
    fn punctuation_is_peeled_but_abbreviations_keep_their_period() {
        let t = toks("(Acme Corp.) said, e.g. Dr. Who.");
        let words: Vec<&str> = t.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(words, ["(", "Acme", "Corp.", ")", "said", ",", "e.g.", "Dr.", "Who", "."]);
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
