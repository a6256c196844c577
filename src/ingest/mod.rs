//! Ingestion: from stored originals to searchable chunks.
//!
//! - [`media`]: which media types are accepted and how a type is decided.
//! - [`extract`]: original bytes → extracted text (plain, Markdown, JSON).
//! - [`chunk`]: extracted text → chunks with byte-accurate spans.
//! - [`worker`]: the thread that runs journal jobs through the above and
//!   commits their results.
//!
//! Nothing here talks to clients; errors carry client-safe messages because
//! a failed job's reason is shown in its document's status.

pub mod chunk;
pub mod extract;
pub mod media;
pub mod worker;
