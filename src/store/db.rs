//! Opening the SQLite database: pragmas, migrations, schema version.
//!
//! Migrations are the plain SQL files under `sql/`, embedded at build time
//! and applied in order inside one transaction each. The applied version is
//! recorded in `schema_version`; a database written by a newer binary is
//! refused rather than guessed at.

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

use crate::config::Durability;
use crate::error::{Error, Result};

/// The database file inside the data directory.
pub const DB_FILE: &str = "memory.db";

/// How long a connection waits on a lock before giving up. Only start-up and
/// checkpoints ever contend: all writes go through one writer thread.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Page cache of the writer connection (KiB). Index pages of the tables
/// being appended to stay hot across group commits; clean pages the cache
/// drops are still a memory-mapped read away.
///
/// Not larger: B-tree balancing briefly files a page under the number of
/// the lock-byte page (1 GiB into the file), so at every commit SQLite
/// finds pages above the database's end and scans its whole page hash to
/// drop them, a cost that grows with the cache. At 64 MiB that scan was
/// 7–9% of the writer's time from 100k Zipf documents and the writer's CPU
/// per document was ~10% higher than at 16 or 8 MiB (perf sample counts,
/// BENCHMARKS.md, sixth session).
const WRITER_CACHE_KIB: i64 = 16 * 1024;

/// Page cache of each reader connection (KiB).
const READER_CACHE_KIB: i64 = 16 * 1024;

/// Database bytes mapped into memory instead of read with system calls.
/// Reads then cost no copy; the OS shares the pages between connections.
///
/// Not more: every mapped page a query touches stays in the process's
/// resident set, so the map's size is what a large memory adds to RSS. At
/// 1 GiB, loading 1M notes and querying them peaked at 2.5 GiB RSS; at 64
/// MiB, 674 MiB (the vector files, mapped whole, are 272 MiB of it). Pages
/// past the map are read into the connections' page caches: the load took
/// as long and queries were within 5% (`scripts/bench_filters.py`,
/// BENCHMARKS.md "One store at a million notes").
const MMAP_BYTES: i64 = 64 << 20;

/// Embedded migrations, in order. Append only; never edit a shipped one.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../sql/001_core.sql")),
    (2, include_str!("../../sql/002_usage.sql")),
    (3, include_str!("../../sql/003_graph.sql")),
    (4, include_str!("../../sql/004_files.sql")),
    (5, include_str!("../../sql/005_retention.sql")),
    (6, include_str!("../../sql/006_llm_extraction.sql")),
    (7, include_str!("../../sql/007_resolution.sql")),
    (8, include_str!("../../sql/008_declared_evidence.sql")),
    (
        9,
        include_str!("../../sql/009_name_terms_unconstrained.sql"),
    ),
    (
        10,
        include_str!("../../sql/010_documents_name_their_original.sql"),
    ),
    (
        11,
        include_str!("../../sql/011_job_attempts_and_failures.sql"),
    ),
    (12, include_str!("../../sql/012_job_runs_alone.sql")),
    (13, include_str!("../../sql/013_browse_indexes.sql")),
    (14, include_str!("../../sql/014_content_keys.sql")),
    (15, include_str!("../../sql/015_versions_and_fields.sql")),
    (16, include_str!("../../sql/016_memory_scopes.sql")),
];

/// Prepared statements kept per connection. rusqlite's default (16) is
/// fewer than the distinct statements one ingestion commit runs (chunks,
/// FTS, entities, mentions, relations, evidence, counters), so the writer
/// re-parsed SQL for every document; measured at about 5% of ingest CPU.
const STATEMENT_CACHE_CAPACITY: usize = 256;

/// The newest schema this binary understands.
pub fn latest_schema_version() -> i64 {
    MIGRATIONS.last().map(|(v, _)| *v).unwrap_or(0)
}

