//! Command-line parsing for `alayasiki-mcp`.
//!
//! Owns the flags and the help text; knows nothing about stores or protocols.
//! `--help` and `--version` are answered from here, before anything is
//! opened. A bad flag is one line on stderr naming it, and exit status 2.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::limits::{MAX_TOP_K, MIN_TOP_K};
use crate::replay;

/// Exit status for usage errors (bad flags or values), as is customary.
pub const USAGE_EXIT: i32 = 2;
/// A subcommand stopped by a signal exits with this plus the signal's
/// number (130 for SIGINT, 143 for SIGTERM), as shells report a program
/// killed by one.
pub const SIGNAL_EXIT_BASE: i32 = 128;

/// What the user asked the binary to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Serve MCP on stdio.
    Serve {
        data_dir: Option<PathBuf>,
        /// Deterministic mode (also `ALAYASIKI_DETERMINISTIC=1`).
        deterministic: bool,
        /// `--ui`: also serve the memory browser (also `ALAYASIKI_UI=1`).
        ui: bool,
        /// `--ui-bind ADDR`: where (implies `--ui`).
        ui_bind: Option<SocketAddr>,
    },
    /// Serve the memory browser alone until SIGINT or SIGTERM.
    Ui {
        data_dir: Option<PathBuf>,
        bind: Option<SocketAddr>,
    },
    /// An rqlite cluster: its status, or a copy into it or out of it.
    Cluster(crate::admin::cluster::Options),
    /// Re-embed everything with the configured embedder.
    Reindex {
        data_dir: Option<PathBuf>,
    },
    /// Queue every failed document to be indexed again.
    RetryFailed {
        data_dir: Option<PathBuf>,
    },
    /// Rewrite the vector files without deleted chunks' slots.
    Compact {
        data_dir: Option<PathBuf>,
    },
    /// Store files and folders.
    Ingest {
        data_dir: Option<PathBuf>,
        tenant: Option<String>,
        paths: Vec<PathBuf>,
    },
    /// Print the evidence for a question.
    Query {
        data_dir: Option<PathBuf>,
        tenant: Option<String>,
        text: String,
        top_k: Option<u32>,
    },
    /// Delete documents.
    Forget {
        data_dir: Option<PathBuf>,
        tenant: Option<String>,
        by: ForgetBy,
    },
    /// Write the memory as JSON Lines on stdout.
    Export {
        data_dir: Option<PathBuf>,
        tenant: Option<String>,
    },
    /// Read an export (or an MCP memory-server file) into the memory.
    Import {
        data_dir: Option<PathBuf>,
        tenant: Option<String>,
        file: PathBuf,
    },
    /// Run recorded sessions against fresh temporary stores.
    Replay(replay::Options),
    /// Serve MCP on stdio through a relay that records the session.
    Record(replay::record::RecordOptions),
    /// The program's help page.
    Help,
    /// `SUBCOMMAND --help`: the page of one subcommand.
    SubcommandHelp(&'static str),
    Version,
}

/// What `forget` deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForgetBy {
    Id(String),
    Key(String),
    Source(String),
}

pub const HELP: &str = "\
alayasiki-mcp: local knowledge memory for AI agents, served over MCP on stdio.

