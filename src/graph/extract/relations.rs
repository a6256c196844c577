//! Relation extraction within one sentence.
//!
//! Owns reading the words between consecutive mentions of a sentence as a
//! predicate: verb phrases ("acquired", "did not acquire", "works at"),
//! copulas ("X is a Y" -> `is`), roles ("X is the CEO of Y", "X, the CTO of
//! Y," and "Y's CEO X" -> `ceo of`), "X of Y" -> `of`, and coordination
//! ("A and B founded C", "visited X, Y and Z"). In chat turns, "I" stands
//! for the speaker. Entity pairs of the sentence that no pattern links get a
//! weaker co-occurrence relation.
//!
//! Must never: emit a relation from an entity to itself, read a predicate
//! longer than [`MAX_PREDICATE_WORDS`] or across clause boundaries, or emit
//! more than [`MAX_COOCCURRENCE_ENTITIES`] choose 2 co-occurrence pairs per
//! sentence.

use std::collections::HashSet;

use super::lexicon::{
    self, FastHash, ADJ_DROP, AUXILIARIES, CARRY_PREPOSITIONS, CLAUSE_BREAKS, COPULAS, DETERMINERS,
    HEAD_NOUNS, HONORIFICS, NEGATED_AUXILIARIES, PARTICLES, ROLES, SPEECH_VERBS,
};
use super::morph;
use super::tokens::{Shape, Token};
use super::{EntityKind, Relation, RelationKind};

mod frames;

use frames::{attribute_opening, moved_from_to, possessed_attribute, preamble};

/// Longest normalized predicate, in words.
pub(super) const MAX_PREDICATE_WORDS: usize = 5;
/// Most tokens between two mentions that may still form one predicate.
pub(super) const MAX_BETWEEN_TOKENS: usize = 10;
/// Most distinct entities of one sentence paired by co-occurrence
/// (8 entities -> at most 28 pairs).
pub(super) const MAX_COOCCURRENCE_ENTITIES: usize = 8;
/// Longest role noun phrase read as a predicate ("chief operating officer
/// of" has three role words and the particle).
pub(super) const MAX_ROLE_WORDS: usize = 3;
/// Predicate of co-occurrence relations.
pub const COOCCURRENCE_PREDICATE: &str = "co-occurs with";

/// An argument position: a mention, or a pronoun resolved to an entity
/// ("I" in a chat turn, a sentence-initial "He"/"She").
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub entity: usize,
    pub tok_start: usize,
    pub tok_end: usize,
    /// A date or quantity: an object, never a subject.
    pub value: bool,
    pub possessive: bool,
    /// "I" (chat speaker) or a sentence-initial "He"/"She" resolved to an
    /// entity; not a mention.
    pub pronoun: bool,
    /// Kind evidence of this mention alone (lists only join like kinds).
    pub kind: EntityKind,
    /// Directly followed by a lowercase noun: "the Frankfurt datacenter".
    /// As an object it modifies that noun, so it is not the real object.
    pub modifier: bool,
    /// A concept phrase ("the podcast network"), which a following name
    /// may rename ("... network Gimlet Media").
    pub concept: bool,
}

/// Relations found so far in the text, for de-duplication.
#[derive(Default)]
pub(super) struct Seen {
    patterns: HashSet<(usize, String, usize, bool), FastHash>,
    pairs: HashSet<(usize, usize), FastHash>,
}

struct LastRelation {
    subjects: Vec<usize>,
    predicate: String,
    negated: bool,
    object_slot: usize,
}

/// How the words between two slots connect them.
enum Link {
    None,
    /// "A and B", "A, B": a list.
    Coordination {
        comma_only: bool,
    },
    /// A predicate; `main` means the subject is the clause's subject rather
    /// than the left slot ("Alice went to Paris and met Bob").
    Predicate {
        text: String,
        negated: bool,
        main: bool,
        apposition: bool,
        /// A bare preposition ("X in Y"): Y only modifies X.
        prepositional: bool,
    },
    /// "Y's CEO X": subject and object swap.
    Inverted(String),
}

/// Per-sentence state while walking slot pairs left to right.
#[derive(Default)]
struct Walk {
    /// Subjects of the clause's first relation.
    main: Option<Vec<usize>>,
    /// Coordinated entities ending at the current left slot.
    group: Vec<usize>,
    last: Option<LastRelation>,
    in_apposition: bool,
    /// (slot, subjects): a slot attached by a bare preposition, whose next
    /// predicate belongs to the subjects it modifies.
    attached: Option<(usize, Vec<usize>)>,
    /// A sentence-initial participle clause ("Born in Warsaw, ...") waiting
    /// for its subject: (predicate, object).
    preamble: Option<(String, usize)>,
    /// "The deadline for X is ...": (attribute, the slot of X), whose
    /// next predicate is the attribute.
    attribute: Option<(String, usize)>,
}

