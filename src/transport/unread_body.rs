//! Answering requests whose body was not read, without blocking a thread
//! on the client or letting a declared length abort the process.
//!
//! tiny_http 0.12 hands a request over once its headers are parsed; the
//! body is read lazily by whoever holds the request. When a request whose
//! body was not read to the end is dropped (which `respond` does), tiny_http
//! drains the rest of the declared `Content-Length` so the connection can
//! carry the next request, and it does so by allocating a buffer of the
//! whole remaining length. That has these consequences, handled here:
//!
//! - A body the server refuses (declared over [`MAX_BODY_BYTES`], too slow,
//!   [`BODY_READ_TIMEOUT`](crate::limits::BODY_READ_TIMEOUT), or broken) is answered at once and its
//!   connection ended ([`Drains::close`]): what the client still sends is
//!   discarded for at most [`REFUSED_BODY_LINGER`] on a short-lived thread,
//!   then the socket is shut down ([`super::socket`]), which ends tiny_http's
//!   drain and its thread for the connection.
//! - A declared length far beyond any limit could make the drain's
//!   allocation fail, which aborts the process. Requests declaring more
//!   than [`MAX_DRAINABLE_BODY_BYTES`] are therefore answered 413 through
//!   tiny_http's upgrade path, which hands the body reader back instead of
//!   dropping it ([`abandon`]), and their socket is shut down, so a drain
//!   finds end-of-stream at once (after what is already buffered). The
//!   reader is then dropped, which runs the drain, ends tiny_http's thread
//!   for the connection and closes its socket without blocking, where that
//!   cannot abort: when the allocator grants the declared length now (a
//!   probe, freed at once; the drain's buffer is lazily zeroed and only
//!   what is read into it is touched; memory taken by others between the
//!   probe and the drain is the one remaining risk), or when the length is
//!   past `isize::MAX`, where the drain's allocation panics ("capacity
//!   overflow") instead of aborting, a panic caught here and kept out of
//!   the log. Otherwise the reader is leaked, and tiny_http's thread for
//!   the connection blocks for good with its descriptors open (each one
//!   counted and logged): a length below `isize::MAX` the allocator refuses
//!   now (e.g. 1 TiB on a machine with less memory), a socket that could
//!   not be found and shut down, or an answer the drain threads had no
//!   room for ([`DRAIN_QUEUE`]). Up to [`MAX_DRAINABLE_BODY_BYTES`] the
//!   allocation is harmless and [`Drains::close`] ends the connection
//!   properly.
//! - Draining blocks until the client has sent the rest. So every answer
//!   to a request whose body is unread and not already in memory goes the
//!   way of a refused body ([`Drains::respond`] uses [`Drains::close`]): no
//!   thread ever waits for a body the server does not read. Only where the
//!   socket cannot be found (no `/dev/fd`) do a few drain threads
//!   ([`DRAIN_THREADS`]) send such answers once the body has arrived.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::cell::Cell;
use std::io::Cursor;
use std::net::Shutdown;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tiny_http::{ReadWrite, Request, Response};

use super::admission::Gate;
use super::body::{declared_length, may_wait_for_body, MAX_BODY_BYTES};
use super::socket::Connection;

/// Largest declared `Content-Length` still answered on the normal path (see
/// the module documentation); larger ones are answered by [`abandon`].
pub const MAX_DRAINABLE_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Threads that send answers to requests whose body was not read, where
/// the request's socket cannot be found to end its connection.
pub const DRAIN_THREADS: usize = 2;

/// Answers waiting for a drain thread; beyond it the request is abandoned.
pub const DRAIN_QUEUE: usize = 64;

/// Connections leaked by [`abandon`] since start-up.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// Connections [`abandon`] may leak before the server shuts down (and exits
/// non-zero, for a supervisor to restart it): each holds a thread and two
/// descriptors until the process exits, so without a bound a client
/// declaring bodies the allocator refuses could exhaust them. 128 leaks
/// stay well inside the usual 1,024-descriptor limit.
pub const MAX_ABANDONED_CONNECTIONS: usize = 128;

/// Connections leaked by [`abandon`] since start-up: tiny_http's thread for
/// each blocks for good and its socket stays open.
pub fn abandoned_count() -> usize {
    ABANDONED.load(Ordering::Relaxed)
}

