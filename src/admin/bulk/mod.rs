//! `alayasiki-mcp ingest PATH...`: store files and folders from disk.
//!
//! Every PATH is checked first ([`walk::unusable_paths`]): one that does
//! not exist or cannot be read refuses the whole command, with nothing
//! stored. Folders are then walked recursively (entries in name order;
//! hidden entries and symbolic links are not followed, so a walk cannot
//! loop or leave the tree it was given). Every file is read, typed like a
//! `File` upload (magic number, extension, else the bytes as text) and
//! ingested through `Memory::ingest` with its absolute path as `source` and
//! filename as title, by several threads per core: extraction, chunking and
//! embedding run in parallel, and the writer groups their commits.
//!
//! Files are skipped, with the reason counted in the report, when they are
//! larger than [`MAX_CONTENT_BYTES`], empty, binary of no supported type,
//! images or audio (which need a description this command cannot give), or
//! refused by ingestion (invalid UTF-8, an encrypted or scanned PDF, ...).
//! Skips are report lines; the command fails only when none of the files
//! found is in the memory afterwards.
//!
//! Each file's idempotency key is a hash of its path and content, so an
//! interrupted run is resumed by running the same command again: files
//! already stored are recognised before any work is done on them, and
//! nothing is stored twice. A file whose content changed is a new document
//! (the old version stays until forgotten by `--source`). On SIGINT or
//! SIGTERM (the handlers of [`crate::transport::signals`]) no new file is
//! started; the files in progress finish, the store is closed (so every
//! acknowledged file is durable), a summary with the resume command goes
//! to stderr, and the exit status is 128 + the signal's number.

mod report;
mod walk;

use serde_json::Map;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use super::console::errln;
use super::progress::Progress;
use super::regular_file::open_regular;
use super::{drain, throttle, Console, Context, Exit};
use crate::cli::SIGNAL_EXIT_BASE;
use crate::ids;
use crate::ingest::media::{self, MediaKind};
use crate::limits::MAX_CONTENT_BYTES;
use crate::serve::EXIT_FAILURE;
use crate::service::{Content, IngestRequest, Memory};
use crate::transport::signals;
use report::{Interruption, Outcome, Report};
use walk::{io_reason, Candidate};

/// Files in flight per core. An ingest returns once its admission is
/// durably committed, so most of a thread's time is spent waiting for the
/// writer's fsync; many requests in flight let the writer commit them in
/// groups. Measured on /usr/share/doc (2 cores, full durability): 2 threads
/// 88 files/s, 8 threads 152, 16 threads 220, 32 threads 197.
const THREADS_PER_CORE: usize = 8;
/// Most files in flight at once (each holds its bytes, up to
/// `MAX_CONTENT_BYTES`, while it is prepared).
const MAX_THREADS: usize = 64;

/// How many threads store documents at once: [`THREADS_PER_CORE`] per
/// core, at most [`MAX_THREADS`] (also `import`'s store threads).
pub(super) fn store_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (cores * THREADS_PER_CORE).min(MAX_THREADS)
}

/// How a run ended, before the store is closed.
struct Ending {
    report: Report,
    /// Set when a termination signal stopped the run.
    interruption: Option<Interruption>,
}

/// Refuses the whole command, before any memory is reached, when a PATH
/// does not exist or cannot be read.
pub fn check_paths(console: &Console, paths: &[PathBuf]) -> Result<(), Exit> {
    let unusable = walk::unusable_paths(paths);
    if unusable.is_empty() {
        return Ok(());
    }
    for (path, reason) in &unusable {
        errln!(
            console,
            "alayasiki-mcp ingest: cannot read '{}': {reason}",
            report::shown(path)
        );
    }
    errln!(
        console,
        "alayasiki-mcp ingest: nothing stored (every PATH must exist and be readable)"
    );
    Err(EXIT_FAILURE)
}

