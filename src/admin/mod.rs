//! Administrative subcommands of `alayasiki-mcp`: they run to completion on
//! a data directory (taking the same owner lock as the server) and report
//! progress on stderr.
//!
//! - `reindex`: re-embed everything with the configured embedder (after
//!   changing embedders, or when the vector files are damaged).
//! - `retry-failed`: queue every failed document of every tenant again
//!   and index it (the way back for documents `alayasiki_status` lists as
//!   failed; `reindex` does it too).
//! - `compact`: rewrite the vector files without deleted chunks' slots and
//!   merge the full-text indexes.
//! - [`bulk`]: `ingest PATH...`, files and folders from disk.
//! - [`query`]: `query TEXT` and `forget`, for humans at a terminal.
//! - [`cluster`]: `cluster status|push|pull`, an rqlite cluster's nodes
//!   and a data directory copied into one and back.
//! - [`export`] and [`import`]: the memory as JSON Lines, and back (also
//!   reads the MCP reference memory server's file).
//!
//! All of them go through [`crate::service::Memory`] as the stdio caller
//! would, so the CLI obeys the same rules and limits as the tools.

pub mod bulk;
pub mod cluster;
pub mod export;
pub mod import;
mod progress;
pub mod query;
mod regular_file;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{self, Config};
use crate::limits::BULK_FAULT_GIVE_UP_MS;
use crate::service::{MemoryService, Principal};
use crate::store::owner::{OwnerError, OwnerLock};
use crate::store::{Tenant, VectorPolicy};
use crate::transport::signals;

/// How often progress is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// A data directory opened for maintenance.
struct Opened {
    service: Arc<MemoryService>,
    config: Config,
    _owner: OwnerLock,
}

impl Opened {
    /// The caller the subcommand acts as: an admin of `--tenant` (else the
    /// configured tenant), with the configured subject, which is what the
    /// audit trail records.
    fn principal(&self, tenant: Option<String>, program: &str) -> Result<Principal, ExitCode> {
        let name = tenant.unwrap_or_else(|| self.config.tenant.clone());
        let tenant = Tenant::new(&name).map_err(|e| {
            eprintln!("alayasiki-mcp {program}: tenant {name:?}: {e}");
            ExitCode::from(crate::cli::USAGE_EXIT as u8)
        })?;
        Ok(Principal::local_admin(tenant, self.config.subject.clone()))
    }
}

/// Whether a subcommand may start a memory in an empty directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Refuse: there is nothing to work on (`query`, `export`, ...).
    Refuse,
    /// Create the directory and an empty store (`ingest`, `import`).
    Create,
}

fn open(
    data_dir: Option<PathBuf>,
    policy: VectorPolicy,
    program: &str,
) -> Result<Opened, ExitCode> {
    open_dir(data_dir, policy, program, Missing::Refuse)
}

fn open_dir(
    data_dir: Option<PathBuf>,
    policy: VectorPolicy,
    program: &str,
    missing: Missing,
) -> Result<Opened, ExitCode> {
    crate::logging::init();
    let fail = |msg: String, code: u8| {
        eprintln!("alayasiki-mcp {program}: {msg}");
        ExitCode::from(code)
    };
    let config = Config::resolve(data_dir, config::DEFAULT_DIR_NAME)
        .map_err(|e| fail(e.to_string(), crate::serve::EXIT_FAILURE))?;
    if missing == Missing::Create {
        config::ensure_data_dir(&config.data_dir)
            .map_err(|e| fail(e, crate::serve::EXIT_FAILURE))?;
    } else {
        config::require_store(&config.data_dir, crate::store::DB_FILE)
            .map_err(|e| fail(e, crate::serve::EXIT_FAILURE))?;
    }
    let owner =
        OwnerLock::acquire(&config.data_dir, &format!("alayasiki-mcp {program}")).map_err(|e| {
            let code = match e {
                OwnerError::Held { .. } => crate::serve::EXIT_DIR_IN_USE,
                _ => crate::serve::EXIT_FAILURE,
            };
            fail(e.to_string(), code)
        })?;
    let embedder =
        crate::embed::embedder::from_env().map_err(|e| fail(e, crate::serve::EXIT_FAILURE))?;
    let service = MemoryService::open_with(&config.data_dir, config.durability, embedder, policy)
        .map_err(|e| fail(e.client_message(), crate::serve::EXIT_FAILURE))?;
    Ok(Opened {
        service: Arc::new(service),
        config,
        _owner: owner,
    })
}

