//! Stream filters: FlateDecode (via `miniz_oxide`), LZWDecode, ASCIIHexDecode,
//! ASCII85Decode and RunLengthDecode, plus the PNG and TIFF predictors.
//!
//! Every decoder is bounded by an output limit chosen by the caller, so a
//! decompression bomb stops at the limit instead of exhausting memory. Corrupt
//! or truncated data yields whatever decoded before the damage: viewers show
//! that much, and for text extraction a partial content stream beats none.
//!
//! Why `miniz_oxide` rather than an inflater of our own: DEFLATE decoding is
//! subtle, security-critical code; miniz_oxide is pure safe Rust, fuzzed for
//! years as flate2's backend, adds only `adler2`, and its resumable core API
//! (`decompress` into a caller-owned buffer) is what lets a bomb stop at an
//! exact output limit.

use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_IGNORE_ADLER32, TINFL_FLAG_PARSE_ZLIB_HEADER,
    TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::object::{Dict, Object};

/// Filters applied in one chain are capped; real files use one or two.
const MAX_FILTER_CHAIN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FilterError {
    /// An image codec (DCT, JPX, CCITT, JBIG2), encryption, or unknown name.
    Unsupported,
    /// Nothing could be decoded.
    Corrupt,
    /// The output would exceed the limit.
    TooLarge,
}

/// One step of a filter chain: a filter name and its `/DecodeParms`.
pub(super) struct FilterStep<'a> {
    pub name: &'a [u8],
    pub params: Option<&'a Dict>,
}

/// Decodes `data` through `chain`, each step's output at most `limit` bytes.
pub(super) fn decode(
    data: &[u8],
    chain: &[FilterStep<'_>],
    limit: usize,
) -> Result<Vec<u8>, FilterError> {
    if chain.len() > MAX_FILTER_CHAIN {
        return Err(FilterError::Unsupported);
    }
    let mut current: Option<Vec<u8>> = None;
    for step in chain {
        let input = current.as_deref().unwrap_or(data);
        let output = match step.name {
            b"FlateDecode" | b"Fl" => predict(inflate(input, limit)?, step.params)?,
            b"LZWDecode" | b"LZW" => {
                let early = int_param(step.params, b"EarlyChange").unwrap_or(1) != 0;
                predict(lzw_decode(input, early, limit)?, step.params)?
            }
            b"ASCIIHexDecode" | b"AHx" => ascii_hex_decode(input, limit)?,
            b"ASCII85Decode" | b"A85" => ascii85_decode(input, limit)?,
            b"RunLengthDecode" | b"RL" => run_length_decode(input, limit)?,
            _ => return Err(FilterError::Unsupported),
        };
        current = Some(output);
    }
    match current {
        Some(out) => Ok(out),
        None if data.len() > limit => Err(FilterError::TooLarge),
        None => Ok(data.to_vec()),
    }
}

fn int_param(params: Option<&Dict>, key: &[u8]) -> Option<i64> {
    params?.get(key).and_then(Object::as_int)
}

/// Inflates zlib-wrapped or raw deflate data. The Adler-32 checksum is not
/// verified: damaged checksums are common and the data is usually fine.
fn inflate(input: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    let zlib = input.len() >= 2
        && input[0] & 0x0f == 8
        && (u16::from(input[0]) << 8 | u16::from(input[1])) % 31 == 0;
    let mut flags = TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    if zlib {
        flags |= TINFL_FLAG_PARSE_ZLIB_HEADER | TINFL_FLAG_IGNORE_ADLER32;
    }
    // One byte beyond the limit tells "exactly at the limit" from "over it".
    let cap = limit.saturating_add(1);
    let mut out = vec![0u8; input.len().saturating_mul(4).max(64).min(cap)];
    let mut state = Box::<DecompressorOxide>::default();
    let (mut in_pos, mut out_pos) = (0, 0);
    loop {
        let (status, consumed, produced) =
            decompress(&mut state, &input[in_pos..], &mut out, out_pos, flags);
        in_pos = (in_pos + consumed).min(input.len());
        out_pos += produced;
        match status {
            TINFLStatus::Done => break,
            TINFLStatus::HasMoreOutput if out.len() < cap => {
                let grown = out.len().saturating_mul(2).min(cap);
                out.resize(grown, 0);
            }
            TINFLStatus::HasMoreOutput => return Err(FilterError::TooLarge),
            // Truncated or corrupt: keep what was decoded, if anything.
            _ if out_pos > 0 => break,
            _ => return Err(FilterError::Corrupt),
        }
    }
    if out_pos > limit {
        return Err(FilterError::TooLarge);
    }
    out.truncate(out_pos);
    Ok(out)
}

/// Undoes a `/Predictor` (2 = TIFF, >= 10 = PNG) named in `params`.
fn predict(data: Vec<u8>, params: Option<&Dict>) -> Result<Vec<u8>, FilterError> {
    let predictor = int_param(params, b"Predictor").unwrap_or(1);
    if predictor < 2 {
        return Ok(data);
    }
    let colors = int_param(params, b"Colors").unwrap_or(1).clamp(1, 32) as usize;
    let bits = match int_param(params, b"BitsPerComponent").unwrap_or(8) {
        b @ (1 | 2 | 4 | 8 | 16) => b as usize,
        _ => 8,
    };
    let columns = int_param(params, b"Columns").unwrap_or(1).max(1);
    let columns = usize::try_from(columns).unwrap_or(usize::MAX);
    let bits_per_pixel = colors * bits;
    let row_bytes = columns
        .checked_mul(bits_per_pixel)
        .map_or(usize::MAX, |b| b.div_ceil(8))
        // A row can never be longer than the data; this also keeps a bogus
        // /Columns from allocating a huge row buffer.
        .min(data.len().max(1));
    let pixel_bytes = bits_per_pixel.div_ceil(8);
    if predictor == 2 {
        return Ok(tiff_predict(data, row_bytes, colors, bits));
    }
    Ok(png_predict(&data, row_bytes, pixel_bytes))
}

/// PNG predictors: each row starts with a filter-type byte.
fn png_predict(data: &[u8], row_bytes: usize, pixel_bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut prev = vec![0u8; row_bytes];
    for row in data.chunks(row_bytes + 1) {
        let (kind, raw) = (row[0], &row[1..]);
        let mut cur = vec![0u8; row_bytes];
        cur[..raw.len()].copy_from_slice(raw);
        for i in 0..row_bytes {
            let left = if i >= pixel_bytes {
                cur[i - pixel_bytes]
            } else {
                0
            };
            let up = prev[i];
            let up_left = if i >= pixel_bytes {
                prev[i - pixel_bytes]
            } else {
                0
            };
            cur[i] = cur[i].wrapping_add(match kind {
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                _ => 0,
            });
        }
        out.extend_from_slice(&cur[..raw.len()]);
        prev = cur;
    }
    out
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// TIFF predictor 2; only 8-bit components occur in practice for the streams
/// we decode, other depths are returned unchanged.
fn tiff_predict(mut data: Vec<u8>, row_bytes: usize, colors: usize, bits: usize) -> Vec<u8> {
    if bits != 8 {
        return data;
    }
    for row in data.chunks_mut(row_bytes) {
        for i in colors..row.len() {
            row[i] = row[i].wrapping_add(row[i - colors]);
        }
    }
    data
}

/// Reads big-endian variable-width codes for LZW.
struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
    buffer: u32,
    bits: u32,
}

impl BitReader<'_> {
    fn read(&mut self, width: u32) -> Option<u16> {
        while self.bits < width {
            let byte = *self.data.get(self.pos)?;
            self.pos += 1;
            self.buffer = self.buffer << 8 | u32::from(byte);
            self.bits += 8;
        }
        self.bits -= width;
        let code = (self.buffer >> self.bits) & ((1 << width) - 1);
        self.buffer &= (1 << self.bits) - 1;
        Some(code as u16)
    }
}

