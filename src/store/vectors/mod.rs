//! The vector store: per tenant, one memory-mapped flat file of rows
//! addressed by slot, `vectors/t<tenant>.g<generation>.q8`: each row is the
//! vector quantized to int8 plus its f32 scale, what a query scans, its
//! best candidates then scored again with the query unquantized (see
//! `search`). The vectors are kept once, quantized: re-scoring from exact
//! f32 copies instead measured the same recall (LoCoMo R@5 / R@10 0.715 /
//! 0.786 with them, 0.716 / 0.785 without; the written notes 0.654 / 0.791
//! both) for four times the bytes, so those copies are gone; a store
//! written with them has its `.f32` files deleted when a tenant's files
//! are opened.
//!
//! The generation (recorded in SQLite with the committed row count) changes
//! when `compact` or `reindex` writes a fresh file: the new file is
//! complete before the transaction that switches to it commits, and files
//! of any other generation are deleted when a tenant is opened, so a crash
//! at any point leaves either the old file or the new one in use.
//! A compaction fills its new file outside the writer under a scratch
//! name ([`VectorIndex::scratch`]) and renames it to its generation's
//! name, durably, before that transaction ([`VectorIndex::install`]);
//! leftover scratch files are deleted when the tenant is opened too.
//! A compaction runs beside readers: its files are staged before the
//! switch commits, the old ones kept until it has
//! ([`VectorIndex::stage`], [`VectorIndex::settle`]), and a reader takes
//! the files of the generation its snapshot names
//! ([`VectorIndex::matching`]), so slots are never read against the
//! other generation's rows.
//!
//! Each file starts with a header (magic, version, dimension, element type,
//! embedder id). A file built by another embedder or dimension is refused
//! with an error that names `alayasiki-mcp reindex`, never silently
//! searched.
//!
//! SQLite is the truth. Rows are appended by the writer thread inside the
//! transaction that references them (`chunks.vector_slot`,
//! `tenants.vector_rows`) and flushed before that transaction commits; only
//! after the commit do readers see them. On open, rows past the committed
//! count are discarded, so a crash between the vector write and the commit
//! leaves nothing visible. Readers scan an immutable snapshot (a shared map
//! and a row count), so a search never blocks the writer; the search itself
//! is in `search`, the first pass over a large tenant's rows in
//! [`signs`], the scan kernels in [`kernel`], the files themselves
//! (names, headers, positioned writes) in `files`.

mod files;
pub mod kernel;
mod search;
pub mod signs;

use files::{
    check_header, file_path, open_file, remove_other_generations, remove_scratch, scratch_path,
    sync_dir, write_all_at,
};

use memmap2::Mmap;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use crate::config::Durability;
use crate::error::{Error, Result};
use kernel::quantize;

/// Directory under the data directory holding the vector files.
pub const VECTORS_DIR: &str = "vectors";
const MAGIC: &[u8; 8] = b"ALAYAVEC";
const VERSION: u32 = 1;
/// Bytes before the first row (holds the header; rows start aligned).
pub const HEADER_BYTES: u64 = 256;
/// Longest embedder id recorded in a header.
pub const MAX_EMBEDDER_ID_BYTES: usize = 192;
const DTYPE_Q8: u8 = 1;
/// The extension of the exact copies stores kept before (see the module
/// docs): deleted on open.
const LEGACY_EXACT: &str = "f32";
/// Most rows added to a file's capacity at a time. The files grow in steps
/// so readers rarely need a new map: each step doubles the capacity, from
/// [`MIN_CAPACITY_ROWS`], up to this many rows at once, so a file never
/// holds room for more than twice its rows (or this many more), and a
/// small memory's files stay small even where the file system does not
/// keep unwritten room sparse.
pub const GROWTH_ROWS: u64 = 16_384;
/// The smallest capacity step of a vector file, in rows.
pub const MIN_CAPACITY_ROWS: u64 = 256;
/// Tenants with at least this many rows are scanned by two threads.
pub const PARALLEL_SCAN_MIN_ROWS: usize = 50_000;
/// Candidates of the int8 scan scored again with the query unquantized,
/// per result wanted (and at least [`MIN_RESCORED`]).
pub const RESCORE_PER_RESULT: usize = 8;
pub const MIN_RESCORED: usize = 100;

