//! CMap programs: `/ToUnicode` maps (codes to text) and embedded encoding
//! CMaps of composite fonts (codes to CIDs).
//!
//! Parsed: `codespacerange` (1- to 4-byte codes, which also tells how to split
//! a string into codes), `bfchar`, `bfrange` in both its incrementing and its
//! array form, `cidchar` and `cidrange`. Destinations are UTF-16BE, so
//! surrogate pairs and multi-character ligatures come out right. Ranges are
//! stored, never expanded, so `<0000> <FFFFFFFF>` costs nothing.

use std::borrow::Cow;
use std::collections::HashMap;

use super::lexer::{Lexer, Token};

/// Codes whose bytes each lie within `low..=high`, all of length `len`.
#[derive(Debug, Clone)]
struct CodespaceRange {
    len: usize,
    low: [u8; 4],
    high: [u8; 4],
}

/// `bfrange` in its incrementing form: code `low + i` maps to `base` with
/// `i` added to its last UTF-16 unit.
#[derive(Debug, Clone)]
struct UnicodeRange {
    low: u32,
    high: u32,
    base: Vec<u16>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct CMap {
    codespace: Vec<CodespaceRange>,
    chars: HashMap<u32, String>,
    /// Sorted by `low` for binary search.
    ranges: Vec<UnicodeRange>,
    cids: HashMap<u32, u32>,
    /// `(low, high, first CID)`, sorted by `low`.
    cid_ranges: Vec<(u32, u32, u32)>,
}

/// A code's numeric value; codes are at most four bytes long.
fn code_value(bytes: &[u8]) -> Option<u32> {
    (!bytes.is_empty() && bytes.len() <= 4)
        .then(|| bytes.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)))
}

/// Decodes UTF-16BE, dropping unpaired surrogates. A single byte is read as
/// a Latin-1 character, which some writers emit.
pub(super) fn utf16be(bytes: &[u8]) -> String {
    if let [b] = bytes {
        return char::from(*b).to_string();
    }
    let units = bytes
        .chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]));
    char::decode_utf16(units).filter_map(Result::ok).collect()
}

fn units(bytes: &[u8]) -> Vec<u16> {
    if let [b] = bytes {
        return vec![u16::from(*b)];
    }
    bytes
        .chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]))
        .collect()
}

/// The next token if it is a string; otherwise nothing is consumed, so a
/// section's end keyword is never swallowed by a malformed entry.
fn take_str<'a>(lexer: &mut Lexer<'a>) -> Option<Cow<'a, [u8]>> {
    let save = lexer.pos();
    match lexer.next_token() {
        Some(Token::Str(s)) => Some(s),
        _ => {
            lexer.set_pos(save);
            None
        }
    }
}

fn take_int(lexer: &mut Lexer<'_>) -> Option<i64> {
    let save = lexer.pos();
    match lexer.next_token() {
        Some(Token::Int(i)) => Some(i),
        _ => {
            lexer.set_pos(save);
            None
        }
    }
}

impl CMap {
    pub(super) fn parse(data: &[u8]) -> CMap {
        let mut cmap = CMap::default();
        let mut lexer = Lexer::new(data);
        while let Some(token) = lexer.next_token() {
            match token {
                Token::Keyword(b"begincodespacerange") => cmap.read_codespace(&mut lexer),
                Token::Keyword(b"beginbfchar") => cmap.read_bfchar(&mut lexer),
                Token::Keyword(b"beginbfrange") => cmap.read_bfrange(&mut lexer),
                Token::Keyword(b"begincidchar") => cmap.read_cidchar(&mut lexer),
                Token::Keyword(b"begincidrange") => cmap.read_cidrange(&mut lexer),
                _ => {}
            }
        }
        cmap.ranges.sort_by_key(|r| r.low);
        cmap.cid_ranges.sort_by_key(|r| r.0);
        cmap
    }

