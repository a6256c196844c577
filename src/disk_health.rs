//! Asking the disk what is wrong when SQLite cannot say.
//!
//! SQLite names a full disk (`SQLITE_FULL`), a read-only one
//! (`SQLITE_READONLY`) and most I/O errors (`SQLITE_IOERR`) itself, and
//! [`StorageFault::of_sqlite`] maps those. But a file system that has
//! started failing also produces errors that do not name it: a page that
//! reads back short or not at all is reported as `SQLITE_CORRUPT` ("database
//! disk image is malformed"), an unopenable log as `SQLITE_CANTOPEN`, and so
//! on. Reported as they stand, a client would hear "internal error" about
//! what is a disk fault the operator can fix.
//!
//! So every store registers its data directory here ([`watch`]), and an
//! error that might be the disk's ([`suspect`]) is checked against the disk
//! itself ([`diagnose`]): the database file's first page is read and a
//! probe file is written, synced and removed in each watched directory. The
//! first fault found names the error; a healthy disk leaves it internal
//! (real corruption stays a server fault). Probes touch the disk, so a
//! fault found is reused for `DIAGNOSIS_REUSE_MS`: a failing disk under a
//! burst of requests is probed a few times a second, not once per request.
//! A healthy verdict is never reused: the errors that ask come in a burst
//! as a disk starts failing, and one probed a moment too early would have
//! left the rest of the burst unnamed.

use crate::error::StorageFault;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a fault one diagnosis found answers for every error that asks.
pub const DIAGNOSIS_REUSE_MS: u64 = 250;

/// Most directories watched at once; a process opening more (the test
/// suite) forgets the oldest.
const MAX_WATCHED: usize = 64;

/// The probe file written, synced and removed in a watched directory.
const PROBE_FILE: &str = ".alayasiki-disk-probe";

struct Watch {
    /// Each directory with the database file whose first page is read.
    dirs: Vec<(PathBuf, PathBuf)>,
    /// The last fault a diagnosis found, and when.
    last: Option<(Instant, StorageFault)>,
}

static WATCH: Mutex<Watch> = Mutex::new(Watch {
    dirs: Vec::new(),
    last: None,
});

/// Registers a store's directory and its database file for diagnosis.
pub fn watch(dir: &Path, database: &Path) {
    let mut w = WATCH.lock().unwrap_or_else(|p| p.into_inner());
    if w.dirs.iter().any(|(d, _)| d == dir) {
        return;
    }
    if w.dirs.len() == MAX_WATCHED {
        w.dirs.remove(0);
    }
    w.dirs.push((dir.to_path_buf(), database.to_path_buf()));
}

/// Whether a SQLite error may hide a fault of the disk under it.
pub fn suspect(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                ErrorCode::DatabaseCorrupt
                    | ErrorCode::NotADatabase
                    | ErrorCode::CannotOpen
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::FileLockingProtocolFailed
                    | ErrorCode::Unknown
            )
    )
}

/// What the disk under the watched stores says is wrong, if anything.
pub fn diagnose() -> Option<StorageFault> {
    let dirs = {
        let w = WATCH.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, fault)) = w.last {
            if at.elapsed() < Duration::from_millis(DIAGNOSIS_REUSE_MS) {
                return Some(fault);
            }
        }
        w.dirs.clone()
    };
    // Probed without the lock: a hung disk stalls this caller only.
    let fault = dirs.iter().find_map(|(dir, db)| probe(dir, db));
    let mut w = WATCH.lock().unwrap_or_else(|p| p.into_inner());
    w.last = fault.map(|f| (Instant::now(), f));
    fault
}

/// Reads `db`'s first page, then writes, syncs and removes a probe file in
/// `dir`. A directory that is gone (a store since closed and deleted) says
/// nothing.
fn probe(dir: &Path, db: &Path) -> Option<StorageFault> {
    let fault = |e: std::io::Error| StorageFault::of_io(&e);
    let mut page = [0u8; 4096];
    match std::fs::File::open(db) {
        Ok(mut f) => {
            if let Err(e) = f.read(&mut page) {
                return fault(e);
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return fault(e),
    }
    let path = dir.join(PROBE_FILE);
    let written = std::fs::File::create(&path).and_then(|mut f| {
        f.write_all(&page)?;
        f.sync_data()
    });
    let _ = std::fs::remove_file(&path);
    written.err().and_then(fault)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_healthy_or_vanished_directory_reports_nothing() {
        let dir = std::env::temp_dir().join(format!("disk-health-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("db"), b"SQLite format 3\0").unwrap();
        assert_eq!(probe(&dir, &dir.join("db")), None);
        assert!(!dir.join(PROBE_FILE).exists(), "the probe is removed");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(probe(&dir, &dir.join("db")), None);
    }

    #[test]
    fn only_errors_that_may_be_the_disk_are_suspect() {
        let failure = |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        assert!(suspect(&failure(rusqlite::ffi::SQLITE_CORRUPT)));
        assert!(suspect(&failure(rusqlite::ffi::SQLITE_NOTADB)));
        assert!(!suspect(&failure(rusqlite::ffi::SQLITE_CONSTRAINT)));
        assert!(!suspect(&rusqlite::Error::QueryReturnedNoRows));
    }
}
