//! Who is calling over HTTP: Bearer JWT verification (jwt-simple), the
//! [`Principal`] a valid token names, and what this server tells OAuth
//! clients about itself as a protected resource (RFC 9728, RFC 6750).
//!
//! Verifying keys come from exactly one source: an HS256 secret, an RS256,
//! ES256 or EdDSA public key, or a JWKS (a file or a URL, [`super::jwks`])
//! whose keys are matched by `kid`. The token's `alg` must be its key's
//! algorithm (so `none` and algorithm confusion are refused by
//! construction). `exp` is required, `nbf` is honoured, `iss` and `aud` are
//! checked when configured, with a small leeway for clock drift. When a
//! resource identifier is configured (`ALAYASIKI_RESOURCE`), `aud` must name
//! it (RFC 8707 audience binding). The claims `sub` and `tenant` name the
//! caller; `roles` and `scope` say what it may do (a role or a scope
//! suffices).
//!
//! Tokens are read only from the `Authorization` header, never from a query
//! string, and never logged: failures are reported by category only, as
//! fixed phrases in the `WWW-Authenticate` challenges built here, which
//! also point clients at the protected resource metadata.

use jwt_simple::prelude::*;
use jwt_simple::JWTError;
use serde::de::Deserializer;
use std::sync::Arc;

pub mod anonymous;
mod challenge;
mod resource;

pub use challenge::{insufficient_scope, scopes, AuthError};
pub use resource::{clean_authority, Metadata, Resource, METADATA_MAX_AGE_SECS, METADATA_PATH};

use super::jwks::{self, Jwks, KeySet, Source, JWKS_ALGORITHMS};
use super::local_secret::LocalSecret;
use crate::config::{
    self, AUTHORIZATION_SERVERS_ENV, JWKS_FILE_ENV, JWKS_URL_ENV, JWT_ALGORITHM_ENV,
    JWT_AUDIENCE_ENV, JWT_ISSUER_ENV, JWT_LEEWAY_ENV, JWT_PUBLIC_KEY_FILE_ENV, JWT_SECRET_ENV,
    JWT_SECRET_FILE_ENV, RESOURCE_ENV,
};
use crate::service::{MemoryAccess, Permission, Principal, Role};
use crate::store::Tenant;

/// Longest token accepted (bytes); jwt-simple refuses longer ones before
/// decoding anything.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Shortest HS256 secret accepted (bytes): RFC 7518 §3.2 asks for a key at
/// least as long as the hash output.
pub const MIN_HS256_SECRET_BYTES: usize = 32;

/// Clock drift tolerated on `exp`, `nbf` and `iat` unless configured.
pub const DEFAULT_LEEWAY_SECS: u64 = 30;

/// Largest configurable leeway: more would make `exp` meaningless.
pub const MAX_LEEWAY_SECS: u64 = 300;

/// The permissions every scope of this server grants, in the order
/// `scopes_supported` lists them.
pub const PERMISSIONS: [Permission; 3] = [Permission::Query, Permission::Ingest, Permission::Admin];

/// What a client needs for the routes open to any permission (`/mcp`,
/// SSE, the tool table): querying and storing. `admin:*` is never asked
/// for unless an operation needs it.
pub const BASIC_PERMISSIONS: [Permission; 2] = [Permission::Query, Permission::Ingest];

/// The key tokens must be signed with.
pub enum VerifyingKey {
    Hs256(HS256Key),
    Rs256(RS256PublicKey),
    Es256(ES256PublicKey),
    EdDsa(Ed25519PublicKey),
}

