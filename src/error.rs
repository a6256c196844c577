//! Typed errors, and their translation for clients.
//!
//! Internal failures keep their cause for the log; what reaches a client is
//! [`Error::client_message`]: short, actionable, and free of paths, SQL text
//! or stack traces. Every variant but [`Error::Internal`] carries a message
//! written for the client by the code that raised it.

use std::fmt;

/// What went wrong, in terms a caller can act on.
#[derive(Debug)]
pub enum Error {
    /// The request was malformed or violated a documented rule.
    InvalidInput(String),
    /// A documented limit was exceeded; the message names the limit.
    LimitExceeded(String),
    /// The request conflicts with stored state (e.g. an idempotency key reused
    /// with different content).
    Conflict(String),
    /// The thing asked for does not exist for this caller.
    NotFound(String),
    /// The caller's identity lacks the permission.
    Forbidden(String),
    /// The server is shutting down or overloaded; retrying later may work.
    Unavailable(String),
    /// Unavailable for a while the server can tell (a cluster that found no
    /// leader for that long): nothing was done, and a retry sooner is
    /// unlikely to succeed. Shown to clients as `unavailable`, with the wait
    /// as `Retry-After`.
    UnavailableFor(String, std::time::Duration),
    /// A write whose fate is unknown (a cluster lost its answer and no
    /// leader could say whether it applied): it may or may not be stored,
    /// so it must not be sent again as new, only retried under its
    /// idempotency key. Shown to clients as `unavailable`, with
    /// `CLUSTER_WRITE_WAIT` as `Retry-After` (settling needs a leader).
    Unconfirmed(String),
    /// The store's disk refused a write: full, failing or read-only. Reads
    /// keep working; the same write may succeed once the disk is fixed.
    /// Shown to clients as `unavailable`; the cause is logged.
    Storage(StorageFault, Box<dyn std::error::Error + Send + Sync>),
    /// The write was committed, but the disk failed to confirm it durable
    /// (syncing the log failed): it may or may not be stored. Shown to
    /// clients as `unavailable`, with the advice to retry under the same
    /// idempotency key; the cause is logged.
    Unsynced(StorageFault, Box<dyn std::error::Error + Send + Sync>),
    /// A server fault. The cause is logged, never shown to clients.
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What is wrong with the disk under the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// No space left (or a quota reached).
    Full,
    /// I/O errors: the disk or its file system is failing.
    Failing,
    /// The file system is mounted read-only.
    ReadOnly,
}

/// errno values (Linux and the BSDs agree on these).
const ENOSPC: i32 = 28;
const EDQUOT_LINUX: i32 = 122;
const EIO: i32 = 5;
const EROFS: i32 = 30;

impl StorageFault {
    /// The fault behind a SQLite error, if it is one of the disk's.
    /// Errors that do not name the disk but may be its doing are checked
    /// against the disk itself ([`crate::disk_health`]).
    pub fn of_sqlite(e: &rusqlite::Error) -> Option<StorageFault> {
        use rusqlite::ErrorCode;
        match e {
            rusqlite::Error::SqliteFailure(f, _) => match f.code {
                ErrorCode::DiskFull => Some(StorageFault::Full),
                ErrorCode::ReadOnly => Some(StorageFault::ReadOnly),
                // An I/O error is the disk's, but which fault it is (a
                // write refused for space, say) the disk tells best.
                ErrorCode::SystemIoFailure | ErrorCode::CannotOpen => {
                    Some(crate::disk_health::diagnose().unwrap_or(StorageFault::Failing))
                }
                _ if crate::disk_health::suspect(e) => crate::disk_health::diagnose(),
                _ => None,
            },
            rusqlite::Error::ToSqlConversionFailure(inner) => inner
                .downcast_ref::<std::io::Error>()
                .and_then(StorageFault::of_io),
            _ => None,
        }
    }

    /// The fault behind an I/O error, if it is one of the disk's.
    pub fn of_io(e: &std::io::Error) -> Option<StorageFault> {
        use std::io::ErrorKind;
        match (e.kind(), e.raw_os_error()) {
            (ErrorKind::StorageFull, _) | (_, Some(ENOSPC | EDQUOT_LINUX)) => {
                Some(StorageFault::Full)
            }
            (ErrorKind::ReadOnlyFilesystem, _) | (_, Some(EROFS)) => Some(StorageFault::ReadOnly),
            (_, Some(EIO)) => Some(StorageFault::Failing),
            _ => None,
        }
    }

