//! Every bound the server enforces, in one place.
//!
//! Each constant is named after what it bounds, enforced where the input
//! enters (transport framing, tool argument parsing, the ingestion worker),
//! tested at its edge, and quoted in docs/limits.md (a test checks that
//! table against these values, so the documentation cannot drift).

/// Largest JSON-RPC message accepted on one stdio line (8 MiB). A longer line
/// is answered with an error and skipped without being buffered whole.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// Largest reply the HTTP server sends for one call (8 MiB): one SSE
/// `message` event or one JSON API response body. A larger reply is not
/// sent, not even in part: SSE gets a JSON-RPC error naming this limit, the
/// JSON API a `413 reply_too_large` error. Stdio replies are not capped.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Longest time `alayasiki-api` spends receiving one request body. A body
/// still incomplete then is refused (`408 body_timeout`) and its connection
/// closed, so a client trickling bytes cannot hold a server thread; a read
/// in progress at the deadline may add up to the socket timeout
/// (`IO_TIMEOUT`). 8 MiB in this time needs about 2.2 Mbit/s.
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Most messages accepted in one JSON-RPC batch.
pub const MAX_BATCH_MESSAGES: usize = 64;

/// Largest document accepted by `alayasiki_ingest`, after base64 decoding
/// (4 MiB; a base64 file of this size still fits in one frame).
pub const MAX_CONTENT_BYTES: usize = 4 * 1024 * 1024;

/// Largest file an upload ticket accepts (256 MiB): `alayasiki_ingest`
/// with `upload`, then `PUT /v1/uploads/{ticket}`. It streams to a
/// temporary file through a fixed buffer. A file of at most
/// [`MAX_CONTENT_BYTES`] is stored as one document; a larger one must be
/// plain text or Markdown (refused at declaration otherwise) and is stored
/// as a series of part documents of at most [`MAX_CONTENT_BYTES`] each
/// (`service::memory::upload_parts`), so that every document stays one the
/// rest of the memory carries whole (its original in one row, exported as
/// one line that `import` reads back, indexed in one cluster write). A
/// cluster store takes uploads of at most [`MAX_CONTENT_BYTES`].
pub const MAX_UPLOAD_BYTES: usize = 256 * 1024 * 1024;

/// The slowest upload `alayasiki-api` waits for (bytes per second): an
/// upload's body has [`BODY_READ_TIMEOUT`] plus one second per this many
/// bytes to arrive (286 s for a file of [`MAX_UPLOAD_BYTES`]).
pub const MIN_UPLOAD_BYTES_PER_SEC: u64 = 1024 * 1024;

/// How long an upload ticket may wait for its `PUT` (seconds), unless
/// `ALAYASIKI_UPLOAD_TTL_SECS` says less. Tickets live in memory only: a
/// restart invalidates every one.
pub const UPLOAD_TICKET_TTL_SECS: u64 = 900;

/// Upload tickets one tenant may hold open (declared, neither used nor
/// expired); one more declaration is refused (`limit_exceeded`) until one
/// is used or expires.
pub const MAX_OPEN_UPLOAD_TICKETS: usize = 64;

/// Uploads being received at once, across tenants (one stored in parts
/// until its `PUT` is answered); one more `PUT` gets 503 with
/// `Retry-After`, its ticket still unused. Each holds a temporary file
/// and, once verified, the memory its ingest takes (one document of at most
/// [`MAX_CONTENT_BYTES`] read back, or one part at a time of a larger file).
pub const MAX_UPLOADS_IN_PROGRESS: usize = 8;

/// Largest `metadata` object, measured as compact JSON (64 KiB).
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// Longest `idempotency_key` (bytes).
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 256;

/// Longest `source` label (bytes).
pub const MAX_SOURCE_BYTES: usize = 1024;

