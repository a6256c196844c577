//! `alayasiki-mcp query TEXT` and `alayasiki-mcp forget`: the memory at a
//! terminal. `query` prints the answer and each piece of evidence for a
//! person to read (rank, score, source, span, page, text); `forget` deletes
//! documents exactly as the `alayasiki_forget` tool does and says what went.

use std::fmt::Write as _;
use std::time::Duration;

use super::console::{errln, outln};
use super::{Context, Exit};
use crate::cli::ForgetBy;
use crate::limits::{DEFAULT_BUDGET_CHARS, DEFAULT_TOP_K, FORGET_SETTLE_MS, MAX_QUERY_BYTES};
use crate::query::{LaneSet, QueryOutcome, QuerySpec, ResultMode, SearchMode};
use crate::service::DocumentSelector;

/// `--filter JSON` and `--include-history`, read as the query tool reads
/// its `filter` and `include_history` arguments.
fn recall_filter(
    filter: Option<&str>,
    include_history: bool,
) -> Result<crate::store::RecallFilter, String> {
    let mut arguments = serde_json::Map::new();
    if let Some(json) = filter {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|_| "must be a JSON object, e.g. '{\"tags\": [\"ops\"]}'".to_string())?;
        arguments.insert("filter".into(), value);
    }
    arguments.insert("include_history".into(), include_history.into());
    crate::protocol::tools::recall_filter(&arguments).map_err(|e| e.client_message())
}

/// What `query` was asked beyond the question and `--top-k`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    /// `--filter JSON`.
    pub filter: Option<&'a str>,
    /// `--include-history`.
    pub include_history: bool,
    /// `--as-of TIME` (Unix ms).
    pub as_of: Option<i64>,
}

/// Evidence text is wrapped to this many columns (plus the indent).
const WRAP_COLUMNS: usize = 88;

/// `alayasiki-mcp query TEXT [--top-k N] [--filter JSON] [--include-history]
/// [--as-of TIME] [--tenant T] [--data-dir DIR]`.
pub fn query(
    ctx: &Context,
    tenant: Option<String>,
    text: &str,
    top_k: Option<u32>,
    asked: Asked<'_>,
) -> Exit {
    match run_query(ctx, tenant, text, top_k, asked) {
        Ok(out) => {
            let _ = ctx.console.out(out.as_bytes());
            0
        }
        Err(code) => code,
    }
}

fn run_query(
    ctx: &Context,
    tenant: Option<String>,
    text: &str,
    top_k: Option<u32>,
    asked: Asked<'_>,
) -> Result<String, Exit> {
    let filter = recall_filter(asked.filter, asked.include_history).map_err(|why| {
        errln!(ctx.console, "alayasiki-mcp query: --filter: {why}");
        crate::cli::USAGE_EXIT as Exit
    })?;
    let principal = ctx.principal(tenant, "query")?;
    let memory = ctx.service.for_caller(&principal);
    let spec = QuerySpec {
        text: text.to_string(),
        search_mode: SearchMode::Auto,
        mode: ResultMode::Answer,
        top_k: top_k.unwrap_or(DEFAULT_TOP_K) as usize,
        budget_chars: DEFAULT_BUDGET_CHARS as usize,
        lanes: LaneSet::ALL,
        session_id: None,
        filter,
        as_of: asked.as_of,
    };
    if text.len() > MAX_QUERY_BYTES {
        errln!(
            ctx.console,
            "alayasiki-mcp query: the question is {} bytes; the limit is {MAX_QUERY_BYTES} \
             (MAX_QUERY_BYTES)",
            text.len()
        );
        return Err(crate::cli::USAGE_EXIT as Exit);
    }
    let outcome = memory.query(&spec).map_err(|e| {
        let e = e.logged("query");
        errln!(ctx.console, "alayasiki-mcp query: {}", e.client_message());
        crate::serve::EXIT_FAILURE
    })?;
    Ok(render(&outcome))
}

