//! Copying a memory between a local database and a cluster, both ways,
//! table by table and row for row.
//!
//! The copy is of the database itself, not of what the store's modules
//! know about it: the schema is each object's own `CREATE` text from
//! `sqlite_master`, and every ordinary table is copied whole, the
//! full-text indexes' shadow tables included. A contentless FTS5 index
//! cannot be rebuilt from the chunks (the `context` column it ranks lives
//! only in the index), so its pages travel as they are: the copy ranks
//! exactly as the original did. Tables come first, rows next (in batches
//! of at most [`COPY_BATCH_ROWS`] rows and about [`COPY_BATCH_BYTES`] bytes,
//! one transaction each), indexes last. Each row goes in as an upsert that
//! leaves a row already there alone, so a batch sent again after a timeout
//! (it may have been applied) changes nothing.
//!
//! Either side must be still while it is read: the local database under
//! its owner lock (the caller's), the cluster with no server writing to it
//! (its reads are pages at the leader's level, not one snapshot). The
//! destination must be empty: nothing is merged into an existing memory.
//!
//! Not copied: SQLite's own tables (`sqlite_stat1`, rebuilt by `ANALYZE`),
//! and the vector files beside a local database (a pulled copy is
//! re-embedded by the caller, `alayasiki-mcp reindex`).

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::path::Path;
use std::time::Instant;

use super::super::db;
use super::client::{ClusterClient, ClusterError, ReadLevel};
use super::digest::compare;
pub use super::digest::{digests_of_cluster, digests_of_local};
pub use super::tables::SchemaObject;
use super::tables::{
    cell_to_sql, cluster_tables, each_local_row, local_tables, page_cluster, quoted,
    schema_of_cluster, schema_of_local, shadows, split_schema, Table,
};
use super::wire::{hex, Param, Statement};
use crate::limits::{COPY_BATCH_BYTES, COPY_BATCH_ROWS, COPY_WRITE_DEADLINE};

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    pub tables: usize,
    pub rows: u64,
    /// Per table, in name order: its name, row count and digest.
    pub digests: Vec<(String, u64, String)>,
}

#[derive(Debug)]
pub enum CopyError {
    /// The destination already holds a memory.
    NotEmpty(String),
    Local(rusqlite::Error),
    Cluster(ClusterError),
    /// The two sides disagree after the copy.
    Mismatch(String),
    /// The local store could not be opened, or is of another version.
    Store(crate::error::Error),
}

impl std::fmt::Display for CopyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyError::NotEmpty(d) => write!(f, "the destination is not empty: {d}"),
            CopyError::Local(e) => write!(f, "local database: {e}"),
            CopyError::Cluster(e) => write!(f, "{e}"),
            CopyError::Mismatch(d) => write!(f, "the copy differs from its source: {d}"),
            CopyError::Store(e) => write!(f, "local store: {e}"),
        }
    }
}

impl std::error::Error for CopyError {}

impl From<rusqlite::Error> for CopyError {
    fn from(e: rusqlite::Error) -> Self {
        CopyError::Local(e)
    }
}
impl From<ClusterError> for CopyError {
    fn from(e: ClusterError) -> Self {
        CopyError::Cluster(e)
    }
}

pub(super) type Result<T> = std::result::Result<T, CopyError>;

/// Copies the store in `dir`, which the caller owns, into the empty
/// cluster behind `client`. The store must be at this binary's schema
/// version (opening it once with this binary migrates it).
pub fn push_dir(dir: &Path, client: &ClusterClient) -> Result<Copied> {
    let conn = db::open_reader(dir).map_err(CopyError::Store)?;
    let version = db::schema_version(&conn).map_err(CopyError::Store)?;
    if version != db::latest_schema_version() {
        return Err(CopyError::Store(crate::error::Error::InvalidInput(
            format!(
                "the store is at schema version {version}, this binary writes {}: \
             open it once with this binary first",
                db::latest_schema_version()
            ),
        )));
    }
    push(&conn, client)
}

