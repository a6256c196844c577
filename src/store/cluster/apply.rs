//! A follower's side of the log: one entry applied to the local store in
//! a transaction of its own, its vector rows to the vector files, and a
//! compaction it records rebuilt from the node's own files.

use rusqlite::types::Value;
use rusqlite::Connection;
use std::sync::Arc;

use crate::store::maintenance;
use crate::store::vectors::{TenantVectors, VectorIndex};
use crate::store::write_log::{
    vector_from_bytes, Recorded, VECTOR_CLEAR, VECTOR_COMPACT, VECTOR_PUT, VECTOR_RENUMBER,
    VECTOR_RENUMBERED,
};

/// Applies one entry in a local transaction of its own, as its writer ran
/// it in one: the full-text index then flushes the same segments, and the
/// follower's pages come out byte for byte the writer's. Its vector rows
/// go to the vector files, synced before the commit and visible after it.
pub(super) fn apply_entry(
    conn: &Connection,
    vectors: &VectorIndex,
    seq: i64,
    statements: &[Recorded],
) -> Result<(), String> {
    conn.execute_batch("BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON")
        .map_err(|e| e.to_string())?;
    let mut files = EntryVectors::default();
    let outcome = statements
        .iter()
        .try_for_each(|r| match r.sql.as_str() {
            VECTOR_PUT => files.put(vectors, r),
            VECTOR_CLEAR => files.clear(r),
            VECTOR_COMPACT => files.compact(conn, vectors, r),
            // The cluster's vector rows alone: the files were rebuilt above.
            VECTOR_RENUMBER | VECTOR_RENUMBERED => Ok(()),
            _ => apply(conn, r).map_err(|e| e.to_string()),
        })
        .and_then(|()| files.stage_compactions(conn, vectors))
        .and_then(|()| {
            conn.execute_batch(&format!("PRAGMA user_version = {seq}"))
                .map_err(|e| e.to_string())
        })
        .and_then(|()| vectors.sync_dirty().map_err(|e| e.to_string()))
        .and_then(|()| conn.execute_batch("COMMIT").map_err(|e| e.to_string()));
    match outcome {
        Ok(()) => {
            files.committed(vectors);
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            files.rolled_back(vectors);
            Err(format!("entry {seq}: {e}"))
        }
    }
}

/// What one entry does to the vector files.
#[derive(Default)]
struct EntryVectors {
    /// Each tenant's files it appended to, with the first slot it wrote.
    appended: Vec<(Arc<TenantVectors>, u64)>,
    /// Slots it zeroes once committed.
    cleared: Vec<(i64, u64)>,
    /// Each tenant's next generation of files, built where the entry
    /// compacts it ([`VECTOR_COMPACT`]), staged once its statements ran.
    compacted: Vec<(i64, TenantVectors)>,
    /// Tenants whose new generation is staged, settled with the entry.
    staged: Vec<i64>,
}

impl EntryVectors {
    fn put(&mut self, vectors: &VectorIndex, r: &Recorded) -> Result<(), String> {
        let bad = || "a vector row that is not what the writer records".to_string();
        let (tenant, slot, vector) = match r.params.as_slice() {
            [Value::Integer(t), Value::Integer(s), Value::Blob(b)] => {
                (*t, *s as u64, vector_from_bytes(b).ok_or_else(bad)?)
            }
            _ => return Err(bad()),
        };
        // Every tenant with rows was opened at start-up (or by an earlier
        // entry); one opened here is new and starts empty.
        let tv = vectors.tenant(tenant, 0, 0).map_err(|e| e.to_string())?;
        let next = tv.written_rows();
        if slot != next {
            return Err(format!(
                "vector slot {slot} of tenant {tenant} arrived when the files hold {next} rows"
            ));
        }
        let first = tv.append(&[vector]).map_err(|e| e.to_string())?;
        if !self.appended.iter().any(|(t, _)| Arc::ptr_eq(t, &tv)) {
            self.appended.push((tv, first));
        }
        Ok(())
    }

    fn clear(&mut self, r: &Recorded) -> Result<(), String> {
        match r.params.as_slice() {
            [Value::Integer(t), Value::Integer(s)] => {
                self.cleared.push((*t, *s as u64));
                Ok(())
            }
            _ => Err("a cleared vector row that is not what the writer records".into()),
        }
    }

    /// Builds the tenant's next generation from the live slots of its
    /// files, in slot order, as the writer did: the entry's statements
    /// that follow renumber the chunks to match.
    fn compact(
        &mut self,
        conn: &Connection,
        vectors: &VectorIndex,
        r: &Recorded,
    ) -> Result<(), String> {
        let [Value::Integer(tenant)] = r.params.as_slice() else {
            return Err("a compaction that is not what the writer records".into());
        };
        let (rows, generation) = recorded_files(conn, *tenant)?;
        let current = vectors
            .tenant(*tenant, rows, generation)
            .map_err(|e| e.to_string())?;
        let live = maintenance::live_slots(conn, *tenant).map_err(|e| e.to_string())?;
        let fresh = maintenance::next_generation(vectors, *tenant, &current, &live)
            .map_err(|e| e.to_string())?;
        self.compacted.push((*tenant, fresh));
        Ok(())
    }

    /// Checks that each new generation is the one the entry recorded (its
    /// generation and row count), and stages it: readers whose snapshot
    /// predates the commit keep the old files until it is settled.
    fn stage_compactions(
        &mut self,
        conn: &Connection,
        vectors: &VectorIndex,
    ) -> Result<(), String> {
        for (tenant, fresh) in std::mem::take(&mut self.compacted) {
            let recorded = recorded_files(conn, tenant)?;
            let built = (fresh.committed_rows(), fresh.generation());
            if recorded != built {
                return Err(format!(
                    "tenant {tenant} was compacted to {recorded:?} (rows, generation), \
                     its files here to {built:?}"
                ));
            }
            vectors.stage(tenant, fresh);
            self.staged.push(tenant);
        }
        Ok(())
    }

    fn committed(self, vectors: &VectorIndex) {
        for tenant in self.staged {
            vectors.settle(tenant, true);
        }
        for (tv, _) in self.appended {
            if let Err(e) = tv.publish(tv.written_rows()) {
                log::error!("cannot map applied vectors: {e}");
            }
        }
        for (tenant, slot) in self.cleared {
            if let Some(tv) = vectors.existing(tenant) {
                if let Err(e) = tv.zero(slot) {
                    log::error!("cannot zero an applied vector slot: {e}");
                }
            }
        }
    }

    fn rolled_back(self, vectors: &VectorIndex) {
        for tenant in self.staged {
            vectors.settle(tenant, false);
        }
        for (tv, first) in self.appended.into_iter().rev() {
            tv.rollback(first);
        }
    }
}

fn apply(conn: &Connection, r: &Recorded) -> rusqlite::Result<()> {
    if r.params.is_empty() {
        conn.execute_batch(&r.sql)
    } else {
        conn.execute(&r.sql, rusqlite::params_from_iter(&r.params))
            .map(|_| ())
    }
}

/// The row count and generation the local database records for the
/// tenant's vector files.
fn recorded_files(conn: &Connection, tenant: i64) -> Result<(u64, i64), String> {
    conn.query_row(
        "SELECT vector_rows, vector_generation FROM tenants WHERE id = ?1",
        [tenant],
        |row| Ok((row.get::<_, i64>(0)? as u64, row.get(1)?)),
    )
    .map_err(|e| e.to_string())
}