/// Answers `request` without dropping its body reader unawares (see the
/// module documentation): the response is written through tiny_http's
/// upgrade path, which hands back the connection, body reader included.
/// With `socket` shut down, the connection is then released if its drain
/// cannot abort the process (`drain_cannot_abort`); otherwise it is
/// deliberately leaked, counted and logged.
pub fn abandon(request: Request, response: Response<Cursor<Vec<u8>>>, socket: Option<Connection>) {
    // Nothing of the body was read (it is refused from its header), so the
    // drain would allocate the whole declared length.
    let unread = declared_length(&request).unwrap_or(0);
    // `upgrade` adds `Connection: upgrade` to the answer; clients read the
    // 413 status and close.
    let stream = request.upgrade("close", response);
    let shut_down = socket.is_some_and(|s| s.shutdown(Shutdown::Both));
    if shut_down && drain_cannot_abort(unread) {
        release(stream, unread);
        log::info!(
            "refused a connection that declared a {unread}-byte body (limit {MAX_BODY_BYTES}); \
             closed and released"
        );
        return;
    }
    let n = ABANDONED.fetch_add(1, Ordering::Relaxed) + 1;
    log::warn!(
        "abandoned a connection that declared a {unread}-byte body (limit {MAX_BODY_BYTES}): \
         its thread and socket are not released; {n} abandoned since start-up"
    );
    std::mem::forget(stream);
    if n == MAX_ABANDONED_CONNECTIONS {
        log::error!(
            "{n} connections abandoned (MAX_ABANDONED_CONNECTIONS); shutting down so that \
             a restart releases them"
        );
        super::signals::request();
    }
}

/// Whether tiny_http's drain of `unread` bytes (`vec![0; unread]`) cannot
/// abort the process: the allocator grants that much now (the probe is
/// freed at once, before the drain asks for the same), or it is more than
/// `isize::MAX`, which no allocation may be: the drain then panics
/// ("capacity overflow") before allocating, and [`release`] catches that.
fn drain_cannot_abort(unread: usize) -> bool {
    if unread > isize::MAX as usize {
        return true;
    }
    let mut probe = Vec::<u8>::new();
    let granted = probe.try_reserve_exact(unread).is_ok();
    // Keeps the compiler from eliding the unused allocation and assuming
    // it succeeded.
    std::hint::black_box(&mut probe);
    granted
}

/// Drops the upgraded connection of an abandoned request whose socket is
/// shut down: tiny_http's drain reads end-of-stream at once, hands the
/// connection on, and tiny_http's thread for it reads end-of-stream too,
/// ends, and closes the socket. A drain of more than `isize::MAX` bytes
/// panics first, and unwinding drops the rest just the same.
fn release(stream: Box<dyn ReadWrite + Send>, unread: usize) {
    let overflows = unread > isize::MAX as usize;
    let dropped = expecting_overflow(overflows, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(stream)))
    });
    if dropped.is_err() && !overflows {
        log::error!("releasing an abandoned connection panicked");
    }
}

thread_local! {
    /// Set while this thread drops a connection whose drain is expected to
    /// panic with "capacity overflow".
    static OVERFLOW_EXPECTED: Cell<bool> = const { Cell::new(false) };
}

/// The message of the panic a drain of more than `isize::MAX` bytes raises.
const CAPACITY_OVERFLOW: &str = "capacity overflow";

/// Runs `f` (which must not unwind) with, if `expected`, this thread's
/// capacity-overflow panic kept from the panic hook, which would print it
/// like a crash. The first call installs a hook that passes every other
/// panic on to the hook installed before it.
fn expecting_overflow<T>(expected: bool, f: impl FnOnce() -> T) -> T {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    if !expected {
        return f();
    }
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str));
            let quiet = OVERFLOW_EXPECTED.with(Cell::get) && message == Some(CAPACITY_OVERFLOW);
            if !quiet {
                previous(info);
            }
        }));
    });
    OVERFLOW_EXPECTED.with(|e| e.set(true));
    let out = f();
    OVERFLOW_EXPECTED.with(|e| e.set(false));
    out
}

/// An answer to send once the request's unread body has been drained.
struct Pending {
    request: Request,
    response: Response<Cursor<Vec<u8>>>,
}

/// How long the server keeps discarding a refused body after answering,
/// before it ends the connection. Clients that send the whole body before
/// reading the answer (many do) need this time to finish sending and read
/// the answer; a client still sending (or stalled) after it is cut off.
pub const REFUSED_BODY_LINGER: Duration = Duration::from_secs(5);

/// Refused connections lingering at once (each on a short-lived thread of
/// its own for at most [`REFUSED_BODY_LINGER`]). Beyond it a refused
/// connection is ended as soon as its answer is written.
pub const MAX_LINGERING: usize = 64;

/// The drain threads: they send answers to requests with unread bodies.
/// Refused bodies get a lingering thread each, ended by the `http-linger`
/// thread.
pub struct Drains {
    tx: Sender<Pending>,
    /// The server's listening port, to find a request's socket.
    port: u16,
    lingering: Arc<Gate>,
    /// Connections to end, with when, in deadline order.
    closing: Sender<(Instant, Connection)>,
}

