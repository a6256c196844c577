//! `alayasiki_status`: what is stored and how the store is doing.

use serde_json::{json, Value};

use super::output::{count, integer, list, one_of, record, string, time};
use super::schema::object;
use super::{Args, Tool};
use crate::service::Permission;

pub static TOOL: Tool = Tool {
    name: "alayasiki_status",
    description: "Report the memory server's version, document and chunk counts, pending and \
failed indexing jobs, and store size for the calling identity's tenant, and the caller's live \
working-memory sessions with their expiry times. The server's data directory, and where its \
memory browser is served when it is on, are told only to callers with the admin permission (the \
local stdio identity, the admin role).",
    input_schema: || object(None, json!({}), &[]),
    output_schema,
    permission: Permission::Query,
    mutates: false,
    call: |memory, args| {
        Args::new(args, &[])?;
        Ok(serde_json::to_value(memory.status()?)?)
    },
};

/// Failure reason codes (`FailureKind::code`).
const FAILURE_REASONS: &[(&str, &str)] = &[
    (
        "interrupted",
        "indexing was begun too often and never finished",
    ),
    (
        "content",
        "the stored content could not be read as its type",
    ),
    ("internal", "a bug while indexing it"),
    ("missing_original", "the document's original bytes are gone"),
];

/// The status report (`Status`).
fn output_schema() -> Value {
    let by_reason: serde_json::Map<String, Value> = FAILURE_REASONS
        .iter()
        .map(|(code, what)| (code.to_string(), count(&format!("Failed jobs: {what}."))))
        .collect();
    let reasons: Vec<&str> = FAILURE_REASONS.iter().map(|(code, _)| *code).collect();
    let jobs = record(
        "Indexing jobs of this tenant.",
        json!({
            "pending": count("Documents waiting to be indexed (or embedded)."),
            "failed": count("Documents whose indexing failed."),
            "failed_by_reason": record(
                "Failed jobs by reason code; absent when none failed.",
                Value::Object(by_reason),
                &[],
            ),
            "recent_failures": list(
                "The most recent failures (at most 10, newest first); absent when none failed. Re-sending the same ingest request (same idempotency_key and content), or `alayasiki-mcp retry-failed`, tries again.",
                record(
                    "A failed document.",
                    json!({
                        "document_id": string("The failed document's id."),
                        "reason": one_of("The reason code.", &reasons),
                        "message": string("What went wrong."),
                        "failed_at": time("When it failed")
                    }),
                    &["document_id", "reason", "message", "failed_at"],
                ),
            ),
            "llm_pending": count("Indexed documents waiting for LLM extraction; absent when none are.")
        }),
        &["pending", "failed"],
    );
    let session = record(
        "One of the caller's live working-memory sessions.",
        json!({
            "session_id": string("The session's id."),
            "notes": count("Notes written to it."),
            "nodes": count("Graph nodes in it."),
            "edges": count("Graph edges in it."),
            "writes": count("Writes charged to it."),
            "bytes_charged": count("Bytes charged to it against the shared budget."),
            "expires_at": time("When it expires unless written again")
        }),
        &[
            "session_id",
            "notes",
            "nodes",
            "edges",
            "writes",
            "bytes_charged",
            "expires_at",
        ],
    );
    let limits = record(
        "Working-memory limits: the totals shared by every session of the server, and the share of them one tenant may hold.",
        json!({
            "sessions": count("Most live sessions (MAX_WM_SESSIONS)."),
            "writes": count("Most writes held (MAX_WM_WRITES)."),
            "bytes": count("Most bytes held (MAX_WM_BYTES)."),
            "content_bytes_per_write": count("Most content bytes per write (MAX_WM_CONTENT_BYTES)."),
            "metadata_bytes_per_write": count("Most metadata bytes per write (MAX_WM_METADATA_BYTES)."),
            "graph_bytes_per_write": count("Most node and edge bytes per write (MAX_WM_GRAPH_BYTES)."),
            "tenant_sessions": count("Most live sessions of one tenant (WM_TENANT_SHARE_QUARTERS of sessions)."),
            "tenant_writes": count("Most writes held by one tenant's sessions (WM_TENANT_SHARE_QUARTERS of writes)."),
            "tenant_bytes": count("Most bytes held by one tenant's sessions (WM_TENANT_SHARE_QUARTERS of bytes).")
        }),
        &[
            "sessions",
            "writes",
            "bytes",
            "content_bytes_per_write",
            "metadata_bytes_per_write",
            "graph_bytes_per_write",
            "tenant_sessions",
            "tenant_writes",
            "tenant_bytes",
        ],
    );
    let usage_fields = |what: &str| {
        json!({
            "calls": count(&format!("Calls {what}.")),
            "request_bytes": count("Bytes of their requests."),
            "reply_bytes": count("Bytes of their replies."),
            "duration_ms": count("Time spent serving them, in milliseconds.")
        })
    };
    let mut operation = usage_fields("of this operation");
    operation["operation"] = string("The tool name, MCP method or API route.");
    let mut usage = usage_fields("made");
    usage["by_operation"] = list(
        "The same, per operation.",
        record(
            "Usage of one operation.",
            operation,
            &[
                "operation",
                "calls",
                "request_bytes",
                "reply_bytes",
                "duration_ms",
            ],
        ),
    );
    record(
        "The server and this tenant's memory, as the caller may see them.",
        json!({
            "version": string("The server's version."),
            "data_dir": string("Where the server keeps its files; present only for callers with the admin permission."),
            "tenant": string("The caller's tenant: the memory every tool reads and writes."),
            "subject": string("The caller's identity within the tenant."),
            "schema_version": integer("The store's schema version.", 0),
            "durability": one_of("The store's durability (ALAYASIKI_DURABILITY): full (an acknowledged write survives power loss) or normal (it survives a process kill; power loss may lose the last commits).", &["full", "normal"]),
            "documents": count("Documents stored in this tenant."),
            "chunks": count("Searchable chunks of those documents."),
            "entities": count("Entities of this tenant's knowledge graph; present only for callers who see the whole tenant."),
            "relations": count("Stated relations between those entities (co-occurrence links not counted); present only for callers who see the whole tenant."),
            "jobs": jobs,
            "store_bytes": count("Size of the store on disk, in bytes."),
            "working_memory": record(
                "The caller's working-memory sessions and the shared limits.",
                json!({
                    "ttl_secs": count("How long a session lives after its last write, in seconds."),
                    "sessions": list("The caller's live sessions, by id.", session),
                    "limits": limits
                }),
                &["ttl_secs", "sessions", "limits"],
            ),
            "usage": record(
                "What this caller (tenant and subject) has used over the HTTP API and SSE; calls over stdio are not charged.",
                usage,
                &["calls", "request_bytes", "reply_bytes", "duration_ms", "by_operation"],
            ),
            "ui": record(
                "The memory browser this process serves on loopback (alayasiki-mcp --ui or ALAYASIKI_UI=1, or alayasiki-mcp ui); present only while it is on and only for callers with the admin permission.",
                json!({
                    "address": string("The page's address, such as http://127.0.0.1:PORT/ui; open the URL in url_file, which adds the secret the page signs in with."),
                    "url_file": string("The owner-only file holding the full URL with its per-start secret.")
                }),
                &["address", "url_file"],
            ),
            "owner": record(
                "The memory owner process serving this directory to its local clients (every alayasiki-mcp on stdio reaches it); present only when the caller is served by one, and only for callers with the admin permission.",
                json!({
                    "pid": count("The owner's process id."),
                    "since": string("When it started (RFC 3339)."),
                    "version": string("Its version."),
                    "clients": count("Local clients connected now, the caller included.")
                }),
                &["pid", "since", "version", "clients"],
            )
        }),
        &[
            "version",
            "tenant",
            "subject",
            "schema_version",
            "durability",
            "documents",
            "chunks",
            "jobs",
            "store_bytes",
            "working_memory",
            "usage",
        ],
    )
}
