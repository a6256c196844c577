//! The clients the facade knows: those registered with it (RFC 7591) and
//! those whose `client_id` is the https URL of a Client ID Metadata
//! Document, fetched on use ([`super::fetch`]) and cached.
//!
//! A client is what it declared: a name shown on the consent page and the
//! redirect URIs it may receive codes at, compared exactly. Every client
//! is public (`token_endpoint_auth_method: none`): its proof is PKCE.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::fetch::{self, Failed, MAX_CLIENT_METADATA_BYTES};

/// Redirect URIs one client may declare.
pub const MAX_REDIRECT_URIS: usize = 8;
/// Longest redirect URI (bytes), and longest metadata document URL.
pub const MAX_REDIRECT_URI_BYTES: usize = 2048;
/// Longest client name kept (bytes); a longer one is cut at a character.
pub const MAX_CLIENT_NAME_BYTES: usize = 200;
/// How long a fetched metadata document is used before it is fetched
/// again.
pub const CLIENT_METADATA_CACHE_TTL: Duration = Duration::from_secs(300);
/// Metadata documents cached at once; the oldest goes first.
pub const CLIENT_METADATA_CACHE_ENTRIES: usize = 256;

/// Schemes a redirect URI may never have: they run code or read local
/// files in the browser that follows them.
const FORBIDDEN_SCHEMES: [&str; 8] = [
    "javascript",
    "data",
    "file",
    "vbscript",
    "about",
    "blob",
    "ws",
    "wss",
];

/// A client as the consent page and the flow see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Client {
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// `true` for a metadata document, `false` for a registration.
    pub by_metadata_document: bool,
}

impl Client {
    pub fn to_record(&self) -> Value {
        json!({
            "client_id": self.client_id,
            "client_name": self.name,
            "redirect_uris": self.redirect_uris,
        })
    }

    pub fn from_record(v: &Value) -> Option<Client> {
        Some(Client {
            client_id: v.get("client_id")?.as_str()?.to_string(),
            name: v.get("client_name")?.as_str()?.to_string(),
            redirect_uris: v
                .get("redirect_uris")?
                .as_array()?
                .iter()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect(),
            by_metadata_document: false,
        })
    }

    /// The host a redirect goes to, shown on the consent page so a person
    /// sees where the code will be sent.
    pub fn redirect_host(uri: &str) -> &str {
        let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
        rest.split(['/', '?', '#']).next().unwrap_or(rest)
    }
}

/// Checks one redirect URI: absolute, no fragment, no user information,
/// and https, http to a loopback host (RFC 8252 §7.3), or an application's
/// private-use scheme (RFC 8252 §7.1).
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_REDIRECT_URI_BYTES {
        return Err(format!(
            "a redirect URI is longer than {MAX_REDIRECT_URI_BYTES} bytes"
        ));
    }
    if uri.chars().any(|c| !c.is_ascii_graphic()) {
        return Err("a redirect URI holds spaces or non-ASCII characters".into());
    }
    if uri.contains('#') {
        return Err("a redirect URI must not have a fragment".into());
    }
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err("a redirect URI must be absolute".into());
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err("a redirect URI must be absolute".into());
    }
    if FORBIDDEN_SCHEMES.contains(&scheme.as_str()) {
        return Err(format!("a redirect URI may not use the {scheme}: scheme"));
    }
    let authority = rest
        .strip_prefix("//")
        .map(|r| r.split(['/', '?']).next().unwrap_or(""));
    if authority.is_some_and(|a| a.contains('@')) {
        return Err("a redirect URI must not hold user information".into());
    }
    match scheme.as_str() {
        "https" if authority.is_some_and(|a| !a.is_empty()) => Ok(()),
        "http" => {
            let host = authority.unwrap_or("");
            let host = match host.rfind(']') {
                Some(end) => &host[..=end],
                None => host.split(':').next().unwrap_or(""),
            };
            if ["127.0.0.1", "[::1]", "localhost"].contains(&host.to_ascii_lowercase().as_str()) {
                Ok(())
            } else {
                Err("a plain http redirect URI must go to the loopback host (127.0.0.1, [::1] or localhost)".into())
            }
        }
        "https" => Err("a redirect URI must name a host".into()),
        _ => Ok(()), // an application's own scheme
    }
}

