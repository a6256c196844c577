//! The authorization endpoint, the consent page's answer, and the return
//! from the upstream provider: the browser's path from an MCP client to a
//! code for it.
//!
//! 1. `GET /authorize`: the client and its redirect URI are checked first
//!    (an unknown client or a redirect URI it did not declare, exactly,
//!    gets a page, never a redirect); then PKCE S256, the `resource`
//!    (RFC 8707: this server's), `response_type`. The request is kept
//!    under a one-time consent id, and the consent page is shown with a
//!    cookie that binds the answer to this browser.
//! 2. `POST /oauth/consent`: the answer, with that cookie (a form posted
//!    from another site carries none). Deny goes back to the client;
//!    allow goes to the upstream provider with a fresh `state`, `nonce`
//!    and PKCE verifier of the facade's own.
//! 3. `GET /oauth/callback`: the provider's answer, matched by `state`
//!    (once), exchanged and verified ([`super::upstream`]), mapped
//!    ([`super::claims_map`]), and turned into a one-time code for the
//!    client, bound to its redirect URI, PKCE challenge and resource.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::super::http::{header, make_header, Response};
use super::super::request::Request;
use super::clients::{self, Client};
use super::pages;
use super::records::Kind;
use super::{
    expires_in, form, random_token, Facade, AUTHORIZATION_CODE_TTL_SECS, CALLBACK_PATH,
    CONSENT_PATH, MAX_CLIENT_STATE_BYTES, SIGN_IN_TTL_SECS,
};

/// The cookie that binds a consent answer to the browser shown the page.
const CONSENT_COOKIE: &str = "alayasiki_consent";

