//! Tokenizer for PDF syntax (file structure, content streams and CMaps).
//!
//! It never fails: malformed input becomes the nearest sensible token, and
//! every call to [`Lexer::next_token`] consumes at least one byte unless the
//! input is exhausted, so loops over tokens always terminate.

use std::borrow::Cow;

/// One lexical token. Strings and names are decoded (escapes, `#xx`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token<'a> {
    Int(i64),
    Real(f64),
    /// A literal `( )` or hex `< >` string, decoded to bytes; borrowed from
    /// the input when it needed no decoding.
    Str(Cow<'a, [u8]>),
    /// A name without its leading `/`, decoded likewise.
    Name(Cow<'a, [u8]>),
    ArrayOpen,
    ArrayClose,
    DictOpen,
    DictClose,
    /// A bare word: `obj`, `R`, `true`, an operator such as `Tj`, or a stray
    /// delimiter such as `)` or `{`.
    Keyword(&'a [u8]),
}

pub(super) fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t' | b'\x0c' | b'\0')
}

pub(super) fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

/// A byte that belongs to a name, number or keyword.
pub(super) fn is_regular(b: u8) -> bool {
    !is_whitespace(b) && !is_delimiter(b)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Position of the first `needle` in `hay` at or after `from`.
pub(super) fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let mut i = from;
    while i + needle.len() <= hay.len() {
        let rel = hay[i..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)?;
        i += rel;
        if hay[i..].starts_with(needle) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Position of the last `needle` that starts in `hay[..end]`.
pub(super) fn rfind(hay: &[u8], needle: &[u8], end: usize) -> Option<usize> {
    let last_start = end.min(hay.len().checked_sub(needle.len())? + 1);
    (0..last_start)
        .rev()
        .find(|&i| hay[i..].starts_with(needle))
}

#[derive(Debug, Clone)]
pub(super) struct Lexer<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Lexer { data, pos: 0 }
    }

    pub(super) fn at(data: &'a [u8], pos: usize) -> Self {
        Lexer {
            data,
            pos: pos.min(data.len()),
        }
    }

    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    pub(super) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    pub(super) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Skips whitespace and comments.
    pub(super) fn skip_whitespace(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if is_whitespace(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(&c) = self.data.get(self.pos) {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Returns the next token, or `None` at the end of the input.
    pub(super) fn next_token(&mut self) -> Option<Token<'a>> {
        self.skip_whitespace();
        let b = *self.data.get(self.pos)?;
        let token = match b {
            b'/' => {
                self.pos += 1;
                Token::Name(self.read_name())
            }
            b'(' => {
                self.pos += 1;
                Token::Str(self.read_literal_string())
            }
            b'<' if self.data.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                Token::DictOpen
            }
            b'<' => {
                self.pos += 1;
                Token::Str(self.read_hex_string())
            }
            b'>' if self.data.get(self.pos + 1) == Some(&b'>') => {
                self.pos += 2;
                Token::DictClose
            }
            b'[' => {
                self.pos += 1;
                Token::ArrayOpen
            }
            b']' => {
                self.pos += 1;
                Token::ArrayClose
            }
            b')' | b'>' | b'{' | b'}' => {
                self.pos += 1;
                Token::Keyword(&self.data[self.pos - 1..self.pos])
            }
            b'0'..=b'9' | b'+' | b'-' | b'.' => self.read_number(),
            _ => {
                let start = self.pos;
                while self.data.get(self.pos).is_some_and(|&c| is_regular(c)) {
                    self.pos += 1;
                }
                Token::Keyword(&self.data[start..self.pos])
            }
        };
        Some(token)
    }

    /// Reads a name after its `/`, decoding `#xx` escapes.
    fn read_name(&mut self) -> Cow<'a, [u8]> {
        let start = self.pos;
        let rest = &self.data[start..];
        let len = rest
            .iter()
            .position(|&b| !is_regular(b))
            .unwrap_or(rest.len());
        if !rest[..len].contains(&b'#') {
            self.pos += len;
            return Cow::Borrowed(&rest[..len]);
        }
        let mut name = Vec::new();
        while let Some(&b) = self.data.get(self.pos) {
            if !is_regular(b) {
                break;
            }
            self.pos += 1;
            if b == b'#' {
                let hi = self.data.get(self.pos).copied().and_then(hex_value);
                let lo = self.data.get(self.pos + 1).copied().and_then(hex_value);
                if let (Some(hi), Some(lo)) = (hi, lo) {
                    name.push(hi << 4 | lo);
                    self.pos += 2;
                    continue;
                }
            }
            name.push(b);
        }
        Cow::Owned(name)
    }

    /// Reads a number. Malformed numbers ("--1", "1.2.3", a lone sign) are read
    /// as far as they make sense; PDF has no exponents.
    fn read_number(&mut self) -> Token<'a> {
        // The first byte is a sign, digit or '.', so at least one byte is
        // always consumed below.
        let mut negative = false;
        // Some writers emit doubled signs such as "--5"; treat them as one.
        while let Some(&b) = self.data.get(self.pos) {
            match b {
                b'-' => negative = true,
                b'+' => {}
                _ => break,
            }
            self.pos += 1;
        }
        let int_start = self.pos;
        while self.data.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let int_end = self.pos;
        let mut is_real = false;
        if self.data.get(self.pos) == Some(&b'.') {
            is_real = true;
            self.pos += 1;
            while self.data.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
        }
        let digits = &self.data[int_start..self.pos];
        if !is_real {
            let text = &self.data[int_start..int_end];
            let mut value: i64 = 0;
            let mut overflow = false;
            for &d in text {
                match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(i64::from(d - b'0')))
                {
                    Some(v) => value = v,
                    None => {
                        overflow = true;
                        break;
                    }
                }
            }
            if !overflow {
                return Token::Int(if negative { -value } else { value });
            }
        }
        // Only ASCII digits and at most one '.', so this is valid UTF-8.
        let text = std::str::from_utf8(digits).unwrap_or("0");
        let mut value: f64 = text.parse().unwrap_or(0.0);
        if !value.is_finite() {
            value = 0.0;
        }
        Token::Real(if negative { -value } else { value })
    }

    /// Reads a literal string after its `(`: balanced parentheses, escapes,
    /// and end-of-line normalization. An unterminated string ends at EOF.
    fn read_literal_string(&mut self) -> Cow<'a, [u8]> {
        // Most strings need no decoding: borrow them.
        let rest = &self.data[self.pos..];
        if let Some(end) = rest
            .iter()
            .position(|&b| matches!(b, b')' | b'(' | b'\\' | b'\r'))
        {
            if rest[end] == b')' {
                self.pos += end + 1;
                return Cow::Borrowed(&rest[..end]);
            }
        }
        let mut out = Vec::new();
        let mut depth = 1usize;
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            match b {
                b'(' => {
                    depth += 1;
                    out.push(b);
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    out.push(b);
                }
                b'\\' => self.read_escape(&mut out),
                b'\r' => {
                    // An unescaped end-of-line of any kind reads as "\n".
                    if self.data.get(self.pos) == Some(&b'\n') {
                        self.pos += 1;
                    }
                    out.push(b'\n');
                }
                _ => out.push(b),
            }
        }
        Cow::Owned(out)
    }

    fn read_escape(&mut self, out: &mut Vec<u8>) {
        let Some(&b) = self.data.get(self.pos) else {
            return;
        };
        self.pos += 1;
        match b {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'0'..=b'7' => {
                let mut value = u32::from(b - b'0');
                for _ in 0..2 {
                    match self.data.get(self.pos) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                // High-order overflow is ignored, as the spec says.
                out.push((value & 0xff) as u8);
            }
            // Backslash-newline is a line continuation and produces nothing.
            b'\r' => {
                if self.data.get(self.pos) == Some(&b'\n') {
                    self.pos += 1;
                }
            }
            b'\n' => {}
            // "\(", "\)", "\\" and any unknown escape yield the byte itself.
            _ => out.push(b),
        }
    }

    /// Reads a hex string after its `<`; whitespace is ignored, anything else
    /// that is not a hex digit is skipped, and an odd final digit counts as
    /// if followed by 0.
    fn read_hex_string(&mut self) -> Cow<'a, [u8]> {
        let mut out = Vec::new();
        let mut pending: Option<u8> = None;
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            if b == b'>' {
                break;
            }
            if let Some(v) = hex_value(b) {
                match pending.take() {
                    Some(hi) => out.push(hi << 4 | v),
                    None => pending = Some(v),
                }
            }
        }
        if let Some(hi) = pending {
            out.push(hi << 4);
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: &[u8]) -> Vec<Token<'_>> {
        let mut lexer = Lexer::new(input);
        std::iter::from_fn(|| lexer.next_token()).collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            tokens(b"12 -3 +4 3.5 -.25 4. --7 - 99999999999999999999"),
            vec![
                Token::Int(12),
                Token::Int(-3),
                Token::Int(4),
                Token::Real(3.5),
                Token::Real(-0.25),
                Token::Real(4.0),
                Token::Int(-7),
                Token::Int(0),
                Token::Real(1e20),
            ]
        );
    }

    #[test]
    fn names_and_keywords() {
        assert_eq!(
            tokens(b"/Type/Page /A#20B /#zz obj true"),
            vec![
                Token::Name(Cow::Borrowed(b"Type")),
                Token::Name(Cow::Borrowed(b"Page")),
                Token::Name(Cow::Borrowed(b"A B")),
                Token::Name(Cow::Borrowed(b"#zz")),
                Token::Keyword(b"obj"),
                Token::Keyword(b"true"),
            ]
        );
    }

    #[test]
    fn literal_strings() {
        assert_eq!(
            tokens(b"(a(b)c) (\\(\\)\\\\\\n\\101\\0537) (x\\\r\ny) (p\r\nq) (open"),
            vec![
                Token::Str(Cow::Borrowed(b"a(b)c")),
                Token::Str(Cow::Borrowed(b"()\\\nA+7")),
                Token::Str(Cow::Borrowed(b"xy")),
                Token::Str(Cow::Borrowed(b"p\nq")),
                Token::Str(Cow::Borrowed(b"open")),
            ]
        );
    }

    #[test]
    fn hex_strings_and_dicts() {
        assert_eq!(
            tokens(b"<< /K <48 65 6c6C 6> >> [<>]"),
            vec![
                Token::DictOpen,
                Token::Name(Cow::Borrowed(b"K")),
                Token::Str(Cow::Borrowed(b"Hell\x60")),
                Token::DictClose,
                Token::ArrayOpen,
                Token::Str(Cow::Borrowed(b"")),
                Token::ArrayClose,
            ]
        );
    }

    #[test]
    fn comments_and_stray_delimiters() {
        assert_eq!(
            tokens(b"% comment\n1 %x\r) > { }"),
            vec![
                Token::Int(1),
                Token::Keyword(b")"),
                Token::Keyword(b">"),
                Token::Keyword(b"{"),
                Token::Keyword(b"}"),
            ]
        );
    }

    #[test]
    fn byte_search() {
        assert_eq!(find(b"abcabc", b"bc", 0), Some(1));
        assert_eq!(find(b"abcabc", b"bc", 2), Some(4));
        assert_eq!(find(b"abcabc", b"bd", 0), None);
        assert_eq!(find(b"ab", b"abc", 0), None);
        assert_eq!(rfind(b"abcabc", b"bc", 6), Some(4));
        assert_eq!(rfind(b"abcabc", b"bc", 4), Some(1));
        assert_eq!(rfind(b"ab", b"abc", 2), None);
    }

    #[test]
    fn always_makes_progress() {
        let input: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let mut lexer = Lexer::new(&input);
        let mut last = 0;
        while lexer.next_token().is_some() {
            assert!(lexer.pos() > last);
            last = lexer.pos();
        }
    }
}
