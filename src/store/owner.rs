//! One owner process per data directory.
//!
//! Ownership rests on OS locks held on open descriptors for the owner's
//! whole life, never on a file merely existing:
//! - on Unix, an exclusive lock on the data directory itself (a user may
//!   delete files in it, but not the directory while the store lives in
//!   it), taken first: a second process is refused even if every file of
//!   the directory but the store was deleted;
//! - everywhere, an exclusive lock on `alayasiki.lock`, beside which
//!   `alayasiki.owner` records the holder's pid (a separate file, because
//!   Windows lets nobody read the bytes of a locked file).
//!
//! The locks are advisory, but every alayasiki process takes them before
//! touching the store, so two servers can never write one database. The OS
//! drops them when their holder dies, so a lock left behind by a killed
//! process is simply taken over: there is nothing stale to clean up.
//!
//! Should someone delete or replace `alayasiki.lock` (or the owner record)
//! under a running owner, a watchdog thread notices within
//! [`OWNER_CHECK_INTERVAL`] (it compares the descriptor's file with the
//! path's), says so loudly in the log and puts a locked lock file and the
//! record back. It never gives ownership up: the directory lock still
//! refuses any second owner meanwhile.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Exit status of a process refused because another owns the data
/// directory.
pub const EXIT_DIR_IN_USE: u8 = 3;

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = "alayasiki.lock";
/// Who holds the lock (pid, program, since when), as JSON.
pub const OWNER_FILE: &str = "alayasiki.owner";

/// How often a running owner checks that its lock file is still the one
/// it holds locked (and puts it back if not).
pub const OWNER_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// Times opening and locking the lock file is retried when the path turns
/// out to name another file than the one locked (it was replaced between
/// the open and the lock).
const MAX_LOCK_RACES: usize = 8;

/// Held for as long as this process owns the directory; dropping it stops
/// the watchdog and releases the locks.
#[derive(Debug)]
pub struct OwnerLock {
    held: Arc<Mutex<Held>>,
    stop: Option<Sender<()>>,
    watchdog: Option<JoinHandle<()>>,
}

/// The open, locked descriptors.
#[derive(Debug)]
struct Held {
    dir: PathBuf,
    record: String,
    /// The locked lock file (replaced by a new one if the path's was
    /// deleted or replaced).
    file: File,
    /// The locked data directory (Unix; `None` where directories cannot
    /// be locked, e.g. some network file systems).
    _dir_lock: Option<File>,
}

/// Why the directory could not be taken.
#[derive(Debug)]
pub enum OwnerError {
    /// Another live process holds it.
    Held {
        dir: PathBuf,
        holder: Option<String>,
    },
    /// The directory's lock or owner record could not be made.
    Io {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for OwnerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OwnerError::Held { dir, holder }
                if holder
                    .as_deref()
                    .is_some_and(|h| h.starts_with("alayasiki-mcp owner ")) =>
            {
                write!(
                    f,
                    "data directory {} is served by its memory owner, {}, which every \
                     `alayasiki-mcp` on stdio reaches; this command opens the store itself, so \
                     it cannot run beside the owner. Stop the owner (it also stops on its own \
                     once no agent has been connected for ALAYASIKI_OWNER_IDLE_SECS), then run \
                     it again.",
                    dir.display(),
                    holder.as_deref().unwrap_or_default()
                )
            }
            OwnerError::Held { dir, holder } => {
                let who = holder
                    .as_deref()
                    .map(|h| format!("by {h}"))
                    .unwrap_or_else(|| "by another process".to_string());
                write!(
                    f,
                    "data directory {} is in use {who}, which keeps the store to itself. \
                     Several agents share one memory when each runs `alayasiki-mcp` on stdio \
                     (they reach one owner process); a team shares one through \
                     `alayasiki-api --data-dir {}` over HTTP. Or give this process its own \
                     directory with --data-dir.",
                    dir.display(),
                    dir.display()
                )
            }
            OwnerError::Io { dir, source } => {
                write!(
                    f,
                    "cannot lock the data directory {}: {source}",
                    dir.display()
                )
            }
        }
    }
}

impl OwnerLock {
    /// Takes ownership of `dir` for `program`, or explains who holds it.
    pub fn acquire(dir: &Path, program: &str) -> Result<OwnerLock, OwnerError> {
        let io = |source| OwnerError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let held_by_other = || OwnerError::Held {
            dir: dir.to_path_buf(),
            holder: std::fs::read_to_string(dir.join(OWNER_FILE))
                .ok()
                .and_then(|text| describe_holder(&text)),
        };
        // The directory first: if another owner holds it, nothing in the
        // directory is touched (not even a deleted lock file recreated).
        let dir_lock = lock_directory(dir).map_err(|e| match e {
            LockFailure::Held => held_by_other(),
            LockFailure::Io(e) => io(e),
        })?;
        let file = lock_file(dir).map_err(|e| match e {
            LockFailure::Held => held_by_other(),
            LockFailure::Io(e) => io(e),
        })?;
        let record = serde_json::json!({
            "pid": std::process::id(),
            "program": program,
            "version": env!("CARGO_PKG_VERSION"),
            "since": crate::clock::rfc3339(crate::clock::now_ms()),
        })
        .to_string();
        std::fs::write(dir.join(OWNER_FILE), &record).map_err(io)?;
        let held = Arc::new(Mutex::new(Held {
            dir: dir.to_path_buf(),
            record,
            file,
            _dir_lock: dir_lock,
        }));
        let (stop, stopped) = std::sync::mpsc::channel();
        let watched = held.clone();
        let watchdog = std::thread::Builder::new()
            .name("owner-watchdog".into())
            .spawn(move || watch(&watched, &stopped))
            .map_err(io)?;
        Ok(OwnerLock {
            held,
            stop: Some(stop),
            watchdog: Some(watchdog),
        })
    }

