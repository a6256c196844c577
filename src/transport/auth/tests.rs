//! The authenticator's tests: tokens accepted and refused, claims and
//! headers, keys, and audience binding to a configured resource.

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
        AuthError("empty bearer token")
    );
    assert!(AuthError::NOT_BEARER.lacks_credentials());
    assert!(!AuthError("empty bearer token").lacks_credentials());
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
    assert!(!err.challenge(None, "query:execute").contains(&t));
}

#[test]
fn a_configured_resource_must_be_in_the_audience() {
    let a = Authenticator::new(
        VerifyingKey::from_secret(SECRET).unwrap(),
        vec!["issuer-a".into()],
        vec![],
        DEFAULT_LEEWAY_SECS,
    )
    .with_resource(Resource::parse("R", "https://mcp.example/mcp").unwrap());
    let other = mint(json!({"tenant": "t"}), |c| c);
    assert_eq!(
        a.authenticate(&[&header(&other)]).unwrap_err(),
        AuthError::WRONG_AUDIENCE
    );
    let both = mint(json!({"tenant": "t"}), |c| {
        c.with_audiences(HashSet::from_iter([
            "https://mcp.example/mcp".to_string(),
            "something-else".to_string(),
        ]))
    });
    assert!(a.authenticate(&[&header(&both)]).is_ok());
    // With ALAYASIKI_JWT_AUDIENCE too, either is accepted.
    let legacy = hs256().with_resource(Resource::parse("R", "https://mcp.example/mcp").unwrap());
    assert!(legacy.authenticate(&[&header(&other)]).is_ok());
    assert!(legacy.authenticate(&[&header(&both)]).is_ok());
}
