//! Accepting connections, bounded in count, time and memory before
//! anything past the request head is read (DESIGN §9): the unauthenticated
//! surface must not be able to stop or exhaust the process.
//!
//! - One thread accepts. At most [`MAX_CONNECTIONS`] connections are held
//!   (fewer when the descriptor limit is lower: it keeps
//!   [`RESERVED_DESCRIPTORS`] for the store and the rest); one more is
//!   answered 503 at once, without reading it, and closed.
//! - Each connection has a thread of its own (`http-conn`) that reads
//!   request heads ([`Conn::read_head`]): the whole head within
//!   [`HEADER_READ_TIMEOUT`] (of the connection's start, or of the first
//!   byte of a later request), at most
//!   [`MAX_HEAD_BYTES`](super::wire::MAX_HEAD_BYTES), parsed strictly
//!   ([`super::wire`]); a kept-alive connection may wait
//!   [`IO_TIMEOUT`] for its next request. It then routes the request
//!   ([`super::checks::route`]) and waits for the connection to come back
//!   from whoever answers it.
//! - Connections that carry no admitted request are at most
//!   [`MAX_UNAUTHENTICATED_CONNECTIONS`]: reading or awaiting a head;
//!   answering a request that was never authenticated (a public route
//!   such as `/ui` or `/health`, or a refusal); or closing after a
//!   refusal. Only a request whose token was accepted leaves them
//!   ([`Request::admit`]). When a new one would exceed that cap, or a
//!   connection finds no place, the one that has been waiting longest is
//!   closed: clients that send a request at once are served however many
//!   connections others open and leave idle, trickle into, or fill with
//!   pipelined requests whose answers they never read. The unauthenticated
//!   surface thus never holds more than that cap of the places that
//!   authenticated callers need.
//! - Every answer is written within
//!   [`ANSWER_WRITE_TIMEOUT`](super::listener::ANSWER_WRITE_TIMEOUT) as a
//!   whole ([`Conn::write_all`]): a client that does not read its answers
//!   loses its connection.
//! - A refused connection (a malformed head, an unread body) is answered,
//!   then closed after at most [`REFUSED_BODY_LINGER`] of discarding what
//!   the client still sends, so that a client sending its whole body before
//!   reading gets the answer. A connection's thread, descriptor and buffer
//!   go with it; nothing is ever left behind or allocated from a declared
//!   length.

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::admission::{Gate, Permit, RETRY_AFTER_SECS};
use super::http::{self, Context};
use super::listener::IO_TIMEOUT;
use super::request::{Conn, NoHead, Request, Returned};
use super::wire::Refusal;

/// Connections held at once, at most (see [`ConnectionCaps`] for how the
/// descriptor limit lowers it); one more is answered 503
/// `too_many_connections` and closed at once.
pub const MAX_CONNECTIONS: usize = 1024;

/// Connections carrying no admitted request at once, at most (half the
/// connection cap when that is lower): awaiting or reading a request head,
/// or closing after a refusal. One more closes the longest-waiting one.
pub const MAX_UNAUTHENTICATED_CONNECTIONS: usize = 256;

/// Descriptors kept free of connections: the store, its journal and
/// vectors, logs, the optional embedder's and LLM's connections.
pub const RESERVED_DESCRIPTORS: usize = 64;

/// The time a request head has to arrive whole: from the connection's
/// start for its first request, from its first byte for later ones. Then
/// the connection is closed (408 if part of a head came).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a refused connection's further bytes are discarded (after the
/// answer) before it is closed.
pub const REFUSED_BODY_LINGER: Duration = Duration::from_secs(5);

/// How often the accepting thread looks at the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(50);

/// How long accepting pauses after a failed `accept` (e.g. out of
/// descriptors), having closed the longest-waiting idle connection.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);

/// How long a new connection may wait for the place of an idle one closed
/// to make room for it.
const PLACE_WAIT: Duration = Duration::from_millis(200);

/// The caps in force, from the constants and the descriptor limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionCaps {
    pub connections: usize,
    pub unauthenticated: usize,
}

impl ConnectionCaps {
    /// With a soft descriptor limit of `descriptors` (when known):
    /// connections leave [`RESERVED_DESCRIPTORS`] free, and at most half of
    /// them may carry no admitted request.
    pub fn for_limit(descriptors: Option<u64>) -> ConnectionCaps {
        let connections = match descriptors {
            Some(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                MAX_CONNECTIONS.min(n.saturating_sub(RESERVED_DESCRIPTORS).max(8))
            }
            None => MAX_CONNECTIONS,
        };
        ConnectionCaps {
            connections,
            unauthenticated: MAX_UNAUTHENTICATED_CONNECTIONS.min(connections / 2),
        }
    }
}

