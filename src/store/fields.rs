//! A document's filterable fields: the rows of `document_fields` that let
//! recall filter on metadata (`key = value`) and tags without reading every
//! document's JSON. Written once, when the document is admitted (the
//! schema-015 migration filled them for documents stored before), and
//! deleted with it.
//!
//! Each top-level scalar member of the metadata object is one row (a string
//! as written, a number or boolean as its JSON text); each scalar element of
//! a top-level list is one row under the list's key, so `tags: ["a", "b"]`
//! is two. Nested objects, nulls and long values are not indexed, so a
//! filter naming them matches nothing.

use rusqlite::params;

use super::tenant::TenantWriter;
use crate::error::Result;

/// Longest metadata value (bytes) recorded as a field; a filter value
/// longer than this can never match and is refused by the query layer.
pub const MAX_FIELD_VALUE_BYTES: usize = 256;

/// Most fields recorded for one document (members and list elements, in
/// the order stored); the rest are not filterable. Metadata is bounded by
/// its byte limit already; this bounds the index rows one document adds.
pub const MAX_FIELDS_PER_DOCUMENT: usize = 256;

/// The metadata key whose list recall's `tags` filter reads.
pub const TAGS_KEY: &str = "tags";

/// The `(key, value)` fields of a metadata object (compact JSON text), at
/// most [`MAX_FIELDS_PER_DOCUMENT`]; none for anything but an object.
pub fn fields_of(metadata: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(metadata) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in &map {
        let values: Vec<&serde_json::Value> = match value {
            serde_json::Value::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        for v in values {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            if text.len() <= MAX_FIELD_VALUE_BYTES && out.len() < MAX_FIELDS_PER_DOCUMENT {
                out.push((key.clone(), text));
            }
        }
    }
    out
}

impl TenantWriter<'_> {
    /// Records the filterable fields of document `document_key`.
    pub(super) fn record_fields(&self, document_key: i64, metadata: &str) -> Result<()> {
        for (key, value) in fields_of(metadata) {
            self.exec(
                "INSERT OR IGNORE INTO document_fields(tenant_id, key, value, document_id)
                 VALUES (?1, ?2, ?3, ?4)",
                params![self.tenant_id, key, value, document_key],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_list_elements_are_fields_nested_values_and_long_ones_are_not() {
        let long = "x".repeat(MAX_FIELD_VALUE_BYTES + 1);
        let edge = "y".repeat(MAX_FIELD_VALUE_BYTES);
        let meta = serde_json::json!({
            "speaker": "Dana", "n": 1.5, "ok": true, "tags": ["ops", 3, null, {"a": 1}],
            "nested": {"a": 1}, "none": null, "long": long, "edge": edge,
        })
        .to_string();
        let mut got = fields_of(&meta);
        got.sort();
        let want: Vec<(String, String)> = [
            ("edge", edge.as_str()),
            ("n", "1.5"),
            ("ok", "true"),
            ("speaker", "Dana"),
            ("tags", "3"),
            ("tags", "ops"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
        assert!(fields_of("[1, 2]").is_empty());
        assert!(fields_of("not json").is_empty());
    }

    #[test]
    fn a_document_records_at_most_its_share_of_fields() {
        let many: Vec<u32> = (0..MAX_FIELDS_PER_DOCUMENT as u32 + 10).collect();
        let meta = serde_json::json!({ "tags": many }).to_string();
        assert_eq!(fields_of(&meta).len(), MAX_FIELDS_PER_DOCUMENT);
    }
}
