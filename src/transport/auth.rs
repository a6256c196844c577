//! Who is calling over HTTP: Bearer JWT verification (jwt-simple) and the
//! [`Principal`] a valid token names.
//!
//! One verifying key is configured at start-up: an HS256 secret, or an
//! RS256, ES256 or EdDSA public key. The token's `alg` must be that key's
//! algorithm (so `none` and algorithm confusion are refused by
//! construction). `exp` is required, `nbf` is honoured, `iss` and `aud` are
//! checked when configured, with a small leeway for clock drift. The claims
//! `sub` and `tenant` name the caller; `roles` and `scope` say what it may
//! do (a role or a scope suffices).
//!
//! Tokens are read only from the `Authorization` header, never from a query
//! string, and never logged: failures are reported by category only.

use jwt_simple::prelude::*;
use jwt_simple::JWTError;
use serde::de::Deserializer;

use crate::config::{
    self, JWT_ALGORITHM_ENV, JWT_AUDIENCE_ENV, JWT_ISSUER_ENV, JWT_LEEWAY_ENV,
    JWT_PUBLIC_KEY_FILE_ENV, JWT_SECRET_ENV, JWT_SECRET_FILE_ENV,
};
use crate::service::{Principal, Role};
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
}

/// Verifies tokens and turns them into principals.
pub struct Authenticator {
    key: VerifyingKey,
    options: VerificationOptions,
}

/// Why a request is unauthenticated (HTTP 401). The reason is a fixed
/// phrase, safe to show the client: it never echoes the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthError(pub &'static str);

impl AuthError {
    /// The `WWW-Authenticate` challenge (RFC 6750).
    pub fn challenge(&self) -> String {
        format!(
            "Bearer realm=\"alayasiki\", error=\"invalid_token\", error_description=\"{}\"",
            self.0
        )
    }
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

impl Authenticator {
    pub fn new(
        key: VerifyingKey,
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
        Authenticator { key, options }
    }

    /// The authenticator configured by the environment (see API.md). Exactly
    /// one of a secret, a secret file or a public key file must be given:
    /// the server never runs unauthenticated.
    pub fn from_env() -> Result<Authenticator, String> {
        let secret = config::env(JWT_SECRET_ENV);
        let secret_file = config::env(JWT_SECRET_FILE_ENV);
        let public_key = config::env(JWT_PUBLIC_KEY_FILE_ENV);
        let algorithm = config::env(JWT_ALGORITHM_ENV);
        let given = [&secret, &secret_file, &public_key]
            .iter()
            .filter(|v| v.is_some())
            .count();
        if given != 1 {
            return Err(format!(
                "configure exactly one JWT verifying key: {JWT_SECRET_ENV} (HS256 secret), \
                 {JWT_SECRET_FILE_ENV} (file holding it) or {JWT_PUBLIC_KEY_FILE_ENV} (PEM \
                 public key, with {JWT_ALGORITHM_ENV}=RS256|ES256|EdDSA)"
            ));
        }
        let key = if let Some(path) = public_key {
            let algorithm = algorithm.ok_or_else(|| {
                format!("{JWT_PUBLIC_KEY_FILE_ENV} needs {JWT_ALGORITHM_ENV}=RS256|ES256|EdDSA")
            })?;
            let pem = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {JWT_PUBLIC_KEY_FILE_ENV} {path:?}: {e}"))?;
            VerifyingKey::from_public_pem(&algorithm, &pem)?
        } else {
            if let Some(a) = algorithm.filter(|a| a != "HS256") {
                return Err(format!(
                    "{JWT_ALGORITHM_ENV}={a:?} does not fit a shared secret (HS256)"
                ));
            }
            let secret = match (secret, secret_file) {
                (Some(s), _) => s.into_bytes(),
                (None, Some(path)) => {
                    let text = std::fs::read(&path)
                        .map_err(|e| format!("cannot read {JWT_SECRET_FILE_ENV} {path:?}: {e}"))?;
                    // Editors add a final newline; it is not part of the secret.
                    let end = text
                        .iter()
                        .rposition(|b| !b"\r\n".contains(b))
                        .map_or(0, |i| i + 1);
                    text[..end].to_vec()
                }
                (None, None) => unreachable!("one source was counted"),
            };
            VerifyingKey::from_secret(&secret)?
        };
        let list = |name: &str| -> Vec<String> {
            config::env(name)
                .map(|v| {
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
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
        Ok(Authenticator::new(
            key,
            list(JWT_ISSUER_ENV),
            list(JWT_AUDIENCE_ENV),
            leeway,
        ))
    }

    /// The algorithm tokens must use (for the start-up log).
    pub fn algorithm(&self) -> &'static str {
        self.key.algorithm()
    }

    /// The principal named by the `Authorization` header value(s) of one
    /// request. More than one header is refused as ambiguous.
    pub fn authenticate(&self, authorization: &[&str]) -> Result<Principal, AuthError> {
        let header = match authorization {
            [] => return Err(AuthError("missing bearer token")),
            [one] => *one,
            _ => return Err(AuthError("more than one Authorization header")),
        };
        let token = bearer_token(header).ok_or(AuthError("not a Bearer token"))?;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(AuthError("token too long"));
        }
        let options = Some(self.options.clone());
        let verified = match &self.key {
            VerifyingKey::Hs256(k) => k.verify_token::<AccessClaims>(token, options),
            VerifyingKey::Rs256(k) => k.verify_token::<AccessClaims>(token, options),
            VerifyingKey::Es256(k) => k.verify_token::<AccessClaims>(token, options),
            VerifyingKey::EdDsa(k) => k.verify_token::<AccessClaims>(token, options),
        };
        let claims = verified.map_err(|e| AuthError(reason(&e)))?;
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
        Ok(Principal {
            tenant,
            subject,
            roles,
            scopes,
        })
    }
}

/// The token of `Bearer <token>` (scheme case-insensitive, RFC 7235).
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
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
            "token audience not accepted"
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
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn hs256() -> Authenticator {
        Authenticator::new(
            VerifyingKey::from_secret(SECRET).unwrap(),
            vec!["issuer-a".into()],
            vec!["alayasiki".into()],
            DEFAULT_LEEWAY_SECS,
        )
    }

