//! Command-line parsing for `alayasiki-api`, the HTTP server.
//!
//! Owns its flags and help text, like [`crate::cli`] does for the stdio
//! binary, and shares its usage-error conventions (one line on stderr,
//! exit status 2). `--help` and `--version` are answered before anything
//! is opened; a non-loopback `--bind` without `--allow-remote` is refused
//! here, before any socket exists.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

pub use crate::cli::USAGE_EXIT;

/// Where the server listens unless `--bind` says otherwise.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// What the user asked `alayasiki-api` to do.
#[derive(Debug, PartialEq, Eq)]
pub enum ApiCommand {
    Serve {
        bind: SocketAddr,
        data_dir: Option<PathBuf>,
        /// `--store`: where the memory lives beyond the data directory
        /// (`None`: `ALAYASIKI_STORE`, else the local SQLite store).
        store: Option<String>,
    },
    /// `alayasiki-api token ...` ([`crate::api_token`]).
    Token(crate::api_token::TokenCommand),
    Help,
    Version,
}

pub const HELP: &str = "\
alayasiki-api: the alayasiki memory over HTTP, for several clients sharing
one memory: MCP over Streamable HTTP at /mcp (protocol revisions 2024-11-05
through 2026-07-28), the deprecated HTTP+SSE transport at /mcp/sse, and a
JSON API under /v1.

USAGE:
    alayasiki-api [--bind ADDR] [--data-dir DIR] [--store STORE] [--allow-remote]
    alayasiki-api token secret [--file PATH]
    alayasiki-api token mint --tenant T --subject S [--roles R,..] [--scope S]
                             [--memory-scopes M,..] [--ttl TTL] [--issuer URL]

TOKENS:
    token secret     Create an HS256 secret (256 random bits, hex): printed, or
                     written to a new owner-only file for ALAYASIKI_JWT_SECRET_FILE.
    token mint       Print a token signed with the configured secret
                     (ALAYASIKI_JWT_SECRET or _FILE), aud = ALAYASIKI_RESOURCE
                     when set. --roles: reader, ingestor, admin (comma-separated);
                     --scope: OAuth scopes (query:execute ingest:write admin:*);
                     --memory-scopes: the memory scopes it sees (name or name:read);
                     --ttl: lifetime, e.g. 3600, 30m, 12h, 7d (default 1h, at most
                     365d); --issuer: iss (default the first of ALAYASIKI_JWT_ISSUER
                     or ALAYASIKI_AUTHORIZATION_SERVERS, if set).

OPTIONS:
    --bind ADDR      IP address and port to listen on (default 127.0.0.1:8080;
                     port 0 picks a free port, printed at start-up).
    --allow-remote   Allow a --bind address other machines can reach. The
                     server speaks plain HTTP: put a TLS-terminating reverse
                     proxy in front of it.
    --data-dir DIR   Where the memory lives (created owner-only if missing).
                     Default: $ALAYASIKI_DATA_DIR, else $HOME/.alayasiki-api
                     (%USERPROFILE%\\.alayasiki-api on Windows).
    --store STORE    sqlite (the default): the memory is the data directory's.
                     rqlite://[user:pass@]host:port[,host:port...] (rqlites://
                     for HTTPS, ?ca=PATH to trust only that CA): the memory is
                     an rqlite cluster's, shared by every node started with it,
                     and the data directory is this node's replica of it.
                     Default: $ALAYASIKI_STORE (keeps a password out of ps).
    -h, --help       Print this help and exit.
    -V, --version    Print the version and exit.

AUTHENTICATION (OAuth 2.1 resource server; exactly one key source is required):
    ALAYASIKI_JWT_SECRET           HS256 shared secret (at least 32 bytes)
    ALAYASIKI_JWT_SECRET_FILE      file holding the HS256 secret
    ALAYASIKI_JWT_PUBLIC_KEY_FILE  PEM public key, with
    ALAYASIKI_JWT_ALGORITHM        RS256, ES256 or EdDSA
    ALAYASIKI_JWKS_FILE            JWKS file (RS256, ES256, EdDSA keys by kid)
    ALAYASIKI_JWKS_URL             the authorization server's jwks_uri (https;
                                   reloaded for unknown kids, at most every 30 s)
    ALAYASIKI_RESOURCE             this server's resource URL, e.g.
                                   https://mcp.example.com/mcp: tokens' aud must
                                   name it (keys from a JWKS need this or
                                   ALAYASIKI_JWT_AUDIENCE)
    ALAYASIKI_AUTHORIZATION_SERVERS
                                   issuer URLs (comma-separated) advertised at
                                   /.well-known/oauth-protected-resource; iss
                                   must be one of them unless set below
    ALAYASIKI_JWT_ISSUER           accepted iss values (comma-separated)
    ALAYASIKI_JWT_AUDIENCE         accepted aud values (comma-separated)
    ALAYASIKI_JWT_LEEWAY_SECS      clock drift tolerated (default 30, max 300)
    ALAYASIKI_ANONYMOUS_SCOPE      a memory scope a request without a token may
                                   query, read-only (default: none, such
                                   requests are refused); needs
    ALAYASIKI_ANONYMOUS_TENANT     the tenant of that scope