USAGE:
    alayasiki-mcp [--data-dir DIR] [--deterministic] [--ui] [--ui-bind ADDR]
                                              serve MCP on stdio (and, with
                                              --ui, the memory browser)
    alayasiki-mcp ui [--data-dir DIR] [--bind ADDR]
                                              serve the memory browser when
                                              no server is running, until
                                              Ctrl-C or SIGTERM
    alayasiki-mcp reindex [--data-dir DIR]    re-embed everything with the
                                              configured embedder
    alayasiki-mcp retry-failed [--data-dir DIR]
                                              index every failed document
                                              again (see alayasiki_status)
    alayasiki-mcp compact [--data-dir DIR]    rewrite vector files and the
                                              full-text index without
                                              deleted chunks
    alayasiki-mcp ingest PATH...              store files and folders (walked
                                              recursively; resumable)
    alayasiki-mcp query TEXT [--top-k N]      print the evidence for a question
    alayasiki-mcp forget --id ID | --key KEY | --source SOURCE
                                              delete documents for good
    alayasiki-mcp export > memory.jsonl       write documents and originals as
                                              JSON Lines
    alayasiki-mcp import FILE                 restore an export, or import an
                                              MCP memory-server memory.jsonl
    alayasiki-mcp cluster status|push|pull [--cluster ADDR] [--data-dir DIR]
                                              an rqlite cluster's nodes; copy
                                              the data directory into one and
                                              back (see cluster --help)
    alayasiki-mcp replay FILE... [--seed EXPORT] [--format text|junit|tap]
                     [--deterministic]        run recorded MCP sessions on
                                              fresh temporary stores (see
                                              `alayasiki-mcp replay --help`)
    alayasiki-mcp record --out FILE [--seed EXPORT]
                                              serve MCP on stdio on a fresh
                                              temporary store, recording the
                                              session as a fixture

    ingest, query, forget, export and import also take [--data-dir DIR]
    and [--tenant T]. Subcommands need the data directory to themselves:
    stop the server first.

OPTIONS:
    --data-dir DIR   Where the memory lives (created owner-only if missing).
                     Default: $ALAYASIKI_DATA_DIR, else $HOME/.alayasiki-mcp
                     (%USERPROFILE%\\.alayasiki-mcp on Windows).
    --tenant T       Tenant to use (default: $ALAYASIKI_MCP_TENANT, else local).
    --ui             Also serve the memory browser (the /ui page and the
                     JSON API it uses) on 127.0.0.1 at a free port, in this
                     process. Its URL, with a secret made for this start,
                     goes to stderr and to DIR/ui.url (owner-only, removed
                     on exit); alayasiki_status gives the address.
    --ui-bind ADDR   Where the memory browser listens (implies --ui): PORT
                     (on 127.0.0.1) or IP:PORT. Another address than
                     loopback lets other machines reach it over plain HTTP
                     (a warning is logged).
    --bind ADDR      Where `ui` listens, as --ui-bind does for the server.
    -h, --help       Print this help and exit.
    -V, --version    Print the version and exit.

ENVIRONMENT:
    ALAYASIKI_DATA_DIR      data directory (overridden by --data-dir)
    ALAYASIKI_MCP_TENANT    tenant of the stdio caller (default: local)
    ALAYASIKI_MCP_SUBJECT   subject of the stdio caller (default: local-agent)
    ALAYASIKI_DURABILITY    full (default: fsync every commit) or normal
    ALAYASIKI_UI            1: serve the memory browser too (as --ui)
    ALAYASIKI_UI_BIND       where it listens (as --ui-bind; for `ui`, --bind)
    ALAYASIKI_LOG           error, warn, info (default), debug, trace, off
    ALAYASIKI_DETERMINISTIC 1: deterministic mode for test suites (as
                            --deterministic): a fixed clock from
                            ALAYASIKI_CLOCK_START (2026-01-01T00:00:00Z)
                            stepped ALAYASIKI_CLOCK_STEP_MS (1000) per
                            request, ids seeded by ALAYASIKI_ID_SEED (0),
                            one request at a time, background work before
                            each request
    ALAYASIKI_EMBED_URL     use an HTTP embedding server instead of the
                            built-in model (see README: Embeddings)
    ALAYASIKI_LLM_URL       optional LLM for triples, answers and community
                            summaries (off by default; see README: Optional LLM)
    ALAYASIKI_RETENTION_DAYS  hide and purge documents older than this
    ALAYASIKI_WM_TTL_SECS   working-memory session lifetime (default 1800)
    ALAYASIKI_FUSION, ALAYASIKI_HALF_LIFE_DAYS, ALAYASIKI_CHUNK_TARGET_BYTES:
                            retrieval tuning (README)

