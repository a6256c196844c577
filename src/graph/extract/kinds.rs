//! Entity kind evidence.
//!
//! Owns turning cues around a mention (honorifics, given names, corporate
//! and place suffixes, small gazetteers, the preposition before it) into
//! weighted votes per [`EntityKind`]. Votes from every mention of an entity
//! are summed after merging, so one strong cue anywhere in the text ("Dr.
//! Curie") decides the kind of all its mentions ("Curie").
//!
//! Must never: look beyond the sentence's tokens, or let weak context cues
//! (a preceding "in") outvote a strong lexical cue (a corporate suffix).

use super::lexicon::{
    self, DEMONYMS, GIVEN_NAMES, KIN, KNOWN_ORGS, ORG_ROLES, ORG_WORDS, PLACES, PLACE_PREFIXES,
    PLACE_PREPOSITIONS, PLACE_SUFFIXES, ROLES, TECH, WORK_CUES,
};
use super::tokens::{Shape, Token};
use super::EntityKind;

/// Longest span a given name or the plain-capitals rule may call a person.
const MAX_PERSON_NAME_TOKENS: usize = 3;

/// Weight of a cue that alone should decide the kind (suffix, gazetteer).
pub(super) const STRONG: u16 = 4;
/// Weight of a cue that usually decides the kind (given name).
pub(super) const MEDIUM: u16 = 3;
/// Weight of a shape-based default (CamelCase looks like a product).
pub(super) const SHAPE: u16 = 2;
/// Weight of a context cue (the preposition before the mention).
pub(super) const WEAK: u16 = 1;

const KINDS: [EntityKind; 7] = [
    EntityKind::Date,
    EntityKind::Person,
    EntityKind::Organization,
    EntityKind::Place,
    EntityKind::Artifact,
    EntityKind::Concept,
    EntityKind::Unknown,
];

fn slot(kind: EntityKind) -> usize {
    KINDS.iter().position(|k| *k == kind).unwrap_or(6)
}

/// Summed evidence per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Votes([u16; 7]);

impl Votes {
    pub(super) fn of(kind: EntityKind, weight: u16) -> Self {
        let mut v = Votes::default();
        v.add(kind, weight);
        v
    }

    pub(super) fn add(&mut self, kind: EntityKind, weight: u16) {
        let s = slot(kind);
        self.0[s] = self.0[s].saturating_add(weight);
    }

    pub(super) fn merge(&mut self, other: &Votes) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a = a.saturating_add(b);
        }
    }

    pub(super) fn get(&self, kind: EntityKind) -> u16 {
        self.0[slot(kind)]
    }

    /// The kind with the most votes; ties go to the earlier kind in
    /// [`KINDS`] (more specific first); no votes at all is `Unknown`.
    pub(super) fn best(&self) -> EntityKind {
        let mut best = (0u16, EntityKind::Unknown);
        for (i, kind) in KINDS.iter().enumerate() {
            if self.0[i] > best.0 {
                best = (self.0[i], *kind);
            }
        }
        best.1
    }
}

/// Facts about a proper-noun span gathered while building it.
pub(super) struct NameSpan<'t, 'a> {
    /// The span's tokens.
    pub toks: &'t [Token<'a>],
    /// Token before the span (after honorific stripping), if any.
    pub prev: Option<&'t Token<'a>>,
    /// Token two before the span.
    pub prev2: Option<&'t Token<'a>>,
    /// Token right after the span.
    pub next: Option<&'t Token<'a>>,
    pub honorific: bool,
    pub speaker: bool,
    pub versioned: bool,
}

/// The span's words lowercased and joined by single spaces.
fn joined_lower(toks: &[Token]) -> String {
    let mut s = String::new();
    for t in toks {
        if !s.is_empty() {
            s.push(' ');
        }
        s.extend(t.text.trim_end_matches('.').chars().map(lexicon::fold));
    }
    s
}

