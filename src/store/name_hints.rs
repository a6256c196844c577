//! Names resolved ahead of the writer.
//!
//! Resolving a fragment's names (each entity's key against the stored keys
//! and aliases, and a new name against the name-term index for a merge)
//! was about a seventh of the single writer's time on entity-rich text.
//! The ingestion worker now does those look-ups in a read snapshot while
//! the writer is busy with the previous batch
//! ([`TenantReader::resolve_names`]) and hands the answers to the writer
//! as [`NameHints`], with the graph version the snapshot saw.
//!
//! The writer trusts an answer only if nothing it was derived from can
//! have changed since that version. It keeps a [`NameLog`]: per tenant,
//! which keys (entities' and aliases') and which name terms each graph
//! version wrote, as fingerprints. A name term that already had
//! `MAX_CANDIDATES_PER_TERM` entities in the snapshot needs no watching: a
//! look-up shows the lowest ids, and a new entity's id is higher than any
//! stored one. Anything that removes an entity or changes a kind, and a
//! rebuilt term index, discard a tenant's log; a hint older than the log
//! is not trusted. A distrusted hint costs the look-ups it was meant to
//! save, nothing more.
//!
//! Must never: let a hint decide what a look-up in the writer's
//! transaction would decide differently. Fingerprints may collide; a
//! collision only distrusts a hint. Rolled-back writes stay logged; that
//! too only distrusts hints.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::resolution::{merge_decision, stored_entity};
use super::tenant::TenantReader;
use crate::error::Result;
use crate::knowledge::fragment::{Fragment, FragmentEntity};
use crate::knowledge::resolution::{is_resolvable_kind, Evidence, NamePolicy, NAME_TERMS_VERSION};

/// Most fingerprints the log holds, all tenants together (about 2 MiB).
/// When full, every tenant's log starts again from the version it is
/// writing, so hints from older snapshots are then distrusted. About ten
/// per entity-rich document: thousands of documents, far more than are
/// ever prepared but not yet written.
pub const MAX_LOGGED_NAME_WRITES: usize = 1 << 16;

/// What one name of a fragment resolved to in a read snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NameAnswer {
    /// The stored entity with this key, or with it as an alias.
    Stored(i64),
    /// New to the tenant, and another name of this stored entity.
    Merge(i64, Evidence),
    /// New to the tenant, and no stored entity's other name.
    New,
}

impl NameAnswer {
    /// Looks `e`'s name up as the writer would: its key among the stored
    /// keys and aliases, else a merge into a stored entity not in
    /// `exclude` (see [`merge_decision`]; `open_terms` as there).
    pub(super) fn look_up(
        policy: &dyn NamePolicy,
        conn: &rusqlite::Connection,
        tenant_id: i64,
        e: &FragmentEntity,
        exclude: &[i64],
        open_terms: Option<&mut Vec<String>>,
    ) -> rusqlite::Result<NameAnswer> {
        if let Some(id) = stored_entity(conn, tenant_id, &e.key)? {
            return Ok(NameAnswer::Stored(id));
        }
        Ok(
            match merge_decision(policy, conn, tenant_id, e, exclude, open_terms)? {
                Some((id, evidence)) => NameAnswer::Merge(id, evidence),
                None => NameAnswer::New,
            },
        )
    }
}

/// One name's answer and what it depends on besides its key.
#[derive(Debug, Clone, PartialEq)]
pub struct NameHint {
    pub answer: NameAnswer,
    /// The name terms whose look-up a later entity could change (see
    /// `store::resolution::candidates`): most terms of common words were
    /// full already and need no watching.
    pub open_terms: Vec<String>,
}

/// How a fragment's names resolved, one per entity in order, in a
/// snapshot that had seen `graph_version`. A name of a kind that is never
/// merged (a concept, a date) has none: its one look-up, by key, costs
/// the writer about what it costs here, and on text made mostly of
/// concepts doing it twice only added work.
#[derive(Debug, Clone, PartialEq)]
pub struct NameHints {
    pub graph_version: i64,
    pub names: Vec<Option<NameHint>>,
}

