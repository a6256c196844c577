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

use crate::admin::Task;
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
    /// A subcommand that runs on a memory (`ingest`, `query`, `forget`,
    /// `export`, `import`, `status`, `retry-failed`, `compact`): through
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
    through_owner: bool,
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
            Long("in-process") => given.in_process = true,
            Long("ui") => given.ui = true,
            Long("ui-bind") => given.ui_bind = Some(bind_value(&mut parser, "--ui-bind")?),
            Long("bind") => given.bind = Some(bind_value(&mut parser, "--bind")?),
            Long("allow-remote") => given.allow_remote = true,
            Long("json") => given.json = true,
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
        Some("ingest" | "query" | "forget" | "export" | "import" | "status")
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
    if given.in_process && matches!(subcommand, Some("owner" | "replay" | "record")) {
        return Err(refuse("--in-process"));
    }
    if given.json && subcommand != Some("status") {
        return Err(refuse("--json"));
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
        through_owner,
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
            run(Task::Status { tenant, json })
        }
        Some("ingest") => {
            if positional.is_empty() {
                return Err(UsageError("ingest needs at least one PATH".into()));
            }
            run(Task::Ingest {
                tenant,
                paths: positional.into_iter().map(PathBuf::from).collect(),
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

    /// A task on the default directory, through the owner.
    fn run(task: Task) -> Command {
        Command::Run {
            data_dir: None,
            task,
            in_process: false,
        }
    }

    #[test]
    fn no_arguments_serves_with_default_dir() {
        assert_eq!(
            parse(Vec::<String>::new()),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: false,
                ui_bind: None,
                in_process: false,
                allow_remote: false,
            })
        );
        assert_eq!(
            parse(["--deterministic"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: true,
                ui: false,
                ui_bind: None,
                in_process: false,
                allow_remote: false,
            })
        );
        assert!(parse(["export", "--deterministic"]).is_err());
    }

    #[test]
    fn in_process_belongs_to_the_server_and_owner_is_a_subcommand() {
        assert_eq!(
            parse(["--in-process"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: false,
                ui_bind: None,
                allow_remote: false,
                in_process: true,
            })
        );
        assert!(parse(["record", "--in-process"]).is_err());
        assert_eq!(
            parse(["owner", "--data-dir", "/m"]),
            Ok(Command::Owner {
                data_dir: Some(PathBuf::from("/m"))
            })
        );
        assert!(parse(["owner", "extra"]).is_err());
    }

    #[test]
    fn data_dir_is_taken_in_both_spellings() {
        let want = Ok(Command::Serve {
            data_dir: Some(PathBuf::from("/tmp/m")),
            deterministic: false,
            ui: false,
            ui_bind: None,
            in_process: false,
            allow_remote: false,
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
                data_dir: Some(PathBuf::from("/m")),
                in_process: false,
            })
        );
        assert_eq!(parse(["compact"]), Ok(run(Task::Compact)));
        assert_eq!(parse(["retry-failed"]), Ok(run(Task::RetryFailed)));
        assert_eq!(
            parse(["status", "--json", "--tenant", "t"]),
            Ok(run(Task::Status {
                tenant: Some("t".into()),
                json: true
            }))
        );
        assert_eq!(
            parse(["compact", "--in-process"]),
            Ok(Command::Run {
                data_dir: None,
                task: Task::Compact,
                in_process: true
            })
        );
        assert!(parse(["query", "x", "--json"]).is_err());
        assert!(parse(["owner", "--in-process"]).is_err());
        assert!(parse(["frobnicate"]).is_err());
        assert!(parse(["reindex", "compact"]).is_err());
    }

    #[test]
    fn file_subcommands_take_their_arguments() {
        assert_eq!(
            parse(["ingest", "a", "b/c", "--tenant", "t"]),
            Ok(run(Task::Ingest {
                tenant: Some("t".into()),
                paths: vec![PathBuf::from("a"), PathBuf::from("b/c")],
            }))
        );
        assert_eq!(
            parse(["query", "what", "is", "x?", "--top-k", "3"]),
            Ok(run(Task::Query {
                tenant: None,
                text: "what is x?".into(),
                top_k: Some(3),
            }))
        );
        assert_eq!(
            parse(["forget", "--source", "s", "--data-dir", "/m"]),
            Ok(Command::Run {
                data_dir: Some(PathBuf::from("/m")),
                task: Task::Forget {
                    tenant: None,
                    by: ForgetBy::Source("s".into()),
                },
                in_process: false,
            })
        );
        assert_eq!(
            parse(["import", "m.jsonl"]),
            Ok(run(Task::Import {
                tenant: None,
                file: PathBuf::from("m.jsonl"),
            }))
        );
        assert_eq!(parse(["export"]), Ok(run(Task::Export { tenant: None })));
        // A positional that names a subcommand is text after the first.
        assert!(matches!(
            parse(["ingest", "compact"]),
            Ok(Command::Run {
                task: Task::Ingest { .. },
                ..
            })
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
    fn query_forget_export_and_import_have_their_own_help_quoting_their_limits() {
        for (name, page) in [
            ("query", QUERY_HELP),
            ("forget", FORGET_HELP),
            ("export", EXPORT_HELP),
            ("import", IMPORT_HELP),
        ] {
            assert_eq!(parse([name, "--help"]), Ok(Command::SubcommandHelp(page)));
            assert_eq!(parse([name, "-h"]), Ok(Command::SubcommandHelp(page)));
            assert!(
                page.starts_with(&format!("alayasiki-mcp {name}: ")),
                "{page}"
            );
            for status in ["\n    0 ", "\n    1 ", "\n    2 ", "\n    3 "] {
                assert!(page.contains(status), "{name}: no exit status{status}");
            }
        }
        let query_limit = format!("MAX_QUERY_BYTES ({})", crate::limits::MAX_QUERY_BYTES);
        assert!(QUERY_HELP.contains(&query_limit), "{query_limit}");
        let settle = format!(
            "FORGET_SETTLE_MS ({} s)",
            crate::limits::FORGET_SETTLE_MS / 1000
        );
        assert!(FORGET_HELP.contains(&settle), "{settle}");
        let top_k = format!(
            "({}-{}, default {})",
            MIN_TOP_K,
            MAX_TOP_K,
            crate::limits::DEFAULT_TOP_K
        );
        assert!(QUERY_HELP.contains(&top_k), "{top_k}");
    }

    #[test]
    fn ingest_has_its_own_help_with_exit_statuses() {
        assert_eq!(
            parse(["ingest", "--help"]),
            Ok(Command::SubcommandHelp(INGEST_HELP))
        );
        assert_eq!(parse(["--help", "ingest"]), Ok(Command::Help));
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
                in_process: false,
                allow_remote: false,
            })
        );
        assert_eq!(
            parse(["--ui-bind", "8765"]),
            Ok(Command::Serve {
                data_dir: None,
                deterministic: false,
                ui: false,
                ui_bind: Some("127.0.0.1:8765".parse().unwrap()),
                in_process: false,
                allow_remote: false,
            })
        );
        assert_eq!(
            parse(["ui", "--data-dir", "/m", "--bind", "[::1]:0"]),
            Ok(Command::Ui {
                data_dir: Some(PathBuf::from("/m")),
                bind: Some("[::1]:0".parse().unwrap()),
                allow_remote: false,
                in_process: false,
            })
        );
        assert_eq!(
            parse(["ui"]),
            Ok(Command::Ui {
                data_dir: None,
                bind: None,
                allow_remote: false,
                in_process: false,
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
    fn a_memory_browser_other_machines_can_reach_needs_allow_remote() {
        for args in [
            &["ui", "--bind", "0.0.0.0:0"][..],
            &["ui", "--bind", "192.0.2.7:80"],
            &["ui", "--bind", "[::]:0"],
            &["--ui-bind", "0.0.0.0:8765"],
        ] {
            let err = parse(args.iter().copied()).unwrap_err();
            assert!(err.0.contains("--allow-remote"), "{args:?}: {err}");
        }
        assert_eq!(
            parse(["ui", "--bind", "0.0.0.0:0", "--allow-remote"]),
            Ok(Command::Ui {
                data_dir: None,
                bind: Some("0.0.0.0:0".parse().unwrap()),
                allow_remote: true,
                in_process: false,
            })
        );
        assert!(parse(["--allow-remote", "--ui-bind", "0.0.0.0:0"]).is_ok());
        // Loopback needs nothing; the flag belongs to the browser's commands.
        assert!(parse(["ui", "--bind", "127.0.0.1:0"]).is_ok());
        assert!(parse(["ui", "--bind", "[::1]:0"]).is_ok());
        let err = parse(["export", "--allow-remote"]).unwrap_err();
        assert!(err.0.contains("--allow-remote"), "{err}");
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
