//! The graph as the memory browser reads it: entities by mentions or by a
//! piece of a name, one entity with its relations and their evidence, and
//! the neighbourhood of an entity for an interactive view.
//!
//! Every statement binds the reader's tenant, and what a relation shows is
//! limited to evidence in documents a reader could see (retention), as the
//! community builder's input is ([`TenantReader::graph_input`]).

use rusqlite::{params, OptionalExtension};

use super::read::EntityRow;
use crate::error::Result;
use crate::store::chunks::chunk_text_beside;
use crate::store::tenant::{TenantReader, SEEN, VISIBLE};

/// An entity with when it was first and last mentioned (Unix ms).
#[derive(Debug, Clone)]
pub struct EntityDetail {
    pub entity: EntityRow,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// A relation touching an entity, seen from that entity.
#[derive(Debug, Clone)]
pub struct EntityRelation {
    pub id: i64,
    /// True when the entity is the relation's subject.
    pub outgoing: bool,
    pub label: String,
    /// The entity at the other end.
    pub other: EntityRow,
    pub alpha: f64,
    pub beta: f64,
    /// Documents supporting it and contradicting it.
    pub support: i64,
    pub contradict: i64,
    pub valid_from: i64,
    pub valid_to: Option<i64>,
    /// The relation whose statement replaced this one (a fact that holds
    /// one value at a time).
    pub superseded_by: Option<i64>,
}

/// One document's evidence for or against a relation.
#[derive(Debug, Clone)]
pub struct RelationEvidence {
    pub doc_id: String,
    /// The chunk holding the span, when it is still stored: ordinal,
    /// start of the chunk in the document, its text.
    pub chunk: Option<(i64, i64, String)>,
    /// Span in the document's extracted text.
    pub start: i64,
    pub end: i64,
    pub provenance: String,
    pub supports: bool,
}

/// An edge of the neighbourhood view: a current relation.
#[derive(Debug, Clone)]
pub struct GraphEdge {
    pub id: i64,
    pub subject_id: i64,
    pub object_id: i64,
    pub label: String,
    pub alpha: f64,
    pub beta: f64,
}

/// Relations of the entity `?2`, either end, through each end's own index
/// (as in `relations_of`); the tenant check stays a filter.
const TOUCHING: &str = "r.id IN (SELECT id FROM relations WHERE tenant_id = ?1 AND subject_id = ?2
                                 UNION ALL
                                 SELECT id FROM relations WHERE object_id = ?2)
     AND +r.tenant_id = ?1";

/// A relation `r` has evidence in a document a reader can see.
const EVIDENCED: &str =
    "EXISTS (SELECT 1 FROM relation_evidence ev CROSS JOIN documents d ON d.id = ev.document_id
                WHERE ev.relation_id = r.id AND {VISIBLE})";

fn evidenced() -> String {
    EVIDENCED.replace("{VISIBLE}", VISIBLE)
}

/// The mention count of an entity aliased `alias` as the handle sees it:
/// the stored count for the whole tenant, else its mentions in documents
/// the handle sees (a count must not tell a scoped caller about documents
/// it cannot see).
fn mentions_seen(alias: &str) -> String {
    format!(
        "(CASE WHEN NOT EXISTS (SELECT 1 FROM temp.sight) THEN {alias}.mention_count
          ELSE (SELECT count(*) FROM mentions m CROSS JOIN chunks c ON c.id = m.chunk_id
                                CROSS JOIN documents d ON d.id = c.document_id
                 WHERE m.entity_id = {alias}.id AND {SEEN}) END)"
    )
}

/// How many documents support (`supports`) or contradict a relation `r`,
/// as the handle sees it: the stored counts for the whole tenant, else its
/// evidence in documents the handle sees.
fn evidence_seen(supports: bool) -> String {
    let (stored, flag) = if supports {
        ("r.support_external + r.support_user + r.support_agent", 1)
    } else {
        ("r.contra_external + r.contra_user + r.contra_agent", 0)
    };
    format!(
        "(CASE WHEN NOT EXISTS (SELECT 1 FROM temp.sight) THEN {stored}
          ELSE (SELECT count(*) FROM relation_evidence ev CROSS JOIN documents d
                                ON d.id = ev.document_id
                 WHERE ev.relation_id = r.id AND ev.supports = {flag} AND {SEEN}) END)"
    )
}

