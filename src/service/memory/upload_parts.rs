//! An upload larger than one document, stored as a series of parts.
//!
//! A document holds at most [`MAX_CONTENT_BYTES`]: its original is one
//! row, exported as one line, indexed in one write. A verified upload
//! larger than that (up to [`MAX_UPLOAD_BYTES`]) must be text ([`SPLIT_KINDS`],
//! refused at declaration otherwise) and is stored as part documents of at
//! most [`MAX_CONTENT_BYTES`] each, cut after a line break near that size
//! (else between two UTF-8 characters), so each part is valid text and the
//! parts' originals, in order, are the file byte for byte.
//!
//! Memory stays bounded whatever the file's size: the file is read from
//! its temporary copy one part at a time, once to plan the cuts (checking
//! the text, taking digests) and once as the writer stores each part. The
//! parts are not extracted here: the ingestion worker indexes each from
//! its stored original, a few at a time.
//!
//! Acknowledgement is all or nothing: every part is admitted in one
//! transaction of the writer (documents, originals, journal rows), so a
//! kill before it commits stores no part and one after leaves every part
//! journalled, indexed after the restart. The `PUT` is answered only after
//! that commit.
//!
//! Every part carries the upload's `source` (the declared one, else the
//! file name), the declared metadata with `upload: {sha256, filename,
//! part, parts}` added, and a title ending "(part i of n)". An
//! `idempotency_key` covers the whole upload: the first part is stored
//! under the key itself, part i under `{key}#part-{i}`, so a retry of the
//! same upload replays every part and another request under the key is a
//! conflict. Parts are never deduplicated against stored content (two
//! parts of one file may have the same text).

use serde::Serialize;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::time::{Duration, Instant};

use super::content::title_for;
use super::ingest::{checked_metadata, metadata_source, IngestReceipt, IngestRequest};
use super::uploads::UploadDeclaration;
use super::Memory;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::ids;
use crate::ingest::media::{self, MediaKind};
use crate::ingest::worker::JobOutcome;
use crate::limits::{INGEST_WAIT_MS, MAX_CONTENT_BYTES, MAX_UPLOAD_BYTES};
use crate::store::{AdmitOutcome, NewDocument, Replaces};

/// The kinds an upload larger than one document may be: text that stays
/// text when cut between lines. JSON would not parse in parts; PDF,
/// images and audio cannot be cut at all.
pub const SPLIT_KINDS: &[MediaKind] = &[MediaKind::PlainText, MediaKind::Markdown];

/// A part is cut after the last line break in the last half of its
/// window; with none there, between two characters.
const LINE_SEARCH_FRACTION: usize = 2;

/// The kind a declared upload larger than [`MAX_CONTENT_BYTES`] is stored
/// as: its declared media type, else its file name's extension, else
/// plain text (the bytes are checked to be UTF-8 when they come). Any
/// other kind is refused, naming the limit.
pub fn split_kind(declaration: &UploadDeclaration) -> Result<MediaKind> {
    let declared = declaration
        .media_type
        .as_deref()
        .filter(|m| !m.eq_ignore_ascii_case("application/octet-stream"));
    let kind = match declared {
        Some(mt) => media::from_media_type(mt).ok_or_else(|| {
            Error::invalid(format!(
                "media_type {mt:?} is not supported; a file of more than {MAX_CONTENT_BYTES} \
                 bytes (MAX_CONTENT_BYTES) must be text/plain or text/markdown"
            ))
        })?,
        None => media::from_filename(&declaration.filename).unwrap_or(MediaKind::PlainText),
    };
    if SPLIT_KINDS.contains(&kind) {
        return Ok(kind);
    }
    Err(Error::LimitExceeded(format!(
        "`upload.size` is {} bytes; a {} file may have at most {MAX_CONTENT_BYTES} bytes \
         (MAX_CONTENT_BYTES): only text/plain and text/markdown files, up to \
         {MAX_UPLOAD_BYTES} bytes (MAX_UPLOAD_BYTES), are stored as a series of parts",
        declaration.size,
        kind.media_type()
    )))
}

/// Where one part lies in the file, and what its admission needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PartSpan {
    start: u64,
    len: usize,
    sha256: String,
    content_key: Option<String>,
}

