//! Evaluation of the extractor against a hand-labelled set.
//!
//! Owns loading `fixtures/extraction/labelled.jsonl`, scoring the extractor
//! on it, printing precision/recall, and asserting floors slightly under the
//! measured scores so that regressions fail.
//!
//! Each fixture line is one text with a `split` (see [`FLOORS`] for what
//! each split means and how much it was tuned on), gold `entities`
//! (`surface`, `kind`) and gold `relations` (`subject`, `predicate`,
//! `object`, optional `negated`; arguments are gold entity surfaces).
//!
//! Labelling conventions, fixed before the rules were written:
//! - Gold entities are the distinct things a knowledge-graph user would want
//!   as nodes: named people, organizations, places, products and code
//!   identifiers, files, URLs, emails, quoted/backticked terms, absolute and
//!   relative dates and times, quantities with units or currency (kind
//!   `Unknown`), and specific lowercase noun phrases (not generic ones such
//!   as "the deal"). Each is written in its fullest form; honorifics are
//!   not part of names.
//! - Gold relations are explicit statements between two gold entities of one
//!   sentence. The predicate is the lowercase verb phrase without
//!   auxiliaries, adverbs, determiners or negators; copulas become "is";
//!   "X is/, the ROLE of Y" becomes "role of"; in chat, "I" is the speaker.
//!
//! Matching: entities by [`entity_key`] of the gold surface and gold kind
//! against the system key; relations by subject key, object key, negation,
//! and predicate compared word by word after crude suffix stemming (so
//! "works at" matches "worked at"). Co-occurrence relations are not scored.
//! Run with `--nocapture` to see the scores; `EXTRACT_EVAL_VERBOSE=dev`
//! (or `dev2`, `heldout`) also prints every miss of that split.
//!
//! Must never: touch the network or any file but the fixture.

use std::collections::{BTreeMap, HashSet};

use super::{entity_key, extract, EntityKind, RelationKind};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/extraction/labelled.jsonl"
);

/// Floors per split, a little under the scores measured when they were set
/// (shown in comments as entity P/R, kind accuracy, relation P/R).
///
/// - `dev` (50 texts): labelled before any rule existed, then the rules
///   were developed against it, so its scores are optimistic.
/// - `dev2` (22 texts): labelled blind as a held-out set after the first
///   rules; measured there at entity P/R 0.907/0.907, kinds 0.909,
///   relations 0.40/0.50, then its errors were studied and general fixes
///   made, so it is no longer held out.
/// - `heldout` (22 texts): labelled blind after `dev2` was opened; no rule
///   was tuned on it (one canonical-key bug it exposed, "200 ms." keyed
///   with its period, was fixed). Its scores are the honest estimate.
const FLOORS: &[(&str, Floors)] = &[
    (
        // measured 0.967 / 0.981, 0.947, 0.827 / 0.969
        "dev",
        Floors {
            entity_precision: 0.95,
            entity_recall: 0.96,
            kind_accuracy: 0.92,
            relation_precision: 0.80,
            relation_recall: 0.94,
        },
    ),
    (
        // measured 0.969 / 0.959, 0.936, 0.500 / 0.708; entity P/R 0.978 /
        // 0.928 since a lone noun after "the" outside a conversation
        // points back rather than names ("the offsite", "the new gym" are
        // labelled here; "the file", "the parser" are not entities in
        // fixtures/entities, whose technical text this rule is for)
        "dev2",
        Floors {
            entity_precision: 0.94,
            entity_recall: 0.92,
            kind_accuracy: 0.90,
            relation_precision: 0.45,
            relation_recall: 0.66,
        },
    ),
    (
        // measured 0.864 / 0.874, 0.816, 0.310 / 0.375
        "heldout",
        Floors {
            entity_precision: 0.83,
            entity_recall: 0.84,
            kind_accuracy: 0.78,
            relation_precision: 0.27,
            relation_recall: 0.33,
        },
    ),
];
/// The fixture must stay a meaningful size.
const MIN_CASES: usize = 40;

struct Floors {
    entity_precision: f64,
    entity_recall: f64,
    kind_accuracy: f64,
    relation_precision: f64,
    relation_recall: f64,
}

struct Case {
    id: String,
    split: String,
    text: String,
    /// key -> (surface, kind)
    entities: BTreeMap<String, (String, EntityKind)>,
    relations: HashSet<(String, String, String, bool)>,
}

fn load() -> Vec<Case> {
    let raw = std::fs::read_to_string(FIXTURE).expect("fixture readable");
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("valid JSON line");
            let s = |v: &serde_json::Value, k: &str| v[k].as_str().expect(k).to_string();
            let mut entities = BTreeMap::new();
            let mut kind_of = BTreeMap::new();
            for e in v["entities"].as_array().expect("entities") {
                let surface = s(e, "surface");
                let kind = EntityKind::parse(&s(e, "kind")).expect("known kind");
                kind_of.insert(surface.clone(), kind);
                entities.insert(entity_key(&surface, kind), (surface, kind));
            }
            let key = |surface: &str| {
                let kind = *kind_of
                    .get(surface)
                    .expect("relation argument is a gold entity");
                entity_key(surface, kind)
            };
            let relations = v["relations"]
                .as_array()
                .expect("relations")
                .iter()
                .map(|r| {
                    (
                        key(&s(r, "subject")),
                        stem_predicate(&s(r, "predicate")),
                        key(&s(r, "object")),
                        r["negated"].as_bool().unwrap_or(false),
                    )
                })
                .collect();
            Case {
                id: s(&v, "id"),
                split: s(&v, "split"),
                text: s(&v, "text"),
                entities,
                relations,
            }
        })
        .collect()
}

