//! What a name looks like to the resolver, and how alike two names are.
//!
//! Owns [`NameProfile`] (a stored key and display name reduced to the words
//! that identify the thing: folded, diacritics removed, abbreviations
//! expanded, honorifics, particles and legal forms dropped, plus the
//! acronym it spells and whether it is a code identifier or version) and
//! [`similarity`], a score in [0, 1] from explicit rules:
//!
//! - the same words once spacing, hyphens and case are ignored ("Open AI" =
//!   "OpenAI", "Coca-Cola" = "Coca Cola") score 1;
//! - an acronym and a name whose initials it spells ("NYC" / "New York
//!   City") score 1;
//! - otherwise the words are aligned one to one (exact, a long word with
//!   one typo, an initial "F." for "Fitzgerald", a short given name "Jeff"
//!   for "Jeffrey") and the score is the matched weight over the longer
//!   name's weight, so "Marie Curie" / "Marie Sklodowska Curie" is 2/3 and
//!   "Apple" / "Apple Records" 1/2;
//! - people must agree on both ends: the same surname and compatible given
//!   names, else 0 ("John Smith" / "Jane Smith", "Martin Luther" / "Martin
//!   Luther King").
//!
//! Must never: score a code identifier or a name with digits above 0
//! (versions such as "Python 3.11" / "Python 3.12" differ by exactly the
//! part a name rule would forgive), or allocate more than a few small
//! vectors per call (it runs on the writer thread for every candidate).

use crate::graph::extract::wordlists;
pub use crate::knowledge::resolution::{NameMatch, NameRule};

/// Shortest word (in chars) that may match another with one typo: shorter
/// given names one letter apart are usually different names ("Melanie" /
/// "Melania", "Jon" / "John").
pub const MIN_TYPO_WORD_CHARS: usize = 8;

/// Shortest abbreviated given name that matches the full one ("Sam" for
/// "Samuel", "Jeff" for "Jeffrey").
pub const MIN_SHORT_NAME_CHARS: usize = 3;

/// Letters an acronym may have. Longer all-caps words are names written
/// in capitals, not initials.
pub const ACRONYM_LETTERS: std::ops::RangeInclusive<usize> = 2..=6;

/// Most words of a key a profile reads: the extractor's names are far
/// shorter; this only bounds the work on a hostile key.
pub const MAX_PROFILE_WORDS: usize = 32;

/// Weight of an exact word match.
const EXACT: f64 = 1.0;
/// Weight of a long word matched with one typo.
const TYPO: f64 = 0.9;
/// Weight of a short given name matched to its full form. As weak as an
/// initial: "Jeff" / "Jeffrey" and "Chris" / "Christine" look the same to
/// any name rule, so a short form alone never carries a merge (with the
/// same surname it scores 0.75, under the merge floor) but does link a
/// question's "Jeff Bezos" to a stored "Jeffrey Bezos".
const SHORT_NAME: f64 = 0.5;
/// Weight of an initial matched to a word; also what an unmatched initial
/// counts in the longer name (a middle initial is weak evidence either way).
const INITIAL: f64 = 0.5;

/// Words that join a name's parts and identify nothing on their own (on
/// top of the extractor's particles: "of", "van", "de", ...).
const GLUE_WORDS: &[&str] = &["&", "a", "an", "and", "at", "for", "the"];

/// A name reduced to what identifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameProfile {
    /// Identifying words, in order: folded, without diacritics, honorifics,
    /// particles or legal forms ("marie", "sklodowska", "curie").
    pub words: Vec<String>,
    /// Initials of the words including particles ("mit" is not the initials
    /// of "massachusetts institute of technology", "miot" is); compared
    /// along with the initials of `words`.
    initials_with_particles: String,
    /// The letters the name spells when it is an acronym ("nyc" for "NYC",
    /// "us" for "U.S.").
    pub acronym: Option<String>,
    /// A code identifier, version, path or anything with digits: only an
    /// identical key names the same thing.
    pub code_like: bool,
}

