//! rqlite's JSON: statements with their parameters out, rows back.
//!
//! A statement is `["SQL", p1, p2, …]`, bound positionally (so `?8` is the
//! eighth). JSON has no bytes, so a BLOB travels as hex text that the SQL
//! itself turns back with `unhex(?)`; the same statement then runs
//! unchanged on local SQLite. BLOB columns come back as base64 text, and
//! each result names its columns' declared types, which say how to read a
//! JSON number (an integer column's `2` is not a real's `2.0`).

use serde_json::{json, Value};

/// A bound parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Int(i64),
    /// Finite only: JSON has no NaN or infinity ([`Statement::to_json`]
    /// refuses them).
    Real(f64),
    Text(String),
}

impl From<i64> for Param {
    fn from(v: i64) -> Param {
        Param::Int(v)
    }
}
impl From<f64> for Param {
    fn from(v: f64) -> Param {
        Param::Real(v)
    }
}
impl From<&str> for Param {
    fn from(v: &str) -> Param {
        Param::Text(v.to_string())
    }
}
impl From<String> for Param {
    fn from(v: String) -> Param {
        Param::Text(v)
    }
}
impl<T: Into<Param>> From<Option<T>> for Param {
    fn from(v: Option<T>) -> Param {
        v.map_or(Param::Null, Into::into)
    }
}

/// Bytes as the hex text `unhex(?)` reads.
pub fn hex(bytes: &[u8]) -> Param {
    Param::Text(crate::ids::hex(bytes))
}

/// One SQL statement and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sql: String,
    pub params: Vec<Param>,
}

impl Statement {
    pub fn new(sql: impl Into<String>, params: Vec<Param>) -> Statement {
        Statement {
            sql: sql.into(),
            params,
        }
    }

    /// A statement without parameters.
    pub fn plain(sql: impl Into<String>) -> Statement {
        Statement::new(sql, Vec::new())
    }

    /// `["SQL", p1, …]`; `Err` for a non-finite real.
    pub fn to_json(&self) -> Result<Value, String> {
        let mut out = Vec::with_capacity(1 + self.params.len());
        out.push(Value::String(self.sql.clone()));
        for p in &self.params {
            out.push(match p {
                Param::Null => Value::Null,
                Param::Int(i) => json!(i),
                Param::Real(f) if f.is_finite() => json!(f),
                Param::Real(_) => return Err("a non-finite real cannot be sent".into()),
                Param::Text(s) => Value::String(s.clone()),
            });
        }
        Ok(Value::Array(out))
    }
}

impl Statement {
    /// A statement the local writer ran ([`crate::store::Recorded`]), for
    /// the cluster: a BLOB's placeholder becomes `unhex(placeholder)` and
    /// its value hex text, so the statement stores the same bytes.
    pub fn from_recorded(
        sql: &str,
        values: &[rusqlite::types::Value],
    ) -> Result<Statement, String> {
        use rusqlite::types::Value as V;
        let blobs: Vec<usize> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| matches!(v, V::Blob(_)))
            .map(|(i, _)| i + 1)
            .collect();
        let sql = if blobs.is_empty() {
            sql.to_string()
        } else {
            wrap_placeholders(sql, &blobs)
        };
        let params = values
            .iter()
            .map(|v| match v {
                V::Null => Ok(Param::Null),
                V::Integer(i) => Ok(Param::Int(*i)),
                V::Real(f) if f.is_finite() => Ok(Param::Real(*f)),
                V::Real(_) => Err("a non-finite real cannot be sent".to_string()),
                V::Text(t) => Ok(Param::Text(t.clone())),
                V::Blob(b) => Ok(hex(b)),
            })
            .collect::<Result<_, _>>()?;
        Ok(Statement { sql, params })
    }
}

/// `sql` with every placeholder of the parameters numbered in `which`
/// (counting from one) wrapped in `unhex(...)`. Placeholders are `?NNN`
/// and bare `?`, which SQLite numbers one past the largest so far; string
/// literals and quoted names are skipped.
fn wrap_placeholders(sql: &str, which: &[usize]) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8 * which.len());
    let mut largest = 0usize;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == q {
                        if bytes.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'?' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let n = match sql[start + 1..i].parse::<usize>() {
                    Ok(n) => n,
                    Err(_) => largest + 1,
                };
                largest = largest.max(n);
                if which.contains(&n) {
                    out.push_str(&sql[copied..start]);
                    out.push_str("unhex(");
                    out.push_str(&sql[start..i]);
                    out.push(')');
                    copied = i;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    out
}

/// A value read back.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Cell {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Cell::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Real(f) => Some(*f),
            Cell::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Cell::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// The rows one query returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// What one executed statement did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Executed {
    pub rows_affected: i64,
}

/// Why a response carries no results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The request as a whole failed (rqlite answers such failures, a
    /// write forwarded to a leader that died among them, with `200 OK` and
    /// a top-level `error`): whether a write applied is not known.
    Request(String),
    /// A statement failed: a transaction applied none of its statements.
    Statement(String),
}

/// The per-statement results of a response to `sent` statements.
pub fn results(body: &Value, sent: usize) -> Result<&Vec<Value>, Failure> {
    if let Some(e) = body.get("error").and_then(Value::as_str) {
        return Err(Failure::Request(e.to_string()));
    }
    let results = body
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| Failure::Request("the response has no results".into()))?;
    if let Some(e) = results
        .iter()
        .find_map(|r| r.get("error").and_then(Value::as_str))
    {
        return Err(Failure::Statement(e.to_string()));
    }
    if results.len() != sent {
        return Err(Failure::Request(format!(
            "{} results for {sent} statements",
            results.len()
        )));
    }
    Ok(results)
}

