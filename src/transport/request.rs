//! One accepted connection's socket ([`Conn`]) and one request on it
//! ([`Request`]): the head, a body read within its framing and a deadline,
//! and the answer.
//!
//! A request is handed to routing by the connection's own thread
//! ([`super::acceptor`]), which then waits for the connection to come back.
//! Answering ([`Request::respond`]) writes the response on the answering
//! thread and gives the connection back: to read the next request when the
//! client keeps it alive and the body was read to its end, or to be
//! closed (after [`REFUSED_BODY_LINGER`](super::acceptor::REFUSED_BODY_LINGER)
//! of discarding what the client still sends, when the body was not read).
//! No thread ever waits for a body the server does not read, and no
//! declared length is ever allocated: a body is read as it arrives, into
//! the reader's own buffer.

use crossbeam_channel::Sender;
use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::acceptor::IdleEntry;
use super::admission::Permit;
use super::listener::{ANSWER_WRITE_TIMEOUT, IO_TIMEOUT};
use super::wire::{self, Framing, Head, Header, Method, Refusal, Response, HEAD_TOO_LARGE};

/// Bytes asked of the socket by one read of a head.
const READ_CHUNK: usize = 4096;

/// Longest chunk-size line (or trailer line) of a chunked body.
const MAX_CHUNK_LINE: usize = 1024;

/// A body of at most this many bytes declared by
/// `Content-Length` is read together with the head (within the head's
/// deadline), so small requests need no body reader.
pub const READ_WITH_THE_HEAD: u64 = 1024;

/// An accepted socket, the bytes read from it and not yet used, and its
/// place under [`MAX_CONNECTIONS`](super::acceptor::MAX_CONNECTIONS): the
/// place goes wherever the socket goes (an SSE writer keeps it).
pub struct Conn {
    pub(super) stream: TcpStream,
    buf: Vec<u8>,
    /// Start of the unused bytes in `buf`.
    pos: usize,
    _place: Permit,
}

/// How reading a head ended without a head.
#[derive(Debug)]
pub enum NoHead {
    /// The client closed, or stayed silent until the idle deadline.
    Closed,
    /// Part of a head arrived, not the rest, before its deadline.
    TimedOut,
    /// The head is refused (malformed, ambiguous, too large).
    Refused(Refusal),
}

