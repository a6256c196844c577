//! An authorization server for MCP clients, in front of the team's own
//! OpenID provider (opt-in: `ALAYASIKI_OAUTH_UPSTREAM`).
//!
//! MCP clients expect the server's authorization server to accept clients
//! it has never seen, by a Client ID Metadata Document or by dynamic
//! registration (RFC 7591); the providers teams run offer neither to
//! arbitrary clients. So `alayasiki-api` is the authorization server its
//! clients see (RFC 8414 metadata, `/register`, `/authorize`, `/token`,
//! `/revoke`), shows its own consent page, and delegates the person's
//! sign-in to the upstream provider with the one client id and secret the
//! operator registered there. It then issues its own short-lived access
//! tokens for this resource (HS256 under `ALAYASIKI_JWT_SECRET`, `aud` =
//! `ALAYASIKI_RESOURCE`, `iss` = this server), carrying the tenant, roles
//! and memory scopes the claims map ([`claims_map`]) gives the person, and
//! rotating refresh tokens.
//!
//! Layers: [`fetch`] (bounded outbound requests), [`upstream`] (the
//! provider), [`clients`] (who may ask), [`records`] + [`seal`] (state at
//! rest, sealed), [`authorize`] and [`token`] (the endpoints), [`pages`]
//! (HTML). Everything a client sends is checked before anything is stored
//! or fetched; errors that cannot safely go back to a redirect URI are
//! shown as a page instead (RFC 6749 §4.1.2.1).

use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jwt_simple::prelude::HS256Key;

use super::http::{error, make_header, Context, Method, Response};
use super::request::Request;
use crate::config;

mod authorize;
pub mod claims_map;
pub mod clients;
pub mod fetch;
mod form;
mod pages;
pub mod records;
pub mod seal;
mod token;
pub mod upstream;

use claims_map::ClaimsMap;
use clients::MetadataDocuments;
use records::Records;
use seal::Sealer;
use upstream::Upstream;

pub const UPSTREAM_ENV: &str = "ALAYASIKI_OAUTH_UPSTREAM";
pub const CLIENT_ID_ENV: &str = "ALAYASIKI_OAUTH_CLIENT_ID";
pub const CLIENT_SECRET_ENV: &str = "ALAYASIKI_OAUTH_CLIENT_SECRET";
pub const CLIENT_SECRET_FILE_ENV: &str = "ALAYASIKI_OAUTH_CLIENT_SECRET_FILE";
pub const STATE_KEY_ENV: &str = "ALAYASIKI_OAUTH_STATE_KEY";
pub const STATE_KEY_FILE_ENV: &str = "ALAYASIKI_OAUTH_STATE_KEY_FILE";
pub const STATE_PATH_ENV: &str = "ALAYASIKI_OAUTH_STATE_PATH";
pub const CLAIMS_MAP_ENV: &str = "ALAYASIKI_OAUTH_CLAIMS_MAP";
pub const SUBJECT_CLAIM_ENV: &str = "ALAYASIKI_OAUTH_SUBJECT_CLAIM";
pub const REGISTRATION_TOKEN_ENV: &str = "ALAYASIKI_OAUTH_REGISTRATION_TOKEN";
pub const CA_FILE_ENV: &str = "ALAYASIKI_OAUTH_CA_FILE";
pub const ALLOW_PRIVATE_METADATA_ENV: &str = "ALAYASIKI_OAUTH_ALLOW_PRIVATE_CLIENT_METADATA";

/// The state file's name in the data directory unless
/// `ALAYASIKI_OAUTH_STATE_PATH` names another.
pub const STATE_FILE_NAME: &str = "oauth.sqlite";

