//! Documents and their originals: admission (the acknowledged write of an
//! ingest) and reads.

use rusqlite::{params, OptionalExtension, Row};

use super::journal::JobState;
use super::tenant::{TenantReader, TenantWriter, VISIBLE};
use super::versions::Replaces;
use crate::error::{Error, Result};

/// Everything stored when an ingest is acknowledged.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub doc_id: String,
    pub source: Option<String>,
    pub title: Option<String>,
    pub media_type: String,
    pub original: Vec<u8>,
    pub sha256: String,
    /// Compact JSON object.
    pub metadata: String,
    pub provenance: Option<String>,
    pub created_by: String,
    /// `(key, digest of the whole request)` when the caller sent a key.
    pub idempotency: Option<(String, String)>,
    /// When the document expires (Unix ms).
    pub expires_at: Option<i64>,
    /// The content's key (`ingest::content_key`; `None` for content that
    /// is not compared).
    pub content_key: Option<String>,
    /// Return a live document of the tenant with the same content key
    /// instead of storing this one (a document it supersedes, or one
    /// superseded before, is not live for this).
    pub dedupe: bool,
    /// The documents this one is a new version of (`store::versions`).
    pub replaces: Replaces,
    /// What the caller sees: duplicates, idempotent replays and versions
    /// it supersedes are looked for among those documents only.
    pub sight: super::Sight,
    /// The memory scopes it is stored into (`store::sharing`).
    pub scopes: Vec<super::MemoryScope>,
}

/// The result of admitting a document.
#[derive(Debug, Clone)]
pub struct AdmitOutcome {
    pub doc_id: String,
    /// Internal key of the document (for the ingestion worker only).
    pub document_key: i64,
    pub job_id: i64,
    pub job_state: JobState,
    /// True when an earlier document was returned instead of storing
    /// anything new: the same request with the same idempotency key, or
    /// (with `duplicate`) the same content.
    pub replayed: bool,
    /// The earlier document returned has the same content.
    pub duplicate: bool,
    /// External ids of the documents the new one superseded (empty for a
    /// replay or a duplicate: nothing was stored).
    pub superseded: Vec<String>,
}

/// A stored document as readers see it.
#[derive(Debug, Clone)]
pub struct DocumentRow {
    pub doc_id: String,
    pub source: Option<String>,
    pub title: Option<String>,
    pub media_type: String,
    pub sha256: String,
    pub byte_size: i64,
    pub metadata: String,
    pub provenance: Option<String>,
    pub created_by: String,
    pub created_at: i64,
    pub state: String,
    pub text: Option<String>,
    pub error: Option<String>,
    /// The external id of the version that replaced this one (`None` while
    /// it is current).
    pub superseded_by: Option<String>,
    /// When it was replaced (Unix ms).
    pub superseded_at: Option<i64>,
    /// When it expires (Unix ms).
    pub expires_at: Option<i64>,
}

/// One line of a document listing.
#[derive(Debug, Clone)]
pub struct DocumentSummary {
    /// Position for pagination (opaque to clients).
    pub cursor: i64,
    pub doc_id: String,
    pub title: Option<String>,
    pub source: Option<String>,
    pub media_type: String,
    pub byte_size: i64,
}

/// A [`DocumentSummary`] from a row whose first six columns are `id`,
/// `doc_id`, `title`, `source`, `media_type` and `byte_size`.
fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DocumentSummary> {
    Ok(DocumentSummary {
        cursor: r.get(0)?,
        doc_id: r.get(1)?,
        title: r.get(2)?,
        source: r.get(3)?,
        media_type: r.get(4)?,
        byte_size: r.get(5)?,
    })
}

/// A listing's lead from its column: text, or bytes of an original cut
/// at a byte bound (decoded lossily, a cut character dropped).
fn lead(value: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8_lossy(b)
            .trim_end_matches('\u{fffd}')
            .chars()
            .take(LEAD_CHARS)
            .collect(),
        _ => String::new(),
    }
}

/// The orders the document listing pages in: newest or oldest first (by
/// when stored), or by title (without ASCII case, untitled last, equal
/// titles in creation order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocumentOrder {
    #[default]
    Newest,
    Oldest,
    Title,
}

/// One line of the newest-first listing: a summary, its provenance class
/// and when it was stored.
#[derive(Debug, Clone)]
pub struct DocumentListing {
    pub summary: DocumentSummary,
    pub provenance: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When a newer version replaced it (listed with `include_history`).
    pub superseded_at: Option<i64>,
    /// The start of its text: at most [`LEAD_CHARS`] characters, for a
    /// snippet (a character cut by the byte bound of an original read as
    /// text is dropped; bytes that are not UTF-8 become U+FFFD).
    pub lead: String,
}

