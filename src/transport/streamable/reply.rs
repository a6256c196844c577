//! The answer to one POST of `/mcp`: a JSON body when the call says
//! nothing before it answers, else a `text/event-stream` opened at the
//! call's first message and ended by its reply.
//!
//! A call's handler talks to the client through [`ReplyPeer`] (the
//! protocol layer's [`Peer`]): progress and log notifications, and, in a
//! session, requests to the client (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`) whose responses arrive as later
//! POSTs of the session and are routed by id to the waiting call
//! ([`mcp::Session::request_client`]). A stateless (2026-07-28) call may
//! only notify: it asks for input with an input-required result instead.
//!
//! Session streams are resumable (SEP-1699). The stream opens with a
//! *priming* event (an id, the [`SSE_RETRY_MS`] reconnection delay and no
//! data); every event has an id `{stream}-{seq}`. When the server ends a
//! stream before the reply ([`Peer::end_stream`], for SSE polling) or a
//! write fails (the client went), what the call still sends is kept,
//! and a `GET /mcp` of the session with `Last-Event-ID` takes the stream
//! over: the kept events after that id are replayed on it, the rest of the
//! call is sent there, and it ends with the reply. A session keeps at most
//! [`MAX_DETACHED_STREAMS`] streams waiting to be resumed, each holding at
//! most [`MAX_KEPT_EVENTS`] events (the oldest notifications go first;
//! the reply is always kept).

use serde_json::Value;
use std::collections::VecDeque;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::super::admission::{Permit, SharePermit};
use super::super::event_stream::EventStream;
use super::super::http::{Context, Response};
use super::super::mcp_http::{streamable_reply, Call};
use super::super::request::Request;
use super::{accepted, accepted_types, accepts, lock, reply_response, HttpSession};
use crate::protocol::call::{Peer, PeerError};
use crate::service::Principal;

/// The reconnection delay a resumable stream asks of its client (the
/// `retry` field of its priming event), in ms.
pub const SSE_RETRY_MS: u64 = 1000;

/// Streams of one session kept for resumption after their connection
/// ended; past it, the oldest finished one is dropped.
pub const MAX_DETACHED_STREAMS: usize = 16;

/// Events one stream keeps while no connection carries it.
pub const MAX_KEPT_EVENTS: usize = 256;

/// Where a reply's stream stands.
enum Out {
    /// Nothing sent yet: the request still waits for its answer.
    Waiting(Request),
    /// Events go out on this connection.
    Live(Writer),
    /// No connection (ended by the server, or the client went): events
    /// are kept for a resumption.
    Detached,
    /// Over: the reply was sent, or the stream was given up.
    Done,
}

/// A connection carrying a stream, with its places.
struct Writer {
    events: EventStream,
    _connection: Permit,
    /// A resuming `GET`'s place among the long-lived streams.
    _stream: Option<SharePermit>,
}

struct State {
    out: Out,
    /// The next event's sequence number (0 is the priming event).
    next: u64,
    /// Events not (known to be) delivered, oldest first: `(seq, event)`.
    kept: VecDeque<(u64, String)>,
    /// The reply was sent or kept: nothing follows.
    answered: bool,
}

/// The answer to one POST; see the module documentation.
pub(super) struct Reply {
    state: Mutex<State>,
    /// The session, for a session's (resumable) stream.
    session: Option<Arc<HttpSession>>,
    /// This stream's number in its session (event ids).
    stream: u64,
    /// The client lists `text/event-stream` in `Accept`.
    can_stream: bool,
    chunked: bool,
}

impl Reply {
    pub fn new(request: Request, session: Option<Arc<HttpSession>>) -> Arc<Reply> {
        let can_stream =
            !accepted_types(&request).is_empty() && accepts(&request, "text/event-stream");
        let chunked = request.is_http11();
        let stream = session.as_ref().map_or(0, |s| s.next_stream());
        Arc::new(Reply {
            state: Mutex::new(State {
                out: Out::Waiting(request),
                next: 0,
                kept: VecDeque::new(),
                answered: false,
            }),
            session,
            stream,
            can_stream,
            chunked,
        })
    }

    fn resumable(&self) -> bool {
        self.session.is_some()
    }

    /// The event carrying `json`, with its id when the stream is
    /// resumable.
    fn event_text(&self, seq: u64, json: &str) -> String {
        if self.resumable() {
            format!(
                "id: {}-{seq}\nevent: message\ndata: {json}\n\n",
                self.stream
            )
        } else {
            format!("event: message\ndata: {json}\n\n")
        }
    }

    /// Opens the stream on the waiting request's connection (with the
    /// priming event when resumable); false when it cannot be.
    fn open(self: &Arc<Reply>, state: &mut State) -> bool {
        let Out::Waiting(request) = std::mem::replace(&mut state.out, Out::Done) else {
            return false;
        };
        let Some(conn) = request.into_conn() else {
            return false;
        };
        let (socket, connection): (TcpStream, Permit) = conn.into_stream();
        let Ok(mut events) = EventStream::open(socket, self.chunked) else {
            return false;
        };
        if self.resumable() {
            let priming = format!("id: {}-0\nretry: {SSE_RETRY_MS}\ndata: \n\n", self.stream);
            if events.event(&priming).is_err() {
                return false;
            }
            state.next = 1;
            if let Some(session) = &self.session {
                session.keep_stream(self.stream, self.clone());
            }
        }
        state.out = Out::Live(Writer {
            events,
            _connection: connection,
            _stream: None,
        });
        true
    }

