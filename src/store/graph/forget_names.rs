//! The names a forgotten document gave an entity that outlives it.
//!
//! An entity keeps the display name, key and aliases of the mentions that
//! created or merged into it. When the document behind some of them is
//! forgotten, a name no remaining mention uses would go on naming the
//! entity (in lists, in question resolution: "PNH" still finding the
//! company after the only document saying "PNH" went). So, for each
//! entity the document mentioned and that other documents still mention:
//!
//! - an alias whose key no remaining mention has goes, with its merge
//!   record;
//! - a display name no remaining mention spells is replaced by the most
//!   used remaining spelling of the entity's key;
//! - a key no remaining mention has is replaced by the most used remaining
//!   key (with its most used spelling), unless another entity has it.
//!
//! Only names the forgotten document itself used are questioned, and the
//! remaining mentions are read until each is found, at most
//! [`NAME_CHECK_MENTIONS`] of them: a name not confirmed within that many is
//! kept, never dropped on a guess.

use rusqlite::{params, OptionalExtension};
use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::store::chunks::chunk_text;
use crate::store::tenant::TenantWriter;

/// Most remaining mentions of one entity read to confirm the names a
/// forgotten document questioned.
pub const NAME_CHECK_MENTIONS: usize = 4096;

/// The text a mention spans, from its chunk (spans are document offsets).
fn surface(chunk: &str, chunk_start: i64, start: i64, end: i64) -> Option<&str> {
    let from = usize::try_from(start - chunk_start).ok()?;
    let to = usize::try_from(end - chunk_start).ok()?;
    chunk.get(from..to)
}

/// What the remaining mentions of an entity say about its names.
#[derive(Default)]
struct Remaining {
    keys: HashMap<String, usize>,
    /// Spellings per key, with their counts.
    spellings: HashMap<String, HashMap<String, usize>>,
    /// Whether every remaining mention was read.
    complete: bool,
}

impl Remaining {
    fn spelled(&self, name: &str) -> bool {
        self.spellings.values().any(|s| s.contains_key(name))
    }

    /// The most used spelling of `key` (ties: the first in byte order, so
    /// the choice does not depend on read order).
    fn spelling_of(&self, key: &str) -> Option<String> {
        let spellings = self.spellings.get(key)?;
        most_used(spellings).map(str::to_string)
    }

    fn most_used_key(&self) -> Option<&str> {
        most_used(&self.keys)
    }
}

fn most_used(counts: &HashMap<String, usize>) -> Option<&str> {
    counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(k, _)| k.as_str())
}