/// Lifetime of an access token the facade issues.
pub const ACCESS_TOKEN_TTL_SECS: u64 = 600;
/// Lifetime of a refresh token (each use replaces it with a new one).
pub const REFRESH_TOKEN_TTL_SECS: u64 = 30 * 24 * 3600;
/// Lifetime of an authorization code.
pub const AUTHORIZATION_CODE_TTL_SECS: u64 = 60;
/// Time a person has from the consent page through the upstream sign-in.
pub const SIGN_IN_TTL_SECS: u64 = 600;
/// A registered client unused for this long is forgotten (each token
/// issued to it starts the period again).
pub const CLIENT_TTL_SECS: u64 = 90 * 24 * 3600;
/// Registrations accepted per minute, from everyone together.
pub const MAX_REGISTRATIONS_PER_MINUTE: u32 = 30;
/// Registered clients kept at once; past it registration is refused
/// until some expire.
pub const MAX_REGISTERED_CLIENTS: usize = 10_000;
/// Largest registration request (bytes).
pub const MAX_REGISTRATION_BYTES: usize = 16 * 1024;
/// Largest `state` a client may send (bytes); it comes back verbatim.
pub const MAX_CLIENT_STATE_BYTES: usize = 1024;
/// Threads that run the endpoints which wait on other servers (metadata
/// documents, the upstream provider), and requests queued for them.
pub const OAUTH_WORKERS: usize = 4;
pub const OAUTH_QUEUE: usize = 32;

/// Random bytes in codes, refresh tokens, client ids and `state`s.
const TOKEN_BYTES: usize = 32;

/// The endpoints, by path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    Metadata,
    Authorize,
    Consent,
    Callback,
    Token,
    Register,
    Revoke,
}

pub const AUTHORIZATION_SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
pub const OPENID_CONFIGURATION_PATH: &str = "/.well-known/openid-configuration";
pub const AUTHORIZE_PATH: &str = "/authorize";
pub const CONSENT_PATH: &str = "/oauth/consent";
pub const CALLBACK_PATH: &str = "/oauth/callback";
pub const TOKEN_PATH: &str = "/token";
pub const REGISTER_PATH: &str = "/register";
pub const REVOKE_PATH: &str = "/revoke";

impl Endpoint {
    pub(super) fn of(path: &str) -> Option<Endpoint> {
        Some(match path {
            AUTHORIZATION_SERVER_METADATA_PATH | OPENID_CONFIGURATION_PATH => Endpoint::Metadata,
            AUTHORIZE_PATH => Endpoint::Authorize,
            CONSENT_PATH => Endpoint::Consent,
            CALLBACK_PATH => Endpoint::Callback,
            TOKEN_PATH => Endpoint::Token,
            REGISTER_PATH => Endpoint::Register,
            REVOKE_PATH => Endpoint::Revoke,
            _ => return None,
        })
    }

    fn method(self) -> Method {
        match self {
            Endpoint::Metadata | Endpoint::Authorize | Endpoint::Callback => Method::Get,
            _ => Method::Post,
        }
    }
}

/// The configured facade.
pub struct Facade {
    issuer: String,
    resource: String,
    signing: HS256Key,
    records: Records,
    upstream: Upstream,
    documents: MetadataDocuments,
    claims: ClaimsMap,
    subject_claim: String,
    registration_token: Option<String>,
    /// Registrations in the current minute.
    registrations: Mutex<(Instant, u32)>,
    secure_cookies: bool,
    jobs: crossbeam_channel::Sender<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Facade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facade")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// A random token: lower-case hex of [`TOKEN_BYTES`] bytes.
fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    crate::ids::secret_bytes(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The origin (`scheme://authority`) of an absolute URL.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| format!("{}://{authority}", scheme.to_ascii_lowercase()))
}