/// Votes for a proper-noun span.
pub(super) fn name_votes(span: &NameSpan) -> Votes {
    let mut v = Votes::default();
    let toks = span.toks;
    let (Some(first), Some(last)) = (toks.first(), toks.last()) else {
        return v;
    };
    if span.honorific || span.speaker {
        v.add(EntityKind::Person, STRONG);
    }
    let whole = joined_lower(toks);
    if lexicon::contains(PLACES, &whole) {
        v.add(EntityKind::Place, STRONG);
    }
    if lexicon::contains(KNOWN_ORGS, &whole) {
        v.add(EntityKind::Organization, STRONG);
    }
    if lexicon::contains(TECH, &whole) || span.versioned {
        v.add(EntityKind::Artifact, STRONG);
    }
    if toks
        .iter()
        .any(|t| t.shape == Shape::Cap && t.is_in(ORG_WORDS))
    {
        v.add(EntityKind::Organization, STRONG);
    }
    if toks.len() > 1 && last.is_in(PLACE_SUFFIXES) {
        v.add(EntityKind::Place, STRONG);
    }
    if toks.len() > 1 && first.is_in(PLACE_PREFIXES) {
        v.add(EntityKind::Place, MEDIUM);
    }
    if toks.len() <= MAX_PERSON_NAME_TOKENS && first.shape == Shape::Cap && first.is_in(GIVEN_NAMES)
    {
        v.add(EntityKind::Person, MEDIUM);
    }
    // "GPT-4", "M3 Pro", "737 MAX": digits in a name mark a model or product.
    let coded = |t: &Token| {
        t.shape == Shape::Number
            || t.shape == Shape::Upper && t.text.contains(|c: char| c.is_ascii_digit())
    };
    if toks.iter().any(coded) {
        v.add(EntityKind::Artifact, MEDIUM);
    } else if toks.len() == 1 {
        match first.shape {
            Shape::Camel => v.add(EntityKind::Artifact, SHAPE),
            // "GUI", "CBOR": an acronym with no cue names a technology
            // far more often than an organization; cues ("works at",
            // "the CTO of", a gazetteer) outvote this.
            Shape::Upper => v.add(EntityKind::Artifact, WEAK),
            _ => {}
        }
    }
    // Two or three plain capitalized words with no other cue read as a
    // person's name ("Sergey Brin") far more often than anything else.
    let plain = toks
        .iter()
        .all(|t| t.shape == Shape::Cap && !t.text.ends_with('.'));
    // "the Nobel Prize", "the Black Sea": people rarely take an article.
    let article = span
        .prev
        .is_some_and(|p| p.text.eq_ignore_ascii_case("the"));
    if (2..=MAX_PERSON_NAME_TOKENS).contains(&toks.len())
        && plain
        && !article
        && v == Votes::default()
    {
        v.add(EntityKind::Person, WEAK);
    }
    // "Acme's CEO": the owner of an executive is an organization.
    if last.possessive && span.next.is_some_and(|n| n.is_in(ORG_ROLES)) {
        v.add(EntityKind::Organization, SHAPE);
    }
    context_votes(span, &mut v);
    v
}

/// Votes from the words right before the span.
fn context_votes(span: &NameSpan, v: &mut Votes) {
    let Some(prev) = span
        .prev
        .filter(|p| p.shape == Shape::Lower || p.shape == Shape::Cap)
    else {
        return;
    };
    let p = prev.text;
    if prev.is_in(KIN) {
        // "my daughter Rosa", "coach Dana"
        v.add(EntityKind::Person, MEDIUM);
    }
    let before = |list: lexicon::Lex| span.prev2.is_some_and(|t| t.is_in(list));
    let work_before = before(WORK_CUES) || before(ROLES);
    if matches!(p.to_ascii_lowercase().as_str(), "at" | "for" | "with") && work_before {
        v.add(EntityKind::Organization, SHAPE);
    } else if p == "of" && before(ORG_ROLES) {
        // "the CTO of Initech"
        v.add(EntityKind::Organization, SHAPE);
    } else if matches!(p, "joined" | "joining" | "join" | "joins") {
        v.add(EntityKind::Organization, SHAPE);
    } else if prev.is_in(PLACE_PREPOSITIONS) && !span.speaker {
        v.add(EntityKind::Place, WEAK);
    }
}

/// True for a capitalized nationality/creed adjective ("English").
pub(super) fn is_demonym(t: &Token) -> bool {
    t.shape == Shape::Cap && t.is_in(DEMONYMS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strongest_vote_wins_and_no_votes_is_unknown() {
        let mut v = Votes::default();
        assert_eq!(v.best(), EntityKind::Unknown);
        v.add(EntityKind::Place, WEAK);
        v.add(EntityKind::Organization, STRONG);
        assert_eq!(v.best(), EntityKind::Organization);
        assert_eq!(v.get(EntityKind::Place), WEAK);
    }
}
