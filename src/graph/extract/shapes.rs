//! Token shapes: how a word is written.
//!
//! Owns classifying a token core as a capitalized word, acronym, CamelCase,
//! number, clock time, ISO date, code identifier (paths, file names,
//! `foo::bar`, `snake_case`, flags, versions), URL or email, purely from its
//! characters.
//!
//! Must never: consult context or lexicons (shape is about spelling only),
//! slice off a char boundary, or allocate except for short lowercase copies.

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
    let lower_w =
        |p: &str| w.len() > p.len() && w.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
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
    if first.is_ascii_digit()
        || (CURRENCY.contains(&first)
            && w[first.len_utf8()..].starts_with(|c: char| c.is_ascii_digit()))
    {
        if let Some(shape) = classify_numeric(w) {
            return shape;
        }
    }
    if is_code(w) {
        return Shape::Code;
    }
    if !first.is_alphabetic() {
        return if w.chars().count() == 1 {
            Shape::Punct
        } else {
            Shape::Other
        };
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
            return if upper >= 2 || has_digit {
                Shape::Upper
            } else {
                Shape::Cap
            };
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
    let tail = w
        .strip_prefix("Mc")
        .or_else(|| w.strip_prefix("Mac"))
        .unwrap_or(w);
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
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-'))
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-'))
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
        [h, m] | [h, m, _] => parts.iter().all(all_digits) && h.len() <= 2 && m.len() == 2,
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
        if segs
            .iter()
            .any(|s| s.is_empty() || !s.chars().all(|c| ident(c) || c == '-'))
        {
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
            && segs
                .iter()
                .all(|s| s.chars().count() >= 2 || s.bytes().all(|b| b.is_ascii_digit()))
            && segs
                .iter()
                .any(|s| s.chars().next().is_some_and(char::is_lowercase));
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
    // A path names something: "*/" (a comment's close) or "/*" do not.
    if !segs.iter().all(seg_ok) || !w.chars().any(char::is_alphanumeric) {
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
    let last = segs
        .iter()
        .rev()
        .find(|s| !s.is_empty())
        .copied()
        .unwrap_or("");
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
}
