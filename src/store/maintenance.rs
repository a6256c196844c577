//! Compaction: rewriting a tenant's vector files without the slots of
//! forgotten chunks, and merging its full-text index, which is when the
//! index entries of forgotten chunks physically go (a contentless FTS5
//! table only marks them deleted).
//!
//! The store has one writer, shared by every tenant, so a compaction runs
//! on a serving memory in short writes between everyone else's, never
//! holding the writer for the whole of its work:
//!
//! - the full-text index is merged in steps ([`FULLTEXT_MERGE_PAGES`]
//!   each, a write of its own): FTS5's incremental optimize, one `merge`
//!   with a negative page count (which takes every segment there is into
//!   one merge) then positive ones until a step changes nothing (which
//!   finishes that merge, whatever was written meanwhile);
//! - the tenant's next generation of vector files is filled from the
//!   published rows outside the writer, under a scratch name
//!   (`vectors::VectorIndex::scratch`); then one write of its own
//!   (`Batching::Alone`) checks which chunks still have a vector, keeps
//!   the rows filled for the live slots that did not change, copies the
//!   rest (vectors written meanwhile, usually few), renames the files to
//!   their generation's name, renumbers the chunks' slots to match (one
//!   set-based statement, whatever the tenant's size), records the new
//!   generation and row count, and stages the new files; readers keep the
//!   old ones until the switch has committed
//!   (`vectors::VectorIndex::stage`).
//!
//! A crash before that commit leaves the old generation in use (the new
//! files, scratch or renamed, are removed at the next open); after it, the
//! new one, whose rows were synced and whose name was made durable first.
//! Compactions run one at a time in a store.
//!
//! On a cluster the writes go through the log like any other: the merge
//! steps as statements, and the switch as one entry in which the cluster
//! renumbers its vector rows the same way ([`VECTOR_COMPACT`] and the
//! statements after it), and every node that applies the entry builds its
//! own new generation from its own files (`cluster::replica`).

use rusqlite::params;

use super::forget::SecureDelete;
use super::tenant::{fts_table, PooledConn, Tenant, TenantWriter};
use super::vectors::{TenantVectors, VectorIndex};
use super::write_log::{VECTOR_COMPACT, VECTOR_RENUMBER, VECTOR_RENUMBERED};
use super::{Batching, Store};
use crate::error::{Error, Result};

/// Vector rows copied per append while compacting.
const COPY_BATCH: usize = 4096;

/// Pages of the full-text index one merge step writes (FTS5 `merge`,
/// pages of about 4 KB): each step is a write of its own, so this bounds
/// how long a compaction's merging holds the writer at once.
pub const FULLTEXT_MERGE_PAGES: i64 = 128;

/// Gives every chunk with a vector the slot its rank among them names,
/// negated (SQLite computes the ranks before it updates a row); then
/// [`RENUMBERED`] makes them slots. Two passes, so that no update ever
/// takes a slot another chunk still holds (slots are unique).
/// Only the chunks whose slot changes are written (those after the first
/// freed slot).
const RENUMBER: &str = "UPDATE chunks SET vector_slot = -r.n
       FROM (SELECT id, vector_slot AS old, ROW_NUMBER() OVER (ORDER BY vector_slot) AS n
               FROM chunks WHERE tenant_id = ?1 AND vector_slot IS NOT NULL) AS r
      WHERE chunks.id = r.id AND r.old <> r.n - 1";
const RENUMBERED: &str =
    "UPDATE chunks SET vector_slot = -vector_slot - 1 WHERE tenant_id = ?1 AND vector_slot < 0";

/// What compacting one tenant did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub tenant: String,
    pub rows_before: u64,
    pub rows_after: u64,
}

/// A tenant's next generation of vector files, filled outside the writer
/// with the rows of `slots` of generation `base`, in order.
struct Prefilled {
    base: i64,
    slots: Vec<u64>,
    files: TenantVectors,
}

impl Store {
    /// Compacts every tenant, one after the other (see the module docs).
    pub fn compact(&self) -> Result<Vec<Compaction>> {
        self.known_tenants()?
            .iter()
            .map(|tenant| self.compact_tenant(tenant))
            .collect()
    }

