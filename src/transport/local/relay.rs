//! `alayasiki-mcp` on stdio as a client of the data directory's owner: MCP
//! is framed on stdin and stdout exactly as an in-process server frames
//! it, and every message goes to the owner, which runs the session.
//!
//! Two threads: this one reads stdin and forwards each line to the owner;
//! a second one connects (starting the owner when none answers, see
//! [`super::start`]), reads the owner's lines and writes them to stdout.
//! Lines pass through unchanged, so a client sees what an in-process
//! server would have written.
//!
//! The relay remembers which requests are waiting for their reply, and the
//! client's `initialize` and `notifications/initialized`. If the owner
//! stops (killed, crashed), each waiting request is answered with
//! [`OWNER_LOST`], a new owner is started (it replays the journal as any
//! start does), the handshake is replayed to it (its reply swallowed), and
//! the session goes on without the client initializing again. Nothing the
//! owner acknowledged is lost; what it had not answered is in doubt, and the
//! error says so.
//!
//! At end of input the relay closes its side of the connection, the owner
//! finishes the session's requests and closes its side, and the relay
//! exits; the owner serves its other clients on.

use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use super::endpoint::Target;
use super::endpoint::{self, Purpose, HELLO_TIMEOUT};
use super::start::{self, OWNER_START_TIMEOUT};
use crate::limits::MAX_FRAME_BYTES;
use crate::protocol::jsonrpc;

/// JSON-RPC error code (implementation range) of a request the owner
/// stopped before answering.
pub const OWNER_LOST: i64 = -32001;

/// How long after an owner stopped the relay waits before starting another
/// when the last start failed (doubling up to [`OWNER_RETRY_MAX`]).
const OWNER_RETRY_MIN: Duration = Duration::from_millis(100);
const OWNER_RETRY_MAX: Duration = Duration::from_secs(5);

/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Relays stdin and stdout to the owner of `target.data_dir` until end of
/// input and the owner's last reply.
pub fn run(target: Target) -> std::io::Result<()> {
    let link = Arc::new(Link {
        state: Mutex::new(State::default()),
        writer: Mutex::new(None),
        connected: Condvar::new(),
        stdout: Mutex::new(std::io::stdout()),
    });
    let owner_side = {
        let link = link.clone();
        std::thread::Builder::new()
            .name("relay-owner".into())
            .spawn(move || link.serve_owner(&target))?
    };
    let read = link.forward_input(std::io::stdin().lock());
    link.input_ended();
    let _ = owner_side.join();
    read?;
    // No owner could be reached at the end: the client's requests were
    // answered with the reason; the exit status says it too.
    let unreachable = link.state().unreachable.take();
    match unreachable {
        Some(why) => Err(std::io::Error::other(why)),
        None => Ok(()),
    }
}

/// What both threads share.
struct Link {
    state: Mutex<State>,
    /// The owner's connection (write side) while connected, with the
    /// number of that connection.
    writer: Mutex<Option<UnixStream>>,
    /// Signalled when `writer` is set, or reaching an owner failed.
    connected: Condvar,
    stdout: Mutex<std::io::Stdout>,
}

#[derive(Default)]
struct State {
    /// Requests forwarded and not yet answered, by their id's JSON text.
    pending: HashMap<String, Value>,
    /// The client's `initialize` and `notifications/initialized`, replayed
    /// to a new owner.
    handshake: Vec<Vec<u8>>,
    /// The id of a replayed `initialize`, whose reply the client must not
    /// see (it had its own).
    swallow: Option<String>,
    /// Stdin has ended.
    input_done: bool,
    /// Why no owner could be reached, while that lasts.
    unreachable: Option<String>,
}

/// Why a connection was not made, and whether to try again.
enum Retry {
    Again(String),
    Never(String),
}

/// The two messages of the client's handshake, replayed to a new owner.
#[derive(Clone, Copy)]
enum Handshake {
    Initialize,
    Initialized,
}

/// What the relay reads of a message: enough to pair requests with replies.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

