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

use super::kinds::{self, NameSpan, Votes, SHAPE, STRONG};
use super::lexicon::{
    self, FastHash, ACRONYM_STOP, COMMON_CAPS, CONNECTORS, CORP_SUFFIXES, DETERMINERS, GIVEN_NAMES,
    HONORIFICS, KNOWN_ORGS, LOWERCASE_TECH, MONTHS, ORG_WORDS, PLACES, PLACE_SUFFIXES, ROLES,
    STOPWORDS, TECH, UNITS, WEEKDAYS,
};
use super::morph;
use super::normalize::{code_key, concept_key, name_key};
use super::register::Register;
use super::tokens::{Shape, Token};
use super::values::{match_value, ValueKind};
use super::EntityKind;

/// Longest proper-noun span, in tokens ("Oak Ridge National Laboratory").
pub(super) const MAX_NAME_TOKENS: usize = 8;
/// Longest name accepted as a chat speaker label ("Amy Ellis Nutt:").
const MAX_PERSON_NAME_TOKENS: usize = 3;
/// Longest name a version number may join ("Microsoft SQL Server 2019" is
/// already four and reads as a year anyway).
const MAX_PRODUCT_NAME_TOKENS: usize = 3;
/// Most all-caps tokens before a sentence counts as shouting (acronyms in
/// shouted text are not entities).
const SHOUTING_MIN_UPPER: usize = 4;