EXIT STATUS:
    0 done (and `ui` stopped by SIGINT or SIGTERM), 1 failure (the message
    says what), 2 bad command line, 3 data directory in use by another
    process. An interrupted ingest exits 130
    (SIGINT, Ctrl-C) or 143 (SIGTERM): 128 + the signal's number.
    See `alayasiki-mcp ingest --help`.

The server reads newline-delimited JSON-RPC on stdin and writes only protocol
messages to stdout; logs go to stderr. One process owns a data directory; to
share one memory between clients, run alayasiki-api and connect over SSE.
To browse the memory of a running server, start it with --ui.
";

/// `alayasiki-mcp ingest --help`.
pub const INGEST_HELP: &str = "\
alayasiki-mcp ingest: store files and folders in the memory.

USAGE:
    alayasiki-mcp ingest PATH... [--data-dir DIR] [--tenant T]

Every PATH must exist and be readable, or the command stops before storing
anything. Folders are walked recursively in name order; hidden entries and
symbolic links inside them are not followed. Each file is stored like a File
upload, with its absolute path as source and its name as title. Files that
are empty, larger than MAX_CONTENT_BYTES (4 MiB), binary of no supported
type, images or audio (they need a description), or refused by ingestion
(invalid UTF-8, encrypted or scanned PDFs, ...) are skipped and counted by
reason in the report on stdout. Progress goes to stderr.

Each file's idempotency key hashes its path and content, so running the same
command again stores only files that are new or changed: that is how an
interrupted run resumes. Ctrl-C (SIGINT) or SIGTERM stops between files:
the files in progress finish, everything stored is made durable, and a
summary on stderr gives what was stored, what was not, and the command that
resumes.

EXIT STATUS:
    0    every file found is stored (by this run or an earlier one) or was
         skipped for its content, and at least one is stored; or the
         folders hold no files at all
    1    a PATH does not exist or cannot be read (nothing is stored); none
         of the files found could be stored; or a file failed for a reason
         other than its content (the report names it)
    2    bad command line
    3    the data directory is in use by another process
    130  interrupted by SIGINT (Ctrl-C)
    143  interrupted by SIGTERM
";

/// `alayasiki-mcp replay --help`.
pub const REPLAY_HELP: &str = "\
alayasiki-mcp replay: run recorded MCP sessions (fixtures) and check every reply.

USAGE:
    alayasiki-mcp replay FILE... [--seed EXPORT] [--format text|junit|tap]
                         [--deterministic]

Each FILE is a fixture (README: Fixture replay): JSON Lines starting with
{\"fixture_format\": 1}, then send, send_raw, expect, expect_silence_ms and
comment steps. Each runs against this binary on a fresh temporary data
directory, deleted afterwards; --seed imports an `alayasiki-mcp export`
into it first. A fixture stops at its first failing step; the report names
the fixture's line, the JSON path where the reply differed and both values.

    --seed EXPORT    import this export into every fixture's store first
    --format F       text (default), junit (JUnit XML) or tap (TAP 13),
                     printed on stdout
    --deterministic  serve every fixture in deterministic mode (fixed clock,
                     seeded ids, one request at a time): replies are then
                     the same bytes on every run

EXIT STATUS:
    0    every fixture passed
    1    a reply did not match (or the server exited badly)
    2    a fixture could not run: malformed, a step kind this version does
         not know, a capture used before it is set, a send over
         MAX_FRAME_BYTES, a newer fixture format, a seed that would not
         import; or a bad command line
";

/// The help page of a subcommand, when it has one of its own.
fn subcommand_help(subcommand: Option<&str>) -> Option<&'static str> {
    match subcommand {
        Some("ingest") => Some(INGEST_HELP),
        Some("cluster") => Some(crate::admin::cluster::HELP),
        Some("replay") => Some(REPLAY_HELP),
        _ => None,
    }
}

/// A one-line usage error.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "alayasiki-mcp: {} (see --help)", self.0)
    }
}

