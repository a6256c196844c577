use super::*;

/// The limits table of docs/limits.md quotes these values; keep them
/// in step.
#[test]
fn readme_limits_table_matches_the_constants() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/limits.md"))
        .expect("docs/limits.md");
    let rows: &[(&str, String)] = &[
        ("`MAX_FRAME_BYTES`", MAX_FRAME_BYTES.to_string()),
        (
            "`MAX_ADMISSION_CATALOG_BYTES`",
            MAX_ADMISSION_CATALOG_BYTES.to_string(),
        ),
        ("`MAX_BATCH_MESSAGES`", MAX_BATCH_MESSAGES.to_string()),
        ("`MAX_CONTENT_BYTES`", MAX_CONTENT_BYTES.to_string()),
        ("`MAX_METADATA_BYTES`", MAX_METADATA_BYTES.to_string()),
        ("`MAX_UPLOAD_BYTES`", MAX_UPLOAD_BYTES.to_string()),
        (
            "`MIN_UPLOAD_BYTES_PER_SEC`",
            MIN_UPLOAD_BYTES_PER_SEC.to_string(),
        ),
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
        (
            "`MAX_IDEMPOTENCY_KEY_BYTES`",
            MAX_IDEMPOTENCY_KEY_BYTES.to_string(),
        ),
        ("`MAX_SOURCE_BYTES`", MAX_SOURCE_BYTES.to_string()),
        ("`MAX_FILENAME_BYTES`", MAX_FILENAME_BYTES.to_string()),
        ("`MAX_SUPERSEDES`", MAX_SUPERSEDES.to_string()),
        ("`MAX_TITLE_BYTES`", MAX_TITLE_BYTES.to_string()),
        ("`MAX_QUERY_BYTES`", MAX_QUERY_BYTES.to_string()),
        ("`MAX_QUERY_TERMS`", MAX_QUERY_TERMS.to_string()),
        ("`MAX_AS_OF_BYTES`", MAX_AS_OF_BYTES.to_string()),
        (
            "`MIN_TOP_K` / `MAX_TOP_K` / `DEFAULT_TOP_K`",
            format!("{MIN_TOP_K} / {MAX_TOP_K} / {DEFAULT_TOP_K}"),
        ),
        (
            "`MIN_BUDGET_CHARS` / `MAX_BUDGET_CHARS` / `DEFAULT_BUDGET_CHARS`",
            format!("{MIN_BUDGET_CHARS} / {MAX_BUDGET_CHARS} / {DEFAULT_BUDGET_CHARS}"),
        ),
        ("`INGEST_WAIT_MS`", INGEST_WAIT_MS.to_string()),
        ("`INGEST_FAULT_GRACE_MS`", INGEST_FAULT_GRACE_MS.to_string()),
        ("`FORGET_SETTLE_MS`", FORGET_SETTLE_MS.to_string()),
        (
            "`WM_TENANT_SHARE_QUARTERS`",
            WM_TENANT_SHARE_QUARTERS.to_string(),
        ),
        ("`BULK_FAULT_GIVE_UP_MS`", BULK_FAULT_GIVE_UP_MS.to_string()),
        (
            "`MAX_TENANT_GRAPH_NUMBER`",
            MAX_TENANT_GRAPH_NUMBER.to_string(),
        ),
        ("`MAX_JSON_EXPANSION`", MAX_JSON_EXPANSION.to_string()),
        (
            "`MAX_PARSED_MESSAGE_BYTES`",
            MAX_PARSED_MESSAGE_BYTES.to_string(),
        ),
        (
            "`MAX_PARSED_BYTES_IN_FLIGHT`",
            MAX_PARSED_BYTES_IN_FLIGHT.to_string(),
        ),
        ("`MAX_BYTE_ARRAY_ITEMS`", MAX_BYTE_ARRAY_ITEMS.to_string()),
        (
            "`MIN_JSON_TEXT_ALLOWANCE`",
            MIN_JSON_TEXT_ALLOWANCE.to_string(),
        ),
        (
            "`READ_YOUR_WRITES_WAIT_MS`",
            READ_YOUR_WRITES_WAIT_MS.to_string(),
        ),
        ("`MAX_JOB_ATTEMPTS`", MAX_JOB_ATTEMPTS.to_string()),
        ("`MAX_CLUSTER_NODES`", MAX_CLUSTER_NODES.to_string()),
        (
            "`MAX_CLUSTER_STATEMENTS`",
            MAX_CLUSTER_STATEMENTS.to_string(),
        ),
        (
            "`MAX_CLUSTER_RESPONSE_BYTES`",
            MAX_CLUSTER_RESPONSE_BYTES.to_string(),
        ),
        (
            "`CLUSTER_CONNECT_TIMEOUT`",
            format!("{} ms", CLUSTER_CONNECT_TIMEOUT.as_millis()),
        ),
        (
            "`CLUSTER_RETRY_PAUSE`",
            format!("{} ms", CLUSTER_RETRY_PAUSE.as_millis()),
        ),
        (
            "`CLUSTER_REQUEST_TIMEOUT`",
            format!("{} ms", CLUSTER_REQUEST_TIMEOUT.as_millis()),
        ),
        (
            "`CLUSTER_LEADER_WAIT`",
            format!("{} ms", CLUSTER_LEADER_WAIT.as_millis()),
        ),
        (
            "`CLUSTER_WRITE_WAIT`",
            format!("{} ms", CLUSTER_WRITE_WAIT.as_millis()),
        ),
        (
            "`CLUSTER_WRITE_DEADLINE`",
            format!("{} ms", CLUSTER_WRITE_DEADLINE.as_millis()),
        ),
        (
            "`MAX_BUFFERED_USAGE_ROWS`",
            MAX_BUFFERED_USAGE_ROWS.to_string(),
        ),
        (
            "`CLUSTER_POSITION_WAIT`",
            format!("{} ms", CLUSTER_POSITION_WAIT.as_millis()),
        ),
        (
            "`DEFAULT_CLUSTER_LOG_RETENTION` / `MAX_CLUSTER_LOG_RETENTION_SECS`",
            format!(
                "{} s / {MAX_CLUSTER_LOG_RETENTION_SECS} s",
                DEFAULT_CLUSTER_LOG_RETENTION.as_secs()
            ),
        ),
        ("`COPY_BATCH_ROWS`", COPY_BATCH_ROWS.to_string()),
        ("`COPY_BATCH_BYTES`", COPY_BATCH_BYTES.to_string()),
        (
            "`COPY_WRITE_DEADLINE`",
            format!("{} ms", COPY_WRITE_DEADLINE.as_millis()),
        ),
        ("`RESOURCES_PAGE_SIZE`", RESOURCES_PAGE_SIZE.to_string()),
        ("`MAX_IDENTITY_BYTES`", MAX_IDENTITY_BYTES.to_string()),
        (
            "`MAX_MEMORY_SCOPE_NAME_BYTES`",
            MAX_MEMORY_SCOPE_NAME_BYTES.to_string(),
        ),
        (
            "`MAX_MEMORY_SCOPES_PER_TOKEN`",
            MAX_MEMORY_SCOPES_PER_TOKEN.to_string(),
        ),
        ("`MAX_SHARE_DOCUMENTS`", MAX_SHARE_DOCUMENTS.to_string()),
        ("`MAX_SESSION_ID_BYTES`", MAX_SESSION_ID_BYTES.to_string()),
        (
            "`DEFAULT_WM_TTL_SECS` / `MAX_WM_TTL_SECS`",
            format!("{DEFAULT_WM_TTL_SECS} / {MAX_WM_TTL_SECS}"),
        ),
        (
            "`MIN_CHUNK_TARGET_BYTES` / `MAX_CHUNK_TARGET_BYTES` / `DEFAULT_CHUNK_TARGET_BYTES`",
            format!(
                "{MIN_CHUNK_TARGET_BYTES} / {MAX_CHUNK_TARGET_BYTES} / {DEFAULT_CHUNK_TARGET_BYTES}"
            ),
        ),
        ("`MAX_RETENTION_DAYS`", MAX_RETENTION_DAYS.to_string()),
        ("`MAX_WM_SESSIONS`", MAX_WM_SESSIONS.to_string()),
        ("`MAX_WM_WRITES`", MAX_WM_WRITES.to_string()),
        ("`MAX_WM_BYTES`", MAX_WM_BYTES.to_string()),
        ("`MAX_WM_CONTENT_BYTES`", MAX_WM_CONTENT_BYTES.to_string()),
        ("`MAX_WM_METADATA_BYTES`", MAX_WM_METADATA_BYTES.to_string()),
        ("`MAX_WM_GRAPH_BYTES`", MAX_WM_GRAPH_BYTES.to_string()),
        ("`MAX_WM_NAME_BYTES`", MAX_WM_NAME_BYTES.to_string()),
        ("`MAX_WALK_DEPTH`", MAX_WALK_DEPTH.to_string()),
        ("`MAX_IMPORT_LINE_BYTES`", MAX_IMPORT_LINE_BYTES.to_string()),
        (
            "`MAX_IMPORT_LINES_IN_FLIGHT`",
            MAX_IMPORT_LINES_IN_FLIGHT.to_string(),
        ),
        (
            "`MAX_IMPORT_BYTES_IN_FLIGHT`",
            MAX_IMPORT_BYTES_IN_FLIGHT.to_string(),
        ),
        (
            "`DEFAULT_LLM_TIMEOUT_MS` / `MAX_LLM_TIMEOUT_MS`",
            format!("{DEFAULT_LLM_TIMEOUT_MS} / {MAX_LLM_TIMEOUT_MS}"),
        ),
        (
            "`MAX_LLM_RESPONSE_BYTES`",
            MAX_LLM_RESPONSE_BYTES.to_string(),
        ),
        (
            "`MAX_LLM_EXTRACT_INPUT_BYTES`",
            MAX_LLM_EXTRACT_INPUT_BYTES.to_string(),
        ),
        (
            "`MAX_LLM_EXTRACT_REQUESTS`",
            MAX_LLM_EXTRACT_REQUESTS.to_string(),
        ),
        ("`MAX_LLM_TRIPLES`", MAX_LLM_TRIPLES.to_string()),
        ("`MAX_LLM_NAME_BYTES`", MAX_LLM_NAME_BYTES.to_string()),
        (
            "`MAX_LLM_PREDICATE_BYTES`",
            MAX_LLM_PREDICATE_BYTES.to_string(),
        ),
        (
            "`MAX_LLM_EVIDENCE_BYTES`",
            MAX_LLM_EVIDENCE_BYTES.to_string(),
        ),
        (
            "`MAX_LLM_ANSWER_EVIDENCE_BYTES`",
            MAX_LLM_ANSWER_EVIDENCE_BYTES.to_string(),
        ),
        ("`MAX_LLM_ANSWER_BYTES`", MAX_LLM_ANSWER_BYTES.to_string()),
        (
            "`MAX_LLM_COMMUNITY_SUMMARIES`",
            MAX_LLM_COMMUNITY_SUMMARIES.to_string(),
        ),
        (
            "`MAX_LLM_COMMUNITY_INPUT_BYTES`",
            MAX_LLM_COMMUNITY_INPUT_BYTES.to_string(),
        ),
        (
            "`MAX_LLM_COMMUNITY_SUMMARY_BYTES`",
            MAX_LLM_COMMUNITY_SUMMARY_BYTES.to_string(),
        ),
    ];
    for (name, value) in rows {
        let row = format!("| {name} | {value} |");
        assert!(
            readme.contains(&row),
            "docs/limits.md's table lacks or misstates: {row}"
        );
    }
}

