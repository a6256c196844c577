//! Cross-reference data: where each object is.
//!
//! [`read`] follows `startxref` through classic `xref` tables and PDF 1.5
//! cross-reference streams, hybrid files' `/XRefStm`, and the `/Prev` chain of
//! incremental updates (newest entry wins). [`scan`] is the recovery path for
//! files whose cross-reference data is missing or wrong: it finds every
//! `num gen obj` header and every `trailer` dictionary by scanning the bytes.

use std::collections::{HashMap, HashSet};

use super::error::{LimitKind, PdfError};
use super::lexer::{find, is_regular, is_whitespace, rfind, Lexer, Token};
use super::limits::{too_large, Budget, Limits, MAX_XREF_SECTIONS};
use super::object::{Dict, Object};
use super::parser::Parser;
use super::stream::{self, EndstreamIndex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// A top-level object at this byte offset.
    Offset(usize),
    /// The `index`-th object inside object stream number `stream`.
    Compressed { stream: u32, index: u32 },
}

#[derive(Debug, Default)]
pub(super) struct XrefTable {
    pub entries: HashMap<u32, Entry>,
    /// The newest trailer, with `/Root`, `/Encrypt` and `/Info` filled in
    /// from older ones when it lacks them.
    pub trailer: Dict,
}

impl XrefTable {
    /// Adds an entry unless a newer section already defined the object.
    fn add(&mut self, num: u32, entry: Entry, limits: &Limits) -> Result<(), PdfError> {
        if self.entries.len() >= limits.max_objects && !self.entries.contains_key(&num) {
            return Err(too_large(LimitKind::Objects, limits.max_objects));
        }
        self.entries.entry(num).or_insert(entry);
        Ok(())
    }

    fn merge_trailer(&mut self, older: &Dict) {
        for key in [&b"Root"[..], b"Encrypt", b"Info"] {
            if !self.trailer.contains(key) {
                if let Some(value) = older.get(key) {
                    self.trailer.insert(key.into(), value.clone());
                }
            }
        }
    }
}

/// Everything needed to read cross-reference sections.
pub(super) struct Reader<'a> {
    pub data: &'a [u8],
    pub limits: &'a Limits,
    pub budget: &'a Budget,
    pub ends: &'a EndstreamIndex,
}

/// How far past a damaged table its `trailer` keyword is looked for.
const TRAILER_SEARCH_WINDOW: usize = 64 << 10;

/// Reads the cross-reference chain. `Ok(None)` means it is unusable and the
/// caller should fall back to [`scan`].
pub(super) fn read(r: &Reader<'_>) -> Result<Option<XrefTable>, PdfError> {
    let Some(start) = find_startxref(r.data) else {
        return Ok(None);
    };
    // Files with junk before "%PDF-" have every offset shifted by that much.
    let shift = find(r.data, b"%PDF-", 0).unwrap_or(0);
    let mut table = XrefTable::default();
    let mut visited = HashSet::new();
    let mut next = Some(start);
    let mut first = true;
    while let Some(offset) = next.take() {
        if visited.len() >= MAX_XREF_SECTIONS || !visited.insert(offset) {
            break;
        }
        let trailer = match read_section(r, offset, &mut table)? {
            Some(t) => t,
            None if shift > 0 => match read_section(r, offset.saturating_add(shift), &mut table)? {
                Some(t) => t,
                None => break,
            },
            None => break,
        };
        // A hybrid file's table hides its compressed objects in /XRefStm.
        if let Some(xref_stm) = trailer.get(b"XRefStm").and_then(Object::as_usize) {
            if visited.insert(xref_stm) {
                read_section(r, xref_stm, &mut table)?;
            }
        }
        if first {
            table.trailer = trailer.clone();
            first = false;
        } else {
            table.merge_trailer(&trailer);
        }
        next = trailer.get(b"Prev").and_then(Object::as_usize);
    }
    Ok((!first).then_some(table))
}

/// The offset after the last `startxref`.
fn find_startxref(data: &[u8]) -> Option<usize> {
    let tail_start = data.len().saturating_sub(4096);
    let at = rfind(&data[tail_start..], b"startxref", data.len())
        .map(|i| i + tail_start)
        .or_else(|| rfind(data, b"startxref", data.len()))?;
    match Lexer::at(data, at + b"startxref".len()).next_token()? {
        Token::Int(offset) => usize::try_from(offset).ok(),
        _ => None,
    }
}

