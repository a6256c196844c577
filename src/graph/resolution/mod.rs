//! Entity resolution across documents: is a name new to the memory another
//! name of an entity it already holds?
//!
//! Within one text the extractor merges names itself (`extract::resolve`);
//! across texts the store used to merge only identical keys, so "NYC" in
//! one note and "New York City" in another were two entities. This module
//! owns the policy that closes that gap, and nothing else:
//!
//! - **which pairs may merge at all** ([`kinds_compatible`]): named kinds
//!   only (person, organization, place, artifact, or unknown with any of
//!   them); never two different firm kinds (a person is never an
//!   organization), never concepts, dates or values, and never code
//!   identifiers or names with digits (see [`names`]);
//! - **how alike the names are** ([`names::similarity`]) and **how alike
//!   their embeddings are** ([`name_cosine`], the built-in static model,
//!   whatever embedder the memory uses for chunks, so the thresholds mean
//!   the same everywhere); a merge needs both above [`MERGE`];
//! - **which stored entities to compare** ([`lookup_terms`] and
//!   [`index_terms`]): terms the store indexes per entity (its words, its
//!   words run together, its initials, its acronym, the ends of its long
//!   words) so candidates come from indexed lookups bounded by
//!   [`MAX_CANDIDATES_PER_TERM`] and [`MAX_CANDIDATES`], never a scan;
//! - **the choice** ([`choose_merge`]): exactly one candidate must pass,
//!   else nothing merges (two "J. Smith"s make "J. Smith" ambiguous), and
//!   [`question_matches`], the laxer matching of names in a question to
//!   stored entities (a wrong match there costs one query some noise, not
//!   the memory a wrong fact).
//!
//! The store (`store::resolution`) runs the lookups, records a merge as an
//! alias of the existing entity, and keeps the term index, calling this
//! policy through [`POLICY`] (a [`NamePolicy`] it is handed when it opens); the query
//! engine (`query::graph`) calls [`question_matches`]. The thresholds were
//! measured on `fixtures/extraction/resolution_pairs.jsonl` by
//! `cargo run --release --example sweep_resolution` (figures in
//! BENCHMARKS.md, "Entity resolution").
//!
//! Must never: merge on name alone or embedding alone, depend on anything
//! but its inputs (same names in, same decision out), or touch the store.

pub mod eval;
pub mod names;

#[cfg(test)]
mod tests;

/// The values the store records and the bounds it reads by are the
/// knowledge model's, below the store; kept at these paths.
pub use crate::knowledge::resolution::{
    is_resolvable_kind, Candidate, Evidence, NameMatch, NamePolicy, NameRule, Thresholds,
    MAX_CANDIDATES, MAX_CANDIDATES_PER_TERM, NAME_TERMS_VERSION,
};
pub use names::{similarity, NameProfile};

/// Thresholds for merging a new name into a stored entity, picked as the
/// best F0.5 (precision counts double: a wrong merge mixes two things'
/// facts for good, a missed one leaves them apart as before) on the `dev`
/// pairs of the fixture. Measured there: precision 0.95, recall 0.75 (one
/// false merge, "Michael Jordan" / "Michael B. Jordan"); on `heldout`:
/// precision 0.92, recall 0.80. A name score of 0.8 keeps the rules that
/// rarely fire by chance (same words, acronym, a long-word typo, a
/// person's middle name or initial with the same given name and surname)
/// and drops "Golden State" / "Golden State Warriors" (2/3); the cosine
/// floor drops acronym collisions ("AI" / "Adobe Illustrator" 0.33,
/// "IBM" / "International Brotherhood of Magicians" 0.02) and keeps real
/// expansions (0.41 and up, except "WHO", whose letters embed as the
/// pronoun).
pub const MERGE: Thresholds = Thresholds {
    name: 0.8,
    embedding: 0.4,
};

/// Thresholds for linking a name in a question to a stored entity when no
/// key or alias matched. Laxer on the name (a question's "Harvard" should
/// reach "Harvard University"), as strict on the embedding.
pub const QUESTION: Thresholds = Thresholds {
    name: 0.5,
    embedding: MERGE.embedding,
};

/// Most lookup terms tried for one name (and most index terms stored for
/// one entity): names longer than this are sentences, not names.
pub const MAX_NAME_TERMS: usize = 16;

/// Most stored entities one name in a question may stand for.
pub const MAX_QUESTION_MATCHES: usize = 2;

/// Two kinds may name one thing when they are the same, or one of them is
/// unknown (a name seen without kind evidence).
pub fn kinds_compatible(a: &str, b: &str) -> bool {
    is_resolvable_kind(a) && is_resolvable_kind(b) && (a == b || a == "unknown" || b == "unknown")
}

