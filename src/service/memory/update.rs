//! Updating a document: storing a new version of it with what the caller
//! changed and everything else kept, which supersedes it (see
//! `store::versions`). The new version is an ingest like any other (its
//! own id, extraction, chunks and graph); the old one stays as history.

use serde_json::{Map, Value};

use super::content::{resolve_content, Content};
use super::ingest::{checked_metadata, metadata_source, IngestReceipt, IngestRequest};
use super::{check_optional_len, Memory};
use crate::error::{Error, Result};
use crate::limits::{MAX_IDEMPOTENCY_KEY_BYTES, MAX_SOURCE_BYTES, MAX_TITLE_BYTES};
use crate::service::principal::Permission;
use crate::store::Replaces;

/// A request to store a new version of a document. What is `None` is
/// kept from the version it replaces.
#[derive(Debug, Clone)]
pub struct UpdateRequest {
    pub document_id: String,
    /// New content; kept: the old version's original bytes, of its type.
    pub content: Option<Content>,
    /// Replaces the metadata whole.
    pub metadata: Option<Map<String, Value>>,
    /// Kept when the content is kept; with new content, taken from it as
    /// an ingest takes it.
    pub title: Option<String>,
    pub source: Option<String>,
    pub wait: bool,
    pub idempotency_key: Option<String>,
}

impl Memory<'_> {
    /// Stores a new version of `document_id` and supersedes it, in one
    /// transaction: the receipt names the new version and, in
    /// `supersedes`, the old one. Provenance and expiry are kept. An
    /// old version that was superseded already is refused (naming its
    /// current version), unless this is a retry under the same
    /// idempotency key, which answers as the first time did.
    pub fn update(&self, req: UpdateRequest) -> Result<IngestReceipt> {
        self.require_write(Permission::Ingest)?;
        if req.content.is_none()
            && req.metadata.is_none()
            && req.title.is_none()
            && req.source.is_none()
        {
            return Err(Error::invalid(
                "an update changes something: give `content`, `metadata`, `title` or `source`",
            ));
        }
        // Everything that can be refused is, before the document is
        // looked up: a bad request reads the same for any id.
        check_optional_len(
            "document_id",
            &Some(req.document_id.clone()),
            MAX_SOURCE_BYTES,
        )?;
        check_optional_len("title", &req.title, MAX_TITLE_BYTES)?;
        check_optional_len("source", &req.source, MAX_SOURCE_BYTES)?;
        check_optional_len(
            "idempotency_key",
            &req.idempotency_key,
            MAX_IDEMPOTENCY_KEY_BYTES,
        )?;
        if let Some(m) = &req.metadata {
            checked_metadata(&Value::Object(m.clone()))?;
        }
        let bare_text = matches!(
            req.content,
            Some(Content::Text {
                media_type: None,
                ..
            })
        );
        let given = req.content.map(resolve_content).transpose()?;
        let old = self.document(&req.document_id)?;
        let scopes = self.scopes_of_new_version(&req.document_id, &old.created_by)?;
        let (content, title) = match given {
            Some((kind, bytes, filename)) => {
                // Bare text edits a text document in its own type: a
                // Markdown note stays Markdown.
                let keeps_type = bare_text
                    && crate::ingest::media::from_media_type(&old.media_type)
                        .is_some_and(|k| k.is_text());
                let media_type = if keeps_type {
                    old.media_type.clone()
                } else {
                    kind.media_type().to_string()
                };
                let content = Content::File {
                    filename,
                    mime_type: Some(media_type),
                    bytes,
                };
                (content, req.title)
            }
            None => {
                // The original, checked against its hash: damaged bytes
                // never become a new version.
                let original = self.original(&req.document_id)?;
                let content = Content::File {
                    filename: None,
                    mime_type: Some(original.media_type),
                    bytes: original.bytes,
                };
                (content, req.title.or(old.title))
            }
        };
        // A `source` named by new metadata counts as given, as in an ingest.
        let source = req
            .source
            .or_else(|| req.metadata.as_ref().and_then(metadata_source))
            .or(old.source);
        let metadata = match req.metadata {
            Some(m) => m,
            None => match serde_json::from_str(&old.metadata) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            },
        };
        self.ingest(IngestRequest {
            content,
            metadata,
            idempotency_key: req.idempotency_key,
            source,
            provenance: old.provenance,
            expires_at: old.expires_at,
            wait: req.wait,
            // A new version may well hold what another document holds.
            allow_duplicate: true,
            replaces: Replaces {
                documents: vec![req.document_id],
                source: false,
                if_current: false,
            },
            title,
            scopes,
        })
    }

    /// The memory scopes a new version of `doc_id` goes into: those of the
    /// old version this caller may write (all of them, for an unrestricted
    /// caller). A scoped caller may change a document it wrote, or one in
    /// a scope it may write.
    fn scopes_of_new_version(&self, doc_id: &str, created_by: &str) -> Result<Vec<String>> {
        let grants = self.reader()?.document_scopes(doc_id)?;
        let keep: Vec<String> = grants
            .into_iter()
            .filter_map(|g| crate::store::MemoryScope::new(&g.scope).ok())
            .filter(|s| self.principal.may_write(s))
            .map(|s| s.name().to_string())
            .collect();
        let limited = self.principal.sight().is_limited();
        if limited && keep.is_empty() && created_by != self.principal.subject {
            return Err(Error::Forbidden(format!(
                "this token may not change document {doc_id}: it is in no memory scope the                  token may write"
            )));
        }
        Ok(keep)
    }
}
