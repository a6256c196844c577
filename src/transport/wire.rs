//! HTTP/1.1 on the wire: request heads parsed strictly, and responses.
//!
//! The server owns its framing (the design card lets the transport do so):
//! a request head is parsed here, from bytes already read within
//! [`HEADER_READ_TIMEOUT`](super::acceptor::HEADER_READ_TIMEOUT) and
//! [`MAX_HEAD_BYTES`], and anything ambiguous is refused rather than
//! guessed at, because a server that reads a request differently from a
//! proxy in front of it can be fed a second, smuggled request:
//!
//! - only `HTTP/1.0` and `HTTP/1.1` (any other version: 505);
//! - lines end in CRLF; no bare CR or LF, no line folding, no space
//!   before a header's colon, no control characters in values;
//! - at most one `Content-Length`, a plain decimal number, and never
//!   together with `Transfer-Encoding`; `Transfer-Encoding` only as one
//!   `chunked` (another coding: 501), and not in an HTTP/1.0 request;
//! - at most one `Host`.
//!
//! Nothing here reads a socket or allocates more than the head it is given.

use std::fmt;

/// Longest request head (request line and headers) accepted; one more
/// byte is answered 431 and the connection closed. Room for a bearer token
/// of [`MAX_TOKEN_BYTES`](super::auth::MAX_TOKEN_BYTES) and the usual rest.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Most header lines in one request head; one more is answered 431.
pub const MAX_HEADERS: usize = 64;

/// A request method. Unknown ones are kept (routes answer 405).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Delete,
    Put,
    Patch,
    Head,
    Options,
    Other(String),
}

impl Method {
    fn parse(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "DELETE" => Method::Delete,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "HEAD" => Method::Head,
            "OPTIONS" => Method::Options,
            other => Method::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
            Method::Other(s) => s,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One header line: its name as sent, and its value without surrounding
/// whitespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl Header {
    /// Whether this header is `name` (names are case-insensitive).
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

/// How the request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (no `Content-Length`, no `Transfer-Encoding`).
    None,
    /// `Content-Length` bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// A parsed, unambiguous request head.
#[derive(Debug)]
pub struct Head {
    pub method: Method,
    /// The request target as sent (origin form: path and query).
    pub target: String,
    /// `true` for HTTP/1.1, `false` for HTTP/1.0.
    pub http11: bool,
    pub headers: Vec<Header>,
    pub framing: Framing,
    /// Whether the client wants the connection kept open after the answer.
    pub keep_alive: bool,
    /// `Expect: 100-continue` (HTTP/1.1).
    pub expects_continue: bool,
}

/// Why a head is refused: the status and a short, stable code and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: &'static str,
    pub message: &'static str,
}

const fn refusal(status: u16, code: &'static str, message: &'static str) -> Refusal {
    Refusal {
        status,
        code,
        message,
    }
}

const MALFORMED: Refusal = refusal(400, "bad_request", "the request head is malformed");
const AMBIGUOUS: Refusal = refusal(
    400,
    "ambiguous_framing",
    "the request body's length is ambiguous: send exactly one Content-Length, or \
     Transfer-Encoding: chunked without Content-Length",
);
/// A head over [`MAX_HEAD_BYTES`] or [`MAX_HEADERS`].
pub const HEAD_TOO_LARGE: Refusal = refusal(
    431,
    "headers_too_large",
    "the request head is too large (MAX_HEAD_BYTES, MAX_HEADERS)",
);

/// Parses a request head: `bytes` runs from the request line to the end
/// of the blank line that ends the head (both CRLF), nothing after.
pub fn parse_head(bytes: &[u8]) -> Result<Head, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|_| MALFORMED)?;
    let text = text.strip_suffix("\r\n\r\n").ok_or(MALFORMED)?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().ok_or(MALFORMED)?;
    let (method, target, http11) = parse_request_line(request_line)?;
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == MAX_HEADERS {
            return Err(HEAD_TOO_LARGE);
        }
        headers.push(parse_header(line)?);
    }
    let framing = framing(&headers, http11)?;
    // One value each: with two, the checks would see one and a proxy or
    // application behind them perhaps the other (a browser never sends two
    // Origins; a forged request may, to slip past the origin check).
    for (single, message) in [
        ("Host", "more than one Host header"),
        ("Origin", "more than one Origin header"),
    ] {
        if headers.iter().filter(|h| h.is(single)).count() > 1 {
            return Err(refusal(400, "bad_request", message));
        }
    }
    let tokens = |name: &str| {
        headers
            .iter()
            .filter(|h| h.is(name))
            .flat_map(|h| h.value.split(','))
            .map(|t| t.trim().to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    let connection = tokens("Connection");
    let keep_alive = if http11 {
        !connection.iter().any(|t| t == "close")
    } else {
        connection.iter().any(|t| t == "keep-alive")
    };
    let expects_continue = http11 && tokens("Expect").iter().any(|t| t == "100-continue");
    Ok(Head {
        method,
        target,
        http11,
        headers,
        framing,
        keep_alive,
        expects_continue,
    })
}

fn parse_request_line(line: &str) -> Result<(Method, String, bool), Refusal> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(MALFORMED);
    };
    if method.is_empty() || !method.bytes().all(is_token) {
        return Err(MALFORMED);
    }
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        v if is_http_version(v) => {
            return Err(refusal(
                505,
                "http_version_not_supported",
                "only HTTP/1.1 and HTTP/1.0 are served",
            ))
        }
        _ => return Err(MALFORMED),
    };
    // Origin form only: this is an origin server, not a proxy.
    if !target.starts_with('/') || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(MALFORMED);
    }
    Ok((Method::parse(method), target.to_string(), http11))
}

