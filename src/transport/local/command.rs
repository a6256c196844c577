//! A subcommand run by the owner for a local client: `alayasiki-mcp
//! ingest`, `query`, `ui`, ... beside running agents.
//!
//! After the hellos (purpose [`Purpose::Command`]) both sides exchange
//! frames: a kind byte, the payload's length (4 bytes, big-endian) and the
//! payload. The client sends one [`Frame::Request`] (what to run, as JSON,
//! which the application layer reads: this module never looks inside) and,
//! when the user interrupts it, [`Frame::Interrupt`] with the signal's
//! number. The owner runs the command with the client's identity and sends
//! what it prints as [`Frame::Out`] and [`Frame::Err`], then its exit
//! status in [`Frame::Exit`]. The client writes those to its own stdout
//! and stderr and exits with that status, so a command reads and exits
//! exactly as it would have in-process.
//!
//! A client that goes away (its connection ends) stops its command as a
//! SIGHUP would; an owner that stops mid-command (killed) leaves the client
//! without an exit frame, which it reports. What the command stored before
//! is kept, as with any interrupted run.

use serde::{Deserialize, Serialize};
use std::io::{BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::endpoint::{self, Purpose, Target, HELLO_TIMEOUT};
use super::start;
use crate::service::Principal;

/// Largest frame either side accepts: a request carries a question (at
/// most `MAX_QUERY_BYTES`) or a list of paths; output is sent in pieces
/// of at most [`OUTPUT_PIECE`].
pub const MAX_COMMAND_FRAME: usize = 4 * 1024 * 1024;

/// Output bytes per frame.
const OUTPUT_PIECE: usize = 64 * 1024;

/// How often the client looks for a signal to pass on.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// How long a client that passed a signal on waits for the command to
/// stop. Most commands stop at once (ingest between files); one that
/// cannot stop midway (`compact`) finishes in the owner after the client
/// has gone.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(5);

/// The exit status of a request the owner could not read.
const UNREADABLE_EXIT: u8 = 1;

/// The signal number a command sees when its client went away.
pub const SIGHUP: i32 = 1;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// Client to owner: the command ([`Request`]).
    Request = 1,
    /// Client to owner: the user interrupted the command (one byte: the
    /// signal's number).
    Interrupt = 2,
    /// Owner to client: bytes for stdout.
    Out = 3,
    /// Owner to client: bytes for stderr.
    Err = 4,
    /// Owner to client: the command ended (one byte: its exit status).
    Exit = 5,
}

impl Frame {
    fn from_byte(b: u8) -> Option<Frame> {
        Some(match b {
            1 => Frame::Request,
            2 => Frame::Interrupt,
            3 => Frame::Out,
            4 => Frame::Err,
            5 => Frame::Exit,
            _ => return None,
        })
    }
}

/// What the client asks the owner to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// The command, as the application layer reads it.
    pub task: serde_json::Value,
    /// Whether the client's stderr is a terminal (progress is drawn in
    /// place there, printed as lines elsewhere).
    pub stderr_terminal: bool,
}

fn write_frame(mut out: impl Write, kind: Frame, payload: &[u8]) -> std::io::Result<()> {
    let mut head = [0u8; 5];
    head[0] = kind as u8;
    head[1..].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    out.write_all(&head)?;
    out.write_all(payload)?;
    out.flush()
}

/// Reads one frame; `None` at a clean end of the connection.
fn read_frame(mut input: impl Read) -> std::io::Result<Option<(Frame, Vec<u8>)>> {
    let mut head = [0u8; 5];
    match input.read_exact(&mut head[..1]) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    input.read_exact(&mut head[1..])?;
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let kind =
        Frame::from_byte(head[0]).ok_or_else(|| invalid(format!("frame kind {}", head[0])))?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_COMMAND_FRAME {
        return Err(invalid(format!(
            "a frame of {len} bytes (MAX_COMMAND_FRAME is {MAX_COMMAND_FRAME})"
        )));
    }
    let mut payload = vec![0; len];
    input.read_exact(&mut payload)?;
    Ok(Some((kind, payload)))
}

