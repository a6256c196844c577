//! `alayasiki-mcp import FILE`: restore an export, or switch from the MCP
//! reference memory server.
//!
//! The format is told from the first line: an export header (see
//! [`super::export`]) or a line of the knowledge-graph file written by
//! `@modelcontextprotocol/server-memory` (`{"type":"entity",...}` or
//! `{"type":"relation",...}`).
//!
//! Everything goes through the normal ingest path (`Memory::ingest`), so
//! imported documents are checked, extracted, chunked and embedded exactly
//! like new ones. Every document gets a deterministic idempotency key, so
//! importing the same file twice (or resuming an interrupted import) stores
//! nothing twice:
//!
//! - export lines keep the document's own key, else `import:<document id>`;
//!   the document keeps its id (when free) and creation time;
//! - an MCP entity becomes one document (`Name (type): observation` per
//!   line; metadata names the entity), keyed by the entity's name; a
//!   relation becomes one document (`From relation type To`, the type's
//!   `_` and camelCase spelled as words), keyed by its three parts. Both
//!   take the source `mcp-memory:<entity>` (the relation's `from`), so
//!   `forget --source` removes an entity with what it asserted.
//!
//! The graph is declared, not left to text extraction: each of those
//! documents carries a `declared_graph` in its metadata (see
//! [`crate::graph::declared`]): the entity with the kind its `entityType`
//! maps to, or the relation as a triple quoting the document's text, with
//! the kinds of its ends (remembered from the file's entity lines, which
//! the memory server writes first). Ingestion turns that into graph
//! entities and relations through the path LLM triples take, so a
//! relation's ends are the entities its entity lines made.
//!
//! Lines that cannot be imported are skipped and reported (line number and
//! reason); the rest still go in.
//!
//! Lines are read and turned into requests one after the other, in file
//! order; store threads prepare and store them in parallel, queueing each
//! admission in file order (`file_order`), so the writer commits many in
//! one group while documents are journalled and indexed in the order of
//! the file. Outcomes are reported in file order too (`window`, which also
//! bounds the lines in flight). A disk that refuses a write stops the
//! import at that line: the lines before it are stored, and importing the
//! file again goes on from there.
//!
//! This module reads the file and reports; `export_lines` and `mcp_memory`
//! turn one line of each format into an ingest request, `store_lines`
//! stores it.

mod bounded_line;
mod export_lines;
mod file_order;
mod mcp_memory;
mod store_lines;
#[cfg(test)]
mod tests;
mod window;

pub use bounded_line::{read_bounded_line, LineRead};
pub use export_lines::export_document;
pub use mcp_memory::{
    entity_kind, mcp_memory_document, relation_phrase, McpKinds, MCP_MEMORY_SOURCE_PREFIX,
};

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::console::{errln, outln};
use super::export::{EXPORT_FORMAT, EXPORT_VERSION};
use super::progress::Progress;
use super::regular_file::{open_regular, NOT_REGULAR};
use super::{bulk, drain, throttle, Console, Context, Exit};
use crate::limits::MAX_IMPORT_LINE_BYTES;
use crate::service::{IngestRequest, Restore};
use file_order::FileOrder;
use store_lines::{guarded, receipt, store_line, Line, Stop, Stored};
use window::Window;

/// Skipped lines listed one by one in the report.
const LISTED_SKIPS: usize = 20;
/// Lines handed to the store threads between two looks at the indexing
/// backlog ([`throttle`]): a look counts the journal's pending jobs, which
/// costs more than storing a line of the MCP memory format, and a backlog
/// of `MAX_BULK_BACKLOG` changes little in this many lines.
const LINES_PER_BACKLOG_LOOK: usize = 64;
/// The two formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Export,
    McpMemory,
}

/// What became of one line.
#[derive(Debug)]
enum Outcome {
    Imported,
    AlreadyPresent,
    Skipped {
        code: &'static str,
        reason: String,
    },
    /// The disk refused to store it: the import stops here.
    Stopped {
        reason: String,
    },
    /// Not stored because the disk refused an earlier line.
    NotAttempted,
}

/// What happened to the lines of an import.
#[derive(Debug, Default)]
pub struct Tally {
    pub imported: usize,
    pub already_present: usize,
    pub skipped: usize,
    /// Skips by stable error code.
    pub skipped_by_code: BTreeMap<&'static str, usize>,
    /// The first skips: line number and reason.
    pub listed: Vec<(usize, String)>,
    /// Documents an export's header says it holds.
    pub declared: Option<usize>,
    /// Why the import stopped at a line the disk refused (no line after it
    /// is counted).
    pub stopped: Option<String>,
}