    /// Reads the tokens of one section until `end` (or EOF). Each token that
    /// is not `end` is handed to `f`, so malformed entries are skipped one
    /// token at a time.
    fn section<'a>(
        lexer: &mut Lexer<'a>,
        end: &[u8],
        mut f: impl FnMut(Token<'a>, &mut Lexer<'a>),
    ) {
        while let Some(token) = lexer.next_token() {
            if token == Token::Keyword(end) {
                break;
            }
            f(token, lexer);
        }
    }

    fn read_codespace(&mut self, lexer: &mut Lexer<'_>) {
        Self::section(lexer, b"endcodespacerange", |token, lexer| {
            let (Token::Str(low), Some(high)) = (token, take_str(lexer)) else {
                return;
            };
            if low.is_empty() || low.len() > 4 || low.len() != high.len() {
                return;
            }
            let mut range = CodespaceRange {
                len: low.len(),
                low: [0; 4],
                high: [0; 4],
            };
            range.low[..low.len()].copy_from_slice(&low);
            range.high[..high.len()].copy_from_slice(&high);
            self.codespace.push(range);
        });
    }

    fn read_bfchar(&mut self, lexer: &mut Lexer<'_>) {
        Self::section(lexer, b"endbfchar", |token, lexer| {
            let Token::Str(src) = token else { return };
            let Some(code) = code_value(&src) else { return };
            let save = lexer.pos();
            let text = match lexer.next_token() {
                Some(Token::Str(dst)) => utf16be(&dst),
                Some(Token::Name(glyph)) => super::glyphs::glyph_text(&glyph).unwrap_or_default(),
                _ => return lexer.set_pos(save),
            };
            self.chars.insert(code, text);
        });
    }

    fn read_bfrange(&mut self, lexer: &mut Lexer<'_>) {
        Self::section(lexer, b"endbfrange", |token, lexer| {
            let (Token::Str(low), Some(high)) = (token, take_str(lexer)) else {
                return;
            };
            let (Some(low), Some(high)) = (code_value(&low), code_value(&high)) else {
                return;
            };
            let save = lexer.pos();
            match lexer.next_token() {
                Some(Token::Str(dst)) if low <= high => {
                    self.ranges.push(UnicodeRange {
                        low,
                        high,
                        base: units(&dst),
                    });
                }
                Some(Token::ArrayOpen) => {
                    // One destination per code, as many as the array holds.
                    let mut code = low;
                    loop {
                        let before = lexer.pos();
                        let Some(item) = lexer.next_token() else {
                            break;
                        };
                        match item {
                            Token::Str(dst) => {
                                if code <= high {
                                    self.chars.insert(code, utf16be(&dst));
                                }
                                code = code.saturating_add(1);
                            }
                            Token::ArrayClose => break,
                            Token::Keyword(b"endbfrange") => {
                                // Unterminated array: let the section end.
                                lexer.set_pos(before);
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => lexer.set_pos(save),
            }
        });
    }

    fn read_cidchar(&mut self, lexer: &mut Lexer<'_>) {
        Self::section(lexer, b"endcidchar", |token, lexer| {
            let (Token::Str(src), Some(cid)) = (token, take_int(lexer)) else {
                return;
            };
            if let (Some(code), Ok(cid)) = (code_value(&src), u32::try_from(cid)) {
                self.cids.insert(code, cid);
            }
        });
    }

    fn read_cidrange(&mut self, lexer: &mut Lexer<'_>) {
        Self::section(lexer, b"endcidrange", |token, lexer| {
            let (Token::Str(low), Some(high), Some(cid)) =
                (token, take_str(lexer), take_int(lexer))
            else {
                return;
            };
            if let (Some(low), Some(high), Ok(cid)) =
                (code_value(&low), code_value(&high), u32::try_from(cid))
            {
                if low <= high {
                    self.cid_ranges.push((low, high, cid));
                }
            }
        });
    }

    pub(super) fn has_codespace(&self) -> bool {
        !self.codespace.is_empty()
    }

    pub(super) fn has_unicode(&self) -> bool {
        !self.chars.is_empty() || !self.ranges.is_empty()
    }

    /// Splits the next code off `bytes` (which must not be empty) following
    /// the codespace ranges; returns the code and its length in bytes.
    /// Bytes matching no range are consumed as a code of the shortest
    /// codespace length, as the specification suggests.
    pub(super) fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        for len in 1..=4.min(bytes.len()) {
            let candidate = &bytes[..len];
            let matches = self.codespace.iter().any(|r| {
                r.len == len
                    && candidate
                        .iter()
                        .enumerate()
                        .all(|(i, &b)| r.low[i] <= b && b <= r.high[i])
            });
            if matches {
                return (code_value(candidate).unwrap_or(0), len);
            }
        }
        let len = self
            .codespace
            .iter()
            .map(|r| r.len)
            .min()
            .unwrap_or(1)
            .min(bytes.len())
            .max(1);
        (code_value(&bytes[..len]).unwrap_or(0), len)
    }

    /// Appends the text of `code` to `out`; false if the code is unmapped.
    pub(super) fn unicode(&self, code: u32, out: &mut String) -> bool {
        if let Some(text) = self.chars.get(&code) {
            out.push_str(text);
            return true;
        }
        let i = self.ranges.partition_point(|r| r.low <= code);
        // Ranges rarely overlap; look back a few in case they do.
        for range in self.ranges[..i].iter().rev().take(4) {
            if code <= range.high {
                let Some((&last, init)) = range.base.split_last() else {
                    return false;
                };
                let last = u32::from(last).checked_add(code - range.low);
                let Some(last) = last.and_then(|l| u16::try_from(l).ok()) else {
                    return false;
                };
                let units = init.iter().copied().chain(std::iter::once(last));
                out.extend(char::decode_utf16(units).filter_map(Result::ok));
                return true;
            }
        }
        false
    }

    /// The CID of `code` in an encoding CMap.
    pub(super) fn cid(&self, code: u32) -> Option<u32> {
        if let Some(&cid) = self.cids.get(&code) {
            return Some(cid);
        }
        let i = self.cid_ranges.partition_point(|r| r.0 <= code);
        self.cid_ranges[..i]
            .iter()
            .rev()
            .take(4)
            .find(|r| code <= r.1)
            .and_then(|&(low, _, cid)| cid.checked_add(code - low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
        1 begincodespacerange <00> <80> endcodespacerange
        1 begincodespacerange <8140> <FFFF> endcodespacerange
        3 beginbfchar <01> <0041> <02> <00660069> <03> <D83DDE00> endbfchar
        2 beginbfrange <10> <1A> <0030> <20> <22> [<03B1> <03B2> <03B3>] endbfrange
        1 beginbfchar <04> /eacute endbfchar
        endcmap CMapName currentdict /CMap defineresource pop end end";

    fn text(cmap: &CMap, code: u32) -> Option<String> {
        let mut out = String::new();
        cmap.unicode(code, &mut out).then_some(out)
    }

    #[test]
    fn bfchar_and_bfrange() {
        let cmap = CMap::parse(SAMPLE);
        assert_eq!(text(&cmap, 1).as_deref(), Some("A"));
        assert_eq!(text(&cmap, 2).as_deref(), Some("fi"));
        assert_eq!(text(&cmap, 3).as_deref(), Some("😀"));
        assert_eq!(text(&cmap, 4).as_deref(), Some("é"));
        assert_eq!(text(&cmap, 0x15).as_deref(), Some("5"));
        assert_eq!(text(&cmap, 0x1A).as_deref(), Some(":"));
        assert_eq!(text(&cmap, 0x1B), None);
        assert_eq!(text(&cmap, 0x21).as_deref(), Some("β"));
        assert!(cmap.has_unicode());
    }

    #[test]
    fn mixed_width_codespace() {
        let cmap = CMap::parse(SAMPLE);
        assert_eq!(cmap.next_code(b"\x41\x82\x50"), (0x41, 1));
        assert_eq!(cmap.next_code(b"\x82\x50\x41"), (0x8250, 2));
        // 0x81 0x20 matches no range: one byte (the shortest length).
        assert_eq!(cmap.next_code(b"\x81\x20"), (0x81, 1));
        assert_eq!(cmap.next_code(b"\x82"), (0x82, 1));
        assert_eq!(CMap::default().next_code(b"\xff\xff"), (0xff, 1));
    }

    #[test]
    fn cid_ranges_and_huge_ranges() {
        let cmap = CMap::parse(
            b"1 begincidrange <0000> <FFFF> 0 endcidrange 1 begincidchar <0041> 7 endcidchar
              1 beginbfrange <00000000> <FFFFFFFF> <0020> endbfrange",
        );
        assert_eq!(cmap.cid(0x0041), Some(7));
        assert_eq!(cmap.cid(0x1234), Some(0x1234));
        assert_eq!(cmap.cid(0x10000), None);
        // Out of the UTF-16 range after the increment: unmapped, no panic.
        assert_eq!(text(&cmap, 0xFFFF_FFFF), None);
        assert_eq!(text(&cmap, 1).as_deref(), Some("!"));
    }

    #[test]
    fn garbage_is_skipped() {
        let cmap = CMap::parse(b"beginbfchar <01> endbfchar beginbfrange <01> [ <0041> (x) 3");
        assert!(!cmap.has_unicode());
        // A broken entry does not swallow the end of its section.
        let cmap = CMap::parse(b"beginbfchar <01> endbfchar beginbfchar <02> <0042> endbfchar");
        assert_eq!(text(&cmap, 2).as_deref(), Some("B"));
        assert_eq!(utf16be(b"\x00A\xd8\x00"), "A");
        assert_eq!(utf16be(b"\xe9"), "é");
    }
}
