//! Administrative subcommands of `alayasiki-mcp`: they run to completion on
//! a data directory's memory and report progress on stderr.
//!
//! - `reindex`: re-embed everything with the configured embedder (after
//!   changing embedders, or when the vector files are damaged). It needs
//!   the directory alone: an idle owner is asked to make way first.
//! - `retry-failed`: queue every failed document of every tenant again
//!   and index it (the way back for documents `alayasiki_status` lists as
//!   failed; `reindex` does it too).
//! - `compact`: rewrite the vector files without deleted chunks' slots and
//!   merge the full-text indexes.
//! - [`bulk`]: `ingest PATH...`, files and folders from disk.
//! - [`query`]: `query TEXT` and `forget`, for humans at a terminal.
//! - [`status`]: what is stored and which process serves it.
//! - [`cluster`]: `cluster status|push|pull`, an rqlite cluster's nodes
//!   and a data directory copied into one and back.
//! - [`export`] and [`import`]: the memory as JSON Lines, and back (also
//!   reads the MCP reference memory server's file).
//!
//! Every command but `reindex` and `cluster` is a [`Task`]: [`task::run`]
//! sends it to the data directory's owner (started when none runs), which
//! runs it on the memory its agents use and sends back what it prints;
//! with `--in-process` the command opens the memory itself instead. Either
//! way it prints through a [`Console`] and goes through
//! [`crate::service::Memory`] as the stdio caller would, so the CLI obeys
//! the same rules and limits as the tools.

pub mod bulk;
pub mod cluster;
mod console;
pub mod export;
pub mod import;
mod progress;
pub mod query;
mod regular_file;
pub mod status;
pub mod task;
pub mod version;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{self, Config};
use crate::limits::BULK_FAULT_GIVE_UP_MS;
use crate::service::{MemoryService, Principal};
use crate::store::owner::{OwnerError, OwnerLock};
use crate::store::{Tenant, VectorPolicy};
use console::errln;
pub use console::Console;
pub use task::Task;

/// How often progress is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long `reindex` waits for an owner that agreed to make way to close
/// the memory (it finishes its writes and checkpoints first).
const OWNER_HANDOVER_TIMEOUT: Duration = Duration::from_secs(30);

/// A subcommand's exit status.
pub type Exit = u8;

/// What a command runs with: the memory, where it prints, and who it acts
/// for by default.
pub struct Context {
    pub service: Arc<MemoryService>,
    pub console: Console,
    /// The tenant acted for unless `--tenant` names another.
    pub tenant: String,
    /// The subject the audit trail records.
    pub subject: String,
    pub data_dir: PathBuf,
    /// Since when the disk has held indexing up (no commit since).
    held_up_since: Mutex<Option<Instant>>,
}

impl Context {
    pub fn new(
        service: Arc<MemoryService>,
        console: Console,
        tenant: String,
        subject: String,
        data_dir: PathBuf,
    ) -> Context {
        Context {
            service,
            console,
            tenant,
            subject,
            data_dir,
            held_up_since: Mutex::new(None),
        }
    }

    /// The caller the subcommand acts as: an admin of `--tenant` (else the
    /// configured tenant), with the configured subject, which is what the
    /// audit trail records.
    fn principal(&self, tenant: Option<String>, program: &str) -> Result<Principal, Exit> {
        let name = tenant.unwrap_or_else(|| self.tenant.clone());
        let tenant = Tenant::new(&name).map_err(|e| {
            errln!(
                self.console,
                "alayasiki-mcp {program}: tenant {name:?}: {e}"
            );
            crate::cli::USAGE_EXIT as Exit
        })?;
        Ok(Principal::local_admin(tenant, self.subject.clone()))
    }
}

/// A data directory opened by the command itself (`--in-process`).
struct Opened {
    service: Arc<MemoryService>,
    config: Config,
    _owner: OwnerLock,
}

impl Opened {
    fn context(&self) -> Context {
        Context::new(
            self.service.clone(),
            Console::process(),
            self.config.tenant.clone(),
            self.config.subject.clone(),
            self.config.data_dir.clone(),
        )
    }
}

