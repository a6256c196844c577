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
//! Every request passes, in order: shutdown (503), `Origin`/`Host` (403),
//! no token in the query string (400), declared body size (413), route (404
//! or 405), a body where none is read (400), authentication (401, but not
//! for `/health` and the protected resource metadata; a request without
//! credentials is the anonymous caller when one is configured, and 401 on
//! the routes closed to it: [`super::auth::anonymous`]), the caller's rate
//! limit (429), the permission the route needs (403; both with an RFC 6750
//! challenge), then the route's own checks. Nothing is read
//! from the body before the caller is authenticated (bodies of at most
//! [`READ_WITH_THE_HEAD`](super::request::READ_WITH_THE_HEAD) bytes come
//! with the head), and what needs the body runs on a body reader (503
//! `body_readers_busy` when all of them are busy, 429 `too_many_bodies`
//! when the caller holds its share). An answer given without reading the
//! body closes the connection ([`Request::respond`]).
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
    caller_key, Gate, Holder, NoShare, RateLimiter, SharePermit, Shares, MAX_CONCURRENT_DISPATCHES,
    MAX_DISPATCHES_PER_CALLER, MAX_DISPATCHES_PER_TENANT, MAX_POSITION_WAITS, RETRY_AFTER_SECS,
};
use super::auth::{self, Authenticator, Metadata, BASIC_PERMISSIONS, METADATA_MAX_AGE_SECS};
use super::body::{self, BodyError, MAX_BODY_BYTES};
use super::body_readers::BodyReaders;
use super::listener::Listener;
use super::origin::{OriginPolicy, Refusal};
use super::request::Request;
use super::routes::{open_to_anonymous, resolve, route_permission, Route};
use super::sse::Sessions;
use super::streamable::HttpSessions;
pub use super::wire::{Header, Method, Response};
use super::{
    http_api, http_compact, http_documents, http_graph, http_sessions, http_uploads, signals, sse,
    streamable, ui,
};
use crate::heap::IdleRelease;
use crate::protocol::mcp::Server;
use crate::service::{MemoryService, Permission, Principal};

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

pub(super) fn route(ctx: &Arc<Context>, request: Request) {
    if ctx.closing.load(Ordering::SeqCst) {
        let r = error(503, "shutting_down", "the server is shutting down")
            .with_header(retry_after(RETRY_AFTER_SECS));
        return request.respond(r);
    }
    // The memory browser's own requests are same-origin: a browser sends
    // `Origin` on its POST and DELETE, naming the `Host` it was served
    // from, which the allow-list below still checks.
    let origin =
        header(&request, "Origin").filter(|o| !ui::is_same_origin(o, header(&request, "Host")));
    if let Err(refusal) = ctx.origins.check(origin, header(&request, "Host")) {
        let r = match refusal {
            Refusal::Origin => error(
                403,
                "origin_forbidden",
                "requests from this Origin are not allowed (see ALAYASIKI_MCP_ALLOWED_ORIGINS)",
            ),
            Refusal::Host => error(
                403,
                "host_forbidden",
                "the Host header does not name this server (see ALAYASIKI_API_ALLOWED_HOSTS)",
            ),
        };
        return request.respond(r);
    }
    let url = request.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    if query_param(query, "access_token").is_some() {
        let r = error(
            400,
            "token_in_query",
            "tokens are accepted only in the Authorization header",
        );
        return request.respond(r);
    }
    // An upload's body streams to disk, bounded by its declared size
    // (`http_uploads`); every other body is read whole.
    let upload = matches!(request.method(), Method::Put)
        && matches!(resolve(path), Some((Route::Upload(_), _)));
    if !upload && body::declared_length(&request).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        // Answered at once from the header: none of the body is read and
        // the connection ends.
        return request.respond_and_close(too_large());
    }
    if let Some(facade) = &ctx.oauth {
        if let Some(endpoint) = super::oauth::Endpoint::of(path) {
            let facade = facade.clone();
            return super::oauth::serve(ctx, &facade, request, endpoint, query);
        }
    }
    let Some((route, methods)) = resolve(path) else {
        return request.respond(error(404, "no_route", "no such route"));
    };
    if !methods.contains(request.method()) {
        let allow: Vec<&str> = methods.iter().map(Method::as_str).collect();
        let r = error(
            405,
            "method_not_allowed",
            "method not allowed on this route",
        )
        .with_header(make_header("Allow", &allow.join(", ")));
        return request.respond(r);
    }
    let beyond_the_head =
        body::declared_length(&request).is_some_and(|n| n > super::request::READ_WITH_THE_HEAD);
    let reads_body = matches!(request.method(), Method::Post | Method::Patch | Method::Put);
    if !reads_body && (body::may_wait_for_body(&request) || beyond_the_head) {
        // Only POST, PATCH and PUT routes read a body; one sent to another route is
        // refused at once rather than read or waited for (whether or not
        // it happened to arrive with the head).
        let r = error(400, "unexpected_body", "this route takes no request body");
        return request.respond_and_close(r);
    }
    if route == Route::Health {
        return request.respond(super::http_health::health(&ctx.service));
    }
    if let Route::ResourceMetadata(suffix) = &route {
        let r = resource_metadata(ctx, &request, suffix);
        return request.respond(r);
    }
    if let Route::Upload(ticket) = &route {
        // The ticket is the grant: no token is asked for.
        return super::http_uploads::receive(ctx, request, ticket);
    }
    if let Route::Ui(asset) = &route {
        // Static and the same for everyone: the page asks for a token
        // itself and sends it with every API call.
        return request.respond(ui::serve(asset));
    }
    // Challenges point at the metadata (RFC 9728 §5.1) and name the scopes
    // this request needs; `Host` has passed the allow-list above.
    let metadata_url = ctx.auth.metadata_url(header(&request, "Host"));
    let needs = route_permission(&route, request.method());
    let scope = needs.map_or_else(|| auth::scopes(&BASIC_PERMISSIONS), |p| p.scope().into());
    let principal = match caller(ctx, &request, &route, metadata_url.as_deref(), &scope) {
        Ok(p) => p,
        Err(r) => return request.respond(r),
    };
    if let Err(r) = permitted(ctx, &principal, needs, metadata_url.as_deref(), &scope) {
        return request.respond(r);
    }
    // Only now does the connection leave those that may be closed to make
    // room: what was answered above (public routes, refusals) could be
    // asked by anyone, and must never hold the places callers need.
    let mut request = request;
    if !request.admit() {
        return; // closed to make room meanwhile
    }
    serve_route(ctx, route, request, principal, query);
}

