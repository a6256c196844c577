//! The facade's durable state: registered clients, authorizations in
//! progress, codes and refresh tokens, in a SQLite file of their own
//! (`ALAYASIKI_OAUTH_STATE_PATH`, by default `oauth.sqlite` in the data
//! directory), apart from the memory so that no memory export, import or
//! replication ever carries credentials.
//!
//! Every value is sealed ([`super::seal`]) under the operator's state key,
//! and every row is found by the SHA-256 of its key, never the key itself:
//! a copy of the file gives neither the grants nor usable tokens. Rows
//! expire; expired ones are never returned and are swept as new ones are
//! written. A row that does not open under the current key (the key was
//! changed) is treated as absent and deleted.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::seal::Sealer;

/// Expired rows deleted per write, so sweeping never stalls a request.
const SWEEP_BATCH: usize = 256;

/// What a row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A client registered by RFC 7591 (its `client_id`).
    Client,
    /// An authorization request shown on the consent page.
    Consent,
    /// An authorization sent on to the upstream provider (our `state`).
    Pending,
    /// An authorization code issued to a client.
    Code,
    /// A code already exchanged: kept until it would have expired, so a
    /// replay is recognised and its grant revoked.
    SpentCode,
    /// A live refresh token.
    Refresh,
    /// A refresh token already rotated: presenting it again revokes its
    /// grant (RFC 9700 §4.14.2, refresh token reuse detection).
    SpentRefresh,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Client => "client",
            Kind::Consent => "consent",
            Kind::Pending => "pending",
            Kind::Code => "code",
            Kind::SpentCode => "spent_code",
            Kind::Refresh => "refresh",
            Kind::SpentRefresh => "spent_refresh",
        }
    }
}

