//! Tenant-bound handles: the only way to reach tenant data.
//!
//! [`TenantReader`] and [`TenantWriter`] each carry the tenant they were
//! opened for, and every SQL statement in the store's data modules
//! (`documents`, `chunks`, `journal`, ...) is a method on one of them that
//! binds that tenant itself. The raw connection never leaves this module
//! tree, so code above the store cannot run SQL without a tenant: the type
//! system, not discipline, keeps tenants apart.

use rusqlite::{params, Connection};
use std::ops::Deref;

use super::ReaderPool;

/// A tenant name that passed validation (non-blank, bounded, no control
/// characters). Constructed only by identity resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tenant(String);

impl Tenant {
    pub fn new(name: &str) -> Result<Tenant, String> {
        crate::config::validate_identity(name)?;
        Ok(Tenant(name.to_string()))
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

/// A pooled read connection, returned to the pool on drop.
pub(super) struct PooledConn<'s> {
    conn: Option<Connection>,
    pool: &'s ReaderPool,
    /// Its sight tables hold a limited sight, to empty before reuse.
    sighted: bool,
}

impl<'s> PooledConn<'s> {
    pub(super) fn new(conn: Connection, pool: &'s ReaderPool) -> Self {
        PooledConn {
            conn: Some(conn),
            pool,
            sighted: false,
        }
    }

    /// Limits what statements on this connection see to `sight` (see
    /// `sharing`), until it goes back to the pool.
    pub(super) fn see(&mut self, sight: &super::sharing::Sight) -> rusqlite::Result<()> {
        if sight.is_limited() {
            self.sighted = true;
            super::sharing::install(self, sight)?;
        }
        Ok(())
    }
}

impl Deref for PooledConn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("connection present until drop")
    }
}

impl Drop for PooledConn<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            // A connection whose sight cannot be emptied is closed rather
            // than handed to the next caller with it.
            if self.sighted {
                if let Err(e) = super::sharing::clear(&conn) {
                    log::warn!("closing a read connection whose sight could not be cleared: {e}");
                    return;
                }
            }
            self.pool.put_back(conn);
        }
    }
}

/// Read access to one tenant's data.
pub struct TenantReader<'s> {
    pub(super) conn: PooledConn<'s>,
    /// `None` when the tenant has never written: every read is empty.
    pub(super) tenant_id: Option<i64>,
    /// Every tenant's vector files (a search takes the files of the
    /// generation its snapshot names).
    pub(super) vectors: &'s super::vectors::VectorIndex,
    /// Which documents reads may see (retention).
    pub(super) visible: Visibility,
    /// Whether the connection holds a limited sight (see `sharing`).
    pub(super) limited: bool,
    /// The entity-resolution policy name lookups run.
    pub(super) resolver: &'static dyn crate::knowledge::resolution::NamePolicy,
    /// The admission catalogs broad recall filters read (see `admission`).
    pub(super) catalogs: &'s super::admission::Catalogs,
}

/// The retention window reads apply: a document is visible unless it
/// expired (`expires_at <= now`) or was created before `since` (the
/// tenant's retention period). Every read that returns document content
/// filters with [`VISIBLE`], binding `now` as `?8` and `since` as `?9`.
#[derive(Debug, Clone, Copy)]
pub struct Visibility {
    pub now: i64,
    pub since: i64,
}

/// The memory-scope condition on a document aliased `d` (see `sharing`):
/// true for every document when the handle's sight tables are empty (the
/// whole tenant), else for those its subject (if any) wrote and those in
/// one of its scopes. Binds no parameters.
macro_rules! seen_condition {
    () => {
        "(NOT EXISTS (SELECT 1 FROM temp.sight)
          OR d.created_by IN (SELECT subject FROM temp.sight WHERE subject IS NOT NULL)
          OR EXISTS (SELECT 1 FROM temp.sight_scopes s CROSS JOIN document_scopes g
                      WHERE g.tenant_id = d.tenant_id AND g.scope = s.scope
                        AND g.document_id = d.id))"
    };
}

/// What a handle's sight admits, alone (see [`seen_condition`]).
pub(super) const SEEN: &str = seen_condition!();

/// The SQL condition on a document aliased `d` (parameters `?8`, `?9`):
/// retention, then the handle's sight.
pub(super) const VISIBLE: &str = concat!(
    "(d.expires_at IS NULL OR d.expires_at > ?8) AND d.created_at >= ?9 AND ",
    seen_condition!()
);

/// Write access to one tenant's data, inside the writer's transaction.
pub struct TenantWriter<'c> {
    pub(super) conn: super::write_log::WriteConn<'c>,
    pub(super) tenant_id: i64,
    pub(super) vectors: &'c std::sync::Arc<super::vectors::VectorIndex>,
    /// What the writer wrote to the tenants' name indexes, for trusting
    /// names resolved ahead of it.
    pub(super) names: &'c mut super::name_hints::NameLog,
    /// The entity-resolution policy name lookups and the term index run.
    pub(super) resolver: &'static dyn crate::knowledge::resolution::NamePolicy,
    pub(super) hooks: Vec<super::writer::CommitHook>,
    /// The next id [`TenantWriter::new_id`] (or, for entities and
    /// relations, `new_graph_key`) hands out, per table, in this operation.
    pub(super) ids: std::cell::RefCell<Vec<(&'static str, i64)>>,
}