/// Verbs that agree with one thing only: a capitalized word ending in "s"
/// before one of them is not a plural.
const SINGULAR_AUXILIARIES: &[&str] = &[
    "is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't",
];

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

    /// A proper-noun span starting at token `i`. Returns the mention (if
    /// the span survives filtering) and the index to resume scanning at.
    fn name_at(&self, i: usize, first: usize, shouting: bool) -> (Option<RawMention>, usize) {
        let toks = self.toks;
        let end = self.raw_name_end(i);
        if end == i {
            return (None, i + 1);
        }
        let mut s = i;
        let mut e = end;
        let mut honorific = false;
        while e - s >= 2 && toks[s].is_in(HONORIFICS) {
            s += 1;
            honorific = true;
        }
        if is_initial(toks, i, first) {
            // Acronyms ("WHO", "IT") are kept even when they spell a word.
            while s < e
                && (toks[s].shape == Shape::Lower
                    || toks[s].shape == Shape::Cap
                        && (toks[s].is_in(STOPWORDS) || toks[s].is_in(COMMON_CAPS)))
            {
                s += 1;
            }
            // "Shares of Tesla": an unknown capitalized head joined by "of"
            // at the start of a sentence is an ordinary word.
            if e - s >= 3
                && toks[s + 1].text == "of"
                && toks[s].shape == Shape::Cap
                && !self.known(&toks[s])
                && !self.midcaps.contains(toks[s].text)
                && !toks[s].is_in(ORG_WORDS)
                && !toks[s].is_in(PLACE_SUFFIXES)
            {
                s += 2;
                while s < e && toks[s].shape == Shape::Lower {
                    s += 1;
                }
            }
        } else {
            while s < e && matches!(toks[s].text, "The" | "A" | "An") {
                s += 1;
            }
        }
        if self.register.in_heading(toks[i].start) {
            // "Frequently Asked Questions", "Changes in 2.0": a heading
            // capitalizes every word; only words known or capitalized in
            // the body are names there.
            while s < e
                && toks[s].shape == Shape::Cap
                && !self.known(&toks[s])
                && !self.midcaps.contains(toks[s].text)
            {
                s += 1;
            }
        }
        while s < e && is_first_person(&toks[s]) {
            s += 1;
        }
        // "* Ask Olga Ivanova whether ...", "Call Dana first": a bare verb
        // opening a sentence before a name is an instruction, not part of it.
        if e - s >= 2
            && is_initial(toks, s, first)
            && toks[s].shape == Shape::Cap
            && !self.known(&toks[s])
            && morph::verb_base(toks[s].text).is_some_and(|b| b.eq_ignore_ascii_case(toks[s].text))
        {
            s += 1;
        }
        // "written in C. It is a fork": a pronoun opening the next sentence
        // is not the end of a name.
        while e - s >= 2 && toks[e - 1].shape == Shape::Cap && toks[e - 1].is_in(STOPWORDS) {
            e -= 1;
        }
        if s >= e {
            return (None, end);
        }
        // "Expected:", "Important:" open a line once; a speaker speaks
        // again, speaks of themselves or the listener ("Jess: Ben and I
        // ..."), or has a name known as one.
        let label_word = &toks[s];
        let speech = toks[e..]
            .iter()
            .skip(1)
            .take_while(|t| !t.line_start)
            .any(|t| {
                is_first_person(t)
                    || matches!(
                        t.text.to_ascii_lowercase().as_str(),
                        "my" | "me" | "we" | "our" | "us" | "you" | "your"
                    )
            });
        let speaks = e - s > 1
            || speech
            || label_word.is_in(GIVEN_NAMES)
            || self.midcaps.contains(label_word.text)
            || self.register.label_count(label_word.text) > 1;
        let speaker = toks.get(e).is_some_and(|c| c.is_punct(':'))
            && e - s <= MAX_PERSON_NAME_TOKENS
            && speaks
            && (toks[s].line_start || s.checked_sub(1).is_some_and(|p| toks[p].is_punct(']')));
        if e - s == 1 && !speaker && !self.single_token_is_name(s, e, first, shouting) {
            return (None, end);
        }
        // "Python 3.12", "Firefox 1.0": a version number joins the name.
        let mut versioned = false;
        if e == end && e - s <= MAX_PRODUCT_NAME_TOKENS && !toks[s].is_in(GIVEN_NAMES) {
            if let Some(v) = toks.get(e) {
                let numeric = v.text.starts_with(|c: char| c.is_ascii_digit())
                    && v.text.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && !v.text.ends_with('.');
                // "RFC 9110", "ISO 8601": an acronym's number designates, it
                // does not date.
                // So does a model's ("AMD EPYC 7763").
                let designation = toks[e - 1].shape == Shape::Upper;
                let looks_like_year = v.text.len() == 4 && !v.text.contains('.') && !designation;
                let is_version = (v.shape == Shape::Number && numeric && !looks_like_year)
                    || (v.shape == Shape::Code && v.text.starts_with(['v', 'V']));
                let unit_follows = toks.get(e + 1).is_some_and(|u| u.is_in(UNITS));
                if is_version && !unit_follows && !v.line_start {
                    e += 1;
                    versioned = true;
                }
            }
            // "the Apache License, Version 2.0": a licence or standard is
            // named with its version after a comma.
            let comma_version = toks.get(e).is_some_and(|c| c.is_punct(','))
                && toks
                    .get(e + 1)
                    .is_some_and(|w| w.text.eq_ignore_ascii_case("version"))
                && toks.get(e + 2).is_some_and(|n| {
                    n.shape == Shape::Number
                        && n.text.chars().all(|c| c.is_ascii_digit() || c == '.')
                });
            if !versioned && comma_version {
                e += 3;
                versioned = true;
            }
        }
        let span = NameSpan {
            toks: &toks[s..e],
            prev: s.checked_sub(1).map(|p| &toks[p]),
            prev2: s.checked_sub(2).map(|p| &toks[p]),
            next: toks.get(e),
            honorific,
            speaker,
            versioned,
        };
        let votes = kinds::name_votes(&span);
        let surface = &self.text[toks[s].start..toks[e - 1].end];
        let mut m = self.mention(s, e, Category::Name, votes, name_key(surface));
        m.speaker = speaker;
        m.possessive = !versioned && toks[e - 1].possessive;
        (Some(m), e.max(end))
    }

    /// Extends a run of name-like tokens from `i`; returns the end index.
    fn raw_name_end(&self, i: usize) -> usize {
        let toks = self.toks;
        let mut j = i;
        let mut end = i;
        while j < toks.len() && j - i < MAX_NAME_TOKENS {
            let t = &toks[j];
            if j > i && t.line_start {
                break;
            }
            if t.is_namey() || (j == i && t.shape == Shape::Number) {
                let breaks = Self::is_role_acronym(t)
                    || self.register.is_keyword(toks, j)
                    || (j > i && (kinds::is_demonym(t) || match_value(toks, j).is_some()))
                    || (j > i && is_first_person(t));
                if breaks {
                    break;
                }
                j += 1;
                end = j;
                if t.possessive {
                    // "St. Michael's Hospital" continues into an org/place head.
                    let continues = toks.get(j).is_some_and(|n| {
                        n.shape == Shape::Cap && (n.is_in(ORG_WORDS) || n.is_in(PLACE_SUFFIXES))
                    });
                    if !continues {
                        break;
                    }
                }
                continue;
            }
            if j == i {
                break;
            }
            if t.shape == Shape::Lower && t.is_in(CONNECTORS) {
                let mut k = j + 1;
                if t.text == "of" && toks.get(k).is_some_and(|x| x.text == "the") {
                    k += 1;
                }
                // "Bob Smith of Acme" is two entities, "Bank of America" one.
                let person_of =
                    t.text == "of" && (toks[i].is_in(GIVEN_NAMES) || toks[end - 1].possessive);
                let joins = toks
                    .get(k)
                    .is_some_and(|x| x.is_namey() && !x.line_start && !Self::is_role_acronym(x));
                if joins && !person_of && !toks[end - 1].possessive {
                    j = k;
                    continue;
                }
                break;
            }
            let next_namey = toks.get(j + 1).is_some_and(Token::is_namey);
            if t.text == "&" && next_namey {
                j += 1;
                continue;
            }
            let corp_next = toks
                .get(j + 1)
                .is_some_and(|x| x.shape == Shape::Cap && x.is_in(CORP_SUFFIXES));
            if t.is_punct(',') && corp_next {
                j += 1;
                continue;
            }
            break;
        }
        end
    }

    /// Filters single-token spans: acronym noise, lone letters, and
    /// sentence-initial capitalized words with no evidence of being names.
    fn single_token_is_name(&self, s: usize, e: usize, first: usize, shouting: bool) -> bool {
        let t = &self.toks[s];
        match t.shape {
            Shape::Upper => !(shouting || t.is_in(ACRONYM_STOP) || Self::is_role_acronym(t)),
            Shape::Cap => {
                if t.text.chars().count() == 1 || kinds::is_demonym(t) {
                    return false;
                }
                if t.is_in(MONTHS) || t.is_in(WEEKDAYS) {
                    return false; // "September", "Mon": a time, not a thing
                }
                if !is_initial(self.toks, s, first)
                    || t.possessive
                    || self.known(t)
                    || self.midcaps.contains(t.text)
                {
                    return true;
                }
                if self.register.written_lowercase(t.text) {
                    return false; // "Design" beside "design": a common word
                }
                // Documentation names its software again and again, and
                // mid-sentence; one capitalized word opening a sentence once
                // ("Throughput is reported", "Recovery replays the log") is
                // the sentence's capital.
                if self.register.is_documentation() && !self.register.is_conversational() {
                    return false;
                }
                let lower = t.text.to_ascii_lowercase();
                let next = self.toks.get(e);
                // A plural takes a plural verb: "Atlas is", "Kubernetes has"
                // name one thing.
                let singular_verb_next =
                    next.is_some_and(|n| SINGULAR_AUXILIARIES.contains(&n.text));
                // Suffixes of common nouns and adjectives, and plurals
                // ("Registration closes", "Commits must", "Errors are").
                let bad_suffix = [
                    "ing", "ly", "ed", "tion", "sion", "ment", "ness", "ity", "ance", "ence",
                    "able", "ible", "ical",
                ]
                .iter()
                .any(|x| lower.ends_with(x))
                    || (lower.ends_with('s')
                        && !lower.ends_with("ss")
                        && !lower.ends_with("us")
                        && !singular_verb_next);
                let verb_next =
                    next.is_some_and(|n| n.shape == Shape::Lower && morph::is_verb_form(n.text));
                verb_next && !bad_suffix
            }
            _ => true,
        }
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
