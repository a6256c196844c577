//! Chunks and their full-text index.
//!
//! A chunk is a byte span of a document's extracted text. The text of a
//! small document is stored once: its chunks keep only their spans, and a
//! chunk's text is read back as its span of the document's text (the
//! original, or the extracted text when that differs), in the same
//! statement that reads the chunk ([`chunk_text`]). A chunk of a larger
//! document keeps a copy of its text, so that reading one chunk never
//! loads a whole large document. A chunk's id is also its rowid in the
//! tenant's contentless FTS5 table.

use rusqlite::{params, OptionalExtension};

use super::tenant::{TenantCount, TenantReader, TenantWriter, VISIBLE};
use super::write_log::{vector_bytes, VECTOR_PUT};
use crate::error::Result;

/// The most bytes a document's text may have for its chunks to keep no copy
/// of their text (see the module docs). A notes-sized memory stores its
/// text once; reading a chunk of such a document copies at most this much.
pub const SHARED_TEXT_MAX_BYTES: usize = 64 * 1024;

/// SQL for the text of the chunk aliased `c`: its own copy, else (stored as
/// `''`, since a chunk is never empty) its span of its document's text.
pub(crate) fn chunk_text(c: &str) -> String {
    format!(
        "CASE WHEN {c}.text <> '' THEN {c}.text ELSE
           (SELECT {} FROM documents sd WHERE sd.id = {c}.document_id) END",
        span_of_document(c, "sd")
    )
}

/// [`chunk_text`] where the chunk's document is already joined as `d`.
pub(crate) fn chunk_text_beside(c: &str, d: &str) -> String {
    format!(
        "CASE WHEN {c}.text <> '' THEN {c}.text ELSE {} END",
        span_of_document(c, d)
    )
}

/// The span of chunk `c` in the text of its document `d`: the extracted
/// text, or else the original. `substr` counts bytes only in a BLOB, hence
/// the casts.
fn span_of_document(c: &str, d: &str) -> String {
    format!(
        "CAST(substr(CAST(coalesce({d}.text,
                                   (SELECT so.bytes FROM originals so WHERE so.id = {d}.original_id))
                          AS BLOB),
                     {c}.byte_start + 1, {c}.byte_end - {c}.byte_start) AS TEXT)"
    )
}

/// A chunk to store: `text` is exactly `document_text[start..end]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewChunk {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Text just before the chunk (the end of the previous chunk, or of
    /// the previous document from the same source). Indexed with a lower
    /// weight and mixed into the chunk's vector, never returned as evidence:
    /// a reply like "Yes, last Tuesday!" is found by what it answers.
    pub context: String,
}

/// A chunk still waiting for its vector.
#[derive(Debug, Clone)]
pub struct UnembeddedChunk {
    pub chunk_key: i64,
    pub ordinal: i64,
    pub text: String,
    /// The previous chunk of the same document, if any.
    pub previous: Option<String>,
}

/// A chunk's neighbours in reading order (see
/// [`TenantReader::adjacent_chunks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjacent {
    pub chunk_key: i64,
    pub before: Option<i64>,
    pub after: Option<i64>,
}

/// A chunk of one document, as the browser pages through them.
#[derive(Debug, Clone)]
pub struct DocumentChunk {
    pub chunk_key: i64,
    pub ordinal: i64,
    /// Byte span in the document's extracted text.
    pub start: i64,
    pub end: i64,
    pub text: String,
}

/// An entity mentioned in a chunk: its store id, name and kind, and the
/// span of the mention in the document's text.
#[derive(Debug, Clone)]
pub struct ChunkMention {
    pub entity_id: i64,
    pub name: String,
    pub kind: String,
    pub start: i64,
    pub end: i64,
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
    /// The page the chunk lies on, for paginated documents (PDF).
    pub page: Option<i64>,
}

pub(super) fn hit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkHit> {
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
        page: r.get(12)?,
    })
}

