//! The technical register: how documentation, specifications and code
//! write words that look like names but are not.
//!
//! Owns one pass over a whole text, before mentions are detected, that
//! reads its layout and conventions:
//! - heading lines (`# Usage`, a line underlined with `---`/`===`, a
//!   man-page section such as `SEE ALSO`, a short title line standing
//!   alone between blank lines), where every word is capitalized;
//! - the RFC 2119 requirement keywords (MUST, SHOULD NOT, ...), a fixed
//!   set of ten written in capitals;
//! - all-caps words the text uses as keywords, types or placeholders: on
//!   code lines (indented blocks, fenced blocks, lines ending in `;`, `{`,
//!   `}` or `(`), in synopsis placeholders (`[FILE...]`), and in runs of
//!   capitals such as `NOT NULL` or `WITHOUT WARRANTIES OF ANY KIND`;
//! - which words the text also writes in lowercase, and which words open
//!   a line as a label (`Caroline: ...`) how many times;
//! - whether it is a conversation or a personal note (first person
//!   singular, speakers' labels), and whether it is laid out as
//!   documentation.
//!
//! A word the small gazetteers know ("JSON", "NASA") is never a keyword.
//! Must never: decide kinds, or look at anything but the text itself (no
//! word list tuned to a corpus: the only list here is RFC 2119's).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::lexicon::{FastHash, KNOWN_ORGS, PLACES, TECH};
use super::tokens::{Shape, Token};

/// The RFC 2119 keywords, without the "NOT" that may follow the first
/// three (MUST NOT, SHALL NOT, SHOULD NOT).
const RFC2119: [&str; 7] = [
    "MUST",
    "SHALL",
    "SHOULD",
    "MAY",
    "REQUIRED",
    "RECOMMENDED",
    "OPTIONAL",
];

/// The tag that introduces a licence expression in a source header.
const SPDX_TAG: &str = "SPDX-License-Identifier";

/// Most words of a line that stands alone as a title ("Security Policy").
const MAX_TITLE_LINE_WORDS: usize = 8;

/// Leading spaces that make a line an indented code or display block.
const CODE_INDENT: usize = 4;

/// What the pass learned about one text.
pub(super) struct Register<'a> {
    /// Byte ranges of heading lines, in text order.
    headings: Vec<Range<usize>>,
    /// Byte ranges of code lines, in text order.
    code: Vec<Range<usize>>,
    /// All-caps words used as keywords, types or placeholders.
    keywords: HashSet<&'a str, FastHash>,
    /// Every word written in lowercase somewhere in the text.
    lowercase: HashSet<&'a str, FastHash>,
    /// Line-opening labels ("Caroline" of "Caroline: hi") and their counts.
    labels: HashMap<&'a str, usize>,
    /// Byte ranges from an `SPDX-License-Identifier:` tag to its line's
    /// end: the tag and the licence expression it introduces.
    licences: Vec<Range<usize>>,
    /// Lowercase words a heading or a manual's NAME line gives as the
    /// document's subject ("# zlite", "findtext - print lines").
    titles: HashSet<&'a str, FastHash>,
    /// Whether the text is a conversation, a personal note or a question:
    /// it speaks in the first person singular ("I", "my"), opens a line with
    /// a speaker's label ("Mel: ..."), or asks.
    conversational: bool,
    /// Whether the text is laid out as documentation: it has headings,
    /// code lines, or code-shaped words (identifiers, paths, backticks).
    documentation: bool,
}

