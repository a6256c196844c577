//! Facts that change: which relations hold one value at a time, and which
//! of a fact's statements holds at a given time.
//!
//! A *single-valued family* groups the predicates that state the same
//! fact in different words: "lives in", "moved to" a place and "is based
//! in" all say where someone is; "leads" and "is led by" both say who
//! leads a team, one from each end. A family is keyed by one end of the
//! relation (the *holder*: the person who lives somewhere, the team that
//! is led) and the other end is its *value*. A holder has one current
//! value per family; when documents state different values, the one
//! stated latest by the documents' own time (when what they record was
//! observed, not when they were stored) is current and the others are
//! history with an end of validity. A denial ("no longer works at Acme")
//! ends a value without naming a new one.
//!
//! Owns the family table and the pure timeline computation that both the
//! store (the relations' `valid_from` / `valid_to` / `superseded_by`) and
//! the query (what is current "as of" a time) use. No I/O.

use super::fragment::{predicate_key, EntityKind};
use std::sync::OnceLock;

/// Which end of a relation holds the fact (the other end is its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Holder {
    /// "Dana lives in Boston": Dana holds the fact, Boston is the value.
    Subject,
    /// "Priya leads the platform team": the team holds the fact (it has
    /// one leader), Priya is the value.
    Object,
}

/// What a family's value must be, for predicates that say different
/// things depending on it ("moved to Denver" is a place, "moved to
/// Friday" a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    Any,
    Place,
    Time,
    Organization,
    /// A quantity or version: the extractor gives these no kind.
    Number,
}

impl Value {
    fn admits(self, kind: EntityKind) -> bool {
        match self {
            Value::Any => true,
            // A town the gazetteer does not know has no kind.
            Value::Place => matches!(kind, EntityKind::Place | EntityKind::Unknown),
            Value::Time => kind == EntityKind::Date,
            Value::Organization => matches!(kind, EntityKind::Organization | EntityKind::Unknown),
            Value::Number => kind == EntityKind::Unknown,
        }
    }
}

/// One way of stating a family's fact.
struct Wording {
    predicate: &'static str,
    holder: Holder,
    value: Value,
}

const fn w(predicate: &'static str, holder: Holder, value: Value) -> Wording {
    Wording {
        predicate,
        holder,
        value,
    }
}

use Holder::{Object as O, Subject as S};
use Value::{Any, Number, Organization as Org, Place, Time};

