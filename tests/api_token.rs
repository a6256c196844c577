//! `alayasiki-api token`: a secret made by `token secret --file` starts the
//! real server, and a token minted by `token mint` with that file is
//! accepted by it with exactly the tenant and roles asked for; what is
//! refused (an existing secret file, no secret, unknown roles) says why.

mod http_common;

use http_common::{Api, TempDir};
use std::process::Command;

fn api_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_alayasiki-api"));
    for var in [
        "ALAYASIKI_JWT_SECRET",
        "ALAYASIKI_JWT_SECRET_FILE",
        "ALAYASIKI_JWT_ISSUER",
        "ALAYASIKI_AUTHORIZATION_SERVERS",
        "ALAYASIKI_RESOURCE",
    ] {
        c.env_remove(var);
    }
    c
}

#[test]
fn a_made_secret_starts_the_server_and_a_minted_token_is_accepted() {
    let dir = TempDir::new("api-token");
    let secret = dir.path().join("secret");
    let made = api_command()
        .args(["token", "secret", "--file"])
        .arg(&secret)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the secret file is owner-only");
    }
    let again = api_command()
        .args(["token", "secret", "--file"])
        .arg(&secret)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwritten"));

    let path = secret.to_str().unwrap();
    let data = dir.path().join("data");
    let api = Api::start(
        &data,
        &[
            ("ALAYASIKI_JWT_SECRET", ""),
            ("ALAYASIKI_JWT_ISSUER", ""),
            ("ALAYASIKI_JWT_AUDIENCE", ""),
            ("ALAYASIKI_JWT_SECRET_FILE", path),
            ("ALAYASIKI_RESOURCE", "http://127.0.0.1:9/mcp"),
        ],
    );
    let mint = |roles: &str| {
        let out = api_command()
            .env("ALAYASIKI_JWT_SECRET_FILE", path)
            .env("ALAYASIKI_RESOURCE", "http://127.0.0.1:9/mcp")
            .args(["token", "mint", "--tenant", "acme", "--subject", "dana"])
            .args(["--roles", roles, "--ttl", "10m"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let reader = mint("reader");
    let status = api.call("GET", "/v1/status", &reader, None);
    assert_eq!(
        status.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&status.body)
    );
    let refused = api.call(
        "POST",
        "/v1/ingest",
        &reader,
        Some(&serde_json::json!({"content": "a note"})),
    );
    assert_eq!(refused.status, 403, "a reader may not ingest");
    let writer = mint("reader,ingestor");
    let stored = api.call(
        "POST",
        "/v1/ingest",
        &writer,
        Some(&serde_json::json!({"content": "a note", "wait": true})),
    );
    assert_eq!(
        stored.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&stored.body)
    );
    // A token minted for another resource is refused by this server.
    let other = api_command()
        .env("ALAYASIKI_JWT_SECRET_FILE", path)
        .env("ALAYASIKI_RESOURCE", "http://127.0.0.1:10/mcp")
        .args([
            "token",
            "mint",
            "--tenant",
            "acme",
            "--subject",
            "dana",
            "--roles",
            "reader",
        ])
        .output()
        .unwrap();
    let other = String::from_utf8(other.stdout).unwrap();
    assert_eq!(
        api.call("GET", "/v1/status", other.trim(), None).status,
        401
    );
}

#[test]
fn minting_without_a_secret_or_with_unknown_roles_says_why() {
    let out = api_command()
        .args([
            "token",
            "mint",
            "--tenant",
            "t",
            "--subject",
            "s",
            "--roles",
            "reader",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ALAYASIKI_JWT_SECRET"));
    let out = api_command()
        .env(
            "ALAYASIKI_JWT_SECRET",
            "a-secret-of-at-least-thirty-two-bytes!!",
        )
        .args([
            "token",
            "mint",
            "--tenant",
            "t",
            "--subject",
            "s",
            "--roles",
            "owner",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"owner\""));
    let out = api_command()
        .args([
            "token",
            "mint",
            "--tenant",
            "t",
            "--subject",
            "s",
            "--ttl",
            "400d",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
}
