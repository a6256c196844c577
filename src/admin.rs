//! Administrative subcommands of `alayasiki-mcp`: they run to completion on
//! a data directory (taking the same owner lock as the server) and report
//! progress on stderr.
//!
//! - `reindex`: re-embed everything with the configured embedder (after
//!   changing embedders, or when the vector files are damaged).
//! - `compact`: rewrite the vector files without deleted chunks' slots.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{self, Config};
use crate::service::MemoryService;
use crate::store::owner::{OwnerError, OwnerLock};
use crate::store::VectorPolicy;

/// How often progress is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// A data directory opened for maintenance.
struct Opened {
    service: Arc<MemoryService>,
    _owner: OwnerLock,
}

fn open(
    data_dir: Option<PathBuf>,
    policy: VectorPolicy,
    program: &str,
) -> Result<Opened, ExitCode> {
    crate::logging::init();
    let fail = |msg: String, code: u8| {
        eprintln!("alayasiki-mcp {program}: {msg}");
        ExitCode::from(code)
    };
    let config = Config::resolve(data_dir, config::DEFAULT_DIR_NAME)
        .map_err(|e| fail(e.to_string(), crate::serve::EXIT_FAILURE))?;
    if !config.data_dir.join(crate::store::DB_FILE).exists() {
        return Err(fail(
            format!("no memory store in {}", config.data_dir.display()),
            crate::serve::EXIT_FAILURE,
        ));
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
        _owner: owner,
    })
}

/// `alayasiki-mcp reindex [--data-dir DIR]`.
pub fn reindex(data_dir: Option<PathBuf>) -> ExitCode {
    let opened = match open(data_dir, VectorPolicy::Rebuild, "reindex") {
        Ok(o) => o,
        Err(code) => return code,
    };
    let started = Instant::now();
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
        std::thread::sleep(PROGRESS_EVERY);
    }
    opened.service.shutdown();
    eprintln!("reindex: done in {:.1}s", started.elapsed().as_secs_f64());
    ExitCode::SUCCESS
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
