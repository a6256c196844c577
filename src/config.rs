//! Run-time configuration: the data directory, the stdio caller's identity
//! and durability, resolved from flags and environment variables.
//!
//! Every environment variable the server reads is named here, except the
//! embedding server's (`ALAYASIKI_EMBED_*`, in [`crate::embed::http`]), the
//! confidence half-life (`ALAYASIKI_HALF_LIFE_DAYS`, in
//! [`crate::knowledge::confidence`]) and the log level (`ALAYASIKI_LOG`, in
//! [`crate::logging`]). The settings of the engine's own modules are parsed
//! there, from the names here: the LLM's in `llm::LlmConfig::from_env`,
//! the fusion's in `query::Fusion::from_env` (this module is a leaf below
//! them).

use std::path::{Path, PathBuf};

use crate::limits::{
    DEFAULT_CHUNK_TARGET_BYTES, DEFAULT_WM_TTL_SECS, MAX_ADMISSION_CATALOG_BYTES,
    MAX_CHUNK_TARGET_BYTES, MAX_IDENTITY_BYTES, MAX_RETENTION_DAYS, MAX_TOP_K, MAX_WM_TTL_SECS,
    MIN_CHUNK_TARGET_BYTES,
};

pub const DATA_DIR_ENV: &str = "ALAYASIKI_DATA_DIR";
pub const TENANT_ENV: &str = "ALAYASIKI_MCP_TENANT";
pub const SUBJECT_ENV: &str = "ALAYASIKI_MCP_SUBJECT";
pub const DURABILITY_ENV: &str = "ALAYASIKI_DURABILITY";
pub const FUSION_ENV: &str = "ALAYASIKI_FUSION";
/// Evaluation: rank exactly this deep, whatever `top_k` asks (see
/// [`ranking_depth_from_env`]).
pub const RANKING_DEPTH_ENV: &str = "ALAYASIKI_RANKING_DEPTH";
pub const CHUNK_TARGET_ENV: &str = "ALAYASIKI_CHUNK_TARGET_BYTES";
/// A test and diagnosis knob: the admission catalogs' budget (see
/// [`admission_catalog_bytes_from_env`]).
pub const ADMISSION_CATALOG_ENV: &str = "ALAYASIKI_ADMISSION_CATALOG_BYTES";
pub const WM_TTL_ENV: &str = "ALAYASIKI_WM_TTL_SECS";
pub const UPLOAD_TTL_ENV: &str = "ALAYASIKI_UPLOAD_TTL_SECS";
pub const RETENTION_ENV: &str = "ALAYASIKI_RETENTION_DAYS";
pub const CLUSTER_LOG_RETENTION_ENV: &str = "ALAYASIKI_CLUSTER_LOG_RETENTION_SECS";
/// The LLM server (see `llm::LlmConfig::from_env`); unset, no LLM is ever
/// called.
pub const LLM_URL_ENV: &str = "ALAYASIKI_LLM_URL";
pub const LLM_API_ENV: &str = "ALAYASIKI_LLM_API";
pub const LLM_MODEL_ENV: &str = "ALAYASIKI_LLM_MODEL";
pub const LLM_API_KEY_ENV: &str = "ALAYASIKI_LLM_API_KEY";
pub const LLM_TIMEOUT_ENV: &str = "ALAYASIKI_LLM_TIMEOUT_MS";
pub const LLM_USE_ENV: &str = "ALAYASIKI_LLM_USE";
/// What `ALAYASIKI_LLM_USE` may list; unset, it means all of them.
pub const LLM_USES: [&str; 3] = ["extract", "answer", "summarize"];