/// The most of a document's text a listing line carries in
/// [`DocumentListing::lead`], in characters (read as at most four times as
/// many bytes from an original stored as the text): enough for a snippet
/// after a front-matter block of a few dozen lines.
pub const LEAD_CHARS: usize = 2048;

/// Which ready documents a newest-first listing (and its count) takes:
/// each field that is set must hold; times are Unix milliseconds compared
/// with `created_at`, `since` inclusive and `until` exclusive. Only current
/// versions unless `include_history`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentFilter {
    pub source: Option<String>,
    pub media_type: Option<String>,
    pub provenance: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Superseded versions too.
    pub include_history: bool,
}

/// The conditions of a [`DocumentFilter`] on a document aliased `d`
/// (parameters `?3` to `?7` and `?11`; `?8`, `?9` are [`VISIBLE`]'s).
const FILTERED: &str = "(?3 IS NULL OR d.source = ?3) AND (?4 IS NULL OR d.media_type = ?4)
     AND (?5 IS NULL OR d.provenance = ?5) AND (?6 IS NULL OR d.created_at >= ?6)
     AND (?7 IS NULL OR d.created_at < ?7) AND (?11 OR d.superseded_by IS NULL)";

impl TenantWriter<'_> {
    /// Stores the document, its original, its idempotency record and its
    /// job: the whole acknowledgement of an ingest, in the caller's
    /// transaction. Same key with the same request digest returns the first
    /// document; with a different digest it is a conflict.
    pub fn admit(&mut self, doc: NewDocument, now: i64) -> Result<AdmitOutcome> {
        if let Some((key, digest)) = &doc.idempotency {
            let prior: Option<(String, i64, String)> = self
                .conn
                .prepare_cached(
                    "SELECT i.request_digest, i.document_id, d.doc_id
                       FROM idempotency i JOIN documents d ON d.id = i.document_id
                      WHERE i.tenant_id = ?1 AND i.key = ?2",
                )?
                .query_row(params![self.tenant_id, key], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()?;
            if let Some((prior_digest, document_id, doc_id)) = prior {
                if !self.admits(&doc.sight, document_id)? {
                    // Another's document the caller cannot see: its id is
                    // not the caller's to learn.
                    return Err(Error::Conflict(format!(
                        "idempotency_key {key:?} was already used in this memory; use a new key"
                    )));
                }
                if &prior_digest != digest {
                    return Err(Error::Conflict(format!(
                        "idempotency_key {key:?} was already used for a different request \
                         (document {doc_id}); use a new key to store different content"
                    )));
                }
                let (job_id, job_state) = self.latest_job(document_id)?;
                return Ok(AdmitOutcome {
                    doc_id,
                    document_key: document_id,
                    job_id,
                    job_state,
                    replayed: true,
                    duplicate: false,
                    superseded: Vec::new(),
                });
            }
        }
        // Checked here, in the transaction that marks them, so two
        // versions racing for the same document cannot both win.
        let replaced =
            self.supersede_targets(&doc.replaces, doc.source.as_deref(), &doc.sight, now)?;
        if doc.dedupe {
            let keys: Vec<i64> = replaced.iter().map(|(key, _)| *key).collect();
            if let Some(found) =
                self.live_with_content(doc.content_key.as_deref(), &keys, &doc.sight, now)?
            {
                return Ok(found);
            }
        }
        let original_id = self.store_original(&doc.sha256, &doc.original)?;
        let document_id = self.new_id("documents")?;
        self.conn.insert_new(
            "INSERT INTO documents(tenant_id, doc_id, source, title, media_type, sha256,
                                   byte_size, metadata, provenance, created_by, created_at, state,
                                   expires_at, original_id, id, content_key, observed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending', ?12, ?13, ?14, ?15,
                     ?16)
             ON CONFLICT DO NOTHING",
            params![
                self.tenant_id,
                doc.doc_id,
                doc.source,
                doc.title,
                doc.media_type,
                super::packed_keys::digest(&doc.sha256).packed,
                doc.original.len() as i64,
                doc.metadata,
                doc.provenance,
                doc.created_by,
                now,
                doc.expires_at,
                original_id,
                document_id,
                doc.content_key
                    .as_deref()
                    .map(|k| super::packed_keys::content_key(k).packed),
                crate::knowledge::calendar::metadata_day(&doc.metadata).map(|d| d * 86_400_000)
            ],
        )?;
        self.record_fields(document_id, &doc.metadata)?;
        for scope in &doc.scopes {
            self.grant_scope(document_id, scope, &doc.created_by, now)?;
        }
        if let Some((key, digest)) = &doc.idempotency {
            self.conn.insert_new(
                "INSERT INTO idempotency(tenant_id, key, request_digest, document_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
                params![self.tenant_id, key, digest, document_id, now],
            )?;
        }
        let job_id = self.enqueue_job(document_id, super::journal::JobKind::Ingest, now)?;
        self.audit(&doc.created_by, "ingest", &doc.doc_id, "{}", now)?;
        self.supersede(&replaced, document_id, &doc.doc_id, &doc.created_by, now)?;
        Ok(AdmitOutcome {
            doc_id: doc.doc_id,
            document_key: document_id,
            job_id,
            job_state: JobState::Pending,
            replayed: false,
            duplicate: false,
            superseded: replaced.into_iter().map(|(_, id)| id).collect(),
        })
    }

    /// A live document of this tenant with content `key` (current, pending
    /// or ready, not expired, and not one of `replaced`, the keys of the
    /// documents the new one supersedes), as the outcome of admitting its
    /// duplicate.
    fn live_with_content(
        &mut self,
        key: Option<&str>,
        replaced: &[i64],
        sight: &super::Sight,
        now: i64,
    ) -> Result<Option<AdmitOutcome>> {
        let Some(key) = key else {
            return Ok(None);
        };
        // A caller that sees part of the memory reads every copy, to find
        // one it sees (a copy it cannot see is no duplicate of its own).
        let wanted = if sight.is_limited() {
            i64::MAX
        } else {
            replaced.len() as i64 + 1
        };
        let mut found: Vec<(i64, String)> = Vec::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, doc_id FROM documents
              WHERE tenant_id = ?1 AND content_key = ?2 AND state != 'failed'
                AND superseded_by IS NULL AND (expires_at IS NULL OR expires_at > ?3)
              ORDER BY id LIMIT ?4",
        )?;
        // The key as this release stores it, then as earlier ones did.
        for form in super::packed_keys::content_key(key).forms() {
            // One more than can be replaced: then at least one is not.
            let rows = stmt.query_map(params![self.tenant_id, form, now, wanted], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            found.extend(rows.collect::<rusqlite::Result<Vec<_>>>()?);
        }
        drop(stmt);
        // Oldest first, whichever form found it.
        found.sort_unstable();
        let mut live = None;
        for (k, id) in found {
            if !replaced.contains(&k) && self.admits(sight, k)? {
                live = Some((k, id));
                break;
            }
        }
        let Some((document_id, doc_id)) = live else {
            return Ok(None);
        };
        let (job_id, job_state) = self.latest_job(document_id)?;
        Ok(Some(AdmitOutcome {
            doc_id,
            document_key: document_id,
            job_id,
            job_state,
            replayed: true,
            duplicate: true,
            superseded: Vec::new(),
        }))
    }

    /// The id of this tenant's original with these bytes, stored now unless
    /// a document already brought the same bytes.
    fn store_original(&self, sha256: &str, bytes: &[u8]) -> Result<i64> {
        let key = super::packed_keys::digest(sha256);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM originals WHERE tenant_id = ?1 AND sha256 = ?2")?;
        for form in key.forms() {
            let stored: Option<i64> = stmt
                .query_row(params![self.tenant_id, form], |r| r.get(0))
                .optional()?;
            if let Some(id) = stored {
                return Ok(id);
            }
        }
        drop(stmt);
        let id = self.new_id("originals")?;
        self.conn.insert_new(
            "INSERT INTO originals(id, tenant_id, sha256, bytes) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT DO NOTHING",
            params![id, self.tenant_id, key.packed, bytes],
        )?;
        Ok(id)
    }
}

