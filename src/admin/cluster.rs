//! `alayasiki-mcp cluster status|push|pull`: an rqlite cluster seen from
//! the command line, and a data directory copied into one and back.
//!
//! The cluster's address comes from `--cluster ADDR` or, so that a
//! password stays out of the process list, `ALAYASIKI_CLUSTER`. `push`
//! and `pull` take the data directory's owner lock, as every subcommand
//! does, and need a cluster no server is writing to. A push founds the
//! cluster's memory, vector rows included, for `alayasiki-api --store`
//! nodes to join; a pulled directory is a memory of its own again, its
//! documents re-embedded before the command ends.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::{self, Config};
use crate::limits::{CLUSTER_LEADER_WAIT, CLUSTER_REQUEST_TIMEOUT};
use crate::store::cluster::{copy, node};
use crate::store::cluster::{ClusterAddress, ClusterClient};
use crate::store::owner::{OwnerError, OwnerLock};

/// The environment variable that names the cluster when `--cluster` does not.
pub const CLUSTER_ENV: &str = "ALAYASIKI_CLUSTER";

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The nodes, the leader, and the memory the cluster holds.
    Status,
    /// The data directory into the (empty) cluster.
    Push,
    /// The cluster into the (new) data directory.
    Pull,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub action: Action,
    pub cluster: Option<String>,
    pub data_dir: Option<PathBuf>,
}

pub const HELP: &str = "\
alayasiki-mcp cluster: an rqlite cluster, and a data directory copied into one and back

Usage:
  alayasiki-mcp cluster status [--cluster ADDR]
  alayasiki-mcp cluster push [--data-dir DIR] [--cluster ADDR]
  alayasiki-mcp cluster pull [--data-dir DIR] [--cluster ADDR]

  status   the cluster's nodes, its leader and the schema of the memory it holds
  push     copy the data directory into an empty cluster, then check every table
  pull     copy the cluster into a new data directory, check every table, re-embed

ADDR is rqlite://[user:password@]host:port[,host:port...] (rqlites:// for HTTPS,
?ca=PATH to trust only that CA); ALAYASIKI_CLUSTER gives it when --cluster does not.
No server may be writing to either side while a copy runs.
";

/// Parses the arguments after `cluster`.
pub fn parse(args: Vec<OsString>) -> Result<Options, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut action = None;
    let mut cluster = None;
    let mut data_dir = None;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("cluster") => {
                let v = parser.value().map_err(|_| "--cluster needs an address")?;
                cluster = Some(v.into_string().map_err(|_| "--cluster must be UTF-8")?);
            }
            Long("data-dir") => {
                let v = parser.value().map_err(|_| "--data-dir needs a directory")?;
                if v.is_empty() {
                    return Err("--data-dir needs a non-empty directory".into());
                }
                data_dir = Some(PathBuf::from(v));
            }
            Value(v) if action.is_none() => {
                action = Some(match v.to_string_lossy().as_ref() {
                    "status" => Action::Status,
                    "push" => Action::Push,
                    "pull" => Action::Pull,
                    other => return Err(format!("unknown cluster action {other:?}")),
                })
            }
            Value(v) => return Err(format!("unexpected argument {:?}", v.to_string_lossy())),
            Long(flag) => return Err(format!("unknown flag --{flag}")),
            Short(c) => return Err(format!("unknown flag -{c}")),
        }
    }
    let action = action.ok_or("cluster needs an action: status, push or pull")?;
    if action == Action::Status && data_dir.is_some() {
        return Err("--data-dir does not apply to cluster status".into());
    }
    Ok(Options {
        action,
        cluster,
        data_dir,
    })
}