impl NameProfile {
    /// Profiles a stored entity from its key and display name. The display
    /// name is only read for capitals (an acronym is "NYC", not "nyc").
    pub fn new(key: &str, display: &str) -> NameProfile {
        let code_like = is_code_like(key);
        let acronym = acronym_of(display).or_else(|| dotted_acronym(key));
        let mut all: Vec<String> = Vec::new();
        let parts = key
            .split(|c: char| c.is_whitespace() || matches!(c, '-' | '.' | ',' | '/'))
            .take(MAX_PROFILE_WORDS);
        for raw in parts {
            let w: String = raw
                .chars()
                .filter(|c| !matches!(c, '\'' | '\u{2019}' | '"' | '(' | ')'))
                .flat_map(fold_letter)
                .collect();
            if !w.is_empty() {
                all.push(w);
            }
        }
        // Honorifics lead ("dr marie curie"), legal forms trail ("acme gmbh").
        let honorifics = all
            .iter()
            .take(all.len().saturating_sub(1))
            .take_while(|w| wordlists::is_honorific(w))
            .count();
        all.drain(..honorifics);
        while all.len() > 1
            && all
                .last()
                .is_some_and(|w| wordlists::is_corporate_suffix(w))
        {
            all.pop();
        }
        let last = all.len().saturating_sub(1);
        for (i, w) in all.iter_mut().enumerate() {
            if let Some(full) = expand_abbreviation(w, i == 0 && last > 0, i == last && i > 0) {
                *w = full.to_string();
            }
        }
        let initials_with_particles = if all.len() >= 2 {
            all.iter().filter_map(|w| w.chars().next()).collect()
        } else {
            String::new()
        };
        let words: Vec<String> = all
            .into_iter()
            .filter(|w| !GLUE_WORDS.contains(&w.as_str()) && !wordlists::is_connector(w))
            .collect();
        NameProfile {
            words,
            initials_with_particles,
            acronym,
            code_like,
        }
    }

    /// The words run together: "openai" for both "OpenAI" and "Open AI".
    pub fn joined(&self) -> String {
        self.words.concat()
    }

    /// Initials of a name of two or more words, with and without its
    /// particles ("mit" and "miot" for "Massachusetts Institute of
    /// Technology"); empty for one-word names.
    pub fn initials(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.words.len() >= 2 {
            out.push(self.words.iter().filter_map(|w| w.chars().next()).collect());
        }
        if !self.initials_with_particles.is_empty() && !out.contains(&self.initials_with_particles)
        {
            out.push(self.initials_with_particles.clone());
        }
        out
    }

    /// The text whose embedding stands for the name: its acronym, else its
    /// identifying words.
    pub fn embedding_text(&self) -> String {
        match &self.acronym {
            Some(a) => a.clone(),
            None => self.words.join(" "),
        }
    }
}

impl NameMatch {
    const NONE: NameMatch = NameMatch {
        score: 0.0,
        rule: NameRule::None,
    };
}

/// How alike two names are, in [0, 1]. `people` says the pair are (or may
/// be) people, which makes both ends of the names binding.
pub fn similarity(a: &NameProfile, b: &NameProfile, people: bool) -> NameMatch {
    if a.code_like || b.code_like || a.words.is_empty() || b.words.is_empty() {
        return NameMatch::NONE;
    }
    if a.joined() == b.joined() {
        return NameMatch {
            score: 1.0,
            rule: NameRule::SameWords,
        };
    }
    for (short, long) in [(a, b), (b, a)] {
        if let Some(letters) = &short.acronym {
            if long.acronym.is_none() && long.initials().iter().any(|i| i == letters) {
                return NameMatch {
                    score: 1.0,
                    rule: NameRule::Acronym,
                };
            }
        }
    }
    if a.acronym.is_some() && b.acronym.is_some() {
        return NameMatch::NONE; // different letters
    }
    let score = aligned_words(&a.words, &b.words, people);
    if score <= 0.0 {
        return NameMatch::NONE;
    }
    NameMatch {
        score,
        rule: NameRule::Words,
    }
}

