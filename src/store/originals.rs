//! Originals and what travels with them: reading a document's exact
//! uploaded bytes back, the page spans of paginated documents, and the
//! rows an export writes out.

use rusqlite::{params, OptionalExtension};

use super::tenant::{TenantReader, TenantWriter, VISIBLE};
use crate::error::Result;

/// A document's SHA-256 as hex, however it is stored.
const SHA256: &str = super::packed_keys::document_sha256_hex!();

/// A document's original bytes as stored, with what is needed to check and
/// serve them.
#[derive(Debug, Clone)]
pub struct StoredOriginal {
    pub doc_id: String,
    pub media_type: String,
    pub title: Option<String>,
    /// SHA-256 recorded when the document was admitted (hex).
    pub sha256: String,
    pub bytes: Vec<u8>,
}

/// One document as an export writes it.
#[derive(Debug, Clone)]
pub struct ExportRow {
    /// Position for pagination.
    pub cursor: i64,
    pub doc_id: String,
    pub source: Option<String>,
    pub title: Option<String>,
    pub media_type: String,
    pub metadata: String,
    pub provenance: Option<String>,
    pub created_at: i64,
    pub state: String,
    pub sha256: String,
    pub idempotency_key: Option<String>,
    pub original: Vec<u8>,
    /// When the document expires (Unix ms), if it does.
    pub expires_at: Option<i64>,
    /// The documents it superseded (their ids, oldest first): each is
    /// exported before it.
    pub supersedes: Vec<String>,
    /// A newer version replaced it.
    pub superseded: bool,
}

/// A page of a paginated document: its number and byte span in the
/// extracted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageSpan {
    pub page: u32,
    pub start: usize,
    pub end: usize,
}

impl TenantWriter<'_> {
    /// Records a paginated document's pages and the page of each of its
    /// chunks (`chunk_pages[i]` is the page of chunk ordinal `i`).
    pub fn record_pages(
        &mut self,
        document_key: i64,
        pages: &[PageSpan],
        chunk_pages: &[u32],
    ) -> Result<()> {
        self.exec(
            "UPDATE documents SET pages = ?3 WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, document_key, serde_json::to_string(pages)?],
        )?;
        for (ordinal, page) in chunk_pages.iter().enumerate() {
            self.exec(
                "UPDATE chunks SET page = ?4
                  WHERE tenant_id = ?1 AND document_id = ?2 AND ordinal = ?3",
                params![self.tenant_id, document_key, ordinal as i64, page],
            )?;
        }
        Ok(())
    }

    /// Sets a document's creation time (an import keeps the time the
    /// document was first stored, not the time it was copied).
    pub fn set_created_at(&mut self, document_key: i64, created_at: i64) -> Result<()> {
        self.exec(
            "UPDATE documents SET created_at = ?3 WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, document_key, created_at],
        )?;
        Ok(())
    }
}

impl TenantReader<'_> {
    /// The original bytes of document `doc_id`, if this tenant has it.
    pub fn original(&self, doc_id: &str) -> Result<Option<StoredOriginal>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT d.doc_id, d.media_type, d.title, {SHA256}, o.bytes
                   FROM documents d JOIN originals o ON o.id = d.original_id
                  WHERE d.tenant_id = ?1 AND d.doc_id = ?2 AND {VISIBLE}"
            ))?
            .query_row(
                params![
                    tenant_id,
                    doc_id,
                    0,
                    0,
                    0,
                    0,
                    0,
                    self.visible.now,
                    self.visible.since
                ],
                |r| {
                    Ok(StoredOriginal {
                        doc_id: r.get(0)?,
                        media_type: r.get(1)?,
                        title: r.get(2)?,
                        sha256: r.get(3)?,
                        bytes: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// The pages of a paginated document (empty for others).
    pub fn pages(&self, doc_id: &str) -> Result<Vec<PageSpan>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let json: Option<Option<String>> = self
            .conn
            .prepare_cached("SELECT pages FROM documents WHERE tenant_id = ?1 AND doc_id = ?2")?
            .query_row(params![tenant_id, doc_id], |r| r.get(0))
            .optional()?;
        match json.flatten() {
            Some(j) => Ok(serde_json::from_str(&j)?),
            None => Ok(Vec::new()),
        }
    }

    /// The document stored under an idempotency key, if any.
    pub fn doc_id_by_idempotency_key(&self, key: &str) -> Result<Option<String>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(
                "SELECT d.doc_id FROM idempotency i JOIN documents d ON d.id = i.document_id
                  WHERE i.tenant_id = ?1 AND i.key = ?2",
            )?
            .query_row(params![tenant_id, key], |r| r.get(0))
            .optional()?)
    }

    /// Documents (any state) after `cursor`, in creation order, with their
    /// originals: a page of an export.
    pub fn export_documents(&self, after: i64, limit: usize) -> Result<Vec<ExportRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        // Expired documents are not exported: they are already forgotten
        // as far as any reader is concerned.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT d.id, d.doc_id, d.source, d.title, d.media_type, d.metadata, d.provenance,
                    d.created_at, d.state, {SHA256},
                    (SELECT i.key FROM idempotency i
                      WHERE i.tenant_id = d.tenant_id AND i.document_id = d.id
                      ORDER BY i.created_at LIMIT 1),
                    o.bytes, d.expires_at,
                    (SELECT json_group_array(s.doc_id) FROM
                        (SELECT doc_id FROM documents
                          WHERE superseded_by = d.id AND tenant_id = d.tenant_id ORDER BY id) s),
                    d.superseded_by IS NOT NULL
               FROM documents d JOIN originals o ON o.id = d.original_id
              WHERE d.tenant_id = ?1 AND d.id > ?2 AND {VISIBLE}
              ORDER BY d.id LIMIT ?3"
        ))?;
        let v = self.visible;
        let rows = stmt.query_map(
            params![tenant_id, after, limit as i64, 0, 0, 0, 0, v.now, v.since],
            |r| {
                Ok(ExportRow {
                    cursor: r.get(0)?,
                    doc_id: r.get(1)?,
                    source: r.get(2)?,
                    title: r.get(3)?,
                    media_type: r.get(4)?,
                    metadata: r.get(5)?,
                    provenance: r.get(6)?,
                    created_at: r.get(7)?,
                    state: r.get(8)?,
                    sha256: r.get(9)?,
                    idempotency_key: r.get(10)?,
                    original: r.get(11)?,
                    expires_at: r.get(12)?,
                    supersedes: serde_json::from_str(&r.get::<_, String>(13)?).unwrap_or_default(),
                    superseded: r.get(14)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