/// Cuts `size` bytes of `file` into parts of at most `max_part` bytes,
/// reading one window of `max_part` bytes at a time. Refuses a file that
/// is not UTF-8 text.
fn plan_parts<R: Read + Seek>(
    file: &mut R,
    size: u64,
    max_part: usize,
    kind: MediaKind,
) -> Result<Vec<PartSpan>> {
    let mut window = Vec::with_capacity(max_part);
    let mut parts = Vec::new();
    let mut start = 0u64;
    while start < size {
        let want = (size - start).min(max_part as u64) as usize;
        window.resize(want, 0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut window)?;
        let last = start + want as u64 == size;
        let len = if last { want } else { cut_point(&window) };
        let part = &window[..len];
        if std::str::from_utf8(part).is_err() {
            return Err(Error::invalid(format!(
                "the file is not UTF-8 text (near byte {start}); a file of more than \
                 {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES) must be text/plain or \
                 text/markdown"
            )));
        }
        parts.push(PartSpan {
            start,
            len,
            sha256: ids::sha256_hex(part),
            content_key: crate::ingest::content_key(kind, part),
        });
        start += len as u64;
    }
    Ok(parts)
}

/// Where to cut a full window: after its last line break in the last
/// `1 / LINE_SEARCH_FRACTION` of it, else before the last character that
/// starts in its last four bytes (a UTF-8 continuation byte never starts
/// one; a window with none there is not UTF-8, and is refused whole).
fn cut_point(window: &[u8]) -> usize {
    let from = window.len() - window.len() / LINE_SEARCH_FRACTION;
    if let Some(at) = window[from..].iter().rposition(|&b| b == b'\n') {
        return from + at + 1;
    }
    (window.len().saturating_sub(4).max(1)..window.len())
        .rev()
        .find(|&i| window[i] & 0xC0 != 0x80)
        .unwrap_or(window.len())
}

/// One part of an upload stored in parts, as the receipt lists it.
#[derive(Debug, Clone, Serialize)]
pub struct PartReceipt {
    pub document_id: String,
    /// Its number, from 1.
    pub part: usize,
    /// `pending`, `ready` or `failed`, as a single document's.
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<i64>,
}

/// One part's document, all but its bytes, which the writer reads.
struct PartDocument {
    doc: NewDocument,
    start: u64,
    len: usize,
}