/// The lookup form of a key: hex SHA-256.
fn digest(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The sealed rows.
pub struct Records {
    conn: Mutex<Connection>,
    sealer: Sealer,
}

impl Records {
    /// Opens (creating) the state file at `path`.
    pub fn open(path: &Path, sealer: Sealer) -> Result<Records, String> {
        let conn = Connection::open(path)
            .map_err(|e| format!("cannot open the OAuth state file {}: {e}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS oauth_records (
                 kind       TEXT    NOT NULL,
                 key        TEXT    NOT NULL,
                 grant_key  TEXT,
                 expires_at INTEGER NOT NULL,
                 sealed     BLOB    NOT NULL,
                 PRIMARY KEY (kind, key)
             ) WITHOUT ROWID;
             CREATE INDEX IF NOT EXISTS oauth_records_by_grant ON oauth_records (grant_key);
             CREATE INDEX IF NOT EXISTS oauth_records_by_expiry ON oauth_records (expires_at);",
        )
        .map_err(|e| {
            format!(
                "cannot prepare the OAuth state file {}: {e}",
                path.display()
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        Ok(Records {
            conn: Mutex::new(conn),
            sealer,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn aad(kind: Kind, key: &str) -> Vec<u8> {
        format!("{}/{key}", kind.name()).into_bytes()
    }

    /// Stores `value` under `kind`/`key` until `expires_at` (Unix ms),
    /// in the grant `grant` if it belongs to one.
    pub fn put(
        &self,
        kind: Kind,
        key: &str,
        grant: Option<&str>,
        expires_at: i64,
        value: &Value,
    ) -> Result<(), String> {
        let lookup = digest(key);
        let sealed = self
            .sealer
            .seal(&Self::aad(kind, &lookup), value.to_string().as_bytes())
            .map_err(|e| format!("no random source: {e}"))?;
        let conn = self.lock();
        conn.execute(
            "DELETE FROM oauth_records WHERE (kind, key) IN
               (SELECT kind, key FROM oauth_records WHERE expires_at < ?1 LIMIT ?2)",
            params![now_ms(), SWEEP_BATCH as i64],
        )
        .map_err(|e| e.to_string())?;
        conn.execute(
            "INSERT OR REPLACE INTO oauth_records (kind, key, grant_key, expires_at, sealed)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![kind.name(), lookup, grant.map(digest), expires_at, sealed],
        )
        .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The live value under `kind`/`key`.
    pub fn get(&self, kind: Kind, key: &str) -> Option<Value> {
        let conn = self.lock();
        self.read(&conn, kind, key)
    }

    /// The live value under `kind`/`key`, removed: exactly one caller
    /// gets a one-time value however many ask at once.
    pub fn take(&self, kind: Kind, key: &str) -> Option<Value> {
        let conn = self.lock();
        let value = self.read(&conn, kind, key);
        let _ = conn.execute(
            "DELETE FROM oauth_records WHERE kind = ?1 AND key = ?2",
            params![kind.name(), digest(key)],
        );
        value
    }

    fn read(&self, conn: &Connection, kind: Kind, key: &str) -> Option<Value> {
        let lookup = digest(key);
        let row: Option<(i64, Vec<u8>)> = conn
            .query_row(
                "SELECT expires_at, sealed FROM oauth_records WHERE kind = ?1 AND key = ?2",
                params![kind.name(), lookup],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .ok()
            .flatten();
        let (expires_at, sealed) = row?;
        if expires_at < now_ms() {
            return None;
        }
        let opened = self
            .sealer
            .open(&Self::aad(kind, &lookup), &sealed)
            .and_then(|plain| serde_json::from_slice(&plain).ok());
        if opened.is_none() {
            // Sealed under another key (or damaged): it can never be read
            // again, so it goes.
            let _ = conn.execute(
                "DELETE FROM oauth_records WHERE kind = ?1 AND key = ?2",
                params![kind.name(), lookup],
            );
        }
        opened
    }

    /// Removes every row of `grant`: its refresh tokens, spent or live.
    pub fn revoke_grant(&self, grant: &str) -> usize {
        self.lock()
            .execute(
                "DELETE FROM oauth_records WHERE grant_key = ?1",
                params![digest(grant)],
            )
            .unwrap_or(0)
    }

    /// Live rows of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.lock()
            .query_row(
                "SELECT count(*) FROM oauth_records WHERE kind = ?1 AND expires_at >= ?2",
                params![kind.name(), now_ms()],
                |r| r.get::<_, i64>(0),
            )
            .map_or(0, |n| n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_are_sealed_expire_and_do_not_survive_a_new_key() {
        let dir = std::env::temp_dir().join(format!("oauth-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("oauth.sqlite");
        let records = Records::open(&path, Sealer::new(&[1; 32]).unwrap()).unwrap();
        let later = now_ms() + 60_000;
        records
            .put(
                Kind::Refresh,
                "rt_secret",
                Some("g1"),
                later,
                &json!({"sub": "dana"}),
            )
            .unwrap();
        records
            .put(Kind::Code, "old", None, now_ms() - 1, &json!({}))
            .unwrap();
        assert_eq!(
            records.get(Kind::Refresh, "rt_secret").unwrap()["sub"],
            "dana"
        );
        assert!(
            records.get(Kind::Code, "rt_secret").is_none(),
            "kinds apart"
        );
        assert!(records.get(Kind::Code, "old").is_none(), "expired");
        drop(records);
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("rt_secret") && !text.contains("dana"));

        let records = Records::open(&path, Sealer::new(&[2; 32]).unwrap()).unwrap();
        assert!(
            records.get(Kind::Refresh, "rt_secret").is_none(),
            "other key"
        );
        records
            .put(Kind::Refresh, "a", Some("g2"), later, &json!(1))
            .unwrap();
        records
            .put(Kind::SpentRefresh, "b", Some("g2"), later, &json!(2))
            .unwrap();
        assert_eq!(records.take(Kind::Refresh, "a"), Some(json!(1)));
        assert_eq!(records.take(Kind::Refresh, "a"), None, "one time");
        assert_eq!(records.revoke_grant("g2"), 1);
        assert!(records.get(Kind::SpentRefresh, "b").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
