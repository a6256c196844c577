//! Mention detection within one sentence.
//!
//! Owns finding the spans that name something: proper-noun spans
//! (capitalized words joined by connectors such as "of"/"van"), acronyms,
//! CamelCase and code identifiers, backtick and quoted terms, URLs and
//! emails, dates and quantities (via `values`), and determiner-led concept
//! phrases ("a LGBTQ support group"). Each mention gets a merge key and kind
//! votes; merging across the text happens in `resolve`.
//!
//! Must never: produce overlapping mentions, treat a sentence-initial
//! ordinary word ("However", "The", "Running") as a name, or scan more than a
//! bounded window ([`MAX_NAME_TOKENS`], `concepts::MAX_CONCEPT_WORDS`) from any
//! token.

use std::collections::HashSet;

use super::kinds::{Votes, SHAPE, STRONG};
use super::lexicon::{
    self, FastHash, ACRONYM_STOP, DETERMINERS, GIVEN_NAMES, KNOWN_ORGS, LOWERCASE_TECH, PLACES,
    ROLES, STOPWORDS, TECH, UNITS,
};
use super::normalize::{code_key, concept_key, name_key};
use super::register::Register;
use super::tokens::{Shape, Token};
use super::values::{match_value, ValueKind};
use super::EntityKind;

mod proper;

/// Longest proper-noun span, in tokens ("Oak Ridge National Laboratory").
pub(super) const MAX_NAME_TOKENS: usize = 8;
/// Most all-caps tokens before a sentence counts as shouting (acronyms in
/// shouted text are not entities).
const SHOUTING_MIN_UPPER: usize = 4;

/// How a mention was found; decides its key function and merge rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Category {
    Name,
    Concept,
    Quoted,
    Code,
    Date,
    Quantity,
}

/// A mention before entity resolution.
#[derive(Debug, Clone)]
pub(super) struct RawMention {
    /// Token range within the sentence.
    pub tok_start: usize,
    pub tok_end: usize,
    /// Byte range within the text.
    pub start: usize,
    pub end: usize,
    pub category: Category,
    pub votes: Votes,
    pub key: String,
    /// Followed by "'s".
    pub possessive: bool,
    /// A chat speaker label ("Caroline: ...").
    pub speaker: bool,
}

/// Index of the first word of a sentence, skipping list bullets and
/// numbering ("- ", "1. ").
pub(super) fn first_word(toks: &[Token]) -> usize {
    let mut i = 0;
    while let Some(t) = toks.get(i) {
        let numbering = t.shape == Shape::Number
            && toks
                .get(i + 1)
                .is_some_and(|n| n.is_punct('.') || n.is_punct(')'));
        if t.shape == Shape::Punct && !t.is_punct('[') {
            i += 1;
        } else if numbering {
            i += 2;
        } else {
            break;
        }
    }
    i
}

/// Whether token `j` sits where English capitalizes any word: the start of
/// the sentence, after a colon, after an opening quote, or first on a line
/// opened by comment or list markers ("// Copyright", "* Ask").
pub(super) fn is_initial(toks: &[Token], j: usize, first: usize) -> bool {
    let marked_line = toks[..j.min(toks.len())]
        .iter()
        .rev()
        .take_while(|p| p.text.chars().all(|c| c.is_ascii_punctuation()))
        .any(|p| p.line_start);
    j == first
        || marked_line
        || j.checked_sub(1)
            .and_then(|p| toks.get(p))
            .is_some_and(|p| p.is_punct(':') || p.is_punct('"') || p.is_punct('\u{201c}'))
}

/// Records capitalized words seen at non-initial positions; a sentence-
/// initial word seen there too is a name, not just capitalized.
pub(super) fn collect_midcaps<'a>(toks: &[Token<'a>], into: &mut HashSet<&'a str, FastHash>) {
    let first = first_word(toks);
    for (j, t) in toks.iter().enumerate() {
        if t.shape == Shape::Cap && !is_initial(toks, j, first) {
            into.insert(t.text);
        }
    }
}

/// "I", "I'm", "I've", "I'd", "I'll" (either apostrophe).
pub(super) fn is_first_person(t: &Token) -> bool {
    let mut chars = t.text.chars();
    if chars.next() != Some('I') {
        return false;
    }
    match chars.next() {
        None => true,
        Some('\'' | '\u{2019}') => matches!(chars.as_str(), "m" | "ve" | "d" | "ll"),
        _ => false,
    }
}

