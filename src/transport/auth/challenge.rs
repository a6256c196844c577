//! What a refused request is told: the reason a token was not accepted,
//! as a fixed phrase that never echoes it, and the `WWW-Authenticate`
//! challenges of 401 and 403 answers (RFC 6750 §3, RFC 9728 §5.1).

use crate::service::Permission;

/// Why a request is unauthenticated (HTTP 401). The reason is a fixed
/// phrase, safe to show the client: it never echoes the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthError(pub &'static str);

impl AuthError {
    pub const MISSING: AuthError = AuthError("missing bearer token");
    pub const NOT_BEARER: AuthError = AuthError("not a Bearer token");
    pub const UNKNOWN_KEY: AuthError = AuthError("token signed by an unknown key");
    pub const WRONG_AUDIENCE: AuthError = AuthError("token audience is not this server");
    pub const NOT_THE_SECRET: AuthError =
        AuthError("not this memory browser's secret; open the URL the server wrote to ui.url");

    /// Whether the request carried no bearer credentials at all (no
    /// `Authorization` header, or another scheme): RFC 6750 §3.1 then
    /// asks for a challenge without an error code.
    pub fn lacks_credentials(&self) -> bool {
        *self == AuthError::MISSING || *self == AuthError::NOT_BEARER
    }

    /// The `WWW-Authenticate` value of a 401 (RFC 6750 §3, RFC 9728 §5.1):
    /// where the metadata is, `invalid_token` with this reason unless no
    /// credentials were sent, and the scopes the request needs.
    pub fn challenge(&self, resource_metadata: Option<&str>, scope: &str) -> String {
        let mut params = Vec::new();
        if let Some(url) = resource_metadata {
            params.push(param("resource_metadata", url));
        }
        if !self.lacks_credentials() {
            params.push(param("error", "invalid_token"));
            params.push(param("error_description", self.0));
        }
        params.push(param("scope", scope));
        format!("Bearer {}", params.join(", "))
    }
}

/// The `WWW-Authenticate` value of a 403 for a valid token lacking what
/// an operation needs (RFC 6750 §3.1 `insufficient_scope`).
pub fn insufficient_scope(
    resource_metadata: Option<&str>,
    scope: &str,
    description: &str,
) -> String {
    let mut params = vec![param("error", "insufficient_scope"), param("scope", scope)];
    if let Some(url) = resource_metadata {
        params.push(param("resource_metadata", url));
    }
    params.push(param("error_description", description));
    format!("Bearer {}", params.join(", "))
}

/// The space-separated scopes granting `permissions`.
pub fn scopes(permissions: &[Permission]) -> String {
    permissions
        .iter()
        .map(|p| p.scope())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `name="value"` with `"` and `\` escaped (RFC 9110 quoted-string).
fn param(name: &str, value: &str) -> String {
    let mut out = format!("{name}=\"");
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::auth::BASIC_PERMISSIONS;

    #[test]
    fn challenges_follow_rfc_6750_and_9728() {
        let url = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            AuthError("token expired").challenge(Some(url), "query:execute ingest:write"),
            format!(
                "Bearer resource_metadata=\"{url}\", error=\"invalid_token\", \
                 error_description=\"token expired\", scope=\"query:execute ingest:write\""
            )
        );
        // No credentials: no error code (RFC 6750 §3.1).
        assert_eq!(
            AuthError::MISSING.challenge(Some(url), "query:execute"),
            format!("Bearer resource_metadata=\"{url}\", scope=\"query:execute\"")
        );
        assert_eq!(
            AuthError::NOT_BEARER.challenge(None, "query:execute"),
            "Bearer scope=\"query:execute\""
        );
        assert_eq!(
            insufficient_scope(Some(url), "ingest:write", "needs ingest:write"),
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"ingest:write\", \
                 resource_metadata=\"{url}\", error_description=\"needs ingest:write\""
            )
        );
        assert_eq!(param("x", "a\"b\\c"), "x=\"a\\\"b\\\\c\"");
        assert_eq!(scopes(&BASIC_PERMISSIONS), "query:execute ingest:write");
    }
}
