//! `POST /v1/compact`: compacts the caller's tenant while the server
//! serves (`store::maintenance`): the vector files without forgotten
//! chunks' slots, the full-text index merged so that forgotten chunks'
//! entries physically go. On a cluster it goes through the log like any
//! write, and every node compacts its own files. Admin only; no body.

use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

use super::admission::Holder;
use super::http::Context;
use super::http_api::{forbidden, run, service_error, Charge};
use super::request::Request;
use crate::service::{Permission, Principal};

/// Usage operation of `POST /v1/compact`.
pub const COMPACT_OPERATION: &str = "memory.compact";

/// `POST /v1/compact`.
pub(super) fn compact(ctx: &Arc<Context>, request: Request, principal: Principal) {
    if !principal.permits(Permission::Admin) {
        return request.respond(forbidden(Permission::Admin));
    }
    let started = Instant::now();
    run(ctx, request, Holder::of(&principal), move |ctx| {
        let memory = ctx.service.for_caller(&principal);
        match memory.compact() {
            Ok(c) => {
                let body = json!({
                    "vector_rows_before": c.rows_before,
                    "vector_rows_after": c.rows_after,
                    "fulltext_merged": true,
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                })
                .to_string()
                .into_bytes();
                Charge::new(COMPACT_OPERATION, 0, started).reply(&memory, body, "application/json")
            }
            Err(e) => service_error(e, COMPACT_OPERATION),
        }
    });
}
