//! Offline, rule-based extraction of entity mentions and relations.
//!
//! Owns turning one text (a note, a document, a chat turn) into a small
//! knowledge-graph fragment: the spans that mention something
//! ([`Mention`]), the distinct things they mention after merging aliases
//! within the text ([`EntityCandidate`]), and subject-predicate-object
//! triples between them ([`Relation`]). Everything is a pure function of the
//! input string: no model, no network, no global state, deterministic.
//!
//! Pipeline: `sentences` splits the text; `tokens` cuts each sentence into
//! tokens whose spelling `shapes` classifies; `mentions` finds names, codes
//! and quoted terms, with `values` for dates/quantities, `concepts` for
//! determiner-led noun phrases and `kinds` for kind evidence, after
//! `register` has read the text's headings, keywords and labels; `resolve`
//! merges mentions into entities using the keys of `normalize`; `relations`
//! reads predicates between consecutive mentions of a sentence. Word lists
//! live in `words` and `names` behind the `lexicon` index; `morph` holds
//! the suffix rules. `tests` and `eval_tests` are the behaviour, fuzz and
//! quality tests (the latter against `fixtures/extraction/labelled.jsonl`).
//!
//! Must never: panic on any `&str`, return byte offsets off char
//! boundaries, take more than linear-ish time (every per-sentence scan is
//! bounded by a named constant), or merge entities across texts (callers
//! merge by [`EntityCandidate::key`] if they want to).

mod concepts;
mod kinds;
mod lexicon;
mod mentions;
mod morph;
mod names;
mod normalize;
mod register;
mod relations;
mod resolve;
mod sentences;
mod shapes;
mod tokens;
mod values;
mod words;

#[cfg(test)]
mod eval_tests;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

pub use crate::knowledge::fragment::EntityKind;
pub use normalize::entity_key;

/// Membership in the extractor's word lists, for callers outside it (the
/// cross-document resolver in `graph::resolution`); the lists stay private.
pub mod wordlists {
    use super::lexicon::{self, CONNECTORS, CORP_SUFFIXES, GIVEN_NAMES, HONORIFICS};

    /// "dr", "mr", "professor", ... (any case).
    pub fn is_honorific(word: &str) -> bool {
        lexicon::contains(HONORIFICS, word)
    }

    /// A common given name ("john", "caroline").
    pub fn is_given_name(word: &str) -> bool {
        lexicon::contains(GIVEN_NAMES, word)
    }

    /// A name particle such as "of", "van", "de".
    pub fn is_connector(word: &str) -> bool {
        lexicon::contains(CONNECTORS, word)
    }

    /// A legal-form suffix such as "inc", "corp", "gmbh".
    pub fn is_corporate_suffix(word: &str) -> bool {
        lexicon::contains(CORP_SUFFIXES, word)
    }
}
pub use relations::COOCCURRENCE_PREDICATE;

use mentions::{Category, Detector, RawMention};
use relations::{Seen, Slot};
use tokens::{Shape, Token};

/// One span of the text that mentions an entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte offset of the first byte (a char boundary).
    pub start: usize,
    /// Byte offset one past the last byte (a char boundary).
    pub end: usize,
    /// `text[start..end]`.
    pub surface: String,
    /// Index into [`Extraction::entities`].
    pub entity: usize,
}

/// A distinct entity of the text, with its merged aliases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityCandidate {
    /// Display name: the longest surface ("Marie Curie", "Acme Corp.").
    pub name: String,
    /// Normalized merge key ("marie curie", "acme", "2023-05-08").
    pub key: String,
    pub kind: EntityKind,
    /// Other surfaces merged into this entity ("Curie", "Acme's").
    pub aliases: Vec<String>,
}

/// How a relation was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelationKind {
    /// Read from a sentence pattern; `predicate` is meaningful.
    Pattern,
    /// Only appear in the same sentence; `predicate` is
    /// [`COOCCURRENCE_PREDICATE`].
    Cooccurrence,
}

/// A subject-predicate-object triple between two entities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// Index into [`Extraction::entities`].
    pub subject: usize,
    /// Normalized lowercase verb phrase: "acquired", "works at", "is",
    /// "located in", "ceo of", "of". Auxiliaries, adverbs and negators are
    /// dropped; inflection is kept as written.
    pub predicate: String,
    /// Index into [`Extraction::entities`].
    pub object: usize,
    /// "did not acquire", "never worked at", "isn't based in".
    pub negated: bool,
    pub kind: RelationKind,
    /// Byte range of the evidence sentence.
    pub start: usize,
    pub end: usize,
}

/// Everything extracted from one text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    /// In text order, non-overlapping.
    pub mentions: Vec<Mention>,
    /// In order of first mention.
    pub entities: Vec<EntityCandidate>,
    /// Pattern relations in sentence order, each sentence's co-occurrences
    /// after its patterns; de-duplicated within the text.
    pub relations: Vec<Relation>,
}

