//! `alayasiki-api token`: the two steps between "I started the server" and
//! "my client has a token", without pasting code from anywhere.
//!
//! - `token secret [--file PATH]` creates an HS256 secret (256 random bits,
//!   hex): printed, or written to a new owner-only file for
//!   `ALAYASIKI_JWT_SECRET_FILE`.
//! - `token mint --tenant T --subject S [--roles ...] [--scope ...]
//!   [--memory-scopes ...] [--ttl ...] [--issuer ...]` signs a token with the
//!   secret the server is configured with (the same variables), `aud` set
//!   to `ALAYASIKI_RESOURCE` when configured, so what it mints is exactly
//!   what the server accepts.

use jwt_simple::prelude::*;
use std::io::Write;
use std::path::PathBuf;

use crate::config;
use crate::service::Role;

/// A minted token's lifetime unless `--ttl` says otherwise.
pub const DEFAULT_MINTED_TOKEN_TTL_SECS: u64 = 3600;
/// Longest `--ttl` accepted: a year. Longer-lived credentials belong in an
/// identity provider that can revoke them.
pub const MAX_MINTED_TOKEN_TTL_SECS: u64 = 365 * 24 * 3600;
/// Random bytes in a new secret.
pub const NEW_SECRET_BYTES: usize = 32;

/// What `alayasiki-api token` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCommand {
    Secret {
        file: Option<PathBuf>,
    },
    Mint {
        tenant: String,
        subject: String,
        roles: Vec<String>,
        scope: Option<String>,
        memory_scopes: Vec<String>,
        ttl_secs: u64,
        issuer: Option<String>,
    },
}

/// `--ttl`: seconds, or a number with `s`, `m`, `h` or `d`.
pub fn parse_ttl(text: &str) -> Result<u64, String> {
    let (digits, unit) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], c),
        _ => (text, 's'),
    };
    let factor = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86400,
        _ => return Err(format!("--ttl {text:?}: the unit must be s, m, h or d")),
    };
    let secs = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| (1..=MAX_MINTED_TOKEN_TTL_SECS).contains(n))
        .ok_or_else(|| {
            format!(
                "--ttl {text:?} must be from 1 s to {} d (such as 3600, 30m, 12h or 7d)",
                MAX_MINTED_TOKEN_TTL_SECS / 86400
            )
        })?;
    Ok(secs)
}

/// The claims of a minted token beyond the registered ones.
#[derive(Serialize, Deserialize)]
struct Minted {
    tenant: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    roles: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    memory_scopes: Vec<String>,
}

/// Runs the command; the error is one line for stderr.
pub fn run(command: TokenCommand) -> Result<(), String> {
    match command {
        TokenCommand::Secret { file } => {
            let mut bytes = [0u8; NEW_SECRET_BYTES];
            crate::ids::secret_bytes(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            match file {
                None => crate::cli::stdout::write(format_args!("{hex}\n")),
                Some(path) => {
                    write_new_owner_only(&path, &hex)?;
                    eprintln!(
                        "alayasiki-api: wrote a new secret to {}; start the server with \
                         {}={}",
                        path.display(),
                        config::JWT_SECRET_FILE_ENV,
                        path.display()
                    );
                }
            }
            Ok(())
        }
        TokenCommand::Mint {
            tenant,
            subject,
            roles,
            scope,
            memory_scopes,
            ttl_secs,
            issuer,
        } => {
            crate::store::Tenant::new(&tenant).map_err(|e| format!("--tenant {e}"))?;
            config::validate_identity(&subject).map_err(|e| format!("--subject {e}"))?;
            for r in &roles {
                if Role::parse(r).is_none() {
                    return Err(format!(
                        "--roles: {r:?} is not one of reader, ingestor, admin"
                    ));
                }
            }
            if roles.is_empty() && scope.is_none() {
                return Err(
                    "give --roles (reader, ingestor, admin) or --scope: a token \
                            granting neither may do nothing"
                        .into(),
                );
            }
            crate::service::MemoryAccess::from_claim(&memory_scopes)
                .map_err(|e| format!("--memory-scopes: {e}"))?;
            let secret = secret_from_env()?;
            let key = HS256Key::from_bytes(&secret);
            let mut claims = Claims::with_custom_claims(
                Minted {
                    tenant,
                    roles,
                    scope,
                    memory_scopes,
                },
                Duration::from_secs(ttl_secs),
            )
            .with_subject(subject);
            if let Some(resource) = config::env(config::RESOURCE_ENV) {
                claims = claims.with_audience(resource);
            }
            let issuer = issuer.or_else(|| {
                [config::JWT_ISSUER_ENV, config::AUTHORIZATION_SERVERS_ENV]
                    .iter()
                    .find_map(|v| config::env(v))
                    .and_then(|list| list.split(',').next().map(|s| s.trim().to_string()))
                    .filter(|s| !s.is_empty())
            });
            if let Some(iss) = issuer {
                claims = claims.with_issuer(iss);
            }
            let token = key
                .authenticate(claims)
                .map_err(|e| format!("cannot sign the token: {e}"))?;
            crate::cli::stdout::write(format_args!("{token}\n"));
            eprintln!("alayasiki-api: token valid for {ttl_secs} s");
            Ok(())
        }
    }
}

/// The server's HS256 secret, from the same variables it reads.
fn secret_from_env() -> Result<Vec<u8>, String> {
    let secret = config::secret_from_env(config::JWT_SECRET_ENV, config::JWT_SECRET_FILE_ENV)?
        .ok_or_else(|| {
            format!(
                "minting needs the server's secret: set {} (or {} to a file made by \
                 `alayasiki-api token secret --file PATH`)",
                config::JWT_SECRET_ENV,
                config::JWT_SECRET_FILE_ENV
            )
        })?;
    if secret.len() < crate::transport::auth::MIN_HS256_SECRET_BYTES {
        return Err(format!(
            "the secret is {} bytes; the server needs at least {}",
            secret.len(),
            crate::transport::auth::MIN_HS256_SECRET_BYTES
        ));
    }
    Ok(secret)
}

/// Writes `text` to a new file only its owner may read.
fn write_new_owner_only(path: &std::path::Path, text: &str) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            format!(
                "{} exists already; a secret is never overwritten (remove it first if you \
                 mean to replace it: every token signed with it stops working)",
                path.display()
            )
        } else {
            format!("cannot create {}: {e}", path.display())
        }
    })?;
    file.write_all(format!("{text}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_take_units_and_stay_in_bounds() {
        assert_eq!(parse_ttl("90"), Ok(90));
        assert_eq!(parse_ttl("30m"), Ok(1800));
        assert_eq!(parse_ttl("12h"), Ok(43200));
        assert_eq!(parse_ttl("365d"), Ok(MAX_MINTED_TOKEN_TTL_SECS));
        for bad in ["0", "366d", "", "h", "5w", "-1", "1.5h"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}
