//! Lines of an `alayasiki-mcp export` file (see [`crate::admin::export`]):
//! each document line becomes the ingest request that restores it, with its
//! own id, key and creation time.

use serde_json::{json, Map, Value};

use super::string_field;
use crate::base64;
use crate::clock::LATEST_TIME_MS;
use crate::ids;
use crate::limits::MAX_CONTENT_BYTES;
use crate::service::{Content, IngestRequest, Replaces, Restore};

/// The ids a document line says it superseded (`supersedes`, absent in
/// exports made before versions existed).
fn supersedes(v: &Value) -> Result<Vec<String>, String> {
    let refused = || "`supersedes` must be a list of document ids".to_string();
    match v.get("supersedes") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(ids)) => ids
            .iter()
            .map(|id| id.as_str().map(str::to_string).ok_or_else(refused))
            .collect(),
        Some(_) => Err(refused()),
    }
}

/// An export's document line as an ingest request. Every line after the
/// header of a version-1 export is a document: anything else is refused
/// with a reason (and counted as skipped), not passed over in silence.
pub fn export_document(v: &Value) -> Result<(IngestRequest, Restore), String> {
    let Some(line) = v.as_object() else {
        return Err("not a JSON object (an export's lines after the header are documents)".into());
    };
    match line.get("type") {
        Some(Value::String(t)) if t == "document" => {}
        Some(Value::String(t)) => {
            return Err(format!(
                "a line of type {:?}, not a document",
                &t[..crate::text::floor_char_boundary(t, 64)]
            ))
        }
        _ => return Err("`type` is missing or not \"document\"".into()),
    }
    let media_type = string_field(v, "media_type")?.ok_or("`media_type` is missing")?;
    let encoded = string_field(v, "original")?.ok_or("`original` is missing")?;
    if encoded.len() / 4 * 3 > MAX_CONTENT_BYTES + 3 {
        return Err(format!(
            "the original exceeds {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES)"
        ));
    }
    let bytes = base64::decode(&encoded)
        .map_err(|e| format!("`original` is not base64 (offset {})", e.offset))?;
    if let Some(sha) = string_field(v, "sha256")? {
        if ids::sha256_hex(&bytes) != sha {
            return Err("`original` does not match its sha256: the export is damaged".into());
        }
    }
    let metadata = match v.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("`metadata` must be an object".into()),
    };
    let id = string_field(v, "id")?;
    let key = match (string_field(v, "idempotency_key")?, &id) {
        (Some(k), _) => k,
        (None, Some(id)) => format!("import:{id}"),
        (None, None) => format!(
            "import:{}",
            ids::sha256_hex(
                json!([media_type, ids::sha256_hex(&bytes), v.get("source")])
                    .to_string()
                    .as_bytes()
            )
        ),
    };
    let time = |key: &str| -> Result<Option<i64>, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(t) => match t.as_i64() {
                Some(ms) if (0..=LATEST_TIME_MS).contains(&ms) => Ok(Some(ms)),
                _ => Err(format!(
                    "`{key}` must be Unix milliseconds from 0 to {LATEST_TIME_MS} (9999-12-31)"
                )),
            },
        }
    };
    let created_at = time("created_at")?;
    let expires_at = time("expires_at")?;
    let request = IngestRequest {
        expires_at,
        content: Content::File {
            filename: string_field(v, "title")?,
            mime_type: Some(media_type),
            bytes,
        },
        metadata,
        idempotency_key: Some(key),
        source: string_field(v, "source")?,
        provenance: string_field(v, "provenance")?,
        wait: false,
        // An export is restored as it was, documents of equal content too.
        allow_duplicate: true,
        // And so are its versions: each document supersedes those it did
        // (exported before it, so imported already unless skipped).
        replaces: Replaces {
            documents: supersedes(v)?,
            source: false,
            if_current: true,
        },
        title: None,
        scopes: Vec::new(),
    };
    Ok((
        request,
        Restore {
            doc_id: id,
            created_at,
        },
    ))
}
