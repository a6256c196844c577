//! Who a person signed in upstream is here: the rule that maps the
//! upstream provider's ID-token claims to a tenant, roles and memory
//! scopes (`ALAYASIKI_OAUTH_CLAIMS_MAP`).
//!
//! The rule is a list of clauses separated by `;`, each
//! `CONDITION => ASSIGNMENTS`:
//! - a condition is `claim=value` (a string claim equal to `value`, or an
//!   array claim holding it, such as `groups`), `claim=*` (the claim is
//!   present and not empty), or `*` (anyone). The pseudo-claim
//!   `email_domain` is the part of `email` after `@`, and only when the
//!   provider says `email_verified: true`;
//! - assignments are `tenant=NAME`, `roles=a,b` (`reader`, `ingestor`,
//!   `admin`) and `memory_scopes=x,y`, separated by spaces.
//!
//! Every clause whose condition holds adds its roles and memory scopes;
//! the tenant is the first matching clause's. Someone no clause gives a
//! tenant to is refused: the facade never lets a person in by default.
//!
//! Example: `email_domain=example.com => tenant=acme roles=reader,ingestor;
//! groups=memory-admins => roles=admin`.

use serde_json::Value;

use crate::service::Role;
use crate::store::Tenant;

/// Clauses a rule may hold.
pub const MAX_CLAIMS_MAP_CLAUSES: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Condition {
    Anyone,
    Present(String),
    Equals(String, String),
}

#[derive(Debug, Clone, PartialEq)]
struct Clause {
    condition: Condition,
    tenant: Option<String>,
    roles: Vec<String>,
    memory_scopes: Vec<String>,
}

/// The configured rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimsMap {
    clauses: Vec<Clause>,
}

/// What the rule gives a signed-in person.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    pub tenant: String,
    pub roles: Vec<String>,
    pub memory_scopes: Vec<String>,
}

impl ClaimsMap {
    /// Parses the rule; errors name the clause for the operator.
    pub fn parse(var: &str, text: &str) -> Result<ClaimsMap, String> {
        let mut clauses = Vec::new();
        for raw in text.split(';').map(str::trim).filter(|c| !c.is_empty()) {
            let bad = |why: &str| format!("{var}: the clause {raw:?} {why}");
            let (condition, assignments) = raw
                .split_once("=>")
                .ok_or_else(|| bad("needs `CONDITION => ASSIGNMENTS`"))?;
            let condition = match condition.trim() {
                "*" => Condition::Anyone,
                c => {
                    let (claim, value) = c
                        .split_once('=')
                        .ok_or_else(|| bad("has a condition that is not `claim=value` or `*`"))?;
                    let (claim, value) = (claim.trim(), value.trim());
                    if claim.is_empty() || value.is_empty() {
                        return Err(bad("has an empty claim name or value"));
                    }
                    if value == "*" {
                        Condition::Present(claim.to_string())
                    } else {
                        Condition::Equals(claim.to_string(), value.to_string())
                    }
                }
            };
            let mut clause = Clause {
                condition,
                tenant: None,
                roles: Vec::new(),
                memory_scopes: Vec::new(),
            };
            for assignment in assignments.split_whitespace() {
                let (name, value) = assignment
                    .split_once('=')
                    .ok_or_else(|| bad("has an assignment that is not `name=value`"))?;
                let list = || {
                    value
                        .split(',')
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                };
                match name {
                    "tenant" => {
                        Tenant::new(value).map_err(|e| bad(&format!("names a tenant that {e}")))?;
                        clause.tenant = Some(value.to_string());
                    }
                    "roles" => {
                        for role in list() {
                            if Role::parse(&role).is_none() {
                                return Err(bad(&format!(
                                    "names the role {role:?}, not reader, ingestor or admin"
                                )));
                            }
                            clause.roles.push(role);
                        }
                    }
                    "memory_scopes" => {
                        for name in list() {
                            let bare = name.strip_suffix(":read").unwrap_or(&name);
                            crate::store::MemoryScope::new(bare).map_err(|e| {
                                bad(&format!("names the memory scope {name:?}: {e}"))
                            })?;
                            clause.memory_scopes.push(name);
                        }
                    }
                    other => {
                        return Err(bad(&format!(
                            "assigns {other:?}; only tenant, roles and memory_scopes"
                        )))
                    }
                }
            }
            clauses.push(clause);
        }
        if clauses.is_empty() {
            return Err(format!(
                "{var} holds no clause; for example \
                 `email_domain=example.com => tenant=acme roles=reader,ingestor`"
            ));
        }
        if clauses.len() > MAX_CLAIMS_MAP_CLAUSES {
            return Err(format!(
                "{var} holds {} clauses; at most {MAX_CLAIMS_MAP_CLAUSES}",
                clauses.len()
            ));
        }
        Ok(ClaimsMap { clauses })
    }

