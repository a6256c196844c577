//! MCP over stdio: newline-delimited JSON-RPC on stdin and stdout.
//!
//! Threads, as the design card draws them: this function's thread reads and
//! frames stdin; a bounded crossbeam channel feeds [`STDIO_WORKERS`] worker
//! threads; every reply goes over one bounded channel to a single writer
//! thread, the only code that touches stdout. Lifecycle messages
//! (`initialize`, `ping`, notifications such as cancellation) are handled
//! by the reader itself, so a pipelined `tools/list` can never overtake the
//! `initialize` sent before it, and a `ping` is answered at once whatever
//! the backlog.
//!
//! The reader never waits for a worker: it keeps reading, so lifecycle
//! messages are seen as they arrive. A request that finds
//! [`STDIO_QUEUE`] requests already waiting, or the process's parse budget
//! spent ([`crate::protocol::parse_budget`]), is answered "busy" at once
//! (`-32000`, retry later) instead of being held. Replies wait in a bounded
//! queue ([`STDIO_REPLY_QUEUE`]); a client that stops reading its stdout
//! therefore stops the server reading its stdin (the pipe pushes back),
//! and memory stays flat either way.
//!
//! Requests take effect in the order the client sent them, as far as it can
//! tell (read-your-writes, [`crate::protocol::ordering`]): the reader issues
//! each one its ticket before queueing it.
//!
//! On end of input the reader stops, the workers finish what they hold and
//! exit, the writer flushes the last replies, and `serve` returns.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use serde_json::Value;
use std::io::{BufRead, Write};
use std::sync::Arc;

use super::framing::{Frame, FrameReader};
use crate::limits::MAX_FRAME_BYTES;
use crate::protocol::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::mcp::{Queued, Server, Session};
use crate::protocol::parse_budget::{ParseBudget, ParseCharge, Refusal};

/// Worker threads serving requests. Requests that wait (an ingest waiting
/// for indexing) block a worker, not the connection.
pub const STDIO_WORKERS: usize = 32;

/// Requests received and waiting for a worker; one more is answered
/// "busy" (`SERVER_BUSY`) at once.
pub const STDIO_QUEUE: usize = 1024;

/// Replies waiting for stdout. When the client does not read them, workers
/// and then the reader wait here, so nothing piles up in memory.
pub const STDIO_REPLY_QUEUE: usize = 1024;

/// Frames this short are parsed without asking the parse budget first:
/// what they can cost is small, and a `ping` or a cancellation must never
/// be refused.
pub const SMALL_FRAME_BYTES: usize = 4096;

/// JSON-RPC error code (implementation range) for a request refused
/// because the server holds too many already: retry later.
pub const SERVER_BUSY: i64 = -32000;

/// A request for the workers with its share of the parse budget, held until
/// it has been answered.
type Work = (Value, Queued, Option<ParseCharge>);

/// Serves one stdio session until end of input. `serial` (deterministic
/// mode) serves one message at a time, in the reader, each answered before
/// the next is read: replies then come in the same order on every run.
pub fn serve<R, W>(
    server: Arc<Server>,
    session: Arc<Session>,
    input: R,
    output: W,
    serial: bool,
) -> std::io::Result<()>
where
    R: BufRead,
    W: Write + Send + 'static,
{
    let (reply_tx, reply_rx) = crossbeam_channel::bounded::<Value>(STDIO_REPLY_QUEUE);
    let writing = session.clone();
    let writer = std::thread::Builder::new()
        .name("stdio-writer".into())
        .spawn(move || write_replies(&writing, reply_rx, output))?;
    let (work_tx, work_rx) = crossbeam_channel::bounded::<Work>(STDIO_QUEUE);
    let pool = if serial { 0 } else { STDIO_WORKERS };
    let mut workers = Vec::with_capacity(pool);
    for i in 0..pool {
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
    let read_result = read_frames(&server, &session, input, &work_tx, &reply_tx, serial);
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
    work: &Sender<Work>,
    replies: &Sender<Value>,
    serial: bool,
) -> std::io::Result<()> {
    let budget = ParseBudget::shared();
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
        // Large frames are charged before they are parsed, small ones after
        // (see SMALL_FRAME_BYTES).
        let mut charge = None;
        if line.len() > SMALL_FRAME_BYTES {
            match budget.charge(&line) {
                Ok(c) => charge = Some(c),
                Err(refusal) => {
                    let _ = replies.send(refused(jsonrpc::peek_id(&line), &refusal));
                    continue;
                }
            }
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
        if serial {
            // Deterministic mode's defined point: background work done,
            // then the clock's step for this message.
            server.service().settle_background();
            crate::clock::step();
        }
        if Server::is_inline(&value) {
            if let Some(reply) = server.handle(session, value) {
                let _ = replies.send(reply);
            }
            continue;
        }
        if !session.is_initialized() && !Server::is_modern(session, &value) {
            // Refused here, without queueing: nothing sent before
            // initialize runs (see `Session::ticket`).
            if let Some(reply) = server.refuse_uninitialized(value) {
                let _ = replies.send(reply);
            }
            continue;
        }
        if charge.is_none() {
            match budget.charge(&line) {
                Ok(c) => charge = Some(c),
                Err(refusal) => {
                    let _ = replies.send(refused(jsonrpc::id_of(&value), &refusal));
                    continue;
                }
            }
        }
        drop(line);
        // Tickets are issued here, in the order the client sent the
        // requests, and the queue keeps that order (read-your-writes).
        let queued = session.ticket(&value);
        if serial {
            if let Some(reply) = server.handle_ordered(session, session.principal(), value, queued)
            {
                let _ = replies.send(reply);
            }
            drop(charge);
            continue;
        }
        match work.try_send((value, queued, charge)) {
            Ok(()) => {}
            Err(TrySendError::Full((value, _, _))) => {
                let _ = replies.send(jsonrpc::error(
                    jsonrpc::id_of(&value),
                    SERVER_BUSY,
                    &format!(
                        "server busy: {STDIO_QUEUE} requests are waiting (STDIO_QUEUE); retry \
                         once replies have arrived"
                    ),
                ));
            }
            Err(TrySendError::Disconnected(_)) => break,
        }
    }
    Ok(())
}

/// The reply to a request refused by the parse budget.
fn refused(id: Value, refusal: &Refusal) -> Value {
    let code = match refusal {
        Refusal::Busy => SERVER_BUSY,
        Refusal::TooCostly { .. } => INVALID_REQUEST,
    };
    jsonrpc::error(id, code, &refusal.message())
}

fn work(server: &Server, session: &Session, rx: Receiver<Work>, replies: Sender<Value>) {
    for (value, queued, charge) in rx {
        let reply = server.handle_ordered(session, session.principal(), value, queued);
        drop(charge);
        if let Some(reply) = reply {
            let _ = replies.send(reply);
        }
    }
}

/// The only writer of stdout: one compact JSON message per line, shaped
/// for the session's revision ([`Session::shape_reply`]). Flushes whenever
/// the queue runs dry, so replies are never held back.
fn write_replies<W: Write>(
    session: &Session,
    rx: Receiver<Value>,
    output: W,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(output);
    for reply in rx.iter() {
        let reply = session.shape_reply(reply);
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