impl TenantWriter<'_> {
    /// Registers work to do once this write's transaction is decided:
    /// `true` after it committed, `false` if it (or this operation) rolled
    /// back. For state outside SQLite that must follow the transaction.
    pub(super) fn on_commit(&mut self, hook: impl FnOnce(bool) + Send + 'static) {
        self.hooks.push(Box::new(hook));
    }

    /// Runs a statement through the connection's statement cache (the
    /// writer runs the same few statements thousands of times).
    pub(super) fn exec<P: rusqlite::Params + super::write_log::Bind>(
        &self,
        sql: &str,
        params: P,
    ) -> rusqlite::Result<usize> {
        self.conn.prepare_cached(sql)?.execute(params)
    }

    /// The name of the per-tenant full-text table.
    pub(super) fn fts_table(&self) -> String {
        fts_table(self.tenant_id)
    }

    /// The id of a new row of `table`, to bind into its insert (see
    /// `WriteConn::next_id`): one past the largest the first time, then
    /// counting on. Within one operation nothing but this writer adds rows,
    /// so the table is sought once per operation, not once per row.
    pub(super) fn new_id(&self, table: &'static str) -> rusqlite::Result<i64> {
        let mut ids = self.ids.borrow_mut();
        if let Some((_, next)) = ids.iter_mut().find(|(t, _)| *t == table) {
            *next += 1;
            return Ok(*next - 1);
        }
        let id = self.conn.next_id(table)?;
        ids.push((table, id + 1));
        Ok(id)
    }

    /// A count this tenant's row keeps (`chunk_count`, `graph_version`).
    pub(super) fn tenant_count(&self, column: TenantCount) -> rusqlite::Result<i64> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {} FROM tenants WHERE id = ?1",
                column.name()
            ))?
            .query_row([self.tenant_id], |r| r.get(0))
    }

    /// Moves a count this tenant's row keeps by `by`. The statement binds
    /// the new value rather than adding to the stored one, so run a second
    /// time (a replica applying a write again) it leaves what it left once.
    pub(super) fn add_to_tenant_count(&self, column: TenantCount, by: i64) -> rusqlite::Result<()> {
        let value = self.tenant_count(column)? + by;
        self.exec(
            &format!("UPDATE tenants SET {} = ?2 WHERE id = ?1", column.name()),
            params![self.tenant_id, value],
        )?;
        Ok(())
    }
}

/// The counts a tenant's row keeps that writes move.
#[derive(Clone, Copy)]
pub(super) enum TenantCount {
    /// Chunks indexed (the query planner reads it on every query).
    Chunks,
    /// Bumped by every change to the graph; snapshots and name hints are
    /// dated by it.
    GraphVersion,
}

impl TenantCount {
    fn name(self) -> &'static str {
        match self {
            TenantCount::Chunks => "chunk_count",
            TenantCount::GraphVersion => "graph_version",
        }
    }
}

impl TenantReader<'_> {
    /// Whether the tenant has ever written to this store (a tenant that
    /// has not reads as empty).
    pub fn exists(&self) -> bool {
        self.tenant_id.is_some()
    }

    pub(super) fn fts_table(&self) -> Option<String> {
        self.tenant_id.map(fts_table)
    }

    /// Runs `f` in one read snapshot: a read transaction of its own,
    /// unless the connection is already in one.
    pub(super) fn in_snapshot<T>(
        &self,
        f: impl FnOnce() -> crate::error::Result<T>,
    ) -> crate::error::Result<T> {
        let own = self.conn.is_autocommit();
        if own {
            self.conn.execute_batch("BEGIN")?;
        }
        let out = f();
        if own {
            if let Err(e) = self.conn.execute_batch("COMMIT") {
                log::debug!("ending a read transaction: {e}");
            }
        }
        out
    }
}

/// `fts_<id>`: the id is an integer the store assigned, never user text.
pub(super) fn fts_table(tenant_id: i64) -> String {
    format!("fts_{tenant_id}")
}

/// FTS5 `automerge`: how many index segments of one size accumulate before
/// they are merged. Every group commit writes a segment and the default (4)
/// spent about a tenth of the writer's time merging; 8 measured +16% ingest
/// throughput (median of 3 runs at 20k documents) with no change in query
/// latency.
pub const FTS_AUTOMERGE: u32 = 8;

/// BM25 weight of the `context` column relative to the chunk's own text.
pub const CONTEXT_BM25_WEIGHT: f64 = 0.3;

/// DDL for a new tenant's full-text index: the chunk's text and its context
/// (see `NewChunk::context`), ranked with [`CONTEXT_BM25_WEIGHT`]. Porter
/// stemming over unicode61 with diacritics removed: measured on LoCoMo,
/// stemming plus stopword removal is the strongest plain keyword baseline.
pub(super) fn create_tenant_tables(
    conn: super::write_log::WriteConn<'_>,
    tenant_id: i64,
) -> rusqlite::Result<()> {
    let t = fts_table(tenant_id);
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING fts5(
             text, context, content='', contentless_delete=1,
             tokenize='porter unicode61 remove_diacritics 2');
         INSERT INTO {t}({t}, rank) VALUES ('rank', 'bm25(1.0, {CONTEXT_BM25_WEIGHT})');
         INSERT INTO {t}({t}, rank) VALUES ('automerge', {FTS_AUTOMERGE});"
    ))
}
