//! The listening socket of the HTTP server: bound with the timeouts every
//! accepted socket inherits ([`listen`]), and the heartbeat that keeps a
//! timed `accept` going.
//!
//! A client that stops sending (or reading) would block a thread forever:
//! every accepted socket gets read and write timeouts ([`IO_TIMEOUT`]),
//! inherited from the listening socket, and a whole body must arrive
//! within [`BODY_READ_TIMEOUT`](super::body::BODY_READ_TIMEOUT) (a client
//! trickling a byte at a time cannot hold a thread either). Since the socket timeout also bounds
//! `accept`, and tiny_http stops accepting after one failed `accept`, a
//! [`Heartbeat`] connects to the listener well within every timeout.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long one socket read or write may block before it fails.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Binds `addr` for [`super::http::serve`], with the socket timeouts that
/// every accepted connection inherits already set (`set_accept_timeouts`).
/// Connections take them when their handshake completes, which can be well
/// before `serve` runs: the memory is opened after binding, and a client
/// may connect as soon as the address is announced (on a fixed port, at
/// any time). One established without them lets a client that declares a
/// body and then stalls hold a body reader, and its connection, forever.
/// The one window left is between binding and setting them here, where
/// nothing else runs and, with port 0, no client knows the port yet.
pub fn listen(addr: SocketAddr) -> std::io::Result<Listener> {
    let listener = TcpListener::bind(addr)?;
    set_accept_timeouts(&listener, IO_TIMEOUT)?;
    Ok(Listener(listener))
}

/// A bound socket whose accepted connections have their timeouts: the only
/// kind [`super::http::serve`] takes, so none can reach it without them.
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

/// Gives every socket accepted from `listener` read and write timeouts of
/// `timeout`. Accepted sockets inherit these options from the listening
/// socket, and tiny_http offers no other way to reach the sockets it
/// accepts. The kernel copies them when it creates a connection's socket,
/// as the handshake completes, not at `accept`: a connection established
/// before this call has no timeouts even if it is accepted after, and a
/// client that declares a body and then stalls on it holds a body reader
/// for good. So call it as soon as the socket is bound, before its address
/// is announced ([`listen`]).
///
/// The read timeout also bounds `accept` itself, and tiny_http's accept
/// loop stops for good on the resulting error: keep a [`Heartbeat`]
/// running for as long as the server accepts.
fn set_accept_timeouts(listener: &TcpListener, timeout: Duration) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that connects as soon as it is told the address gets a
    /// connection with the socket timeouts.
    #[test]
    fn listen_sets_the_timeouts_before_the_address_is_known() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.0.accept().unwrap();
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
