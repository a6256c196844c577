//! Upload tickets over HTTP: `POST /v1/uploads` declares a file (as
//! `alayasiki_ingest` with `upload` does over MCP), and
//! `PUT /v1/uploads/{ticket}` receives it.
//!
//! The `PUT` carries no token: the ticket in its path is the grant, and
//! the upload is stored as the caller who declared it. Its body is never
//! held in memory while it arrives: a body reader streams it through a
//! fixed buffer into a temporary file in the data directory, hashing as it
//! goes, within [`BODY_READ_TIMEOUT`] and a second per
//! [`MIN_UPLOAD_BYTES_PER_SEC`]. Only a body of exactly the declared size
//! and SHA-256 is ingested, on a dispatch worker: read back whole as the
//! file ingest it declared, or, past [`MAX_CONTENT_BYTES`], read a part at
//! a time and stored as a series of parts; anything else is refused and
//! its file removed, so nothing of it is stored. A ticket is claimed
//! before its body is read: used, refused or expired, it never works
//! twice, and of concurrent `PUT`s on one ticket exactly one proceeds.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::admission::{caller_key, Gate, Holder, Permit, RETRY_AFTER_SECS};
use super::body::{self, BODY_READ_TIMEOUT};
use super::body_readers;
use super::http::{error, retry_after, Context};
use super::http_api::{self, Charge, INGEST_TOOL};
use super::request::Request;
use crate::limits::{MAX_CONTENT_BYTES, MAX_UPLOADS_IN_PROGRESS, MIN_UPLOAD_BYTES_PER_SEC};
use crate::protocol::tools;
use crate::service::{Content, Principal, Unclaimed, UploadTicket};

/// Bytes received per read while an upload streams to disk: all the memory
/// an upload takes while it arrives.
const UPLOAD_BUFFER_BYTES: usize = 64 * 1024;

/// The uploads being received ([`MAX_UPLOADS_IN_PROGRESS`]).
pub(super) fn gate() -> Arc<Gate> {
    Gate::new("uploads", MAX_UPLOADS_IN_PROGRESS)
}

/// `POST /v1/uploads`: the body is `alayasiki_ingest`'s arguments with
/// `upload` (and no content); the answer is the tool's.
pub(super) fn declare(ctx: &Arc<Context>, request: Request, principal: Principal) {
    let started = Instant::now();
    let holder = Holder::of(&principal);
    let caller = caller_key(principal.tenant.name(), &principal.subject);
    body_readers::read_then(ctx, request, &caller, move |ctx, request, body| {
        let (arguments, parsed) = match http_api::json_object(&request, &body) {
            Ok(read) => read,
            Err(refused) => return request.respond(refused),
        };
        if !arguments.contains_key("upload") {
            let r = error(
                400,
                "invalid_input",
                "the body declares a file: `upload` ({filename, size, sha256}) and the \
                 ingest's other arguments; send content to /v1/ingest instead",
            );
            return request.respond(r);
        }
        let request_bytes = body.len() as u64;
        http_api::run(ctx, request, holder, move |ctx| {
            let reply = offer(ctx, &principal, &arguments, request_bytes, started);
            drop(parsed);
            reply
        });
    });
}

fn offer(
    ctx: &Context,
    principal: &Principal,
    arguments: &Map<String, Value>,
    request_bytes: u64,
    started: Instant,
) -> http_api::Reply {
    let Some(tool) = tools::find(INGEST_TOOL) else {
        return http_api::not_implemented("the tool alayasiki_ingest");
    };
    let memory = ctx.service.for_caller(principal);
    match tools::invoke(tool, &memory, arguments) {
        Ok(value) => Charge::new(INGEST_TOOL, request_bytes, started).reply(
            &memory,
            value.to_string().into_bytes(),
            "application/json",
        ),
        Err(e) => http_api::service_error(e, "declaring an upload"),
    }
}

