//! Entry points of the binaries: turn a parsed command into a running
//! server and its outcome into an exit status.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{self, Config};
use crate::protocol::mcp::{Server, Session};
use crate::service::{MemoryService, Principal};
use crate::store::owner::{OwnerError, OwnerLock};
use crate::store::Tenant;
use crate::transport::loopback_ui::{self, LoopbackUi};

pub use crate::store::owner::EXIT_DIR_IN_USE;
/// Exit status for any other start-up failure.
pub const EXIT_FAILURE: u8 = 1;

/// How often `alayasiki-mcp ui` looks for a termination signal.
pub(crate) const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// Set to 1 to serve stdio in this process instead of through the data
/// directory's owner (as `--in-process` does).
pub const IN_PROCESS_ENV: &str = "ALAYASIKI_IN_PROCESS";

/// `alayasiki-mcp [--data-dir DIR] [--deterministic] [--ui] [--ui-bind
/// ADDR] [--allow-remote] [--in-process]`: serve MCP on stdio until stdin
/// closes. Through the data directory's owner (started when none runs),
/// unless the store must be this process's alone: `--in-process`,
/// deterministic mode, the memory browser beside stdio (`ui`, `ui_bind` or
/// the environment), or a platform without Unix sockets.
pub fn stdio(
    data_dir: Option<PathBuf>,
    deterministic: bool,
    ui: bool,
    ui_bind: Option<SocketAddr>,
    allow_remote: bool,
    in_process: bool,
) -> ExitCode {
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
    let ui_bind = match config::ui_from_env(ui, ui_bind, loopback_ui::DEFAULT_UI_BIND) {
        Ok(b) => b,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    // `--ui-bind` was checked with the command line; this catches
    // `ALAYASIKI_UI_BIND`.
    if let Some(Err(e)) = ui_bind.map(|b| loopback_ui::check_bind(b, allow_remote)) {
        return fail(&e, EXIT_FAILURE);
    }
    let in_process = match in_process_from_env() {
        Ok(from_env) => in_process || from_env,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    if !in_process && deterministic.is_none() && ui_bind.is_none() && cfg!(unix) {
        return relay(&config);
    }
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
    // Started before stdin is read, so the URL is announced at once; it
    // has threads of its own and stops before the store does.
    let browser = match ui_bind {
        Some(bind) => match start_browser(&service, &principal, bind, &config.data_dir) {
            Ok(b) => {
                // The one line that carries the secret, whatever the log
                // level: the user opens it from here or from the file.
                eprintln!("alayasiki-mcp: memory browser at {}", b.url());
                Some(b)
            }
            Err(e) => {
                service.shutdown();
                return fail(&e, EXIT_FAILURE);
            }
        },
        None => {
            // A URL left by a run that was killed names a dead secret.
            loopback_ui::remove_url_file(&config.data_dir);
            None
        }
    };
    let server = Arc::new(Server::new(service.clone()));
    let session = Arc::new(Session::new(principal));
    let stdin = std::io::stdin().lock();
    if deterministic.is_some() {
        log::info!("deterministic mode: fixed clock, seeded ids, one request at a time");
    }
    let serial = deterministic.is_some();
    let outcome = crate::transport::stdio::serve(server, session, stdin, std::io::stdout(), serial);
    if let Some(browser) = browser {
        stop_browser(browser);
    }
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

/// Whether [`IN_PROCESS_ENV`] asks for an in-process server.
pub(crate) fn in_process_from_env() -> Result<bool, String> {
    match config::env(IN_PROCESS_ENV).as_deref() {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(format!("{IN_PROCESS_ENV} must be 1 or 0, not {other:?}")),
    }
}

/// Serves stdio through the owner of the configured data directory.
#[cfg(unix)]
fn relay(config: &Config) -> ExitCode {
    use crate::transport::local::relay;
    // The identity is checked here, as an in-process server would.
    if let Err(e) = principal(config) {
        return fail(&e, EXIT_FAILURE);
    }
    log::info!(
        "serving MCP on stdio through the memory owner of {}; tenant {:?}, subject {:?}",
        config.data_dir.display(),
        config.tenant,
        config.subject
    );
    let target = relay::Target {
        data_dir: config.data_dir.clone(),
        tenant: config.tenant.clone(),
        subject: config.subject.clone(),
    };
    match relay::run(target) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string(), EXIT_FAILURE),
    }
}

#[cfg(not(unix))]
fn relay(_config: &Config) -> ExitCode {
    unreachable!("stdio is served in-process where there are no Unix sockets")
}

/// `alayasiki-mcp owner [--data-dir DIR]`: own the data directory and serve
/// its memory to the local clients that reach its socket, until SIGTERM or
/// SIGINT, or until no client has been connected for the idle period.
#[cfg(unix)]
pub fn owner(data_dir: Option<PathBuf>) -> ExitCode {
    use crate::transport::local::{endpoint, owner, start::OWNER_PROGRAM};
    crate::logging::init();
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    let idle_exit = match owner::idle_exit_from_env() {
        Ok(d) => d,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    if let Err(e) = crate::transport::signals::install() {
        return fail(
            &format!("cannot install signal handlers: {e}"),
            EXIT_FAILURE,
        );
    }
    let (lock, service) = match open_memory(&config, OWNER_PROGRAM) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let socket = match endpoint::socket_path(&config.data_dir) {
        Ok(p) => p,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let listener = match endpoint::bind(&config.data_dir) {
        Ok(l) => l,
        Err(e) => {
            service.shutdown();
            return fail(&e, EXIT_FAILURE);
        }
    };
    log::info!(
        "memory owner of {} (pid {}, version {}): serving local clients on {}; {}",
        config.data_dir.display(),
        std::process::id(),
        env!("CARGO_PKG_VERSION"),
        socket.display(),
        match idle_exit {
            Some(d) => format!("stops after {} s with no client", d.as_secs()),
            None => "stays up until stopped".into(),
        }
    );
    let server = Arc::new(Server::new(service.clone()));
    let runner = crate::admin::task::runner(service.clone(), config.data_dir.clone());
    let outcome = crate::transport::local::owner::serve(
        server,
        runner,
        listener,
        socket.clone(),
        idle_exit,
        &crate::transport::signals::requested,
    );
    // The socket goes before the lock does: the next owner binds its own.
    let _ = std::fs::remove_file(&socket);
    service.shutdown();
    drop(lock);
    match outcome {
        Ok(()) => {
            log::info!("shut down cleanly");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("serving local clients failed: {e}"), EXIT_FAILURE),
    }
}

#[cfg(not(unix))]
pub fn owner(_data_dir: Option<PathBuf>) -> ExitCode {
    crate::logging::init();
    fail(
        "a memory owner serves local clients over a Unix socket, which this platform lacks; \
         run alayasiki-mcp itself (it serves in-process here) or alayasiki-api",
        EXIT_FAILURE,
    )
}

/// `alayasiki-mcp ui [--data-dir DIR] [--bind ADDR] [--allow-remote]
/// [--in-process]`: serve the memory browser until SIGTERM or SIGINT. The
/// directory's owner serves it (started when none runs), beside the agents
/// it serves; in-process, this command opens the memory itself, and a
/// directory another process holds is named.
pub fn browse(
    data_dir: Option<PathBuf>,
    bind: Option<SocketAddr>,
    allow_remote: bool,
    in_process: bool,
) -> ExitCode {
    crate::logging::init();
    let in_process = match in_process_from_env() {
        Ok(from_env) => in_process || from_env || cfg!(not(unix)),
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    if let Err(e) = crate::transport::signals::install() {
        return fail(
            &format!("cannot install signal handlers: {e}"),
            EXIT_FAILURE,
        );
    }
    let principal = match principal(&config) {
        Ok(p) => p,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let bind = match bind {
        Some(b) => b,
        None => match config::ui_bind_from_env(loopback_ui::DEFAULT_UI_BIND) {
            Ok(b) => b,
            Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
        },
    };
    if let Err(e) = loopback_ui::check_bind(bind, allow_remote) {
        return fail(&e, EXIT_FAILURE);
    }
    if !in_process {
        return crate::admin::task::run(
            crate::admin::Task::Ui { bind },
            Some(config.data_dir),
            false,
        );
    }
    let owner = match own_dir(&config, "alayasiki-mcp ui", held_by_a_server) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let service = match open_service(&config) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let browser = match start_browser(&service, &principal, bind, &config.data_dir) {
        Ok(b) => b,
        Err(e) => {
            service.shutdown();
            return fail(&e, EXIT_FAILURE);
        }
    };
    // The command's output: the URL, once.
    crate::cli::stdout::outln!("{}", browser.url());
    log::info!(
        "serving the memory browser at {}; data dir {}; Ctrl-C stops it",
        browser.status().address,
        config.data_dir.display()
    );
    while !crate::transport::signals::requested() && !browser.has_stopped() {
        std::thread::sleep(SIGNAL_POLL);
    }
    let failed = browser.has_stopped() && !crate::transport::signals::requested();
    stop_browser(browser);
    service.shutdown();
    drop(owner);
    if failed {
        return fail(
            "the memory browser stopped: its socket failed",
            EXIT_FAILURE,
        );
    }
    log::info!("shut down cleanly");
    ExitCode::SUCCESS
}

/// Serves the memory browser of `service` to `principal` at `bind`.
pub(crate) fn start_browser(
    service: &Arc<MemoryService>,
    principal: &Principal,
    bind: SocketAddr,
    data_dir: &Path,
) -> Result<LoopbackUi, String> {
    let browser = LoopbackUi::start(
        Server::new(service.clone()),
        principal.clone(),
        bind,
        data_dir,
    )?;
    log::info!(
        "memory browser at {}; its URL is in {}",
        browser.status().address,
        browser.status().url_file
    );
    Ok(browser)
}

pub(crate) fn stop_browser(browser: LoopbackUi) {
    if let Err(e) = browser.stop() {
        log::error!("the memory browser failed: {e}");
    }
}

/// The refusal of `alayasiki-mcp ui` on a directory a process holds.
fn held_by_a_server(e: &OwnerError) -> String {
    let OwnerError::Held { dir, holder } = e else {
        return e.to_string();
    };
    let who = holder.as_deref().unwrap_or("another process");
    let url_file = dir.join(loopback_ui::URL_FILE);
    // The file may be left by a server that was killed: say "if".
    let where_ = if url_file.exists() {
        format!(
            " If its memory browser is on, its URL is in {}.",
            url_file.display()
        )
    } else {
        String::new()
    };
    format!(
        "data directory {} is in use by {who}: a running server owns it, and only the \
         process that owns a data directory may serve its memory browser. Start that \
         server with --ui (or ALAYASIKI_UI=1) to browse its memory, or stop it first.{where_}",
        dir.display()
    )
}

/// `alayasiki-api [--bind ADDR] [--data-dir DIR]`: serve the HTTP API and
/// MCP over Streamable HTTP and SSE until SIGTERM or SIGINT, then shut down
/// gracefully.
pub fn api(bind: SocketAddr, data_dir: Option<PathBuf>, store: Option<String>) -> ExitCode {
    crate::logging::init();
    // Configuration problems are reported before the directory is taken.
    let settings = match api_settings() {
        Ok(s) => s,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let cluster = match cluster_address(store) {
        Ok(c) => c,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    let config = match Config::resolve(data_dir, config::API_DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), EXIT_FAILURE),
    };
    let mut settings = settings;
    match oauth_facade(&config.data_dir) {
        Ok(Some(facade)) => {
            settings.auth = settings.auth.trusting_issuer(facade.issuer());
            settings.oauth = Some(Arc::new(facade));
        }
        Ok(None) => {}
        Err(e) => return fail(&e, EXIT_FAILURE),
    }
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
    let opened = match &cluster {
        None => open_memory(&config, "alayasiki-api"),
        Some(address) => open_replica(&config, address),
    };
    let (_owner, service) = match opened {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let bound = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let upload_ttl = match config::upload_ttl_from_env() {
        Ok(ttl) => ttl,
        Err(e) => return fail(&e, EXIT_FAILURE),
    };
    service.offer_uploads(&upload_base(&bound), upload_ttl);
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
    if let Some(anonymous) = settings.auth.anonymous() {
        if let crate::service::MemoryAccess::Scoped(grants) = &anonymous.memory {
            let scopes: Vec<&str> = grants.iter().map(|g| g.scope.name()).collect();
            log::info!(
                "requests without a token may query memory scope {} of tenant {}",
                scopes.join(", "),
                anonymous.tenant.name()
            );
        }
    }
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

/// Where upload URLs point: the origin (scheme and authority) of
/// `ALAYASIKI_RESOURCE` when set, since behind a TLS proxy that is the
/// address clients reach; else this server's own address.
fn upload_base(bound: &str) -> String {
    let resource = std::env::var("ALAYASIKI_RESOURCE").ok();
    let origin = resource.as_deref().and_then(|r| {
        let (scheme, rest) = r.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?;
        (!authority.is_empty()).then(|| format!("{scheme}://{authority}"))
    });
    origin.unwrap_or_else(|| format!("http://{bound}"))
}

/// The environment variable that gives `--store` when the flag is absent.
pub const STORE_ENV: &str = "ALAYASIKI_STORE";

/// The cluster `--store` (or [`STORE_ENV`]) names; `None` for the local
/// SQLite store (`sqlite`, or nothing).
fn cluster_address(
    store: Option<String>,
) -> Result<Option<crate::store::cluster::ClusterAddress>, String> {
    let store = store.or_else(|| std::env::var(STORE_ENV).ok().filter(|s| !s.is_empty()));
    match store.as_deref() {
        None | Some("sqlite") => Ok(None),
        Some(url) if url.starts_with("rqlite://") || url.starts_with("rqlites://") => {
            crate::store::cluster::ClusterAddress::parse(url)
                .map(Some)
                .map_err(|e| format!("--store: {e}"))
        }
        Some(_) => {
            Err("--store must be sqlite or rqlite://[user:pass@]host:port[,host:port...]".into())
        }
    }
}

/// Makes the data directory (owned here) a replica of the cluster's
/// memory and opens it, every write going through the cluster's log.
fn open_replica(
    config: &Config,
    address: &crate::store::cluster::ClusterAddress,
) -> Result<(OwnerLock, Arc<MemoryService>), ExitCode> {
    use crate::store::cluster::{node, replica::ClusterReplicator, ClusterClient};
    let owner = own_dir(config, "alayasiki-api", OwnerError::to_string)?;
    let embedder = crate::embed::embedder::from_env().map_err(|e| fail(&e, EXIT_FAILURE))?;
    let spec = crate::service::vector_spec(embedder.as_ref());
    let cluster = address.redacted();
    let client = || {
        ClusterClient::new(address.clone(), crate::limits::CLUSTER_REQUEST_TIMEOUT)
            .map_err(|e| fail(&e, EXIT_FAILURE))
    };
    let joined =
        node::join(&config.data_dir, &client()?, &spec, config.durability).map_err(|e| {
            fail(
                &format!("cannot join the cluster {cluster}: {e}"),
                EXIT_FAILURE,
            )
        })?;
    log::info!("replica of the cluster {cluster}: {joined:?}");
    let retention =
        crate::config::cluster_log_retention_from_env().map_err(|e| fail(&e, EXIT_FAILURE))?;
    let replicator = ClusterReplicator::new(client()?, &crate::ids::new_id("node"))
        .map_err(|e| {
            fail(
                &format!("cannot use the cluster {cluster}: {e}"),
                EXIT_FAILURE,
            )
        })?
        .with_log_retention(retention);
    let service = MemoryService::open_tapped(
        &config.data_dir,
        config.durability,
        embedder,
        crate::store::VectorPolicy::Keep,
        Some(Box::new(replicator)),
    )
    .map_err(|e| fail(&format!("cannot open the memory store: {e}"), EXIT_FAILURE))?;
    service.announce_cluster(client()?);
    Ok((owner, Arc::new(service)))
}

fn api_settings() -> Result<crate::transport::http::Settings, String> {
    Ok(crate::transport::http::Settings {
        auth: crate::transport::auth::Authenticator::from_env()?
            .admitting_anonymous(crate::transport::auth::anonymous::from_env()?),
        rate: crate::transport::admission::RateLimiter::from_env()?,
        oauth: None,
    })
}

/// The authorization server for MCP clients, if configured; its state file
/// lives in the data directory unless configured elsewhere.
fn oauth_facade(data_dir: &Path) -> Result<Option<crate::transport::oauth::Facade>, String> {
    if config::env(crate::transport::oauth::UPSTREAM_ENV).is_none() {
        return Ok(None);
    }
    config::ensure_data_dir(data_dir)?;
    crate::transport::oauth::Facade::from_env(data_dir)
}

/// Creates the data directory, takes ownership of it for `program` and
/// opens the memory in it; on failure, the exit status to return.
fn open_memory(
    config: &Config,
    program: &str,
) -> Result<(OwnerLock, Arc<MemoryService>), ExitCode> {
    let owner = own_dir(config, program, OwnerError::to_string)?;
    Ok((owner, open_service(config)?))
}

/// Creates the data directory and takes ownership of it for `program`;
/// `explain_held` words the refusal when another process holds it.
fn own_dir(
    config: &Config,
    program: &str,
    explain_held: impl Fn(&OwnerError) -> String,
) -> Result<OwnerLock, ExitCode> {
    if let Err(e) = config::ensure_data_dir(&config.data_dir) {
        return Err(fail(&e, EXIT_FAILURE));
    }
    match OwnerLock::acquire(&config.data_dir, program) {
        Ok(lock) => Ok(lock),
        Err(e @ OwnerError::Held { .. }) => Err(fail(&explain_held(&e), EXIT_DIR_IN_USE)),
        Err(e) => Err(fail(&e.to_string(), EXIT_FAILURE)),
    }
}

/// Opens the memory in the data directory, which the caller owns.
fn open_service(config: &Config) -> Result<Arc<MemoryService>, ExitCode> {
    let embedder = crate::embed::embedder::from_env().map_err(|e| fail(&e, EXIT_FAILURE))?;
    match MemoryService::open(&config.data_dir, config.durability, embedder) {
        Ok(s) => Ok(Arc::new(s)),
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