/// base64url without padding of SHA-256(`verifier`): the S256 challenge.
pub fn s256(verifier: &str) -> String {
    crate::base64::encode(&Sha256::digest(verifier.as_bytes()))
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// Whether `s` is a PKCE verifier or S256 challenge's shape (RFC 7636 §4.1:
/// 43 to 128 unreserved characters).
pub fn is_pkce_string(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

fn redirect(to: &str) -> Response {
    Response::from_data(Vec::new())
        .with_status_code(303)
        .with_header(make_header("Location", to))
        .with_header(make_header("Cache-Control", "no-store"))
        .with_header(make_header("Referrer-Policy", "no-referrer"))
}

/// Sends the browser back to the client with an error (RFC 6749 §4.1.2.1).
fn to_client_error(
    f: &Facade,
    redirect_uri: &str,
    state: Option<&str>,
    error: &str,
    why: &str,
) -> Response {
    let mut pairs = vec![("error", error), ("error_description", why)];
    if let Some(s) = state {
        pairs.push(("state", s));
    }
    pairs.push(("iss", &f.issuer));
    redirect(&form::with_query(redirect_uri, &pairs))
}

/// The client named by `client_id`: registered here, or described by its
/// metadata document.
fn find_client(f: &Facade, client_id: &str) -> Result<Client, String> {
    if clients::is_metadata_url(client_id) {
        return f.documents.resolve(client_id);
    }
    f.records
        .get(Kind::Client, client_id)
        .and_then(|v| Client::from_record(&v))
        .ok_or_else(|| "this application is not registered here (or its registration expired); it should register again".into())
}

/// `GET /authorize`.
pub(super) fn authorize(f: &Facade, request: &Request, query: &str) -> Response {
    let Some(pairs) = form::parse(query) else {
        return pages::refusal(400, "The request is not properly encoded.");
    };
    let get = |name: &str| form::single(&pairs, name);
    let (client_id, redirect_uri) = match (get("client_id"), get("redirect_uri")) {
        (Ok(Some(c)), Ok(Some(r))) => (c, r),
        (Err(e), _) | (_, Err(e)) => return pages::refusal(400, &e),
        _ => return pages::refusal(
            400,
            "The application did not say who it is (client_id) and where to return (redirect_uri).",
        ),
    };
    let client = match find_client(f, client_id) {
        Ok(c) => c,
        Err(why) => return pages::refusal(400, &why),
    };
    if !client.redirect_uris.iter().any(|u| u == redirect_uri) {
        return pages::refusal(
            400,
            "The address this request would return to is not one the application declared.",
        );
    }
    // From here on the redirect URI is trusted: errors go back to it.
    let state = match get("state") {
        Ok(s) => s,
        Err(e) => return to_client_error(f, redirect_uri, None, "invalid_request", &e),
    };
    if state.is_some_and(|s| s.len() > MAX_CLIENT_STATE_BYTES) {
        return to_client_error(
            f,
            redirect_uri,
            None,
            "invalid_request",
            "state is too long",
        );
    }
    let fail = |error: &str, why: &str| to_client_error(f, redirect_uri, state, error, why);
    let one = |name: &str| get(name).map_err(|e| fail("invalid_request", &e));
    let (response_type, challenge, method, resource, scope) = match (
        one("response_type"),
        one("code_challenge"),
        one("code_challenge_method"),
        one("resource"),
        one("scope"),
    ) {
        (Ok(a), Ok(b), Ok(c), Ok(d), Ok(e)) => (a, b, c, d, e),
        (Err(r), ..) | (_, Err(r), ..) | (_, _, Err(r), ..) | (.., Err(r), _) | (.., Err(r)) => {
            return r
        }
    };
    if response_type != Some("code") {
        return fail(
            "unsupported_response_type",
            "only response_type=code is supported",
        );
    }
    let Some(challenge) = challenge.filter(|c| is_pkce_string(c)) else {
        return fail(
            "invalid_request",
            "PKCE is required: code_challenge with code_challenge_method=S256",
        );
    };
    if method != Some("S256") {
        return fail(
            "invalid_request",
            "only code_challenge_method=S256 is supported",
        );
    }
    if resource.is_some_and(|r| r != f.resource) {
        return fail(
            "invalid_target",
            "this server issues tokens only for its own resource",
        );
    }
    let (consent_id, cookie) = match (random_token(), random_token()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return fail("server_error", "the server cannot authorize right now"),
    };
    let pending = json!({
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "scope": scope,
        "cookie": cookie,
    });
    if let Err(e) = f.records.put(
        Kind::Consent,
        &consent_id,
        None,
        expires_in(SIGN_IN_TTL_SECS),
        &pending,
    ) {
        log::error!("cannot keep an authorization request: {e}");
        return fail("server_error", "the server cannot authorize right now");
    }
    let _ = request;
    let page = pages::consent(
        &pages::Consent {
            consent_id: &consent_id,
            client_name: &client.name,
            client_id: &client.client_id,
            by_metadata_document: client.by_metadata_document,
            redirect_host: Client::redirect_host(redirect_uri),
            resource: &f.resource,
        },
        CONSENT_PATH,
    );
    let secure = if f.secure_cookies { "; Secure" } else { "" };
    page.with_header(make_header(
        "Set-Cookie",
        &format!(
            "{CONSENT_COOKIE}={cookie}; Path={CONSENT_PATH}; Max-Age={SIGN_IN_TTL_SECS}; HttpOnly; SameSite=Strict{secure}"
        ),
    ))
}

/// The value of cookie `name` in the request.
fn cookie<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    header(request, "Cookie")?
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

fn str_of<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

/// `POST /oauth/consent`.
pub(super) fn consent(f: &Facade, request: &Request, body: &str) -> Response {
    let Some(pairs) = form::parse(body) else {
        return pages::refusal(400, "The answer is not properly encoded.");
    };
    let (Ok(Some(consent_id)), Ok(decision)) = (
        form::single(&pairs, "consent"),
        form::single(&pairs, "decision"),
    ) else {
        return pages::refusal(400, "The answer does not name its request.");
    };
    let Some(pending) = f.records.take(Kind::Consent, consent_id) else {
        return pages::refusal(400, "This request has expired or was already answered.");
    };
    let bound = str_of(&pending, "cookie").unwrap_or("");
    let given = cookie(request, CONSENT_COOKIE).unwrap_or("");
    if bound.is_empty() || !super::seal::constant_time_eq(bound.as_bytes(), given.as_bytes()) {
        return pages::refusal(
            403,
            "This answer did not come from the page this browser was shown.",
        );
    }
    let redirect_uri = str_of(&pending, "redirect_uri").unwrap_or("").to_string();
    let state = str_of(&pending, "state").map(str::to_string);
    let (redirect_uri, state) = (redirect_uri.as_str(), state.as_deref());
    if decision != Some("allow") {
        return to_client_error(
            f,
            redirect_uri,
            state,
            "access_denied",
            "the person denied access",
        );
    }
    let (upstream_state, nonce, verifier) = match (random_token(), random_token(), random_token()) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        _ => {
            return to_client_error(
                f,
                redirect_uri,
                state,
                "server_error",
                "the server cannot sign in right now",
            )
        }
    };
    let callback = f.url(CALLBACK_PATH);
    let url =
        match f
            .upstream
            .authorization_url(&callback, &upstream_state, &nonce, &s256(&verifier))
        {
            Ok(u) => u,
            Err(e) => {
                log::warn!("the identity provider cannot be used: {e}");
                return pages::refusal(
                    502,
                    "The identity provider cannot be reached; try again later.",
                );
            }
        };
    let mut signing_in = pending.clone();
    signing_in["nonce"] = json!(nonce);
    signing_in["verifier"] = json!(verifier);
    if let Err(e) = f.records.put(
        Kind::Pending,
        &upstream_state,
        None,
        expires_in(SIGN_IN_TTL_SECS),
        &signing_in,
    ) {
        log::error!("cannot keep a sign-in: {e}");
        return to_client_error(
            f,
            redirect_uri,
            state,
            "server_error",
            "the server cannot sign in right now",
        );
    }
    redirect(&url)
}

/// `GET /oauth/callback`.
pub(super) fn callback(f: &Facade, query: &str) -> Response {
    let Some(pairs) = form::parse(query) else {
        return pages::refusal(
            400,
            "The identity provider's answer is not properly encoded.",
        );
    };
    let Ok(Some(upstream_state)) = form::single(&pairs, "state") else {
        return pages::refusal(400, "The identity provider's answer names no sign-in.");
    };
    let Some(pending) = f.records.take(Kind::Pending, upstream_state) else {
        return pages::refusal(400, "This sign-in has expired or was already completed.");
    };
    let redirect_uri = str_of(&pending, "redirect_uri").unwrap_or("");
    let state = str_of(&pending, "state");
    let deny = |why: &str| to_client_error(f, redirect_uri, state, "access_denied", why);
    // RFC 9207: an answer naming another issuer is a mix-up attack.
    if let Ok(Some(iss)) = form::single(&pairs, "iss") {
        if f.upstream.issuer().is_some_and(|want| want != iss) {
            log::warn!("an answer to a sign-in names another issuer: refused");
            return deny("the answer came from another identity provider");
        }
    }
    if form::single(&pairs, "error").ok().flatten().is_some() {
        return deny("sign-in at the identity provider was cancelled or refused");
    }
    let Ok(Some(code)) = form::single(&pairs, "code") else {
        return deny("the identity provider returned no code");
    };
    let claims = match f.upstream.sign_in(
        &f.url(CALLBACK_PATH),
        code,
        str_of(&pending, "verifier").unwrap_or(""),
        str_of(&pending, "nonce").unwrap_or(""),
    ) {
        Ok(c) => Value::Object(c),
        Err(e) => {
            log::warn!("sign-in through the identity provider failed: {e}");
            return to_client_error(
                f,
                redirect_uri,
                state,
                "server_error",
                "sign-in at the identity provider failed",
            );
        }
    };
    let Some(mapped) = f.claims.map(&claims) else {
        log::info!("a person signed in whom the claims map gives no tenant");
        return deny("this account is not given access to this memory");
    };
    let subject = claims
        .get(&f.subject_claim)
        .and_then(Value::as_str)
        .filter(|s| crate::config::validate_identity(s).is_ok());
    let Some(subject) = subject else {
        log::warn!(
            "the identity provider's {} claim is missing or unusable",
            f.subject_claim
        );
        return deny("this account has no usable identifier");
    };
    let Ok(code) = random_token() else {
        return to_client_error(
            f,
            redirect_uri,
            state,
            "server_error",
            "the server cannot sign in right now",
        );
    };
    let issued = json!({
        "client_id": pending["client_id"],
        "redirect_uri": redirect_uri,
        "code_challenge": pending["code_challenge"],
        "scope": pending["scope"],
        "subject": subject,
        "tenant": mapped.tenant,
        "roles": mapped.roles,
        "memory_scopes": mapped.memory_scopes,
    });
    if let Err(e) = f.records.put(
        Kind::Code,
        &code,
        None,
        expires_in(AUTHORIZATION_CODE_TTL_SECS),
        &issued,
    ) {
        log::error!("cannot keep an authorization code: {e}");
        return to_client_error(
            f,
            redirect_uri,
            state,
            "server_error",
            "the server cannot sign in right now",
        );
    }
    log::info!(
        "{subject} of tenant {} signed in for a client",
        mapped.tenant
    );
    let mut back = vec![("code", code.as_str())];
    if let Some(s) = state {
        back.push(("state", s));
    }
    back.push(("iss", &f.issuer));
    redirect(&form::with_query(redirect_uri, &back))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(is_pkce_string(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!is_pkce_string("short"));
        assert!(!is_pkce_string(&"a".repeat(129)));
    }
}