/// `HTTP/` followed by a version number (`2`, `2.0`, `1.2`, `3`...).
fn is_http_version(v: &str) -> bool {
    v.strip_prefix("HTTP/").is_some_and(|n| {
        !n.is_empty() && n.len() <= 8 && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    })
}

fn parse_header(line: &str) -> Result<Header, Refusal> {
    // No obs-fold: a line starting with whitespace continues nothing.
    let (name, value) = line.split_once(':').ok_or(MALFORMED)?;
    if name.is_empty() || !name.bytes().all(is_token) {
        return Err(MALFORMED);
    }
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(MALFORMED);
    }
    Ok(Header {
        name: name.to_string(),
        value: value.to_string(),
    })
}

/// How the body is delimited, refusing every ambiguous combination.
fn framing(headers: &[Header], http11: bool) -> Result<Framing, Refusal> {
    let lengths: Vec<&Header> = headers.iter().filter(|h| h.is("Content-Length")).collect();
    let codings: Vec<&Header> = headers
        .iter()
        .filter(|h| h.is("Transfer-Encoding"))
        .collect();
    match (lengths.as_slice(), codings.as_slice()) {
        ([], []) => Ok(Framing::None),
        ([length], []) => {
            let v = &length.value;
            if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(AMBIGUOUS);
            }
            v.parse().map(Framing::Length).map_err(|_| AMBIGUOUS)
        }
        ([], [coding]) if http11 => {
            if coding.value.eq_ignore_ascii_case("chunked") {
                Ok(Framing::Chunked)
            } else if coding.value.to_ascii_lowercase().contains("chunked") {
                // "gzip, chunked", "chunked, chunked": refused, not decoded.
                Err(AMBIGUOUS)
            } else {
                Err(refusal(
                    501,
                    "unsupported_transfer_encoding",
                    "only Transfer-Encoding: chunked is supported",
                ))
            }
        }
        _ => Err(AMBIGUOUS),
    }
}

/// RFC 9110 token characters (method and header names).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A response: status, headers and a body held in memory.
#[derive(Debug)]
pub struct Response {
    status: u16,
    headers: Vec<Header>,
    body: Vec<u8>,
}

impl Response {
    pub fn from_data(body: Vec<u8>) -> Response {
        Response {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    pub fn from_string(body: &str) -> Response {
        Response::from_data(body.as_bytes().to_vec())
    }

    pub fn with_status_code(mut self, status: u16) -> Response {
        self.status = status;
        self
    }

    pub fn with_header(mut self, header: Header) -> Response {
        self.headers.push(header);
        self
    }

    pub fn status_code(&self) -> u16 {
        self.status
    }

    /// The response as sent: status line, headers (with `Content-Length`,
    /// and `Connection: close` when `close`), blank line, body.
    pub fn to_bytes(&self, close: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 256);
        out.extend_from_slice(
            format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status)).as_bytes(),
        );
        for h in &self.headers {
            let connection = h.is("Connection");
            if h.is("Content-Length") || h.is("Transfer-Encoding") || (connection && close) {
                continue; // the framing is this type's alone
            }
            out.extend_from_slice(format!("{}: {}\r\n", h.name, h.value).as_bytes());
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes());
        if close {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        out
    }
}