impl TenantWriter<'_> {
    /// The surfaces of `document_key`'s mentions, per entity (read before
    /// its mentions are deleted).
    pub(super) fn surfaces_by_entity(
        &self,
        document_key: i64,
    ) -> Result<HashMap<i64, HashSet<String>>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT m.entity_id, {}, c.byte_start, m.byte_start, m.byte_end
               FROM chunks c JOIN mentions m ON m.chunk_id = c.id
              WHERE c.document_id = ?1",
            chunk_text("c")
        ))?;
        let mut rows = stmt.query([document_key])?;
        let mut out: HashMap<i64, HashSet<String>> = HashMap::new();
        while let Some(r) = rows.next()? {
            let entity: i64 = r.get(0)?;
            let chunk: String = r.get(1)?;
            let names = out.entry(entity).or_default();
            if let Some(s) = surface(&chunk, r.get(2)?, r.get(3)?, r.get(4)?) {
                names.insert(s.to_string());
            }
        }
        Ok(out)
    }

    /// Drops the names of `entity` that only the forgotten document's
    /// mentions (`given`, their surfaces) used; see the module docs. Call
    /// after those mentions are deleted, for an entity still mentioned.
    pub(super) fn drop_forgotten_names(
        &mut self,
        entity: i64,
        given: &HashSet<String>,
    ) -> Result<()> {
        let row: Option<(String, String, String)> = self
            .conn
            .prepare_cached("SELECT key, name, kind FROM entities WHERE id = ?1")?
            .query_row([entity], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((key, name, kind)) = row else {
            return Ok(());
        };
        let given_keys: HashSet<String> = given
            .iter()
            .map(|s| self.resolver.surface_key(s, &kind))
            .collect();
        let aliases: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT alias_key FROM entity_aliases WHERE entity_id = ?1")?;
            let rows = stmt.query_map([entity], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<Vec<String>>>()?
        };
        let mut wanted_keys: HashSet<String> = aliases
            .iter()
            .filter(|a| given_keys.contains(*a))
            .cloned()
            .collect();
        if given_keys.contains(&key) {
            wanted_keys.insert(key.clone());
        }
        let wanted_name = given.contains(&name);
        if wanted_keys.is_empty() && !wanted_name {
            return Ok(());
        }
        let remaining =
            self.remaining_names(entity, &kind, &wanted_keys, wanted_name.then_some(&name))?;

        for alias in aliases.iter().filter(|a| wanted_keys.contains(*a)) {
            if *alias == key || remaining.keys.contains_key(alias) || !remaining.complete {
                continue;
            }
            self.exec(
                "DELETE FROM entity_aliases WHERE tenant_id = ?1 AND alias_key = ?2 AND entity_id = ?3",
                params![self.tenant_id, alias, entity],
            )?;
            self.exec(
                "DELETE FROM entity_merges WHERE tenant_id = ?1 AND alias_key = ?2 AND entity_id = ?3",
                params![self.tenant_id, alias, entity],
            )?;
        }
        if !remaining.complete {
            return Ok(());
        }
        let key_lost = wanted_keys.contains(&key) && !remaining.keys.contains_key(&key);
        let (new_key, new_name) = if key_lost {
            let Some(new_key) = remaining.most_used_key().map(str::to_string) else {
                return Ok(());
            };
            let taken: bool = self.conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM entities WHERE tenant_id = ?1 AND key = ?2 AND id != ?3)
                     OR EXISTS(SELECT 1 FROM entity_aliases
                                WHERE tenant_id = ?1 AND alias_key = ?2 AND entity_id != ?3)",
                params![self.tenant_id, new_key, entity],
                |r| r.get(0),
            )?;
            if taken {
                return Ok(());
            }
            let spelling = remaining
                .spelling_of(&new_key)
                .unwrap_or_else(|| name.clone());
            (new_key, spelling)
        } else if wanted_name && !remaining.spelled(&name) {
            match remaining.spelling_of(&key) {
                Some(spelling) => (key.clone(), spelling),
                None => return Ok(()),
            }
        } else {
            return Ok(());
        };
        self.rename_entity(entity, (&key, &name), (&new_key, &new_name), &kind)
    }

    /// Reads the remaining mentions of `entity` until every key in
    /// `wanted_keys` and the spelling `wanted_name` are seen, or all are
    /// read, or [`NAME_CHECK_MENTIONS`].
    fn remaining_names(
        &self,
        entity: i64,
        kind: &str,
        wanted_keys: &HashSet<String>,
        wanted_name: Option<&String>,
    ) -> Result<Remaining> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {}, c.byte_start, m.byte_start, m.byte_end
               FROM mentions m JOIN chunks c ON c.id = m.chunk_id
              WHERE m.entity_id = ?1",
            chunk_text("c")
        ))?;
        let mut rows = stmt.query([entity])?;
        let mut out = Remaining::default();
        let mut read = 0;
        loop {
            let all_seen = wanted_keys.iter().all(|k| out.keys.contains_key(k))
                && wanted_name.is_none_or(|n| out.spelled(n));
            if all_seen {
                // Enough to keep every questioned name; nothing is renamed.
                out.complete = true;
                return Ok(out);
            }
            if read == NAME_CHECK_MENTIONS {
                return Ok(out);
            }
            let Some(r) = rows.next()? else {
                out.complete = true;
                return Ok(out);
            };
            read += 1;
            let chunk: String = r.get(0)?;
            let Some(s) = surface(&chunk, r.get(1)?, r.get(2)?, r.get(3)?) else {
                continue;
            };
            let k = self.resolver.surface_key(s, kind);
            *out.keys.entry(k.clone()).or_default() += 1;
            *out.spellings
                .entry(k)
                .or_default()
                .entry(s.to_string())
                .or_default() += 1;
        }
    }

    /// Gives `entity` a new key and display name: its name terms follow,
    /// and an alias that became its key is no longer an alias.
    fn rename_entity(
        &mut self,
        entity: i64,
        (old_key, old_name): (&str, &str),
        (new_key, new_name): (&str, &str),
        kind: &str,
    ) -> Result<()> {
        for term in self.resolver.index_terms(old_key, old_name) {
            self.exec(
                "DELETE FROM entity_name_terms WHERE tenant_id = ?1 AND term = ?2 AND entity_id = ?3",
                params![self.tenant_id, term, entity],
            )?;
        }
        self.exec(
            "DELETE FROM entity_aliases WHERE tenant_id = ?1 AND alias_key = ?2 AND entity_id = ?3",
            params![self.tenant_id, new_key, entity],
        )?;
        self.exec(
            "UPDATE entities SET key = ?2, name = ?3 WHERE id = ?1",
            params![entity, new_key, new_name],
        )?;
        self.index_entity_name(entity, new_key, new_name, kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{remember, temp_store, tenant_rows};
    use crate::store::{Store, Tenant};

    /// (key, name, alias keys) of every entity of `kind`.
    fn names(store: &Store, t: &Tenant, kind: &'static str) -> Vec<(String, String, String)> {
        let rows = tenant_rows(
            store,
            t,
            "SELECT e.key, e.name, e.kind,
                    COALESCE((SELECT group_concat(alias_key, ',') FROM
                               (SELECT alias_key FROM entity_aliases a
                                 WHERE a.entity_id = e.id ORDER BY alias_key)), '')
               FROM entities e WHERE e.tenant_id = ?1 ORDER BY e.key",
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get(1)?,
                    r.get::<_, String>(2)?,
                    r.get(3)?,
                ))
            },
        );
        rows.into_iter()
            .filter(|(_, _, k, _)| k == kind)
            .map(|(key, name, _, aliases)| (key, name, aliases))
            .collect()
    }

    fn terms(store: &Store, t: &Tenant) -> Vec<(String, i64)> {
        tenant_rows(
            store,
            t,
            "SELECT term, entity_id FROM entity_name_terms WHERE tenant_id = ?1 ORDER BY 1, 2",
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    #[test]
    fn an_acronym_and_a_spelling_only_the_forgotten_document_used_go_with_it() {
        let (dir, store) = temp_store("alayasiki-names");
        let t = Tenant::new("t").unwrap();
        let a = remember(
            &store,
            &t,
            "Pemberton Nightshade Holdings Inc. (PNH) will close the Reykjavik lab.",
            "user",
        );
        remember(
            &store,
            &t,
            "Pemberton Nightshade Holdings opened an office in Lima.",
            "user",
        );
        let before = names(&store, &t, "organization");
        assert_eq!(before.len(), 1, "{before:?}");
        assert!(before[0].2.contains("pnh"), "{before:?}");
        store.write(&t, move |w| w.forget_graph(a)).unwrap();
        let after = names(&store, &t, "organization");
        assert_eq!(
            after,
            vec![(
                before[0].0.clone(),
                "Pemberton Nightshade Holdings".into(),
                String::new()
            )]
        );
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_entity_left_with_only_another_name_takes_it_as_its_key() {
        let (dir, store) = temp_store("alayasiki-names");
        let t = Tenant::new("t").unwrap();
        let a = remember(
            &store,
            &t,
            "Dana Scully joined Initech. Scully likes tea.",
            "user",
        );
        let b = remember(&store, &t, "On Friday, Scully visited Lima.", "user");
        let before = names(&store, &t, "person");
        assert_eq!(
            before,
            vec![("dana scully".into(), "Dana Scully".into(), "scully".into())]
        );
        store.write(&t, move |w| w.forget_graph(a)).unwrap();
        assert_eq!(
            names(&store, &t, "person"),
            vec![("scully".into(), "Scully".into(), String::new())]
        );
        // The name-term index follows the new name: nothing indexes the
        // forgotten first name.
        assert!(!terms(&store, &t)
            .iter()
            .any(|(term, _)| term.contains("dana")));
        // Forgetting the last mention deletes the entity as before.
        store.write(&t, move |w| w.forget_graph(b)).unwrap();
        assert!(names(&store, &t, "person").is_empty());
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn names_the_other_documents_still_use_are_kept() {
        let (dir, store) = temp_store("alayasiki-names");
        let t = Tenant::new("t").unwrap();
        remember(
            &store,
            &t,
            "Dana Scully joined Initech. Scully likes tea.",
            "user",
        );
        let b = remember(
            &store,
            &t,
            "Dana Scully visited Lima. Scully flew back.",
            "user",
        );
        let before = names(&store, &t, "person");
        store.write(&t, move |w| w.forget_graph(b)).unwrap();
        assert_eq!(names(&store, &t, "person"), before);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_surface_is_cut_from_its_chunk_by_document_offsets() {
        assert_eq!(
            surface("Dana Scully met Acme.", 100, 100, 111),
            Some("Dana Scully")
        );
        assert_eq!(
            surface("Dana Scully met Acme.", 100, 116, 120),
            Some("Acme")
        );
        assert_eq!(surface("Dana", 100, 90, 94), None);
        assert_eq!(surface("Dana", 100, 100, 120), None);
        assert_eq!(surface("é", 0, 0, 1), None);
    }

    #[test]
    fn the_most_used_spelling_wins_and_ties_go_to_byte_order() {
        let counts: HashMap<String, usize> = [
            ("b".to_string(), 2),
            ("a".to_string(), 2),
            ("c".to_string(), 1),
        ]
        .into();
        assert_eq!(most_used(&counts), Some("a"));
        assert_eq!(most_used(&HashMap::new()), None);
    }
}
