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
//! one transaction each), indexes last.
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
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::Instant;

use super::super::db;
use super::client::{ClusterClient, ClusterError, ReadLevel};
use super::wire::{hex, Cell, Param, Statement};
use crate::limits::{COPY_BATCH_BYTES, COPY_BATCH_ROWS, COPY_WRITE_DEADLINE};

/// One object of the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaObject {
    pub kind: String,
    pub name: String,
    pub sql: String,
}

/// A table to copy: its name, its columns, and how to page through it.
#[derive(Debug, Clone)]
struct Table {
    name: String,
    columns: Vec<String>,
    /// What orders and pages it, as SQL: the INTEGER PRIMARY KEY (or the
    /// bare `rowid`) of a rowid table, else its primary key's columns.
    key: Vec<String>,
    /// Where each of `key` sits among the selected values.
    key_at: Vec<usize>,
    /// Whether the rowid must be copied beside the columns (a rowid table
    /// without an INTEGER PRIMARY KEY to alias it).
    explicit_rowid: bool,
}

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

type Result<T> = std::result::Result<T, CopyError>;

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
        let mut stmt = conn.prepare(&select_all(&table))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(table.width());
            for i in 0..table.width() {
                values.push(row.get_ref(i)?);
            }
            batch.add(insert_row(&table, &values));
            if batch.full() {
                batch.send(client)?;
            }
        }
        batch.send(client)?;
        copied.tables += 1;
    }
    let rest: Vec<Statement> = rest.iter().map(|o| Statement::plain(&o.sql)).collect();
    if !rest.is_empty() {
        client.commit(&rest, Instant::now() + COPY_WRITE_DEADLINE)?;
    }
    let local = digests_of_local(conn)?;
    let remote = digests_of_cluster(client, ReadLevel::Leader)?;
    compare(&local, &remote)?;
    copied.rows = local.iter().map(|(_, n, _)| n).sum();
    copied.digests = local;
    Ok(copied)
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
    let local = digests_of_local(conn)?;
    let remote = digests_of_cluster(client, ReadLevel::Leader)?;
    compare(&local, &remote)?;
    copied.rows = local.iter().map(|(_, n, _)| n).sum();
    copied.digests = local;
    Ok(copied)
}

/// Every table's row count and digest on the local database, in name
/// order: equal digests mean equal rows, value for value.
pub fn digests_of_local(conn: &Connection) -> Result<Vec<(String, u64, String)>> {
    let schema = schema_of_local(conn)?;
    let mut out = Vec::new();
    for table in local_tables(conn, &schema)? {
        let mut digest = RowDigest::default();
        let mut stmt = conn.prepare(&select_all(&table))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let mut cells = Vec::with_capacity(table.width());
            for i in 0..table.width() {
                cells.push(value_to_cell(row.get_ref(i)?));
            }
            digest.add(&cells);
        }
        out.push((table.name.clone(), digest.rows, digest.finish()));
    }
    out.sort();
    Ok(out)
}

/// [`digests_of_local`] for the cluster, read at `level` (a node's own
/// copy at [`ReadLevel::Local`]: how replicas are compared).
pub fn digests_of_cluster(
    client: &ClusterClient,
    level: ReadLevel,
) -> Result<Vec<(String, u64, String)>> {
    let schema = schema_of_cluster(client)?;
    let mut out = Vec::new();
    for table in cluster_tables(client, &schema)? {
        let mut digest = RowDigest::default();
        page_cluster(client, &table, level, |row| {
            digest.add(row);
            Ok(())
        })?;
        out.push((table.name.clone(), digest.rows, digest.finish()));
    }
    out.sort();
    Ok(out)
}

fn compare(a: &[(String, u64, String)], b: &[(String, u64, String)]) -> Result<()> {
    if a == b {
        return Ok(());
    }
    let names = |d: &[(String, u64, String)]| d.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        return Err(CopyError::Mismatch("the tables differ".into()));
    }
    let (x, y) = a.iter().zip(b).find(|(x, y)| x != y).expect("a difference");
    Err(CopyError::Mismatch(format!(
        "table {} has {} rows here and {} there, or different values",
        x.0, x.1, y.1
    )))
}