impl VerifyingKey {
    /// The JOSE name of the algorithm this key verifies.
    pub fn algorithm(&self) -> &'static str {
        match self {
            VerifyingKey::Hs256(_) => "HS256",
            VerifyingKey::Rs256(_) => "RS256",
            VerifyingKey::Es256(_) => "ES256",
            VerifyingKey::EdDsa(_) => "EdDSA",
        }
    }

    /// A public key in PEM for `algorithm` (`RS256`, `ES256` or `EdDSA`).
    pub fn from_public_pem(algorithm: &str, pem: &str) -> Result<VerifyingKey, String> {
        let bad = |e: jwt_simple::Error| format!("not a valid {algorithm} public key: {e}");
        match algorithm {
            "RS256" => RS256PublicKey::from_pem(pem)
                .map(VerifyingKey::Rs256)
                .map_err(bad),
            "ES256" => ES256PublicKey::from_pem(pem)
                .map(VerifyingKey::Es256)
                .map_err(bad),
            "EdDSA" => Ed25519PublicKey::from_pem(pem)
                .map(VerifyingKey::EdDsa)
                .map_err(bad),
            other => Err(format!(
                "{JWT_ALGORITHM_ENV}={other:?} is not one of RS256, ES256, EdDSA \
                 (HS256 takes a secret, not a public key)"
            )),
        }
    }

    /// An HS256 secret of at least [`MIN_HS256_SECRET_BYTES`].
    pub fn from_secret(secret: &[u8]) -> Result<VerifyingKey, String> {
        if secret.len() < MIN_HS256_SECRET_BYTES {
            return Err(format!(
                "the HS256 secret is {} bytes; at least {MIN_HS256_SECRET_BYTES} are required",
                secret.len()
            ));
        }
        Ok(VerifyingKey::Hs256(HS256Key::from_bytes(secret)))
    }

    fn verify(
        &self,
        token: &str,
        options: &VerificationOptions,
    ) -> Result<JWTClaims<AccessClaims>, jwt_simple::Error> {
        self.verify_as::<AccessClaims>(token, options)
    }

    /// Verifies `token` with this key and reads its claims as `C` (the
    /// facade reads the upstream provider's ID tokens with it).
    pub(crate) fn verify_as<C: Serialize + serde::de::DeserializeOwned>(
        &self,
        token: &str,
        options: &VerificationOptions,
    ) -> Result<JWTClaims<C>, jwt_simple::Error> {
        let options = Some(options.clone());
        match self {
            VerifyingKey::Hs256(k) => k.verify_token::<C>(token, options),
            VerifyingKey::Rs256(k) => k.verify_token::<C>(token, options),
            VerifyingKey::Es256(k) => k.verify_token::<C>(token, options),
            VerifyingKey::EdDsa(k) => k.verify_token::<C>(token, options),
        }
    }
}

/// Where verifying keys come from.
pub enum Keys {
    /// One key, configured at start-up.
    Static(Box<VerifyingKey>),
    /// The keys of a JWKS, matched by `kid` ([`super::jwks`]).
    Jwks(Jwks),
    /// No JWT at all: the loopback memory browser's per-start secret is
    /// the token, and it names the one local principal
    /// ([`Authenticator::local`]).
    Local(Box<LocalKey>),
}

/// The loopback memory browser's credential and whom it names.
pub struct LocalKey {
    secret: LocalSecret,
    principal: Principal,
}

impl From<VerifyingKey> for Keys {
    fn from(key: VerifyingKey) -> Keys {
        Keys::Static(Box::new(key))
    }
}

impl From<Jwks> for Keys {
    fn from(jwks: Jwks) -> Keys {
        Keys::Jwks(jwks)
    }
}

/// Verifies tokens and turns them into principals; describes this server
/// as an OAuth protected resource.
pub struct Authenticator {
    keys: Keys,
    options: VerificationOptions,
    resource: Option<Resource>,
    authorization_servers: Vec<String>,
    /// Whom a request without an `Authorization` header acts as, when the
    /// operator opened a scope to the public ([`anonymous`]).
    anonymous: Option<Principal>,
}

/// The claims this server reads beyond the registered ones.
#[derive(Debug, Default, Serialize, Deserialize)]
struct AccessClaims {
    #[serde(default)]
    tenant: Option<String>,
    #[serde(default, deserialize_with = "roles")]
    roles: Vec<String>,
    #[serde(default)]
    scope: Option<String>,
    /// Absent: the whole tenant; present (even empty): only these memory
    /// scopes and what the caller wrote.
    #[serde(default, deserialize_with = "memory_scopes")]
    memory_scopes: Option<Vec<String>>,
}

/// `memory_scopes` as an array of grants or one space-separated string.
fn memory_scopes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Grants {
        List(Vec<String>),
        Joined(String),
    }
    Ok(match Option::<Grants>::deserialize(d)? {
        None => None,
        Some(Grants::List(v)) => Some(v),
        Some(Grants::Joined(s)) => Some(s.split_whitespace().map(str::to_string).collect()),
    })
}

/// `roles` as an array of names or one space-separated string.
fn roles<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Roles {
        List(Vec<String>),
        Joined(String),
    }
    Ok(match Option::<Roles>::deserialize(d)? {
        None => Vec::new(),
        Some(Roles::List(v)) => v,
        Some(Roles::Joined(s)) => s.split_whitespace().map(str::to_string).collect(),
    })
}

/// What trying the keys of a set on one token came to.
enum Tried {
    Verified(Box<JWTClaims<AccessClaims>>),
    Refused(AuthError),
    /// The set holds no key the token could be signed with.
    NoKey,
}