/// Most documents one ingest (or update) may supersede: the ids in its
/// `supersedes`, or the current documents of its `source` with
/// `replace_source`. Each one's graph evidence is withdrawn in the
/// transaction that admits the new version, so the bound keeps that
/// transaction short.
pub const MAX_SUPERSEDES: usize = 64;

/// Longest `title` given to `alayasiki_update` (bytes).
pub const MAX_TITLE_BYTES: usize = 1024;

/// Longest `filename` of a File upload (bytes).
pub const MAX_FILENAME_BYTES: usize = 1024;

/// Longest `query` accepted by `alayasiki_query` (bytes).
pub const MAX_QUERY_BYTES: usize = 4096;

/// Most `metadata` key = value pairs in one query's `filter`.
pub const MAX_FILTER_FIELDS: usize = 16;

/// Most `tags` in one query's `filter`.
pub const MAX_FILTER_TAGS: usize = 32;

/// Memory all tenants' admission catalogs may take together (64 MiB;
/// `ALAYASIKI_ADMISSION_CATALOG_BYTES` may set less). A catalog lets a
/// lane admit its candidates under a broad recall filter without reading
/// SQLite; it takes about 200 bytes per document of one chunk (19 MiB
/// at 100k documents, measured in BENCHMARKS.md). Past the
/// budget the least recently used are dropped, and a tenant whose catalog
/// alone exceeds it is filtered in SQL (the same results, slower).
pub const MAX_ADMISSION_CATALOG_BYTES: usize = 64 * 1024 * 1024;

/// Longest `media_type` in a query's `filter` (bytes).
pub const MAX_FILTER_MEDIA_TYPE_BYTES: usize = 255;

/// Longest `as_of` accepted by `alayasiki_query` (bytes): an RFC 3339
/// time with fractional seconds and an offset fits with room to spare.
pub const MAX_AS_OF_BYTES: usize = 64;

/// Most query terms used for retrieval; later terms are ignored.
pub const MAX_QUERY_TERMS: usize = 32;

/// `top_k` range and default for `alayasiki_query`.
pub const MIN_TOP_K: u32 = 1;
pub const MAX_TOP_K: u32 = 100;
pub const DEFAULT_TOP_K: u32 = 10;

/// `budget` (characters of evidence text returned) range and default.
pub const MIN_BUDGET_CHARS: u32 = 100;
pub const MAX_BUDGET_CHARS: u32 = 1_000_000;
pub const DEFAULT_BUDGET_CHARS: u32 = 20_000;

/// How many times its own size a JSON document's flattened text may be.
/// Each leaf's line repeats its whole key path, so deep or wide nesting
/// multiplies the text (an 800 KB document once became 155 MB and 200,000
/// chunks); past this the document is refused before it is indexed.
pub const MAX_JSON_EXPANSION: usize = 8;

/// Flattened text any JSON document may have, whatever its size, so small
/// documents with long keys are never refused (bytes).
pub const MIN_JSON_TEXT_ALLOWANCE: usize = 64 * 1024;

/// Most memory one message may take once parsed (its bytes plus
/// `BYTES_PER_VALUE` per JSON value, estimated before parsing): 8 MiB of
/// small numbers would otherwise become ~140 MB of values.
pub const MAX_PARSED_MESSAGE_BYTES: usize = 96 * 1024 * 1024;

/// Most memory all received messages may hold at once, parsed, across
/// every transport of the process; past it a request is answered "busy".
pub const MAX_PARSED_BYTES_IN_FLIGHT: usize = 256 * 1024 * 1024;

/// Most items of a file's content sent as an array of byte values (each
/// costs a JSON value); larger files go as base64 text.
pub const MAX_BYTE_ARRAY_ITEMS: usize = 1024 * 1024;

/// How long `alayasiki_ingest` with `wait: true` waits for its job before
/// answering with the job still pending (milliseconds).
pub const INGEST_WAIT_MS: u64 = 60_000;