/// What vectors the store holds: fixed per data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorSpec {
    pub embedder_id: String,
    pub dim: usize,
}

/// All tenants' vector files in one data directory.
pub struct VectorIndex {
    dir: PathBuf,
    spec: VectorSpec,
    durability: Durability,
    tenants: Mutex<HashMap<i64, Arc<TenantVectors>>>,
    /// The files a staged generation replaced, until its switch is decided.
    retiring: Mutex<HashMap<i64, Arc<TenantVectors>>>,
    /// Syncs started by [`VectorIndex::start_sync`], not yet waited for.
    syncing: Mutex<Vec<JoinHandle<std::io::Result<()>>>>,
}

/// One tenant's file.
pub struct TenantVectors {
    spec: VectorSpec,
    generation: i64,
    q8_row: usize,
    files: Mutex<Files>,
    snapshot: RwLock<Snapshot>,
    /// The sign index of this file's rows, built on first need.
    signs: Arc<signs::SignState>,
}

struct Files {
    q8: File,
    /// Rows written (committed or not).
    written: u64,
    /// Rows the files have room for.
    capacity: u64,
    /// Written since the last sync.
    dirty: bool,
}

/// What readers scan: the map and the committed row count.
#[derive(Clone)]
struct Snapshot {
    q8: Option<Arc<Mmap>>,
    rows: u64,
}

/// A search hit: a slot and its cosine similarity (the query against the
/// stored int8 row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotScore {
    pub slot: u64,
    pub score: f32,
}

impl VectorIndex {
    pub fn new(data_dir: &Path, spec: VectorSpec, durability: Durability) -> Result<VectorIndex> {
        if spec.embedder_id.len() > MAX_EMBEDDER_ID_BYTES || spec.dim == 0 {
            return Err(Error::internal("invalid vector spec"));
        }
        Ok(VectorIndex {
            dir: data_dir.join(VECTORS_DIR),
            spec,
            durability,
            tenants: Mutex::new(HashMap::new()),
            retiring: Mutex::new(HashMap::new()),
            syncing: Mutex::new(Vec::new()),
        })
    }

    pub fn spec(&self) -> &VectorSpec {
        &self.spec
    }

    /// The tenant's files, opened on first use at `generation` with
    /// `committed` rows valid (both as recorded in SQLite); rows after them
    /// and files of other generations are discarded.
    pub fn tenant(
        &self,
        tenant_id: i64,
        committed: u64,
        generation: i64,
    ) -> Result<Arc<TenantVectors>> {
        let mut map = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = map.get(&tenant_id) {
            return Ok(t.clone());
        }
        std::fs::create_dir_all(&self.dir)?;
        remove_other_generations(&self.dir, tenant_id, generation)?;
        // No compaction of the tenant runs before its files are open.
        remove_scratch(&self.dir, tenant_id)?;
        let t = Arc::new(TenantVectors::open(
            &self.dir, tenant_id, &self.spec, committed, generation,
        )?);
        map.insert(tenant_id, t.clone());
        Ok(t)
    }

    /// Opens a fresh, empty file for `generation` without staging it (a
    /// compaction fills it, then switches).
    pub fn fresh(&self, tenant_id: i64, generation: i64) -> Result<TenantVectors> {
        std::fs::create_dir_all(&self.dir)?;
        // `open` deletes an f32 copy of this generation itself.
        let path = file_path(&self.dir, tenant_id, generation, "q8");
        if path.exists() {
            std::fs::remove_file(path)?;
        }
        TenantVectors::open(&self.dir, tenant_id, &self.spec, 0, generation)
    }

