//! Subcommands beside running agents: `ingest`, `query`, `status`,
//! `export`, `forget`, `ui` and `reindex` reach the data directory's owner
//! (started by an agent's `alayasiki-mcp` on stdio) instead of being
//! refused because the directory is in use. Through the real binary: the
//! agents are stdio relays, the commands are run from the "shell" with the
//! environment a user has (no `ALAYASIKI_IN_PROCESS`).
#![cfg(unix)]

mod common;

use common::owner::{client, client_with, owner_pid, owners_of, stop_owner, wait_until, SHARED};
use common::{Server, TempDir, BIN, TIMEOUT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A subcommand as a user runs it, on `dir`.
fn command(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .env_remove("ALAYASIKI_MCP_SUBJECT")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args, SHARED)
        .output()
        .expect("run alayasiki-mcp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a subcommand that must succeed; its stdout.
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {:?}\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn found(s: &mut Server, question: &str, marker: &str) -> bool {
    s.query(question)["evidence"].to_string().contains(marker)
}

/// A folder of `n` small notes, each naming its own number.
fn notes(root: &Path, n: usize) {
    std::fs::create_dir_all(root).unwrap();
    for i in 0..n {
        std::fs::write(
            root.join(format!("note-{i:05}.txt")),
            format!("Harbour note {i}: the ferry to island {i} leaves from pier {i}.\n"),
        )
        .unwrap();
    }
}

/// Spawns a subcommand with piped output; stderr lines arrive on the
/// returned channel.
fn spawn(cmd: &mut Command) -> (Child, std::sync::mpsc::Receiver<String>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for the first stderr line `ready` accepts; the lines so far.
fn wait_for_line(
    lines: &std::sync::mpsc::Receiver<String>,
    ready: impl Fn(&str) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + TIMEOUT;
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no such line; stderr so far:\n{seen:#?}"));
        let done = ready(&line);
        seen.push(line);
        if done {
            return seen;
        }
    }
}

/// Files in the folder a test interrupts the ingest of.
const FILES: usize = 1500;

/// Starts `ingest` of a folder of [`FILES`] notes (made in `root`) into
/// `mem` through its owner, and waits until the first file is stored.
fn ingest_under_way(
    root: &Path,
    mem: &Path,
) -> (PathBuf, Child, std::sync::mpsc::Receiver<String>) {
    let folder = root.join("folder");
    notes(&folder, FILES);
    let (child, lines) = spawn(&mut command(
        mem,
        &["ingest", folder.to_str().unwrap()],
        SHARED,
    ));
    wait_for_line(&lines, |l| {
        l.starts_with("ingest: ") && l.contains(" files")
    });
    (folder, child, lines)
}

fn signal(pid: u32, name: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(sent.success());
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the command did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn commands_beside_a_running_agent_share_its_memory() {
    let dir = TempDir::new("commands-shared");
    let mem = dir.path().join("m");
    let mut agent = client(&mem);
    let owner = owner_pid(&mem);
    agent.ingest("Quillon Marsh keeps the harbour's tide tables in a copper box.");

    // Files from the shell, stored in the agent's memory while it runs.
    let folder = dir.path().join("folder");
    notes(&folder, 3);
    let report = run_ok(&mem, &["ingest", folder.to_str().unwrap()]);
    assert!(report.contains("stored:         3 file(s)"), "{report}");
    assert!(found(
        &mut agent,
        "Which pier does the ferry to island 2 leave from?",
        "pier 2"
    ));

    // The agent's write, from the shell.
    let answer = run_ok(&mem, &["query", "Who", "keeps", "the", "tide", "tables?"]);
    assert!(answer.contains("Quillon Marsh"), "{answer}");

    // Status names the owner both reach, and counts them.
    let status = run_ok(&mem, &["status"]);
    assert!(
        status.contains(&format!("the memory owner, pid {owner}"))
            && status.contains("2 client(s) connected"),
        "{status}"
    );
    assert!(status.contains("4 documents"), "{status}");
    let status: Value = serde_json::from_str(&run_ok(&mem, &["status", "--json"])).unwrap();
    assert_eq!(status["owner"]["pid"], owner, "{status}");
    assert_eq!(status["documents"], 4, "{status}");

    // An export, from the owner, byte for byte on stdout.
    let export = run_ok(&mem, &["export"]);
    let lines: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{export}");
    assert_eq!(lines[0]["documents"], 4);

    // Forgetting from the shell removes it for the agent.
    let note = std::fs::canonicalize(folder.join("note-00001.txt")).unwrap();
    let forgot = run_ok(&mem, &["forget", "--source", note.to_str().unwrap()]);
    assert!(forgot.contains("forgot 1 document(s)"), "{forgot}");
    assert!(!found(
        &mut agent,
        "Which pier does the ferry to island 1 leave from?",
        "pier 1"
    ));

    // One owner served it all, and serves the agent on.
    assert_eq!(owner_pid(&mem), owner);
    assert_eq!(owners_of(&mem), 1);
    assert!(found(&mut agent, "Who keeps the tide tables?", "Quillon"));
    agent.close();
    stop_owner(&mem);
}

#[test]
fn the_memory_page_is_served_beside_a_running_agent() {
    let dir = TempDir::new("commands-ui");
    let mem = dir.path().join("m");
    let mut agent = client(&mem);
    agent.ingest("The pier crane was repainted orange in spring.");
    let owner = owner_pid(&mem);
    let mut ui = command(&mem, &["ui", "--bind", "127.0.0.1:0"], SHARED)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(ui.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/ui#secret="),
        "{url}"
    );
    // The page answers, from the owner the agent uses.
    let addr = url["http://".len()..].split('/').next().unwrap();
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    write!(
        conn,
        "GET /ui HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    conn.read_to_string(&mut page).unwrap();
    assert!(
        page.starts_with("HTTP/1.1 200"),
        "{}",
        &page[..page.len().min(200)]
    );
    let status = agent.ok("alayasiki_status", json!({}));
    assert_eq!(status["owner"]["pid"], owner);
    assert!(status["ui"]["address"].as_str().is_some(), "{status}");
    // Ctrl-C stops the page, not the memory.
    signal(ui.id(), "INT");
    let code = wait_exit(&mut ui);
    assert!(code.success(), "{code:?}");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "the page stopped with its command"
    );
    assert!(found(&mut agent, "What colour is the crane?", "orange"));
    agent.close();
    stop_owner(&mem);
}

#[test]
fn an_interrupted_ingest_through_the_owner_reports_and_resumes() {
    let dir = TempDir::new("commands-interrupted");
    let mem = dir.path().join("m");
    let mut agent = client(&mem);
    let (_, mut child, lines) = ingest_under_way(dir.path(), &mem);
    signal(child.id(), "TERM");
    let status = wait_exit(&mut child);
    let stderr: Vec<String> = lines.try_iter().collect();
    let stderr = stderr.join("\n");
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(
        stderr.contains("interrupted by SIGTERM; stopped between files"),
        "{stderr}"
    );
    let resume = stderr
        .lines()
        .skip_while(|l| !l.starts_with("To resume"))
        .nth(1)
        .unwrap_or_else(|| panic!("no resume command in:\n{stderr}"))
        .trim()
        .to_string();
    // The agent was served throughout, by the same owner.
    assert!(found(
        &mut agent,
        "Where does the ferry to island 0 leave from?",
        "pier 0"
    ));
    // The printed command resumes, and stores nothing twice.
    let out = Command::new("sh")
        .arg("-c")
        .arg(&resume)
        .env("ALAYASIKI_OWNER_IDLE_SECS", "1")
        .env("ALAYASIKI_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{resume}\n{}", text(&out.stderr));
    let status: Value = serde_json::from_str(&run_ok(&mem, &["status", "--json"])).unwrap();
    assert_eq!(status["documents"], FILES, "{status}");
    agent.close();
    stop_owner(&mem);
}

#[test]
fn reindex_asks_an_idle_owner_to_make_way_and_names_a_busy_one() {
    let dir = TempDir::new("commands-reindex");
    let mem = dir.path().join("m");
    // The owner would otherwise stop a second after its last client: this
    // one stays, so that reindex meets it.
    let staying = [
        ("ALAYASIKI_IN_PROCESS", ""),
        ("ALAYASIKI_OWNER_IDLE_SECS", "60"),
    ];
    let mut agent = client_with(&mem, &staying);
    agent.ingest("The lighthouse keeper logs the evening fog at nine.");
    let owner = owner_pid(&mem);
    let busy = command(&mem, &["reindex"], &staying).output().unwrap();
    assert_eq!(busy.status.code(), Some(3), "{}", text(&busy.stderr));
    let why = text(&busy.stderr);
    assert!(
        why.contains(&format!("pid {owner}")) && why.contains("1 other client(s)"),
        "{why}"
    );
    agent.close();
    let idle = command(&mem, &["reindex"], &staying).output().unwrap();
    let said = text(&idle.stderr);
    assert!(idle.status.success(), "{said}");
    assert!(
        said.contains("making way") && said.contains("reindex: done"),
        "{said}"
    );
    assert!(wait_until(TIMEOUT, || owners_of(&mem) == 0));
    // The next agent starts an owner on the re-embedded memory.
    let mut next = client(&mem);
    assert!(found(&mut next, "When is the fog logged?", "nine"));
    next.close();
    stop_owner(&mem);
}

#[test]
fn a_command_whose_owner_dies_says_so_and_nothing_stored_is_lost() {
    let dir = TempDir::new("commands-owner-killed");
    let mem = dir.path().join("m");
    let (folder, mut child, lines) = ingest_under_way(dir.path(), &mem);
    signal(owner_pid(&mem), "KILL");
    let status = wait_exit(&mut child);
    let stderr: Vec<String> = lines.try_iter().collect();
    let stderr = stderr.join("\n");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stopped before the command finished")
            && stderr.contains("what it stored before is kept"),
        "{stderr}"
    );
    // Run again, it completes: every file exactly once.
    let report = run_ok(&mem, &["ingest", folder.to_str().unwrap()]);
    assert!(report.contains("already stored:"), "{report}");
    let status: Value = serde_json::from_str(&run_ok(&mem, &["status", "--json"])).unwrap();
    assert_eq!(status["documents"], FILES, "{status}");
    stop_owner(&mem);
}

#[test]
fn a_command_on_a_directory_without_memory_starts_no_owner() {
    let dir = TempDir::new("commands-nothing");
    let mem: PathBuf = dir.path().join("empty");
    std::fs::create_dir_all(&mem).unwrap();
    for args in [&["query", "anything"][..], &["status"], &["export"]] {
        let out = command(&mem, args, SHARED)
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
    assert!(!mem.join("alayasiki.sock").exists());
    assert!(!mem.join("owner.log").exists());
    assert_eq!(owners_of(&mem), 0);
}