const LZW_CLEAR: u16 = 256;
const LZW_EOD: u16 = 257;
const LZW_MAX_CODES: usize = 4096;

/// LZW as in PDF (and TIFF): 9- to 12-bit codes, MSB first, with the
/// "early change" of code width by default.
fn lzw_decode(input: &[u8], early_change: bool, limit: usize) -> Result<Vec<u8>, FilterError> {
    // Entry n is entry prefix[n] followed by suffix[n]; first[n] is its first
    // byte and len[n] its length, so entries are written back to front.
    let mut prefix = vec![0u16; LZW_MAX_CODES];
    let mut suffix = vec![0u8; LZW_MAX_CODES];
    let mut first = vec![0u8; LZW_MAX_CODES];
    let mut len = vec![0u16; LZW_MAX_CODES];
    for b in 0..256 {
        suffix[b] = b as u8;
        first[b] = b as u8;
        len[b] = 1;
    }
    let early = usize::from(early_change);
    let mut next = 258usize;
    let mut previous: Option<u16> = None;
    let mut reader = BitReader {
        data: input,
        pos: 0,
        buffer: 0,
        bits: 0,
    };
    let mut out = Vec::new();
    loop {
        let width = match next + early {
            n if n >= 2048 => 12,
            n if n >= 1024 => 11,
            n if n >= 512 => 10,
            _ => 9,
        };
        let Some(code) = reader.read(width) else {
            break;
        };
        if code == LZW_CLEAR {
            next = 258;
            previous = None;
            continue;
        }
        if code == LZW_EOD {
            break;
        }
        let code_usize = usize::from(code);
        let entry = match previous {
            _ if code_usize < next && !(256..258).contains(&code_usize) => code_usize,
            // The "KwKwK" case: the code being defined right now.
            Some(prev) if code_usize == next && next < LZW_MAX_CODES => {
                prefix[next] = prev;
                suffix[next] = first[usize::from(prev)];
                first[next] = first[usize::from(prev)];
                len[next] = len[usize::from(prev)] + 1;
                next += 1;
                previous = Some(code);
                write_lzw_entry(&mut out, code_usize, &prefix, &suffix, &len, limit)?;
                continue;
            }
            _ => break, // corrupt: keep what we have
        };
        if let Some(prev) = previous {
            if next < LZW_MAX_CODES {
                prefix[next] = prev;
                suffix[next] = first[entry];
                first[next] = first[usize::from(prev)];
                len[next] = len[usize::from(prev)] + 1;
                next += 1;
            }
        }
        previous = Some(code);
        write_lzw_entry(&mut out, entry, &prefix, &suffix, &len, limit)?;
    }
    if out.is_empty() && !input.is_empty() {
        return Err(FilterError::Corrupt);
    }
    Ok(out)
}