    /// Opens a fresh, empty scratch file for the tenant's
    /// `generation`, under a name no generation has, so they can be filled
    /// outside the writer while the writer goes on with the files in use
    /// (and while it builds other generations: a cluster entry compacting
    /// the tenant). Only one compaction of a tenant fills its scratch
    /// files at a time; [`Self::install`] gives them their generation's
    /// name. Leftovers are deleted when the tenant is next opened.
    pub fn scratch(&self, tenant_id: i64, generation: i64) -> Result<TenantVectors> {
        std::fs::create_dir_all(&self.dir)?;
        remove_scratch(&self.dir, tenant_id)?;
        let path = scratch_path(&self.dir, tenant_id, "q8");
        TenantVectors::open_at(&path, &self.spec, 0, generation)
    }

    /// Renames sealed scratch files ([`Self::scratch`]) to the names of
    /// their generation, durably (writer thread only, before the
    /// transaction recording that generation commits, so that after a
    /// crash the files the database names are there; should it not
    /// commit, they are another generation's and go at the next open).
    pub fn install(&self, tenant_id: i64, vectors: &TenantVectors) -> Result<()> {
        std::fs::rename(
            scratch_path(&self.dir, tenant_id, "q8"),
            file_path(&self.dir, tenant_id, vectors.generation, "q8"),
        )?;
        sync_dir(&self.dir)?;
        Ok(())
    }

    /// Deletes the tenant's scratch files: a compaction that will not use
    /// them.
    pub fn discard_scratch(&self, tenant_id: i64) {
        if let Err(e) = remove_scratch(&self.dir, tenant_id) {
            log::warn!("scratch vector files stay until the next start: {e}");
        }
    }

