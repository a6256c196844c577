//! `alayasiki-mcp replay`: runs recorded MCP sessions (fixtures) against
//! this binary on a fresh temporary store and reports every step.
//!
//! Each fixture gets its own scratch data directory (seeded first from an
//! export with `--seed`), served by this same binary spawned over pipes as
//! an MCP client would start it; the directory is deleted afterwards,
//! whatever happened. The steps run in order: sends are written, each
//! `expect` reads the next reply and matches it ([`pattern`]), silences
//! wait. A fixture stops at its first failing step (later steps depend on
//! it) and is reported with the line, the JSON path where the reply
//! differed, and both values; the rest of its steps are reported skipped.
//!
//! The fixture format is [`fixture`]'s, public and versioned
//! ([`fixture::FIXTURE_FORMAT`]). A fixture only talks to the server: it
//! names no files, and nothing it does reaches outside its scratch
//! directory. Exit status: 0 when every fixture passed, 1 when one failed,
//! 2 when one could not run (a bad fixture, a seed that would not import,
//! a server that would not start).
//!
//! SIGINT or SIGTERM (the handlers of [`crate::transport::signals`]) stops
//! the replay at once, not the process: the step or seed in progress is
//! abandoned, the server is killed, the scratch directory deleted, the
//! fixtures run so far are reported (the interrupted one as failed there)
//! and the exit status is 128 + the signal's number.

pub mod fixture;
pub mod pattern;
pub mod record;
mod report;
mod server;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cli::SIGNAL_EXIT_BASE;
use crate::limits::MAX_FRAME_BYTES;
use crate::transport::signals;
use fixture::{BadFixture, Step, StepKind};
use pattern::Captures;
use server::{ScratchDir, ServerProcess};

/// How long an `expect` step waits for its reply (milliseconds).
pub const REPLAY_REPLY_TIMEOUT_MS: u64 = 60_000;

/// Largest fixture file read (bytes): a send is at most a frame, and a
/// fixture holding more than a few of those is not a session.
pub const MAX_FIXTURE_BYTES: u64 = 64 * 1024 * 1024;

/// How the results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A line per step and a summary, for people.
    Text,
    /// JUnit XML, for CI systems.
    Junit,
    /// The Test Anything Protocol (version 13).
    Tap,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "text" => Some(Format::Text),
            "junit" => Some(Format::Junit),
            "tap" => Some(Format::Tap),
            _ => None,
        }
    }
}

/// What `replay` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub files: Vec<PathBuf>,
    pub seed: Option<PathBuf>,
    pub format: Format,
    /// Serve each fixture in deterministic mode (`--deterministic`).
    pub deterministic: bool,
    /// Serve each fixture through a memory owner on its temporary
    /// directory, as agents are served (`--through-owner`).
    pub through_owner: bool,
}

/// How one step went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    Passed,
    Failed(String),
    /// Not run: an earlier step of the fixture failed.
    Skipped,
}

#[derive(Debug, Clone)]
pub struct StepResult {
    pub line: usize,
    pub label: String,
    pub outcome: StepOutcome,
    pub elapsed: Duration,
}

/// How one fixture went.
#[derive(Debug, Clone)]
pub struct FixtureResult {
    pub name: String,
    pub steps: Vec<StepResult>,
    /// Why the fixture could not run at all.
    pub bad: Option<BadFixture>,
    /// A failure after the steps (the server's exit), with no step of its own.
    pub after: Option<String>,
    pub elapsed: Duration,
}

impl FixtureResult {
    pub fn failed(&self) -> bool {
        self.after.is_some()
            || self
                .steps
                .iter()
                .any(|s| matches!(s.outcome, StepOutcome::Failed(_)))
    }
}

