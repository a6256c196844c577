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
    /// A server fault. The cause is logged, never shown to clients.
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal(msg.into().into())
    }

    /// A stable machine-readable code (used by the HTTP API and in logs).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidInput(_) => "invalid_input",
            Error::LimitExceeded(_) => "limit_exceeded",
            Error::Conflict(_) => "conflict",
            Error::NotFound(_) => "not_found",
            Error::Forbidden(_) => "forbidden",
            Error::Unavailable(_) => "unavailable",
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
            | Error::Unavailable(m) => m.clone(),
            Error::Internal(_) => {
                "internal error in the memory server; the server log has details".to_string()
            }
        }
    }

    /// Logs internal causes (other kinds are the caller's business, not the
    /// operator's) and returns `self` for chaining.
    pub fn logged(self, context: &str) -> Self {
        if let Error::Internal(cause) = &self {
            log::error!("{context}: {cause}");
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Internal(cause) => write!(f, "internal: {cause}"),
            other => write!(f, "{}: {}", other.code(), other.client_message()),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Internal(Box::new(e))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Internal(Box::new(e))
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