/// How long that wait goes on while the disk refuses the indexer's writes
/// (a full, failing or read-only disk) before it answers with the document
/// stored but pending and the fault named, rather than waiting out
/// [`INGEST_WAIT_MS`] for writes that cannot happen (milliseconds).
pub const INGEST_FAULT_GRACE_MS: u64 = 1_000;

/// How long `alayasiki-mcp forget` waits for the indexing its deletions
/// queued (the next document of a forgotten one's source is embedded again
/// without the forgotten context) before it exits; what is left runs the
/// next time the memory is opened (milliseconds).
pub const FORGET_SETTLE_MS: u64 = 30_000;

/// How long `alayasiki-mcp ingest PATH`, `import`, `reindex` and
/// `retry-failed` wait on indexing that a full, failing or read-only disk,
/// or an embedding server failing every request, holds up before they stop
/// with exit status 1 (a server waits instead, and resumes by itself;
/// milliseconds).
pub const BULK_FAULT_GIVE_UP_MS: u64 = 10_000;

/// How long a request waits, at most, for its session's earlier requests
/// and for the documents they stored with `wait: false` to become
/// searchable (read-your-writes; milliseconds). Past it the request runs
/// and its reply says what it may not see.
pub const READ_YOUR_WRITES_WAIT_MS: u64 = 60_000;

/// Attempts the ingestion worker may begin on a job alone without finishing
/// it before the job is failed (an attempt counts when the worker begins the
/// work in a batch of its own, not when a start-up finds the job pending nor
/// when the job shared an interrupted batch). Bounds a crash loop on a
/// document that kills the process.
pub const MAX_JOB_ATTEMPTS: i64 = 3;

/// Page size of `resources/list`.
pub const RESOURCES_PAGE_SIZE: usize = 100;

/// Longest tenant or subject name (bytes).
pub const MAX_IDENTITY_BYTES: usize = 128;

/// Longest memory scope name (bytes of `[a-z0-9._-]`).
pub const MAX_MEMORY_SCOPE_NAME_BYTES: usize = 64;

/// Most memory scopes one token's `memory_scopes` claim may grant; a token
/// granting more is refused (401), never cut short.
pub const MAX_MEMORY_SCOPES_PER_TOKEN: usize = 32;

/// Most documents one `alayasiki_share` call (or `POST /v1/share`) may
/// name or its filter may match; a filter matching more is refused.
pub const MAX_SHARE_DOCUMENTS: usize = 100;

/// Longest working-memory `session_id` (bytes; the characters are
/// `[A-Za-z0-9._:-]`).
pub const MAX_SESSION_ID_BYTES: usize = 128;

/// How long a working-memory session lives after its last write (seconds),
/// unless `ALAYASIKI_WM_TTL_SECS` says otherwise.
pub const DEFAULT_WM_TTL_SECS: u64 = 30 * 60;

/// Longest `ALAYASIKI_WM_TTL_SECS` accepted (seconds; one week).
pub const MAX_WM_TTL_SECS: u64 = 7 * 24 * 60 * 60;

/// Chunk target (bytes): chunks are packed up to about this size, unless
/// `ALAYASIKI_CHUNK_TARGET_BYTES` says otherwise within the range below.
/// The default is measured against alternatives in BENCHMARKS.md.
pub const DEFAULT_CHUNK_TARGET_BYTES: usize = 1000;

/// Smallest `ALAYASIKI_CHUNK_TARGET_BYTES` accepted (about two sentences).
pub const MIN_CHUNK_TARGET_BYTES: usize = 200;

/// Largest `ALAYASIKI_CHUNK_TARGET_BYTES` accepted: a chunk is at most twice
/// the target, so the longest chunk (8000 bytes) still fits one LLM
/// extraction request ([`MAX_LLM_EXTRACT_INPUT_BYTES`]).
pub const MAX_CHUNK_TARGET_BYTES: usize = 4000;
const _: () = assert!(
    MIN_CHUNK_TARGET_BYTES <= DEFAULT_CHUNK_TARGET_BYTES
        && DEFAULT_CHUNK_TARGET_BYTES <= MAX_CHUNK_TARGET_BYTES
        && 2 * MAX_CHUNK_TARGET_BYTES <= MAX_LLM_EXTRACT_INPUT_BYTES
);

