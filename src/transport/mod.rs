//! Transports: framing, identity and input limits; nothing else. They hand
//! parsed messages to [`crate::protocol::mcp::Server`] and carry back its
//! replies.
//!
//! - [`stdio`] (with [`framing`]): MCP on stdin/stdout for one local caller.
//! - [`http`]: the `alayasiki-api` server: routing and shutdown, with
//!   [`streamable`] (MCP over Streamable HTTP at `/mcp`, both eras),
//!   [`sse`] (the deprecated HTTP+SSE transport; the two share
//!   [`event_stream`] and [`mcp_http`]) and [`http_api`] with
//!   [`http_documents`], [`http_graph`] and [`http_sessions`] (the JSON
//!   API; the last two serve the memory browser; [`query_string`] parses
//!   their parameters) behind it, and the checks every request passes
//!   ([`checks`], in order): [`origin`], [`auth`] (with [`jwks`]),
//!   [`admission`] and [`body`]; [`read_levels`] lets a request wait for a cluster
//!   position. Beneath them the server owns its HTTP/1.1:
//!   [`listener`] binds the socket, [`acceptor`] bounds connections in
//!   count and time, [`wire`] parses request heads strictly and writes
//!   responses, [`request`] reads bodies within their framing and
//!   deadline and answers; [`body_readers`] await bodies off the routing
//!   code. [`signals`] turns SIGTERM/SIGINT into a graceful shutdown.
//! - [`local`] (Unix): the data directory's owner process and the stdio
//!   relay that reaches it, so that every agent on the machine shares one
//!   memory.
//! - [`loopback_ui`]: the same HTTP stack serving the memory browser to
//!   the local user beside stdio (or alone), signed in with a per-start
//!   [`local_secret`].

pub mod acceptor;
pub mod admission;
pub mod auth;
pub mod body;
pub mod body_readers;
pub mod checks;
pub mod event_stream;
pub mod framing;
pub mod http;
pub mod http_api;
pub mod http_compact;
pub mod http_documents;
pub mod http_graph;
pub mod http_health;
pub mod http_sessions;
pub mod http_uploads;
pub mod jwks;
pub mod listener;
#[cfg(unix)]
pub mod local;
pub mod local_secret;
pub mod loopback_ui;
pub mod mcp_http;
pub mod oauth;
pub mod origin;
pub mod query_string;
pub mod read_levels;
pub mod reply_fit;
pub mod request;
pub mod routes;
pub mod signals;
pub mod sse;
pub mod stdio;
pub mod streamable;
pub mod ui;
pub mod wire;