fn list_env(name: &str) -> Vec<String> {
    config::env(name)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Authenticator {
    pub fn new(
        keys: impl Into<Keys>,
        issuers: Vec<String>,
        audiences: Vec<String>,
        leeway_secs: u64,
    ) -> Authenticator {
        let set = |v: Vec<String>| (!v.is_empty()).then(|| v.into_iter().collect());
        let options = VerificationOptions {
            allowed_issuers: set(issuers),
            allowed_audiences: set(audiences),
            time_tolerance: Some(Duration::from_secs(leeway_secs.min(MAX_LEEWAY_SECS))),
            max_token_length: Some(MAX_TOKEN_BYTES),
            ..Default::default()
        };
        Authenticator {
            keys: keys.into(),
            options,
            resource: None,
            authorization_servers: Vec::new(),
            anonymous: None,
        }
    }

    /// Admits requests without credentials as `anonymous` (see
    /// [`anonymous`]); `None` keeps them refused.
    pub fn admitting_anonymous(mut self, anonymous: Option<Principal>) -> Authenticator {
        self.anonymous = anonymous;
        self
    }

    /// The principal of a request that sent no `Authorization` header, if
    /// such requests are admitted.
    pub fn anonymous(&self) -> Option<&Principal> {
        self.anonymous.as_ref()
    }

    /// Binds tokens to `resource`: it is added to the accepted audiences
    /// (so `aud` must name it, or one of the configured audiences) and
    /// advertised in the metadata.
    pub fn with_resource(mut self, resource: Resource) -> Authenticator {
        self.options
            .allowed_audiences
            .get_or_insert_with(Default::default)
            .insert(resource.id().to_string());
        self.resource = Some(resource);
        self
    }

    /// Accepts exactly `secret` as the bearer token, as `principal`, and
    /// nothing else (no JWT): the loopback memory browser of the local
    /// user ([`super::loopback_ui`]).
    pub fn local(secret: LocalSecret, principal: Principal) -> Authenticator {
        Authenticator::new(
            Keys::Local(Box::new(LocalKey { secret, principal })),
            Vec::new(),
            Vec::new(),
            0,
        )
    }

    /// The issuers advertised as `authorization_servers`.
    pub fn with_authorization_servers(mut self, servers: Vec<String>) -> Authenticator {
        self.authorization_servers = servers;
        self
    }

    /// Advertises `issuer` (the facade's, [`super::oauth`]) as an
    /// authorization server, and accepts its tokens where issuers are
    /// checked.
    pub fn trusting_issuer(mut self, issuer: &str) -> Authenticator {
        if let Some(allowed) = self.options.allowed_issuers.as_mut() {
            allowed.insert(issuer.to_string());
        }
        if !self.authorization_servers.iter().any(|s| s == issuer) {
            self.authorization_servers.insert(0, issuer.to_string());
        }
        self
    }

    /// The authenticator configured by the environment (see API.md). Exactly
    /// one key source must be given: the server never runs unauthenticated.
    pub fn from_env() -> Result<Authenticator, String> {
        let secret = config::env(JWT_SECRET_ENV);
        let secret_file = config::env(JWT_SECRET_FILE_ENV);
        let public_key = config::env(JWT_PUBLIC_KEY_FILE_ENV);
        let jwks_file = config::env(JWKS_FILE_ENV);
        let jwks_url = config::env(JWKS_URL_ENV);
        let algorithm = config::env(JWT_ALGORITHM_ENV);
        let given = [&secret, &secret_file, &public_key, &jwks_file, &jwks_url]
            .iter()
            .filter(|v| v.is_some())
            .count();
        if given != 1 {
            return Err(format!(
                "configure exactly one source of JWT verifying keys: {JWT_SECRET_ENV} (HS256 \
                 secret), {JWT_SECRET_FILE_ENV} (file holding it), {JWT_PUBLIC_KEY_FILE_ENV} (PEM \
                 public key, with {JWT_ALGORITHM_ENV}=RS256|ES256|EdDSA), {JWKS_FILE_ENV} (JWKS \
                 file) or {JWKS_URL_ENV} (the authorization server's jwks_uri)"
            ));
        }
        let keys: Keys = if jwks_file.is_some() || jwks_url.is_some() {
            if algorithm.is_some() {
                return Err(format!(
                    "{JWT_ALGORITHM_ENV} does not apply to a JWKS: each key names its own \
                     ({})",
                    JWKS_ALGORITHMS.join(", ")
                ));
            }
            let source = match (jwks_file, jwks_url) {
                (Some(path), _) => Source::File(path.into()),
                (None, Some(url)) => Source::url(JWKS_URL_ENV, &url)?,
                (None, None) => unreachable!("one source was counted"),
            };
            Jwks::load(source)?.into()
        } else if let Some(path) = public_key {
            let algorithm = algorithm.ok_or_else(|| {
                format!("{JWT_PUBLIC_KEY_FILE_ENV} needs {JWT_ALGORITHM_ENV}=RS256|ES256|EdDSA")
            })?;
            let pem = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {JWT_PUBLIC_KEY_FILE_ENV} {path:?}: {e}"))?;
            VerifyingKey::from_public_pem(&algorithm, &pem)?.into()
        } else {
            if let Some(a) = algorithm.filter(|a| a != "HS256") {
                return Err(format!(
                    "{JWT_ALGORITHM_ENV}={a:?} does not fit a shared secret (HS256)"
                ));
            }
            let secret = match (secret, secret_file) {
                (Some(s), _) => s.into_bytes(),
                (None, Some(path)) => config::read_secret_file(JWT_SECRET_FILE_ENV, &path)?,
                (None, None) => unreachable!("one source was counted"),
            };
            VerifyingKey::from_secret(&secret)?.into()
        };
        let leeway = match config::env(JWT_LEEWAY_ENV) {
            None => DEFAULT_LEEWAY_SECS,
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= MAX_LEEWAY_SECS)
                .ok_or_else(|| {
                    format!("{JWT_LEEWAY_ENV}={v:?} is not a number of seconds from 0 to {MAX_LEEWAY_SECS}")
                })?,
        };
        let resource = config::env(RESOURCE_ENV)
            .map(|v| Resource::parse(RESOURCE_ENV, &v))
            .transpose()?;
        let servers = list_env(AUTHORIZATION_SERVERS_ENV);
        for s in &servers {
            jwks::check_issuer_url(AUTHORIZATION_SERVERS_ENV, s)?;
        }
        // Tokens come from the advertised authorization servers unless
        // the accepted issuers are configured apart.
        let mut issuers = list_env(JWT_ISSUER_ENV);
        if issuers.is_empty() {
            issuers = servers.clone();
        }
        let audiences = list_env(JWT_AUDIENCE_ENV);
        if audiences.is_empty() && resource.is_none() {
            if matches!(keys, Keys::Jwks(_)) {
                return Err(format!(
                    "keys from a JWKS need {RESOURCE_ENV} (this server's resource identifier, \
                     e.g. https://mcp.example.com/mcp) or {JWT_AUDIENCE_ENV}: an authorization \
                     server issues tokens for many services, and only those whose aud names this \
                     one may be accepted"
                ));
            }
            log::warn!(
                "no {RESOURCE_ENV} or {JWT_AUDIENCE_ENV}: tokens are accepted whatever their aud"
            );
        }
        let mut auth = Authenticator::new(keys, issuers, audiences, leeway)
            .with_authorization_servers(servers);
        if let Some(r) = resource {
            auth = auth.with_resource(r);
        }
        Ok(auth)
    }

    /// What tokens are verified with (for the start-up log).
    pub fn algorithm(&self) -> String {
        match &self.keys {
            Keys::Static(k) => k.algorithm().to_string(),
            Keys::Local(_) => "the per-start secret of the memory browser".to_string(),
            Keys::Jwks(j) => format!(
                "{} from the JWKS at {}",
                JWKS_ALGORITHMS.join("/"),
                j.source().describe()
            ),
        }
    }

    /// The principal named by the `Authorization` header value(s) of one
    /// request. More than one header is refused as ambiguous.
    pub fn authenticate(&self, authorization: &[&str]) -> Result<Principal, AuthError> {
        let header = match authorization {
            [] => return Err(AuthError::MISSING),
            [one] => *one,
            _ => return Err(AuthError("more than one Authorization header")),
        };
        let token = bearer_token(header)?;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError("token too long"));
        }
        if let Keys::Local(local) = &self.keys {
            return if local.secret.matches(token) {
                Ok(local.principal.clone())
            } else {
                Err(AuthError::NOT_THE_SECRET)
            };
        }
        let claims = self.verify(token)?;
        if claims.expires_at.is_none() {
            return Err(AuthError("token has no exp claim"));
        }
        let subject = claims
            .subject
            .filter(|s| config::validate_identity(s).is_ok())
            .ok_or(AuthError("token lacks a valid sub claim"))?;
        let tenant = claims
            .custom
            .tenant
            .as_deref()
            .and_then(|t| Tenant::new(t).ok())
            .ok_or(AuthError("token lacks a valid tenant claim"))?;
        // Unknown role names grant nothing; they are not an error, so an
        // issuer may add roles this server does not know.
        let roles = claims
            .custom
            .roles
            .iter()
            .filter_map(|r| Role::parse(r))
            .collect();
        let scopes = claims
            .custom
            .scope
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        // A malformed grant is refused outright: read as fewer scopes it
        // would hide the token's documents, read as none it would widen.
        let memory = match &claims.custom.memory_scopes {
            None => MemoryAccess::Unrestricted,
            Some(items) => MemoryAccess::from_claim(items)
                .map_err(|_| AuthError("token has an invalid memory_scopes claim"))?,
        };
        Ok(Principal {
            tenant,
            subject,
            roles,
            scopes,
            memory,
            anonymous: false,
        })
    }

    /// The token's verified claims: signature, then time, issuer and
    /// audience.
    fn verify(&self, token: &str) -> Result<JWTClaims<AccessClaims>, AuthError> {
        let jwks = match &self.keys {
            Keys::Static(key) => {
                return key
                    .verify(token, &self.options)
                    .map_err(|e| AuthError(reason(&e)))
            }
            Keys::Jwks(jwks) => jwks,
            // Answered by `authenticate` before any JWT is decoded.
            Keys::Local(_) => return Err(AuthError::NOT_THE_SECRET),
        };
        // The header is unverified: it only chooses which keys to try, and
        // each key verifies its own algorithm only.
        let meta =
            Token::decode_metadata(token).map_err(|_| AuthError("token malformed or invalid"))?;
        let alg = meta.algorithm();
        if !JWKS_ALGORITHMS.contains(&alg) {
            return Err(AuthError("token algorithm not accepted"));
        }
        let kid = meta.key_id();
        let keys = jwks.keys();
        match self.try_keys(&keys, alg, kid, token) {
            Tried::Verified(c) => Ok(*c),
            Tried::Refused(e) => Err(e),
            // The issuer may have rotated a key in: reload (within the rate
            // bound) and try once more.
            Tried::NoKey => match jwks.reloaded_since(&keys) {
                Some(newer) => match self.try_keys(&newer, alg, kid, token) {
                    Tried::Verified(c) => Ok(*c),
                    Tried::Refused(e) => Err(e),
                    Tried::NoKey => Err(AuthError::UNKNOWN_KEY),
                },
                None => Err(AuthError::UNKNOWN_KEY),
            },
        }
    }

    fn try_keys(&self, keys: &Arc<KeySet>, alg: &str, kid: Option<&str>, token: &str) -> Tried {
        let mut tried = false;
        for key in keys.candidates(alg, kid) {
            tried = true;
            match key.verify(token, &self.options) {
                Ok(claims) => return Tried::Verified(Box::new(claims)),
                // Another key of the set may have signed it.
                Err(e) if is_bad_signature(&e) => continue,
                // Signed by this key, refused for its claims.
                Err(e) => return Tried::Refused(AuthError(reason(&e))),
            }
        }
        if tried {
            Tried::Refused(AuthError("token signature invalid"))
        } else {
            Tried::NoKey
        }
    }
}

