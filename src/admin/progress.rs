//! Progress on stderr for long subcommands.
//!
//! On a terminal: one line redrawn in place (a bar, counts, rate and ETA)
//! at most every [`REDRAW_EVERY`]. Otherwise (a log file, CI, a pipe):
//! plain lines every [`PLAIN_EVERY`], so logs stay readable and small.
//! Rates and the ETA come from the whole run so far, which is steadier than
//! an instantaneous rate and good enough for runs of minutes.

use std::time::{Duration, Instant};

use super::Console;

/// Shortest interval between redraws of the terminal line.
pub const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Interval between plain progress lines when stderr is not a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);
/// How long loops that wait on something sleep between checks.
pub const TICK: Duration = Duration::from_millis(200);
/// Width of the terminal progress bar, in characters.
const BAR_WIDTH: usize = 24;

pub struct Progress {
    console: Console,
    label: String,
    unit: &'static str,
    total_items: Option<u64>,
    total_bytes: Option<u64>,
    items: u64,
    bytes: u64,
    started: Instant,
    last_shown: Option<Instant>,
    terminal: bool,
    /// A terminal line is on screen and must be ended before other output.
    drawn: bool,
}

impl Progress {
    /// `unit` names what `items` counts ("files", "documents indexed").
    /// Totals, when known, give a percentage and an ETA.
    pub fn new(
        console: &Console,
        label: &str,
        unit: &'static str,
        total_items: Option<u64>,
        total_bytes: Option<u64>,
    ) -> Progress {
        Progress {
            console: console.clone(),
            label: label.to_string(),
            unit,
            total_items,
            total_bytes,
            items: 0,
            bytes: 0,
            started: Instant::now(),
            last_shown: None,
            terminal: console.stderr_is_terminal(),
            drawn: false,
        }
    }

    /// Adds to the counts and shows progress if it is time to.
    pub fn advance(&mut self, items: u64, bytes: u64) {
        self.set(self.items + items, self.bytes + bytes);
    }

    /// Sets the counts and shows progress if it is time to.
    pub fn set(&mut self, items: u64, bytes: u64) {
        self.items = items;
        self.bytes = bytes;
        let every = if self.terminal {
            REDRAW_EVERY
        } else {
            PLAIN_EVERY
        };
        let due = self.last_shown.is_none_or(|t| t.elapsed() >= every);
        if due {
            self.show();
        }
    }

    /// Prints a message on its own line without garbling the bar.
    pub fn note(&mut self, message: &str) {
        self.clear_line();
        self.console.eprint(format_args!("{message}\n"));
    }

    /// Shows the final counts and ends the line.
    pub fn finish(&mut self) {
        self.show();
        if self.drawn {
            self.console.err(b"\n");
            self.drawn = false;
        }
    }

    fn clear_line(&mut self) {
        if self.drawn {
            self.console.err(b"\r\x1b[K");
            self.drawn = false;
        }
    }

    fn show(&mut self) {
        self.last_shown = Some(Instant::now());
        let line = self.line();
        if self.terminal {
            self.console.eprint(format_args!("\r\x1b[K{line}"));
            self.drawn = true;
        } else {
            self.console.eprint(format_args!("{line}\n"));
        }
    }

    /// The progress line: `label: [bar] pct items/total unit, bytes,
    /// rates, ETA`.
    fn line(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let fraction = match (self.total_bytes, self.total_items) {
            (Some(total), _) if total > 0 => Some(self.bytes as f64 / total as f64),
            (_, Some(total)) if total > 0 => Some(self.items as f64 / total as f64),
            (_, Some(_)) | (Some(_), _) => Some(1.0),
            _ => None,
        }
        .map(|f| f.clamp(0.0, 1.0));
        let mut line = format!("{}: ", self.label);
        if let Some(f) = fraction {
            if self.terminal {
                let filled = (f * BAR_WIDTH as f64).round() as usize;
                line.push('[');
                line.push_str(&"#".repeat(filled));
                line.push_str(&"-".repeat(BAR_WIDTH - filled));
                line.push_str("] ");
            }
            line.push_str(&format!("{:3.0}% ", f * 100.0));
        }
        match self.total_items {
            Some(total) => line.push_str(&format!("{}/{total} {}", self.items, self.unit)),
            None => line.push_str(&format!("{} {}", self.items, self.unit)),
        }
        if self.bytes > 0 || self.total_bytes.is_some() {
            match self.total_bytes {
                Some(total) => {
                    line.push_str(&format!(", {}/{}", megabytes(self.bytes), megabytes(total)))
                }
                None => line.push_str(&format!(", {}", megabytes(self.bytes))),
            }
        }
        line.push_str(&format!(", {:.0}/s", self.items as f64 / secs));
        if self.bytes > 0 {
            line.push_str(&format!(", {:.1} MB/s", self.bytes as f64 / 1e6 / secs));
        }
        if let Some(f) = fraction.filter(|f| *f > 0.0 && *f < 1.0) {
            let eta = secs * (1.0 - f) / f;
            line.push_str(&format!(", ETA {}", clock(eta)));
        }
        line
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.drawn {
            self.console.err(b"\n");
        }
    }
}

/// Bytes as decimal megabytes with one decimal (`12.3 MB`).
pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Seconds as `m:ss` (or `h:mm:ss`).
pub fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_like_a_clock() {
        assert_eq!(clock(0.0), "0:00");
        assert_eq!(clock(65.4), "1:05");
        assert_eq!(clock(3725.0), "1:02:05");
    }

    #[test]
    fn plain_line_has_counts_rate_and_eta() {
        let mut p = Progress::new(&Console::process(), "ingest", "files", Some(10), Some(1000));
        p.terminal = false;
        p.items = 5;
        p.bytes = 500;
        let line = p.line();
        assert!(
            line.starts_with("ingest:  50% 5/10 files, 0.0 MB/0.0 MB"),
            "{line}"
        );
        assert!(line.contains("/s"), "{line}");
        assert!(line.contains("ETA"), "{line}");
        p.terminal = true;
        assert!(
            p.line().contains("[############------------]"),
            "{}",
            p.line()
        );
    }
}
