//! The checks every HTTP request passes, in order, and the hand-off to the
//! route's handler.
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
//! Runs on the connection's thread, which read the head ([`super::acceptor`]),
//! and never waits for a body: what needs one goes on to a body reader.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::admission::{caller_key, RETRY_AFTER_SECS};
use super::auth::{self, Metadata, BASIC_PERMISSIONS, METADATA_MAX_AGE_SECS};
use super::body::{self, MAX_BODY_BYTES};
use super::http::{
    error, header, headers, make_header, query_param, retry_after, too_large, Context, Method,
    Response,
};
use super::origin::Refusal;
use super::request::Request;
use super::routes::{open_to_anonymous, resolve, route_permission, Route};
use super::{
    http_api, http_compact, http_documents, http_graph, http_sessions, http_uploads, sse,
    streamable, ui,
};
use crate::service::{Permission, Principal};

/// Runs the checks on a request whose head was read, answers it if one
/// refuses it or if it needs no work, else hands it to its route.
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