/// Who is asking: the anonymous caller (when one is configured) for a
/// request that sends no credentials to a route open to it, else the
/// holder of a valid token; otherwise the 401 to answer, with its
/// challenge.
fn caller(
    ctx: &Context,
    request: &Request,
    route: &Route,
    metadata_url: Option<&str>,
    scope: &str,
) -> Result<Principal, Response> {
    let authorization = headers(request, "Authorization");
    match ctx.auth.anonymous() {
        // Only a request that sends no credentials at all is anonymous: a
        // bad token is refused below, never downgraded.
        Some(anonymous) if authorization.is_empty() => {
            if !open_to_anonymous(route, request.method()) {
                let challenge = auth::AuthError::MISSING.challenge(metadata_url, scope);
                return Err(
                    error(401, "unauthorized", crate::service::ANONYMOUS_REFUSAL)
                        .with_header(make_header("WWW-Authenticate", &challenge)),
                );
            }
            Ok(anonymous.clone())
        }
        _ => ctx.auth.authenticate(&authorization).map_err(|e| {
            let challenge = e.challenge(metadata_url, scope);
            error(401, "unauthorized", e.0).with_header(make_header("WWW-Authenticate", &challenge))
        }),
    }
}

/// Whether the caller may go on: within its rate limit (else 429), and
/// holding the permission the route needs (else 403 with an
/// `insufficient_scope` challenge).
fn permitted(
    ctx: &Context,
    principal: &Principal,
    needs: Option<Permission>,
    metadata_url: Option<&str>,
    scope: &str,
) -> Result<(), Response> {
    if let Err(wait) = ctx.rate.admit(
        &caller_key(principal.tenant.name(), &principal.subject),
        Instant::now(),
    ) {
        return Err(error(
            429,
            "rate_limited",
            "too many requests from this caller; retry later",
        )
        .with_header(retry_after(wait.as_secs_f64().ceil().max(1.0) as u64)));
    }
    let lacking = if !grants_anything(principal) {
        Some(error(
            403,
            "forbidden",
            "this token grants no role or scope of this server",
        ))
    } else {
        // The JSON API's routes check their permission again; over MCP a
        // tool the token may not call is a tool error instead.
        needs
            .filter(|p| !principal.permits(*p))
            .map(http_api::forbidden)
    };
    match lacking {
        Some(r) => {
            let challenge = auth::insufficient_scope(
                metadata_url,
                scope,
                "this token lacks the scope or role this request needs",
            );
            Err(r.with_header(make_header("WWW-Authenticate", &challenge)))
        }
        None => Ok(()),
    }
}