    /// What is wrong, in a client's words.
    pub fn describe(self) -> &'static str {
        match self {
            StorageFault::Full => "storage full: the memory server's disk has no room",
            StorageFault::Failing => {
                "storage failing: the memory server's disk reported an I/O error"
            }
            StorageFault::ReadOnly => {
                "storage read-only: the memory server's disk accepts no writes"
            }
        }
    }
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal(msg.into().into())
    }

    /// A store failure described by `msg`: a storage fault when `fault`
    /// names one, else an internal error.
    pub fn from_store(msg: impl Into<String>, fault: Option<StorageFault>) -> Self {
        match fault {
            Some(f) => Error::Storage(f, msg.into().into()),
            None => Error::internal(msg),
        }
    }

    /// A committed write whose log sync failed (see [`Error::Unsynced`]);
    /// internal when the sync's error does not name the disk's fault.
    pub fn unsynced(msg: impl Into<String>, fault: Option<StorageFault>) -> Self {
        match fault {
            Some(f) => Error::Unsynced(f, msg.into().into()),
            None => Error::internal(msg),
        }
    }

    /// How long a client should wait before retrying, when the server can
    /// tell ([`Error::UnavailableFor`]).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::UnavailableFor(_, wait) => Some(*wait),
            Error::Unconfirmed(_) => Some(crate::limits::CLUSTER_WRITE_WAIT),
            _ => None,
        }
    }

    /// The disk's fault behind this error, if it is one.
    pub fn storage_fault(&self) -> Option<StorageFault> {
        match self {
            Error::Storage(fault, _) | Error::Unsynced(fault, _) => Some(*fault),
            _ => None,
        }
    }

    /// A stable machine-readable code (used by the HTTP API and in logs).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidInput(_) => "invalid_input",
            Error::LimitExceeded(_) => "limit_exceeded",
            Error::Conflict(_) => "conflict",
            Error::NotFound(_) => "not_found",
            Error::Forbidden(_) => "forbidden",
            Error::Unavailable(_)
            | Error::UnavailableFor(..)
            | Error::Unconfirmed(_)
            | Error::Storage(..)
            | Error::Unsynced(..) => "unavailable",
            Error::Internal(_) => "internal",
        }
    }

    /// The message a client may see. Internal causes are replaced by a fixed
    /// sentence; they were (or will be) logged by whoever reports the error.
    pub fn client_message(&self) -> String {
        match self {
            Error::InvalidInput(m)
            | Error::LimitExceeded(m)
            | Error::Conflict(m)
            | Error::NotFound(m)
            | Error::Forbidden(m)
            | Error::Unavailable(m)
            | Error::UnavailableFor(m, _)
            | Error::Unconfirmed(m) => m.clone(),
            Error::Storage(fault, _) => format!(
                "{}; nothing was stored; retry once the disk accepts writes ({})",
                fault.describe(),
                match fault {
                    // A failing disk may fail reads too; a full or
                    // read-only one still serves them.
                    StorageFault::Failing => "reads may fail too",
                    StorageFault::Full | StorageFault::ReadOnly => "reads still work",
                }
            ),
            Error::Unsynced(fault, _) => format!(
                "{}; the write may or may not have been stored (the disk did not confirm it); \
                 retry it with the same idempotency key once the disk accepts writes",
                fault.describe()
            ),
            Error::Internal(_) => {
                "internal error in the memory server; the server log has details".to_string()
            }
        }
    }

    /// Logs internal causes (other kinds are the caller's business, not the
    /// operator's) and returns `self` for chaining.
    pub fn logged(self, context: &str) -> Self {
        match &self {
            Error::Internal(cause) => log::error!("{context}: {cause}"),
            Error::Storage(fault, cause) | Error::Unsynced(fault, cause) => {
                log::error!("{context}: storage {fault:?}: {cause}")
            }
            _ => {}
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Internal(cause) => write!(f, "internal: {cause}"),
            Error::Storage(fault, cause) => write!(f, "unavailable: storage {fault:?}: {cause}"),
            Error::Unsynced(fault, cause) => {
                write!(
                    f,
                    "unavailable: storage {fault:?}, write unconfirmed: {cause}"
                )
            }
            other => write!(f, "{}: {}", other.code(), other.client_message()),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match StorageFault::of_sqlite(&e) {
            Some(fault) => Error::Storage(fault, Box::new(e)),
            None => Error::Internal(Box::new(e)),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        match StorageFault::of_io(&e) {
            Some(fault) => Error::Storage(fault, Box::new(e)),
            None => Error::Internal(Box::new(e)),
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Internal(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_faults_are_unavailable_with_their_kind_and_no_path() {
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            Some("database or disk is full: /var/lib/x/memory.db".into()),
        );
        let e = Error::from(full);
        assert_eq!(e.code(), "unavailable");
        assert!(e.client_message().starts_with("storage full"));
        assert!(!e.client_message().contains("/var"));
        let eio = Error::from(std::io::Error::from_raw_os_error(EIO));
        assert!(eio.client_message().starts_with("storage failing"));
        let rofs = Error::from(std::io::Error::from_raw_os_error(EROFS));
        assert!(rofs.client_message().starts_with("storage read-only"));
        let other = Error::from(std::io::Error::other("boom"));
        assert_eq!(other.code(), "internal");
    }

    #[test]
    fn internal_causes_never_reach_clients() {
        let e = Error::internal("no such table: documents at /home/me/.alayasiki-mcp/memory.db");
        let shown = e.client_message();
        assert!(!shown.contains("/home"));
        assert!(!shown.contains("table"));
        assert_eq!(e.code(), "internal");
    }

    #[test]
    fn client_errors_keep_their_message() {
        let e = Error::invalid("`top_k` must be between 1 and 100");
        assert_eq!(e.client_message(), "`top_k` must be between 1 and 100");
    }
}
