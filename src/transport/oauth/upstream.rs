//! The team's OpenID provider, to which the facade delegates sign-in:
//! its discovery document, the authorization request sent to it (PKCE
//! S256, `state`, `nonce`, `prompt=consent`), and what comes back (the
//! code exchanged with the facade's one client id and secret, the ID
//! token verified against the provider's keys, the userinfo claims).
//!
//! The discovery document is read at the first sign-in and again when it
//! is older than [`DISCOVERY_MAX_AGE`]; a provider that is down delays
//! sign-in, never the server's start.

use jwt_simple::prelude::*;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::fetch::{self, MAX_UPSTREAM_RESPONSE_BYTES};
use super::form;
use crate::transport::jwks::{self, Jwks, Source, JWKS_ALGORITHMS};

/// How long the provider's discovery document is used before it is read
/// again.
pub const DISCOVERY_MAX_AGE: Duration = Duration::from_secs(3600);

/// The scopes asked of the provider: who the person is, and their email
/// (which the claims map may read).
const UPSTREAM_SCOPES: &str = "openid email profile";

/// What the discovery document says.
struct Discovered {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    userinfo_endpoint: Option<String>,
    /// Client authentication at the token endpoint: HTTP Basic unless the
    /// provider supports only `client_secret_post`.
    basic_auth: bool,
    jwks: Jwks,
    read_at: Instant,
}

