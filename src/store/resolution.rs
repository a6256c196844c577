//! Entity resolution across documents, in the store: the name-term index
//! that finds candidates, and merges recorded as aliases.
//!
//! The policy (which pairs merge, thresholds, which terms to index) is
//! `graph::resolution`'s (handed to the store as a `NamePolicy` when it
//! opens), the values it records `knowledge::resolution`'s; this module
//! runs its lookups against the tenant's `entity_name_terms`
//! and writes what it decides: a merged name becomes an alias of the
//! existing entity (so later documents and questions find it by key) plus
//! an `entity_merges` row saying why.
//!
//! Must never: read more than `MAX_CANDIDATES_PER_TERM` rows per term or
//! `MAX_CANDIDATES` entities per name (a tenant's size does not change the
//! cost of one lookup), or merge a name into an entity created by the same
//! document (within a document the extractor's own resolution decides).

use rusqlite::{params, Connection, OptionalExtension};

use super::graph::EntityRow;
use super::tenant::{TenantReader, TenantWriter};
use crate::error::Result;
use crate::knowledge::fragment::FragmentEntity;
use crate::knowledge::resolution::{
    is_resolvable_kind, Candidate, Evidence, NamePolicy, MAX_CANDIDATES, MAX_CANDIDATES_PER_TERM,
    NAME_TERMS_VERSION,
};

/// A term's entities, lowest ids first, at most [`MAX_CANDIDATES_PER_TERM`].
/// The limit is a constant written into the SQL: a bound one is planned by
/// value (see `TenantReader::keyword_search`). Run once per new entity, so
/// `ids_come_in_order_without_re_preparing` pins that the statement is not
/// re-prepared each time it leaves the statement cache, as it was before
/// connections had the planner stability guarantee (see `db::configure`).
fn term_candidates_sql() -> String {
    format!(
        "SELECT entity_id FROM entity_name_terms
          WHERE tenant_id = ?1 AND term = ?2 ORDER BY entity_id LIMIT {MAX_CANDIDATES_PER_TERM}"
    )
}

/// Stored entities whose names share a lookup term, in term order then id
/// order (deterministic), without `exclude`, at most `MAX_CANDIDATES`.
/// Ids come from the term index alone (its primary key covers the read);
/// only the distinct candidates are then read from `entities`.
///
/// `open_terms`, when given, receives the terms a later entity could
/// still change the answer through: those read to their end with fewer
/// than `MAX_CANDIDATES_PER_TERM` entities. A full term shows its lowest
/// ids, and a new entity's id is higher than any stored one.
fn candidates(
    conn: &Connection,
    tenant_id: i64,
    terms: &[String],
    exclude: &[i64],
    mut open_terms: Option<&mut Vec<String>>,
) -> rusqlite::Result<Vec<Candidate>> {
    let mut ids: Vec<i64> = Vec::new();
    {
        let mut stmt = conn.prepare_cached(&term_candidates_sql())?;
        'terms: for term in terms {
            let rows = stmt.query_map(params![tenant_id, term], |r| r.get::<_, i64>(0))?;
            let mut read = 0;
            for id in rows {
                let id = id?;
                read += 1;
                if !exclude.contains(&id) && !ids.contains(&id) {
                    ids.push(id);
                    if ids.len() >= MAX_CANDIDATES {
                        break 'terms;
                    }
                }
            }
            if read < MAX_CANDIDATES_PER_TERM {
                if let Some(open) = open_terms.as_deref_mut() {
                    open.push(term.clone());
                }
            }
        }
    }
    let mut stmt = conn.prepare_cached("SELECT key, name, kind FROM entities WHERE id = ?1")?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let row = stmt
            .query_row([id], |r| {
                Ok(Candidate {
                    id,
                    key: r.get(0)?,
                    name: r.get(1)?,
                    kind: r.get(2)?,
                })
            })
            .optional()?;
        out.extend(row);
    }
    Ok(out)
}

