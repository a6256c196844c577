//! The token endpoint (codes and refresh tokens in, access tokens out),
//! registration (RFC 7591) and revocation (RFC 7009).
//!
//! Codes and refresh tokens are one-time: each is taken from the records
//! when presented, and a spent one is remembered until it would have
//! expired, so presenting it again revokes the whole grant it belongs to
//! (a stolen token and its rightful holder cannot both go on). Access
//! tokens are JWTs that live [`ACCESS_TOKEN_TTL_SECS`] and are not
//! recorded; revoking a grant stops its refreshes, and its access tokens
//! end with their short life.

use jwt_simple::prelude::*;
use serde_json::{json, Value};
use std::time::Instant;

use super::super::http::{header, json_response, make_header, retry_after, Response};
use super::super::request::Request;
use super::authorize::{is_pkce_string, s256};
use super::clients;
use super::records::Kind;
use super::{
    expires_in, form, random_token, Facade, ACCESS_TOKEN_TTL_SECS, AUTHORIZATION_CODE_TTL_SECS,
    CLIENT_TTL_SECS, MAX_REGISTERED_CLIENTS, MAX_REGISTRATIONS_PER_MINUTE, MAX_REGISTRATION_BYTES,
    REFRESH_TOKEN_TTL_SECS,
};
use crate::service::{Permission, Role};

/// An OAuth error answer (RFC 6749 §5.2).
fn oauth_error(status: u16, error: &str, why: &str) -> Response {
    json_response(status, &json!({"error": error, "error_description": why}))
        .with_header(make_header("Cache-Control", "no-store"))
}

/// The claims this server reads, as the facade writes them.
#[derive(Serialize, Deserialize)]
struct Issued {
    tenant: String,
    scope: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    memory_scopes: Vec<String>,
    client_id: String,
}

/// The permission scopes `roles` grant, narrowed to those `requested`
/// (when the client asked for some).
fn granted_scopes(roles: &[Value], requested: Option<&str>) -> String {
    let mut scopes: Vec<&str> = Vec::new();
    for role in roles
        .iter()
        .filter_map(Value::as_str)
        .filter_map(Role::parse)
    {
        let grants: &[Permission] = match role {
            Role::Reader => &[Permission::Query],
            Role::Ingestor => &[Permission::Ingest],
            Role::Admin => &[Permission::Query, Permission::Ingest, Permission::Admin],
        };
        for p in grants {
            if !scopes.contains(&p.scope()) {
                scopes.push(p.scope());
            }
        }
    }
    if let Some(asked) = requested.filter(|r| !r.trim().is_empty()) {
        let asked: Vec<&str> = asked.split_whitespace().collect();
        scopes.retain(|s| asked.contains(s));
    }
    scopes.join(" ")
}

