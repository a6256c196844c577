//! The facade's outbound requests: the upstream provider's discovery
//! document, keys and token endpoint, and clients' metadata documents.
//!
//! Every request follows no redirect, ends within its timeout and reads
//! at most a bounded body. Metadata documents name arbitrary URLs chosen
//! by whoever starts an authorization, so their host must resolve to
//! public addresses only ([`PublicOnly`]): no loopback, private, link-local
//! or otherwise internal address is ever connected to (the check is made
//! on the addresses actually connected to, so DNS cannot swap them in
//! after it) unless the operator allows it
//! (`ALAYASIKI_OAUTH_ALLOW_PRIVATE_CLIENT_METADATA`). An operator CA file
//! (`ALAYASIKI_OAUTH_CA_FILE`) replaces the public roots for both, for
//! intranet providers.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::DefaultConnector;

/// The whole of one outbound request, connecting included.
pub const OAUTH_FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest response body read from the upstream provider (bytes).
pub const MAX_UPSTREAM_RESPONSE_BYTES: u64 = 256 * 1024;

/// Largest client metadata document read (bytes).
pub const MAX_CLIENT_METADATA_BYTES: u64 = 16 * 1024;

/// A resolver that refuses internal addresses.
#[derive(Debug)]
struct PublicOnly(DefaultResolver);

impl Resolver for PublicOnly {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let found = self.0.resolve(uri, config, timeout)?;
        let mut kept = self.0.empty();
        for addr in found.iter().filter(|a| is_public(a)) {
            kept.push(*addr);
        }
        if kept.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(kept)
    }
}

/// Whether `addr` is an address of the public internet.
pub fn is_public(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 198 && (b == 18 || b == 19)) // benchmarking
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(&SocketAddr::new(IpAddr::V4(v4), addr.port()));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link local
                || first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

/// Roots to trust instead of the public ones, from a PEM file.
pub fn ca_roots(path: &str) -> Result<Arc<Vec<ureq::tls::Certificate<'static>>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read the CA file {path}: {e}"))?;
    let certs = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect::<Vec<_>>();
    if certs.is_empty() {
        return Err(format!("the CA file {path} holds no certificate"));
    }
    Ok(Arc::new(certs))
}

/// An agent with the facade's discipline; `public_only` for URLs chosen
/// by clients.
pub fn agent(
    roots: Option<&Arc<Vec<ureq::tls::Certificate<'static>>>>,
    public_only: bool,
) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .timeout_global(Some(OAUTH_FETCH_TIMEOUT))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("alayasiki-api/", env!("CARGO_PKG_VERSION")));
    if let Some(roots) = roots {
        config = config.tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::Specific(roots.clone()))
                .build(),
        );
    }
    let config = config.build();
    if public_only {
        ureq::Agent::with_parts(
            config,
            DefaultConnector::default(),
            PublicOnly(DefaultResolver::default()),
        )
    } else {
        config.into()
    }
}

/// Why a fetch failed, for the operator's log or a client-safe message.
#[derive(Debug)]
pub enum Failed {
    /// The host resolves to no public address.
    Inward,
    /// A redirect, which is never followed.
    Redirected,
    /// Another status than 200.
    Status(u16),
    /// The body is longer than allowed.
    TooLarge,
    /// No answer within [`OAUTH_FETCH_TIMEOUT`].
    Timeout,
    /// The body is not JSON.
    NotJson,
    /// A connection or TLS failure (the detail is for the log only).
    Other(String),
}

impl Failed {
    /// A fixed phrase for people and clients: no addresses, no library
    /// errors.
    pub fn public(&self) -> &'static str {
        match self {
            Failed::Inward => "its host resolves to no public address",
            Failed::Redirected => "it answered with a redirect, which is not followed",
            Failed::Status(_) => "it did not answer 200",
            Failed::TooLarge => "its response is too long",
            Failed::Timeout => "it did not answer in time",
            Failed::NotJson => "its body is not JSON",
            Failed::Other(_) => "it could not be reached (connection or TLS failure)",
        }
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Status(s) => write!(f, "it answered HTTP {s}"),
            Failed::Other(e) => f.write_str(e),
            other => f.write_str(other.public()),
        }
    }
}

/// Runs `request`, reading at most `limit` bytes of a 200 JSON body.
pub fn json(
    request: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    limit: u64,
) -> Result<serde_json::Value, Failed> {
    let mut response = request.map_err(|e| match e {
        ureq::Error::HostNotFound => Failed::Inward,
        ureq::Error::Timeout(_) => Failed::Timeout,
        e => Failed::Other(crate::model_endpoint::excerpt(&e.to_string())),
    })?;
    let status = response.status().as_u16();
    if (300..400).contains(&status) {
        return Err(Failed::Redirected);
    }
    if status != 200 {
        return Err(Failed::Status(status));
    }
    let text = response
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_string()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => Failed::TooLarge,
            ureq::Error::Timeout(_) => Failed::Timeout,
            e => Failed::Other(crate::model_endpoint::excerpt(&e.to_string())),
        })?;
    serde_json::from_str(&text).map_err(|_| Failed::NotJson)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_not_public() {
        for inward in [
            "127.0.0.1:443",
            "10.1.2.3:443",
            "172.16.0.1:443",
            "192.168.1.1:443",
            "169.254.169.254:80",
            "100.64.0.1:443",
            "0.0.0.0:443",
            "[::1]:443",
            "[fd00::1]:443",
            "[fe80::1]:443",
            "[::ffff:127.0.0.1]:443",
            "[::ffff:10.0.0.1]:443",
        ] {
            assert!(!is_public(&inward.parse().unwrap()), "{inward}");
        }
        for public in ["93.184.216.34:443", "[2606:4700::1111]:443", "1.1.1.1:443"] {
            assert!(is_public(&public.parse().unwrap()), "{public}");
        }
    }
}