/// The token of `Bearer <token>` (scheme case-insensitive, RFC 7235).
fn bearer_token(header: &str) -> Result<&str, AuthError> {
    let header = header.trim();
    let (scheme, token) = header.split_once(' ').unwrap_or((header, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::NOT_BEARER);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError("empty bearer token"));
    }
    Ok(token)
}

fn is_bad_signature(e: &jwt_simple::Error) -> bool {
    matches!(
        e.downcast_ref::<JWTError>(),
        Some(JWTError::InvalidSignature | JWTError::InvalidAuthenticationTag)
    )
}

/// A fixed, client-safe phrase for a verification failure.
fn reason(e: &jwt_simple::Error) -> &'static str {
    match e.downcast_ref::<JWTError>() {
        Some(JWTError::TokenHasExpired) => "token expired",
        Some(JWTError::TokenNotValidYet) => "token not yet valid",
        Some(JWTError::ClockDrift) => "token issued in the future",
        Some(JWTError::RequiredIssuerMismatch | JWTError::RequiredIssuerMissing) => {
            "token issuer not accepted"
        }
        Some(JWTError::RequiredAudienceMismatch | JWTError::RequiredAudienceMissing) => {
            AuthError::WRONG_AUDIENCE.0
        }
        Some(JWTError::AlgorithmMismatch) => "token algorithm not accepted",
        Some(JWTError::InvalidSignature | JWTError::InvalidAuthenticationTag) => {
            "token signature invalid"
        }
        Some(JWTError::TokenTooLong) => "token too long",
        _ => "token malformed or invalid",
    }
}

#[cfg(test)]
mod tests;