    /// Makes `vectors` the tenant's files before the transaction naming
    /// their generation commits: writes after it go to them, and readers
    /// whose snapshot still names the old generation keep the old files
    /// ([`Self::matching`]), which stay on disk until [`Self::settle`].
    pub fn stage(&self, tenant_id: i64, vectors: TenantVectors) {
        let old = self
            .tenants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tenant_id, Arc::new(vectors));
        if let Some(old) = old {
            self.retiring
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(tenant_id, old);
        }
    }

    /// Decides a [`Self::stage`]: once the switch committed, the old
    /// generation's files are deleted; if it rolled back, the old files
    /// are the tenant's again and the staged ones are deleted.
    pub fn settle(&self, tenant_id: i64, committed: bool) {
        let old = self
            .retiring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&tenant_id);
        let keep = if committed {
            self.existing(tenant_id).map(|t| t.generation)
        } else {
            let mut map = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
            match old {
                Some(old) => {
                    let generation = old.generation;
                    map.insert(tenant_id, old);
                    Some(generation)
                }
                None => map.remove(&tenant_id).map(|_| -1),
            }
        };
        // A file left behind is deleted when the tenant is next opened.
        if let Some(keep) = keep {
            if let Err(e) = remove_other_generations(&self.dir, tenant_id, keep) {
                log::warn!("old vector files stay until the next start: {e}");
            }
        }
    }

    /// The tenant's files of `generation`: the current ones, or those a
    /// staged generation is replacing (a reader whose snapshot predates
    /// the switch).
    pub fn matching(&self, tenant_id: i64, generation: i64) -> Option<Arc<TenantVectors>> {
        let current = self.existing(tenant_id);
        if let Some(t) = current.filter(|t| t.generation == generation) {
            return Some(t);
        }
        self.retiring
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&tenant_id)
            .filter(|t| t.generation == generation)
            .cloned()
    }

    /// The tenant's files if they are open (every tenant with data is
    /// opened at start-up or on its first write).
    pub fn existing(&self, tenant_id: i64) -> Option<Arc<TenantVectors>> {
        self.tenants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&tenant_id)
            .cloned()
    }

    /// Checks the header of each tenant's current vector files against the
    /// configured embedder (called at start-up so a mismatch is loud at
    /// once).
    pub fn check_existing(&self, current: &[(i64, i64)]) -> Result<()> {
        for &(tenant_id, generation) in current {
            let path = file_path(&self.dir, tenant_id, generation, "q8");
            let Ok(mut f) = File::open(&path) else {
                continue;
            };
            // A file without a whole header was being created when the
            // process died: it holds no committed row (rows are synced
            // before the commit that names them, the header before any
            // row), and opening it writes the header anew.
            if f.metadata().map_or(true, |m| m.len() < HEADER_BYTES) {
                continue;
            }
            check_header(&mut f, &self.spec, &path)?;
        }
        Ok(())
    }

    /// How many whole rows the tenant's file at `generation` holds, with a
    /// header of this embedder: 0 when it is missing or of another embedder
    /// (a cache rebuilt from elsewhere replaces it; `cluster::vector_cache`).
    pub fn usable_rows(&self, tenant_id: i64, generation: i64) -> u64 {
        let path = file_path(&self.dir, tenant_id, generation, "q8");
        let rows = || -> Option<u64> {
            let mut f = File::open(&path).ok()?;
            let len = f.metadata().ok()?.len();
            if len < HEADER_BYTES || check_header(&mut f, &self.spec, &path).is_err() {
                return None;
            }
            Some((len - HEADER_BYTES) / q8_row(self.spec.dim) as u64)
        };
        rows().unwrap_or(0)
    }

    /// Every tenant whose files are open.
    fn open_tenants(&self) -> Vec<Arc<TenantVectors>> {
        self.tenants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Starts making the rows `tenant_id` has written so far durable on a
    /// helper thread (with full durability; a no-op otherwise). The writer
    /// calls it after each operation, for the operation's tenant, so the
    /// flush overlaps the rest of the batch instead of delaying its commit;
    /// [`VectorIndex::sync_dirty`] waits for it.
    pub fn start_sync(&self, tenant_id: i64) -> Result<()> {
        if self.durability != Durability::Full {
            return Ok(());
        }
        let Some(t) = self.existing(tenant_id) else {
            return Ok(());
        };
        if let Some(handle) = t.start_sync()? {
            self.syncing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(handle);
        }
        Ok(())
    }

    /// Makes every tenant's newly written rows durable (with full
    /// durability; a no-op otherwise): waits for the syncs started, then
    /// syncs whatever was written since. The writer calls it once per batch,
    /// before the commit that references the rows: one flush per file per
    /// batch, however many documents the batch holds.
    pub fn sync_dirty(&self) -> Result<()> {
        if self.durability != Durability::Full {
            return Ok(());
        }
        let started = std::mem::take(&mut *self.syncing.lock().unwrap_or_else(|p| p.into_inner()));
        let mut outcome = Ok(());
        for handle in started {
            let synced = handle
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("vector file sync panicked")));
            outcome = outcome.and(synced);
        }
        outcome?;
        for t in self.open_tenants() {
            t.sync()?;
        }
        Ok(())
    }
}

