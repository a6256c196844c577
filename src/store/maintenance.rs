//! Compaction: rewriting a tenant's vector files without the slots of
//! forgotten chunks, and merging its full-text index, which is when the
//! index entries of forgotten chunks physically go (a contentless FTS5
//! table only marks them deleted).
//!
//! A tenant is compacted in one write of its own (`Batching::Alone`),
//! between other writes, so it runs on a serving memory: the write copies
//! the live rows, in slot order, into a complete new generation of files,
//! renumbers the chunks' slots to match (one set-based statement, whatever
//! the tenant's size), records the new generation and row count, and
//! stages the new files; readers keep the old ones until the switch has
//! committed (`vectors::VectorIndex::stage`). A crash before the commit
//! leaves the old generation in use (the new files are removed at the next
//! open); after it, the new one.
//!
//! On a cluster the write goes through the log like any other: the
//! cluster renumbers its vector rows the same way ([`VECTOR_COMPACT`] and
//! the statements after it), and every node that applies the entry builds
//! its own new generation from its own files (`cluster::replica`).

use rusqlite::params;

use super::forget::SecureDelete;
use super::tenant::{Tenant, TenantWriter};
use super::vectors::TenantVectors;
use super::write_log::{VECTOR_COMPACT, VECTOR_RENUMBER, VECTOR_RENUMBERED};
use super::Store;
use crate::error::{Error, Result};

/// Vector rows copied per write while compacting.
const COPY_BATCH: usize = 4096;

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

impl Store {
    /// Compacts every tenant, one write each (see the module docs).
    pub fn compact(&self) -> Result<Vec<Compaction>> {
        self.known_tenants()?
            .iter()
            .map(|tenant| self.compact_tenant(tenant))
            .collect()
    }

    /// Compacts one tenant's vector files and full-text index in a write
    /// of its own; returns once it committed.
    pub fn compact_tenant(&self, tenant: &Tenant) -> Result<Compaction> {
        let (rows_before, rows_after) = self.write_alone(tenant, |w| w.compact())?;
        Ok(Compaction {
            tenant: tenant.name().to_string(),
            rows_before,
            rows_after,
        })
    }
}

impl TenantWriter<'_> {
    /// Compacts this tenant (the module docs say how): the vector rows
    /// before and after.
    fn compact(&mut self) -> Result<(u64, u64)> {
        self.optimize_fulltext()?;
        let Some(current) = self.vectors.existing(self.tenant_id) else {
            return Ok((0, 0));
        };
        let live = live_slots(self.conn.raw(), self.tenant_id)?;
        // Distinct slots below the row count, as many as the rows: no slot
        // is free, and the files are as compact as they get.
        if live.len() as u64 == current.committed_rows() {
            return Ok((live.len() as u64, live.len() as u64));
        }
        let fresh = next_generation(self.vectors, self.tenant_id, &current, &live)?;
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

    /// Merges the full-text index into one segment, dropping the entries
    /// of deleted chunks; freed pages are overwritten (`secure_delete`).
    fn optimize_fulltext(&mut self) -> Result<()> {
        let _secure = SecureDelete::on(self.conn.raw())?;
        let fts = self.fts_table();
        self.exec(&format!("INSERT INTO {fts}({fts}) VALUES ('optimize')"), [])?;
        Ok(())
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

/// A sealed new generation of the tenant's files holding `live`'s rows of
/// `current`, in order. Every row written to `current` must be published
/// (a compaction writes alone, so nothing of its transaction is pending).
pub(crate) fn next_generation(
    index: &super::vectors::VectorIndex,
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
    for batch in live.chunks(COPY_BATCH) {
        let rows: Vec<Vec<f32>> = batch
            .iter()
            .map(|slot| current.exact(*slot))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::internal("a live slot is past the committed rows"))?;
        fresh.append(&rows)?;
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
            "SELECT text FROM chunks WHERE tenant_id = ?1",
            |r| r.get::<_, String>(0),
        );
        let reader = store.reader(t).unwrap();
        for text in &texts {
            let q = BuiltinEmbedder.embed_batch(&[text]).unwrap().remove(0);
            let hit = &reader.vector_search(&q, 1).unwrap()[0];
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
}
