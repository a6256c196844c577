//! `alayasiki-mcp ingest PATH...`: store files and folders from disk.
//!
//! Folders are walked recursively (entries in name order; hidden entries
//! and symbolic links are not followed, so a walk cannot loop or leave the
//! tree it was given). Every file is then read, typed like a `File` upload
//! (magic number, extension, else the bytes as text) and ingested through
//! `Memory::ingest` with its absolute path as `source` and filename as
//! title, by several threads per core: extraction, chunking and embedding
//! run in parallel, and the writer groups their commits.
//!
//! Files are skipped, with the reason counted in the report, when they are
//! larger than [`MAX_CONTENT_BYTES`], empty, binary of no supported type,
//! images or audio (which need a description this command cannot give), or
//! refused by ingestion (invalid UTF-8, an encrypted or scanned PDF, ...).
//!
//! Each file's idempotency key is a hash of its path and content, so an
//! interrupted run (Ctrl-C, a crash) is resumed by running the same command
//! again: files already stored are recognised before any work is done on
//! them, and nothing is stored twice. A file whose content changed is a new
//! document (the old version stays until forgotten by `--source`).

use serde_json::Map;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::progress::{clock, megabytes, Progress};
use super::{drain, open_dir, throttle, Missing, Opened};
use crate::ids;
use crate::ingest::media::{self, MediaKind};
use crate::limits::{MAX_CONTENT_BYTES, MAX_WALK_DEPTH};
use crate::service::{Content, IngestRequest, Memory};
use crate::store::VectorPolicy;

/// Files in flight per core. An ingest returns once its admission is
/// durably committed, so most of a thread's time is spent waiting for the
/// writer's fsync; many requests in flight let the writer commit them in
/// groups. Measured on /usr/share/doc (2 cores, full durability): 2 threads
/// 88 files/s, 8 threads 152, 16 threads 220, 32 threads 197.
const THREADS_PER_CORE: usize = 8;
/// Most files in flight at once (each holds its bytes, up to
/// `MAX_CONTENT_BYTES`, while it is prepared).
const MAX_THREADS: usize = 64;
/// Example paths kept per skip reason for the report.
const EXAMPLES_PER_REASON: usize = 3;

/// A file found by the walk.
#[derive(Debug, Clone)]
struct Candidate {
    path: PathBuf,
    size: u64,
}

/// What happened to one file.
#[derive(Debug)]
enum Outcome {
    Stored { bytes: u64 },
    AlreadyStored,
    Skipped { reason: String, path: PathBuf },
    Failed { reason: String, path: PathBuf },
}

/// Counts for the final report.
#[derive(Debug, Default)]
struct Report {
    files: usize,
    bytes: u64,
    stored: usize,
    stored_bytes: u64,
    already_stored: usize,
    skipped: BTreeMap<String, (usize, Vec<PathBuf>)>,
    failed: Vec<(PathBuf, String)>,
}

impl Report {
    fn skip(&mut self, reason: impl Into<String>, path: &Path) {
        let entry = self.skipped.entry(reason.into()).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES_PER_REASON {
            entry.1.push(path.to_path_buf());
        }
    }

    fn skipped_count(&self) -> usize {
        self.skipped.values().map(|(n, _)| n).sum()
    }

    fn record(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Stored { bytes } => {
                self.stored += 1;
                self.stored_bytes += bytes;
            }
            Outcome::AlreadyStored => self.already_stored += 1,
            Outcome::Skipped { reason, path } => self.skip(reason, &path),
            Outcome::Failed { reason, path } => self.failed.push((path, reason)),
        }
    }
}

/// `alayasiki-mcp ingest PATH... [--tenant T] [--data-dir DIR]`.
pub fn ingest(data_dir: Option<PathBuf>, tenant: Option<String>, paths: &[PathBuf]) -> ExitCode {
    let opened = match open_dir(data_dir, VectorPolicy::Keep, "ingest", Missing::Create) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let code = run(&opened, tenant, paths);
    opened.service.shutdown();
    code
}

fn run(opened: &Opened, tenant: Option<String>, paths: &[PathBuf]) -> ExitCode {
    let principal = match opened.principal(tenant, "ingest") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let memory = opened.service.for_caller(&principal);
    let started = Instant::now();
    let mut report = Report::default();
    let mut files = Vec::new();
    for path in paths {
        walk(path, &mut files, &mut report);
    }
    report.files = files.len() + report.skipped_count();
    report.bytes = files.iter().map(|c| c.size).sum();
    let chunks_before = memory.status().map(|s| s.chunks).unwrap_or(0);

    let mut progress = Progress::new(
        "ingest",
        "files",
        Some(files.len() as u64),
        Some(report.bytes),
    );
    let next = AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = (cores * THREADS_PER_CORE).min(MAX_THREADS);
    std::thread::scope(|scope| {
        let (tx, rx) = crossbeam_channel::unbounded::<(Outcome, u64)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (files, next, memory) = (&files, &next, &memory);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let outcome = ingest_file(memory, opened, file);
                if tx.send((outcome, file.size)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (outcome, size) in rx {
            if let Outcome::Failed { reason, path } = &outcome {
                progress.note(&format!("ingest: {}: {reason}", path.display()));
            }
            report.record(outcome);
            progress.advance(1, size);
        }
    });
    progress.finish();
    if let Err(e) = drain(&opened.service, "indexing") {
        eprintln!(
            "alayasiki-mcp ingest: {}",
            e.logged("ingest").client_message()
        );
        return ExitCode::from(crate::serve::EXIT_FAILURE);
    }
    let chunks_after = memory.status().map(|s| s.chunks).unwrap_or(chunks_before);
    print_report(
        &report,
        (chunks_after - chunks_before).max(0),
        started.elapsed().as_secs_f64(),
    );
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::serve::EXIT_FAILURE)
    }
}