/// `alayasiki-mcp ingest PATH... [--tenant T] [--data-dir DIR]`.
///
/// Exit status: 0 when every file found is in the memory or was skipped
/// for its content, and at least one is in the memory (or none was found);
/// 1 when a PATH is unusable (nothing is stored), when nothing found could
/// be stored, or when a file failed for another reason than its content;
/// 128 + signal (130 SIGINT, 143 SIGTERM) when interrupted.
pub fn ingest(ctx: &Context, tenant: Option<String>, paths: &[PathBuf]) -> Exit {
    // Checked again where the files are read: the owner runs this after
    // the client checked.
    if let Err(code) = check_paths(&ctx.console, paths) {
        return code;
    }
    let ending = match run(ctx, tenant, paths) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let report = &ending.report;
    if let Some(stop) = &ending.interruption {
        report::print_interruption(&ctx.console, report, stop);
        return (SIGNAL_EXIT_BASE + stop.signal) as Exit;
    }
    if !report.failed.is_empty() {
        return EXIT_FAILURE;
    }
    if report.in_memory() == 0 {
        let found = report.files;
        if found == 0 {
            errln!(
                ctx.console,
                "alayasiki-mcp ingest: nothing to store: no files under the PATH(s) given"
            );
        } else {
            errln!(
                ctx.console,
                "alayasiki-mcp ingest: nothing stored: none of the {found} file(s) found could \
                 be read or ingested (reasons in the report)"
            );
            return EXIT_FAILURE;
        }
    }
    0
}

fn run(ctx: &Context, tenant: Option<String>, paths: &[PathBuf]) -> Result<Ending, Exit> {
    let principal = ctx.principal(tenant, "ingest")?;
    let memory = ctx.service.for_caller(&principal);
    let started = Instant::now();
    let mut report = Report::default();
    let mut files = Vec::new();
    let mut walk_complete = true;
    for path in paths {
        walk_complete = walk_complete && walk::walk(&ctx.console, path, &mut files, &mut report);
    }
    report.files = files.len() + report.skipped_count();
    report.bytes = files.iter().map(|c| c.size).sum();
    let chunks_before = memory.status().map(|s| s.chunks).unwrap_or(0);

    let mut progress = Progress::new(
        &ctx.console,
        "ingest",
        "files",
        Some(files.len() as u64),
        Some(report.bytes),
    );
    let next = AtomicUsize::new(0);
    // Set when the disk refuses to store a file, or indexing is held up
    // past its bound: every later file would meet the same, so no thread
    // takes another.
    let stopped = OnceLock::new();
    let mut received = 0;
    let threads = store_threads();
    std::thread::scope(|scope| {
        let (tx, rx) = crossbeam_channel::unbounded::<(Outcome, u64)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (files, next, memory, stopped) = (&files, &next, &memory, &stopped);
            // A thread checks for a signal before it takes a file, so a
            // run stops between files: those in progress finish.
            scope.spawn(move || {
                while !ctx.console.stopping() && stopped.get().is_none() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let outcome = ingest_file(memory, ctx, file, stopped);
                    if tx.send((outcome, file.size)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (outcome, size) in rx {
            received += 1;
            if let Outcome::Failed { reason, path } = &outcome {
                progress.note(&format!("ingest: {}: {reason}", report::shown(path)));
            }
            report.record(outcome);
            progress.advance(1, size);
        }
    });
    progress.finish();
    // Files no thread took once a signal came (or the disk refused one)
    // are not read either.
    report.not_read += files.len() - received;
    let stopped = stopped.into_inner();
    // After a signal, or once the run stopped, what is stored but not
    // indexed waits in the journal for the next open instead of delaying
    // the exit.
    if !ctx.console.stopping() && stopped.is_none() {
        if let Err(e) = drain(ctx, "indexing") {
            errln!(
                ctx.console,
                "alayasiki-mcp ingest: {}",
                e.logged("ingest").client_message()
            );
            return Err(EXIT_FAILURE);
        }
    }
    let chunks_after = memory.status().map(|s| s.chunks).unwrap_or(chunks_before);
    report::print_report(
        &ctx.console,
        &report,
        (chunks_after - chunks_before).max(0),
        started.elapsed().as_secs_f64(),
    );
    if let Some(stop) = stopped {
        errln!(
            ctx.console,
            "alayasiki-mcp ingest: stopped: {} (reasons in the report); {} file(s) not read; \
             what was stored is kept: run the command again once {}",
            stop.what(),
            report.not_read,
            stop.until()
        );
    }
    let interruption = ctx.console.stopping().then(|| Interruption {
        signal: ctx.console.stop_signal().unwrap_or(signals::SIGINT),
        walk_complete,
        pending_jobs: ctx.service.pending_jobs().unwrap_or(0),
        resume: report::resume_command(paths, &ctx.data_dir, principal.tenant.name()),
    });
    Ok(Ending {
        report,
        interruption,
    })
}

/// What reading a walked path found.
#[derive(Debug, PartialEq)]
pub(super) enum Read {
    Bytes(Vec<u8>),
    /// Over the limit (read no further than one byte past it).
    TooLarge,
    /// Something else than a regular file, such as a pipe or a device put
    /// in the file's place after the walk.
    NotAFile,
}

/// Reads a file found by the walk, as what it is now: refused unless it
/// is a regular file ([`open_regular`]: a pipe put in its place would wait
/// forever for a writer, a link swapped to `/dev/zero` never ends), and
/// read no further than `max` + 1 bytes.
pub(super) fn read_regular(path: &std::path::Path, max: usize) -> std::io::Result<Read> {
    use std::io::Read as _;
    let Some(file) = open_regular(path)? else {
        return Ok(Read::NotAFile);
    };
    let mut bytes = Vec::new();
    file.take(max as u64 + 1).read_to_end(&mut bytes)?;
    Ok(if bytes.len() > max {
        Read::TooLarge
    } else {
        Read::Bytes(bytes)
    })
}

/// Why a run stopped before reading every file.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// The disk refused to store a file.
    DiskRefused,
    /// The disk or the embedding server held indexing up past
    /// `BULK_FAULT_GIVE_UP_MS`.
    HeldUp,
}

impl Stop {
    fn what(self) -> &'static str {
        match self {
            Stop::DiskRefused => "the disk refused writes",
            Stop::HeldUp => "indexing has been held up too long",
        }
    }

    fn until(self) -> &'static str {
        match self {
            Stop::DiskRefused => "the disk accepts writes",
            Stop::HeldUp => "what held it up (named in the report) works again",
        }
    }
}