// alayasiki-api: the HTTP API and SSE transport (see API.md).
pub const JWT_SECRET_ENV: &str = "ALAYASIKI_JWT_SECRET";
pub const JWT_SECRET_FILE_ENV: &str = "ALAYASIKI_JWT_SECRET_FILE";
pub const JWT_PUBLIC_KEY_FILE_ENV: &str = "ALAYASIKI_JWT_PUBLIC_KEY_FILE";
pub const JWT_ALGORITHM_ENV: &str = "ALAYASIKI_JWT_ALGORITHM";
pub const JWT_ISSUER_ENV: &str = "ALAYASIKI_JWT_ISSUER";
pub const JWT_AUDIENCE_ENV: &str = "ALAYASIKI_JWT_AUDIENCE";
pub const JWT_LEEWAY_ENV: &str = "ALAYASIKI_JWT_LEEWAY_SECS";
/// Verifying keys from a JWKS (RFC 7517): a local file, or a URL fetched
/// and cached (see `transport::jwks`).
pub const JWKS_FILE_ENV: &str = "ALAYASIKI_JWKS_FILE";
pub const JWKS_URL_ENV: &str = "ALAYASIKI_JWKS_URL";
/// This server's resource identifier (RFC 8707, RFC 9728): advertised in
/// its protected resource metadata and required in every token's `aud`.
pub const RESOURCE_ENV: &str = "ALAYASIKI_RESOURCE";
/// The issuers of tokens for this server (RFC 9728 `authorization_servers`).
pub const AUTHORIZATION_SERVERS_ENV: &str = "ALAYASIKI_AUTHORIZATION_SERVERS";
pub const ALLOWED_ORIGINS_ENV: &str = "ALAYASIKI_MCP_ALLOWED_ORIGINS";
pub const ALLOWED_HOSTS_ENV: &str = "ALAYASIKI_API_ALLOWED_HOSTS";
pub const RATE_ENV: &str = "ALAYASIKI_API_RATE";
pub const BURST_ENV: &str = "ALAYASIKI_API_BURST";
/// The memory scope a request without credentials may query (the
/// anonymous caller, off unless set; see `transport::auth::anonymous`).
pub const ANONYMOUS_SCOPE_ENV: &str = "ALAYASIKI_ANONYMOUS_SCOPE";
/// The tenant whose [`ANONYMOUS_SCOPE_ENV`] that is (required with it).
pub const ANONYMOUS_TENANT_ENV: &str = "ALAYASIKI_ANONYMOUS_TENANT";
/// Directory name under the home directory for `alayasiki-api`.
pub const API_DEFAULT_DIR_NAME: &str = ".alayasiki-api";

pub const DEFAULT_TENANT: &str = "local";
pub const DEFAULT_SUBJECT: &str = "local-agent";
/// Directory name under the home directory when nothing else is configured.
pub const DEFAULT_DIR_NAME: &str = ".alayasiki-mcp";

/// How hard a commit tries to reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The write-ahead log is synced to disk before any write is
    /// acknowledged (see `store::writer`), so an acknowledged write survives
    /// a process kill, an OS crash and power loss.
    Full,
    /// `synchronous=NORMAL`: an acknowledged write survives a process kill
    /// (the OS holds it) but the last commits may be lost on power loss.
    Normal,
}

impl Durability {
    pub fn name(self) -> &'static str {
        match self {
            Durability::Full => "full",
            Durability::Normal => "normal",
        }
    }
}

/// Everything `alayasiki-mcp` needs to start serving.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub tenant: String,
    pub subject: String,
    pub durability: Durability,
}

/// A configuration problem, reported on stderr before exit.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a variable, treating unset and empty alike.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A secret given either inline in `var` or as a file named by `file_var`
/// (never both); `None` when neither is set.
pub fn secret_from_env(var: &str, file_var: &str) -> Result<Option<Vec<u8>>, String> {
    match (env(var), env(file_var)) {
        (Some(_), Some(_)) => Err(format!("set {var} or {file_var}, not both")),
        (Some(v), None) => Ok(Some(v.into_bytes())),
        (None, Some(path)) => read_secret_file(file_var, &path).map(Some),
        (None, None) => Ok(None),
    }
}

/// The secret held by the file at `path` (named by `file_var` in errors),
/// without the line ending editors add: it is not part of the secret.
pub fn read_secret_file(file_var: &str, path: &str) -> Result<Vec<u8>, String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read {file_var} {path:?}: {e}"))?;
    let end = text
        .iter()
        .rposition(|b| !b"\r\n".contains(b))
        .map_or(0, |i| i + 1);
    Ok(text[..end].to_vec())
}

/// `1`: the stdio server also serves the memory browser on loopback, as
/// `--ui` does.
pub const UI_ENV: &str = "ALAYASIKI_UI";
/// Where the memory browser listens (`PORT` or `IP:PORT`), as `--ui-bind`.
pub const UI_BIND_ENV: &str = "ALAYASIKI_UI_BIND";

/// A memory browser address: `PORT` (on 127.0.0.1) or `IP:PORT`.
pub fn parse_ui_bind(text: &str) -> Option<std::net::SocketAddr> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().ok()
}

