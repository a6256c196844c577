//! The protocol layer: JSON-RPC messages in, MCP semantics, JSON-RPC
//! replies out. Transport-independent: stdio and SSE hand it parsed lines
//! and carry back what it returns.
//!
//! - [`jsonrpc`]: message classification and reply shapes.
//! - [`mcp`]: method dispatch (`methods`: which methods each era has);
//!   [`session`]: one connection's state;
//!   `negotiation`: what each revision is told, and its results' shape.
//! - [`tools`]: the declarative tool table (one file per tool).
//! - [`resources`], [`prompts`]: the other MCP server features.
//! - [`catalog`]: what a server offers (the memory's tools, resources and
//!   prompts, or a conformance fixture's), behind one trait.
//! - [`call`]: one request being handled: progress, logs, asking the
//!   client for input (server-to-client requests, or the stateless
//!   revision's input-required results).

pub mod call;
pub mod catalog;
pub mod entity_view;
pub mod jsonrpc;
pub mod mcp;
mod methods;
mod negotiation;
pub mod ordering;
pub mod parse_budget;
pub mod prompts;
pub mod resources;
pub mod revision;
pub mod session;
pub mod tools;
