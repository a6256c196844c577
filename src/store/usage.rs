//! Usage accounting: one row per completed call, summed per caller.
//!
//! Rows are written through the writer's group commit like every other write,
//! so charging a call costs no fsync of its own. They never hold content.
//!
//! On a cluster without a quorum every write waits for a leader and is
//! refused; a row written then would hold the node's writer (and the
//! callers' writes queued behind it) for that wait, and be lost. So while
//! the store's tap says the quorum is lost ([`Store::quorum_lost`]), rows
//! are held in memory instead ([`HeldUsage`], at most
//! [`MAX_BUFFERED_USAGE_ROWS`]), and written once it is back: by the next
//! call charged, or by upkeep's next round ([`Store::flush_usage`]). A row
//! refused because the cluster was lost meanwhile is held again.

use rusqlite::params;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::tenant::{Tenant, TenantReader, TenantWriter};
use super::{Batching, Commit, Store};
use crate::error::{Error, Result};
use crate::limits::MAX_BUFFERED_USAGE_ROWS;

/// One completed call, as charged.
#[derive(Debug, Clone)]
pub struct UsageRecord {
    pub subject: String,
    /// Tool name, MCP method or API route.
    pub operation: String,
    pub request_bytes: u64,
    pub reply_bytes: u64,
    pub duration_us: u64,
    pub at: i64,
}

/// A caller's usage: totals and a per-operation breakdown.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageTotals {
    pub calls: i64,
    pub request_bytes: i64,
    pub reply_bytes: i64,
    pub duration_ms: i64,
    pub by_operation: Vec<OperationUsage>,
}

/// Usage of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct OperationUsage {
    pub operation: String,
    pub calls: i64,
    pub request_bytes: i64,
    pub reply_bytes: i64,
    pub duration_ms: i64,
}

impl TenantWriter<'_> {
    /// Charges one completed call to `record.subject` in this tenant.
    pub fn record_usage(&mut self, record: &UsageRecord) -> Result<()> {
        // SQLite integers are signed 64-bit; no real call comes near.
        let clamp = |n: u64| n.min(i64::MAX as u64) as i64;
        let id = self.new_id("usage")?;
        self.conn.insert_new(
            "INSERT INTO usage(tenant_id, subject, operation, request_bytes, reply_bytes,
                               duration_us, at, id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING",
            params![
                self.tenant_id,
                record.subject,
                record.operation,
                clamp(record.request_bytes),
                clamp(record.reply_bytes),
                clamp(record.duration_us),
                record.at,
                id
            ],
        )?;
        Ok(())
    }
}

/// Usage rows held back while the cluster has no quorum, oldest first.
#[derive(Default)]
pub(super) struct HeldUsage {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    rows: VecDeque<(Tenant, UsageRecord)>,
    /// Rows dropped (the oldest) to stay within the bound, not yet logged.
    dropped: u64,
}

impl HeldUsage {
    fn hold(&self, tenant: Tenant, record: UsageRecord) {
        let mut held = self.lock();
        if held.rows.len() >= MAX_BUFFERED_USAGE_ROWS {
            held.rows.pop_front();
            if held.dropped == 0 {
                log::warn!(
                    "{MAX_BUFFERED_USAGE_ROWS} usage rows are held while the cluster has no \
                     leader (MAX_BUFFERED_USAGE_ROWS): the oldest are dropped from now on"
                );
            }
            held.dropped += 1;
        }
        held.rows.push_back((tenant, record));
    }

    /// Every row held, and how many were dropped, emptying it.
    fn take(&self) -> (Vec<(Tenant, UsageRecord)>, u64) {
        let mut held = self.lock();
        let dropped = std::mem::take(&mut held.dropped);
        (held.rows.drain(..).collect(), dropped)
    }