/// Extracts relations from one sentence's slots (sorted by position).
/// Returns the subjects of the sentence's first relation, if any.
pub(super) fn extract(
    toks: &[Token],
    slots: &[Slot],
    span: (usize, usize),
    seen: &mut Seen,
    out: &mut Vec<Relation>,
) -> Option<Vec<usize>> {
    let mut linked: HashSet<(usize, usize), FastHash> = HashSet::default();
    let mut emit = |s: usize, p: &str, o: usize, negated: bool, out: &mut Vec<Relation>| {
        if s == o {
            return;
        }
        linked.insert((s.min(o), s.max(o)));
        if seen.patterns.insert((s, p.to_string(), o, negated)) {
            out.push(Relation {
                subject: s,
                predicate: p.to_string(),
                object: o,
                negated,
                kind: RelationKind::Pattern,
                start: span.0,
                end: span.1,
            });
        }
    };
    let mut w = Walk {
        preamble: slots
            .first()
            .and_then(|s0| preamble(&toks[..s0.tok_start], s0)),
        attribute: attribute_opening(toks, slots),
        ..Walk::default()
    };
    // "We moved the standup from 09:00 to 09:30": the pairs it reads are
    // not read again below.
    let mut moved_pairs: Vec<usize> = Vec::new();
    for i in 0..slots.len().saturating_sub(2) {
        if let Some(verb) = moved_from_to(toks, &slots[i..i + 3]) {
            let (x, from, to) = (slots[i].entity, slots[i + 1].entity, slots[i + 2].entity);
            let p = format!("{verb} to");
            emit(x, &p, to, false, out);
            emit(x, &p, from, true, out);
            moved_pairs.extend([i + 1, i + 2]);
        }
    }
    for k in 1..slots.len() {
        let (a, b) = (slots[k - 1], slots[k]);
        if a.tok_end > b.tok_start || moved_pairs.contains(&k) {
            continue;
        }
        let between = &toks[a.tok_end..b.tok_start];
        if let Some((attr, holder)) = w.attribute.clone() {
            // "The deadline for [the] X": the concept names the attribute,
            // not a thing X belongs to.
            if k == holder {
                continue;
            }
            if k == holder + 1 && !b.pronoun {
                if let Link::Predicate { negated, .. } =
                    link(between, a, b, &w.last, k - 1, w.in_apposition)
                {
                    emit(a.entity, &attr, b.entity, negated, out);
                    w.main = Some(vec![a.entity]);
                    w.last = Some(LastRelation {
                        subjects: vec![a.entity],
                        predicate: attr,
                        negated,
                        object_slot: k,
                    });
                    w.attribute = None;
                    continue;
                }
            }
        }
        // "acquired the podcast network Gimlet Media": the name renames the
        // concept, so it inherits the concept's relation.
        if between.is_empty() && a.concept && !b.value && !b.pronoun && !b.concept {
            if let Some(l) = w.last.as_mut().filter(|l| l.object_slot == k - 1) {
                for &s in &l.subjects {
                    emit(s, &l.predicate, b.entity, l.negated, out);
                }
                l.object_slot = k;
            }
            continue;
        }
        if between.first().is_some_and(|t| t.is_punct(',')) && !b.value && !b.pronoun {
            if let Some((p, object)) = w.preamble.take() {
                emit(b.entity, &p, object, false, out);
                w.main.get_or_insert_with(|| vec![b.entity]);
            }
        }
        match link(between, a, b, &w.last, k - 1, w.in_apposition) {
            Link::Coordination { comma_only } => {
                let distributes = w.last.as_ref().is_some_and(|l| l.object_slot == k - 1)
                    && !b.pronoun
                    && !b.value
                    && a.kind == b.kind;
                if distributes {
                    if let Some(l) = w.last.as_mut() {
                        for &s in &l.subjects {
                            emit(s, &l.predicate, b.entity, l.negated, out);
                        }
                        l.object_slot = k;
                    }
                } else if !a.value
                    && !b.value
                    && !(comma_only && (a.pronoun || b.pronoun))
                    && compatible(a.kind, b.kind)
                {
                    if w.group.is_empty() {
                        w.group.push(a.entity);
                    }
                    w.group.push(b.entity);
                }
                continue;
            }
            Link::Inverted(p) => {
                emit(b.entity, &p, a.entity, false, out);
            }
            Link::Predicate {
                text,
                negated,
                main: wants_main,
                apposition,
                prepositional,
            } => {
                let attached = w
                    .attached
                    .as_ref()
                    .filter(|(slot, _)| *slot == k - 1 && !prepositional)
                    .map(|(_, s)| s.clone());
                let subjects = if let Some(subjects) = attached {
                    subjects
                } else if wants_main || a.value {
                    w.main.clone().unwrap_or_else(|| vec![a.entity])
                } else if w.group.last() == Some(&a.entity) {
                    w.group.clone()
                } else {
                    vec![a.entity]
                };
                let subjectless = a.value && w.main.is_none();
                let modifier_object = b.modifier && !prepositional;
                if !subjectless && !modifier_object {
                    for &s in &subjects {
                        emit(s, &text, b.entity, negated, out);
                    }
                    if w.main.is_none() && !prepositional {
                        w.main = Some(subjects.clone());
                    }
                    w.attached = prepositional.then(|| (k, subjects.clone()));
                    w.last = Some(LastRelation {
                        subjects,
                        predicate: text,
                        negated,
                        object_slot: k,
                    });
                }
                w.in_apposition = apposition;
                w.group.clear();
                continue;
            }
            Link::None => {}
        }
        w.group.clear();
    }
    cooccurrences(slots, span, &linked, seen, out);
    w.main
}