/// `POST /token`.
pub(super) fn token(f: &Facade, _request: &Request, body: &str) -> Response {
    let Some(pairs) = form::parse(body) else {
        return oauth_error(
            400,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        );
    };
    let get = |name: &str| form::single(&pairs, name);
    let grant_type = match get("grant_type") {
        Ok(Some(g)) => g,
        Ok(None) => return oauth_error(400, "invalid_request", "grant_type is required"),
        Err(e) => return oauth_error(400, "invalid_request", &e),
    };
    let params = |names: &[&str]| -> Result<Vec<Option<String>>, Response> {
        names
            .iter()
            .map(|n| {
                get(n)
                    .map(|v| v.map(str::to_string))
                    .map_err(|e| oauth_error(400, "invalid_request", &e))
            })
            .collect()
    };
    match grant_type {
        "authorization_code" => {
            let p = match params(&[
                "code",
                "redirect_uri",
                "client_id",
                "code_verifier",
                "resource",
            ]) {
                Ok(p) => p,
                Err(r) => return r,
            };
            let [code, redirect_uri, client_id, verifier, resource] = &p[..] else {
                unreachable!("five names were asked");
            };
            let Some(code) = code else {
                return oauth_error(400, "invalid_request", "code is required");
            };
            let Some(issued) = f.records.take(Kind::Code, code) else {
                if let Some(spent) = f.records.get(Kind::SpentCode, code) {
                    // RFC 6749 §4.1.2: a code used twice revokes what it gave.
                    if let Some(grant) = spent.get("grant").and_then(Value::as_str) {
                        let n = f.records.revoke_grant(grant);
                        log::warn!("an authorization code was presented again; its grant is revoked ({n} record(s))");
                    }
                }
                return oauth_error(
                    400,
                    "invalid_grant",
                    "the code is unknown, expired or already used",
                );
            };
            let Ok(grant) = random_token() else {
                return oauth_error(
                    500,
                    "server_error",
                    "the server cannot issue tokens right now",
                );
            };
            let _ = f.records.put(
                Kind::SpentCode,
                code,
                Some(&grant),
                expires_in(AUTHORIZATION_CODE_TTL_SECS + REFRESH_TOKEN_TTL_SECS.min(3600)),
                &json!({"grant": grant}),
            );
            let s = |name: &str| issued.get(name).and_then(Value::as_str).unwrap_or("");
            if client_id.as_deref() != Some(s("client_id")) {
                return oauth_error(
                    400,
                    "invalid_grant",
                    "the code was issued to another client",
                );
            }
            if redirect_uri.as_deref() != Some(s("redirect_uri")) {
                return oauth_error(
                    400,
                    "invalid_grant",
                    "redirect_uri differs from the authorization request's",
                );
            }
            let Some(verifier) = verifier.as_deref().filter(|v| is_pkce_string(v)) else {
                return oauth_error(400, "invalid_grant", "code_verifier is required (PKCE)");
            };
            if !super::seal::constant_time_eq(
                s256(verifier).as_bytes(),
                s("code_challenge").as_bytes(),
            ) {
                return oauth_error(
                    400,
                    "invalid_grant",
                    "code_verifier does not match the code_challenge",
                );
            }
            if resource.as_deref().is_some_and(|r| r != f.resource) {
                return oauth_error(
                    400,
                    "invalid_target",
                    "this server issues tokens only for its own resource",
                );
            }
            let granted = granted_scopes(
                issued
                    .get("roles")
                    .and_then(Value::as_array)
                    .map_or(&[][..], |v| v),
                issued.get("scope").and_then(Value::as_str),
            );
            issue(f, &issued, &granted, &granted, &grant)
        }
        "refresh_token" => {
            let p = match params(&["refresh_token", "client_id", "resource", "scope"]) {
                Ok(p) => p,
                Err(r) => return r,
            };
            let [refresh, client_id, resource, scope] = &p[..] else {
                unreachable!("four names were asked");
            };
            let Some(refresh) = refresh else {
                return oauth_error(400, "invalid_request", "refresh_token is required");
            };
            let Some(held) = f.records.take(Kind::Refresh, refresh) else {
                if let Some(spent) = f.records.get(Kind::SpentRefresh, refresh) {
                    if let Some(grant) = spent.get("grant").and_then(Value::as_str) {
                        let n = f.records.revoke_grant(grant);
                        log::warn!("a rotated refresh token was presented again; its grant is revoked ({n} record(s))");
                    }
                }
                return oauth_error(
                    400,
                    "invalid_grant",
                    "the refresh token is unknown, expired, revoked or already used",
                );
            };
            let grant = held["grant"].as_str().unwrap_or("").to_string();
            let expires = held["expires_at"].as_i64().unwrap_or(0);
            let _ = f.records.put(
                Kind::SpentRefresh,
                refresh,
                Some(&grant),
                expires,
                &json!({"grant": grant}),
            );
            if client_id.as_deref() != held["client_id"].as_str() {
                return oauth_error(
                    400,
                    "invalid_grant",
                    "the refresh token was issued to another client",
                );
            }
            if resource.as_deref().is_some_and(|r| r != f.resource) {
                return oauth_error(
                    400,
                    "invalid_target",
                    "this server issues tokens only for its own resource",
                );
            }
            let granted = held["granted"].as_str().unwrap_or("").to_string();
            let scope = match scope {
                // RFC 6749 §6: a refresh may narrow the scope, never widen it.
                Some(asked) => {
                    let had: Vec<&str> = granted.split_whitespace().collect();
                    if asked.split_whitespace().any(|s| !had.contains(&s)) {
                        return oauth_error(
                            400,
                            "invalid_scope",
                            "a refresh cannot ask for more than was granted",
                        );
                    }
                    asked.clone()
                }
                None => granted.clone(),
            };
            issue(f, &held, &granted, &scope, &grant)
        }
        _ => oauth_error(
            400,
            "unsupported_grant_type",
            "only authorization_code and refresh_token are supported",
        ),
    }
}

/// A new access token (carrying `scope`) and refresh token (which may
/// later ask for at most `granted`) for the person `issued` names.
fn issue(f: &Facade, issued: &Value, granted: &str, scope: &str, grant: &str) -> Response {
    let s = |name: &str| {
        issued
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let roles = issued
        .get("roles")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let memory_scopes: Vec<String> = issued
        .get("memory_scopes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let (Ok(jti), Ok(refresh)) = (random_token(), random_token()) else {
        return oauth_error(
            500,
            "server_error",
            "the server cannot issue tokens right now",
        );
    };
    let claims = Claims::with_custom_claims(
        Issued {
            tenant: s("tenant"),
            scope: scope.to_string(),
            memory_scopes: memory_scopes.clone(),
            client_id: s("client_id"),
        },
        Duration::from_secs(ACCESS_TOKEN_TTL_SECS),
    )
    .with_issuer(&f.issuer)
    .with_audience(&f.resource)
    .with_subject(s("subject"))
    .with_jwt_id(jti);
    let access = match f.signing.authenticate(claims) {
        Ok(t) => t,
        Err(e) => {
            log::error!("cannot sign an access token: {e}");
            return oauth_error(
                500,
                "server_error",
                "the server cannot issue tokens right now",
            );
        }
    };
    let expires_at = expires_in(REFRESH_TOKEN_TTL_SECS);
    let held = json!({
        "grant": grant,
        "client_id": s("client_id"),
        "subject": s("subject"),
        "tenant": s("tenant"),
        "roles": roles,
        "memory_scopes": memory_scopes,
        "granted": granted,
        "scope": scope,
        "expires_at": expires_at,
    });
    if let Err(e) = f
        .records
        .put(Kind::Refresh, &refresh, Some(grant), expires_at, &held)
    {
        log::error!("cannot keep a refresh token: {e}");
        return oauth_error(
            500,
            "server_error",
            "the server cannot issue tokens right now",
        );
    }
    // A registered client in use stays registered.
    let client_id = s("client_id");
    if let Some(client) = f.records.get(Kind::Client, &client_id) {
        let _ = f.records.put(
            Kind::Client,
            &client_id,
            None,
            expires_in(CLIENT_TTL_SECS),
            &client,
        );
    }
    json_response(
        200,
        &json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TOKEN_TTL_SECS,
            "refresh_token": refresh,
            "scope": scope,
        }),
    )
    .with_header(make_header("Cache-Control", "no-store"))
    .with_header(make_header("Pragma", "no-cache"))
}