/// How the client's command ended.
pub enum Ended {
    /// The owner ran it; its exit status.
    Exit(u8),
    /// The owner stopped before the command finished (what the command had
    /// stored is kept).
    OwnerLost(String),
    /// The user interrupted the command (with this signal) and it did not
    /// stop within [`INTERRUPT_GRACE`]: the owner finishes it.
    Abandoned(i32),
}

/// Runs `task` on the owner of `target.data_dir` (starting one when none
/// answers): the owner's output goes to `out` and `err` as it comes, and a
/// termination signal this process receives is passed on (the caller
/// installs the handlers).
pub fn run(
    target: &Target,
    request: &Request,
    out: &mut dyn FnMut(&[u8]),
    err: &mut dyn FnMut(&[u8]),
) -> Result<Ended, String> {
    let stream = start::reach(&target.data_dir)?;
    let (answer, mut reader) = endpoint::greet(&stream, &target.hello(Purpose::Command))
        .map_err(|e| format!("the memory owner did not answer: {e}"))?;
    if let Some(why) = answer.refused {
        return Err(format!("the memory owner refused this command: {why}"));
    }
    if answer.version != env!("CARGO_PKG_VERSION") {
        log::warn!(
            "the memory owner (pid {}) is version {}, this command {}: it runs this command, \
             and makes way for this version once its clients have left",
            answer.pid,
            answer.version,
            env!("CARGO_PKG_VERSION")
        );
    }
    let body = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    write_frame(&stream, Frame::Request, &body)
        .map_err(|e| format!("the memory owner stopped at once: {e}"))?;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let abandoned = Arc::new(AtomicI32::new(0));
    let watcher = {
        let (stream, done, abandoned) = (
            stream
                .try_clone()
                .map_err(|e| format!("cannot use the owner's connection: {e}"))?,
            done.clone(),
            abandoned.clone(),
        );
        std::thread::Builder::new()
            .name("command-signals".into())
            .spawn(move || pass_on_signal(&stream, &done, &abandoned))
            .map_err(|e| format!("cannot start a thread: {e}"))?
    };
    let ended = loop {
        match read_frame(&mut reader) {
            Ok(Some((Frame::Out, bytes))) => out(&bytes),
            Ok(Some((Frame::Err, bytes))) => err(&bytes),
            Ok(Some((Frame::Exit, code))) => break Ended::Exit(code.first().copied().unwrap_or(1)),
            Ok(Some((kind, _))) => {
                break Ended::OwnerLost(format!("the memory owner sent a {kind:?} frame"))
            }
            Ok(None) => {
                break Ended::OwnerLost(format!(
                    "the memory owner (pid {}) stopped before the command finished",
                    answer.pid
                ))
            }
            Err(e) => {
                break Ended::OwnerLost(format!(
                    "the memory owner's connection failed before the command finished: {e}"
                ))
            }
        }
    };
    done.store(true, Ordering::Release);
    let _ = watcher.join();
    Ok(match (ended, abandoned.load(Ordering::Acquire)) {
        (Ended::OwnerLost(_), signal) if signal != 0 => Ended::Abandoned(signal),
        (ended, _) => ended,
    })
}

/// Sends the first termination signal this process receives to the owner;
/// if the command has not ended [`INTERRUPT_GRACE`] later, ends this side
/// of the connection (recording the signal in `abandoned`).
fn pass_on_signal(
    stream: &UnixStream,
    done: &std::sync::atomic::AtomicBool,
    abandoned: &AtomicI32,
) {
    let signal = loop {
        if done.load(Ordering::Acquire) {
            return;
        }
        if let Some(signal) = crate::transport::signals::received() {
            let _ = write_frame(stream, Frame::Interrupt, &[signal as u8]);
            break signal;
        }
        std::thread::sleep(SIGNAL_POLL);
    };
    let deadline = std::time::Instant::now() + INTERRUPT_GRACE;
    while std::time::Instant::now() < deadline {
        if done.load(Ordering::Acquire) {
            return;
        }
        std::thread::sleep(SIGNAL_POLL);
    }
    abandoned.store(signal, Ordering::Release);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Runs a command in the owner: given the client's identity, its request
/// and the way back to it, returns the exit status.
pub type Runner = Arc<dyn Fn(&Principal, &Request, Arc<CommandIo>) -> u8 + Send + Sync>;

/// The owner's side of one command's connection: where its output goes,
/// and whether its client asked it to stop.
pub struct CommandIo {
    writer: Mutex<UnixStream>,
    /// The signal the client passed on (0: none yet).
    signal: Arc<AtomicI32>,
}

impl CommandIo {
    /// Bytes for the client's stdout.
    pub fn out(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.send(Frame::Out, bytes)
    }

    /// Bytes for the client's stderr (lost if the client went away).
    pub fn err(&self, bytes: &[u8]) {
        let _ = self.send(Frame::Err, bytes);
    }

    /// The signal that stops the command: the one the client passed on,
    /// [`SIGHUP`] when the client went away.
    pub fn stop_signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::Acquire) {
            0 => None,
            s => Some(s),
        }
    }

    fn send(&self, kind: Frame, bytes: &[u8]) -> std::io::Result<()> {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        for piece in bytes.chunks(OUTPUT_PIECE) {
            write_frame(&*writer, kind, piece)?;
        }
        Ok(())
    }
}

