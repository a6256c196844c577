//! The anonymous caller: when the operator opens one memory scope to the
//! public (`ALAYASIKI_ANONYMOUS_SCOPE` with `ALAYASIKI_ANONYMOUS_TENANT`),
//! a request that carries no `Authorization` header at all acts as
//! [`Principal::anonymous`]: a reader of that scope alone, with nothing of
//! its own and no working memory. Off unless both are set.
//!
//! Only the absence of credentials is admitted this way: a request that
//! sends any `Authorization` header is authenticated as before, so a bad,
//! expired or foreign token is still refused (401) rather than quietly
//! downgraded to the public view. What the anonymous caller may not do is
//! refused where it is decided: the routes in `routes::open_to_anonymous`,
//! writing tools in `protocol::tools::invoke`, and every writing operation
//! and working memory in the service.

use crate::config::{self, ANONYMOUS_SCOPE_ENV, ANONYMOUS_TENANT_ENV};
use crate::service::Principal;
use crate::store::{MemoryScope, Tenant};

/// The anonymous caller configured by the environment, if any. A scope
/// without a tenant, a tenant without a scope, or an invalid name of
/// either is an error that stops the server at start-up.
pub fn from_env() -> Result<Option<Principal>, String> {
    configured(
        config::env(ANONYMOUS_SCOPE_ENV).as_deref(),
        config::env(ANONYMOUS_TENANT_ENV).as_deref(),
    )
}

fn configured(scope: Option<&str>, tenant: Option<&str>) -> Result<Option<Principal>, String> {
    let (scope, tenant) = match (scope, tenant) {
        (None, None) => return Ok(None),
        (Some(scope), Some(tenant)) => (scope, tenant),
        (Some(_), None) => {
            return Err(format!(
                "{ANONYMOUS_SCOPE_ENV} is set but {ANONYMOUS_TENANT_ENV} is not: name the \
                 tenant whose memory scope anonymous callers may query"
            ))
        }
        (None, Some(_)) => {
            return Err(format!(
                "{ANONYMOUS_TENANT_ENV} is set but {ANONYMOUS_SCOPE_ENV} is not: name the \
                 memory scope anonymous callers may query"
            ))
        }
    };
    let scope = MemoryScope::new(scope.trim())
        .map_err(|e| format!("{ANONYMOUS_SCOPE_ENV}={scope:?} is not valid: {e}"))?;
    let tenant = Tenant::new(tenant.trim())
        .map_err(|e| format!("{ANONYMOUS_TENANT_ENV}={tenant:?} is not valid: {e}"))?;
    Ok(Some(Principal::anonymous(tenant, scope)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_unless_both_are_set_and_valid() {
        assert!(configured(None, None).unwrap().is_none());
        let p = configured(Some("public"), Some("acme")).unwrap().unwrap();
        assert!(p.anonymous);
        assert_eq!(p.tenant.name(), "acme");
        let e = configured(Some("public"), None).unwrap_err();
        assert!(e.contains(ANONYMOUS_TENANT_ENV), "{e}");
        let e = configured(None, Some("acme")).unwrap_err();
        assert!(e.contains(ANONYMOUS_SCOPE_ENV), "{e}");
        let e = configured(Some("Public Docs"), Some("acme")).unwrap_err();
        assert!(e.contains(ANONYMOUS_SCOPE_ENV) && e.contains("a-z"), "{e}");
    }
}
