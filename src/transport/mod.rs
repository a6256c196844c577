//! Transports: framing, identity and input limits; nothing else. They hand
//! parsed messages to [`crate::protocol::mcp::Server`] and carry back its
//! replies.

pub mod framing;
pub mod stdio;