/// Reads, types and ingests one file; sets `stopped` when the disk refuses
/// to store it, or indexing what was stored before it is held up.
fn ingest_file(
    memory: &Memory<'_>,
    ctx: &Context,
    file: &Candidate,
    stopped: &OnceLock<Stop>,
) -> Outcome {
    let path = &file.path;
    let skipped = |reason: String| Outcome::Skipped {
        reason,
        path: path.clone(),
    };
    let bytes = match read_regular(path, MAX_CONTENT_BYTES) {
        Ok(Read::Bytes(b)) => b,
        Ok(Read::TooLarge) => return skipped(walk::too_large()),
        Ok(Read::NotAFile) => return skipped("not a regular file (any more)".into()),
        Err(e) => return skipped(format!("cannot read: {}", io_reason(&e))),
    };
    let filename = path.file_name().map(|n| n.to_string_lossy().into_owned());
    match media::detect(filename.as_deref(), &bytes) {
        None => return skipped("binary of no supported type".into()),
        Some(MediaKind::Image(_) | MediaKind::Audio(_)) => {
            return skipped(
                "image or audio: needs a description (caption, transcript, ...); ingest it \
                 with metadata through alayasiki_ingest"
                    .into(),
            )
        }
        Some(_) => {}
    }
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    let source = absolute.to_string_lossy().into_owned();
    let key = file_key(&source, &bytes);
    match memory.document_for_key(&key) {
        Ok(Some(_)) => return Outcome::AlreadyStored,
        Ok(None) => {}
        Err(e) => {
            return Outcome::Failed {
                reason: e.logged("ingest").client_message(),
                path: path.clone(),
            }
        }
    }
    if let Err(e) = throttle(ctx) {
        let _ = stopped.set(Stop::HeldUp);
        return Outcome::Failed {
            reason: e.client_message(),
            path: path.clone(),
        };
    }
    if ctx.console.stopping() {
        // The pause above ends early on a signal; this file waits for the
        // resumed run.
        return Outcome::NotRead;
    }
    let request = IngestRequest {
        expires_at: None,
        content: Content::File {
            filename,
            mime_type: None,
            bytes,
        },
        metadata: Map::new(),
        idempotency_key: Some(key),
        source: Some(source),
        provenance: None,
        wait: false,
        allow_duplicate: false,
        replaces: Default::default(),
        title: None,
        scopes: Vec::new(),
    };
    match memory.ingest(request) {
        Ok(r) if r.idempotent_replay => Outcome::AlreadyStored,
        Ok(r) if r.duplicate_of.is_some() => Outcome::Duplicate,
        Ok(_) => Outcome::Stored { bytes: file.size },
        Err(e) => match e {
            crate::error::Error::InvalidInput(_) | crate::error::Error::LimitExceeded(_) => {
                skipped(skip_reason(&e.client_message()))
            }
            other => {
                if other.storage_fault().is_some() {
                    let _ = stopped.set(Stop::DiskRefused);
                }
                Outcome::Failed {
                    reason: other.logged("ingest").client_message(),
                    path: path.clone(),
                }
            }
        },
    }
}

