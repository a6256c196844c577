//! Retention: documents that have outlived their welcome.
//!
//! A document stops being visible the moment it is past its own
//! `expires_at` (set at ingestion) or older than the tenant-wide retention
//! period ([`Store::set_retention`]); every read filters with
//! `tenant::VISIBLE`, so nothing waits for a sweep to hide it. The sweep
//! ([`Store::purge_expired`], run by the upkeep thread every second) then
//! forgets such documents for real, through the same
//! `TenantWriter::forget_document` as every other way of forgetting, so
//! their chunks, vectors, graph evidence and originals go too and the
//! audit trail says retention removed them.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use rusqlite::params;

use super::tenant::{PooledConn, TenantReader, TenantWriter, Visibility};
use super::{Forgotten, Store, Tenant};
use crate::error::Result;

/// The subject recorded in the audit trail for documents retention forgot.
pub const RETENTION_SUBJECT: &str = "alayasiki:retention";

/// The retention period, shared by readers and the sweep (0 = none).
#[derive(Debug, Default)]
pub(super) struct RetentionPeriod(AtomicI64);

impl Store {
    /// Sets the retention period: documents older than it are invisible at
    /// once and purged by the upkeep thread. `None` keeps everything.
    pub fn set_retention(&self, period: Option<Duration>) {
        let ms = period.map_or(0, |p| p.as_millis().min(i64::MAX as u128) as i64);
        self.retention.0.store(ms, Ordering::Relaxed);
    }

    /// What reads may see right now.
    pub(super) fn visibility(&self) -> Visibility {
        let now = crate::clock::now_ms();
        let retention = self.retention.0.load(Ordering::Relaxed);
        Visibility {
            now,
            since: if retention > 0 {
                now.saturating_sub(retention)
            } else {
                i64::MIN
            },
        }
    }

    /// Tenants holding at least one document that is no longer visible.
    /// Both probes are index look-ups, so the idle worker can ask often.
    pub fn tenants_with_expired(&self) -> Result<Vec<Tenant>> {
        let v = self.visibility();
        let conn = PooledConn::new(self.readers.get()?, &self.readers);
        let mut stmt = conn.prepare_cached(
            "SELECT name FROM tenants t
              WHERE EXISTS (SELECT 1 FROM documents d
                             WHERE d.tenant_id = t.id AND d.expires_at <= ?1)
                 OR EXISTS (SELECT 1 FROM documents d
                             WHERE d.tenant_id = t.id AND d.created_at < ?2)",
        )?;
        let names = stmt
            .query_map(params![v.now, v.since], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(names.iter().filter_map(|n| Tenant::new(n).ok()).collect())
    }

    /// Forgets up to `limit` of `tenant`'s expired documents in one
    /// transaction, oldest first; `context_bytes` is the neighbour context
    /// ingestion cuts (see `forget_document`).
    pub fn purge_expired(
        &self,
        tenant: &Tenant,
        limit: usize,
        context_bytes: usize,
    ) -> Result<Vec<Forgotten>> {
        let v = self.visibility();
        self.write(tenant, move |w| {
            let mut done = Vec::new();
            for key in w.expired_documents(v, limit)? {
                // A current version takes its history with it; an old
                // version that ages out alone leaves the chain shorter.
                let versions = if w.is_superseded(key)? {
                    vec![key]
                } else {
                    w.version_chain(key)?
                };
                for key in versions {
                    done.extend(w.forget_document(
                        key,
                        RETENTION_SUBJECT,
                        "retention",
                        context_bytes,
                        v.now,
                    )?);
                }
            }
            Ok(done)
        })
    }
}

impl TenantWriter<'_> {
    /// Internal keys of up to `limit` documents invisible under `v`, oldest
    /// first.
    fn expired_documents(&self, v: Visibility, limit: usize) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM documents
              WHERE tenant_id = ?1 AND (expires_at <= ?2 OR created_at < ?3)
              ORDER BY id LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![self.tenant_id, v.now, v.since, limit as i64], |r| {
            r.get(0)
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl TenantReader<'_> {
    /// Documents hidden by expiry or the retention period that the sweep
    /// has not purged yet (reported in a query's `explain.excluded`).
    pub fn expired_count(&self) -> Result<usize> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(0);
        };
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM documents
                  WHERE tenant_id = ?1 AND (expires_at <= ?2 OR created_at < ?3)",
            )?
            .query_row(
                params![tenant_id, self.visible.now, self.visible.since],
                |r| r.get(0),
            )?;
        Ok(n as usize)
    }

    /// Whether a document that existed at `at` is now hidden by expiry or
    /// the retention period but not yet purged: anything built from the
    /// data at `at` (a community snapshot) may then quote it. Errs towards
    /// yes when the retention period changed in between.
    pub(super) fn expired_since(&self, at: i64) -> Result<bool> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(false);
        };
        let v = self.visible;
        // Two probes, each a range of its own index: expiries that fell
        // due since `at`, and documents older than the retention period.
        // As one OR, SQLite walked every document created before `at` (the
        // whole store, for a fresh snapshot): half of a `global` query's
        // time at 100k documents.
        Ok(self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM documents
                                 WHERE tenant_id = ?1 AND expires_at > ?2 AND expires_at <= ?3
                                   AND created_at <= ?2)
                     OR EXISTS (SELECT 1 FROM documents
                                 WHERE tenant_id = ?1 AND created_at < ?4 AND created_at <= ?2)",
            )?
            .query_row(params![tenant_id, at, v.now, v.since], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::now_ms;
    use crate::store::test_support::{plain_document, temp_store};
    use crate::store::NewDocument;

    /// Admits a document as if written at `created_at`.
    fn admit(store: &Store, tenant: &Tenant, text: &str, created_at: i64, expires_at: Option<i64>) {
        let doc = NewDocument {
            expires_at,
            ..plain_document(text.as_bytes().to_vec())
        };
        store
            .write(tenant, move |w| w.admit(doc, created_at))
            .unwrap();
    }

    fn expired_since(store: &Store, tenant: &Tenant, at: i64) -> bool {
        store.reader(tenant).unwrap().expired_since(at).unwrap()
    }

    #[test]
    fn a_snapshot_is_stale_once_something_it_saw_expires_or_ages_out() {
        let (dir, store) = temp_store("alayasiki-expired-since");
        let t = Tenant::new("t").unwrap();
        // Times relative to now, seconds apart, so no clock tick matters.
        let now = now_ms();
        admit(&store, &t, "kept", now - 10_000, None);
        admit(&store, &t, "brief", now - 10_000, Some(now - 5_000));
        assert!(
            expired_since(&store, &t, now - 8_000),
            "a document the snapshot saw has expired since"
        );
        assert!(
            !expired_since(&store, &t, now - 4_000),
            "a snapshot built after the expiry never saw the document"
        );
        admit(&store, &t, "after", now - 3_000, Some(now - 2_000));
        assert!(
            !expired_since(&store, &t, now - 4_000),
            "documents created after the snapshot do not count"
        );
        // The retention period: "kept" is now older than it.
        store.set_retention(Some(Duration::from_secs(9)));
        assert!(expired_since(&store, &t, now - 4_000));
        store.set_retention(Some(Duration::from_secs(60)));
        assert!(!expired_since(&store, &t, now - 4_000));
        store.close();
        std::fs::remove_dir_all(dir).ok();
    }
}