/// Pairs every two distinct entities of the sentence not linked above.
fn cooccurrences(
    slots: &[Slot],
    span: (usize, usize),
    linked: &HashSet<(usize, usize), FastHash>,
    seen: &mut Seen,
    out: &mut Vec<Relation>,
) {
    let mut entities: Vec<usize> = Vec::new();
    for s in slots {
        if !entities.contains(&s.entity) {
            entities.push(s.entity);
            if entities.len() == MAX_COOCCURRENCE_ENTITIES {
                break;
            }
        }
    }
    for (i, &x) in entities.iter().enumerate() {
        for &y in &entities[i + 1..] {
            let pair = (x.min(y), x.max(y));
            if linked.contains(&pair) || !seen.pairs.insert(pair) {
                continue;
            }
            out.push(Relation {
                subject: x,
                predicate: COOCCURRENCE_PREDICATE.to_string(),
                object: y,
                negated: false,
                kind: RelationKind::Cooccurrence,
                start: span.0,
                end: span.1,
            });
        }
    }
}

fn lower(t: &Token) -> String {
    t.text.chars().map(lexicon::fold).collect()
}

/// Classifies the tokens between slots `a` and `b`.
fn link(
    between: &[Token],
    a: Slot,
    b: Slot,
    last: &Option<LastRelation>,
    a_index: usize,
    in_apposition: bool,
) -> Link {
    // Honorifics belong to the next mention ("met Ms. Okafor"), head nouns
    // to the previous one ("the parse_config function in").
    let mut between = between;
    while let Some((t, rest)) = between.split_last() {
        if t.shape == Shape::Cap && lexicon::contains(HONORIFICS, t.text.trim_end_matches('.')) {
            between = rest;
        } else {
            break;
        }
    }
    if let Some((t, rest)) = between.split_first() {
        if !a.value && t.shape == Shape::Lower && t.is_in(HEAD_NOUNS) && !rest.is_empty() {
            between = rest;
        }
    }
    if between.is_empty() || between.len() > MAX_BETWEEN_TOKENS {
        return Link::None;
    }
    let words: Vec<String> = between.iter().map(lower).collect();
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    if w.iter().all(|x| matches!(*x, "," | "and" | "or" | "&")) {
        return Link::Coordination {
            comma_only: w.iter().all(|x| *x == ","),
        };
    }
    // Corrections of the value just stated: "is not at 09:00 but at
    // 09:30" (the new value), "in Kyoto, not Osaka" and "at 03:00 instead
    // of 02:00" (the old value, denied).
    if let Some(l) = last
        .as_ref()
        .filter(|l| l.object_slot == a_index && !b.pronoun)
    {
        let words: Vec<&str> = w.iter().copied().filter(|x| *x != ",").collect();
        let particles_after = |from: usize| {
            words[from..]
                .iter()
                .all(|x| lexicon::contains(PARTICLES, x))
        };
        let but = words.first() == Some(&"but") && particles_after(1) && l.negated;
        let not = matches!(
            words.as_slice(),
            ["not"] | ["instead", "of"] | ["rather", "than"]
        ) && !l.negated;
        if but || not {
            return Link::Predicate {
                text: l.predicate.clone(),
                negated: not,
                main: true,
                apposition: false,
                prepositional: false,
            };
        }
    }
    // "Hermes's deadline is June 30", "Omar's title is now Principal
    // Engineer": an attribute of the possessor.
    if a.possessive && !b.pronoun {
        if let Some(link) = possessed_attribute(&w) {
            return link;
        }
    }
    // Any punctuation but a leading comma (or a closing one after a role)
    // crosses a clause or parenthetical boundary.
    let punct_inside = between.iter().enumerate().any(|(i, t)| {
        t.shape == Shape::Punct && !(t.is_punct(',') && (i == 0 || i + 1 == between.len()))
    });
    let odd_token = between.iter().any(|t| {
        !matches!(
            t.shape,
            Shape::Lower | Shape::Upper | Shape::Punct | Shape::Cap
        )
    });
    if punct_inside || odd_token {
        return Link::None;
    }
    // "Acme's CEO, Paul Martin" / "Acme CEO Paul Martin".
    let content: Vec<&str> = w.iter().copied().filter(|x| *x != ",").collect();
    // "Apple's chief operating officer, Jeff Williams": a role noun phrase.
    let finite = |x: &str| x.ends_with("ed") || lexicon::contains(lexicon::IRREGULAR_VERBS, x);
    let role_phrase = content.last().is_some_and(|x| lexicon::contains(ROLES, x))
        && !content.iter().any(|x| finite(x));
    if a.possessive && !content.is_empty() && content.len() <= MAX_ROLE_WORDS && role_phrase {
        return Link::Inverted(format!("{} of", content.join(" ")));
    }
    // "X of Y", "X by Y", "X in Y", and "moved from X to Y".
    let bare: Vec<&str> = w
        .iter()
        .copied()
        .filter(|x| !lexicon::contains(DETERMINERS, x))
        .collect();
    if let [p] = bare[..] {
        // "invested $5 billion in Rivian": the amount's verb carries on.
        let after_value = last
            .as_ref()
            .filter(|l| a.value && l.object_slot == a_index && !b.value);
        if let Some(l) = after_value.filter(|_| lexicon::contains(PARTICLES, p) && p != "of") {
            let verb = strip_particles(&l.predicate);
            if !verb.is_empty() && verb != "is" {
                return Link::Predicate {
                    text: format!("{verb} {p}"),
                    negated: l.negated,
                    main: true,
                    apposition: false,
                    prepositional: false,
                };
            }
        }
        if lexicon::contains(PARTICLES, p) && !a.value {
            if let Some(text) = carried(last, a_index, p) {
                return Link::Predicate {
                    text,
                    negated: last.as_ref().is_some_and(|l| l.negated),
                    main: true,
                    apposition: false,
                    prepositional: false,
                };
            }
            if matches!(p, "of" | "by" | "in") && !a.pronoun && !b.value && !b.pronoun {
                return Link::Predicate {
                    text: p.to_string(),
                    negated: false,
                    main: false,
                    apposition: false,
                    prepositional: true,
                };
            }
            return Link::None;
        }
    }
    let (start, main, apposition) = match (w.first().copied(), w.get(1).copied()) {
        (Some(","), Some("who" | "which")) => (2, false, false),
        (Some(","), Some("and")) => (2, true, false),
        (Some(","), _) => (1, in_apposition, !in_apposition),
        (Some("and" | "but"), _) => (1, true, false),
        // "uses X to load Y": an infinitive of purpose shares the subject.
        (Some("to"), Some(next)) if morph::is_verb_form(next) => (0, true, false),
        // "... while studying at X": the participle shares the subject.
        (Some("while" | "after" | "before" | "when" | "since"), Some(next))
            if next.len() > 4 && next.ends_with("ing") =>
        {
            (1, true, false)
        }
        _ => (0, false, false),
    };
    // Dates and amounts are never subjects; predicates after them belong to
    // the clause subject.
    let main = main || a.value;
    let mut end = w.len();
    if end > start && w[end - 1] == "," {
        end -= 1;
    }
    match predicate(&w[start..end], &between[start..end], main, apposition) {
        Link::Predicate { text, negated, .. } => Link::Predicate {
            text,
            negated,
            main,
            apposition,
            prepositional: false,
        },
        other => other,
    }
}