#[cfg(unix)]
type RawSocket = std::os::fd::RawFd;
#[cfg(windows)]
type RawSocket = std::os::windows::io::RawSocket;

#[cfg(unix)]
fn raw(s: &TcpStream) -> RawSocket {
    std::os::fd::AsRawFd::as_raw_fd(s)
}
#[cfg(windows)]
fn raw(s: &TcpStream) -> RawSocket {
    std::os::windows::io::AsRawSocket::as_raw_socket(s)
}

/// Shuts down the socket `raw` names (its owner closes it).
fn shut_down(raw: RawSocket) {
    use std::mem::ManuallyDrop;
    // SAFETY: `raw` is the socket of a connection registered as idle, and
    // its owner unregisters it (under the same lock this runs under)
    // before closing it, so it is open and still that connection's. The
    // wrapper is never dropped, so it is not closed here.
    #[cfg(unix)]
    let s = ManuallyDrop::new(unsafe { std::os::fd::FromRawFd::from_raw_fd(raw) });
    #[cfg(windows)]
    let s = ManuallyDrop::new(unsafe { std::os::windows::io::FromRawSocket::from_raw_socket(raw) });
    let s: &TcpStream = &s;
    let _ = s.shutdown(Shutdown::Both);
}

/// The connections held: their places, and the idle ones by age.
pub struct Connections {
    caps: ConnectionCaps,
    places: Arc<Gate>,
    idle: Mutex<Idle>,
    stopped: AtomicBool,
}

#[derive(Default)]
struct Idle {
    next: u64,
    /// Entry order → socket: the first is the longest waiting.
    by_age: BTreeMap<u64, RawSocket>,
}

/// A connection's entry among those carrying no admitted request (the
/// idle ones, evicted longest-waiting first); leaving says whether it was
/// closed to make room meanwhile. It must be dropped (or left) before the
/// socket it names is closed: eviction shuts a registered socket down by
/// its number.
pub(super) struct IdleEntry {
    connections: Arc<Connections>,
    id: u64,
    left: bool,
}

impl IdleEntry {
    /// Leaves the idle ones; `false` if the connection was closed meanwhile.
    pub(super) fn leave(mut self) -> bool {
        self.left = true;
        self.connections.lock().by_age.remove(&self.id).is_some()
    }

    /// Whether the connection is still open (not closed to make room).
    fn is_open(&self) -> bool {
        self.connections.lock().by_age.contains_key(&self.id)
    }
}

impl Drop for IdleEntry {
    fn drop(&mut self) {
        if !self.left {
            self.connections.lock().by_age.remove(&self.id);
        }
    }
}

impl Connections {
    pub fn new(caps: ConnectionCaps) -> Arc<Connections> {
        Arc::new(Connections {
            caps,
            places: Gate::new("connections", caps.connections),
            idle: Mutex::new(Idle::default()),
            stopped: AtomicBool::new(false),
        })
    }

    pub fn caps(&self) -> ConnectionCaps {
        self.caps
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `stream` as idle, first closing the longest-waiting idle
    /// connection if the cap is reached. The entry must be dropped before
    /// the stream is.
    pub(super) fn enter_idle(self: &Arc<Self>, stream: &TcpStream) -> IdleEntry {
        let mut idle = self.lock();
        while idle.by_age.len() >= self.caps.unauthenticated {
            let Some((_, oldest)) = idle.by_age.pop_first() else {
                break;
            };
            shut_down(oldest);
        }
        idle.next += 1;
        let id = idle.next;
        idle.by_age.insert(id, raw(stream));
        IdleEntry {
            connections: self.clone(),
            id,
            left: false,
        }
    }

    /// Closes the longest-waiting idle connection; `false` if none.
    fn evict_oldest(&self) -> bool {
        let mut idle = self.lock();
        match idle.by_age.pop_first() {
            Some((_, oldest)) => {
                shut_down(oldest);
                true
            }
            None => false,
        }
    }

    /// Stops accepting and closes every idle connection (at shutdown);
    /// connections carrying a request end once it is answered.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let mut idle = self.lock();
        while let Some((_, s)) = idle.by_age.pop_first() {
            shut_down(s);
        }
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// A place for a new connection: a free one, else the place of the
    /// longest-waiting idle connection, closed for it.
    fn place(&self) -> Option<Permit> {
        if let Some(p) = self.places.try_enter() {
            return Some(p);
        }
        if !self.evict_oldest() {
            return None;
        }
        let until = Instant::now() + PLACE_WAIT;
        while Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
            if let Some(p) = self.places.try_enter() {
                return Some(p);
            }
        }
        None
    }
}

