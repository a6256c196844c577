//! The HTTP server of `alayasiki-api`: threads, routing, the checks every
//! request passes, and graceful shutdown.
//!
//! Threads, as the design card draws them:
//! - one thread accepts connections and each connection has a thread of
//!   its own that reads its request heads and routes them
//!   ([`super::acceptor`]: the caps on connections, the deadlines on
//!   heads, the strict framing of [`super::wire`]); routing runs the cheap
//!   checks (origin and host, body size, authentication, rate limit,
//!   admission) and answers what needs no work at once; it never waits
//!   for a client's body;
//! - up to [`MAX_BODY_READERS`](super::body_readers::MAX_BODY_READERS)
//!   short-lived body readers, one per request whose body has yet to arrive
//!   ([`super::body_readers`]): each reads its body, then admits and queues
//!   the work as routing would have;
//! - [`MAX_CONCURRENT_DISPATCHES`] dispatch workers run MCP messages and API
//!   calls, fed over a crossbeam channel; a request is only queued after it
//!   holds a dispatch permit, so the queue never grows past the cap;
//! - one writer thread per SSE stream ([`super::sse`]).
//!
//! Every request passes the checks of [`super::checks`], in order, on the
//! thread that read its head.
//!
//! Shutdown ([`serve`] returns once it is done): new requests get 503,
//! bodies still arriving are received (or time out), in-flight dispatches
//! finish and their replies are queued, SSE streams
//! send what they hold and end, the threads stop. The caller then stops the
//! ingestion worker and checkpoints the store.

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::acceptor::{self, ConnectionCaps, Connections};
use super::admission::{
    Gate, Holder, NoShare, RateLimiter, SharePermit, Shares, MAX_CONCURRENT_DISPATCHES,
    MAX_DISPATCHES_PER_CALLER, MAX_DISPATCHES_PER_TENANT, MAX_POSITION_WAITS, RETRY_AFTER_SECS,
};
use super::auth::Authenticator;
use super::body::{self, BodyError, MAX_BODY_BYTES};
use super::body_readers::BodyReaders;
use super::listener::Listener;
use super::origin::OriginPolicy;
use super::request::Request;
use super::sse::Sessions;
use super::streamable::HttpSessions;
pub use super::wire::{Header, Method, Response};
use super::{http_uploads, signals};
use crate::heap::IdleRelease;
use crate::protocol::mcp::Server;
use crate::service::MemoryService;

/// How long shutdown waits for in-flight dispatches (an ingest may wait up
/// to `INGEST_WAIT_MS` for indexing) before closing streams regardless.
pub const SHUTDOWN_DRAIN_TIMEOUT: Duration = Duration::from_secs(90);

/// How long shutdown waits for SSE writers to send what they hold.
pub const SHUTDOWN_STREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// How often idle threads look at the shutdown flags. Shutdown wakes them
/// at once (see [`stop_threads`]); this only bounds a missed wake-up.
const POLL: Duration = Duration::from_millis(100);

/// How often the main thread looks for a termination signal (or the stop
/// condition of [`serve_until`]): the delay it adds to a shutdown.
const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// A job for the dispatch workers; it owns the permit it was admitted with.
pub(super) type Job = Box<dyn FnOnce() + Send>;