/// The previous predicate carried over to a new preposition: "moved from
/// X to Y" -> "moved to", "works as a nurse at Y" -> "works at".
fn carried(last: &Option<LastRelation>, a_index: usize, p: &str) -> Option<String> {
    let l = last.as_ref().filter(|l| l.object_slot == a_index)?;
    let ends_with = |x: &str| l.predicate.rsplit(' ').next() == Some(x);
    let ends_with_particle = l
        .predicate
        .rsplit(' ')
        .next()
        .is_some_and(|x| lexicon::contains(PARTICLES, x));
    let directional = lexicon::contains(CARRY_PREPOSITIONS, p) && ends_with_particle;
    let after_role = ends_with("as") && matches!(p, "at" | "for" | "in" | "with");
    if !(directional || after_role) {
        return None;
    }
    let verb = strip_particles(&l.predicate);
    (!verb.is_empty() && verb != "is").then(|| format!("{verb} {p}"))
}

fn compatible(a: EntityKind, b: EntityKind) -> bool {
    a == b || a == EntityKind::Unknown || b == EntityKind::Unknown
}

/// The predicate minus trailing particles: "moved from" -> "moved".
fn strip_particles(p: &str) -> String {
    let mut words: Vec<&str> = p.split(' ').collect();
    while words
        .last()
        .is_some_and(|w| lexicon::contains(PARTICLES, w))
    {
        words.pop();
    }
    words.join(" ")
}