/// Settings every connection gets, whatever its role.
///
/// The query planner stability guarantee (QPSG): SQLite otherwise plans a
/// statement by the values bound to it where they might matter (an ORDER BY
/// over an index prefix fixed by `col = ?`, a bound LIMIT, LIKE), marks it,
/// and then re-prepares it at the first step after any of those bindings
/// changes, and after every `sqlite3_clear_bindings`, which the statement
/// cache calls each time a statement goes back into it. Measured: 3.4% of
/// the writer's time on entity-rich text (one name-term look-up per new
/// entity) and 5.2% of a query's CPU at 100k documents (entity look-ups, and
/// FTS5's own statements on the same connection). Nothing here needs a plan
/// that depends on a bound value: limits are written into the SQL, and no
/// query uses LIKE or GLOB.
fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Opens the single read-write connection and brings the schema up to date.
pub fn open_writer(dir: &Path, durability: Durability) -> Result<Connection> {
    let conn = Connection::open(dir.join(DB_FILE))?;
    configure(&conn)?;
    // WAL: readers never block the writer and vice versa. The synchronous
    // level is the durability contract (see `Durability`) until the writer
    // thread takes over syncing the log (`writer::WalSync`).
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::internal(format!(
            "cannot enable WAL (journal_mode={mode})"
        )));
    }
    let sync = sync_level(durability);
    // secure_delete on every write, not only forgetting's: an update that
    // moves a row (a chunk given its vector slot, a document its text)
    // frees the old copy, and without it that copy would outlive a later
    // forget in the page's free space.
    conn.execute_batch(&format!(
        "PRAGMA synchronous={sync};
         PRAGMA secure_delete=ON;
         PRAGMA foreign_keys=ON;
         PRAGMA temp_store=MEMORY;
         PRAGMA cache_size=-{WRITER_CACHE_KIB};
         PRAGMA mmap_size={MMAP_BYTES};"
    ))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    migrate(&conn)?;
    Ok(conn)
}

/// Opens the connection that only checkpoints (see `super::checkpoint`),
/// syncing the database file as the durability level says.
pub fn open_checkpointer(dir: &Path, durability: Durability) -> Result<Connection> {
    let conn = Connection::open(dir.join(DB_FILE))?;
    configure(&conn)?;
    conn.execute_batch(&format!(
        "PRAGMA synchronous={}; PRAGMA cache_size=-{READER_CACHE_KIB};",
        sync_level(durability)
    ))?;
    Ok(conn)
}

fn sync_level(durability: Durability) -> &'static str {
    match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    }
}

/// Opens a read-only connection (one per concurrent reader).
pub fn open_reader(dir: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        dir.join(DB_FILE),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&conn)?;
    conn.execute_batch("PRAGMA temp_store=MEMORY;")?;
    super::sharing::prepare_connection(&conn)?;
    conn.execute_batch(&format!(
        "PRAGMA query_only=ON; PRAGMA temp_store=MEMORY;
         PRAGMA cache_size=-{READER_CACHE_KIB}; PRAGMA mmap_size={MMAP_BYTES};"
    ))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    Ok(conn)
}

/// The schema version recorded in the database (0 for a new file).
pub fn schema_version(conn: &Connection) -> Result<i64> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version')",
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(0);
    }
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?)
}

