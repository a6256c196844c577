//! What `ingest PATH...` tells its user when it ends: the report on
//! stdout (counts, skip reasons, throughput), and after an interruption a
//! summary on stderr with the command that resumes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::admin::console::{errln, outln};
use crate::admin::progress::{clock, megabytes};
use crate::admin::Console;
use crate::transport::signals;

/// Example paths kept per skip reason for the report.
const EXAMPLES_PER_REASON: usize = 3;

/// What happened to one file.
#[derive(Debug)]
pub(super) enum Outcome {
    Stored {
        bytes: u64,
    },
    AlreadyStored,
    /// The same content as a document already stored (another file with
    /// the same text): not stored again.
    Duplicate,
    Skipped {
        reason: String,
        path: PathBuf,
    },
    Failed {
        reason: String,
        path: PathBuf,
    },
    /// Left unread because a termination signal arrived first.
    NotRead,
}

/// Counts for the final report.
#[derive(Debug, Default)]
pub(super) struct Report {
    /// Files found, plus entries the walk skipped.
    pub files: usize,
    pub bytes: u64,
    pub stored: usize,
    pub stored_bytes: u64,
    pub already_stored: usize,
    pub duplicates: usize,
    pub skipped: BTreeMap<String, (usize, Vec<PathBuf>)>,
    pub failed: Vec<(PathBuf, String)>,
    /// Files found but not read: the run was interrupted first.
    pub not_read: usize,
}

impl Report {
    pub fn skip(&mut self, reason: impl Into<String>, path: &Path) {
        let entry = self.skipped.entry(reason.into()).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES_PER_REASON {
            entry.1.push(path.to_path_buf());
        }
    }

    pub fn skipped_count(&self) -> usize {
        self.skipped.values().map(|(n, _)| n).sum()
    }

    /// Files that are in the memory: stored by this run or an earlier one
    /// (or found there with another file's name).
    pub fn in_memory(&self) -> usize {
        self.stored + self.already_stored + self.duplicates
    }

    pub fn record(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Stored { bytes } => {
                self.stored += 1;
                self.stored_bytes += bytes;
            }
            Outcome::AlreadyStored => self.already_stored += 1,
            Outcome::Duplicate => self.duplicates += 1,
            Outcome::Skipped { reason, path } => self.skip(reason, &path),
            Outcome::Failed { reason, path } => self.failed.push((path, reason)),
            Outcome::NotRead => self.not_read += 1,
        }
    }
}

/// Prints the report on stdout.
pub(super) fn print_report(console: &Console, report: &Report, chunks: i64, secs: f64) {
    let secs = secs.max(1e-3);
    outln!(
        console,
        "ingest: {} file(s) seen ({}) in {}",
        report.files,
        megabytes(report.bytes),
        clock(secs)
    );
    outln!(
        console,
        "  stored:         {} file(s), {}, {} chunk(s)",
        report.stored,
        megabytes(report.stored_bytes),
        chunks
    );
    outln!(
        console,
        "  already stored: {} file(s) (unchanged since an earlier run)",
        report.already_stored
    );
    if report.duplicates > 0 {
        outln!(
            console,
            "  duplicates:     {} file(s) (the same content as a stored document: not stored \
             again)",
            report.duplicates
        );
    }
    outln!(
        console,
        "  skipped:        {} file(s)",
        report.skipped_count()
    );
    for (reason, (n, examples)) in &report.skipped {
        let shown: Vec<String> = examples.iter().map(|p| shown(p)).collect();
        outln!(console, "    {n:>6}  {reason}  (e.g. {})", shown.join(", "));
    }
    outln!(console, "  failed:         {} file(s)", report.failed.len());
    for (path, reason) in &report.failed {
        outln!(console, "    {}: {reason}", shown(path));
    }
    if report.not_read > 0 {
        outln!(
            console,
            "  not yet stored: {} file(s) (the run stopped before they were read)",
            report.not_read
        );
    }
    outln!(
        console,
        "  throughput:     {:.1} files/s, {:.2} MB/s stored (extraction, embedding and \
         indexing included)",
        report.stored as f64 / secs,
        report.stored_bytes as f64 / 1e6 / secs
    );
}

/// How an interrupted run ended, for the summary on stderr.
pub(super) struct Interruption {
    /// The signal's number (SIGINT 2, SIGTERM 15).
    pub signal: i32,
    /// False if the signal came while the folders were still being
    /// listed (then `not_read` counts only the files found so far).
    pub walk_complete: bool,
    /// Stored documents still waiting to be indexed.
    pub pending_jobs: i64,
    /// The command that resumes (see [`resume_command`]).
    pub resume: String,
}

