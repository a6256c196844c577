//! Every bound the server enforces, in one place.
//!
//! Each constant is named after what it bounds, enforced where the input
//! enters (transport framing, tool argument parsing, the ingestion worker),
//! tested at its edge, and quoted in README.md (a test checks the README
//! table against these values, so the documentation cannot drift).

/// Largest JSON-RPC message accepted on one stdio line (8 MiB). A longer line
/// is answered with an error and skipped without being buffered whole.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// Most messages accepted in one JSON-RPC batch.
pub const MAX_BATCH_MESSAGES: usize = 64;

/// Largest document accepted by `alayasiki_ingest`, after base64 decoding
/// (4 MiB; a base64 file of this size still fits in one frame).
pub const MAX_CONTENT_BYTES: usize = 4 * 1024 * 1024;

/// Largest `metadata` object, measured as compact JSON (64 KiB).
pub const MAX_METADATA_BYTES: usize = 64 * 1024;

/// Longest `idempotency_key` (bytes).
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 256;

/// Longest `source` label (bytes).
pub const MAX_SOURCE_BYTES: usize = 1024;

/// Longest `filename` of a File upload (bytes).
pub const MAX_FILENAME_BYTES: usize = 1024;

/// Longest `query` accepted by `alayasiki_query` (bytes).
pub const MAX_QUERY_BYTES: usize = 4096;

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

/// How long `alayasiki_ingest` with `wait: true` waits for its job before
/// answering with the job still pending (milliseconds).
pub const INGEST_WAIT_MS: u64 = 60_000;

/// Start-ups that may find a job still pending before it is declared failed.
/// Bounds a crash loop on a document that kills the worker.
pub const MAX_JOB_ATTEMPTS: i64 = 3;

/// Page size of `resources/list`.
pub const RESOURCES_PAGE_SIZE: usize = 100;

/// Longest tenant or subject name (bytes).
pub const MAX_IDENTITY_BYTES: usize = 128;
