//! Command-line parsing for `alayasiki-mcp`.
//!
//! Owns the flags and the help text; knows nothing about stores or protocols.
//! `--help` and `--version` are answered from here, before anything is
//! opened. A bad flag is one line on stderr naming it, and exit status 2.

mod help;
pub mod stdout;

use help::subcommand_help;
pub use help::{EXPORT_HELP, FORGET_HELP, HELP, IMPORT_HELP, INGEST_HELP, QUERY_HELP, REPLAY_HELP};

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::admin::version::Change;
use crate::admin::Task;
use crate::limits::{MAX_SUPERSEDES, MAX_TOP_K, MIN_TOP_K};
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
        /// `--allow-remote`: a bind other machines can reach is allowed.
        allow_remote: bool,
        /// `--in-process`: open the store in this process instead of
        /// reaching the directory's owner (also `ALAYASIKI_IN_PROCESS=1`).
        in_process: bool,
    },
    /// Own the data directory and serve its memory to local clients (what
    /// a client starts when no owner answers).
    Owner {
        data_dir: Option<PathBuf>,
    },
    /// Serve the memory browser until SIGINT or SIGTERM.
    Ui {
        data_dir: Option<PathBuf>,
        bind: Option<SocketAddr>,
        /// `--allow-remote`: a bind other machines can reach is allowed.
        allow_remote: bool,
        in_process: bool,
    },
    /// An rqlite cluster: its status, or a copy into it or out of it.
    Cluster(crate::admin::cluster::Options),
    /// Re-embed everything with the configured embedder.
    Reindex {
        data_dir: Option<PathBuf>,
        in_process: bool,
    },
    /// A subcommand that runs on a memory (`ingest`, `update`, `query`,
    /// `forget`, `export`, `import`, `status`, `retry-failed`, `compact`): through
    /// the directory's owner, or in this process with `--in-process`.
    Run {
        data_dir: Option<PathBuf>,
        task: Task,
        in_process: bool,
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForgetBy {
    Id(String),
    Key(String),
    Source(String),
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
    filter: Option<String>,
    include_history: bool,
    as_of: Option<i64>,
    forget: Vec<ForgetBy>,
    seed: Option<PathBuf>,
    format: Option<replay::Format>,
    out: Option<PathBuf>,
    deterministic: bool,
    in_process: bool,
    ui: bool,
    ui_bind: Option<SocketAddr>,
    bind: Option<SocketAddr>,
    allow_remote: bool,
    json: bool,
    duplicates: bool,
    through_owner: bool,
    /// `ingest PATH --supersedes ID`.
    supersedes: Vec<String>,
    /// `update ID`: what changes.
    change: Change,
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
            Long("as-of") => {
                let v = text_value(&mut parser, "--as-of")?;
                let at = (v.len() <= crate::limits::MAX_AS_OF_BYTES)
                    .then(|| crate::clock::parse_rfc3339(&v))
                    .flatten()
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--as-of must be an RFC 3339 time or a date (2024-03-01), at most \
                             {} bytes (MAX_AS_OF_BYTES)",
                            crate::limits::MAX_AS_OF_BYTES
                        ))
                    })?;
                given.as_of = Some(at);
            }
            Long("seed") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--seed needs an export file".into()))?;
                given.seed = Some(PathBuf::from(value));
            }
            Long("deterministic") => given.deterministic = true,
            Long("in-process") => given.in_process = true,
            Long("ui") => given.ui = true,
            Long("ui-bind") => given.ui_bind = Some(bind_value(&mut parser, "--ui-bind")?),
            Long("bind") => given.bind = Some(bind_value(&mut parser, "--bind")?),
            Long("allow-remote") => given.allow_remote = true,
            Long("json") => given.json = true,
            Long("filter") => given.filter = Some(text_value(&mut parser, "--filter")?),
            Long("include-history") => given.include_history = true,
            Long("duplicates") => given.duplicates = true,
            Long("through-owner") => given.through_owner = true,
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
            Long("supersedes") => given
                .supersedes
                .push(text_value(&mut parser, "--supersedes")?),
            Long("file") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--file needs a file".into()))?;
                if value.is_empty() {
                    return Err(UsageError("--file needs a non-empty path".into()));
                }
                given.change.file = Some(PathBuf::from(value));
            }
            Long("text") => given.change.text = Some(text_value(&mut parser, "--text")?),
            Long("metadata") => {
                let text = text_value(&mut parser, "--metadata")?;
                crate::admin::version::metadata_object(&text).map_err(UsageError)?;
                given.change.metadata = Some(text);
            }
            Long("title") => given.change.title = Some(text_value(&mut parser, "--title")?),
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
        Some("ingest" | "update" | "query" | "forget" | "export" | "import" | "status")
    );
    if given.tenant.is_some() && !takes_tenant {
        return Err(refuse("--tenant"));
    }
    if given.top_k.is_some() && subcommand != Some("query") {
        return Err(refuse("--top-k"));
    }
    if given.as_of.is_some() && subcommand != Some("query") {
        return Err(refuse("--as-of"));
    }
    if !given.forget.is_empty() && subcommand != Some("forget") {
        let flag = match given.forget[0] {
            ForgetBy::Id(_) => "--id",
            ForgetBy::Key(_) => "--key",
            ForgetBy::Source(_) => "--source",
        };
        return Err(refuse(flag));
    }
    if !given.supersedes.is_empty() && subcommand != Some("ingest") {
        return Err(refuse("--supersedes"));
    }
    if subcommand != Some("update") {
        let c = &given.change;
        for (flag, set) in [
            ("--file", c.file.is_some()),
            ("--text", c.text.is_some()),
            ("--metadata", c.metadata.is_some()),
            ("--title", c.title.is_some()),
        ] {
            if set {
                return Err(refuse(flag));
            }
        }
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
    if given.in_process && matches!(subcommand, Some("owner" | "replay" | "record")) {
        return Err(refuse("--in-process"));
    }
    if given.json && subcommand != Some("status") {
        return Err(refuse("--json"));
    }
    if given.duplicates && subcommand != Some("status") {
        return Err(refuse("--duplicates"));
    }
    if given.filter.is_some() && subcommand != Some("query") {
        return Err(refuse("--filter"));
    }
    if given.include_history && subcommand != Some("query") {
        return Err(refuse("--include-history"));
    }
    if given.through_owner && (subcommand != Some("replay") || given.deterministic) {
        return Err(if given.deterministic {
            UsageError("--through-owner and --deterministic exclude each other".into())
        } else {
            refuse("--through-owner")
        });
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
    if given.allow_remote && !matches!(subcommand, None | Some("ui")) {
        return Err(refuse("--allow-remote"));
    }
    // The memory browser's address, from either flag, is checked here so
    // that a remote one without --allow-remote is a bad command line.
    for (flag, bind) in [("--ui-bind", given.ui_bind), ("--bind", given.bind)] {
        if let Some(bind) = bind {
            crate::transport::loopback_ui::check_bind(bind, given.allow_remote)
                .map_err(|e| UsageError(format!("{flag}: {e}")))?;
        }
    }
    let Given {
        data_dir,
        tenant,
        top_k,
        filter,
        include_history,
        as_of,
        mut forget,
        seed,
        format,
        out,
        deterministic,
        in_process,
        ui,
        ui_bind,
        bind,
        allow_remote,
        json,
        duplicates,
        through_owner,
        supersedes,
        change,
        mut positional,
    } = given;
    let run = |task: Task| Command::Run {
        data_dir: data_dir.clone(),
        task,
        in_process,
    };
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
                in_process,
                allow_remote,
            }
        }
        Some("owner") => {
            no_positional(&positional)?;
            Command::Owner { data_dir }
        }
        Some("ui") => {
            no_positional(&positional)?;
            Command::Ui {
                data_dir,
                bind,
                allow_remote,
                in_process,
            }
        }
        Some("reindex") => {
            no_positional(&positional)?;
            Command::Reindex {
                data_dir,
                in_process,
            }
        }
        Some("compact") => {
            no_positional(&positional)?;
            run(Task::Compact)
        }
        Some("retry-failed") => {
            no_positional(&positional)?;
            run(Task::RetryFailed)
        }
        Some("export") => {
            no_positional(&positional)?;
            run(Task::Export { tenant })
        }
        Some("status") => {
            no_positional(&positional)?;
            run(Task::Status {
                tenant,
                json,
                duplicates,
            })
        }
        Some("ingest") => {
            if positional.is_empty() {
                return Err(UsageError("ingest needs at least one PATH".into()));
            }
            if !supersedes.is_empty() && positional.len() != 1 {
                return Err(UsageError(
                    "ingest --supersedes stores one file: give exactly one PATH".into(),
                ));
            }
            if supersedes.len() > MAX_SUPERSEDES {
                return Err(UsageError(format!(
                    "--supersedes names at most {MAX_SUPERSEDES} documents (MAX_SUPERSEDES)"
                )));
            }
            run(Task::Ingest {
                tenant,
                paths: positional.into_iter().map(PathBuf::from).collect(),
                supersedes,
            })
        }
        Some("update") => {
            if positional.len() != 1 {
                return Err(UsageError("update needs exactly one document ID".into()));
            }
            if change.file.is_some() && change.text.is_some() {
                return Err(UsageError("give --file or --text, not both".into()));
            }
            if change == Change::default() {
                return Err(UsageError(
                    "update needs something to change: --file, --text, --metadata or --title"
                        .into(),
                ));
            }
            let document_id = positional
                .remove(0)
                .into_string()
                .map_err(|_| UsageError("the document ID must be valid UTF-8".into()))?;
            run(Task::Update {
                tenant,
                document_id,
                change,
            })
        }
        Some("import") => {
            if positional.len() != 1 {
                return Err(UsageError("import needs exactly one FILE".into()));
            }
            run(Task::Import {
                tenant,
                file: PathBuf::from(positional.remove(0)),
            })
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
            run(Task::Query {
                tenant,
                text,
                top_k,
                filter,
                include_history,
                as_of,
            })
        }
        Some("forget") => {
            no_positional(&positional)?;
            if forget.len() != 1 {
                return Err(UsageError(
                    "forget needs exactly one of --id, --key or --source".into(),
                ));
            }
            run(Task::Forget {
                tenant,
                by: forget.remove(0),
            })
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
                through_owner,
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
    "owner",
    "ui",
    "reindex",
    "retry-failed",
    "compact",
    "status",
    "ingest",
    "update",
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
mod tests;