/// One-to-one alignment of two word lists: matched weight over the heavier
/// side's weight. For people the first and last words must pair up.
fn aligned_words(a: &[String], b: &[String], people: bool) -> f64 {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if people && short.len() >= 2 {
        let given = word_match(&short[0], &long[0], true);
        let surname = word_match(&short[short.len() - 1], &long[long.len() - 1], false);
        // A surname must be the same word (or a long one with a typo).
        if given == 0.0 || surname < TYPO {
            return 0.0;
        }
    }
    let mut used = vec![false; long.len()];
    let mut matched = 0.0;
    let mut short_weight = 0.0;
    for (i, s) in short.iter().enumerate() {
        // Best unused partner; on a tie the earliest, so the result does
        // not depend on anything but the two names.
        let mut best: Option<(usize, f64)> = None;
        for (j, l) in long.iter().enumerate() {
            if used[j] {
                continue;
            }
            let w = word_match(s, l, people && i == 0 && j == 0);
            if w > 0.0 && best.is_none_or(|(_, bw)| w > bw) {
                best = Some((j, w));
            }
        }
        match best {
            Some((j, w)) => {
                used[j] = true;
                matched += w;
                short_weight += 1.0;
            }
            None => short_weight += unmatched_weight(s),
        }
    }
    // A person's middle names come and go ("Barack Obama" / "Barack
    // Hussein Obama"): once the ends agree, an unmatched word inside the
    // longer name weighs like an initial.
    let middle = |j: usize| people && short.len() >= 2 && j > 0 && j + 1 < long.len();
    let long_weight: f64 = long
        .iter()
        .zip(&used)
        .enumerate()
        .map(|(j, (w, &u))| match (u, middle(j)) {
            (true, _) => 1.0,
            (false, true) => INITIAL,
            (false, false) => unmatched_weight(w),
        })
        .sum();
    matched / short_weight.max(long_weight)
}

/// What a word left unmatched counts against a match: an initial counts
/// half ("John F. Kennedy" is mostly "John Kennedy").
fn unmatched_weight(word: &str) -> f64 {
    if word.chars().count() == 1 {
        INITIAL
    } else {
        1.0
    }
}

/// Weight of pairing two words: exact, typo, initial, or (for a person's
/// first word) a short given name.
fn word_match(a: &str, b: &str, given_names: bool) -> f64 {
    if a == b {
        return EXACT;
    }
    let (la, lb) = (a.chars().count(), b.chars().count());
    if (la == 1 && b.starts_with(a)) || (lb == 1 && a.starts_with(b)) {
        return INITIAL;
    }
    if given_names {
        let (short, long, ls) = if la <= lb { (a, b, la) } else { (b, a, lb) };
        if ls >= MIN_SHORT_NAME_CHARS && long.starts_with(short) {
            return SHORT_NAME;
        }
    }
    let typo_allowed = la.min(lb) >= MIN_TYPO_WORD_CHARS
        && !wordlists::is_given_name(a)
        && !wordlists::is_given_name(b);
    if typo_allowed && within_one_edit(a, b) {
        return TYPO;
    }
    0.0
}

/// Optimal-string-alignment distance of at most 1: one insertion,
/// deletion, substitution or swap of neighbours.
fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    let suffix = ra
        .iter()
        .rev()
        .zip(rb.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (ra.len() - suffix, rb.len() - suffix);
    match (ma, mb) {
        (0, 0) | (1, 0) | (0, 1) | (1, 1) => true,
        // A swap of neighbours: "ab" against "ba".
        (2, 2) => ra[0] == rb[1] && ra[1] == rb[0],
        _ => false,
    }
}

/// Characters that make a key a code identifier, path or expression.
const CODE_PUNCTUATION: &[char] = &[
    '_', '/', '\\', '@', ':', '#', '=', '<', '>', '{', '}', '[', ']', '+', '*', '$', '%', '~', '|',
    '^', '`', '(', ')',
];

