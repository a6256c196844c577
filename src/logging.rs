//! The stderr logger. stdout belongs to the protocol, so every log line goes
//! to stderr, one line per record, with a UTC timestamp and the level.
//!
//! Logging never blocks the server. A stdio client that never reads its
//! child's stderr fills the pipe, and a write to a full pipe blocks; so
//! records go through a bounded queue ([`MAX_QUEUED_LOG_LINES`]) to one
//! writer thread, the only code that touches stderr. When the queue is
//! full a record is dropped and counted, and the writer says how many were
//! dropped once it can write again. A message repeated in a burst (an
//! error retried every few milliseconds) is written at most
//! [`MAX_REPEATS_PER_WINDOW`] times per [`REPEAT_WINDOW`]; the rest are
//! counted and summarised.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use log::{Level, LevelFilter, Log, Metadata, Record};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::clock;

/// Environment variable holding the level: error, warn, info, debug, trace
/// (or off).
pub const LOG_ENV: &str = "ALAYASIKI_LOG";

/// Log lines waiting for stderr; past this, new ones are dropped (and
/// counted) rather than waited for.
pub const MAX_QUEUED_LOG_LINES: usize = 1024;

/// How often the same message may be written within [`REPEAT_WINDOW`].
pub const MAX_REPEATS_PER_WINDOW: u32 = 5;

/// The window over which repeats of one message are counted.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(10);

/// Messages whose repeats are tracked at once; past this the oldest
/// window is forgotten (bounds the tracker's memory).
const MAX_TRACKED_MESSAGES: usize = 256;

/// How long [`StderrLogger::flush`] waits for queued lines to be written.
const FLUSH_WAIT: Duration = Duration::from_millis(200);

struct StderrLogger {
    lines: OnceLock<Sender<String>>,
    /// Records dropped because the queue was full, not yet reported.
    dropped: AtomicU64,
    repeats: Mutex<Option<Repeats>>,
}

/// Repeat counts per message (level, target and text) in its window.
#[derive(Default)]
struct Repeats {
    windows: HashMap<String, (Instant, u32)>,
}

impl Repeats {
    /// Whether a record with this key may be written now; when its window
    /// has ended, also how many repeats it suppressed.
    fn admit(&mut self, key: &str, now: Instant) -> (bool, u32) {
        if self.windows.len() >= MAX_TRACKED_MESSAGES && !self.windows.contains_key(key) {
            let oldest = self
                .windows
                .iter()
                .min_by_key(|(_, (start, _))| *start)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.windows.remove(&k);
            }
        }
        let entry = self.windows.entry(key.to_string()).or_insert((now, 0));
        let mut suppressed = 0;
        if now.duration_since(entry.0) >= REPEAT_WINDOW {
            suppressed = entry.1.saturating_sub(MAX_REPEATS_PER_WINDOW);
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
        (entry.1 <= MAX_REPEATS_PER_WINDOW, suppressed)
    }
}

impl StderrLogger {
    fn queue(&self, line: String) {
        let Some(lines) = self.lines.get() else {
            return;
        };
        match lines.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = format!(
            "{:5} {}: {}",
            record.level(),
            record.target(),
            record.args()
        );
        let (admitted, suppressed) = self
            .repeats
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(Repeats::default)
            .admit(&message, Instant::now());
        let stamp = clock::rfc3339(clock::now_ms());
        if suppressed > 0 {
            self.queue(format!(
                "{stamp} {message} (and {suppressed} more time(s) in {REPEAT_WINDOW:?}, not shown)\n"
            ));
        }
        if admitted {
            self.queue(format!("{stamp} {message}\n"));
        }
    }

    fn flush(&self) {
        let Some(lines) = self.lines.get() else {
            return;
        };
        let deadline = Instant::now() + FLUSH_WAIT;
        while !lines.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

static LOGGER: StderrLogger = StderrLogger {
    lines: OnceLock::new(),
    dropped: AtomicU64::new(0),
    repeats: Mutex::new(None),
};

/// The only writer of stderr's log lines. A line is written whole (one
/// write call), so lines stay whole beside the few direct `eprintln!`s.
fn write_lines(lines: Receiver<String>) {
    let mut err = std::io::stderr();
    for line in lines {
        let dropped = LOGGER.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let note = format!(
                "{} WARN  alayasiki_mcp::logging: {dropped} log line(s) dropped: stderr was not \
                 being read (MAX_QUEUED_LOG_LINES)\n",
                clock::rfc3339(clock::now_ms())
            );
            let _ = err.write_all(note.as_bytes());
        }
        let _ = err.write_all(line.as_bytes());
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

/// Installs the logger with the level from `ALAYASIKI_LOG` (default `info`)
/// and starts its writer thread. An unknown level is reported once and the
/// default kept.
pub fn init() {
    let configured = std::env::var(LOG_ENV).ok();
    let level = configured
        .as_deref()
        .and_then(parse_level)
        .unwrap_or(LevelFilter::Info);
    let (tx, rx) = crossbeam_channel::bounded(MAX_QUEUED_LOG_LINES);
    if LOGGER.lines.set(tx).is_err() {
        return; // already installed
    }
    let started = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(move || write_lines(rx));
    if started.is_err() {
        eprintln!("alayasiki: cannot start the log writer thread; logging is off");
        return;
    }
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
    if let Some(value) = configured.filter(|v| parse_level(v).is_none()) {
        log::warn!(
            "{LOG_ENV}={value:?} is not a level (error, warn, info, debug, trace, off); using info"
        );
    }
}

/// Waits (briefly, [`FLUSH_WAIT`] at most) until queued log lines are
/// written: call before the process exits.
pub fn flush() {
    log::logger().flush();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_repeated_in_a_burst_is_written_a_few_times_then_summarised() {
        let mut r = Repeats::default();
        let t0 = Instant::now();
        let admitted = (0..100).filter(|_| r.admit("E x: disk full", t0).0).count();
        assert_eq!(admitted, MAX_REPEATS_PER_WINDOW as usize);
        // Another message is not affected.
        assert!(r.admit("W y: other", t0).0);
        // After the window, it is written again and the rest reported.
        let (ok, suppressed) = r.admit("E x: disk full", t0 + REPEAT_WINDOW);
        assert!(ok);
        assert_eq!(suppressed, 100 - MAX_REPEATS_PER_WINDOW);
    }

    #[test]
    fn the_tracker_forgets_the_oldest_message_past_its_bound() {
        let mut r = Repeats::default();
        let t0 = Instant::now();
        for i in 0..MAX_TRACKED_MESSAGES + 10 {
            r.admit(&format!("m{i}"), t0 + Duration::from_millis(i as u64));
        }
        assert!(r.windows.len() <= MAX_TRACKED_MESSAGES);
        assert!(!r.windows.contains_key("m0"));
    }
}