/// Where the stdio server serves the memory browser, if it does: on when
/// `flag` (`--ui`), `bind` (`--ui-bind`) or `ALAYASIKI_UI=1` says so, at
/// `bind`, else `ALAYASIKI_UI_BIND`, else `default`.
pub fn ui_from_env(
    flag: bool,
    bind: Option<std::net::SocketAddr>,
    default: std::net::SocketAddr,
) -> Result<Option<std::net::SocketAddr>, ConfigError> {
    let on = match env(UI_ENV).as_deref() {
        None | Some("0") => flag || bind.is_some(),
        Some("1") => true,
        Some(other) => {
            return Err(ConfigError(format!(
                "{UI_ENV} must be 1 or 0, not {other:?}"
            )))
        }
    };
    if !on {
        return Ok(None);
    }
    match bind {
        Some(bind) => Ok(Some(bind)),
        None => ui_bind_from_env(default).map(Some),
    }
}

/// Where the memory browser listens when no flag says: `ALAYASIKI_UI_BIND`,
/// else `default`.
pub fn ui_bind_from_env(
    default: std::net::SocketAddr,
) -> Result<std::net::SocketAddr, ConfigError> {
    match env(UI_BIND_ENV) {
        None => Ok(default),
        Some(v) => parse_ui_bind(&v).ok_or_else(|| {
            ConfigError(format!(
                "{UI_BIND_ENV}={v:?} is not a port or an IP address with a port, such as \
                 127.0.0.1:8765"
            ))
        }),
    }
}

pub const DETERMINISTIC_ENV: &str = "ALAYASIKI_DETERMINISTIC";
pub const CLOCK_START_ENV: &str = "ALAYASIKI_CLOCK_START";
pub const CLOCK_STEP_ENV: &str = "ALAYASIKI_CLOCK_STEP_MS";
pub const ID_SEED_ENV: &str = "ALAYASIKI_ID_SEED";

/// Where a deterministic run's clock starts unless told.
pub const DEFAULT_CLOCK_START: &str = "2026-01-01T00:00:00Z";
/// How far a deterministic run's clock moves per request unless told (ms).
pub const DEFAULT_CLOCK_STEP_MS: i64 = 1_000;

/// Deterministic mode, for test suites: a fixed clock stepped once per
/// request, ids from a seeded sequence, one request served at a time, and
/// background work (retention purges, community rebuilds) run before each
/// request instead of on timers. Replies are then the same bytes on every
/// run and every machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deterministic {
    pub clock_start_ms: i64,
    pub clock_step_ms: i64,
    pub id_seed: u64,
}

impl Deterministic {
    /// From the environment (`ALAYASIKI_DETERMINISTIC=1`, or `forced` by
    /// `--deterministic`); `None` when off.
    pub fn from_env(forced: bool) -> Result<Option<Deterministic>, ConfigError> {
        let on = match env(DETERMINISTIC_ENV).as_deref() {
            None | Some("0") => forced,
            Some("1") => true,
            Some(other) => {
                return Err(ConfigError(format!(
                    "{DETERMINISTIC_ENV} must be 1 or 0, not {other:?}"
                )))
            }
        };
        if !on {
            return Ok(None);
        }
        let start = env(CLOCK_START_ENV).unwrap_or_else(|| DEFAULT_CLOCK_START.to_string());
        let clock_start_ms = crate::clock::parse_rfc3339(&start).ok_or_else(|| {
            ConfigError(format!(
                "{CLOCK_START_ENV} must be an RFC 3339 time such as {DEFAULT_CLOCK_START}, not {start:?}"
            ))
        })?;
        let clock_step_ms = match env(CLOCK_STEP_ENV) {
            None => DEFAULT_CLOCK_STEP_MS,
            Some(v) => v
                .parse::<i64>()
                .ok()
                .filter(|n| (0..=86_400_000).contains(n))
                .ok_or_else(|| {
                    ConfigError(format!(
                        "{CLOCK_STEP_ENV} must be milliseconds from 0 to 86400000, not {v:?}"
                    ))
                })?,
        };
        let id_seed = match env(ID_SEED_ENV) {
            None => 0,
            Some(v) => v.parse::<u64>().map_err(|_| {
                ConfigError(format!(
                    "{ID_SEED_ENV} must be an unsigned integer, not {v:?}"
                ))
            })?,
        };
        Ok(Some(Deterministic {
            clock_start_ms,
            clock_step_ms,
            id_seed,
        }))
    }

    /// Fixes the process's clock and id sequence. Before anything else
    /// runs: the first log line already reads the clock.
    pub fn apply(self) {
        crate::clock::fix(self.clock_start_ms, self.clock_step_ms);
        crate::ids::seed_sequence(self.id_seed);
    }
}

