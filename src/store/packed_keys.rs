//! Hashes as the store keeps them: packed into their bytes.
//!
//! An original is found again by its SHA-256 (`originals.sha256`, unique
//! per tenant) and a document's content by its key
//! (`documents.content_key`, `ingest::content_key`); a document also
//! records its original's SHA-256 (`documents.sha256`), read back as hex
//! ([`document_sha256_hex`]). Each is stored as a BLOB of the hash's 32
//! bytes (a content key with one byte before them for its kind) rather than
//! as 64 or 69 characters of hex text: 185 bytes less per short note
//! between the rows and their two indexes (BENCHMARKS.md, "Per note"), and
//! shorter keys to compare on every insert. Rows written before keep their
//! hex text, so a lookup probes both forms ([`Probe`]) and a read turns
//! either into hex; no migration rewrites them.

use rusqlite::types::Value;

/// SQL reading a document's SHA-256 (`d.sha256`) as 64 hex digits,
/// whether it is stored packed or, by an earlier release, as hex: what a
/// caller is shown and an export carries.
macro_rules! document_sha256_hex {
    () => {
        "CASE typeof(d.sha256) WHEN 'blob' THEN lower(hex(d.sha256)) ELSE d.sha256 END"
    };
}
pub(super) use document_sha256_hex;

/// The forms a key may be stored in, newest first.
pub struct Probe {
    pub packed: Value,
    /// The hex text earlier releases stored, when it differs.
    pub legacy: Option<Value>,
}

impl Probe {
    /// Each form to look the key up by.
    pub fn forms(&self) -> impl Iterator<Item = &Value> {
        std::iter::once(&self.packed).chain(self.legacy.as_ref())
    }
}

/// A SHA-256 in hex as stored: its 32 bytes (text unchanged if it is not
/// 64 hex digits).
pub fn digest(hex: &str) -> Probe {
    probe(hex, unhex_digest(hex))
}

/// A content key (`text:<hex>` or `bytes:<hex>`) as stored: a kind byte
/// (`t` or `b`) and the hash's 32 bytes (text unchanged if it is of
/// another shape).
pub fn content_key(key: &str) -> Probe {
    let packed = key.split_once(':').and_then(|(kind, hex)| {
        let tag = match kind {
            "text" => b't',
            "bytes" => b'b',
            _ => return None,
        };
        let mut out = vec![tag];
        out.extend(unhex_digest(hex)?);
        Some(out)
    });
    probe(key, packed)
}

fn probe(text: &str, packed: Option<Vec<u8>>) -> Probe {
    match packed {
        Some(bytes) => Probe {
            packed: Value::Blob(bytes),
            legacy: Some(Value::Text(text.to_string())),
        },
        None => Probe {
            packed: Value::Text(text.to_string()),
            legacy: None,
        },
    }
}

/// The 32 bytes of a 64-digit hex SHA-256 (either case).
fn unhex_digest(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    hex.as_bytes()
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "e53029b26f80d6fab9a426550131ea862beaf7fe4a522f7e18cf094c849e0cf2";

    #[test]
    fn a_digest_is_stored_as_its_bytes_and_found_in_either_form() {
        let p = digest(HASH);
        let Value::Blob(bytes) = &p.packed else {
            panic!("packed: {:?}", p.packed)
        };
        assert_eq!(bytes.len(), 32);
        assert_eq!(crate::ids::hex(bytes), HASH);
        assert_eq!(p.legacy, Some(Value::Text(HASH.into())));
        assert_eq!(p.forms().count(), 2);
    }

    #[test]
    fn content_keys_keep_their_kind() {
        let text = content_key(&format!("text:{HASH}"));
        let bytes = content_key(&format!("bytes:{HASH}"));
        let (Value::Blob(t), Value::Blob(b)) = (&text.packed, &bytes.packed) else {
            panic!("not packed")
        };
        assert_eq!((t[0], b[0], t.len()), (b't', b'b', 33));
        assert_ne!(
            t, b,
            "the same hash of text and of bytes are different keys"
        );
    }

    #[test]
    fn values_of_another_shape_are_stored_as_they_are() {
        for odd in [
            "x",
            "text:abc",
            &format!("other:{HASH}"),
            &HASH.replace('e', "g"),
        ] {
            let p = if odd.contains(':') {
                content_key(odd)
            } else {
                digest(odd)
            };
            assert_eq!(p.packed, Value::Text(odd.to_string()));
            assert_eq!(p.forms().count(), 1);
        }
    }
}
