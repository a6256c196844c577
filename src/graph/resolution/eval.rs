//! Measuring the resolver on hand-labelled name pairs.
//!
//! Owns reading `fixtures/extraction/resolution_pairs.jsonl` and scoring a
//! set of [`Thresholds`] on it: a pair is merged when the extractor's keys
//! are identical (the store merges those without asking) or when
//! [`evidence`] passes the thresholds. Shared by the threshold sweep
//! (`scripts/sweep_resolution.rs`) and the floors in this module's tests.
//!
//! Labelling conventions, fixed before any threshold was measured: `merge`
//! is whether the two names, each seen in its own document with the given
//! kind (as the extractor would label it), name the same thing for a
//! reader who knows the world; pairs only world knowledge can tell are
//! labelled honestly and counted as the misses or false merges they are.
//! Split `dev` was used to pick the thresholds; `heldout` was written at
//! the same time, before any measurement, and never tuned on.

use serde::Deserialize;

use super::{evidence, Evidence, NameProfile, Thresholds};
use crate::graph::extract::{entity_key, EntityKind};

/// One labelled pair.
#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    pub split: String,
    pub a: String,
    pub a_kind: String,
    pub b: String,
    pub b_kind: String,
    pub merge: bool,
    #[serde(default)]
    pub note: String,
}

/// Parses the fixture's JSON lines (blank lines ignored).
pub fn parse_pairs(text: &str) -> Result<Vec<Pair>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// What the resolver sees for a pair: whether the keys are identical, and
/// otherwise both signals (`None` when the kinds may not merge).
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub same_key: bool,
    pub evidence: Option<Evidence>,
}

impl Scored {
    /// Whether the store would merge the pair under `t`.
    pub fn merges(&self, t: Thresholds) -> bool {
        self.same_key || self.evidence.is_some_and(|e| e.passes(t))
    }
}

/// Scores one pair: keys as the extractor would give them, then signals.
pub fn score(pair: &Pair) -> Scored {
    let kind = |k: &str| EntityKind::parse(k).unwrap_or(EntityKind::Unknown);
    let key_a = entity_key(&pair.a, kind(&pair.a_kind));
    let key_b = entity_key(&pair.b, kind(&pair.b_kind));
    if key_a == key_b {
        return Scored {
            same_key: true,
            evidence: None,
        };
    }
    let pa = NameProfile::new(&key_a, &pair.a);
    let pb = NameProfile::new(&key_b, &pair.b);
    Scored {
        same_key: false,
        evidence: evidence(&pa, &pair.a_kind, &pb, &pair.b_kind),
    }
}

/// Merge precision and recall over labelled pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub true_merges: usize,
    pub false_merges: usize,
    pub missed: usize,
    pub precision: f64,
    pub recall: f64,
}

impl Figures {
    /// F-beta with beta = 0.5: precision counts twice as much as recall,
    /// because a wrong merge mixes two things' facts for good while a
    /// missed one leaves them apart as before.
    pub fn f_half(&self) -> f64 {
        let (p, r) = (self.precision, self.recall);
        if p + r == 0.0 {
            0.0
        } else {
            1.25 * p * r / (0.25 * p + r)
        }
    }
}

/// Figures of `t` over pairs already scored (`(label, scored)`).
pub fn figures(scored: &[(bool, Scored)], t: Thresholds) -> Figures {
    let (mut tp, mut fp, mut missed) = (0, 0, 0);
    for (label, s) in scored {
        match (s.merges(t), *label) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => missed += 1,
            (false, false) => {}
        }
    }
    let ratio = |n: usize, d: usize| if d == 0 { 1.0 } else { n as f64 / d as f64 };
    Figures {
        true_merges: tp,
        false_merges: fp,
        missed,
        precision: ratio(tp, tp + fp),
        recall: ratio(tp, tp + missed),
    }
}