/// Which keys and name terms the writer wrote, by graph version, for
/// every tenant it wrote names for (see the module docs).
#[derive(Default)]
pub struct NameLog {
    tenants: HashMap<i64, TenantLog>,
    /// Fingerprints held, all tenants together.
    held: usize,
}

struct TenantLog {
    /// Hints from snapshots older than this are distrusted: the log may
    /// miss writes made before it.
    floor: i64,
    /// The graph version the current graph write will make.
    writing: i64,
    /// Fingerprint → the latest graph version that wrote it.
    written: HashMap<u64, i64>,
}

/// Keys and terms are looked up in different places: fingerprinted apart.
const KEY: u8 = 0;
const TERM: u8 = 1;

fn fingerprint(space: u8, text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    space.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl NameLog {
    /// A graph write for `tenant` starts; the tenant's graph version is
    /// `current`, and what follows writes version `current + 1`.
    pub(super) fn begin(&mut self, tenant: i64, current: i64) {
        let log = self.tenants.entry(tenant).or_insert_with(|| TenantLog {
            floor: current,
            writing: current + 1,
            written: HashMap::new(),
        });
        log.writing = current + 1;
    }

    /// Forgets what was logged for `tenant`: something changed that the
    /// log cannot describe (an entity removed, a kind changed, the term
    /// index rebuilt). Logging starts again at its next graph write.
    pub(super) fn discard(&mut self, tenant: i64) {
        if let Some(log) = self.tenants.remove(&tenant) {
            self.held -= log.written.len();
        }
    }

    /// An entity key or alias key was written.
    pub(super) fn wrote_key(&mut self, tenant: i64, key: &str) {
        self.wrote(tenant, fingerprint(KEY, key));
    }

    /// A name term was written.
    pub(super) fn wrote_term(&mut self, tenant: i64, term: &str) {
        self.wrote(tenant, fingerprint(TERM, term));
    }

    fn wrote(&mut self, tenant: i64, print: u64) {
        if !self.tenants.contains_key(&tenant) {
            return;
        }
        if self.held >= MAX_LOGGED_NAME_WRITES {
            for log in self.tenants.values_mut() {
                log.written = HashMap::new();
                log.floor = log.writing;
            }
            self.held = 0;
        }
        let log = self.tenants.get_mut(&tenant).expect("checked above");
        let writing = log.writing;
        match log.written.entry(print) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let v = e.get_mut();
                *v = (*v).max(writing);
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(writing);
                self.held += 1;
            }
        }
    }

    /// Whether a name looked up by `key` and, when it was new, through the
    /// open name `terms`, in a snapshot that had seen graph version
    /// `since`, would be looked up the same now.
    pub(super) fn unchanged_since(
        &self,
        tenant: i64,
        since: i64,
        key: &str,
        terms: &[String],
    ) -> bool {
        let Some(log) = self.tenants.get(&tenant) else {
            return false;
        };
        let older = |print: u64| log.written.get(&print).is_none_or(|v| *v <= since);
        since >= log.floor
            && older(fingerprint(KEY, key))
            && terms.iter().all(|t| older(fingerprint(TERM, t)))
    }
}