impl Tally {
    /// Document lines missing against an export's header (a file cut
    /// short), if any.
    fn missing(&self) -> Option<usize> {
        let seen = self.imported + self.already_present + self.skipped;
        self.declared.filter(|n| *n > seen).map(|n| n - seen)
    }
}

impl Tally {
    /// Counts line `line`'s outcome (lines come in file order).
    fn record(&mut self, line: usize, outcome: Outcome) {
        if self.stopped.is_some() {
            return;
        }
        match outcome {
            Outcome::Imported => self.imported += 1,
            Outcome::AlreadyPresent => self.already_present += 1,
            Outcome::Skipped { code, reason } => self.skip(line, code, reason),
            Outcome::Stopped { reason } => {
                self.stopped = Some(format!(
                    "line {line}: {reason}; stopped here: the {} line(s) imported before it \
                     are kept, and importing the file again once the disk accepts writes \
                     goes on from this line",
                    self.imported
                ))
            }
            // Only ever after a stopped line, which ends the count.
            Outcome::NotAttempted => {}
        }
    }

    fn skip(&mut self, line: usize, code: &'static str, reason: String) {
        self.skipped += 1;
        *self.skipped_by_code.entry(code).or_default() += 1;
        if self.listed.len() < LISTED_SKIPS {
            self.listed.push((line, reason));
        }
    }
}

/// Opens `file` for an import: a regular file (a pipe or a device would
/// never end), or why not, on the console.
fn open_file(console: &Console, file: &Path) -> Result<std::fs::File, Exit> {
    match open_regular(file) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => {
            errln!(
                console,
                "alayasiki-mcp import: {} {NOT_REGULAR}; import reads an export or a \
                 memory.jsonl saved to a file",
                file.display()
            );
            Err(crate::serve::EXIT_FAILURE)
        }
        Err(e) => {
            errln!(
                console,
                "alayasiki-mcp import: cannot open {}: {e}",
                file.display()
            );
            Err(crate::serve::EXIT_FAILURE)
        }
    }
}

/// Checks, before any memory is reached, that `file` can be imported.
pub fn check_file(file: &Path) -> Result<(), Exit> {
    open_file(&Console::process(), file).map(drop)
}

/// `alayasiki-mcp import FILE [--tenant T] [--data-dir DIR]`.
pub fn import(ctx: &Context, tenant: Option<String>, file: &Path) -> Exit {
    let reader = match open_file(&ctx.console, file) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let size = reader.metadata().map(|m| m.len()).unwrap_or(0);
    let outcome = run(ctx, tenant, BufReader::new(reader), size);
    let drained = drain(ctx, "import");
    match (outcome, drained) {
        (Ok((format, tally)), Ok(())) => {
            print_report(&ctx.console, format, &tally);
            match tally.missing() {
                None => 0,
                Some(n) => {
                    errln!(
                        ctx.console,
                        "alayasiki-mcp import: the export's header declares {} document(s); \
                         {n} are not in the file (was it cut short?)",
                        tally.declared.unwrap_or(0)
                    );
                    crate::serve::EXIT_FAILURE
                }
            }
        }
        (Err(message), _) => {
            errln!(ctx.console, "alayasiki-mcp import: {message}");
            match ctx.console.stop_signal() {
                Some(signal) => (crate::cli::SIGNAL_EXIT_BASE + signal) as Exit,
                None => crate::serve::EXIT_FAILURE,
            }
        }
        (_, Err(e)) => {
            errln!(
                ctx.console,
                "alayasiki-mcp import: {}",
                e.logged("import").client_message()
            );
            crate::serve::EXIT_FAILURE
        }
    }
}

fn print_report(console: &Console, format: Format, tally: &Tally) {
    let what = match format {
        Format::Export => "alayasiki export",
        Format::McpMemory => "MCP memory-server file",
    };
    outln!(
        console,
        "import ({what}): {} document(s) imported, {} already present, {} line(s) skipped",
        tally.imported,
        tally.already_present,
        tally.skipped
    );
    for (code, n) in &tally.skipped_by_code {
        outln!(console, "  skipped ({code}): {n}");
    }
    for (line, reason) in &tally.listed {
        outln!(console, "  line {line}: {reason}");
    }
    if tally.skipped > tally.listed.len() {
        outln!(console, "  ... {} more", tally.skipped - tally.listed.len());
    }
}