/// The soft limit on open descriptors (`RLIMIT_NOFILE`), where there is one.
#[cfg(unix)]
pub fn descriptor_limit() -> Option<u64> {
    use std::os::raw::c_int;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    type RlimT = std::os::raw::c_ulong;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    type RlimT = u64;
    #[repr(C)]
    struct Rlimit {
        cur: RlimT,
        max: RlimT,
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const RLIMIT_NOFILE: c_int = 7;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const RLIMIT_NOFILE: c_int = 8; // macOS and the BSDs
    extern "C" {
        fn getrlimit(resource: c_int, rlim: *mut Rlimit) -> c_int;
    }
    let mut limit = Rlimit { cur: 0, max: 0 };
    // SAFETY: getrlimit(2) writes one `struct rlimit`, laid out as above.
    let ok = unsafe { getrlimit(RLIMIT_NOFILE, &mut limit) } == 0;
    // RLIM_INFINITY is all ones. (`rlim_t` is narrower on 32-bit Linux.)
    #[allow(clippy::unnecessary_cast)]
    let soft = limit.cur as u64;
    (ok && limit.cur != RlimT::MAX).then_some(soft)
}

#[cfg(not(unix))]
pub fn descriptor_limit() -> Option<u64> {
    None
}

/// Accepts connections on `listener` until [`Connections::stop`], each on
/// a thread of its own. Only a listener that is no longer one ends it
/// early (the server then shuts down and exits non-zero).
pub(super) fn accept_loop(ctx: Arc<Context>, listener: TcpListener) {
    let connections = ctx.connections.clone();
    if let Err(e) = super::listener::set_accept_timeouts(&listener, ACCEPT_POLL) {
        log::warn!("cannot bound accept ({e}); shutdown may wait for a connection");
    }
    let mut warned: Option<Instant> = None;
    while !connections.stopped() {
        match listener.accept() {
            Ok((stream, _)) => admit(&ctx, stream),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) if is_fatal(&e) => {
                log::error!("the listening socket failed ({e}); shutting down");
                ctx.listener_failed();
                return;
            }
            Err(e) => {
                // Out of descriptors or memory, an aborted handshake: make
                // room, pause, carry on. Never fatal.
                if warned.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
                    log::warn!("accepting a connection failed ({e}); closing an idle one");
                    warned = Some(Instant::now());
                }
                connections.evict_oldest();
                std::thread::sleep(ACCEPT_BACKOFF);
            }
        }
    }
}

/// Errors that mean the listening socket itself is gone.
fn is_fatal(e: &std::io::Error) -> bool {
    // EBADF and EINVAL (not listening) have these numbers everywhere POSIX.
    cfg!(unix) && matches!(e.raw_os_error(), Some(9) | Some(22))
}

fn admit(ctx: &Arc<Context>, stream: TcpStream) {
    let configured = stream
        .set_read_timeout(Some(IO_TIMEOUT))
        .and_then(|_| stream.set_write_timeout(Some(IO_TIMEOUT)))
        .and_then(|_| stream.set_nonblocking(false));
    if configured.is_err() {
        return; // already gone
    }
    let _ = stream.set_nodelay(true);
    let Some(place) = ctx.connections.place() else {
        return refuse_at_once(stream);
    };
    let conn = Conn::new(stream, place);
    let thread_ctx = ctx.clone();
    let spawned = std::thread::Builder::new()
        .name("http-conn".into())
        .spawn(move || serve_connection(thread_ctx, conn));
    if let Err(e) = spawned {
        // The connection went with the closure: it is closed.
        log::warn!("cannot start a connection thread ({e}); connection closed");
    }
}

/// 503 without reading anything, and close: costs one non-blocking write.
fn refuse_at_once(stream: TcpStream) {
    let r = http::error(
        503,
        "too_many_connections",
        "the server holds as many connections as it may (MAX_CONNECTIONS); retry shortly",
    )
    .with_header(http::retry_after(RETRY_AFTER_SECS));
    let _ = stream.set_nonblocking(true);
    // One write, whatever of it the socket takes.
    let _ = std::io::Write::write(&mut &stream, &r.to_bytes(true));
}

