//! Document versions: a document replaced by a newer one (an update, or an
//! ingest that declares what it supersedes) keeps its row, original bytes,
//! chunks, provenance and time as history. `documents.superseded_by` names
//! the version that replaced it and `superseded_at` when; a current
//! version has neither.
//!
//! The versions of one document form a chain (a tree when one ingest
//! supersedes several documents): every member leads, through
//! `superseded_by`, to the one current version. A version is superseded
//! once at most (no forks), in the same writer transaction that admits its
//! successor, and it then loses its graph evidence (`withdraw_evidence`):
//! a fact only an old version stated is no longer supported.
//!
//! Forgetting any version forgets the whole chain
//! ([`TenantWriter::forget_versions`]); the retention sweep does the same
//! for a current version, and splices a superseded one out of its chain
//! (`forget_document`).

use rusqlite::{params, OptionalExtension};

use super::forget::Forgotten;
use super::tenant::{TenantReader, TenantWriter, VISIBLE};
use crate::error::{Error, Result};
use crate::limits::MAX_SUPERSEDES;

/// What a new document replaces (both empty: nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replaces {
    /// External ids of documents it supersedes; each must be current.
    pub documents: Vec<String>,
    /// Also every current document of the tenant with the new document's
    /// `source`.
    pub source: bool,
    /// Of `documents`, supersede those present and current and pass over
    /// the others, however many: an import restoring the chain an export
    /// recorded, some of whose versions may have been skipped.
    pub if_current: bool,
}

impl Replaces {
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty() && !self.source
    }
}

/// One version in a document's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub doc_id: String,
    /// Unix ms.
    pub created_at: i64,
    /// When a newer version replaced it (Unix ms); `None` for the current.
    pub superseded_at: Option<i64>,
}

impl Version {
    pub fn is_current(&self) -> bool {
        self.superseded_at.is_none()
    }
}

/// The internal keys of every version in the chain of the document with
/// key `?2` of tenant `?1`, as the CTE `chain(id)`: up through
/// `superseded_by` to the current version (a newer version always has the
/// larger key), then down to everything that leads to it. `UNION` (not
/// `UNION ALL`) ends the walk even on a damaged, cyclic chain.
const CHAIN: &str = "WITH RECURSIVE
     up(id) AS (
         SELECT ?2
         UNION
         SELECT u.superseded_by FROM documents u JOIN up ON u.id = up.id
          WHERE u.tenant_id = ?1 AND u.superseded_by IS NOT NULL),
     chain(id) AS (
         SELECT max(c.id) FROM up JOIN documents c ON c.id = up.id AND c.tenant_id = ?1
         UNION
         SELECT c.id FROM documents c JOIN chain ON c.superseded_by = chain.id
          WHERE c.tenant_id = ?1)";