/// Detects the mentions of one sentence.
pub(super) struct Detector<'s, 'a> {
    pub text: &'a str,
    pub toks: &'s [Token<'a>],
    pub midcaps: &'s HashSet<&'a str, FastHash>,
    /// Headings, keywords and labels of the whole text.
    pub register: &'s Register<'a>,
    /// Whether these tokens are the text's first sentence (a phrase opening
    /// it points back at nothing).
    pub opens_text: bool,
}

impl Detector<'_, '_> {
    pub(super) fn detect(&self) -> Vec<RawMention> {
        let toks = self.toks;
        let first = first_word(toks);
        let upper = toks.iter().filter(|t| t.shape == Shape::Upper).count();
        let words = toks.iter().filter(|t| t.shape != Shape::Punct).count();
        let shouting = upper >= SHOUTING_MIN_UPPER && upper * 2 > words;
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if self.register.in_licence(t.start) {
                i += 1; // "SPDX-License-Identifier: MIT": a licence expression
                continue;
            }
            match t.shape {
                Shape::Url | Shape::Email | Shape::Backtick => {
                    out.push(self.artifact(i, Category::Code, code_key(t.text)));
                    i += 1;
                    continue;
                }
                Shape::Code => {
                    // "cmake --build build": on a code line a flag is an
                    // argument of the command, not a thing of its own.
                    // So is an all-caps word in a run of them there, a
                    // keyword of the code's language ("TIMESTAMP DEFAULT
                    // CURRENT_TIMESTAMP"), unlike a variable a manual's
                    // indented line names and then describes.
                    let flag = t.text.starts_with('-');
                    let caps = |t: &Token| {
                        t.text.chars().any(|c| c.is_ascii_uppercase())
                            && !t.text.chars().any(char::is_lowercase)
                    };
                    let run = caps(t)
                        && (i
                            .checked_sub(1)
                            .is_some_and(|p| caps(&toks[p]) && !t.line_start)
                            || toks.get(i + 1).is_some_and(|n| caps(n) && !n.line_start));
                    if !((flag || run) && self.register.in_code(t.start)) {
                        out.push(self.code_at(i));
                    }
                    i += 1;
                    continue;
                }
                Shape::Quoted => {
                    if let Some(m) = self.quoted(i) {
                        out.push(m);
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            if let Some(v) = match_value(toks, i) {
                let (category, kind) = match v.kind {
                    ValueKind::Date => (Category::Date, EntityKind::Date),
                    ValueKind::Quantity => (Category::Quantity, EntityKind::Unknown),
                };
                out.push(self.mention(i, v.end, category, Votes::of(kind, STRONG), v.key));
                i = v.end.max(i + 1);
                continue;
            }
            let determiner = t.is_in(DETERMINERS)
                && (t.shape == Shape::Lower
                    || (t.shape == Shape::Cap && is_initial(toks, i, first)));
            if determiner {
                if let Some((m, next)) = self.concept_at(i) {
                    out.push(m);
                    i = next;
                    continue;
                }
            }
            if t.shape == Shape::Lower {
                if t.is_in(LOWERCASE_TECH) || self.register.is_title_word(t.text) {
                    out.push(self.artifact(i, Category::Name, name_key(t.text)));
                }
                i += 1;
                continue;
            }
            let numbered_product = t.shape == Shape::Number
                && t.text.bytes().all(|b| b.is_ascii_digit())
                && toks.get(i + 1).is_some_and(|n| {
                    n.shape == Shape::Upper && !n.is_in(ACRONYM_STOP) && !n.is_in(UNITS)
                });
            if self.register.is_keyword(toks, i) {
                i += 1;
                continue;
            }
            if t.is_namey() || numbered_product {
                let (m, next) = self.name_at(i, first, shouting);
                if let Some(m) = m {
                    out.push(m);
                }
                i = next.max(i + 1);
                continue;
            }
            i += 1;
        }
        // A concept phrase may hand back an acronym it led with ("the HTTP
        // router"), found after the phrase itself: text order again.
        out.sort_by_key(|m| m.start);
        out
    }

    pub(super) fn mention(
        &self,
        s: usize,
        e: usize,
        category: Category,
        votes: Votes,
        key: String,
    ) -> RawMention {
        let (start, end) = (self.toks[s].start, self.toks[e - 1].end);
        RawMention {
            tok_start: s,
            tok_end: e,
            start,
            end,
            category,
            votes,
            key,
            possessive: self.toks[e - 1].possessive,
            speaker: false,
        }
    }

    /// A code token. A call with arguments ("load_config(path)",
    /// "push(ringbuf_t" cut by a space) names its callee: the arguments are
    /// values or names of their own, not part of the function's name.
    fn code_at(&self, i: usize) -> RawMention {
        let t = &self.toks[i];
        let callee = t
            .text
            .find('(')
            .filter(|&open| open > 0 && !t.text.ends_with("()"))
            .map(|open| &t.text[..open])
            .filter(|name| {
                name.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
            });
        match callee {
            Some(name) => {
                let mut m = self.artifact(i, Category::Code, code_key(name));
                m.end = m.start + name.len();
                m
            }
            None => self.artifact(i, Category::Code, code_key(t.text)),
        }
    }

    fn artifact(&self, i: usize, category: Category, key: String) -> RawMention {
        self.mention(
            i,
            i + 1,
            category,
            Votes::of(EntityKind::Artifact, STRONG),
            key,
        )
    }

    /// A short quoted term; quoted speech ("I love it") is not a term.
    fn quoted(&self, i: usize) -> Option<RawMention> {
        let t = &self.toks[i];
        let mut words = 0;
        let mut stop = 0;
        for w in t.text.split_whitespace() {
            words += 1;
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            if matches!(
                w.to_ascii_lowercase().as_str(),
                "i" | "you" | "he" | "she" | "we" | "they" | "it" | "me" | "my" | "your" | "i'm"
            ) {
                return None;
            }
            stop += usize::from(lexicon::contains(STOPWORDS, w));
        }
        if words == 0 || stop * 2 > words {
            return None;
        }
        let titled = t.text.starts_with(char::is_uppercase);
        let (kind, key) = if titled {
            (EntityKind::Artifact, name_key(t.text))
        } else {
            (EntityKind::Concept, concept_key(t.text))
        };
        Some(self.mention(i, i + 1, Category::Quoted, Votes::of(kind, SHAPE), key))
    }

    fn known(&self, t: &Token) -> bool {
        [GIVEN_NAMES, PLACES, KNOWN_ORGS, TECH]
            .iter()
            .any(|list| t.is_in(*list))
    }

    pub(super) fn is_role_acronym(t: &Token) -> bool {
        t.shape == Shape::Upper && t.is_in(ROLES)
    }
}

#[cfg(test)]
mod tests {
    use super::super::register::Register;
    use super::super::tokens::tokenize;
    use super::*;

    fn mentions(text: &str) -> Vec<(String, Category, EntityKind)> {
        let mut toks = Vec::new();
        tokenize(text, 0, text.len(), true, &mut toks);
        let mut midcaps = HashSet::default();
        collect_midcaps(&toks, &mut midcaps);
        let register = Register::read(text, &toks);
        let d = Detector {
            text,
            toks: &toks,
            midcaps: &midcaps,
            register: &register,
            opens_text: true,
        };
        d.detect()
            .into_iter()
            .map(|m| (text[m.start..m.end].to_string(), m.category, m.votes.best()))
            .collect()
    }

    fn surfaces(text: &str) -> Vec<String> {
        mentions(text).into_iter().map(|m| m.0).collect()
    }

    #[test]
    fn sentence_initial_ordinary_words_are_not_names() {
        assert_eq!(surfaces("However, Alice met Bob."), ["Alice", "Bob"]);
        assert_eq!(surfaces("The Louvre opened."), ["Louvre"]);
        assert!(surfaces("Running tests is slow.").is_empty());
        assert!(surfaces("I think so.").is_empty());
    }

    #[test]
    fn connectors_join_names_but_not_person_of_org() {
        assert_eq!(
            surfaces("She joined the University of Paris."),
            ["University of Paris"]
        );
        assert_eq!(
            surfaces("We met Ludwig van Beethoven."),
            ["Ludwig van Beethoven"]
        );
        assert_eq!(surfaces("We met Bob Smith of Acme."), ["Bob Smith", "Acme"]);
    }

    #[test]
    fn honorific_is_stripped_and_marks_a_person() {
        let m = mentions("Yesterday Dr. Okafor spoke.");
        assert!(m.contains(&("Okafor".to_string(), Category::Name, EntityKind::Person)));
    }

    #[test]
    fn corporate_and_place_suffixes_decide_kind() {
        let m = mentions("Acme Corp. moved to the Danube River.");
        assert_eq!(m[0].2, EntityKind::Organization);
        assert_eq!(m[1].2, EntityKind::Place);
    }

    #[test]
    fn chat_speaker_label_is_a_person() {
        let m = mentions("Caroline: I went to a LGBTQ support group yesterday.");
        assert_eq!(
            m[0],
            ("Caroline".to_string(), Category::Name, EntityKind::Person)
        );
        assert_eq!(m[1].0, "LGBTQ support group");
        assert_eq!(m[1].2, EntityKind::Concept);
        assert_eq!(m[2].1, Category::Date);
    }

    #[test]
    fn code_identifiers_are_artifacts() {
        let m = surfaces("Call foo::bar and parse_config in src/main.rs via `cargo run`.");
        assert_eq!(m, ["foo::bar", "parse_config", "src/main.rs", "cargo run"]);
    }

    #[test]
    fn versions_join_product_names() {
        let m = mentions("We moved from Python 3.8 to PostgreSQL 16 in 2021.");
        assert_eq!(m[0].0, "Python 3.8");
        assert_eq!(m[0].2, EntityKind::Artifact);
        assert_eq!(m[1].0, "PostgreSQL 16");
        assert_eq!(m[2].1, Category::Date);
    }

    #[test]
    fn role_nouns_are_not_concepts() {
        assert_eq!(
            surfaces("Bob, the CTO of Initech, left."),
            ["Bob", "Initech"]
        );
        assert_eq!(
            surfaces("Bob is the founder of Initech."),
            ["Bob", "Initech"]
        );
    }

    #[test]
    fn quoted_terms_are_concepts_but_quoted_speech_is_not() {
        let m = mentions("They call it \"project lantern\" now.");
        assert_eq!(m[0].0, "project lantern");
        assert_eq!(m[0].2, EntityKind::Concept);
        assert!(surfaces("She said \"I love it\" twice.").is_empty());
    }

    fn extracted(text: &str) -> Vec<String> {
        super::super::extract(text)
            .mentions
            .into_iter()
            .map(|m| m.surface)
            .collect()
    }

    #[test]
    fn rfc_2119_keywords_and_code_types_are_not_names() {
        assert_eq!(
            surfaces("Clients SHOULD NOT retry; a server MAY ask Acme Corp. first."),
            ["Acme Corp."]
        );
        let m = extracted("The header:\n\n    STRUCT h {\n        INT v;\n    }");
        assert!(m.iter().all(|s| s != "STRUCT" && s != "INT"), "{m:?}");
        assert!(extracted("Columns are INTEGER PRIMARY KEY NOT NULL.").is_empty());
    }

    #[test]
    fn licence_tags_and_expressions_are_not_names() {
        assert!(surfaces("// SPDX-License-Identifier: MIT OR Apache-2.0").is_empty());
    }

    #[test]
    fn heading_words_are_names_only_when_the_body_says_so() {
        let text = "Frequently Asked Questions\n\nWe use Kestrel daily.\n\n# Setup Kestrel\n";
        assert_eq!(extracted(text), ["Kestrel", "Kestrel"]);
        assert_eq!(extracted("# zlite\n\nzlite is small."), ["zlite", "zlite"]);
    }

    #[test]
    fn an_acronym_without_cues_is_an_artifact_not_an_organization() {
        let m = mentions("The GUI needs a display.");
        assert_eq!(
            m[0],
            ("GUI".to_string(), Category::Name, EntityKind::Artifact)
        );
    }

    #[test]
    fn a_label_said_once_is_not_a_speaker() {
        let e = super::super::extract("Expected: a clear error.\nActual: nothing.");
        assert!(
            e.entities.iter().all(|x| x.kind != EntityKind::Person),
            "{e:?}"
        );
        let e = super::super::extract("Jess: Ben and I adopted two cats.");
        assert_eq!(e.entities[0].name, "Jess");
        assert_eq!(e.entities[0].kind, EntityKind::Person);
    }
}