/// The single-valued families, by name, with the predicates (as the
/// extractor writes them; compared by relation key, so inflections match)
/// that state each.
const FAMILIES: &[(&str, &[Wording])] = &[
    (
        "place",
        &[
            w("lives in", S, Any),
            w("resides in", S, Any),
            w("is based in", S, Any),
            w("based in", S, Any),
            w("located in", S, Any),
            w("located at", S, Any),
            w("is located in", S, Any),
            w("headquartered in", S, Any),
            w("relocated to", S, Any),
            w("moved to", S, Place),
            w("changed to", S, Place),
            w("migrated to", S, Place),
            w("is in", S, Place),
            w("is at", S, Place),
            w("office at", S, Any),
            w("address", S, Any),
            w("location", S, Any),
            w("headquarters", S, Any),
            w("hosted in", S, Any),
            w("runs in", S, Place),
        ],
    ),
    (
        "employer",
        &[
            w("works at", S, Any),
            w("works for", S, Any),
            w("employed at", S, Any),
            w("employed by", S, Any),
            w("joined", S, Org),
            w("hired by", S, Any),
            w("started at", S, Org),
            w("is at", S, Org),
            w("employer", S, Any),
        ],
    ),
    (
        "leader",
        &[
            w("leads", O, Any),
            w("heads", O, Any),
            w("manages", O, Any),
            w("runs", O, Any),
            w("took over", O, Any),
            w("lead of", O, Any),
            w("head of", O, Any),
            w("leader of", O, Any),
            w("manager of", O, Any),
            w("led by", S, Any),
            w("headed by", S, Any),
            w("managed by", S, Any),
            w("run by", S, Any),
            w("reports to", S, Any),
            w("lead", S, Any),
            w("leader", S, Any),
            w("head", S, Any),
            w("manager", S, Any),
        ],
    ),
    (
        "owner",
        &[
            w("owns", O, Any),
            w("owner of", O, Any),
            w("maintains", O, Any),
            w("maintainer of", O, Any),
            w("owned by", S, Any),
            w("maintained by", S, Any),
            w("owner", S, Any),
            w("maintainer", S, Any),
        ],
    ),
    ("ceo", &[w("ceo of", O, Any), w("ceo", S, Any)]),
    ("cto", &[w("cto of", O, Any), w("cto", S, Any)]),
    (
        "time",
        &[
            w("runs at", S, Any),
            w("runs on", S, Time),
            w("scheduled for", S, Any),
            w("scheduled on", S, Any),
            w("release scheduled for", S, Any),
            w("rescheduled to", S, Any),
            w("rescheduled for", S, Any),
            w("planned for", S, Any),
            w("set for", S, Any),
            w("starts at", S, Time),
            w("starts on", S, Time),
            w("happens at", S, Time),
            w("happens on", S, Time),
            w("takes place on", S, Time),
            w("takes place at", S, Time),
            w("held on", S, Time),
            w("held at", S, Time),
            w("postponed to", S, Any),
            w("postponed until", S, Any),
            w("pushed to", S, Any),
            w("moved to", S, Time),
            w("changed to", S, Time),
            w("shifted to", S, Time),
            w("is on", S, Time),
            w("is at", S, Time),
            w("is", S, Time),
            w("ships on", S, Any),
            w("time", S, Any),
            w("date", S, Any),
            w("schedule", S, Any),
        ],
    ),
    (
        "version",
        &[
            w("version", S, Any),
            // "Atlas is at version 2.3" reads as "is" 2.3: a number.
            w("is", S, Number),
            w("is at version", S, Any),
            w("is on version", S, Any),
            w("upgraded to", S, Any),
            w("updated to", S, Any),
            w("bumped to", S, Any),
            w("current version", S, Any),
            w("upgraded to version", S, Any),
            w("updated to version", S, Any),
            w("runs version", S, Any),
            w("is on version", S, Any),
            w("at version", S, Any),
        ],
    ),
    (
        "role",
        // Not a plain "is": "Dana is a nurse" and "Dana is a runner" are
        // both true at once.
        &[
            w("promoted to", S, Any),
            w("became", S, Any),
            w("works as", S, Any),
            w("title", S, Any),
            w("role", S, Any),
            w("position", S, Any),
            w("job title", S, Any),
        ],
    ),
    (
        "deadline",
        &[
            w("deadline", S, Any),
            w("due on", S, Any),
            w("due by", S, Any),
            w("is due", S, Any),
            w("due", S, Any),
            w("due date", S, Any),
            w("deadline moved to", S, Any),
            w("report due on", S, Any),
        ],
    ),
];

/// Nouns that name a single-valued attribute ("Hermes's deadline is
/// June 30", "the current version of Orion is 5.2"): the extractor
/// writes the attribute as the predicate.
const ATTRIBUTES: &[&str] = &[
    "address",
    "location",
    "headquarters",
    "employer",
    "lead",
    "leader",
    "head",
    "manager",
    "owner",
    "maintainer",
    "ceo",
    "cto",
    "title",
    "role",
    "position",
    "time",
    "date",
    "schedule",
    "deadline",
    "version",
];

/// Whether `word` (lowercase) names a single-valued attribute.
pub fn is_attribute(word: &str) -> bool {
    ATTRIBUTES.contains(&word)
}

/// Where a relation belongs among the single-valued families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SingleValued {
    /// The family's name ("place", "employer", "leader", ...).
    pub family: &'static str,
    /// Which end holds the fact.
    pub holder: Holder,
}

/// The single-valued family a relation with this predicate (as written or
/// as its key) and this value kind states, if any. The value is the
/// object for a subject-held wording and the subject otherwise.
pub fn single_valued(
    predicate: &str,
    subject: EntityKind,
    object: EntityKind,
) -> Option<SingleValued> {
    let key = predicate_key(predicate);
    let wordings = keyed_wordings();
    let mut keyed = key.as_str();
    // "was based in", "is now led by": a copula in front says nothing more.
    for copula in ["is ", "be "] {
        if let Some(rest) = keyed.strip_prefix(copula) {
            if wordings.iter().any(|k| k.key == rest) {
                keyed = rest;
            }
        }
    }
    let find = |keyed: &str| {
        wordings.iter().find_map(|k| {
            let value = match k.wording.holder {
                Holder::Subject => object,
                Holder::Object => subject,
            };
            (k.key == keyed && k.wording.value.admits(value)).then_some(SingleValued {
                family: k.family,
                holder: k.wording.holder,
            })
        })
    };
    // "report moved to", "filing due on": a noun the extractor left in
    // front of a two-word wording.
    let mut rest = keyed;
    loop {
        if let Some(found) = find(rest) {
            return Some(found);
        }
        match rest.split_once(' ') {
            Some((_, tail)) if tail.contains(' ') => rest = tail,
            _ => return None,
        }
    }
}