impl TenantWriter<'_> {
    /// The documents a new one replaces, as `(key, external id)`, checked:
    /// each named id is a visible document of this tenant (else not found)
    /// and current (else a conflict naming its current version: versions
    /// never fork); with `replaces.source`, the current documents with
    /// `source`. At most [`MAX_SUPERSEDES`] in all.
    pub(super) fn supersede_targets(
        &self,
        replaces: &Replaces,
        source: Option<&str>,
        sight: &super::Sight,
        now: i64,
    ) -> Result<Vec<(i64, String)>> {
        let too_many = |n: usize| {
            Error::LimitExceeded(format!(
                "this would supersede {n} documents; at most {MAX_SUPERSEDES} at once \
                 (MAX_SUPERSEDES)"
            ))
        };
        let mut targets: Vec<(i64, String)> = Vec::new();
        if replaces.source {
            let source = source.ok_or_else(|| {
                Error::invalid("`replace_source` needs a `source` to name what it replaces")
            })?;
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, doc_id FROM documents
                  WHERE tenant_id = ?1 AND source = ?2 AND superseded_by IS NULL
                    AND (expires_at IS NULL OR expires_at > ?3)
                  ORDER BY id LIMIT ?4",
            )?;
            let rows = stmt.query_map(
                params![self.tenant_id, source, now, MAX_SUPERSEDES as i64 + 1],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            targets = rows.collect::<rusqlite::Result<_>>()?;
            // Documents of the source the caller cannot see stay current.
            let mut seen = Vec::with_capacity(targets.len());
            for t in targets {
                if self.admits(sight, t.0)? {
                    seen.push(t);
                }
            }
            targets = seen;
            if targets.len() > MAX_SUPERSEDES {
                return Err(too_many(targets.len()));
            }
        }
        for doc_id in &replaces.documents {
            let found: Option<(i64, Option<i64>)> = self
                .conn
                .prepare_cached(
                    "SELECT id, superseded_by FROM documents
                      WHERE tenant_id = ?1 AND doc_id = ?2
                        AND (expires_at IS NULL OR expires_at > ?3)",
                )?
                .query_row(params![self.tenant_id, doc_id, now], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()?;
            let found = match found {
                Some((key, _)) if !self.admits(sight, key)? => None,
                found => found,
            };
            let (key, superseded_by) = match found {
                Some(found) => found,
                None if replaces.if_current => continue,
                None => {
                    return Err(Error::NotFound(format!(
                        "no document {doc_id:?} in this memory to supersede"
                    )))
                }
            };
            if superseded_by.is_some() && replaces.if_current {
                continue;
            }
            if superseded_by.is_some() {
                let current = self.current_version(key)?.unwrap_or_default();
                return Err(Error::Conflict(format!(
                    "document {doc_id} was already superseded; its current version is \
                     {current}: supersede that one (a version is replaced once)"
                )));
            }
            if !targets.iter().any(|(k, _)| *k == key) {
                targets.push((key, doc_id.clone()));
            }
        }
        if targets.len() > MAX_SUPERSEDES && !replaces.if_current {
            return Err(too_many(targets.len()));
        }
        Ok(targets)
    }

    /// Marks `targets` superseded by the document with key `by` (external
    /// id `by_id`) and withdraws their graph evidence, recording `subject`
    /// in the audit trail.
    pub(super) fn supersede(
        &mut self,
        targets: &[(i64, String)],
        by: i64,
        by_id: &str,
        subject: &str,
        now: i64,
    ) -> Result<()> {
        if targets.is_empty() {
            return Ok(());
        }
        let mut withdrew = false;
        for (key, _) in targets {
            self.exec(
                "UPDATE documents SET superseded_by = ?3, superseded_at = ?4
                  WHERE tenant_id = ?1 AND id = ?2",
                params![self.tenant_id, key, by, now],
            )?;
            withdrew |= self.withdraw_evidence(*key)?;
        }
        if withdrew {
            self.graph_changed_under_summaries()?;
        }
        let ids: Vec<&str> = targets.iter().map(|(_, id)| id.as_str()).collect();
        let detail = serde_json::json!({ "supersedes": ids }).to_string();
        self.audit(subject, "supersede", by_id, &detail, now)?;
        Ok(())
    }

    /// Whether the document has been superseded (the indexer then records
    /// no graph evidence for it: see `complete_job`).
    pub(super) fn is_superseded(&self, document_key: i64) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT superseded_by IS NOT NULL FROM documents WHERE tenant_id = ?1 AND id = ?2",
            )?
            .query_row(params![self.tenant_id, document_key], |r| r.get(0))
            .optional()?
            .unwrap_or(false))
    }

    /// A version superseded before the indexer reached it keeps its chunks
    /// (history) but supports no fact: the evidence just recorded for it is
    /// withdrawn again, in the same transaction.
    pub(super) fn unsupport_if_superseded(&mut self, document_key: i64) -> Result<()> {
        if self.is_superseded(document_key)? {
            self.withdraw_evidence(document_key)?;
        }
        Ok(())
    }

    /// The external id of the current version of the document's chain.
    fn current_version(&self, document_key: i64) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "{CHAIN} SELECT d.doc_id FROM documents d JOIN chain ON d.id = chain.id
                  WHERE d.superseded_by IS NULL ORDER BY d.id DESC LIMIT 1"
            ))?
            .query_row(params![self.tenant_id, document_key], |r| r.get(0))
            .optional()?)
    }

    /// The keys of every version in the document's chain (itself
    /// included), newest first; empty if it is not this tenant's.
    pub fn version_chain(&self, document_key: i64) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "{CHAIN} SELECT id FROM chain WHERE id IS NOT NULL ORDER BY id DESC"
        ))?;
        let rows = stmt.query_map(params![self.tenant_id, document_key], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Forgets every version in the document's chain (see
    /// `forget_document`), newest first, so forgetting an old version
    /// never leaves its successors standing: what forgetting a document
    /// means once it has versions.
    pub fn forget_versions(
        &mut self,
        document_key: i64,
        subject: &str,
        selected_by: &str,
        context_bytes: usize,
        now: i64,
    ) -> Result<Vec<Forgotten>> {
        let mut done = Vec::new();
        for key in self.version_chain(document_key)? {
            done.extend(self.forget_document(key, subject, selected_by, context_bytes, now)?);
        }
        Ok(done)
    }
}