/// Columns of [`DocumentRow`], for a query over `documents d JOIN originals
/// o`. Extracted text identical to the original is not stored twice: `text`
/// is NULL and the original stands in.
const DOCUMENT_COLUMNS: &str = concat!(
    "d.doc_id, d.source, d.title, d.media_type, ",
    super::packed_keys::document_sha256_hex!(),
    ", d.byte_size,
     d.metadata, d.provenance, d.created_by, d.created_at, d.state,
     CASE WHEN d.state = 'ready' THEN COALESCE(d.text, CAST(o.bytes AS TEXT)) END, d.error,
     (SELECT s.doc_id FROM documents s WHERE s.id = d.superseded_by), d.superseded_at,
     d.expires_at"
);

fn document_row(r: &Row<'_>) -> rusqlite::Result<DocumentRow> {
    Ok(DocumentRow {
        doc_id: r.get(0)?,
        source: r.get(1)?,
        title: r.get(2)?,
        media_type: r.get(3)?,
        sha256: r.get(4)?,
        byte_size: r.get(5)?,
        metadata: r.get(6)?,
        provenance: r.get(7)?,
        created_by: r.get(8)?,
        created_at: r.get(9)?,
        state: r.get(10)?,
        text: r.get(11)?,
        error: r.get(12)?,
        superseded_by: r.get(13)?,
        superseded_at: r.get(14)?,
        expires_at: r.get(15)?,
    })
}