/// Cosine of the built-in embeddings of two names. The built-in model is
/// used whatever embedder the memory has, so the thresholds keep their
/// meaning; if it cannot load, 0 (nothing merges).
pub fn name_cosine(a: &NameProfile, b: &NameProfile) -> f32 {
    let mut a_vector = None;
    cosine_with(a, &mut a_vector, b)
}

/// [`name_cosine`], embedding `a` at most once across calls that share
/// `a_vector` (the new name, compared with every candidate).
fn cosine_with(a: &NameProfile, a_vector: &mut Option<Vec<f32>>, b: &NameProfile) -> f32 {
    let Ok(model) = crate::embed::builtin() else {
        return 0.0;
    };
    let va = a_vector.get_or_insert_with(|| model.embed(&a.embedding_text()));
    let vb = model.embed(&b.embedding_text());
    va.iter().zip(&vb).map(|(x, y)| x * y).sum()
}

/// Both signals for a pair of names of the given kinds, or `None` when the
/// kinds may not merge.
pub fn evidence(a: &NameProfile, a_kind: &str, b: &NameProfile, b_kind: &str) -> Option<Evidence> {
    evidence_with(a, a_kind, &mut None, b, b_kind, 0.0)
}

/// [`evidence`], reusing `a`'s embedding through `a_vector`; the cosine is
/// only computed (else reported as 0) when the name score reaches
/// `min_name`, as no pair below it can pass.
fn evidence_with(
    a: &NameProfile,
    a_kind: &str,
    a_vector: &mut Option<Vec<f32>>,
    b: &NameProfile,
    b_kind: &str,
    min_name: f64,
) -> Option<Evidence> {
    if !kinds_compatible(a_kind, b_kind) {
        return None;
    }
    let people = a_kind == "person" || b_kind == "person";
    let name = similarity(a, b, people);
    let cosine = match name.rule {
        // The same letters: an embedding would only measure how the
        // tokenizer splits them ("ProPublica" / "Pro Publica" is 0.14).
        NameRule::SameWords => 1.0,
        NameRule::None => 0.0,
        NameRule::Acronym | NameRule::Words if name.score < min_name => 0.0,
        NameRule::Acronym | NameRule::Words => cosine_with(a, a_vector, b),
    };
    Some(Evidence { name, cosine })
}

/// The one stored entity a new name (`key`, display `name`, `kind`) is
/// another name of, with the evidence, if exactly one candidate passes
/// [`MERGE`].
pub fn choose_merge(
    key: &str,
    name: &str,
    kind: &str,
    candidates: &[Candidate],
) -> Option<(i64, Evidence)> {
    if !is_resolvable_kind(kind) {
        return None;
    }
    let new = NameProfile::new(key, name);
    if new.code_like {
        return None;
    }
    let mut chosen: Option<(i64, Evidence)> = None;
    let mut new_vector = None;
    for c in candidates {
        let profile = NameProfile::new(&c.key, &c.name);
        let Some(e) = evidence_with(&new, kind, &mut new_vector, &profile, &c.kind, MERGE.name)
        else {
            continue;
        };
        if e.passes(MERGE) {
            match chosen {
                Some((id, _)) if id != c.id => return None, // ambiguous
                _ => chosen = Some((c.id, e)),
            }
        }
    }
    chosen
}

