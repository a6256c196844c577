//! Builds objects from tokens: direct objects, indirect object headers
//! (`num gen obj`), and the location of a stream's data.
//!
//! The parser is lenient in the ways real files need (unterminated arrays and
//! dictionaries end where the object ends, junk keywords are skipped) and
//! strict where hostile files need it: nesting is bounded by a depth limit.

use std::rc::Rc;

use super::lexer::{is_whitespace, Lexer, Token};
use super::object::{Dict, ObjRef, Object};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParseError {
    /// The input ended before an object started.
    Eof,
    /// A keyword that cannot start an object (e.g. `endobj`, an operator).
    Unexpected,
    /// Arrays or dictionaries are nested deeper than allowed.
    TooDeep,
}

/// Keywords that end the object being parsed: when one appears inside an
/// unterminated array or dictionary, that container ends there.
fn ends_object(keyword: &[u8]) -> bool {
    matches!(
        keyword,
        b"endobj" | b"stream" | b"endstream" | b"obj" | b"xref" | b"trailer" | b"startxref"
    )
}

/// Keywords that are values rather than operators or structure.
fn is_value(keyword: &[u8]) -> bool {
    matches!(keyword, b"true" | b"false" | b"null")
}

pub(super) struct Parser<'a> {
    lexer: Lexer<'a>,
    max_depth: usize,
    /// Content streams have no indirect references (there "1 0 R" would
    /// swallow an operator's operands), and an operator keyword inside an
    /// array or dictionary means it was left unterminated.
    content: bool,
}

/// What [`Parser::parse_indirect`] found: the object, and for streams where
/// the data starts (just after the end-of-line following `stream`).
pub(super) struct Indirect {
    pub id: ObjRef,
    pub object: Object,
    pub stream_start: Option<usize>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(data: &'a [u8], pos: usize, max_depth: usize) -> Self {
        Parser {
            lexer: Lexer::at(data, pos),
            max_depth,
            content: false,
        }
    }

    /// A parser for content streams, where there are no indirect references.
    pub(super) fn for_content(data: &'a [u8], max_depth: usize) -> Self {
        Parser {
            lexer: Lexer::new(data),
            max_depth,
            content: true,
        }
    }

