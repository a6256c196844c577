//! Storage of the knowledge graph: entities (resolved by key, alias and,
//! across documents, by name through `store::resolution`), their
//! mentions, relations with per-provenance evidence counts and Beta
//! confidence, supersession of functional facts, and graph versions.

use rusqlite::{params, OptionalExtension};

use super::tenant::{TenantReader, TenantWriter};
use crate::error::Result;
use crate::graph::confidence::{self, Evidence, Provenance};
use crate::graph::fragment::{predicate_key, Fragment, FragmentRelation};

/// Predicates that hold one value at a time: a new object supersedes the
/// old fact (which gets `valid_to` and stays as history) instead of
/// contradicting it.
pub const FUNCTIONAL_PREDICATES: &[&str] = &[
    "is",
    "is based in",
    "is located in",
    "lives in",
    "located in",
    "based in",
    "works at",
    "works for",
    "moved to",
    "ceo of",
    "cto of",
    "married to",
    "born in",
    "owned by",
];

/// Counter columns per (supports, provenance).
fn counter(supports: bool, provenance: Provenance) -> &'static str {
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
fn counter_index(supports: bool, provenance: Provenance) -> usize {
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
fn beta_from_counts(c: [i64; 6]) -> (f64, f64) {
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
    /// Records a document's graph fragment: `chunk_keys[i]` is the stored
    /// key of the document's chunk `i`. Returns whether the graph changed.
    pub(super) fn record_graph(
        &mut self,
        document_key: i64,
        chunk_keys: &[i64],
        fragment: &Fragment,
        provenance: Provenance,
        now: i64,
    ) -> Result<bool> {
        if fragment.entities.is_empty() {
            return Ok(false);
        }
        self.ensure_name_terms()?;
        let mut ids = Vec::with_capacity(fragment.entities.len());
        let mut created = Vec::new();
        for e in &fragment.entities {
            let kind = e.kind.as_str();
            ids.push(self.resolve_entity(&e.key, &e.name, kind, &e.aliases, &mut created, now)?);
        }
        // A mention counts once however many extractors found it (the LLM's
        // mentions are often the rule-based ones again).
        let mut added = vec![0i64; ids.len()];
        for m in &fragment.mentions {
            added[m.entity] += self.exec(
                "INSERT OR IGNORE INTO mentions(entity_id, chunk_id, byte_start, byte_end)
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    ids[m.entity],
                    chunk_keys[m.chunk],
                    m.start as i64,
                    m.end as i64
                ],
            )? as i64;
        }
        for (id, added) in ids.iter().zip(added) {
            self.exec(
                "UPDATE entities SET mention_count = mention_count + ?2, last_seen = ?3 WHERE id = ?1",
                params![id, added, now],
            )?;
        }
        for r in &fragment.relations {
            let kind = if r.pattern { "pattern" } else { "cooccurrence" };
            let (subject, object) = (ids[r.subject], ids[r.object]);
            if subject == object {
                continue; // two names of the document resolved to one entity
            }
            let predicate = predicate_key(&r.predicate);
            let supports = !r.negated;
            let column = counter(supports, provenance);
            // Three statements per relation, not six: the counters are
            // read with the id and the new confidence is computed here, so
            // one UPDATE (or the INSERT itself, for a new relation) writes
            // both. The graph write is most of the single writer's work
            // per document.
            let found: Option<(i64, [i64; 6])> = self
                .conn
                .prepare_cached(
                    "SELECT id, support_external, support_user, support_agent,
                            contra_external, contra_user, contra_agent
                       FROM relations WHERE tenant_id = ?1 AND subject_id = ?2
                        AND predicate = ?3 AND object_id = ?4 AND kind = ?5",
                )?
                .query_row(
                    params![self.tenant_id, subject, predicate, object, kind],
                    |row| {
                        Ok((
                            row.get(0)?,
                            [
                                row.get(1)?,
                                row.get(2)?,
                                row.get(3)?,
                                row.get(4)?,
                                row.get(5)?,
                                row.get(6)?,
                            ],
                        ))
                    },
                )
                .optional()?;
            let relation = match found {
                Some((relation, mut counts)) => {
                    // One piece of evidence per document: repeating a
                    // claim inside one document does not corroborate it.
                    if self.insert_evidence(
                        relation,
                        document_key,
                        chunk_keys[r.chunk],
                        r,
                        provenance,
                        now,
                    )? == 0
                    {
                        continue;
                    }
                    counts[counter_index(supports, provenance)] += 1;
                    let (alpha, beta) = beta_from_counts(counts);
                    self.exec(
                        &format!(
                            "UPDATE relations SET {column} = {column} + 1, last_evidence_at = ?2,
                                    alpha = ?3, beta = ?4 WHERE id = ?1"
                        ),
                        params![relation, now, alpha, beta],
                    )?;
                    relation
                }
                None => {
                    let mut counts = [0i64; 6];
                    counts[counter_index(supports, provenance)] = 1;
                    let (alpha, beta) = beta_from_counts(counts);
                    self.exec(
                        &format!(
                            "INSERT INTO relations(tenant_id, subject_id, predicate, label, object_id,
                                    kind, valid_from, last_evidence_at, {column}, alpha, beta)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, 1, ?8, ?9)"
                        ),
                        params![
                            self.tenant_id,
                            subject,
                            predicate,
                            r.predicate,
                            object,
                            kind,
                            now,
                            alpha,
                            beta
                        ],
                    )?;
                    let relation = self.conn.last_insert_rowid();
                    self.insert_evidence(
                        relation,
                        document_key,
                        chunk_keys[r.chunk],
                        r,
                        provenance,
                        now,
                    )?;
                    relation
                }
            };
            if r.pattern && supports && FUNCTIONAL_PREDICATES.contains(&r.predicate.as_str()) {
                self.exec(
                    "UPDATE relations SET valid_to = ?5, superseded_by = ?4
                      WHERE tenant_id = ?1 AND subject_id = ?2 AND predicate = ?3 AND kind = 'pattern'
                        AND id != ?4 AND valid_to IS NULL",
                    params![self.tenant_id, subject, predicate, relation, now],
                )?;
                // A fact asserted again is current again.
                self.exec(
                    "UPDATE relations SET valid_to = NULL, superseded_by = NULL WHERE id = ?1",
                    [relation],
                )?;
            }
        }
        self.exec(
            "UPDATE tenants SET graph_version = graph_version + 1 WHERE id = ?1",
            [self.tenant_id],
        )?;
        Ok(true)
    }

    /// Adds one piece of evidence for `relation`; 0 when this document
    /// already gave it some.
    fn insert_evidence(
        &mut self,
        relation: i64,
        document_key: i64,
        chunk_key: i64,
        r: &FragmentRelation,
        provenance: Provenance,
        now: i64,
    ) -> Result<usize> {
        Ok(self.exec(
            "INSERT OR IGNORE INTO relation_evidence(relation_id, document_id, chunk_id,
                    byte_start, byte_end, supports, provenance, at, extractor)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                relation,
                document_key,
                chunk_key,
                r.start as i64,
                r.end as i64,
                !r.negated,
                provenance.name(),
                now,
                r.extractor.name()
            ],
        )?)
    }

    /// Before `relation` is deleted: the newest fact it superseded (same
    /// subject and predicate) is current again, and older ones it
    /// superseded now name that one as their successor. Forgetting the
    /// document behind "Dana works at Initech" brings back "Dana works at
    /// Acme" instead of leaving Dana with no current employer.
    fn restore_superseded(&mut self, relation: i64) -> Result<()> {
        // Look-ups by (tenant, subject, predicate) use the unique index;
        // `superseded_by` alone has none.
        let key: Option<(i64, String)> = self
            .conn
            .prepare_cached("SELECT subject_id, predicate FROM relations WHERE id = ?1")?
            .query_row([relation], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((subject, predicate)) = key else {
            return Ok(());
        };
        let newest: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT id FROM relations
                  WHERE tenant_id = ?1 AND subject_id = ?2 AND predicate = ?3 AND superseded_by = ?4
                  ORDER BY valid_to DESC, id DESC LIMIT 1",
            )?
            .query_row(params![self.tenant_id, subject, predicate, relation], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(newest) = newest else {
            return Ok(());
        };
        self.exec(
            "UPDATE relations SET valid_to = NULL, superseded_by = NULL WHERE id = ?1",
            [newest],
        )?;
        self.exec(
            "UPDATE relations SET superseded_by = ?5
              WHERE tenant_id = ?1 AND subject_id = ?2 AND predicate = ?3 AND superseded_by = ?4",
            params![self.tenant_id, subject, predicate, relation, newest],
        )?;
        Ok(())
    }

    /// The entity with `key`, or the one that has it as an alias, or the
    /// one stored entity (not in `created`, this document's new entities)
    /// it is another name of (see `store::resolution`), or a new one,
    /// added to `created`; the fragment's aliases are registered for it.
    fn resolve_entity(
        &mut self,
        key: &str,
        name: &str,
        kind: &str,
        aliases: &[(String, String)],
        created: &mut Vec<i64>,
        now: i64,
    ) -> Result<i64> {
        let existing: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT id FROM entities WHERE tenant_id = ?1 AND key = ?2
                 UNION ALL
                 SELECT entity_id FROM entity_aliases WHERE tenant_id = ?1 AND alias_key = ?2
                 LIMIT 1",
            )?
            .query_row(params![self.tenant_id, key], |r| r.get(0))
            .optional()?;
        let merged = match existing {
            Some(_) => None,
            None => self.merge_target(key, name, kind, created, now)?,
        };
        let id = match existing.or(merged) {
            Some(id) => id,
            None => {
                self.exec(
                    "INSERT INTO entities(tenant_id, key, name, kind, first_seen, last_seen)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                    params![self.tenant_id, key, name, kind, now],
                )?;
                let id = self.conn.last_insert_rowid();
                self.index_entity_name(id, key, name, kind)?;
                created.push(id);
                id
            }
        };
        for (alias_key, alias) in aliases {
            self.exec(
                "INSERT OR IGNORE INTO entity_aliases(tenant_id, alias_key, alias, entity_id)
                 VALUES (?1, ?2, ?3, ?4)",
                params![self.tenant_id, alias_key, alias, id],
            )?;
        }
        Ok(id)
    }

    fn refresh_confidence(&mut self, relation: i64) -> Result<()> {
        let counts: [i64; 6] = self
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
            })?;
        let (alpha, beta) = beta_from_counts(counts);
        self.exec(
            "UPDATE relations SET alpha = ?2, beta = ?3 WHERE id = ?1",
            params![relation, alpha, beta],
        )?;
        Ok(())
    }

    /// Removes a document's contributions to the graph (before its chunks
    /// are deleted): its relation evidence (relations left without
    /// evidence go; the others' confidence is recomputed), its mentions,
    /// and entities no longer mentioned anywhere.
    pub(super) fn forget_graph(&mut self, document_key: i64) -> Result<()> {
        let evidence: Vec<(i64, bool, String)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT relation_id, supports, provenance FROM relation_evidence WHERE document_id = ?1",
            )?;
            let rows = stmt.query_map([document_key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        if evidence.is_empty() && !self.has_mentions(document_key)? {
            return Ok(());
        }
        self.exec(
            "DELETE FROM relation_evidence WHERE document_id = ?1",
            [document_key],
        )?;
        for (relation, supports, provenance) in evidence {
            let column = counter(supports, Provenance::parse(Some(&provenance)));
            self.exec(
                &format!("UPDATE relations SET {column} = max({column} - 1, 0) WHERE id = ?1"),
                [relation],
            )?;
            let remaining: i64 = self.conn.query_row(
                "SELECT count(*) FROM relation_evidence WHERE relation_id = ?1",
                [relation],
                |r| r.get(0),
            )?;
            if remaining == 0 {
                self.restore_superseded(relation)?;
                self.exec("DELETE FROM relations WHERE id = ?1", [relation])?;
            } else {
                self.refresh_confidence(relation)?;
            }
        }
        // Only the entities this document mentions can change count: a
        // recount of the whole tenant would make forgetting (and a
        // retention sweep of many documents) quadratic.
        let touched: Vec<i64> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT DISTINCT m.entity_id FROM chunks c JOIN mentions m ON m.chunk_id = c.id
                  WHERE c.document_id = ?1",
            )?;
            let rows = stmt.query_map([document_key], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        self.exec(
            "DELETE FROM mentions WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?1)",
            [document_key],
        )?;
        for entity in touched {
            self.exec(
                "UPDATE entities SET mention_count =
                        (SELECT count(*) FROM mentions m WHERE m.entity_id = ?1)
                  WHERE id = ?1",
                [entity],
            )?;
            self.delete_if_unmentioned(entity)?;
        }
        // Summaries may quote the forgotten document (its entities, its
        // facts): drop every snapshot; the next build starts from what is
        // left.
        self.exec(
            "DELETE FROM communities WHERE tenant_id = ?1",
            [self.tenant_id],
        )?;
        self.exec(
            "UPDATE tenants SET communities_version = -1 WHERE id = ?1",
            [self.tenant_id],
        )?;
        self.exec(
            "UPDATE tenants SET graph_version = graph_version + 1 WHERE id = ?1",
            [self.tenant_id],
        )?;
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

/// A stored entity.
#[derive(Debug, Clone)]
pub struct EntityRow {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub kind: String,
    pub mention_count: i64,
}

/// A stored relation with its names resolved.
#[derive(Debug, Clone)]
pub struct RelationRow {
    pub id: i64,
    pub subject_id: i64,
    pub subject: String,
    pub predicate: String,
    pub object_id: i64,
    pub object: String,
    pub pattern: bool,
    pub alpha: f64,
    pub beta: f64,
    pub valid_to: Option<i64>,
    pub last_evidence_at: i64,
    /// Best provenance among its supporting evidence.
    pub provenance: &'static str,
    /// A chunk holding supporting evidence, with the span.
    pub evidence_chunk: Option<(i64, i64, i64)>,
    /// What found that evidence: `rules`, `llm` or `declared`.
    pub extractor: &'static str,
}

impl TenantReader<'_> {
    /// Entities whose key or alias key is one of `keys`.
    pub fn entities_by_keys(&self, keys: &[String]) -> Result<Vec<EntityRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            // A UNION, not `key = ? OR id IN (...)`: SQLite cannot use the
            // key index for that OR and would scan the tenant's entities.
            "SELECT e.id, e.key, e.name, e.kind, e.mention_count FROM entities e
              WHERE e.tenant_id = ?1 AND e.key = ?2
             UNION
             SELECT e.id, e.key, e.name, e.kind, e.mention_count
               FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
              WHERE a.tenant_id = ?1 AND a.alias_key = ?2",
        )?;
        let mut out: Vec<EntityRow> = Vec::new();
        for k in keys {
            let rows = stmt.query_map(params![tenant_id, k], |r| {
                Ok(EntityRow {
                    id: r.get(0)?,
                    key: r.get(1)?,
                    name: r.get(2)?,
                    kind: r.get(3)?,
                    mention_count: r.get(4)?,
                })
            })?;
            for row in rows {
                let row = row?;
                if !out.iter().any(|e| e.id == row.id) {
                    out.push(row);
                }
            }
        }
        Ok(out)
    }

    /// Relations touching an entity (either end), strongest first.
    pub fn relations_of(
        &self,
        entity_id: i64,
        include_history: bool,
        limit: usize,
    ) -> Result<Vec<RelationRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        // The limit is in the SQL, not bound (see `keyword_search`).
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT r.id, r.subject_id, s.name, r.label, r.object_id, o.name, r.kind = 'pattern',
                    r.alpha, r.beta, r.valid_to, r.last_evidence_at,
                    CASE WHEN r.support_external > 0 THEN 'external'
                         WHEN r.support_user > 0 THEN 'user' ELSE 'agent' END,
                    (SELECT chunk_id FROM relation_evidence ev WHERE ev.relation_id = r.id AND ev.supports
                      ORDER BY ev.at DESC, ev.document_id DESC LIMIT 1),
                    (SELECT byte_start FROM relation_evidence ev WHERE ev.relation_id = r.id AND ev.supports
                      ORDER BY ev.at DESC, ev.document_id DESC LIMIT 1),
                    (SELECT byte_end FROM relation_evidence ev WHERE ev.relation_id = r.id AND ev.supports
                      ORDER BY ev.at DESC, ev.document_id DESC LIMIT 1),
                    (SELECT extractor FROM relation_evidence ev WHERE ev.relation_id = r.id AND ev.supports
                      ORDER BY ev.at DESC, ev.document_id DESC LIMIT 1)
               FROM relations r JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id
              -- Each end through its own index (an OR of the two would
              -- scan the tenant's relations); `+` keeps the tenant check a
              -- filter. Entity ids are global, so the object side needs no
              -- tenant term to use its index.
              WHERE r.id IN (SELECT id FROM relations WHERE tenant_id = ?1 AND subject_id = ?2
                             UNION ALL
                             SELECT id FROM relations WHERE object_id = ?2)
                AND +r.tenant_id = ?1
                AND (?3 OR r.valid_to IS NULL)
              ORDER BY r.kind = 'pattern' DESC, r.alpha / (r.alpha + r.beta) DESC, r.last_evidence_at DESC
              LIMIT {limit}",
        ))?;
        let rows = stmt.query_map(params![tenant_id, entity_id, include_history], |r| {
            let chunk: Option<i64> = r.get(12)?;
            Ok(RelationRow {
                id: r.get(0)?,
                subject_id: r.get(1)?,
                subject: r.get(2)?,
                predicate: r.get(3)?,
                object_id: r.get(4)?,
                object: r.get(5)?,
                pattern: r.get(6)?,
                alpha: r.get(7)?,
                beta: r.get(8)?,
                valid_to: r.get(9)?,
                last_evidence_at: r.get(10)?,
                provenance: match r.get::<_, String>(11)?.as_str() {
                    "external" => "external",
                    "user" => "user",
                    _ => "agent",
                },
                evidence_chunk: match chunk {
                    Some(c) => Some((c, r.get(13)?, r.get(14)?)),
                    None => None,
                },
                extractor: match r.get::<_, Option<String>>(15)?.as_deref() {
                    Some("llm") => "llm",
                    Some("declared") => "declared",
                    _ => "rules",
                },
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Chunks mentioning an entity, newest first.
    pub fn chunks_mentioning(&self, entity_id: i64, limit: usize) -> Result<Vec<i64>> {
        // The limit is in the SQL, not bound (see `keyword_search`).
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT DISTINCT chunk_id FROM mentions WHERE entity_id = ?1 ORDER BY chunk_id DESC LIMIT {limit}",
        ))?;
        let rows = stmt.query_map(params![entity_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The current graph version (changes whenever the graph does).
    pub fn graph_version(&self) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        Ok(self
            .conn
            .prepare_cached("SELECT graph_version FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| r.get(0))?)
    }

    /// Entity and relation counts.
    pub fn graph_counts(&self) -> Result<(i64, i64)> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok((0, 0));
        };
        Ok(self.conn.query_row(
            "SELECT (SELECT count(*) FROM entities WHERE tenant_id = ?1),
                    (SELECT count(*) FROM relations WHERE tenant_id = ?1 AND kind = 'pattern')",
            [tenant_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{remember, temp_store};
    use crate::store::{Store, Tenant};

    fn store() -> (std::path::PathBuf, Store) {
        temp_store("alayasiki-graph")
    }

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
        let (dir, store) = store();
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
    fn a_new_value_of_a_functional_predicate_supersedes_the_old_one() {
        let (dir, store) = store();
        let t = Tenant::new("t").unwrap();
        remember(&store, &t, "Dana Scully works at Acme.", "user");
        remember(&store, &t, "Dana Scully works at Initech.", "user");
        let r = store.reader(&t).unwrap();
        let dana = r.entities_by_keys(&["dana scully".into()]).unwrap();
        let rels = r.relations_of(dana[0].id, true, 50).unwrap();
        let at = |org: &str| {
            rels.iter()
                .find(|x| x.predicate == "works at" && x.object.contains(org))
                .cloned()
        };
        let old = at("Acme").expect("history kept");
        let new = at("Initech").expect("new fact");
        assert!(old.valid_to.is_some(), "the old fact is superseded");
        assert!(new.valid_to.is_none());
        let current = r.relations_of(dana[0].id, false, 50).unwrap();
        assert!(
            current.iter().all(|x| x.id != old.id),
            "history is excluded unless asked for"
        );
        drop(r);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn forgetting_the_newer_fact_makes_the_older_one_current_again() {
        let (dir, store) = store();
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

    #[test]
    fn counters_give_the_same_beta_as_the_evidence_list() {
        assert_eq!(beta_from_counts([0; 6]), (1.0, 1.0));
        let (a, b) = beta_from_counts([0, 0, 20, 1, 0, 0]);
        assert!(a / (a + b) < 0.5);
    }
}