OTHER ENVIRONMENT:
    ALAYASIKI_MCP_ALLOWED_ORIGINS  browser origins allowed (exact, comma-separated)
    ALAYASIKI_API_ALLOWED_HOSTS    extra Host names (e.g. the reverse proxy's)
    ALAYASIKI_API_RATE             requests per second per caller (default 50)
    ALAYASIKI_API_BURST            burst per caller (default 100)
    ALAYASIKI_CLUSTER_LOG_RETENTION_SECS
                                   with --store rqlite://: how long the cluster's
                                   log keeps an entry (default 3600, 1 to 2592000)
    ALAYASIKI_DATA_DIR, ALAYASIKI_DURABILITY, ALAYASIKI_LOG: as for alayasiki-mcp
    ALAYASIKI_EMBED_*, ALAYASIKI_LLM_*, ALAYASIKI_RETENTION_DAYS,
    ALAYASIKI_WM_TTL_SECS, ALAYASIKI_FUSION, ALAYASIKI_HALF_LIFE_DAYS,
    ALAYASIKI_CHUNK_TARGET_BYTES, ALAYASIKI_RANKING_DEPTH:
                                   the memory's settings, as for alayasiki-mcp

Routes, requests, responses and limits: API.md. SIGTERM or SIGINT shut the
server down gracefully (exit status 0).
";

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<ApiCommand, crate::cli::UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use crate::cli::UsageError;
    use lexopt::prelude::*;
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if args.first().is_some_and(|a| a == "token") {
        let mut parser = lexopt::Parser::from_args(args[1..].to_vec());
        return parse_token(&mut parser).map(ApiCommand::Token);
    }
    let mut parser = lexopt::Parser::from_args(args);
    let mut data_dir = None;
    let mut bind: SocketAddr = DEFAULT_BIND.parse().expect("the default parses");
    let mut allow_remote = false;
    let mut store = None;
    while let Some(arg) = parser.next().map_err(|e| UsageError(e.to_string()))? {
        match arg {
            Short('h') | Long("help") => return Ok(ApiCommand::Help),
            Short('V') | Long("version") => return Ok(ApiCommand::Version),
            Long("allow-remote") => allow_remote = true,
            Long("bind") => {
                let value = parser.value().map_err(|_| {
                    UsageError("--bind needs an address such as 127.0.0.1:8080".into())
                })?;
                let text = value.to_string_lossy();
                bind = text.parse().map_err(|_| {
                    UsageError(format!(
                        "--bind {text:?} is not an IP address with a port, such as \
                         127.0.0.1:8080 or [::1]:8080"
                    ))
                })?;
            }
            Long("data-dir") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--data-dir needs a directory".into()))?;
                if value.is_empty() {
                    return Err(UsageError("--data-dir needs a non-empty directory".into()));
                }
                data_dir = Some(PathBuf::from(value));
            }
            Long("store") => {
                let value = parser.value().map_err(|_| {
                    UsageError("--store needs sqlite or rqlite://host:port,...".into())
                })?;
                store = Some(value.to_string_lossy().into_owned());
            }
            Value(v) => {
                return Err(UsageError(format!(
                    "unexpected argument {:?}",
                    v.to_string_lossy()
                )))
            }
            Short(c) => return Err(UsageError(format!("unknown flag -{c}"))),
            Long(l) => return Err(UsageError(format!("unknown flag --{l}"))),
        }
    }
    crate::transport::http::check_bind(bind, allow_remote).map_err(UsageError)?;
    Ok(ApiCommand::Serve {
        bind,
        data_dir,
        store,
    })
}