/// `POST /register` (RFC 7591).
pub(super) fn register(f: &Facade, request: &Request, body: &str) -> Response {
    if let Some(want) = &f.registration_token {
        let given = header(request, "Authorization")
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .unwrap_or("");
        if !super::seal::constant_time_eq(want.as_bytes(), given.trim().as_bytes()) {
            return oauth_error(
                401,
                "invalid_token",
                "registration needs this server's initial access token",
            )
            .with_header(make_header("WWW-Authenticate", "Bearer"));
        }
    }
    if body.len() > MAX_REGISTRATION_BYTES {
        return oauth_error(
            413,
            "invalid_client_metadata",
            "the registration request is too large",
        );
    }
    {
        let mut window = f.registrations.lock().unwrap_or_else(|e| e.into_inner());
        if window.0.elapsed().as_secs() >= 60 {
            *window = (Instant::now(), 0);
        }
        if window.1 >= MAX_REGISTRATIONS_PER_MINUTE {
            let wait = 60u64.saturating_sub(window.0.elapsed().as_secs()).max(1);
            return oauth_error(
                429,
                "temporarily_unavailable",
                "too many registrations; retry later",
            )
            .with_header(retry_after(wait));
        }
        window.1 += 1;
    }
    if f.records.count(Kind::Client) >= MAX_REGISTERED_CLIENTS {
        return oauth_error(
            503,
            "temporarily_unavailable",
            "registration is full; retry later",
        )
        .with_header(retry_after(3600));
    }
    let Ok(doc) = serde_json::from_str::<Value>(body) else {
        return oauth_error(
            400,
            "invalid_client_metadata",
            "the body must be a JSON object",
        );
    };
    let Ok(id) = random_token() else {
        return oauth_error(
            500,
            "server_error",
            "the server cannot register clients right now",
        );
    };
    let client = match clients::from_registration(&doc, format!("c_{id}")) {
        Ok(c) => c,
        Err(why) => {
            let code = if why.contains("redirect") {
                "invalid_redirect_uri"
            } else {
                "invalid_client_metadata"
            };
            return oauth_error(400, code, &why);
        }
    };
    if let Err(e) = f.records.put(
        Kind::Client,
        &client.client_id,
        None,
        expires_in(CLIENT_TTL_SECS),
        &client.to_record(),
    ) {
        log::error!("cannot keep a registration: {e}");
        return oauth_error(
            500,
            "server_error",
            "the server cannot register clients right now",
        );
    }
    json_response(
        201,
        &json!({
            "client_id": client.client_id,
            "client_id_issued_at": super::records::now_ms() / 1000,
            "client_name": client.name,
            "redirect_uris": client.redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }),
    )
    .with_header(make_header("Cache-Control", "no-store"))
}

/// `POST /revoke` (RFC 7009): a refresh token ends its whole grant. The
/// answer is 200 whatever the token was, so it tells nothing.
pub(super) fn revoke(f: &Facade, body: &str) -> Response {
    let token = form::parse(body).and_then(|pairs| {
        form::single(&pairs, "token")
            .ok()
            .flatten()
            .map(str::to_string)
    });
    if let Some(token) = token {
        if let Some(held) = f.records.take(Kind::Refresh, &token) {
            if let Some(grant) = held.get("grant").and_then(Value::as_str) {
                f.records.revoke_grant(grant);
            }
        }
    }
    Response::from_data(Vec::new()).with_header(make_header("Cache-Control", "no-store"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_give_scopes_and_a_request_narrows_them() {
        let roles = vec![json!("reader"), json!("ingestor"), json!("owner")];
        assert_eq!(granted_scopes(&roles, None), "query:execute ingest:write");
        assert_eq!(
            granted_scopes(&roles, Some("query:execute admin:*")),
            "query:execute"
        );
        assert_eq!(
            granted_scopes(&[json!("admin")], Some("")),
            "query:execute ingest:write admin:*"
        );
    }
}
