//! Where a request may come from: the `Origin` and `Host` checks that keep
//! a web page in the user's browser from talking to the server (DNS
//! rebinding, cross-site requests).
//!
//! - A request carrying an `Origin` header was sent by a browser on behalf
//!   of some page. It is refused unless that origin is listed, exactly, in
//!   `ALAYASIKI_MCP_ALLOWED_ORIGINS`. Non-browser clients send no `Origin`
//!   and are not affected.
//! - `Host` must name this server: the bound address, a loopback name with
//!   the bound port when bound to loopback, or a name listed in
//!   `ALAYASIKI_API_ALLOWED_HOSTS` (what a reverse proxy forwards).
//!
//! Both checks run before authentication, so a foreign page learns nothing,
//! not even whether its token would have been accepted.

use std::net::SocketAddr;

use crate::config::{ALLOWED_HOSTS_ENV, ALLOWED_ORIGINS_ENV};

/// The allow-lists, resolved once at start-up.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    origins: Vec<String>,
    /// Lower-cased `host:port` pairs that match exactly.
    host_ports: Vec<String>,
    /// Lower-cased names that match with any port (configured without one).
    host_names: Vec<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Origin,
    Host,
}

impl OriginPolicy {
    /// The policy for a server bound to `bound`, with the configured lists
    /// (comma-separated; blanks ignored).
    pub fn new(bound: SocketAddr, origins: &str, hosts: &str) -> OriginPolicy {
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_string)
                .collect()
        };
        let port = bound.port();
        let mut host_ports = Vec::new();
        if !bound.ip().is_unspecified() {
            host_ports.push(authority(bound));
        }
        if bound.ip().is_loopback() || bound.ip().is_unspecified() {
            // A local client may name the loopback interface any usual way.
            for name in ["localhost", "127.0.0.1", "[::1]"] {
                host_ports.push(format!("{name}:{port}"));
            }
        }
        let mut host_names = Vec::new();
        for entry in list(hosts) {
            let entry = entry.to_ascii_lowercase();
            if has_port(&entry) {
                host_ports.push(entry);
            } else {
                host_names.push(entry);
            }
        }
        OriginPolicy {
            origins: list(origins),
            host_ports,
            host_names,
        }
    }

    /// The policy from the environment.
    pub fn from_env(bound: SocketAddr) -> OriginPolicy {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        OriginPolicy::new(bound, &var(ALLOWED_ORIGINS_ENV), &var(ALLOWED_HOSTS_ENV))
    }

    /// Checks one request's `Origin` and `Host` header values.
    pub fn check(&self, origin: Option<&str>, host: Option<&str>) -> Result<(), Refusal> {
        if let Some(origin) = origin {
            // Exact comparison: `https://a.example` does not allow
            // `https://a.example:443` or `https://a.example.evil`.
            if !self.origins.iter().any(|o| o == origin) {
                return Err(Refusal::Origin);
            }
        }
        let host = host
            .map(|h| h.trim().to_ascii_lowercase())
            .unwrap_or_default();
        if host.is_empty() {
            return Err(Refusal::Host);
        }
        if self.host_ports.contains(&host) {
            return Ok(());
        }
        let name = strip_port(&host);
        if self.host_names.iter().any(|n| n == name) {
            return Ok(());
        }
        Err(Refusal::Host)
    }
}

fn authority(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

/// `name:port` or `[v6]:port`, as opposed to a bare name or `[v6]`.
fn has_port(host: &str) -> bool {
    match host.rfind(']') {
        Some(close) => host[close..].contains(':'),
        None => host.contains(':'),
    }
}

fn strip_port(host: &str) -> &str {
    if has_port(host) {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    } else {
        host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> OriginPolicy {
        OriginPolicy::new(
            "127.0.0.1:8080".parse().unwrap(),
            "https://app.example, http://localhost:3000",
            "memory.example.com, proxy.internal:8443",
        )
    }

    #[test]
    fn requests_without_origin_pass_when_host_names_the_server() {
        let p = local();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert_eq!(p.check(None, Some(host)), Ok(()), "{host}");
        }
    }

    #[test]
    fn origins_must_match_exactly() {
        let p = local();
        let host = Some("127.0.0.1:8080");
        assert_eq!(p.check(Some("https://app.example"), host), Ok(()));
        assert_eq!(p.check(Some("http://localhost:3000"), host), Ok(()));
        for bad in [
            "https://app.example:443",
            "https://app.example.evil",
            "http://app.example",
            "null",
            "",
        ] {
            assert_eq!(p.check(Some(bad), host), Err(Refusal::Origin), "{bad}");
        }
    }

    #[test]
    fn foreign_or_missing_host_is_refused() {
        let p = local();
        for bad in ["evil.example:8080", "127.0.0.1:9999", "localhost", ""] {
            assert_eq!(p.check(None, Some(bad)), Err(Refusal::Host), "{bad}");
        }
        assert_eq!(p.check(None, None), Err(Refusal::Host));
    }

    #[test]
    fn configured_names_match_with_any_port_unless_one_is_given() {
        let p = local();
        assert_eq!(p.check(None, Some("memory.example.com")), Ok(()));
        assert_eq!(p.check(None, Some("memory.example.com:443")), Ok(()));
        assert_eq!(p.check(None, Some("proxy.internal:8443")), Ok(()));
        assert_eq!(p.check(None, Some("proxy.internal:80")), Err(Refusal::Host));
    }

    #[test]
    fn wildcard_bind_accepts_only_loopback_names_and_configured_hosts() {
        let p = OriginPolicy::new("0.0.0.0:8080".parse().unwrap(), "", "");
        assert_eq!(p.check(None, Some("localhost:8080")), Ok(()));
        assert_eq!(p.check(None, Some("0.0.0.0:8080")), Err(Refusal::Host));
        assert_eq!(p.check(None, Some("10.1.2.3:8080")), Err(Refusal::Host));
    }
}
