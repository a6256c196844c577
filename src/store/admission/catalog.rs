//! One tenant's admission catalog: for each chunk (by key and by vector
//! slot) the document it belongs to, and for each document what a recall
//! filter tests (source, media type, the time it is about, when it was
//! stored and expires, its metadata fields, whether it is current), so
//! that admitting a lane's candidate is a few lookups in memory instead of
//! three B-tree descents.
//!
//! A catalog is read from one snapshot ([`Catalog::build`]) and caught up
//! from the rows the writer changed since ([`Catalog::catch_up`]): each
//! changed document (and the document of each changed chunk) is read
//! again whole. It answers for the documents SQLite holds at its epoch
//! exactly as the scope's SQL condition would, the memory-scope sight
//! aside (a reader with a limited sight does not use it).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use rusqlite::{Connection, OptionalExtension};

use super::changes::Changed;
use crate::store::fields::TAGS_KEY;
use crate::store::scope::{RecallFilter, SourceMatch};
use crate::store::tenant::Visibility;

/// A slot or map entry that names no document.
const NONE: u32 = u32::MAX;

/// A tenant holding at least 1 in this many of the store's chunks has its
/// catalog read in table order (see [`Catalog::build`]).
const SCAN_SHARE: i64 = 8;

/// A catalog catches up on at most one changed row per this many of its
/// documents (and at least [`MIN_CATCH_UP_ROWS`]); past that it is read
/// again whole, which costs less than a few lookups per row by then.
const CATCH_UP_SHARE: usize = 4;

/// Changed rows any catalog catches up on rather than being read again.
const MIN_CATCH_UP_ROWS: usize = 1024;

/// Rows between two checks of a build's size against its budget.
const BUILD_CHECK_ROWS: usize = 4096;

/// Hashes the integer keys of the catalog's maps (row ids and places the
/// store assigned, never a caller's choice) with one multiplication: the
/// standard SipHash took a tenth of a build and of each check.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by integers, hashed with [`KeyHasher`].
type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// What a filter tests of one document.
struct Doc {
    /// `documents.id`.
    key: i64,
    source: Option<Box<str>>,
    media_type: u32,
    /// `coalesce(observed_at, created_at)`.
    time: i64,
    created_at: i64,
    /// `i64::MAX` when it never expires.
    expires_at: i64,
    /// Not superseded.
    current: bool,
    /// Its `(key, value)` field ids, sorted.
    fields: Box<[u32]>,
    /// Its chunks: key and vector slot (negative: none).
    chunks: Box<[(i64, i64)]>,
}

impl Doc {
    /// Bytes it holds outside its own slot.
    fn heap_bytes(&self) -> usize {
        self.source.as_ref().map_or(0, |s| s.len())
            + self.fields.len() * std::mem::size_of::<u32>()
            + self.chunks.len() * std::mem::size_of::<(i64, i64)>()
    }
}

/// Strings numbered in the order first seen.
#[derive(Default)]
struct Interner {
    ids: HashMap<Box<str>, u32>,
    bytes: usize,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.bytes += s.len();
        self.ids.insert(s.into(), id);
        id
    }

    fn get(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }

    fn memory(&self) -> usize {
        self.bytes + self.ids.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
    }
}

/// One field as an interned string: its key's length first, so that no
/// two `(key, value)` pairs read the same.
fn field_name(key: &str, value: &str) -> String {
    format!("{}:{key}{value}", key.len())
}

/// A tenant's catalog (see the module docs).
pub struct Catalog {
    tenant_id: i64,
    /// The epoch of the change feed it reflects.
    pub applied: u64,
    /// The vector generation its slots are of.
    pub generation: i64,
    docs: Vec<Option<Doc>>,
    /// Places in `docs` free for reuse.
    free: Vec<u32>,
    /// `documents.id` → place in `docs`.
    by_key: KeyMap<i64, u32>,
    /// Chunk key → place of its document.
    chunks: KeyMap<i64, u32>,
    /// Vector slot → place of its chunk's document.
    slots: Vec<u32>,
    media_types: Interner,
    fields: Interner,
    /// Documents holding each field, by field id.
    field_documents: Vec<u32>,
    /// Bytes the documents hold outside `docs`.
    doc_heap: usize,
}

/// A filter compiled against a catalog's names.
pub struct Compiled<'f> {
    filter: &'f RecallFilter,
    media_type: Option<u32>,
    /// Field ids every admitted document has.
    all_of: Vec<u32>,
    /// Field ids of which it has one (`tags` any).
    any_of: Option<Vec<u32>>,
    visible: Visibility,
}