/// Hands an authenticated, admitted request to the route's handler.
fn serve_route(
    ctx: &Arc<Context>,
    route: Route,
    request: Request,
    principal: Principal,
    query: &str,
) {
    match route {
        Route::Health | Route::ResourceMetadata(_) | Route::Ui(_) | Route::Upload(_) => {
            unreachable!("answered above")
        }
        Route::Mcp => match request.method() {
            Method::Post => streamable::post(ctx, request, principal),
            Method::Get => streamable::get(ctx, request, principal),
            _ => streamable::delete(ctx, request, principal),
        },
        Route::SseOpen => sse::open(ctx, request, principal),
        Route::SseMessage => sse::post(ctx, request, principal, query),
        Route::Tools => request.respond(http_api::tools()),
        Route::Tool(name) => http_api::tool(ctx, request, principal, &name),
        Route::Documents => http_documents::list(ctx, request, principal, query),
        Route::Document(id) => http_documents::document(ctx, request, principal, &id),
        Route::Original(id) => http_documents::original(ctx, request, principal, &id),
        Route::Chunks(id) => http_documents::chunks(ctx, request, principal, &id, query),
        Route::Entities => http_graph::entities(ctx, request, principal, query),
        Route::Entity(id) => http_graph::entity(ctx, request, principal, &id),
        Route::Graph => http_graph::graph(ctx, request, principal, query),
        Route::Communities => http_graph::communities(ctx, request, principal),
        Route::Sessions => http_sessions::list(ctx, request, principal),
        Route::Session(id) => http_sessions::session(ctx, request, principal, &id),
        Route::Compact => http_compact::compact(ctx, request, principal),
        Route::Uploads => http_uploads::declare(ctx, request, principal),
    }
}

/// `GET /.well-known/oauth-protected-resource[/…]`: unauthenticated and
/// cacheable.
fn resource_metadata(ctx: &Context, request: &Request, suffix: &str) -> Response {
    match ctx.auth.metadata(suffix, header(request, "Host")) {
        Metadata::Document {
            body,
            varies_by_host,
        } => {
            let mut r = Response::from_data(body.to_string().into_bytes())
                .with_header(make_header("Content-Type", "application/json"))
                .with_header(make_header(
                    "Cache-Control",
                    &format!("public, max-age={METADATA_MAX_AGE_SECS}"),
                ));
            if varies_by_host {
                r = r.with_header(make_header("Vary", "Host"));
            }
            r
        }
        Metadata::NotFound => error(404, "no_route", "no such route"),
        Metadata::BadHost => error(
            400,
            "bad_request",
            "the Host header is not a host name with an optional port",
        ),
    }
}