impl Facade {
    /// The facade the environment configures, or `None` when
    /// `ALAYASIKI_OAUTH_UPSTREAM` is unset. `data_dir` holds the state file
    /// unless `ALAYASIKI_OAUTH_STATE_PATH` names another place.
    pub fn from_env(data_dir: &Path) -> Result<Option<Facade>, String> {
        let Some(upstream_url) = config::env(UPSTREAM_ENV) else {
            return Ok(None);
        };
        let need = |var: &str, what: &str| {
            config::env(var)
                .ok_or_else(|| format!("{UPSTREAM_ENV} is set, so {var} ({what}) is required"))
        };
        let resource = need(
            config::RESOURCE_ENV,
            "this server's resource URL, e.g. https://mcp.example.com/mcp; the facade's issuer is its origin",
        )?;
        let issuer = origin_of(&resource)
            .ok_or_else(|| format!("{} is not an absolute URL", config::RESOURCE_ENV))?;
        let signing = config::secret_from_env(config::JWT_SECRET_ENV, config::JWT_SECRET_FILE_ENV)?
            .ok_or_else(|| {
                format!(
                    "{UPSTREAM_ENV} is set, so {} or {} is required: the facade signs the \
                     access tokens it issues with that HS256 secret",
                    config::JWT_SECRET_ENV,
                    config::JWT_SECRET_FILE_ENV
                )
            })?;
        let state_key =
            config::secret_from_env(STATE_KEY_ENV, STATE_KEY_FILE_ENV)?.ok_or_else(|| {
                format!(
                "{UPSTREAM_ENV} is set, so {STATE_KEY_ENV} or {STATE_KEY_FILE_ENV} is required: \
                 registrations and grants are stored encrypted under it (32 bytes or more, e.g. \
                 `openssl rand -hex 32`)"
            )
            })?;
        if state_key == signing {
            return Err(format!(
                "{STATE_KEY_ENV} must differ from the JWT secret: one key, one purpose"
            ));
        }
        let sealer = Sealer::new(&state_key).map_err(|e| format!("{STATE_KEY_ENV}: {e}"))?;
        let client_id = need(
            CLIENT_ID_ENV,
            "the client id registered at the upstream provider",
        )?;
        let client_secret = config::secret_from_env(CLIENT_SECRET_ENV, CLIENT_SECRET_FILE_ENV)?
            .ok_or_else(|| {
                format!("{UPSTREAM_ENV} is set, so {CLIENT_SECRET_ENV} or {CLIENT_SECRET_FILE_ENV} is required")
            })?;
        let client_secret = String::from_utf8(client_secret)
            .map_err(|_| format!("{CLIENT_SECRET_ENV} is not UTF-8"))?;
        let claims = ClaimsMap::parse(
            CLAIMS_MAP_ENV,
            &need(
                CLAIMS_MAP_ENV,
                "who gets which tenant and roles, e.g. `email_domain=example.com => tenant=acme roles=reader,ingestor`",
            )?,
        )?;
        let roots = config::env(CA_FILE_ENV)
            .map(|p| fetch::ca_roots(&p))
            .transpose()?;
        let allow_private = match config::env(ALLOW_PRIVATE_METADATA_ENV).as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => return Err(format!("{ALLOW_PRIVATE_METADATA_ENV}={v:?} is not 0 or 1")),
        };
        let upstream = Upstream::new(
            UPSTREAM_ENV,
            &upstream_url,
            client_id,
            client_secret,
            fetch::agent(roots.as_ref(), false),
        )?;
        let path = config::env(STATE_PATH_ENV)
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| data_dir.join(STATE_FILE_NAME));
        let records = Records::open(&path, sealer)?;
        let (jobs, queue) = crossbeam_channel::bounded::<Box<dyn FnOnce() + Send>>(OAUTH_QUEUE);
        for i in 0..OAUTH_WORKERS {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("oauth-{i}"))
                .spawn(move || {
                    for job in queue {
                        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                            log::error!("an OAuth endpoint panicked");
                        }
                    }
                })
                .map_err(|e| format!("cannot start the OAuth workers: {e}"))?;
        }
        let facade = Facade {
            secure_cookies: issuer.starts_with("https://"),
            issuer,
            resource,
            signing: HS256Key::from_bytes(&signing),
            records,
            upstream,
            documents: MetadataDocuments::new(fetch::agent(roots.as_ref(), !allow_private)),
            claims,
            subject_claim: config::env(SUBJECT_CLAIM_ENV).unwrap_or_else(|| "sub".into()),
            registration_token: config::env(REGISTRATION_TOKEN_ENV),
            registrations: Mutex::new((Instant::now(), 0)),
            jobs,
        };
        log::info!(
            "authorization server for MCP clients at {}, signing in through {}; state in {}",
            facade.issuer,
            upstream_url,
            path.display()
        );
        Ok(Some(facade))
    }

    /// This server as an issuer: what tokens' `iss` and the protected
    /// resource metadata name.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.issuer)
    }

    /// RFC 8414 metadata (also served as the OpenID discovery form).
    fn metadata(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "authorization_endpoint": self.url(AUTHORIZE_PATH),
            "token_endpoint": self.url(TOKEN_PATH),
            "registration_endpoint": self.url(REGISTER_PATH),
            "revocation_endpoint": self.url(REVOKE_PATH),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": super::auth::PERMISSIONS.iter().map(|p| p.scope()).collect::<Vec<_>>(),
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": true,
        })
    }

    /// Runs `job` on the facade's workers; 503 if they are all taken.
    fn on_worker(&self, request: Request, job: impl FnOnce(Request) + Send + 'static) {
        let (tx, rx) = crossbeam_channel::bounded::<Request>(1);
        let queued = self.jobs.try_send(Box::new(move || {
            if let Ok(request) = rx.recv() {
                job(request);
            }
        }));
        if queued.is_ok() {
            let _ = tx.send(request);
        } else {
            let r = error(503, "busy", "too many sign-ins at once; retry shortly")
                .with_header(super::http::retry_after(super::admission::RETRY_AFTER_SECS));
            request.respond(r);
        }
    }
}

