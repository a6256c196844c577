//! Writing one document's graph fragment: its entities (found by key or
//! alias, merged with a stored one by name, or new), its mentions, and its
//! relations with one piece of evidence each, settling which value of a
//! single-valued fact holds (`facts`).

use rusqlite::{params, OptionalExtension};
use std::collections::HashSet;

use super::evidence::{beta_from_counts, counter, counter_index};
use super::numbering::Numbered;
use crate::error::Result;
use crate::knowledge::confidence::Provenance;
use crate::knowledge::facts::{single_valued, Holder};
use crate::knowledge::fragment::{predicate_key, Fragment, FragmentEntity, FragmentRelation};
use crate::store::name_hints::{NameAnswer, NameHints};
use crate::store::tenant::{TenantCount, TenantWriter};

impl TenantWriter<'_> {
    /// Records a document's graph fragment: `chunk_keys[i]` is the stored
    /// key of the document's chunk `i`. Returns whether the graph changed.
    ///
    /// `hints`, when given, are the fragment's names as a read snapshot
    /// resolved them; each is used only where the writer can tell that a
    /// look-up now would answer the same (see `store::name_hints`).
    pub(in crate::store) fn record_graph(
        &mut self,
        document_key: i64,
        chunk_keys: &[i64],
        fragment: &Fragment,
        hints: Option<&NameHints>,
        provenance: Provenance,
        now: i64,
    ) -> Result<bool> {
        if fragment.entities.is_empty() {
            return Ok(false);
        }
        self.begin_graph_write()?;
        let hints = hints.filter(|h| h.names.len() == fragment.entities.len());
        // A mention counts once however many extractors found it (the LLM's
        // mentions are often the rule-based ones again). A new entity is
        // written with its count; only a count that turns out otherwise
        // (a span another name of the fragment took first) is corrected.
        let mut spans: HashSet<(usize, usize, usize)> = HashSet::new();
        let mut distinct = vec![0i64; fragment.entities.len()];
        for m in &fragment.mentions {
            if spans.insert((m.entity, m.chunk, m.start)) {
                distinct[m.entity] += 1;
            }
        }
        let mut ids = Vec::with_capacity(fragment.entities.len());
        let mut counted = vec![None; fragment.entities.len()];
        let mut created = Vec::new();
        for (i, e) in fragment.entities.iter().enumerate() {
            let kind = e.kind.as_str();
            let hint = hints.and_then(|h| self.trusted(h, i, e));
            let before = created.len();
            let id = self.resolve_entity(e, kind, hint, distinct[i], &mut created, now)?;
            if created.len() > before {
                counted[i] = Some(distinct[i]);
            }
            ids.push(id);
        }
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
        for ((id, added), counted) in ids.iter().zip(added).zip(counted) {
            if counted == Some(added) {
                continue;
            }
            // The new count is bound, not added in the statement: run
            // again on a replica, it leaves the same count.
            let count: i64 = self
                .conn
                .prepare_cached("SELECT mention_count FROM entities WHERE id = ?1")?
                .query_row([id], |r| r.get(0))?;
            self.exec(
                "UPDATE entities SET mention_count = ?2, last_seen = ?3 WHERE id = ?1",
                params![id, count + added - counted.unwrap_or(0), now],
            )?;
        }
        // Relations of an entity this call created can only be ones this
        // call inserted: they are looked up here, not in the store.
        let mut inserted_here: HashSet<(i64, String, i64, &str)> = HashSet::new();
        let mut facts: Vec<(i64, &'static str)> = Vec::new();
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
            let fresh = created.contains(&subject) || created.contains(&object);
            if fresh && !inserted_here.insert((subject, predicate.clone(), object, kind)) {
                // This document's evidence is recorded: one document gives a
                // relation one piece of evidence (see below).
                continue;
            }
            let found: Option<(i64, [i64; 6])> = if fresh {
                None
            } else {
                self.conn
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
                    .optional()?
            };
            match found {
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
                    let at = counter_index(supports, provenance);
                    counts[at] += 1;
                    let (alpha, beta) = beta_from_counts(counts);
                    self.exec(
                        &format!(
                            "UPDATE relations SET {column} = ?5, last_evidence_at = ?2,
                                    alpha = ?3, beta = ?4 WHERE id = ?1"
                        ),
                        params![relation, now, alpha, beta, counts[at]],
                    )?;
                }
                None => {
                    let mut counts = [0i64; 6];
                    counts[counter_index(supports, provenance)] = 1;
                    let (alpha, beta) = beta_from_counts(counts);
                    let relation = self.new_graph_key(Numbered::Relations)?;
                    self.conn.insert_new(
                        &format!(
                            "INSERT INTO relations(tenant_id, subject_id, predicate, label, object_id,
                                    kind, valid_from, last_evidence_at, {column}, alpha, beta, id)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, 1, ?8, ?9, ?10)
                             ON CONFLICT DO NOTHING"
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
                            beta,
                            relation
                        ],
                    )?;
                    self.insert_evidence(
                        relation,
                        document_key,
                        chunk_keys[r.chunk],
                        r,
                        provenance,
                        now,
                    )?;
                }
            }
            if r.pattern {
                let kind = |i: usize| fragment.entities[i].kind;
                if let Some(f) = single_valued(&r.predicate, kind(r.subject), kind(r.object)) {
                    let holder = match f.holder {
                        Holder::Subject => subject,
                        Holder::Object => object,
                    };
                    if !facts.contains(&(holder, f.family)) {
                        facts.push((holder, f.family));
                    }
                }
            }
        }
        // Which value of a single-valued fact holds is settled once the
        // document's statements are all recorded, by document time (see
        // `facts`), not by the order they were stored in.
        for (holder, family) in facts {
            self.settle_fact(holder, family)?;
        }
        self.add_to_tenant_count(TenantCount::GraphVersion, 1)?;
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

    /// The hint for entity `i` of a fragment if a look-up now would
    /// answer the same: nothing the look-up reads was written since the
    /// hint's snapshot.
    fn trusted(&self, hints: &NameHints, i: usize, e: &FragmentEntity) -> Option<NameAnswer> {
        let hint = hints.names[i].as_ref()?;
        self.names
            .unchanged_since(
                self.tenant_id,
                hints.graph_version,
                &e.key,
                &hint.open_terms,
            )
            .then_some(hint.answer)
    }

    /// The entity with the fragment entity's key, or the one that has it
    /// as an alias, or the one stored entity (not in `created`, this
    /// document's new entities) it is another name of (see
    /// `store::resolution`), or a new one with `mentions` mentions, added
    /// to `created`; the fragment's aliases are registered for it. A
    /// trusted `hint` stands for the look-ups.
    fn resolve_entity(
        &mut self,
        e: &FragmentEntity,
        kind: &str,
        hint: Option<NameAnswer>,
        mentions: i64,
        created: &mut Vec<i64>,
        now: i64,
    ) -> Result<i64> {
        let answer = match hint {
            Some(answer) => answer,
            None => NameAnswer::look_up(
                self.resolver,
                self.conn.raw(),
                self.tenant_id,
                e,
                created,
                None,
            )?,
        };
        let (existing, merged) = match answer {
            NameAnswer::Stored(id) => (Some(id), None),
            NameAnswer::Merge(id, evidence) => (None, Some((id, evidence))),
            NameAnswer::New => (None, None),
        };
        if let Some(merge) = merged {
            self.record_merge(&e.key, &e.name, kind, merge, now)?;
        }
        let id = match existing.or(merged.map(|m| m.0)) {
            Some(id) => id,
            None => {
                let id = self.new_graph_key(Numbered::Entities)?;
                self.conn.insert_new(
                    "INSERT INTO entities(id, tenant_id, key, name, kind, mention_count,
                                          first_seen, last_seen)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) ON CONFLICT DO NOTHING",
                    params![id, self.tenant_id, e.key, e.name, kind, mentions, now],
                )?;
                self.names.wrote_key(self.tenant_id, &e.key);
                self.index_entity_name(id, &e.key, &e.name, kind)?;
                created.push(id);
                id
            }
        };
        for (alias_key, alias) in &e.aliases {
            self.exec(
                "INSERT OR IGNORE INTO entity_aliases(tenant_id, alias_key, alias, entity_id)
                 VALUES (?1, ?2, ?3, ?4)",
                params![self.tenant_id, alias_key, alias, id],
            )?;
            self.names.wrote_key(self.tenant_id, alias_key);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::{remember, temp_store, tenant_rows};
    use crate::store::Tenant;

    #[test]
    fn a_new_value_of_a_functional_predicate_supersedes_the_old_one() {
        let (dir, store) = temp_store("alayasiki-graph");
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
    fn a_new_entity_s_relations_are_written_once_per_document_and_still_supersede() {
        let (dir, store) = temp_store("alayasiki-graph");
        let t = Tenant::new("t").unwrap();
        // Every name is new: its relations are not looked up in the store.
        remember(
            &store,
            &t,
            "Fox Mulder works at Acme. Fox Mulder met Dana Scully. \
             Fox Mulder met Dana Scully. Fox Mulder works at Initech.",
            "user",
        );
        let r = store.reader(&t).unwrap();
        let fox = r.entities_by_keys(&["fox mulder".into()]).unwrap();
        let rels = r.relations_of(fox[0].id, true, 50).unwrap();
        let met: Vec<_> = rels
            .iter()
            .filter(|x| x.predicate == "met" && x.object.contains("Scully"))
            .collect();
        assert_eq!(met.len(), 1, "{rels:?}");
        let works = |org: &str| {
            rels.iter()
                .find(|x| x.predicate == "works at" && x.object.contains(org))
                .unwrap_or_else(|| panic!("{org}: {rels:?}"))
        };
        assert!(
            works("Acme").valid_to.is_some(),
            "superseded in the same document"
        );
        assert!(works("Initech").valid_to.is_none());
        // Said twice, supported once: one document gives one piece of
        // evidence, like the once-said fact beside it.
        let once = works("Initech");
        assert_eq!((met[0].alpha, met[0].beta), (once.alpha, once.beta));
        drop(r);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn every_entity_counts_the_mentions_stored_for_it() {
        let (dir, store) = temp_store("alayasiki-graph");
        let t = Tenant::new("t").unwrap();
        // New and known names, said once and more than once.
        remember(&store, &t, "Dana Scully met Fox Mulder at Acme.", "user");
        remember(
            &store,
            &t,
            "Fox Mulder called Dana Scully. Walter Skinner met Fox Mulder. \
             Walter Skinner works at Acme.",
            "user",
        );
        let counts: Vec<(String, i64, i64)> = tenant_rows(
            &store,
            &t,
            "SELECT e.name, e.mention_count,
                    (SELECT count(*) FROM mentions m WHERE m.entity_id = e.id)
               FROM entities e WHERE e.tenant_id = ?1",
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        );
        assert!(
            counts.iter().any(|e| e.0 == "Fox Mulder" && e.1 == 3),
            "{counts:?}"
        );
        assert!(counts.iter().all(|e| e.1 == e.2), "{counts:?}");
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }
}