/// Digits or code punctuation anywhere, or a dot inside a word whose parts
/// are not single letters ("node.js", "amazon.com", but not "j.k." or
/// "st.").
fn is_code_like(key: &str) -> bool {
    if key
        .chars()
        .any(|c| c.is_ascii_digit() || CODE_PUNCTUATION.contains(&c))
    {
        return true;
    }
    key.split_whitespace().any(|w| {
        let inner = w.trim_matches('.');
        inner.contains('.') && inner.split('.').any(|p| p.chars().count() > 1)
    })
}

/// "NYC", "NASA", "UK": 2-6 capital letters and nothing else but dots.
fn acronym_of(display: &str) -> Option<String> {
    let s = display.trim().trim_end_matches("'s").trim_end_matches('.');
    let letters: String = s.chars().filter(|c| *c != '.').collect();
    let ok = ACRONYM_LETTERS.contains(&letters.chars().count())
        && letters.chars().all(|c| c.is_ascii_uppercase());
    ok.then(|| letters.to_ascii_lowercase())
}

/// "u.s", "u.s.a.": single letters separated by dots, in any case.
fn dotted_acronym(key: &str) -> Option<String> {
    let s = key.trim().trim_end_matches('.');
    let parts: Vec<&str> = s.split('.').collect();
    let ok = parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.chars().count() == 1 && p.chars().all(|c| c.is_alphabetic()));
    ok.then(|| parts.concat().to_lowercase())
}

/// Common abbreviations inside names: "St." leading is Saint and trailing
/// Street, "Mt." Mount, "Ft." Fort, "Ave." Avenue.
fn expand_abbreviation(word: &str, first: bool, last: bool) -> Option<&'static str> {
    match (word, first, last) {
        ("st", true, _) => Some("saint"),
        ("mt", true, _) => Some("mount"),
        ("ft", true, _) => Some("fort"),
        ("st", _, true) => Some("street"),
        ("ave", _, true) => Some("avenue"),
        ("rd", _, true) => Some("road"),
        _ => None,
    }
}

