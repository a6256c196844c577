//! Upload tickets: a file declared now (name, size, SHA-256) and sent
//! later, outside the JSON-RPC message, to a one-time URL.
//!
//! `alayasiki_ingest` with `upload` stores nothing: it opens a ticket bound
//! to the caller (tenant and subject, with the roles their token had), the
//! declared size and digest, and the ingest's other arguments, and answers
//! with the URL that grants the upload. The HTTP transport receives the
//! bytes there, checks them against the declaration, and ingests them as
//! the caller through [`Memory::ingest`] like any file, or, past
//! [`MAX_CONTENT_BYTES`], as a series of parts
//! ([`Memory::ingest_upload_parts`]).
//!
//! Tickets live in this process's memory only (a restart invalidates every
//! one), at most [`MAX_OPEN_UPLOAD_TICKETS`] per tenant, each for at most
//! its time to live. A ticket is claimed exactly once: used, refused or
//! expired, it is gone. Only a process that serves HTTP offers them
//! ([`UploadDesk::offer`]); over stdio there is no URL to give.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{IngestRequest, Memory, MemoryService};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::limits::{
    MAX_CONTENT_BYTES, MAX_FILENAME_BYTES, MAX_OPEN_UPLOAD_TICKETS, MAX_UPLOAD_BYTES,
};
use crate::service::{Permission, Principal};

/// The path under which upload URLs are served (`PUT {base}{path}{ticket}`).
pub const UPLOAD_PATH: &str = "/v1/uploads/";

/// The data directory's folder for uploads being received: each is a
/// temporary file there until it is verified and read, and whatever a
/// killed process left there is removed when the memory is opened.
pub const UPLOADS_DIR: &str = "uploads";

/// Random bytes in a ticket (256 bits).
const TICKET_BYTES: usize = 32;

/// A file an ingest says it will send.
#[derive(Debug, Clone)]
pub struct UploadDeclaration {
    pub filename: String,
    pub media_type: Option<String>,
    /// Exact size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, lower-case hex.
    pub sha256: String,
}

/// An open ticket, as [`UploadDesk::claim`] hands it over.
#[derive(Debug)]
pub struct UploadTicket {
    /// The caller who declared it: the upload is stored as theirs.
    pub principal: Principal,
    pub declaration: UploadDeclaration,
    /// The ingest to run once the bytes are here (its content a `File`
    /// without bytes).
    pub request: IngestRequest,
    expires: Instant,
}

/// What a declaration answers: where and until when to send the bytes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UploadOffer {
    /// The one-time URL: `PUT` the bytes there, with no token.
    pub upload_url: String,
    /// Always `PUT`.
    pub method: &'static str,
    /// When the ticket expires (RFC 3339, UTC).
    pub expires_at: String,
    /// The largest file any ticket accepts ([`MAX_UPLOAD_BYTES`]).
    pub max_bytes: usize,
    /// The declared size: the `Content-Length` the upload must have.
    pub size: u64,
    /// The declared SHA-256 the bytes must have.
    pub sha256: String,
}

/// Why a ticket could not be claimed.
#[derive(Debug, PartialEq, Eq)]
pub enum Unclaimed {
    /// No such ticket: never issued, used already, or issued before a
    /// restart (or expired long enough ago to be forgotten).
    Unknown,
    /// It expired before its upload came (it is gone now).
    Expired,
}

/// The open tickets of this process.
pub struct UploadDesk {
    /// Where upload URLs point, and how long a ticket lives; `None` while
    /// this process serves no HTTP (stdio).
    offered: Mutex<Option<(String, Duration)>>,
    tickets: Mutex<HashMap<String, UploadTicket>>,
}

impl UploadDesk {
    pub fn new() -> UploadDesk {
        UploadDesk {
            offered: Mutex::new(None),
            tickets: Mutex::new(HashMap::new()),
        }
    }

