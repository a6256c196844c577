//! `alayasiki_status`: what is stored and how the store is doing.

use serde_json::json;

use super::schema::object;
use super::{Args, Tool};
use crate::service::Permission;

pub static TOOL: Tool = Tool {
    name: "alayasiki_status",
    description: "Report the memory server's version, document and chunk counts, pending and \
failed indexing jobs, and store size for the calling identity's tenant, and the caller's live \
working-memory sessions with their expiry times. The server's data directory is told only to \
callers with the admin permission (the local stdio identity, the admin role).",
    input_schema: || object(None, json!({}), &[]),
    permission: Permission::Query,
    mutates: false,
    call: |memory, args| {
        Args::new(args, &[])?;
        Ok(serde_json::to_value(memory.status()?)?)
    },
};
