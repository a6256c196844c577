//! Entry points of the binaries: turn a parsed command into a running
//! server and its outcome into an exit status.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::{self, Config};
use crate::protocol::mcp::{Server, Session};
use crate::service::{MemoryService, Principal};
use crate::store::owner::{OwnerError, OwnerLock};
use crate::store::Tenant;

/// Exit status when another process owns the data directory.
pub const EXIT_DIR_IN_USE: u8 = 3;
/// Exit status for any other start-up failure.
pub const EXIT_FAILURE: u8 = 1;

/// `alayasiki-mcp [--data-dir DIR]`: serve MCP on stdio until stdin closes.
pub fn stdio(data_dir: Option<PathBuf>) -> ExitCode {
    crate::logging::init();
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    if let Err(e) = config::ensure_data_dir(&config.data_dir) {
        return fail(
            &format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ),
            EXIT_FAILURE,
        );
    }
    let _owner = match OwnerLock::acquire(&config.data_dir, "alayasiki-mcp") {
        Ok(lock) => lock,
        Err(e @ OwnerError::Held { .. }) => return fail(&e.to_string(), EXIT_DIR_IN_USE),
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    let embedder = match crate::embed::embedder::from_env() {
        Ok(e) => e,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let service = match MemoryService::open(&config.data_dir, config.durability, embedder) {
        Ok(s) => Arc::new(s),
        Err(e) => return fail(&format!("cannot open the memory store: {e}"), EXIT_FAILURE),
    };
    log::info!(
        "serving MCP on stdio; data dir {}; tenant {:?}, subject {:?}; durability {}",
        config.data_dir.display(),
        config.tenant,
        config.subject,
        config.durability.name()
    );
    let principal = match principal(&config) {
        Ok(p) => p,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let server = Arc::new(Server::new(service.clone()));
    let session = Arc::new(Session::new(principal));
    let stdin = std::io::stdin().lock();
    let outcome = crate::transport::stdio::serve(server, session, stdin, std::io::stdout());
    service.shutdown();
    match outcome {
        Ok(()) => {
            log::info!("stdin closed; shut down cleanly");
            ExitCode::SUCCESS
        }
        // A closed stdout means the client went away: nothing to report to.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("stdio failed: {e}"), EXIT_FAILURE),
    }
}

fn principal(config: &Config) -> Result<Principal, String> {
    let tenant = Tenant::new(&config.tenant).map_err(|e| format!("{}: {e}", config::TENANT_ENV))?;
    Ok(Principal::local_admin(tenant, config.subject.clone()))
}

fn fail(message: &str, code: u8) -> ExitCode {
    log::error!("{message}");
    // Also plainly on stderr in case logging is off: a user must see why.
    if log::max_level() < log::LevelFilter::Error {
        eprintln!("alayasiki-mcp: {message}");
    }
    ExitCode::from(code)
}
