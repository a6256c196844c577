//! A subcommand as a [`Task`]: what the user asked for, checked where the
//! user is, then run by the data directory's owner or in this process.
//!
//! [`run`] is the command-line side. It resolves the configuration, checks
//! what can be checked here (the paths exist, the question is not too long,
//! stdout is not a terminal for an export, a memory exists for commands
//! that read one), makes paths absolute (the owner's working directory is
//! not the user's), then sends the task to the owner ([`through_owner`])
//! or, with `--in-process` (or `ALAYASIKI_IN_PROCESS=1`, or where there are
//! no Unix sockets), opens the memory itself. [`runner`] is the owner's
//! side: it runs a task for a local client on the memory the owner serves.

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use super::console::{errln, outln};
use super::version::Change;
use super::{check_dir, open_here, Console, Context, Exit, Missing};
use crate::cli::ForgetBy;
use crate::config::{self, Config};
use crate::limits::MAX_QUERY_BYTES;
use crate::serve::EXIT_FAILURE;
use crate::service::{MemoryService, Principal};
use crate::store::VectorPolicy;

/// A subcommand that runs on a memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Task {
    Ingest {
        tenant: Option<String>,
        paths: Vec<PathBuf>,
        /// With one file: store it as a new version of these documents.
        #[serde(default)]
        supersedes: Vec<String>,
    },
    /// A new version of a document (`alayasiki_update`).
    Update {
        tenant: Option<String>,
        document_id: String,
        change: Change,
    },
    Query {
        tenant: Option<String>,
        text: String,
        top_k: Option<u32>,
        /// `--filter`: the query tool's `filter` object, as JSON text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filter: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        include_history: bool,
        /// `--as-of`: facts that change judged as of then (Unix ms).
        #[serde(default)]
        as_of: Option<i64>,
    },
    Forget {
        tenant: Option<String>,
        by: ForgetBy,
    },
    Export {
        tenant: Option<String>,
    },
    Import {
        tenant: Option<String>,
        file: PathBuf,
    },
    Status {
        tenant: Option<String>,
        json: bool,
        /// List the groups of documents with the same content.
        #[serde(default)]
        duplicates: bool,
    },
    RetryFailed,
    Compact,
    /// Serve the memory browser until the client stops it.
    Ui {
        bind: SocketAddr,
    },
}

impl Task {
    /// The subcommand's name, as messages say it.
    pub fn program(&self) -> &'static str {
        match self {
            Task::Ingest { .. } => "ingest",
            Task::Update { .. } => "update",
            Task::Query { .. } => "query",
            Task::Forget { .. } => "forget",
            Task::Export { .. } => "export",
            Task::Import { .. } => "import",
            Task::Status { .. } => "status",
            Task::RetryFailed => "retry-failed",
            Task::Compact => "compact",
            Task::Ui { .. } => "ui",
        }
    }

    /// Whether the task may start a memory in an empty directory.
    fn missing(&self) -> Missing {
        match self {
            Task::Ingest { .. } | Task::Import { .. } | Task::Ui { .. } => Missing::Create,
            _ => Missing::Refuse,
        }
    }

    /// What can be refused before any memory is reached: the reason, on
    /// stderr, and the exit status.
    fn check_here(&self) -> Result<(), Exit> {
        match self {
            Task::Ingest { paths, .. } => super::bulk::check_paths(&Console::process(), paths),
            Task::Export { .. } => super::export::check_stdout(),
            Task::Import { file, .. } => super::import::check_file(file),
            Task::Query { text, .. } if text.len() > MAX_QUERY_BYTES => {
                eprintln!(
                    "alayasiki-mcp query: the question is {} bytes; the limit is \
                     {MAX_QUERY_BYTES} (MAX_QUERY_BYTES)",
                    text.len()
                );
                Err(crate::cli::USAGE_EXIT as Exit)
            }
            _ => Ok(()),
        }
    }

    /// The task with its paths made absolute against this process's
    /// working directory.
    fn absolute(self) -> Task {
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        match self {
            Task::Ingest {
                tenant,
                paths,
                supersedes,
            } => Task::Ingest {
                tenant,
                paths: paths.into_iter().map(absolute).collect(),
                supersedes,
            },
            Task::Update {
                tenant,
                document_id,
                mut change,
            } => {
                change.file = change.file.map(absolute);
                Task::Update {
                    tenant,
                    document_id,
                    change,
                }
            }
            Task::Import { tenant, file } => Task::Import {
                tenant,
                file: absolute(file),
            },
            other => other,
        }
    }

    /// Runs the task on `ctx`'s memory; its exit status.
    pub fn run_on(self, ctx: &Context) -> Exit {
        match self {
            Task::Ingest {
                tenant,
                paths,
                supersedes,
            } if !supersedes.is_empty() && paths.len() == 1 => {
                super::version::ingest_version(ctx, tenant, &paths[0], supersedes)
            }
            Task::Ingest { tenant, paths, .. } => super::bulk::ingest(ctx, tenant, &paths),
            Task::Update {
                tenant,
                document_id,
                change,
            } => super::version::update(ctx, tenant, document_id, change),
            Task::Query {
                tenant,
                text,
                top_k,
                filter,
                include_history,
                as_of,
            } => super::query::query(
                ctx,
                tenant,
                &text,
                top_k,
                super::query::Asked {
                    filter: filter.as_deref(),
                    include_history,
                    as_of,
                },
            ),
            Task::Forget { tenant, by } => super::query::forget(ctx, tenant, by),
            Task::Export { tenant } => super::export::export(ctx, tenant),
            Task::Import { tenant, file } => super::import::import(ctx, tenant, &file),
            Task::Status {
                tenant,
                json,
                duplicates,
            } => super::status::status(ctx, tenant, json, duplicates),
            Task::RetryFailed => super::retry_failed(ctx),
            Task::Compact => super::compact(ctx),
            Task::Ui { bind } => browse(ctx, bind),
        }
    }
}

