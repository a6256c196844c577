//! A node's vector files as a cache of the cluster's `cluster_vectors`.
//!
//! In a cluster the vectors' record is the `cluster_vectors` table: one
//! row per slot of each tenant's files, written in the transaction of the
//! chunk it belongs to (`write_log::VECTOR_PUT`) and deleted when the
//! chunk is forgotten. Each node searches its own memory-mapped files,
//! which it keeps in step as it follows the log (`replica`). This module
//! fills the table from a local store's files (a `push`) and rebuilds a
//! node's files from the table when they are missing, short or of another
//! embedder, before the store opens; a slot with no row (forgotten) is
//! rebuilt as zeros, as the files that zeroed it hold it.

use rusqlite::Connection;
use std::path::Path;
use std::time::Instant;

use super::client::{ClusterClient, ReadLevel};
use super::copy::{CopyError, Result};
use super::tables::unhex;
use super::wire::{Param, Statement};
use crate::config::Durability;
use crate::limits::{COPY_BATCH_BYTES, COPY_BATCH_ROWS, COPY_WRITE_DEADLINE};
use crate::store::db;
use crate::store::vectors::{VectorIndex, VectorSpec};
use crate::store::write_log::{vector_bytes, vector_from_bytes, VECTOR_PUT};

/// One tenant's vector files as the local database records them.
struct TenantFiles {
    id: i64,
    rows: u64,
    generation: i64,
}

fn tenants_with_vectors(conn: &Connection) -> Result<Vec<TenantFiles>> {
    let mut stmt = conn.prepare(
        "SELECT id, vector_rows, vector_generation FROM tenants WHERE vector_rows > 0 ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(TenantFiles {
            id: r.get(0)?,
            rows: r.get::<_, i64>(1)? as u64,
            generation: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Copies every tenant's committed vector rows from the files in `dir`
/// into the cluster's (empty) `cluster_vectors`; returns the rows copied.
pub fn push_vectors(dir: &Path, spec: &VectorSpec, client: &ClusterClient) -> Result<u64> {
    let conn = db::open_reader(dir).map_err(CopyError::Store)?;
    let index =
        VectorIndex::new(dir, spec.clone(), Durability::Normal).map_err(CopyError::Store)?;
    let mut copied = 0;
    for t in tenants_with_vectors(&conn)? {
        let files = index
            .tenant(t.id, t.rows, t.generation)
            .map_err(CopyError::Store)?;
        let mut batch = Vec::new();
        let mut bytes = 0;
        for slot in 0..t.rows {
            let vector = files.stored(slot).ok_or_else(|| {
                CopyError::Mismatch(format!("tenant {} has no vector row {slot}", t.id))
            })?;
            let blob = vector_bytes(&vector);
            bytes += blob.len() * 2;
            batch.push(
                Statement::from_recorded(
                    VECTOR_PUT,
                    &[t.id.into(), (slot as i64).into(), blob.into()],
                )
                .map_err(CopyError::Mismatch)?,
            );
            if batch.len() >= COPY_BATCH_ROWS || bytes >= COPY_BATCH_BYTES {
                client.commit(&batch, Instant::now() + COPY_WRITE_DEADLINE)?;
                batch.clear();
                bytes = 0;
            }
        }
        if !batch.is_empty() {
            client.commit(&batch, Instant::now() + COPY_WRITE_DEADLINE)?;
        }
        copied += t.rows;
    }
    Ok(copied)
}

/// Rebuilds, from the cluster's rows, the vector files in `dir` of every
/// tenant whose files hold fewer rows than its database committed (none,
/// a truncated file, another embedder's header); returns each rebuilt
/// tenant with its rows. The store in `dir` must be closed.
pub fn rebuild(
    dir: &Path,
    spec: &VectorSpec,
    durability: Durability,
    client: &ClusterClient,
) -> Result<Vec<(i64, u64)>> {
    let conn = db::open_reader(dir).map_err(CopyError::Store)?;
    let tenants = tenants_with_vectors(&conn)?;
    drop(conn);
    let index = VectorIndex::new(dir, spec.clone(), durability).map_err(CopyError::Store)?;
    let mut rebuilt = Vec::new();
    for t in tenants {
        let usable = index.usable_rows(t.id, t.generation);
        if usable >= t.rows {
            continue;
        }
        log::warn!(
            "tenant {}'s vector files hold {usable} of {} rows: rebuilding them from the cluster",
            t.id,
            t.rows
        );
        let fresh = index.fresh(t.id, t.generation).map_err(CopyError::Store)?;
        let zero = vec![0f32; spec.dim];
        let mut next = 0u64;
        while next < t.rows {
            let page = client.query(
                &[Statement::new(
                    format!(
                        "SELECT slot, hex(vector) FROM cluster_vectors \
                         WHERE tenant_id = ? AND slot >= ? AND slot < ? \
                         ORDER BY slot LIMIT {COPY_BATCH_ROWS}"
                    ),
                    vec![
                        Param::Int(t.id),
                        Param::Int(next as i64),
                        Param::Int(t.rows as i64),
                    ],
                )],
                ReadLevel::Leader,
            )?;
            let rows = &page[0].rows;
            let mut vectors = Vec::with_capacity(rows.len());
            for row in rows {
                let slot = row[0]
                    .as_i64()
                    .ok_or_else(|| CopyError::Mismatch("a vector row without a slot".into()))?
                    as u64;
                let vector = row[1]
                    .as_str()
                    .and_then(unhex)
                    .and_then(|b| vector_from_bytes(&b))
                    .filter(|v| v.len() == spec.dim)
                    .ok_or_else(|| {
                        CopyError::Mismatch(format!(
                            "vector row {slot} of tenant {} is not of this embedder",
                            t.id
                        ))
                    })?;
                // Slots with no row were forgotten: zeros, as zeroed here.
                while next < slot {
                    vectors.push(zero.clone());
                    next += 1;
                }
                vectors.push(vector);
                next += 1;
            }
            if rows.len() < COPY_BATCH_ROWS {
                while next < t.rows {
                    vectors.push(zero.clone());
                    next += 1;
                }
            }
            fresh.append(&vectors).map_err(CopyError::Store)?;
        }
        let sealed = fresh.seal().map_err(CopyError::Store)?;
        rebuilt.push((t.id, sealed));
    }
    Ok(rebuilt)
}
