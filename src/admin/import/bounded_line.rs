//! Reading an import file line by line without buffering an overlong line.

use std::io::BufRead;

/// What [`read_bounded_line`] read.
pub struct LineRead {
    /// Bytes consumed from the input, newline included.
    pub bytes: usize,
    /// The line was longer than the limit: `buf` holds only its start.
    pub too_long: bool,
}

/// Reads one line (without its `\n` / `\r\n`) into `buf`, keeping at most
/// `limit` bytes: a longer line is consumed to its end but not buffered.
/// `None` at end of input.
pub fn read_bounded_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<LineRead>> {
    buf.clear();
    let mut consumed = 0;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            if consumed == 0 {
                return Ok(None);
            }
            break;
        }
        let (piece, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + piece.len() > limit {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(piece);
            }
        }
        let used = found.unwrap_or(available.len());
        reader.consume(used);
        consumed += used;
        if found.is_some() {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(LineRead {
        bytes: consumed,
        too_long,
    }))
}