const SCHEMA_SQL: &str = "SELECT type, name, sql FROM sqlite_master
     WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid";

fn schema_of_local(conn: &Connection) -> Result<Vec<SchemaObject>> {
    let mut stmt = conn.prepare(SCHEMA_SQL)?;
    let rows = stmt.query_map([], |r| {
        Ok(SchemaObject {
            kind: r.get(0)?,
            name: r.get(1)?,
            sql: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn schema_of_cluster(client: &ClusterClient) -> Result<Vec<SchemaObject>> {
    let rows = client.query(&[Statement::plain(SCHEMA_SQL)], ReadLevel::Leader)?;
    let text = |c: &Cell| c.as_str().unwrap_or("").to_string();
    Ok(rows[0]
        .rows
        .iter()
        .map(|r| SchemaObject {
            kind: text(&r[0]),
            name: text(&r[1]),
            sql: text(&r[2]),
        })
        .collect())
}

/// The objects made before the rows (tables, virtual tables; not the
/// shadow tables an FTS5 table makes for itself) and after (indexes,
/// triggers, views).
fn split_schema(schema: &[SchemaObject]) -> (Vec<SchemaObject>, Vec<SchemaObject>) {
    let shadow = shadows(schema);
    let (tables, rest): (Vec<_>, Vec<_>) = schema
        .iter()
        .filter(|o| !shadow.contains(&o.name))
        .cloned()
        .partition(|o| o.kind == "table");
    (tables, rest)
}

fn is_virtual(o: &SchemaObject) -> bool {
    o.kind == "table"
        && o.sql
            .trim_start()
            .get(..20)
            .is_some_and(|s| s.eq_ignore_ascii_case("CREATE VIRTUAL TABLE"))
}

/// The shadow tables of the schema's virtual tables (`V_data`, `V_idx`,
/// …: every table named after a virtual table and an underscore).
fn shadows(schema: &[SchemaObject]) -> Vec<String> {
    let virtuals: Vec<&str> = schema
        .iter()
        .filter(|o| is_virtual(o))
        .map(|o| o.name.as_str())
        .collect();
    schema
        .iter()
        .filter(|o| o.kind == "table" && !is_virtual(o))
        .filter(|o| {
            virtuals.iter().any(|v| {
                o.name
                    .strip_prefix(v)
                    .is_some_and(|rest| rest.starts_with('_'))
            })
        })
        .map(|o| o.name.clone())
        .collect()
}

/// `PRAGMA table_xinfo`-shaped facts: (name, declared type, pk position).
type ColumnInfo = Vec<(String, String, i64)>;

fn table_of(name: &str, info: ColumnInfo, without_rowid: bool) -> Table {
    let columns: Vec<String> = info.iter().map(|c| c.0.clone()).collect();
    let mut pk: Vec<(i64, usize)> = info
        .iter()
        .enumerate()
        .filter(|(_, c)| c.2 > 0)
        .map(|(i, c)| (c.2, i))
        .collect();
    pk.sort();
    let alias = !without_rowid && pk.len() == 1 && info[pk[0].1].1.eq_ignore_ascii_case("INTEGER");
    let (key, key_at) = if without_rowid || alias {
        (
            pk.iter().map(|&(_, i)| quoted(&columns[i])).collect(),
            pk.iter().map(|&(_, i)| i).collect(),
        )
    } else {
        // The rowid is selected first, before the columns.
        (vec!["rowid".to_string()], vec![0])
    };
    let explicit_rowid = !without_rowid && !alias;
    Table {
        name: name.to_string(),
        columns,
        key,
        key_at,
        explicit_rowid,
    }
}

impl Table {
    /// The selected values per row: the rowid first when explicit, then
    /// every column.
    fn width(&self) -> usize {
        self.columns.len() + self.explicit_rowid as usize
    }

    fn selected(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.width());
        if self.explicit_rowid {
            out.push("rowid".to_string());
        }
        out.extend(self.columns.iter().map(|c| quoted(c)));
        out
    }
}

fn without_rowid(o: &SchemaObject) -> bool {
    o.sql.to_ascii_uppercase().contains("WITHOUT ROWID")
}

/// The ordinary tables to copy (shadow tables included), in schema order.
fn local_tables(conn: &Connection, schema: &[SchemaObject]) -> Result<Vec<Table>> {
    let mut out = Vec::new();
    for o in schema
        .iter()
        .filter(|o| o.kind == "table" && !is_virtual(o))
    {
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({})", quoted(&o.name)))?;
        let info = stmt
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(5)?)))?
            .collect::<rusqlite::Result<ColumnInfo>>()?;
        out.push(table_of(&o.name, info, without_rowid(o)));
    }
    Ok(out)
}

fn cluster_tables(client: &ClusterClient, schema: &[SchemaObject]) -> Result<Vec<Table>> {
    let ordinary: Vec<&SchemaObject> = schema
        .iter()
        .filter(|o| o.kind == "table" && !is_virtual(o))
        .collect();
    if ordinary.is_empty() {
        return Ok(Vec::new());
    }
    let statements: Vec<Statement> = ordinary
        .iter()
        .map(|o| {
            Statement::plain(format!(
                "SELECT name, type, pk FROM pragma_table_info({})",
                literal(&o.name)
            ))
        })
        .collect();
    let infos = client.query(&statements, ReadLevel::Leader)?;
    Ok(ordinary
        .iter()
        .zip(infos)
        .map(|(o, rows)| {
            let info = rows
                .rows
                .iter()
                .map(|r| {
                    (
                        r[0].as_str().unwrap_or("").to_string(),
                        r[1].as_str().unwrap_or("").to_string(),
                        r[2].as_i64().unwrap_or(0),
                    )
                })
                .collect();
            table_of(&o.name, info, without_rowid(o))
        })
        .collect())
}

fn select_all(table: &Table) -> String {
    format!(
        "SELECT {} FROM {} ORDER BY {}",
        table.selected().join(", "),
        quoted(&table.name),
        table.key.join(", ")
    )
}

/// Reads the cluster's `table` in key order, [`COPY_BATCH_ROWS`] rows a
/// request, each value exactly as it is stored, its type beside it: a BLOB
/// as hex (rqlite's JSON cannot tell bytes from text), a REAL as 17
/// significant digits (which any correct parser reads back to the same
/// bits; serde_json's default number parser may not).
fn page_cluster(
    client: &ClusterClient,
    table: &Table,
    level: ReadLevel,
    mut each: impl FnMut(&[Cell]) -> Result<()>,
) -> Result<()> {
    let selected = table.selected();
    let select: Vec<String> = selected
        .iter()
        .map(|c| {
            format!(
                "typeof({c}), CASE typeof({c}) WHEN 'blob' THEN hex({c}) \
                 WHEN 'real' THEN printf('%!.17g', {c}) ELSE {c} END"
            )
        })
        .collect();
    let key_cols = &table.key;
    let mut after: Option<Vec<Cell>> = None;
    loop {
        let (condition, params) = match &after {
            None => (String::new(), Vec::new()),
            Some(last) => {
                let marks: Vec<String> = last.iter().map(placeholder).collect();
                (
                    format!(" WHERE ({}) > ({})", key_cols.join(", "), marks.join(", ")),
                    last.iter().map(cell_to_param).collect(),
                )
            }
        };
        let sql = format!(
            "SELECT {} FROM {}{condition} ORDER BY {} LIMIT {COPY_BATCH_ROWS}",
            select.join(", "),
            quoted(&table.name),
            key_cols.join(", ")
        );
        let page = client.query(&[Statement::new(sql, params)], level)?;
        let rows = &page[0].rows;
        for raw in rows {
            let row = typed_cells(raw)?;
            each(&row)?;
            after = Some(table.key_at.iter().map(|&i| row[i].clone()).collect());
        }
        if rows.len() < COPY_BATCH_ROWS {
            return Ok(());
        }
    }
}

/// Pairs of (type, value) back into cells.
fn typed_cells(raw: &[Cell]) -> Result<Vec<Cell>> {
    raw.chunks(2)
        .map(|pair| {
            let kind = pair[0].as_str().unwrap_or("");
            Ok(match (kind, &pair[1]) {
                ("null", _) => Cell::Null,
                ("integer", Cell::Int(i)) => Cell::Int(*i),
                ("integer", Cell::Real(f)) => Cell::Int(*f as i64),
                ("real", Cell::Text(t)) => Cell::Real(t.parse().map_err(|_| {
                    CopyError::Cluster(ClusterError::Protocol("a REAL that is not a number".into()))
                })?),
                ("text", Cell::Text(s)) => Cell::Text(s.clone()),
                ("text", Cell::Int(i)) => Cell::Text(i.to_string()),
                ("blob", Cell::Text(h)) => Cell::Blob(unhex(h).ok_or_else(|| {
                    CopyError::Cluster(ClusterError::Protocol("a BLOB that is not hex".into()))
                })?),
                (k, c) => {
                    return Err(CopyError::Cluster(ClusterError::Protocol(format!(
                        "a {k} value read as {c:?}"
                    ))))
                }
            })
        })
        .collect()
}

fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

fn placeholder(c: &Cell) -> String {
    match c {
        Cell::Blob(_) => "unhex(?)".into(),
        _ => "?".into(),
    }
}

fn cell_to_param(c: &Cell) -> Param {
    match c {
        Cell::Null => Param::Null,
        Cell::Int(i) => Param::Int(*i),
        Cell::Real(f) => Param::Real(*f),
        Cell::Text(s) => Param::Text(s.clone()),
        Cell::Blob(b) => hex(b),
    }
}

fn cell_to_sql(c: &Cell) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match c {
        Cell::Null => Value::Null,
        Cell::Int(i) => Value::Integer(*i),
        Cell::Real(f) => Value::Real(*f),
        Cell::Text(s) => Value::Text(s.clone()),
        Cell::Blob(b) => Value::Blob(b.clone()),
    }
}

