//! Admission without B-tree descents: per-tenant in-memory catalogs that
//! answer "does this filter admit this candidate?" for a lane under a
//! broad filter (one the scope checks candidate by candidate rather than
//! listing up front; see `scope`).
//!
//! - [`changes`]: the rows the writer changed, published after each commit.
//! - [`catalog`]: one tenant's catalog, read from a snapshot and caught up
//!   from the published rows.
//!
//! A catalog is built on its tenant's first filtered query, never at
//! start, and caught up at the start of each filtered query from what the
//! writer published since; read-your-writes holds as for SQL (see
//! `changes`). All catalogs together are bounded by
//! [`crate::limits::MAX_ADMISSION_CATALOG_BYTES`]: past it the least
//! recently used are dropped, and a tenant whose catalog alone is larger
//! is served the SQL way until it shrinks by a quarter.

pub mod catalog;
pub mod changes;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use rusqlite::Connection;

use catalog::Catalog;
use changes::{CatchUp, ChangeFeed};

/// A tenant's catalog, shared by the queries reading it.
pub type SharedCatalog = Arc<RwLock<Option<Catalog>>>;

/// Every tenant's catalog, and the feed that keeps them current.
pub struct Catalogs {
    feed: Arc<ChangeFeed>,
    /// Bytes all catalogs may take together.
    budget: usize,
    tenants: Mutex<Tenants>,
}

#[derive(Default)]
struct Tenants {
    entries: HashMap<i64, Entry>,
    /// Ticks of use, for the least recently used.
    clock: u64,
}

#[derive(Default)]
struct Entry {
    catalog: SharedCatalog,
    /// Its memory when last caught up.
    bytes: usize,
    last_used: u64,
    /// The tenant's chunk count when its catalog was found larger than
    /// the budget: not tried again until it holds a quarter fewer.
    refused_at: Option<i64>,
}

impl Catalogs {
    /// Catalogs taking at most `budget` bytes together (0: none is kept).
    pub fn new(budget: usize) -> Catalogs {
        Catalogs {
            feed: Arc::default(),
            budget,
            tenants: Mutex::default(),
        }
    }

    /// Installs the hooks that feed the catalogs on the writer's
    /// connection: the update hook notes changed rows; `after_commit`
    /// (the caller's WAL hook calls it) publishes them.
    pub fn watch(
        &self,
        writer: &mut Connection,
    ) -> rusqlite::Result<impl FnMut() + Send + 'static> {
        let feed = self.feed.clone();
        writer.update_hook(Some(
            move |_: rusqlite::hooks::Action, _: &str, table: &str, rowid: i64| {
                feed.note(table, rowid)
            },
        ))?;
        let feed = self.feed.clone();
        Ok(move || feed.publish())
    }

    /// The epoch a query loads before its snapshot begins (see
    /// [`Catalogs::for_query`]).
    pub fn epoch(&self) -> u64 {
        self.feed.epoch()
    }

    /// Tenant `tenant_id`'s catalog, built or caught up in `conn`'s
    /// snapshot, which began after [`Catalogs::epoch`] returned `epoch`;
    /// `None` when the tenant is served the SQL way (over the budget).
    pub fn for_query(
        &self,
        conn: &Connection,
        tenant_id: i64,
        epoch: u64,
    ) -> rusqlite::Result<Option<SharedCatalog>> {
        if self.budget == 0 {
            return Ok(None);
        }
        let shared = {
            let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
            tenants.clock += 1;
            let clock = tenants.clock;
            let entry = tenants.entries.entry(tenant_id).or_default();
            entry.last_used = clock;
            if let Some(refused) = entry.refused_at {
                let chunks = chunk_count(conn, tenant_id)?;
                if chunks * 4 > refused * 3 {
                    return Ok(None);
                }
                entry.refused_at = None;
            }
            entry.catalog.clone()
        };
        let generation: i64 = conn
            .prepare_cached("SELECT vector_generation FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| r.get(0))?;
        let current = |c: &Option<Catalog>| {
            c.as_ref()
                .is_some_and(|c| c.applied >= epoch && c.generation == generation)
        };
        if current(&shared.read().unwrap_or_else(|p| p.into_inner())) {
            return Ok(Some(shared));
        }
        let bytes = {
            let mut slot = shared.write().unwrap_or_else(|p| p.into_inner());
            if !current(&slot) {
                let started = Instant::now();
                let caught_up = match slot.as_mut() {
                    Some(c) if c.generation == generation && c.applied < epoch => {
                        match self.feed.since(c.applied, epoch) {
                            CatchUp::Rows(rows) => c.catch_up(conn, &rows, epoch)?,
                            CatchUp::Rebuild => false,
                        }
                    }
                    Some(c) => c.applied >= epoch && c.generation == generation,
                    None => false,
                };
                if !caught_up {
                    *slot = None;
                    *slot = Catalog::build(conn, tenant_id, epoch, generation, self.budget)?;
                    match slot.as_ref() {
                        Some(c) => log::info!(
                            "admission catalog of tenant {tenant_id}: {} documents, {} chunks, \
                             {} KiB, read in {} ms",
                            c.documents(),
                            c.chunk_count(),
                            c.memory() / 1024,
                            started.elapsed().as_millis()
                        ),
                        None => log::info!(
                            "admission catalog of tenant {tenant_id}: over its budget of {} \
                             bytes, filters are checked in SQL",
                            self.budget
                        ),
                    }
                }
            }
            slot.as_ref().map(Catalog::memory)
        };
        let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = tenants
            .entries
            .get_mut(&tenant_id)
            .filter(|e| Arc::ptr_eq(&e.catalog, &shared))
        else {
            // Dropped to make room for another meanwhile: this query still
            // reads the copy it holds.
            return Ok(bytes.is_some().then_some(shared));
        };
        let Some(bytes) = bytes.filter(|&b| b <= self.budget) else {
            entry.refused_at = Some(chunk_count(conn, tenant_id)?.max(1));
            entry.bytes = 0;
            entry.catalog = SharedCatalog::default();
            return Ok(None);
        };
        entry.bytes = bytes;
        tenants.make_room(self.budget, tenant_id);
        Ok(Some(shared))
    }
}

impl Tenants {
    /// Drops the least recently used catalogs other than `keep`'s until
    /// all fit `budget` (`keep`'s alone does). A query reading one keeps
    /// its copy until it ends.
    fn make_room(&mut self, budget: usize, keep: i64) {
        loop {
            let total: usize = self.entries.values().map(|e| e.bytes).sum();
            if total <= budget {
                return;
            }
            let victim = self
                .entries
                .iter_mut()
                .filter(|(id, e)| **id != keep && e.bytes > 0)
                .min_by_key(|(_, e)| e.last_used);
            let Some((_, entry)) = victim else {
                return;
            };
            entry.catalog = SharedCatalog::default();
            entry.bytes = 0;
        }
    }
}

fn chunk_count(conn: &Connection, tenant_id: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT chunk_count FROM tenants WHERE id = ?1")?
        .query_row([tenant_id], |r| r.get(0))
}

#[cfg(test)]
mod tests;
