//! One owner process per data directory.
//!
//! The owner holds an exclusive OS file lock on `alayasiki.lock` for its
//! whole life and records its pid in `alayasiki.owner` (a separate file,
//! because Windows lets nobody read the bytes of a locked file). The lock is advisory but
//! every alayasiki process takes it before touching the store, so two
//! servers can never write one database. Because the OS drops the lock when
//! its holder dies, a lock left behind by a killed process is simply taken
//! over: there is nothing stale to clean up by hand.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = "alayasiki.lock";
/// Who holds the lock (pid, program, since when), as JSON.
pub const OWNER_FILE: &str = "alayasiki.owner";

/// Held for as long as this process owns the directory.
#[derive(Debug)]
pub struct OwnerLock {
    _file: File,
}

/// Why the directory could not be taken.
#[derive(Debug)]
pub enum OwnerError {
    /// Another live process holds it.
    Held {
        dir: PathBuf,
        holder: Option<String>,
    },
    Io(std::io::Error),
}

impl std::fmt::Display for OwnerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OwnerError::Held { dir, holder } => {
                let who = holder
                    .as_deref()
                    .map(|h| format!("by {h}"))
                    .unwrap_or_else(|| "by another process".to_string());
                write!(
                    f,
                    "data directory {} is in use {who}. Only one process may own a data \
                     directory. To share one memory between several clients, run \
                     `alayasiki-api --data-dir {}` and connect them over SSE; or give this \
                     process its own directory with --data-dir.",
                    dir.display(),
                    dir.display()
                )
            }
            OwnerError::Io(e) => write!(f, "cannot lock the data directory: {e}"),
        }
    }
}

impl OwnerLock {
    /// Takes ownership of `dir` for `program`, or explains who holds it.
    pub fn acquire(dir: &Path, program: &str) -> Result<OwnerLock, OwnerError> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false) // the holder's pid must survive our failed attempt
            .open(&path)
            .map_err(OwnerError::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(dir.join(OWNER_FILE))
                    .ok()
                    .and_then(|text| describe_holder(&text));
                return Err(OwnerError::Held {
                    dir: dir.to_path_buf(),
                    holder,
                });
            }
            Err(TryLockError::Error(e)) => return Err(OwnerError::Io(e)),
        }
        let record = serde_json::json!({
            "pid": std::process::id(),
            "program": program,
            "version": env!("CARGO_PKG_VERSION"),
            "since": crate::clock::rfc3339(crate::clock::now_ms()),
        });
        std::fs::write(dir.join(OWNER_FILE), record.to_string()).map_err(OwnerError::Io)?;
        Ok(OwnerLock { _file: file })
    }
}

fn describe_holder(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let pid = v.get("pid")?.as_u64()?;
    let program = v
        .get("program")
        .and_then(|p| p.as_str())
        .unwrap_or("alayasiki");
    let since = v.get("since").and_then(|s| s.as_str()).unwrap_or("?");
    Some(format!("{program} (pid {pid}, since {since})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_one_process_is_refused_with_pid() {
        let dir = std::env::temp_dir().join(format!("alayasiki-owner-{}", crate::ids::new_id("t")));
        std::fs::create_dir_all(&dir).unwrap();
        let first = OwnerLock::acquire(&dir, "test").unwrap();
        let err = OwnerLock::acquire(&dir, "test").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        assert!(msg.contains("alayasiki-api"), "{msg}");
        drop(first);
        OwnerLock::acquire(&dir, "test").expect("released lock can be retaken");
        std::fs::remove_dir_all(&dir).ok();
    }
}