    fn mint(
        custom: Value,
        f: impl FnOnce(JWTClaims<Map<String, Value>>) -> JWTClaims<Map<String, Value>>,
    ) -> String {
        let custom = custom.as_object().unwrap().clone();
        let claims = Claims::with_custom_claims(custom, Duration::from_mins(5))
            .with_issuer("issuer-a")
            .with_audience("alayasiki")
            .with_subject("agent-1");
        HS256Key::from_bytes(SECRET)
            .authenticate(f(claims))
            .unwrap()
    }

    fn header(token: &str) -> String {
        format!("Bearer {token}")
    }

    #[test]
    fn valid_token_names_the_principal() {
        let t = mint(
            json!({"tenant": "acme", "roles": ["reader", "wizard"], "scope": "ingest:write"}),
            |c| c,
        );
        let p = hs256().authenticate(&[&header(&t)]).unwrap();
        assert_eq!(p.tenant.name(), "acme");
        assert_eq!(p.subject, "agent-1");
        assert_eq!(p.roles, vec![Role::Reader]);
        assert_eq!(p.scopes, vec!["ingest:write".to_string()]);
    }

    #[test]
    fn roles_may_be_one_space_separated_string() {
        let t = mint(json!({"tenant": "acme", "roles": "reader ingestor"}), |c| c);
        let p = hs256().authenticate(&[&header(&t)]).unwrap();
        assert_eq!(p.roles, vec![Role::Reader, Role::Ingestor]);
    }

    #[test]
    fn missing_claims_are_rejected() {
        let a = hs256();
        let no_tenant = mint(json!({"roles": ["admin"]}), |c| c);
        assert_eq!(
            a.authenticate(&[&header(&no_tenant)]).unwrap_err(),
            AuthError("token lacks a valid tenant claim")
        );
        let blank_tenant = mint(json!({"tenant": "  "}), |c| c);
        assert!(a.authenticate(&[&header(&blank_tenant)]).is_err());
        let mut no_sub = mint(json!({"tenant": "t"}), |mut c| {
            c.subject = None;
            c
        });
        assert_eq!(
            a.authenticate(&[&header(&no_sub)]).unwrap_err(),
            AuthError("token lacks a valid sub claim")
        );
        no_sub = mint(json!({"tenant": "t"}), |mut c| {
            c.expires_at = None;
            c
        });
        assert_eq!(
            a.authenticate(&[&header(&no_sub)]).unwrap_err(),
            AuthError("token has no exp claim")
        );
    }

    #[test]
    fn header_shapes_are_checked() {
        let a = hs256();
        assert_eq!(
            a.authenticate(&[]).unwrap_err(),
            AuthError("missing bearer token")
        );
        assert_eq!(
            a.authenticate(&["Basic dXNlcjpwYXNz"]).unwrap_err(),
            AuthError("not a Bearer token")
        );
        assert_eq!(
            a.authenticate(&["Bearer"]).unwrap_err(),
            AuthError("not a Bearer token")
        );
        let t = mint(json!({"tenant": "t"}), |c| c);
        assert!(a.authenticate(&[&format!("bearer {t}")]).is_ok());
        assert_eq!(
            a.authenticate(&[&header(&t), &header(&t)]).unwrap_err(),
            AuthError("more than one Authorization header")
        );
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        assert_eq!(
            a.authenticate(&[&header(&long)]).unwrap_err(),
            AuthError("token too long")
        );
    }

    #[test]
    fn short_secrets_and_unknown_algorithms_are_refused() {
        assert!(VerifyingKey::from_secret(&SECRET[..MIN_HS256_SECRET_BYTES - 1]).is_err());
        assert!(VerifyingKey::from_public_pem("HS256", "x").is_err());
        assert!(VerifyingKey::from_public_pem("ES256", "not a pem").is_err());
    }

    #[test]
    fn challenge_never_contains_the_token() {
        let t = mint(json!({"tenant": "t"}), |c| c);
        let err = Authenticator::new(
            VerifyingKey::from_secret(&[7u8; 32]).unwrap(),
            vec![],
            vec![],
            0,
        )
        .authenticate(&[&header(&t)])
        .unwrap_err();
        assert_eq!(err, AuthError("token signature invalid"));
        assert!(!err.challenge().contains(&t));
    }
}