pub fn executed(result: &Value) -> Executed {
    Executed {
        rows_affected: result
            .get("rows_affected")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    }
}

/// Decodes one query result (`columns`, `types`, `values`).
pub fn rows(result: &Value) -> Result<Rows, String> {
    let strings = |key: &str| -> Vec<String> {
        result
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or("").to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default()
    };
    let columns = strings("columns");
    let types = strings("types");
    let mut rows = Vec::new();
    for row in result
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let cells = row.as_array().ok_or("a row is not an array")?;
        let mut out = Vec::with_capacity(cells.len());
        for (i, v) in cells.iter().enumerate() {
            out.push(cell(v, types.get(i).map_or("", String::as_str))?);
        }
        rows.push(out);
    }
    Ok(Rows { columns, rows })
}

/// A JSON value of a column whose declared type is `declared`.
fn cell(v: &Value, declared: &str) -> Result<Cell, String> {
    Ok(match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Int(*b as i64),
        Value::Number(n) => {
            let real = declared.contains("real")
                || declared.contains("floa")
                || declared.contains("doub")
                || n.is_f64();
            match n.as_i64() {
                Some(i) if !real => Cell::Int(i),
                _ => Cell::Real(n.as_f64().ok_or("a number out of range")?),
            }
        }
        Value::String(s) if declared.contains("blob") => Cell::Blob(
            crate::base64::decode(s).map_err(|_| "a BLOB that is not base64".to_string())?,
        ),
        Value::String(s) => Cell::Text(s.clone()),
        _ => return Err("a cell that is neither null, number nor text".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_bind_positionally_and_refuse_non_finite_reals() {
        let s = Statement::new(
            "INSERT INTO t VALUES (?, ?, ?, unhex(?), ?)",
            vec![
                7.into(),
                0.5.into(),
                "x".into(),
                hex(&[0, 0xab, 255]),
                Param::from(None::<i64>),
            ],
        );
        assert_eq!(
            s.to_json().unwrap(),
            json!([
                "INSERT INTO t VALUES (?, ?, ?, unhex(?), ?)",
                7,
                0.5,
                "x",
                "00abff",
                null
            ])
        );
        assert!(Statement::new("SELECT ?", vec![f64::NAN.into()])
            .to_json()
            .is_err());
    }

    #[test]
    fn recorded_blobs_travel_as_unhex_of_their_placeholders() {
        use rusqlite::types::Value as V;
        let s = Statement::from_recorded(
            "INSERT INTO t(a, b, c) VALUES (?1, ?2, '?2 in text') ON CONFLICT DO UPDATE SET b = ?2",
            &[V::Integer(1), V::Blob(vec![0xde, 0xad])],
        )
        .unwrap();
        assert_eq!(
            s.sql,
            "INSERT INTO t(a, b, c) VALUES (?1, unhex(?2), '?2 in text') \
             ON CONFLICT DO UPDATE SET b = unhex(?2)"
        );
        assert_eq!(s.params, [Param::Int(1), Param::Text("dead".into())]);
        let bare = Statement::from_recorded(
            "UPDATE t SET x = ?, y = ? WHERE z = ?",
            &[V::Text("a".into()), V::Blob(vec![1]), V::Null],
        )
        .unwrap();
        assert_eq!(bare.sql, "UPDATE t SET x = ?, y = unhex(?) WHERE z = ?");
        assert!(Statement::from_recorded("SELECT ?", &[V::Real(f64::INFINITY)]).is_err());
    }

    #[test]
    fn cells_follow_the_declared_types() {
        let result = json!({
            "columns": ["id", "score", "name", "vec", "n"],
            "types": ["integer", "REAL", "text", "blob", ""],
            "values": [[1, 2, "a", "AAH/", null], [2, 0.25, "b", null, 3]]
        });
        let r = rows(&result).unwrap();
        assert_eq!(r.columns, ["id", "score", "name", "vec", "n"]);
        assert_eq!(
            r.rows[0],
            [
                Cell::Int(1),
                Cell::Real(2.0),
                Cell::Text("a".into()),
                Cell::Blob(vec![0, 1, 255]),
                Cell::Null
            ]
        );
        assert_eq!(r.rows[1][4], Cell::Int(3));
    }

    #[test]
    fn a_statement_error_is_the_response_error() {
        let body = json!({"results": [{}, {"error": "UNIQUE constraint failed: t.id"}]});
        assert_eq!(
            results(&body, 2).unwrap_err(),
            Failure::Statement("UNIQUE constraint failed: t.id".into())
        );
        assert!(matches!(
            results(&json!({"nope": 1}), 1),
            Err(Failure::Request(_))
        ));
    }

    #[test]
    fn a_request_error_is_never_an_empty_success() {
        // What rqlite answers when the leader a write was forwarded to died.
        let body = json!({"results": [], "error": "node failed to process Execute on remote node"});
        assert!(matches!(results(&body, 1), Err(Failure::Request(_))));
        assert!(matches!(
            results(&json!({"results": []}), 1),
            Err(Failure::Request(_))
        ));
        assert_eq!(results(&json!({"results": [{}]}), 1).unwrap().len(), 1);
    }
}