/// The reason phrase of `status` (informative only; clients read the code).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Head, Refusal> {
        parse_head(text.as_bytes())
    }

    #[test]
    fn a_plain_request_parses() {
        let h =
            head("POST /v1/query?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n\r\n").unwrap();
        assert_eq!(h.method, Method::Post);
        assert_eq!(h.target, "/v1/query?x=1");
        assert!(h.http11 && h.keep_alive && !h.expects_continue);
        assert_eq!(h.framing, Framing::Length(13));
        let h = head("GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(!h.http11 && !h.keep_alive);
        let h = head("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n").unwrap();
        assert!(!h.keep_alive);
        let h = head("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").unwrap();
        assert_eq!(h.framing, Framing::Chunked);
    }

    #[test]
    fn other_versions_get_505_and_garbage_400() {
        for v in ["HTTP/2.0", "HTTP/2", "HTTP/0.9", "HTTP/1.2", "HTTP/3"] {
            let r = head(&format!("GET /health {v}\r\n\r\n")).unwrap_err();
            assert_eq!(r.status, 505, "{v}");
        }
        for bad in [
            "GET /health\r\n\r\n",
            "GET  /health HTTP/1.1\r\n\r\n",
            "GET /health HTTP/1.1 x\r\n\r\n",
            "GET health HTTP/1.1\r\n\r\n",
            "GET http://a/health HTTP/1.1\r\n\r\n",
            "G(T /health HTTP/1.1\r\n\r\n",
            "GET /health http/1.1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost : a\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
            "GET /health HTTP/1.1\r\nX: a\nY: b\r\n\r\n",
            "GET /health HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET /health HTTP/1.1\r\nOrigin: http://a\r\norigin: http://b\r\n\r\n",
            "GET /health HTTP/1.1\r\n",
        ] {
            assert_eq!(head(bad).unwrap_err().status, 400, "{bad:?}");
        }
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        for bad in [
            "Content-Length: 13\r\nContent-Length: 14",
            "Content-Length: 13\r\nContent-Length: 13",
            "Content-Length: 13, 13",
            "Content-Length: +13",
            "Content-Length: -1",
            "Content-Length: 0x10",
            "Content-Length: ",
            "Content-Length: 99999999999999999999",
            "Content-Length: 13\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: gzip, chunked",
            "Transfer-Encoding: chunked, chunked",
        ] {
            let r = head(&format!("POST / HTTP/1.1\r\n{bad}\r\n\r\n")).unwrap_err();
            assert_eq!((r.status, r.code), (400, "ambiguous_framing"), "{bad:?}");
        }
        let r = head("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").unwrap_err();
        assert_eq!(r.status, 501);
        let r = head("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap_err();
        assert_eq!(r.status, 400);
        // The largest length that parses is a number, not an allocation.
        let h = head("POST / HTTP/1.1\r\nContent-Length: 9223372036854775809\r\n\r\n").unwrap();
        assert_eq!(h.framing, Framing::Length((1 << 63) + 1));
    }

    #[test]
    fn too_many_headers_get_431() {
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        let r = head(&format!("GET / HTTP/1.1\r\n{many}\r\n")).unwrap_err();
        assert_eq!(r.status, 431);
        let enough: String = (0..MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        assert!(head(&format!("GET / HTTP/1.1\r\n{enough}\r\n")).is_ok());
    }

    #[test]
    fn responses_carry_their_own_framing() {
        let r = Response::from_string("hi")
            .with_status_code(202)
            .with_header(Header {
                name: "Content-Length".into(),
                value: "99".into(),
            })
            .with_header(Header {
                name: "X-A".into(),
                value: "b".into(),
            });
        let text = String::from_utf8(r.to_bytes(true)).unwrap();
        assert_eq!(
            text,
            "HTTP/1.1 202 Accepted\r\nX-A: b\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
        );
    }
}