impl Drains {
    pub fn start(port: u16) -> std::io::Result<(Drains, Vec<std::thread::JoinHandle<()>>)> {
        let (tx, rx) = crossbeam_channel::bounded::<Pending>(DRAIN_QUEUE);
        let mut handles = Vec::with_capacity(DRAIN_THREADS + 1);
        for i in 0..DRAIN_THREADS {
            let rx: Receiver<Pending> = rx.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("http-drain-{i}"))
                    .spawn(move || {
                        for p in rx {
                            let _ = p.request.respond(p.response);
                        }
                    })?,
            );
        }
        // One entry per lingering connection at most; the linger is
        // constant, so entries arrive in deadline order.
        let (closing, closing_rx) =
            crossbeam_channel::bounded::<(Instant, Connection)>(MAX_LINGERING);
        handles.push(
            std::thread::Builder::new()
                .name("http-linger".into())
                .spawn(move || {
                    for (deadline, c) in closing_rx {
                        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                        c.shutdown(Shutdown::Both);
                    }
                })?,
        );
        let drains = Drains {
            tx,
            port,
            lingering: Gate::new("lingering", MAX_LINGERING),
            closing,
        };
        Ok((drains, handles))
    }

    /// Answers `request`, whose body the server refuses (too large, too
    /// slow, broken), without waiting for that body, then ends the
    /// connection. What the client still sends is discarded unread for at
    /// most [`REFUSED_BODY_LINGER`]; then the socket is shut down
    /// ([`super::socket`]), which ends tiny_http's drain and its thread for
    /// the connection. (A `Connection: close` header cannot end it:
    /// tiny_http 0.12 drops any `Connection` header a response sets.) Where
    /// the socket cannot be found a drain thread answers once the body has
    /// arrived.
    pub fn close(&self, request: Request, response: Response<Cursor<Vec<u8>>>) {
        let socket = Connection::find(&request, self.port);
        if declared_length(&request).is_some_and(|n| n > MAX_DRAINABLE_BODY_BYTES) {
            // Answered, and the connection ended at once.
            return abandon(request, response, socket);
        }
        let Some(socket) = socket else {
            return self.drain(request, response);
        };
        let Some(permit) = self.lingering.try_enter() else {
            // Too many lingering already: answer, read nothing, end now.
            socket.shutdown(Shutdown::Read);
            let _ = request.respond(response);
            socket.shutdown(Shutdown::Write);
            return;
        };
        let closing = self.closing.clone();
        let spawned = std::thread::Builder::new()
            .name("http-refused".into())
            .spawn(move || {
                let _permit = permit;
                let deadline = Instant::now() + REFUSED_BODY_LINGER;
                if closing.try_send((deadline, socket.clone())).is_err() {
                    // Cannot happen (one entry per permit); never linger
                    // unbounded.
                    socket.shutdown(Shutdown::Read);
                }
                // Sends the answer, then drains the body until the client
                // stops sending or the connection is ended.
                let _ = request.respond(response);
            });
        if let Err(e) = spawned {
            log::error!("cannot start a thread to answer a refused body: {e}");
        }
    }

    /// Sends `response` to a request whose body is not read: at once when
    /// it has none or tiny_http already holds it in memory
    /// ([`may_wait_for_body`]); otherwise the body
    /// is refused as [`Drains::close`] does (answered at once, the
    /// connection ended), so that no thread ever waits for a body the
    /// server does not want. A request whose body was read whole may be
    /// answered here too; its connection is then ended as well.
    pub fn respond(&self, request: Request, response: Response<Cursor<Vec<u8>>>) {
        if !may_wait_for_body(&request) {
            let _ = request.respond(response);
            return;
        }
        self.close(request, response);
    }

    /// Where the socket cannot be found (no `/dev/fd`): a drain thread
    /// sends the answer once the client has sent the body; beyond
    /// [`DRAIN_QUEUE`] waiting answers the request is abandoned.
    fn drain(&self, request: Request, response: Response<Cursor<Vec<u8>>>) {
        match self.tx.try_send(Pending { request, response }) {
            Ok(()) => {}
            Err(TrySendError::Full(p) | TrySendError::Disconnected(p)) => {
                abandon(p.request, p.response, None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn drains_that_cannot_abort_are_told_apart() {
        assert!(drain_cannot_abort(MAX_DRAINABLE_BODY_BYTES + 1));
        // No allocator grants isize::MAX bytes; past it no allocation is
        // even attempted.
        assert!(!drain_cannot_abort(isize::MAX as usize));
        assert!(drain_cannot_abort(isize::MAX as usize + 1));
        assert!(drain_cannot_abort(usize::MAX));
    }

    /// Stands for an upgraded connection: dropping it runs a drain like
    /// tiny_http's, then drops the connection it holds.
    struct Upgraded {
        unread: usize,
        _connection: Released,
    }

    struct Released(Arc<AtomicUsize>);

    impl Drop for Released {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Drop for Upgraded {
        fn drop(&mut self) {
            let buf = vec![0u8; self.unread];
            std::hint::black_box(&buf);
        }
    }

    impl Read for Upgraded {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Ok(0)
        }
    }

    impl std::io::Write for Upgraded {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn released_connections_are_dropped_even_when_their_drain_overflows() {
        let released = Arc::new(AtomicUsize::new(0));
        for unread in [1 << 20, isize::MAX as usize + 1, usize::MAX] {
            let stream = Box::new(Upgraded {
                unread,
                _connection: Released(released.clone()),
            });
            release(stream, unread);
        }
        assert_eq!(released.load(Ordering::SeqCst), 3);
        assert!(!OVERFLOW_EXPECTED.with(Cell::get));
    }
}
