//! Where a cluster is: `rqlite://[user:password@]host:port[,host:port…]`.
//!
//! `rqlite://` speaks HTTP to the nodes, `rqlites://` HTTPS (verified
//! against the platform's web roots, or only against the PEM file named by
//! `?ca=PATH`). Credentials, when given, go to every node as HTTP basic
//! auth; they never appear in [`ClusterAddress::redacted`], the form logs
//! and status use.
//!
//! Must never: accept an address it would have to guess at (a missing
//! port, an empty host, a path, an unknown option), or hold more nodes
//! than [`MAX_CLUSTER_NODES`].

use crate::limits::MAX_CLUSTER_NODES;

/// A parsed cluster address.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterAddress {
    /// Each node's HTTP API, as `http://host:port` or `https://host:port`.
    pub nodes: Vec<String>,
    /// `user:password` for HTTP basic auth, when given.
    pub credentials: Option<(String, String)>,
    /// A PEM file of the certificate authorities to trust, for `rqlites://`.
    pub ca_file: Option<String>,
}

// Debug would print the password: show the redacted form instead.
impl std::fmt::Debug for ClusterAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClusterAddress({})", self.redacted())
    }
}

impl ClusterAddress {
    /// Parses `rqlite://…` or `rqlites://…`.
    pub fn parse(text: &str) -> Result<ClusterAddress, String> {
        let (scheme, rest) = if let Some(rest) = text.strip_prefix("rqlite://") {
            ("http", rest)
        } else if let Some(rest) = text.strip_prefix("rqlites://") {
            ("https", rest)
        } else {
            return Err("a cluster address starts with rqlite:// or rqlites://".into());
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (credentials, hosts) = match rest.rsplit_once('@') {
            Some((userinfo, hosts)) => {
                let (user, password) = userinfo
                    .split_once(':')
                    .ok_or("cluster credentials are written user:password@")?;
                if user.is_empty() {
                    return Err("the cluster user name is empty".into());
                }
                (Some((user.to_string(), password.to_string())), hosts)
            }
            None => (None, rest),
        };
        let mut nodes = Vec::new();
        for host in hosts.split(',') {
            nodes.push(format!("{scheme}://{}", check_host(host)?));
        }
        if nodes.len() > MAX_CLUSTER_NODES {
            return Err(format!(
                "a cluster address names at most {MAX_CLUSTER_NODES} nodes"
            ));
        }
        let mut ca_file = None;
        for option in query.into_iter().flat_map(|q| q.split('&')) {
            match option.split_once('=') {
                Some(("ca", path)) if !path.is_empty() && scheme == "https" => {
                    ca_file = Some(path.to_string())
                }
                Some(("ca", _)) => return Err("ca=PATH needs rqlites:// and a path".into()),
                _ => return Err(format!("unknown cluster address option {option:?}")),
            }
        }
        Ok(ClusterAddress {
            nodes,
            credentials,
            ca_file,
        })
    }

    /// The address without its password, for logs and status.
    pub fn redacted(&self) -> String {
        let scheme = if self.is_tls() { "rqlites" } else { "rqlite" };
        let user = match &self.credentials {
            Some((user, _)) => format!("{user}:***@"),
            None => String::new(),
        };
        let hosts: Vec<&str> = self
            .nodes
            .iter()
            .map(|n| n.split_once("://").map_or(n.as_str(), |(_, h)| h))
            .collect();
        format!("{scheme}://{user}{}", hosts.join(","))
    }

    pub fn is_tls(&self) -> bool {
        self.nodes.first().is_some_and(|n| n.starts_with("https:"))
    }
}

/// `host:port`, with a host of letters, digits, `.`, `-` (or a bracketed
/// IPv6 address) and a port from 1 to 65535.
fn check_host(host: &str) -> Result<&str, String> {
    let bad = || format!("{host:?} is not host:port");
    let (name, port) = host.rsplit_once(':').ok_or_else(bad)?;
    let name_ok = if let Some(v6) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        !v6.is_empty() && v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
    } else {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    };
    let port_ok = port.parse::<u16>().is_ok_and(|p| p > 0);
    if name_ok && port_ok {
        Ok(host)
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_credentials_and_tls() {
        let a = ClusterAddress::parse("rqlite://h1:4001,10.0.0.2:4001,[::1]:4003").unwrap();
        assert_eq!(
            a.nodes,
            [
                "http://h1:4001",
                "http://10.0.0.2:4001",
                "http://[::1]:4003"
            ]
        );
        assert!(a.credentials.is_none() && !a.is_tls());

        let a = ClusterAddress::parse("rqlites://memory:s3:cret@db-1:4001?ca=/etc/ca.pem").unwrap();
        assert_eq!(a.nodes, ["https://db-1:4001"]);
        assert_eq!(
            a.credentials,
            Some(("memory".to_string(), "s3:cret".to_string()))
        );
        assert_eq!(a.ca_file.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(a.redacted(), "rqlites://memory:***@db-1:4001");
        assert!(!format!("{a:?}").contains("s3:cret"));
    }

    #[test]
    fn what_it_refuses() {
        for bad in [
            "http://h:4001",
            "rqlite://",
            "rqlite://h",
            "rqlite://h:0",
            "rqlite://h:99999",
            "rqlite://h:4001/db",
            "rqlite://h:4001,",
            "rqlite://:pw@h:4001",
            "rqlite://user@h:4001",
            "rqlite://h:4001?ca=/x.pem",
            "rqlites://h:4001?ca=",
            "rqlites://h:4001?level=none",
        ] {
            assert!(ClusterAddress::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn at_most_max_cluster_nodes() {
        let hosts = |n: usize| {
            (0..n)
                .map(|i| format!("h{i}:4001"))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert!(ClusterAddress::parse(&format!("rqlite://{}", hosts(MAX_CLUSTER_NODES))).is_ok());
        assert!(
            ClusterAddress::parse(&format!("rqlite://{}", hosts(MAX_CLUSTER_NODES + 1))).is_err()
        );
    }
}
