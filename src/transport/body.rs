//! Request bodies and the sockets they arrive on: size caps, time limits,
//! and answering requests whose body was not read.
//!
//! tiny_http 0.12 hands a request over once its headers are parsed; the
//! body is read lazily by whoever holds the request. When a request whose
//! body was not read to the end is dropped (which `respond` does), tiny_http
//! drains the rest of the declared `Content-Length` so the connection can
//! carry the next request, and it does so by allocating a buffer of the
//! whole remaining length. That has three consequences this module handles:
//!
//! - A declared length far beyond any limit would make that allocation
//!   fail and abort the process. Such requests are answered 413 through a
//!   path that never drops the body reader ([`abandon`]): the connection is
//!   given up instead (its thread and socket are not reclaimed; each one is
//!   counted and logged). Up to [`MAX_DRAINABLE_BODY_BYTES`] the drain is
//!   harmless and the normal path is used.
//! - Draining blocks until the client has sent the rest. Answers to requests
//!   with an unread body are therefore sent by a few dedicated drain
//!   threads ([`Drains`]), never by the HTTP threads, so slow clients cannot
//!   stall routing.
//! - A client that stops sending (or reading) would block a thread forever:
//!   every accepted socket gets read and write timeouts ([`IO_TIMEOUT`]),
//!   inherited from the listening socket. Since that timeout also bounds
//!   `accept`, and tiny_http stops accepting after one failed `accept`, a
//!   [`Heartbeat`] connects to the listener well within every timeout.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::io::{Cursor, Read};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tiny_http::{Request, Response};

use crate::limits::MAX_FRAME_BYTES;

/// Largest request body accepted (the same 8 MiB as one stdio frame).
pub const MAX_BODY_BYTES: usize = MAX_FRAME_BYTES;

/// Largest declared `Content-Length` still answered on the normal path (see
/// the module documentation); larger ones are answered by [`abandon`].
pub const MAX_DRAINABLE_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long one socket read or write may block before it fails.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Threads that send answers to requests whose body was not read.
pub const DRAIN_THREADS: usize = 2;

/// Answers waiting for a drain thread; beyond it the request is abandoned.
pub const DRAIN_QUEUE: usize = 64;

/// Why a body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// More than [`MAX_BODY_BYTES`].
    TooLarge,
    /// The client stopped sending or the connection failed.
    Io(std::io::Error),
}

/// The declared `Content-Length` of `request` (chunked bodies declare none).
pub fn declared_length(request: &Request) -> Option<usize> {
    request.body_length()
}

/// Whether `request` may carry unread body bytes.
pub fn has_body(request: &Request) -> bool {
    match request.body_length() {
        Some(n) => n > 0,
        None => request
            .headers()
            .iter()
            .any(|h| h.field.equiv("Transfer-Encoding")),
    }
}

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] without
/// buffering the excess.
pub fn read(request: &mut Request) -> Result<Vec<u8>, BodyError> {
    if declared_length(request).is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(BodyError::TooLarge);
    }
    let capacity = declared_length(request).unwrap_or(0).min(MAX_BODY_BYTES);
    let mut body = Vec::with_capacity(capacity);
    request
        .as_reader()
        .take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(BodyError::Io)?;
    if body.len() > MAX_BODY_BYTES {
        return Err(BodyError::TooLarge);
    }
    Ok(body)
}

/// Gives every socket accepted from `listener` read and write timeouts of
/// `timeout`. Accepted sockets inherit these options from the listening
/// socket (Linux, the BSDs and macOS copy them at accept), and tiny_http
/// offers no other way to reach the sockets it accepts.
///
/// The read timeout also bounds `accept` itself, and tiny_http's accept
/// loop stops for good on the resulting error: keep a [`Heartbeat`]
/// running for as long as the server accepts.
pub fn set_accept_timeouts(listener: &TcpListener, timeout: Duration) -> std::io::Result<()> {
    use std::mem::ManuallyDrop;
    use std::net::TcpStream;
    #[cfg(unix)]
    let socket = {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: the descriptor is valid for the listener's lifetime and
        // the wrapper is never dropped, so it is never closed twice.
        ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(listener.as_raw_fd()) })
    };
    #[cfg(windows)]
    let socket = {
        use std::os::windows::io::{AsRawSocket, FromRawSocket};
        // SAFETY: as above, for the socket handle.
        ManuallyDrop::new(unsafe { TcpStream::from_raw_socket(listener.as_raw_socket()) })
    };
    socket.set_read_timeout(Some(timeout))?;
    socket.set_write_timeout(Some(timeout))?;
    Ok(())
}