impl Config {
    /// Resolves the configuration: `--data-dir`, else `ALAYASIKI_DATA_DIR`,
    /// else `<home>/<default_dir_name>`.
    pub fn resolve(
        data_dir_flag: Option<PathBuf>,
        default_dir_name: &str,
    ) -> Result<Config, ConfigError> {
        let data_dir = match data_dir_flag {
            Some(dir) => dir,
            None => match env(DATA_DIR_ENV) {
                Some(dir) => PathBuf::from(dir),
                None => home_dir()
                    .ok_or_else(|| {
                        ConfigError(format!(
                            "cannot find a home directory for the default data directory; \
                             pass --data-dir or set {DATA_DIR_ENV}"
                        ))
                    })?
                    .join(default_dir_name),
            },
        };
        let tenant = identity(TENANT_ENV, DEFAULT_TENANT)?;
        let subject = identity(SUBJECT_ENV, DEFAULT_SUBJECT)?;
        let durability = match env(DURABILITY_ENV).as_deref() {
            None | Some("full") => Durability::Full,
            Some("normal") => Durability::Normal,
            Some(other) => {
                return Err(ConfigError(format!(
                    "{DURABILITY_ENV}={other:?} is not one of: full, normal"
                )))
            }
        };
        Ok(Config {
            data_dir,
            tenant,
            subject,
            durability,
        })
    }
}

/// The chunk target (bytes) from `ALAYASIKI_CHUNK_TARGET_BYTES`: a whole
/// number from [`MIN_CHUNK_TARGET_BYTES`] to [`MAX_CHUNK_TARGET_BYTES`],
/// else [`DEFAULT_CHUNK_TARGET_BYTES`]. An evaluation knob; see
/// BENCHMARKS.md for what each size costs and finds.
pub fn chunk_target_from_env() -> Result<usize, String> {
    parse_chunk_target(env(CHUNK_TARGET_ENV).as_deref())
}

/// [`chunk_target_from_env`] over the variable's value (unset or empty is
/// `None`).
fn parse_chunk_target(value: Option<&str>) -> Result<usize, String> {
    let Some(v) = value else {
        return Ok(DEFAULT_CHUNK_TARGET_BYTES);
    };
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (MIN_CHUNK_TARGET_BYTES..=MAX_CHUNK_TARGET_BYTES).contains(n))
        .ok_or_else(|| {
            format!(
                "{CHUNK_TARGET_ENV}={v:?} is not a whole number of bytes from \
                 {MIN_CHUNK_TARGET_BYTES} to {MAX_CHUNK_TARGET_BYTES}"
            )
        })
}

/// `ALAYASIKI_RANKING_DEPTH`: a depth every query ranks at, whatever its
/// `top_k`, a whole number from 1 to [`MAX_TOP_K`]; unset, `None` (a query
/// ranks `top_k` deep, at least `query::MIN_RANKING_DEPTH`). An evaluation
/// knob: with 10 and `top_k` 50, the first 10 results are the default
/// query's and the rest the candidates it ranked after them, what an
/// offline study of a further stage must re-rank (scripts/locomo_stage_sim.py).
pub fn ranking_depth_from_env() -> Result<Option<usize>, String> {
    let Some(v) = env(RANKING_DEPTH_ENV) else {
        return Ok(None);
    };
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|d| (1..=MAX_TOP_K as usize).contains(d))
        .map(Some)
        .ok_or_else(|| {
            format!("{RANKING_DEPTH_ENV}={v:?} is not a whole number from 1 to {MAX_TOP_K}")
        })
}

/// The bytes the admission catalogs may take together:
/// `ALAYASIKI_ADMISSION_CATALOG_BYTES` (a whole number from 0 to
/// [`MAX_ADMISSION_CATALOG_BYTES`]), else that limit. A test and diagnosis
/// knob: 0 (or a budget smaller than a tenant's catalog) checks every
/// broad filter in SQL, the way the catalogs must agree with.
pub fn admission_catalog_bytes_from_env() -> Result<usize, String> {
    let Some(v) = env(ADMISSION_CATALOG_ENV) else {
        return Ok(MAX_ADMISSION_CATALOG_BYTES);
    };
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|b| *b <= MAX_ADMISSION_CATALOG_BYTES)
        .ok_or_else(|| {
            format!(
                "{ADMISSION_CATALOG_ENV}={v:?} is not a whole number from 0 to {MAX_ADMISSION_CATALOG_BYTES}"
            )
        })
}