/// Crude per-word stemming so inflection does not decide a match.
fn stem_predicate(p: &str) -> String {
    p.split_whitespace()
        .map(|w| {
            let w = w.to_lowercase();
            let mut s = w.as_str();
            for suffix in ["ing", "ed", "es", "s"] {
                if s.len() > suffix.len() + 2 && s.ends_with(suffix) && !s.ends_with("ss") {
                    s = &s[..s.len() - suffix.len()];
                    break;
                }
            }
            s.trim_end_matches('e').to_string()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// Raw counts for one split.
#[derive(Default)]
struct Counts {
    cases: usize,
    e_tp: usize,
    e_sys: usize,
    e_gold: usize,
    kind_ok: usize,
    r_tp: usize,
    r_sys: usize,
    r_gold: usize,
    /// gold kind -> (gold, found, right kind)
    per_kind: BTreeMap<&'static str, (usize, usize, usize)>,
}

fn score(case: &Case, c: &mut Counts, verbose: bool) {
    let x = extract(&case.text);
    c.cases += 1;
    let sys: BTreeMap<&str, EntityKind> = x
        .entities
        .iter()
        .map(|e| (e.key.as_str(), e.kind))
        .collect();
    c.e_sys += sys.len();
    c.e_gold += case.entities.len();
    for (key, (surface, kind)) in &case.entities {
        let slot = c.per_kind.entry(kind.as_str()).or_default();
        slot.0 += 1;
        match sys.get(key.as_str()) {
            Some(k) => {
                c.e_tp += 1;
                slot.1 += 1;
                if k == kind {
                    c.kind_ok += 1;
                    slot.2 += 1;
                } else if verbose {
                    println!("[{}] kind {surface:?}: gold {kind:?}, got {k:?}", case.id);
                }
            }
            None if verbose => println!("[{}] missed entity {surface:?} ({key})", case.id),
            None => {}
        }
    }
    if verbose {
        for key in sys.keys().filter(|k| !case.entities.contains_key(**k)) {
            println!("[{}] extra entity {key:?}", case.id);
        }
    }
    let sys_rel: HashSet<(String, String, String, bool)> = x
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Pattern)
        .map(|r| {
            (
                x.entities[r.subject].key.clone(),
                stem_predicate(&r.predicate),
                x.entities[r.object].key.clone(),
                r.negated,
            )
        })
        .collect();
    c.r_sys += sys_rel.len();
    c.r_gold += case.relations.len();
    c.r_tp += sys_rel.intersection(&case.relations).count();
    if verbose {
        for r in case.relations.difference(&sys_rel) {
            println!("[{}] missed relation {r:?}", case.id);
        }
        for r in sys_rel.difference(&case.relations) {
            println!("[{}] extra relation {r:?}", case.id);
        }
    }
}

/// Prints one split's scores; returns (entity P, entity R, kind accuracy,
/// relation P, relation R).
fn report(split: &str, c: &Counts) -> [f64; 5] {
    let scores = [
        ratio(c.e_tp, c.e_sys),
        ratio(c.e_tp, c.e_gold),
        ratio(c.kind_ok, c.e_tp),
        ratio(c.r_tp, c.r_sys),
        ratio(c.r_tp, c.r_gold),
    ];
    let [ep, er, ka, rp, rr] = scores;
    println!("== {split}: {} texts", c.cases);
    println!(
        "entities:  P {ep:.3} ({}/{})  R {er:.3} ({}/{})",
        c.e_tp, c.e_sys, c.e_tp, c.e_gold
    );
    println!(
        "kinds:     accuracy {ka:.3} ({}/{}) on matched entities",
        c.kind_ok, c.e_tp
    );
    println!(
        "relations: P {rp:.3} ({}/{})  R {rr:.3} ({}/{})",
        c.r_tp, c.r_sys, c.r_tp, c.r_gold
    );
    for (kind, (gold, found, right)) in &c.per_kind {
        println!("  {kind:<13} gold {gold:>3}  found {found:>3}  right kind {right:>3}");
    }
    scores
}

#[test]
fn extraction_quality_meets_floors() {
    let cases = load();
    assert!(
        cases.len() >= MIN_CASES,
        "only {} labelled cases",
        cases.len()
    );
    // EXTRACT_EVAL_VERBOSE=dev (or =heldout) prints every miss of a split.
    let verbose = std::env::var("EXTRACT_EVAL_VERBOSE").unwrap_or_default();
    for (split, floors) in FLOORS {
        let mut counts = Counts::default();
        for case in cases.iter().filter(|c| c.split == *split) {
            score(case, &mut counts, verbose == *split);
        }
        assert!(counts.cases > 0, "no cases in split {split}");
        let [ep, er, ka, rp, rr] = report(split, &counts);
        assert!(
            ep >= floors.entity_precision,
            "{split} entity precision {ep:.3}"
        );
        assert!(er >= floors.entity_recall, "{split} entity recall {er:.3}");
        assert!(ka >= floors.kind_accuracy, "{split} kind accuracy {ka:.3}");
        assert!(
            rp >= floors.relation_precision,
            "{split} relation precision {rp:.3}"
        );
        assert!(
            rr >= floors.relation_recall,
            "{split} relation recall {rr:.3}"
        );
    }
}

#[test]
fn predicate_stemming_ignores_inflection_only() {
    assert_eq!(stem_predicate("works at"), stem_predicate("worked at"));
    assert_eq!(stem_predicate("acquire"), stem_predicate("acquired"));
    assert_ne!(stem_predicate("works at"), stem_predicate("works for"));
}