/// Normalizes a verb phrase: drops auxiliaries, adverbs, determiners and
/// negators (recording the negation), folds copulas into "is" unless a
/// participle follows, and turns "is the CEO of" into "ceo of".
fn predicate(w: &[&str], toks: &[Token], main: bool, apposition: bool) -> Link {
    if w.is_empty() {
        return Link::None;
    }
    // Lexicon masks come cached on the tokens; verb-hood is computed once
    // per word here because the auxiliary check looks ahead.
    let mask = |i: usize| toks.get(i).map_or(0, |t| t.lex);
    let verb: Vec<bool> = w.iter().map(|x| morph::is_verb_form(x)).collect();
    let mut negated = false;
    let mut copula = false;
    let mut kept: Vec<(&str, usize)> = Vec::new();
    for (i, &x) in w.iter().enumerate() {
        let m = mask(i);
        if toks.get(i).is_some_and(|t| t.shape == Shape::Cap) && x != "i" {
            return Link::None; // an unrecognized name: not a plain predicate
        }
        if CLAUSE_BREAKS.in_mask(m) || SPEECH_VERBS.in_mask(m) {
            return Link::None;
        }
        if matches!(
            x,
            "he" | "she" | "they" | "we" | "you" | "it" | "i" | "there"
        ) {
            return Link::None;
        }
        if NEGATED_AUXILIARIES.in_mask(m) {
            negated = true;
            copula |= matches!(x, "isn't" | "aren't" | "wasn't" | "weren't" | "ain't");
            continue;
        }
        if matches!(x, "not" | "never" | "no" | "longer") {
            negated |= x != "longer";
            continue;
        }
        if COPULAS.in_mask(m) {
            copula = true;
            continue;
        }
        let later_verb = (i + 1..w.len()).any(|j| verb[j] && !AUXILIARIES.in_mask(mask(j)));
        if AUXILIARIES.in_mask(m) && later_verb {
            continue;
        }
        if morph::is_adverb(x) || DETERMINERS.in_mask(m) || ADJ_DROP.in_mask(m) {
            continue;
        }
        kept.push((x, i));
    }
    if kept.first().is_some_and(|k| k.0 == "to") && kept.len() > 1 {
        kept.remove(0); // "to study at" -> "study at"
    }
    if kept.first().is_some_and(|k| k.0 == "according") {
        return Link::None;
    }
    let particle = |k: &(&str, usize)| PARTICLES.in_mask(mask(k.1));
    // A verb phrase starts with its verb: "as head of research in" is not one.
    let has_verb = kept.first().is_some_and(|k| verb[k.1]);
    let ends_with_particle = kept.last().is_some_and(particle);
    let joined = || kept.iter().map(|k| k.0).collect::<Vec<_>>().join(" ");
    let text = if kept.is_empty() {
        if !copula {
            return Link::None;
        }
        "is".to_string()
    } else if has_verb {
        joined()
    } else if kept.iter().all(particle) {
        if !copula {
            return Link::None;
        }
        format!("is {}", joined()) // "was at" -> "is at"
    } else if (copula || apposition)
        && ends_with_particle
        && kept.len() <= MAX_ROLE_WORDS + 1
        && !kept.iter().any(|k| verb[k.1])
    {
        joined() // role: "is the CEO of" -> "ceo of"
    } else if copula && !ends_with_particle {
        "is".to_string() // "is a" + concept
    } else {
        return Link::None;
    };
    if text.split(' ').count() > MAX_PREDICATE_WORDS {
        return Link::None;
    }
    Link::Predicate {
        text,
        negated,
        main,
        apposition,
        prepositional: false,
    }
}
