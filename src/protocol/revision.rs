//! The MCP protocol revisions this server speaks, and what differs
//! between them.
//!
//! Two eras: the *legacy* revisions (2024-11-05 through 2025-11-25) agree
//! on a revision once per session through `initialize`; the *modern* one
//! (2026-07-28) is stateless: every request names its revision and the
//! client's capabilities in `params._meta` ([`RequestMeta`]), and there is
//! no `initialize`. This server is dual-era: an `initialize` starts a
//! legacy session, and a request carrying the modern `_meta` is served
//! statelessly, on any transport, before or after an `initialize`.
//!
//! Everything the protocol layer does differently per revision is asked of
//! a [`Revision`] here, so the differences are listed in one place.

use serde_json::{json, Map, Value};

/// A protocol revision, oldest first (so `<` means older).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

/// `_meta` key of the revision a modern request speaks.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a modern request's client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of a modern request's client identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a modern result's server identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// 2026-07-28: the requested revision is not one this server speaks.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// 2026-07-28: HTTP headers disagree with the body, or are missing.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability its `_meta` did not
/// declare (`MissingRequiredClientCapabilityError`, data
/// `requiredCapabilities`). Used for the same refusal in the session-based
/// revisions, which name no code for it.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

impl Revision {
    /// Every revision, newest first: the order `supported` lists them in.
    pub const ALL: [Revision; 5] = [
        Revision::V2026_07_28,
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
        Revision::V2024_11_05,
    ];

    /// Whether an error answering a message whose id could not be read
    /// leaves `id` out (from 2025-11-25; before it, JSON-RPC 2.0's
    /// `"id": null`). See [`super::jsonrpc::omit_unread_id`].
    pub fn omits_unread_ids(self) -> bool {
        self >= Revision::V2025_11_25
    }

    /// The newest revision that still uses `initialize`: the answer to an
    /// `initialize` asking for a revision this server does not speak
    /// through `initialize`.
    pub const NEWEST_LEGACY: Revision = Revision::V2025_11_25;