/// Flags and positional arguments as given, before they are checked
/// against the subcommand.
#[derive(Default)]
struct Given {
    data_dir: Option<PathBuf>,
    tenant: Option<String>,
    top_k: Option<u32>,
    forget: Vec<ForgetBy>,
    seed: Option<PathBuf>,
    format: Option<replay::Format>,
    out: Option<PathBuf>,
    deterministic: bool,
    ui: bool,
    ui_bind: Option<SocketAddr>,
    bind: Option<SocketAddr>,
    positional: Vec<OsString>,
}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // `cluster` has actions and flags of its own.
    if args.first().is_some_and(|a| a == "cluster") {
        let rest = args[1..].to_vec();
        if rest.iter().any(|a| a == "--help" || a == "-h") {
            return Ok(Command::SubcommandHelp(crate::admin::cluster::HELP));
        }
        return crate::admin::cluster::parse(rest)
            .map(Command::Cluster)
            .map_err(UsageError);
    }
    let mut parser = lexopt::Parser::from_args(args);
    let mut given = Given::default();
    let mut subcommand: Option<String> = None;
    loop {
        let arg = parser.next().map_err(|e| UsageError(e.to_string()))?;
        let Some(arg) = arg else { break };
        match arg {
            Short('h') | Long("help") => {
                return Ok(match subcommand_help(subcommand.as_deref()) {
                    Some(page) => Command::SubcommandHelp(page),
                    None => Command::Help,
                })
            }
            Short('V') | Long("version") => return Ok(Command::Version),
            Long("data-dir") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--data-dir needs a directory".into()))?;
                if value.is_empty() {
                    return Err(UsageError("--data-dir needs a non-empty directory".into()));
                }
                given.data_dir = Some(PathBuf::from(value));
            }
            Long("tenant") => given.tenant = Some(text_value(&mut parser, "--tenant")?),
            Long("top-k") => {
                let v = text_value(&mut parser, "--top-k")?;
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (MIN_TOP_K..=MAX_TOP_K).contains(n))
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--top-k must be an integer from {MIN_TOP_K} to {MAX_TOP_K}"
                        ))
                    })?;
                given.top_k = Some(n);
            }
            Long("seed") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--seed needs an export file".into()))?;
                given.seed = Some(PathBuf::from(value));
            }
            Long("deterministic") => given.deterministic = true,
            Long("ui") => given.ui = true,
            Long("ui-bind") => given.ui_bind = Some(bind_value(&mut parser, "--ui-bind")?),
            Long("bind") => given.bind = Some(bind_value(&mut parser, "--bind")?),
            Long("out") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--out needs a file".into()))?;
                given.out = Some(PathBuf::from(value));
            }
            Long("format") => {
                let v = text_value(&mut parser, "--format")?;
                given.format = Some(
                    replay::Format::parse(&v)
                        .ok_or_else(|| UsageError("--format is text, junit or tap".into()))?,
                );
            }
            Long("id") => given
                .forget
                .push(ForgetBy::Id(text_value(&mut parser, "--id")?)),
            Long("key") => given
                .forget
                .push(ForgetBy::Key(text_value(&mut parser, "--key")?)),
            Long("source") => given
                .forget
                .push(ForgetBy::Source(text_value(&mut parser, "--source")?)),
            Value(v)
                if subcommand.is_none()
                    && given.positional.is_empty()
                    && SUBCOMMANDS.contains(&v.to_string_lossy().as_ref()) =>
            {
                subcommand = Some(v.to_string_lossy().into_owned());
            }
            Value(v) => given.positional.push(v),
            other => return Err(UsageError(format!("unknown flag {}", describe(&other)))),
        }
    }
    build(subcommand.as_deref(), given)
}