impl TenantVectors {
    fn open(
        dir: &Path,
        tenant_id: i64,
        spec: &VectorSpec,
        committed: u64,
        generation: i64,
    ) -> Result<TenantVectors> {
        let legacy = file_path(dir, tenant_id, generation, LEGACY_EXACT);
        match std::fs::remove_file(&legacy) {
            Ok(()) => log::info!(
                "removed exact vector copies no longer kept: {}",
                legacy.file_name().unwrap_or_default().to_string_lossy()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let path = file_path(dir, tenant_id, generation, "q8");
        TenantVectors::open_at(&path, spec, committed, generation)
    }

    /// Opens the file at `q8_path` as `generation`, `committed` rows valid.
    fn open_at(
        q8_path: &Path,
        spec: &VectorSpec,
        committed: u64,
        generation: i64,
    ) -> Result<TenantVectors> {
        let q8 = open_file(q8_path, spec, DTYPE_Q8)?;
        let q8_row = q8_row(spec.dim);
        let present = q8.metadata()?.len().saturating_sub(HEADER_BYTES) / q8_row as u64;
        if present < committed {
            // Only possible if the file lost data SQLite kept (an OS crash
            // with relaxed durability, or tampering): refuse rather than
            // return wrong neighbours. (Loss inside the preallocated tail of
            // a file cannot be seen this way; full durability prevents it.)
            return Err(Error::Unavailable(format!(
                "the vector file holds {present} rows but the store committed {committed}; run \
                 `alayasiki-mcp reindex` to rebuild them"
            )));
        }
        let t = TenantVectors {
            spec: spec.clone(),
            generation,
            q8_row,
            files: Mutex::new(Files {
                q8,
                written: committed,
                capacity: committed,
                dirty: false,
            }),
            snapshot: RwLock::new(Snapshot {
                q8: None,
                rows: committed,
            }),
            signs: Arc::default(),
        };
        {
            // Rows past the committed count were never acknowledged: drop
            // them, then map what is left.
            let files = t.files.lock().unwrap_or_else(|p| p.into_inner());
            files.q8.set_len(HEADER_BYTES + committed * q8_row as u64)?;
            t.remap(&files, committed)?;
        }
        Ok(t)
    }

    pub fn dim(&self) -> usize {
        self.spec.dim
    }

    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// The vector of a published slot as stored (each int8 value times
    /// the row's scale), for compaction and copies: appended again, it is
    /// quantized to the same row.
    pub fn stored(&self, slot: u64) -> Option<Vec<f32>> {
        let snap = self.snapshot();
        if slot >= snap.rows {
            return None;
        }
        let map = snap.q8?;
        let dim = self.spec.dim;
        let start = HEADER_BYTES as usize + slot as usize * self.q8_row;
        let (values, scale) = kernel::row_parts(&map[start..start + self.q8_row], dim);
        Some(values.iter().map(|&q| f32::from(q) * scale).collect())
    }

    /// Flushes and makes all written rows visible (compact and reindex
    /// fill a fresh generation this way before switching to it).
    pub fn seal(&self) -> Result<u64> {
        self.sync()?;
        let rows = self.files.lock().unwrap_or_else(|p| p.into_inner()).written;
        self.publish(rows)?;
        Ok(rows)
    }

    /// Rows written, committed or not: the slot the next append takes.
    pub fn written_rows(&self) -> u64 {
        self.files.lock().unwrap_or_else(|p| p.into_inner()).written
    }

    /// Rows readers can see.
    pub fn committed_rows(&self) -> u64 {
        self.snapshot.read().unwrap_or_else(|p| p.into_inner()).rows
    }

    /// The published rows and the map they are read through, as of now: a
    /// reader works on this copy while writers publish more.
    fn snapshot(&self) -> Snapshot {
        self.snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Writes rows after all rows written so far, returning the first
    /// slot. Not visible to readers until [`Self::publish`]; not durable
    /// until [`VectorIndex::sync_dirty`] (which the writer calls before
    /// committing). Writer thread only.
    pub fn append(&self, vectors: &[Vec<f32>]) -> Result<u64> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let first = files.written;
        let n = vectors.len() as u64;
        if first + n > files.capacity {
            let capacity = next_capacity(files.capacity, first + n);
            files
                .q8
                .set_len(HEADER_BYTES + capacity * self.q8_row as u64)?;
            files.capacity = capacity;
        }
        let mut q8_buf = vec![0u8; self.q8_row * vectors.len()];
        let mut q = vec![0i8; self.spec.dim];
        for (i, v) in vectors.iter().enumerate() {
            if v.len() != self.spec.dim {
                return Err(Error::internal(format!(
                    "vector of dimension {} for a store of dimension {}",
                    v.len(),
                    self.spec.dim
                )));
            }
            let scale = quantize(v, &mut q);
            let row = &mut q8_buf[i * self.q8_row..(i + 1) * self.q8_row];
            for (dst, src) in row.iter_mut().zip(&q) {
                *dst = *src as u8;
            }
            row[self.spec.dim..self.spec.dim + 4].copy_from_slice(&scale.to_le_bytes());
        }
        write_all_at(
            &files.q8,
            &q8_buf,
            HEADER_BYTES + first * self.q8_row as u64,
        )?;
        files.written = first + n;
        files.dirty = true;
        Ok(first)
    }

    /// Flushes written rows to disk if any were written since the last
    /// flush.
    fn sync(&self) -> Result<()> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if files.dirty {
            files.q8.sync_data()?;
            files.dirty = false;
        }
        Ok(())
    }

    /// Starts syncing the rows written so far on a new thread, if any were
    /// written since the last sync. Rows written after this call are left
    /// dirty for the next sync.
    fn start_sync(&self) -> Result<Option<JoinHandle<std::io::Result<()>>>> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if !files.dirty {
            return Ok(None);
        }
        let q8 = files.q8.try_clone()?;
        let handle = std::thread::Builder::new()
            .name("vector-sync".into())
            .spawn(move || q8.sync_data())?;
        files.dirty = false;
        Ok(Some(handle))
    }

