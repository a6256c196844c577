//! Who is calling, and what they may do.

use crate::store::Tenant;

/// Roles a caller may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Query and read.
    Reader,
    /// Ingest and write.
    Ingestor,
    /// Everything.
    Admin,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "reader" => Some(Role::Reader),
            "ingestor" => Some(Role::Ingestor),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// What an operation requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Query memory, read documents and status.
    Query,
    /// Store into memory.
    Ingest,
    /// Administrative operations.
    Admin,
}

impl Permission {
    /// The OAuth-style scope that grants this permission on its own.
    pub fn scope(self) -> &'static str {
        match self {
            Permission::Query => "query:execute",
            Permission::Ingest => "ingest:write",
            Permission::Admin => "admin:*",
        }
    }
}

/// An authenticated caller: the tenant whose memory they use, who they are
/// within it, and what they may do (a role or a scope suffices).
#[derive(Debug, Clone)]
pub struct Principal {
    pub tenant: Tenant,
    pub subject: String,
    pub roles: Vec<Role>,
    pub scopes: Vec<String>,
}

impl Principal {
    /// The stdio caller: an admin of its configured tenant.
    pub fn local_admin(tenant: Tenant, subject: String) -> Principal {
        Principal {
            tenant,
            subject,
            roles: vec![Role::Admin],
            scopes: Vec::new(),
        }
    }

    pub fn permits(&self, p: Permission) -> bool {
        let by_role = self.roles.iter().any(|r| match r {
            Role::Admin => true,
            Role::Reader => p == Permission::Query,
            Role::Ingestor => p == Permission::Ingest,
        });
        let by_scope = self.scopes.iter().any(|s| s == "admin:*" || s == p.scope());
        by_role || by_scope
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(roles: Vec<Role>, scopes: &[&str]) -> Principal {
        Principal {
            tenant: Tenant::new("t").unwrap(),
            subject: "s".into(),
            roles,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn roles_grant_their_permissions_only() {
        let reader = principal(vec![Role::Reader], &[]);
        assert!(reader.permits(Permission::Query));
        assert!(!reader.permits(Permission::Ingest));
        let ingestor = principal(vec![Role::Ingestor], &[]);
        assert!(ingestor.permits(Permission::Ingest));
        assert!(!ingestor.permits(Permission::Query));
        let admin = principal(vec![Role::Admin], &[]);
        assert!(admin.permits(Permission::Admin));
    }

    #[test]
    fn a_scope_suffices_without_a_role() {
        let p = principal(vec![], &["ingest:write"]);
        assert!(p.permits(Permission::Ingest));
        assert!(!p.permits(Permission::Query));
        assert!(principal(vec![], &["admin:*"]).permits(Permission::Query));
    }
}