fn migrate(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (
             version    INTEGER PRIMARY KEY,
             applied_at INTEGER NOT NULL
         )",
    )?;
    let current = schema_version(conn)?;
    let latest = latest_schema_version();
    if current > latest {
        return Err(Error::Unavailable(format!(
            "this data directory has schema version {current}, newer than this binary \
             understands ({latest}); upgrade alayasiki-mcp to open it"
        )));
    }
    // Every migration not yet recorded, not only those above the highest:
    // numbers are reserved per change and may land out of order (002, the
    // usage table, merged after 003 and 004), so a store written in between
    // still gets the gap filled.
    let applied: Vec<i64> = {
        let mut stmt = conn.prepare("SELECT version FROM schema_version")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| !applied.contains(v)) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_version(version, applied_at) VALUES (?1, ?2)",
            (version, crate::clock::now_ms()),
        )?;
        tx.commit()?;
        log::info!("applied schema migration {version}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn temp_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(crate::ids::new_id("alayasiki-db"));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn fresh_database_reaches_latest_schema() {
        let dir = temp_dir();
        let conn = open_writer(&dir, Durability::Full).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), latest_schema_version());
        drop(conn);
        // Reopening applies nothing and keeps the version.
        let conn = open_writer(&dir, Durability::Full).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), latest_schema_version());
        std::fs::remove_dir_all(dir).ok();
    }

    /// A new database with the migrations before `version` applied.
    fn database_before(version: i64) -> (PathBuf, Connection) {
        let dir = temp_dir();
        let conn = Connection::open(dir.join(DB_FILE)).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
        )
        .unwrap();
        for (v, sql) in MIGRATIONS.iter().filter(|(v, _)| *v < version) {
            conn.execute_batch(sql).unwrap();
            conn.execute("INSERT INTO schema_version VALUES (?1, 0)", [v])
                .unwrap();
        }
        (dir, conn)
    }

    #[test]
    fn documents_find_their_shared_and_own_originals_after_migration_10() {
        let (dir, conn) = database_before(10);
        conn.execute_batch(
            "INSERT INTO tenants(id, name, created_at) VALUES (1, 't', 0), (2, 'u', 0);
             INSERT INTO originals(id, tenant_id, sha256, bytes)
                  VALUES (5, 1, 'x', X'01'), (6, 1, 'y', X'02'), (7, 2, 'x', X'01');
             INSERT INTO documents(id, tenant_id, doc_id, media_type, sha256, byte_size,
                                   created_by, created_at, state)
                  VALUES (1, 1, 'a', 'text/plain', 'x', 1, 's', 0, 'ready'),
                         (2, 1, 'b', 'text/plain', 'x', 1, 's', 0, 'ready'),
                         (3, 1, 'c', 'text/plain', 'y', 1, 's', 0, 'ready'),
                         (4, 2, 'd', 'text/plain', 'x', 1, 's', 0, 'ready');",
        )
        .unwrap();
        drop(conn);
        let conn = open_writer(&dir, Durability::Full).unwrap();
        let links: Vec<(i64, i64)> = conn
            .prepare("SELECT id, original_id FROM documents ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        // Same bytes in one tenant share; another tenant's stay its own.
        assert_eq!(links, [(1, 5), (2, 5), (3, 6), (4, 7)]);
        let by_hash: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'documents_by_tenant_sha256'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(by_hash, 0, "the index by hash is gone");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn evidence_rows_survive_the_rebuild_that_allows_declared() {
        let (dir, conn) = database_before(8);
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO tenants(id, name, created_at) VALUES (1, 't', 0);
             INSERT INTO documents(id, tenant_id, doc_id, media_type, sha256, byte_size,
                                   created_by, created_at, state)
                  VALUES (9, 1, 'd', 'text/plain', 'x', 1, 's', 0, 'ready'),
                         (10, 1, 'e', 'text/plain', 'y', 1, 's', 0, 'ready');
             INSERT INTO entities(id, tenant_id, key, name, kind, first_seen, last_seen)
                  VALUES (1, 1, 'a', 'A', 'person', 0, 0), (2, 1, 'b', 'B', 'person', 0, 0);
             INSERT INTO relations(id, tenant_id, subject_id, predicate, label, object_id, kind,
                                   valid_from, last_evidence_at)
                  VALUES (7, 1, 1, 'know', 'knows', 2, 'pattern', 0, 0);
             INSERT INTO relation_evidence VALUES (7, 9, 1, 0, 5, 1, 'user', 42, 'llm');
             INSERT INTO relation_evidence VALUES (8, 9, 1, 0, 5, 1, 'user', 42, 'rules');",
        )
        .unwrap();
        drop(conn);
        let conn = open_writer(&dir, Durability::Full).unwrap();
        let kept: (i64, String) = conn
            .query_row(
                "SELECT at, extractor FROM relation_evidence WHERE relation_id = 7",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(kept, (42, "llm".to_string()));
        let orphans: i64 = conn
            .query_row(
                "SELECT count(*) FROM relation_evidence WHERE relation_id = 8",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(orphans, 0, "evidence of no relation is not copied");
        let check = |extractor: &str| {
            conn.execute(
                "INSERT INTO relation_evidence VALUES (7, 10, 1, 0, 5, 1, 'user', 43, ?1)",
                [extractor],
            )
        };
        assert!(check("other").is_err(), "the CHECK is kept");
        check("declared").unwrap();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_migration_merged_out_of_order_is_still_applied() {
        let dir = temp_dir();
        let conn = open_writer(&dir, Durability::Full).unwrap();
        // A store written by a build that had every migration but 002.
        conn.execute_batch("DROP TABLE usage; DELETE FROM schema_version WHERE version = 2;")
            .unwrap();
        drop(conn);
        let conn = open_writer(&dir, Durability::Full).unwrap();
        let has_usage: bool = conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'usage')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(has_usage);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn newer_schema_is_refused_clearly() {
        let dir = temp_dir();
        let conn = open_writer(&dir, Durability::Full).unwrap();
        conn.execute(
            "INSERT INTO schema_version(version, applied_at) VALUES (?1, 0)",
            [latest_schema_version() + 1],
        )
        .unwrap();
        drop(conn);
        let err = open_writer(&dir, Durability::Full).unwrap_err();
        assert!(err.client_message().contains("newer"), "{err}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn bundled_sqlite_has_fts5_with_contentless_delete() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(text, content='', contentless_delete=1,
                 tokenize='porter unicode61 remove_diacritics 2');
             INSERT INTO t(rowid, text) VALUES (1, 'acquired companies');
             DELETE FROM t WHERE rowid = 1;",
        )
        .unwrap();
    }
}