    /// Checks now that the lock file and the owner record are in place,
    /// restoring them if not (the watchdog does this every
    /// [`OWNER_CHECK_INTERVAL`]). True if they were in place.
    pub fn verify(&self) -> bool {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).verify()
    }
}

impl Drop for OwnerLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.watchdog.take() {
            let _ = t.join();
        }
    }
}

fn watch(held: &Mutex<Held>, stopped: &Receiver<()>) {
    loop {
        match stopped.recv_timeout(OWNER_CHECK_INTERVAL) {
            Err(RecvTimeoutError::Timeout) => {
                held.lock().unwrap_or_else(|p| p.into_inner()).verify();
            }
            _ => return,
        }
    }
}

impl Held {
    fn verify(&mut self) -> bool {
        let lock_path = self.dir.join(LOCK_FILE);
        let mut intact = true;
        if !same_file(&self.file, &lock_path) {
            intact = false;
            log::error!(
                "the lock file {} was deleted or replaced while this process owns the data \
                 directory; recreating it (do not delete it: it tells other processes the \
                 directory is in use)",
                lock_path.display()
            );
            match lock_file(&self.dir) {
                Ok(file) => self.file = file,
                Err(LockFailure::Held) => log::error!(
                    "the new lock file {} is locked by another process: a second process \
                     (perhaps of an older version) may be using this data directory; stop it",
                    lock_path.display()
                ),
                Err(LockFailure::Io(e)) => {
                    log::error!("cannot recreate the lock file {}: {e}", lock_path.display())
                }
            }
        }
        let owner_path = self.dir.join(OWNER_FILE);
        if std::fs::read_to_string(&owner_path).ok().as_deref() != Some(self.record.as_str()) {
            intact = false;
            log::error!(
                "the owner record {} was deleted or changed; rewriting it",
                owner_path.display()
            );
            if let Err(e) = std::fs::write(&owner_path, &self.record) {
                log::error!("cannot rewrite {}: {e}", owner_path.display());
            }
        }
        intact
    }
}

enum LockFailure {
    Held,
    Io(std::io::Error),
}

/// Opens and locks `dir`'s lock file, making sure the file locked is the
/// one the path names once the lock is held.
fn lock_file(dir: &Path) -> Result<File, LockFailure> {
    let path = dir.join(LOCK_FILE);
    for _ in 0..MAX_LOCK_RACES {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false) // the holder's pid must survive our failed attempt
            .open(&path)
            .map_err(LockFailure::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(LockFailure::Held),
            Err(TryLockError::Error(e)) => return Err(LockFailure::Io(e)),
        }
        if same_file(&file, &path) {
            return Ok(file);
        }
    }
    Err(LockFailure::Io(std::io::Error::other(
        "the lock file keeps being replaced",
    )))
}

/// Locks the directory itself (Unix). `None` (with a warning) where the
/// file system cannot lock a directory: the lock file still stands.
#[cfg(unix)]
fn lock_directory(dir: &Path) -> Result<Option<File>, LockFailure> {
    let handle = File::open(dir).map_err(LockFailure::Io)?;
    match handle.try_lock() {
        Ok(()) => Ok(Some(handle)),
        Err(TryLockError::WouldBlock) => Err(LockFailure::Held),
        Err(TryLockError::Error(e)) => {
            log::warn!(
                "cannot lock the data directory {} itself ({e}); ownership rests on its lock \
                 file alone",
                dir.display()
            );
            Ok(None)
        }
    }
}

#[cfg(not(unix))]
fn lock_directory(_dir: &Path) -> Result<Option<File>, LockFailure> {
    Ok(None)
}

/// Whether `path` names the file `file` has open.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Whether `path` names the file `file` has open. Windows keeps a file
/// with open handles where it is (deleting it only marks it for deletion),
/// so only existence is checked.
#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
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

    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("alayasiki-owner-{tag}-{}", crate::ids::new_id("t")));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn second_lock_in_one_process_is_refused_with_pid() {
        let dir = temp_dir("second");
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

    #[test]
    fn deleting_the_lock_file_neither_frees_the_directory_nor_goes_unnoticed() {
        let dir = temp_dir("deleted");
        let first = OwnerLock::acquire(&dir, "test").unwrap();
        std::fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        std::fs::remove_file(dir.join(OWNER_FILE)).unwrap();
        #[cfg(unix)]
        assert!(
            matches!(
                OwnerLock::acquire(&dir, "test"),
                Err(OwnerError::Held { .. })
            ),
            "a second owner was let in after the lock file was deleted"
        );
        assert!(!first.verify(), "the deletion was not noticed");
        assert!(dir.join(LOCK_FILE).exists() && dir.join(OWNER_FILE).exists());
        assert!(first.verify(), "restored files are intact");
        // The restored lock file is locked again: refused even without the
        // directory lock.
        let err = lock_file(&dir).expect_err("restored lock file is held");
        assert!(matches!(err, LockFailure::Held));
        drop(first);
        OwnerLock::acquire(&dir, "test").expect("released lock can be retaken");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_lock_file_is_noticed() {
        let dir = temp_dir("replaced");
        let first = OwnerLock::acquire(&dir, "test").unwrap();
        let path = dir.join(LOCK_FILE);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"someone else's").unwrap();
        assert!(!first.verify());
        assert!(first.verify());
        drop(first);
        std::fs::remove_dir_all(&dir).ok();
    }
}