/// Reads the classic table or cross-reference stream at `offset`, returning
/// its trailer dictionary.
fn read_section(
    r: &Reader<'_>,
    offset: usize,
    table: &mut XrefTable,
) -> Result<Option<Dict>, PdfError> {
    if offset >= r.data.len() {
        return Ok(None);
    }
    let mut lexer = Lexer::at(r.data, offset);
    if lexer.next_token() == Some(Token::Keyword(b"xref")) {
        read_table(r, lexer.pos(), table)
    } else {
        read_stream_section(r, offset, table)
    }
}

/// A classic table: subsections of `first count` followed by `count` entries
/// of `offset generation n|f`, then `trailer << ... >>`. Entries are read as
/// tokens rather than fixed 20-byte records, which tolerates the common
/// off-by-one line endings.
fn read_table(r: &Reader<'_>, pos: usize, table: &mut XrefTable) -> Result<Option<Dict>, PdfError> {
    let mut lexer = Lexer::at(r.data, pos);
    loop {
        match lexer.next_token() {
            Some(Token::Int(first)) => {
                let (Ok(first), Some(Token::Int(count))) =
                    (u32::try_from(first), lexer.next_token())
                else {
                    break;
                };
                for i in 0..count.max(0) {
                    let save = lexer.pos();
                    let (Some(Token::Int(off)), Some(Token::Int(_gen)), Some(Token::Keyword(kind))) =
                        (lexer.next_token(), lexer.next_token(), lexer.next_token())
                    else {
                        lexer.set_pos(save);
                        break;
                    };
                    let Some(num) = u32::try_from(i).ok().and_then(|i| first.checked_add(i)) else {
                        break;
                    };
                    // Free entries are skipped: older sections may still hold
                    // the object, which is harmless for reading text.
                    match (kind, usize::try_from(off)) {
                        (b"n", Ok(off)) if off > 0 => {
                            table.add(num, Entry::Offset(off), r.limits)?
                        }
                        (b"n" | b"f", _) => {}
                        _ => {
                            lexer.set_pos(save);
                            break;
                        }
                    }
                }
            }
            Some(Token::Keyword(b"trailer")) => break,
            _ => break,
        }
    }
    // The trailer normally follows the last subsection; after damage, look
    // for it a little further on (bounded: a long Prev chain of damaged
    // sections must not rescan the whole file each time).
    let from = lexer.pos().saturating_sub(8);
    let window = &r.data[..r.data.len().min(from.saturating_add(TRAILER_SEARCH_WINDOW))];
    let Some(at) = find(window, b"trailer", from) else {
        return Ok(None);
    };
    let mut parser = Parser::new(r.data, at + b"trailer".len(), r.limits.max_nesting_depth);
    Ok(match parser.parse_object() {
        Ok(Object::Dict(d)) => Some((*d).clone()),
        _ => None,
    })
}