impl Memory<'_> {
    /// Stores a verified upload of more than [`MAX_CONTENT_BYTES`] as a
    /// series of parts (see the module docs), reading `file` (its `size`
    /// bytes, already checked against `declaration`). `req` is the ingest
    /// it was declared for. Answers once every part is acknowledged and,
    /// with `wait`, indexed (or [`INGEST_WAIT_MS`] passed): one receipt
    /// whose `document_id` is the first part's and whose `parts` lists
    /// them all.
    pub fn ingest_upload_parts(
        &self,
        mut req: IngestRequest,
        declaration: &UploadDeclaration,
        mut file: File,
    ) -> Result<IngestReceipt> {
        let kind = split_kind(declaration)?;
        let filename = declaration.filename.clone();
        req.source = req
            .source
            .take()
            .or_else(|| metadata_source(&req.metadata))
            .or_else(|| Some(filename.clone()));
        let (_, checked) = self.check_request(req)?;
        let spans = plan_parts(&mut file, declaration.size, MAX_CONTENT_BYTES, kind)?;
        let count = spans.len();
        let first_len = spans.first().map_or(0, |p| p.len);
        let mut first = vec![0u8; first_len];
        file.seek(SeekFrom::Start(0))?;
        file.read_exact(&mut first)?;
        let metadata = checked.metadata.as_object().expect("metadata is an object");
        let base_title = checked
            .title
            .clone()
            .or_else(|| title_for(&Some(filename.clone()), metadata, None, &first, kind));
        drop(first);
        let media_type = kind.media_type().to_string();
        let sight = self.principal.sight();
        let mut documents = Vec::with_capacity(count);
        for (i, span) in spans.into_iter().enumerate() {
            let number = i + 1;
            let mut part_metadata = metadata.clone();
            part_metadata.insert(
                "upload".into(),
                json!({
                    "sha256": declaration.sha256,
                    "filename": filename,
                    "part": number,
                    "parts": count,
                }),
            );
            let part_metadata = Value::Object(part_metadata);
            let metadata_json = checked_metadata(&part_metadata)?;
            let key = checked.idempotency_key.as_ref().map(|k| match number {
                1 => k.clone(),
                n => format!("{k}#part-{n}"),
            });
            let idempotency = checked.idempotency_as(
                key,
                &media_type,
                &span.sha256,
                &part_metadata,
                &Some(filename.clone()),
            );
            let title = base_title
                .as_ref()
                .map(|t| format!("{t} (part {number} of {count})"));
            documents.push(PartDocument {
                doc: NewDocument {
                    doc_id: ids::new_document_id(),
                    source: checked.source.clone(),
                    title,
                    media_type: media_type.clone(),
                    original: Vec::new(),
                    sha256: span.sha256,
                    metadata: metadata_json,
                    provenance: checked.provenance.clone(),
                    created_by: self.principal.subject.clone(),
                    idempotency,
                    expires_at: checked.expires_at,
                    content_key: span.content_key,
                    dedupe: false,
                    // The first part supersedes what the upload replaces;
                    // the others must not supersede their own first part.
                    replaces: if number == 1 {
                        checked.replaces.clone()
                    } else {
                        Replaces::default()
                    },
                    sight: sight.clone(),
                    scopes: checked.scopes.clone(),
                },
                start: span.start,
                len: span.len,
            });
        }
        let doc_ids: Vec<String> = documents.iter().map(|d| d.doc.doc_id.clone()).collect();
        let lens: Vec<usize> = documents.iter().map(|d| d.len).collect();
        let shared = &self.service.shared;
        let waiting: Vec<_> = match checked.wait {
            true => doc_ids
                .iter()
                .map(|id| shared.waiters.register(id))
                .collect(),
            false => Vec::new(),
        };
        let admitted = self
            .service
            .store
            .queue_write(&self.principal.tenant, move |w| {
                let now = now_ms();
                let mut outcomes = Vec::with_capacity(documents.len());
                for PartDocument {
                    mut doc,
                    start,
                    len,
                } in documents
                {
                    let mut bytes = vec![0u8; len];
                    file.seek(SeekFrom::Start(start))
                        .and_then(|_| file.read_exact(&mut bytes))
                        .map_err(|e| Error::internal(format!("reading an upload's part: {e}")))?;
                    doc.original = bytes;
                    outcomes.push(w.admit(doc, now)?);
                }
                Ok(outcomes)
            })
            .and_then(|queued| queued.wait());
        let admitted = match admitted {
            Ok(a) => a,
            Err(e) => {
                for id in &doc_ids {
                    shared.waiters.forget(id);
                }
                return Err(e);
            }
        };
        self.service.worker.wake();
        self.parts_receipt(admitted, &lens, waiting, declaration.size, &media_type)
    }

    /// The receipt of an upload's admitted parts (of `lens` bytes each),
    /// waiting (with `waiting`, one receiver per part) up to
    /// [`INGEST_WAIT_MS`] in all for them to be indexed.
    fn parts_receipt(
        &self,
        admitted: Vec<AdmitOutcome>,
        lens: &[usize],
        waiting: Vec<crossbeam_channel::Receiver<JobOutcome>>,
        bytes: u64,
        media_type: &str,
    ) -> Result<IngestReceipt> {
        let shared = &self.service.shared;
        let deadline = Instant::now() + Duration::from_millis(INGEST_WAIT_MS);
        let mut parts = Vec::with_capacity(admitted.len());
        let mut superseded = Vec::new();
        let replay = admitted.iter().all(|a| a.replayed);
        for (i, a) in admitted.into_iter().enumerate() {
            self.note_admitted(&a.doc_id);
            let rx = waiting.get(i);
            let outcome = match (a.replayed, rx) {
                (false, Some(rx)) => {
                    let got = self.await_outcome_until(rx, &a.doc_id, deadline);
                    if got.is_none() || matches!(got, Some(JobOutcome::Deferred(_))) {
                        shared.waiters.forget(&a.doc_id);
                    }
                    got
                }
                _ => {
                    shared.waiters.forget(&a.doc_id);
                    None
                }
            };
            let (state, chunks, error) = match outcome {
                Some(JobOutcome::Indexed { chunks }) => ("ready".into(), Some(chunks as i64), None),
                Some(JobOutcome::Failed(why)) => ("failed".into(), None, Some(why)),
                Some(JobOutcome::Deferred(why)) => ("pending".into(), None, Some(why)),
                None => {
                    // Not waited for (or not in time): as the store has it.
                    let stored = self.receipt_from_store(&a.doc_id, 0, a.replayed)?;
                    (stored.state, stored.chunks, stored.error)
                }
            };
            if state == "pending" {
                self.note_unindexed(&a.doc_id);
            }
            superseded.extend(a.superseded);
            parts.push(PartReceipt {
                document_id: a.doc_id,
                part: i + 1,
                state,
                error,
                bytes: lens[i],
                chunks,
            });
        }
        let state = if parts.iter().all(|p| p.state == "ready") {
            "ready"
        } else if parts.iter().any(|p| p.state == "failed") {
            "failed"
        } else {
            "pending"
        };
        let chunks = (state == "ready").then(|| parts.iter().filter_map(|p| p.chunks).sum());
        Ok(IngestReceipt {
            document_id: parts
                .first()
                .map(|p| p.document_id.clone())
                .unwrap_or_default(),
            state: state.to_string(),
            error: parts.iter().find_map(|p| p.error.clone()),
            media_type: media_type.to_string(),
            bytes: bytes as usize,
            chunks,
            idempotent_replay: replay,
            duplicate_of: None,
            supersedes: superseded,
            near_duplicates: Vec::new(),
            parts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn plan(bytes: &[u8], max_part: usize) -> Result<Vec<PartSpan>> {
        plan_parts(
            &mut Cursor::new(bytes),
            bytes.len() as u64,
            max_part,
            MediaKind::PlainText,
        )
    }

    fn slices<'a>(bytes: &'a [u8], parts: &[PartSpan]) -> Vec<&'a [u8]> {
        parts
            .iter()
            .map(|p| &bytes[p.start as usize..p.start as usize + p.len])
            .collect()
    }

    #[test]
    fn parts_are_cut_after_a_line_near_the_limit_and_join_to_the_file() {
        let text = "a line of text\n".repeat(100);
        let parts = plan(text.as_bytes(), 100).unwrap();
        let pieces = slices(text.as_bytes(), &parts);
        assert_eq!(pieces.concat(), text.as_bytes());
        for piece in &pieces[..pieces.len() - 1] {
            assert!(piece.ends_with(b"\n"), "{piece:?}");
            assert!(piece.len() > 50 && piece.len() <= 100, "{}", piece.len());
        }
        assert_eq!(parts[1].sha256, ids::sha256_hex(pieces[1]));
    }

    #[test]
    fn a_text_without_lines_is_cut_between_characters() {
        // Three-byte characters: a 100-byte window ends inside one.
        let text = "語".repeat(200);
        let parts = plan(text.as_bytes(), 100).unwrap();
        let pieces = slices(text.as_bytes(), &parts);
        assert_eq!(pieces.concat(), text.as_bytes());
        for piece in &pieces {
            assert!(std::str::from_utf8(piece).is_ok());
        }
        for piece in &pieces[..pieces.len() - 1] {
            assert!(piece.len() <= 100 && piece.len() >= 96, "{}", piece.len());
        }
    }

    #[test]
    fn a_file_of_exactly_one_window_is_one_part_and_bytes_not_text_are_refused() {
        let text = "x".repeat(100);
        assert_eq!(plan(text.as_bytes(), 100).unwrap().len(), 1);
        let mut bytes = "ok\n".repeat(60).into_bytes();
        bytes[130] = 0xff;
        let refused = plan(&bytes, 100).unwrap_err();
        assert!(refused.client_message().contains("not UTF-8"), "{refused}");
    }

    #[test]
    fn only_text_may_be_declared_past_one_document() {
        let declared = |filename: &str, media_type: Option<&str>| UploadDeclaration {
            filename: filename.into(),
            media_type: media_type.map(str::to_string),
            size: MAX_CONTENT_BYTES as u64 + 1,
            sha256: "ab".repeat(32),
        };
        assert_eq!(
            split_kind(&declared("a.md", None)).unwrap(),
            MediaKind::Markdown
        );
        assert_eq!(
            split_kind(&declared("a.csv", None)).unwrap(),
            MediaKind::PlainText
        );
        assert_eq!(
            split_kind(&declared("a.bin", Some("text/plain"))).unwrap(),
            MediaKind::PlainText
        );
        for (name, mt) in [
            ("a.pdf", None),
            ("a.json", None),
            ("a.txt", Some("image/png")),
        ] {
            let e = split_kind(&declared(name, mt)).unwrap_err();
            assert_eq!(e.code(), "limit_exceeded");
            assert!(e.client_message().contains("MAX_CONTENT_BYTES"), "{e}");
        }
    }
}