/// How long a working-memory session lives after its last write:
/// `ALAYASIKI_WM_TTL_SECS` (whole seconds, 1 to [`MAX_WM_TTL_SECS`]), else
/// [`DEFAULT_WM_TTL_SECS`]. Short values are for tests.
pub fn wm_ttl_from_env() -> Result<std::time::Duration, String> {
    let secs = match env(WM_TTL_ENV) {
        None => DEFAULT_WM_TTL_SECS,
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| (1..=MAX_WM_TTL_SECS).contains(s))
            .ok_or_else(|| {
                format!("{WM_TTL_ENV}={v:?} is not a whole number of seconds from 1 to {MAX_WM_TTL_SECS}")
            })?,
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// How long an upload ticket waits for its upload, from
/// `ALAYASIKI_UPLOAD_TTL_SECS`: 1 to
/// [`UPLOAD_TICKET_TTL_SECS`](crate::limits::UPLOAD_TICKET_TTL_SECS) seconds
/// (it can only shorten the default).
pub fn upload_ttl_from_env() -> Result<std::time::Duration, String> {
    use crate::limits::UPLOAD_TICKET_TTL_SECS;
    let secs = match env(UPLOAD_TTL_ENV) {
        None => UPLOAD_TICKET_TTL_SECS,
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| (1..=UPLOAD_TICKET_TTL_SECS).contains(s))
            .ok_or_else(|| {
                format!("{UPLOAD_TTL_ENV}={v:?} is not a whole number of seconds from 1 to {UPLOAD_TICKET_TTL_SECS}")
            })?,
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// The retention period from `ALAYASIKI_RETENTION_DAYS`: a positive number
/// of days (fractions allowed) up to [`MAX_RETENTION_DAYS`]; unset keeps
/// documents until they are forgotten or reach their own `expires_at`.
pub fn retention_from_env() -> Result<Option<std::time::Duration>, String> {
    let Some(v) = env(RETENTION_ENV) else {
        return Ok(None);
    };
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d > 0.0 && *d <= MAX_RETENTION_DAYS)
        .map(|d| Some(std::time::Duration::from_secs_f64(d * 86_400.0)))
        .ok_or_else(|| {
            format!("{RETENTION_ENV}={v:?} is not a number of days above 0 and at most {MAX_RETENTION_DAYS}")
        })
}

/// How long a cluster's log keeps its entries, from
/// `ALAYASIKI_CLUSTER_LOG_RETENTION_SECS`: whole seconds from 1 to
/// [`MAX_CLUSTER_LOG_RETENTION_SECS`](crate::limits::MAX_CLUSTER_LOG_RETENTION_SECS);
/// unset, [`DEFAULT_CLUSTER_LOG_RETENTION`](crate::limits::DEFAULT_CLUSTER_LOG_RETENTION).
pub fn cluster_log_retention_from_env() -> Result<std::time::Duration, String> {
    match env(CLUSTER_LOG_RETENTION_ENV) {
        None => Ok(crate::limits::DEFAULT_CLUSTER_LOG_RETENTION),
        Some(v) => cluster_log_retention(&v),
    }
}

fn cluster_log_retention(v: &str) -> Result<std::time::Duration, String> {
    use crate::limits::MAX_CLUSTER_LOG_RETENTION_SECS;
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|s| (1..=MAX_CLUSTER_LOG_RETENTION_SECS).contains(s))
        .map(std::time::Duration::from_secs)
        .ok_or_else(|| {
            format!(
                "{CLUSTER_LOG_RETENTION_ENV}={v:?} is not a whole number of seconds from 1 to \
                 {MAX_CLUSTER_LOG_RETENTION_SECS}"
            )
        })
}

/// `HOME`, or `USERPROFILE` on Windows.
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    env(var).map(PathBuf::from)
}

fn identity(var: &str, default: &str) -> Result<String, ConfigError> {
    let value = env(var).unwrap_or_else(|| default.to_string());
    validate_identity(&value).map_err(|why| ConfigError(format!("{var}: {why}")))?;
    Ok(value)
}