/// A cross-reference stream (PDF 1.5): binary rows of `/W` field widths.
fn read_stream_section(
    r: &Reader<'_>,
    offset: usize,
    table: &mut XrefTable,
) -> Result<Option<Dict>, PdfError> {
    let mut parser = Parser::new(r.data, offset, r.limits.max_nesting_depth);
    let Some(ind) = parser.parse_indirect() else {
        return Ok(None);
    };
    let (Object::Dict(dict), Some(start)) = (&ind.object, ind.stream_start) else {
        return Ok(None);
    };
    if !dict.has_type(b"XRef") {
        return Ok(None);
    }
    let length = dict.get(b"Length").and_then(Object::as_usize);
    let range = stream::stream_range(r.data, start, length, r.ends, r.limits);
    // Cross-reference stream dictionaries must use direct objects only.
    let direct = |o: &Object| o.clone();
    let Some(rows) = stream::decode(&r.data[range], dict, &direct, r.limits, r.budget)? else {
        return Ok(None);
    };
    let widths: Vec<usize> = match dict.get(b"W").and_then(Object::as_array) {
        Some(w) if w.len() >= 3 => w
            .iter()
            .take(3)
            .map(|x| x.as_usize().unwrap_or(0))
            .collect(),
        _ => return Ok(None),
    };
    if widths.iter().any(|&w| w > 8) {
        return Ok(None);
    }
    let row_len: usize = widths.iter().sum();
    if row_len == 0 {
        return Ok(None);
    }
    let size = dict.get(b"Size").and_then(Object::as_int).unwrap_or(0);
    let default_index = [Object::Int(0), Object::Int(size)];
    let index = dict
        .get(b"Index")
        .and_then(Object::as_array)
        .unwrap_or(&default_index);
    let mut rows = rows.chunks_exact(row_len);
    for pair in index.chunks_exact(2) {
        let (Some(first), Some(count)) = (pair[0].as_int(), pair[1].as_int()) else {
            break;
        };
        for i in 0..count.max(0) {
            let Some(row) = rows.next() else {
                break;
            };
            let Some(num) = u32::try_from(first.saturating_add(i)).ok() else {
                break;
            };
            let (a, rest) = row.split_at(widths[0]);
            let (b, c) = rest.split_at(widths[1]);
            // A zero-width type field means type 1.
            let kind = if widths[0] == 0 { 1 } else { be_number(a) };
            let (f2, f3) = (be_number(b), be_number(c));
            match kind {
                1 if f2 > 0 => {
                    if let Ok(off) = usize::try_from(f2) {
                        table.add(num, Entry::Offset(off), r.limits)?;
                    }
                }
                2 => {
                    if let (Ok(stream), Ok(index)) = (u32::try_from(f2), u32::try_from(f3)) {
                        table.add(num, Entry::Compressed { stream, index }, r.limits)?;
                    }
                }
                _ => {}
            }
        }
    }
    Ok(Some((**dict).clone()))
}

fn be_number(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |acc, &b| acc << 8 | u64::from(b))
}

/// What the recovery scan found.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// Object number to offset of its last `num gen obj` header in the file.
    pub objects: HashMap<u32, usize>,
    /// Every `trailer` dictionary, in file order.
    pub trailers: Vec<Dict>,
}

/// Finds every `num gen obj` header and `trailer` dictionary in the file.
pub(super) fn scan(data: &[u8], limits: &Limits) -> Result<Scan, PdfError> {
    let mut result = Scan::default();
    let mut from = 0;
    while let Some(at) = find(data, b"obj", from) {
        from = at + 3;
        if data.get(at + 3).is_some_and(|&b| is_regular(b)) {
            continue; // "objects", "obj1"...
        }
        if let Some((num, start)) = header_before(data, at) {
            if result.objects.len() >= limits.max_objects && !result.objects.contains_key(&num) {
                return Err(too_large(LimitKind::Objects, limits.max_objects));
            }
            // Later definitions (incremental updates) replace earlier ones.
            result.objects.insert(num, start);
        }
    }
    let mut from = 0;
    while let Some(at) = find(data, b"trailer", from) {
        from = at + 7;
        let mut parser = Parser::new(data, from, limits.max_nesting_depth);
        if let Ok(Object::Dict(d)) = parser.parse_object() {
            result.trailers.push((*d).clone());
        }
    }
    Ok(result)
}

