//! `POST /v1/compact`: compacts the caller's tenant while the server
//! serves (`store::maintenance`): the vector files without forgotten
//! chunks' slots, the full-text index merged so that forgotten chunks'
//! entries physically go. On a cluster it goes through the log like any
//! write, and every node compacts its own files. Admin only; no body.
//!
//! A compaction runs in short writes, but they are writes all the same,
//! on the one writer every tenant shares: a tenant may start one every
//! [`COMPACT_INTERVAL`] ([`CompactionPace`]); sooner is 429
//! `compaction_too_soon` with `Retry-After` saying when. The command line's
//! `alayasiki-mcp compact` is not paced: it is a local administrator's,
//! on a memory no server is serving.

use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::admission::Holder;
use super::http::{error, retry_after, Context};
use super::http_api::{forbidden, run, service_error, Charge, Reply};
use super::request::Request;
use crate::service::{Permission, Principal};

/// Usage operation of `POST /v1/compact`.
pub const COMPACT_OPERATION: &str = "memory.compact";

/// Least time between the starts of two compactions of one tenant over
/// HTTP; one asked for sooner gets 429 `compaction_too_soon` with
/// `Retry-After`. Forgotten chunks wait at most this long for their space
/// to be reclaimed; the shared writer does compaction work for a tenant at
/// most once in it.
pub const COMPACT_INTERVAL: Duration = Duration::from_secs(30);

/// When each tenant last started a compaction, within the last
/// [`COMPACT_INTERVAL`] (older starts are dropped, so it holds at most the
/// tenants that compacted in that time).
#[derive(Default)]
pub(super) struct CompactionPace {
    started: Mutex<HashMap<String, Instant>>,
}

impl CompactionPace {
    /// Starts a compaction of `tenant` at `now`, or says how long until
    /// one may start.
    fn start(&self, tenant: &str, now: Instant) -> Result<(), Duration> {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        started.retain(|_, at| now.saturating_duration_since(*at) < COMPACT_INTERVAL);
        if let Some(at) = started.get(tenant) {
            return Err(COMPACT_INTERVAL - now.saturating_duration_since(*at));
        }
        started.insert(tenant.to_string(), now);
        Ok(())
    }

    /// Forgets the start of a compaction that failed (nothing was
    /// compacted, so the tenant may try again at once).
    fn failed(&self, tenant: &str, started_at: Instant) {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        if started.get(tenant) == Some(&started_at) {
            started.remove(tenant);
        }
    }
}

/// The 429 refusing a compaction that comes `wait` too soon.
fn too_soon(wait: Duration) -> Reply {
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    error(
        429,
        "compaction_too_soon",
        &format!(
            "this tenant was compacted less than {} s ago (COMPACT_INTERVAL); retry in {secs} s",
            COMPACT_INTERVAL.as_secs()
        ),
    )
    .with_header(retry_after(secs))
}

/// `POST /v1/compact`.
pub(super) fn compact(ctx: &Arc<Context>, request: Request, principal: Principal) {
    if !principal.permits(Permission::Admin) {
        return request.respond(forbidden(Permission::Admin));
    }
    run(ctx, request, Holder::of(&principal), move |ctx| {
        // Paced where it begins: a request refused before (no dispatch
        // slot, a cluster position not reached) has not used its turn.
        let (started, tenant) = (Instant::now(), principal.tenant.name());
        if let Err(wait) = ctx.compactions.start(tenant, started) {
            return too_soon(wait);
        }
        let memory = ctx.service.for_caller(&principal);
        let outcome = memory.compact();
        if outcome.is_err() {
            ctx.compactions.failed(tenant, started);
        }
        match outcome {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_may_start_again_once_the_interval_has_passed_and_others_at_once() {
        let pace = CompactionPace::default();
        let t0 = Instant::now();
        assert_eq!(pace.start("a", t0), Ok(()));
        assert_eq!(pace.start("b", t0), Ok(()));
        let almost = t0 + COMPACT_INTERVAL - Duration::from_millis(1);
        assert_eq!(pace.start("a", almost), Err(Duration::from_millis(1)));
        assert_eq!(too_soon(Duration::from_millis(1)).status_code(), 429);
        assert_eq!(pace.start("a", t0 + COMPACT_INTERVAL), Ok(()));
        // Starts older than the interval are not kept.
        let later = t0 + COMPACT_INTERVAL * 3;
        assert_eq!(pace.start("c", later), Ok(()));
        assert_eq!(pace.started.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_failed_compaction_does_not_use_the_tenants_turn() {
        let pace = CompactionPace::default();
        let t0 = Instant::now();
        assert_eq!(pace.start("a", t0), Ok(()));
        pace.failed("a", t0);
        assert_eq!(pace.start("a", t0 + Duration::from_secs(1)), Ok(()));
        // Only the start that failed is forgotten.
        pace.failed("a", t0);
        assert!(pace.start("a", t0 + Duration::from_secs(2)).is_err());
    }
}