/// Tenant and subject names: at least one visible character (see
/// [`crate::visible`]: whitespace, format and default-ignorable characters,
/// combining marks alone and blank glyphs do not count), at most
/// [`MAX_IDENTITY_BYTES`] bytes, no control characters.
pub fn validate_identity(value: &str) -> Result<(), String> {
    if !crate::visible::has_visible_character(value) {
        return Err(
            "must not be blank: it needs a visible character (whitespace, \
                    invisible characters and combining marks alone do not count)"
                .into(),
        );
    }
    if value.len() > MAX_IDENTITY_BYTES {
        return Err(format!("must be at most {MAX_IDENTITY_BYTES} bytes"));
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(())
}

/// Creates the data directory (and parents) if missing, owner-only where the
/// OS has permissions. The error is a whole sentence naming the directory
/// and what is wrong with it: missing and not creatable, there but not a
/// directory, or there but out of reach (a parent without search
/// permission), which is not a reason to try creating it.
pub fn ensure_data_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(format!(
                "data directory {} exists and is not a directory",
                dir.display()
            ))
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!(
                "cannot reach data directory {}: {e}",
                dir.display()
            ))
        }
        Err(_) => {}
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))
}

/// Checks that `dir` holds a memory store (`db_file`): a missing one is
/// "no memory store", a directory that cannot be looked into is named as
/// such (a store that is there but unreadable is not "no store").
pub fn require_store(dir: &Path, db_file: &str) -> Result<(), String> {
    match dir.join(db_file).try_exists() {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("no memory store in {}", dir.display())),
        Err(e) => Err(format!("cannot read data directory {}: {e}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_log_retention_is_whole_seconds_within_its_bounds() {
        use crate::limits::MAX_CLUSTER_LOG_RETENTION_SECS as MAX;
        use std::time::Duration;
        assert_eq!(cluster_log_retention("1"), Ok(Duration::from_secs(1)));
        assert_eq!(
            cluster_log_retention(&MAX.to_string()),
            Ok(Duration::from_secs(MAX))
        );
        for bad in ["0", &(MAX + 1).to_string(), "1.5", "-1", "", "an hour"] {
            let e = cluster_log_retention(bad).unwrap_err();
            assert!(e.contains(CLUSTER_LOG_RETENTION_ENV), "{e}");
        }
    }

    #[test]
    fn ui_binds_are_a_port_or_an_address() {
        assert_eq!(
            parse_ui_bind("8765"),
            Some("127.0.0.1:8765".parse().unwrap())
        );
        assert_eq!(
            parse_ui_bind("0.0.0.0:80"),
            Some("0.0.0.0:80".parse().unwrap())
        );
        assert_eq!(parse_ui_bind("[::1]:0"), Some("[::1]:0".parse().unwrap()));
        assert_eq!(parse_ui_bind("localhost:80"), None);
        assert_eq!(parse_ui_bind("99999"), None);
    }

    #[test]
    fn chunk_target_is_validated_at_its_edges() {
        assert_eq!(parse_chunk_target(None), Ok(DEFAULT_CHUNK_TARGET_BYTES));
        let min = MIN_CHUNK_TARGET_BYTES;
        let max = MAX_CHUNK_TARGET_BYTES;
        for ok in [min, min + 1, 1000, max - 1, max] {
            assert_eq!(parse_chunk_target(Some(&ok.to_string())), Ok(ok));
        }
        assert_eq!(parse_chunk_target(Some(" 500\n")), Ok(500));
        for bad in [
            (min - 1).to_string(),
            (max + 1).to_string(),
            "0".into(),
            "-500".into(),
            "1e3".into(),
            "1000.0".into(),
            "1_000".into(),
            "big".into(),
            "99999999999999999999999999".into(),
        ] {
            let err = parse_chunk_target(Some(&bad)).unwrap_err();
            assert!(
                err.starts_with(CHUNK_TARGET_ENV) && err.contains(&format!("from {min} to {max}")),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn identities_are_validated() {
        assert!(validate_identity("local").is_ok());
        assert!(validate_identity("  ").is_err());
        assert!(validate_identity("a\nb").is_err());
        for invisible in [
            "\u{200B}",
            " \u{200B}\u{FEFF} ",
            "\u{2060}\u{00AD}",
            "\u{3164}",
            "\u{E0041}",
            "\u{0301}",
            "\u{2800}",
        ] {
            assert!(validate_identity(invisible).is_err(), "{invisible:?}");
        }
        assert!(
            validate_identity("a\u{200B}b").is_ok(),
            "visible text with a joiner is fine"
        );
        assert!(validate_identity(&"x".repeat(MAX_IDENTITY_BYTES)).is_ok());
        assert!(validate_identity(&"x".repeat(MAX_IDENTITY_BYTES + 1)).is_err());
    }
}
