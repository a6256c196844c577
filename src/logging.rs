//! The stderr logger. stdout belongs to the protocol, so every log line goes
//! to stderr, one line per record, with a UTC timestamp and the level.

use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::Write;

use crate::clock;

/// Environment variable holding the level: error, warn, info, debug, trace
/// (or off).
pub const LOG_ENV: &str = "ALAYASIKI_LOG";

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = format!(
            "{} {:5} {}: {}\n",
            clock::rfc3339(clock::now_ms()),
            record.level(),
            record.target(),
            record.args()
        );
        // One write per record keeps lines whole when threads interleave.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

/// Parses a level name as accepted in `ALAYASIKI_LOG`.
pub fn parse_level(s: &str) -> Option<LevelFilter> {
    match s.trim().to_ascii_lowercase().as_str() {
        "off" => Some(LevelFilter::Off),
        "error" => Some(LevelFilter::Error),
        "warn" | "warning" => Some(LevelFilter::Warn),
        "info" => Some(LevelFilter::Info),
        "debug" => Some(LevelFilter::Debug),
        "trace" => Some(LevelFilter::Trace),
        _ => None,
    }
}

/// Installs the logger with the level from `ALAYASIKI_LOG` (default `info`).
/// An unknown level is reported once and the default kept.
pub fn init() {
    static LOGGER: StderrLogger = StderrLogger;
    let configured = std::env::var(LOG_ENV).ok();
    let level = configured
        .as_deref()
        .and_then(parse_level)
        .unwrap_or(LevelFilter::Info);
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
    if let Some(value) = configured.filter(|v| parse_level(v).is_none()) {
        log::warn!(
            "{LOG_ENV}={value:?} is not a level (error, warn, info, debug, trace, off); using info"
        );
    }
}

/// The `log` level matching an MCP `logging/setLevel` level name.
pub fn level_from_mcp(name: &str) -> Option<Level> {
    match name {
        "debug" => Some(Level::Debug),
        "info" | "notice" => Some(Level::Info),
        "warning" => Some(Level::Warn),
        "error" | "critical" | "alert" | "emergency" => Some(Level::Error),
        _ => None,
    }
}