/// A family's wording with its predicate key.
struct KeyedWording {
    family: &'static str,
    wording: &'static Wording,
    key: String,
}

/// Every wording of [`FAMILIES`] in order, keyed once: stemming them at
/// each call was about a sixth of the writer's time in a bulk import, which
/// asks about every relation it records.
fn keyed_wordings() -> &'static [KeyedWording] {
    static KEYED: OnceLock<Vec<KeyedWording>> = OnceLock::new();
    KEYED.get_or_init(|| {
        FAMILIES
            .iter()
            .flat_map(|(family, wordings)| {
                wordings.iter().map(|wording| KeyedWording {
                    family,
                    wording,
                    key: predicate_key(wording.predicate),
                })
            })
            .collect()
    })
}

/// Every predicate key that may state a family's fact with the holder at
/// `holder`'s end (a superset: value kinds are checked by
/// [`single_valued`]), for narrowing a store read. Sorted, no repeats.
pub fn predicate_keys(holder: Holder) -> &'static [String] {
    static SUBJECT: OnceLock<Vec<String>> = OnceLock::new();
    static OBJECT: OnceLock<Vec<String>> = OnceLock::new();
    let keys = match holder {
        Holder::Subject => &SUBJECT,
        Holder::Object => &OBJECT,
    };
    keys.get_or_init(|| {
        let mut keys: Vec<String> = keyed_wordings()
            .iter()
            .filter(|k| k.wording.holder == holder)
            .flat_map(|k| {
                [
                    format!("is {}", k.key),
                    format!("be {}", k.key),
                    k.key.clone(),
                ]
            })
            .collect();
        keys.sort();
        keys.dedup();
        keys
    })
}

/// One statement of a fact: a document asserting (or denying) a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Statement {
    /// The relation it is evidence of.
    pub relation: i64,
    /// The value's entity.
    pub value: i64,
    /// False for a denial ("no longer ...", "not X but Y").
    pub supports: bool,
    /// When the document says it was so (Unix ms).
    pub at: i64,
    /// Breaks ties between statements of one time: the document's store
    /// key (later stored, later said), then the byte where the statement
    /// starts (later in the text, later said).
    pub order: (i64, i64),
}

impl Statement {
    /// Its place in time: the document's time, then the tie-breaks.
    pub fn order_key(&self) -> (i64, i64, i64) {
        (self.at, self.order.0, self.order.1)
    }
}

/// What a family's statements say about one relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    pub relation: i64,
    pub value: i64,
    /// The first time a document stated it.
    pub valid_from: i64,
    /// When it stopped holding: the next statement of another value, or
    /// a denial of it. `None` while it holds.
    pub valid_to: Option<i64>,
    /// The relation whose statement ended it (none for a denial).
    pub superseded_by: Option<i64>,
}