/// `alayasiki-mcp SUBCOMMAND ...`: runs `task` through the directory's
/// owner, or in this process when `in_process` (or the environment) says
/// so.
pub fn run(task: Task, data_dir: Option<PathBuf>, in_process: bool) -> ExitCode {
    crate::logging::init();
    let program = task.program();
    let fail = |msg: String, code: Exit| {
        eprintln!("alayasiki-mcp {program}: {msg}");
        ExitCode::from(code)
    };
    let in_process = match crate::serve::in_process_from_env() {
        Ok(from_env) => in_process || from_env || cfg!(not(unix)),
        Err(e) => return fail(e, EXIT_FAILURE),
    };
    if let Err(code) = task.check_here() {
        return ExitCode::from(code);
    }
    let config = match Config::resolve(data_dir, config::DEFAULT_DIR_NAME) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string(), EXIT_FAILURE),
    };
    if let Err(e) = check_dir(&config, task.missing()) {
        return fail(e, EXIT_FAILURE);
    }
    // From here on a signal stops the command between steps (ingest between
    // files, the browser at once) instead of killing the process.
    if let Err(e) = crate::transport::signals::install() {
        return fail(format!("cannot install signal handlers: {e}"), EXIT_FAILURE);
    }
    let task = task.absolute();
    if !in_process {
        return through_owner(&config, task);
    }
    let opened = match open_here(config, VectorPolicy::Keep, program, Duration::ZERO) {
        Ok(o) => o,
        Err(code) => return ExitCode::from(code),
    };
    let code = task.run_on(&opened.context());
    opened.service.shutdown();
    ExitCode::from(code)
}

/// Sends `task` to the owner of `config`'s directory and relays what it
/// prints; its exit status.
#[cfg(unix)]
fn through_owner(config: &Config, task: Task) -> ExitCode {
    use crate::transport::local::command::{self, Ended, Request};
    use crate::transport::local::endpoint::Target;
    use std::io::IsTerminal;
    let program = task.program();
    let target = Target {
        data_dir: config.data_dir.clone(),
        tenant: config.tenant.clone(),
        subject: config.subject.clone(),
    };
    let request = Request {
        task: match serde_json::to_value(&task) {
            Ok(v) => v,
            Err(e) => return ExitCode::from(report(program, &e.to_string())),
        },
        stderr_terminal: std::io::stderr().is_terminal(),
    };
    // The owner's output is this process's, as an in-process run's.
    let console = Console::process();
    let mut out = |bytes: &[u8]| {
        let _ = console.out(bytes);
    };
    let mut err = |bytes: &[u8]| console.err(bytes);
    match command::run(&target, &request, &mut out, &mut err) {
        Ok(Ended::Exit(code)) => ExitCode::from(code),
        Ok(Ended::OwnerLost(why)) => ExitCode::from(report(
            program,
            &format!(
                "{why}; what it stored before is kept (an interrupted ingest or import resumes \
                 when run again)"
            ),
        )),
        Ok(Ended::Abandoned(signal)) => {
            eprintln!(
                "alayasiki-mcp {program}: interrupted; the step in progress cannot stop midway, \
                 so the memory owner finishes it on its own"
            );
            ExitCode::from((crate::cli::SIGNAL_EXIT_BASE + signal) as u8)
        }
        Err(why) => ExitCode::from(report(program, &why)),
    }
}

