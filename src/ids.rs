//! Opaque identifiers and hashing.
//!
//! Ids are `prefix_` + 24 hex digits. [`new_id`] is 96 random bits; a
//! document id ([`new_document_id`]) starts with its creation time in
//! milliseconds (44 bits) and ends with 52 random bits, so that documents
//! written together sit together in the store's index of ids (see
//! [`new_document_id`]). Either reveals nothing about other documents or
//! tenants and never collides in practice. The generator is seeded once per
//! process from the operating system's randomness and advanced by a counter
//! through SHA-256.
//!
//! Entities and relations are named `ent_<n>` and `rel_<n>`, `n` counting
//! within their tenant ([`GraphIds`]): a tenant's ids say nothing about
//! other tenants.

use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::clock::now_ms;
pub use crate::limits::MAX_TENANT_GRAPH_NUMBER;

/// A new opaque id with the given prefix, e.g. `doc_5f0b9a2c6c1e4b0f9a7d2f4a`.
pub fn new_id(prefix: &str) -> String {
    let bytes = random_bytes::<12>();
    let mut id = String::with_capacity(prefix.len() + 1 + 24);
    id.push_str(prefix);
    id.push('_');
    id.push_str(&hex(&bytes));
    id
}

/// Hex digits of a document id that hold its creation time (44 bits of
/// milliseconds since 1970: until the year 2527).
const DOCUMENT_ID_TIME_DIGITS: usize = 11;

/// A new document id, `doc_` + 24 hex digits: the creation time in
/// milliseconds, then random digits.
///
/// Why not all random: the store indexes documents by id, and a random id
/// lands on a random page of that index. At 100k documents each group
/// commit then rewrote one index page per document; that index alone was
/// 11% of the pages written to the log (measured from the log's frames
/// while ingesting from 100k to 110k documents). Ids that grow with time
/// are appended where the last ones were. The time is no secret: a
/// document's `created_at` says the same to whoever may read it.
pub fn new_document_id() -> String {
    document_id_at(now_ms())
}

fn document_id_at(ms: i64) -> String {
    let time = format!("{:0width$x}", ms.max(0), width = DOCUMENT_ID_TIME_DIGITS);
    let random = hex(&random_bytes::<7>());
    let mut id = String::with_capacity(4 + 24);
    id.push_str("doc_");
    // Past the year 2527 the time would need a twelfth digit: keep the
    // low 44 bits rather than change the id's shape.
    id.push_str(&time[time.len() - DOCUMENT_ID_TIME_DIGITS..]);
    id.push_str(&random[..24 - DOCUMENT_ID_TIME_DIGITS]);
    id
}

/// Fills `out` from the operating system's random source, never from the
/// deterministic sequence of [`random_bytes`]: for secrets a peer must not
/// guess (a bearer token, an upload ticket), whatever mode the process runs
/// in. No random-number crate is on the design card.
#[cfg(unix)]
pub fn secret_bytes(out: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(out)
}

#[cfg(not(unix))]
pub fn os_random(_out: &mut [u8]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "this platform has no /dev/urandom to draw secrets from",
    ))
}

/// Unpredictable bytes. Cryptographic strength comes from the OS seed; the
/// SHA-256 chain only stretches it. (In deterministic mode the seed is
/// given, and the bytes are a fixed sequence: see [`seed_sequence`].)
pub fn random_bytes<const N: usize>() -> [u8; N] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut out = [0u8; N];
    let mut filled = 0;
    let mut block = 0u64;
    while filled < N {
        let mut h = Sha256::new();
        h.update(seed());
        h.update(n.to_le_bytes());
        h.update(block.to_le_bytes());
        let digest = h.finalize();
        let take = (N - filled).min(digest.len());
        out[filled..filled + take].copy_from_slice(&digest[..take]);
        filled += take;
        block += 1;
    }
    out
}

static SEED: OnceLock<[u8; 32]> = OnceLock::new();

/// Deterministic mode: ids come from `seed` instead of the OS, a fixed
/// sequence in the order they are made. Once per process, before the
/// first id; false if ids were seeded (or made) already.
pub fn seed_sequence(seed: u64) -> bool {
    let mut h = Sha256::new();
    h.update(b"alayasiki-mcp deterministic ids");
    h.update(seed.to_le_bytes());
    SEED.set(h.finalize().into()).is_ok()
}

fn seed() -> &'static [u8; 32] {
    SEED.get_or_init(|| {
        let mut h = Sha256::new();
        if let Some(os) = os_random() {
            h.update(os);
        }
        // Mixed in always, so a missing /dev/urandom still yields distinct
        // seeds per process: std's RandomState keys come from the OS.
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(now_ms() as u64);
        h.update(hasher.finish().to_le_bytes());
        h.update(std::process::id().to_le_bytes());
        h.update(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
                .to_le_bytes(),
        );
        h.finalize().into()
    })
}