/// The arguments after `token`.
fn parse_token(
    parser: &mut lexopt::Parser,
) -> Result<crate::api_token::TokenCommand, crate::cli::UsageError> {
    use crate::api_token::{parse_ttl, TokenCommand, DEFAULT_MINTED_TOKEN_TTL_SECS};
    use crate::cli::UsageError;
    use lexopt::prelude::*;
    let list = |v: OsString| -> Vec<String> {
        v.to_string_lossy()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let what = match parser.next().map_err(|e| UsageError(e.to_string()))? {
        Some(Value(v)) => v.to_string_lossy().into_owned(),
        _ => return Err(UsageError("token needs `secret` or `mint`".into())),
    };
    let value = |parser: &mut lexopt::Parser, flag: &str| {
        parser
            .value()
            .map_err(|_| UsageError(format!("--{flag} needs a value")))
    };
    match what.as_str() {
        "secret" => {
            let mut file = None;
            while let Some(arg) = parser.next().map_err(|e| UsageError(e.to_string()))? {
                match arg {
                    Long("file") => file = Some(PathBuf::from(value(parser, "file")?)),
                    other => return Err(UsageError(format!("token secret: unexpected {other:?}"))),
                }
            }
            Ok(TokenCommand::Secret { file })
        }
        "mint" => {
            let (mut tenant, mut subject, mut roles, mut scope) = (None, None, Vec::new(), None);
            let (mut memory_scopes, mut ttl_secs, mut issuer) =
                (Vec::new(), DEFAULT_MINTED_TOKEN_TTL_SECS, None);
            while let Some(arg) = parser.next().map_err(|e| UsageError(e.to_string()))? {
                let text = |parser: &mut lexopt::Parser, flag: &str| {
                    value(parser, flag).map(|v| v.to_string_lossy().into_owned())
                };
                match arg {
                    Long("tenant") => tenant = Some(text(parser, "tenant")?),
                    Long("subject") => subject = Some(text(parser, "subject")?),
                    Long("roles") => roles = list(value(parser, "roles")?),
                    Long("scope") => scope = Some(text(parser, "scope")?),
                    Long("memory-scopes") => memory_scopes = list(value(parser, "memory-scopes")?),
                    Long("ttl") => {
                        ttl_secs = parse_ttl(&text(parser, "ttl")?).map_err(UsageError)?
                    }
                    Long("issuer") => issuer = Some(text(parser, "issuer")?),
                    other => return Err(UsageError(format!("token mint: unexpected {other:?}"))),
                }
            }
            let need = |v: Option<String>, flag: &str| {
                v.ok_or_else(|| UsageError(format!("token mint needs --{flag}")))
            };
            Ok(TokenCommand::Mint {
                tenant: need(tenant, "tenant")?,
                subject: need(subject, "subject")?,
                roles,
                scope,
                memory_scopes,
                ttl_secs,
                issuer,
            })
        }
        other => Err(UsageError(format!(
            "token {other:?}: the token commands are `secret` and `mint`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_loopback_8080() {
        assert_eq!(
            parse(Vec::<String>::new()),
            Ok(ApiCommand::Serve {
                bind: DEFAULT_BIND.parse().unwrap(),
                data_dir: None,
                store: None
            })
        );
    }

    #[test]
    fn bind_and_data_dir_are_taken() {
        assert_eq!(
            parse(["--bind", "127.0.0.1:0", "--data-dir=/tmp/m"]),
            Ok(ApiCommand::Serve {
                bind: "127.0.0.1:0".parse().unwrap(),
                data_dir: Some(PathBuf::from("/tmp/m")),
                store: None
            })
        );
    }

    #[test]
    fn remote_binds_need_allow_remote() {
        let err = parse(["--bind", "0.0.0.0:8080"]).unwrap_err();
        assert!(
            err.0.contains("--allow-remote") && err.0.contains("TLS"),
            "{err}"
        );
        assert!(parse(["--bind", "0.0.0.0:8080", "--allow-remote"]).is_ok());
    }

    #[test]
    fn bad_addresses_and_flags_are_named() {
        assert!(parse(["--bind", "localhost"])
            .unwrap_err()
            .0
            .contains("localhost"));
        assert!(parse(["--frob"]).unwrap_err().0.contains("--frob"));
        assert_eq!(parse(["-h"]), Ok(ApiCommand::Help));
    }

    #[test]
    fn token_commands_parse() {
        use crate::api_token::TokenCommand;
        assert_eq!(
            parse(["token", "secret", "--file", "/tmp/s"]),
            Ok(ApiCommand::Token(TokenCommand::Secret {
                file: Some(PathBuf::from("/tmp/s"))
            }))
        );
        assert_eq!(
            parse([
                "token",
                "mint",
                "--tenant",
                "acme",
                "--subject",
                "dana",
                "--roles",
                "reader,ingestor",
                "--ttl",
                "2h"
            ]),
            Ok(ApiCommand::Token(TokenCommand::Mint {
                tenant: "acme".into(),
                subject: "dana".into(),
                roles: vec!["reader".into(), "ingestor".into()],
                scope: None,
                memory_scopes: vec![],
                ttl_secs: 7200,
                issuer: None,
            }))
        );
        assert!(parse(["token"]).is_err());
        assert!(parse(["token", "mint", "--tenant", "a"])
            .unwrap_err()
            .0
            .contains("--subject"));
        assert!(parse(["token", "mint", "--ttl", "9999d"]).is_err());
        assert!(parse(["token", "frob"]).is_err());
    }
}