/// API.md's browse limits table quotes these values; keep them in step.
#[test]
fn api_md_browse_limits_table_matches_the_constants() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/API.md")).expect("API.md");
    let rows: &[(&str, usize)] = &[
        (
            "`LIST_SNIPPET_CHARS`",
            crate::transport::http_documents::LIST_SNIPPET_CHARS,
        ),
        ("`CHUNKS_DEFAULT_LIMIT`", CHUNKS_DEFAULT_LIMIT),
        ("`CHUNKS_MAX_LIMIT`", CHUNKS_MAX_LIMIT),
        ("`ENTITIES_DEFAULT_LIMIT`", ENTITIES_DEFAULT_LIMIT),
        ("`ENTITIES_MAX_LIMIT`", ENTITIES_MAX_LIMIT),
        ("`MAX_ENTITY_QUERY_BYTES`", MAX_ENTITY_QUERY_BYTES),
        ("`ENTITY_MAX_ALIASES`", ENTITY_MAX_ALIASES),
        ("`ENTITY_MAX_RELATIONS`", ENTITY_MAX_RELATIONS),
        ("`RELATION_MAX_EVIDENCE`", RELATION_MAX_EVIDENCE),
        ("`GRAPH_DEFAULT_NODES`", GRAPH_DEFAULT_NODES),
        ("`GRAPH_MAX_NODES`", GRAPH_MAX_NODES),
        ("`GRAPH_MAX_DEPTH`", GRAPH_MAX_DEPTH),
        ("`GRAPH_RELATIONS_PER_NODE`", GRAPH_RELATIONS_PER_NODE),
        ("`GRAPH_MAX_EDGES`", GRAPH_MAX_EDGES),
        ("`COMMUNITY_MAX_MEMBER_IDS`", COMMUNITY_MAX_MEMBER_IDS),
    ];
    for (name, value) in rows {
        let row = format!("| {name} | {value} |");
        assert!(
            doc.contains(&row),
            "API.md browse limits table lacks or misstates: {row}"
        );
    }
}