/// The outcome as text for a person: the answer, then each item.
pub fn render(outcome: &QueryOutcome) -> String {
    let mut out = String::new();
    if outcome.evidence.is_empty() {
        out.push_str("No evidence in memory for this question.\n");
        return out;
    }
    if let Some(answer) = &outcome.answer {
        if !answer.text.is_empty() {
            let _ = writeln!(out, "Answer:\n{}\n", wrap(&answer.text, "  "));
        }
    }
    out.push_str("Evidence:\n");
    for e in &outcome.evidence {
        let source = e
            .source
            .as_deref()
            .or(e.title.as_deref())
            .unwrap_or(e.document_id.as_str());
        let _ = write!(
            out,
            "\n[{}] score {:.3}  {}  bytes {}-{}",
            e.rank, e.score, source, e.span.start, e.span.end
        );
        if let Some(page) = e.page {
            let _ = write!(out, "  page {page}");
        }
        let _ = writeln!(out, "  ({})", e.chunk_id);
        let _ = writeln!(out, "{}", wrap(&e.text, "    "));
        for f in &e.facts {
            let status = match f.status {
                crate::query::facts::Standing::Current => "current",
                crate::query::facts::Standing::Superseded => "superseded",
                crate::query::facts::Standing::Ended => "ended",
            };
            let until = f.valid_to.as_deref().unwrap_or("now");
            let _ = write!(
                out,
                "    {status}: {} {} {} (from {} until {until})",
                f.holder, f.predicate, f.value, f.valid_from
            );
            if let Some(next) = &f.superseded_by {
                let _ = write!(out, ", then {} ({})", next.value, next.chunk_id);
            }
            out.push('\n');
        }
    }
    out
}

/// Wraps text at word boundaries to [`WRAP_COLUMNS`], each line indented;
/// the text's own line breaks are kept.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(indent);
        let mut width = 0;
        for (j, word) in line.split_whitespace().enumerate() {
            let w = word.chars().count();
            if j > 0 && width + 1 + w > WRAP_COLUMNS {
                out.push('\n');
                out.push_str(indent);
                width = 0;
            } else if j > 0 {
                out.push(' ');
                width += 1;
            }
            out.push_str(word);
            width += w;
        }
    }
    out
}

/// `alayasiki-mcp forget --id ID | --key KEY | --source SOURCE`.
pub fn forget(ctx: &Context, tenant: Option<String>, by: ForgetBy) -> Exit {
    let principal = match ctx.principal(tenant, "forget") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let selector = match by {
        ForgetBy::Id(v) => DocumentSelector::Id(v),
        ForgetBy::Key(v) => DocumentSelector::IdempotencyKey(v),
        ForgetBy::Source(v) => DocumentSelector::Source(v),
    };
    match ctx.service.for_caller(&principal).forget(&selector) {
        Ok(report) => {
            for f in &report.forgotten {
                outln!(
                    ctx.console,
                    "forgot {}: {} chunks, {} vectors, original {}",
                    f.document_id,
                    f.chunks,
                    f.vectors,
                    if f.original_deleted {
                        "deleted"
                    } else {
                        "kept (shared with another document)"
                    }
                );
            }
            if report.documents > report.forgotten.len() {
                outln!(
                    ctx.console,
                    "... and {} more",
                    report.documents - report.forgotten.len()
                );
            }
            outln!(
                ctx.console,
                "forgot {} document(s), {} chunk(s), {} original(s); run `alayasiki-mcp \
                 compact` to drop their vector slots and index entries from the files",
                report.documents,
                report.chunks,
                report.originals_deleted
            );
            match super::settle(ctx, Duration::from_millis(FORGET_SETTLE_MS)) {
                Ok(0) => {}
                Ok(left) => errln!(
                    ctx.console,
                    "forget: {left} indexing job(s) still pending; they finish in the \
                     background (or the next time the memory is opened)"
                ),
                Err(e) => errln!(ctx.console, "forget: {}", e.client_message()),
            }
            0
        }
        Err(e) => {
            let e = e.logged("forget");
            errln!(ctx.console, "alayasiki-mcp forget: {}", e.client_message());
            crate::serve::EXIT_FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_lines_and_indents() {
        let text = format!("{}\nshort", "word ".repeat(30).trim_end());
        let wrapped = wrap(&text, "  ");
        for line in wrapped.lines() {
            assert!(line.starts_with("  "));
            assert!(line.chars().count() <= WRAP_COLUMNS + 2);
        }
        assert!(wrapped.ends_with("\n  short"));
    }
}
