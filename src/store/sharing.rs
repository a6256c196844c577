//! Memory scopes: the parts of a tenant's memory (a team, a project) a
//! caller may be limited to, and sharing documents between them.
//!
//! A document belongs to each scope it was stored or shared into (the
//! `document_scopes` table): a grant, never a copy. A caller's [`Sight`]
//! says what it sees: the whole tenant, or the documents of some scopes
//! plus those it wrote itself. Like the tenant, the sight is bound to the
//! read handle ([`super::Store::reader_seeing`]) and applied by the SQL of
//! every read that returns document content: the handle's connection holds
//! the sight in two temporary tables, and the condition every such read
//! already applies for retention (`tenant::VISIBLE`) tests them. Code above
//! the store cannot read past a sight it was given.
//!
//! The name "scope" is taken twice elsewhere: OAuth permission scopes
//! (`Principal::scopes`) and a recall's filter (`store::scope::Scope`).
//! These are *memory* scopes.

use rusqlite::{params, Connection, OptionalExtension};

use super::tenant::{TenantReader, TenantWriter, SEEN};
use crate::error::Result;
use crate::limits::MAX_MEMORY_SCOPE_NAME_BYTES;

/// A memory scope's name: 1 to [`MAX_MEMORY_SCOPE_NAME_BYTES`] bytes of
/// `[a-z0-9._-]`, starting with a letter or digit (so it can never be
/// confused with the `:read` suffix of a grant, or need escaping anywhere).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryScope(String);

impl MemoryScope {
    pub fn new(name: &str) -> std::result::Result<MemoryScope, String> {
        let valid_first = name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let valid_rest = name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        });
        if !valid_first || !valid_rest || name.len() > MAX_MEMORY_SCOPE_NAME_BYTES {
            return Err(format!(
                "memory scope names are 1 to {MAX_MEMORY_SCOPE_NAME_BYTES} characters of a-z, \
                 0-9, '.', '_' and '-', starting with a letter or digit"
            ));
        }
        Ok(MemoryScope(name.to_string()))
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which documents of a tenant a read handle sees (before retention,
/// which applies to every sight).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sight {
    /// Every document: unrestricted callers and the engine's own reads.
    Whole,
    /// The documents in any of `scopes`, and those `subject` wrote (none
    /// for a caller that can write nothing of its own: the anonymous one).
    Limited {
        subject: Option<String>,
        scopes: Vec<MemoryScope>,
    },
}

impl Sight {
    pub fn is_limited(&self) -> bool {
        matches!(self, Sight::Limited { .. })
    }
}

/// Creates the (empty: the whole tenant) sight tables on a new read
/// connection. Temporary tables live with the connection and are never
/// part of the database file.
pub(super) fn prepare_connection(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS sight (subject TEXT);
         CREATE TEMP TABLE IF NOT EXISTS sight_scopes (scope TEXT PRIMARY KEY) WITHOUT ROWID;",
    )
}

/// Puts `sight` into a read connection's sight tables (a read connection
/// is `query_only`, which guards the temporary tables too, so it is lifted
/// for the two statements). A limited sight always has its one row in
/// `sight`, its subject NULL when it has none: the row is what limits.
pub(super) fn install(conn: &Connection, sight: &Sight) -> rusqlite::Result<()> {
    let Sight::Limited { subject, scopes } = sight else {
        return Ok(());
    };
    conn.execute_batch("PRAGMA query_only=OFF")?;
    let filled = (|| {
        conn.execute("INSERT INTO temp.sight(subject) VALUES (?1)", [subject])?;
        let mut stmt =
            conn.prepare_cached("INSERT OR IGNORE INTO temp.sight_scopes(scope) VALUES (?1)")?;
        for s in scopes {
            stmt.execute([s.name()])?;
        }
        Ok(())
    })();
    conn.execute_batch("PRAGMA query_only=ON")?;
    filled
}

/// Empties a read connection's sight tables, before it goes back to the
/// pool.
pub(super) fn clear(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "PRAGMA query_only=OFF; DELETE FROM temp.sight; DELETE FROM temp.sight_scopes;
         PRAGMA query_only=ON;",
    )
}

/// What a sight admits of a document aliased `d`, for the writer's
/// connection (which has no sight tables): `?4` is the subject (NULL when
/// there is none), `?5` the scope names as a JSON array (NULL for the whole
/// tenant; see [`sight_params`]).
pub(super) const ADMITTED: &str = "(?5 IS NULL OR d.created_by IS ?4
     OR EXISTS (SELECT 1 FROM document_scopes g
                 WHERE g.tenant_id = d.tenant_id AND g.document_id = d.id
                   AND g.scope IN (SELECT value FROM json_each(?5))))";