/// Answers a request for one of the facade's endpoints (routing has
/// checked origin and host; none of these needs a bearer token).
pub(super) fn serve(
    ctx: &Arc<Context>,
    facade: &Arc<Facade>,
    request: Request,
    endpoint: Endpoint,
    query: &str,
) {
    if *request.method() != endpoint.method() {
        let r = error(
            405,
            "method_not_allowed",
            "method not allowed on this route",
        )
        .with_header(make_header("Allow", endpoint.method().as_str()));
        return request.respond(r);
    }
    if endpoint.method() == Method::Get
        && (super::body::may_wait_for_body(&request) || super::body::has_body(&request))
    {
        // Left unread, a body would be taken for the next request.
        let r = error(400, "unexpected_body", "this route takes no request body");
        return request.respond_and_close(r);
    }
    match endpoint {
        Endpoint::Metadata => {
            let r = Response::from_data(facade.metadata().to_string().into_bytes())
                .with_header(make_header("Content-Type", "application/json"))
                .with_header(make_header("Cache-Control", "public, max-age=3600"));
            request.respond(r)
        }
        Endpoint::Authorize => {
            let facade = facade.clone();
            let query = query.to_string();
            facade.clone().on_worker(request, move |request| {
                let r = authorize::authorize(&facade, &request, &query);
                request.respond(r)
            })
        }
        Endpoint::Callback => {
            let facade = facade.clone();
            let query = query.to_string();
            facade.clone().on_worker(request, move |request| {
                let r = authorize::callback(&facade, &query);
                request.respond(r)
            })
        }
        Endpoint::Consent | Endpoint::Token | Endpoint::Register | Endpoint::Revoke => {
            let facade = facade.clone();
            super::body_readers::read_then(ctx, request, "oauth", move |_ctx, request, body| {
                let Ok(body) = String::from_utf8(body) else {
                    return request.respond(error(400, "invalid_request", "the body is not UTF-8"));
                };
                match endpoint {
                    Endpoint::Consent => {
                        let f = facade.clone();
                        facade.on_worker(request, move |request| {
                            let r = authorize::consent(&f, &request, &body);
                            request.respond(r)
                        })
                    }
                    Endpoint::Token => {
                        let r = token::token(&facade, &request, &body);
                        request.respond(r)
                    }
                    Endpoint::Register => {
                        let r = token::register(&facade, &request, &body);
                        request.respond(r)
                    }
                    _ => {
                        let r = token::revoke(&facade, &body);
                        request.respond(r)
                    }
                }
            })
        }
    }
}

/// The lifetime `secs` from now, as Unix ms.
fn expires_in(secs: u64) -> i64 {
    records::now_ms() + Duration::from_secs(secs).as_millis() as i64
}