impl TenantWriter<'_> {
    /// Appends vectors to the tenant's vector files inside this write and
    /// returns the first slot. Readers see them once the transaction
    /// commits; if it rolls back, the slots are reused.
    pub(super) fn append_vectors(&mut self, vectors: &[Vec<f32>]) -> Result<i64> {
        // Every tenant with rows was opened at start-up; one opened here is
        // new, so it starts empty at generation 0.
        let tv = self.vectors.tenant(self.tenant_id, 0, 0)?;
        let first = tv.append(vectors)?;
        let rows = first + vectors.len() as u64;
        // A replicated log carries the rows too (the files are local).
        if self.conn.is_recording() {
            for (slot, v) in (first..).zip(vectors) {
                self.conn.record_only(
                    VECTOR_PUT,
                    params![self.tenant_id, slot as i64, vector_bytes(v)],
                )?;
            }
        }
        self.exec(
            "UPDATE tenants SET vector_rows = ?2 WHERE id = ?1",
            params![self.tenant_id, rows as i64],
        )?;
        self.on_commit(move |committed| {
            if !committed {
                tv.rollback(first);
            } else if let Err(e) = tv.publish(rows) {
                log::error!("cannot map committed vectors: {e}");
            }
        });
        Ok(first as i64)
    }

    /// Stores a document's chunks and their full-text rows, with their
    /// vectors when given (one per chunk). `text_bytes` is the length of the
    /// document's text, which decides whether the chunks keep a copy of
    /// theirs ([`SHARED_TEXT_MAX_BYTES`]).
    pub(super) fn insert_chunks(
        &mut self,
        document_key: i64,
        text_bytes: usize,
        chunks: &[NewChunk],
        vectors: Option<&[Vec<f32>]>,
    ) -> Result<Vec<i64>> {
        let shared = text_bytes <= SHARED_TEXT_MAX_BYTES;
        let first_slot = match vectors {
            Some(v) if !v.is_empty() => {
                debug_assert_eq!(v.len(), chunks.len());
                Some(self.append_vectors(v)?)
            }
            _ => None,
        };
        let fts = self.fts_table();
        let insert_chunk = "INSERT INTO chunks(id, tenant_id, document_id, ordinal, byte_start,
                                             byte_end, text, vector_slot)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING";
        // A contentless full-text table takes no upsert clause; REPLACE
        // makes the row's entry the one given, however often it runs.
        let insert_fts =
            format!("INSERT OR REPLACE INTO {fts}(rowid, text, context) VALUES (?1, ?2, ?3)");
        let mut keys = Vec::with_capacity(chunks.len());
        for (ordinal, c) in chunks.iter().enumerate() {
            let key = self.new_id("chunks")?;
            self.conn.insert_new(
                insert_chunk,
                params![
                    key,
                    self.tenant_id,
                    document_key,
                    ordinal as i64,
                    c.start as i64,
                    c.end as i64,
                    if shared { "" } else { c.text.as_str() },
                    first_slot.map(|s| s + ordinal as i64)
                ],
            )?;
            self.exec(&insert_fts, params![key, c.text, c.context])?;
            keys.push(key);
        }
        self.add_to_tenant_count(TenantCount::Chunks, chunks.len() as i64)?;
        Ok(keys)
    }
}