/// The signal's conventional name.
pub(super) fn signal_name(signal: i32) -> String {
    match signal {
        signals::SIGINT => "SIGINT".into(),
        signals::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Prints, on stderr, what an interrupted run stored, what it did not,
/// and how to resume. Called after the store is closed, so what it calls
/// durable is.
pub(super) fn print_interruption(console: &Console, report: &Report, stop: &Interruption) {
    errln!(
        console,
        "alayasiki-mcp ingest: interrupted by {}; stopped between files.",
        signal_name(stop.signal)
    );
    errln!(
        console,
        "  stored:         {} file(s), all durable ({} by this run, {} by an earlier run)",
        report.in_memory(),
        report.stored,
        report.already_stored
    );
    let more = if stop.walk_complete {
        ""
    } else {
        " found so far (the folders were still being listed)"
    };
    errln!(
        console,
        "  not yet stored: {} file(s){more}",
        report.not_read
    );
    errln!(
        console,
        "  skipped:        {} file(s); failed: {} (see the report on stdout)",
        report.skipped_count(),
        report.failed.len()
    );
    if stop.pending_jobs > 0 {
        errln!(
            console,
            "  indexing:       {} stored document(s) not yet searchable; {}",
            stop.pending_jobs,
            if console.is_client() {
                "the memory owner goes on indexing them"
            } else {
                "indexing resumes when this memory is next opened"
            }
        );
    }
    errln!(
        console,
        "To resume, run the same command again (files already stored are recognised by path \
         and content and not stored twice):"
    );
    errln!(console, "  {}", stop.resume);
}

/// The command that resumes this run, runnable from any directory: the
/// program as invoked, the paths and data directory made absolute, and the
/// tenant when it is not the default.
pub(super) fn resume_command(paths: &[PathBuf], data_dir: &Path, tenant: &str) -> String {
    let program: OsString = std::env::args_os()
        .next()
        .unwrap_or_else(|| "alayasiki-mcp".into());
    // A bare name is found on PATH again; a path is made absolute.
    let program = if Path::new(&program).components().count() > 1 {
        absolute(Path::new(&program)).into_os_string()
    } else {
        program
    };
    let mut words = vec![quote(&program.to_string_lossy()), "ingest".to_string()];
    words.extend(paths.iter().map(|p| quote(&absolute(p).to_string_lossy())));
    words.push("--data-dir".into());
    words.push(quote(&absolute(data_dir).to_string_lossy()));
    if tenant != crate::config::DEFAULT_TENANT {
        words.push("--tenant".into());
        words.push(quote(tenant));
    }
    words.join(" ")
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A walked path as the report shows it: control characters (an escape
/// sequence in a file's name would act on the terminal) and bidirectional
/// overrides (which reorder what is read) are written as `\u{..}` escapes.
pub(super) fn shown(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if unsafe_to_show(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a character would act on the terminal (a control character) or
/// reorder what is read (a bidirectional override or isolate).
fn unsafe_to_show(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Quotes a word for a POSIX shell (left bare when that is safe). A word
/// holding characters unsafe to print is written in dollar-single quotes
/// (POSIX.1-2024, bash, zsh, ksh) with those characters as `\xHH` bytes, so
/// the printed command is inert on the terminal and still pastes to the
/// same path.
#[cfg(not(windows))]
fn quote(word: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(bare) {
        word.to_string()
    } else if word.chars().any(unsafe_to_show) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\'' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                c if unsafe_to_show(c) => {
                    let mut utf8 = [0u8; 4];
                    for b in c.encode_utf8(&mut utf8).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Quotes a word for cmd.exe and PowerShell (double quotes around words
/// with spaces; Windows paths cannot contain `"`).
#[cfg(windows)]
fn quote(word: &str) -> String {
    if !word.is_empty() && !word.contains([' ', '\t', '&', '(', ')', ';', '\'']) {
        word.to_string()
    } else {
        format!("\"{word}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(windows))]
    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(quote("/tmp/notes-1.md"), "/tmp/notes-1.md");
        assert_eq!(quote("/tmp/my notes"), "'/tmp/my notes'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("a\x1b[2Jb"), r"$'a\x1b[2Jb'");
        assert_eq!(quote("it's\n"), r"$'it\'s\x0a'");
        assert_eq!(quote("x\u{202e}y\\"), r"$'x\xe2\x80\xaey\\'");
    }

    /// What the shell makes of each quoted word is the word itself.
    #[cfg(not(windows))]
    #[test]
    fn quoted_words_read_back_through_bash() {
        let Ok(_) = std::process::Command::new("bash")
            .arg("-c")
            .arg("true")
            .output()
        else {
            return;
        };
        for word in [
            "plain",
            "my notes",
            "it's",
            "$HOME",
            "a\x1b[2Jb",
            "it's\n\\",
            "x\u{202e}y",
        ] {
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {}", quote(word)))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                word,
                "{}",
                quote(word)
            );
        }
    }

    #[test]
    fn a_path_is_shown_without_what_would_act_on_the_terminal() {
        assert_eq!(
            shown(Path::new("a/\u{1b}[2Jb\u{202e}c\td.txt")),
            "a/\\u{1b}[2Jb\\u{202e}c\\u{9}d.txt"
        );
        assert_eq!(shown(Path::new("notes/été.md")), "notes/été.md");
    }

    #[cfg(not(windows))]
    #[test]
    fn resume_command_is_absolute_and_names_a_non_default_tenant() {
        let cwd = std::env::current_dir().unwrap();
        let cmd = resume_command(&[PathBuf::from("notes")], Path::new("/m"), "team a");
        assert!(
            cmd.ends_with(&format!(
                " ingest {} --data-dir /m --tenant 'team a'",
                quote(&cwd.join("notes").to_string_lossy())
            )),
            "{cmd}"
        );
        let cmd = resume_command(&[PathBuf::from("/n")], Path::new("/m"), "local");
        assert!(cmd.ends_with(" ingest /n --data-dir /m"), "{cmd}");
    }
}
