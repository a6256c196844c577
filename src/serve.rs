//! Entry points of the binaries: turn a parsed command into a running
//! server and its outcome into an exit status.

use std::net::SocketAddr;
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

/// `alayasiki-mcp [--data-dir DIR] [--deterministic]`: serve MCP on stdio
/// until stdin closes.
pub fn stdio(data_dir: Option<PathBuf>, deterministic: bool) -> ExitCode {
    let deterministic = match config::Deterministic::from_env(deterministic) {
        Ok(d) => d,
        Err(e) => {
            crate::logging::init();
            return fail(&e.to_string(), EXIT_FAILURE);
        }
    };
    if let Some(d) = deterministic {
        d.apply();
    }
    crate::logging::init();
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    let (_owner, service) = match open_memory(&config, "alayasiki-mcp") {
        Ok(opened) => opened,
        Err(code) => return code,
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
    if deterministic.is_some() {
        log::info!("deterministic mode: fixed clock, seeded ids, one request at a time");
    }
    let serial = deterministic.is_some();
    let outcome = crate::transport::stdio::serve(server, session, stdin, std::io::stdout(), serial);
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

/// `alayasiki-api [--bind ADDR] [--data-dir DIR]`: serve the HTTP API and
/// MCP over SSE until SIGTERM or SIGINT, then shut down gracefully.
pub fn api(bind: SocketAddr, data_dir: Option<PathBuf>) -> ExitCode {
    crate::logging::init();
    // Configuration problems are reported before the directory is taken.
    let settings = match api_settings() {
        Ok(s) => s,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let config = match Config::resolve(data_dir, config::API_DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    if let Err(e) = crate::transport::signals::install() {
        return fail(
            &format!("cannot install signal handlers: {e}"),
            EXIT_FAILURE,
        );
    }
    // Bound with its socket timeouts set at once, before the memory is
    // opened and the address announced (see `listener::listen`).
    let listener = match crate::transport::listener::listen(bind) {
        Ok(l) => l,
        Err(e) => return fail(&format!("cannot listen on {bind}: {e}"), EXIT_FAILURE),
    };
    let (_owner, service) = match open_memory(&config, "alayasiki-api") {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let bound = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    // Always on stderr, whatever the log level: scripts and tests started
    // with port 0 read the port from this line.
    eprintln!("alayasiki-api: listening on http://{bound}");
    log::info!(
        "serving HTTP on {bound}; data dir {}; tokens {}; rate {}/s, burst {} per caller; \
         durability {}",
        config.data_dir.display(),
        settings.auth.algorithm(),
        settings.rate.rate_per_sec(),
        settings.rate.burst(),
        config.durability.name()
    );
    let outcome = crate::transport::http::serve(service.clone(), listener, settings);
    service.shutdown();
    match outcome {
        Ok(()) => {
            log::info!("shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("HTTP server failed: {e}"), EXIT_FAILURE),
    }
}

fn api_settings() -> Result<crate::transport::http::Settings, String> {
    Ok(crate::transport::http::Settings {
        auth: crate::transport::auth::Authenticator::from_env()?,
        rate: crate::transport::admission::RateLimiter::from_env()?,
    })
}

/// Creates the data directory, takes ownership of it for `program` and
/// opens the memory in it; on failure, the exit status to return.
fn open_memory(
    config: &Config,
    program: &str,
) -> Result<(OwnerLock, Arc<MemoryService>), ExitCode> {
    if let Err(e) = config::ensure_data_dir(&config.data_dir) {
        return Err(fail(
            &format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ),
            EXIT_FAILURE,
        ));
    }
    let owner = match OwnerLock::acquire(&config.data_dir, program) {
        Ok(lock) => lock,
        Err(e @ OwnerError::Held { .. }) => return Err(fail(&e.to_string(), EXIT_DIR_IN_USE)),
        Err(e) => return Err(fail(&e.to_string(), EXIT_FAILURE)),
    };
    let embedder = crate::embed::embedder::from_env().map_err(|e| fail(&e, EXIT_FAILURE))?;
    match MemoryService::open(&config.data_dir, config.durability, embedder) {
        Ok(s) => Ok((owner, Arc::new(s))),
        Err(e) => Err(fail(
            &format!("cannot open the memory store: {e}"),
            EXIT_FAILURE,
        )),
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
