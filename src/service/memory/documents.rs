//! Reading stored documents back: one document, pages of the list (with
//! its filters and their total) and of an export, a document's chunks with
//! the entities they mention, an original's bytes (checked against their
//! hash), and the look-ups by idempotency key and by id.

use super::Memory;
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::media::{self, MediaKind};
use crate::limits::CHUNKS_MAX_LIMIT;
use crate::service::principal::Permission;
use crate::store::{
    DocumentFilter, DocumentListing, DocumentOrder, DocumentRow, DocumentSummary, ExportRow,
    Version,
};

/// One page of a document's chunks, in reading order.
#[derive(Debug, Clone)]
pub struct ChunkPage {
    pub document_id: String,
    pub chunks: Vec<ChunkView>,
    /// The ordinal to page on from (`after`), when there are more.
    pub next_after: Option<i64>,
}

/// A chunk with the entities it mentions.
#[derive(Debug, Clone)]
pub struct ChunkView {
    /// `<document_id>:<ordinal>`, as evidence names chunks.
    pub chunk_id: String,
    pub ordinal: i64,
    /// Byte span in the document's extracted text.
    pub byte_start: i64,
    pub byte_end: i64,
    pub text: String,
    pub entities: Vec<ChunkEntity>,
}

/// An entity mentioned in a chunk, where (a span in the document's text).
#[derive(Debug, Clone)]
pub struct ChunkEntity {
    pub entity_id: String,
    pub name: String,
    pub kind: String,
    pub byte_start: i64,
    pub byte_end: i64,
}

/// A document's original bytes, checked against their recorded hash.
#[derive(Debug, Clone)]
pub struct Original {
    pub document_id: String,
    pub media_type: String,
    pub title: Option<String>,
    pub sha256: String,
    pub bytes: Vec<u8>,
    /// True when the bytes are UTF-8 text of a text type (serve as text,
    /// not base64).
    pub is_text: bool,
}

