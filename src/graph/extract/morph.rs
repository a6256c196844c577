//! Tiny English morphology: verb recognition, adverbs, plurals.
//!
//! Owns the suffix rules that let small lexicons cover inflected forms:
//! "acquired"/"works"/"planning" are verb forms of listed base verbs, "-ly"
//! words are adverbs, "groups" singularizes to "group".
//!
//! Must never: allocate more than one short string per call, or claim
//! linguistic accuracy; these are cheap heuristics tuned for precision on
//! the words that sit between two entity mentions.

use super::lexicon::{
    self, ADVERBS, AUXILIARIES, COPULAS, IRREGULAR_VERBS, LY_NOT_ADVERBS, NEGATED_AUXILIARIES,
    VERBS,
};

/// True for a word that is (very likely) a verb form: a listed verb in any
/// regular inflection, an irregular past form, any "-ed" word, a copula or an
/// auxiliary.
pub(super) fn is_verb_form(word: &str) -> bool {
    if lexicon::contains(IRREGULAR_VERBS, word)
        || lexicon::contains(COPULAS, word)
        || lexicon::contains(AUXILIARIES, word)
        || lexicon::contains(NEGATED_AUXILIARIES, word)
    {
        return true;
    }
    if word.len() > 4
        && word
            .get(word.len() - 2..)
            .is_some_and(|s| s.eq_ignore_ascii_case("ed"))
    {
        return true;
    }
    verb_base(word).is_some()
}

/// Suffix rewrites that undo regular inflection, tried in order.
const INFLECTIONS: [(&str, &str); 9] = [
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("d", ""),
    ("ing", ""),
    ("ing", "e"),
];

/// The listed base verb behind a regular inflection, if any.
pub(super) fn verb_base(word: &str) -> Option<String> {
    let w: String = word.chars().map(lexicon::fold).collect();
    if lexicon::contains(VERBS, &w) {
        return Some(w);
    }
    let mut candidate = String::with_capacity(w.len() + 1);
    for (suffix, repl) in INFLECTIONS {
        let Some(stem) = w.strip_suffix(suffix) else {
            continue;
        };
        if stem.len() < 2 {
            continue;
        }
        candidate.clear();
        candidate.push_str(stem);
        candidate.push_str(repl);
        if lexicon::contains(VERBS, &candidate) {
            return Some(candidate);
        }
        // Doubled final consonant: "planned" -> "plan".
        let b = stem.as_bytes();
        let doubled = repl.is_empty()
            && b.len() >= 3
            && b[b.len() - 1].is_ascii_alphabetic()
            && b[b.len() - 1] == b[b.len() - 2];
        if doubled && lexicon::contains(VERBS, &stem[..stem.len() - 1]) {
            return Some(stem[..stem.len() - 1].to_string());
        }
    }
    None
}

/// True for adverbs that predicates drop ("recently", "also").
pub(super) fn is_adverb(word: &str) -> bool {
    if lexicon::contains(ADVERBS, word) {
        return true;
    }
    let lower_ly = word.len() > 4
        && word
            .get(word.len() - 2..)
            .is_some_and(|s| s.eq_ignore_ascii_case("ly"));
    lower_ly && !lexicon::contains(LY_NOT_ADVERBS, word)
}

/// Singularizes a lowercase English noun with the common regular rules.
pub(super) fn singularize(word: &str) -> String {
    let irregular_keep = [
        "news", "series", "species", "analysis", "status", "bus", "gas",
    ];
    if word.len() <= 3 || irregular_keep.contains(&word) {
        return word.to_string();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for suffix in ["sses", "ches", "shes", "xes", "zes"] {
        if word.ends_with(suffix) {
            return word[..word.len() - 2].to_string();
        }
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return word.to_string();
    }
    match word.strip_suffix('s') {
        Some(stem) => stem.to_string(),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflected_verbs_are_recognized() {
        for w in [
            "acquired", "works", "founded", "planned", "studies", "went", "isn't", "using",
        ] {
            assert!(is_verb_form(w), "{w}");
        }
        for w in ["group", "agency", "Paris", "the"] {
            assert!(!is_verb_form(w), "{w}");
        }
    }

    #[test]
    fn adverbs_are_recognized_but_not_ly_nouns() {
        assert!(is_adverb("recently"));
        assert!(is_adverb("also"));
        assert!(!is_adverb("supply"));
        assert!(!is_adverb("family"));
    }

    #[test]
    fn plurals_are_singularized() {
        assert_eq!(singularize("groups"), "group");
        assert_eq!(singularize("agencies"), "agency");
        assert_eq!(singularize("classes"), "class");
        assert_eq!(singularize("status"), "status");
        assert_eq!(singularize("analysis"), "analysis");
    }
}
