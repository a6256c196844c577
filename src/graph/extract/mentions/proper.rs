//! Proper-noun spans: where a run of capitalized words starts and ends,
//! and whether what it spans is a name.
//!
//! Owns joining name-like tokens through connectors ("Bank of America",
//! "Johnson & Johnson", "Acme, Inc."), stripping honorifics, recognizing a
//! chat speaker's label, joining a version to a product name, and the
//! rules that keep a lone capitalized word opening a sentence ("Running",
//! "Errors", "Throughput") from being taken for a name.
//!
//! Must never: scan more than [`MAX_NAME_TOKENS`] tokens from a start, or
//! join across a line break.

use super::super::kinds::{self, NameSpan};
use super::super::lexicon::{
    ACRONYM_STOP, COMMON_CAPS, CONNECTORS, CORP_SUFFIXES, GIVEN_NAMES, HONORIFICS, MONTHS,
    ORG_WORDS, PLACE_SUFFIXES, STOPWORDS, UNITS, WEEKDAYS,
};
use super::super::morph;
use super::super::normalize::name_key;
use super::super::tokens::{Shape, Token};
use super::super::values::match_value;
use super::{is_first_person, is_initial, Category, Detector, RawMention, MAX_NAME_TOKENS};

/// Longest name accepted as a chat speaker label ("Amy Ellis Nutt:").
const MAX_PERSON_NAME_TOKENS: usize = 3;
/// Longest name a version number may join ("Microsoft SQL Server 2019" is
/// already four and reads as a year anyway).
const MAX_PRODUCT_NAME_TOKENS: usize = 3;

/// Verbs that agree with one thing only: a capitalized word ending in "s"
/// before one of them is not a plural.
const SINGULAR_AUXILIARIES: &[&str] = &[
    "is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't",
];

impl Detector<'_, '_> {
    /// A proper-noun span starting at token `i`. Returns the mention (if
    /// the span survives filtering) and the index to resume scanning at.
    pub(super) fn name_at(
        &self,
        i: usize,
        first: usize,
        shouting: bool,
    ) -> (Option<RawMention>, usize) {
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