impl Memory<'_> {
    /// A stored document of this tenant.
    pub fn document(&self, doc_id: &str) -> Result<DocumentRow> {
        self.require(Permission::Query)?;
        self.reader()?
            .document(doc_id)?
            .ok_or_else(|| Error::NotFound(format!("no document {doc_id:?} in this memory")))
    }

    /// Every visible version in the chain of `doc_id` (itself included),
    /// oldest first; not found like [`Memory::document`].
    pub fn versions(&self, doc_id: &str) -> Result<Vec<Version>> {
        self.require(Permission::Query)?;
        let versions = self.reader()?.versions(doc_id)?;
        if versions.is_empty() {
            return Err(Error::NotFound(format!(
                "no document {doc_id:?} in this memory"
            )));
        }
        Ok(versions)
    }

    /// Ready current versions after the pagination position `after`.
    pub fn list_documents(&self, after: i64, limit: usize) -> Result<Vec<DocumentSummary>> {
        self.require(Permission::Query)?;
        self.reader()?.list_documents(after, limit)
    }

    /// A page of the ready documents `filter` takes, in `order`, after the
    /// document `cursor` (from the start when `None`).
    pub fn list_documents_page(
        &self,
        order: DocumentOrder,
        cursor: Option<i64>,
        filter: &DocumentFilter,
        limit: usize,
    ) -> Result<Vec<DocumentListing>> {
        self.require(Permission::Query)?;
        self.reader()?
            .list_documents_page(order, cursor, filter, limit)
    }

    /// How many ready documents `filter` takes in all, whatever the page.
    pub fn count_documents(&self, filter: &DocumentFilter) -> Result<i64> {
        self.require(Permission::Query)?;
        self.reader()?.count_documents(filter)
    }

    /// Up to `limit` (at most [`CHUNKS_MAX_LIMIT`]) chunks of a document
    /// with an ordinal above `after`, each with the entities it mentions.
    /// Another tenant's document is not found, like an unknown one.
    pub fn document_chunks(
        &self,
        doc_id: &str,
        after: Option<i64>,
        limit: usize,
    ) -> Result<ChunkPage> {
        self.require(Permission::Query)?;
        let limit = limit.clamp(1, CHUNKS_MAX_LIMIT);
        let reader = self.reader()?;
        let mut chunks = reader
            .chunks_of_document(doc_id, after, limit + 1)?
            .ok_or_else(|| Error::NotFound(format!("no document {doc_id:?} in this memory")))?;
        let more = chunks.len() > limit;
        chunks.truncate(limit);
        let next_after = more.then(|| chunks.last().map(|c| c.ordinal)).flatten();
        let graph_ids = reader.graph_ids();
        let mut views = Vec::with_capacity(chunks.len());
        for c in chunks {
            let entities = reader
                .chunk_mentions(c.chunk_key)?
                .into_iter()
                .map(|m| ChunkEntity {
                    entity_id: graph_ids.entity_id(m.entity_id),
                    name: m.name,
                    kind: m.kind,
                    byte_start: m.start,
                    byte_end: m.end,
                })
                .collect();
            views.push(ChunkView {
                chunk_id: format!("{doc_id}:{}", c.ordinal),
                ordinal: c.ordinal,
                byte_start: c.start,
                byte_end: c.end,
                text: c.text,
                entities,
            });
        }
        Ok(ChunkPage {
            document_id: doc_id.to_string(),
            chunks: views,
            next_after,
        })
    }

    /// A document's original bytes, exactly as uploaded. The bytes are
    /// hashed and compared with the SHA-256 recorded at admission: damaged
    /// bytes are reported, never returned.
    pub fn original(&self, doc_id: &str) -> Result<Original> {
        self.require(Permission::Query)?;
        let row = self
            .reader()?
            .original(doc_id)?
            .ok_or_else(|| Error::NotFound(format!("no document {doc_id:?} in this memory")))?;
        if ids::sha256_hex(&row.bytes) != row.sha256 {
            log::error!(
                "original of document {doc_id} (tenant {:?}) does not match its SHA-256 {}",
                self.principal.tenant.name(),
                row.sha256
            );
            return Err(Error::Unavailable(format!(
                "the stored original of document {doc_id} is corrupted: its bytes no longer \
                 match the SHA-256 recorded when it was stored, so they are not returned; \
                 forget the document and ingest the file again"
            )));
        }
        let is_text = media::from_media_type(&row.media_type).is_some_and(MediaKind::is_text)
            && std::str::from_utf8(&row.bytes).is_ok();
        Ok(Original {
            document_id: row.doc_id,
            media_type: row.media_type,
            title: row.title,
            sha256: row.sha256,
            bytes: row.bytes,
            is_text,
        })
    }

    /// The document stored under an idempotency key, if any (lets bulk
    /// ingestion skip files it stored before without preparing them).
    pub fn document_for_key(&self, key: &str) -> Result<Option<String>> {
        self.require(Permission::Query)?;
        self.reader()?.doc_id_by_idempotency_key(key)
    }

    /// Documents (any state) after `after`, with their originals, in
    /// creation order: one page of an export.
    pub fn export_page(&self, after: i64, limit: usize) -> Result<Vec<ExportRow>> {
        self.require(Permission::Query)?;
        self.reader()?.export_documents(after, limit)
    }

    /// Whether this caller's tenant has ever written to this memory (an
    /// unknown tenant reads as empty; `export` refuses it instead, so a
    /// misspelt `--tenant` does not make an empty backup).
    pub fn tenant_exists(&self) -> Result<bool> {
        self.require(Permission::Query)?;
        Ok(self.reader()?.exists())
    }

    pub(super) fn document_exists(&self, doc_id: &str) -> Result<bool> {
        Ok(self.reader()?.document(doc_id)?.is_some())
    }
}
