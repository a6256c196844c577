//! Request bodies: read whole within a size cap and a deadline, and whether
//! one is already in memory (so answering without reading it cannot wait
//! for the client).
//!
//! A body the server does not read is never waited for: answering without
//! it closes the connection ([`Request::respond`]). Every read here waits
//! for the client until the body's deadline at most.

use super::request::Request;
use std::io::{ErrorKind, Read};
use std::time::{Duration, Instant};

pub use crate::limits::BODY_READ_TIMEOUT;
use crate::limits::MAX_FRAME_BYTES;

/// Largest request body accepted (the same 8 MiB as one stdio frame).
pub const MAX_BODY_BYTES: usize = MAX_FRAME_BYTES;

#[derive(Debug)]
pub enum BodyError {
    /// More than [`MAX_BODY_BYTES`].
    TooLarge,
    /// The body did not arrive within [`BODY_READ_TIMEOUT`].
    TimedOut,
    /// The client stopped sending or the connection failed.
    Io(std::io::Error),
}

/// The declared `Content-Length` of `request` (chunked bodies declare none).
pub fn declared_length(request: &Request) -> Option<u64> {
    request.body_length()
}

/// Whether `request` may carry unread body bytes.
pub fn has_body(request: &Request) -> bool {
    request.is_chunked() || request.body_length().is_some_and(|n| n > 0)
}

/// Whether `request`'s whole body (if any) is already in memory, so that
/// reading it cannot wait for the client: none, or one that came with the
/// head ([`READ_WITH_THE_HEAD`](super::request::READ_WITH_THE_HEAD)).
pub fn in_memory(request: &Request) -> bool {
    request.body_in_memory()
}

/// Whether answering `request` without reading its body could wait for
/// the client: it has a body, and not all of it is in memory yet.
pub fn may_wait_for_body(request: &Request) -> bool {
    has_body(request) && !in_memory(request)
}

/// Bytes asked for by one read of a body.
const READ_CHUNK: usize = 64 * 1024;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] without
/// buffering the excess, and giving up once [`BODY_READ_TIMEOUT`] has
/// passed (no read waits past it).
pub fn read(request: &mut Request) -> Result<Vec<u8>, BodyError> {
    let declared = declared_length(request).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let deadline = Instant::now() + BODY_READ_TIMEOUT;
    read_within(
        &mut request.body_reader(deadline),
        declared,
        BODY_READ_TIMEOUT,
    )
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