    pub(super) fn lexer(&mut self) -> &mut Lexer<'a> {
        &mut self.lexer
    }

    pub(super) fn pos(&self) -> usize {
        self.lexer.pos()
    }

    /// Parses one object. On `Unexpected` the offending keyword is left
    /// unread; use [`Parser::next_token`] to consume it.
    pub(super) fn parse_object(&mut self) -> Result<Object, ParseError> {
        self.parse_at_depth(0)
    }

    /// Parses one object, or returns the keyword that stands in its place
    /// (content streams interleave operands with operator keywords).
    pub(super) fn parse_operand_or_keyword(&mut self) -> Option<Result<Object, &'a [u8]>> {
        let start = self.lexer.pos();
        match self.lexer.next_token()? {
            Token::Keyword(k) if !is_value(k) => Some(Err(k)),
            token => match self.finish_object(token, 0) {
                Ok(obj) => Some(Ok(obj)),
                // Too deep: skip the whole byte range up to where we stopped
                // and report an empty operand so the operator still runs.
                Err(_) => {
                    if self.lexer.pos() == start {
                        self.lexer.set_pos(start + 1);
                    }
                    Some(Ok(Object::Null))
                }
            },
        }
    }

    #[cfg(test)]
    pub(super) fn next_token(&mut self) -> Option<Token<'a>> {
        self.lexer.next_token()
    }

    fn parse_at_depth(&mut self, depth: usize) -> Result<Object, ParseError> {
        let start = self.lexer.pos();
        let token = self.lexer.next_token().ok_or(ParseError::Eof)?;
        let result = self.finish_object(token, depth);
        if result == Err(ParseError::Unexpected) {
            self.lexer.set_pos(start);
        }
        result
    }

    /// Builds the object that starts with `token`.
    fn finish_object(&mut self, token: Token<'a>, depth: usize) -> Result<Object, ParseError> {
        Ok(match token {
            Token::Int(i) => self.maybe_reference(i),
            Token::Real(r) => Object::Real(r),
            Token::Str(s) => Object::Str(Rc::from(&*s)),
            Token::Name(n) => Object::Name(Rc::from(&*n)),
            Token::ArrayOpen => self.parse_array(depth + 1)?,
            Token::DictOpen => self.parse_dict(depth + 1)?,
            Token::Keyword(b"true") => Object::Bool(true),
            Token::Keyword(b"false") => Object::Bool(false),
            Token::Keyword(b"null") => Object::Null,
            Token::Keyword(_) | Token::ArrayClose | Token::DictClose => {
                return Err(ParseError::Unexpected)
            }
        })
    }

    /// After an integer, looks ahead for `gen R`.
    fn maybe_reference(&mut self, num: i64) -> Object {
        if self.content {
            return Object::Int(num);
        }
        let save = self.lexer.pos();
        if let (Ok(num), Some(Token::Int(gen))) = (u32::try_from(num), self.lexer.next_token()) {
            if let (Ok(gen), Some(Token::Keyword(b"R"))) =
                (u16::try_from(gen), self.lexer.next_token())
            {
                return Object::Ref(ObjRef { num, gen });
            }
        }
        self.lexer.set_pos(save);
        Object::Int(num)
    }

    fn parse_array(&mut self, depth: usize) -> Result<Object, ParseError> {
        if depth > self.max_depth {
            return Err(ParseError::TooDeep);
        }
        let mut items = Vec::new();
        loop {
            let start = self.lexer.pos();
            let Some(token) = self.lexer.next_token() else {
                break; // unterminated at EOF: keep what we have
            };
            match token {
                Token::ArrayClose => break,
                Token::Keyword(k) if ends_object(k) || (self.content && !is_value(k)) => {
                    self.lexer.set_pos(start);
                    break;
                }
                // Stray `>>`, `)` or an unknown word: skip it.
                Token::DictClose => {}
                Token::Keyword(k) if !is_value(k) => {}
                token => items.push(self.finish_object(token, depth)?),
            }
        }
        Ok(Object::Array(Rc::from(items)))
    }

    fn parse_dict(&mut self, depth: usize) -> Result<Object, ParseError> {
        if depth > self.max_depth {
            return Err(ParseError::TooDeep);
        }
        let mut dict = Dict::new();
        loop {
            let start = self.lexer.pos();
            let Some(token) = self.lexer.next_token() else {
                break;
            };
            match token {
                Token::DictClose => break,
                Token::Name(key) => match self.parse_at_depth(depth) {
                    Ok(value) => dict.insert(Rc::from(&*key), value),
                    Err(ParseError::TooDeep) => return Err(ParseError::TooDeep),
                    Err(_) => {
                        // A key without a value. The offending token is
                        // still unread: `>>` closes the dictionary, junk is
                        // skipped, and `endobj` (or EOF) ends it unclosed.
                        dict.insert(Rc::from(&*key), Object::Null);
                        let before = self.lexer.pos();
                        match self.lexer.next_token() {
                            Some(Token::DictClose) | None => break,
                            Some(Token::Keyword(k)) if ends_object(k) => {
                                self.lexer.set_pos(before);
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                },
                Token::Keyword(k) if ends_object(k) || (self.content && !is_value(k)) => {
                    self.lexer.set_pos(start);
                    break;
                }
                // A non-name where a key should be: skip it.
                _ => {}
            }
        }
        Ok(Object::Dict(Rc::new(dict)))
    }

    /// Parses `num gen obj <object>` and, for a stream, finds where its data
    /// starts. Returns `None` if there is no object header here.
    pub(super) fn parse_indirect(&mut self) -> Option<Indirect> {
        let num = match self.lexer.next_token()? {
            Token::Int(n) => u32::try_from(n).ok()?,
            _ => return None,
        };
        let gen = match self.lexer.next_token()? {
            Token::Int(g) => u16::try_from(g).ok()?,
            _ => return None,
        };
        if self.lexer.next_token()? != Token::Keyword(b"obj") {
            return None;
        }
        let id = ObjRef { num, gen };
        let object = match self.parse_object() {
            Ok(obj) => obj,
            // `1 0 obj endobj` is a null object; deep nesting is unreadable.
            Err(_) => Object::Null,
        };
        let mut stream_start = None;
        if matches!(object, Object::Dict(_)) {
            let save = self.lexer.pos();
            if self.lexer.next_token() == Some(Token::Keyword(b"stream")) {
                stream_start = Some(skip_stream_eol(self.lexer.data(), self.lexer.pos()));
            } else {
                self.lexer.set_pos(save);
            }
        }
        Some(Indirect {
            id,
            object,
            stream_start,
        })
    }
}

/// The data of a stream begins after `stream` and one end-of-line (CRLF or
/// LF; a lone CR is accepted too, and so are stray spaces before it).
fn skip_stream_eol(data: &[u8], mut pos: usize) -> usize {
    while data.get(pos) == Some(&b' ') {
        pos += 1;
    }
    match data.get(pos) {
        Some(b'\r') if data.get(pos + 1) == Some(&b'\n') => pos + 2,
        Some(b'\r') | Some(b'\n') => pos + 1,
        _ => pos,
    }
}

/// Trims the end-of-line that precedes `endstream` from a data range end.
pub(super) fn trim_stream_end(data: &[u8], start: usize, mut end: usize) -> usize {
    if end > start && data.get(end - 1) == Some(&b'\n') {
        end -= 1;
    }
    if end > start && data.get(end - 1) == Some(&b'\r') {
        end -= 1;
    }
    end
}

/// True if `data[pos..]` starts (after whitespace) with `endstream`.
pub(super) fn endstream_follows(data: &[u8], mut pos: usize) -> bool {
    while data.get(pos).is_some_and(|&b| is_whitespace(b)) {
        pos += 1;
    }
    data.get(pos..)
        .is_some_and(|rest| rest.starts_with(b"endstream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &[u8]) -> Result<Object, ParseError> {
        Parser::new(input, 0, 8).parse_object()
    }

    fn int_array(items: &[i64]) -> Object {
        Object::Array(items.iter().map(|&i| Object::Int(i)).collect())
    }

    #[test]
    fn references_and_arrays() {
        assert_eq!(
            parse(b"[1 0 R 2 3 4]").unwrap(),
            Object::Array(Rc::from(vec![
                Object::Ref(ObjRef { num: 1, gen: 0 }),
                Object::Int(2),
                Object::Int(3),
                Object::Int(4),
            ]))
        );
        let content = Parser::for_content(b"1 0 R", 8).parse_object().unwrap();
        assert_eq!(content, Object::Int(1));
    }

    #[test]
    fn dictionaries() {
        let obj = parse(b"<</Type /Page /Kids [1 2] /Sub <</A true>> /N null>>").unwrap();
        let d = obj.as_dict().unwrap();
        assert_eq!(d.name(b"Type"), Some(&b"Page"[..]));
        assert_eq!(d.get(b"Kids"), Some(&int_array(&[1, 2])));
        assert_eq!(
            d.get(b"Sub")
                .and_then(Object::as_dict)
                .and_then(|s| s.get(b"A")),
            Some(&Object::Bool(true))
        );
        assert_eq!(d.get(b"N"), Some(&Object::Null));
    }

    #[test]
    fn unterminated_containers_end_at_endobj() {
        let mut p = Parser::new(b"1 0 obj <</A [1 2 endobj 2 0 obj", 0, 8);
        let ind = p.parse_indirect().unwrap();
        let d = ind.object.as_dict().unwrap();
        assert_eq!(d.get(b"A"), Some(&int_array(&[1, 2])));
        assert_eq!(p.next_token(), Some(Token::Keyword(b"endobj")));
        assert_eq!(parse(b"<</A /B /C>>").unwrap().as_dict().unwrap().len(), 2);
        let missing_value = parse(b"<</A 1 /B>>").unwrap();
        assert_eq!(
            missing_value.as_dict().unwrap().get(b"B"),
            Some(&Object::Null)
        );
    }

    #[test]
    fn nesting_limit_is_exact() {
        let ok = format!("{}{}", "[".repeat(8), "]".repeat(8));
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(9), "]".repeat(9));
        assert_eq!(parse(deep.as_bytes()), Err(ParseError::TooDeep));
        let deep_dict = "<</A ".repeat(9) + &">>".repeat(9);
        assert_eq!(parse(deep_dict.as_bytes()), Err(ParseError::TooDeep));
        // A hostile depth far beyond the limit neither recurses nor panics.
        let hostile = "[".repeat(1_000_000);
        assert_eq!(parse(hostile.as_bytes()), Err(ParseError::TooDeep));
    }

    #[test]
    fn indirect_streams() {
        let data = b"7 0 obj\n<</Length 5>>\nstream\r\nhello\nendstream endobj";
        let ind = Parser::new(data, 0, 8).parse_indirect().unwrap();
        assert_eq!(ind.id, ObjRef { num: 7, gen: 0 });
        let start = ind.stream_start.unwrap();
        assert_eq!(&data[start..start + 5], b"hello");
        assert!(endstream_follows(data, start + 5));
        assert_eq!(trim_stream_end(data, start, start + 6), start + 5);
        assert!(Parser::new(b"7 0 xbj 1", 0, 8).parse_indirect().is_none());
    }

    #[test]
    fn operands_and_operators() {
        let mut p = Parser::for_content(b"1 2 (x) Tj [(a) -5] TJ", 8);
        let mut out = Vec::new();
        while let Some(item) = p.parse_operand_or_keyword() {
            out.push(match item {
                Ok(_) => "operand".to_string(),
                Err(k) => String::from_utf8_lossy(k).into_owned(),
            });
        }
        assert_eq!(
            out,
            ["operand", "operand", "operand", "Tj", "operand", "TJ"]
        );
    }
}