/// `PUT /v1/uploads/{ticket}`: checks the head, claims the ticket, then
/// streams the body on a body reader.
pub(super) fn receive(ctx: &Arc<Context>, request: Request, ticket: &str) {
    let Some(length) = body::declared_length(&request).filter(|_| !request.is_chunked()) else {
        let r = error(
            411,
            "length_required",
            "an upload needs a Content-Length equal to its declared size (no chunked body)",
        );
        return request.respond_and_close(r);
    };
    // Before the ticket is claimed: a busy server leaves it usable.
    let Some(slot) = ctx.uploads.try_enter() else {
        let r = error(
            503,
            "uploads_busy",
            &format!(
                "the server is already receiving {MAX_UPLOADS_IN_PROGRESS} uploads \
                 (MAX_UPLOADS_IN_PROGRESS); retry shortly with the same URL"
            ),
        )
        .with_header(retry_after(RETRY_AFTER_SECS));
        return request.respond_and_close(r);
    };
    let claimed = match ctx.service.claim_upload(ticket) {
        Ok(t) => t,
        Err(Unclaimed::Unknown) => {
            let r = error(
                404,
                "unknown_upload",
                "no upload waits at this URL: it was used already, never issued, or the \
                 server restarted since; declare the file again for a new URL",
            );
            return request.respond_and_close(r);
        }
        Err(Unclaimed::Expired) => {
            let r = error(
                410,
                "upload_expired",
                "this upload URL has expired; declare the file again for a new URL",
            );
            return request.respond_and_close(r);
        }
    };
    if length != claimed.declaration.size {
        let r = error(
            400,
            "size_mismatch",
            &format!(
                "the upload's Content-Length is {length} bytes but {} were declared; nothing \
                 was stored and this URL is used up: declare the file again",
                claimed.declaration.size
            ),
        );
        return request.respond_and_close(r);
    }
    let mut request = request;
    if !request.admit() {
        return; // closed to make room meanwhile
    }
    let caller = caller_key(claimed.principal.tenant.name(), &claimed.principal.subject);
    body_readers::on_reader(ctx, request, &caller, move |ctx, request| {
        stream_and_ingest(ctx, request, claimed, slot)
    });
}

/// Why a received body is not stored.
enum Refused {
    /// It ended before its declared size (the client stopped or failed).
    Incomplete,
    TimedOut,
    /// Its bytes do not hash to the declared SHA-256.
    Digest,
    /// The temporary file could not be written or read back.
    Disk(std::io::Error),
}

fn stream_and_ingest(ctx: &Arc<Context>, mut request: Request, ticket: UploadTicket, slot: Permit) {
    let started = Instant::now();
    let dir = ctx.service.uploads_dir();
    let size = ticket.declaration.size;
    let received = PartialUpload::create(&dir)
        .map_err(Refused::Disk)
        .and_then(|mut part| {
            let deadline = Instant::now() + body_deadline(size);
            let digest = part.fill(&mut request.body_reader(deadline), size, deadline)?;
            if crate::ids::hex(&digest) != ticket.declaration.sha256 {
                return Err(Refused::Digest);
            }
            Ok(part)
        });
    let part = match received {
        Ok(part) => part,
        Err(why) => return request.respond_and_close(refusal(why)),
    };
    let UploadTicket {
        principal,
        declaration,
        request: mut ingest,
        ..
    } = ticket;
    let holder = Holder::of(&principal);
    if size > MAX_CONTENT_BYTES as u64 {
        // Stored in parts, read from the file a part at a time: the file
        // (and the upload's slot) is held until they are admitted.
        let file = match part.file.try_clone() {
            Ok(file) => file,
            Err(e) => return request.respond_and_close(refusal(Refused::Disk(e))),
        };
        http_api::run(ctx, request, holder, move |ctx| {
            let memory = ctx.service.for_caller(&principal);
            let stored = memory.ingest_upload_parts(ingest, &declaration, file);
            drop((part, slot));
            receipt_reply(&memory, stored, size, started)
        });
        return;
    }
    let bytes = match part.read_back() {
        Ok(bytes) => bytes,
        Err(e) => return request.respond_and_close(refusal(Refused::Disk(e))),
    };
    drop(slot);
    if let Content::File { bytes: b, .. } = &mut ingest.content {
        *b = bytes;
    }
    http_api::run(ctx, request, holder, move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        let stored = memory.ingest(ingest);
        receipt_reply(&memory, stored, size, started)
    });
}