#[cfg(not(unix))]
fn through_owner(_config: &Config, _task: Task) -> ExitCode {
    unreachable!("commands run in-process where there are no Unix sockets")
}

fn report(program: &str, why: &str) -> Exit {
    eprintln!("alayasiki-mcp {program}: {why}");
    EXIT_FAILURE
}

/// The owner's side: runs each local client's task on `service`, printing
/// to the client.
#[cfg(unix)]
pub fn runner(
    service: Arc<MemoryService>,
    data_dir: PathBuf,
) -> crate::transport::local::command::Runner {
    use crate::transport::local::command::{CommandIo, Request};
    Arc::new(
        move |principal: &Principal, request: &Request, io: Arc<CommandIo>| {
            let console = Console::client(io, request.stderr_terminal);
            let task: Task = match serde_json::from_value(request.task.clone()) {
                Ok(t) => t,
                Err(e) => {
                    errln!(
                        console,
                        "alayasiki-mcp: the memory owner (version {}) cannot run this command \
                         ({e}); run it with --in-process, or stop the owner and run it again",
                        env!("CARGO_PKG_VERSION")
                    );
                    return EXIT_FAILURE;
                }
            };
            log::info!("running `{}` for a local client", task.program());
            let ctx = Context::new(
                service.clone(),
                console,
                principal.tenant.name().to_string(),
                principal.subject.clone(),
                data_dir.clone(),
            );
            task.run_on(&ctx)
        },
    )
}

/// Asks the owner of `config`'s directory, if one runs, to make way for a
/// command that needs the directory alone: its pid if it agreed (it is
/// stopping), `None` if none runs; an owner that serves other clients is
/// named instead.
#[cfg(unix)]
pub(super) fn clear_owner(config: &Config) -> Result<Option<u32>, String> {
    use crate::transport::local::endpoint::{self, Purpose, Target};
    let Ok(stream) = endpoint::connect(&config.data_dir) else {
        return Ok(None);
    };
    let target = Target {
        data_dir: config.data_dir.clone(),
        tenant: config.tenant.clone(),
        subject: config.subject.clone(),
    };
    let (answer, _) = endpoint::greet(&stream, &target.hello(Purpose::Yield))
        .map_err(|e| format!("the memory owner did not answer: {e}"))?;
    if let Some(why) = answer.refused {
        return Err(format!(
            "the memory owner (pid {}) serves this directory and refused to make way: {why}. \
             This command needs the memory alone: stop the agents using it (the owner stops \
             once the last has been gone for ALAYASIKI_OWNER_IDLE_SECS), then run it again.",
            answer.pid
        ));
    }
    Ok(Some(answer.pid))
}

#[cfg(not(unix))]
pub(super) fn clear_owner(_config: &Config) -> Result<Option<u32>, String> {
    Ok(None)
}

/// Stops the owner of `dir`, if one runs with no client, and waits until
/// it has let the directory go (`replay --through-owner`, between
/// fixtures).
pub fn retire_owner(dir: &std::path::Path) -> Result<(), String> {
    let config = Config::resolve(Some(dir.to_path_buf()), config::DEFAULT_DIR_NAME)
        .map_err(|e| e.to_string())?;
    if clear_owner(&config)?.is_none() {
        return Ok(());
    }
    super::take_dir(dir, "replay", super::OWNER_HANDOVER_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `alayasiki-mcp ui` run by the owner: serves the memory browser of the
/// memory it owns until the client stops it.
fn browse(ctx: &Context, bind: SocketAddr) -> Exit {
    let principal = match ctx.principal(None, "ui") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let browser = match crate::serve::start_browser(&ctx.service, &principal, bind, &ctx.data_dir) {
        Ok(b) => b,
        Err(e) => {
            errln!(ctx.console, "alayasiki-mcp ui: {e}");
            return EXIT_FAILURE;
        }
    };
    // The command's output: the URL, once.
    outln!(ctx.console, "{}", browser.url());
    while !ctx.console.stopping() && !browser.has_stopped() {
        std::thread::sleep(crate::serve::SIGNAL_POLL);
    }
    let failed = browser.has_stopped() && !ctx.console.stopping();
    crate::serve::stop_browser(browser);
    if failed {
        errln!(
            ctx.console,
            "alayasiki-mcp ui: the memory browser stopped: its socket failed"
        );
        return EXIT_FAILURE;
    }
    0
}
