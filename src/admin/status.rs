//! `alayasiki-mcp status`: what a tenant's memory holds and which process
//! serves it, as `alayasiki_status` reports it to an admin caller.
//!
//! A few lines for a person by default; `--json` prints the whole report
//! (the tool's structured result) for scripts. `--duplicates` lists the
//! groups of live documents that hold the same content (as ingest compares
//! it, `duplicate_of`): stores written before ingest compared content may
//! hold such copies. It reports them, with the command that removes one;
//! it never deletes anything itself.

use std::collections::BTreeMap;

use super::console::{errln, outln};
use super::{Context, Exit};
use crate::service::{Memory, Status};

/// Documents read from the store at a time for `--duplicates` (with their
/// originals, as an export reads them).
const DUPLICATES_PAGE_DOCUMENTS: usize = 32;

/// Groups `--duplicates` lists one by one; the rest are counted.
const LISTED_DUPLICATE_GROUPS: usize = 50;

/// Bytes in a mebibyte, for the store's size.
const MIB: f64 = 1024.0 * 1024.0;

/// `alayasiki-mcp status [--tenant T] [--json] [--duplicates]`.
pub fn status(ctx: &Context, tenant: Option<String>, json: bool, duplicates: bool) -> Exit {
    let principal = match ctx.principal(tenant, "status") {
        Ok(p) => p,
        Err(code) => return code,
    };
    if duplicates {
        return report_duplicates(ctx, &ctx.service.for_caller(&principal), json);
    }
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

/// Live documents (current versions that did not fail) grouped by content
/// key, groups of two or more, oldest document first in each (the one a
/// new copy is found to duplicate).
fn duplicate_groups(memory: &Memory<'_>) -> crate::error::Result<Vec<Vec<String>>> {
    let mut groups: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    let mut after = 0;
    loop {
        let page = memory.export_page(after, DUPLICATES_PAGE_DOCUMENTS)?;
        let Some(last) = page.last() else { break };
        after = last.cursor;
        for row in page {
            // A superseded version is history, not a copy of its successor.
            if row.state == "failed" || row.superseded {
                continue;
            }
            let Some(kind) = crate::ingest::media::from_media_type(&row.media_type) else {
                continue;
            };
            if let Some(key) = crate::ingest::content_key(kind, &row.original) {
                groups
                    .entry(key)
                    .or_default()
                    .push((row.cursor, row.doc_id));
            }
        }
    }
    let mut out: Vec<Vec<String>> = groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|mut g| {
            g.sort();
            g.into_iter().map(|(_, id)| id).collect()
        })
        .collect();
    out.sort();
    Ok(out)
}

/// `status --duplicates`: the groups, for a person or (`json`) a script.
fn report_duplicates(ctx: &Context, memory: &Memory<'_>, json: bool) -> Exit {
    let groups = match duplicate_groups(memory) {
        Ok(g) => g,
        Err(e) => {
            let e = e.logged("status");
            errln!(ctx.console, "alayasiki-mcp status: {}", e.client_message());
            return crate::serve::EXIT_FAILURE;
        }
    };
    let extra: usize = groups.iter().map(|g| g.len() - 1).sum();
    if json {
        let value = serde_json::json!({"groups": groups, "copies": extra});
        outln!(ctx.console, "{value}");
        return 0;
    }
    if groups.is_empty() {
        outln!(
            ctx.console,
            "duplicates:     none (no two live documents hold the same content)"
        );
        return 0;
    }
    outln!(
        ctx.console,
        "duplicates:     {} group(s) of documents with the same content, {extra} copy(ies) \
         beyond the first of each; nothing was deleted",
        groups.len()
    );
    for group in groups.iter().take(LISTED_DUPLICATE_GROUPS) {
        outln!(ctx.console, "  {}", group.join(" "));
    }
    if groups.len() > LISTED_DUPLICATE_GROUPS {
        outln!(
            ctx.console,
            "  ... and {} more group(s) (--json lists them all)",
            groups.len() - LISTED_DUPLICATE_GROUPS
        );
    }
    outln!(
        ctx.console,
        "To keep the first of a group only: alayasiki-mcp forget --id ID for each of the others."
    );
    0
}
