//! A relation's evidence counters (support and contradiction, per
//! provenance, one column each) and the Beta confidence computed from
//! them, kept in the relation's row so queries need not recount.

use rusqlite::params;

use crate::error::Result;
use crate::knowledge::confidence::{self, Evidence, Provenance};
use crate::store::tenant::TenantWriter;

/// Counter columns per (supports, provenance).
pub(super) fn counter(supports: bool, provenance: Provenance) -> &'static str {
    match (supports, provenance) {
        (true, Provenance::External) => "support_external",
        (true, Provenance::User) => "support_user",
        (true, Provenance::Agent) => "support_agent",
        (false, Provenance::External) => "contra_external",
        (false, Provenance::User) => "contra_user",
        (false, Provenance::Agent) => "contra_agent",
    }
}

/// Position of a counter in the `[i64; 6]` read by `record_graph`
/// (supports external, user, agent, then contradicts the same).
pub(super) fn counter_index(supports: bool, provenance: Provenance) -> usize {
    let class = match provenance {
        Provenance::External => 0,
        Provenance::User => 1,
        Provenance::Agent => 2,
    };
    if supports {
        class
    } else {
        class + 3
    }
}

/// Beta parameters from the six evidence counters.
pub(super) fn beta_from_counts(c: [i64; 6]) -> (f64, f64) {
    let classes = [Provenance::External, Provenance::User, Provenance::Agent];
    let mut evidence = Vec::new();
    for (i, p) in classes.iter().enumerate() {
        for _ in 0..c[i] {
            evidence.push(Evidence {
                provenance: *p,
                supports: true,
            });
        }
        for _ in 0..c[i + 3] {
            evidence.push(Evidence {
                provenance: *p,
                supports: false,
            });
        }
    }
    confidence::beta(&evidence)
}

impl TenantWriter<'_> {
    /// `relation`'s six evidence counters, in [`counter_index`] order.
    pub(super) fn relation_counts(&self, relation: i64) -> Result<[i64; 6]> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT support_external, support_user, support_agent,
                        contra_external, contra_user, contra_agent FROM relations WHERE id = ?1",
            )?
            .query_row([relation], |r| {
                Ok([
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ])
            })?)
    }

    /// Stores `relation`'s counters and the Beta parameters computed from
    /// them, every value bound (run again, the statement leaves the same
    /// row).
    pub(super) fn write_counts(&mut self, relation: i64, c: [i64; 6]) -> Result<()> {
        let (alpha, beta) = beta_from_counts(c);
        self.exec(
            "UPDATE relations SET support_external = ?2, support_user = ?3, support_agent = ?4,
                    contra_external = ?5, contra_user = ?6, contra_agent = ?7,
                    alpha = ?8, beta = ?9
              WHERE id = ?1",
            params![relation, c[0], c[1], c[2], c[3], c[4], c[5], alpha, beta],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::fragment::predicate_key;
    use crate::store::test_support::{remember, temp_store};
    use crate::store::{Store, Tenant};

    fn confidence_of(
        store: &Store,
        tenant: &Tenant,
        name: &str,
        predicate: &str,
    ) -> Option<(f64, bool)> {
        let r = store.reader(tenant).unwrap();
        let e = r.entities_by_keys(&[name.to_string()]).unwrap();
        let rels = r.relations_of(e.first()?.id, true, 50).unwrap();
        rels.iter()
            .find(|x| predicate_key(&x.predicate) == predicate_key(predicate))
            .map(|x| (x.alpha / (x.alpha + x.beta), x.valid_to.is_none()))
    }

    #[test]
    fn corroboration_contradiction_and_forgetting_update_confidence() {
        let (dir, store) = temp_store("alayasiki-graph");
        let t = Tenant::new("t").unwrap();
        remember(&store, &t, "Acme Corp. acquired Widgets Inc.", "agent");
        let (one, _) = confidence_of(&store, &t, "acme", "acquired").expect("relation stored");
        let second = remember(
            &store,
            &t,
            "Acme Corp. acquired Widgets Inc. last year.",
            "external",
        );
        let (two, _) = confidence_of(&store, &t, "acme", "acquired").unwrap();
        assert!(
            two > one,
            "corroboration from another document raises confidence"
        );
        remember(
            &store,
            &t,
            "Acme Corp. did not acquire Widgets Inc.",
            "user",
        );
        let (three, _) = confidence_of(&store, &t, "acme", "acquired").unwrap();
        assert!(
            three < two,
            "a contradiction lowers confidence: {three} vs {two}"
        );
        store.write(&t, move |w| w.forget_graph(second)).unwrap();
        let (after, _) = confidence_of(&store, &t, "acme", "acquired").unwrap();
        assert!(
            after < two,
            "forgetting the external source lowers confidence again"
        );
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn counters_give_the_same_beta_as_the_evidence_list() {
        assert_eq!(beta_from_counts([0; 6]), (1.0, 1.0));
        let (a, b) = beta_from_counts([0, 0, 20, 1, 0, 0]);
        assert!(a / (a + b) < 0.5);
    }
}
