//! The jobs a node journalled itself, remembered in its own replica.
//!
//! Nodes share one journal, and leave each other's fresh jobs alone for
//! `JOB_ADOPT_GRACE` (`ingest::worker`). A node knows its own by the work
//! its request threads handed over, which a restart loses: a node started
//! again after `kill -9` would wait out the grace for documents it had
//! acknowledged itself. So each transaction this node commits to the
//! cluster also notes, in [`OWN_JOBS_TABLE`] of its local database only
//! (in the same local transaction, never in the log), the pending jobs it
//! created, and the worker takes those up as soon as it starts, as a
//! local store replays its journal.
//!
//! The table's name starts `cluster_`, so copies and digests pass it over
//! like the cluster's own tables; a node that joins again from a snapshot
//! starts without it (its jobs are then adopted after the grace, as
//! another node's). It keeps the jobs from the oldest one still pending
//! on: done jobs below that leave at the next commit.

use rusqlite::{Connection, OptionalExtension};

/// This node's own jobs (ids of `jobs` rows), in its replica alone.
pub const OWN_JOBS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS cluster_node_jobs (job_id INTEGER PRIMARY KEY)";

/// The largest job id in `conn`'s journal (0 when it has none): a job
/// created after this call has a larger one (ids are one past the
/// largest).
pub(super) fn newest(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COALESCE(MAX(id), 0) FROM jobs", [], |r| r.get(0))
}

/// Inside the writer's open transaction: notes the pending jobs with ids
/// above `seen` (the ones this transaction created) as this node's, and
/// lets go of those below the oldest pending job. Returns the largest job
/// id now.
pub(super) fn record(conn: &Connection, seen: i64) -> rusqlite::Result<i64> {
    let created: Vec<i64> = conn
        .prepare_cached("SELECT id FROM jobs WHERE id > ?1 AND state = 'pending'")?
        .query_map([seen], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let exists = !created.is_empty() || table_exists(conn)?;
    if !created.is_empty() {
        conn.execute_batch(OWN_JOBS_TABLE)?;
        let mut insert =
            conn.prepare_cached("INSERT OR IGNORE INTO cluster_node_jobs(job_id) VALUES (?1)")?;
        for id in &created {
            insert.execute([id])?;
        }
    }
    if exists {
        conn.prepare_cached(
            "DELETE FROM cluster_node_jobs WHERE job_id < \
             (SELECT COALESCE(MIN(id), ?1) FROM jobs WHERE state = 'pending')",
        )?
        .execute([i64::MAX])?;
    }
    newest(conn)
}

/// The jobs this node created that are still pending, oldest first.
pub fn pending(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    if !table_exists(conn)? {
        return Ok(Vec::new());
    }
    conn.prepare(
        "SELECT o.job_id FROM cluster_node_jobs o JOIN jobs j ON j.id = o.job_id \
          WHERE j.state = 'pending' ORDER BY o.job_id",
    )?
    .query_map([], |r| r.get(0))?
    .collect()
}

fn table_exists(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cluster_node_jobs'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}