    pub fn parse(s: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Stateless: no `initialize`, per-request `_meta`.
    pub fn is_modern(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// The revision an `initialize` asking for `requested` gets: the same
    /// when it is a legacy revision we speak, else the newest legacy one
    /// (the client decides whether it can go on).
    pub fn for_initialize(requested: &str) -> Revision {
        match Revision::parse(requested) {
            Some(r) if !r.is_modern() => r,
            _ => Revision::NEWEST_LEGACY,
        }
    }

    /// JSON-RPC batches: 2025-03-26 requires accepting them, 2024-11-05's
    /// JSON-RPC allows them, 2025-06-18 removed them.
    pub fn accepts_batches(self) -> bool {
        self <= Revision::V2025_03_26
    }

    /// `outputSchema` on tools and `structuredContent` on results.
    pub fn has_structured_output(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// The error code of `resources/read` on an unknown URI: MCP's own
    /// -32002 until 2026-07-28 moved it to invalid params.
    pub fn resource_not_found_code(self) -> i64 {
        if self.is_modern() {
            super::jsonrpc::INVALID_PARAMS
        } else {
            super::jsonrpc::RESOURCE_NOT_FOUND
        }
    }
}

/// Every revision's name, newest first.
pub fn supported_versions() -> Vec<&'static str> {
    Revision::ALL.iter().map(|r| r.as_str()).collect()
}

/// What a modern request says about itself in `params._meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    pub revision: Revision,
    pub client_capabilities: Map<String, Value>,
}

/// Why a request's modern `_meta` was refused: the JSON-RPC error code,
/// message and data.
#[derive(Debug, Clone, PartialEq)]
pub struct MetaFault {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// The protocol version a request's `_meta` names (the modern per-request
/// metadata), if it names one; `Some("")` when the key holds no string,
/// which is still a modern request, to be refused as such.
pub fn modern_version_named(params: &Map<String, Value>) -> Option<&str> {
    let named = params.get("_meta")?.get(META_PROTOCOL_VERSION)?;
    Some(named.as_str().unwrap_or(""))
}

/// Reads a modern request's `_meta`: its revision must be one we serve
/// statelessly (else [`UNSUPPORTED_PROTOCOL_VERSION`], naming what we
/// speak), and its client capabilities, required, an object.
/// Missing or mistyped fields are invalid params, checked first (so a
/// request lacking them is refused as malformed whatever it claims).
pub fn request_meta(params: &Map<String, Value>) -> Result<RequestMeta, MetaFault> {
    let invalid = |message: String| MetaFault {
        code: super::jsonrpc::INVALID_PARAMS,
        message,
        data: None,
    };
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Err(invalid(format!(
            "params needs _meta (an object) with \"{META_PROTOCOL_VERSION}\" and \
             \"{META_CLIENT_CAPABILITIES}\""
        )));
    };
    let Some(Value::String(requested)) = meta.get(META_PROTOCOL_VERSION) else {
        return Err(invalid(format!(
            "_meta needs \"{META_PROTOCOL_VERSION}\" (a string)"
        )));
    };
    let Some(Value::Object(client_capabilities)) = meta.get(META_CLIENT_CAPABILITIES) else {
        return Err(invalid(format!(
            "_meta needs \"{META_CLIENT_CAPABILITIES}\" (an object)"
        )));
    };
    let Some(revision) = Revision::parse(requested).filter(|r| r.is_modern()) else {
        return Err(unsupported_version(requested));
    };
    Ok(RequestMeta {
        revision,
        client_capabilities: client_capabilities.clone(),
    })
}

/// The `UnsupportedProtocolVersionError` for `requested`, listing what
/// this server speaks.
pub fn unsupported_version(requested: &str) -> MetaFault {
    MetaFault {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: "Unsupported protocol version".into(),
        data: Some(json!({
            "supported": supported_versions(),
            // Echoed as sent, within reason.
            "requested": requested.chars().take(128).collect::<String>()
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_echoes_legacy_revisions_and_counters_anything_else() {
        for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            assert_eq!(Revision::for_initialize(v).as_str(), v);
        }
        for v in ["2026-07-28", "1999-01-01", "", "2025-11-25 "] {
            assert_eq!(Revision::for_initialize(v), Revision::NEWEST_LEGACY);
        }
    }

    #[test]
    fn revisions_are_ordered_oldest_first_and_listed_newest_first() {
        assert!(Revision::V2024_11_05 < Revision::V2026_07_28);
        assert_eq!(supported_versions()[0], "2026-07-28");
        assert_eq!(supported_versions().len(), 5);
        assert!(Revision::V2025_03_26.accepts_batches());
        assert!(!Revision::V2025_06_18.accepts_batches());
        assert!(!Revision::V2025_03_26.has_structured_output());
        assert!(Revision::V2025_06_18.has_structured_output());
    }

    #[test]
    fn modern_meta_needs_a_modern_version_and_capabilities() {
        let params = |meta: Value| json!({"_meta": meta}).as_object().unwrap().clone();
        let ok = request_meta(&params(json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {}
        })))
        .unwrap();
        assert_eq!(ok.revision, Revision::V2026_07_28);
        for version in [json!("2025-11-25"), json!("1900-01-01"), json!("v999.0.0")] {
            let e = request_meta(&params(json!({
                META_PROTOCOL_VERSION: version,
                META_CLIENT_CAPABILITIES: {}
            })))
            .unwrap_err();
            assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
            assert_eq!(e.data.unwrap()["supported"][0], "2026-07-28");
        }
        for meta in [
            json!({META_PROTOCOL_VERSION: "2026-07-28"}),
            json!({META_CLIENT_CAPABILITIES: {}}),
            json!({META_PROTOCOL_VERSION: 7, META_CLIENT_CAPABILITIES: {}}),
            json!({META_PROTOCOL_VERSION: "v999", META_CLIENT_CAPABILITIES: []}),
        ] {
            let e = request_meta(&params(meta)).unwrap_err();
            assert_eq!(e.code, super::super::jsonrpc::INVALID_PARAMS);
        }
        let e = request_meta(&Map::new()).unwrap_err();
        assert_eq!(e.code, super::super::jsonrpc::INVALID_PARAMS);
    }
}