/// Checks the given flags and arguments against the subcommand.
fn build(subcommand: Option<&str>, given: Given) -> Result<Command, UsageError> {
    let name = subcommand.unwrap_or("the server");
    let refuse = |flag: &str| UsageError(format!("{flag} does not apply to {name}"));
    let takes_tenant = matches!(
        subcommand,
        Some("ingest" | "query" | "forget" | "export" | "import")
    );
    if given.tenant.is_some() && !takes_tenant {
        return Err(refuse("--tenant"));
    }
    if given.top_k.is_some() && subcommand != Some("query") {
        return Err(refuse("--top-k"));
    }
    if !given.forget.is_empty() && subcommand != Some("forget") {
        let flag = match given.forget[0] {
            ForgetBy::Id(_) => "--id",
            ForgetBy::Key(_) => "--key",
            ForgetBy::Source(_) => "--source",
        };
        return Err(refuse(flag));
    }
    if given.seed.is_some() && !matches!(subcommand, Some("replay" | "record")) {
        return Err(refuse("--seed"));
    }
    if given.format.is_some() && subcommand != Some("replay") {
        return Err(refuse("--format"));
    }
    if given.out.is_some() && subcommand != Some("record") {
        return Err(refuse("--out"));
    }
    if given.deterministic && !matches!(subcommand, None | Some("replay")) {
        return Err(refuse("--deterministic"));
    }
    if given.ui && subcommand.is_some() {
        return Err(refuse("--ui"));
    }
    if given.ui_bind.is_some() && subcommand.is_some() {
        return Err(refuse("--ui-bind"));
    }
    if given.bind.is_some() && subcommand != Some("ui") {
        return Err(refuse("--bind"));
    }
    let Given {
        data_dir,
        tenant,
        top_k,
        mut forget,
        seed,
        format,
        out,
        deterministic,
        ui,
        ui_bind,
        bind,
        mut positional,
    } = given;
    let no_positional = |positional: &[OsString]| match positional.first() {
        None => Ok(()),
        Some(v) => Err(UsageError(format!(
            "unexpected argument {:?}",
            v.to_string_lossy()
        ))),
    };
    Ok(match subcommand {
        None => {
            no_positional(&positional)?;
            Command::Serve {
                data_dir,
                deterministic,
                ui,
                ui_bind,
            }
        }
        Some("ui") => {
            no_positional(&positional)?;
            Command::Ui { data_dir, bind }
        }
        Some("reindex") => {
            no_positional(&positional)?;
            Command::Reindex { data_dir }
        }
        Some("compact") => {
            no_positional(&positional)?;
            Command::Compact { data_dir }
        }
        Some("retry-failed") => {
            no_positional(&positional)?;
            Command::RetryFailed { data_dir }
        }
        Some("export") => {
            no_positional(&positional)?;
            Command::Export { data_dir, tenant }
        }
        Some("ingest") => {
            if positional.is_empty() {
                return Err(UsageError("ingest needs at least one PATH".into()));
            }
            Command::Ingest {
                data_dir,
                tenant,
                paths: positional.into_iter().map(PathBuf::from).collect(),
            }
        }
        Some("import") => {
            if positional.len() != 1 {
                return Err(UsageError("import needs exactly one FILE".into()));
            }
            Command::Import {
                data_dir,
                tenant,
                file: PathBuf::from(positional.remove(0)),
            }
        }
        Some("query") => {
            let words: Vec<String> = positional
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let text = words.join(" ");
            if text.trim().is_empty() {
                return Err(UsageError("query needs the question as TEXT".into()));
            }
            Command::Query {
                data_dir,
                tenant,
                text,
                top_k,
            }
        }
        Some("forget") => {
            no_positional(&positional)?;
            if forget.len() != 1 {
                return Err(UsageError(
                    "forget needs exactly one of --id, --key or --source".into(),
                ));
            }
            Command::Forget {
                data_dir,
                tenant,
                by: forget.remove(0),
            }
        }
        Some("replay") => {
            if data_dir.is_some() {
                return Err(refuse("--data-dir"));
            }
            if positional.is_empty() {
                return Err(UsageError("replay needs at least one fixture FILE".into()));
            }
            Command::Replay(replay::Options {
                files: positional.into_iter().map(PathBuf::from).collect(),
                seed,
                format: format.unwrap_or(replay::Format::Text),
                deterministic,
            })
        }
        Some("record") => {
            no_positional(&positional)?;
            if data_dir.is_some() {
                return Err(refuse("--data-dir"));
            }
            Command::Record(replay::record::options(out, seed).map_err(UsageError)?)
        }
        Some(other) => return Err(UsageError(format!("unknown subcommand {other}"))),
    })
}