    /// Makes rows `[0, rows)` visible (after the transaction naming them
    /// committed). Writer thread only.
    pub fn publish(&self, rows: u64) -> Result<()> {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        self.remap(&files, rows)
    }

    /// Forgets rows written after `rows` (their transaction rolled back).
    pub fn rollback(&self, rows: u64) {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.written = files.written.min(rows);
    }

    /// Overwrites a slot with zeros (its chunk was deleted).
    pub fn zero(&self, slot: u64) -> Result<()> {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if slot < files.written {
            write_all_at(
                &files.q8,
                &vec![0u8; self.q8_row],
                HEADER_BYTES + slot * self.q8_row as u64,
            )?;
        }
        Ok(())
    }

    fn remap(&self, files: &Files, rows: u64) -> Result<()> {
        let mut snap = self.snapshot.write().unwrap_or_else(|p| p.into_inner());
        let needed_q8 = HEADER_BYTES + rows * self.q8_row as u64;
        let stale = snap
            .q8
            .as_ref()
            .is_none_or(|m| (m.len() as u64) < needed_q8);
        if stale && rows > 0 {
            // SAFETY: the files are private to this process (the data
            // directory's owner lock guarantees it) and are only ever
            // appended to or zeroed slot by slot; bytes of committed rows are
            // never truncated while mapped, and readers only read rows below
            // the published count, which the writer flushed before
            // publishing. A torn read of a concurrently zeroed slot can only
            // yield a wrong score for a deleted chunk, which the SQL lookup
            // then drops.
            let q8 = unsafe { Mmap::map(&files.q8)? };
            snap.q8 = Some(Arc::new(q8));
        }
        snap.rows = rows;
        Ok(())
    }
}

/// Bytes of one row of a q8 file: `dim` int8 values and an f32 scale,
/// padded to 16.
fn q8_row(dim: usize) -> usize {
    (dim + 4).next_multiple_of(16)
}

/// The capacity a file grows to from `capacity` rows to hold `needed`:
/// double, but at least [`MIN_CAPACITY_ROWS`] and at most [`GROWTH_ROWS`]
/// more, then up to `needed` in whole steps of [`MIN_CAPACITY_ROWS`].
fn next_capacity(capacity: u64, needed: u64) -> u64 {
    let doubled = capacity
        .saturating_mul(2)
        .clamp(MIN_CAPACITY_ROWS, capacity.saturating_add(GROWTH_ROWS));
    doubled.max(needed).next_multiple_of(MIN_CAPACITY_ROWS)
}

#[cfg(test)]
mod tests;