/// Creates the store in `dir`, which the caller owns and which holds no
/// database yet, from the cluster behind `client`. A copy that fails
/// leaves no database behind.
pub fn pull_dir(client: &ClusterClient, dir: &Path) -> Result<Copied> {
    let path = dir.join(db::DB_FILE);
    if path.exists() {
        return Err(CopyError::NotEmpty(format!("{} exists", path.display())));
    }
    let version = cluster_schema_version(client)?;
    if version > db::latest_schema_version() {
        return Err(CopyError::Store(crate::error::Error::InvalidInput(
            format!(
                "the cluster holds schema version {version}, newer than this binary's {}",
                db::latest_schema_version()
            ),
        )));
    }
    let result = Connection::open(&path)
        .map_err(CopyError::Local)
        .and_then(|mut conn| pull(client, &mut conn));
    if result.is_err() {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
    result
}

/// The schema version the cluster's memory records (0 when it holds none).
pub fn cluster_schema_version(client: &ClusterClient) -> Result<i64> {
    let schema = schema_of_cluster(client)?;
    if !schema.iter().any(|o| o.name == "schema_version") {
        return Ok(0);
    }
    let rows = client.query(
        &[Statement::plain("SELECT MAX(version) FROM schema_version")],
        ReadLevel::Leader,
    )?;
    Ok(rows[0]
        .rows
        .first()
        .and_then(|r| r[0].as_i64())
        .unwrap_or(0))
}

/// Copies the local database `conn` into the empty cluster behind
/// `client`, then checks every table's rows and digest on the cluster.
pub fn push(conn: &Connection, client: &ClusterClient) -> Result<Copied> {
    let cluster_schema = schema_of_cluster(client)?;
    if let Some(o) = cluster_schema.first() {
        return Err(CopyError::NotEmpty(format!(
            "it has {} {:?}",
            o.kind, o.name
        )));
    }
    let schema = schema_of_local(conn)?;
    let (tables, rest) = split_schema(&schema);
    let mut create: Vec<Statement> = tables.iter().map(|o| Statement::plain(&o.sql)).collect();
    // A new FTS5 table starts with rows of its own; the copied ones replace them.
    for shadow in shadows(&schema) {
        create.push(Statement::plain(format!("DELETE FROM {}", quoted(&shadow))));
    }
    client.commit(&create, Instant::now() + COPY_WRITE_DEADLINE)?;

    let mut copied = Copied::default();
    for table in local_tables(conn, &schema)? {
        let mut batch = Batch::default();
        each_local_row(conn, &table, |values| {
            batch.add(insert_row(&table, values));
            if batch.full() {
                batch.send(client)?;
            }
            Ok(())
        })?;
        batch.send(client)?;
        copied.tables += 1;
    }
    let rest: Vec<Statement> = rest.iter().map(|o| Statement::plain(&o.sql)).collect();
    if !rest.is_empty() {
        client.commit(&rest, Instant::now() + COPY_WRITE_DEADLINE)?;
    }
    checked(conn, client, copied.tables)
}

/// Drops every object of the memory from the cluster (a push that never
/// finished), leaving the cluster's own tables: indexes, triggers and
/// views first, then the tables, newest first (a virtual table takes its
/// shadow tables with it). Its vector rows go too. One transaction:
/// the cluster is then as empty as [`push`] wants it, or unchanged.
pub fn clear_cluster(client: &ClusterClient) -> Result<()> {
    let (tables, rest) = split_schema(&schema_of_cluster(client)?);
    let drop = |o: &SchemaObject| {
        Statement::plain(format!(
            "DROP {} IF EXISTS {}",
            o.kind.to_uppercase(),
            quoted(&o.name)
        ))
    };
    let mut drops = vec![Statement::plain("DELETE FROM cluster_vectors")];
    drops.extend(rest.iter().rev().map(drop));
    drops.extend(tables.iter().rev().map(drop));
    client.commit(&drops, Instant::now() + COPY_WRITE_DEADLINE)?;
    Ok(())
}

/// What a copy of `tables` tables did, once both sides' digests agree.
fn checked(conn: &Connection, client: &ClusterClient, tables: usize) -> Result<Copied> {
    let local = digests_of_local(conn)?;
    let remote = digests_of_cluster(client, ReadLevel::Leader)?;
    compare(&local, &remote)?;
    Ok(Copied {
        tables,
        rows: local.iter().map(|(_, n, _)| n).sum(),
        digests: local,
    })
}

/// Copies the cluster behind `client` into `conn`, a new, empty local
/// database, inside one local transaction, then checks every table.
pub fn pull(client: &ClusterClient, conn: &mut Connection) -> Result<Copied> {
    if let Some(o) = schema_of_local(conn)?.first() {
        return Err(CopyError::NotEmpty(format!(
            "it has {} {:?}",
            o.kind, o.name
        )));
    }
    let schema = schema_of_cluster(client)?;
    let (tables, rest) = split_schema(&schema);
    let tx = conn.transaction()?;
    for o in &tables {
        tx.execute_batch(&o.sql)?;
    }
    for shadow in shadows(&schema) {
        tx.execute(&format!("DELETE FROM {}", quoted(&shadow)), [])?;
    }
    let mut copied = Copied::default();
    for table in cluster_tables(client, &schema)? {
        let sql = insert_sql_local(&table);
        let mut insert = tx.prepare(&sql)?;
        page_cluster(client, &table, ReadLevel::Leader, |row| {
            let params = row.iter().map(cell_to_sql);
            insert.execute(rusqlite::params_from_iter(params))?;
            Ok(())
        })?;
        copied.tables += 1;
    }
    for o in &rest {
        tx.execute_batch(&o.sql)?;
    }
    tx.commit()?;
    checked(conn, client, copied.tables)
}

/// The cluster statement that inserts one local row.
fn insert_row(table: &Table, values: &[ValueRef<'_>]) -> Statement {
    let mut marks = Vec::with_capacity(values.len());
    let mut params = Vec::with_capacity(values.len());
    for v in values {
        match v {
            ValueRef::Blob(b) => {
                marks.push("unhex(?)");
                params.push(hex(b));
            }
            ValueRef::Text(t) => match std::str::from_utf8(t) {
                Ok(s) => {
                    marks.push("?");
                    params.push(Param::Text(s.to_string()));
                }
                Err(_) => {
                    marks.push("CAST(unhex(?) AS TEXT)");
                    params.push(hex(t));
                }
            },
            other => {
                marks.push("?");
                params.push(match other {
                    ValueRef::Integer(i) => Param::Int(*i),
                    ValueRef::Real(f) => Param::Real(*f),
                    _ => Param::Null,
                });
            }
        }
    }
    Statement::new(
        format!(
            "INSERT INTO {}({}) VALUES ({}) ON CONFLICT DO NOTHING",
            quoted(&table.name),
            table.selected().join(", "),
            marks.join(", ")
        ),
        params,
    )
}

fn insert_sql_local(table: &Table) -> String {
    let marks = vec!["?"; table.width()].join(", ");
    format!(
        "INSERT INTO {}({}) VALUES ({marks}) ON CONFLICT DO NOTHING",
        quoted(&table.name),
        table.selected().join(", ")
    )
}

/// Statements gathered into one cluster transaction.
#[derive(Default)]
struct Batch {
    statements: Vec<Statement>,
    bytes: usize,
}

impl Batch {
    fn add(&mut self, s: Statement) {
        self.bytes += s.sql.len()
            + s.params
                .iter()
                .map(|p| match p {
                    Param::Text(t) => t.len(),
                    _ => 8,
                })
                .sum::<usize>();
        self.statements.push(s);
    }

    fn full(&self) -> bool {
        self.statements.len() >= COPY_BATCH_ROWS || self.bytes >= COPY_BATCH_BYTES
    }

    /// Commits the batch. Its inserts are not idempotent, but a batch is
    /// one transaction: retried only while it has certainly not applied
    /// (no leader, no node reached); an uncertain answer ends the copy.
    fn send(&mut self, client: &ClusterClient) -> Result<()> {
        if self.statements.is_empty() {
            return Ok(());
        }
        let deadline = Instant::now() + COPY_WRITE_DEADLINE;
        loop {
            match client.transaction(&self.statements) {
                Ok(_) => break,
                Err(e @ (ClusterError::NoQuorum(_) | ClusterError::Unreachable(_)))
                    if Instant::now() < deadline =>
                {
                    log::warn!("copy batch retried: {e}");
                    std::thread::sleep(crate::limits::CLUSTER_RETRY_PAUSE);
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.statements.clear();
        self.bytes = 0;
        Ok(())
    }
}
