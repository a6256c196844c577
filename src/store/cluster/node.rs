//! A data directory made, and kept, a replica of a cluster's memory: what
//! `alayasiki-api --store rqlite://…` does before it opens the store.
//!
//! The cluster's memory is named by `cluster_meta.id`, and a replica keeps
//! that name in [`MARKER_FILE`]. At start-up, with the owner lock held:
//!
//! - a directory that names this memory resumes: it follows the log from
//!   its own position (its `user_version`), unless the log no longer holds
//!   the entries after it (they were older than its retention): then it is
//!   discarded and joins again from a snapshot;
//! - the first node of an empty cluster claims it (the name is written
//!   once, by whoever gets there first) and pushes its directory into it:
//!   the memory it holds, or an empty one; the memory is `ready` once the
//!   push is checked;
//! - a node with an empty directory joins a ready memory from one node's
//!   consistent snapshot (rqlite's `/db/backup`), which carries the log up
//!   to the snapshot's position, so it then follows from exactly there;
//! - a directory that was founding this memory when it stopped (it names
//!   it in [`FOUNDING_FILE`], and the memory never became ready) clears
//!   what it had copied in and founds it again;
//! - anything else (a directory of another memory, or one holding a
//!   memory that is not this cluster's) is refused: nothing is merged.
//!
//! Last, vector files that are missing or short are rebuilt from the
//! cluster's rows (`vector_cache`).

use rusqlite::{Connection, OptionalExtension};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use super::client::ClusterClient;
use super::copy::{self, CopyError, Result};
use super::replica::{self, create_cluster_tables, SETTLE_DEADLINE};
use super::vector_cache;
use super::wire::{Param, Statement};
use crate::config::Durability;
use crate::limits::{CLUSTER_LEADER_WAIT, CLUSTER_RETRY_PAUSE};
use crate::store::db;
use crate::store::vectors::VectorSpec;

/// The file in a data directory that names the cluster memory it replicates.
pub const MARKER_FILE: &str = "cluster-memory";

/// The file in a data directory that names the memory it is founding on a
/// cluster: written before the claim, so that a founder that dies while
/// it copies itself in finds, when it starts again, that the unfinished
/// memory is its own, clears it and founds it again (no other node joins
/// a memory before it is ready).
pub const FOUNDING_FILE: &str = "cluster-founding";

/// How a directory became (or stayed) a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// It was already one, at this position.
    Resumed(i64),
    /// It founded the cluster's memory with what it held.
    Founded,
    /// It copied a snapshot taken at this position.
    FromSnapshot(i64),
}

/// Makes `dir` (owned by the caller, store closed) a replica of the
/// memory on `client`'s cluster; see the module docs.
pub fn join(
    dir: &Path,
    client: &ClusterClient,
    spec: &VectorSpec,
    durability: Durability,
) -> Result<Joined> {
    client.await_leader(Instant::now() + CLUSTER_LEADER_WAIT)?;
    create_cluster_tables(client)?;
    let marker = read_name(dir, MARKER_FILE);
    let founding = read_name(dir, FOUNDING_FILE);
    let has_store = dir.join(db::DB_FILE).exists();
    let joined = match (marker, meta(client, "id")?) {
        // A replica discarded to join again (below) that stopped before
        // its snapshot arrived: it held nothing the cluster lacks.
        (Some(mine), Some(id)) if mine == id && !has_store => {
            log::warn!("this replica has no database: joining again from a snapshot");
            Joined::FromSnapshot(from_snapshot(dir, client)?)
        }
        (Some(mine), Some(id)) if mine == id => {
            let conn = db::open_reader(dir).map_err(CopyError::Store)?;
            let at = position(&conn)?;
            drop(conn);
            match oldest_entry(client)? {
                // Away longer than the log keeps entries: what it missed
                // is only in a snapshot now.
                Some(oldest) if oldest > at + 1 => {
                    log::warn!(
                        "this replica is at entry {at} and the log now starts at {oldest}: \
                         joining again from a snapshot"
                    );
                    discard_replica(dir)?;
                    Joined::FromSnapshot(from_snapshot(dir, client)?)
                }
                _ => Joined::Resumed(at),
            }
        }
        (Some(_), _) => {
            return Err(refused(
                "the data directory replicates another cluster memory; give this node a \
                 directory of its own",
            ))
        }
        // This directory was founding the memory: finish what it began.
        (None, Some(id)) if founding.as_deref() == Some(id.as_str()) => {
            if meta(client, "ready")?.is_none() {
                found_memory(dir, client, spec, durability)?;
            }
            mark(dir, &id)?;
            let _ = std::fs::remove_file(dir.join(FOUNDING_FILE));
            Joined::Founded
        }
        (None, Some(id)) if !has_store => {
            await_ready(client)?;
            let at = from_snapshot(dir, client)?;
            mark(dir, &id)?;
            Joined::FromSnapshot(at)
        }
        (None, Some(_)) => {
            return Err(refused(
                "the data directory holds a memory that is not this cluster's; move it away \
                 to join the cluster, or push it into an empty one",
            ))
        }
        (None, None) => match found_memory(dir, client, spec, durability) {
            Ok((id, _)) => {
                mark(dir, &id)?;
                let _ = std::fs::remove_file(dir.join(FOUNDING_FILE));
                Joined::Founded
            }
            // Another node claimed it first: join it as any other node.
            Err(CopyError::NotEmpty(_)) if !has_store => {
                return join(dir, client, spec, durability)
            }
            Err(e) => return Err(e),
        },
    };
    vector_cache::rebuild(dir, spec, durability, client)?;
    Ok(joined)
}

