//! Closing the connection of a request whose body the server will not read.
//!
//! tiny_http 0.12 owns the sockets it accepts and offers no way to close
//! one: once a request is answered it drains the rest of the declared body
//! (see [`super::body`]) and then waits for the next request on the same
//! connection. To answer a refused body at once, read none of it, and end
//! the connection, the server needs the socket itself. [`Connection::find`]
//! looks it up among the process's open descriptors by its two addresses
//! (the client's address and the server's port identify one TCP connection)
//! and [`Connection`] shuts it down, which makes every later read return
//! end-of-stream, so tiny_http's drain and its connection thread finish at
//! once and release the socket.
//!
//! The lookup lists `/dev/fd` (Linux, macOS, the BSDs); where that is not
//! available (Windows) nothing is found and callers fall back to draining.

use std::net::{Shutdown, SocketAddr};
use tiny_http::Request;

/// The accepted socket of one request.
#[derive(Clone)]
pub struct Connection {
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
    peer: SocketAddr,
    port: u16,
}

impl Connection {
    /// The socket `request` arrived on, given the server's listening port.
    pub fn find(request: &Request, port: u16) -> Option<Connection> {
        let peer = request.remote_addr().copied()?;
        Connection::find_by(peer, port)
    }

    #[cfg(unix)]
    fn find_by(peer: SocketAddr, port: u16) -> Option<Connection> {
        for entry in std::fs::read_dir("/dev/fd").ok()?.flatten() {
            let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let c = Connection { fd, peer, port };
            if c.matches() {
                return Some(c);
            }
        }
        None
    }

    #[cfg(not(unix))]
    fn find_by(_peer: SocketAddr, _port: u16) -> Option<Connection> {
        None
    }

    /// Whether the descriptor is (still) this connection's socket.
    #[cfg(unix)]
    fn matches(&self) -> bool {
        use std::mem::ManuallyDrop;
        use std::net::TcpStream;
        use std::os::fd::FromRawFd;
        // SAFETY: the wrapper is never dropped, so the descriptor is never
        // closed here; it is only asked for its addresses, which fails
        // harmlessly (ENOTSOCK, EBADF) for a descriptor that is not a
        // socket or was closed meanwhile.
        let s = ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(self.fd) });
        s.peer_addr().ok() == Some(self.peer)
            && s.local_addr().ok().map(|a| a.port()) == Some(self.port)
    }

    /// Shuts the socket down (`how`), after checking that the descriptor
    /// still is this connection's socket.
    #[cfg(unix)]
    pub fn shutdown(&self, how: Shutdown) -> bool {
        use std::mem::ManuallyDrop;
        use std::net::TcpStream;
        use std::os::fd::FromRawFd;
        if !self.matches() {
            return false;
        }
        // SAFETY: as in `matches`; the socket is shut down, not closed (its
        // owner, tiny_http, closes it).
        let s = ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(self.fd) });
        s.shutdown(how).is_ok()
    }

    #[cfg(not(unix))]
    pub fn shutdown(&self, _how: Shutdown) -> bool {
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn finds_and_shuts_down_exactly_the_connection_named() {
        use std::os::fd::AsRawFd;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut first = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (accepted_first, peer_first) = listener.accept().unwrap();
        let second = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (_accepted_second, _) = listener.accept().unwrap();

        // The server's side of the first connection, not the client's own
        // socket (whose local address is that peer address).
        let c = Connection::find_by(peer_first, port).expect("the accepted socket");
        assert_eq!(c.fd, accepted_first.as_raw_fd());
        assert!(c.shutdown(Shutdown::Both));
        let mut buf = [0u8; 1];
        assert_eq!(
            first.read(&mut buf).unwrap(),
            0,
            "the client sees end-of-stream"
        );
        second
            .set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .unwrap();
        assert!(
            (&second).read(&mut buf).is_err(),
            "the other connection is untouched"
        );
        drop(accepted_first);
        assert!(
            !c.shutdown(Shutdown::Both),
            "a closed socket is not touched"
        );
    }
}