impl TenantReader<'_> {
    /// The visible versions in the chain of the document with external id
    /// `doc_id`, oldest first; empty if there is no such document.
    pub fn versions(&self, doc_id: &str) -> Result<Vec<Version>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let key: Option<i64> = self
            .conn
            .prepare_cached("SELECT id FROM documents WHERE tenant_id = ?1 AND doc_id = ?2")?
            .query_row(params![tenant_id, doc_id], |r| r.get(0))
            .optional()?;
        let Some(key) = key else {
            return Ok(Vec::new());
        };
        let v = self.visible;
        let mut stmt = self.conn.prepare_cached(&format!(
            "{CHAIN} SELECT d.doc_id, d.created_at, d.superseded_at
                       FROM documents d JOIN chain ON d.id = chain.id
                      WHERE {VISIBLE} ORDER BY d.id"
        ))?;
        let rows = stmt.query_map(
            params![tenant_id, key, 0, 0, 0, 0, 0, v.now, v.since],
            |r| {
                Ok(Version {
                    doc_id: r.get(0)?,
                    created_at: r.get(1)?,
                    superseded_at: r.get(2)?,
                })
            },
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The external ids of the documents `doc_id` superseded directly
    /// (oldest first): what the receipt of its ingest names.
    pub fn superseded_by_document(&self, doc_id: &str) -> Result<Vec<String>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT o.doc_id FROM documents o
              WHERE o.superseded_by = (SELECT id FROM documents WHERE tenant_id = ?1 AND doc_id = ?2)
                AND o.tenant_id = ?1
              ORDER BY o.id",
        )?;
        let rows = stmt.query_map(params![tenant_id, doc_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::Replaces;
    use crate::clock::now_ms;
    use crate::store::test_support::{plain_document, temp_store};
    use crate::store::{NewDocument, Store, Tenant};

    /// Admits `text` as if written at `at`, expiring at `expires_at`, as a
    /// new version of `replaces`; its external id.
    fn admit(
        store: &Store,
        t: &Tenant,
        text: &str,
        at: i64,
        expires_at: Option<i64>,
        replaces: &[&str],
    ) -> String {
        let doc = NewDocument {
            expires_at,
            replaces: Replaces {
                documents: replaces.iter().map(|s| s.to_string()).collect(),
                ..Replaces::default()
            },
            ..plain_document(text.as_bytes().to_vec())
        };
        store.write(t, move |w| w.admit(doc, at)).unwrap().doc_id
    }

    fn chain(store: &Store, t: &Tenant, id: &str) -> Vec<String> {
        let versions = store.reader(t).unwrap().versions(id).unwrap();
        versions.into_iter().map(|v| v.doc_id).collect()
    }

    #[test]
    fn retention_purging_a_current_version_purges_its_history() {
        let (dir, store) = temp_store("alayasiki-versions-expiry");
        let t = Tenant::new("t").unwrap();
        let now = now_ms();
        let a = admit(&store, &t, "a", now - 10_000, None, &[]);
        let b = admit(&store, &t, "b", now - 9_000, Some(now - 1_000), &[&a]);
        let other = admit(&store, &t, "other", now - 9_000, None, &[]);
        let mut purged: Vec<String> = store
            .purge_expired(&t, 256, 64)
            .unwrap()
            .into_iter()
            .map(|f| f.document_id)
            .collect();
        purged.sort();
        let mut both = vec![a.clone(), b];
        both.sort();
        assert_eq!(purged, both, "the expired current version and its history");
        assert!(chain(&store, &t, &a).is_empty());
        assert_eq!(chain(&store, &t, &other), vec![other]);
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_old_version_expiring_alone_leaves_the_chain_without_it() {
        let (dir, store) = temp_store("alayasiki-versions-splice");
        let t = Tenant::new("t").unwrap();
        let now = now_ms();
        let a = admit(&store, &t, "a", now - 10_000, None, &[]);
        let b = admit(&store, &t, "b", now - 9_000, Some(now - 1_000), &[&a]);
        let c = admit(&store, &t, "c", now - 8_000, None, &[&b]);
        let purged = store.purge_expired(&t, 256, 64).unwrap();
        assert_eq!(purged.len(), 1);
        assert_eq!(purged[0].document_id, b);
        assert_eq!(chain(&store, &t, &a), vec![a.clone(), c.clone()]);
        let row = store.reader(&t).unwrap().document(&a).unwrap().unwrap();
        assert_eq!(row.superseded_by.as_deref(), Some(c.as_str()));
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }
}