/// For an `obj` keyword at `at`, reads `num gen` backwards and returns the
/// object number and the offset where `num` starts.
fn header_before(data: &[u8], at: usize) -> Option<(u32, usize)> {
    let mut i = at;
    let skip_ws = |mut i: usize| {
        while i > 0 && is_whitespace(data[i - 1]) {
            i -= 1;
        }
        i
    };
    let skip_digits = |mut i: usize| {
        while i > 0 && data[i - 1].is_ascii_digit() {
            i -= 1;
        }
        i
    };
    let before_gen = skip_ws(i);
    if before_gen == i {
        return None;
    }
    i = skip_digits(before_gen);
    if i == before_gen || before_gen - i > 5 {
        return None;
    }
    let before_num = skip_ws(i);
    if before_num == i {
        return None;
    }
    i = skip_digits(before_num);
    if i == before_num || before_num - i > 10 {
        return None;
    }
    if i > 0 && is_regular(data[i - 1]) {
        return None;
    }
    let num = std::str::from_utf8(&data[i..before_num])
        .ok()?
        .parse()
        .ok()?;
    Some((num, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_bytes(data: &[u8]) -> Option<XrefTable> {
        let limits = Limits::default();
        let budget = Budget::new(&limits);
        let ends = EndstreamIndex::default();
        read(&Reader {
            data,
            limits: &limits,
            budget: &budget,
            ends: &ends,
        })
        .unwrap()
    }

    #[test]
    fn classic_table_with_sloppy_line_ends() {
        let data = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\nxref\n0 2\n0000000000 65535 f\n0000000009 00000 n\ntrailer\n<</Size 2/Root 1 0 R>>\nstartxref\n29\n%%EOF";
        let t = read_bytes(data).unwrap();
        assert_eq!(t.entries.get(&1), Some(&Entry::Offset(9)));
        assert!(t.trailer.contains(b"Root"));
    }

    #[test]
    fn prev_chain_newest_wins_and_loops_stop() {
        // Section at 100 (newest) points back to section at 10 and that one
        // points to itself.
        let mut data = vec![b' '; 200];
        data[..8].copy_from_slice(b"%PDF-1.4");
        let old = b"xref\n5 1\n0000000050 00000 n\n6 1\n0000000060 00000 n\ntrailer <</Root 1 0 R/Prev 10>>";
        data[10..10 + old.len()].copy_from_slice(old);
        let new = b"xref 5 1 0000000070 00000 n trailer <</Prev 10>>";
        data[100..100 + new.len()].copy_from_slice(new);
        data.extend_from_slice(b"startxref 100 %%EOF");
        let t = read_bytes(&data).unwrap();
        assert_eq!(t.entries.get(&5), Some(&Entry::Offset(70)));
        assert_eq!(t.entries.get(&6), Some(&Entry::Offset(60)));
        assert!(
            t.trailer.contains(b"Root"),
            "Root merged from the older trailer"
        );
    }

    #[test]
    fn xref_stream_rows() {
        // W [1 2 1]: a type-1 entry for object 3 and a type-2 entry for 4.
        let rows = [1u8, 0x00, 0x20, 0, 2, 0x00, 0x07, 3];
        let mut data = b"%PDF-1.5\n9 0 obj\n<</Type/XRef/W[1 2 1]/Index[3 2]/Size 5/Root 1 0 R/Length 8>>\nstream\n".to_vec();
        data.extend_from_slice(&rows);
        data.extend_from_slice(b"\nendstream\nendobj\nstartxref\n9\n%%EOF");
        let t = read_bytes(&data).unwrap();
        assert_eq!(t.entries.get(&3), Some(&Entry::Offset(0x20)));
        assert_eq!(
            t.entries.get(&4),
            Some(&Entry::Compressed {
                stream: 7,
                index: 3
            })
        );
    }

    #[test]
    fn broken_startxref_means_scan() {
        assert!(read_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\nstartxref\n999\n%%EOF").is_none());
        assert!(read_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj").is_none());
    }

    #[test]
    fn scan_finds_headers_and_trailers() {
        let data = b"%PDF-1.4\n1 0 obj <<>> endobj\n 12 0 obj\n(x)\nendobj\n1 0 obj <</New true>> endobj objects 3 0 objx\ntrailer <</Root 1 0 R>>";
        let s = scan(data, &Limits::default()).unwrap();
        assert_eq!(s.objects.len(), 2);
        assert_eq!(s.objects.get(&12), Some(&30));
        assert_eq!(&data[s.objects[&1]..s.objects[&1] + 7], b"1 0 obj");
        assert!(s.objects[&1] > 30, "the later definition wins");
        assert_eq!(s.trailers.len(), 1);
    }

    #[test]
    fn object_limit_is_exact() {
        let data = b"1 0 obj 2 0 obj 3 0 obj";
        let limits = Limits {
            max_objects: 3,
            ..Limits::default()
        };
        assert_eq!(scan(data, &limits).unwrap().objects.len(), 3);
        let limits = Limits {
            max_objects: 2,
            ..Limits::default()
        };
        assert!(matches!(scan(data, &limits), Err(PdfError::TooLarge(_))));
    }
}
