//! This server as an OAuth protected resource (RFC 9728): its resource
//! identifier, the metadata document it serves, and the `Host` values
//! it is willing to build URLs from.

use serde_json::{json, Value};

use super::{Authenticator, PERMISSIONS};

/// Where the protected resource metadata is served (RFC 9728 §3), also
/// with the path of the MCP endpoint (or of the configured resource)
/// appended.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How long clients and caches may keep the protected resource metadata.
pub const METADATA_MAX_AGE_SECS: u64 = 3600;

/// This server's resource identifier (`ALAYASIKI_RESOURCE`): an absolute
/// `http(s)` URL without query or fragment, kept exactly as configured
/// (tokens' `aud` is compared with it exactly).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    id: String,
    /// RFC 9728 §3.1: the well-known path inserted between the host and
    /// the path of the identifier.
    metadata_url: String,
    /// The identifier's path (no trailing slash), under which the metadata
    /// is also served.
    metadata_suffix: String,
}

impl Resource {
    /// Parses the value of `var`.
    pub fn parse(var: &str, value: &str) -> Result<Resource, String> {
        let bad = |why: &str| Err(format!("{var}={value:?} {why}"));
        if value
            .chars()
            .any(|c| !c.is_ascii_graphic() || c == '"' || c == '\\')
        {
            return bad("holds spaces, quotes or non-ASCII characters");
        }
        let Some((scheme, rest)) = value.split_once("://") else {
            return bad("is not an absolute http(s) URL, such as https://mcp.example.com/mcp");
        };
        if !["http", "https"].contains(&scheme.to_ascii_lowercase().as_str()) {
            return bad("is not an http(s) URL");
        }
        if value.contains('#') || value.contains('?') {
            return bad("has a fragment or a query; a resource identifier takes neither");
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.is_empty() || authority.contains('@') || clean_authority(authority).is_none() {
            return bad("needs a host name (and optional port), without user information");
        }
        let suffix = path.trim_end_matches('/');
        Ok(Resource {
            id: value.to_string(),
            metadata_url: format!("{scheme}://{authority}{METADATA_PATH}{suffix}"),
            metadata_suffix: suffix.to_string(),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }
}

/// What the metadata route answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Metadata {
    /// The document; `varies_by_host` when its resource was derived from
    /// the request's `Host` (no resource identifier configured).
    Document { body: Value, varies_by_host: bool },
    /// Not a metadata path of this server.
    NotFound,
    /// No resource identifier is configured and `Host` is not a plain
    /// `host[:port]` to derive one from.
    BadHost,
}

/// A `Host` value as a lower-cased `host[:port]`, if it is one: a DNS name
/// or IPv4 address, or a bracketed IPv6 address, and an optional decimal
/// port. Anything else (quotes, paths, user information) is refused, so
/// URLs built from it hold nothing a client sent but a host and a port.
pub fn clean_authority(host: &str) -> Option<String> {
    let host = host.trim().to_ascii_lowercase();
    let (name, port) = match host.strip_prefix('[') {
        Some(v6) => {
            let (addr, rest) = v6.split_once(']')?;
            if addr.is_empty()
                || !addr
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            {
                return None;
            }
            (None, rest)
        }
        None => {
            let (name, rest) = match host.find(':') {
                Some(i) => host.split_at(i),
                None => (host.as_str(), ""),
            };
            (Some(name), rest)
        }
    };
    if let Some(name) = name {
        let ok = !name.is_empty()
            && name.len() <= 253
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        if !ok {
            return None;
        }
    }
    if !port.is_empty() {
        let digits = port.strip_prefix(':')?;
        if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    Some(host)
}

impl Authenticator {
    /// The configured resource identifier.
    pub fn resource(&self) -> Option<&Resource> {
        self.resource.as_ref()
    }

    /// The absolute URL of the protected resource metadata: derived from
    /// the configured resource identifier, else from `host` (the request's
    /// `Host`, already checked against the allow-list) as
    /// `http://HOST/.well-known/oauth-protected-resource`. `None` when
    /// neither yields one.
    pub fn metadata_url(&self, host: Option<&str>) -> Option<String> {
        match &self.resource {
            Some(r) => Some(r.metadata_url.clone()),
            None => Some(format!("http://{}{METADATA_PATH}", clean_authority(host?)?)),
        }
    }

    /// The protected resource metadata (RFC 9728 §2) served at
    /// [`METADATA_PATH`] followed by `suffix`: `""`, `"/mcp"` or the path of
    /// the configured resource identifier.
    pub fn metadata(&self, suffix: &str, host: Option<&str>) -> Metadata {
        let own = self.resource.as_ref().map(|r| r.metadata_suffix.as_str());
        if !(suffix.is_empty() || suffix == "/mcp" || Some(suffix) == own) {
            return Metadata::NotFound;
        }
        let (resource, varies_by_host) = match &self.resource {
            Some(r) => (r.id.clone(), false),
            None => match host.and_then(clean_authority) {
                Some(h) => (format!("http://{h}"), true),
                None => return Metadata::BadHost,
            },
        };
        let scopes: Vec<&str> = PERMISSIONS.iter().map(|p| p.scope()).collect();
        let mut body = json!({
            "resource": resource,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        });
        if !self.authorization_servers.is_empty() {
            body["authorization_servers"] = json!(self.authorization_servers);
        }
        Metadata::Document {
            body,
            varies_by_host,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::auth::{VerifyingKey, DEFAULT_LEEWAY_SECS};

    fn hs256() -> Authenticator {
        Authenticator::new(
            VerifyingKey::from_secret(b"0123456789abcdef0123456789abcdef").unwrap(),
            vec!["issuer-a".into()],
            vec!["alayasiki".into()],
            DEFAULT_LEEWAY_SECS,
        )
    }

    #[test]
    fn hosts_are_taken_only_as_host_and_port() {
        assert_eq!(
            clean_authority("127.0.0.1:8080").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            clean_authority("Memory.Example").as_deref(),
            Some("memory.example")
        );
        assert_eq!(clean_authority("[::1]:80").as_deref(), Some("[::1]:80"));
        for bad in [
            "",
            "a.example:8080\"",
            "a.example:1/x",
            "user@a.example",
            "a.example:",
            "a.example:123456",
            "[::1",
            "[zz]:1",
            "a b",
            "a.example:80:80",
        ] {
            assert_eq!(clean_authority(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn resource_identifiers_give_their_metadata_url() {
        let r = Resource::parse("R", "https://mcp.example.com/mcp").unwrap();
        assert_eq!(
            r.metadata_url,
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let r = Resource::parse("R", "https://mcp.example.com:8443/").unwrap();
        assert_eq!(
            r.metadata_url,
            "https://mcp.example.com:8443/.well-known/oauth-protected-resource"
        );
        assert_eq!(r.metadata_suffix, "");
        for bad in [
            "mcp.example.com",
            "ftp://mcp.example.com",
            "https://mcp.example.com/mcp#f",
            "https://mcp.example.com/mcp?q=1",
            "https://u@mcp.example.com",
            "https:///mcp",
            "https://mcp.example.com/a b",
            "https://mcp.example.com/\"",
        ] {
            assert!(Resource::parse("R", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_names_the_resource_and_its_scopes() {
        let a = hs256()
            .with_resource(Resource::parse("R", "https://mcp.example/api/mcp").unwrap())
            .with_authorization_servers(vec!["https://auth.example".into()]);
        let expected = json!({
            "resource": "https://mcp.example/api/mcp",
            "authorization_servers": ["https://auth.example"],
            "scopes_supported": ["query:execute", "ingest:write", "admin:*"],
            "bearer_methods_supported": ["header"],
        });
        for suffix in ["", "/mcp", "/api/mcp"] {
            assert_eq!(
                a.metadata(suffix, Some("evil.example")),
                Metadata::Document {
                    body: expected.clone(),
                    varies_by_host: false
                },
                "{suffix}"
            );
        }
        assert_eq!(a.metadata("/other", None), Metadata::NotFound);
        assert_eq!(
            a.metadata_url(Some("evil.example")).unwrap(),
            "https://mcp.example/.well-known/oauth-protected-resource/api/mcp"
        );
        // Unconfigured: the resource is this server as the client named it.
        let b = hs256();
        assert_eq!(
            b.metadata("", Some("127.0.0.1:9")),
            Metadata::Document {
                body: json!({
                    "resource": "http://127.0.0.1:9",
                    "scopes_supported": ["query:execute", "ingest:write", "admin:*"],
                    "bearer_methods_supported": ["header"],
                }),
                varies_by_host: true
            }
        );
        assert_eq!(b.metadata("", Some("x\"y")), Metadata::BadHost);
        assert_eq!(
            b.metadata_url(Some("127.0.0.1:9")).unwrap(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource"
        );
        assert_eq!(b.metadata_url(Some("a/b")), None);
    }
}
