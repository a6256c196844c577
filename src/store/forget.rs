//! Forgetting: deleting a document and everything derived from it.
//!
//! [`TenantWriter::forget_document`] is the one place that knows what a
//! document left behind, so every way of forgetting (the MCP tool, the HTTP
//! API, the CLI) removes the same things in one transaction:
//!
//! - its chunks and their full-text rows (the FTS5 table is contentless
//!   with `contentless_delete`, so rows are deleted by rowid), with the
//!   tenant's chunk counter;
//! - its vectors: the slots are freed with the chunk rows and overwritten
//!   with zeros once the transaction commits (`compact` later drops them
//!   from the files);
//! - its jobs and idempotency records, and its original bytes unless
//!   another document of the tenant has the same bytes;
//! - the neighbour context it lent the next document from the same source
//!   (that document's first chunk is re-indexed and queued for a new
//!   vector), so its words do not live on in another document's index;
//! - knowledge-graph contributions (`TenantWriter::forget_graph`);
//! - its place in a chain of versions: the versions it replaced lead to
//!   its successor (forgetting a document through any of the ways above
//!   forgets every version, `TenantWriter::forget_versions`).
//!
//! An audit row records who forgot which document and when, with sizes but
//! no content. Deletions run with SQLite's `secure_delete` on, so freed
//! pages are overwritten rather than left readable in the file (the
//! store's writer keeps it on for every write, `store::db`, so the old
//! copies of rows updated before are gone too; the guard here holds it
//! on whatever connection forgets).

use rusqlite::{params, Connection, OptionalExtension};

use super::chunks::{chunk_text, chunk_text_beside};
use super::journal::JobKind;
use super::tenant::{TenantCount, TenantWriter};
use super::write_log::VECTOR_CLEAR;
use crate::error::Result;

/// Which documents to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentSelector {
    /// One document by its external id.
    Id(String),
    /// The document stored under this idempotency key.
    IdempotencyKey(String),
    /// Every document whose `source` is exactly this.
    Source(String),
}

impl DocumentSelector {
    /// How the selection was made, for the audit trail (never the value,
    /// which may itself be sensitive).
    pub fn kind(&self) -> &'static str {
        match self {
            DocumentSelector::Id(_) => "document_id",
            DocumentSelector::IdempotencyKey(_) => "idempotency_key",
            DocumentSelector::Source(_) => "source",
        }
    }
}

/// What forgetting one document removed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Forgotten {
    pub document_id: String,
    pub chunks: usize,
    pub vectors: usize,
    /// False when another document of the tenant still holds the same bytes.
    pub original_deleted: bool,
}

/// Turns `secure_delete` on for the lifetime of the guard and restores the
/// previous setting after, even if the deletion fails half-way (the
/// savepoint then rolls back whatever it did).
pub(super) struct SecureDelete<'c> {
    conn: &'c Connection,
    previous: i64,
}

