//! The client side of a local model server: one JSON `POST` with a
//! deadline and a bounded response, shared by the HTTP embedder
//! ([`crate::embed::http`]) and the LLM client ([`crate::llm`]).
//!
//! Owns the wire-level failure modes: an unreachable server, a deadline
//! that covers connecting, sending and reading the whole body (a server
//! that drips bytes cannot hold a thread past it), a body larger than the
//! caller's limit (refused without being buffered whole), a non-2xx status
//! and a body that is not JSON. Errors keep their details for the log;
//! callers turn them into client-safe messages (no URL, key or body).
//!
//! Must never: follow the server into unbounded memory or time, or put the
//! API key anywhere but the `Authorization` header.

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;

/// Which wire format a model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI-compatible (`/v1/embeddings`, `/v1/chat/completions`).
    OpenAi,
    /// Ollama (`/api/embed`, `/api/chat`).
    Ollama,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Ollama => "ollama",
        }
    }

    /// Parses the value of an `*_API` variable named `var`.
    pub fn parse(var: &str, value: &str) -> Result<Api, String> {
        match value {
            "openai" => Ok(Api::OpenAi),
            "ollama" => Ok(Api::Ollama),
            other => Err(format!("{var}={other:?} is not one of: openai, ollama")),
        }
    }
}

/// Checks that `url` (the value of `var`) is an http(s) URL with a host,
/// a port (if given) from 1 to 65535, and no spaces or control characters:
/// a URL no request could reach is refused at start-up, not found out on
/// the first ingest.
pub fn check_url(var: &str, url: &str) -> Result<(), String> {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return Err(format!("{var} must be an http:// or https:// URL"));
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{var} must be a URL without spaces or control characters"
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Credentials, if any, come before the last `@`.
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let (host, port) = match host_port.rsplit_once(':') {
        // An IPv6 literal's colons are inside its brackets.
        Some((h, p)) if !p.contains(']') => (h, Some(p)),
        _ => (host_port, None),
    };
    if host.is_empty() || host == "[]" {
        return Err(format!(
            "{var} names no host (it must be like http://HOST:PORT/PATH)"
        ));
    }
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        if !matches!(port.parse::<u16>(), Ok(1..)) {
            return Err(format!("{var} has a port outside 1-65535"));
        }
    }
    Ok(())
}

/// Parses a `*_TIMEOUT_MS` value: a positive number of milliseconds, at
/// most `max_ms`.
pub fn parse_timeout_ms(var: &str, value: &str, max_ms: u64) -> Result<Duration, String> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|t| (1..=max_ms).contains(t))
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{var} must be a number of milliseconds from 1 to {max_ms}"))
}

/// Why a call failed. Every variant's text is for the log only: it may
/// hold transport details or an excerpt of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointError {
    /// Connecting, sending or reading failed, or the deadline passed.
    Unreachable(String),
    /// The body was longer than the caller's limit (bytes).
    TooLarge(u64),
    /// A status outside 2xx, with an excerpt of the body.
    Status(u16, String),
    /// The body is not JSON (an excerpt of it).
    NotJson(String),
    /// The body is JSON, not of the shape asked for (why).
    Shape(String),
}

impl std::fmt::Display for EndpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndpointError::Unreachable(d) => write!(f, "unreachable or timed out: {d}"),
            EndpointError::TooLarge(n) => write!(f, "response longer than {n} bytes"),
            EndpointError::Status(s, body) => write!(f, "HTTP {s}: {body}"),
            EndpointError::NotJson(body) => write!(f, "response is not JSON: {body}"),
            EndpointError::Shape(why) => write!(f, "response has an unexpected shape: {why}"),
        }
    }
}

/// One endpoint of a model server.
pub struct ModelEndpoint {
    url: String,
    api_key: Option<String>,
    agent: ureq::Agent,
}

impl ModelEndpoint {
    /// An endpoint whose every call (connect, send, read the whole body)
    /// ends within `timeout`.
    pub fn new(url: String, api_key: Option<String>, timeout: Duration) -> ModelEndpoint {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            // A redirect is answered as its status: following it would
            // turn the POST into a GET of somewhere else.
            .max_redirects(0)
            .build()
            .into();
        ModelEndpoint {
            url,
            api_key,
            agent,
        }
    }

    /// The URL (for the operator's log; never for a client).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs `body` as JSON and returns the response parsed as JSON,
    /// reading at most `max_bytes` of it.
    pub fn post_json(&self, body: &Value, max_bytes: u64) -> Result<Value, EndpointError> {
        self.post_for(body, max_bytes)
    }

    /// POSTs `body` as JSON and parses the response straight into `T`,
    /// reading at most `max_bytes` of it: a typed parse holds the values,
    /// not a tree of them (a tree of small numbers is some 16 times the
    /// text).
    pub fn post_for<T: DeserializeOwned>(
        &self,
        body: &Value,
        max_bytes: u64,
    ) -> Result<T, EndpointError> {
        let mut req = self.agent.post(&self.url);
        if let Some(key) = &self.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let unreachable = |e: ureq::Error| match e {
            ureq::Error::BodyExceedsLimit(n) => EndpointError::TooLarge(n),
            e => EndpointError::Unreachable(excerpt(&e.to_string())),
        };
        let mut response = req.send_json(body).map_err(unreachable)?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(max_bytes)
            .lossy_utf8(true)
            .read_to_string()
            .map_err(unreachable)?;
        if !(200..300).contains(&status) {
            return Err(EndpointError::Status(status, excerpt(&text)));
        }
        serde_json::from_str(&text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => EndpointError::Shape(excerpt(&e.to_string())),
            _ => EndpointError::NotJson(excerpt(&text)),
        })
    }
}

/// At most 200 characters of `s`, for logs.
pub fn excerpt(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn a_url_no_request_could_reach_is_refused_naming_why() {
        for good in [
            "http://127.0.0.1:8080/v1/embeddings",
            "https://models.example/embed",
            "http://user:secret@host:11434/api/embed",
            "http://[::1]:8080/x",
            "http://[::1]/x",
            "http://host:/x",
            "http://host?x=1",
        ] {
            assert_eq!(check_url("V", good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("ftp://host/x", "http:// or https://"),
            ("host:8080/x", "http:// or https://"),
            ("http://", "no host"),
            ("http:///embed", "no host"),
            ("http://:8080/x", "no host"),
            ("http://user@/x", "no host"),
            ("http://[]:80/x", "no host"),
            ("http://host:99999/x", "outside 1-65535"),
            ("http://host:0/x", "outside 1-65535"),
            ("http://host:port/x", "outside 1-65535"),
            ("http://a b/x", "spaces"),
            ("http://host/x\n", "control"),
        ] {
            let e = check_url("V", bad).unwrap_err();
            assert!(e.starts_with("V ") && e.contains(why), "{bad}: {e}");
        }
    }
}