/// Whether a subcommand may start a memory in an empty directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Refuse: there is nothing to work on (`query`, `export`, ...).
    Refuse,
    /// Create the directory and an empty store (`ingest`, `import`).
    Create,
}

/// Checks that `config`'s directory holds a memory (or makes one, as
/// `missing` says).
fn check_dir(config: &Config, missing: Missing) -> Result<(), String> {
    if missing == Missing::Create {
        config::ensure_data_dir(&config.data_dir)
    } else {
        config::require_store(&config.data_dir, crate::store::DB_FILE)
    }
}

/// Takes `dir` for `alayasiki-mcp {program}`, waiting up to `wait` for a
/// holder that is stopping to let go.
fn take_dir(dir: &std::path::Path, program: &str, wait: Duration) -> Result<OwnerLock, OwnerError> {
    let deadline = Instant::now() + wait;
    loop {
        match OwnerLock::acquire(dir, &format!("alayasiki-mcp {program}")) {
            Err(OwnerError::Held { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            taken => return taken,
        }
    }
}

/// Opens `config`'s memory in this process, taking the directory (waiting
/// up to `wait` for a holder that is stopping to let go).
fn open_here(
    config: Config,
    policy: VectorPolicy,
    program: &str,
    wait: Duration,
) -> Result<Opened, Exit> {
    let fail = |msg: String, code: u8| {
        eprintln!("alayasiki-mcp {program}: {msg}");
        code
    };
    let owner = take_dir(&config.data_dir, program, wait).map_err(|e| {
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

/// An error naming what has held indexing up for [`BULK_FAULT_GIVE_UP_MS`]:
/// the disk's fault, or an embedding server that fails every request. A
/// server resumes by itself when either recovers, but a subcommand waiting
/// on it would wait forever.
fn held_up(ctx: &Context) -> crate::error::Result<()> {
    let give_up = Duration::from_millis(BULK_FAULT_GIVE_UP_MS);
    if ctx
        .service
        .embed_failing_for()
        .is_some_and(|d| d >= give_up)
    {
        return Err(crate::error::Error::Unavailable(format!(
            "the embedding server has failed every request for {} s (the log says why), so \
             this stops here; what was stored is kept and found by keyword search, and is \
             embedded once the memory is opened again with the server answering",
            BULK_FAULT_GIVE_UP_MS / 1000
        )));
    }
    let mut since = ctx.held_up_since.lock().unwrap_or_else(|p| p.into_inner());
    let Some(fault) = ctx.service.storage_fault() else {
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
/// so documents are committed in groups). A request to stop ends the
/// pause; a disk that holds indexing up too long ends it with an error
/// ([`held_up`]).
fn throttle(ctx: &Context) -> crate::error::Result<()> {
    while !ctx.console.stopping()
        && ctx
            .service
            .pending_jobs()
            .is_ok_and(|pending| pending > MAX_BULK_BACKLOG)
    {
        held_up(ctx)?;
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Waits until the ingestion worker has no pending jobs, reporting
/// progress with `label` (subcommands that ingest without waiting for each
/// document end here so their report counts indexed documents). A request
/// to stop ends the wait: pending jobs are journaled, and indexed by the
/// owner (or the next open of the store).
fn drain(ctx: &Context, label: &str) -> crate::error::Result<()> {
    let total = ctx.service.pending_jobs()?;
    if total == 0 {
        return Ok(());
    }
    let mut progress = progress::Progress::new(
        &ctx.console,
        label,
        "documents indexed",
        Some(total as u64),
        None,
    );
    loop {
        let pending = ctx.service.pending_jobs()?;
        progress.set((total - pending).max(0) as u64, 0);
        if pending == 0 || ctx.console.stopping() {
            break;
        }
        if let Err(e) = held_up(ctx) {
            progress.finish();
            return Err(e);
        }
        std::thread::sleep(progress::TICK);
    }
    progress.finish();
    Ok(())
}

/// Waits until the ingestion worker has no pending jobs, a request to
/// stop, or `limit`; returns how many jobs are still pending.
fn settle(ctx: &Context, limit: Duration) -> crate::error::Result<i64> {
    let deadline = Instant::now() + limit;
    loop {
        let pending = ctx.service.pending_jobs()?;
        if pending == 0 || ctx.console.stopping() || Instant::now() >= deadline {
            return Ok(pending);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `alayasiki-mcp reindex [--data-dir DIR]`: it reopens the memory with
/// the configured embedder, so it needs the directory alone. An owner with
/// no client connected is asked to make way first; one that serves agents
/// is named, and nothing is done.
pub fn reindex(data_dir: Option<PathBuf>, in_process: bool) -> ExitCode {
    crate::logging::init();
    let fail = |msg: String, code: u8| {
        eprintln!("alayasiki-mcp reindex: {msg}");
        ExitCode::from(code)
    };
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string(), crate::serve::EXIT_FAILURE),
    };
    if let Err(e) = check_dir(&config, Missing::Refuse) {
        return fail(e, crate::serve::EXIT_FAILURE);
    }
    // An owner that made way takes a moment to close the memory.
    let mut wait = Duration::ZERO;
    if !in_process {
        match task::clear_owner(&config) {
            Ok(Some(pid)) => {
                eprintln!("reindex: the memory owner (pid {pid}) had no client and is making way");
                wait = OWNER_HANDOVER_TIMEOUT;
            }
            Ok(None) => {}
            Err(e) => return fail(e, crate::serve::EXIT_DIR_IN_USE),
        }
    }
    let opened = match open_here(config, VectorPolicy::Rebuild, "reindex", wait) {
        Ok(o) => o,
        Err(code) => return ExitCode::from(code),
    };
    let code = rebuild(&opened);
    opened.service.shutdown();
    ExitCode::from(code)
}

/// Re-embeds every document of the memory `opened` with
/// [`VectorPolicy::Rebuild`], reporting progress.
fn rebuild(opened: &Opened) -> Exit {
    let started = Instant::now();
    let ctx = opened.context();
    match opened.service.requeue_failed() {
        Ok(0) => {}
        Ok(n) => eprintln!("reindex: {n} failed document(s) queued again"),
        Err(e) => {
            eprintln!("alayasiki-mcp reindex: {}", e.client_message());
            return crate::serve::EXIT_FAILURE;
        }
    }
    let (total, _) = opened.service.backlog().unwrap_or((0, 0));
    loop {
        let (pending, _) = match opened.service.backlog() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("alayasiki-mcp reindex: {}", e.client_message());
                return crate::serve::EXIT_FAILURE;
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
        if let Err(e) = held_up(&ctx) {
            eprintln!("alayasiki-mcp reindex: {}", e.client_message());
            return crate::serve::EXIT_FAILURE;
        }
        std::thread::sleep(PROGRESS_EVERY);
    }
    eprintln!("reindex: done in {:.1}s", started.elapsed().as_secs_f64());
    0
}

/// `alayasiki-mcp retry-failed`: queues every failed document again,
/// attempts forgotten, and waits until they are indexed (or failed again).
fn retry_failed(ctx: &Context) -> Exit {
    let outcome = ctx.service.requeue_failed().and_then(|n| {
        errln!(
            ctx.console,
            "retry-failed: {n} failed document(s) queued again"
        );
        drain(ctx, "retry-failed")?;
        ctx.service.backlog()
    });
    match outcome {
        Ok((_, 0)) => 0,
        Ok((_, failed)) => {
            errln!(
                ctx.console,
                "retry-failed: {failed} job(s) failed again; see alayasiki_status"
            );
            crate::serve::EXIT_FAILURE
        }
        Err(e) => {
            let e = e.logged("retry-failed");
            errln!(
                ctx.console,
                "alayasiki-mcp retry-failed: {}",
                e.client_message()
            );
            crate::serve::EXIT_FAILURE
        }
    }
}

/// `alayasiki-mcp compact`.
fn compact(ctx: &Context) -> Exit {
    match ctx.service.compact() {
        Ok(report) => {
            for c in report {
                errln!(
                    ctx.console,
                    "compact: tenant {:?}: {} vector rows -> {}",
                    c.tenant,
                    c.rows_before,
                    c.rows_after
                );
            }
            0
        }
        Err(e) => {
            let e = e.logged("compact");
            errln!(ctx.console, "alayasiki-mcp compact: {}", e.client_message());
            crate::serve::EXIT_FAILURE
        }
    }
}