impl Conn {
    pub fn new(stream: TcpStream, place: Permit) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            pos: 0,
            _place: place,
        }
    }

    fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
    }

    /// Reads more bytes into the buffer, waiting until `deadline` at most;
    /// `Ok(0)` at end of stream.
    fn fill(&mut self, deadline: Instant) -> io::Result<usize> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        self.stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + READ_CHUNK, 0);
        let read = loop {
            match self.stream.read(&mut self.buf[old..]) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        let n = *read.as_ref().unwrap_or(&0);
        self.buf.truncate(old + n);
        read.map_err(|e| match e.kind() {
            ErrorKind::WouldBlock => ErrorKind::TimedOut.into(),
            _ => e,
        })
    }

    /// Reads one request head: its first byte by `idle_until`, all of it by
    /// `head_until` (or, when `None`, within `head_within` of its first
    /// byte). A small body declared with it comes too ([`READ_WITH_THE_HEAD`]).
    pub fn read_head(
        &mut self,
        idle_until: Instant,
        head_until: Option<Instant>,
        head_within: Duration,
    ) -> Result<Head, NoHead> {
        let mut deadline = idle_until;
        let mut started = false;
        let head = loop {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            let blank = self
                .buffered()
                .chunks(2)
                .take_while(|c| *c == b"\r\n")
                .count();
            self.consume(blank * 2);
            let data = self.buffered();
            if !data.is_empty() && !started {
                started = true;
                deadline = head_until.unwrap_or_else(|| Instant::now() + head_within);
            }
            if let Some(end) = find(data, b"\r\n\r\n") {
                let end = end + 4;
                if end > wire::MAX_HEAD_BYTES {
                    return Err(NoHead::Refused(HEAD_TOO_LARGE));
                }
                let head = wire::parse_head(&data[..end]).map_err(NoHead::Refused)?;
                self.consume(end);
                break head;
            }
            if data.len() >= wire::MAX_HEAD_BYTES {
                return Err(NoHead::Refused(HEAD_TOO_LARGE));
            }
            match self.fill(deadline) {
                Ok(0) => return Err(NoHead::Closed),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::TimedOut && started => {
                    return Err(NoHead::TimedOut)
                }
                Err(_) => return Err(NoHead::Closed),
            }
        };
        if let Framing::Length(n) = head.framing {
            if n <= READ_WITH_THE_HEAD && !head.expects_continue {
                while (self.buffered().len() as u64) < n {
                    match self.fill(deadline) {
                        Ok(0) | Err(_) => return Err(NoHead::TimedOut),
                        Ok(_) => {}
                    }
                }
            }
        }
        Ok(head)
    }

    /// Writes `bytes` whole within [`ANSWER_WRITE_TIMEOUT`]: a client that
    /// does not read what it asked for fails the write (and so loses the
    /// connection) however little it takes at a time.
    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all_within(bytes, ANSWER_WRITE_TIMEOUT)
    }

    /// Writes `bytes` whole within `limit`; the socket's write timeout is
    /// [`IO_TIMEOUT`] again afterwards.
    pub fn write_all_within(&mut self, bytes: &[u8], limit: Duration) -> io::Result<()> {
        let deadline = Instant::now() + limit;
        let mut rest = bytes;
        let written = loop {
            if rest.is_empty() {
                break Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(ErrorKind::TimedOut.into());
            }
            if let Err(e) = self
                .stream
                .set_write_timeout(Some(left.max(Duration::from_millis(1))))
            {
                break Err(e);
            }
            match self.stream.write(rest) {
                Ok(0) => break Err(ErrorKind::WriteZero.into()),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let _ = self.stream.set_write_timeout(Some(IO_TIMEOUT));
        written
    }

    /// The socket, to keep writing to it (an SSE stream); bytes the client
    /// sent beyond the request are dropped.
    pub fn into_stream(self) -> (TcpStream, Permit) {
        (self.stream, self._place)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What becomes of a connection once its request is answered.
pub enum Returned {
    /// Read the next request.
    KeepAlive(Conn),
    /// Close it, after discarding what the client still sends for a while
    /// (the body was not read, or the head refused).
    Linger(Conn),
}

/// Where the body stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// Read to its end (or there is none).
    Done,
    /// This many `Content-Length` bytes are still to come.
    Length(u64),
    /// Chunked: at a chunk-size line.
    ChunkStart,
    /// Chunked: this many bytes of the current chunk to come.
    ChunkData(u64),
    /// Chunked: the CRLF after a chunk's data.
    ChunkEnd,
    /// Unreadable from here on (a framing error or a failed read).
    Broken,
}

/// One request: its head, its connection, and where to give the connection
/// back once answered.
pub struct Request {
    /// The connection's entry among those carrying no admitted request,
    /// until the request is authenticated ([`Request::admit`]). Declared
    /// before `conn` so that it is dropped before the socket is closed.
    unadmitted: Option<IdleEntry>,
    method: Method,
    url: String,
    http11: bool,
    headers: Vec<Header>,
    framing: Framing,
    keep_alive: bool,
    expects_continue: bool,
    body: Body,
    conn: Option<Conn>,
    back: Option<Sender<Returned>>,
}

impl Request {
    pub(super) fn new(
        head: Head,
        conn: Conn,
        back: Sender<Returned>,
        unadmitted: IdleEntry,
    ) -> Request {
        let body = match head.framing {
            Framing::None | Framing::Length(0) => Body::Done,
            Framing::Length(n) => Body::Length(n),
            Framing::Chunked => Body::ChunkStart,
        };
        Request {
            unadmitted: Some(unadmitted),
            method: head.method,
            url: head.target,
            http11: head.http11,
            headers: head.headers,
            framing: head.framing,
            keep_alive: head.keep_alive,
            expects_continue: head.expects_continue,
            body,
            conn: Some(conn),
            back: Some(back),
        }
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The request's caller was authenticated: its connection leaves those
    /// that may be closed to make room for others. `false` if it was closed
    /// for that meanwhile (the request is then dropped unanswered).
    pub fn admit(&mut self) -> bool {
        self.unadmitted.take().is_none_or(IdleEntry::leave)
    }

    /// The request target: path and query.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn is_http11(&self) -> bool {
        self.http11
    }

    pub fn headers(&self) -> &[Header] {
        &self.headers
    }

    /// The declared `Content-Length` (a chunked body declares none).
    pub fn body_length(&self) -> Option<u64> {
        match self.framing {
            Framing::Length(n) => Some(n),
            _ => None,
        }
    }

    pub fn is_chunked(&self) -> bool {
        self.framing == Framing::Chunked
    }

    /// Whether what is left of the body is already in memory, so that
    /// reading it cannot wait for the client.
    pub fn body_in_memory(&self) -> bool {
        match self.body {
            Body::Done => true,
            Body::Length(n) => self
                .conn
                .as_ref()
                .is_some_and(|c| c.buffered().len() as u64 >= n),
            _ => false,
        }
    }

    /// A reader of the body that waits for the client until `deadline` at
    /// most; it ends (`Ok(0)`) where the body ends.
    pub fn body_reader(&mut self, deadline: Instant) -> BodyReader<'_> {
        BodyReader {
            request: self,
            deadline,
        }
    }

    /// Sends `response`, then keeps the connection for the next request if
    /// the client wants that and the body was read (or is in memory), else
    /// closes it without waiting for the body.
    pub fn respond(self, response: Response) {
        self.finish(response, false);
    }

    /// Sends `response` and closes the connection, without reading what is
    /// left of the body.
    pub fn respond_and_close(self, response: Response) {
        self.finish(response, true);
    }

    fn finish(mut self, response: Response, close: bool) {
        if self.body_in_memory() {
            // Skip what is left (in the buffer): the next request follows.
            if let (Body::Length(n), Some(c)) = (self.body, self.conn.as_mut()) {
                c.consume(n as usize);
            }
            self.body = Body::Done;
        }
        let read_whole = self.body == Body::Done;
        let keep = self.keep_alive && read_whole && !close;
        let (Some(mut conn), Some(back)) = (self.conn.take(), self.back.take()) else {
            return;
        };
        // An HTTP/1.0 client keeps the connection only when told it may.
        let response = if keep && !self.http11 {
            response.with_header(Header {
                name: "Connection".into(),
                value: "keep-alive".into(),
            })
        } else {
            response
        };
        let written = conn.write_all(&response.to_bytes(!keep));
        // Out of the idle ones before the socket can be closed.
        self.unadmitted.take();
        if written.is_err() {
            return; // dropped: closed
        }
        let _ = back.send(if keep {
            Returned::KeepAlive(conn)
        } else {
            Returned::Linger(conn)
        });
    }

    /// The connection, for a response written by its taker (SSE).
    pub fn into_conn(mut self) -> Option<Conn> {
        self.unadmitted.take();
        self.back.take();
        self.conn.take()
    }

    fn read_body(&mut self, out: &mut [u8], deadline: Instant) -> io::Result<usize> {
        if out.is_empty() || self.body == Body::Done {
            return Ok(0);
        }
        if self.expects_continue {
            self.expects_continue = false;
            if let Some(c) = self.conn.as_mut() {
                c.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            }
        }
        let result = self.read_framed(out, deadline);
        if result.is_err() {
            self.body = Body::Broken;
        }
        result
    }

    fn read_framed(&mut self, out: &mut [u8], deadline: Instant) -> io::Result<usize> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| io::Error::from(ErrorKind::NotConnected))?;
        loop {
            match self.body {
                Body::Done => return Ok(0),
                Body::Broken => return Err(invalid("the body cannot be read")),
                Body::Length(left) | Body::ChunkData(left) => {
                    let n = read_some(conn, out, left, deadline)?;
                    let left = left - n as u64;
                    self.body = match self.body {
                        Body::Length(_) if left == 0 => Body::Done,
                        Body::Length(_) => Body::Length(left),
                        _ if left == 0 => Body::ChunkEnd,
                        _ => Body::ChunkData(left),
                    };
                    return Ok(n);
                }
                Body::ChunkStart => {
                    let line = read_line(conn, deadline)?;
                    let size = line.split(|&b| b == b';').next().unwrap_or_default();
                    let size = std::str::from_utf8(size)
                        .ok()
                        .map(|s| s.trim_matches(|c| c == ' ' || c == '\t'))
                        .filter(|s| !s.is_empty() && s.len() <= 15)
                        .and_then(|s| u64::from_str_radix(s, 16).ok())
                        .ok_or_else(|| invalid("bad chunk size"))?;
                    if size == 0 {
                        // Trailers, up to the blank line; bounded like a head.
                        let mut total = 0;
                        loop {
                            let line = read_line(conn, deadline)?;
                            total += line.len() + 2;
                            if line.is_empty() {
                                break;
                            }
                            if total > wire::MAX_HEAD_BYTES {
                                return Err(invalid("trailers too large"));
                            }
                        }
                        self.body = Body::Done;
                        return Ok(0);
                    }
                    self.body = Body::ChunkData(size);
                }
                Body::ChunkEnd => {
                    if !read_line(conn, deadline)?.is_empty() {
                        return Err(invalid("chunk data overruns its size"));
                    }
                    self.body = Body::ChunkStart;
                }
            }
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        // Dropped unanswered (a handler failed): the connection closes.
        self.back.take();
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, what.to_string())
}