fn value_to_cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Cell::Text(s.to_string()),
            // Not UTF-8: kept byte for byte (as a BLOB in the digest).
            Err(_) => Cell::Blob(t.to_vec()),
        },
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    }
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
            "INSERT INTO {}({}) VALUES ({})",
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
        "INSERT INTO {}({}) VALUES ({marks})",
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

/// A running SHA-256 over rows, each value tagged with its type.
#[derive(Default)]
struct RowDigest {
    hash: Sha256,
    rows: u64,
}

impl RowDigest {
    fn add(&mut self, row: &[Cell]) {
        self.rows += 1;
        for c in row {
            match c {
                Cell::Null => self.hash.update(b"n"),
                Cell::Int(i) => {
                    self.hash.update(b"i");
                    self.hash.update(i.to_le_bytes());
                }
                Cell::Real(f) => {
                    self.hash.update(b"r");
                    self.hash.update(f.to_bits().to_le_bytes());
                }
                Cell::Text(s) => {
                    self.hash.update(b"t");
                    self.hash.update((s.len() as u64).to_le_bytes());
                    self.hash.update(s.as_bytes());
                }
                Cell::Blob(b) => {
                    self.hash.update(b"b");
                    self.hash.update((b.len() as u64).to_le_bytes());
                    self.hash.update(b);
                }
            }
        }
        self.hash.update(b"\n");
    }

    fn finish(self) -> String {
        self.hash
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// `"name"`, for identifiers read from the schema.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'`, for a table name passed to a pragma function.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