fn grants_anything(p: &Principal) -> bool {
    [Permission::Query, Permission::Ingest, Permission::Admin]
        .iter()
        .any(|perm| p.permits(*perm))
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
mod tests {
    use super::*;
    use crate::transport::event_stream::HANGUP_POLL;

    #[test]
    fn query_params_are_found_by_exact_name() {
        assert_eq!(query_param("a=1&session_id=x", "session_id"), Some("x"));
        assert_eq!(query_param("xsession_id=1", "session_id"), None);
        assert_eq!(query_param("", "session_id"), None);
    }

    /// API.md's limits table quotes these values; keep them in step.
    #[test]
    fn api_md_limits_table_matches_the_constants() {
        use super::super::oauth::{self, claims_map, clients, fetch};
        use super::super::{
            acceptor::*, admission::*, auth::*, body::*, body_readers::*, jwks::*, listener::*,
            sse::*, streamable::*, wire::*,
        };
        use crate::limits::{
            MAX_OPEN_UPLOAD_TICKETS, MAX_REPLY_BYTES, MAX_UPLOADS_IN_PROGRESS, MAX_UPLOAD_BYTES,
            UPLOAD_TICKET_TTL_SECS,
        };
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/API.md"))
            .expect("API.md");
        let secs = |d: Duration| format!("{} s", d.as_secs());
        let rows: &[(&str, String)] = &[
            ("`MAX_CONNECTIONS`", MAX_CONNECTIONS.to_string()),
            (
                "`MAX_UNAUTHENTICATED_CONNECTIONS`",
                MAX_UNAUTHENTICATED_CONNECTIONS.to_string(),
            ),
            ("`RESERVED_DESCRIPTORS`", RESERVED_DESCRIPTORS.to_string()),
            ("`HEADER_READ_TIMEOUT`", secs(HEADER_READ_TIMEOUT)),
            ("`MAX_HEAD_BYTES`", MAX_HEAD_BYTES.to_string()),
            ("`MAX_HEADERS`", MAX_HEADERS.to_string()),
            ("`MAX_SSE_CONNECTIONS`", MAX_SSE_CONNECTIONS.to_string()),
            (
                "`MAX_SSE_CONNECTIONS_PER_TENANT`",
                MAX_SSE_CONNECTIONS_PER_TENANT.to_string(),
            ),
            (
                "`MAX_SSE_CONNECTIONS_PER_CALLER`",
                MAX_SSE_CONNECTIONS_PER_CALLER.to_string(),
            ),
            ("`HANGUP_POLL`", format!("{} ms", HANGUP_POLL.as_millis())),
            ("`MAX_QUEUED_REPLIES`", MAX_QUEUED_REPLIES.to_string()),
            (
                "`MAX_CONCURRENT_DISPATCHES`",
                MAX_CONCURRENT_DISPATCHES.to_string(),
            ),
            (
                "`MAX_DISPATCHES_PER_TENANT`",
                MAX_DISPATCHES_PER_TENANT.to_string(),
            ),
            (
                "`MAX_DISPATCHES_PER_CALLER`",
                MAX_DISPATCHES_PER_CALLER.to_string(),
            ),
            ("`MAX_BODY_READERS`", MAX_BODY_READERS.to_string()),
            (
                "`MAX_BODY_READERS_PER_CALLER`",
                MAX_BODY_READERS_PER_CALLER.to_string(),
            ),
            ("`MAX_BODY_BYTES`", MAX_BODY_BYTES.to_string()),
            ("`MAX_UPLOAD_BYTES`", MAX_UPLOAD_BYTES.to_string()),
            (
                "`UPLOAD_TICKET_TTL_SECS`",
                UPLOAD_TICKET_TTL_SECS.to_string(),
            ),
            (
                "`MAX_OPEN_UPLOAD_TICKETS`",
                MAX_OPEN_UPLOAD_TICKETS.to_string(),
            ),
            (
                "`MAX_UPLOADS_IN_PROGRESS`",
                MAX_UPLOADS_IN_PROGRESS.to_string(),
            ),
            ("`MAX_REPLY_BYTES`", MAX_REPLY_BYTES.to_string()),
            ("`MAX_TOKEN_BYTES`", MAX_TOKEN_BYTES.to_string()),
            (
                "`MIN_HS256_SECRET_BYTES`",
                MIN_HS256_SECRET_BYTES.to_string(),
            ),
            ("`JWKS_MAX_BYTES`", JWKS_MAX_BYTES.to_string()),
            ("`JWKS_MAX_KEYS`", JWKS_MAX_KEYS.to_string()),
            ("`JWKS_FETCH_TIMEOUT`", secs(JWKS_FETCH_TIMEOUT)),
            (
                "`JWKS_MIN_REFRESH_INTERVAL`",
                secs(JWKS_MIN_REFRESH_INTERVAL),
            ),
            ("`JWKS_MAX_AGE`", secs(JWKS_MAX_AGE)),
            (
                "`ACCESS_TOKEN_TTL_SECS`",
                format!("{} s", oauth::ACCESS_TOKEN_TTL_SECS),
            ),
            (
                "`REFRESH_TOKEN_TTL_SECS`",
                format!("{} s", oauth::REFRESH_TOKEN_TTL_SECS),
            ),
            (
                "`AUTHORIZATION_CODE_TTL_SECS`",
                format!("{} s", oauth::AUTHORIZATION_CODE_TTL_SECS),
            ),
            (
                "`SIGN_IN_TTL_SECS`",
                format!("{} s", oauth::SIGN_IN_TTL_SECS),
            ),
            ("`CLIENT_TTL_SECS`", format!("{} s", oauth::CLIENT_TTL_SECS)),
            (
                "`MAX_REGISTRATIONS_PER_MINUTE`",
                oauth::MAX_REGISTRATIONS_PER_MINUTE.to_string(),
            ),
            (
                "`MAX_REGISTERED_CLIENTS`",
                oauth::MAX_REGISTERED_CLIENTS.to_string(),
            ),
            (
                "`MAX_REGISTRATION_BYTES`",
                oauth::MAX_REGISTRATION_BYTES.to_string(),
            ),
            (
                "`MAX_REDIRECT_URIS`",
                clients::MAX_REDIRECT_URIS.to_string(),
            ),
            (
                "`MAX_REDIRECT_URI_BYTES`",
                clients::MAX_REDIRECT_URI_BYTES.to_string(),
            ),
            (
                "`MAX_CLIENT_NAME_BYTES`",
                clients::MAX_CLIENT_NAME_BYTES.to_string(),
            ),
            (
                "`MAX_CLIENT_STATE_BYTES`",
                oauth::MAX_CLIENT_STATE_BYTES.to_string(),
            ),
            (
                "`MAX_CLIENT_METADATA_BYTES`",
                fetch::MAX_CLIENT_METADATA_BYTES.to_string(),
            ),
            (
                "`CLIENT_METADATA_CACHE_TTL` / `CLIENT_METADATA_CACHE_ENTRIES`",
                format!(
                    "{} / {}",
                    secs(clients::CLIENT_METADATA_CACHE_TTL),
                    clients::CLIENT_METADATA_CACHE_ENTRIES
                ),
            ),
            (
                "`MAX_UPSTREAM_RESPONSE_BYTES`",
                fetch::MAX_UPSTREAM_RESPONSE_BYTES.to_string(),
            ),
            ("`OAUTH_FETCH_TIMEOUT`", secs(fetch::OAUTH_FETCH_TIMEOUT)),
            (
                "`OAUTH_WORKERS` / `OAUTH_QUEUE`",
                format!("{} / {}", oauth::OAUTH_WORKERS, oauth::OAUTH_QUEUE),
            ),
            (
                "`MAX_CLAIMS_MAP_CLAUSES`",
                claims_map::MAX_CLAIMS_MAP_CLAUSES.to_string(),
            ),
            (
                "`DISCOVERY_MAX_AGE`",
                secs(super::super::oauth::upstream::DISCOVERY_MAX_AGE),
            ),
            (
                "`METADATA_MAX_AGE_SECS`",
                format!("{METADATA_MAX_AGE_SECS} s"),
            ),
            ("`MAX_RATE_BUCKETS`", MAX_RATE_BUCKETS.to_string()),
            (
                "`DEFAULT_RATE_PER_SEC` / `DEFAULT_BURST`",
                format!("{DEFAULT_RATE_PER_SEC} / {DEFAULT_BURST}"),
            ),
            ("`BODY_READ_TIMEOUT`", secs(BODY_READ_TIMEOUT)),
            ("`REFUSED_BODY_LINGER`", secs(REFUSED_BODY_LINGER)),
            ("`KEEPALIVE_INTERVAL`", secs(KEEPALIVE_INTERVAL)),
            ("`IO_TIMEOUT`", secs(IO_TIMEOUT)),
            (
                "`COMPACT_INTERVAL`",
                secs(super::super::http_compact::COMPACT_INTERVAL),
            ),
            ("`ANSWER_WRITE_TIMEOUT`", secs(ANSWER_WRITE_TIMEOUT)),
            (
                "`RELEASE_AFTER_IDLE`",
                secs(crate::heap::RELEASE_AFTER_IDLE),
            ),
            ("`SHUTDOWN_DRAIN_TIMEOUT`", secs(SHUTDOWN_DRAIN_TIMEOUT)),
            ("`MAX_HTTP_SESSIONS`", MAX_HTTP_SESSIONS.to_string()),
            (
                "`MAX_HTTP_SESSIONS_PER_TENANT`",
                MAX_HTTP_SESSIONS_PER_TENANT.to_string(),
            ),
            (
                "`MAX_HTTP_SESSIONS_PER_CALLER`",
                MAX_HTTP_SESSIONS_PER_CALLER.to_string(),
            ),
            (
                "`HTTP_SESSION_IDLE_TIMEOUT`",
                format!("{} min", HTTP_SESSION_IDLE_TIMEOUT.as_secs() / 60),
            ),
            (
                "`SESSIONS_SCARCE_AT` / `HTTP_SESSION_SCARCE_IDLE_TIMEOUT`",
                format!(
                    "{SESSIONS_SCARCE_AT} / {}",
                    secs(HTTP_SESSION_SCARCE_IDLE_TIMEOUT)
                ),
            ),
        ];
        for (name, value) in rows {
            let row = format!("| {name} | {value} |");
            assert!(
                doc.contains(&row),
                "API.md limits table lacks or misstates: {row}"
            );
        }
    }

    #[test]
    fn non_loopback_binds_need_the_flag() {
        assert!(check_bind("127.0.0.1:8080".parse().unwrap(), false).is_ok());
        assert!(check_bind("[::1]:8080".parse().unwrap(), false).is_ok());
        let err = check_bind("0.0.0.0:8080".parse().unwrap(), false).unwrap_err();
        assert!(
            err.contains("TLS") && err.contains("--allow-remote"),
            "{err}"
        );
        assert!(check_bind("0.0.0.0:8080".parse().unwrap(), true).is_ok());
    }
}