fn os_random() -> Option<[u8; 32]> {
    let mut buf = [0u8; 32];
    secret_bytes(&mut buf).ok()?;
    Some(buf)
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// True if `id` has the shape of a document id (`doc_` and 24 lowercase hex
/// digits, as [`new_document_id`] makes and [`new_id`] made before ids were
/// ordered): an import keeps such ids.
pub fn is_document_id(id: &str) -> bool {
    id.strip_prefix("doc_").is_some_and(|h| {
        h.len() == 24
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Prefix of an entity's external id: `ent_` and the entity's number
/// within its tenant, in decimal (`ent_42`).
pub const ENTITY_ID_PREFIX: &str = "ent_";
/// Prefix of a relation's external id (`rel_7`).
pub const RELATION_ID_PREFIX: &str = "rel_";

/// Low bits of an entity's or relation's store key that number it within
/// its tenant: the key is the tenant's id shifted left by these bits, plus
/// the number. So a tenant's numbers (`ent_1`, `ent_2`, ...) count only
/// its own entities and say nothing about other tenants, while keys stay
/// unique across the store (one `entities` table, one `relations` table)
/// and are still made by the writer and bound into the statements that
/// replicas run again.
pub const TENANT_GRAPH_KEY_BITS: u32 = 32;

/// How one tenant's entities and relations are named to it.
///
/// Keys in the tenant's own range render as their number within it.
/// Any other key is one the store gave out before numbers were per
/// tenant, from a single sequence (all of them at most
/// [`MAX_TENANT_GRAPH_NUMBER`] in practice): it keeps the id it had
/// (`ent_<key>`), so ids handed out then still name the same entities.
/// The writer numbers a tenant's new entities past its own highest
/// earlier key ([`GraphIds::first_number_after`]), so the two kinds never
/// share an id within a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphIds {
    /// The first key of the tenant's range (its number 0, never used);
    /// `None` for a tenant that has never written or whose id is past
    /// what keys can hold: then only earlier keys are named.
    base: Option<i64>,
}

impl GraphIds {
    /// The naming of the tenant with store id `tenant_id` (`None`: a
    /// tenant that has never written).
    pub fn of_tenant(tenant_id: Option<i64>) -> GraphIds {
        GraphIds {
            base: tenant_id.and_then(graph_key_base),
        }
    }

    /// The lowest and highest key of the tenant's range (numbers 1 to
    /// [`MAX_TENANT_GRAPH_NUMBER`]); `None` if the tenant's id is too
    /// large for a range of its own.
    pub fn key_range(&self) -> Option<(i64, i64)> {
        self.base.map(|b| (b + 1, b + MAX_TENANT_GRAPH_NUMBER))
    }

    /// The key of the tenant's `number`, if the number is in range.
    pub fn key_of(&self, number: i64) -> Option<i64> {
        let base = self.base?;
        (1..=MAX_TENANT_GRAPH_NUMBER)
            .contains(&number)
            .then_some(base + number)
    }

    /// What the tenant calls the entity or relation with store key `key`.
    fn number(&self, key: i64) -> i64 {
        match self.key_range() {
            Some((first, last)) if (first..=last).contains(&key) => key - (first - 1),
            _ => key,
        }
    }

    /// The first number a tenant whose range holds nothing yet gives out,
    /// when `highest_earlier` is its highest key from the single sequence
    /// (at most [`MAX_TENANT_GRAPH_NUMBER`]; `None` if it has none): past
    /// it, so an earlier id and a new one never coincide.
    pub fn first_number_after(highest_earlier: Option<i64>) -> i64 {
        highest_earlier.unwrap_or(0).max(0) + 1
    }

    /// The external id of the entity with store key `key`.
    pub fn entity_id(&self, key: i64) -> String {
        format!("{ENTITY_ID_PREFIX}{}", self.number(key))
    }

    /// The external id of the relation with store key `key`.
    pub fn relation_id(&self, key: i64) -> String {
        format!("{RELATION_ID_PREFIX}{}", self.number(key))
    }

    /// The store keys an entity id may name in this tenant, most likely
    /// first: the key of its number in the tenant's range, then the same
    /// number as an earlier key. At most one of them is the tenant's (the
    /// caller looks them up within the tenant). Empty for anything that is
    /// not an entity id ([`parse_entity_number`]).
    pub fn entity_keys(&self, id: &str) -> Vec<i64> {
        let Some(n) = parse_entity_number(id) else {
            return Vec::new();
        };
        let mut keys: Vec<i64> = self.key_of(n).into_iter().collect();
        if self.number(n) == n {
            keys.push(n);
        }
        keys
    }
}

/// The first key of the range of the tenant with store id `tenant_id`:
/// `None` if shifting it would overflow a key (past 2^31 tenants).
fn graph_key_base(tenant_id: i64) -> Option<i64> {
    if tenant_id <= 0 {
        return None;
    }
    tenant_id
        .checked_mul(1 << TENANT_GRAPH_KEY_BITS)
        .filter(|b| b.checked_add(MAX_TENANT_GRAPH_NUMBER).is_some())
}

/// The number an entity id names, parsed strictly: the prefix, then a
/// positive decimal number without sign or leading zeros, so each entity
/// has exactly one id and anything else names none.
pub fn parse_entity_number(id: &str) -> Option<i64> {
    parse_key(id, ENTITY_ID_PREFIX)
}

fn parse_key(id: &str, prefix: &str) -> Option<i64> {
    let digits = id.strip_prefix(prefix)?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_prefixed_and_distinct() {
        let ids: HashSet<String> = (0..10_000).map(|_| new_id("doc")).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(5) {
            assert!(id.starts_with("doc_"));
            assert_eq!(id.len(), 4 + 24);
            assert!(is_document_id(id));
        }
        assert!(!is_document_id("doc_XYZ"));
        assert!(!is_document_id("doc_0123456789abcdef0123456G"));
        assert!(!is_document_id("chunk_0123456789abcdef01234567"));
    }

    #[test]
    fn document_ids_grow_with_time_and_stay_distinct() {
        let ids: Vec<String> = (0..10_000).map(|_| new_document_id()).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
        for id in &ids {
            assert!(is_document_id(id), "{id}");
        }
        // Later milliseconds sort after earlier ones, whatever the random part.
        let (a, b) = (
            document_id_at(1_764_500_000_000),
            document_id_at(1_764_500_000_001),
        );
        assert!(a < b, "{a} !< {b}");
        assert!(a.starts_with("doc_19ad"), "{a}");
        // The shape holds at both ends of the time range.
        assert!(is_document_id(&document_id_at(0)));
        assert!(is_document_id(&document_id_at(i64::MAX)));
    }

    #[test]
    fn sha256_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn entity_numbers_parse_strictly() {
        assert_eq!(parse_entity_number("ent_42"), Some(42));
        assert_eq!(
            parse_entity_number(&format!("ent_{}", i64::MAX)),
            Some(i64::MAX)
        );
        for bad in [
            "",
            "ent_",
            "ent_0",
            "ent_042",
            "ent_-1",
            "ent_+1",
            "ent_4a",
            "ent_ 4",
            "ENT_4",
            "rel_4",
            "42",
            "ent_99999999999999999999",
        ] {
            assert_eq!(parse_entity_number(bad), None, "{bad:?}");
            assert!(GraphIds::of_tenant(Some(3)).entity_keys(bad).is_empty());
        }
    }

    #[test]
    fn a_tenants_keys_are_named_by_their_number_within_it() {
        let base = 3i64 << TENANT_GRAPH_KEY_BITS;
        let ids = GraphIds::of_tenant(Some(3));
        assert_eq!(
            ids.key_range(),
            Some((base + 1, base + MAX_TENANT_GRAPH_NUMBER))
        );
        assert_eq!(ids.entity_id(base + 1), "ent_1");
        assert_eq!(ids.relation_id(base + 7), "rel_7");
        assert_eq!(
            ids.entity_id(base + MAX_TENANT_GRAPH_NUMBER),
            format!("ent_{MAX_TENANT_GRAPH_NUMBER}")
        );
        assert_eq!(ids.key_of(1), Some(base + 1));
        assert_eq!(
            ids.key_of(MAX_TENANT_GRAPH_NUMBER),
            Some(base + MAX_TENANT_GRAPH_NUMBER)
        );
        assert_eq!(ids.key_of(0), None);
        assert_eq!(ids.key_of(MAX_TENANT_GRAPH_NUMBER + 1), None);
        // An earlier key keeps its id, and the id finds it again.
        assert_eq!(ids.entity_id(42), "ent_42");
        assert_eq!(ids.entity_keys("ent_42"), vec![base + 42, 42]);
        // Another tenant's range is not this tenant's numbering.
        let other = 4i64 << TENANT_GRAPH_KEY_BITS;
        assert_eq!(ids.entity_id(other + 1), format!("ent_{}", other + 1));
        assert_eq!(
            ids.entity_keys(&format!("ent_{}", other + 1)),
            vec![other + 1]
        );
        // A key of the tenant's own range is named only by its number.
        assert_eq!(
            ids.entity_keys(&format!("ent_{}", base + 1)),
            Vec::<i64>::new()
        );
        assert_eq!(GraphIds::first_number_after(None), 1);
        assert_eq!(GraphIds::first_number_after(Some(7)), 8);
    }

    #[test]
    fn tenants_without_a_range_name_keys_as_they_are() {
        for ids in [
            GraphIds::of_tenant(None),
            GraphIds::of_tenant(Some(0)),
            GraphIds::of_tenant(Some(1 << 31)),
        ] {
            assert_eq!(ids.key_range(), None);
            assert_eq!(ids.entity_id(5), "ent_5");
            assert_eq!(ids.entity_keys("ent_5"), vec![5]);
        }
        // The last tenant id with a range of its own.
        let last = (1i64 << 31) - 1;
        let (_, top) = GraphIds::of_tenant(Some(last)).key_range().unwrap();
        assert_eq!(top, i64::MAX);
    }
}