/// The parameters of [`ADMITTED`] for `sight`.
pub(super) fn sight_params(sight: &Sight) -> (Option<String>, Option<String>) {
    match sight {
        Sight::Whole => (None, None),
        Sight::Limited { subject, scopes } => {
            let names: Vec<&str> = scopes.iter().map(MemoryScope::name).collect();
            (
                subject.clone(),
                Some(serde_json::to_string(&names).unwrap_or_else(|_| "[]".into())),
            )
        }
    }
}

/// One grant of a document into a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeGrant {
    pub scope: String,
    pub granted_by: String,
    pub granted_at: i64,
}

impl TenantWriter<'_> {
    /// Grants document `document_key` into `scope`, recording who and
    /// when; `false` when it was there already (the first grant's record
    /// stays).
    pub fn grant_scope(
        &self,
        document_key: i64,
        scope: &MemoryScope,
        by: &str,
        at: i64,
    ) -> Result<bool> {
        Ok(self.exec(
            "INSERT INTO document_scopes(tenant_id, scope, document_id, granted_by, granted_at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            params![self.tenant_id, scope.name(), document_key, by, at],
        )? > 0)
    }

    /// Whether `sight` admits document `document_key`.
    pub(super) fn admits(&self, sight: &Sight, document_key: i64) -> Result<bool> {
        if !sight.is_limited() {
            return Ok(true);
        }
        let (subject, scopes) = sight_params(sight);
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT EXISTS (SELECT 1 FROM documents d WHERE d.tenant_id = ?1 AND d.id = ?2
                                   AND ?3 IS NOT NULL AND {ADMITTED})"
            ))?
            .query_row(
                params![self.tenant_id, document_key, 0, subject, scopes],
                |r| r.get(0),
            )?)
    }

    /// The store key of document `doc_id`, if this tenant has it.
    pub fn document_key(&self, doc_id: &str) -> Result<Option<i64>> {
        Ok(self
            .conn
            .prepare_cached("SELECT id FROM documents WHERE tenant_id = ?1 AND doc_id = ?2")?
            .query_row(params![self.tenant_id, doc_id], |r| r.get(0))
            .optional()?)
    }
}

impl TenantReader<'_> {
    /// Whether this handle sees only part of the tenant.
    pub fn is_limited(&self) -> bool {
        self.limited
    }

    /// The scopes document `doc_id` belongs to, by name, if this handle
    /// sees the document.
    pub fn document_scopes(&self, doc_id: &str) -> Result<Vec<ScopeGrant>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT g.scope, g.granted_by, g.granted_at
               FROM documents d JOIN document_scopes g
                    ON g.tenant_id = d.tenant_id AND g.document_id = d.id
              WHERE d.tenant_id = ?1 AND d.doc_id = ?2 AND {SEEN}
              ORDER BY g.scope"
        ))?;
        let rows = stmt.query_map(params![tenant_id, doc_id], |r| {
            Ok(ScopeGrant {
                scope: r.get(0)?,
                granted_by: r.get(1)?,
                granted_at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The documents and chunks this handle sees (for a limited sight: the
    /// tenant's own counts are kept whole).
    pub fn seen_counts(&self) -> Result<(i64, i64)> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok((0, 0));
        };
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*), coalesce(sum((SELECT count(*) FROM chunks c
                                                WHERE c.document_id = d.id)), 0)
                   FROM documents d WHERE d.tenant_id = ?1 AND {SEEN}"
            ))?
            .query_row([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    /// Whether this handle sees every document that mentions one of
    /// `entities` or gives evidence of a relation touching one: what a
    /// community summary over them may quote. Always true for the whole
    /// tenant.
    pub(super) fn sees_all_about(&self, entities: &[i64]) -> Result<bool> {
        if !self.limited {
            return Ok(true);
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM mentions m JOIN chunks c ON c.id = m.chunk_id
                                     JOIN documents d ON d.id = c.document_id
                             WHERE m.entity_id = ?1 AND NOT {SEEN})
                 OR EXISTS (SELECT 1 FROM relations r JOIN relation_evidence ev ON ev.relation_id = r.id
                                     JOIN documents d ON d.id = ev.document_id
                             WHERE (r.subject_id = ?1 OR r.object_id = ?1) AND NOT {SEEN})"
        ))?;
        for id in entities {
            let hidden: bool = stmt.query_row([id], |r| r.get(0))?;
            if hidden {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether this handle sees the documents of every chunk in
    /// `chunk_keys`.
    pub(super) fn sees_chunks(&self, chunk_keys: &[i64]) -> Result<bool> {
        if !self.limited {
            return Ok(true);
        }
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id
                             WHERE c.id = ?1 AND NOT {SEEN})"
        ))?;
        for key in chunk_keys {
            let hidden: bool = stmt.query_row([key], |r| r.get(0))?;
            if hidden {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
