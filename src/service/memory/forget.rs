//! Forgetting: deleting the selected documents and everything derived from
//! them, in batches, and reporting what went; and compacting, which makes
//! the full-text index and the vector files let go of what was forgotten.

use serde::Serialize;

use super::{check_optional_len, Memory};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::limits::{MAX_IDEMPOTENCY_KEY_BYTES, MAX_SOURCE_BYTES};
use crate::service::principal::Permission;
use crate::store::{Compaction, DocumentSelector, Forgotten};

/// What a forget did.
#[derive(Debug, Clone, Serialize)]
pub struct ForgetReport {
    /// Documents deleted.
    pub documents: usize,
    pub chunks: usize,
    pub vectors: usize,
    /// Originals deleted (an original another document shares is kept).
    pub originals_deleted: usize,
    /// The first [`FORGET_REPORT_ITEMS`] documents deleted.
    pub forgotten: Vec<Forgotten>,
}

/// Documents deleted per transaction when forgetting by source, so one
/// huge forget does not hold the writer (and every other write) at once.
pub const FORGET_BATCH: usize = 256;

/// Documents listed one by one in a [`ForgetReport`].
pub const FORGET_REPORT_ITEMS: usize = 100;

impl Memory<'_> {
    /// Compacts the caller's tenant (`store::maintenance`): its vector
    /// files are rewritten without forgotten chunks' slots, and its
    /// full-text index merged, which is when forgotten chunks' entries
    /// physically go. Runs between other writes; on a cluster every node
    /// compacts its own files. Needs the admin permission.
    pub fn compact(&self) -> Result<Compaction> {
        self.require_write(Permission::Admin)?;
        self.service.store.compact_tenant(&self.principal.tenant)
    }

    /// Deletes the selected documents and everything derived from them:
    /// chunks, full-text rows, vectors, jobs, idempotency records, originals
    /// no other document shares, and the context they lent a neighbour (see
    /// `store::forget`), with every other version of each (`store::versions`).
    /// Forgetting by source deletes every document from that source,
    /// [`FORGET_BATCH`] per transaction. Each deletion is
    /// audited (who, which document, when; no content).
    pub fn forget(&self, selector: &DocumentSelector) -> Result<ForgetReport> {
        self.require_write(Permission::Ingest)?;
        let (field, value, max) = match selector {
            DocumentSelector::Id(v) => ("document_id", v, MAX_SOURCE_BYTES),
            DocumentSelector::IdempotencyKey(v) => {
                ("idempotency_key", v, MAX_IDEMPOTENCY_KEY_BYTES)
            }
            DocumentSelector::Source(v) => ("source", v, MAX_SOURCE_BYTES),
        };
        check_optional_len(field, &Some(value.clone()), max)?;
        let shared = &self.service.shared;
        let mut report = ForgetReport {
            documents: 0,
            chunks: 0,
            vectors: 0,
            originals_deleted: 0,
            forgotten: Vec::new(),
        };
        loop {
            let wanted = selector.clone();
            let subject = self.principal.subject.clone();
            // A caller forgets only what it sees: the rest is not found.
            let sight = self.principal.sight();
            let batch = self.service.store.write(&self.principal.tenant, move |w| {
                let now = now_ms();
                let mut done = Vec::new();
                let selected = w.select_documents(&wanted, &sight, FORGET_BATCH)?;
                for key in &selected {
                    let forgotten = w.forget_versions(
                        *key,
                        &subject,
                        wanted.kind(),
                        crate::ingest::chunk::CONTEXT_BYTES,
                        now,
                    )?;
                    done.extend(forgotten);
                }
                Ok((selected.len(), done))
            })?;
            let (selected, batch) = batch;
            let more = selected == FORGET_BATCH;
            for f in batch {
                shared.forgotten(&f.document_id);
                report.documents += 1;
                report.chunks += f.chunks;
                report.vectors += f.vectors;
                report.originals_deleted += usize::from(f.original_deleted);
                if report.forgotten.len() < FORGET_REPORT_ITEMS {
                    report.forgotten.push(f);
                }
            }
            if !more || !matches!(selector, DocumentSelector::Source(_)) {
                break;
            }
        }
        if report.documents > 0 {
            // The next document of a forgotten one's source waits for a
            // vector without the forgotten context: compute it now.
            self.service.worker.wake();
        }
        if report.documents == 0 {
            return Err(Error::NotFound(format!(
                "no document in this memory matches that {field}"
            )));
        }
        Ok(report)
    }
}
