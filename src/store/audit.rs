//! The audit trail: who did what to which document, and when. Rows never
//! hold content, only ids and small JSON details.

use rusqlite::params;

use super::tenant::TenantWriter;
use crate::error::Result;

impl TenantWriter<'_> {
    pub fn audit(
        &mut self,
        subject: &str,
        action: &str,
        target: &str,
        detail: &str,
        now: i64,
    ) -> Result<()> {
        let id = self.new_id("audit")?;
        self.conn.insert_new(
            "INSERT INTO audit(id, tenant_id, subject, action, target, detail, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            params![id, self.tenant_id, subject, action, target, detail, now],
        )?;
        Ok(())
    }
}
