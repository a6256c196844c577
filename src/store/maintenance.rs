//! Offline maintenance of the vector files: `compact` rewrites each
//! tenant's files without the slots of deleted chunks, and merges each
//! tenant's full-text index, which is when the index entries of forgotten
//! chunks physically go (a contentless FTS5 table only marks them deleted).
//!
//! A compaction writes a complete new generation of files, then switches
//! the chunks' slots, the committed row count and the generation in one
//! transaction, then deletes the old files. A crash before the commit
//! leaves the old generation in use (the new files are removed at the next
//! open); after it, the new one.

use rusqlite::params;

use super::forget::SecureDelete;
use super::tenant::{Tenant, TenantReader, TenantWriter};
use super::Store;
use crate::error::{Error, Result};

/// Vector rows copied per write while compacting.
const COPY_BATCH: usize = 4096;

/// What compacting one tenant did.
#[derive(Debug, Clone)]
pub struct Compaction {
    pub tenant: String,
    pub rows_before: u64,
    pub rows_after: u64,
}

impl Store {
    /// Compacts every tenant's vector files.
    pub fn compact_vectors(&self) -> Result<Vec<Compaction>> {
        let tenants: Vec<(String, i64)> = self
            .tenants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(n, id)| (n.clone(), *id))
            .collect();
        let mut report = Vec::new();
        for (name, id) in tenants {
            let Some(current) = self.vectors.existing(id) else {
                continue;
            };
            let tenant = Tenant::new(&name).map_err(Error::internal)?;
            let live = self.reader(&tenant)?.live_vector_slots()?;
            let fresh = self.vectors.fresh(id, current.generation() + 1)?;
            for batch in live.chunks(COPY_BATCH) {
                let rows: Vec<Vec<f32>> = batch
                    .iter()
                    .map(|(_, slot)| current.exact(*slot as u64))
                    .collect::<Option<_>>()
                    .ok_or_else(|| Error::internal("a live slot is past the committed rows"))?;
                fresh.append(&rows)?;
            }
            let rows_after = fresh.seal()?;
            let generation = fresh.generation();
            let mapping: Vec<i64> = live.iter().map(|(chunk, _)| *chunk).collect();
            self.write(&tenant, move |w| {
                w.switch_vector_generation(&mapping, generation)
            })?;
            report.push(Compaction {
                tenant: name,
                rows_before: current.committed_rows(),
                rows_after,
            });
            self.vectors.install(id, fresh)?;
        }
        Ok(report)
    }
}

impl Store {
    /// Merges every tenant's full-text index into one segment, dropping the
    /// entries of deleted chunks; freed pages are overwritten
    /// (`secure_delete`). Returns the number of tenants optimized.
    pub fn optimize_fulltext(&self) -> Result<usize> {
        let tenants = self.known_tenants()?;
        for tenant in &tenants {
            self.write(tenant, |w| w.optimize_fulltext())?;
        }
        Ok(tenants.len())
    }
}

impl TenantReader<'_> {
    /// `(chunk key, slot)` of every chunk with a vector, in slot order.
    pub(super) fn live_vector_slots(&self) -> Result<Vec<(i64, i64)>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare(
            "SELECT id, vector_slot FROM chunks
              WHERE tenant_id = ?1 AND vector_slot IS NOT NULL ORDER BY vector_slot",
        )?;
        let rows = stmt.query_map([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl TenantWriter<'_> {
    fn optimize_fulltext(&mut self) -> Result<()> {
        let _secure = SecureDelete::on(self.conn.raw())?;
        let fts = self.fts_table();
        self.exec(&format!("INSERT INTO {fts}({fts}) VALUES ('optimize')"), [])?;
        Ok(())
    }

    /// Points the chunks at their rows in a new generation: `chunks[i]`
    /// moves to slot `i`.
    fn switch_vector_generation(&mut self, chunks: &[i64], generation: i64) -> Result<()> {
        // Two passes through negative slots, so no update ever collides
        // with a slot another chunk still holds (slots are unique).
        for (new_slot, chunk) in chunks.iter().enumerate() {
            self.exec(
                "UPDATE chunks SET vector_slot = ?3 WHERE tenant_id = ?1 AND id = ?2",
                params![self.tenant_id, chunk, -(new_slot as i64) - 1],
            )?;
        }
        self.exec(
            "UPDATE chunks SET vector_slot = -vector_slot - 1
              WHERE tenant_id = ?1 AND vector_slot < 0",
            [self.tenant_id],
        )?;
        self.exec(
            "UPDATE tenants SET vector_rows = ?2, vector_generation = ?3 WHERE id = ?1",
            params![self.tenant_id, chunks.len() as i64, generation],
        )?;
        Ok(())
    }
}