impl<'a> Register<'a> {
    /// Reads `text`, whose tokens (all sentences, in order) are `toks`.
    pub(super) fn read(text: &'a str, toks: &[Token<'a>]) -> Self {
        let (headings, code) = layout(text);
        let inside = |ranges: &[Range<usize>], at: usize| {
            let i = ranges.partition_point(|r| r.end <= at);
            ranges.get(i).is_some_and(|r| r.contains(&at))
        };
        let mut keywords = HashSet::default();
        let mut lowercase = HashSet::default();
        let mut labels = HashMap::new();
        let mut licences = Vec::new();
        let mut titles = HashSet::default();
        let caps = |t: &Token| t.shape == Shape::Upper && !is_known(t);
        let mut speaker_line = false;
        let mut personal = false;
        let mut code_shaped = false;
        for (j, t) in toks.iter().enumerate() {
            personal |= t.text == "I" || t.text.eq_ignore_ascii_case("my");
            code_shaped |= matches!(t.shape, Shape::Code | Shape::Backtick);
            if t.text.eq_ignore_ascii_case(SPDX_TAG)
                && toks.get(j + 1).is_some_and(|c| c.is_punct(':'))
            {
                let end = text[t.start..]
                    .find('\n')
                    .map_or(text.len(), |n| t.start + n);
                licences.push(t.start..end);
            }
            if t.shape == Shape::Lower {
                lowercase.insert(t.text);
                if is_title_word(text, t, inside(&headings, t.start)) {
                    titles.insert(t.text);
                }
                continue;
            }
            let label_at = t.line_start
                || j.checked_sub(1)
                    .is_some_and(|p| toks[p].line_start && toks[p].shape == Shape::Punct);
            if t.shape == Shape::Cap && label_at && toks.get(j + 1).is_some_and(|c| c.is_punct(':'))
            {
                *labels.entry(t.text).or_insert(0) += 1;
                // "Design: the write-ahead log" titles a document; a label
                // in the body gives a speaker's line.
                speaker_line |= !inside(&headings, t.start);
            }
            if !caps(t) {
                continue;
            }
            let prev = j.checked_sub(1).map(|p| &toks[p]);
            let next = toks.get(j + 1);
            let placeholder = prev.is_some_and(|p| p.is_punct('['))
                || next.is_some_and(|n| n.is_punct(']') || n.text.starts_with("..."));
            let run = prev.is_some_and(|p| caps(p) && !t.line_start)
                || next.is_some_and(|n| caps(n) && !n.line_start);
            if placeholder || run || inside(&code, t.start) || inside(&headings, t.start) {
                keywords.insert(t.text);
            }
        }
        // A question asks after things by the names its asker uses ("when
        // did she go to the museum?"), as a conversation does.
        let question = text.trim_end().ends_with('?');
        let conversational = personal || question || speaker_line;
        let documentation = !headings.is_empty() || !code.is_empty() || code_shaped;
        Register {
            headings,
            code,
            keywords,
            lowercase,
            labels,
            licences,
            titles,
            conversational,
            documentation,
        }
    }

    /// Whether the text is a conversation or a personal note (first person
    /// singular, or a speaker's label opening a line). A conversation names
    /// the things of the speaker's life by definite description ("the gym",
    /// "my thesis"); documentation and reports use one to point back at
    /// what they already named ("the file", "the parser").
    pub(super) fn is_conversational(&self) -> bool {
        self.conversational
    }

    /// Whether the text is laid out as documentation (headings, code lines,
    /// code-shaped words). Documentation says "a file", "an error", "the
    /// parser" of things it describes in passing, not of things it names.
    pub(super) fn is_documentation(&self) -> bool {
        self.documentation
    }

    /// Whether byte `at` lies in a licence tag or its expression.
    pub(super) fn in_licence(&self, at: usize) -> bool {
        self.licences.iter().any(|r| r.contains(&at))
    }

    /// Whether `word` is a lowercase name the document is titled by.
    pub(super) fn is_title_word(&self, word: &str) -> bool {
        self.titles.contains(word)
    }

    /// Whether byte `at` lies on a code line.
    pub(super) fn in_code(&self, at: usize) -> bool {
        let i = self.code.partition_point(|r| r.end <= at);
        self.code.get(i).is_some_and(|r| r.contains(&at))
    }

    /// Whether byte `at` lies on a heading line.
    pub(super) fn in_heading(&self, at: usize) -> bool {
        let i = self.headings.partition_point(|r| r.end <= at);
        self.headings.get(i).is_some_and(|r| r.contains(&at))
    }

    /// Whether token `j` is an RFC 2119 keyword or an all-caps word this
    /// text uses as a keyword, type or placeholder: never a name.
    pub(super) fn is_keyword(&self, toks: &[Token], j: usize) -> bool {
        let t = &toks[j];
        if t.shape != Shape::Upper {
            return false;
        }
        let rfc = |t: &Token| RFC2119.contains(&t.text);
        rfc(t)
            || (t.text == "NOT" && j.checked_sub(1).is_some_and(|p| rfc(&toks[p])))
            || self.keywords.contains(t.text)
    }

    /// Whether the text also writes `word` in lowercase ("Design" beside
    /// "design"): then its capital is the sentence's, not a name's.
    pub(super) fn written_lowercase(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        self.lowercase.contains(lower.as_str())
    }

    /// How many lines `word` opens as a label (`Word: ...`).
    pub(super) fn label_count(&self, word: &str) -> usize {
        self.labels.get(word).copied().unwrap_or(0)
    }
}

/// A lowercase word that is a whole heading ("# zlite") or opens a
/// manual's NAME entry ("NAME" then "findtext - print lines that match").
fn is_title_word(text: &str, t: &Token, heading: bool) -> bool {
    let line_start = text[..t.start].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[t.end..].find('\n').map_or(text.len(), |n| t.end + n);
    let marker = text[line_start..t.start].trim().chars().all(|c| c == '#');
    let word = t
        .text
        .chars()
        .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    if !marker || !word {
        return false;
    }
    let rest = text[t.end..line_end].trim();
    let name_entry = rest.starts_with("- ") || rest.starts_with("\u{2014} ");
    let after_name = text[..line_start]
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim() == "NAME");
    (heading && rest.is_empty()) || (name_entry && after_name)
}