fn peek(line: &[u8]) -> Vec<Peek> {
    let start = line.iter().find(|b| !b.is_ascii_whitespace());
    if start == Some(&b'[') {
        serde_json::from_slice::<Vec<Peek>>(line).unwrap_or_default()
    } else {
        serde_json::from_slice::<Peek>(line).into_iter().collect()
    }
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Link {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn writer(&self) -> MutexGuard<'_, Option<UnixStream>> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes one line (or lines) to stdout.
    fn to_client(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut out = self.stdout.lock().unwrap_or_else(|p| p.into_inner());
        out.write_all(bytes)?;
        out.flush()
    }

    fn answer(&self, id: Value, code: i64, message: &str) {
        let mut line = jsonrpc::error(id, code, message).to_string().into_bytes();
        line.push(b'\n');
        let _ = self.to_client(&line);
    }

    /// Reads stdin and forwards it line by line. A line longer than
    /// `MAX_FRAME_BYTES` is streamed through unread, for the owner to
    /// refuse as it would on stdio.
    fn forward_input(&self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut line: Vec<u8> = Vec::new();
        let mut streaming = false;
        loop {
            let chunk = match input.fill_buf() {
                Ok([]) => break,
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let (part, ends) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..=i], true),
                None => (&chunk[..chunk.len().min(READ_CHUNK)], false),
            };
            let n = part.len();
            if streaming {
                self.send_raw(part);
            } else {
                line.extend_from_slice(part);
                if line.len() > MAX_FRAME_BYTES + 2 {
                    // Too long to be a message: through to the owner as it
                    // comes, never held whole.
                    streaming = true;
                    self.send_raw(&line);
                    line = Vec::new();
                }
            }
            input.consume(n);
            if ends {
                if !streaming {
                    self.send_line(&line);
                }
                line.clear();
                streaming = false;
            }
        }
        if !line.is_empty() && !streaming {
            // A last line without its newline still counts on stdio.
            line.push(b'\n');
            self.send_line(&line);
        }
        Ok(())
    }

    /// Notes what `line` asks for, then sends it to the owner (waiting for
    /// one to be reached). A request that cannot be sent is answered.
    fn send_line(&self, line: &[u8]) {
        let mut requests = Vec::new();
        let mut handshake = None;
        for m in peek(line) {
            match (m.id, m.method.as_deref()) {
                (Some(id), Some(method)) if !id.is_null() => {
                    if method == "initialize" {
                        handshake = Some(Handshake::Initialize);
                    }
                    requests.push(id);
                }
                (None, Some("notifications/initialized")) => {
                    handshake = Some(Handshake::Initialized);
                }
                _ => {}
            }
        }
        if !self.send(line, &requests, handshake) {
            let why = self
                .state()
                .unreachable
                .clone()
                .unwrap_or_else(|| "the memory owner could not be reached".into());
            for id in requests {
                self.answer(id, OWNER_LOST, &format!("not run: {why}"));
            }
        }
    }

    /// Writes `bytes` to the owner, waiting for a connection; `false` if no
    /// owner could be reached.
    fn send_raw(&self, bytes: &[u8]) -> bool {
        self.send(bytes, &[], None)
    }

    /// [`Link::send_raw`], noting `requests` as waiting for their reply and
    /// remembering a line of the `handshake` once sent.
    ///
    /// Both happen under the connection's lock, once there is a connection:
    /// a new one then replays exactly the lines an earlier owner saw, and a
    /// request is pending only once it is on its way to an owner. The
    /// reading thread takes a lost connection under the same lock before it
    /// answers what is pending, so a request is answered `OWNER_LOST` only
    /// if the lost owner had it, and one still waiting for a connection
    /// goes to the next owner alone (noted earlier, it was answered lost and
    /// then run, and the client had two replies).
    fn send(&self, bytes: &[u8], requests: &[Value], handshake: Option<Handshake>) -> bool {
        let deadline = Instant::now() + OWNER_START_TIMEOUT + HELLO_TIMEOUT;
        let mut writer = self.writer();
        loop {
            if let Some(w) = writer.as_mut() {
                let mut state = self.state();
                for id in requests {
                    state.pending.insert(key(id), id.clone());
                }
                match handshake {
                    Some(Handshake::Initialize) => state.handshake = vec![bytes.to_vec()],
                    Some(Handshake::Initialized) if state.handshake.len() == 1 => {
                        state.handshake.push(bytes.to_vec())
                    }
                    _ => {}
                }
                drop(state);
                // A failed write means the owner is gone: the reading
                // thread answers what was pending and reconnects.
                let _ = w.write_all(bytes);
                return true;
            }
            if self.state().unreachable.is_some() || Instant::now() >= deadline {
                return false;
            }
            writer = self
                .connected
                .wait_timeout(writer, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Stdin ended: the owner is told by the end of this side of the
    /// connection, and finishes the session.
    fn input_ended(&self) {
        self.state().input_done = true;
        if let Some(w) = self.writer().as_ref() {
            let _ = w.shutdown(std::net::Shutdown::Write);
        }
        self.connected.notify_all();
    }

    /// The owner side: connect, relay the owner's lines to stdout until
    /// its connection ends; reconnect while the client is still there.
    fn serve_owner(&self, target: &Target) {
        let mut retry = OWNER_RETRY_MIN;
        loop {
            let reader = match self.connect(target) {
                Ok(r) => {
                    retry = OWNER_RETRY_MIN;
                    r
                }
                Err(why) => {
                    log::error!("{why}");
                    self.state().unreachable = Some(why.clone());
                    self.connected.notify_all();
                    self.fail_pending(&why);
                    if self.state().input_done {
                        return;
                    }
                    std::thread::sleep(retry);
                    retry = (retry * 2).min(OWNER_RETRY_MAX);
                    self.state().unreachable = None;
                    continue;
                }
            };
            self.read_owner(reader);
            self.writer().take();
            let done = self.state().input_done;
            if done && self.state().pending.is_empty() {
                return;
            }
            self.fail_pending(
                "the memory owner stopped before answering (what it acknowledged is kept); retry",
            );
            if done {
                return;
            }
            log::warn!("the memory owner stopped; starting it again");
        }
    }

    /// Reaches the owner, says hello, replays the handshake and makes the
    /// connection the one lines go to; its reading half.
    fn connect(&self, target: &Target) -> Result<BufReader<UnixStream>, String> {
        // An owner killed a moment ago may still take a connection into its
        // socket's queue and reset it: such a failed hello is tried again
        // (the next attempt starts a new owner).
        let deadline = Instant::now() + OWNER_START_TIMEOUT;
        loop {
            match self.connect_once(target) {
                Err(Retry::Again(why)) if Instant::now() < deadline => {
                    log::debug!("{why}; trying again");
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(Retry::Again(why) | Retry::Never(why)) => return Err(why),
                Ok(reader) => return Ok(reader),
            }
        }
    }

    fn connect_once(&self, target: &Target) -> Result<BufReader<UnixStream>, Retry> {
        let stream = start::reach(&target.data_dir).map_err(Retry::Never)?;
        let (answer, reader) = endpoint::greet(&stream, &target.hello(Purpose::Session))
            .map_err(|e| Retry::Again(format!("the memory owner did not answer: {e}")))?;
        if let Some(why) = answer.refused {
            return Err(Retry::Never(format!(
                "the memory owner refused this client: {why}"
            )));
        }
        if answer.version != env!("CARGO_PKG_VERSION") {
            log::warn!(
                "the memory owner (pid {}) is version {}, this client {}: it serves this \
                 session and makes way for this version once its clients have left",
                answer.pid,
                answer.version,
                env!("CARGO_PKG_VERSION")
            );
        }
        let mut writer = self.writer();
        let handshake = self.state().handshake.clone();
        if let Some(init) = handshake.first() {
            // A new owner: the session goes on without the client
            // initializing again.
            let id = peek(init).into_iter().next().and_then(|m| m.id);
            self.state().swallow = id.as_ref().map(key);
            let mut w = &stream;
            for line in &handshake {
                w.write_all(line)
                    .map_err(|e| Retry::Again(format!("the memory owner stopped at once: {e}")))?;
            }
        }
        if self.state().input_done {
            let _ = stream.shutdown(std::net::Shutdown::Write);
        }
        *writer = Some(stream);
        self.connected.notify_all();
        Ok(reader)
    }

    /// Copies the owner's lines to stdout until its connection ends.
    fn read_owner(&self, mut reader: BufReader<UnixStream>) {
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line.last() != Some(&b'\n') {
                return; // cut off: the owner stopped mid-line
            }
            let mut shown = true;
            {
                let mut state = self.state();
                for m in peek(&line) {
                    let Some(id) = m.id.filter(|_| m.method.is_none()) else {
                        continue;
                    };
                    let k = key(&id);
                    if state.swallow.as_deref() == Some(k.as_str()) {
                        state.swallow = None;
                        shown = false;
                    } else {
                        state.pending.remove(&k);
                    }
                }
            }
            if shown && self.to_client(&line).is_err() {
                // Nobody reads stdout: the client is gone.
                return;
            }
        }
    }

    /// Answers every request still waiting with [`OWNER_LOST`].
    fn fail_pending(&self, why: &str) {
        let lost: Vec<Value> = self.state().pending.drain().map(|(_, id)| id).collect();
        for id in lost {
            self.answer(id, OWNER_LOST, why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_waiting_for_an_owner_is_answered_by_the_owner_that_gets_it_alone() {
        let link = Arc::new(Link {
            state: Mutex::new(State::default()),
            writer: Mutex::new(None),
            connected: Condvar::new(),
            stdout: Mutex::new(std::io::stdout()),
        });
        // The owner is gone and the next not yet reached: a request waits.
        let request = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#.to_vec();
        let sender = {
            let link = link.clone();
            let line = [request.as_slice(), b"\n"].concat();
            std::thread::spawn(move || link.send_line(&line))
        };
        std::thread::sleep(Duration::from_millis(50));
        // Meanwhile the reading thread answers what the lost owner had.
        link.fail_pending("the memory owner stopped before answering");
        // The next owner is reached: the request goes to it, and only its
        // reply answers it.
        let (ours, theirs) = UnixStream::pair().unwrap();
        *link.writer() = Some(ours);
        link.connected.notify_all();
        sender.join().unwrap();
        let mut forwarded = String::new();
        BufReader::new(theirs).read_line(&mut forwarded).unwrap();
        assert_eq!(forwarded.trim_end().as_bytes(), request.as_slice());
        assert!(
            link.state().pending.contains_key("5"),
            "forwarded to the new owner, yet already answered as lost"
        );
    }

    #[test]
    fn requests_and_replies_are_told_apart_in_batches_too() {
        let one = peek(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].id, Some(Value::from(7)));
        assert_eq!(one[0].method.as_deref(), Some("tools/list"));
        let batch = peek(br#" [{"id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#);
        assert_eq!(batch.len(), 2);
        assert!(batch[1].id.is_none());
        assert!(peek(b"not json").is_empty());
    }
}
