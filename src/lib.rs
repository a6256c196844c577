//! alayasiki-mcp: a local-first knowledge memory for AI agents, served over
//! the Model Context Protocol.
//!
//! Agents *ingest* documents and notes into a durable store and *query* it
//! with a question, getting back ranked, cited evidence and an extractive
//! answer. The crate is laid out by layer; data flows down, never up:
//!
//! - [`transport`]: stdio framing, and the HTTP server of `alayasiki-api`
//!   (JSON API, MCP over Streamable HTTP and SSE, JWT auth, the authorization
//!   server for MCP clients, admission); limits on input.
//! - [`protocol`]: JSON-RPC and MCP: sessions, tools, resources, prompts.
//! - [`service`]: [`service::Memory`], the one API every transport calls,
//!   bound to a [`service::Principal`]; and working memory, the per-identity
//!   session graphs shared by every transport of the process.
//! - [`ingest`], [`query`] and [`graph`]: the engine (extraction and
//!   chunking; retrieval, packing and answers; entities, relations,
//!   resolution and communities), with [`embed`] and [`llm`].
//! - [`store`]: SQLite (WAL, FTS5) behind tenant-bound handles, the writer
//!   thread, the journal, and data-directory ownership; the rqlite cluster
//!   client, copies into a cluster and back, and replication through its log.
//! - [`knowledge`]: the knowledge model's values, which the engine computes
//!   and the store records (graph fragments, provenance and confidence,
//!   resolution evidence, community summaries, the stemmer of relation
//!   keys), below both so the store never names the engine.
//!
//! The command-line subcommands ([`admin`]: bulk ingest, query, forget,
//! export, import, reindex, compact) call [`service::Memory`] like a
//! transport does. [`replay`] sits above everything: it runs recorded MCP
//! sessions against this binary spawned as a child, as a client would.
//!
//! The optional model servers sit beside the engine: [`model_endpoint`]
//! (JSON over HTTP with a deadline and a bounded response), used by the
//! HTTP embedder in [`embed`] and by [`llm`] (extraction and answers, off
//! unless configured).
//!
//! Cross-cutting: [`config`], [`cli`] and [`api_cli`] (flags and
//! environment), [`limits`] (every bound, in one place), [`error`] (typed
//! errors and their client-safe messages), [`disk_health`] (what a failing
//! disk is doing when SQLite cannot say), [`logging`] (stderr only), [`heap`]
//! (freed memory given back to the system when idle), [`visible`] (whether a
//! name shows a reader anything).

pub mod admin;
pub mod api_cli;
pub mod api_token;
pub mod base64;
pub mod cli;
pub mod clock;
pub mod config;
pub mod disk_health;
pub mod embed;
pub mod error;
pub mod graph;
pub mod heap;
pub mod ids;
pub mod ingest;
pub mod knowledge;
pub mod limits;
pub mod llm;
pub mod logging;
pub mod model_endpoint;
pub mod protocol;
pub mod query;
pub mod replay;
pub mod serve;
pub mod service;
pub mod store;
pub mod text;
pub mod transport;
pub mod visible;