fn is_known(t: &Token) -> bool {
    t.is_in(TECH) || t.is_in(KNOWN_ORGS) || t.is_in(PLACES)
}

/// Heading lines and code lines of `text`, as byte ranges in order.
fn layout(text: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        lines.push(at..at + body.len());
        at += line.len();
    }
    let blank = |i: usize| {
        lines
            .get(i)
            .is_none_or(|r| text[r.clone()].trim().is_empty())
    };
    let underline = |i: usize| {
        lines.get(i).is_some_and(|r| {
            let l = text[r.clone()].trim();
            l.len() >= 3 && (l.bytes().all(|b| b == b'-') || l.bytes().all(|b| b == b'='))
        })
    };
    let mut headings = Vec::new();
    let mut code = Vec::new();
    let mut fenced = false;
    for (i, r) in lines.iter().enumerate() {
        let line = &text[r.clone()];
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let code_end = [';', '{', '}', '('].iter().any(|c| trimmed.ends_with(*c));
        if fenced || (indent >= CODE_INDENT && !trimmed.is_empty()) || line.starts_with('\t') {
            code.push(r.clone());
            continue;
        }
        if code_end {
            code.push(r.clone());
        }
        if trimmed.is_empty() || underline(i) {
            continue;
        }
        let words = trimmed.split_whitespace().count();
        let letters = trimmed.chars().filter(|c| c.is_alphabetic());
        let section = trimmed.chars().any(char::is_alphabetic)
            && letters.clone().all(char::is_uppercase)
            && indent == 0;
        let title = words <= MAX_TITLE_LINE_WORDS
            && trimmed.starts_with(char::is_uppercase)
            && !trimmed.ends_with(['.', '!', '?', ';', ','])
            && !trimmed.contains(':')
            && (i == 0 || blank(i - 1))
            && blank(i + 1);
        if trimmed.starts_with('#') || underline(i + 1) || section || title {
            headings.push(r.clone());
        }
    }
    (headings, code)
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokenize;
    use super::*;

    fn with<R>(text: &str, f: impl FnOnce(&Register, &[Token]) -> R) -> R {
        let mut toks = Vec::new();
        tokenize(text, 0, text.len(), true, &mut toks);
        let r = Register::read(text, &toks);
        f(&r, &toks)
    }

    fn keyword(text: &str, word: &str) -> bool {
        with(text, |r, toks| {
            let j = toks.iter().position(|t| t.text == word).unwrap();
            r.is_keyword(toks, j)
        })
    }

    #[test]
    fn rfc_2119_keywords_and_their_not_are_keywords() {
        let text = "A client MUST NOT retry. It MAY wait for the GUI.";
        assert!(keyword(text, "MUST"));
        assert!(keyword(text, "NOT"));
        assert!(keyword(text, "MAY"));
        assert!(!keyword(text, "GUI"));
    }

    #[test]
    fn caps_on_code_lines_placeholders_and_runs_are_keywords() {
        let text = "The header:\n\n    STRUCT h {\n        INT v;\n    }\n\nUse cat [FILE...] to \
                    print. Columns are TEXT NOT NULL. The GUI uses JSON and the NSA reads it.";
        for w in ["STRUCT", "INT", "FILE", "TEXT", "NULL"] {
            assert!(keyword(text, w), "{w}");
        }
        for w in ["GUI", "JSON", "NSA"] {
            assert!(!keyword(text, w), "{w}");
        }
    }

    #[test]
    fn headings_are_found_by_marker_underline_section_and_title_line() {
        let text = "# Usage\nrun it.\n\nChanges in 2.0\n==============\n\nNAME\n    tool - do\n\n\
                    Security Policy\n\nReport bugs. Jane Smith\nwrote this.";
        with(text, |r, _| {
            for w in ["Usage", "Changes", "NAME", "Security"] {
                assert!(r.in_heading(text.find(w).unwrap()), "{w}");
            }
            for w in ["run", "Report", "Jane"] {
                assert!(!r.in_heading(text.find(w).unwrap()), "{w}");
            }
        });
    }

    #[test]
    fn lowercase_words_and_labels_are_counted() {
        let text = "Design matters. We design it.\nAmy: hi\nAmy: bye\n- Note: later";
        with(text, |r, _| {
            assert!(r.written_lowercase("Design"));
            assert!(!r.written_lowercase("Amy"));
            assert_eq!(r.label_count("Amy"), 2);
            assert_eq!(r.label_count("Note"), 1);
        });
    }
}