/// Lowercases a letter and drops its diacritics ("É" → "e", "ł" → "l",
/// "ß" → "ss"), so names typed with and without accents match.
fn fold_letter(c: char) -> impl Iterator<Item = char> {
    let (base, second) = match c {
        'À'..='Å' | 'à'..='å' | 'Ā' | 'ā' | 'Ă' | 'ă' | 'Ą' | 'ą' => ('a', None),
        'Ç' | 'ç' | 'Ć' | 'ć' | 'Č' | 'č' => ('c', None),
        'Ď' | 'ď' | 'Đ' | 'đ' => ('d', None),
        'È'..='Ë' | 'è'..='ë' | 'Ē' | 'ē' | 'Ę' | 'ę' | 'Ě' | 'ě' => ('e', None),
        'Ğ' | 'ğ' => ('g', None),
        'Ì'..='Ï' | 'ì'..='ï' | 'Ī' | 'ī' | 'İ' | 'ı' => ('i', None),
        'Ł' | 'ł' => ('l', None),
        'Ñ' | 'ñ' | 'Ń' | 'ń' | 'Ň' | 'ň' => ('n', None),
        'Ò'..='Ö' | 'Ø' | 'ò'..='ö' | 'ø' | 'Ō' | 'ō' | 'Ő' | 'ő' => ('o', None),
        'Ř' | 'ř' => ('r', None),
        'Ś' | 'ś' | 'Ş' | 'ş' | 'Š' | 'š' => ('s', None),
        'Ť' | 'ť' | 'Ţ' | 'ţ' => ('t', None),
        'Ù'..='Ü' | 'ù'..='ü' | 'Ū' | 'ū' | 'Ů' | 'ů' | 'Ű' | 'ű' => ('u', None),
        'Ý' | 'ý' | 'ÿ' => ('y', None),
        'Ź' | 'ź' | 'Ż' | 'ż' | 'Ž' | 'ž' => ('z', None),
        'ß' => ('s', Some('s')),
        c => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => (l, None),
                _ => (c, None),
            }
        }
    };
    std::iter::once(base).chain(second)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> NameProfile {
        NameProfile::new(&name.to_lowercase(), name)
    }

    fn score(a: &str, b: &str, people: bool) -> f64 {
        similarity(&p(a), &p(b), people).score
    }

    #[test]
    fn profiles_drop_what_does_not_identify() {
        assert_eq!(p("Dr. Marie Curie").words, ["marie", "curie"]);
        assert_eq!(
            p("Gabriel García Márquez").words,
            ["gabriel", "garcia", "marquez"]
        );
        assert_eq!(p("St. Petersburg").words, ["saint", "petersburg"]);
        assert_eq!(p("Main St").words, ["main", "street"]);
        assert_eq!(p("Bank of America").words, ["bank", "america"]);
        assert_eq!(p("Acme GmbH").words, ["acme"]);
        assert_eq!(p("NYC").acronym.as_deref(), Some("nyc"));
        assert_eq!(p("U.S.").acronym.as_deref(), Some("us"));
        assert_eq!(p("Java").acronym, None);
        let mit = p("Massachusetts Institute of Technology");
        assert_eq!(mit.initials(), ["mit", "miot"]);
    }

    #[test]
    fn versions_and_code_are_never_alike() {
        for (a, b) in [
            ("Python 3.11", "Python 3.12"),
            ("node.js", "nodejs"),
            ("GPT-4", "GPT-4o"),
        ] {
            assert_eq!(score(a, b, false), 0.0, "{a} / {b}");
        }
        assert!(!p("J.K. Rowling").code_like);
        assert!(!p("St. Petersburg").code_like);
    }

    #[test]
    fn spacing_hyphens_accents_and_acronyms_score_one() {
        for (a, b) in [
            ("OpenAI", "Open AI"),
            ("Coca-Cola", "Coca Cola"),
            ("Universite de Montreal", "Université de Montréal"),
            ("NYC", "New York City"),
            ("MIT", "Massachusetts Institute of Technology"),
            ("NASA", "National Aeronautics and Space Administration"),
            ("U.S.", "United States"),
        ] {
            assert_eq!(score(a, b, false), 1.0, "{a} / {b}");
        }
    }

    #[test]
    fn people_must_agree_on_given_name_and_surname() {
        assert_eq!(score("John Smith", "Jane Smith", true), 0.0);
        assert_eq!(score("Jon Smith", "John Smith", true), 0.0);
        assert_eq!(score("Martin Luther", "Martin Luther King", true), 0.0);
        assert_eq!(score("Sarah Connor", "John Connor", true), 0.0);
        assert_eq!(score("Marie Curie", "Marie Sklodowska Curie", true), 0.8);
        assert_eq!(score("John F. Kennedy", "John Kennedy", true), 0.8);
        assert_eq!(score("Jeff Bezos", "Jeffrey Bezos", true), 0.75);
        // Not people: every word counts.
        assert!((score("Golden State", "Golden State Warriors", false) - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn one_typo_is_forgiven_only_in_long_words_that_are_not_given_names() {
        assert!(score("Microsoft", "Microsfot", false) > 0.8);
        assert!(score("Schwarzenegger", "Schwarzeneger", true) > 0.8);
        assert_eq!(score("Caroline", "Carolina", true), 0.0);
        assert_eq!(score("Melanie", "Melania", true), 0.0);
        assert_eq!(score("Austria", "Australia", false), 0.0);
        assert!(within_one_edit("abcd", "abdc"));
        assert!(!within_one_edit("abcd", "badc"));
    }

    #[test]
    fn a_shorter_name_inside_a_longer_one_scores_its_share() {
        assert_eq!(score("Apple", "Apple Records", false), 0.5);
        assert!((score("Golden State", "Golden State Warriors", false) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(score("Java", "JavaScript", false), 0.0);
    }
}