/// Collects regular files under `root` (or `root` itself), in name order,
/// noting what is skipped and why.
fn walk(root: &Path, files: &mut Vec<Candidate>, report: &mut Report) {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((path, depth)) = stack.pop() {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                report.skip(format!("cannot read: {}", io_reason(&e)), &path);
                continue;
            }
        };
        let kind = meta.file_type();
        if kind.is_symlink() && depth > 0 {
            report.skip("symbolic link (not followed)", &path);
            continue;
        }
        // A path given on the command line is followed even if it is a link.
        let meta = if kind.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    report.skip(format!("cannot read: {}", io_reason(&e)), &path);
                    continue;
                }
            }
        } else {
            meta
        };
        if meta.is_dir() {
            if depth >= MAX_WALK_DEPTH {
                report.skip(
                    format!("folder nested deeper than {MAX_WALK_DEPTH} (MAX_WALK_DEPTH)"),
                    &path,
                );
                continue;
            }
            let entries = match std::fs::read_dir(&path) {
                Ok(e) => e,
                Err(e) => {
                    report.skip(format!("cannot read folder: {}", io_reason(&e)), &path);
                    continue;
                }
            };
            let mut children: Vec<PathBuf> = Vec::new();
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with('.') {
                    report.skip("hidden (name starts with a dot)", &entry.path());
                } else {
                    children.push(entry.path());
                }
            }
            // Reverse name order on the stack pops in name order.
            children.sort();
            stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
        } else if !meta.is_file() {
            report.skip("not a regular file", &path);
        } else if meta.len() == 0 {
            report.skip("empty", &path);
        } else if meta.len() > MAX_CONTENT_BYTES as u64 {
            report.skip(
                format!(
                    "larger than {} (MAX_CONTENT_BYTES)",
                    megabytes(MAX_CONTENT_BYTES as u64)
                ),
                &path,
            );
        } else {
            files.push(Candidate {
                path,
                size: meta.len(),
            });
        }
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "not found".into(),
        _ => e.kind().to_string(),
    }
}

/// Reads, types and ingests one file.
fn ingest_file(memory: &Memory<'_>, opened: &Opened, file: &Candidate) -> Outcome {
    let path = &file.path;
    let skipped = |reason: String| Outcome::Skipped {
        reason,
        path: path.clone(),
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return skipped(format!("cannot read: {}", io_reason(&e))),
    };
    if bytes.len() > MAX_CONTENT_BYTES {
        return skipped(format!(
            "larger than {} (MAX_CONTENT_BYTES)",
            megabytes(MAX_CONTENT_BYTES as u64)
        ));
    }
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
    throttle(&opened.service);
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
    };
    match memory.ingest(request) {
        Ok(r) if r.idempotent_replay => Outcome::AlreadyStored,
        Ok(_) => Outcome::Stored { bytes: file.size },
        Err(e) => match e {
            crate::error::Error::InvalidInput(_) | crate::error::Error::LimitExceeded(_) => {
                skipped(skip_reason(&e.client_message()))
            }
            other => Outcome::Failed {
                reason: other.logged("ingest").client_message(),
                path: path.clone(),
            },
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

fn print_report(report: &Report, chunks: i64, secs: f64) {
    let secs = secs.max(1e-3);
    println!(
        "ingest: {} file(s) seen ({}) in {}",
        report.files,
        megabytes(report.bytes),
        clock(secs)
    );
    println!(
        "  stored:         {} file(s), {}, {} chunk(s)",
        report.stored,
        megabytes(report.stored_bytes),
        chunks
    );
    println!(
        "  already stored: {} file(s) (unchanged since an earlier run)",
        report.already_stored
    );
    println!("  skipped:        {} file(s)", report.skipped_count());
    for (reason, (n, examples)) in &report.skipped {
        let shown: Vec<String> = examples.iter().map(|p| p.display().to_string()).collect();
        println!("    {n:>6}  {reason}  (e.g. {})", shown.join(", "));
    }
    println!("  failed:         {} file(s)", report.failed.len());
    for (path, reason) in &report.failed {
        println!("    {}: {reason}", path.display());
    }
    println!(
        "  throughput:     {:.1} files/s, {:.2} MB/s stored (extraction, embedding and \
         indexing included)",
        report.stored as f64 / secs,
        report.stored_bytes as f64 / 1e6 / secs
    );
}

#[cfg(test)]
mod tests {
    use super::*;

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