fn run(
    ctx: &Context,
    tenant: Option<String>,
    reader: impl BufRead,
    size: u64,
) -> Result<(Format, Tally), String> {
    let principal = ctx
        .principal(tenant, "import")
        .map_err(|_| "invalid tenant".to_string())?;
    let memory = ctx.service.for_caller(&principal);
    let order = FileOrder::default();
    let stop = Stop::default();
    let threads = bulk::store_threads();
    let (read, mut tally) = std::thread::scope(|scope| {
        let (to_store, work) = crossbeam_channel::bounded::<Line>(threads);
        // Both hold no more than the window's lines.
        let (done_tx, done) = crossbeam_channel::unbounded::<(usize, Outcome)>();
        let (queued_tx, queued) = crossbeam_channel::unbounded();
        for _ in 0..threads {
            let (work, done_tx, queued_tx) = (work.clone(), done_tx.clone(), queued_tx.clone());
            let (memory, order, stop) = (&memory, &order, &stop);
            scope.spawn(move || {
                for line in work {
                    let seq = line.seq;
                    let stored = guarded(|| store_line(memory, line, order, stop))
                        .unwrap_or_else(Stored::Done);
                    let sent = match stored {
                        Stored::Done(outcome) => done_tx.send((seq, outcome)).is_ok(),
                        Stored::Queued(q) => queued_tx.send((seq, q)).is_ok(),
                    };
                    if !sent {
                        break;
                    }
                }
            });
        }
        let (memory, stop) = (&memory, &stop);
        scope.spawn(move || {
            for (seq, q) in queued {
                let outcome = guarded(|| receipt(memory, q, seq, stop)).unwrap_or_else(|o| o);
                if done_tx.send((seq, outcome)).is_err() {
                    break;
                }
            }
        });
        drop((work, queued_tx));
        let mut flight = Flight {
            window: Window::default(),
            tally: Tally::default(),
            order: &order,
            to_store,
            done,
        };
        let read = read_lines(ctx, reader, size, &mut flight, stop);
        (read, flight.finish())
    });
    if let Some(stopped) = tally.stopped.take() {
        return Err(stopped);
    }
    let format = read?.ok_or_else(|| no_line_read(&tally))?;
    Ok((format, tally))
}

/// Reads the file line by line, in order: what cannot be imported is a
/// skip, the rest a request for the store threads. The format, once a line
/// told it. Stops early when the disk refused a line (`stop`).
fn read_lines(
    ctx: &Context,
    mut reader: impl BufRead,
    size: u64,
    flight: &mut Flight<'_>,
    stop: &Stop,
) -> Result<Option<Format>, String> {
    let mut progress = Progress::new(&ctx.console, "import", "lines", None, Some(size));
    let mut format = None;
    let mut kinds = McpKinds::default();
    let mut buf = Vec::new();
    let mut number = 0;
    // Lines handed to the store threads.
    let mut stored = 0usize;
    let mut consumed = 0u64;
    while let Some(read) = read_bounded_line(&mut reader, &mut buf, MAX_IMPORT_LINE_BYTES)
        .map_err(|e| format!("cannot read the file: {e}"))?
    {
        if stop.stopped() {
            break;
        }
        if let Some(signal) = ctx.console.stop_signal() {
            progress.finish();
            return Err(format!(
                "interrupted by signal {signal} before line {}; the lines imported before it \
                 are kept, and importing the file again goes on from there",
                number + 1
            ));
        }
        number += 1;
        consumed += read.bytes as u64;
        progress.set(number as u64, consumed);
        if read.too_long {
            flight.skip(
                number,
                "limit_exceeded",
                format!(
                    "too long: over {MAX_IMPORT_LINE_BYTES} bytes (MAX_IMPORT_LINE_BYTES), \
                     more than any document line holds"
                ),
            );
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            flight.skip(number, "invalid_input", "not UTF-8".into());
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                if format.is_none() {
                    return Err(format!("line {number} is not JSON ({e}); {}", NOT_A_FORMAT));
                }
                flight.skip(number, "invalid_input", format!("not JSON: {e}"));
                continue;
            }
        };
        let current = match format {
            Some(f) => f,
            None => {
                let f = detect(&value)?;
                format = Some(f);
                if f == Format::Export {
                    // The header line.
                    flight.tally.declared = value["documents"].as_u64().map(|n| n as usize);
                    continue;
                }
                f
            }
        };
        let outcome = match current {
            Format::Export => export_document(&value).map(Some),
            Format::McpMemory => mcp_memory_document(&value, &mut kinds),
        };
        let (request, restore) = match outcome {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(reason) => {
                flight.skip(number, "invalid_input", reason);
                continue;
            }
        };
        if stored.is_multiple_of(LINES_PER_BACKLOG_LOOK) {
            throttle(ctx).map_err(|e| format!("line {number}: {}", e.client_message()))?;
        }
        stored += 1;
        flight.store(number, buf.len(), request, restore);
    }
    progress.finish();
    Ok(format)
}