/// Serves one command connection whose hellos were exchanged: reads the
/// request, runs it with `runner`, and sends its exit status.
pub fn serve(
    runner: &Runner,
    principal: &Principal,
    stream: UnixStream,
    input: BufReader<UnixStream>,
) {
    let mut input = input;
    let _ = stream.set_read_timeout(Some(HELLO_TIMEOUT));
    let request = match read_frame(&mut input) {
        Ok(Some((Frame::Request, body))) => serde_json::from_slice::<Request>(&body),
        Ok(_) => return log::warn!("a command connection sent no request"),
        Err(e) => return log::warn!("a command connection's request was unreadable: {e}"),
    };
    let _ = stream.set_read_timeout(None);
    let signal = Arc::new(AtomicI32::new(0));
    let listener = {
        let signal = signal.clone();
        std::thread::Builder::new()
            .name("command-client".into())
            .spawn(move || watch_client(input, &signal))
    };
    let Ok(writer) = stream.try_clone() else {
        return;
    };
    let io = Arc::new(CommandIo {
        writer: Mutex::new(writer),
        signal,
    });
    let code = match request {
        Ok(request) => runner(principal, &request, io.clone()),
        Err(e) => {
            io.err(
                format!("alayasiki-mcp: the memory owner cannot read this command ({e})\n")
                    .as_bytes(),
            );
            UNREADABLE_EXIT
        }
    };
    let _ = io.send(Frame::Exit, &[code]);
    // The client closes its side once it has the exit status, which ends
    // the listening thread.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    if let Ok(listener) = listener {
        let _ = listener.join();
    }
}

/// Reads the client's frames while its command runs: an interrupt, or the
/// end of the connection.
fn watch_client(mut input: BufReader<UnixStream>, signal: &AtomicI32) {
    loop {
        match read_frame(&mut input) {
            Ok(Some((Frame::Interrupt, s))) => {
                let s = s.first().map_or(SIGHUP, |&b| i32::from(b).max(1));
                let _ = signal.compare_exchange(0, s, Ordering::AcqRel, Ordering::Acquire);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => {
                let _ = signal.compare_exchange(0, SIGHUP, Ordering::AcqRel, Ordering::Acquire);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_and_oversized_ones_are_refused() {
        let mut wire = Vec::new();
        write_frame(&mut wire, Frame::Out, b"hello").unwrap();
        write_frame(&mut wire, Frame::Exit, &[3]).unwrap();
        let mut input = wire.as_slice();
        assert_eq!(
            read_frame(&mut input).unwrap(),
            Some((Frame::Out, b"hello".to_vec()))
        );
        assert_eq!(
            read_frame(&mut input).unwrap(),
            Some((Frame::Exit, vec![3]))
        );
        assert_eq!(read_frame(&mut input).unwrap(), None);
        let mut big = vec![Frame::Out as u8];
        big.extend_from_slice(&((MAX_COMMAND_FRAME + 1) as u32).to_be_bytes());
        assert!(read_frame(big.as_slice()).is_err());
        assert!(read_frame(&[9u8, 0, 0, 0, 0][..]).is_err());
        // Cut off inside a frame: an error, not a clean end.
        assert!(read_frame(&[3u8, 0, 0, 0, 4, b'a'][..]).is_err());
    }
}
