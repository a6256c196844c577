//! Read levels over HTTP: what a request may ask to see of a cluster's
//! log, and the position every answer of a cluster node reports (API.md,
//! "Read levels"). A node's reads are its own replica's; a client that
//! wrote through one node names that node's position to another.

use std::time::{Duration, Instant};

use super::admission::{MAX_POSITION_WAITS, RETRY_AFTER_SECS};
use super::http::{error, header, make_header, retry_after, Context, Header, Response};
use super::http_api;
use super::request::Request;

/// The header a read sends to see a cluster position: the value of
/// [`POSITION_HEADER`] an earlier answer (from any node) carried.
pub const AFTER_HEADER: &str = "X-Alayasiki-After";

/// The header every JSON API answer of a node on a cluster carries: the
/// last entry of the cluster's log its replica had applied when it
/// answered, its own write included.
pub const POSITION_HEADER: &str = "X-Alayasiki-Position";

/// The answer to a request whose position this node has not applied.
fn behind() -> Response {
    error(
        503,
        "behind",
        "this node has not yet applied the writes this request must see; \
         retry shortly, or send it to the node that took them",
    )
    .with_header(retry_after(RETRY_AFTER_SECS))
}

/// How often a read waiting for a cluster position looks again.
const POSITION_POLL: Duration = Duration::from_millis(5);

impl Context {
    /// Read-your-writes across nodes: waits, up to
    /// [`CLUSTER_POSITION_WAIT`](crate::limits::CLUSTER_POSITION_WAIT),
    /// until this node's replica has applied the position the request's
    /// [`AFTER_HEADER`] names; the answer refusing it otherwise (400 for a
    /// malformed value, 503 with `Retry-After` when it is not reached, or
    /// at once when [`MAX_POSITION_WAITS`] requests already wait). A single
    /// server's every position is 0, so it never waits.
    pub(super) fn await_position(&self, request: &Request) -> Result<(), Response> {
        let Some(text) = header(request, AFTER_HEADER) else {
            return Ok(());
        };
        let wanted = match text.trim().parse::<i64>() {
            Ok(p) if p >= 0 => p,
            _ => {
                return Err(error(
                    400,
                    "invalid_input",
                    "X-Alayasiki-After must be a position (a whole number, 0 or more) from X-Alayasiki-Position",
                ))
            }
        };
        if !self.service.on_cluster() {
            return Ok(());
        }
        let mut waiting = None;
        let deadline = Instant::now() + crate::limits::CLUSTER_POSITION_WAIT;
        loop {
            let at = self
                .service
                .log_position()
                .map_err(|e| http_api::service_error(e, "log position"))?;
            if at >= wanted {
                return Ok(());
            }
            if waiting.is_none() {
                waiting = self.position_waits.try_enter();
                if waiting.is_none() {
                    log::warn!("position {wanted} not reached (at {at}) and {MAX_POSITION_WAITS} requests already wait");
                    return Err(behind());
                }
            }
            if Instant::now() >= deadline {
                log::warn!("position {wanted} not reached in time (at {at})");
                return Err(behind());
            }
            std::thread::sleep(POSITION_POLL);
        }
    }

    /// [`POSITION_HEADER`] for an answer, on a node of a cluster.
    pub(super) fn position_header(&self) -> Option<Header> {
        if !self.service.on_cluster() {
            return None;
        }
        let at = self.service.log_position().ok()?;
        Some(make_header(POSITION_HEADER, &at.to_string()))
    }
}