impl TenantReader<'_> {
    /// The document with external id `doc_id`, if this tenant has it.
    pub fn document(&self, doc_id: &str) -> Result<Option<DocumentRow>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN originals o ON o.id = d.original_id
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
                document_row,
            )
            .optional()?)
    }

    /// Ready current versions after `cursor`, in creation order.
    pub fn list_documents(&self, after: i64, limit: usize) -> Result<Vec<DocumentSummary>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT d.id, d.doc_id, d.title, d.source, d.media_type, d.byte_size FROM documents d
              WHERE d.tenant_id = ?1 AND d.id > ?2 AND d.state = 'ready'
                AND d.superseded_by IS NULL AND {VISIBLE}
              ORDER BY d.id LIMIT ?3"
        ))?;
        let v = self.visible;
        let rows = stmt.query_map(
            params![tenant_id, after, limit as i64, 0, 0, 0, 0, v.now, v.since],
            summary_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A page of the ready documents `filter` takes, in `order`, from the
    /// document `cursor` (excluded; from the start when `None`): the
    /// browser's list. In title order a cursor whose document is gone
    /// (forgotten since) ends the listing.
    pub fn list_documents_page(
        &self,
        order: DocumentOrder,
        cursor: Option<i64>,
        filter: &DocumentFilter,
        limit: usize,
    ) -> Result<Vec<DocumentListing>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let cursor = cursor.unwrap_or(match order {
            DocumentOrder::Newest => i64::MAX,
            DocumentOrder::Oldest | DocumentOrder::Title => 0,
        });
        let lead_bytes = LEAD_CHARS * 4;
        // Titles sort without case, untitled last; a row value compares
        // the three keys at once, so the page after `cursor` starts just
        // past its document whatever titles repeat.
        let (from, order_by) = match order {
            DocumentOrder::Newest => ("d.id < ?2", "d.id DESC"),
            DocumentOrder::Oldest => ("d.id > ?2", "d.id ASC"),
            DocumentOrder::Title => (
                "(?2 = 0 OR (d.title IS NULL, d.title COLLATE NOCASE, d.id) >
                     (SELECT c.title IS NULL, c.title COLLATE NOCASE, c.id FROM documents c
                       WHERE c.id = ?2 AND c.tenant_id = ?1))",
                "d.title IS NULL, d.title COLLATE NOCASE, d.id",
            ),
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT d.id, d.doc_id, d.title, d.source, d.media_type, d.byte_size, d.created_at,
                    d.provenance, d.superseded_at,
                    COALESCE(substr(d.text, 1, {LEAD_CHARS}),
                             CAST(substr(o.bytes, 1, {lead_bytes}) AS TEXT))
               FROM documents d JOIN originals o ON o.id = d.original_id
              WHERE d.tenant_id = ?1 AND {from} AND d.state = 'ready'
                AND {FILTERED} AND {VISIBLE}
              ORDER BY {order_by} LIMIT ?10"
        ))?;
        let v = self.visible;
        let f = filter;
        let rows = stmt.query_map(
            params![
                tenant_id,
                cursor,
                f.source,
                f.media_type,
                f.provenance,
                f.since,
                f.until,
                v.now,
                v.since,
                limit as i64,
                f.include_history
            ],
            |r| {
                Ok(DocumentListing {
                    summary: summary_row(r)?,
                    created_at: r.get(6)?,
                    provenance: r.get(7)?,
                    superseded_at: r.get(8)?,
                    lead: lead(r.get_ref(9)?),
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many ready documents `filter` takes in all (what forgetting by
    /// that filter would delete of what a reader sees).
    pub fn count_documents(&self, filter: &DocumentFilter) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        let v = self.visible;
        let f = filter;
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM documents d
                  WHERE d.tenant_id = ?1 AND ?2 AND d.state = 'ready' AND {FILTERED} AND {VISIBLE}"
            ))?
            .query_row(
                params![
                    tenant_id,
                    1,
                    f.source,
                    f.media_type,
                    f.provenance,
                    f.since,
                    f.until,
                    v.now,
                    v.since,
                    0,
                    f.include_history
                ],
                |r| r.get(0),
            )?)
    }

    /// Number of documents (any state).
    pub fn document_count(&self) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        Ok(self
            .conn
            .prepare_cached("SELECT count(*) FROM documents WHERE tenant_id = ?1")?
            .query_row([tenant_id], |r| r.get(0))?)
    }
}