impl TenantReader<'_> {
    /// The text of the last chunk of the latest document from `source`
    /// stored before `document_key` (a document's preceding neighbour).
    pub fn last_chunk_before(&self, source: &str, document_key: i64) -> Result<Option<String>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
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
            .query_row(params![tenant_id, source, document_key], |r| r.get(0))
            .optional()?)
    }

    /// For each of `chunk_keys`, the chunks just before and just after it in
    /// reading order: the neighbouring chunk of the same document, or else
    /// the last (first) chunk of the document from the same source stored
    /// just before (after) it. Documents without a source have no
    /// neighbours beyond their own chunks. One statement for all keys;
    /// keys not of this tenant are left out. Visibility is not checked
    /// here: the chunks are read through [`Self::chunks_by_keys`], which
    /// checks it.
    pub fn adjacent_chunks(&self, chunk_keys: &[i64]) -> Result<Vec<Adjacent>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        if chunk_keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys = serde_json::to_string(chunk_keys).unwrap_or_else(|_| "[]".into());
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id,
                    COALESCE(
                     (SELECT p.id FROM chunks p
                       WHERE p.document_id = c.document_id AND p.ordinal = c.ordinal - 1),
                     (SELECT p.id FROM chunks p
                       WHERE p.document_id = (SELECT o.id FROM documents o
                                               WHERE o.tenant_id = d.tenant_id
                                                 AND o.source = d.source AND o.id < d.id
                                                 AND o.state = 'ready'
                                               ORDER BY o.id DESC LIMIT 1)
                       ORDER BY p.ordinal DESC LIMIT 1)),
                    COALESCE(
                     (SELECT n.id FROM chunks n
                       WHERE n.document_id = c.document_id AND n.ordinal = c.ordinal + 1),
                     (SELECT n.id FROM chunks n
                       WHERE n.document_id = (SELECT o.id FROM documents o
                                               WHERE o.tenant_id = d.tenant_id
                                                 AND o.source = d.source AND o.id > d.id
                                                 AND o.state = 'ready'
                                               ORDER BY o.id ASC LIMIT 1)
                       ORDER BY n.ordinal ASC LIMIT 1))
               FROM json_each(?2) k
               CROSS JOIN chunks c ON c.id = k.value
               CROSS JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?1",
        )?;
        let rows = stmt.query_map(params![tenant_id, keys], |r| {
            Ok(Adjacent {
                chunk_key: r.get(0)?,
                before: r.get(1)?,
                after: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Chunks of a document that have no vector yet.
    pub fn unembedded_chunks(&self, document_key: i64) -> Result<Vec<UnembeddedChunk>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.id, c.ordinal, {},
                    (SELECT {} FROM chunks p
                      WHERE p.document_id = c.document_id AND p.ordinal = c.ordinal - 1)
               FROM chunks c
              WHERE c.tenant_id = ?1 AND c.document_id = ?2 AND c.vector_slot IS NULL
              ORDER BY c.ordinal",
            chunk_text("c"),
            chunk_text("p")
        ))?;
        let rows = stmt.query_map(params![tenant_id, document_key], |r| {
            Ok(UnembeddedChunk {
                chunk_key: r.get(0)?,
                ordinal: r.get(1)?,
                text: r.get(2)?,
                previous: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Number of chunks this tenant has indexed (a kept counter, not a
    /// scan: the query planner reads it on every query).
    pub fn chunk_count(&self) -> Result<i64> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        Ok(self
            .conn
            .prepare_cached("SELECT chunk_count FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| r.get(0))?)
    }

    /// How many chunks match each FTS5 expression, counting no further
    /// than `cap` (so a very common term costs `cap` postings, not all of
    /// them). The expressions must come from the query layer's builder.
    pub fn match_counts(&self, exprs: &[String], cap: i64) -> Result<Vec<i64>> {
        let Some(fts) = self.fts_table() else {
            return Ok(vec![0; exprs.len()]);
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 LIMIT {cap})"
        ))?;
        let mut out = Vec::with_capacity(exprs.len());
        for e in exprs {
            out.push(stmt.query_row(params![e], |r| r.get(0))?);
        }
        Ok(out)
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

    /// Up to `limit` chunks of the visible document `doc_id` with an
    /// ordinal above `after`, in reading order; `None` when this tenant
    /// has no such document (or retention hides it).
    pub fn chunks_of_document(
        &self,
        doc_id: &str,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Option<Vec<DocumentChunk>>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        let v = self.visible;
        let document: Option<i64> = self
            .conn
            .prepare_cached(&format!(
                "SELECT d.id FROM documents d WHERE d.tenant_id = ?1 AND d.doc_id = ?2 AND {VISIBLE}"
            ))?
            .query_row(
                params![tenant_id, doc_id, 0, 0, 0, 0, 0, v.now, v.since],
                |r| r.get(0),
            )
            .optional()?;
        let Some(document) = document else {
            return Ok(None);
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.id, c.ordinal, c.byte_start, c.byte_end, {} FROM chunks c
              WHERE c.document_id = ?1 AND c.ordinal > ?2 ORDER BY c.ordinal LIMIT ?3",
            chunk_text("c")
        ))?;
        let rows = stmt.query_map(params![document, after.unwrap_or(-1), limit as i64], |r| {
            Ok(DocumentChunk {
                chunk_key: r.get(0)?,
                ordinal: r.get(1)?,
                start: r.get(2)?,
                end: r.get(3)?,
                text: r.get(4)?,
            })
        })?;
        Ok(Some(rows.collect::<rusqlite::Result<_>>()?))
    }

    /// The entities mentioned in a chunk (of this tenant), in text order.
    pub fn chunk_mentions(&self, chunk_key: i64) -> Result<Vec<ChunkMention>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.id, e.name, e.kind, m.byte_start, m.byte_end
               FROM mentions m JOIN entities e ON e.id = m.entity_id
              WHERE m.chunk_id = ?1 AND e.tenant_id = ?2
              ORDER BY m.byte_start, m.byte_end, e.id",
        )?;
        let rows = stmt.query_map(params![chunk_key, tenant_id], |r| {
            Ok(ChunkMention {
                entity_id: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                start: r.get(3)?,
                end: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{
        prepare, remember, remember_prepared, temp_store, tenant_rows,
    };
    use crate::store::{Store, Tenant};

    /// Each chunk of the tenant in order: (its own copy, its text as read).
    fn stored_texts(store: &Store, tenant: &Tenant) -> Vec<(String, String)> {
        tenant_rows(
            store,
            tenant,
            &format!(
                "SELECT c.text, {} FROM chunks c WHERE c.tenant_id = ?1 ORDER BY c.id",
                chunk_text("c")
            ),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// Text of about `bytes` bytes, with characters of two, three and four
    /// bytes, in sentences the chunker cuts between.
    fn prose(bytes: usize) -> String {
        let sentence = "Zoë’s café served naïve crêpes 🥞 to the résumé panel. ";
        let mut text = sentence.repeat(bytes / sentence.len() + 1);
        let mut end = bytes.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text
    }

    #[test]
    fn a_small_documents_chunks_keep_no_copy_and_read_back_their_spans() {
        let (_dir, store) = temp_store("chunk-text-once");
        let t = Tenant::new("t").unwrap();
        let text = prose(6_000);
        remember(&store, &t, &text, "user");
        let cut: Vec<String> = prepare(&text).chunks.into_iter().map(|c| c.text).collect();
        let stored = stored_texts(&store, &t);
        assert!(cut.len() > 1, "{} chunks", cut.len());
        assert!(stored.iter().all(|(own, _)| own.is_empty()));
        let read: Vec<String> = stored.into_iter().map(|(_, read)| read).collect();
        assert_eq!(read, cut);
    }

    #[test]
    fn chunks_of_extracted_text_read_back_their_span_of_it() {
        let (_dir, store) = temp_store("chunk-text-extracted");
        let t = Tenant::new("t").unwrap();
        let text = "Ravi’s ferry left pier 7 at dawn.";
        let mut prepared = prepare(text);
        prepared.text = Some(text.to_string());
        let original = format!("<p>{text}</p>");
        remember_prepared(&store, &t, &original, prepared, "user");
        assert_eq!(
            stored_texts(&store, &t),
            [(String::new(), text.to_string())]
        );
    }

    #[test]
    fn past_the_limit_chunks_keep_their_own_copy() {
        for (bytes, shared) in [
            (SHARED_TEXT_MAX_BYTES, true),
            (SHARED_TEXT_MAX_BYTES + 1, false),
        ] {
            let (_dir, store) = temp_store("chunk-text-limit");
            let t = Tenant::new("t").unwrap();
            let text = format!("{}.", "x".repeat(bytes - 1));
            assert_eq!(text.len(), bytes);
            remember(&store, &t, &text, "user");
            let cut: Vec<String> = prepare(&text).chunks.into_iter().map(|c| c.text).collect();
            let stored = stored_texts(&store, &t);
            assert!(
                stored.iter().all(|(own, _)| own.is_empty() == shared),
                "{bytes}"
            );
            let read: Vec<String> = stored.into_iter().map(|(_, read)| read).collect();
            assert_eq!(read, cut, "{bytes}");
        }
    }
}
