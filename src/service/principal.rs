//! Who is calling, and what they may do.

use crate::limits::MAX_MEMORY_SCOPES_PER_TOKEN;
use crate::store::{MemoryScope, Sight, Tenant};

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

/// One memory scope a caller is granted: read, and write when `write`
/// (and the caller may ingest at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryGrant {
    pub scope: MemoryScope,
    pub write: bool,
}

/// Which part of its tenant's memory a caller sees (see `store::sharing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryAccess {
    /// All of it: a token without a `memory_scopes` claim, stdio.
    Unrestricted,
    /// The documents of these scopes, and those the caller wrote.
    Scoped(Vec<MemoryGrant>),
}

impl MemoryAccess {
    /// The `memory_scopes` claim's items: `name` (read and write) or
    /// `name:read` (read only). A scope named twice keeps the wider grant.
    pub fn from_claim(items: &[String]) -> Result<MemoryAccess, String> {
        let mut grants: Vec<MemoryGrant> = Vec::new();
        for item in items {
            let (name, write) = match item.strip_suffix(":read") {
                Some(name) => (name, false),
                None => (item.as_str(), true),
            };
            let scope = MemoryScope::new(name)?;
            match grants.iter_mut().find(|g| g.scope == scope) {
                Some(g) => g.write |= write,
                None => grants.push(MemoryGrant { scope, write }),
            }
        }
        if grants.len() > MAX_MEMORY_SCOPES_PER_TOKEN {
            return Err(format!(
                "grants {} memory scopes; at most {MAX_MEMORY_SCOPES_PER_TOKEN} are accepted",
                grants.len()
            ));
        }
        Ok(MemoryAccess::Scoped(grants))
    }
}

/// The subject of the anonymous caller (see [`Principal::anonymous`]).
pub const ANONYMOUS_SUBJECT: &str = "anonymous";

/// An authenticated caller: the tenant whose memory they use, who they are
/// within it, what they may do (a role or a scope suffices) and which part
/// of the memory they see.
#[derive(Debug, Clone)]
pub struct Principal {
    pub tenant: Tenant,
    pub subject: String,
    pub roles: Vec<Role>,
    pub scopes: Vec<String>,
    pub memory: MemoryAccess,
    /// A request that carried no credentials, admitted because the
    /// operator opened one scope to the public.
    pub anonymous: bool,
}

impl Principal {
    /// The stdio caller: an admin of its configured tenant.
    pub fn local_admin(tenant: Tenant, subject: String) -> Principal {
        Principal {
            tenant,
            subject,
            roles: vec![Role::Admin],
            scopes: Vec::new(),
            memory: MemoryAccess::Unrestricted,
            anonymous: false,
        }
    }

    /// The caller without credentials: a reader of `scope` alone.
    pub fn anonymous(tenant: Tenant, scope: MemoryScope) -> Principal {
        Principal {
            tenant,
            subject: ANONYMOUS_SUBJECT.to_string(),
            roles: vec![Role::Reader],
            scopes: Vec::new(),
            memory: MemoryAccess::Scoped(vec![MemoryGrant {
                scope,
                write: false,
            }]),
            anonymous: true,
        }
    }

    /// What this caller's reads see.
    pub fn sight(&self) -> Sight {
        match &self.memory {
            MemoryAccess::Unrestricted => Sight::Whole,
            // The anonymous caller has nothing of its own: a token whose
            // `sub` is "anonymous" lends it nothing.
            MemoryAccess::Scoped(grants) => Sight::Limited {
                subject: (!self.anonymous).then(|| self.subject.clone()),
                scopes: grants.iter().map(|g| g.scope.clone()).collect(),
            },
        }
    }

    /// Whether this caller may store into (or share into) `scope`: an
    /// unrestricted caller may store anywhere, a scoped one where it holds
    /// a write grant.
    pub fn may_write(&self, scope: &MemoryScope) -> bool {
        match &self.memory {
            MemoryAccess::Unrestricted => true,
            MemoryAccess::Scoped(grants) => grants.iter().any(|g| g.write && &g.scope == scope),
        }
    }

    /// The scope a scoped caller's ingest goes into when it names none:
    /// its first writable one.
    pub fn default_write_scope(&self) -> Option<&MemoryScope> {
        match &self.memory {
            MemoryAccess::Unrestricted => None,
            MemoryAccess::Scoped(grants) => grants.iter().find(|g| g.write).map(|g| &g.scope),
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
            memory: MemoryAccess::Unrestricted,
            anonymous: false,
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

#[cfg(test)]
mod memory_access_tests {
    use super::*;

    fn claim(items: &[&str]) -> Result<MemoryAccess, String> {
        MemoryAccess::from_claim(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_claim_grants_read_or_write_and_a_scope_named_twice_keeps_the_wider() {
        let MemoryAccess::Scoped(g) = claim(&["team-a:read", "team-b", "team-a"]).unwrap() else {
            panic!("scoped");
        };
        assert_eq!(g.len(), 2);
        assert!(g.iter().all(|g| g.write));
        let MemoryAccess::Scoped(g) = claim(&["docs.v2:read"]).unwrap() else {
            panic!("scoped");
        };
        assert!(!g[0].write);
    }

    #[test]
    fn bad_names_and_too_many_scopes_are_refused() {
        for bad in ["", "Team", "-a", "a b", ":read", "a:write", &"x".repeat(65)] {
            assert!(claim(&[bad]).is_err(), "{bad:?}");
        }
        assert!(claim(&[&"x".repeat(64)]).is_ok());
        let names: Vec<String> = (0..=MAX_MEMORY_SCOPES_PER_TOKEN)
            .map(|i| format!("s{i}"))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert!(claim(&refs[..MAX_MEMORY_SCOPES_PER_TOKEN]).is_ok());
        assert!(claim(&refs).is_err());
    }
}