/// How long an upload of `size` bytes may take to arrive:
/// [`BODY_READ_TIMEOUT`] and a second per [`MIN_UPLOAD_BYTES_PER_SEC`].
fn body_deadline(size: u64) -> Duration {
    BODY_READ_TIMEOUT + Duration::from_secs(size / MIN_UPLOAD_BYTES_PER_SEC)
}

/// The `PUT`'s answer: the ingest's receipt, charged as an ingest of the
/// upload's size.
fn receipt_reply(
    memory: &crate::service::Memory<'_>,
    stored: crate::error::Result<crate::service::IngestReceipt>,
    size: u64,
    started: Instant,
) -> http_api::Reply {
    match stored {
        Ok(receipt) => match serde_json::to_vec(&receipt) {
            Ok(body) => {
                Charge::new(INGEST_TOOL, size, started).reply(memory, body, "application/json")
            }
            Err(e) => http_api::service_error(e.into(), "an upload's receipt"),
        },
        Err(e) => http_api::service_error(e, "ingesting an upload"),
    }
}

fn refusal(why: Refused) -> http_api::Reply {
    let (status, code, message) = match why {
        Refused::Incomplete => (
            400,
            "incomplete_body",
            "the upload ended before its declared size",
        ),
        Refused::TimedOut => (
            408,
            "body_timeout",
            "the upload did not arrive within BODY_READ_TIMEOUT and a second per \
             MIN_UPLOAD_BYTES_PER_SEC",
        ),
        Refused::Digest => (
            400,
            "digest_mismatch",
            "the uploaded bytes do not have the declared SHA-256",
        ),
        Refused::Disk(e) => {
            log::error!("receiving an upload failed on disk: {e}");
            (
                503,
                "upload_unavailable",
                "the server could not keep the upload on disk",
            )
        }
    };
    let message =
        format!("{message}; nothing was stored and this URL is used up: declare the file again");
    error(status, code, &message)
}

/// An upload's temporary file: removed when dropped, whatever happened
/// (one a kill leaves behind is removed at the next start).
struct PartialUpload {
    path: PathBuf,
    file: File,
}

impl PartialUpload {
    fn create(dir: &Path) -> std::io::Result<PartialUpload> {
        std::fs::create_dir_all(dir)?;
        let mut name = [0u8; 16];
        crate::ids::secret_bytes(&mut name)?;
        let path = dir.join(format!("{}.part", crate::ids::hex(&name)));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(PartialUpload { path, file })
    }

    /// Copies `size` bytes of `body` into the file through a fixed buffer
    /// before `deadline`, returning their SHA-256.
    fn fill(
        &mut self,
        body: &mut dyn Read,
        size: u64,
        deadline: Instant,
    ) -> Result<[u8; 32], Refused> {
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; UPLOAD_BUFFER_BYTES];
        let mut received = 0u64;
        while received < size {
            let want = (size - received).min(buffer.len() as u64) as usize;
            let n = match body.read(&mut buffer[..want]) {
                Ok(0) => return Err(Refused::Incomplete),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                    return Err(Refused::TimedOut)
                }
                Err(e) => {
                    log::debug!("an upload's body failed: {e}");
                    return Err(Refused::Incomplete);
                }
            };
            hasher.update(&buffer[..n]);
            self.file.write_all(&buffer[..n]).map_err(Refused::Disk)?;
            received += n as u64;
            if received < size && Instant::now() >= deadline {
                return Err(Refused::TimedOut);
            }
        }
        Ok(hasher.finalize().into())
    }

    /// The whole file, once verified, and the file gone.
    fn read_back(mut self) -> std::io::Result<Vec<u8>> {
        use std::io::Seek;
        self.file.rewind()?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

impl Drop for PartialUpload {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            log::warn!("cannot remove an upload's temporary file: {e}");
        }
    }
}