    /// Compacts one tenant's vector files and full-text index in short
    /// writes (the module docs say how); returns once the switch to the
    /// new files committed.
    pub fn compact_tenant(&self, tenant: &Tenant) -> Result<Compaction> {
        // One at a time: the scratch files are the tenant's, and the
        // writer's share of compacting stays one compaction's.
        let _one = self.compacting.lock().unwrap_or_else(|p| p.into_inner());
        let tenant_id = self
            .tenants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tenant.name())
            .copied();
        let mut prefilled = None;
        if let Some(tenant_id) = tenant_id {
            self.merge_fulltext(tenant, tenant_id)?;
            prefilled = self.prefill_vectors(tenant_id)?;
        }
        // An unknown tenant still goes through the writer: on a cluster it
        // may be one another node created, which the writer learns first.
        let (rows_before, rows_after) =
            self.write_alone(tenant, move |w| w.switch_vectors(prefilled))?;
        Ok(Compaction {
            tenant: tenant.name().to_string(),
            rows_before,
            rows_after,
        })
    }

    /// Merges the tenant's full-text index into one segment, in steps of
    /// [`FULLTEXT_MERGE_PAGES`], each a write of its own.
    fn merge_fulltext(&self, tenant: &Tenant, tenant_id: i64) -> Result<()> {
        let fts = fts_table(tenant_id);
        let pages: i64 = {
            let conn = PooledConn::new(self.readers.get()?, &self.readers);
            conn.query_row(&format!("SELECT count(*) FROM {fts}_data"), [], |r| {
                r.get(0)
            })?
        };
        // The merge the first step starts rewrites at most the pages there
        // were, so it has ended within this many steps; what was written
        // since is the automerge's (under steady ingestion the positive
        // steps could otherwise go on merging new segments for ever).
        let steps = pages / FULLTEXT_MERGE_PAGES + 4;
        let writer = self.writer()?;
        for step in 0..steps {
            let pages = if step == 0 {
                -FULLTEXT_MERGE_PAGES
            } else {
                FULLTEXT_MERGE_PAGES
            };
            let changed =
                writer.submit(tenant.name(), Batching::Own, move |w| w.merge_step(pages))?;
            // Fewer than two changed rows: nothing was left to merge.
            if changed < 2 {
                break;
            }
        }
        Ok(())
    }

    /// Fills the tenant's next generation of vector files with the rows
    /// of its live slots, reading published rows only, outside the writer
    /// (`None` when nothing is to be compacted or the files are not
    /// open).
    fn prefill_vectors(&self, tenant_id: i64) -> Result<Option<Prefilled>> {
        let Some(current) = self.vectors.existing(tenant_id) else {
            return Ok(None);
        };
        let (base, mut slots) = {
            let conn = PooledConn::new(self.readers.get()?, &self.readers);
            conn.execute_batch("BEGIN")?;
            let read = conn
                .query_row(
                    "SELECT vector_generation FROM tenants WHERE id = ?1",
                    [tenant_id],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(Error::from)
                .and_then(|generation| Ok((generation, live_slots(&conn, tenant_id)?)));
            let _ = conn.execute_batch("COMMIT");
            read?
        };
        if base != current.generation() || slots.len() as u64 == current.committed_rows() {
            return Ok(None);
        }
        let files = self.vectors.scratch(tenant_id, base + 1)?;
        let copied = copy_rows(&current, &slots, &files)?;
        files.seal()?;
        slots.truncate(copied);
        Ok(Some(Prefilled { base, slots, files }))
    }
}

impl TenantWriter<'_> {
    /// One step of the full-text merge: how many rows it changed.
    fn merge_step(&mut self, pages: i64) -> Result<i64> {
        // Freed pages are overwritten (`secure_delete`).
        let _secure = SecureDelete::on(self.conn.raw())?;
        // The connection's own count of changed rows (read here, never put
        // into a statement that other nodes replay).
        let total = |conn: &rusqlite::Connection| conn.total_changes() as i64;
        let before = total(self.conn.raw());
        let fts = self.fts_table();
        self.exec(
            &format!("INSERT INTO {fts}({fts}, rank) VALUES ('merge', ?1)"),
            params![pages],
        )?;
        Ok(total(self.conn.raw()) - before)
    }

    /// Switches this tenant to a compacted generation of vector files,
    /// completing `prefilled` (the module docs say how): the vector rows
    /// before and after.
    fn switch_vectors(&mut self, prefilled: Option<Prefilled>) -> Result<(u64, u64)> {
        let current = self.vectors.existing(self.tenant_id);
        let live = match &current {
            Some(_) => live_slots(self.conn.raw(), self.tenant_id)?,
            None => Vec::new(),
        };
        // Distinct slots below the row count, as many as the rows: no slot
        // is free, and the files are as compact as they get.
        let Some(current) = current.filter(|c| live.len() as u64 != c.committed_rows()) else {
            if prefilled.is_some() {
                self.vectors.discard_scratch(self.tenant_id);
            }
            return Ok((live.len() as u64, live.len() as u64));
        };
        let fresh = complete_generation(self.vectors, self.tenant_id, &current, &live, prefilled)?;
        self.vectors.install(self.tenant_id, &fresh)?;
        let rows_after = fresh.committed_rows();
        // The cluster's vector rows move first: their new slots are read
        // from the chunks' old ones.
        for sql in [VECTOR_COMPACT, VECTOR_RENUMBER, VECTOR_RENUMBERED] {
            self.conn.record_only(sql, params![self.tenant_id])?;
        }
        self.exec(RENUMBER, params![self.tenant_id])?;
        self.exec(RENUMBERED, params![self.tenant_id])?;
        self.exec(
            "UPDATE tenants SET vector_rows = ?2, vector_generation = ?3 WHERE id = ?1",
            params![self.tenant_id, rows_after as i64, fresh.generation()],
        )?;
        let (index, tenant_id) = (self.vectors.clone(), self.tenant_id);
        index.stage(tenant_id, fresh);
        self.on_commit(move |committed| index.settle(tenant_id, committed));
        Ok((current.committed_rows(), rows_after))
    }
}