/// Most indexing jobs a bulk subcommand lets wait before it pauses. Work
/// prepared for waiting jobs is held in memory (up to the worker's
/// hand-off budget); far beyond it, work would be dropped and redone.
const MAX_BULK_BACKLOG: i64 = 512;

/// Since when the disk has held indexing up, without a commit between
/// (one memory per subcommand process).
static HELD_UP_SINCE: Mutex<Option<Instant>> = Mutex::new(None);

/// An error naming what has held indexing up for [`BULK_FAULT_GIVE_UP_MS`]:
/// the disk's fault, or an embedding server that fails every request. A
/// server resumes by itself when either recovers, but a subcommand waiting
/// on it would wait forever.
fn held_up(service: &MemoryService) -> crate::error::Result<()> {
    let give_up = Duration::from_millis(BULK_FAULT_GIVE_UP_MS);
    if service.embed_failing_for().is_some_and(|d| d >= give_up) {
        return Err(crate::error::Error::Unavailable(format!(
            "the embedding server has failed every request for {} s (the log says why), so \
             this stops here; what was stored is kept and found by keyword search, and is \
             embedded once the memory is opened again with the server answering",
            BULK_FAULT_GIVE_UP_MS / 1000
        )));
    }
    let mut since = HELD_UP_SINCE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(fault) = service.storage_fault() else {
        *since = None;
        return Ok(());
    };
    let began = *since.get_or_insert_with(Instant::now);
    if began.elapsed() < give_up {
        return Ok(());
    }
    Err(crate::error::Error::Unavailable(format!(
        "{}: indexing has been held up for {} s, so this stops here; what was stored is kept \
         (and indexed the next time the memory is opened): once the disk accepts writes, run \
         the command again to go on",
        fault.describe(),
        BULK_FAULT_GIVE_UP_MS / 1000
    )))
}