/// The entity with `key`, or the one that has it as an alias.
pub(super) fn stored_entity(
    conn: &Connection,
    tenant_id: i64,
    key: &str,
) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT id FROM entities WHERE tenant_id = ?1 AND key = ?2
         UNION ALL
         SELECT entity_id FROM entity_aliases WHERE tenant_id = ?1 AND alias_key = ?2
         LIMIT 1",
    )?
    .query_row(params![tenant_id, key], |r| r.get(0))
    .optional()
}

/// The stored entity (not in `exclude`) that a name new to the tenant (no
/// entity or alias has its key) is another name of, if the resolver finds
/// exactly one, with the evidence. `open_terms` as for [`candidates`].
pub(super) fn merge_decision(
    policy: &dyn NamePolicy,
    conn: &Connection,
    tenant_id: i64,
    entity: &FragmentEntity,
    exclude: &[i64],
    open_terms: Option<&mut Vec<String>>,
) -> rusqlite::Result<Option<(i64, Evidence)>> {
    let (key, name, kind) = (&entity.key, &entity.name, entity.kind.as_str());
    if !is_resolvable_kind(kind) {
        return Ok(None);
    }
    let terms = policy.merge_lookup_terms(key, name, kind);
    if terms.is_empty() {
        return Ok(None);
    }
    let found = candidates(conn, tenant_id, &terms, exclude, open_terms)?;
    Ok(policy.choose_merge(key, name, kind, &found))
}