/// Runs every fixture and prints the report; the exit status as above.
pub fn replay(options: &Options) -> ExitCode {
    // From here on a signal ends the replay through the code below, which
    // deletes the scratch directories, instead of killing the process.
    if let Err(e) = signals::install() {
        eprintln!("alayasiki-mcp replay: cannot install signal handlers: {e}");
        return ExitCode::from(2);
    }
    let mut results: Vec<FixtureResult> = Vec::with_capacity(options.files.len());
    for file in &options.files {
        if signals::requested() {
            break;
        }
        results.push(run_file(file, options));
    }
    let out = match options.format {
        Format::Text => report::text(&results),
        Format::Junit => report::junit(&results),
        Format::Tap => report::tap(&results),
    };
    crate::cli::stdout::out!("{out}");
    if signals::requested() {
        let signal = signals::received().unwrap_or(signals::SIGINT);
        eprintln!(
            "alayasiki-mcp replay: interrupted by {}: {} of {} fixture(s) run; their \
             temporary stores are deleted",
            interruption(),
            results.len(),
            options.files.len()
        );
        return ExitCode::from((SIGNAL_EXIT_BASE + signal) as u8);
    }
    if results.iter().any(|r| r.bad.is_some()) {
        ExitCode::from(2)
    } else if results.iter().any(FixtureResult::failed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn run_file(file: &Path, options: &Options) -> FixtureResult {
    let (seed, deterministic) = (options.seed.as_deref(), options.deterministic);
    let started = Instant::now();
    let name = file.display().to_string();
    let bad = |bad: BadFixture| FixtureResult {
        name: name.clone(),
        steps: Vec::new(),
        bad: Some(bad),
        after: None,
        elapsed: started.elapsed(),
    };
    let text = match read_fixture(file) {
        Ok(text) => text,
        Err(message) => return bad(BadFixture { line: 0, message }),
    };
    let steps = match fixture::parse(&text) {
        Ok(steps) => steps,
        Err(e) => return bad(e),
    };
    let scratch = match ScratchDir::new() {
        Ok(dir) => dir,
        Err(e) => {
            return bad(BadFixture {
                line: 0,
                message: format!("cannot make a temporary data directory: {e}"),
            })
        }
    };
    let mut env: Vec<(String, String)> = Vec::new();
    if deterministic {
        env.push((crate::config::DETERMINISTIC_ENV.into(), "1".into()));
    }
    if options.through_owner {
        env.push((crate::serve::IN_PROCESS_ENV.into(), "0".into()));
    }
    if let Some(seed) = seed {
        if let Err(e) = server::seed(scratch.path(), seed, &env) {
            let message = if signals::requested() {
                format!(
                    "interrupted by {} while the seed was imported",
                    interruption()
                )
            } else {
                format!("the seed {} did not import: {e}", seed.display())
            };
            return bad(BadFixture { line: 0, message });
        }
    }
    let server = match ServerProcess::start(scratch.path(), &env) {
        Ok(server) => server,
        Err(e) => {
            return bad(BadFixture {
                line: 0,
                message: format!("cannot start the server: {e}"),
            })
        }
    };
    let (steps, after) = run_steps(server, &steps);
    if options.through_owner {
        // The owner outlives its relay: it is stopped before its directory
        // goes.
        if let Err(e) = crate::admin::task::retire_owner(scratch.path()) {
            log::warn!("the memory owner of a fixture's directory: {e}");
        }
    }
    // The server has exited or been killed: nothing holds the directory.
    drop(scratch);
    FixtureResult {
        name,
        steps,
        bad: None,
        after,
        elapsed: started.elapsed(),
    }
}

fn read_fixture(file: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("cannot read the fixture: {e}"))?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    if meta.len() > MAX_FIXTURE_BYTES {
        return Err(format!(
            "the fixture is {} bytes; at most MAX_FIXTURE_BYTES ({MAX_FIXTURE_BYTES})",
            meta.len()
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read the fixture: {e}"))?;
    // A byte-order mark (as some Windows editors write) is not part of the
    // first step.
    let text = String::from_utf8(bytes).map_err(|_| "the fixture is not UTF-8 text".to_string())?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Runs `steps` against `server`, then closes it; the steps' results and a
/// failure found after them.
fn run_steps(mut server: ServerProcess, steps: &[Step]) -> (Vec<StepResult>, Option<String>) {
    let mut captures = Captures::new();
    let mut results = Vec::with_capacity(steps.len());
    let mut failed = false;
    for step in steps {
        let label = label(&step.kind);
        if signals::requested() && !failed {
            failed = true;
            results.push(StepResult {
                line: step.line,
                label,
                outcome: StepOutcome::Failed(format!("interrupted by {}", interruption())),
                elapsed: Duration::ZERO,
            });
            continue;
        }
        if failed {
            results.push(StepResult {
                line: step.line,
                label,
                outcome: StepOutcome::Skipped,
                elapsed: Duration::ZERO,
            });
            continue;
        }
        let began = Instant::now();
        let outcome = match run_step(&mut server, &step.kind, &mut captures) {
            Ok(()) => StepOutcome::Passed,
            Err(why) => {
                failed = true;
                let tail = server.log_tail();
                StepOutcome::Failed(if tail.is_empty() {
                    why
                } else {
                    format!("{why}\nserver log (last lines):\n  {}", tail.join("\n  "))
                })
            }
        };
        results.push(StepResult {
            line: step.line,
            label,
            outcome,
            elapsed: began.elapsed(),
        });
    }
    if signals::requested() {
        // Killed (on drop), not waited for: the replay is stopping.
        drop(server);
        return (results, None);
    }
    let after = match server.finish() {
        Some(status) if status.success() || failed => None,
        Some(status) => Some(format!("the server exited with {status}")),
        None => Some("the server did not exit within 30 s of its input closing".into()),
    };
    (results, after)
}

fn run_step(
    server: &mut ServerProcess,
    kind: &StepKind,
    captures: &mut Captures,
) -> Result<(), String> {
    match kind {
        StepKind::Send(message) => {
            let too_large = || {
                format!(
                    "with its captures put in, the message is over MAX_FRAME_BYTES ({MAX_FRAME_BYTES} bytes)"
                )
            };
            let message = pattern::substitute(message, captures, MAX_FRAME_BYTES)
                .map(|m| m.to_string())
                .filter(|m| m.len() <= MAX_FRAME_BYTES)
                .ok_or_else(too_large)?;
            server.write_line(&message).map_err(input_closed)
        }
        StepKind::SendRaw(text) => server.write_line(text).map_err(input_closed),
        StepKind::SendBytes(bytes) => server.write_bytes(bytes).map_err(input_closed),
        StepKind::SendOversized(n) => server.write_filler(*n).map_err(input_closed),
        StepKind::Expect(want) => {
            let wait = Duration::from_millis(REPLAY_REPLY_TIMEOUT_MS);
            let actual = match server.next_line(wait) {
                Some(Ok(actual)) => actual,
                Some(Err(line)) => {
                    return Err(format!("the server wrote a line that is not JSON: {line}"))
                }
                None if signals::requested() => {
                    return Err(format!("interrupted by {}", interruption()))
                }
                None => return Err(format!("no reply within {} s", wait.as_secs())),
            };
            pattern::matches(want, &actual, captures).map_err(|m| {
                format!(
                    "at {}: {}\n  expected: {}\n  actual:   {}",
                    m.path,
                    m.why,
                    pattern::substitute(want, captures, MAX_FRAME_BYTES)
                        .unwrap_or_else(|| want.clone()),
                    actual
                )
            })
        }
        StepKind::ExpectSilence(ms) => match server.next_line(Duration::from_millis(*ms)) {
            None if signals::requested() => Err(format!("interrupted by {}", interruption())),
            None => Ok(()),
            Some(Ok(extra)) => Err(format!("expected nothing for {ms} ms, got {extra}")),
            Some(Err(line)) => Err(format!("expected nothing for {ms} ms, got {line}")),
        },
    }
}

/// The signal that stopped the replay, by name.
fn interruption() -> &'static str {
    match signals::received() {
        Some(signals::SIGTERM) => "SIGTERM",
        _ => "SIGINT",
    }
}

/// Why a send failed: the server no longer reads.
fn input_closed(e: std::io::Error) -> String {
    format!("cannot send: the server's input is closed ({e})")
}

/// A step's name in reports: its kind and what it is about.
fn label(kind: &StepKind) -> String {
    let about = |v: &Value| {
        let method = v.get("method").and_then(Value::as_str);
        let tool = v
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str);
        let id = v.get("id").filter(|id| !id.is_null());
        let mut parts = Vec::new();
        if let Some(m) = method {
            parts.push(m.to_string());
        }
        if let Some(t) = tool {
            parts.push(t.to_string());
        }
        if let Some(id) = id {
            parts.push(format!("id {id}"));
        }
        parts.join(" ")
    };
    match kind {
        StepKind::Send(v) => format!("send {}", about(v)).trim_end().to_string(),
        StepKind::SendRaw(_) => "send_raw".to_string(),
        StepKind::SendBytes(_) => "send_bytes".to_string(),
        StepKind::SendOversized(n) => format!("send_oversized {n}"),
        StepKind::Expect(v) => format!("expect {}", about(v)).trim_end().to_string(),
        StepKind::ExpectSilence(ms) => format!("expect_silence_ms {ms}"),
    }
}