/// Everything the request handlers share.
pub(super) struct Context {
    pub server: Server,
    pub service: Arc<MemoryService>,
    pub auth: Authenticator,
    /// The authorization server for MCP clients, when configured.
    pub oauth: Option<Arc<super::oauth::Facade>>,
    pub origins: OriginPolicy,
    pub rate: RateLimiter,
    /// Dispatches, in all, per tenant and per caller.
    pub dispatch: Arc<Shares>,
    /// Dispatches waiting for a cluster position ([`MAX_POSITION_WAITS`]).
    pub position_waits: Arc<Gate>,
    /// Bodies being awaited off the routing threads ([`super::body_readers`]).
    pub body_readers: Arc<BodyReaders>,
    /// Uploads being received ([`super::http_uploads`]).
    pub uploads: Arc<Gate>,
    /// SSE streams, in all, per caller and per tenant.
    pub streams: Arc<Shares>,
    pub sessions: Sessions,
    /// Streamable HTTP sessions of the session-based revisions.
    pub mcp_sessions: HttpSessions,
    /// The connections held ([`super::acceptor`]).
    pub connections: Arc<Connections>,
    /// When each tenant last started a compaction.
    pub compactions: super::http_compact::CompactionPace,
    /// Gives freed memory back to the system once dispatch is idle.
    idle_release: IdleRelease,
    jobs: Sender<Job>,
    /// Set when shutdown begins: new work is refused.
    pub closing: AtomicBool,
    /// Set when shutdown ends: routing threads exit.
    stopped: AtomicBool,
    /// Set when the listening socket failed (it is no longer one): the
    /// server shuts down and exits non-zero (for a supervisor to restart
    /// it) instead of serving nothing.
    failed: AtomicBool,
}

/// What the caller configured.
pub struct Settings {
    pub auth: Authenticator,
    pub rate: RateLimiter,
    /// The authorization server for MCP clients ([`super::oauth`]).
    pub oauth: Option<Arc<super::oauth::Facade>>,
}

impl Context {
    /// Queues `job`, which must own a dispatch permit. The queue holds at
    /// most as many jobs as there are permits, so this never blocks.
    pub fn submit(&self, job: Job) -> bool {
        self.jobs.try_send(job).is_ok()
    }

    /// The listening socket failed: shut down, then exit non-zero.
    pub(super) fn listener_failed(&self) {
        // `serve_until` watches this flag beside its stop condition.
        self.failed.store(true, Ordering::SeqCst);
    }
}

/// Serves HTTP on `listener` (from [`listen`](super::listener::listen)) until a
/// termination signal, then shuts down gracefully and returns.
pub fn serve(
    service: Arc<MemoryService>,
    listener: Listener,
    settings: Settings,
) -> std::io::Result<()> {
    serve_with(Server::new(service), listener, settings)
}

/// [`serve`] with `server` answering MCP: a server of another catalog
/// than the memory's (the conformance fixture server in
/// `tests/conformance_fixtures` serves the official suite's fixtures
/// through this same transport).
pub fn serve_with(server: Server, listener: Listener, settings: Settings) -> std::io::Result<()> {
    serve_until(server, listener, settings, &signals::requested)
}

/// [`serve_with`] until `stop` says so instead of a termination signal:
/// the memory browser beside the stdio server stops when stdin ends
/// ([`super::loopback_ui`]).
pub fn serve_until(
    server: Server,
    listener: Listener,
    settings: Settings,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    let service = server.shared_service();
    let listener = listener.into_socket();
    let bound = listener.local_addr()?;
    let caps = ConnectionCaps::for_limit(acceptor::descriptor_limit());
    log::info!(
        "serving at most {} connections, {} of them without an admitted request",
        caps.connections,
        caps.unauthenticated
    );
    let (jobs_tx, jobs_rx) = crossbeam_channel::bounded::<Job>(MAX_CONCURRENT_DISPATCHES);
    let ctx = Arc::new(Context {
        server,
        service,
        auth: settings.auth,
        oauth: settings.oauth,
        origins: OriginPolicy::from_env(bound),
        rate: settings.rate,
        dispatch: Shares::dispatches(),
        position_waits: Gate::new("position waits", MAX_POSITION_WAITS),
        body_readers: BodyReaders::new(),
        uploads: http_uploads::gate(),
        streams: Shares::streams(),
        sessions: Sessions::default(),
        mcp_sessions: HttpSessions::default(),
        connections: Connections::new(caps),
        compactions: Default::default(),
        idle_release: IdleRelease::default(),
        jobs: jobs_tx,
        closing: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
        failed: AtomicBool::new(false),
    });
    let workers = spawn_workers(&ctx, jobs_rx)?;
    let accept_ctx = ctx.clone();
    let accepting = std::thread::Builder::new()
        .name("http-accept".into())
        .spawn(move || acceptor::accept_loop(accept_ctx, listener))?;
    while !stop() && !ctx.failed.load(Ordering::SeqCst) {
        std::thread::sleep(SIGNAL_POLL);
    }
    shutdown(&ctx);
    ctx.connections.stop(); // stops accepting; idle connections close
    stop_workers(&ctx);
    for t in workers {
        let _ = t.join();
    }
    let _ = accepting.join();
    if ctx.failed.load(Ordering::SeqCst) {
        return Err(std::io::Error::other("the listening socket failed"));
    }
    Ok(())
}