/// Runs the action, reporting on stderr (status on stdout).
pub fn run(options: Options) -> ExitCode {
    crate::logging::init();
    let fail = |msg: String| {
        eprintln!("alayasiki-mcp cluster: {msg}");
        ExitCode::from(crate::serve::EXIT_FAILURE)
    };
    let text = match options.cluster.or_else(|| std::env::var(CLUSTER_ENV).ok()) {
        Some(t) => t,
        None => {
            eprintln!(
                "alayasiki-mcp cluster: name the cluster with --cluster ADDR or {CLUSTER_ENV}"
            );
            return ExitCode::from(crate::cli::USAGE_EXIT as u8);
        }
    };
    let address = match ClusterAddress::parse(&text) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("alayasiki-mcp cluster: {e}");
            return ExitCode::from(crate::cli::USAGE_EXIT as u8);
        }
    };
    let client = match ClusterClient::new(address, CLUSTER_REQUEST_TIMEOUT) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    match options.action {
        Action::Status => status(&client).unwrap_or_else(fail),
        Action::Push | Action::Pull => {
            let config = match Config::resolve(options.data_dir, config::DEFAULT_DIR_NAME) {
                Ok(c) => c,
                Err(e) => return fail(e.to_string()),
            };
            let dir = config.data_dir;
            if options.action == Action::Pull {
                if let Err(e) = config::ensure_data_dir(&dir) {
                    return fail(e);
                }
            } else if let Err(e) = config::require_store(&dir, crate::store::DB_FILE) {
                return fail(e);
            }
            let owner = match OwnerLock::acquire(&dir, "alayasiki-mcp cluster") {
                Ok(o) => o,
                Err(e @ OwnerError::Held { .. }) => {
                    eprintln!("alayasiki-mcp cluster: {e}");
                    return ExitCode::from(crate::serve::EXIT_DIR_IN_USE);
                }
                Err(e) => return fail(e.to_string()),
            };
            let started = std::time::Instant::now();
            if let Err(e) = client.await_leader(started + CLUSTER_LEADER_WAIT) {
                return fail(e.to_string());
            }
            let copied = if options.action == Action::Push {
                let embedder = match crate::embed::embedder::from_env() {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                let spec = crate::service::vector_spec(embedder.as_ref());
                // The directory stays a memory of its own: once the
                // memory is ready it founds nothing more (a push that
                // stopped before is finished by the next).
                node::found_memory(&dir, &client, &spec, config.durability).map(|(_, c)| {
                    let _ = std::fs::remove_file(dir.join(node::FOUNDING_FILE));
                    c
                })
            } else {
                copy::pull_dir(&client, &dir)
            };
            let copied = match copied {
                Ok(c) => c,
                Err(e) => return fail(e.to_string()),
            };
            eprintln!(
                "cluster {}: {} tables, {} rows copied and checked in {:.1}s",
                if options.action == Action::Push {
                    "push"
                } else {
                    "pull"
                },
                copied.tables,
                copied.rows,
                started.elapsed().as_secs_f64()
            );
            if options.action == Action::Pull {
                // Vector files are not part of the copy: build them.
                drop(owner);
                return super::reindex(Some(dir), true);
            }
            ExitCode::SUCCESS
        }
    }
}

fn status(client: &ClusterClient) -> Result<ExitCode, String> {
    let nodes = client.nodes().map_err(|e| e.to_string())?;
    crate::cli::stdout::outln!("cluster: {}", client.address().redacted());
    for n in &nodes {
        crate::cli::stdout::outln!(
            "  {:<12} {:<28} {:<9} {}{}",
            n.id,
            n.api_addr,
            if n.voter { "voter" } else { "non-voter" },
            if n.reachable {
                "reachable"
            } else {
                "UNREACHABLE"
            },
            if n.leader { ", leader" } else { "" }
        );
    }
    if !nodes.iter().any(|n| n.leader) {
        crate::cli::stdout::outln!("leader: none (no quorum: writes are refused)");
        return Ok(ExitCode::from(crate::serve::EXIT_FAILURE));
    }
    match copy::cluster_schema_version(client) {
        Ok(0) => crate::cli::stdout::outln!("memory: none"),
        Ok(v) => crate::cli::stdout::outln!("memory: schema version {v}"),
        Err(e) => crate::cli::stdout::outln!("memory: unknown ({e})"),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn actions_and_their_flags() {
        assert_eq!(
            parse(args(&[
                "push",
                "--data-dir",
                "/m",
                "--cluster",
                "rqlite://h:4001"
            ])),
            Ok(Options {
                action: Action::Push,
                cluster: Some("rqlite://h:4001".into()),
                data_dir: Some(PathBuf::from("/m")),
            })
        );
        assert_eq!(parse(args(&["status"])).unwrap().action, Action::Status);
        assert_eq!(parse(args(&["pull"])).unwrap().action, Action::Pull);
        for bad in [
            &[][..],
            &["sync"],
            &["status", "--data-dir", "/m"],
            &["push", "extra"],
            &["push", "--tenant", "t"],
            &["pull", "--data-dir", ""],
        ] {
            assert!(parse(args(bad)).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn the_main_parser_hands_cluster_over() {
        assert!(matches!(
            crate::cli::parse(["cluster", "status"]),
            Ok(crate::cli::Command::Cluster(Options {
                action: Action::Status,
                ..
            }))
        ));
        assert!(matches!(
            crate::cli::parse(["cluster", "--help"]),
            Ok(crate::cli::Command::SubcommandHelp(HELP))
        ));
        assert!(crate::cli::parse(["cluster"]).is_err());
    }
}