    /// What `claims` (an ID token's) are given, or `None`: no clause gives
    /// them a tenant.
    pub fn map(&self, claims: &Value) -> Option<Mapped> {
        let mut tenant = None;
        let mut roles: Vec<String> = Vec::new();
        let mut memory_scopes: Vec<String> = Vec::new();
        for clause in self.clauses.iter().filter(|c| holds(&c.condition, claims)) {
            if tenant.is_none() {
                tenant.clone_from(&clause.tenant);
            }
            for r in &clause.roles {
                if !roles.contains(r) {
                    roles.push(r.clone());
                }
            }
            for s in &clause.memory_scopes {
                if !memory_scopes.contains(s) {
                    memory_scopes.push(s.clone());
                }
            }
        }
        Some(Mapped {
            tenant: tenant?,
            roles,
            memory_scopes,
        })
    }
}

/// The value of `claim`, with `email_domain` derived from a verified email.
fn claim<'a>(claims: &'a Value, name: &str) -> Option<Vec<&'a str>> {
    if name == "email_domain" {
        if claims.get("email_verified") != Some(&Value::Bool(true)) {
            return None;
        }
        let email = claims.get("email")?.as_str()?;
        return email.rsplit_once('@').map(|(_, d)| vec![d]);
    }
    match claims.get(name)? {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(items) => Some(items.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn holds(condition: &Condition, claims: &Value) -> bool {
    match condition {
        Condition::Anyone => true,
        Condition::Present(name) => claim(claims, name).is_some_and(|v| !v.is_empty()),
        Condition::Equals(name, want) => claim(claims, name).is_some_and(|values| {
            values.iter().any(|v| {
                // Domains compare without case; other claims exactly.
                if name == "email_domain" {
                    v.eq_ignore_ascii_case(want)
                } else {
                    v == want
                }
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const RULE: &str = "email_domain=example.com => tenant=acme roles=reader,ingestor \
                        memory_scopes=team-a; groups=memory-admins => roles=admin; \
                        groups=* => memory_scopes=grouped";

    #[test]
    fn clauses_add_roles_and_the_first_gives_the_tenant() {
        let map = ClaimsMap::parse("V", RULE).unwrap();
        let dana = json!({"email": "dana@Example.com".to_lowercase(), "email_verified": true,
                          "groups": ["memory-admins"]});
        let m = map.map(&dana).unwrap();
        assert_eq!(m.tenant, "acme");
        assert_eq!(m.roles, ["reader", "ingestor", "admin"]);
        assert_eq!(m.memory_scopes, ["team-a", "grouped"]);
        // An unverified email proves nothing.
        let unverified = json!({"email": "eve@example.com", "email_verified": false});
        assert_eq!(map.map(&unverified), None);
        // A look-alike domain is another domain.
        let other = json!({"email": "eve@example.com.evil.test", "email_verified": true});
        assert_eq!(map.map(&other), None);
    }

    #[test]
    fn bad_rules_are_refused_with_the_clause() {
        for bad in [
            "",
            "tenant=acme",
            "x => tenant=acme",
            "a=b => tenant=",
            "a=b => roles=owner",
            "a=b => colour=blue",
            "a=b => memory_scopes=Not_A_Scope!",
        ] {
            let e = ClaimsMap::parse("V", bad).unwrap_err();
            assert!(e.starts_with("V"), "{e}");
        }
        assert!(ClaimsMap::parse("V", "* => tenant=all roles=reader").is_ok());
    }
}
