//! New versions of documents from the command line:
//! `alayasiki-mcp update ID [--file PATH | --text TEXT] [--metadata JSON]
//! [--title T]` (as the alayasiki_update tool) and `alayasiki-mcp ingest
//! PATH --supersedes ID...` (one file stored as a new version of the
//! documents named, as alayasiki_ingest with `supersedes`). Both wait
//! until the new version is searchable and print its receipt.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

use super::bulk::{read_regular, Read};
use super::console::{errln, outln};
use super::{Context, Exit};
use crate::error::{Error, Result};
use crate::limits::MAX_CONTENT_BYTES;
use crate::service::{Content, IngestReceipt, IngestRequest, Replaces, UpdateRequest};

/// What `update` changes; what is `None` is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// New content from a file (typed as `ingest PATH` types it).
    pub file: Option<PathBuf>,
    /// New content as plain text.
    pub text: Option<String>,
    /// New metadata: a JSON object, replacing the old whole.
    pub metadata: Option<String>,
    pub title: Option<String>,
}

/// `metadata` as given on the command line: a JSON object, or why not.
pub fn metadata_object(text: &str) -> std::result::Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("--metadata must be a JSON object, such as '{\"team\": \"ops\"}'".into()),
        Err(e) => Err(format!(
            "--metadata is not valid JSON (line {} column {})",
            e.line(),
            e.column()
        )),
    }
}

/// `alayasiki-mcp update ID ...`: exit 0 with the new version's receipt,
/// 1 when it is refused (the reason on stderr).
pub fn update(ctx: &Context, tenant: Option<String>, document_id: String, change: Change) -> Exit {
    let principal = match ctx.principal(tenant, "update") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let memory = ctx.service.for_caller(&principal);
    let request = (|| -> Result<UpdateRequest> {
        let content = match (&change.file, change.text) {
            (Some(path), _) => Some(file_content(path)?),
            (None, Some(text)) => Some(Content::Text {
                text,
                media_type: None,
            }),
            (None, None) => None,
        };
        let metadata = change
            .metadata
            .as_deref()
            .map(metadata_object)
            .transpose()
            .map_err(Error::invalid)?;
        Ok(UpdateRequest {
            document_id,
            content,
            metadata,
            title: change.title,
            source: None,
            wait: true,
            idempotency_key: None,
        })
    })();
    report(ctx, "update", request.and_then(|r| memory.update(r)))
}

/// `alayasiki-mcp ingest PATH --supersedes ID...`: the file at `path`
/// stored (its absolute path as source, as `ingest PATH` stores it) as a
/// new version of `supersedes`.
pub fn ingest_version(
    ctx: &Context,
    tenant: Option<String>,
    path: &Path,
    supersedes: Vec<String>,
) -> Exit {
    let principal = match ctx.principal(tenant, "ingest") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let memory = ctx.service.for_caller(&principal);
    let receipt = file_content(path).and_then(|content| {
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        memory.ingest(IngestRequest {
            content,
            metadata: Map::new(),
            idempotency_key: None,
            source: Some(absolute.to_string_lossy().into_owned()),
            provenance: None,
            expires_at: None,
            wait: true,
            allow_duplicate: false,
            replaces: Replaces {
                documents: supersedes,
                source: false,
                if_current: false,
            },
            title: None,
            scopes: Vec::new(),
        })
    });
    report(ctx, "ingest", receipt)
}

/// A file's bytes as a File upload named after it; only a regular file of
/// at most [`MAX_CONTENT_BYTES`] is read.
fn file_content(path: &Path) -> Result<Content> {
    let shown = path.display();
    let bytes = match read_regular(path, MAX_CONTENT_BYTES) {
        Ok(Read::Bytes(b)) => b,
        Ok(Read::TooLarge) => {
            return Err(Error::LimitExceeded(format!(
                "{shown} is larger than {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES)"
            )))
        }
        Ok(Read::NotAFile) => {
            return Err(Error::invalid(format!(
                "{shown} {}",
                super::regular_file::NOT_REGULAR
            )))
        }
        Err(e) => return Err(Error::invalid(format!("cannot read {shown}: {e}"))),
    };
    Ok(Content::File {
        filename: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        mime_type: None,
        bytes,
    })
}

/// Prints a new version's receipt on stdout (or why it was refused on
/// stderr); the exit status.
fn report(ctx: &Context, program: &str, receipt: Result<IngestReceipt>) -> Exit {
    match receipt {
        Ok(r) => {
            let replaced = if r.supersedes.is_empty() {
                String::new()
            } else {
                format!(", superseding {}", r.supersedes.join(", "))
            };
            let chunks = r
                .chunks
                .map_or(String::new(), |n| format!(", {n} chunk(s)"));
            match &r.duplicate_of {
                Some(id) => outln!(
                    ctx.console,
                    "already stored as {id} (the same content); nothing superseded"
                ),
                None => outln!(
                    ctx.console,
                    "stored {} ({}{chunks}){replaced}",
                    r.document_id,
                    r.state
                ),
            }
            0
        }
        Err(e) => {
            let e = e.logged(program);
            errln!(
                ctx.console,
                "alayasiki-mcp {program}: {}",
                e.client_message()
            );
            crate::serve::EXIT_FAILURE
        }
    }
}