fn write_lzw_entry(
    out: &mut Vec<u8>,
    mut code: usize,
    prefix: &[u16],
    suffix: &[u8],
    len: &[u16],
    limit: usize,
) -> Result<(), FilterError> {
    let n = usize::from(len[code]);
    if out.len() + n > limit {
        return Err(FilterError::TooLarge);
    }
    let start = out.len();
    out.resize(start + n, 0);
    for slot in out[start..].iter_mut().rev() {
        *slot = suffix[code];
        code = usize::from(prefix[code]);
    }
    Ok(())
}

fn push_limited(out: &mut Vec<u8>, byte: u8, limit: usize) -> Result<(), FilterError> {
    if out.len() >= limit {
        return Err(FilterError::TooLarge);
    }
    out.push(byte);
    Ok(())
}

fn ascii_hex_decode(input: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    let mut out = Vec::with_capacity((input.len() / 2).min(limit));
    let mut high: Option<u8> = None;
    for &b in input {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            b'>' => break,
            _ if super::lexer::is_whitespace(b) => continue,
            _ => break, // corrupt: stop here
        };
        match high.take() {
            Some(h) => push_limited(&mut out, h << 4 | digit, limit)?,
            None => high = Some(digit),
        }
    }
    if let Some(h) = high {
        push_limited(&mut out, h << 4, limit)?;
    }
    Ok(out)
}

fn ascii85_decode(input: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    let mut out = Vec::with_capacity((input.len() / 5 * 4).min(limit));
    let mut group = [0u8; 5];
    let mut n = 0;
    let data = input.strip_prefix(b"<~").unwrap_or(input);
    for &b in data {
        match b {
            b'~' => break,
            b'z' if n == 0 => {
                for _ in 0..4 {
                    push_limited(&mut out, 0, limit)?;
                }
            }
            b'!'..=b'u' => {
                group[n] = b - b'!';
                n += 1;
                if n == 5 {
                    let Some(word) = ascii85_word(&group) else {
                        break;
                    };
                    for byte in word.to_be_bytes() {
                        push_limited(&mut out, byte, limit)?;
                    }
                    n = 0;
                }
            }
            _ if super::lexer::is_whitespace(b) => {}
            _ => break,
        }
    }
    // A final partial group of n digits encodes n - 1 bytes; it is padded
    // with the highest digit ('u').
    if n > 1 {
        group[n..].fill(b'u' - b'!');
        if let Some(word) = ascii85_word(&group) {
            for &byte in &word.to_be_bytes()[..n - 1] {
                push_limited(&mut out, byte, limit)?;
            }
        }
    }
    Ok(out)
}

fn ascii85_word(group: &[u8; 5]) -> Option<u32> {
    let value = group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
    u32::try_from(value).ok()
}

