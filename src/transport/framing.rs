//! Newline-delimited frames with a size cap.
//!
//! A frame longer than the cap is not buffered: its bytes are skipped up to
//! the next newline and reported as [`Frame::TooLarge`], so a hostile or
//! broken client cannot make the server hold a gigabyte line in memory, and
//! the connection stays usable for the next message.

use std::io::{self, BufRead};

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One line, without its line terminator (`\n` or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than the cap, skipped; `bytes` is its length.
    TooLarge { bytes: usize },
}

pub struct FrameReader<R> {
    inner: R,
    max: usize,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        FrameReader { inner, max }
    }

    /// The next frame, or `None` at end of input.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut line = Vec::new();
        let mut total = 0usize;
        let mut oversized = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                // End of input: a last line without a newline still counts.
                return Ok(match (oversized, total) {
                    (true, _) => Some(Frame::TooLarge { bytes: total }),
                    (false, 0) => None,
                    (false, _) => Some(Frame::Line(strip_cr(line))),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(available.len());
            total += take;
            if !oversized {
                if line.len() + take > self.max {
                    oversized = true;
                    line = Vec::new(); // release what was buffered
                } else {
                    line.extend_from_slice(&available[..take]);
                }
            }
            let consumed = newline.map_or(take, |i| i + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                return Ok(Some(if oversized {
                    Frame::TooLarge { bytes: total }
                } else {
                    Frame::Line(strip_cr(line))
                }));
            }
        }
    }
}

fn strip_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        // A tiny buffer exercises lines spanning many fill_buf calls.
        let mut r = FrameReader::new(io::BufReader::with_capacity(3, input), max);
        std::iter::from_fn(|| r.next_frame().unwrap()).collect()
    }

    #[test]
    fn lines_are_split_and_crlf_stripped() {
        assert_eq!(
            frames(b"ab\r\ncd\n\nef", 10),
            vec![
                Frame::Line(b"ab".to_vec()),
                Frame::Line(b"cd".to_vec()),
                Frame::Line(vec![]),
                Frame::Line(b"ef".to_vec())
            ]
        );
    }

    #[test]
    fn cap_is_exact_and_oversized_lines_are_skipped() {
        assert_eq!(
            frames(b"12345\n123456\nok\n", 5),
            vec![
                Frame::Line(b"12345".to_vec()),
                Frame::TooLarge { bytes: 6 },
                Frame::Line(b"ok".to_vec())
            ]
        );
    }

    #[test]
    fn oversized_last_line_without_newline_is_reported() {
        assert_eq!(frames(b"1234567", 5), vec![Frame::TooLarge { bytes: 7 }]);
    }
}
