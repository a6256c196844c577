//! The listening socket of the HTTP server, and the socket timeouts.
//!
//! A client that stops sending (or reading) would block a thread forever:
//! every accepted socket gets read and write timeouts ([`IO_TIMEOUT`]) as
//! it is accepted ([`super::acceptor`]), and reads of a request head or
//! body wait no longer than that head's or body's own deadline. `accept`
//! itself is bounded too ([`set_accept_timeouts`]) so that the accepting
//! thread sees shutdown promptly.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

/// How long one socket read or write may block before it fails; also how
/// long a kept-alive connection may wait for its next request.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// How long writing one answer may take in all, however little of it the
/// client takes at a time; then the connection is closed. At least the
/// `MAX_REPLY_BYTES` (8 MiB) answer fits in it at about 2.2 Mbit/s.
pub const ANSWER_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Binds `addr` for [`super::http::serve`]. Clients may connect as soon as
/// the address is announced, before `serve` runs: their connections wait
/// in the kernel's backlog and are bounded like every other once accepted.
pub fn listen(addr: SocketAddr) -> std::io::Result<Listener> {
    Ok(Listener(TcpListener::bind(addr)?))
}

/// A bound socket, the only kind [`super::http::serve`] takes.
pub struct Listener(TcpListener);

impl Listener {
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0.local_addr()
    }

    /// The socket, for the server that accepts on it.
    pub(super) fn into_socket(self) -> TcpListener {
        self.0
    }
}

/// Bounds `accept` on `listener` by `timeout` (its read timeout). Accepted
/// sockets inherit it; the acceptor sets their own at once.
pub(super) fn set_accept_timeouts(
    listener: &TcpListener,
    timeout: Duration,
) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_times_out_when_bounded() {
        let listener = listen("127.0.0.1:0".parse().unwrap())
            .unwrap()
            .into_socket();
        set_accept_timeouts(&listener, Duration::from_millis(100)).unwrap();
        let started = std::time::Instant::now();
        assert!(listener.accept().is_err());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