    /// Offers uploads at `base_url` (scheme and authority, no trailing
    /// slash), each ticket living `ttl`.
    pub fn offer(&self, base_url: &str, ttl: Duration) {
        let base = base_url.trim_end_matches('/').to_string();
        *lock(&self.offered) = Some((base, ttl));
    }

    /// Takes the ticket named `ticket`, once: whatever happens to its
    /// upload next, it cannot be used again.
    pub fn claim(&self, ticket: &str) -> std::result::Result<UploadTicket, Unclaimed> {
        let claimed = lock(&self.tickets)
            .remove(ticket)
            .ok_or(Unclaimed::Unknown)?;
        if claimed.expires <= Instant::now() {
            return Err(Unclaimed::Expired);
        }
        Ok(claimed)
    }

    fn open(
        &self,
        principal: &Principal,
        declaration: UploadDeclaration,
        request: IngestRequest,
    ) -> Result<UploadOffer> {
        let Some((base, ttl)) = lock(&self.offered).clone() else {
            return Err(Error::invalid(
                "`upload` needs the HTTP server (alayasiki-api), which gives the upload URL; \
                 over stdio send the file itself as `File` (base64 `content`, at most \
                 MAX_CONTENT_BYTES), or run `alayasiki-mcp ingest PATH`",
            ));
        };
        let mut secret = [0u8; TICKET_BYTES];
        crate::ids::secret_bytes(&mut secret)
            .map_err(|e| Error::internal(format!("no random source for a ticket: {e}")))?;
        let name = crate::ids::hex(&secret);
        let now = Instant::now();
        let offer = UploadOffer {
            upload_url: format!("{base}{UPLOAD_PATH}{name}"),
            method: "PUT",
            expires_at: crate::clock::rfc3339(now_ms() + ttl.as_millis() as i64),
            max_bytes: MAX_UPLOAD_BYTES,
            size: declaration.size,
            sha256: declaration.sha256.clone(),
        };
        let mut tickets = lock(&self.tickets);
        // Expired tickets give their places back before they are counted.
        tickets.retain(|_, t| t.expires > now);
        let tenant = principal.tenant.name();
        let held = tickets
            .values()
            .filter(|t| t.principal.tenant.name() == tenant)
            .count();
        if held >= MAX_OPEN_UPLOAD_TICKETS {
            return Err(Error::LimitExceeded(format!(
                "this tenant already holds {MAX_OPEN_UPLOAD_TICKETS} open upload tickets \
                 (MAX_OPEN_UPLOAD_TICKETS); use or let expire one before declaring another"
            )));
        }
        tickets.insert(
            name,
            UploadTicket {
                principal: principal.clone(),
                declaration,
                request,
                expires: now + ttl,
            },
        );
        Ok(offer)
    }
}

impl Default for UploadDesk {
    fn default() -> Self {
        UploadDesk::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Checks a declaration's own fields: a file name, a size from 1 to
/// [`MAX_UPLOAD_BYTES`] (past [`MAX_CONTENT_BYTES`], of a kind stored in
/// parts: [`super::upload_parts::split_kind`]), and a SHA-256 as 64 hex
/// digits (kept lower-case).
pub fn check_declaration(mut d: UploadDeclaration) -> Result<UploadDeclaration> {
    if d.filename.is_empty() || d.filename.len() > MAX_FILENAME_BYTES {
        return Err(Error::invalid(format!(
            "`upload.filename` must be 1 to {MAX_FILENAME_BYTES} bytes (MAX_FILENAME_BYTES)"
        )));
    }
    if d.size == 0 {
        return Err(Error::invalid("`upload.size` must be at least 1 byte"));
    }
    if d.size > MAX_UPLOAD_BYTES as u64 {
        return Err(Error::LimitExceeded(format!(
            "`upload.size` is {} bytes; uploads are limited to {MAX_UPLOAD_BYTES} bytes \
             (MAX_UPLOAD_BYTES)",
            d.size
        )));
    }
    if d.size > MAX_CONTENT_BYTES as u64 {
        super::upload_parts::split_kind(&d)?;
    }
    if d.sha256.len() != 64 || !d.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(
            "`upload.sha256` must be the file's SHA-256 as 64 hex digits",
        ));
    }
    d.sha256.make_ascii_lowercase();
    Ok(d)
}

