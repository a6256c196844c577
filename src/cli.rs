//! Command-line parsing for `alayasiki-mcp`.
//!
//! Owns the flags and the help text; knows nothing about stores or protocols.
//! `--help` and `--version` are answered from here, before anything is
//! opened. A bad flag is one line on stderr naming it, and exit status 2.

use std::ffi::OsString;
use std::path::PathBuf;

/// Exit status for usage errors (bad flags or values), as is customary.
pub const USAGE_EXIT: i32 = 2;

/// What the user asked the binary to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Serve MCP on stdio.
    Serve {
        data_dir: Option<PathBuf>,
    },
    /// Re-embed everything with the configured embedder.
    Reindex {
        data_dir: Option<PathBuf>,
    },
    /// Rewrite the vector files without deleted chunks' slots.
    Compact {
        data_dir: Option<PathBuf>,
    },
    Help,
    Version,
}

pub const HELP: &str = "\
alayasiki-mcp: local knowledge memory for AI agents, served over MCP on stdio.

USAGE:
    alayasiki-mcp [--data-dir DIR]            serve MCP on stdio
    alayasiki-mcp reindex [--data-dir DIR]    re-embed everything with the
                                              configured embedder
    alayasiki-mcp compact [--data-dir DIR]    rewrite vector files without
                                              deleted chunks

OPTIONS:
    --data-dir DIR   Where the memory lives (created owner-only if missing).
                     Default: $ALAYASIKI_DATA_DIR, else $HOME/.alayasiki-mcp
                     (%USERPROFILE%\\.alayasiki-mcp on Windows).
    -h, --help       Print this help and exit.
    -V, --version    Print the version and exit.

ENVIRONMENT:
    ALAYASIKI_DATA_DIR      data directory (overridden by --data-dir)
    ALAYASIKI_MCP_TENANT    tenant of the stdio caller (default: local)
    ALAYASIKI_MCP_SUBJECT   subject of the stdio caller (default: local-agent)
    ALAYASIKI_DURABILITY    full (default: fsync every commit) or normal
    ALAYASIKI_LOG           error, warn, info (default), debug, trace, off
    ALAYASIKI_EMBED_URL     use an HTTP embedding server instead of the
                            built-in model (see README: Embeddings)

The server reads newline-delimited JSON-RPC on stdin and writes only protocol
messages to stdout; logs go to stderr. One process owns a data directory; to
share one memory between clients, run alayasiki-api and connect over SSE.
";

/// A one-line usage error.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "alayasiki-mcp: {} (see --help)", self.0)
    }
}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut data_dir = None;
    let mut subcommand: Option<String> = None;
    loop {
        let arg = parser.next().map_err(|e| UsageError(e.to_string()))?;
        let Some(arg) = arg else { break };
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Short('V') | Long("version") => return Ok(Command::Version),
            Long("data-dir") => {
                let value = parser
                    .value()
                    .map_err(|_| UsageError("--data-dir needs a directory".into()))?;
                if value.is_empty() {
                    return Err(UsageError("--data-dir needs a non-empty directory".into()));
                }
                data_dir = Some(PathBuf::from(value));
            }
            Value(v)
                if subcommand.is_none() && SUBCOMMANDS.contains(&v.to_string_lossy().as_ref()) =>
            {
                subcommand = Some(v.to_string_lossy().into_owned());
            }
            Value(v) => {
                return Err(UsageError(format!(
                    "unexpected argument {:?}",
                    v.to_string_lossy()
                )))
            }
            other => return Err(UsageError(format!("unknown flag {}", describe(&other)))),
        }
    }
    Ok(match subcommand.as_deref() {
        Some("reindex") => Command::Reindex { data_dir },
        Some("compact") => Command::Compact { data_dir },
        _ => Command::Serve { data_dir },
    })
}

/// Subcommand names (the first positional argument).
const SUBCOMMANDS: &[&str] = &["reindex", "compact"];

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
            Ok(Command::Serve { data_dir: None })
        );
    }

    #[test]
    fn data_dir_is_taken_in_both_spellings() {
        let want = Ok(Command::Serve {
            data_dir: Some(PathBuf::from("/tmp/m")),
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
        assert!(parse(["frobnicate"]).is_err());
        assert!(parse(["reindex", "compact"]).is_err());
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
