//! The schema and the tables of a database, local or on the cluster, as
//! a copy sees them: each object's `CREATE` text, the ordinary tables
//! (shadow tables of full-text indexes included) with their columns and
//! keys, and their rows read in key order, every value exactly as stored.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::client::{ClusterClient, ClusterError, ReadLevel};
use super::copy::{CopyError, Result};
use super::wire::{hex, Cell, Param, Statement};
use crate::limits::COPY_BATCH_ROWS;

/// One object of the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaObject {
    pub kind: String,
    pub name: String,
    pub sql: String,
}

/// A table to copy: its name, its columns, and how to page through it.
#[derive(Debug, Clone)]
pub(super) struct Table {
    pub(super) name: String,
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

/// The memory's objects: not SQLite's own, nor the cluster's (`cluster_`:
/// the log, the vector rows and the memory's facts, which no local
/// database has).
const SCHEMA_SQL: &str = "SELECT type, name, sql FROM sqlite_master
     WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       AND name NOT LIKE 'cluster\\_%' ESCAPE '\\' AND tbl_name NOT LIKE 'cluster\\_%' ESCAPE '\\'
     ORDER BY rowid";

pub(super) fn schema_of_local(conn: &Connection) -> Result<Vec<SchemaObject>> {
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

pub(super) fn schema_of_cluster(client: &ClusterClient) -> Result<Vec<SchemaObject>> {
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
pub(super) fn split_schema(schema: &[SchemaObject]) -> (Vec<SchemaObject>, Vec<SchemaObject>) {
    let shadow = shadows(schema);
    let (tables, rest): (Vec<_>, Vec<_>) = schema
        .iter()
        .filter(|o| !shadow.contains(&o.name))
        .cloned()
        .partition(|o| o.kind == "table");
    (tables, rest)
}

pub(super) fn is_virtual(o: &SchemaObject) -> bool {
    o.kind == "table"
        && o.sql
            .trim_start()
            .get(..20)
            .is_some_and(|s| s.eq_ignore_ascii_case("CREATE VIRTUAL TABLE"))
}

/// The shadow tables of the schema's virtual tables (`V_data`, `V_idx`,
/// …: every table named after a virtual table and an underscore).
pub(super) fn shadows(schema: &[SchemaObject]) -> Vec<String> {
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
pub(super) type ColumnInfo = Vec<(String, String, i64)>;

pub(super) fn table_of(name: &str, info: ColumnInfo, without_rowid: bool) -> Table {
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
    pub(super) fn width(&self) -> usize {
        self.columns.len() + self.explicit_rowid as usize
    }

    pub(super) fn selected(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.width());
        if self.explicit_rowid {
            out.push("rowid".to_string());
        }
        out.extend(self.columns.iter().map(|c| quoted(c)));
        out
    }
}

pub(super) fn without_rowid(o: &SchemaObject) -> bool {
    o.sql.to_ascii_uppercase().contains("WITHOUT ROWID")
}

/// The ordinary tables to copy (shadow tables included), in schema order.
pub(super) fn local_tables(conn: &Connection, schema: &[SchemaObject]) -> Result<Vec<Table>> {
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

pub(super) fn cluster_tables(
    client: &ClusterClient,
    schema: &[SchemaObject],
) -> Result<Vec<Table>> {
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

pub(super) fn select_all(table: &Table) -> String {
    format!(
        "SELECT {} FROM {} ORDER BY {}",
        table.selected().join(", "),
        quoted(&table.name),
        table.key.join(", ")
    )
}

/// Reads the local `table` in key order, handing each row's selected
/// values (see [`Table::selected`]) to `each`.
pub(super) fn each_local_row(
    conn: &Connection,
    table: &Table,
    mut each: impl FnMut(&[ValueRef<'_>]) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn.prepare(&select_all(table))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(table.width());
        for i in 0..table.width() {
            values.push(row.get_ref(i)?);
        }
        each(&values)?;
    }
    Ok(())
}

/// Reads the cluster's `table` in key order, [`COPY_BATCH_ROWS`] rows a
/// request, each value exactly as it is stored, its type beside it: a BLOB
/// as hex (rqlite's JSON cannot tell bytes from text), a REAL as 17
/// significant digits (which any correct parser reads back to the same
/// bits; serde_json's default number parser may not).
pub(super) fn page_cluster(
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
pub(super) fn typed_cells(raw: &[Cell]) -> Result<Vec<Cell>> {
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

pub(super) fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(super) fn placeholder(c: &Cell) -> String {
    match c {
        Cell::Blob(_) => "unhex(?)".into(),
        _ => "?".into(),
    }
}

pub(super) fn cell_to_param(c: &Cell) -> Param {
    match c {
        Cell::Null => Param::Null,
        Cell::Int(i) => Param::Int(*i),
        Cell::Real(f) => Param::Real(*f),
        Cell::Text(s) => Param::Text(s.clone()),
        Cell::Blob(b) => hex(b),
    }
}

pub(super) fn cell_to_sql(c: &Cell) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match c {
        Cell::Null => Value::Null,
        Cell::Int(i) => Value::Integer(*i),
        Cell::Real(f) => Value::Real(*f),
        Cell::Text(s) => Value::Text(s.clone()),
        Cell::Blob(b) => Value::Blob(b.clone()),
    }
}

pub(super) fn value_to_cell(v: ValueRef<'_>) -> Cell {
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

/// `"name"`, for identifiers read from the schema.
pub(super) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'`, for a table name passed to a pragma function.
pub(super) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
