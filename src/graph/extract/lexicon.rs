//! Lookup machinery over the extractor's small, committed word lists.
//!
//! Owns case folding, the [`Lex`] list type, and one hash index from word
//! to a bitmask of the lists containing it, built once on first use, so a
//! lookup is one case-folded hash probe (tokens cache their mask, see
//! `tokens`). The lists themselves live in `words` (grammar) and `names`
//! (gazetteers) and are re-exported here, so callers write
//! `lexicon::STOPWORDS`.
//!
//! Must never: index more than 64 lists (the mask is a `u64`), or accept
//! lists that are unsorted, duplicated or not lowercase (tests enforce it).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

pub(super) use super::names::{
    ACRONYM_STOP, CORP_SUFFIXES, DEMONYMS, GIVEN_NAMES, HONORIFICS, KIN, KNOWN_ORGS,
    LOWERCASE_TECH, ORG_ROLES, ORG_WORDS, PLACES, PLACE_PREFIXES, PLACE_SUFFIXES, ROLES, TECH,
    WORK_CUES,
};
pub(super) use super::words::{
    ABBREVIATIONS_STRONG, ABBREVIATIONS_WEAK, ADJ_DROP, ADVERBS, AUXILIARIES, CARRY_PREPOSITIONS,
    CLAUSE_BREAKS, COMMON_CAPS, CONNECTORS, COPULAS, DETERMINERS, DURATION_UNITS, GENERIC_NOUNS,
    HEAD_NOUNS, IRREGULAR_VERBS, LY_NOT_ADVERBS, MONTHS, MULTIPLIERS, NEGATED_AUXILIARIES,
    NUMBER_WORDS, PARTICLES, PLACE_PREPOSITIONS, RELATIVE_PERIODS, SPEECH_VERBS, STOPWORDS, UNITS,
    VERBS, WEEKDAYS, YEAR_PREPOSITIONS,
};

/// Case-folds one character the way lexicon entries are written: ASCII
/// lowercase, typographic apostrophes as `'`, other letters lowercased when
/// that yields a single character.
pub(super) fn fold(c: char) -> char {
    match c {
        '\u{2019}' | '\u{2018}' => '\'',
        c if c.is_ascii() => c.to_ascii_lowercase(),
        c => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        }
    }
}

/// A word list; `bit` is its position in the membership index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lex {
    pub bit: u8,
    pub words: &'static [&'static str],
}

/// Longest ASCII word folded on the stack; longer words are in no list.
const MAX_ENTRY_BYTES: usize = 40;

/// FxHash-style multiplicative hasher: the index keys are short, trusted
/// constants, so a fast non-cryptographic hash is appropriate.
#[derive(Default)]
pub(super) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Index = HashMap<&'static [u8], u64, BuildHasherDefault<FxHasher>>;

/// Every entry of every list mapped to the bitmask of lists containing it,
/// so one hash probe answers membership in all of them.
fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = Index::default();
        for (_, list) in ALL_LISTS {
            for w in list.words {
                *index.entry(w.as_bytes()).or_insert(0) |= 1u64 << list.bit;
            }
        }
        index
    })
}

/// Bitmask of the lists containing `word` (any case).
pub(super) fn membership(word: &str) -> u64 {
    if word.is_empty() || word.len() > MAX_ENTRY_BYTES * 4 {
        return 0;
    }
    if word.is_ascii() {
        if word.len() > MAX_ENTRY_BYTES {
            return 0;
        }
        let mut buf = [0u8; MAX_ENTRY_BYTES];
        for (d, s) in buf.iter_mut().zip(word.bytes()) {
            *d = s.to_ascii_lowercase();
        }
        return index().get(&buf[..word.len()]).copied().unwrap_or(0);
    }
    let folded: String = word.chars().map(fold).collect();
    index().get(folded.as_bytes()).copied().unwrap_or(0)
}

/// True when `word` (any case) is in `list`.
pub(super) fn contains(list: Lex, word: &str) -> bool {
    list.in_mask(membership(word))
}

impl Lex {
    /// True when a membership mask (see [`membership`]) includes this list.
    pub(super) fn in_mask(self, mask: u64) -> bool {
        mask & (1u64 << self.bit) != 0
    }
}