/// The configured provider.
pub struct Upstream {
    discovery_url: String,
    client_id: String,
    client_secret: String,
    agent: ureq::Agent,
    discovered: Mutex<Option<Arc<Discovered>>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("discovery_url", &self.discovery_url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Why sign-in through the provider failed: for the log, while the person
/// sees a fixed sentence.
pub type Failure = String;

impl Upstream {
    /// `issuer_or_discovery`: the provider's issuer URL, or its
    /// `/.well-known/openid-configuration` URL.
    pub fn new(
        var: &str,
        issuer_or_discovery: &str,
        client_id: String,
        client_secret: String,
        agent: ureq::Agent,
    ) -> Result<Upstream, String> {
        jwks::check_issuer_url(var, issuer_or_discovery)?;
        let discovery_url = if issuer_or_discovery.ends_with("/.well-known/openid-configuration") {
            issuer_or_discovery.to_string()
        } else {
            format!(
                "{}/.well-known/openid-configuration",
                issuer_or_discovery.trim_end_matches('/')
            )
        };
        Ok(Upstream {
            discovery_url,
            client_id,
            client_secret,
            agent,
            discovered: Mutex::new(None),
        })
    }

    fn discovered(&self) -> Result<Arc<Discovered>, Failure> {
        let mut held = self.discovered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = held
            .as_ref()
            .filter(|d| d.read_at.elapsed() < DISCOVERY_MAX_AGE)
        {
            return Ok(d.clone());
        }
        let doc = fetch::json(
            self.agent.get(&self.discovery_url).call(),
            MAX_UPSTREAM_RESPONSE_BYTES,
        )
        .map_err(|e| {
            format!(
                "the provider's discovery document {}: {e}",
                self.discovery_url
            )
        })?;
        let field = |name: &str| -> Result<String, Failure> {
            let v = doc
                .get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the provider's discovery document lacks {name}"))?;
            jwks::check_issuer_url(name, v)?;
            Ok(v.to_string())
        };
        let issuer = field("issuer")?;
        let expected = self
            .discovery_url
            .trim_end_matches("/.well-known/openid-configuration");
        if issuer.trim_end_matches('/') != expected.trim_end_matches('/') {
            return Err(format!(
                "the provider's discovery document names the issuer {issuer}, not {expected}"
            ));
        }
        let methods: Vec<&str> = doc
            .get("token_endpoint_auth_methods_supported")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let basic_auth = methods.is_empty()
            || methods.contains(&"client_secret_basic")
            || !methods.contains(&"client_secret_post");
        let jwks = Jwks::load(Source::url("jwks_uri", &field("jwks_uri")?)?)?;
        let d = Arc::new(Discovered {
            issuer,
            authorization_endpoint: field("authorization_endpoint")?,
            token_endpoint: field("token_endpoint")?,
            userinfo_endpoint: doc
                .get("userinfo_endpoint")
                .and_then(Value::as_str)
                .filter(|u| jwks::check_issuer_url("userinfo_endpoint", u).is_ok())
                .map(str::to_string),
            basic_auth,
            jwks,
            read_at: Instant::now(),
        });
        *held = Some(d.clone());
        Ok(d)
    }

    /// The provider's issuer, once its discovery document has been read.
    pub fn issuer(&self) -> Option<String> {
        let held = self.discovered.lock().unwrap_or_else(|e| e.into_inner());
        held.as_ref().map(|d| d.issuer.clone())
    }

    /// Where to send the person's browser to sign in.
    pub fn authorization_url(
        &self,
        callback: &str,
        state: &str,
        nonce: &str,
        challenge: &str,
    ) -> Result<String, Failure> {
        let d = self.discovered()?;
        Ok(form::with_query(
            &d.authorization_endpoint,
            &[
                ("response_type", "code"),
                ("client_id", &self.client_id),
                ("redirect_uri", callback),
                ("scope", UPSTREAM_SCOPES),
                ("state", state),
                ("nonce", nonce),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
                // A person approves each new client here as well: the
                // facade's one client id must never sign someone in to a
                // client they did not see.
                ("prompt", "consent"),
            ],
        ))
    }

    /// Exchanges the provider's `code`, verifies its ID token (signature,
    /// issuer, audience, expiry, `nonce`), and returns the person's claims
    /// (the ID token's, completed by userinfo).
    pub fn sign_in(
        &self,
        callback: &str,
        code: &str,
        verifier: &str,
        nonce: &str,
    ) -> Result<Map<String, Value>, Failure> {
        let d = self.discovered()?;
        let mut pairs = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", callback),
            ("code_verifier", verifier),
        ];
        let request = self
            .agent
            .post(&d.token_endpoint)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json");
        let request = if d.basic_auth {
            // RFC 6749 §2.3.1: each part form-encoded before Basic.
            let user = format!(
                "{}:{}",
                form::encode(&self.client_id),
                form::encode(&self.client_secret)
            );
            request.header(
                "Authorization",
                &format!("Basic {}", crate::base64::encode(user.as_bytes())),
            )
        } else {
            pairs.push(("client_id", &self.client_id));
            pairs.push(("client_secret", &self.client_secret));
            request
        };
        let tokens = fetch::json(
            request.send(form::build(&pairs)),
            MAX_UPSTREAM_RESPONSE_BYTES,
        )
        .map_err(|e| format!("the provider's token endpoint: {e}"))?;
        let id_token = tokens
            .get("id_token")
            .and_then(Value::as_str)
            .ok_or("the provider returned no ID token")?;
        let mut claims = self.verify_id_token(&d, id_token, nonce)?;
        if let (Some(userinfo), Some(access)) = (
            &d.userinfo_endpoint,
            tokens.get("access_token").and_then(Value::as_str),
        ) {
            let info = fetch::json(
                self.agent
                    .get(userinfo)
                    .header("Authorization", &format!("Bearer {access}"))
                    .header("Accept", "application/json")
                    .call(),
                MAX_UPSTREAM_RESPONSE_BYTES,
            )
            .map_err(|e| format!("the provider's userinfo endpoint: {e}"))?;
            // OpenID Connect Core §5.3.2: userinfo about another subject
            // must not be used.
            if info.get("sub") != claims.get("sub") {
                return Err("the provider's userinfo names another subject".into());
            }
            if let Value::Object(extra) = info {
                for (k, v) in extra {
                    claims.entry(k).or_insert(v);
                }
            }
        }
        Ok(claims)
    }

    fn verify_id_token(
        &self,
        d: &Discovered,
        token: &str,
        nonce: &str,
    ) -> Result<Map<String, Value>, Failure> {
        let meta = Token::decode_metadata(token).map_err(|_| "the ID token is malformed")?;
        let alg = meta.algorithm();
        if !JWKS_ALGORITHMS.contains(&alg) {
            return Err(format!("the ID token is signed with {alg}, not accepted"));
        }
        let options = VerificationOptions {
            allowed_issuers: Some([d.issuer.clone()].into_iter().collect()),
            allowed_audiences: Some([self.client_id.clone()].into_iter().collect()),
            required_nonce: Some(nonce.to_string()),
            time_tolerance: Some(jwt_simple::prelude::Duration::from_secs(60)),
            ..Default::default()
        };
        let try_set = |keys: &jwks::KeySet| {
            let mut last = None;
            for key in keys.candidates(alg, meta.key_id()) {
                match key.verify_as::<Map<String, Value>>(token, &options) {
                    Ok(c) => return Ok(c),
                    Err(e) => last = Some(e.to_string()),
                }
            }
            Err(last)
        };
        let keys = d.jwks.keys();
        let verified = match try_set(&keys) {
            Ok(c) => c,
            Err(None) => match d.jwks.reloaded_since(&keys) {
                Some(newer) => try_set(&newer).map_err(|e| e.unwrap_or_default())?,
                None => return Err("no key of the provider verifies the ID token".into()),
            },
            Err(Some(e)) => return Err(format!("the ID token is refused: {e}")),
        };
        let mut claims = verified.custom;
        let sub = verified.subject.ok_or("the ID token has no sub")?;
        claims.insert("sub".into(), Value::String(sub));
        claims.insert("iss".into(), Value::String(d.issuer.clone()));
        Ok(claims)
    }
}