fn run_length_decode(input: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&length) = input.get(i) {
        i += 1;
        match length {
            0..=127 => {
                let n = usize::from(length) + 1;
                let end = (i + n).min(input.len());
                if out.len() + (end - i) > limit {
                    return Err(FilterError::TooLarge);
                }
                out.extend_from_slice(&input[i..end]);
                i = end;
            }
            128 => break,
            _ => {
                let Some(&byte) = input.get(i) else { break };
                i += 1;
                let n = 257 - usize::from(length);
                if out.len() + n > limit {
                    return Err(FilterError::TooLarge);
                }
                out.resize(out.len() + n, byte);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::{compress_to_vec, compress_to_vec_zlib};
    use std::rc::Rc;

    fn step(name: &[u8]) -> FilterStep<'_> {
        FilterStep { name, params: None }
    }

    fn flate(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
        decode(data, &[step(b"FlateDecode")], limit)
    }

    #[test]
    fn flate_zlib_and_raw() {
        let text = b"BT /F1 12 Tf (Hello) Tj ET".repeat(50);
        assert_eq!(
            flate(&compress_to_vec_zlib(&text, 6), 1 << 20).unwrap(),
            text
        );
        assert_eq!(flate(&compress_to_vec(&text, 6), 1 << 20).unwrap(), text);
    }

    #[test]
    fn flate_limit_is_exact() {
        let text = vec![b'a'; 10_000];
        let packed = compress_to_vec_zlib(&text, 9);
        assert_eq!(flate(&packed, 10_000).unwrap().len(), 10_000);
        assert_eq!(flate(&packed, 9_999), Err(FilterError::TooLarge));
    }

    #[test]
    fn flate_bomb_stops_at_limit() {
        // 64 MiB of zeros compresses to ~64 KiB; the limit stops it early.
        let packed = compress_to_vec_zlib(&vec![0u8; 64 << 20], 9);
        assert_eq!(flate(&packed, 1 << 20), Err(FilterError::TooLarge));
    }

    #[test]
    fn flate_truncated_keeps_prefix() {
        let text: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let packed = compress_to_vec_zlib(&text, 6);
        let partial = flate(&packed[..packed.len() / 2], 1 << 20).unwrap();
        assert!(!partial.is_empty() && text.starts_with(&partial));
        assert_eq!(
            flate(b"\x78\x9c\xff\xff\xff", 100),
            Err(FilterError::Corrupt)
        );
    }

    #[test]
    fn png_up_predictor() {
        // Two rows of 3 columns, filter type 2 (Up).
        let raw = [2, 1, 2, 3, 2, 1, 1, 1];
        let mut params = Dict::new();
        params.insert(Rc::from(&b"Predictor"[..]), Object::Int(12));
        params.insert(Rc::from(&b"Columns"[..]), Object::Int(3));
        let packed = compress_to_vec_zlib(&raw, 6);
        let chain = [FilterStep {
            name: b"FlateDecode",
            params: Some(&params),
        }];
        assert_eq!(decode(&packed, &chain, 100).unwrap(), [1, 2, 3, 2, 3, 4]);
    }

    #[test]
    fn png_sub_average_paeth() {
        assert_eq!(png_predict(&[1, 1, 1, 1], 3, 1), [1, 2, 3]);
        assert_eq!(png_predict(&[0, 10, 20, 3, 2, 4], 2, 1), [10, 20, 7, 17]);
        assert_eq!(png_predict(&[0, 10, 20, 4, 1, 1], 2, 1), [10, 20, 11, 21]);
        assert_eq!(tiff_predict(vec![1, 1, 1, 5, 1], 5, 1, 8), [1, 2, 3, 8, 9]);
    }

    #[test]
    fn ascii_hex() {
        let chain = [step(b"ASCIIHexDecode")];
        assert_eq!(decode(b"48 65 6C6c6F7>", &chain, 100).unwrap(), b"Hellop");
        assert_eq!(decode(b"4865", &chain, 1), Err(FilterError::TooLarge));
    }

    #[test]
    fn ascii85() {
        let chain = [step(b"ASCII85Decode")];
        assert_eq!(
            decode(b"87cURD]i,\"Ebo80~>", &chain, 100).unwrap(),
            b"Hello World!"
        );
        assert_eq!(decode(b"<~z!!~>", &chain, 100).unwrap(), [0, 0, 0, 0, 0]);
        assert_eq!(decode(b"zz", &chain, 7), Err(FilterError::TooLarge));
    }

    #[test]
    fn run_length() {
        let chain = [step(b"RunLengthDecode")];
        assert_eq!(
            decode(&[2, b'a', b'b', b'c', 254, b'x', 128], &chain, 100).unwrap(),
            b"abcxxx"
        );
        assert_eq!(
            decode(&[129, b'x'], &chain, 127),
            Err(FilterError::TooLarge)
        );
    }

    #[test]
    fn lzw_spec_example() {
        // The example from the PDF reference: "-----A---B" with EarlyChange.
        let encoded = [0x80, 0x0B, 0x60, 0x50, 0x22, 0x0C, 0x0C, 0x85, 0x01];
        let chain = [step(b"LZWDecode")];
        assert_eq!(decode(&encoded, &chain, 100).unwrap(), b"-----A---B");
        assert_eq!(decode(&encoded, &chain, 9), Err(FilterError::TooLarge));
    }

    #[test]
    fn unsupported_and_identity() {
        assert_eq!(
            decode(b"x", &[step(b"DCTDecode")], 10),
            Err(FilterError::Unsupported)
        );
        assert_eq!(decode(b"abc", &[], 10).unwrap(), b"abc");
        assert_eq!(decode(b"abc", &[], 2), Err(FilterError::TooLarge));
    }
}
