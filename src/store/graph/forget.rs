//! Removing one document's contributions to the graph: its evidence (and
//! the relations left with none; the facts it stated are settled again
//! without it; a superseded document version loses only this), its
//! mentions, the entities no longer mentioned, the names only it gave the
//! others (`forget_names`), and the community snapshots that may quote it.

use std::collections::HashSet;

use super::evidence::counter_index;
use crate::error::Result;
use crate::knowledge::confidence::Provenance;
use crate::store::tenant::{TenantCount, TenantWriter};

impl TenantWriter<'_> {
    /// Removes a document's contributions to the graph (before its chunks
    /// are deleted): its relation evidence (relations left without
    /// evidence go; the others' confidence is recomputed), its mentions,
    /// and entities no longer mentioned anywhere.
    pub(in crate::store) fn forget_graph(&mut self, document_key: i64) -> Result<()> {
        let withdrew = self.withdraw_evidence(document_key)?;
        if !withdrew && !self.has_mentions(document_key)? {
            return Ok(());
        }
        // Only the entities this document mentions can change count: a
        // recount of the whole tenant would make forgetting (and a
        // retention sweep of many documents) quadratic.
        // With the surfaces it used: names only this document gave an
        // entity go with it (`forget_names`).
        let mut touched: Vec<(i64, HashSet<String>)> =
            self.surfaces_by_entity(document_key)?.into_iter().collect();
        touched.sort_unstable_by_key(|(entity, _)| *entity);
        self.exec(
            "DELETE FROM mentions WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?1)",
            [document_key],
        )?;
        for (entity, surfaces) in touched {
            self.exec(
                "UPDATE entities SET mention_count =
                        (SELECT count(*) FROM mentions m WHERE m.entity_id = ?1)
                  WHERE id = ?1",
                [entity],
            )?;
            self.delete_if_unmentioned(entity)?;
            self.drop_forgotten_names(entity, &surfaces)?;
        }
        // Summaries may quote the forgotten document (its entities, its
        // facts).
        self.graph_changed_under_summaries()
    }

    /// Withdraws a document's relation evidence: relations left without
    /// any go, the facts it stated are settled again, the others'
    /// counts and confidence are recomputed. Forgetting a document does
    /// this, and so does superseding it with a newer version (whose own
    /// evidence then stands alone). Returns whether it had any evidence.
    pub(in crate::store) fn withdraw_evidence(&mut self, document_key: i64) -> Result<bool> {
        let evidence: Vec<(i64, bool, String)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT relation_id, supports, provenance FROM relation_evidence WHERE document_id = ?1",
            )?;
            let rows = stmt.query_map([document_key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        if evidence.is_empty() {
            return Ok(false);
        }
        // The facts this document stated are settled again without it:
        // forgetting "Dana works at Initech" brings back what it had
        // superseded instead of leaving Dana with no current employer.
        let mut facts: Vec<(i64, &'static str)> = Vec::new();
        for (relation, _, _) in &evidence {
            if let Some(fact) = self.fact_of(*relation)? {
                if !facts.contains(&fact) {
                    facts.push(fact);
                }
            }
        }
        self.exec(
            "DELETE FROM relation_evidence WHERE document_id = ?1",
            [document_key],
        )?;
        for (relation, supports, provenance) in evidence {
            let remaining: i64 = self.conn.query_row(
                "SELECT count(*) FROM relation_evidence WHERE relation_id = ?1",
                [relation],
                |r| r.get(0),
            )?;
            if remaining == 0 {
                self.exec("DELETE FROM relations WHERE id = ?1", [relation])?;
            } else {
                let at = counter_index(supports, Provenance::parse(Some(&provenance)));
                let mut counts = self.relation_counts(relation)?;
                counts[at] = (counts[at] - 1).max(0);
                self.write_counts(relation, counts)?;
            }
        }
        for (holder, family) in facts {
            self.settle_fact(holder, family)?;
        }
        Ok(true)
    }

    /// After the graph lost something (a forgotten document, withdrawn
    /// evidence): community summaries may quote it, so every snapshot is
    /// dropped and the next build starts from what is left; readers'
    /// graph caches and name hints are told.
    pub(in crate::store) fn graph_changed_under_summaries(&mut self) -> Result<()> {
        self.exec(
            "DELETE FROM communities WHERE tenant_id = ?1",
            [self.tenant_id],
        )?;
        self.exec(
            "UPDATE tenants SET communities_version = -1 WHERE id = ?1",
            [self.tenant_id],
        )?;
        self.add_to_tenant_count(TenantCount::GraphVersion, 1)?;
        self.names.discard(self.tenant_id);
        Ok(())
    }

    fn has_mentions(&self, document_key: i64) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM mentions WHERE chunk_id IN
                 (SELECT id FROM chunks WHERE document_id = ?1))",
            [document_key],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::{remember, temp_store};
    use crate::store::Tenant;

    #[test]
    fn forgetting_the_newer_fact_makes_the_older_one_current_again() {
        let (dir, store) = temp_store("alayasiki-graph");
        let t = Tenant::new("t").unwrap();
        remember(&store, &t, "Dana Scully works at Acme.", "user");
        remember(&store, &t, "Dana Scully works at Globex.", "user");
        let newest = remember(&store, &t, "Dana Scully works at Initech.", "user");
        store.write(&t, move |w| w.forget_graph(newest)).unwrap();
        let r = store.reader(&t).unwrap();
        let dana = r.entities_by_keys(&["dana scully".into()]).unwrap();
        let all = r.relations_of(dana[0].id, true, 50).unwrap();
        let at = |org: &str| {
            all.iter()
                .find(|x| x.predicate == "works at" && x.object.contains(org))
                .cloned()
        };
        assert!(at("Initech").is_none(), "the forgotten fact is gone");
        let globex = at("Globex").expect("the fact it superseded");
        let acme = at("Acme").expect("older history");
        assert!(globex.valid_to.is_none(), "Globex is current again");
        assert!(acme.valid_to.is_some(), "Acme stays history");
        let current = r.relations_of(dana[0].id, false, 50).unwrap();
        let current_employers: Vec<_> = current
            .iter()
            .filter(|x| x.predicate == "works at")
            .map(|x| x.object.clone())
            .collect();
        assert_eq!(current_employers.len(), 1, "{current_employers:?}");
        drop(r);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }
}