/// The client an RFC 7591 registration request declares, with its new id.
pub fn from_registration(body: &Value, client_id: String) -> Result<Client, String> {
    let uris = body
        .get("redirect_uris")
        .and_then(Value::as_array)
        .ok_or("redirect_uris (an array of the client's redirect URIs) is required")?;
    let redirect_uris = redirect_uris(uris)?;
    for (field, allowed) in [
        ("grant_types", &["authorization_code", "refresh_token"][..]),
        ("response_types", &["code"][..]),
    ] {
        if let Some(v) = body.get(field) {
            let list = v
                .as_array()
                .ok_or_else(|| format!("{field} must be an array"))?;
            if let Some(bad) = list
                .iter()
                .find(|g| !g.as_str().is_some_and(|g| allowed.contains(&g)))
            {
                return Err(format!(
                    "{field} may only hold {}; {bad} is not supported",
                    allowed.join(", ")
                ));
            }
        }
    }
    Ok(Client {
        client_id,
        name: client_name(body),
        redirect_uris,
        by_metadata_document: false,
    })
}

fn redirect_uris(uris: &[Value]) -> Result<Vec<String>, String> {
    if uris.is_empty() || uris.len() > MAX_REDIRECT_URIS {
        return Err(format!(
            "redirect_uris must hold 1 to {MAX_REDIRECT_URIS} URIs"
        ));
    }
    uris.iter()
        .map(|u| {
            let u = u.as_str().ok_or("redirect_uris must hold strings")?;
            check_redirect_uri(u)?;
            Ok(u.to_string())
        })
        .collect()
}

/// The declared name, cut to its bound and to visible characters; the
/// client id's host when none is given.
fn client_name(body: &Value) -> String {
    let raw = body
        .get("client_name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>();
    let mut name = raw.trim().to_string();
    if name.len() > MAX_CLIENT_NAME_BYTES {
        let mut end = MAX_CLIENT_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    if name.is_empty() {
        "an unnamed client".to_string()
    } else {
        name
    }
}

/// Whether `client_id` is a metadata document URL (and not a registered
/// id): `https://`, a host, and a path other than `/`.
pub fn is_metadata_url(client_id: &str) -> bool {
    client_id
        .strip_prefix("https://")
        .and_then(|r| r.split_once('/'))
        .is_some_and(|(host, path)| !host.is_empty() && !path.is_empty())
}

/// Fetched metadata documents, by URL.
pub struct MetadataDocuments {
    agent: ureq::Agent,
    cache: Mutex<HashMap<String, (Instant, Client)>>,
}

impl MetadataDocuments {
    pub fn new(agent: ureq::Agent) -> MetadataDocuments {
        MetadataDocuments {
            agent,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The client `url` describes; the error is safe to show.
    pub fn resolve(&self, url: &str) -> Result<Client, String> {
        if url.len() > MAX_REDIRECT_URI_BYTES
            || url.contains(['#', '@'])
            || url.chars().any(|c| !c.is_ascii_graphic())
        {
            return Err("the client_id is not a usable metadata document URL".into());
        }
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, client)) = cache.get(url) {
                if at.elapsed() < CLIENT_METADATA_CACHE_TTL {
                    return Ok(client.clone());
                }
            }
        }
        let fetched = fetch::json(
            self.agent
                .get(url)
                .header("Accept", "application/json")
                .call(),
            MAX_CLIENT_METADATA_BYTES,
        );
        let doc = fetched.map_err(|e| {
            log::info!("client metadata document {url} refused: {e}");
            match e {
                Failed::Inward => "the client's metadata document is on an address this server does not fetch from".to_string(),
                e => format!("the client's metadata document could not be used: {}", e.public()),
            }
        })?;
        if doc.get("client_id").and_then(Value::as_str) != Some(url) {
            return Err(
                "the client's metadata document does not name its own URL as client_id".into(),
            );
        }
        let uris = doc
            .get("redirect_uris")
            .and_then(Value::as_array)
            .ok_or("the client's metadata document has no redirect_uris")?;
        let client = Client {
            client_id: url.to_string(),
            name: client_name(&doc),
            redirect_uris: redirect_uris(uris)?,
            by_metadata_document: true,
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CLIENT_METADATA_CACHE_ENTRIES {
            if let Some(oldest) = cache
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
            {
                cache.remove(&oldest);
            }
        }
        cache.insert(url.to_string(), (Instant::now(), client.clone()));
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_follow_rfc_8252() {
        for ok in [
            "https://app.example.com/callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:8080/cb",
            "http://[::1]:9/cb",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
            "com.example.app:/oauth2redirect",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example/cb",
            "http://127.0.0.1.evil.example/cb",
            "https://app.example.com/cb#frag",
            "https://user@app.example.com/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "/relative",
            "https:///nohost",
            "https://app.example.com/a b",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_urls_need_https_and_a_path() {
        assert!(is_metadata_url(
            "https://client.example.com/oauth/client.json"
        ));
        assert!(!is_metadata_url("https://client.example.com/"));
        assert!(!is_metadata_url("http://client.example.com/x"));
        assert!(!is_metadata_url("c_0123"));
    }
}