/// Every list, indexed by its bit.
const ALL_LISTS: &[(&str, Lex)] = &[
    ("STOPWORDS", STOPWORDS),
    ("COMMON_CAPS", COMMON_CAPS),
    ("HONORIFICS", HONORIFICS),
    ("ROLES", ROLES),
    ("GIVEN_NAMES", GIVEN_NAMES),
    ("PLACES", PLACES),
    ("KNOWN_ORGS", KNOWN_ORGS),
    ("TECH", TECH),
    ("LOWERCASE_TECH", LOWERCASE_TECH),
    ("ORG_WORDS", ORG_WORDS),
    ("CORP_SUFFIXES", CORP_SUFFIXES),
    ("PLACE_SUFFIXES", PLACE_SUFFIXES),
    ("PLACE_PREFIXES", PLACE_PREFIXES),
    ("CONNECTORS", CONNECTORS),
    ("DEMONYMS", DEMONYMS),
    ("UNITS", UNITS),
    ("DURATION_UNITS", DURATION_UNITS),
    ("VERBS", VERBS),
    ("IRREGULAR_VERBS", IRREGULAR_VERBS),
    ("COPULAS", COPULAS),
    ("AUXILIARIES", AUXILIARIES),
    ("NEGATED_AUXILIARIES", NEGATED_AUXILIARIES),
    ("ADVERBS", ADVERBS),
    ("LY_NOT_ADVERBS", LY_NOT_ADVERBS),
    ("CLAUSE_BREAKS", CLAUSE_BREAKS),
    ("SPEECH_VERBS", SPEECH_VERBS),
    ("DETERMINERS", DETERMINERS),
    ("ADJ_DROP", ADJ_DROP),
    ("GENERIC_NOUNS", GENERIC_NOUNS),
    ("ACRONYM_STOP", ACRONYM_STOP),
    ("WORK_CUES", WORK_CUES),
    ("PLACE_PREPOSITIONS", PLACE_PREPOSITIONS),
    ("YEAR_PREPOSITIONS", YEAR_PREPOSITIONS),
    ("HEAD_NOUNS", HEAD_NOUNS),
    ("KIN", KIN),
    ("PARTICLES", PARTICLES),
    ("CARRY_PREPOSITIONS", CARRY_PREPOSITIONS),
    ("MONTHS", MONTHS),
    ("WEEKDAYS", WEEKDAYS),
    ("NUMBER_WORDS", NUMBER_WORDS),
    ("RELATIVE_PERIODS", RELATIVE_PERIODS),
    ("MULTIPLIERS", MULTIPLIERS),
    ("ORG_ROLES", ORG_ROLES),
    ("ABBREVIATIONS_STRONG", ABBREVIATIONS_STRONG),
    ("ABBREVIATIONS_WEAK", ABBREVIATIONS_WEAK),
];

/// The month number of a month name or abbreviation in [`MONTHS`].
pub(super) fn month_number(word: &str) -> Option<u8> {
    if !contains(MONTHS, word) {
        return None;
    }
    let prefix: String = word.chars().take(3).map(fold).collect();
    let n = match prefix.as_str() {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    };
    Some(n)
}

/// Hasher for the extractor's internal maps and sets: keys are small and
/// hash-flooding is not a concern for a per-text, in-memory pass.
pub(super) type FastHash = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_sorted_lowercase(name: &str, list: &[&str]) {
        for pair in list.windows(2) {
            assert!(pair[0] < pair[1], "{name} not sorted/unique at {:?}", pair);
        }
        for w in list {
            assert!(
                w.chars().all(|c| fold(c) == c),
                "{name} entry {w:?} is not lowercase"
            );
        }
    }

    #[test]
    fn every_list_is_sorted_and_lowercase() {
        for (bit, (name, list)) in ALL_LISTS.iter().enumerate() {
            assert_sorted_lowercase(name, list.words);
            assert_eq!(usize::from(list.bit), bit, "{name} has the wrong bit");
        }
    }

    #[test]
    fn every_entry_is_found_by_contains() {
        for (name, list) in ALL_LISTS {
            for w in list.words {
                assert!(contains(*list, w), "{name}: {w}");
                if w.is_ascii() {
                    assert!(contains(*list, &w.to_uppercase()), "{name}: {w}");
                }
            }
        }
    }

    #[test]
    fn lookups_fold_case_and_apostrophes() {
        assert!(contains(STOPWORDS, "The"));
        assert!(contains(STOPWORDS, "DON\u{2019}T"));
        assert!(!contains(STOPWORDS, "Acme"));
        assert_eq!(month_number("May"), Some(5));
        assert_eq!(month_number("Sept"), Some(9));
        assert_eq!(month_number("Maybe"), None);
    }
}