/// An entity aliased `e` is about a document the handle sees (always, for
/// the whole tenant): a mention in one, or evidence there of a relation
/// touching it.
fn entity_seen() -> String {
    format!(
        "(NOT EXISTS (SELECT 1 FROM temp.sight)
          OR EXISTS (SELECT 1 FROM mentions m CROSS JOIN chunks c ON c.id = m.chunk_id
                              CROSS JOIN documents d ON d.id = c.document_id
                      WHERE m.entity_id = e.id AND {SEEN})
          OR EXISTS (SELECT 1 FROM relations r CROSS JOIN relation_evidence ev ON ev.relation_id = r.id
                              CROSS JOIN documents d ON d.id = ev.document_id
                      WHERE r.id IN (SELECT id FROM relations WHERE tenant_id = e.tenant_id AND subject_id = e.id
                                     UNION ALL SELECT id FROM relations WHERE object_id = e.id)
                        AND {SEEN}))"
    )
}

/// The order relations are shown in: current before superseded, pattern
/// relations before co-occurrences, then by confidence; the id breaks ties.
const STRONGEST_FIRST: &str = "r.valid_to IS NULL DESC, r.kind = 'pattern' DESC,
     r.alpha / (r.alpha + r.beta) DESC, r.last_evidence_at DESC, r.id";

/// `%text%` for `LIKE … ESCAPE '\'`, matching `text` literally.
fn like_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

