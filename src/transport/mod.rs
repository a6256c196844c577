//! Transports: framing, identity and input limits; nothing else. They hand
//! parsed messages to [`crate::protocol::mcp::Server`] and carry back its
//! replies.
//!
//! - [`stdio`] (with [`framing`]): MCP on stdin/stdout for one local caller.
//! - [`http`]: the `alayasiki-api` server: routing and shutdown, with
//!   [`sse`] (MCP over HTTP+SSE) and [`http_api`] with [`http_documents`]
//!   (the JSON API) behind it,
//!   and the checks every request passes: [`origin`], [`auth`],
//!   [`admission`] and [`body`]; [`listener`] binds the socket so every
//!   connection's reads and writes are bounded, [`unread_body`] (with
//!   [`socket`]) answers requests whose body is not read, and
//!   [`body_readers`] await bodies off the routing threads. [`signals`]
//!   turns SIGTERM/SIGINT into a graceful shutdown.

pub mod admission;
pub mod auth;
pub mod body;
pub mod body_readers;
pub mod framing;
pub mod http;
pub mod http_api;
pub mod http_documents;
pub mod listener;
pub mod origin;
pub mod signals;
pub mod socket;
pub mod sse;
pub mod stdio;
pub mod unread_body;
