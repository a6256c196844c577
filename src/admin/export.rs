//! `alayasiki-mcp export`: one tenant's memory as JSON Lines on stdout.
//!
//! The first line is a header naming the format and its version; then one
//! line per document, oldest first (the order in which `import` must
//! replay them so neighbour context is rebuilt identically):
//!
//! ```text
//! {"format":"alayasiki-mcp-export","version":1,"tenant":"local","exported_at":"...","documents":2}
//! {"type":"document","id":"doc_...","source":"notes.md","title":"notes.md",
//!  "media_type":"text/markdown","metadata":{...},"provenance":"user",
//!  "created_at":1700000000000,"state":"ready","sha256":"...",
//!  "idempotency_key":"k1","original":"<base64 of the exact bytes>"}
//! ```
//!
//! A document with an expiry also has `"expires_at"` (Unix ms); documents
//! already past it, or past the retention period, are not exported.
//!
//! `--tenant T` (default `$ALAYASIKI_MCP_TENANT`, else `local`) exports
//! that tenant's documents only. A tenant that never wrote to this data
//! directory is an error (exit 1, nothing on stdout), so a misspelt name
//! does not produce an empty backup; a tenant whose documents were all
//! forgotten exports the header alone.
//!
//! Each document carries its own original (base64), so an import streams
//! with constant memory; identical originals are rare enough that writing
//! them twice beats making the reader keep them all. Derived data (chunks,
//! vectors, the index) is not exported: import rebuilds it, which also makes
//! an export portable across embedders.

use serde_json::{json, Value};
use std::io::{BufWriter, IsTerminal, Write};

use super::console::errln;
use super::progress::Progress;
use super::{Console, Context, Exit};
use crate::base64;
use crate::store::ExportRow;

/// The `format` of the header line.
pub const EXPORT_FORMAT: &str = "alayasiki-mcp-export";
/// The version this binary writes (and the newest it reads).
pub const EXPORT_VERSION: u64 = 1;
/// Documents read from the store at a time (with originals of up to
/// `MAX_CONTENT_BYTES` each, this bounds the export's memory).
const EXPORT_PAGE_DOCUMENTS: usize = 32;

/// Refuses to write an export to a terminal, where nobody wants it.
pub fn check_stdout() -> Result<(), Exit> {
    if std::io::stdout().is_terminal() {
        eprintln!(
            "alayasiki-mcp export: the export is written to stdout; redirect it to a file \
             (alayasiki-mcp export > memory.jsonl)"
        );
        return Err(crate::cli::USAGE_EXIT as Exit);
    }
    Ok(())
}

/// `alayasiki-mcp export [--tenant T] [--data-dir DIR] > memory.jsonl`.
pub fn export(ctx: &Context, tenant: Option<String>) -> Exit {
    match run(ctx, tenant) {
        Ok(count) => {
            errln!(ctx.console, "export: wrote {count} document(s)");
            0
        }
        Err(message) => {
            errln!(ctx.console, "alayasiki-mcp export: {message}");
            match ctx.console.stop_signal() {
                Some(signal) => (crate::cli::SIGNAL_EXIT_BASE + signal) as Exit,
                None => crate::serve::EXIT_FAILURE,
            }
        }
    }
}

/// The console's stdout as a writer.
struct Stdout<'a>(&'a Console);

impl Write for Stdout<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.out(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run(ctx: &Context, tenant: Option<String>) -> Result<usize, String> {
    let principal = ctx
        .principal(tenant, "export")
        .map_err(|_| "invalid tenant".to_string())?;
    let memory = ctx.service.for_caller(&principal);
    let service_error = |e: crate::error::Error| e.logged("export").client_message();
    if !memory.tenant_exists().map_err(service_error)? {
        return Err(format!(
            "tenant {:?} has no memory in this data directory; nothing was exported (check \
             --tenant or ALAYASIKI_MCP_TENANT)",
            principal.tenant.name()
        ));
    }
    let total = memory.status().map_err(service_error)?.documents;
    let mut out = BufWriter::new(Stdout(&ctx.console));
    let io_error = |e: std::io::Error| format!("cannot write the export: {e}");
    let header = json!({
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "tenant": principal.tenant.name(),
        "exported_at": crate::clock::rfc3339(crate::clock::now_ms()),
        "documents": total,
        "generator": format!("alayasiki-mcp {}", env!("CARGO_PKG_VERSION")),
    });
    writeln!(out, "{header}").map_err(io_error)?;
    let mut progress = Progress::new(
        &ctx.console,
        "export",
        "documents",
        Some(total.max(0) as u64),
        None,
    );
    let mut after = 0;
    let mut written = 0;
    loop {
        let page = memory
            .export_page(after, EXPORT_PAGE_DOCUMENTS)
            .map_err(service_error)?;
        let Some(last) = page.last() else { break };
        if let Some(signal) = ctx.console.stop_signal() {
            return Err(format!(
                "interrupted by signal {signal} after {written} document(s); the export is \
                 incomplete"
            ));
        }
        after = last.cursor;
        for row in &page {
            writeln!(out, "{}", document_line(row)).map_err(io_error)?;
            written += 1;
            progress.advance(1, row.original.len() as u64);
        }
    }
    out.flush().map_err(io_error)?;
    progress.finish();
    Ok(written)
}

/// One document as an export line.
pub fn document_line(row: &ExportRow) -> Value {
    let metadata: Value = serde_json::from_str(&row.metadata).unwrap_or_else(|_| json!({}));
    let mut line = json!({
        "type": "document",
        "id": row.doc_id,
        "source": row.source,
        "title": row.title,
        "media_type": row.media_type,
        "metadata": metadata,
        "provenance": row.provenance,
        "created_at": row.created_at,
        "state": row.state,
        "sha256": row.sha256,
        "idempotency_key": row.idempotency_key,
        "original": base64::encode(&row.original),
    });
    if let Some(at) = row.expires_at {
        line["expires_at"] = at.into();
    }
    if !row.supersedes.is_empty() {
        line["supersedes"] = json!(row.supersedes);
    }
    line
}