/// The slots of the tenant's chunks that have a vector, in slot order:
/// what [`RENUMBER`] numbers 0, 1, 2, ...
pub(crate) fn live_slots(conn: &rusqlite::Connection, tenant_id: i64) -> Result<Vec<u64>> {
    let mut stmt = conn.prepare(
        "SELECT vector_slot FROM chunks
          WHERE tenant_id = ?1 AND vector_slot IS NOT NULL ORDER BY vector_slot",
    )?;
    let rows = stmt.query_map([tenant_id], |r| r.get::<_, i64>(0))?;
    rows.map(|slot| Ok(slot? as u64)).collect()
}

/// Appends the published rows of `slots` of `current` to `fresh`, in
/// order, up to the first slot not published yet: how many it copied.
fn copy_rows(current: &TenantVectors, slots: &[u64], fresh: &TenantVectors) -> Result<usize> {
    let mut copied = 0;
    for batch in slots.chunks(COPY_BATCH) {
        let rows: Vec<Vec<f32>> = batch.iter().map_while(|s| current.stored(*s)).collect();
        if !rows.is_empty() {
            fresh.append(&rows)?;
        }
        copied += rows.len();
        if rows.len() < batch.len() {
            break;
        }
    }
    Ok(copied)
}

/// The sealed next generation of the tenant's files, under its scratch
/// name, holding `live`'s rows of `current` in order: the rows `prefilled`
/// holds for the live slots it begins with, the rest copied now. Every row
/// written to `current` must be published (the switch writes alone).
fn complete_generation(
    index: &VectorIndex,
    tenant_id: i64,
    current: &TenantVectors,
    live: &[u64],
    prefilled: Option<Prefilled>,
) -> Result<TenantVectors> {
    if current.written_rows() != current.committed_rows() {
        return Err(Error::internal(
            "compaction met vector rows its transaction did not commit",
        ));
    }
    let (fresh, kept) = match prefilled {
        // Its rows stay good as far as the live slots are the ones it
        // copied: a chunk forgotten meanwhile shifts every row after it.
        Some(p) if p.base == current.generation() => {
            let kept = p.slots.iter().zip(live).take_while(|(a, b)| a == b).count();
            p.files.rollback(kept as u64);
            (p.files, kept)
        }
        _ => (index.scratch(tenant_id, current.generation() + 1)?, 0),
    };
    let rest = &live[kept..];
    if copy_rows(current, rest, &fresh)? < rest.len() {
        return Err(Error::internal("a live slot is past the committed rows"));
    }
    fresh.seal()?;
    Ok(fresh)
}