/// Connects to the server's own listener every `timeout / 3`, so that an
/// `accept` bounded by the inherited read timeout always has a connection
/// before it times out. The connection is closed at once; tiny_http reads
/// end-of-stream from it and moves on.
pub struct Heartbeat {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(bound: std::net::SocketAddr, timeout: Duration) -> std::io::Result<Heartbeat> {
        use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
        // A wildcard address is reached through loopback.
        let target = match bound.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound.port())
            }
            IpAddr::V6(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), bound.port())
            }
            _ => bound,
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let interval = timeout / 3;
        let thread = std::thread::Builder::new()
            .name("listener-heartbeat".into())
            .spawn(move || {
                let step = interval.min(Duration::from_millis(100));
                let mut since = Duration::ZERO;
                while !flag.load(Ordering::SeqCst) {
                    std::thread::sleep(step);
                    since += step;
                    if since >= interval {
                        since = Duration::ZERO;
                        if let Err(e) = std::net::TcpStream::connect_timeout(&target, interval) {
                            log::warn!("listener heartbeat could not connect: {e}");
                        }
                    }
                }
            })?;
        Ok(Heartbeat {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Connections given up by [`abandon`] since start-up.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

pub fn abandoned_count() -> usize {
    ABANDONED.load(Ordering::Relaxed)
}

/// Answers `request` without ever dropping its body reader (see the module
/// documentation): the response is written through tiny_http's upgrade
/// path, which hands back the connection, and the connection is then
/// deliberately leaked.
pub fn abandon(request: Request, response: Response<Cursor<Vec<u8>>>) {
    let n = ABANDONED.fetch_add(1, Ordering::Relaxed) + 1;
    log::warn!(
        "abandoned a connection that declared a {}-byte body (limit {MAX_BODY_BYTES}); \
         {n} abandoned since start-up",
        declared_length(&request).unwrap_or(0)
    );
    // `upgrade` adds `Connection: upgrade` to the answer; clients read the
    // 413 status and close.
    let stream = request.upgrade("close", response);
    std::mem::forget(stream);
}

/// An answer to send once the request's unread body has been drained.
struct Pending {
    request: Request,
    response: Response<Cursor<Vec<u8>>>,
}

/// The drain threads: they send answers to requests with unread bodies.
pub struct Drains {
    tx: Sender<Pending>,
}

impl Drains {
    pub fn start() -> std::io::Result<(Drains, Vec<std::thread::JoinHandle<()>>)> {
        let (tx, rx) = crossbeam_channel::bounded::<Pending>(DRAIN_QUEUE);
        let mut handles = Vec::with_capacity(DRAIN_THREADS);
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
        Ok((Drains { tx }, handles))
    }

    /// Sends `response`, on a drain thread if the body may be unread.
    pub fn respond(&self, request: Request, response: Response<Cursor<Vec<u8>>>) {
        if !has_body(&request) {
            let _ = request.respond(response);
            return;
        }
        match self.tx.try_send(Pending { request, response }) {
            Ok(()) => {}
            Err(TrySendError::Full(p) | TrySendError::Disconnected(p)) => {
                abandon(p.request, p.response)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_sockets_inherit_the_timeouts() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        set_accept_timeouts(&listener, IO_TIMEOUT).unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(addr).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        if cfg!(any(target_os = "linux", target_os = "macos")) {
            assert_eq!(accepted.read_timeout().unwrap(), Some(IO_TIMEOUT));
            assert_eq!(accepted.write_timeout().unwrap(), Some(IO_TIMEOUT));
        }
    }

    #[test]
    fn heartbeat_keeps_a_timed_accept_from_timing_out() {
        let timeout = Duration::from_millis(300);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        set_accept_timeouts(&listener, timeout).unwrap();
        let addr = listener.local_addr().unwrap();
        // Without a heartbeat, accept gives up after the timeout.
        assert!(listener.accept().is_err());
        let heartbeat = Heartbeat::start(addr, timeout).unwrap();
        let until = std::time::Instant::now() + timeout * 4;
        while std::time::Instant::now() < until {
            listener
                .accept()
                .expect("accept timed out despite the heartbeat");
        }
        drop(heartbeat);
    }
}
