//! `GET /health`: whether this process should be sent requests, for load
//! balancers and liveness probes; no token needed, nothing of the memory
//! told.

use super::wire::Response;
use serde_json::json;

use super::http::json_response;
use crate::service::{MemoryService, STRANDED};

/// 200 `{"status":"ok"}`, or 503 `{"status":"stranded"}` on a cluster node
/// that can no longer catch up: it should leave a load balancer's pool
/// (its reads go on for whoever still asks it).
pub fn health(service: &MemoryService) -> Response {
    if service.stranded() {
        json_response(503, &json!({"status": "stranded", "reason": STRANDED}))
    } else {
        json_response(200, &json!({"status": "ok"}))
    }
}