/// A sealed new generation of the tenant's files holding `live`'s rows of
/// `current`, in order, built in place (a cluster entry's compaction,
/// applied by the writer). Every row written to `current` must be
/// published.
pub(crate) fn next_generation(
    index: &VectorIndex,
    tenant_id: i64,
    current: &TenantVectors,
    live: &[u64],
) -> Result<TenantVectors> {
    if current.written_rows() != current.committed_rows() {
        return Err(Error::internal(
            "compaction met vector rows its transaction did not commit",
        ));
    }
    let fresh = index.fresh(tenant_id, current.generation() + 1)?;
    if copy_rows(current, live, &fresh)? < live.len() {
        return Err(Error::internal("a live slot is past the committed rows"));
    }
    fresh.seal()?;
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{BuiltinEmbedder, Embedder};
    use crate::store::test_support::{remember, temp_store, tenant_rows};

    fn note(i: usize) -> String {
        let colour = ["red", "blue", "green", "amber"][i % 4];
        format!(
            "Note {i}: the {colour} ferry left pier {} at dawn with {} crates.",
            i * 7,
            i * 3
        )
    }

    /// Every live chunk's own text finds that chunk first by vector, with
    /// the similarity of its own vector: no slot names another's row.
    fn each_chunk_finds_itself(store: &Store, t: &Tenant) -> usize {
        let texts = tenant_rows(
            store,
            t,
            &format!(
                "SELECT {} FROM chunks c WHERE c.tenant_id = ?1",
                crate::store::chunks::chunk_text("c")
            ),
            |r| r.get::<_, String>(0),
        );
        let reader = store.reader(t).unwrap();
        for text in &texts {
            let q = BuiltinEmbedder.embed_batch(&[text]).unwrap().remove(0);
            let hit = &reader
                .vector_search(&q, 1, &crate::store::Scope::current())
                .unwrap()[0];
            assert_eq!(&hit.text, text);
            assert!(-hit.bm25 > 0.99, "{text}: {}", -hit.bm25);
        }
        texts.len()
    }

    #[test]
    fn a_compaction_between_other_writes_keeps_every_vector_with_its_chunk() {
        let (dir, store) = temp_store("compact-online");
        let store = std::sync::Arc::new(store);
        let t = Tenant::new("t").unwrap();
        let keys: Vec<i64> = (0..12)
            .map(|i| remember(&store, &t, &note(i), "user"))
            .collect();
        // Slot 0 stays where it is; every slot after the first freed one moves.
        for key in keys.iter().skip(1).step_by(3) {
            let key = *key;
            store
                .write(&t, move |w| {
                    w.forget_document(key, "test", "document_id", 0, 1)
                })
                .unwrap();
        }
        let ingesting: Vec<_> = (0..2)
            .map(|w| {
                let (store, t) = (store.clone(), t.clone());
                std::thread::spawn(move || {
                    for i in 0..10 {
                        remember(&store, &t, &note(100 + w * 10 + i), "user");
                    }
                })
            })
            .collect();
        // Compactions while the others write, and one after.
        let first = store.compact_tenant(&t).unwrap();
        assert_eq!(first.rows_before - first.rows_after, 4, "{first:?}");
        while ingesting.iter().any(|w| !w.is_finished()) {
            store.compact_tenant(&t).unwrap();
        }
        for w in ingesting {
            w.join().unwrap();
        }
        assert_eq!(each_chunk_finds_itself(&store, &t), 8 + 20);
        store.compact_tenant(&t).unwrap();
        // Slots 0, 1, 2, ... in the new generation, the old files gone.
        let slots = tenant_rows(
            &store,
            &t,
            "SELECT vector_slot FROM chunks WHERE tenant_id = ?1 ORDER BY vector_slot",
            |r| r.get::<_, i64>(0),
        );
        let (rows, generation) = tenant_rows(
            &store,
            &t,
            "SELECT vector_rows, vector_generation FROM tenants WHERE id = ?1",
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )[0];
        // Only the first found a free slot: the others rewrote nothing.
        assert_eq!(generation, 1);
        assert_eq!(rows, 28);
        assert_eq!(slots, (0..28).collect::<Vec<i64>>());
        let files: Vec<String> = std::fs::read_dir(dir.join(super::super::vectors::VECTORS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let current = format!(".g{generation}.");
        assert!(files.iter().all(|f| f.contains(&current)), "{files:?}");
        assert_eq!(each_chunk_finds_itself(&store, &t), 28);
        drop(store);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn chunks_forgotten_and_written_after_the_prefill_keep_every_vector_with_its_chunk() {
        let (dir, store) = temp_store("compact-prefill");
        let t = Tenant::new("t").unwrap();
        let keys: Vec<i64> = (0..12)
            .map(|i| remember(&store, &t, &note(i), "user"))
            .collect();
        let forget = |key: i64| {
            store
                .write(&t, move |w| {
                    w.forget_document(key, "test", "document_id", 0, 1)
                })
                .unwrap();
        };
        forget(keys[2]);
        let tenant_id = store.tenants.read().unwrap()[t.name()];
        let prefilled = store.prefill_vectors(tenant_id).unwrap().unwrap();
        assert_eq!(prefilled.slots.len(), 11);
        // Between the prefill and the switch: one chunk it copied is
        // forgotten (every row after it shifts) and two are written.
        forget(keys[7]);
        remember(&store, &t, &note(50), "user");
        remember(&store, &t, &note(51), "user");
        let (before, after) = store
            .write_alone(&t, move |w| w.switch_vectors(Some(prefilled)))
            .unwrap();
        assert_eq!((before, after), (14, 12));
        assert_eq!(each_chunk_finds_itself(&store, &t), 12);
        // The scratch files became the new generation: nothing else is left.
        let files: Vec<String> = std::fs::read_dir(dir.join(super::super::vectors::VECTORS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(files.iter().all(|f| f.contains(".g1.")), "{files:?}");
        drop(store);
        std::fs::remove_dir_all(dir).ok();
    }
}