impl<'c> SecureDelete<'c> {
    pub(super) fn on(conn: &'c Connection) -> rusqlite::Result<SecureDelete<'c>> {
        let previous = conn.query_row("PRAGMA secure_delete", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA secure_delete = 1")?;
        Ok(SecureDelete { conn, previous })
    }
}

impl Drop for SecureDelete<'_> {
    fn drop(&mut self) {
        let restore = format!("PRAGMA secure_delete = {}", self.previous);
        if let Err(e) = self.conn.execute_batch(&restore) {
            log::warn!("cannot restore secure_delete: {e}");
        }
    }
}

/// What forgetting a document needs to know of its row.
struct DocumentToForget {
    doc_id: String,
    /// The version that replaced it, if one did.
    superseded_by: Option<i64>,
    source: Option<String>,
    original_id: Option<i64>,
    media_type: String,
    byte_size: i64,
    state: String,
}

impl TenantWriter<'_> {
    /// Internal keys of up to `limit` documents matching `selector`,
    /// newest first: forgetting a whole source then never re-links (and
    /// drops the vector of) a document the same forget is about to delete.
    pub fn select_documents(
        &self,
        selector: &DocumentSelector,
        sight: &super::Sight,
        limit: usize,
    ) -> Result<Vec<i64>> {
        use super::sharing::ADMITTED;
        let (sql, value) = match selector {
            DocumentSelector::Id(id) => (
                format!(
                    "SELECT d.id FROM documents d WHERE d.tenant_id = ?1 AND d.doc_id = ?2
                        AND {ADMITTED} LIMIT ?3"
                ),
                id,
            ),
            DocumentSelector::IdempotencyKey(key) => (
                format!(
                    "SELECT i.document_id FROM idempotency i JOIN documents d ON d.id = i.document_id
                      WHERE i.tenant_id = ?1 AND i.key = ?2 AND {ADMITTED} LIMIT ?3"
                ),
                key,
            ),
            DocumentSelector::Source(source) => (
                format!(
                    "SELECT d.id FROM documents d WHERE d.tenant_id = ?1 AND d.source = ?2
                        AND {ADMITTED} ORDER BY d.id DESC LIMIT ?3"
                ),
                source,
            ),
        };
        let (subject, scopes) = super::sharing::sight_params(sight);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(
            params![self.tenant_id, value, limit as i64, subject, scopes],
            |r| r.get(0),
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Deletes one document and everything derived from it (see the module
    /// documentation), recording `subject` in the audit trail. The new
    /// neighbour context of the next document from the same source is cut
    /// to `context_bytes`, as ingestion cuts it. Returns `None` if the
    /// document is not this tenant's.
    pub fn forget_document(
        &mut self,
        document_key: i64,
        subject: &str,
        selected_by: &str,
        context_bytes: usize,
        now: i64,
    ) -> Result<Option<Forgotten>> {
        let doc = self
            .conn
            .prepare_cached(
                "SELECT doc_id, source, original_id, media_type, byte_size, state, superseded_by
                   FROM documents WHERE tenant_id = ?1 AND id = ?2",
            )?
            .query_row(params![self.tenant_id, document_key], |r| {
                Ok(DocumentToForget {
                    doc_id: r.get(0)?,
                    source: r.get(1)?,
                    original_id: r.get(2)?,
                    media_type: r.get(3)?,
                    byte_size: r.get(4)?,
                    state: r.get(5)?,
                    superseded_by: r.get(6)?,
                })
            })
            .optional()?;
        let Some(DocumentToForget {
            doc_id,
            superseded_by,
            source,
            original_id,
            media_type,
            byte_size,
            state,
        }) = doc
        else {
            return Ok(None);
        };
        let _secure = SecureDelete::on(self.conn.raw())?;

        // Knowledge graph first, while the chunks still name its mentions:
        // the document's relation evidence (relations left without
        // evidence go, the rest get their confidence recomputed), its
        // mentions, entities no longer mentioned, and every community
        // snapshot (they may quote it).
        self.forget_graph(document_key)?;

        // Chunks, their full-text rows and their vector slots.
        let chunks: Vec<(i64, Option<i64>)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, vector_slot FROM chunks WHERE tenant_id = ?1 AND document_id = ?2",
            )?;
            let rows = stmt.query_map(params![self.tenant_id, document_key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let fts = self.fts_table();
        for (rowid, _) in &chunks {
            self.exec(&format!("DELETE FROM {fts} WHERE rowid = ?1"), [rowid])?;
        }
        self.exec(
            "DELETE FROM chunks WHERE tenant_id = ?1 AND document_id = ?2",
            params![self.tenant_id, document_key],
        )?;
        self.add_to_tenant_count(TenantCount::Chunks, -(chunks.len() as i64))?;
        let mut slots: Vec<i64> = chunks.iter().filter_map(|(_, s)| *s).collect();
        let vectors = slots.len();

        // The journal and idempotency records.
        self.exec(
            "DELETE FROM jobs WHERE tenant_id = ?1 AND document_id = ?2",
            params![self.tenant_id, document_key],
        )?;
        self.exec(
            "DELETE FROM idempotency WHERE tenant_id = ?1 AND document_id = ?2",
            params![self.tenant_id, document_key],
        )?;

        // Versions it replaced now lead to the one that replaced it (when
        // the whole chain goes, `forget_versions`, this is moot).
        match superseded_by {
            Some(successor) => self.exec(
                "UPDATE documents SET superseded_by = ?3
                  WHERE tenant_id = ?1 AND superseded_by = ?2",
                params![self.tenant_id, document_key, successor],
            )?,
            None => self.exec(
                "UPDATE documents SET superseded_by = NULL, superseded_at = NULL
                  WHERE tenant_id = ?1 AND superseded_by = ?2",
                params![self.tenant_id, document_key],
            )?,
        };
        self.exec(
            "DELETE FROM documents WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, document_key],
        )?;
        let original_deleted = self.exec(
            "DELETE FROM originals WHERE tenant_id = ?1 AND id = ?2
               AND NOT EXISTS (SELECT 1 FROM documents WHERE original_id = ?2)",
            params![self.tenant_id, original_id],
        )? > 0;

        if let (Some(source), "ready") = (&source, state.as_str()) {
            if let Some(slot) = self.relink_successor(source, document_key, context_bytes, now)? {
                slots.push(slot);
            }
        }

        self.audit(
            subject,
            "forget",
            &doc_id,
            &serde_json::json!({
                "selected_by": selected_by,
                "media_type": media_type,
                "bytes": byte_size,
                "chunks": chunks.len(),
                "vectors": vectors,
                "original_deleted": original_deleted,
            })
            .to_string(),
            now,
        )?;

        // A replicated log zeroes the same slots everywhere.
        for slot in &slots {
            self.conn
                .record_only(VECTOR_CLEAR, params![self.tenant_id, slot])?;
        }
        if !slots.is_empty() {
            if let Some(tv) = self.vectors.existing(self.tenant_id) {
                self.on_commit(move |committed| {
                    if !committed {
                        return;
                    }
                    for slot in slots {
                        if let Err(e) = tv.zero(slot as u64) {
                            log::error!("cannot zero the vector slot of a forgotten chunk: {e}");
                        }
                    }
                });
            }
        }
        Ok(Some(Forgotten {
            document_id: doc_id,
            chunks: chunks.len(),
            vectors,
            original_deleted,
        }))
    }

    /// The next ready document from `source` after the forgotten one took
    /// the end of its last chunk as its first chunk's context (see
    /// `NewChunk::context`). Re-indexes that chunk with the context it would
    /// have had without the forgotten document, drops its vector and
    /// queues an embed job to compute the new one. Returns the freed slot.
    fn relink_successor(
        &mut self,
        source: &str,
        forgotten_key: i64,
        context_bytes: usize,
        now: i64,
    ) -> Result<Option<i64>> {
        let first: Option<(i64, i64, String, Option<i64>)> = self
            .conn
            .prepare_cached(&format!(
                "SELECT d.id, c.id, {}, c.vector_slot
                   FROM documents d JOIN chunks c ON c.document_id = d.id AND c.ordinal = 0
                  WHERE d.id = (SELECT id FROM documents
                                 WHERE tenant_id = ?1 AND source = ?2 AND id > ?3
                                   AND state = 'ready'
                                 ORDER BY id LIMIT 1)",
                chunk_text_beside("c", "d")
            ))?
            .query_row(params![self.tenant_id, source, forgotten_key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()?;
        let Some((successor, chunk_key, text, slot)) = first else {
            return Ok(None);
        };
        let previous: Option<String> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {} FROM chunks c
                  WHERE c.document_id = (SELECT id FROM documents
                                          WHERE tenant_id = ?1 AND source = ?2 AND id < ?3
                                            AND state = 'ready'
                                          ORDER BY id DESC LIMIT 1)
                  ORDER BY c.ordinal DESC LIMIT 1",
                chunk_text("c")
            ))?
            .query_row(params![self.tenant_id, source, successor], |r| r.get(0))
            .optional()?;
        let context = previous
            .as_deref()
            .map(|p| crate::text::tail(p, context_bytes))
            .unwrap_or("");
        let fts = self.fts_table();
        self.exec(&format!("DELETE FROM {fts} WHERE rowid = ?1"), [chunk_key])?;
        self.exec(
            &format!("INSERT OR REPLACE INTO {fts}(rowid, text, context) VALUES (?1, ?2, ?3)"),
            params![chunk_key, text, context],
        )?;
        if slot.is_some() {
            self.exec(
                "UPDATE chunks SET vector_slot = NULL WHERE tenant_id = ?1 AND id = ?2",
                params![self.tenant_id, chunk_key],
            )?;
            self.enqueue_job(successor, JobKind::Embed, now)?;
        }
        Ok(slot)
    }
}