impl Catalog {
    fn empty(tenant_id: i64, applied: u64, generation: i64) -> Catalog {
        Catalog {
            tenant_id,
            applied,
            generation,
            docs: Vec::new(),
            free: Vec::new(),
            by_key: KeyMap::default(),
            chunks: KeyMap::default(),
            slots: Vec::new(),
            media_types: Interner::default(),
            fields: Interner::default(),
            field_documents: Vec::new(),
            doc_heap: 0,
        }
    }

    /// Reads tenant `tenant_id`'s catalog in `conn`'s snapshot, which
    /// holds every commit up to epoch `applied` and vector generation
    /// `generation`; `None` once it takes more than `budget` bytes.
    pub fn build(
        conn: &Connection,
        tenant_id: i64,
        applied: u64,
        generation: i64,
        budget: usize,
    ) -> rusqlite::Result<Option<Catalog>> {
        let mut cat = Catalog::empty(tenant_id, applied, generation);
        // A tenant holding a good share of the store is read in table
        // order (measured at 100k documents: 56 ms against 400 through
        // the tenant's index, whose every row is a seek into the table);
        // a small one through its indexes, never reading the others' rows.
        let (tenant_chunks, all_chunks): (i64, i64) = conn
            .prepare_cached(
                "SELECT coalesce(sum(chunk_count) FILTER (WHERE id = ?1), 0),
                        coalesce(sum(chunk_count), 0) FROM tenants",
            )?
            .query_row([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let scan = tenant_chunks * SCAN_SHARE >= all_chunks;
        let documents = if scan {
            "documents NOT INDEXED"
        } else {
            "documents"
        };
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT id, source, media_type, coalesce(observed_at, created_at), created_at,
                    expires_at, superseded_by IS NULL
               FROM {documents} WHERE tenant_id = ?1"
        ))?;
        let mut rows = stmt.query([tenant_id])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let media: String = r.get(2)?;
            let doc = Doc {
                key: r.get(0)?,
                source: r.get::<_, Option<String>>(1)?.map(String::into_boxed_str),
                media_type: cat.media_types.id(&media),
                time: r.get(3)?,
                created_at: r.get(4)?,
                expires_at: r.get::<_, Option<i64>>(5)?.unwrap_or(i64::MAX),
                current: r.get(6)?,
                fields: Box::new([]),
                chunks: Box::new([]),
            };
            cat.place(doc);
            n += 1;
            if n % BUILD_CHECK_ROWS == 0 && cat.memory() > budget {
                return Ok(None);
            }
        }
        let mut fields: Vec<Vec<u32>> = vec![Vec::new(); cat.docs.len()];
        let mut stmt = conn.prepare_cached(
            "SELECT document_id, key, value FROM document_fields WHERE tenant_id = ?1",
        )?;
        let mut rows = stmt.query([tenant_id])?;
        while let Some(r) = rows.next()? {
            let Some(&at) = cat.by_key.get(&r.get::<_, i64>(0)?) else {
                continue;
            };
            let id = cat.fields.id(&field_name(
                r.get_ref(1)?.as_str()?,
                r.get_ref(2)?.as_str()?,
            ));
            fields[at as usize].push(id);
        }
        let mut chunks: Vec<Vec<(i64, i64)>> = vec![Vec::new(); cat.docs.len()];
        // A small tenant's through its documents: `chunks` has no index
        // by tenant alone.
        let mut stmt = conn.prepare_cached(if scan {
            "SELECT id, document_id, vector_slot FROM chunks NOT INDEXED WHERE tenant_id = ?1"
        } else {
            "SELECT c.id, c.document_id, c.vector_slot
               FROM documents d CROSS JOIN chunks c ON c.document_id = d.id
              WHERE d.tenant_id = ?1"
        })?;
        let mut rows = stmt.query([tenant_id])?;
        while let Some(r) = rows.next()? {
            let Some(&at) = cat.by_key.get(&r.get::<_, i64>(1)?) else {
                continue;
            };
            let slot = r.get::<_, Option<i64>>(2)?.unwrap_or(-1);
            chunks[at as usize].push((r.get(0)?, slot));
        }
        for (at, mut ids) in fields.into_iter().enumerate() {
            ids.sort_unstable();
            ids.dedup();
            cat.set_fields(at as u32, ids);
        }
        for (at, list) in chunks.into_iter().enumerate() {
            cat.set_chunks(at as u32, list);
        }
        Ok((cat.memory() <= budget).then_some(cat))
    }

    /// Reads again, in a snapshot holding epoch `to`, the documents of the
    /// rows changed since [`Catalog::applied`]. `false` when they are too
    /// many to be worth it (then rebuild instead).
    pub fn catch_up(
        &mut self,
        conn: &Connection,
        changed: &[Changed],
        to: u64,
    ) -> rusqlite::Result<bool> {
        if changed.len() > (self.by_key.len() / CATCH_UP_SHARE).max(MIN_CATCH_UP_ROWS) {
            return Ok(false);
        }
        let mut docs: HashSet<i64> = HashSet::new();
        let mut chunk_doc =
            conn.prepare_cached("SELECT document_id FROM chunks WHERE id = ?1 AND tenant_id = ?2")?;
        for row in changed {
            match *row {
                Changed::Document(key) => {
                    docs.insert(key);
                }
                Changed::Chunk(key) => {
                    if let Some(doc) = self.chunks.get(&key).and_then(|&at| self.doc(at)) {
                        docs.insert(doc.key);
                    }
                    let now: Option<i64> = chunk_doc
                        .query_row([key, self.tenant_id], |r| r.get(0))
                        .optional()?;
                    docs.extend(now);
                }
            }
        }
        // Every changed document leaves first: a chunk key (or slot) that
        // moved from one to another is then placed by the one holding it.
        for key in &docs {
            self.remove(*key);
        }
        for key in docs {
            self.load(conn, key)?;
        }
        self.applied = to;
        Ok(true)
    }

    /// Reads document `key` (if it is this tenant's) into the catalog.
    fn load(&mut self, conn: &Connection, key: i64) -> rusqlite::Result<()> {
        let row = conn
            .prepare_cached(
                "SELECT source, media_type, coalesce(observed_at, created_at), created_at,
                        expires_at, superseded_by IS NULL
                   FROM documents WHERE id = ?1 AND tenant_id = ?2",
            )?
            .query_row([key, self.tenant_id], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            })
            .optional()?;
        let Some((source, media, time, created_at, expires_at, current)) = row else {
            return Ok(());
        };
        let mut fields: Vec<u32> = Vec::new();
        let mut stmt =
            conn.prepare_cached("SELECT key, value FROM document_fields WHERE document_id = ?1")?;
        let mut rows = stmt.query([key])?;
        while let Some(r) = rows.next()? {
            fields.push(self.fields.id(&field_name(
                r.get_ref(0)?.as_str()?,
                r.get_ref(1)?.as_str()?,
            )));
        }
        fields.sort_unstable();
        fields.dedup();
        let chunks: Vec<(i64, i64)> = conn
            .prepare_cached("SELECT id, vector_slot FROM chunks WHERE document_id = ?1")?
            .query_map([key], |r| {
                Ok((r.get(0)?, r.get::<_, Option<i64>>(1)?.unwrap_or(-1)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let media_type = self.media_types.id(&media);
        let at = self.place(Doc {
            key,
            source: source.map(String::into_boxed_str),
            media_type,
            time,
            created_at,
            expires_at: expires_at.unwrap_or(i64::MAX),
            current,
            fields: Box::new([]),
            chunks: Box::new([]),
        });
        self.set_fields(at, fields);
        self.set_chunks(at, chunks);
        Ok(())
    }

    /// Puts `doc` (without fields or chunks) in a free place.
    fn place(&mut self, doc: Doc) -> u32 {
        let key = doc.key;
        self.doc_heap += doc.heap_bytes();
        let at = match self.free.pop() {
            Some(at) => {
                self.docs[at as usize] = Some(doc);
                at
            }
            None => {
                self.docs.push(Some(doc));
                (self.docs.len() - 1) as u32
            }
        };
        self.by_key.insert(key, at);
        at
    }

    fn set_fields(&mut self, at: u32, fields: Vec<u32>) {
        if let Some(doc) = self.docs[at as usize].as_mut() {
            self.doc_heap += fields.len() * std::mem::size_of::<u32>();
            self.doc_heap -= doc.fields.len() * std::mem::size_of::<u32>();
            for &id in doc.fields.iter() {
                self.field_documents[id as usize] -= 1;
            }
            for &id in &fields {
                let id = id as usize;
                if id >= self.field_documents.len() {
                    self.field_documents.resize(id + 1, 0);
                }
                self.field_documents[id] += 1;
            }
            doc.fields = fields.into_boxed_slice();
        }
    }

    fn set_chunks(&mut self, at: u32, chunks: Vec<(i64, i64)>) {
        for &(key, slot) in &chunks {
            self.chunks.insert(key, at);
            if slot >= 0 {
                let slot = slot as usize;
                if slot >= self.slots.len() {
                    self.slots.resize(slot + 1, NONE);
                }
                self.slots[slot] = at;
            }
        }
        if let Some(doc) = self.docs[at as usize].as_mut() {
            self.doc_heap += chunks.len() * std::mem::size_of::<(i64, i64)>();
            self.doc_heap -= doc.chunks.len() * std::mem::size_of::<(i64, i64)>();
            doc.chunks = chunks.into_boxed_slice();
        }
    }

    /// Takes document `key` out, with the chunk keys and slots still
    /// naming it.
    fn remove(&mut self, key: i64) {
        let Some(at) = self.by_key.remove(&key) else {
            return;
        };
        let Some(doc) = self.docs[at as usize].take() else {
            return;
        };
        self.doc_heap -= doc.heap_bytes();
        for &id in doc.fields.iter() {
            self.field_documents[id as usize] -= 1;
        }
        for &(chunk, slot) in doc.chunks.iter() {
            if self.chunks.get(&chunk) == Some(&at) {
                self.chunks.remove(&chunk);
            }
            if let Some(s) = usize::try_from(slot)
                .ok()
                .and_then(|s| self.slots.get_mut(s))
            {
                if *s == at {
                    *s = NONE;
                }
            }
        }
        self.free.push(at);
    }

    fn doc(&self, at: u32) -> Option<&Doc> {
        self.docs.get(at as usize).and_then(Option::as_ref)
    }

    /// Documents it holds.
    pub fn documents(&self) -> usize {
        self.by_key.len()
    }

    /// Chunks it holds.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// How many documents hold field `key` = `value` (current or not).
    pub fn field_documents(&self, key: &str, value: &str) -> usize {
        self.fields
            .get(&field_name(key, value))
            .and_then(|id| self.field_documents.get(id as usize))
            .map_or(0, |&n| n as usize)
    }

    /// An estimate of the memory it takes (bytes).
    pub fn memory(&self) -> usize {
        let entry = |size: usize| size + 1; // a hash table's control byte
        self.docs.capacity() * std::mem::size_of::<Option<Doc>>()
            + self.doc_heap
            + self.free.capacity() * 4
            + self.by_key.capacity() * entry(std::mem::size_of::<(i64, u32)>())
            + self.chunks.capacity() * entry(std::mem::size_of::<(i64, u32)>())
            + self.slots.capacity() * 4
            + self.field_documents.capacity() * 4
            + self.media_types.memory()
            + self.fields.memory()
    }

    /// `filter` in this catalog's names; `None` when it names a media type
    /// or field no document has (it admits nothing).
    pub fn compile<'f>(
        &self,
        filter: &'f RecallFilter,
        visible: Visibility,
    ) -> Option<Compiled<'f>> {
        let media_type = match &filter.media_type {
            Some(m) => Some(self.media_types.get(m)?),
            None => None,
        };
        let mut all_of = Vec::new();
        for (k, v) in &filter.fields {
            all_of.push(self.fields.get(&field_name(k, v))?);
        }
        let mut any_of = None;
        if let Some(t) = filter.tags.as_ref().filter(|t| !t.tags.is_empty()) {
            let ids = t
                .tags
                .iter()
                .map(|tag| self.fields.get(&field_name(TAGS_KEY, tag)));
            if t.all {
                for id in ids {
                    all_of.push(id?);
                }
            } else {
                let known: Vec<u32> = ids.flatten().collect();
                if known.is_empty() {
                    return None;
                }
                any_of = Some(known);
            }
        }
        Some(Compiled {
            filter,
            media_type,
            all_of,
            any_of,
            visible,
        })
    }

    /// Whether chunk `key` is this tenant's and `c` admits its document.
    pub fn admits_chunk(&self, key: i64, c: &Compiled<'_>) -> bool {
        self.chunks
            .get(&key)
            .and_then(|&at| self.doc(at))
            .is_some_and(|d| admits(d, c))
    }

    /// Whether vector slot `slot` (of [`Catalog::generation`]) holds a
    /// chunk whose document `c` admits.
    pub fn admits_slot(&self, slot: i64, c: &Compiled<'_>) -> bool {
        usize::try_from(slot)
            .ok()
            .and_then(|s| self.slots.get(s))
            .and_then(|&at| self.doc(at))
            .is_some_and(|d| admits(d, c))
    }
}

/// The scope's SQL condition and retention (`VISIBLE` but the sight), on
/// one document.
fn admits(d: &Doc, c: &Compiled<'_>) -> bool {
    let f = c.filter;
    if !f.include_history && !d.current {
        return false;
    }
    if d.expires_at <= c.visible.now || d.created_at < c.visible.since {
        return false;
    }
    let source_ok = match &f.source {
        None => true,
        Some(SourceMatch::Exact(s)) => d.source.as_deref() == Some(s.as_str()),
        Some(SourceMatch::Prefix(p)) => d
            .source
            .as_deref()
            .is_some_and(|s| s.starts_with(p.as_str())),
    };
    source_ok
        && c.media_type.is_none_or(|m| d.media_type == m)
        && f.since.is_none_or(|s| d.time >= s)
        && f.until.is_none_or(|u| d.time < u)
        && c.all_of.iter().all(|id| d.fields.binary_search(id).is_ok())
        && c.any_of
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|id| d.fields.binary_search(id).is_ok()))
}
