//! One memory for every agent on the machine: the data directory's owner
//! process and the local clients that reach it (DESIGN §2).
//!
//! A data directory has exactly one owner, the only process that opens its
//! store (that is why nothing is ever corrupted). Reaching it is automatic:
//! `alayasiki-mcp` on stdio is a thin [`relay`] that frames MCP on stdin and
//! stdout exactly as an in-process server would, and hands every message
//! to the owner over a Unix socket in the data directory ([`endpoint`]),
//! starting the owner when none answers ([`start`]). The [`owner`] serves
//! each connection as one MCP session on the same store, or runs one
//! subcommand for it ([`command`]: `ingest`, `query`, `ui`, ... beside
//! running agents), and exits on its own once no client has been connected
//! for a while.
//!
//! What this module never does: open the store from a client, or let a
//! peer of another user in (the socket is mode 0600 and the peer's uid is
//! checked).

pub mod command;
pub mod endpoint;
pub mod owner;
pub mod relay;
pub mod start;