/// Stored entities a name in a question stands for: candidates passing
/// [`QUESTION`], best first (name score plus cosine; ties by id), at most
/// [`MAX_QUESTION_MATCHES`]. The question's own kind is not trusted (a
/// question is too short for kind evidence).
pub fn question_matches(key: &str, name: &str, candidates: &[Candidate]) -> Vec<i64> {
    let phrase = NameProfile::new(key, name);
    if phrase.code_like {
        return Vec::new();
    }
    let mut scored: Vec<(f64, i64)> = Vec::new();
    let mut phrase_vector = None;
    for c in candidates {
        let profile = NameProfile::new(&c.key, &c.name);
        let Some(e) = evidence_with(
            &phrase,
            "unknown",
            &mut phrase_vector,
            &profile,
            &c.kind,
            QUESTION.name,
        ) else {
            continue;
        };
        if e.passes(QUESTION) && !scored.iter().any(|(_, id)| *id == c.id) {
            scored.push((e.name.score + f64::from(e.cosine), c.id));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_QUESTION_MATCHES)
        .map(|(_, id)| id)
        .collect()
}

/// Terms the store indexes for a stored name (at most [`MAX_NAME_TERMS`]):
/// `w:` each word of two or more letters, `j:` the words run together,
/// `i:` its initials, `a:` its acronym, `p:`/`s:` the first and last four
/// letters of each word long enough to match with a typo.
pub fn index_terms(p: &NameProfile) -> Vec<String> {
    name_terms(p, "a", "i")
}

/// Terms to look a new name up by (at most [`MAX_NAME_TERMS`]): the
/// counterparts of [`index_terms`]. An acronym looks for names with those
/// initials; a multi-word name looks for acronyms of its initials.
pub fn lookup_terms(p: &NameProfile) -> Vec<String> {
    name_terms(p, "i", "a")
}

/// The terms of a name, its acronym filed under `acronym_as` and its
/// initials under `initials_as`: swapped between [`index_terms`] and
/// [`lookup_terms`], so "NYC" looked up finds "New York City" indexed and
/// the other way round.
fn name_terms(p: &NameProfile, acronym_as: &str, initials_as: &str) -> Vec<String> {
    let mut out = Vec::new();
    if p.code_like || p.words.is_empty() {
        return out;
    }
    push(&mut out, format!("j:{}", p.joined()));
    if let Some(a) = &p.acronym {
        push(&mut out, format!("{acronym_as}:{a}"));
    }
    for i in p.initials() {
        push(&mut out, format!("{initials_as}:{i}"));
    }
    words_and_ends(p, &mut out);
    out.truncate(MAX_NAME_TERMS);
    out
}

/// [`lookup_terms`] for a new name of `kind` that may merge into a stored
/// entity ([`choose_merge`]): a person's name of two or more words only
/// looks up its surname's word terms. Any pair with a person on either side
/// must share the surname to pass [`MERGE`] (see [`names::similarity`]),
/// and given names are the words most names share ("John"), so this drops
/// the lookups that return the most candidates and never a merge.
pub fn merge_lookup_terms(p: &NameProfile, kind: &str) -> Vec<String> {
    if kind != "person" || p.words.len() < 2 {
        return lookup_terms(p);
    }
    let mut out = Vec::new();
    if p.code_like {
        return out;
    }
    push(&mut out, format!("j:{}", p.joined()));
    if let Some(a) = &p.acronym {
        push(&mut out, format!("i:{a}"));
    }
    for i in p.initials() {
        push(&mut out, format!("a:{i}"));
    }
    let surname = &p.words[p.words.len() - 1..];
    word_terms(surname, &mut out);
    out.truncate(MAX_NAME_TERMS);
    out
}

fn words_and_ends(p: &NameProfile, out: &mut Vec<String>) {
    word_terms(&p.words, out);
}

fn word_terms(words: &[String], out: &mut Vec<String>) {
    for w in words {
        if w.chars().count() >= 2 {
            push(out, format!("w:{w}"));
        }
    }
    for w in words {
        let chars: Vec<char> = w.chars().collect();
        if chars.len() >= names::MIN_TYPO_WORD_CHARS {
            // One edit leaves the first or the last four letters intact.
            push(out, format!("p:{}", chars[..4].iter().collect::<String>()));
            let tail: String = chars[chars.len() - 4..].iter().collect();
            push(out, format!("s:{tail}"));
        }
    }
}

fn push(out: &mut Vec<String>, term: String) {
    if !out.contains(&term) {
        out.push(term);
    }
}

/// This module's policy, as the store runs it (handed to `store::Store`
/// when it opens).
pub static POLICY: Policy = Policy;

/// [`NamePolicy`] by this module's functions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy;

impl NamePolicy for Policy {
    fn index_terms(&self, key: &str, name: &str) -> Vec<String> {
        index_terms(&NameProfile::new(key, name))
    }

    fn lookup_terms(&self, key: &str, name: &str) -> Vec<String> {
        lookup_terms(&NameProfile::new(key, name))
    }

    fn merge_lookup_terms(&self, key: &str, name: &str, kind: &str) -> Vec<String> {
        merge_lookup_terms(&NameProfile::new(key, name), kind)
    }

    fn choose_merge(
        &self,
        key: &str,
        name: &str,
        kind: &str,
        candidates: &[Candidate],
    ) -> Option<(i64, Evidence)> {
        choose_merge(key, name, kind, candidates)
    }

    fn question_matches(&self, key: &str, name: &str, candidates: &[Candidate]) -> Vec<i64> {
        question_matches(key, name, candidates)
    }

    fn surface_key(&self, surface: &str, kind: &str) -> String {
        let kind = crate::knowledge::fragment::EntityKind::parse(kind)
            .unwrap_or(crate::knowledge::fragment::EntityKind::Unknown);
        crate::graph::extract::entity_key(surface, kind)
    }
}