/// The validity of every stated relation of one holder's family, from its
/// statements made up to `as_of` (all of them when `None`). A relation
/// none of whose statements (up to `as_of`) supports it is left out.
///
/// The value stated last holds; each value stated earlier ends where the
/// first later statement of another value (or a denial of it) begins.
/// Saying a value again makes it current again.
pub fn timeline(statements: &[Statement], as_of: Option<i64>) -> Vec<Validity> {
    let mut said: Vec<&Statement> = statements
        .iter()
        .filter(|s| as_of.is_none_or(|t| s.at <= t))
        .collect();
    said.sort_by_key(|s| s.order_key());
    let mut relations: Vec<i64> = said
        .iter()
        .filter(|s| s.supports)
        .map(|s| s.relation)
        .collect();
    relations.sort_unstable();
    relations.dedup();
    relations
        .into_iter()
        .map(|relation| {
            let own: Vec<&&Statement> = said.iter().filter(|s| s.relation == relation).collect();
            let value = own[0].value;
            let supported: Vec<&&&Statement> = own.iter().filter(|s| s.supports).collect();
            let valid_from = supported[0].at;
            let last = supported[supported.len() - 1].order_key();
            // The first statement after the last support that is either
            // another value asserted or this value denied.
            let end = said.iter().find(|s| {
                s.order_key() > last
                    && ((s.supports && s.value != value) || (!s.supports && s.value == value))
            });
            // "No longer at Acme; now at Initech": a denial and a new value
            // in one document, the new value supersedes.
            let successor = end.and_then(|e| {
                said.iter().find(|s| {
                    s.order_key() >= e.order_key()
                        && s.supports
                        && s.value != value
                        && (s.at, s.order.0) == (e.at, e.order.0)
                })
            });
            Validity {
                relation,
                value,
                valid_from,
                valid_to: end.map(|s| s.at),
                superseded_by: successor.map(|s| s.relation),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{predicate_keys, single_valued, timeline, EntityKind, Holder, Statement};
    use EntityKind::*;

    fn st(relation: i64, value: i64, supports: bool, at: i64) -> Statement {
        Statement {
            relation,
            value,
            supports,
            at,
            // One document per time; statements in relation order.
            order: (at, relation),
        }
    }

    #[test]
    fn wordings_of_one_fact_share_a_family_and_inflections_match() {
        let place = |p, o| single_valued(p, Person, o).map(|s| s.family);
        assert_eq!(place("lives in", Place), Some("place"));
        assert_eq!(place("lived in", Place), Some("place"));
        assert_eq!(place("moved to", Place), Some("place"));
        assert_eq!(place("moved to", Date), Some("time"));
        assert_eq!(place("works for", Organization), Some("employer"));
        assert_eq!(place("worked at", Organization), Some("employer"));
        assert_eq!(place("acquired", Organization), None);
        let led = single_valued("led by", Concept, Person).unwrap();
        let leads = single_valued("leads", Person, Concept).unwrap();
        assert_eq!((led.family, led.holder), ("leader", Holder::Subject));
        assert_eq!((leads.family, leads.holder), ("leader", Holder::Object));
        assert!(predicate_keys(Holder::Object).contains(&"lead".to_string()));
    }

    #[test]
    fn the_value_stated_last_by_document_time_holds_whatever_the_storing_order() {
        // Denver said at t=20, Boston at t=10 but stored later.
        let said = [st(2, 200, true, 20), st(1, 100, true, 10)];
        let v = timeline(&said, None);
        let boston = v.iter().find(|v| v.relation == 1).unwrap();
        let denver = v.iter().find(|v| v.relation == 2).unwrap();
        assert_eq!(
            (boston.valid_from, boston.valid_to, boston.superseded_by),
            (10, Some(20), Some(2))
        );
        assert_eq!(denver.valid_to, None);
        // As of t=15 only Boston had been said.
        let then = timeline(&said, Some(15));
        assert_eq!(then.len(), 1);
        assert_eq!(then[0].valid_to, None);
    }

    #[test]
    fn a_denial_ends_a_value_and_saying_it_again_restores_it() {
        let ended = timeline(&[st(1, 100, true, 10), st(1, 100, false, 20)], None);
        assert_eq!(
            (ended[0].valid_to, ended[0].superseded_by),
            (Some(20), None)
        );
        let again = timeline(
            &[
                st(1, 100, true, 10),
                st(2, 200, true, 20),
                st(1, 100, true, 30),
            ],
            None,
        );
        assert_eq!(
            again.iter().find(|v| v.relation == 1).unwrap().valid_to,
            None
        );
        assert_eq!(
            again.iter().find(|v| v.relation == 2).unwrap().valid_to,
            Some(30)
        );
        // Denied and replaced in one document: superseded by the new value.
        let replaced = timeline(
            &[
                st(1, 100, true, 10),
                st(1, 100, false, 20),
                st(2, 200, true, 20),
            ],
            None,
        );
        let old = replaced.iter().find(|v| v.relation == 1).unwrap();
        assert_eq!((old.valid_to, old.superseded_by), (Some(20), Some(2)));
        // Only denied: never a fact.
        assert!(timeline(&[st(1, 100, false, 10)], None).is_empty());
    }
}
