//! One `text/event-stream` response on its socket: the head, events,
//! keep-alive comments, and noticing a client that has gone.
//!
//! Shared by the streams that outlive their request: the legacy SSE
//! transport's `GET /mcp/sse` and Streamable HTTP's `GET /mcp` listening
//! stream, each owning one [`EventStream`] on its own writer thread, the
//! only code that touches that socket; and Streamable HTTP's response
//! streams (a POST answered with events while its call runs, and the
//! `GET` resuming one), written by the call's worker under a lock.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Idle time after which a stream gets a keep-alive comment. The Python SDK
/// server uses 15 s; its client gives up after 300 s of silence.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// How often an idle stream's writer looks for a client that has gone, to
/// release its place at once.
pub const HANGUP_POLL: Duration = Duration::from_millis(250);

/// Bytes a client may send on a stream's connection (it has nothing to
/// send there) before the stream is ended.
const MAX_IGNORED_BYTES: usize = 64 * 1024;

pub(super) struct EventStream {
    out: TcpStream,
    chunked: bool,
    last_write: Instant,
    /// Bytes the client sent on the stream's connection, discarded.
    ignored: usize,
}

impl EventStream {
    /// Writes the response head (chunked on HTTP/1.1, else until close).
    /// Every stream ends with its connection, and says so: a client (or a
    /// proxy's connection pool) that took the last chunk for the end of a
    /// reusable response would send its next request on a closed socket.
    pub fn open(mut out: TcpStream, chunked: bool) -> std::io::Result<EventStream> {
        let head = if chunked {
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Connection: close\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n"
        } else {
            "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Connection: close\r\n\r\n"
        };
        out.write_all(head.as_bytes())?;
        Ok(EventStream {
            out,
            chunked,
            last_write: Instant::now(),
            ignored: 0,
        })
    }

    /// Writes one event (as one chunk, in one write) to the client.
    pub fn event(&mut self, text: &str) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(text.len() + 16);
        if self.chunked {
            bytes.extend_from_slice(format!("{:x}\r\n", text.len()).as_bytes());
            bytes.extend_from_slice(text.as_bytes());
            bytes.extend_from_slice(b"\r\n");
        } else {
            bytes.extend_from_slice(text.as_bytes());
        }
        self.out.write_all(&bytes)?;
        self.last_write = Instant::now();
        self.out.flush()
    }

    /// A `message` event carrying one serialized JSON-RPC message. Compact
    /// JSON never holds a raw newline (serde_json escapes control
    /// characters), so one `data:` line carries it whole.
    pub fn message(&mut self, json: &str) -> std::io::Result<()> {
        let mut text = String::with_capacity(json.len() + 24);
        text.push_str("event: message\ndata: ");
        text.push_str(json);
        text.push_str("\n\n");
        self.event(&text)
    }

    /// What an idle writer does every [`HANGUP_POLL`]: `Err` once the
    /// client has gone, a keep-alive comment once [`KEEPALIVE_INTERVAL`]
    /// has passed without a write.
    pub fn tend(&mut self) -> std::io::Result<()> {
        self.check_client()?;
        if self.last_write.elapsed() >= KEEPALIVE_INTERVAL {
            self.event(": keep-alive\n\n")?;
        }
        Ok(())
    }

    /// `Err` once the client has closed its end (or sent more than it
    /// may); what it sends is discarded. Never waits.
    fn check_client(&mut self) -> std::io::Result<()> {
        let gone = |why: &str| std::io::Error::new(ErrorKind::ConnectionAborted, why.to_string());
        self.out.set_nonblocking(true)?;
        let mut buf = [0u8; 1024];
        let outcome = loop {
            match self.out.read(&mut buf) {
                Ok(0) => break Err(gone("the client closed the stream")),
                Ok(n) => {
                    self.ignored += n;
                    if self.ignored > MAX_IGNORED_BYTES {
                        break Err(gone("the client sent data on its stream"));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.out.set_nonblocking(false)?;
        outcome
    }

    /// Ends the response (the last chunk).
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.chunked {
            self.out.write_all(b"0\r\n\r\n")?;
        }
        self.out.flush()
    }
}
