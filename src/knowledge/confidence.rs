//! How much to believe a relation.
//!
//! A relation's belief is a Beta(α, β) distribution: α counts supporting
//! evidence, β contradicting evidence, both starting from a Beta(1, 1)
//! prior. Each piece of evidence is weighted by who asserted it (recorded
//! at write time): an external source weighs more than the user, who weighs
//! more than the agent itself. Repetition from one provenance class has
//! diminishing returns (a geometric series), so an agent restating its own
//! belief twenty times cannot outweigh one external source that
//! contradicts it. Evidence from the same document counts once.
//!
//! At read time the Beta mean is decayed with the age of the newest
//! evidence (a configurable half-life), never below a floor fraction of
//! itself: old facts fade but do not vanish.
//!
//! Owns [`Provenance`], [`Evidence`] and the math (pure functions of their
//! inputs, plus reading the half-life setting). The store computes α and β
//! with it as it records evidence (`store::graph`); readers decay them.
//! `graph::confidence` re-exports it.

/// Who asserted a piece of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provenance {
    Agent,
    User,
    External,
}

impl Provenance {
    /// From the stored label (`external`, `user`, `agent`); anything else,
    /// including no label, is the agent: the least trusted source.
    pub fn parse(label: Option<&str>) -> Provenance {
        match label {
            Some("external") => Provenance::External,
            Some("user") => Provenance::User,
            _ => Provenance::Agent,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provenance::External => "external",
            Provenance::User => "user",
            Provenance::Agent => "agent",
        }
    }

    /// Weight of the first piece of evidence from this class.
    pub fn weight(self) -> f64 {
        match self {
            Provenance::External => EXTERNAL_WEIGHT,
            Provenance::User => USER_WEIGHT,
            Provenance::Agent => AGENT_WEIGHT,
        }
    }
}

pub const EXTERNAL_WEIGHT: f64 = 3.0;
pub const USER_WEIGHT: f64 = 2.0;
pub const AGENT_WEIGHT: f64 = 1.0;

/// Each further piece of evidence from the same class counts this much of
/// the previous one, so a class contributes at most `weight / (1 - RATIO)`.
pub const REPEAT_RATIO: f64 = 0.5;

/// Default half-life of read-time decay (days); `ALAYASIKI_HALF_LIFE_DAYS`
/// overrides it.
pub const DEFAULT_HALF_LIFE_DAYS: f64 = 180.0;

/// Decay never takes confidence below this fraction of its undecayed value.
pub const DECAY_FLOOR: f64 = 0.5;

/// One piece of evidence about a relation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub provenance: Provenance,
    /// Supports (true) or contradicts (false) the relation.
    pub supports: bool,
}

/// The Beta parameters from a set of evidence (one entry per document:
/// callers deduplicate by document before calling).
pub fn beta(evidence: &[Evidence]) -> (f64, f64) {
    let mut alpha = 1.0;
    let mut beta = 1.0;
    for supports in [true, false] {
        for class in [Provenance::External, Provenance::User, Provenance::Agent] {
            let n = evidence
                .iter()
                .filter(|e| e.supports == supports && e.provenance == class)
                .count() as i32;
            let total = class.weight() * (1.0 - REPEAT_RATIO.powi(n)) / (1.0 - REPEAT_RATIO);
            if supports {
                alpha += total;
            } else {
                beta += total;
            }
        }
    }
    (alpha, beta)
}

/// The Beta mean: the probability the relation holds.
pub fn mean(alpha: f64, beta: f64) -> f64 {
    alpha / (alpha + beta)
}

/// The decay multiplier for evidence `age_days` old.
pub fn decay(age_days: f64, half_life_days: f64) -> f64 {
    if age_days <= 0.0 || half_life_days <= 0.0 || !half_life_days.is_finite() {
        return 1.0;
    }
    0.5f64.powf(age_days / half_life_days).max(DECAY_FLOOR)
}

/// Confidence as read: the Beta mean decayed by the newest evidence's age.
pub fn confidence(alpha: f64, beta: f64, age_days: f64, half_life_days: f64) -> f64 {
    mean(alpha, beta) * decay(age_days, half_life_days)
}

/// The half-life configured by `ALAYASIKI_HALF_LIFE_DAYS`, else the default.
pub fn half_life_from_env() -> Result<f64, String> {
    match std::env::var("ALAYASIKI_HALF_LIFE_DAYS")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        None => Ok(DEFAULT_HALF_LIFE_DAYS),
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|d| d.is_finite() && *d > 0.0)
            .ok_or_else(|| {
                format!("ALAYASIKI_HALF_LIFE_DAYS={v:?} is not a positive number of days")
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(p: Provenance, supports: bool, n: usize) -> Vec<Evidence> {
        vec![
            Evidence {
                provenance: p,
                supports
            };
            n
        ]
    }

    #[test]
    fn no_evidence_is_the_uniform_prior() {
        assert_eq!(beta(&[]), (1.0, 1.0));
        assert_eq!(mean(1.0, 1.0), 0.5);
    }

    #[test]
    fn corroboration_raises_confidence_and_contradiction_lowers_it() {
        let one = beta(&ev(Provenance::User, true, 1));
        let two = beta(&ev(Provenance::User, true, 2));
        assert!(mean(two.0, two.1) > mean(one.0, one.1));
        let mut mixed = ev(Provenance::User, true, 2);
        mixed.extend(ev(Provenance::User, false, 1));
        let m = beta(&mixed);
        assert!(mean(m.0, m.1) < mean(two.0, two.1));
    }

    #[test]
    fn one_external_contradiction_outweighs_twenty_self_corroborations() {
        let mut e = ev(Provenance::Agent, true, 20);
        e.push(Evidence {
            provenance: Provenance::External,
            supports: false,
        });
        let (a, b) = beta(&e);
        assert!(
            mean(a, b) < 0.5,
            "agent repetition must not beat an external source: {}",
            mean(a, b)
        );
    }

    #[test]
    fn provenance_orders_the_weight_of_one_assertion() {
        let c = |p| {
            let (a, b) = beta(&ev(p, true, 1));
            mean(a, b)
        };
        assert!(c(Provenance::External) > c(Provenance::User));
        assert!(c(Provenance::User) > c(Provenance::Agent));
    }

    #[test]
    fn repetition_has_diminishing_returns() {
        let (a, _) = beta(&ev(Provenance::Agent, true, 1000));
        assert!(a <= 1.0 + AGENT_WEIGHT / (1.0 - REPEAT_RATIO) + 1e-9);
    }

    #[test]
    fn decay_halves_per_half_life_but_never_below_the_floor() {
        assert_eq!(decay(0.0, 180.0), 1.0);
        assert!((decay(180.0, 180.0) - 0.5).abs() < 1e-12);
        assert_eq!(decay(10_000.0, 180.0), DECAY_FLOOR);
        let fresh = confidence(4.0, 1.0, 0.0, 30.0);
        let old = confidence(4.0, 1.0, 3650.0, 30.0);
        assert!(old < fresh && old >= fresh * DECAY_FLOOR - 1e-12);
    }

    #[test]
    fn unknown_provenance_is_the_agent() {
        assert_eq!(Provenance::parse(None), Provenance::Agent);
        assert_eq!(Provenance::parse(Some("rumour")), Provenance::Agent);
        assert_eq!(Provenance::parse(Some("external")), Provenance::External);
    }
}
