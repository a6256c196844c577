//! MCP over stdio: newline-delimited JSON-RPC on stdin and stdout.
//!
//! Threads, as the design card draws them: this function's thread reads and
//! frames stdin; a bounded crossbeam channel feeds [`STDIO_WORKERS`] worker
//! threads; every reply goes over one channel to a single writer thread, the
//! only code that touches stdout. Lifecycle messages (`initialize`, `ping`,
//! notifications) are handled by the reader itself, so a pipelined
//! `tools/list` can never overtake the `initialize` sent before it.
//!
//! Requests take effect in the order the client sent them, as far as it can
//! tell (read-your-writes, [`crate::protocol::ordering`]): the reader issues
//! each one its ticket before queueing it.
//!
//! On end of input the reader stops, the workers finish what they hold and
//! exit, the writer flushes the last replies, and `serve` returns.

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;
use std::io::{BufRead, Write};
use std::sync::Arc;

use super::framing::{Frame, FrameReader};
use crate::limits::MAX_FRAME_BYTES;
use crate::protocol::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::mcp::{Queued, Server, Session};

/// Worker threads serving requests. Requests that wait (an ingest waiting
/// for indexing) block a worker, not the connection.
pub const STDIO_WORKERS: usize = 32;

/// Requests queued for workers before the reader stops reading stdin (which
/// pushes back on the client through the pipe).
pub const STDIO_QUEUE: usize = 64;

/// Serves one stdio session until end of input.
pub fn serve<R, W>(
    server: Arc<Server>,
    session: Arc<Session>,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: BufRead,
    W: Write + Send + 'static,
{
    let (reply_tx, reply_rx) = crossbeam_channel::unbounded::<Value>();
    let writer = std::thread::Builder::new()
        .name("stdio-writer".into())
        .spawn(move || write_replies(reply_rx, output))?;
    let (work_tx, work_rx) = crossbeam_channel::bounded::<(Value, Queued)>(STDIO_QUEUE);
    let mut workers = Vec::with_capacity(STDIO_WORKERS);
    for i in 0..STDIO_WORKERS {
        let (server, session, rx, tx) = (
            server.clone(),
            session.clone(),
            work_rx.clone(),
            reply_tx.clone(),
        );
        workers.push(
            std::thread::Builder::new()
                .name(format!("stdio-worker-{i}"))
                .spawn(move || work(&server, &session, rx, tx))?,
        );
    }
    drop(work_rx);
    let read_result = read_frames(&server, &session, input, &work_tx, &reply_tx);
    drop(work_tx);
    for w in workers {
        let _ = w.join();
    }
    drop(reply_tx);
    let write_result = writer.join().unwrap_or(Ok(()));
    read_result.and(write_result)
}

fn read_frames<R: BufRead>(
    server: &Server,
    session: &Session,
    input: R,
    work: &Sender<(Value, Queued)>,
    replies: &Sender<Value>,
) -> std::io::Result<()> {
    let mut frames = FrameReader::new(input, MAX_FRAME_BYTES);
    while let Some(frame) = frames.next_frame()? {
        let line = match frame {
            Frame::TooLarge { bytes } => {
                log::warn!("skipped a {bytes}-byte message (limit {MAX_FRAME_BYTES})");
                let _ = replies.send(jsonrpc::error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!("message of {bytes} bytes exceeds the {MAX_FRAME_BYTES}-byte limit (MAX_FRAME_BYTES); it was skipped"),
                ));
                continue;
            }
            Frame::Line(line) => line,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(e) => {
                let why = if std::str::from_utf8(&line).is_err() {
                    "message is not valid UTF-8".to_string()
                } else {
                    format!("invalid JSON at line {} column {}", e.line(), e.column())
                };
                let _ = replies.send(jsonrpc::error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("parse error: {why}"),
                ));
                continue;
            }
        };
        if Server::is_inline(&value) {
            if let Some(reply) = server.handle(session, value) {
                let _ = replies.send(reply);
            }
        } else {
            // Tickets are issued here, in the order the client sent the
            // requests, and the queue keeps that order (read-your-writes).
            let ticket = session.ticket(&value);
            if work.send((value, ticket)).is_err() {
                break;
            }
        }
    }
    Ok(())
}

fn work(server: &Server, session: &Session, rx: Receiver<(Value, Queued)>, replies: Sender<Value>) {
    for (value, queued) in rx {
        if let Some(reply) = server.handle_ordered(session, session.principal(), value, queued) {
            let _ = replies.send(reply);
        }
    }
}

/// The only writer of stdout: one compact JSON message per line. Flushes
/// whenever the queue runs dry, so replies are never held back.
fn write_replies<W: Write>(rx: Receiver<Value>, output: W) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(output);
    for reply in rx.iter() {
        // serde_json's compact form escapes control characters inside
        // strings, so a message can never contain a raw newline.
        serde_json::to_writer(&mut out, &reply)?;
        out.write_all(b"\n")?;
        if rx.is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}
