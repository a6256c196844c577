use super::*;
use crate::transport::event_stream::HANGUP_POLL;

#[test]
fn query_params_are_found_by_exact_name() {
    assert_eq!(query_param("a=1&session_id=x", "session_id"), Some("x"));
    assert_eq!(query_param("xsession_id=1", "session_id"), None);
    assert_eq!(query_param("", "session_id"), None);
}

/// API.md's limits table quotes these values; keep them in step.
#[test]
fn api_md_limits_table_matches_the_constants() {
    use super::super::oauth::{self, claims_map, clients, fetch};
    use super::super::{
        acceptor::*, admission::*, auth::*, body::*, body_readers::*, jwks::*, listener::*, sse::*,
        streamable::*, wire::*,
    };
    use crate::limits::{
        MAX_OPEN_UPLOAD_TICKETS, MAX_REPLY_BYTES, MAX_UPLOADS_IN_PROGRESS, MAX_UPLOAD_BYTES,
        UPLOAD_TICKET_TTL_SECS,
    };
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/API.md")).expect("API.md");
    let secs = |d: Duration| format!("{} s", d.as_secs());
    let rows: &[(&str, String)] = &[
        ("`MAX_CONNECTIONS`", MAX_CONNECTIONS.to_string()),
        (
            "`MAX_UNAUTHENTICATED_CONNECTIONS`",
            MAX_UNAUTHENTICATED_CONNECTIONS.to_string(),
        ),
        ("`RESERVED_DESCRIPTORS`", RESERVED_DESCRIPTORS.to_string()),
        ("`HEADER_READ_TIMEOUT`", secs(HEADER_READ_TIMEOUT)),
        ("`MAX_HEAD_BYTES`", MAX_HEAD_BYTES.to_string()),
        ("`MAX_HEADERS`", MAX_HEADERS.to_string()),
        ("`MAX_SSE_CONNECTIONS`", MAX_SSE_CONNECTIONS.to_string()),
        (
            "`MAX_SSE_CONNECTIONS_PER_TENANT`",
            MAX_SSE_CONNECTIONS_PER_TENANT.to_string(),
        ),
        (
            "`MAX_SSE_CONNECTIONS_PER_CALLER`",
            MAX_SSE_CONNECTIONS_PER_CALLER.to_string(),
        ),
        ("`HANGUP_POLL`", format!("{} ms", HANGUP_POLL.as_millis())),
        ("`MAX_QUEUED_REPLIES`", MAX_QUEUED_REPLIES.to_string()),
        (
            "`MAX_CONCURRENT_DISPATCHES`",
            MAX_CONCURRENT_DISPATCHES.to_string(),
        ),
        (
            "`MAX_DISPATCHES_PER_TENANT`",
            MAX_DISPATCHES_PER_TENANT.to_string(),
        ),
        (
            "`MAX_DISPATCHES_PER_CALLER`",
            MAX_DISPATCHES_PER_CALLER.to_string(),
        ),
        ("`MAX_BODY_READERS`", MAX_BODY_READERS.to_string()),
        (
            "`MAX_BODY_READERS_PER_CALLER`",
            MAX_BODY_READERS_PER_CALLER.to_string(),
        ),
        ("`MAX_BODY_BYTES`", MAX_BODY_BYTES.to_string()),
        ("`MAX_UPLOAD_BYTES`", MAX_UPLOAD_BYTES.to_string()),
        (
            "`UPLOAD_TICKET_TTL_SECS`",
            UPLOAD_TICKET_TTL_SECS.to_string(),
        ),
        (
            "`MAX_OPEN_UPLOAD_TICKETS`",
            MAX_OPEN_UPLOAD_TICKETS.to_string(),
        ),
        (
            "`MAX_UPLOADS_IN_PROGRESS`",
            MAX_UPLOADS_IN_PROGRESS.to_string(),
        ),
        ("`MAX_REPLY_BYTES`", MAX_REPLY_BYTES.to_string()),
        ("`MAX_TOKEN_BYTES`", MAX_TOKEN_BYTES.to_string()),
        (
            "`MIN_HS256_SECRET_BYTES`",
            MIN_HS256_SECRET_BYTES.to_string(),
        ),
        ("`JWKS_MAX_BYTES`", JWKS_MAX_BYTES.to_string()),
        ("`JWKS_MAX_KEYS`", JWKS_MAX_KEYS.to_string()),
        ("`JWKS_FETCH_TIMEOUT`", secs(JWKS_FETCH_TIMEOUT)),
        (
            "`JWKS_MIN_REFRESH_INTERVAL`",
            secs(JWKS_MIN_REFRESH_INTERVAL),
        ),
        ("`JWKS_MAX_AGE`", secs(JWKS_MAX_AGE)),
        (
            "`ACCESS_TOKEN_TTL_SECS`",
            format!("{} s", oauth::ACCESS_TOKEN_TTL_SECS),
        ),
        (
            "`REFRESH_TOKEN_TTL_SECS`",
            format!("{} s", oauth::REFRESH_TOKEN_TTL_SECS),
        ),
        (
            "`AUTHORIZATION_CODE_TTL_SECS`",
            format!("{} s", oauth::AUTHORIZATION_CODE_TTL_SECS),
        ),
        (
            "`SIGN_IN_TTL_SECS`",
            format!("{} s", oauth::SIGN_IN_TTL_SECS),
        ),
        ("`CLIENT_TTL_SECS`", format!("{} s", oauth::CLIENT_TTL_SECS)),
        (
            "`MAX_REGISTRATIONS_PER_MINUTE`",
            oauth::MAX_REGISTRATIONS_PER_MINUTE.to_string(),
        ),
        (
            "`MAX_REGISTERED_CLIENTS`",
            oauth::MAX_REGISTERED_CLIENTS.to_string(),
        ),
        (
            "`MAX_REGISTRATION_BYTES`",
            oauth::MAX_REGISTRATION_BYTES.to_string(),
        ),
        (
            "`MAX_REDIRECT_URIS`",
            clients::MAX_REDIRECT_URIS.to_string(),
        ),
        (
            "`MAX_REDIRECT_URI_BYTES`",
            clients::MAX_REDIRECT_URI_BYTES.to_string(),
        ),
        (
            "`MAX_CLIENT_NAME_BYTES`",
            clients::MAX_CLIENT_NAME_BYTES.to_string(),
        ),
        (
            "`MAX_CLIENT_STATE_BYTES`",
            oauth::MAX_CLIENT_STATE_BYTES.to_string(),
        ),
        (
            "`MAX_CLIENT_METADATA_BYTES`",
            fetch::MAX_CLIENT_METADATA_BYTES.to_string(),
        ),
        (
            "`CLIENT_METADATA_CACHE_TTL` / `CLIENT_METADATA_CACHE_ENTRIES`",
            format!(
                "{} / {}",
                secs(clients::CLIENT_METADATA_CACHE_TTL),
                clients::CLIENT_METADATA_CACHE_ENTRIES
            ),
        ),
        (
            "`MAX_UPSTREAM_RESPONSE_BYTES`",
            fetch::MAX_UPSTREAM_RESPONSE_BYTES.to_string(),
        ),
        ("`OAUTH_FETCH_TIMEOUT`", secs(fetch::OAUTH_FETCH_TIMEOUT)),
        (
            "`OAUTH_WORKERS` / `OAUTH_QUEUE`",
            format!("{} / {}", oauth::OAUTH_WORKERS, oauth::OAUTH_QUEUE),
        ),
        (
            "`MAX_CLAIMS_MAP_CLAUSES`",
            claims_map::MAX_CLAIMS_MAP_CLAUSES.to_string(),
        ),
        (
            "`DISCOVERY_MAX_AGE`",
            secs(super::super::oauth::upstream::DISCOVERY_MAX_AGE),
        ),
        (
            "`METADATA_MAX_AGE_SECS`",
            format!("{METADATA_MAX_AGE_SECS} s"),
        ),
        ("`MAX_RATE_BUCKETS`", MAX_RATE_BUCKETS.to_string()),
        (
            "`DEFAULT_RATE_PER_SEC` / `DEFAULT_BURST`",
            format!("{DEFAULT_RATE_PER_SEC} / {DEFAULT_BURST}"),
        ),
        ("`BODY_READ_TIMEOUT`", secs(BODY_READ_TIMEOUT)),
        ("`REFUSED_BODY_LINGER`", secs(REFUSED_BODY_LINGER)),
        ("`KEEPALIVE_INTERVAL`", secs(KEEPALIVE_INTERVAL)),
        ("`IO_TIMEOUT`", secs(IO_TIMEOUT)),
        (
            "`COMPACT_INTERVAL`",
            secs(super::super::http_compact::COMPACT_INTERVAL),
        ),
        ("`ANSWER_WRITE_TIMEOUT`", secs(ANSWER_WRITE_TIMEOUT)),
        (
            "`RELEASE_AFTER_IDLE`",
            secs(crate::heap::RELEASE_AFTER_IDLE),
        ),
        ("`SHUTDOWN_DRAIN_TIMEOUT`", secs(SHUTDOWN_DRAIN_TIMEOUT)),
        ("`MAX_HTTP_SESSIONS`", MAX_HTTP_SESSIONS.to_string()),
        (
            "`MAX_HTTP_SESSIONS_PER_TENANT`",
            MAX_HTTP_SESSIONS_PER_TENANT.to_string(),
        ),
        (
            "`MAX_HTTP_SESSIONS_PER_CALLER`",
            MAX_HTTP_SESSIONS_PER_CALLER.to_string(),
        ),
        (
            "`HTTP_SESSION_IDLE_TIMEOUT`",
            format!("{} min", HTTP_SESSION_IDLE_TIMEOUT.as_secs() / 60),
        ),
        (
            "`SESSIONS_SCARCE_AT` / `HTTP_SESSION_SCARCE_IDLE_TIMEOUT`",
            format!(
                "{SESSIONS_SCARCE_AT} / {}",
                secs(HTTP_SESSION_SCARCE_IDLE_TIMEOUT)
            ),
        ),
    ];
    for (name, value) in rows {
        let row = format!("| {name} | {value} |");
        assert!(
            doc.contains(&row),
            "API.md limits table lacks or misstates: {row}"
        );
    }
}

#[test]
fn non_loopback_binds_need_the_flag() {
    assert!(check_bind("127.0.0.1:8080".parse().unwrap(), false).is_ok());
    assert!(check_bind("[::1]:8080".parse().unwrap(), false).is_ok());
    let err = check_bind("0.0.0.0:8080".parse().unwrap(), false).unwrap_err();
    assert!(
        err.contains("TLS") && err.contains("--allow-remote"),
        "{err}"
    );
    assert!(check_bind("0.0.0.0:8080".parse().unwrap(), true).is_ok());
}