/// Founds the cluster's memory with the store in `dir` (an empty one,
/// created first, if there is none): claims the memory's name, copies the
/// tables and the vector rows in and checks them, and marks the memory
/// ready; returns its name. Refused if the cluster already has a memory
/// (or another node is founding one), unless it is the unfinished memory
/// `dir` itself began to found ([`FOUNDING_FILE`]): that is cleared from
/// the cluster and founded again. `dir` stays a memory of its own until
/// it is marked as the cluster's replica; [`FOUNDING_FILE`] stays until
/// the caller is done with it.
pub fn found_memory(
    dir: &Path,
    client: &ClusterClient,
    spec: &VectorSpec,
    durability: Durability,
) -> Result<(String, copy::Copied)> {
    create_cluster_tables(client)?;
    let id = match unfinished_founding(dir, client)? {
        Some(id) => {
            log::warn!("finishing the founding of cluster memory {id}: copying it in again");
            copy::clear_cluster(client)?;
            id
        }
        None => {
            let mine = crate::ids::new_id("mem");
            // Named in the directory before the cluster hears of it.
            write_name(dir, FOUNDING_FILE, &mine)?;
            if !claim(client, &mine)? {
                let _ = std::fs::remove_file(dir.join(FOUNDING_FILE));
                return Err(refused("the cluster already holds a memory"));
            }
            mine
        }
    };
    let copied = found(dir, client, spec, durability)?;
    set_meta(client, "ready", "1")?;
    Ok((id, copied))
}

/// The memory `dir` was founding, if the cluster holds it and it never
/// became ready.
fn unfinished_founding(dir: &Path, client: &ClusterClient) -> Result<Option<String>> {
    let Some(founding) = read_name(dir, FOUNDING_FILE) else {
        return Ok(None);
    };
    let ours = meta(client, "id")?.as_deref() == Some(founding.as_str());
    Ok((ours && meta(client, "ready")?.is_none()).then_some(founding))
}

fn refused(why: &str) -> CopyError {
    CopyError::NotEmpty(why.to_string())
}

/// The last log entry `conn`'s database applied.
fn position(conn: &Connection) -> Result<i64> {
    Ok(replica::position(conn)?)
}

/// The oldest entry the cluster's log still holds.
fn oldest_entry(client: &ClusterClient) -> Result<Option<i64>> {
    let rows = client.query(
        &[Statement::plain("SELECT MIN(seq) FROM cluster_log")],
        super::client::ReadLevel::Leader,
    )?;
    Ok(rows[0].rows.first().and_then(|r| r[0].as_i64()))
}

/// Deletes a replica's database and vector files (the store is closed):
/// everything in them is in the cluster, which a snapshot copies again.
fn discard_replica(dir: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let path = dir.join(format!("{}{suffix}", db::DB_FILE));
        if path.exists() {
            std::fs::remove_file(path).map_err(io)?;
        }
    }
    let vectors = dir.join(crate::store::vectors::VECTORS_DIR);
    if vectors.exists() {
        std::fs::remove_dir_all(vectors).map_err(io)?;
    }
    Ok(())
}