/// The idempotency key of a file: its absolute path and content, hashed
/// (a changed file is a new document; an unchanged one is found again).
pub fn file_key(source: &str, bytes: &[u8]) -> String {
    let content = ids::sha256_hex(bytes);
    format!(
        "file:{}",
        ids::sha256_hex(format!("{source}\0{content}").as_bytes())
    )
}

/// Groups ingestion refusals into report lines: the message without the
/// details that differ from file to file (offsets, positions).
fn skip_reason(message: &str) -> String {
    if message.contains("not valid UTF-8") {
        "not valid UTF-8 text".into()
    } else if message.contains("not valid JSON") {
        "invalid JSON".into()
    } else if message.contains("PDF is encrypted") {
        "encrypted PDF".into()
    } else if message.contains("no extractable text") {
        "PDF without text (scanned images?)".into()
    } else if message.contains("PDF could not be read") {
        "damaged PDF".into()
    } else {
        message.chars().take(120).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_walked_path_is_read_as_what_it_is_now_and_no_further_than_the_limit() {
        let dir = std::env::temp_dir().join(format!("alayasiki-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.txt");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(
            read_regular(&file, 5).unwrap(),
            Read::Bytes(b"12345".to_vec())
        );
        assert_eq!(read_regular(&file, 4).unwrap(), Read::TooLarge);
        // A link swapped to an endless device, and a pipe nobody writes to:
        // refused at once, never read.
        let zero = dir.join("zero.txt");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(read_regular(&zero, 5).unwrap(), Read::NotAFile);
        let fifo = dir.join("pipe.txt");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(read_regular(&fifo, 5).unwrap(), Read::NotAFile);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn file_keys_depend_on_path_and_content() {
        let a = file_key("/a", b"x");
        assert_eq!(a, file_key("/a", b"x"));
        assert_ne!(a, file_key("/b", b"x"));
        assert_ne!(a, file_key("/a", b"y"));
        assert!(a.len() <= crate::limits::MAX_IDEMPOTENCY_KEY_BYTES);
    }

    #[test]
    fn refusals_are_grouped() {
        assert_eq!(
            skip_reason("content is not valid UTF-8 (first invalid byte at offset 3)"),
            "not valid UTF-8 text"
        );
        assert_eq!(
            skip_reason("the PDF is encrypted; save an unprotected copy"),
            "encrypted PDF"
        );
    }
}