/// Pauses while the ingestion worker is more than [`MAX_BULK_BACKLOG`]
/// jobs behind (bulk subcommands ingest without waiting for each document,
/// so documents are committed in groups). A termination signal ends the
/// pause (when the subcommand installed the handlers); a disk that holds
/// indexing up too long ends it with an error ([`held_up`]).
fn throttle(service: &MemoryService) -> crate::error::Result<()> {
    while !signals::requested()
        && service
            .pending_jobs()
            .is_ok_and(|pending| pending > MAX_BULK_BACKLOG)
    {
        held_up(service)?;
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Waits until the ingestion worker has no pending jobs, reporting
/// progress with `label` (subcommands that ingest without waiting for each
/// document end here so their report counts indexed documents). A
/// termination signal ends the wait: pending jobs are journaled, and the
/// next open of the store resumes them.
fn drain(service: &MemoryService, label: &str) -> crate::error::Result<()> {
    let total = service.pending_jobs()?;
    if total == 0 {
        return Ok(());
    }
    let mut progress =
        progress::Progress::new(label, "documents indexed", Some(total as u64), None);
    loop {
        let pending = service.pending_jobs()?;
        progress.set((total - pending).max(0) as u64, 0);
        if pending == 0 || signals::requested() {
            break;
        }
        if let Err(e) = held_up(service) {
            progress.finish();
            return Err(e);
        }
        std::thread::sleep(progress::TICK);
    }
    progress.finish();
    Ok(())
}

/// Waits until the ingestion worker has no pending jobs, a termination
/// signal, or `limit`; returns how many jobs are still pending.
fn settle(service: &MemoryService, limit: Duration) -> crate::error::Result<i64> {
    let deadline = Instant::now() + limit;
    loop {
        let pending = service.pending_jobs()?;
        if pending == 0 || signals::requested() || Instant::now() >= deadline {
            return Ok(pending);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `alayasiki-mcp reindex [--data-dir DIR]`.
pub fn reindex(data_dir: Option<PathBuf>) -> ExitCode {
    let opened = match open(data_dir, VectorPolicy::Rebuild, "reindex") {
        Ok(o) => o,
        Err(code) => return code,
    };
    let started = Instant::now();
    match opened.service.requeue_failed() {
        Ok(0) => {}
        Ok(n) => eprintln!("reindex: {n} failed document(s) queued again"),
        Err(e) => {
            eprintln!("alayasiki-mcp reindex: {}", e.client_message());
            opened.service.shutdown();
            return ExitCode::from(crate::serve::EXIT_FAILURE);
        }
    }
    let (total, _) = opened.service.backlog().unwrap_or((0, 0));
    loop {
        let (pending, _) = match opened.service.backlog() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("alayasiki-mcp reindex: {}", e.client_message());
                opened.service.shutdown();
                return ExitCode::from(crate::serve::EXIT_FAILURE);
            }
        };
        let done = (total - pending).max(0);
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        let rate = done as f64 / secs;
        let eta = if rate > 0.0 {
            pending as f64 / rate
        } else {
            0.0
        };
        eprintln!(
            "reindex: {done}/{total} documents embedded ({:.0}%), {rate:.0} docs/s, ETA {eta:.0}s",
            if total > 0 {
                done as f64 * 100.0 / total as f64
            } else {
                100.0
            }
        );
        if pending == 0 {
            break;
        }
        if let Err(e) = held_up(&opened.service) {
            eprintln!("alayasiki-mcp reindex: {}", e.client_message());
            opened.service.shutdown();
            return ExitCode::from(crate::serve::EXIT_FAILURE);
        }
        std::thread::sleep(PROGRESS_EVERY);
    }
    opened.service.shutdown();
    eprintln!("reindex: done in {:.1}s", started.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}

/// `alayasiki-mcp retry-failed [--data-dir DIR]`: queues every failed
/// document again, attempts forgotten, and waits until they are indexed
/// (or failed again).
pub fn retry_failed(data_dir: Option<PathBuf>) -> ExitCode {
    let opened = match open(data_dir, VectorPolicy::Keep, "retry-failed") {
        Ok(o) => o,
        Err(code) => return code,
    };
    let outcome = opened.service.requeue_failed().and_then(|n| {
        eprintln!("retry-failed: {n} failed document(s) queued again");
        drain(&opened.service, "retry-failed")?;
        opened.service.backlog()
    });
    opened.service.shutdown();
    match outcome {
        Ok((_, 0)) => ExitCode::SUCCESS,
        Ok((_, failed)) => {
            eprintln!("retry-failed: {failed} job(s) failed again; see alayasiki_status");
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
        Err(e) => {
            let e = e.logged("retry-failed");
            eprintln!("alayasiki-mcp retry-failed: {}", e.client_message());
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
    }
}

/// `alayasiki-mcp compact [--data-dir DIR]`.
pub fn compact(data_dir: Option<PathBuf>) -> ExitCode {
    let opened = match open(data_dir, VectorPolicy::Keep, "compact") {
        Ok(o) => o,
        Err(code) => return code,
    };
    let outcome = opened.service.compact();
    opened.service.shutdown();
    match outcome {
        Ok(report) => {
            for c in report {
                eprintln!(
                    "compact: tenant {:?}: {} vector rows -> {}",
                    c.tenant, c.rows_before, c.rows_after
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let e = e.logged("compact");
            eprintln!("alayasiki-mcp compact: {}", e.client_message());
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
    }
}
