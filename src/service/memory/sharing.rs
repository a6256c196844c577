//! Memory scopes at the service: which scopes a caller's writes go into,
//! and sharing documents it sees into a scope it may write (see
//! `store::sharing` for how reads are limited).

use serde::Serialize;

use super::Memory;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::limits::MAX_SHARE_DOCUMENTS;
use crate::service::principal::{MemoryAccess, Permission};
use crate::store::{DocumentFilter, DocumentOrder, MemoryScope};

/// What a share names: documents by id, or those a filter matches.
#[derive(Debug, Clone)]
pub enum ShareTarget {
    Documents(Vec<String>),
    Filter(DocumentFilter),
}

/// What a share did.
#[derive(Debug, Clone, Serialize)]
pub struct ShareReceipt {
    pub scope: String,
    /// Documents granted into the scope now.
    pub shared: Vec<String>,
    /// Documents that were in the scope already (their first grant stands).
    pub already_shared: Vec<String>,
    pub granted_by: String,
    pub granted_at: i64,
}

/// The refusal every writing operation gives the anonymous caller.
pub const ANONYMOUS_REFUSAL: &str = "anonymous callers may only query the public memory scope; \
     sign in (send an Authorization: Bearer token) to store, update, share, forget or use \
     working memory";

/// The memory scope names `names`, each checked.
fn parse_names(names: &[String]) -> Result<Vec<MemoryScope>> {
    names
        .iter()
        .map(|n| MemoryScope::new(n).map_err(|e| Error::invalid(format!("scope {n:?}: {e}"))))
        .collect()
}

impl Memory<'_> {
    /// Refuses a writing operation to a caller that may not write: the
    /// anonymous caller first, with the way out, then by permission.
    pub(in crate::service) fn require_write(&self, p: Permission) -> Result<()> {
        self.refuse_anonymous()?;
        self.require(p)
    }

    /// Refuses the anonymous caller what is not a read of persistent
    /// memory: writes, and working memory (one set of sessions every
    /// anonymous client would share).
    pub(in crate::service) fn refuse_anonymous(&self) -> Result<()> {
        if self.principal.anonymous {
            return Err(Error::Forbidden(ANONYMOUS_REFUSAL.into()));
        }
        Ok(())
    }

    /// The memory scopes document `doc_id` is in, with who granted each
    /// and when (empty for a document this caller does not see).
    pub fn document_scopes(&self, doc_id: &str) -> Result<Vec<crate::store::ScopeGrant>> {
        self.require(Permission::Query)?;
        self.reader()?.document_scopes(doc_id)
    }

    /// The scopes an ingest naming `names` stores into: those named, each
    /// one the caller may write; when none is named, a scoped caller's
    /// first writable scope (an unrestricted caller's document is then in
    /// no scope).
    pub(super) fn scopes_to_store_into(&self, names: &[String]) -> Result<Vec<MemoryScope>> {
        self.refuse_anonymous()?;
        let named = parse_names(names)?;
        if named.is_empty() {
            return Ok(match &self.principal.memory {
                MemoryAccess::Unrestricted => Vec::new(),
                MemoryAccess::Scoped(_) => vec![self
                    .principal
                    .default_write_scope()
                    .cloned()
                    .ok_or_else(|| Error::Forbidden(self.no_writable_scope()))?],
            });
        }
        for s in &named {
            if !self.principal.may_write(s) {
                return Err(Error::Forbidden(format!(
                    "this token may not write memory scope {s:?}; {}",
                    self.writable_scopes_phrase()
                )));
            }
        }
        Ok(named)
    }

    fn no_writable_scope(&self) -> String {
        "this token grants no memory scope it may write (its memory_scopes are all `:read`): \
         it can query but not store"
            .into()
    }

    /// "it may write a, b" (or that it may write none).
    fn writable_scopes_phrase(&self) -> String {
        match &self.principal.memory {
            MemoryAccess::Unrestricted => "it may write any".into(),
            MemoryAccess::Scoped(grants) => {
                let w: Vec<&str> = grants
                    .iter()
                    .filter(|g| g.write)
                    .map(|g| g.scope.name())
                    .collect();
                if w.is_empty() {
                    "it may write none".into()
                } else {
                    format!("it may write: {}", w.join(", "))
                }
            }
        }
    }

    /// Grants the documents `target` names (all of which this caller must
    /// see) into `scope` (which it must be able to write). Idempotent: a
    /// document already there keeps its first grant. At most
    /// [`MAX_SHARE_DOCUMENTS`] per call.
    pub fn share(&self, target: &ShareTarget, scope: &str) -> Result<ShareReceipt> {
        self.require_write(Permission::Ingest)?;
        let scope =
            MemoryScope::new(scope).map_err(|e| Error::invalid(format!("scope {scope:?}: {e}")))?;
        if !self.principal.may_write(&scope) {
            return Err(Error::Forbidden(format!(
                "this token may not write memory scope {:?}, so it cannot share into it; {}",
                scope.name(),
                self.writable_scopes_phrase()
            )));
        }
        let reader = self.reader()?;
        let doc_ids: Vec<String> = match target {
            ShareTarget::Documents(ids) => {
                if ids.len() > MAX_SHARE_DOCUMENTS {
                    return Err(Error::LimitExceeded(format!(
                        "{} documents named; at most {MAX_SHARE_DOCUMENTS} per share \
                         (MAX_SHARE_DOCUMENTS)",
                        ids.len()
                    )));
                }
                for id in ids {
                    // One answer for absent and unseen: the id is not the
                    // caller's to confirm.
                    if reader.document(id)?.is_none() {
                        return Err(Error::NotFound(format!(
                            "no document {id:?} in this memory"
                        )));
                    }
                }
                let mut ids = ids.clone();
                ids.dedup();
                ids
            }
            ShareTarget::Filter(filter) => {
                let n = reader.count_documents(filter)?;
                if n as usize > MAX_SHARE_DOCUMENTS {
                    return Err(Error::LimitExceeded(format!(
                        "the filter matches {n} documents; at most {MAX_SHARE_DOCUMENTS} per \
                         share (MAX_SHARE_DOCUMENTS): narrow it"
                    )));
                }
                reader
                    .list_documents_page(DocumentOrder::Newest, None, filter, MAX_SHARE_DOCUMENTS)?
                    .into_iter()
                    .map(|d| d.summary.doc_id)
                    .collect()
            }
        };
        drop(reader);
        let by = self.principal.subject.clone();
        let at = now_ms();
        let granted_scope = scope.clone();
        let outcome = self.service.store.write(&self.principal.tenant, move |w| {
            let mut shared = Vec::new();
            let mut already = Vec::new();
            for id in doc_ids {
                // Forgotten since it was read: nothing to grant.
                let Some(key) = w.document_key(&id)? else {
                    continue;
                };
                if w.grant_scope(key, &granted_scope, &by, at)? {
                    let detail = serde_json::json!({ "scope": granted_scope.name() });
                    w.audit(&by, "share", &id, &detail.to_string(), at)?;
                    shared.push(id);
                } else {
                    already.push(id);
                }
            }
            Ok((shared, already))
        })?;
        Ok(ShareReceipt {
            scope: scope.name().to_string(),
            shared: outcome.0,
            already_shared: outcome.1,
            granted_by: self.principal.subject.clone(),
            granted_at: at,
        })
    }
}