impl TenantReader<'_> {
    /// The `limit` most mentioned entities (the id breaks ties).
    pub fn top_entities(&self, limit: usize) -> Result<Vec<EntityRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT e.id, e.key, e.name, e.kind, {} FROM entities e
              WHERE e.tenant_id = ?1 AND {}
              ORDER BY 5 DESC, e.id LIMIT ?2",
            mentions_seen("e"),
            entity_seen()
        ))?;
        let rows = stmt.query_map(params![tenant_id, limit as i64], EntityRow::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Entities whose name, key or an alias contains `text` (ASCII letters
    /// compared without case), most mentioned first.
    pub fn entities_matching(&self, text: &str, limit: usize) -> Result<Vec<EntityRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        // Keys are lower case: the text is too, so a non-ASCII capital
        // (which LIKE compares exactly) still finds the key.
        let pattern = like_pattern(&text.to_lowercase());
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT e.id, e.key, e.name, e.kind, {} FROM entities e
              WHERE e.tenant_id = ?1
                AND (e.key LIKE ?2 ESCAPE '\\' OR e.name LIKE ?2 ESCAPE '\\'
                     OR e.id IN (SELECT a.entity_id FROM entity_aliases a
                                  WHERE a.tenant_id = ?1
                                    AND (a.alias LIKE ?2 ESCAPE '\\'
                                         OR a.alias_key LIKE ?2 ESCAPE '\\')))
                AND {}
              ORDER BY 5 DESC, e.id LIMIT ?3",
            mentions_seen("e"),
            entity_seen()
        ))?;
        let rows = stmt.query_map(
            params![tenant_id, pattern, limit as i64],
            EntityRow::from_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The entity with store id `id`, if this tenant has it.
    pub fn entity(&self, id: i64) -> Result<Option<EntityDetail>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT e.id, e.key, e.name, e.kind, {}, e.first_seen, e.last_seen
                   FROM entities e WHERE e.id = ?1 AND e.tenant_id = ?2 AND {}",
                mentions_seen("e"),
                entity_seen()
            ))?
            .query_row(params![id, tenant_id], |r| {
                Ok(EntityDetail {
                    entity: EntityRow::from_row(r)?,
                    first_seen: r.get(5)?,
                    last_seen: r.get(6)?,
                })
            })
            .optional()?)
    }

    /// The entities among `ids` this tenant has, in the order given.
    pub fn entities_by_ids(&self, ids: &[i64]) -> Result<Vec<EntityRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT e.id, e.key, e.name, e.kind, {} FROM entities e
              WHERE e.id = ?1 AND e.tenant_id = ?2 AND {}",
            mentions_seen("e"),
            entity_seen()
        ))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.extend(
                stmt.query_row(params![id, tenant_id], EntityRow::from_row)
                    .optional()?,
            );
        }
        Ok(out)
    }

    /// Up to `limit` other names of an entity, in alphabetical order.
    pub fn aliases_of(&self, entity_id: i64, limit: usize) -> Result<Vec<String>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT alias FROM entity_aliases WHERE entity_id = ?1 AND tenant_id = ?2
              ORDER BY alias LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![entity_id, tenant_id, limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Up to `limit` relations touching an entity, superseded ones
    /// included, strongest first; only those with visible evidence.
    pub fn entity_relations(&self, entity_id: i64, limit: usize) -> Result<Vec<EntityRelation>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT r.id, r.subject_id = ?2, r.label, r.alpha, r.beta,
                    {}, {},
                    r.valid_from, r.valid_to,
                    o.id, o.key, o.name, o.kind, {}, r.superseded_by
               FROM relations r
               JOIN entities o
                 ON o.id = CASE WHEN r.subject_id = ?2 THEN r.object_id ELSE r.subject_id END
              WHERE {TOUCHING} AND {}
              ORDER BY {STRONGEST_FIRST}
              LIMIT ?10",
            evidence_seen(true),
            evidence_seen(false),
            mentions_seen("o"),
            evidenced()
        ))?;
        let v = self.visible;
        let rows = stmt.query_map(
            params![
                tenant_id,
                entity_id,
                0,
                0,
                0,
                0,
                0,
                v.now,
                v.since,
                limit as i64
            ],
            |r| {
                Ok(EntityRelation {
                    id: r.get(0)?,
                    outgoing: r.get(1)?,
                    label: r.get(2)?,
                    alpha: r.get(3)?,
                    beta: r.get(4)?,
                    support: r.get(5)?,
                    contradict: r.get(6)?,
                    valid_from: r.get(7)?,
                    valid_to: r.get(8)?,
                    superseded_by: r.get(14)?,
                    other: EntityRow {
                        id: r.get(9)?,
                        key: r.get(10)?,
                        name: r.get(11)?,
                        kind: r.get(12)?,
                        mention_count: r.get(13)?,
                    },
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Up to `limit` documents' evidence for a relation of this tenant,
    /// newest first, only from visible documents.
    pub fn relation_evidence(
        &self,
        relation_id: i64,
        limit: usize,
    ) -> Result<Vec<RelationEvidence>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        // The chunk, when there is one, is of document `d`.
        let text = chunk_text_beside("c", "d");
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT d.doc_id, c.ordinal, c.byte_start, {text}, ev.byte_start, ev.byte_end,
                    ev.provenance, ev.supports
               FROM relation_evidence ev
               CROSS JOIN documents d ON d.id = ev.document_id
               LEFT JOIN chunks c ON c.id = ev.chunk_id AND c.document_id = ev.document_id
              WHERE ev.relation_id = ?1 AND d.tenant_id = ?2 AND {VISIBLE}
              ORDER BY ev.at DESC, ev.document_id DESC
              LIMIT ?10"
        ))?;
        let v = self.visible;
        let rows = stmt.query_map(
            params![
                relation_id,
                tenant_id,
                0,
                0,
                0,
                0,
                0,
                v.now,
                v.since,
                limit as i64
            ],
            |r| {
                let ordinal: Option<i64> = r.get(1)?;
                Ok(RelationEvidence {
                    doc_id: r.get(0)?,
                    chunk: match ordinal {
                        Some(o) => Some((o, r.get(2)?, r.get(3)?)),
                        None => None,
                    },
                    start: r.get(4)?,
                    end: r.get(5)?,
                    provenance: r.get(6)?,
                    supports: r.get(7)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The entities at the other end of up to `limit` current relations of
    /// an entity, strongest relation first (an entity once per relation).
    pub fn neighbours(&self, entity_id: i64, limit: usize) -> Result<Vec<i64>> {
        let sql = format!(
            "SELECT r.id, CASE WHEN r.subject_id = ?2 THEN r.object_id ELSE r.subject_id END
               FROM relations r
              WHERE {TOUCHING} AND r.valid_to IS NULL AND {{evidenced}}
              ORDER BY {STRONGEST_FIRST}
              LIMIT ?10"
        );
        self.first_evidenced(&sql, entity_id, limit, |r| Ok((r.get(0)?, r.get(1)?)))
    }

    /// Up to `limit` current relations whose subject is `subject_id`, with
    /// visible evidence, strongest first: the candidates for the edges
    /// of a neighbourhood view (the caller keeps those whose object is
    /// also in the view).
    pub fn edges_from(&self, subject_id: i64, limit: usize) -> Result<Vec<GraphEdge>> {
        let sql = format!(
            "SELECT r.id, r.subject_id, r.object_id, r.label, r.alpha, r.beta
               FROM relations r
              WHERE r.tenant_id = ?1 AND r.subject_id = ?2 AND r.valid_to IS NULL
                AND {{evidenced}}
              ORDER BY {STRONGEST_FIRST}
              LIMIT ?10"
        );
        self.first_evidenced(&sql, subject_id, limit, |r| {
            let id = r.get(0)?;
            Ok((
                id,
                GraphEdge {
                    id,
                    subject_id: r.get(1)?,
                    object_id: r.get(2)?,
                    label: r.get(3)?,
                    alpha: r.get(4)?,
                    beta: r.get(5)?,
                },
            ))
        })
    }

    /// The first `limit` rows of `sql` (relations, strongest first; `?1`
    /// the tenant, `?2` `key`, `?10` the limit, `{evidenced}` where the
    /// evidence check goes) whose relation has evidence the reader can
    /// see. The check is what costs (a hub entity at 100k documents has
    /// thousands of relations, each checked before sorting), and evidence
    /// is hidden only by retention: so the ordered candidates are read
    /// without it, [`EVIDENCE_PROBE_FACTOR`] per row wanted, and checked
    /// one by one; only when too many lack visible evidence does the whole
    /// query run with the check.
    fn first_evidenced<T>(
        &self,
        sql: &str,
        key: i64,
        limit: usize,
        row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<(i64, T)>,
    ) -> Result<Vec<T>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let v = self.visible;
        let run = |sql: &str, limit: usize| -> Result<Vec<(i64, T)>> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let rows = stmt.query_map(
                params![tenant_id, key, 0, 0, 0, 0, 0, v.now, v.since, limit as i64],
                &row,
            )?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let probe = limit.saturating_mul(EVIDENCE_PROBE_FACTOR).max(limit + 8);
        let candidates = run(&sql.replace("{evidenced}", "1"), probe)?;
        let exhausted = candidates.len() < probe;
        let mut check = self.conn.prepare_cached(&format!(
            "SELECT {}",
            evidenced().replace("ev.relation_id = r.id", "ev.relation_id = ?1")
        ))?;
        let mut out = Vec::with_capacity(limit);
        for (relation, value) in candidates {
            if out.len() == limit {
                return Ok(out);
            }
            let seen: bool = check
                .query_row(params![relation, 0, 0, 0, 0, 0, 0, v.now, v.since], |r| {
                    r.get(0)
                })?;
            if seen {
                out.push(value);
            }
        }
        if out.len() == limit || exhausted {
            return Ok(out);
        }
        let full = run(&sql.replace("{evidenced}", &evidenced()), limit)?;
        Ok(full.into_iter().map(|(_, value)| value).collect())
    }
}

/// Candidate relations read per row wanted before the evidence check (see
/// `TenantReader::first_evidenced`).
const EVIDENCE_PROBE_FACTOR: usize = 4;

#[cfg(test)]
mod tests {
    use super::like_pattern;
    use crate::store::test_support::{remember, temp_store};
    use crate::store::Tenant;

    #[test]
    fn another_tenants_entities_relations_and_evidence_are_not_found() {
        let (dir, store) = temp_store("alayasiki-browse");
        let (a, b) = (Tenant::new("a").unwrap(), Tenant::new("b").unwrap());
        remember(
            &store,
            &a,
            "Acme Corp. acquired Widgets Inc. in May.",
            "user",
        );
        remember(&store, &b, "Initech hired Peter Gibbons.", "user");
        let ra = store.reader(&a).unwrap();
        let acme = ra.entities_matching("acme", 5).unwrap().remove(0);
        let rels = ra.entity_relations(acme.id, 10).unwrap();
        let acquired = rels
            .iter()
            .find(|r| r.label == "acquired")
            .expect("acquired");
        assert!(acquired.outgoing && acquired.other.name == "Widgets Inc.");
        assert_eq!((acquired.support, acquired.contradict), (1, 0));
        assert_eq!(ra.relation_evidence(acquired.id, 5).unwrap().len(), 1);
        assert_eq!(ra.neighbours(acme.id, 5).unwrap().len(), rels.len());
        assert!(!ra.edges_from(acme.id, 5).unwrap().is_empty());
        drop(ra);
        let rb = store.reader(&b).unwrap();
        assert!(rb.entity(acme.id).unwrap().is_none());
        assert!(rb.entities_by_ids(&[acme.id]).unwrap().is_empty());
        assert!(rb.entity_relations(acme.id, 10).unwrap().is_empty());
        assert!(rb.relation_evidence(acquired.id, 5).unwrap().is_empty());
        assert!(rb.neighbours(acme.id, 5).unwrap().is_empty());
        assert!(rb.edges_from(acme.id, 5).unwrap().is_empty());
        assert!(rb.entities_matching("acme", 5).unwrap().is_empty());
        assert!(rb.aliases_of(acme.id, 5).unwrap().is_empty());
        let theirs: Vec<String> = rb
            .top_entities(10)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert!(theirs.contains(&"Initech".to_string()), "{theirs:?}");
        assert!(!theirs.contains(&"Acme Corp.".to_string()), "{theirs:?}");
        drop(rb);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    /// Stores `text` as `remember` does, but created now (so a retention
    /// period does not hide it).
    fn remember_now(store: &crate::store::Store, tenant: &Tenant, text: &str, provenance: &str) {
        use crate::knowledge::confidence::Provenance;
        use crate::store::test_support::{plain_document, prepare};
        let doc = crate::store::NewDocument {
            provenance: Some(provenance.into()),
            ..plain_document(text.as_bytes().to_vec())
        };
        let prepared = prepare(text);
        let now = crate::clock::now_ms();
        let p = Provenance::parse(Some(provenance));
        store
            .write(tenant, move |w| {
                let a = w.admit(doc, now)?;
                w.complete_job(a.job_id, a.document_key, prepared.indexed(), p, now)
            })
            .unwrap();
    }

    #[test]
    fn relations_whose_evidence_is_hidden_are_passed_over_past_the_first_candidates() {
        let (dir, store) = temp_store("alayasiki-browse-hidden");
        let t = Tenant::new("t").unwrap();
        // Twelve strong relations whose only evidence is old, and one weak
        // one stored now: with a retention period, only the weak one has
        // evidence a reader can see, and it ranks past every candidate the
        // fast path reads for one row (so the full query must find it).
        let names = [
            "Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Ginkgo", "Hazel", "Ivy",
            "Juniper", "Kapok", "Larch",
        ];
        for name in names {
            remember(
                &store,
                &t,
                &format!("Acme Corp. acquired {name} Inc."),
                "external",
            );
        }
        remember_now(&store, &t, "Acme Corp. acquired Zeta Labs Inc.", "agent");
        let acme = store
            .reader(&t)
            .unwrap()
            .entities_matching("acme corp", 1)
            .unwrap()[0]
            .id;
        let all = store.reader(&t).unwrap().edges_from(acme, 50).unwrap();
        assert!(all.len() >= 13, "{} relations", all.len());
        store.set_retention(Some(std::time::Duration::from_secs(3600)));
        let r = store.reader(&t).unwrap();
        let zeta = r.entities_matching("zeta labs", 1).unwrap()[0].id;
        let edges = r.edges_from(acme, 1).unwrap();
        assert_eq!(edges.len(), 1);
        assert_eq!(edges[0].object_id, zeta);
        assert_eq!(r.neighbours(acme, 1).unwrap(), vec![zeta]);
        // The same answer as the one query that checks every relation.
        let shown = r.entity_relations(acme, 50).unwrap();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].other.id, zeta);
        drop(r);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn like_patterns_match_their_text_literally() {
        assert_eq!(like_pattern("acme"), "%acme%");
        assert_eq!(like_pattern("50%_a\\b"), "%50\\%\\_a\\\\b%");
    }
}
