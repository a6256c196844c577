//! Chunks and their full-text index.
//!
//! A chunk is a byte span of a document's extracted text; its text is stored
//! beside the span so evidence can be returned without re-reading the
//! document. Its id is also its rowid in the tenant's contentless FTS5 table.

use rusqlite::params;

use super::tenant::{TenantReader, TenantWriter};
use crate::error::Result;

/// A chunk to store: `text` is exactly `document_text[start..end]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewChunk {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A chunk found by a search, with what evidence needs of its document.
#[derive(Debug, Clone)]
pub struct ChunkHit {
    pub chunk_key: i64,
    pub ordinal: i64,
    pub start: i64,
    pub end: i64,
    pub text: String,
    pub doc_id: String,
    pub source: Option<String>,
    pub title: Option<String>,
    pub metadata: String,
    pub provenance: Option<String>,
    pub created_at: i64,
    /// BM25 as FTS5 reports it: lower (more negative) is better.
    pub bm25: f64,
}

impl TenantWriter<'_> {
    pub(super) fn insert_chunks(&mut self, document_key: i64, chunks: &[NewChunk]) -> Result<()> {
        let fts = self.fts_table();
        let mut insert_chunk = self.conn.prepare_cached(
            "INSERT INTO chunks(tenant_id, document_id, ordinal, byte_start, byte_end, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut insert_fts = self
            .conn
            .prepare_cached(&format!("INSERT INTO {fts}(rowid, text) VALUES (?1, ?2)"))?;
        for (ordinal, c) in chunks.iter().enumerate() {
            insert_chunk.execute(params![
                self.tenant_id,
                document_key,
                ordinal as i64,
                c.start as i64,
                c.end as i64,
                c.text
            ])?;
            let rowid = self.conn.last_insert_rowid();
            insert_fts.execute(params![rowid, c.text])?;
        }
        Ok(())
    }
}

impl TenantReader<'_> {
    /// Best chunks for an FTS5 MATCH expression, best first. The expression
    /// must come from the query layer's builder, which quotes every term.
    pub fn keyword_search(&self, match_expr: &str, limit: usize) -> Result<Vec<ChunkHit>> {
        let (Some(tenant_id), Some(fts)) = (self.tenant_id, self.fts_table()) else {
            return Ok(Vec::new());
        };
        // Rank inside the FTS table first (FTS5's ORDER BY rank LIMIT is
        // optimised), then join the few winners.
        let sql = format!(
            "WITH hits AS (SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ?1
                            ORDER BY rank LIMIT ?2)
             SELECT c.id, c.ordinal, c.byte_start, c.byte_end, c.text, d.doc_id, d.source,
                    d.title, d.metadata, d.provenance, d.created_at, hits.rank
               FROM hits JOIN chunks c ON c.id = hits.rowid
                         JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?3
              ORDER BY hits.rank"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![match_expr, limit as i64, tenant_id], |r| {
            Ok(ChunkHit {
                chunk_key: r.get(0)?,
                ordinal: r.get(1)?,
                start: r.get(2)?,
                end: r.get(3)?,
                text: r.get(4)?,
                doc_id: r.get(5)?,
                source: r.get(6)?,
                title: r.get(7)?,
                metadata: r.get(8)?,
                provenance: r.get(9)?,
                created_at: r.get(10)?,
                bm25: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Number of chunks this tenant has.
    pub fn chunk_count(&self) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        Ok(self.conn.query_row(
            "SELECT count(*) FROM chunks WHERE tenant_id = ?1",
            [tenant_id],
            |r| r.get(0),
        )?)
    }
}

impl TenantReader<'_> {
    /// Chunks stored for one document (by external id).
    pub fn document_chunk_count(&self, doc_id: &str) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        Ok(self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE d.tenant_id = ?1 AND d.doc_id = ?2",
            )?
            .query_row(params![tenant_id, doc_id], |r| r.get(0))?)
    }
}
