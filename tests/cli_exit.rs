//! `alayasiki-mcp ingest` tells the truth in its exit status, through the
//! real binary: a PATH that does not exist is an error that stores nothing
//! (even of the other PATHs given); a folder of which nothing can be read
//! fails, one with something readable succeeds with its skips as report
//! lines; SIGINT and SIGTERM in the middle of a large folder stop it with
//! 130 and 143, a summary of what was stored and what was not, and a
//! resume command that, run as printed, completes the memory with no file
//! stored twice. A stdout that refuses the report fails the command with 1
//! after its work, not with a panic.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;

/// Documents in the memory, as the status tool reports them.
fn documents(mem: &Path) -> i64 {
    let mut s = Server::ready(mem);
    let n = s.ok("alayasiki_status", json!({}))["documents"]
        .as_i64()
        .unwrap();
    s.close();
    n
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn a_missing_path_is_an_error_and_stores_nothing() {
    let dir = TempDir::new("exit-missing");
    let missing = dir.path().join("no/such/path");
    let missing_arg = missing.to_str().unwrap();

    // Into a fresh directory: refused before a store is even created.
    let fresh = dir.path().join("fresh");
    let out = cli(&fresh, &["ingest", missing_arg]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot read '{missing_arg}': it does not exist")),
        "{stderr}"
    );
    assert!(stderr.contains("nothing stored"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        !fresh.exists(),
        "a refused ingest created the data directory"
    );

    // Into a memory that has a document: a readable PATH named beside the
    // missing one is not stored either.
    let mem = dir.path().join("m");
    let seed = dir.path().join("seed.txt");
    write(&seed, b"The ferry leaves at 07:40 from pier 3.");
    cli_ok(&mem, &["ingest", seed.to_str().unwrap()]);
    let good = dir.path().join("good.txt");
    write(&good, b"The lighthouse keeper is Ines Duarte.");
    let out = cli(&mem, &["ingest", good.to_str().unwrap(), missing_arg]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(missing_arg));
    assert_eq!(documents(&mem), 1, "nothing may be stored");
    let again = cli_ok(&mem, &["ingest", good.to_str().unwrap()]);
    assert!(again.contains("stored:         1 file(s)"), "{again}");

    // A named link to nothing says so.
    #[cfg(unix)]
    {
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("gone"), &link).unwrap();
        let out = cli(&mem, &["ingest", link.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("symbolic link to something that does not exist"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(documents(&mem), 2);
}

#[test]
fn a_folder_with_nothing_readable_fails_and_one_readable_file_succeeds() {
    let dir = TempDir::new("exit-unreadable");
    let root = dir.path().join("folder");
    write(&root.join("empty.txt"), b"");
    write(&root.join("photo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write(&root.join("latin1.txt"), b"caf\xe9 cr\xe8me\n");
    write(
        &root.join("tool"),
        &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0xff, 0xfe, 0],
    );
    write(&root.join(".hidden/secret.txt"), b"not walked");
    let mem = dir.path().join("m");
    let root_arg = root.to_str().unwrap();

    let out = cli(&mem, &["ingest", root_arg]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("nothing stored: none of the 5 file(s) found could be read"),
        "{stderr}"
    );
    // The reasons are report lines, as for any skip.
    assert!(stdout.contains("skipped:        5 file(s)"), "{stdout}");
    for reason in [
        "empty",
        "image or audio: needs a description",
        "not valid UTF-8 text",
        "binary of no supported type",
        "hidden (name starts with a dot)",
    ] {
        assert!(stdout.contains(reason), "{reason} not reported:\n{stdout}");
    }
    assert_eq!(documents(&mem), 0);

    // One readable file among them: exit 0, the skips still reported.
    write(&root.join("notes.md"), b"# Tides\n\nHigh water at 06:12.\n");
    let out = cli(&mem, &["ingest", root_arg]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("stored:         1 file(s)"), "{stdout}");
    assert!(stdout.contains("skipped:        5 file(s)"), "{stdout}");
    // Running it again stores nothing new and is still a success: the
    // readable file is in the memory.
    let out = cli(&mem, &["ingest", root_arg]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("already stored: 1 file(s)"), "{stdout}");
    assert_eq!(documents(&mem), 1);

    // A folder with no files at all has nothing that failed: exit 0, and
    // stderr says nothing was there.
    let empty = dir.path().join("empty-folder");
    std::fs::create_dir(&empty).unwrap();
    let out = cli(&mem, &["ingest", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("nothing to store: no files under the PATH(s) given"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ingest_help_documents_the_exit_statuses() {
    let dir = TempDir::new("exit-help");
    let out = cli(&dir.path().join("never"), &["ingest", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for status in [
        "0    every file found is stored",
        "1    a PATH does not exist",
        "130  interrupted by SIGINT",
        "143  interrupted by SIGTERM",
    ] {
        assert!(help.contains(status), "{status} not in:\n{help}");
    }
    assert!(!dir.path().join("never").exists());
}

/// SIGINT and SIGTERM, sent with kill(1).
#[cfg(unix)]
mod signals {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// Files in the folder the signal tests interrupt: enough that ingesting
    /// them takes seconds, so a signal sent after the first file lands in the
    /// middle.
    const LARGE_FOLDER_FILES: usize = 2500;
    /// Paragraphs per generated file (about 2 KB of text in all).
    const PARAGRAPHS_PER_FILE: usize = 4;
    /// How long a test waits for the binary to start, stop or finish.
    const PATIENCE: Duration = Duration::from_secs(120);

    /// A folder of distinct text files, some in subfolders.
    fn large_folder(root: &Path) {
        const WORDS: &[&str] = &[
            "harbour",
            "ferry",
            "lighthouse",
            "keeper",
            "tide",
            "pier",
            "crane",
            "rope",
            "island",
            "garden",
            "shade",
            "water",
            "turbine",
            "captain",
            "schedule",
            "morning",
            "evening",
            "north",
            "south",
            "beacon",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..LARGE_FOLDER_FILES {
            let mut body = String::new();
            for p in 0..PARAGRAPHS_PER_FILE {
                body.push_str(&format!(
                    "Log {i}, part {p}: Captain Maria Lopes{} met Jonas Berg{p} in Porto.",
                    i % 50
                ));
                for _ in 0..60 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    body.push(' ');
                    body.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
                }
                body.push_str(".\n\n");
            }
            write(
                &root.join(format!("batch{}/log{i:05}.txt", i % 10)),
                body.as_bytes(),
            );
        }
    }

    /// The number in a summary line `  <label> <n> file(s)...`.
    fn count_after(stderr: &str, label: &str) -> usize {
        let line = stderr
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in:\n{stderr}"));
        line.trim_start()[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("no count in {line:?}"))
    }

    /// Starts a bulk ingest of a large folder, sends `signal` once the first
    /// file is stored, and checks the exit status, the summary, the store, and
    /// that the printed resume command completes the memory exactly.
    fn interrupted_ingest_resumes(tag: &str, signal: &str, want_status: i32) {
        let dir = TempDir::new(tag);
        let root = dir.path().join("folder");
        large_folder(&root);
        let mem = dir.path().join("m");
        let mut child = Command::new(BIN)
            .env("ALAYASIKI_IN_PROCESS", "1")
            .arg("ingest")
            .arg(&root)
            .arg("--data-dir")
            .arg(&mem)
            .env("ALAYASIKI_LOG", "warn")
            .env_remove("ALAYASIKI_DATA_DIR")
            .env_remove("ALAYASIKI_MCP_TENANT")
            .env_remove("ALAYASIKI_MCP_SUBJECT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
        let (tx, lines) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The first progress line comes once the first file is stored.
        let mut seen = Vec::new();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let line = lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no progress line; stderr so far:\n{seen:?}"));
            let progress = line.starts_with("ingest: ") && line.contains(" files");
            seen.push(line);
            if progress {
                break;
            }
        }
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "ingest did not stop on {signal}");
            std::thread::sleep(Duration::from_millis(20));
        };
        seen.extend(lines.iter());
        let stderr = seen.join("\n");
        let stdout = stdout.join().unwrap();
        assert_eq!(status.code(), Some(want_status), "{stderr}\n{stdout}");

        // The summary: what is stored, what is not, how to resume.
        assert!(
            stderr.contains(&format!(
                "interrupted by SIG{signal}; stopped between files"
            )),
            "{stderr}"
        );
        let stored = count_after(&stderr, "stored:");
        let not_yet = count_after(&stderr, "not yet stored:");
        assert!(stored >= 1, "the first file was stored before the signal");
        assert!(
            not_yet >= 1,
            "the signal came after the last file:\n{stderr}"
        );
        assert_eq!(stored + not_yet, LARGE_FOLDER_FILES, "{stderr}");
        assert!(
            stdout.contains(&format!("not yet stored: {not_yet} file(s)")),
            "{stdout}"
        );
        let resume = stderr
            .lines()
            .skip_while(|l| !l.starts_with("To resume, run the same command again"))
            .nth(1)
            .unwrap_or_else(|| panic!("no resume command in:\n{stderr}"))
            .trim()
            .to_string();
        assert!(
            resume.contains(" ingest ") && resume.contains("--data-dir"),
            "{resume}"
        );
        // Every file the summary calls stored is in the store, read straight
        // from the database file with no server to replay anything.
        let conn = rusqlite::Connection::open(mem.join("memory.db")).unwrap();
        let in_store: i64 = conn
            .query_row("SELECT count(*) FROM documents", [], |r| r.get(0))
            .unwrap();
        drop(conn);
        assert_eq!(in_store as usize, stored, "{stderr}");

        // The resume command, run as printed, from another directory.
        let out = Command::new("sh")
            .arg("-c")
            .arg(&resume)
            .current_dir(std::env::temp_dir())
            .env("ALAYASIKI_IN_PROCESS", "1")
            .env("ALAYASIKI_LOG", "warn")
            .env_remove("ALAYASIKI_DATA_DIR")
            .env_remove("ALAYASIKI_MCP_TENANT")
            .env_remove("ALAYASIKI_MCP_SUBJECT")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let report = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{resume}\n{report}\n{}",
            text(&out.stderr)
        );
        assert!(
            report.contains(&format!("already stored: {stored} file(s)")),
            "{report}"
        );
        assert!(
            report.contains(&format!("stored:         {not_yet} file(s)")),
            "{report}"
        );
        assert_eq!(documents(&mem), LARGE_FOLDER_FILES as i64, "no duplicates");
    }

    #[test]
    fn sigint_mid_ingest_exits_130_with_a_summary_and_the_resume_completes_exactly() {
        interrupted_ingest_resumes("exit-sigint", "INT", 130);
    }

    #[test]
    fn sigterm_mid_ingest_exits_143_with_a_summary_and_the_resume_completes_exactly() {
        interrupted_ingest_resumes("exit-sigterm", "TERM", 143);
    }
}

/// A report stdout will not take (`> /dev/full`, or a reader that closed
/// the pipe) does not panic the command halfway: the work is done, the
/// failure is one line on stderr (none for a closed pipe, the reader's
/// choice), and the exit status is 1.
#[test]
fn a_stdout_that_refuses_the_report_fails_the_command_after_its_work_without_a_panic() {
    let dir = TempDir::new("exit-stdout");
    let mem = dir.path().join("m");
    write(
        &dir.path().join("in/pump.txt"),
        b"The north pump ran dry at dawn.",
    );
    let folder = dir.path().join("in");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["ingest", folder.to_str().unwrap(), "--data-dir"])
        .arg(&mem)
        .env("ALAYASIKI_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(full)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("alayasiki-mcp: cannot write to standard output: No space left"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(documents(&mem), 1, "the ingest's work was lost");

    let mut child = std::process::Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["query", "north pump", "--data-dir"])
        .arg(&mem)
        .env("ALAYASIKI_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("cannot write"), "{stderr}");
}