/// Up to `left` body bytes: from the buffer, else one read of the socket.
fn read_some(conn: &mut Conn, out: &mut [u8], left: u64, deadline: Instant) -> io::Result<usize> {
    let want = out.len().min(usize::try_from(left).unwrap_or(usize::MAX));
    if conn.buffered().is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        conn.stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        let n = loop {
            match conn.stream.read(&mut out[..want]) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return Err(ErrorKind::TimedOut.into())
                }
                other => break other?,
            }
        };
        if n == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        return Ok(n);
    }
    let n = want.min(conn.buffered().len());
    out[..n].copy_from_slice(&conn.buffered()[..n]);
    conn.consume(n);
    Ok(n)
}

/// One CRLF-terminated line of a chunked body, without the CRLF.
fn read_line(conn: &mut Conn, deadline: Instant) -> io::Result<Vec<u8>> {
    loop {
        if let Some(end) = find(conn.buffered(), b"\r\n") {
            let line = conn.buffered()[..end].to_vec();
            conn.consume(end + 2);
            return Ok(line);
        }
        if conn.buffered().len() > MAX_CHUNK_LINE {
            return Err(invalid("chunk line too long"));
        }
        if conn.fill(deadline)? == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
    }
}

/// The body of a [`Request`] as a [`Read`]; see [`Request::body_reader`].
pub struct BodyReader<'a> {
    request: &'a mut Request,
    deadline: Instant,
}

