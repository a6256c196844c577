//! Request bodies: read whole within a size cap and a deadline, and whether
//! one is already in memory (so answering without reading it cannot wait
//! for the client).
//!
//! What becomes of a body the server does not read is [`super::unread_body`]'s;
//! the socket timeouts that bound every read here are [`super::listener`]'s.

use std::io::{ErrorKind, Read};
use std::time::{Duration, Instant};
use tiny_http::Request;

pub use crate::limits::BODY_READ_TIMEOUT;
use crate::limits::MAX_FRAME_BYTES;

/// Largest request body accepted (the same 8 MiB as one stdio frame).
pub const MAX_BODY_BYTES: usize = MAX_FRAME_BYTES;

#[derive(Debug)]
pub enum BodyError {
    /// More than [`MAX_BODY_BYTES`].
    TooLarge,
    /// The body did not arrive within [`BODY_READ_TIMEOUT`], or one read
    /// waited [`IO_TIMEOUT`](super::listener::IO_TIMEOUT) for data.
    TimedOut,
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

/// tiny_http 0.12 reads a body declared by a `Content-Length` of at most
/// this many bytes together with the request head, before it hands the
/// request over (`request.rs`, `new_request`), unless the client expects
/// `100 Continue` or asks for a protocol upgrade.
const READ_WITH_THE_HEAD: usize = 1024;

/// Whether `request`'s whole body (if any) is already in memory, so that
/// reading it cannot wait for the client.
pub fn in_memory(request: &Request) -> bool {
    let has = |name: &'static str| request.headers().iter().any(|h| h.field.equiv(name));
    let upgrade = request
        .headers()
        .iter()
        .filter(|h| h.field.equiv("Connection"))
        .any(|h| h.value.as_str().to_ascii_lowercase().contains("upgrade"));
    // An upgrade request's reader is the rest of the connection, and a
    // chunked body is decoded as it arrives.
    if upgrade || has("Transfer-Encoding") {
        return false;
    }
    match request.body_length() {
        None | Some(0) => true,
        Some(n) => n <= READ_WITH_THE_HEAD && !has("Expect"),
    }
}

/// Whether answering `request` without reading its body could wait for
/// the client: it has a body, and tiny_http does not hold all of it yet.
pub fn may_wait_for_body(request: &Request) -> bool {
    has_body(request) && !in_memory(request)
}

/// Bytes asked for by one read of a body.
const READ_CHUNK: usize = 64 * 1024;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] without
/// buffering the excess, and giving up once [`BODY_READ_TIMEOUT`] has
/// passed (checked after every read; a read itself waits at most
/// [`IO_TIMEOUT`](super::listener::IO_TIMEOUT)).
pub fn read(request: &mut Request) -> Result<Vec<u8>, BodyError> {
    let declared = declared_length(request);
    read_within(request.as_reader(), declared, BODY_READ_TIMEOUT)
}

fn read_within(
    reader: &mut dyn Read,
    declared: Option<usize>,
    timeout: Duration,
) -> Result<Vec<u8>, BodyError> {
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(BodyError::TooLarge);
    }
    let deadline = Instant::now() + timeout;
    let mut body = Vec::with_capacity(declared.unwrap_or(0).min(MAX_BODY_BYTES));
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(body),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                return Err(BodyError::TimedOut)
            }
            Err(e) => return Err(BodyError::Io(e)),
        };
        if body.len() + n > MAX_BODY_BYTES {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk[..n]);
        if Instant::now() >= deadline {
            return Err(BodyError::TimedOut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_http::{Header, TestRequest};

    fn header(name: &str, value: &str) -> Header {
        Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
    }

    fn declaring(length: usize, body: &'static str) -> TestRequest {
        TestRequest::new()
            .with_method(tiny_http::Method::Post)
            .with_header(header("Content-Length", &length.to_string()))
            .with_body(body)
    }

    /// What [`in_memory`] relies on: tiny_http reads a small declared body
    /// with the head (so a short one fails the request's creation), and a
    /// larger one only when it is read.
    #[test]
    fn tiny_http_reads_small_bodies_with_the_head() {
        let full: &'static str = Box::leak("a".repeat(READ_WITH_THE_HEAD).into_boxed_str());
        let r: Request = declaring(READ_WITH_THE_HEAD, full).into();
        assert!(in_memory(&r));
        let short = std::panic::catch_unwind(|| Request::from(declaring(READ_WITH_THE_HEAD, "{")));
        assert!(
            short.is_err(),
            "a short small body was not read with the head"
        );
        let r: Request = declaring(READ_WITH_THE_HEAD + 1, "{").into();
        assert!(!in_memory(&r));
    }

    #[test]
    fn bodies_that_may_still_arrive_are_not_in_memory() {
        assert!(in_memory(&TestRequest::new().into()));
        assert!(in_memory(&declaring(0, "").into()));
        assert!(in_memory(&declaring(2, "{}").into()));
        let expects = declaring(2, "{}").with_header(header("Expect", "100-continue"));
        assert!(!in_memory(&expects.into()));
        let chunked = TestRequest::new()
            .with_method(tiny_http::Method::Post)
            .with_header(header("Transfer-Encoding", "chunked"))
            .with_body("0\r\n\r\n");
        assert!(!in_memory(&chunked.into()));
        let upgrade = declaring(0, "").with_header(header("Connection", "keep-alive, Upgrade"));
        assert!(!in_memory(&upgrade.into()));
    }

    /// Yields `parts` one per read, then waits `pause` before each further
    /// byte of `trickle`.
    struct Slow {
        parts: Vec<Vec<u8>>,
        pause: Duration,
        trickle: usize,
    }

    impl Read for Slow {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if let Some(part) = self.parts.first_mut() {
                let n = part.len().min(buf.len());
                buf[..n].copy_from_slice(&part[..n]);
                part.drain(..n);
                if part.is_empty() {
                    self.parts.remove(0);
                }
                return Ok(n);
            }
            if self.trickle == 0 {
                return Ok(0);
            }
            std::thread::sleep(self.pause);
            self.trickle -= 1;
            buf[0] = b' ';
            Ok(1)
        }
    }

    #[test]
    fn bodies_are_read_whole_up_to_the_cap() {
        let mut r = Slow {
            parts: vec![b"{\"a\"".to_vec(), b":1}".to_vec()],
            pause: Duration::ZERO,
            trickle: 0,
        };
        let body = read_within(&mut r, Some(7), Duration::from_secs(5)).unwrap();
        assert_eq!(body, b"{\"a\":1}");
        let mut big = Slow {
            parts: vec![vec![b'a'; MAX_BODY_BYTES], vec![b'a']],
            pause: Duration::ZERO,
            trickle: 0,
        };
        assert!(matches!(
            read_within(&mut big, None, Duration::from_secs(5)),
            Err(BodyError::TooLarge)
        ));
        let mut declared = Slow {
            parts: vec![],
            pause: Duration::ZERO,
            trickle: 0,
        };
        assert!(matches!(
            read_within(
                &mut declared,
                Some(MAX_BODY_BYTES + 1),
                Duration::from_secs(5)
            ),
            Err(BodyError::TooLarge)
        ));
    }

    #[test]
    fn a_trickling_body_times_out_at_the_deadline() {
        let mut r = Slow {
            parts: vec![b"{".to_vec()],
            pause: Duration::from_millis(20),
            trickle: usize::MAX,
        };
        let started = Instant::now();
        let outcome = read_within(&mut r, Some(1000), Duration::from_millis(200));
        assert!(matches!(outcome, Err(BodyError::TimedOut)));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