fn spawn_workers(ctx: &Arc<Context>, jobs: Receiver<Job>) -> std::io::Result<Vec<JoinHandle<()>>> {
    (0..MAX_CONCURRENT_DISPATCHES)
        .map(|i| {
            let (ctx, jobs) = (ctx.clone(), jobs.clone());
            std::thread::Builder::new()
                .name(format!("dispatch-{i}"))
                .spawn(move || loop {
                    match jobs.recv_timeout(POLL) {
                        Ok(job) => {
                            // A handler bug costs one request, not the worker.
                            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                            if run.is_err() {
                                log::error!("a dispatch job panicked");
                            }
                            ctx.idle_release.work_ended();
                            if ctx.stopped.load(Ordering::SeqCst) {
                                break;
                            }
                        }
                        Err(_) if ctx.stopped.load(Ordering::SeqCst) => break,
                        Err(_) => {
                            // One worker gives freed memory back once the
                            // server has been idle for a while.
                            if i == 0 {
                                let idle =
                                    ctx.dispatch.in_use() == 0 && ctx.body_readers.in_use() == 0;
                                ctx.idle_release.tick(idle);
                            }
                        }
                    }
                })
        })
        .collect()
}

/// Wakes the dispatch workers after [`shutdown`], so they see the stop
/// flag now rather than at their next poll: an empty job for each (the
/// queue is drained by then).
fn stop_workers(ctx: &Context) {
    for _ in 0..MAX_CONCURRENT_DISPATCHES {
        if ctx.jobs.try_send(Box::new(|| {})).is_err() {
            break;
        }
    }
}

/// Refuse new work, let dispatches finish, end the streams.
fn shutdown(ctx: &Context) {
    log::info!("shutting down: refusing new requests, draining dispatches");
    ctx.closing.store(true, Ordering::SeqCst);
    // A body still arriving belongs to a request already routed: it is
    // admitted as usual once read (or refused), then runs like the rest.
    let deadline = Instant::now() + SHUTDOWN_DRAIN_TIMEOUT;
    if !ctx.body_readers.wait_idle(deadline) {
        log::warn!(
            "{} request body(ies) still arriving after {SHUTDOWN_DRAIN_TIMEOUT:?}; closing anyway",
            ctx.body_readers.in_use()
        );
    }
    if !ctx.dispatch.wait_idle(deadline) {
        log::warn!(
            "{} dispatch(es) still running after {SHUTDOWN_DRAIN_TIMEOUT:?}; closing anyway",
            ctx.dispatch.in_use()
        );
    }
    ctx.sessions.close_all();
    ctx.mcp_sessions.close_all();
    if !ctx
        .streams
        .wait_idle(Instant::now() + SHUTDOWN_STREAM_TIMEOUT)
    {
        log::warn!("{} SSE stream(s) did not end in time", ctx.streams.in_use());
    }
    ctx.stopped.store(true, Ordering::SeqCst);
}

/// The value of query parameter `name` (not percent-decoded: the values
/// this server reads are plain tokens).
pub(super) fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

pub(super) fn header<'a>(request: &'a Request, name: &'static str) -> Option<&'a str> {
    request
        .headers()
        .iter()
        .find(|h| h.is(name))
        .map(|h| h.value.as_str())
}