    fn is_empty(&self) -> bool {
        self.lock().rows.is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Store {
    /// Charges one completed call to `record.subject` in `tenant`. Returns
    /// at once: the row joins the writer's next group commit (no fsync of
    /// its own: usage is best effort), or is held while the cluster has no
    /// quorum (see the module docs). A failure to write it is logged,
    /// never the caller's problem.
    pub fn charge(&self, tenant: &Tenant, record: UsageRecord) {
        if self.quorum_lost() {
            self.held_usage.hold(tenant.clone(), record);
            return;
        }
        self.flush_usage();
        self.write_usage(tenant.clone(), vec![record]);
    }

    /// Writes the usage rows held while the cluster had no quorum, once it
    /// has one again; does nothing until then.
    pub fn flush_usage(&self) {
        if self.held_usage.is_empty() || self.quorum_lost() {
            return;
        }
        let (rows, dropped) = self.held_usage.take();
        if dropped > 0 {
            log::warn!(
                "{dropped} usage rows were dropped while the cluster had no leader \
                 (MAX_BUFFERED_USAGE_ROWS, {MAX_BUFFERED_USAGE_ROWS})"
            );
        }
        log::info!(
            "writing {} usage rows held while the cluster had no leader",
            rows.len()
        );
        let mut by_tenant: Vec<(Tenant, Vec<UsageRecord>)> = Vec::new();
        for (tenant, record) in rows {
            match by_tenant.iter_mut().find(|(t, _)| *t == tenant) {
                Some((_, records)) => records.push(record),
                None => by_tenant.push((tenant, vec![record])),
            }
        }
        for (tenant, records) in by_tenant {
            self.write_usage(tenant, records);
        }
    }

    /// Queues `records` as one write; held again if the cluster refuses it.
    fn write_usage(&self, tenant: Tenant, records: Vec<UsageRecord>) {
        let held = Arc::clone(&self.held_usage);
        let again = (tenant.clone(), records.clone());
        let queued = self.write_then(
            &tenant,
            Commit::Lazy,
            Batching::Shared,
            move |w| records.iter().try_for_each(|r| w.record_usage(r)),
            move |outcome| match outcome {
                Ok(()) => {}
                // Applied nowhere, the cluster's doing (no leader, another
                // node's write first), not the rows': kept for later. (An
                // unconfirmed write may be stored: not sent again.)
                Err(Error::Unavailable(_) | Error::UnavailableFor(..)) => {
                    let (tenant, records) = again;
                    log::debug!(
                        "{} usage rows held until the cluster has a leader",
                        records.len()
                    );
                    for r in records {
                        held.hold(tenant.clone(), r);
                    }
                }
                // Its answer lost while the cluster lost its leader: logged
                // once as that, and not sent again (it may be stored).
                Err(e @ Error::Unconfirmed(_)) => {
                    log::debug!("usage rows may or may not be written: {e}")
                }
                Err(e) => log::warn!("usage row not written: {e}"),
            },
        );
        if let Err(e) = queued {
            log::debug!("usage row not queued: {e}");
        }
    }
}

impl TenantReader<'_> {
    /// What `subject` has used in this tenant.
    pub fn usage(&self, subject: &str) -> Result<UsageTotals> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(UsageTotals::default());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT operation, count(*), sum(request_bytes), sum(reply_bytes),
                    sum(duration_us) / 1000
               FROM usage WHERE tenant_id = ?1 AND subject = ?2
              GROUP BY operation ORDER BY operation",
        )?;
        let rows = stmt.query_map(params![tenant_id, subject], |r| {
            Ok(OperationUsage {
                operation: r.get(0)?,
                calls: r.get(1)?,
                request_bytes: r.get(2)?,
                reply_bytes: r.get(3)?,
                duration_ms: r.get(4)?,
            })
        })?;
        let by_operation: Vec<OperationUsage> = rows.collect::<rusqlite::Result<_>>()?;
        let mut totals = UsageTotals::default();
        for op in &by_operation {
            totals.calls += op.calls;
            totals.request_bytes += op.request_bytes;
            totals.reply_bytes += op.reply_bytes;
            totals.duration_ms += op.duration_ms;
        }
        totals.by_operation = by_operation;
        Ok(totals)
    }
}