/// The folder of uploads being received in `data_dir`.
pub fn uploads_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(UPLOADS_DIR)
}

/// Removes what uploads a killed process was receiving left in
/// `data_dir` (none of it was stored: an upload is ingested only once
/// whole and verified). Run while the directory is owned, before serving.
pub fn remove_partial_uploads(data_dir: &Path) {
    let dir = uploads_dir(data_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        if let Err(e) = std::fs::remove_file(entry.path()) {
            log::warn!("cannot remove a partial upload: {e}");
        }
    }
}

impl MemoryService {
    /// Offers upload tickets with URLs under `base_url` (what serves HTTP
    /// calls this once, before serving).
    pub fn offer_uploads(&self, base_url: &str, ttl: Duration) {
        self.uploads.offer(base_url, ttl);
    }

    /// Claims the ticket named `ticket` ([`UploadDesk::claim`]).
    pub fn claim_upload(&self, ticket: &str) -> std::result::Result<UploadTicket, Unclaimed> {
        self.uploads.claim(ticket)
    }

    /// The folder where uploads are received.
    pub fn uploads_dir(&self) -> PathBuf {
        uploads_dir(&self.data_dir)
    }
}

impl Memory<'_> {
    /// Opens an upload ticket for `declaration`: stores nothing, and
    /// answers where to send the bytes. `request` is the ingest to run on
    /// them (its content a `File` whose bytes are still to come).
    pub fn declare_upload(
        &self,
        declaration: UploadDeclaration,
        request: IngestRequest,
    ) -> Result<UploadOffer> {
        self.require_write(Permission::Ingest)?;
        let declaration = check_declaration(declaration)?;
        if declaration.size > MAX_CONTENT_BYTES as u64 && self.service.on_cluster() {
            // A cluster write carries its statements' values in one
            // request: all the parts of one upload would be one request.
            return Err(Error::LimitExceeded(format!(
                "`upload.size` is {} bytes; on a cluster an upload may have at most \
                 {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES)",
                declaration.size
            )));
        }
        self.service
            .uploads
            .open(self.principal, declaration, request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declaration(size: u64, sha256: &str) -> UploadDeclaration {
        UploadDeclaration {
            filename: "a.md".into(),
            media_type: None,
            size,
            sha256: sha256.into(),
        }
    }

    #[test]
    fn declarations_are_checked_at_the_size_limit() {
        let digest = "AB".repeat(32);
        let ok = check_declaration(declaration(MAX_UPLOAD_BYTES as u64, &digest)).unwrap();
        assert_eq!(ok.sha256, "ab".repeat(32));
        let over = check_declaration(declaration(MAX_UPLOAD_BYTES as u64 + 1, &digest));
        assert_eq!(over.unwrap_err().code(), "limit_exceeded");
        let pdf = UploadDeclaration {
            filename: "a.pdf".into(),
            ..declaration(MAX_CONTENT_BYTES as u64 + 1, &digest)
        };
        let refused = check_declaration(pdf).unwrap_err();
        assert_eq!(refused.code(), "limit_exceeded");
        assert!(refused.client_message().contains("MAX_CONTENT_BYTES"));
        let pdf_at_limit = UploadDeclaration {
            filename: "a.pdf".into(),
            ..declaration(MAX_CONTENT_BYTES as u64, &digest)
        };
        assert!(check_declaration(pdf_at_limit).is_ok());
        assert!(check_declaration(declaration(0, &digest)).is_err());
        assert!(check_declaration(declaration(1, "ab")).is_err());
        assert!(check_declaration(declaration(1, &"zz".repeat(32))).is_err());
    }
}
