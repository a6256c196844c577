//! Upkeep: the background thread that keeps derived data current without
//! ever sitting in the path of a query or an ingest.
//!
//! It owns three chores, run every [`UPKEEP_POLL`]:
//! - the retention sweep: documents past their expiry or the retention
//!   period (already invisible to every read) are forgotten for real, a
//!   batch per transaction (`Store::purge_expired`);
//! - community summaries: a tenant whose graph changed since its snapshot
//!   is rebuilt (`graph::communities::refresh`), at most once per
//!   [`COMMUNITY_REBUILD_INTERVAL`] and no more often than
//!   [`REBUILD_DUTY_FACTOR`] times its last build took, so on a large graph
//!   rebuilding never takes more than a small share of a core while
//!   ingestion runs. Among the nodes of a cluster one rebuilds a tenant
//!   at a time ([`COMMUNITY_CHORE_LEASE`]);
//! - on a cluster, pruning the log's entries past their retention
//!   (`Store::prune_log`, paced by the log itself), and writing the usage
//!   rows held while it had no leader (`Store::flush_usage`).
//!
//! Rebuilt summaries are extractive; when LLM summaries are configured the
//! summarizer thread (`super::summarize`) adds them afterwards, so no
//! chore here ever waits for an LLM.
//!
//! It is a thread of its own, not a chore of the ingestion worker: a
//! rebuild of a large graph takes seconds, and ingestion must not wait
//! for it. In deterministic mode there is no thread: [`run_now`] does both
//! chores before each request.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::worker::WorkerShared;

/// How often upkeep looks for work.
pub const UPKEEP_POLL: Duration = Duration::from_secs(1);

/// Least time between two community rebuilds of one tenant: summaries
/// follow the graph within about this long.
pub const COMMUNITY_REBUILD_INTERVAL: Duration = Duration::from_secs(10);

/// A tenant's next rebuild waits at least this many times as long as its
/// last one took.
pub const REBUILD_DUTY_FACTOR: u32 = 5;

/// How long a node that rebuilt a tenant's community summaries keeps the
/// chore when other nodes write the same memory (`Store::claim_chore`):
/// the others leave the tenant to it meanwhile, and take it over this
/// long after it stops.
pub const COMMUNITY_CHORE_LEASE: Duration = Duration::from_secs(60);

/// Documents retention forgets per transaction, so a large sweep does not
/// hold the writer (and every other write) at once.
pub const RETENTION_PURGE_BATCH: usize = 256;

/// Handle to the upkeep thread.
pub struct Upkeep {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Upkeep {
    pub fn start(shared: Arc<WorkerShared>) -> std::io::Result<Upkeep> {
        let (stop, stopped) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("upkeep".into())
            .spawn(move || run(&shared, &stopped))?;
        Ok(Upkeep {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops after the chore in hand and waits for the thread.
    pub fn stop(&mut self) {
        let _ = self.stop.try_send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// When a tenant may next be rebuilt.
#[derive(Default)]
struct RebuildPacing {
    next: HashMap<String, Instant>,
}

impl RebuildPacing {
    fn due(&self, tenant: &str) -> bool {
        self.next.get(tenant).is_none_or(|at| Instant::now() >= *at)
    }

    fn built(&mut self, tenant: &str, took: Duration) {
        let wait = COMMUNITY_REBUILD_INTERVAL.max(took * REBUILD_DUTY_FACTOR);
        self.next.insert(tenant.to_string(), Instant::now() + wait);
    }

    /// After a purge the stored summaries are withheld until rebuilt: do
    /// it at once.
    fn hurry(&mut self, tenant: &str) {
        self.next.remove(tenant);
    }
}

fn run(shared: &WorkerShared, stopped: &Receiver<()>) {
    let mut pacing = RebuildPacing::default();
    loop {
        purge_expired(shared, &mut pacing);
        refresh_communities(shared, &mut pacing, stopped);
        // A replicated log's old entries (a cluster's; paced by the log).
        shared.store.prune_log();
        // Usage rows held while a cluster had no leader, once it has one.
        shared.store.flush_usage();
        match stopped.recv_timeout(UPKEEP_POLL) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
    }
}

/// Both chores at once, in the caller's thread, every stale tenant rebuilt
/// whatever the pacing: deterministic mode's defined point (before each
/// request), where no upkeep thread runs.
pub fn run_now(shared: &WorkerShared) {
    let mut pacing = RebuildPacing::default();
    purge_expired(shared, &mut pacing);
    let (_keep, stopped) = crossbeam_channel::bounded(1);
    refresh_communities(shared, &mut pacing, &stopped);
}

/// Forgets documents past their expiry or the retention period.
fn purge_expired(shared: &WorkerShared, pacing: &mut RebuildPacing) {
    let tenants = match shared.store.tenants_with_expired() {
        Ok(t) => t,
        Err(e) => {
            log::warn!("cannot look for expired documents: {e}");
            return;
        }
    };
    for tenant in tenants {
        match shared.store.purge_expired(
            &tenant,
            RETENTION_PURGE_BATCH,
            super::chunk::CONTEXT_BYTES,
        ) {
            Ok(forgotten) => {
                for f in &forgotten {
                    shared.forgotten(&f.document_id);
                }
                if !forgotten.is_empty() {
                    log::info!("retention forgot {} document(s)", forgotten.len());
                    pacing.hurry(tenant.name());
                }
            }
            Err(e) => log::warn!("purging expired documents failed: {e}"),
        }
    }
}

/// Rebuilds stale community summaries that are due.
fn refresh_communities(shared: &WorkerShared, pacing: &mut RebuildPacing, stopped: &Receiver<()>) {
    let stale = match shared.store.tenants_with_stale_communities() {
        Ok(t) => t,
        Err(e) => {
            log::warn!("cannot check community summaries: {e}");
            return;
        }
    };
    for tenant in stale {
        if !stopped.is_empty() {
            return;
        }
        if !pacing.due(tenant.name()) {
            continue;
        }
        // One node of a cluster rebuilds a tenant; the others would build
        // the same summaries again and write them a second time.
        let chore = format!("communities/{}", tenant.name());
        if !shared.store.claim_chore(&chore, COMMUNITY_CHORE_LEASE) {
            pacing.built(tenant.name(), Duration::ZERO);
            continue;
        }
        let started = Instant::now();
        if let Err(e) = crate::graph::communities::refresh(&shared.store, &tenant) {
            log::warn!("rebuilding community summaries failed: {e}");
        }
        pacing.built(tenant.name(), started.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_rebuild_spaces_the_next_one_out() {
        let mut p = RebuildPacing::default();
        assert!(p.due("t"));
        p.built("t", Duration::from_millis(1));
        assert!(!p.due("t"));
        let quick = p.next["t"];
        p.built("t", Duration::from_secs(4));
        assert!(p.next["t"] >= quick + Duration::from_secs(9));
        p.hurry("t");
        assert!(p.due("t"));
        assert!(p.due("other"));
    }
}
