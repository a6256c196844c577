//! Sentence frames around a relation: shapes of a whole sentence, or of
//! the words after a subject, that name what the relation is about rather
//! than a plain verb between two mentions.
//!
//! Owns the participle preamble ("Born in Warsaw, X ..."), the move
//! ("moved the standup from 09:00 to 09:30"), the attribute opening ("The
//! deadline for X is ...") and the possessed attribute ("X's deadline is
//! ..."). `relations` walks the slots and asks these readers whether a
//! frame applies; each returns the predicate it reads, never a relation.
//!
//! Must never: read tokens outside the span it is given, or take a value
//! or a pronoun for the thing a move or an attribute opening is about.

use super::super::lexicon::{self, DETERMINERS, PARTICLES};
use super::super::tokens::Token;
use super::{lower, Link, Slot};

/// "Born in Warsaw, ..." / "Headquartered in Stockholm, ...": a participle
/// and a preposition before the first slot.
pub(super) fn preamble(before: &[Token], first: &Slot) -> Option<(String, usize)> {
    let [verb, prep] = before else {
        return None;
    };
    let v = lower(verb);
    let participle = v == "born" || (v.len() > 4 && v.ends_with("ed"));
    let p = lower(prep);
    (participle && lexicon::contains(PARTICLES, &p) && !first.value && !first.pronoun)
        .then(|| (format!("{v} {p}"), first.entity))
}

/// Verbs that move a thing from one value to another: "moved the
/// standup from 09:00 to 09:30".
const MOVE_VERBS: &[&str] = &[
    "moved",
    "changed",
    "shifted",
    "rescheduled",
    "pushed",
    "switched",
    "updated",
    "upgraded",
    "bumped",
    "postponed",
    "migrated",
    "relocated",
];

/// "<move verb> [the] X from A to B" over three slots X, A, B: the verb.
pub(super) fn moved_from_to(toks: &[Token], three: &[Slot]) -> Option<String> {
    let [x, from, to] = three else {
        return None;
    };
    if x.value || x.pronoun || x.tok_end > from.tok_start || from.tok_end > to.tok_start {
        return None;
    }
    let words = |a: usize, b: usize| -> Vec<String> { toks[a..b].iter().map(lower).collect() };
    if words(x.tok_end, from.tok_start) != ["from"] || words(from.tok_end, to.tok_start) != ["to"] {
        return None;
    }
    let before = words(x.tok_start.saturating_sub(3), x.tok_start);
    let verb = before.iter().rev().find(|w| {
        !lexicon::contains(DETERMINERS, w)
            && !matches!(w.as_str(), "our" | "its" | "their" | "his" | "her")
    })?;
    MOVE_VERBS.contains(&verb.as_str()).then(|| verb.clone())
}

/// "The deadline for [the] X ...", "The current version of X ...": a
/// sentence opening with an attribute of the slot after it, either a
/// concept of its own or words no mention took (a lone noun after "the"
/// is no concept outside a conversation). Returns the attribute and that
/// slot's index.
pub(super) fn attribute_opening(toks: &[Token], slots: &[Slot]) -> Option<(String, usize)> {
    let s0 = slots.first()?;
    if !s0.value && !s0.pronoun {
        let words: Vec<String> = toks[..s0.tok_start]
            .iter()
            .map(lower)
            .filter(|w| !lexicon::contains(DETERMINERS, w))
            .collect();
        // The attribute, its preposition, and at most one word before it
        // ("current version of").
        if let [.., attr, p] = words.as_slice() {
            let attribute = crate::knowledge::facts::is_attribute(attr);
            if attribute && words.len() <= 3 && (p == "of" || p == "for") {
                return Some((attr.clone(), 0));
            }
        }
    }
    let s1 = slots.get(1)?;
    if !s0.concept || s1.value || s1.pronoun || s0.tok_end > s1.tok_start {
        return None;
    }
    let attr = lower(&toks[s0.tok_end.checked_sub(1)?]);
    if !crate::knowledge::facts::is_attribute(&attr) {
        return None;
    }
    let between: Vec<String> = toks[s0.tok_end..s1.tok_start]
        .iter()
        .map(lower)
        .filter(|w| !lexicon::contains(DETERMINERS, w))
        .collect();
    matches!(between.as_slice(), [p] if p == "of" || p == "for").then_some((attr, 1))
}

/// "deadline is", "title is now", "deadline was pushed to": an
/// attribute noun, then a copula or a verb of change.
pub(super) fn possessed_attribute(w: &[&str]) -> Option<Link> {
    let (attr, rest) = w.split_first()?;
    if !crate::knowledge::facts::is_attribute(attr) || rest.is_empty() {
        return None;
    }
    let verb = |x: &str| {
        matches!(
            x,
            "is" | "was" | "has" | "had" | "been" | "be" | "will" | "now" | "still" | "actually"
        ) || MOVE_VERBS.contains(&x)
            || lexicon::contains(PARTICLES, x)
    };
    let negated = rest
        .iter()
        .any(|x| matches!(*x, "not" | "no" | "never" | "isn't" | "wasn't"));
    let plain = rest
        .iter()
        .all(|x| verb(x) || matches!(*x, "not" | "no" | "never" | "isn't" | "wasn't" | "longer"));
    plain.then(|| Link::Predicate {
        text: attr.to_string(),
        negated,
        main: false,
        apposition: false,
        prepositional: false,
    })
}
