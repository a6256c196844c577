//! Per-table digests: a SHA-256 over every row in key order, each value
//! tagged with its type, so that equal digests mean equal tables, value
//! for value, wherever the rows were read from.

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use super::client::{ClusterClient, ReadLevel};
use super::copy::{CopyError, Result};
use super::tables::{
    cluster_tables, each_local_row, local_tables, page_cluster, schema_of_cluster, schema_of_local,
    value_to_cell,
};
use super::wire::Cell;

/// Every table's row count and digest on the local database, in name
/// order: equal digests mean equal rows, value for value.
pub fn digests_of_local(conn: &Connection) -> Result<Vec<(String, u64, String)>> {
    let schema = schema_of_local(conn)?;
    let mut out = Vec::new();
    for table in local_tables(conn, &schema)? {
        let mut digest = RowDigest::default();
        each_local_row(conn, &table, |values| {
            let cells: Vec<Cell> = values.iter().map(|v| value_to_cell(*v)).collect();
            digest.add(&cells);
            Ok(())
        })?;
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

pub(super) fn compare(a: &[(String, u64, String)], b: &[(String, u64, String)]) -> Result<()> {
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
