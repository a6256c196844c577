//! A log entry's statements as `cluster_log` stores them: every value
//! typed and exact, so a follower binds what the writer bound.

use rusqlite::types::Value;
use serde_json::{json, Value as Json};

use super::tables::unhex;
use crate::store::write_log::Recorded;

/// Statements as the log stores them: `[[sql, [[kind, value], ...]], ...]`,
/// every value typed and exact (a REAL as the hex of its bits, a BLOB as
/// hex), so a follower binds what the writer bound.
pub fn encode(statements: &[Recorded]) -> String {
    Json::Array(
        statements
            .iter()
            .map(|r| {
                let params: Vec<Json> = r
                    .params
                    .iter()
                    .map(|v| match v {
                        Value::Null => json!(["n"]),
                        Value::Integer(i) => json!(["i", i]),
                        Value::Real(f) => json!(["r", format!("{:016x}", f.to_bits())]),
                        Value::Text(t) => json!(["t", t]),
                        Value::Blob(b) => json!(["b", crate::ids::hex(b)]),
                    })
                    .collect();
                json!([r.sql, params])
            })
            .collect(),
    )
    .to_string()
}

/// [`encode`] read back.
pub fn decode(text: &str) -> Result<Vec<Recorded>, String> {
    let bad = || "a log entry that is not what encode writes".to_string();
    let json: Json = serde_json::from_str(text).map_err(|_| bad())?;
    json.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|s| {
            let sql = s[0].as_str().ok_or_else(bad)?.to_string();
            let params = s[1]
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|p| {
                    Ok(match (p[0].as_str(), &p[1]) {
                        (Some("n"), _) => Value::Null,
                        (Some("i"), v) => Value::Integer(v.as_i64().ok_or_else(bad)?),
                        (Some("r"), v) => Value::Real(f64::from_bits(
                            u64::from_str_radix(v.as_str().ok_or_else(bad)?, 16)
                                .map_err(|_| bad())?,
                        )),
                        (Some("t"), v) => Value::Text(v.as_str().ok_or_else(bad)?.to_string()),
                        (Some("b"), v) => {
                            Value::Blob(unhex(v.as_str().ok_or_else(bad)?).ok_or_else(bad)?)
                        }
                        _ => return Err(bad()),
                    })
                })
                .collect::<Result<_, String>>()?;
            Ok(Recorded { sql, params })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_every_value_exactly() {
        let statements = vec![
            Recorded {
                sql: "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)".into(),
                params: vec![
                    Value::Null,
                    Value::Integer(i64::MIN),
                    Value::Real(0.1 + 0.2),
                    Value::Text("é \"quoted\" ?1".into()),
                    Value::Blob(vec![0, 255, 16]),
                ],
            },
            Recorded {
                sql: "CREATE TABLE x(a)".into(),
                params: vec![],
            },
        ];
        assert_eq!(decode(&encode(&statements)).unwrap(), statements);
        assert!(decode("[[\"SELECT 1\", [[\"q\", 1]]]]").is_err());
        assert!(decode("{}").is_err());
    }
}