fn meta(client: &ClusterClient, key: &str) -> Result<Option<String>> {
    Ok(client.query_text(
        "SELECT value FROM cluster_meta WHERE key = ?",
        vec![Param::Text(key.into())],
    )?)
}

fn set_meta(client: &ClusterClient, key: &str, value: &str) -> Result<()> {
    client.commit(
        &[Statement::new(
            "INSERT OR REPLACE INTO cluster_meta(key, value) VALUES (?, ?)",
            vec![Param::Text(key.into()), Param::Text(value.into())],
        )],
        Instant::now() + SETTLE_DEADLINE,
    )?;
    Ok(())
}

/// Names the cluster's memory `mine` if no node has: whether this node
/// did (and must now found it), or another got there first.
fn claim(client: &ClusterClient, mine: &str) -> Result<bool> {
    client.commit(
        &[Statement::new(
            "INSERT OR IGNORE INTO cluster_meta(key, value) VALUES ('id', ?)",
            vec![Param::Text(mine.to_string())],
        )],
        Instant::now() + SETTLE_DEADLINE,
    )?;
    Ok(meta(client, "id")?.as_deref() == Some(mine))
}

/// Waits until the node that claimed the memory has pushed it.
fn await_ready(client: &ClusterClient) -> Result<()> {
    let deadline = Instant::now() + CLUSTER_LEADER_WAIT.max(Duration::from_secs(60));
    while meta(client, "ready")?.is_none() {
        if Instant::now() >= deadline {
            return Err(refused(
                "the node that founded the cluster's memory has not finished copying it in",
            ));
        }
        std::thread::sleep(CLUSTER_RETRY_PAUSE);
    }
    Ok(())
}

/// Pushes the memory in `dir` (an empty one, created first, if there is
/// none) into the claimed cluster, vectors included.
fn found(
    dir: &Path,
    client: &ClusterClient,
    spec: &VectorSpec,
    durability: Durability,
) -> Result<copy::Copied> {
    // Opening the writer creates or migrates the schema.
    let conn = db::open_writer(dir, durability).map_err(CopyError::Store)?;
    if position(&conn)? != 0 {
        return Err(refused(
            "the data directory was a replica of another cluster memory",
        ));
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(conn);
    let copied = copy::push_dir(dir, client)?;
    vector_cache::push_vectors(dir, spec, client)?;
    Ok(copied)
}

/// Copies one node's consistent snapshot into `dir` as its database:
/// the memory's tables at the snapshot's log position, which it returns.
fn from_snapshot(dir: &Path, client: &ClusterClient) -> Result<i64> {
    let partial = dir.join(format!("{}.joining", db::DB_FILE));
    let result = (|| {
        let mut file = std::fs::File::create(&partial).map_err(io)?;
        client.backup(&mut file)?;
        file.flush().map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        let conn = Connection::open(&partial)?;
        let at: i64 = conn
            .query_row("SELECT MAX(seq) FROM cluster_log", [], |r| r.get(0))
            .optional()?
            .flatten()
            .unwrap_or(0);
        // The cluster's own tables (`cluster_…`) stay in the cluster.
        let own: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master \
                  WHERE type = 'table' AND name LIKE 'cluster\\_%' ESCAPE '\\'",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for table in own {
            conn.execute_batch(&format!("DROP TABLE \"{table}\""))?;
        }
        conn.execute_batch(&format!(
            "PRAGMA user_version = {at}; PRAGMA journal_mode = DELETE; VACUUM;"
        ))?;
        drop(conn);
        std::fs::rename(&partial, dir.join(db::DB_FILE)).map_err(io)?;
        Ok(at)
    })();
    if result.is_err() {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
        }
    }
    result
}

fn mark(dir: &Path, id: &str) -> Result<()> {
    write_name(dir, MARKER_FILE, id)
}

/// Writes `id` to `dir/file`, durably and whole (through a renamed copy).
fn write_name(dir: &Path, file: &str, id: &str) -> Result<()> {
    let path = dir.join(file);
    let tmp = dir.join(format!("{file}.tmp"));
    std::fs::write(&tmp, format!("{id}\n")).map_err(io)?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    // The rename itself must survive a crash too.
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

/// The memory name kept in `dir/file`, if there is one.
fn read_name(dir: &Path, file: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    let name = text.trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn io(e: std::io::Error) -> CopyError {
    CopyError::Store(e.into())
}
