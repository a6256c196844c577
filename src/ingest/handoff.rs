//! Work prepared by request threads, handed over to the ingestion worker.
//!
//! A request thread prepares its document (extraction, chunks, vectors,
//! graph fragment) in parallel with other requests and offers the result
//! here, keyed by document id, before the document is admitted; the
//! worker takes it when it indexes the job. While the writer is busy with
//! a batch, the worker also resolves the entity names of offered documents
//! ahead ([`Handoff::resolve_ahead`], see `store::name_hints`), oldest
//! first: those are the next batch.
//!
//! Must never: hold more than [`MAX_HANDOFF_BYTES`] of work (beyond it,
//! work is dropped and the worker derives it again from the stored
//! original), or hold its lock while reading the store.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use super::Prepared;
use crate::graph::fragment::Fragment;
use crate::store::{NameHints, Store, Tenant};

/// Prepared work held in memory for the worker, at most (64 MiB). Beyond
/// it, work is dropped and the worker re-derives it from the stored
/// original: memory stays bounded when ingests outrun indexing.
pub const MAX_HANDOFF_BYTES: usize = 64 * 1024 * 1024;

/// Documents whose names are resolved ahead at a time (in one read
/// snapshot), between two looks at whether the writer still holds a
/// batch. Each snapshot starts with a cold page cache: 32 rather than 8
/// cost the worker 0.32 instead of 0.38 ms per entity-rich document.
pub const RESOLVE_AHEAD_DOCS: usize = 32;

/// Work prepared by request threads, keyed by document id. Offered before
/// the document is admitted (so the worker can never look for it too
/// early) and withdrawn if the admission does not store a new document.
#[derive(Default)]
pub struct Handoff {
    inner: Mutex<HandoffInner>,
}

#[derive(Default)]
struct HandoffInner {
    work: HashMap<String, Offered>,
    bytes: usize,
    /// Offered documents whose names are not resolved ahead yet, oldest
    /// first (some may have been taken since).
    unresolved: VecDeque<String>,
}

struct Offered {
    tenant: Tenant,
    prepared: Prepared,
}

impl Handoff {
    /// Offers `tenant`'s prepared work for `doc_id`; dropped if over
    /// budget.
    pub fn offer(&self, doc_id: &str, tenant: &Tenant, prepared: Prepared) {
        let weight = prepared.weight();
        let mut inner = self.lock();
        if inner.bytes + weight > MAX_HANDOFF_BYTES {
            return;
        }
        inner.bytes += weight;
        if !prepared.graph.entities.is_empty() {
            // Ids taken since they were queued are dropped now and then, so
            // the queue stays within the work held.
            if inner.unresolved.len() > 2 * inner.work.len() + RESOLVE_AHEAD_DOCS {
                let HandoffInner {
                    work, unresolved, ..
                } = &mut *inner;
                unresolved.retain(|id| work.contains_key(id));
            }
            inner.unresolved.push_back(doc_id.to_string());
        }
        let offered = Offered {
            tenant: tenant.clone(),
            prepared,
        };
        inner.work.insert(doc_id.to_string(), offered);
    }

    /// Takes back (or takes, for the worker) the work for `doc_id`.
    /// Whether work for `doc_id` is held (offered and not yet taken).
    pub fn holds(&self, doc_id: &str) -> bool {
        self.lock().work.contains_key(doc_id)
    }

    pub fn take(&self, doc_id: &str) -> Option<Prepared> {
        let mut inner = self.lock();
        let p = inner.work.remove(doc_id)?.prepared;
        inner.bytes -= p.weight();
        Some(p)
    }

    /// Resolves the names of offered documents in read snapshots of
    /// `store`, [`RESOLVE_AHEAD_DOCS`] at a time, oldest first, until none
    /// is left or `holding` (the writer still holds a batch) turns false:
    /// the next batch is then due, and what is left goes without hints.
    pub fn resolve_ahead(&self, store: &Store, holding: impl Fn() -> bool) {
        loop {
            let offered = self.unresolved(RESOLVE_AHEAD_DOCS);
            if offered.is_empty() {
                return;
            }
            let mut tenants: Vec<&Tenant> = offered.iter().map(|o| &o.1).collect();
            tenants.sort_by_key(|t| t.name());
            tenants.dedup();
            for tenant in tenants {
                let (ids, fragments): (Vec<&str>, Vec<&Fragment>) = offered
                    .iter()
                    .filter(|o| o.1 == *tenant)
                    .map(|o| (o.0.as_str(), &o.2))
                    .unzip();
                let resolved = store
                    .reader(tenant)
                    .and_then(|r| r.resolve_names(&fragments));
                match resolved {
                    Ok(hints) => {
                        for (doc_id, names) in ids.into_iter().zip(hints) {
                            self.resolved(doc_id, names);
                        }
                    }
                    // Only a saving: the writer looks the names up itself.
                    Err(e) => log::debug!("names not resolved ahead: {e}"),
                }
            }
            if !holding() {
                return;
            }
        }
    }

    /// Up to `limit` offered documents whose names were not resolved
    /// ahead, oldest first: their ids, tenants and graph fragments
    /// (copied: resolving them must not hold the lock the request threads
    /// offer under).
    fn unresolved(&self, limit: usize) -> Vec<(String, Tenant, Fragment)> {
        let mut inner = self.lock();
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(doc_id) = inner.unresolved.pop_front() else {
                break;
            };
            if let Some(offered) = inner.work.get(&doc_id) {
                let (tenant, graph) = (offered.tenant.clone(), offered.prepared.graph.clone());
                out.push((doc_id, tenant, graph));
            }
        }
        out
    }

    /// Attaches names resolved ahead to `doc_id`'s work, if still offered.
    fn resolved(&self, doc_id: &str, names: Option<NameHints>) {
        if let Some(offered) = self.lock().work.get_mut(doc_id) {
            offered.prepared.names = names;
        }
    }

    fn lock(&self) -> MutexGuard<'_, HandoffInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(text: &str) -> Prepared {
        let embedder = crate::embed::BuiltinEmbedder;
        crate::ingest::prepare(
            super::super::media::MediaKind::PlainText,
            text.as_bytes(),
            &embedder,
        )
        .unwrap()
    }

    #[test]
    fn names_are_resolved_oldest_first_and_only_for_work_still_held() {
        let handoff = Handoff::default();
        let t = Tenant::new("t").unwrap();
        handoff.offer("a", &t, prepared("Dana Scully met Fox Mulder."));
        handoff.offer("b", &t, prepared("no names here at all"));
        handoff.offer("c", &t, prepared("Walter Skinner works at Acme."));
        handoff.offer("d", &t, prepared("Acme hired Dana Scully."));
        assert!(handoff.take("a").is_some());
        let ids: Vec<String> = handoff.unresolved(2).into_iter().map(|o| o.0).collect();
        assert_eq!(ids, ["c", "d"], "taken and nameless work is skipped");
        assert!(handoff.unresolved(2).is_empty(), "each is resolved once");
    }

    #[test]
    fn the_queue_of_unresolved_work_stays_within_the_work_held() {
        let handoff = Handoff::default();
        let t = Tenant::new("t").unwrap();
        let p = prepared("Dana Scully met Fox Mulder.");
        for i in 0..10_000 {
            let id = format!("doc-{i}");
            handoff.offer(&id, &t, p.clone());
            handoff.take(&id);
        }
        let inner = handoff.lock();
        assert!(inner.work.is_empty());
        assert!(
            inner.unresolved.len() <= RESOLVE_AHEAD_DOCS + 1,
            "{}",
            inner.unresolved.len()
        );
    }
}