/// Longest retention period `ALAYASIKI_RETENTION_DAYS` accepts (days;
/// about a century, i.e. "keep everything" without overflowing the clock).
pub const MAX_RETENTION_DAYS: f64 = 36_500.0;

/// Live working-memory session graphs, across every caller and transport.
pub const MAX_WM_SESSIONS: usize = 128;

/// Writes held by live session graphs, across every caller and transport.
pub const MAX_WM_WRITES: usize = 4096;

/// Serialized input held by live session graphs, across every caller and
/// transport (16 MiB). What a write is charged is defined by
/// `service::working_memory::budget::Charge`.
pub const MAX_WM_BYTES: usize = 16 * 1024 * 1024;

/// The share of each working-memory budget (`MAX_WM_SESSIONS`,
/// `MAX_WM_WRITES`, `MAX_WM_BYTES`) one tenant may hold, in quarters: a
/// tenant that fills its share leaves a quarter of every budget to the
/// others, so no tenant can lock the rest out of working memory.
pub const WM_TENANT_SHARE_QUARTERS: usize = 3;

/// Largest content of one working-memory write, after base64 decoding.
pub const MAX_WM_CONTENT_BYTES: usize = 64 * 1024;

/// Largest `metadata` of one working-memory write, as compact JSON.
pub const MAX_WM_METADATA_BYTES: usize = 4 * 1024;

/// Largest `nodes` plus `edges` of one working-memory write, as compact JSON.
pub const MAX_WM_GRAPH_BYTES: usize = 64 * 1024;

/// Longest node id, label or kind, and edge relation, in a session graph.
pub const MAX_WM_NAME_BYTES: usize = 256;
/// Deepest folder nesting `alayasiki-mcp ingest` walks below a given path.
pub const MAX_WALK_DEPTH: usize = 64;

/// Longest line `alayasiki-mcp import` reads: a base64 original of
/// [`MAX_CONTENT_BYTES`] with its metadata and other fields. A longer line is
/// skipped (and reported) without being held in memory.
pub const MAX_IMPORT_LINE_BYTES: usize =
    MAX_CONTENT_BYTES / 3 * 4 + 4 + MAX_METADATA_BYTES + 16 * 1024;

/// Lines `alayasiki-mcp import` holds at once between reading them and
/// reporting their outcome: its store threads prepare and store the
/// documents of these lines in parallel (in file order), so the writer
/// commits them in groups.
pub const MAX_IMPORT_LINES_IN_FLIGHT: usize = 256;

/// Bytes of those lines held at once (32 MiB, five of the longest):
/// past it a line waits for the lines before it to be done.
pub const MAX_IMPORT_BYTES_IN_FLIGHT: usize = 32 * 1024 * 1024;

/// Per-request timeout of the optional LLM unless `ALAYASIKI_LLM_TIMEOUT_MS`
/// says otherwise, and the longest that variable accepts (milliseconds).
/// Covers connecting, sending and reading the whole response.
pub const DEFAULT_LLM_TIMEOUT_MS: u64 = 30_000;
pub const MAX_LLM_TIMEOUT_MS: u64 = 600_000;

/// Largest LLM response body read (1 MiB); a longer one is abandoned
/// unread and counts as a failed call.
pub const MAX_LLM_RESPONSE_BYTES: u64 = 1024 * 1024;

/// Most chunk text sent in one LLM extraction request: consecutive chunks
/// are batched up to this many bytes.
pub const MAX_LLM_EXTRACT_INPUT_BYTES: usize = 8 * 1024;

/// Most LLM extraction requests for one document; chunks beyond them keep
/// the rule-based graph only.
pub const MAX_LLM_EXTRACT_REQUESTS: usize = 64;