/// The lines of an import in flight: the window, and the channels to and
/// from the store threads.
struct Flight<'a> {
    window: Window,
    tally: Tally,
    order: &'a FileOrder,
    to_store: crossbeam_channel::Sender<Line>,
    done: crossbeam_channel::Receiver<(usize, Outcome)>,
}

impl Flight<'_> {
    /// Reports line `number` skipped, after the lines before it.
    fn skip(&mut self, number: usize, code: &'static str, reason: String) {
        self.make_room(0);
        let seq = self.window.open(number, 0, None);
        // Nothing to queue: its turn passes at once.
        drop(self.order.turn(seq));
        let outcome = Outcome::Skipped { code, reason };
        self.window.close(seq, outcome, &mut self.tally);
    }

    /// Hands line `number` (of `bytes`) to the store threads.
    fn store(&mut self, number: usize, bytes: usize, request: IngestRequest, mut restore: Restore) {
        self.make_room(bytes);
        // An id a line in flight keeps is taken: stored after it, this
        // line would find it taken and get a new one, so it does now.
        if restore
            .doc_id
            .as_deref()
            .is_some_and(|id| self.window.restores(id))
        {
            restore.doc_id = None;
        }
        let seq = self.window.open(number, bytes, restore.doc_id.clone());
        let line = Line {
            seq,
            request,
            restore,
        };
        if self.to_store.send(line).is_err() {
            // No store thread is left (one panicked): the scope ends with
            // its panic.
            drop(self.order.turn(seq));
            self.window
                .close(seq, Outcome::NotAttempted, &mut self.tally);
        }
        self.collect();
    }

    /// Waits (taking outcomes in) until a line of `bytes` fits the window.
    fn make_room(&mut self, bytes: usize) {
        while !self.window.has_room(bytes) {
            match self.done.recv() {
                Ok((seq, outcome)) => self.window.close(seq, outcome, &mut self.tally),
                Err(_) => break,
            }
        }
    }

    /// Takes in the outcomes that came.
    fn collect(&mut self) {
        while let Ok((seq, outcome)) = self.done.try_recv() {
            self.window.close(seq, outcome, &mut self.tally);
        }
    }

    /// Waits for every line in flight; the tally of all.
    fn finish(self) -> Tally {
        let Flight {
            mut window,
            mut tally,
            to_store,
            done,
            ..
        } = self;
        drop(to_store);
        for (seq, outcome) in done {
            window.close(seq, outcome, &mut tally);
        }
        debug_assert!(window.is_empty());
        tally
    }
}

/// Why a file in which no line told the format was not imported: it holds
/// no lines, or every line was skipped (too long, not UTF-8), and the
/// first such line says why.
fn no_line_read(tally: &Tally) -> String {
    match tally.listed.first() {
        None => format!("the file is empty; {NOT_A_FORMAT}"),
        Some((line, reason)) => format!(
            "no line could be read ({} skipped); line {line} is {reason}; {NOT_A_FORMAT}",
            tally.skipped
        ),
    }
}

const NOT_A_FORMAT: &str = "import reads an alayasiki-mcp export or the memory.jsonl of \
    @modelcontextprotocol/server-memory";

/// Tells the format from the first line.
pub fn detect(first: &Value) -> Result<Format, String> {
    if first.get("format").and_then(Value::as_str) == Some(EXPORT_FORMAT) {
        let version = first.get("version").and_then(Value::as_u64).unwrap_or(0);
        if version == 0 || version > EXPORT_VERSION {
            return Err(format!(
                "this export has format version {version}; this alayasiki-mcp reads versions 1 \
                 to {EXPORT_VERSION} (upgrade it to import this file)"
            ));
        }
        return Ok(Format::Export);
    }
    match first.get("type").and_then(Value::as_str) {
        Some("entity" | "relation") => Ok(Format::McpMemory),
        _ => Err(format!(
            "the first line is neither an export header nor an entity or relation; {NOT_A_FORMAT}"
        )),
    }
}

fn string_field(v: &Value, key: &str) -> Result<Option<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}