/// The life of one connection: heads read within their deadlines, each
/// request routed, the connection kept alive or closed as its answer says.
fn serve_connection(ctx: Arc<Context>, mut conn: Conn) {
    let connections = ctx.connections.clone();
    let mut idle_until = Instant::now() + HEADER_READ_TIMEOUT;
    let mut head_until = Some(idle_until);
    loop {
        if connections.stopped() {
            return;
        }
        let entry = connections.enter_idle(&conn.stream);
        let head = conn.read_head(idle_until, head_until, HEADER_READ_TIMEOUT);
        if !entry.is_open() {
            return; // closed to make room: it had waited longest
        }
        let head = match head {
            Ok(head) => head,
            Err(NoHead::Closed) => return,
            Err(NoHead::TimedOut) => {
                // Told why, and closed at once: a client this slow to send
                // a head is not sending a body to discard.
                let r = http::error(
                    408,
                    "header_timeout",
                    "the request head did not arrive in time (HEADER_READ_TIMEOUT)",
                );
                let _ = conn.write_all_within(&r.to_bytes(true), Duration::from_secs(1));
                drop(entry);
                return;
            }
            Err(NoHead::Refused(r)) => {
                drop(entry);
                return refuse_head(&connections, conn, r);
            }
        };
        // The request stays among the connections that may be closed to
        // make room until it is authenticated (`Request::admit`).
        let (back, returned) = crossbeam_channel::bounded::<Returned>(1);
        let request = Request::new(head, conn, back, entry);
        let routed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::checks::route(&ctx, request)
        }));
        if routed.is_err() {
            log::error!("routing a request panicked");
        }
        match returned.recv() {
            Ok(Returned::KeepAlive(c)) => {
                conn = c;
                idle_until = Instant::now() + IO_TIMEOUT;
                head_until = None;
            }
            Ok(Returned::Linger(c)) => return linger(&connections, c),
            // Closed, or taken over (an SSE stream).
            Err(_) => return,
        }
    }
}

fn refuse_head(connections: &Arc<Connections>, mut conn: Conn, r: Refusal) {
    let answer = http::error(r.status, r.code, r.message);
    if conn.write_all(&answer.to_bytes(true)).is_ok() {
        linger(connections, conn);
    }
}

/// Closes `conn` after its answer: the write side at once, the rest once
/// the client closes too or [`REFUSED_BODY_LINGER`] has passed, discarding
/// what it sends meanwhile. The connection counts as idle (it may be
/// closed sooner to make room).
fn linger(connections: &Arc<Connections>, conn: Conn) {
    use std::io::Read;
    let (stream, _place) = conn.into_stream();
    let entry = connections.enter_idle(&stream);
    let _ = stream.shutdown(Shutdown::Write);
    let until = Instant::now() + REFUSED_BODY_LINGER;
    let mut sink = [0u8; 8192];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match (&stream).read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    drop(entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptor_limit_lowers_the_caps() {
        assert_eq!(
            ConnectionCaps::for_limit(None),
            ConnectionCaps {
                connections: MAX_CONNECTIONS,
                unauthenticated: MAX_UNAUTHENTICATED_CONNECTIONS
            }
        );
        assert_eq!(
            ConnectionCaps::for_limit(Some(256)),
            ConnectionCaps {
                connections: 256 - RESERVED_DESCRIPTORS,
                unauthenticated: (256 - RESERVED_DESCRIPTORS) / 2
            }
        );
        assert_eq!(
            ConnectionCaps::for_limit(Some(1 << 20)).connections,
            MAX_CONNECTIONS
        );
        assert_eq!(ConnectionCaps::for_limit(Some(10)).connections, 8);
    }

    #[test]
    fn idle_connections_beyond_the_cap_close_the_longest_waiting() {
        use std::io::Read;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Connections::new(ConnectionCaps {
            connections: 8,
            unauthenticated: 2,
        });
        let pairs: Vec<(TcpStream, TcpStream)> = (0..3)
            .map(|_| {
                let c = TcpStream::connect(addr).unwrap();
                (c, listener.accept().unwrap().0)
            })
            .collect();
        let first = connections.enter_idle(&pairs[0].1);
        let second = connections.enter_idle(&pairs[1].1);
        let third = connections.enter_idle(&pairs[2].1);
        let mut b = [0u8; 1];
        pairs[0]
            .0
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        assert_eq!((&pairs[0].0).read(&mut b).unwrap(), 0, "the oldest closed");
        assert!(!first.leave());
        assert!(second.leave());
        drop(third);
        assert!(connections.lock().by_age.is_empty());
    }
}