/// Most triples read from one LLM extraction response; the rest are ignored.
pub const MAX_LLM_TRIPLES: usize = 64;

/// Longest subject or object name an LLM triple may have (bytes).
pub const MAX_LLM_NAME_BYTES: usize = 200;

/// Longest predicate an LLM triple may have (bytes).
pub const MAX_LLM_PREDICATE_BYTES: usize = 100;

/// Longest evidence quote an LLM triple may have (bytes).
pub const MAX_LLM_EVIDENCE_BYTES: usize = 1000;

/// Most evidence text sent to the LLM to compose one answer; evidence items
/// beyond it are not offered (and cannot be cited).
pub const MAX_LLM_ANSWER_EVIDENCE_BYTES: usize = 32 * 1024;

/// Longest LLM answer accepted (bytes); a longer one is rejected in favour
/// of the extractive answer.
pub const MAX_LLM_ANSWER_BYTES: usize = 8 * 1024;

/// Most communities the optional LLM is asked to summarize per snapshot
/// (the largest); the others keep only their extractive summary.
pub const MAX_LLM_COMMUNITY_SUMMARIES: usize = 8;

/// Most text sent to the LLM to summarize one community (its title,
/// members, facts and the text of its cited chunks); chunks beyond it are
/// not offered (and cannot be cited).
pub const MAX_LLM_COMMUNITY_INPUT_BYTES: usize = 8 * 1024;

/// Longest LLM community summary accepted (bytes); a longer one is
/// rejected and the extractive summary stands alone.
pub const MAX_LLM_COMMUNITY_SUMMARY_BYTES: usize = 2 * 1024;

// The memory browser's reads (`/v1/documents/{id}/chunks`, `/v1/entities`,
// `/v1/graph`, `/v1/communities`): each bounds one reply, whatever the
// tenant's size, and API.md's browse limits table quotes them.

/// The highest number one tenant can give an entity (or, counted apart, a
/// relation), 2^32 - 1: its id (`ent_<number>`) and store key are
/// numbered within the tenant (`ids::TENANT_GRAPH_KEY_BITS`). Past it the
/// write that would add one is refused (`limit_exceeded`) rather than
/// spill into another tenant's keys.
pub const MAX_TENANT_GRAPH_NUMBER: i64 = (1 << crate::ids::TENANT_GRAPH_KEY_BITS) - 1;
/// Chunks in one page of a document's chunks unless `limit` says less.
pub const CHUNKS_DEFAULT_LIMIT: usize = 100;
/// The largest `limit` of a page of a document's chunks.
pub const CHUNKS_MAX_LIMIT: usize = 500;
/// Entities listed unless `limit` says less.
pub const ENTITIES_DEFAULT_LIMIT: usize = 50;
/// The largest `limit` of an entity listing.
pub const ENTITIES_MAX_LIMIT: usize = 200;
/// Longest name fragment (`q`) an entity listing searches for, in bytes.
pub const MAX_ENTITY_QUERY_BYTES: usize = 256;
/// Other names shown per entity.
pub const ENTITY_MAX_ALIASES: usize = 20;
/// Relations shown with one entity (the strongest; `truncated` says
/// when there are more).
pub const ENTITY_MAX_RELATIONS: usize = 100;
/// Documents' evidence shown per relation of an entity (the newest;
/// `evidence_truncated` says when there is more).
pub const RELATION_MAX_EVIDENCE: usize = 5;
/// Nodes of a neighbourhood view unless `limit` says less.
pub const GRAPH_DEFAULT_NODES: usize = 50;
/// The largest `limit` of a neighbourhood view.
pub const GRAPH_MAX_NODES: usize = 200;
/// The deepest neighbourhood (relations away from the centre).
pub const GRAPH_MAX_DEPTH: usize = 2;
/// Relations followed from one node while a neighbourhood grows (its
/// strongest), and read from one node for the view's edges.
pub const GRAPH_RELATIONS_PER_NODE: usize = 50;
/// Edges of a neighbourhood view (the strongest; `truncated` says when
/// there are more).
pub const GRAPH_MAX_EDGES: usize = 1000;
/// Member ids listed per community (the most mentioned;
/// `entity_ids_truncated` says when there are more).
pub const COMMUNITY_MAX_MEMBER_IDS: usize = 500;