impl Read for BodyReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.request.read_body(out, self.deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::acceptor::{ConnectionCaps, Connections};
    use crate::transport::admission::Gate;
    use std::net::TcpListener;

    /// A request parsed from `sent` by a real socket pair, and the client.
    fn request_from(sent: &[u8]) -> (Request, TcpStream, crossbeam_channel::Receiver<Returned>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.write_all(sent).unwrap();
        let (server, _) = listener.accept().unwrap();
        let place = Gate::new("test", 1).try_enter().unwrap();
        let mut conn = Conn::new(server, place);
        let soon = Instant::now() + Duration::from_secs(5);
        let head = conn
            .read_head(soon, Some(soon), Duration::from_secs(5))
            .unwrap();
        let (tx, rx) = crossbeam_channel::bounded(1);
        let connections = Connections::new(ConnectionCaps {
            connections: 8,
            unauthenticated: 4,
        });
        let entry = connections.enter_idle(&conn.stream);
        (Request::new(head, conn, tx, entry), client, rx)
    }

    fn body_of(r: &mut Request) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        r.body_reader(Instant::now() + Duration::from_secs(2))
            .read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn small_bodies_come_with_the_head_and_large_ones_do_not() {
        let (r, _c, _) = request_from(b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
        assert!(r.body_in_memory());
        let (r, _c, _) = request_from(b"POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n{}");
        assert!(!r.body_in_memory());
        let (r, _c, _) = request_from(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert!(!r.body_in_memory());
        let (r, _c, _) = request_from(b"GET / HTTP/1.1\r\n\r\n");
        assert!(r.body_in_memory());
    }

    #[test]
    fn chunked_bodies_are_decoded_and_the_next_request_kept() {
        let (mut r, _c, rx) = request_from(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
              3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\nGET /next HTTP/1.1\r\n\r\n",
        );
        assert_eq!(body_of(&mut r).unwrap(), b"abcde");
        r.respond(Response::from_string("ok"));
        let Ok(Returned::KeepAlive(mut conn)) = rx.try_recv() else {
            panic!("the connection was not kept")
        };
        let soon = Instant::now() + Duration::from_secs(2);
        let next = conn
            .read_head(soon, Some(soon), Duration::from_secs(2))
            .unwrap();
        assert_eq!(next.target, "/next");
    }

    #[test]
    fn http10_keep_alive_is_granted_in_so_many_words() {
        let (r, mut client, rx) = request_from(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        r.respond(Response::from_string("ok"));
        assert!(matches!(rx.try_recv(), Ok(Returned::KeepAlive(_))));
        let mut got = vec![0u8; 128];
        let n = client.read(&mut got).unwrap();
        let text = String::from_utf8_lossy(&got[..n]).to_string();
        assert!(text.contains("Connection: keep-alive\r\n"), "{text}");
        let (r, _c, rx) = request_from(b"GET / HTTP/1.0\r\n\r\n");
        r.respond(Response::from_string("ok"));
        assert!(matches!(rx.try_recv(), Ok(Returned::Linger(_))));
    }

    #[test]
    fn a_chunk_overrunning_its_size_is_an_error() {
        let (mut r, _c, _) = request_from(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
        );
        assert!(body_of(&mut r).is_err());
    }

    #[test]
    fn an_unread_body_closes_the_connection_after_the_answer() {
        let (r, mut client, rx) = request_from(b"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n");
        r.respond(Response::from_string("no").with_status_code(413));
        assert!(matches!(rx.try_recv(), Ok(Returned::Linger(_))));
        let mut got = vec![0u8; 12];
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"HTTP/1.1 413");
    }

    #[test]
    fn a_stalled_body_times_out_at_its_deadline() {
        let (mut r, _c, _) = request_from(b"POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\nab");
        let started = Instant::now();
        let mut out = Vec::new();
        let e = r
            .body_reader(Instant::now() + Duration::from_millis(300))
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