    /// Sends one message on the stream, opening it if need be; false when
    /// it can be neither sent nor kept.
    pub fn send(self: &Arc<Reply>, message: &Value) -> bool {
        if !self.can_stream {
            return false;
        }
        let json = streamable_reply(message);
        let mut state = lock(&self.state);
        if state.answered {
            return false;
        }
        if matches!(state.out, Out::Waiting(_)) && !self.open(&mut state) {
            return false;
        }
        let seq = state.next;
        state.next += 1;
        let text = self.event_text(seq, &json);
        self.deliver(&mut state, seq, text)
    }

    /// Writes an event on the live connection, or keeps it.
    fn deliver(&self, state: &mut State, seq: u64, text: String) -> bool {
        if let Out::Live(writer) = &mut state.out {
            if writer.events.event(&text).is_ok() {
                return true;
            }
            // The client went: keep what follows for its resumption.
            state.out = if self.resumable() {
                Out::Detached
            } else {
                Out::Done
            };
        }
        match state.out {
            Out::Detached => {
                if state.kept.len() >= MAX_KEPT_EVENTS {
                    state.kept.pop_front();
                }
                state.kept.push_back((seq, text));
                true
            }
            _ => false,
        }
    }

    /// Ends the stream's connection now (SSE polling); the client resumes
    /// it with `Last-Event-ID`. Opens the stream first if nothing was
    /// sent, so that the client has an id to resume from.
    pub fn end_stream(self: &Arc<Reply>) -> bool {
        if !self.can_stream || !self.resumable() {
            return false;
        }
        let mut state = lock(&self.state);
        if state.answered {
            return false;
        }
        if matches!(state.out, Out::Waiting(_)) && !self.open(&mut state) {
            return false;
        }
        if let Out::Live(mut writer) = std::mem::replace(&mut state.out, Out::Detached) {
            let _ = writer.events.finish();
        }
        true
    }

    /// Answers with the call's reply: the JSON response when nothing was
    /// streamed, else the stream's last event.
    pub fn finish(
        self: &Arc<Reply>,
        ctx: &Context,
        principal: &Principal,
        call: Call,
        status: u16,
        reply: Option<Value>,
    ) {
        let mut state = lock(&self.state);
        if let Out::Waiting(_) = state.out {
            let Out::Waiting(request) = std::mem::replace(&mut state.out, Out::Done) else {
                return;
            };
            state.answered = true;
            drop(state);
            return match reply {
                None => request.respond(accepted()),
                Some(reply) => {
                    let (mut r, len): (Response, usize) = reply_response(&request, status, &reply);
                    call.charge(ctx, principal, &reply, len);
                    // Taken once the call is done, so it covers its write.
                    if let Some(position) = ctx.position_header() {
                        r = r.with_header(position);
                    }
                    request.respond(r)
                }
            };
        }
        state.answered = true;
        let Some(reply) = reply else {
            // Cancelled: nothing is owed.
            self.close(&mut state);
            return;
        };
        let json = streamable_reply(&reply);
        call.charge(ctx, principal, &reply, json.len());
        let seq = state.next;
        state.next += 1;
        let text = self.event_text(seq, &json);
        self.deliver(&mut state, seq, text);
        if !matches!(state.out, Out::Detached) {
            self.close(&mut state);
        }
    }

    /// Ends the stream for good: its connection, and its place in the
    /// session.
    fn close(&self, state: &mut State) {
        if let Out::Live(mut writer) = std::mem::replace(&mut state.out, Out::Done) {
            let _ = writer.events.finish();
        }
        state.kept.clear();
        if let Some(session) = &self.session {
            session.forget_stream(self.stream);
        }
    }

    /// Resumes the stream on `events` (a `GET` with `Last-Event-ID`
    /// `{stream}-{after}`): the kept events after `after`, then whatever
    /// the call still sends; ends it at once if the reply was among them.
    pub fn resume(
        &self,
        after: u64,
        mut events: EventStream,
        connection: Permit,
        place: SharePermit,
    ) {
        let mut state = lock(&self.state);
        if let Out::Live(mut old) = std::mem::replace(&mut state.out, Out::Detached) {
            // A second resumption takes over from the first.
            let _ = old.events.finish();
        }
        while let Some((seq, text)) = state.kept.pop_front() {
            if seq > after && events.event(&text).is_err() {
                // Gone again: what was not sent stays kept.
                state.kept.push_front((seq, text));
                return;
            }
        }
        if state.answered {
            let _ = events.finish();
            self.close(&mut state);
            return;
        }
        state.out = Out::Live(Writer {
            events,
            _connection: connection,
            _stream: Some(place),
        });
    }
}

/// The protocol layer's view of a reply: what a call may send its client.
pub(super) struct ReplyPeer<'a> {
    pub reply: &'a Arc<Reply>,
}

impl Peer for ReplyPeer<'_> {
    fn notify(&self, message: &Value) -> bool {
        self.reply.send(message)
    }

    fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, PeerError> {
        let Some(session) = &self.reply.session else {
            return Err(PeerError::Unavailable(format!(
                "a 2026-07-28 request cannot be answered with a request ({method}); the \
                 server asks with an input-required result"
            )));
        };
        if !self.reply.can_stream {
            return Err(PeerError::Unavailable(format!(
                "the client does not accept text/event-stream, so {method} cannot be sent"
            )));
        }
        session
            .protocol
            .request_client(method, params, timeout, |m| self.reply.send(m))
    }

    fn end_stream(&self) -> bool {
        self.reply.end_stream()
    }
}
