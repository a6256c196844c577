//! `alayasiki-mcp status`: what a tenant's memory holds and which process
//! serves it, as `alayasiki_status` reports it to an admin caller.
//!
//! A few lines for a person by default; `--json` prints the whole report
//! (the tool's structured result) for scripts.

use super::console::{errln, outln};
use super::{Context, Exit};
use crate::service::Status;

/// Bytes in a mebibyte, for the store's size.
const MIB: f64 = 1024.0 * 1024.0;

/// `alayasiki-mcp status [--tenant T] [--json]`.
pub fn status(ctx: &Context, tenant: Option<String>, json: bool) -> Exit {
    let principal = match ctx.principal(tenant, "status") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let report = match ctx.service.for_caller(&principal).status() {
        Ok(r) => r,
        Err(e) => {
            let e = e.logged("status");
            errln!(ctx.console, "alayasiki-mcp status: {}", e.client_message());
            return crate::serve::EXIT_FAILURE;
        }
    };
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => outln!(ctx.console, "{text}"),
            Err(e) => {
                errln!(ctx.console, "alayasiki-mcp status: {e}");
                return crate::serve::EXIT_FAILURE;
            }
        }
    } else {
        let _ = ctx.console.out(render(&report).as_bytes());
    }
    0
}

/// The report as a few lines for a person.
pub fn render(s: &Status) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    match &s.owner {
        Some(o) => {
            let _ = writeln!(
                out,
                "served by:      the memory owner, pid {} (version {}, since {}), {} client(s) \
                 connected, this command included",
                o.pid, o.version, o.since, o.clients
            );
        }
        None => {
            let _ = writeln!(
                out,
                "served by:      this command (--in-process), version {}",
                s.version
            );
        }
    }
    if let Some(dir) = &s.data_dir {
        let _ = writeln!(out, "data directory: {dir} (durability {})", s.durability);
    }
    let _ = writeln!(
        out,
        "tenant:         {} ({} documents, {} chunks; store {:.1} MiB on disk)",
        s.tenant,
        s.documents,
        s.chunks,
        s.store_bytes as f64 / MIB
    );
    let _ = write!(
        out,
        "indexing:       {} pending, {} failed",
        s.jobs.pending, s.jobs.failed
    );
    if s.jobs.failed > 0 {
        out.push_str(" (`alayasiki-mcp retry-failed` tries them again; --json lists them)");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "working memory: {} live session(s) of {:?} (each lives {} s after its last write)",
        s.working_memory.sessions.len(),
        s.subject,
        s.working_memory.ttl_secs
    );
    if let Some(ui) = &s.ui {
        let _ = writeln!(
            out,
            "memory browser: {} (its URL with the secret is in {})",
            ui.address, ui.url_file
        );
    }
    out
}
