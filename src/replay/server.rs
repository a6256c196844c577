//! The server a fixture talks to: this same binary, spawned on a fresh
//! data directory over pipes, exactly as an MCP client starts it.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::transport::signals;

/// Lines of the server's log kept to show with a failure.
const LOG_TAIL_LINES: usize = 20;

/// How long the server may take to exit once its input is closed.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// How often a wait (for a reply, or for the seed's import) looks for a
/// termination signal: what a replay (or a recording) takes to stop once
/// told.
pub(super) const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// What the server wrote on stdout: a reply, or a line that is not JSON.
pub type Line = Result<Value, String>;

pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    log: Arc<Mutex<VecDeque<String>>>,
}

/// This binary, with the environment a replay runs it in: nothing of the
/// caller's own memory (the data directory is always given), a store of
/// its own in the process (no memory owner: the replay starts and stops
/// exactly the server it reads), and a log that says only what matters.
pub(super) fn this_binary(env: &[(String, String)]) -> std::io::Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.env_remove("ALAYASIKI_DATA_DIR");
    cmd.env(crate::serve::IN_PROCESS_ENV, "1");
    cmd.env("ALAYASIKI_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Ok(cmd)
}

/// Imports `seed` (an `alayasiki-mcp export`) into `data_dir` with this
/// binary's `import`. The error is what it printed; a termination signal
/// kills the import and is an error too.
pub fn seed(data_dir: &Path, seed: &Path, env: &[(String, String)]) -> Result<(), String> {
    let mut child = this_binary(env)
        .and_then(|mut cmd| {
            cmd.arg("import")
                .arg(seed)
                .arg("--data-dir")
                .arg(data_dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        })
        .map_err(|e| format!("cannot run import: {e}"))?;
    // Read as it comes, so a long message never blocks the import.
    let stderr = child.stderr.take().expect("piped");
    let printed = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if !signals::requested() => std::thread::sleep(SIGNAL_POLL),
            Ok(None) => break Err("interrupted".to_string()),
            Err(e) => break Err(format!("cannot wait for import: {e}")),
        }
    };
    if status.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let printed = printed.join().unwrap_or_default();
    match status? {
        s if s.success() => Ok(()),
        _ => Err(printed.trim().to_string()),
    }
}

impl ServerProcess {
    pub fn start(data_dir: &Path, env: &[(String, String)]) -> std::io::Result<ServerProcess> {
        let mut child = this_binary(env)?
            .arg("--data-dir")
            .arg(data_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("replay-stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let parsed = serde_json::from_str::<Value>(&line).map_err(|_| line);
                    if tx.send(parsed).is_err() {
                        break;
                    }
                }
            })?;
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let tail = log.clone();
        std::thread::Builder::new()
            .name("replay-stderr".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == LOG_TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            })?;
        Ok(ServerProcess {
            stdin: child.stdin.take(),
            child,
            lines,
            log,
        })
    }

    /// Writes `text` and a newline.
    pub fn write_line(&mut self, text: &str) -> std::io::Result<()> {
        self.write_bytes(text.as_bytes())
    }

    /// Writes `bytes` (not necessarily UTF-8) and a newline.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self.input()?;
        stdin.write_all(bytes)?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// Writes a line of `n` filler bytes, a block at a time: what a client
    /// line too large to record stands for (the server skips it whatever
    /// it held, and says how long it was).
    pub fn write_filler(&mut self, n: usize) -> std::io::Result<()> {
        let stdin = self.input()?;
        write_filler(stdin, n)?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// The server's input, while it is open.
    fn input(&mut self) -> std::io::Result<&mut ChildStdin> {
        self.stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("input closed"))
    }

    /// The next line within `wait`; `None` when none came, or as soon as
    /// a termination signal arrives.
    pub fn next_line(&self, wait: Duration) -> Option<Line> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left.min(SIGNAL_POLL)) {
                Ok(line) => return Some(line),
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return None,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) if signals::requested() => {
                    return None
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The server's last log lines.
    pub fn log_tail(&self) -> Vec<String> {
        let tail = self.log.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect()
    }

    /// Closes the server's input and waits for it to exit (killing it
    /// after [`EXIT_WAIT`]); `None` if it had to be killed.
    pub fn finish(mut self) -> Option<ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_WAIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return None;
                }
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A fresh, owner-only temporary directory for one replay, removed when
/// dropped.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    pub fn new() -> std::io::Result<ScratchDir> {
        let path = std::env::temp_dir().join(crate::ids::new_id("alayasiki-replay"));
        std::fs::create_dir(&path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(ScratchDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `n` bytes of filler (spaces) to `out` in blocks, never holding
/// more than one block.
pub fn write_filler(out: &mut impl Write, mut n: usize) -> std::io::Result<()> {
    static BLOCK: [u8; 64 * 1024] = [b' '; 64 * 1024];
    while n > 0 {
        let k = n.min(BLOCK.len());
        out.write_all(&BLOCK[..k])?;
        n -= k;
    }
    Ok(())
}