impl TenantReader<'_> {
    /// Resolves each fragment's names as the writer would now (see the
    /// module docs), all in one read snapshot: `None` for a fragment
    /// without entities, and for all of them when the tenant has no graph
    /// yet or its term index awaits a rebuild.
    pub fn resolve_names(&self, fragments: &[&Fragment]) -> Result<Vec<Option<NameHints>>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(vec![None; fragments.len()]);
        };
        // One snapshot: a read transaction per statement would cost a
        // sixth of the look-ups, and each would start with a cold cache.
        self.in_snapshot(|| self.resolve_in_snapshot(tenant_id, fragments))
    }

    fn resolve_in_snapshot(
        &self,
        tenant_id: i64,
        fragments: &[&Fragment],
    ) -> Result<Vec<Option<NameHints>>> {
        let (terms_version, graph_version): (i64, i64) = self
            .conn
            .prepare_cached("SELECT name_terms_version, graph_version FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut out = Vec::with_capacity(fragments.len());
        for fragment in fragments {
            if terms_version != NAME_TERMS_VERSION || fragment.entities.is_empty() {
                out.push(None);
                continue;
            }
            let mut names = Vec::with_capacity(fragment.entities.len());
            for e in &fragment.entities {
                let kind = e.kind.as_str();
                if !is_resolvable_kind(kind) {
                    names.push(None);
                    continue;
                }
                let mut open_terms = Vec::new();
                let answer = NameAnswer::look_up(
                    self.resolver,
                    &self.conn,
                    tenant_id,
                    e,
                    &[],
                    Some(&mut open_terms),
                )?;
                names.push(Some(NameHint { answer, open_terms }));
            }
            out.push(Some(NameHints {
                graph_version,
                names,
            }));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_hint_is_trusted_only_if_nothing_it_read_was_written_after_it() {
        let mut log = NameLog::default();
        let t = 7;
        assert!(!log.unchanged_since(t, 10, "acme", &[]), "nothing logged");
        log.begin(t, 10);
        log.wrote_key(t, "acme");
        log.wrote_term(t, "w:acme");
        log.begin(t, 11);
        log.wrote_term(t, "w:initech");
        // A snapshot at 10 did not see version 11's writes...
        assert!(!log.unchanged_since(t, 10, "acme", &[]));
        assert!(!log.unchanged_since(t, 10, "dana", &terms(&["w:acme"])));
        assert!(log.unchanged_since(t, 10, "dana", &terms(&["w:dana"])));
        // ...one at 11 saw them; one at 12 saw the version being written.
        assert!(log.unchanged_since(t, 11, "acme", &terms(&["w:acme"])));
        assert!(!log.unchanged_since(t, 11, "x", &terms(&["w:initech"])));
        assert!(log.unchanged_since(t, 12, "x", &terms(&["w:initech"])));
        // A key is not a term, nor the other way round.
        assert!(log.unchanged_since(t, 10, "w:acme", &terms(&["acme"])));
        // Older than the log: distrusted, whatever it read.
        assert!(!log.unchanged_since(t, 9, "unrelated", &[]));
        // Another tenant's writes are not this one's.
        log.begin(8, 3);
        assert!(log.unchanged_since(8, 3, "acme", &terms(&["w:acme"])));
    }

    #[test]
    fn a_discarded_log_starts_again_at_the_next_write() {
        let mut log = NameLog::default();
        log.begin(1, 10);
        log.wrote_key(1, "acme");
        log.discard(1);
        assert!(!log.unchanged_since(1, 20, "dana", &[]));
        log.wrote_key(1, "dana"); // not logging: ignored
        log.begin(1, 20);
        assert!(
            !log.unchanged_since(1, 19, "dana", &[]),
            "older than the log"
        );
        assert!(log.unchanged_since(1, 20, "dana", &[]));
    }

    #[test]
    fn a_full_log_starts_again_from_the_versions_being_written() {
        let mut log = NameLog::default();
        log.begin(1, 5);
        log.begin(2, 40);
        // Both tenants' fingerprints count towards one bound; writing one
        // again does not count twice.
        for i in 0..MAX_LOGGED_NAME_WRITES / 2 {
            log.wrote_term(2, &format!("w:{i}"));
            log.wrote_term(2, &format!("w:{i}"));
            log.wrote_term(1, &format!("w:{i}"));
        }
        assert_eq!(log.held, MAX_LOGGED_NAME_WRITES);
        assert!(log.unchanged_since(1, 5, "k", &terms(&["w:other"])));
        assert!(log.unchanged_since(2, 40, "k", &terms(&["w:other"])));
        log.wrote_term(1, "w:one-more");
        assert_eq!(log.held, 1);
        // Every tenant's older snapshots are distrusted now.
        assert!(!log.unchanged_since(1, 5, "k", &terms(&["w:other"])));
        assert!(!log.unchanged_since(2, 40, "k", &terms(&["w:other"])));
        assert!(log.unchanged_since(1, 6, "k", &terms(&["w:one-more"])));
        assert!(log.unchanged_since(2, 41, "k", &terms(&["w:x"])));
        log.discard(1);
        assert_eq!(log.held, 0);
    }

    mod in_the_store {
        use super::super::{NameAnswer, NameHints};
        use crate::store::test_support::{prepare, remember, remember_prepared, temp_store};
        use crate::store::{Store, Tenant};

        fn resolved(store: &Store, t: &Tenant, p: &crate::ingest::Prepared) -> NameHints {
            let r = store.reader(t).unwrap();
            r.resolve_names(&[&p.graph])
                .unwrap()
                .pop()
                .unwrap()
                .unwrap()
        }

        fn answer(p: &crate::ingest::Prepared, h: &NameHints, key: &str) -> NameAnswer {
            let i = p.graph.entities.iter().position(|e| e.key == key).unwrap();
            h.names[i].as_ref().unwrap().answer
        }

        fn entity(store: &Store, t: &Tenant, key: &str) -> Vec<crate::store::graph::EntityRow> {
            store
                .reader(t)
                .unwrap()
                .entities_by_keys(&[key.into()])
                .unwrap()
        }

        #[test]
        fn a_name_resolved_ahead_is_looked_up_again_once_another_write_made_it() {
            let (dir, store) = temp_store("alayasiki-hints");
            let t = Tenant::new("t").unwrap();
            remember(&store, &t, "Dana Scully works at Acme.", "user");
            let text = "Walter Skinner met Dana Scully at Acme.";
            let mut p = prepare(text);
            let hints = resolved(&store, &t, &p);
            let dana = entity(&store, &t, "dana scully")[0].id;
            assert_eq!(answer(&p, &hints, "dana scully"), NameAnswer::Stored(dana));
            assert_eq!(answer(&p, &hints, "walter skinner"), NameAnswer::New);
            // Meanwhile another document names him first: "new" is stale.
            remember(&store, &t, "Walter Skinner works at Initech.", "user");
            p.names = Some(hints);
            remember_prepared(&store, &t, text, p, "user");
            let walter = entity(&store, &t, "walter skinner");
            assert_eq!(walter.len(), 1, "{walter:?}");
            assert_eq!(walter[0].mention_count, 2);
            assert_eq!(entity(&store, &t, "dana scully")[0].mention_count, 2);
            store.close();
            std::fs::remove_dir_all(dir).ok();
        }

        #[test]
        fn a_current_hint_is_taken_without_looking_again() {
            let (dir, store) = temp_store("alayasiki-hints");
            let t = Tenant::new("t").unwrap();
            remember(&store, &t, "Dana Scully works at Acme.", "user");
            let text = "Dana Scully called.";
            let mut p = prepare(text);
            let mut hints = resolved(&store, &t, &p);
            // Nothing was written since: the writer follows the hint, here
            // made to point elsewhere to show that it is the hint it used.
            let acme = entity(&store, &t, "acme")[0].clone();
            let i = p
                .graph
                .entities
                .iter()
                .position(|e| e.key == "dana scully")
                .unwrap();
            hints.names[i].as_mut().unwrap().answer = NameAnswer::Stored(acme.id);
            p.names = Some(hints);
            remember_prepared(&store, &t, text, p, "user");
            assert_eq!(
                entity(&store, &t, "acme")[0].mention_count,
                acme.mention_count + 1
            );
            assert_eq!(entity(&store, &t, "dana scully")[0].mention_count, 1);
            store.close();
            std::fs::remove_dir_all(dir).ok();
        }

        #[test]
        fn a_hint_naming_a_forgotten_entity_is_not_trusted() {
            let (dir, store) = temp_store("alayasiki-hints");
            let t = Tenant::new("t").unwrap();
            let first = remember(&store, &t, "Walter Skinner met Fox Mulder.", "user");
            let text = "Walter Skinner called.";
            let mut p = prepare(text);
            let hints = resolved(&store, &t, &p);
            let before = entity(&store, &t, "walter skinner")[0].id;
            assert_eq!(
                answer(&p, &hints, "walter skinner"),
                NameAnswer::Stored(before)
            );
            store.write(&t, move |w| w.forget_graph(first)).unwrap();
            assert!(entity(&store, &t, "walter skinner").is_empty());
            p.names = Some(hints);
            remember_prepared(&store, &t, text, p, "user");
            let walter = entity(&store, &t, "walter skinner");
            assert_eq!(walter.len(), 1);
            assert_eq!(walter[0].mention_count, 1);
            store.close();
            std::fs::remove_dir_all(dir).ok();
        }
    }
}