impl TenantWriter<'_> {
    /// Records that the new name `key` is another name of the stored
    /// entity `id` (see [`merge_decision`]): the name becomes its alias,
    /// with the evidence in `entity_merges`, and an entity of unknown kind
    /// takes the new name's kind.
    pub(super) fn record_merge(
        &mut self,
        key: &str,
        name: &str,
        kind: &str,
        (id, evidence): (i64, Evidence),
        now: i64,
    ) -> Result<()> {
        self.exec(
            "INSERT OR IGNORE INTO entity_aliases(tenant_id, alias_key, alias, entity_id)
             VALUES (?1, ?2, ?3, ?4)",
            params![self.tenant_id, key, name, id],
        )?;
        self.names.wrote_key(self.tenant_id, key);
        self.exec(
            "INSERT OR IGNORE INTO entity_merges(tenant_id, alias_key, entity_id, rule,
                                                 name_score, cosine, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                self.tenant_id,
                key,
                id,
                evidence.name.rule.as_str(),
                evidence.name.score,
                f64::from(evidence.cosine),
                now
            ],
        )?;
        if kind != "unknown" {
            let changed = self.exec(
                "UPDATE entities SET kind = ?2 WHERE id = ?1 AND kind = 'unknown'",
                params![id, kind],
            )?;
            if changed > 0 {
                // Its kind decides which names may merge into it: names
                // resolved before are to be looked up again.
                self.names.discard(self.tenant_id);
            }
        }
        log::debug!(
            "resolved a new name into entity {id} ({}, name {:.2}, cosine {:.2})",
            evidence.name.rule.as_str(),
            evidence.name.score,
            evidence.cosine
        );
        Ok(())
    }

    /// Adds a stored entity's name terms to the index, if its kind can ever
    /// be resolved: a concept or a date is never a candidate for a merge or
    /// a question's name (`resolution::kinds_compatible`), so its terms
    /// would only cost the writer (they were about a sixth of its time on
    /// concept-heavy text) and crowd real candidates out of each term's
    /// bounded look-up. A kind only ever changes from `unknown`, which is
    /// indexed.
    pub(super) fn index_entity_name(
        &mut self,
        id: i64,
        key: &str,
        name: &str,
        kind: &str,
    ) -> Result<()> {
        if !is_resolvable_kind(kind) {
            return Ok(());
        }
        for term in self.resolver.index_terms(key, name) {
            self.exec(
                "INSERT OR IGNORE INTO entity_name_terms(tenant_id, term, entity_id)
                 VALUES (?1, ?2, ?3)",
                params![self.tenant_id, term, id],
            )?;
            self.names.wrote_term(self.tenant_id, &term);
        }
        Ok(())
    }

    /// Deletes `entity` if nothing mentions it any more, with its name
    /// terms. The term index has no foreign key (see migration 009): the
    /// terms are derived from the key and name again and deleted by their
    /// primary key, whatever the entity's kind is now (an `unknown` entity
    /// indexed at creation may have taken another kind since).
    pub(super) fn delete_if_unmentioned(&mut self, entity: i64) -> Result<()> {
        let gone: Option<(String, String)> = self
            .conn
            .prepare_cached("SELECT key, name FROM entities WHERE id = ?1 AND mention_count = 0")?
            .query_row([entity], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((key, name)) = gone else {
            return Ok(());
        };
        // Names resolved before may have resolved to it.
        self.names.discard(self.tenant_id);
        for term in self.resolver.index_terms(&key, &name) {
            self.exec(
                "DELETE FROM entity_name_terms WHERE tenant_id = ?1 AND term = ?2 AND entity_id = ?3",
                params![self.tenant_id, term, entity],
            )?;
        }
        self.exec("DELETE FROM entities WHERE id = ?1", [entity])?;
        Ok(())
    }

    /// Brings the tenant's name-term index up to the binary's derivation
    /// ([`NAME_TERMS_VERSION`]): after the migration that created it, or
    /// after the derivation changed, every entity is indexed again. Once
    /// per tenant and version; afterwards one indexed read.
    ///
    /// A graph write starts here: it also tells the writer's [`NameLog`]
    /// which graph version the names written next belong to (after a
    /// rebuild, none: no hint is trusted until the next graph write).
    ///
    /// [`NameLog`]: super::name_hints::NameLog
    pub(super) fn begin_graph_write(&mut self) -> Result<()> {
        let (version, graph_version): (i64, i64) = self
            .conn
            .prepare_cached("SELECT name_terms_version, graph_version FROM tenants WHERE id = ?1")?
            .query_row([self.tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        if version == NAME_TERMS_VERSION {
            self.names.begin(self.tenant_id, graph_version);
            return Ok(());
        }
        self.names.discard(self.tenant_id);
        self.exec(
            "DELETE FROM entity_name_terms WHERE tenant_id = ?1",
            [self.tenant_id],
        )?;
        let entities: Vec<(i64, String, String, String)> = {
            let mut stmt = self
                .conn
                .raw()
                .prepare("SELECT id, key, name, kind FROM entities WHERE tenant_id = ?1")?;
            let rows = stmt.query_map([self.tenant_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for (id, key, name, kind) in &entities {
            self.index_entity_name(*id, key, name, kind)?;
        }
        self.exec(
            "UPDATE tenants SET name_terms_version = ?2 WHERE id = ?1",
            params![self.tenant_id, NAME_TERMS_VERSION],
        )?;
        if !entities.is_empty() {
            log::info!(
                "indexed the names of {} stored entities for resolution",
                entities.len()
            );
        }
        Ok(())
    }
}

impl TenantReader<'_> {
    /// Stored entities a name in a question stands for when its own key
    /// and aliases matched nothing: bounded lookups in the name-term index,
    /// judged by the resolution policy (`NamePolicy::question_matches`).
    pub fn entities_named_like(&self, key: &str, name: &str) -> Result<Vec<EntityRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let terms = self.resolver.lookup_terms(key, name);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let found = candidates(&self.conn, tenant_id, &terms, &[], None)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, key, name, kind, mention_count FROM entities WHERE id = ?1",
        )?;
        let mut out = Vec::new();
        for id in self.resolver.question_matches(key, name, &found) {
            out.push(stmt.query_row([id], EntityRow::from_row)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::{term_candidates_sql, MAX_CANDIDATES_PER_TERM};
    use crate::store::test_support::{temp_store, tenant_rows};
    use crate::store::{Store, Tenant};
    use rusqlite::params;

    fn store() -> (std::path::PathBuf, Store) {
        temp_store("alayasiki-resolution")
    }

    /// Stores and indexes `text` as a document from the user; returns its key.
    fn remember(store: &Store, tenant: &Tenant, text: &str) -> i64 {
        crate::store::test_support::remember(store, tenant, text, "user")
    }

    /// (name, kind) of every entity, by id.
    fn entities(store: &Store, tenant: &Tenant) -> Vec<(String, String)> {
        tenant_rows(
            store,
            tenant,
            "SELECT name, kind FROM entities WHERE tenant_id = ?1 ORDER BY id",
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn count(store: &Store, tenant: &Tenant, sql: &'static str) -> i64 {
        store
            .write(tenant, move |w| {
                Ok(w.conn.query_row(sql, [w.tenant_id], |r| r.get(0))?)
            })
            .unwrap()
    }

    #[test]
    fn ids_come_in_order_without_re_preparing() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        let (ids, reprepared) = store
            .write(&t, |w| {
                let conn = w.conn;
                // Inserted out of order, more than one term can return,
                // beside another term and another tenant's rows.
                let mut insert = conn.prepare_cached(
                    "INSERT INTO entity_name_terms(tenant_id, term, entity_id) VALUES (?1, ?2, ?3)",
                )?;
                for id in [50, 3, 17, 99, 1, 64, 8, 23, 5, 42, 77, 2] {
                    insert.execute(params![w.tenant_id, "acme", id])?;
                    insert.execute(params![w.tenant_id, "corp", 1000 - id])?;
                    insert.execute(params![w.tenant_id + 1, "acme", id + 500])?;
                }
                let mut found = Vec::new();
                let mut reprepared = Vec::new();
                for term in ["acme", "corp", "acme", "nothing", "acme"] {
                    let mut stmt = conn.prepare_cached(&term_candidates_sql())?;
                    let before = stmt.get_status(rusqlite::StatementStatus::RePrepare);
                    let rows =
                        stmt.query_map(params![w.tenant_id, term], |r| r.get::<_, i64>(0))?;
                    found.push(rows.collect::<rusqlite::Result<Vec<i64>>>()?);
                    reprepared.push(stmt.get_status(rusqlite::StatementStatus::RePrepare) - before);
                }
                Ok((found, reprepared))
            })
            .unwrap();
        let lowest_acme = vec![1, 2, 3, 5, 8, 17, 23, 42];
        assert_eq!(MAX_CANDIDATES_PER_TERM, lowest_acme.len());
        assert_eq!(ids[0], lowest_acme);
        assert_eq!(ids[1], vec![901, 923, 936, 950, 958, 977, 983, 992]);
        assert_eq!(ids[2], lowest_acme);
        assert!(ids[3].is_empty());
        assert_eq!(ids[4], lowest_acme);
        assert_eq!(
            reprepared[1..],
            [0, 0, 0, 0],
            "re-prepared when taken from the cache"
        );
        store.close();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_new_name_merges_into_the_stored_entity_as_an_alias_with_its_reason() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        remember(&store, &t, "Acme Corp. opened an office in New York City.");
        remember(&store, &t, "Dana Scully moved to NYC last spring.");
        let names: Vec<String> = entities(&store, &t).into_iter().map(|e| e.0).collect();
        assert!(names.contains(&"New York City".to_string()), "{names:?}");
        assert!(!names.contains(&"NYC".to_string()), "{names:?}");
        let r = store.reader(&t).unwrap();
        let by_alias = r.entities_by_keys(&["nyc".into()]).unwrap();
        assert_eq!(by_alias[0].name, "New York City");
        drop(r);
        let rule: String = store
            .write(&t, |w| {
                Ok(w.conn.query_row(
                    "SELECT rule FROM entity_merges WHERE tenant_id = ?1 AND alias_key = 'nyc'",
                    [w.tenant_id],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(rule, "acronym");
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn names_of_one_document_are_left_to_the_extractor() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        // The extractor keeps these apart within one text; a later
        // document's name must not be merged across that decision either.
        remember(
            &store,
            &t,
            "Marie Sklodowska Curie wrote to Marie Curie about Warsaw.",
        );
        let names: Vec<String> = entities(&store, &t).into_iter().map(|e| e.0).collect();
        assert!(
            names.contains(&"Marie Curie".to_string())
                && names.contains(&"Marie Sklodowska Curie".to_string()),
            "{names:?}"
        );
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn entities_stored_before_the_term_index_are_indexed_at_the_next_write() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        remember(&store, &t, "Marie Sklodowska Curie was born in Warsaw.");
        // As a store migrated from schema 5 would be: entities, no terms.
        store
            .write(&t, |w| {
                w.exec(
                    "DELETE FROM entity_name_terms WHERE tenant_id = ?1",
                    [w.tenant_id],
                )?;
                w.exec(
                    "UPDATE tenants SET name_terms_version = 0 WHERE id = ?1",
                    [w.tenant_id],
                )?;
                Ok(())
            })
            .unwrap();
        remember(&store, &t, "Marie Curie works at the University of Paris.");
        let names: Vec<String> = entities(&store, &t).into_iter().map(|e| e.0).collect();
        assert!(!names.contains(&"Marie Curie".to_string()), "{names:?}");
        let version = count(
            &store,
            &t,
            "SELECT name_terms_version FROM tenants WHERE id = ?1",
        );
        assert_eq!(version, crate::graph::resolution::NAME_TERMS_VERSION);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn only_entities_of_a_resolvable_kind_get_name_terms() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        remember(
            &store,
            &t,
            "Dana Scully joined Initech on 2024-03-01 to work on \"zero trust\" networking.",
        );
        let per_entity: Vec<(String, String, i64)> = tenant_rows(
            &store,
            &t,
            "SELECT e.name, e.kind,
                    (SELECT count(*) FROM entity_name_terms n WHERE n.entity_id = e.id)
               FROM entities e WHERE e.tenant_id = ?1",
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        );
        let kinds: Vec<&str> = per_entity.iter().map(|e| e.1.as_str()).collect();
        assert!(
            kinds.contains(&"person") && kinds.iter().any(|k| *k == "concept" || *k == "date"),
            "{per_entity:?}"
        );
        for (name, kind, terms) in &per_entity {
            let resolvable = crate::graph::resolution::is_resolvable_kind(kind);
            assert_eq!(*terms > 0, resolvable, "{name} ({kind}): {terms} terms");
        }
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn forgetting_an_entity_removes_its_name_terms() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        let doc = remember(&store, &t, "Initech hired Milton Waddams.");
        let terms = "SELECT count(*) FROM entity_name_terms WHERE tenant_id = ?1";
        assert!(count(&store, &t, terms) > 0);
        store.write(&t, move |w| w.forget_graph(doc)).unwrap();
        assert_eq!(count(&store, &t, terms), 0);
        // An entity indexed as `unknown` that took a kind by a merge: its
        // terms still go with it (they are derived again, not looked up by
        // kind), and no row is left to name a reused entity id.
        let first = remember(&store, &t, "We talked about Open AI yesterday.");
        let second = remember(&store, &t, "OpenAI Inc. hired Dana Scully.");
        assert!(count(&store, &t, terms) > 0);
        for doc in [first, second] {
            store.write(&t, move |w| w.forget_graph(doc)).unwrap();
        }
        assert_eq!(
            count(
                &store,
                &t,
                "SELECT count(*) FROM entities WHERE tenant_id = ?1"
            ),
            0
        );
        assert_eq!(count(&store, &t, terms), 0);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_unknown_kind_takes_the_kind_of_a_merged_name() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        // The extractor has no kind evidence for "Open AI" here; the later
        // "OpenAI Inc." is an organization by its legal form.
        remember(&store, &t, "We talked about Open AI yesterday.");
        let before = entities(&store, &t);
        assert!(
            before.contains(&("Open AI".into(), "unknown".into())),
            "{before:?}"
        );
        remember(&store, &t, "OpenAI Inc. hired Dana Scully.");
        let after = entities(&store, &t);
        assert!(
            after.contains(&("Open AI".into(), "organization".into())),
            "{after:?}"
        );
        assert!(
            !after.iter().any(|e| e.0.starts_with("OpenAI")),
            "{after:?}"
        );
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }
}
