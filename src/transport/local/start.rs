//! Reaching the owner of a data directory, starting it when none answers.
//!
//! The owner is the same binary (`alayasiki-mcp owner`), detached from the
//! client's terminal and process group (a Ctrl-C in the client's terminal
//! does not reach it), its log appended to
//! [`OWNER_LOG_FILE`](super::endpoint::OWNER_LOG_FILE) in the data
//! directory. Clients that start at the same instant may each start one:
//! the directory's lock lets exactly one of them own it, the others exit at
//! once, and every client connects to the winner.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::endpoint::{self, OWNER_LOG_FILE};
use crate::store::owner::OWNER_FILE;

/// How long a client waits for an owner it started (or saw starting) to
/// answer on the socket.
pub const OWNER_START_TIMEOUT: Duration = Duration::from_secs(20);

/// Longest pause between a starting client's attempts to connect to the
/// owner it started (an owner opens a memory in a few milliseconds; a
/// connect attempt costs microseconds).
const MAX_START_POLL: Duration = Duration::from_millis(4);

/// The exit status of an owner that found the directory held (another
/// owner won the race, or a server serves it itself).
const EXIT_DIR_IN_USE: i32 = crate::store::owner::EXIT_DIR_IN_USE as i32;

/// The program name an owner records in the directory's owner record.
pub const OWNER_PROGRAM: &str = "alayasiki-mcp owner";

/// Connects to the owner of `dir`, starting one if none answers.
pub fn reach(dir: &Path) -> Result<UnixStream, String> {
    // The directory first: a socket outside it is named after its
    // canonical path, which needs it to exist.
    crate::config::ensure_data_dir(dir)?;
    if let Ok(s) = endpoint::connect(dir) {
        return Ok(s);
    }
    let socket = endpoint::socket_path(dir)?;
    let log_path = dir.join(OWNER_LOG_FILE);
    // What the started owner logs, not what earlier ones did, explains a
    // failed start.
    let mut log_from = log_length(&log_path);
    let mut child = Some(spawn_owner(dir)?);
    let deadline = Instant::now() + OWNER_START_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        match endpoint::connect(dir) {
            Ok(s) => {
                reap(&mut child);
                return Ok(s);
            }
            Err(_) if Instant::now() >= deadline => {
                return Err(format!(
                    "no memory owner answered on {} within {OWNER_START_TIMEOUT:?} (its log: {})",
                    socket.display(),
                    dir.join(OWNER_LOG_FILE).display()
                ))
            }
            Err(_) => {}
        }
        if let Some(Ok(Some(status))) = child.as_mut().map(Child::try_wait) {
            child = None;
            if status.code().is_none() {
                // Killed while starting (by a signal, not a failure of its
                // own): start another.
                log::warn!(
                    "the memory owner was killed while starting ({status}); starting another"
                );
                log_from = log_length(&log_path);
                child = Some(spawn_owner(dir)?);
                continue;
            }
            if status.code() != Some(EXIT_DIR_IN_USE) {
                let why = last_error(&log_path, log_from)
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                return Err(format!(
                    "the memory owner could not start ({status}){why} (its log: {})",
                    dir.join(OWNER_LOG_FILE).display()
                ));
            }
            // Held: by an owner starting beside this one (its socket comes
            // soon), or by a process that serves the directory itself.
            if let Some(holder) = non_owner_holder(dir) {
                return Err(format!(
                    "data directory {} is served by {holder}, which keeps it to itself: \
                     connect to that server instead (alayasiki-api serves MCP over HTTP), \
                     stop it, or give this client another --data-dir",
                    dir.display()
                ));
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_START_POLL);
    }
}

/// Starts `alayasiki-mcp owner` on `dir`, detached.
fn spawn_owner(dir: &Path) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let log_path = dir.join(OWNER_LOG_FILE);
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    log::info!("starting the memory owner of {}", dir.display());
    // Its working directory is the data directory: it outlives the client,
    // and must not keep the client's directory busy (commands send
    // absolute paths).
    let dir = std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Command::new(exe)
        .arg("owner")
        .arg("--data-dir")
        .arg(&dir)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the memory owner: {e}"))
}

/// Waits for a started owner without blocking (so that one which exited
/// is not left a zombie while this client runs).
fn reap(child: &mut Option<Child>) {
    if let Some(c) = child.as_mut() {
        if let Ok(Some(_)) = c.try_wait() {
            *child = None;
        }
    }
    // A running owner is left to run: it outlives this client.
    std::mem::forget(child.take());
}

/// The log's length now (0 if there is none yet).
fn log_length(log: &Path) -> u64 {
    std::fs::metadata(log).map_or(0, |m| m.len())
}

/// The last error logged after byte `from` of the log (within its last
/// 8 KiB): what the owner this client started said.
fn last_error(log: &Path, from: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(8192).max(from)))
        .ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    let line = tail.lines().rev().find(|l| l.contains(" ERROR "))?;
    Some(
        line.split_once(": ")
            .map_or(line, |(_, m)| m)
            .trim()
            .to_string(),
    )
}

/// Who holds `dir`, when it is not an owner of local clients.
fn non_owner_holder(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(OWNER_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let program = v.get("program")?.as_str()?;
    if program == OWNER_PROGRAM {
        return None;
    }
    let pid = v.get("pid").and_then(|p| p.as_u64()).unwrap_or(0);
    Some(format!("{program} (pid {pid})"))
}