/// Extracts mentions, entities and relations from `text`.
pub fn extract(text: &str) -> Extraction {
    let sentences = sentences::split(text);
    let mut toks: Vec<Token> = Vec::new();
    let mut tok_ranges = Vec::with_capacity(sentences.len());
    for s in &sentences {
        let from = toks.len();
        tokens::tokenize(text, s.start, s.end, s.starts_line, &mut toks);
        tok_ranges.push(from..toks.len());
    }
    let register = register::Register::read(text, &toks);
    // Headings capitalize every word, so only body text tells names apart.
    let mut midcaps = HashSet::default();
    for (s, r) in sentences.iter().zip(&tok_ranges) {
        if !register.in_heading(s.start) {
            mentions::collect_midcaps(&toks[r.clone()], &mut midcaps);
        }
    }
    let mut raw: Vec<RawMention> = Vec::new();
    let mut raw_ranges = Vec::with_capacity(sentences.len());
    for (n, r) in tok_ranges.iter().enumerate() {
        let detector = Detector {
            text,
            toks: &toks[r.clone()],
            midcaps: &midcaps,
            register: &register,
            opens_text: n == 0,
        };
        let from = raw.len();
        raw.extend(detector.detect());
        raw_ranges.push(from..raw.len());
    }
    let resolved = resolve::resolve(text, &raw);

    let mut relations = Vec::new();
    let mut seen = Seen::default();
    let mut speaker: Option<usize> = None;
    let mut last_person: Option<usize> = None;
    let is_person = |e: usize| resolved.entities[e].kind == EntityKind::Person;
    for ((s, tr), mr) in sentences.iter().zip(&tok_ranges).zip(&raw_ranges) {
        let sentence_toks = &toks[tr.clone()];
        let ms = &raw[mr.clone()];
        let entity_of = |i: usize| resolved.mention_entity[mr.start + i];
        if let Some(i) = ms.iter().position(|m| m.speaker) {
            speaker = Some(entity_of(i));
        } else if s.starts_line {
            speaker = None;
        }
        let pronouns = Pronouns {
            speaker,
            third_person: last_person,
        };
        let slots = slots(sentence_toks, ms, entity_of, pronouns);
        let main = relations::extract(
            sentence_toks,
            &slots,
            (s.start, s.end),
            &mut seen,
            &mut relations,
        );
        // "He"/"She" in the next sentence most likely continues this one's
        // person subject, else its first person mentioned.
        let subject = main
            .and_then(|m| m.first().copied())
            .filter(|&e| is_person(e));
        let mentioned = (0..ms.len()).map(entity_of).find(|&e| is_person(e));
        if let Some(p) = subject.or(mentioned) {
            last_person = Some(p);
        }
    }

    let mentions = raw
        .iter()
        .zip(&resolved.mention_entity)
        .map(|(m, &entity)| Mention {
            start: m.start,
            end: m.end,
            surface: text[m.start..m.end].to_string(),
            entity,
        })
        .collect();
    Extraction {
        mentions,
        entities: resolved.entities,
        relations,
    }
}

/// Entities that pronouns of a sentence stand for.
#[derive(Clone, Copy)]
struct Pronouns {
    /// Chat speaker of the current line: "I".
    speaker: Option<usize>,
    /// Most recent person subject: a sentence-initial "He"/"She".
    third_person: Option<usize>,
}

/// Argument slots of a sentence: its mentions plus resolved pronouns.
fn slots(
    toks: &[Token],
    mentions: &[RawMention],
    entity_of: impl Fn(usize) -> usize,
    pronouns: Pronouns,
) -> Vec<Slot> {
    let mut out: Vec<Slot> = mentions
        .iter()
        .enumerate()
        .map(|(i, m)| Slot {
            entity: entity_of(i),
            tok_start: m.tok_start,
            tok_end: m.tok_end,
            value: matches!(m.category, Category::Date | Category::Quantity),
            possessive: m.possessive,
            pronoun: false,
            kind: m.votes.best(),
            modifier: m.category == Category::Name
                && toks.get(m.tok_end).is_some_and(is_noun_like)
                && !mentions.iter().any(|n| n.tok_start == m.tok_end),
            concept: m.category == Category::Concept,
        })
        .collect();
    let first = mentions::first_word(toks);
    for (j, t) in toks.iter().enumerate() {
        if t.shape != Shape::Cap {
            continue;
        }
        let entity = if mentions::is_first_person(t) {
            pronouns.speaker
        } else if j == first && matches!(t.text, "He" | "She") {
            pronouns.third_person
        } else {
            None
        };
        let covered = mentions
            .iter()
            .any(|m| (m.tok_start..m.tok_end).contains(&j));
        if let (Some(entity), false) = (entity, covered) {
            out.push(Slot {
                entity,
                tok_start: j,
                tok_end: j + 1,
                value: false,
                possessive: false,
                pronoun: true,
                kind: EntityKind::Person,
                modifier: false,
                concept: false,
            });
        }
    }
    out.sort_by_key(|s| s.tok_start);
    out
}

/// A lowercase content word that a preceding name can modify.
fn is_noun_like(t: &Token) -> bool {
    t.shape == Shape::Lower
        && t.text.chars().all(char::is_alphabetic)
        && !t.is_in(lexicon::STOPWORDS)
        && !t.is_in(lexicon::PARTICLES)
        && !t.is_in(lexicon::NUMBER_WORDS)
        && !morph::is_verb_form(t.text)
        && !morph::is_adverb(t.text)
}
