//! Usage accounting: one row per completed call, summed per caller.
//!
//! Rows are written through the writer's group commit like every other write,
//! so charging a call costs no fsync of its own. They never hold content.

use rusqlite::params;
use serde::Serialize;

use super::tenant::{TenantReader, TenantWriter};
use crate::error::Result;

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