pub(super) fn headers<'a>(request: &'a Request, name: &'static str) -> Vec<&'a str> {
    request
        .headers()
        .iter()
        .filter(|h| h.is(name))
        .map(|h| h.value.as_str())
        .collect()
}

/// Whether the request's `Content-Type` is JSON.
pub(super) fn is_json(request: &Request) -> bool {
    header(request, "Content-Type").is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Takes a dispatch permit for `holder`, or says why not: every dispatch
/// is taken, or its tenant's or its caller's share is.
pub(super) fn admit_dispatch(ctx: &Context, holder: &Holder) -> Result<SharePermit, NoShare> {
    ctx.dispatch.try_enter(&holder.tenant, &holder.caller)
}

/// The code and message refusing a dispatch, by why.
pub(super) fn dispatch_refusal(why: NoShare) -> (&'static str, String) {
    match why {
        NoShare::Full => (
            "overloaded",
            format!(
                "{MAX_CONCURRENT_DISPATCHES} requests are already running \
                 (MAX_CONCURRENT_DISPATCHES); retry shortly"
            ),
        ),
        NoShare::TenantFull => (
            "too_many_requests_for_tenant",
            format!(
                "this tenant already has {MAX_DISPATCHES_PER_TENANT} requests running \
                 (MAX_DISPATCHES_PER_TENANT); retry shortly"
            ),
        ),
        NoShare::CallerFull => (
            "too_many_requests_for_caller",
            format!(
                "this caller already has {MAX_DISPATCHES_PER_CALLER} requests running \
                 (MAX_DISPATCHES_PER_CALLER); retry shortly"
            ),
        ),
    }
}

/// The 429 (with `Retry-After`) refusing a dispatch.
pub(super) fn refuse_dispatch(why: NoShare) -> Response {
    let (code, message) = dispatch_refusal(why);
    error(429, code, &message).with_header(retry_after(RETRY_AFTER_SECS))
}

/// A response header. Values are the server's own; a line break in one
/// (which would let it add headers) is dropped.
pub(super) fn make_header(name: &str, value: &str) -> Header {
    Header {
        name: name.to_string(),
        value: value.chars().filter(|c| !c.is_control()).collect(),
    }
}

pub(super) fn retry_after(secs: u64) -> Header {
    make_header("Retry-After", &secs.to_string())
}

pub(super) fn json_response(status: u16, value: &Value) -> Response {
    Response::from_data(value.to_string().into_bytes())
        .with_status_code(status)
        .with_header(make_header("Content-Type", "application/json"))
        .with_header(make_header("Cache-Control", "no-store"))
}

/// `{"error": {"code", "message"}}` with `status`.
pub(super) fn error(status: u16, code: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": code, "message": message}}),
    )
}

/// The answer to a body that could not be read, and how to send it: a
/// refused body is never read further, and its connection is closed.
pub(super) fn refuse_body(request: Request, why: BodyError) {
    let r = match why {
        BodyError::TooLarge => too_large(),
        BodyError::TimedOut => error(
            408,
            "body_timeout",
            &format!(
                "the request body did not arrive within {} s (BODY_READ_TIMEOUT)",
                body::BODY_READ_TIMEOUT.as_secs()
            ),
        ),
        BodyError::Io(e) => {
            log::debug!("reading a request body failed: {e}");
            error(400, "incomplete_body", "the request body could not be read")
        }
    };
    request.respond_and_close(r);
}

pub(super) fn too_large() -> Response {
    error(
        413,
        "body_too_large",
        &format!("request bodies are limited to {MAX_BODY_BYTES} bytes (MAX_BODY_BYTES)"),
    )
}

/// The address a `--bind` value names, refusing non-loopback addresses
/// unless `allow_remote`.
pub fn check_bind(addr: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(format!(
            "refusing to listen on {addr}: it is reachable from other machines. This server \
             speaks plain HTTP; put a TLS-terminating reverse proxy in front of it and pass \
             --allow-remote to confirm"
        ))
    }
}

#[cfg(test)]
mod tests;