/// Most nodes a cluster address (`rqlite://h1:p1,h2:p2,…`) may name.
pub const MAX_CLUSTER_NODES: usize = 16;

/// Most statements in one request to the cluster (one transaction, one
/// Raft entry). A node's writer splits its batches well below this
/// (`store::writer::WHOLE_BATCH_STATEMENTS`); it bounds what a single
/// write may need, and fits the indexing of the largest document
/// (`MAX_CONTENT_BYTES` of text makes about 115,000). A write that needs
/// more is refused on a cluster, with nothing stored.
pub const MAX_CLUSTER_STATEMENTS: usize = 250_000;

/// Most bytes of one cluster response read (a larger one is refused, never
/// buffered whole).
pub const MAX_CLUSTER_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// Longest wait to connect to one cluster node before trying the next.
pub const CLUSTER_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Pause between tries of an idempotent cluster write after a transient
/// failure (no leader yet, a node down, an answer lost).
pub const CLUSTER_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// Deadline of each request `alayasiki-mcp cluster` makes to the cluster.
pub const CLUSTER_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long `cluster push` and `cluster pull` wait for the cluster to have
/// a leader (one just started, or electing one) before giving up.
pub const CLUSTER_LEADER_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a write waits for the cluster to have a leader (one being
/// elected after a node died) before it is refused with 503 and
/// `Retry-After` (this long, in seconds: the node found no leader for all
/// of it). Measured from when the write reached the node's writer, and
/// shared by every step of its batch (the turn, following the log, the
/// commit): they wait out one leader wait between them, not one each.
pub const CLUSTER_WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Longest a write to a cluster waits for its answer, from when it reached
/// the node's writer, however the cluster fails (a leader frozen or cut
/// off mid-commit, an answer lost and settled by asking who holds the
/// entry): past it the write is answered 503, "may have been stored", and
/// the node's writer moves on to the next batch.
pub const CLUSTER_WRITE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Most usage rows a cluster node keeps in memory while the cluster has no
/// quorum (calls answered from its replica are still charged): written
/// once the cluster has a leader again. Past it the oldest are dropped,
/// counted, and the count is logged.
pub const MAX_BUFFERED_USAGE_ROWS: usize = 10_000;

/// How long a read asked to see a cluster position (`X-Alayasiki-After`,
/// or the `cluster` read level) waits for this node to apply it before it
/// is answered 503 with `Retry-After`.
pub const CLUSTER_POSITION_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long the cluster's log keeps an entry unless
/// `ALAYASIKI_CLUSTER_LOG_RETENTION_SECS` says otherwise. Older entries are
/// deleted (the newest always stays): the log does not grow without end,
/// and the text of a forgotten document leaves it within this long. A node
/// that was away longer joins again from a snapshot at its next start.
pub const DEFAULT_CLUSTER_LOG_RETENTION: std::time::Duration = std::time::Duration::from_secs(3600);

/// The longest `ALAYASIKI_CLUSTER_LOG_RETENTION_SECS` accepted (30 days).
pub const MAX_CLUSTER_LOG_RETENTION_SECS: u64 = 30 * 86_400;

/// Most rows one copy transaction (`cluster push`) carries.
pub const COPY_BATCH_ROWS: usize = 500;

/// Bytes of parameters after which a copy transaction is sent (a row is
/// never split, so one large original can make a batch larger).
pub const COPY_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// How long one copy transaction is retried while the cluster certainly
/// did not apply it (no leader, no node reached).
pub const COPY_WRITE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

#[cfg(test)]
mod tests;
