//! Normalized keys for entity merging.
//!
//! Owns the one place that decides when two surfaces name the same thing
//! inside a text: case folding, whitespace collapsing, possessive removal
//! ("Acme's" = "Acme"), a leading "the", corporate legal-form suffixes
//! ("Acme Corp." = "Acme Corporation" = "Acme"), plural concepts ("support
//! groups" = "support group"), canonical date/quantity keys (see `values`),
//! and code identifiers ("foo()" = "foo").
//!
//! Must never: fold distinct code identifiers together beyond case and call
//! parentheses, return an empty key for a non-empty surface, or panic.

use super::lexicon::{self, CORP_SUFFIXES};
use super::morph::singularize;
use super::tokens::{tokenize, Shape};
use super::values::match_value;
use super::EntityKind;

/// Lowercases and splits on whitespace, then drops a possessive from the
/// last word and a leading "the".
fn folded_words(surface: &str) -> Vec<String> {
    let mut words: Vec<String> = surface
        .split_whitespace()
        .map(|w| w.chars().map(lexicon::fold).collect())
        .collect();
    if let Some(last) = words.last_mut() {
        if let Some(stem) = last.strip_suffix("'s") {
            if !stem.is_empty() {
                *last = stem.to_string();
            }
        } else if last.len() > 2 && last.ends_with("s'") {
            last.pop();
        }
    }
    if words.len() > 1 && words[0] == "the" {
        words.remove(0);
    }
    words
}

/// Key for proper names: folded words without legal-form suffixes.
pub(super) fn name_key(surface: &str) -> String {
    let mut words = folded_words(surface);
    while words.len() > 1 {
        let last = words
            .last()
            .map(|w| w.trim_end_matches(['.', ',']))
            .unwrap_or("");
        if lexicon::contains(CORP_SUFFIXES, last) {
            words.pop();
        } else {
            break;
        }
    }
    if let Some(last) = words.last_mut() {
        let trimmed = last.trim_end_matches([',', '.']);
        if !trimmed.is_empty() {
            *last = trimmed.to_string();
        }
    }
    let key = words.join(" ");
    if key.is_empty() {
        surface.trim().to_lowercase()
    } else {
        key
    }
}

/// Key for lowercase concepts: like names, with the head noun singularized.
pub(super) fn concept_key(surface: &str) -> String {
    let mut words = folded_words(surface);
    if let Some(last) = words.last_mut() {
        *last = singularize(last);
    }
    let key = words.join(" ");
    if key.is_empty() {
        surface.trim().to_lowercase()
    } else {
        key
    }
}

/// Key for code identifiers, paths, URLs and emails: case-folded, without
/// call parentheses or a trailing slash.
pub(super) fn code_key(surface: &str) -> String {
    let folded: String = surface.trim().chars().map(lexicon::fold).collect();
    let trimmed = folded.trim_end_matches("()").trim_end_matches('/');
    if trimmed.is_empty() {
        folded
    } else {
        trimmed.to_string()
    }
}

/// The canonical key of a surface that is entirely one date, time or
/// quantity, if it is one.
pub(super) fn value_key(surface: &str) -> Option<String> {
    let mut toks = Vec::new();
    tokenize(surface, 0, surface.len(), true, &mut toks);
    let cue = usize::from(toks.first().is_some_and(|t| t.text == "in") && toks.len() > 1);
    let m = match_value(&toks, cue)?;
    let rest_is_punct = toks[m.end..].iter().all(|t| t.shape == Shape::Punct);
    rest_is_punct.then_some(m.key)
}

/// The merge key the extractor gives a surface of the given kind. Public so
/// callers (and the evaluation) can key their own labels consistently.
pub fn entity_key(surface: &str, kind: EntityKind) -> String {
    if let Some(key) = value_key(surface) {
        return key;
    }
    if kind == EntityKind::Date {
        // A bare month or year is only a date after a cue word ("in June").
        if let Some(key) = value_key(&format!("in {surface}")) {
            return key;
        }
    }
    let mut toks = Vec::new();
    tokenize(surface, 0, surface.len(), true, &mut toks);
    if let [only] = toks.as_slice() {
        if matches!(only.shape, Shape::Code | Shape::Url | Shape::Email)
            && only.text == surface.trim()
        {
            return code_key(surface);
        }
    }
    let lowercase_start = surface.trim_start().starts_with(char::is_lowercase);
    if kind == EntityKind::Concept && lowercase_start {
        concept_key(surface)
    } else {
        name_key(surface)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corporate_suffixes_and_possessives_share_a_key() {
        assert_eq!(name_key("Acme Corp."), "acme");
        assert_eq!(name_key("Acme Corporation"), "acme");
        assert_eq!(name_key("Acme, Inc."), "acme");
        assert_eq!(name_key("Acme's"), "acme");
        assert_eq!(name_key("The  Hague"), "hague");
        assert_eq!(name_key("St. Michael's Hospital"), "st. michael's hospital");
    }

    #[test]
    fn concepts_are_singularized() {
        assert_eq!(concept_key("support groups"), "support group");
        assert_eq!(
            entity_key("adoption agencies", EntityKind::Concept),
            "adoption agency"
        );
    }

    #[test]
    fn code_keys_ignore_case_and_call_parentheses() {
        assert_eq!(code_key("Pandas.read_csv()"), "pandas.read_csv");
        assert_eq!(
            entity_key("src/config.rs", EntityKind::Artifact),
            "src/config.rs"
        );
    }

    #[test]
    fn dates_key_canonically_whatever_kind_is_claimed() {
        assert_eq!(entity_key("8 May, 2023", EntityKind::Date), "2023-05-08");
        assert_eq!(
            entity_key("$30 million", EntityKind::Unknown),
            "$30 million"
        );
    }
}