/// The value of a flag that takes non-empty UTF-8 text.
fn text_value(parser: &mut lexopt::Parser, flag: &str) -> Result<String, UsageError> {
    let value = parser
        .value()
        .map_err(|_| UsageError(format!("{flag} needs a value")))?;
    let value = value
        .into_string()
        .map_err(|_| UsageError(format!("{flag} must be valid UTF-8")))?;
    if value.trim().is_empty() {
        return Err(UsageError(format!("{flag} needs a non-empty value")));
    }
    Ok(value)
}

/// The address a `--bind` or `--ui-bind` flag names.
fn bind_value(parser: &mut lexopt::Parser, flag: &str) -> Result<SocketAddr, UsageError> {
    let text = text_value(parser, flag)?;
    crate::config::parse_ui_bind(&text).ok_or_else(|| {
        UsageError(format!(
            "{flag} {text:?} is not a port or an IP address with a port, such as 127.0.0.1:8765"
        ))
    })
}

/// Subcommand names (the first positional argument).
const SUBCOMMANDS: &[&str] = &[
    "ui",
    "reindex",
    "retry-failed",
    "compact",
    "ingest",
    "query",
    "forget",
    "export",
    "import",
    "replay",
    "record",
];

fn describe(arg: &lexopt::Arg<'_>) -> String {
    match arg {
        lexopt::Arg::Short(c) => format!("-{c}"),
        lexopt::Arg::Long(l) => format!("--{l}"),
        lexopt::Arg::Value(v) => v.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_serves_with_default_dir() {
        assert_eq!(
            parse(Vec::<String>::new()),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: false,
                ui_bind: None,
            })
        );
        assert_eq!(
            parse(["--deterministic"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: true,
                ui: false,
                ui_bind: None,
            })
        );
        assert!(parse(["export", "--deterministic"]).is_err());
    }

    #[test]
    fn data_dir_is_taken_in_both_spellings() {
        let want = Ok(Command::Serve {
            data_dir: Some(PathBuf::from("/tmp/m")),
            deterministic: false,
            ui: false,
            ui_bind: None,
        });
        assert_eq!(parse(["--data-dir", "/tmp/m"]), want);
        assert_eq!(parse(["--data-dir=/tmp/m"]), want);
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(parse(["--help"]), Ok(Command::Help));
        assert_eq!(parse(["-V"]), Ok(Command::Version));
    }

    #[test]
    fn subcommands_take_the_data_dir_too() {
        assert_eq!(
            parse(["reindex", "--data-dir", "/m"]),
            Ok(Command::Reindex {
                data_dir: Some(PathBuf::from("/m"))
            })
        );
        assert_eq!(parse(["compact"]), Ok(Command::Compact { data_dir: None }));
        assert_eq!(
            parse(["retry-failed"]),
            Ok(Command::RetryFailed { data_dir: None })
        );
        assert!(parse(["frobnicate"]).is_err());
        assert!(parse(["reindex", "compact"]).is_err());
    }

    #[test]
    fn file_subcommands_take_their_arguments() {
        assert_eq!(
            parse(["ingest", "a", "b/c", "--tenant", "t"]),
            Ok(Command::Ingest {
                data_dir: None,
                tenant: Some("t".into()),
                paths: vec![PathBuf::from("a"), PathBuf::from("b/c")],
            })
        );
        assert_eq!(
            parse(["query", "what", "is", "x?", "--top-k", "3"]),
            Ok(Command::Query {
                data_dir: None,
                tenant: None,
                text: "what is x?".into(),
                top_k: Some(3),
            })
        );
        assert_eq!(
            parse(["forget", "--source", "s", "--data-dir", "/m"]),
            Ok(Command::Forget {
                data_dir: Some(PathBuf::from("/m")),
                tenant: None,
                by: ForgetBy::Source("s".into()),
            })
        );
        assert_eq!(
            parse(["import", "m.jsonl"]),
            Ok(Command::Import {
                data_dir: None,
                tenant: None,
                file: PathBuf::from("m.jsonl"),
            })
        );
        assert_eq!(
            parse(["export"]),
            Ok(Command::Export {
                data_dir: None,
                tenant: None
            })
        );
        // A positional that names a subcommand is text after the first.
        assert!(matches!(
            parse(["ingest", "compact"]),
            Ok(Command::Ingest { .. })
        ));
    }

    #[test]
    fn file_subcommands_refuse_what_does_not_apply() {
        assert!(parse(["ingest"]).is_err());
        assert!(parse(["query"]).is_err());
        assert!(parse(["query", "x", "--top-k", "0"]).is_err());
        assert!(parse(["query", "x", "--top-k", "101"]).is_err());
        assert!(parse(["forget"]).is_err());
        assert!(parse(["forget", "--id", "a", "--key", "b"]).is_err());
        assert!(parse(["forget", "--id", ""]).is_err());
        assert!(parse(["import"]).is_err());
        assert!(parse(["import", "a", "b"]).is_err());
        assert!(parse(["export", "extra"]).is_err());
        let err = parse(["compact", "--tenant", "t"]).unwrap_err();
        assert!(err.0.contains("--tenant"), "{err}");
        assert!(parse(["--tenant", "t"]).is_err());
        assert!(parse(["ingest", "a", "--top-k", "3"]).is_err());
        assert!(parse(["query", "a", "--id", "x"]).is_err());
    }

    #[test]
    fn ingest_has_its_own_help_with_exit_statuses() {
        assert_eq!(
            parse(["ingest", "--help"]),
            Ok(Command::SubcommandHelp(INGEST_HELP))
        );
        assert_eq!(parse(["--help", "ingest"]), Ok(Command::Help));
        assert_eq!(parse(["query", "-h"]), Ok(Command::Help));
        // The figures quoted are the constants' own.
        let limit = format!(
            "MAX_CONTENT_BYTES ({} MiB)",
            crate::limits::MAX_CONTENT_BYTES >> 20
        );
        assert!(INGEST_HELP.contains(&limit), "{limit}");
        for signal in [
            crate::transport::signals::SIGINT,
            crate::transport::signals::SIGTERM,
        ] {
            let status = format!("\n    {}  interrupted", SIGNAL_EXIT_BASE + signal);
            assert!(INGEST_HELP.contains(&status), "{status}");
        }
    }

    #[test]
    fn the_memory_browser_flags_belong_to_the_server_and_ui() {
        assert_eq!(
            parse(["--ui"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: true,
                ui_bind: None,
            })
        );
        assert_eq!(
            parse(["--ui-bind", "8765"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: false,
                ui_bind: Some("127.0.0.1:8765".parse().unwrap()),
            })
        );
        assert_eq!(
            parse(["ui", "--data-dir", "/m", "--bind", "[::1]:0"]),
            Ok(Command::Ui {
                data_dir: Some(PathBuf::from("/m")),
                bind: Some("[::1]:0".parse().unwrap()),
            })
        );
        assert_eq!(
            parse(["ui"]),
            Ok(Command::Ui {
                data_dir: None,
                bind: None
            })
        );
        assert!(parse(["ui", "--ui"]).is_err());
        assert!(parse(["export", "--ui-bind", "80"]).is_err());
        assert!(parse(["--bind", "80"]).is_err());
        assert!(parse(["ui", "extra"]).is_err());
        let err = parse(["--ui-bind", "localhost"]).unwrap_err();
        assert!(err.0.contains("--ui-bind"), "{err}");
    }

    #[test]
    fn unknown_flag_is_named() {
        let err = parse(["--frobnicate"]).unwrap_err();
        assert!(err.0.contains("--frobnicate"), "{err}");
    }

    #[test]
    fn missing_value_is_named() {
        let err = parse(["--data-dir"]).unwrap_err();
        assert!(err.0.contains("--data-dir"), "{err}");
    }
}
