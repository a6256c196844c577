//! The self-check over the wire: the fixture server on a loopback port,
//! driven with raw HTTP/1.1 so that what the transport writes is what is
//! checked (response streams, their events and ids, a request to the
//! client answered by a later POST, a stream ended and resumed, the
//! 2026-07-28 header checks).

use jwt_simple::prelude::*;
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const SECRET: &[u8] = b"conformance-fixtures-self-check-secret-0123";

pub fn token() -> String {
    let mut custom = Map::new();
    custom.insert("tenant".into(), json!("conformance"));
    custom.insert("roles".into(), json!(["admin"]));
    let claims = Claims::with_custom_claims(custom, jwt_simple::prelude::Duration::from_mins(5))
        .with_subject("self-check");
    HS256Key::from_bytes(SECRET)
        .authenticate(claims)
        .expect("a token")
}

pub fn secret() -> &'static [u8] {
    SECRET
}

/// One response, read from its connection.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The rest of the body (to the end of the chunks, or the connection).
    pub fn body(mut self) -> String {
        let mut out = String::new();
        if self.chunked {
            while let Some(chunk) = self.chunk() {
                out.push_str(&chunk);
            }
        } else {
            let _ = self.reader.read_to_string(&mut out);
        }
        out
    }

    /// The next chunk of a chunked body (an event stream writes one event
    /// per chunk); `None` at its end.
    pub fn chunk(&mut self) -> Option<String> {
        let mut size = String::new();
        self.reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim(), 16).ok()?;
        if size == 0 {
            return None;
        }
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).ok()?;
        data.truncate(size);
        String::from_utf8(data).ok()
    }

    /// The next event of a stream: its `id` and `data` fields.
    pub fn event(&mut self) -> Option<(Option<String>, String)> {
        let text = self.chunk()?;
        let mut id = None;
        let mut data = String::new();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("id: ") {
                id = Some(v.to_string());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
        Some((id, data))
    }
}

/// Sends one request on a fresh connection (which it asks to close).
pub fn send(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Answer, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer \
         {}\r\nContent-Length: {}\r\n",
        token(),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .map_err(|e| e.to_string())?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line: {status_line:?}"))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("Transfer-Encoding") && v.eq_ignore_ascii_case("chunked")
    });
    Ok(Answer {
        status,
        headers,
        reader,
        chunked,
    })
}

/// A JSON-RPC message POSTed with the headers a client of either era
/// sends.
pub fn post(addr: SocketAddr, extra: &[(&str, &str)], message: &Value) -> Result<Answer, String> {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(extra);
    send(addr, "POST", &headers, Some(message))
}

/// The stream's events, in order, to its end.
pub fn events(mut answer: Answer) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    while let Some(e) = answer.event() {
        out.push(e);
    }
    out
}

fn json_of(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or(Value::Null)
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

/// Drives the server listening at `addr`; the number of requests sent.
pub fn check(addr: SocketAddr) -> Result<usize, String> {
    let mut sent = 0;
    let rpc = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});

    // A session of 2025-11-25.
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
               "clientInfo": {"name": "self-check", "version": "1"}}),
    );
    let opened = post(addr, &[], &init)?;
    sent += 1;
    let session = opened
        .header("Mcp-Session-Id")
        .ok_or("initialize opened no session")?
        .to_string();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];

    // Progress: a stream of a priming event, three notifications, the
    // reply; every event with an id of the stream.
    let call = rpc(
        2,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {},
               "_meta": {"progressToken": "p-1"}}),
    );
    let answer = post(addr, &in_session, &call)?;
    sent += 1;
    ensure(
        answer.header("Content-Type") == Some("text/event-stream"),
        || format!("progress: not a stream: {:?}", answer.headers),
    )?;
    let got = events(answer);
    let progress = got
        .iter()
        .filter(|(_, d)| json_of(d)["method"] == "notifications/progress")
        .count();
    ensure(
        got.len() == 5 && got[0].1.is_empty() && progress == 3,
        || format!("progress: events {got:?}"),
    )?;
    ensure(
        json_of(&got[4].1)["result"]["content"][0]["text"] == "p-1"
            && got.iter().all(|(id, _)| id.is_some()),
        || format!("progress: reply {got:?}"),
    )?;

    // Sampling: the request to the client comes on the stream, its
    // response in a POST of the session, then the reply.
    let call = rpc(
        3,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
    );
    let mut stream = post(addr, &in_session, &call)?;
    sent += 1;
    let _priming = stream.event().ok_or("sampling: no priming event")?;
    let (_, asked) = stream.event().ok_or("sampling: no request to the client")?;
    let asked = json_of(&asked);
    ensure(asked["method"] == "sampling/createMessage", || {
        format!("sampling: {asked}")
    })?;
    let response = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello back"},
        "model": "m", "stopReason": "endTurn"}});
    let accepted = post(addr, &in_session, &response)?;
    sent += 1;
    ensure(accepted.status == 202, || {
        format!("sampling: the response got {}", accepted.status)
    })?;
    let (_, reply) = stream.event().ok_or("sampling: no reply")?;
    ensure(
        json_of(&reply)["result"]["content"][0]["text"] == "LLM response: hello back",
        || format!("sampling: reply {reply}"),
    )?;

    // SSE polling: the stream ends after its priming event; a GET with
    // its id resumes it and brings the reply.
    let call = rpc(4, "tools/call", json!({"name": "test_reconnection"}));
    let first = events(post(addr, &in_session, &call)?);
    sent += 1;
    let last = match first.as_slice() {
        [(Some(id), data)] if data.is_empty() => id.clone(),
        other => return Err(format!("reconnection: first stream {other:?}")),
    };
    let resumed = send(
        addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Last-Event-ID", &last),
        ],
        None,
    )?;
    sent += 1;
    let rest = events(resumed);
    ensure(rest.len() == 1 && json_of(&rest[0].1)["id"] == 4, || {
        format!("reconnection: resumed stream {rest:?}")
    })?;

    // 2026-07-28: progress on a stream without ids; Mcp-Param checked.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "progressToken": 7});
    let call = rpc(
        5,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": meta}),
    );
    let stateless = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "test_tool_with_progress"),
    ];
    let got = events(post(addr, &stateless, &call)?);
    sent += 1;
    ensure(
        got.len() == 4 && got.iter().all(|(id, _)| id.is_none()),
        || format!("stateless progress: {got:?}"),
    )?;
    ensure(
        json_of(&got[3].1)["result"]["resultType"] == "complete",
        || format!("stateless progress: reply {got:?}"),
    )?;
    let call = rpc(
        6,
        "tools/call",
        json!({"name": "test_header_param", "arguments": {"region": "eu"}, "_meta": meta}),
    );
    for (header, status) in [
        (Some("eu"), 200),
        (Some("=?base64?ZXU=?="), 200),
        (Some("us"), 400),
        (Some("=?base64?ZXU?="), 400),
        (None, 400),
    ] {
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_header_param"),
        ];
        if let Some(h) = header {
            headers.push(("Mcp-Param-Region", h));
        }
        let answer = post(addr, &headers, &call)?;
        sent += 1;
        let got = answer.status;
        let body = json_of(&answer.body());
        ensure(
            got == status && (status == 200 || body["error"]["code"] == -32020),
            || format!("Mcp-Param-Region {header:?}: {got} {body}"),
        )?;
    }

    let ended = send(addr, "DELETE", &in_session, None)?;
    sent += 1;
    ensure(ended.status == 200, || {
        format!("DELETE got {}", ended.status)
    })?;
    Ok(sent)
}
