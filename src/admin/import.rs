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

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::export::{EXPORT_FORMAT, EXPORT_VERSION};
use super::progress::Progress;
use super::{drain, open_dir, throttle, Missing, Opened};
use crate::base64;
use crate::graph::declared::DECLARED_GRAPH_KEY;
use crate::ids;
use crate::limits::{
    MAX_CONTENT_BYTES, MAX_IMPORT_LINE_BYTES, MAX_LLM_EVIDENCE_BYTES, MAX_LLM_NAME_BYTES,
    MAX_LLM_PREDICATE_BYTES,
};
use crate::service::{Content, IngestRequest, Memory, Restore};
use crate::store::VectorPolicy;

/// Skipped lines listed one by one in the report.
const LISTED_SKIPS: usize = 20;
/// Source prefix of documents made from the MCP memory server's graph.
pub const MCP_MEMORY_SOURCE_PREFIX: &str = "mcp-memory:";
/// `imported_from` in the metadata of those documents.
const MCP_MEMORY_ORIGIN: &str = "@modelcontextprotocol/server-memory";
/// Entity kinds remembered from an MCP memory-server file's entity lines
/// for its relation lines (bounds the import's memory; the ends of later
/// relations still resolve to stored entities by name, only without a
/// kind claim).
const MAX_REMEMBERED_KINDS: usize = 262_144;

/// The entity kinds of an MCP memory-server file, by entity name.
#[derive(Debug, Default)]
pub struct McpKinds(std::collections::HashMap<String, &'static str>);

impl McpKinds {
    fn remember(&mut self, name: &str, kind: Option<&'static str>) {
        if let Some(kind) = kind {
            if self.0.len() < MAX_REMEMBERED_KINDS || self.0.contains_key(name) {
                self.0.insert(name.to_string(), kind);
            }
        }
    }

    fn get(&self, name: &str) -> Option<&'static str> {
        self.0.get(name).copied()
    }
}

/// The two formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Export,
    McpMemory,
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
}

impl Tally {
    fn skip(&mut self, line: usize, code: &'static str, reason: String) {
        self.skipped += 1;
        *self.skipped_by_code.entry(code).or_default() += 1;
        if self.listed.len() < LISTED_SKIPS {
            self.listed.push((line, reason));
        }
    }
}

/// `alayasiki-mcp import FILE [--tenant T] [--data-dir DIR]`.
pub fn import(data_dir: Option<PathBuf>, tenant: Option<String>, file: &Path) -> ExitCode {
    let reader = match File::open(file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("alayasiki-mcp import: cannot open {}: {e}", file.display());
            return ExitCode::from(crate::serve::EXIT_FAILURE);
        }
    };
    let size = reader.metadata().map(|m| m.len()).unwrap_or(0);
    let opened = match open_dir(data_dir, VectorPolicy::Keep, "import", Missing::Create) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let outcome = run(&opened, tenant, BufReader::new(reader), size);
    let drained = drain(&opened.service, "import");
    opened.service.shutdown();
    match (outcome, drained) {
        (Ok((format, tally)), Ok(())) => {
            print_report(format, &tally);
            ExitCode::SUCCESS
        }
        (Err(message), _) => {
            eprintln!("alayasiki-mcp import: {message}");
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
        (_, Err(e)) => {
            eprintln!(
                "alayasiki-mcp import: {}",
                e.logged("import").client_message()
            );
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
    }
}

fn print_report(format: Format, tally: &Tally) {
    let what = match format {
        Format::Export => "alayasiki export",
        Format::McpMemory => "MCP memory-server file",
    };
    println!(
        "import ({what}): {} document(s) imported, {} already present, {} line(s) skipped",
        tally.imported, tally.already_present, tally.skipped
    );
    for (code, n) in &tally.skipped_by_code {
        println!("  skipped ({code}): {n}");
    }
    for (line, reason) in &tally.listed {
        println!("  line {line}: {reason}");
    }
    if tally.skipped > tally.listed.len() {
        println!("  ... {} more", tally.skipped - tally.listed.len());
    }
}

fn run(
    opened: &Opened,
    tenant: Option<String>,
    mut reader: impl BufRead,
    size: u64,
) -> Result<(Format, Tally), String> {
    let principal = opened
        .principal(tenant, "import")
        .map_err(|_| "invalid tenant".to_string())?;
    let memory = opened.service.for_caller(&principal);
    let mut progress = Progress::new("import", "lines", None, Some(size));
    let mut tally = Tally::default();
    let mut format = None;
    let mut kinds = McpKinds::default();
    let mut buf = Vec::new();
    let mut number = 0;
    let mut consumed = 0u64;
    while let Some(read) = read_bounded_line(&mut reader, &mut buf, MAX_IMPORT_LINE_BYTES)
        .map_err(|e| format!("cannot read the file: {e}"))?
    {
        number += 1;
        consumed += read.bytes as u64;
        progress.set(number as u64, consumed);
        if read.too_long {
            tally.skip(
                number,
                "limit_exceeded",
                format!("longer than {MAX_IMPORT_LINE_BYTES} bytes (MAX_IMPORT_LINE_BYTES)"),
            );
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            tally.skip(number, "invalid_input", "not UTF-8".into());
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
                tally.skip(number, "invalid_input", format!("not JSON: {e}"));
                continue;
            }
        };
        let current = match format {
            Some(f) => f,
            None => {
                let f = detect(&value)?;
                format = Some(f);
                if f == Format::Export {
                    continue; // the header line
                }
                f
            }
        };
        let outcome = match current {
            Format::Export => export_document(&value),
            Format::McpMemory => mcp_memory_document(&value, &mut kinds),
        };
        let (request, restore) = match outcome {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(reason) => {
                tally.skip(number, "invalid_input", reason);
                continue;
            }
        };
        throttle(&opened.service);
        store(&memory, request, restore, number, &mut tally);
    }
    progress.finish();
    let format = format.ok_or_else(|| format!("the file is empty; {NOT_A_FORMAT}"))?;
    Ok((format, tally))
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

fn store(
    memory: &Memory<'_>,
    request: IngestRequest,
    restore: Restore,
    line: usize,
    tally: &mut Tally,
) {
    // A key stored before means this line was imported before: skip the
    // extraction and embedding ingestion would do before finding that out.
    if let Some(key) = &request.idempotency_key {
        if let Ok(Some(_)) = memory.document_for_key(key) {
            tally.already_present += 1;
            return;
        }
    }
    match memory.ingest_restored(request, restore) {
        Ok(r) if r.idempotent_replay => tally.already_present += 1,
        Ok(_) => tally.imported += 1,
        Err(e) => {
            let e = e.logged("import");
            let reason = e.client_message();
            tally.skip(line, e.code(), reason);
        }
    }
}

fn string_field(v: &Value, key: &str) -> Result<Option<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

/// An export's document line as an ingest request (`None` for lines of
/// other types, which later versions may add).
pub fn export_document(v: &Value) -> Result<Option<(IngestRequest, Restore)>, String> {
    if v.get("type").and_then(Value::as_str) != Some("document") {
        return Ok(None);
    }
    let media_type = string_field(v, "media_type")?.ok_or("`media_type` is missing")?;
    let encoded = string_field(v, "original")?.ok_or("`original` is missing")?;
    if encoded.len() / 4 * 3 > MAX_CONTENT_BYTES + 3 {
        return Err(format!(
            "the original exceeds {MAX_CONTENT_BYTES} bytes (MAX_CONTENT_BYTES)"
        ));
    }
    let bytes = base64::decode(&encoded)
        .map_err(|e| format!("`original` is not base64 (offset {})", e.offset))?;
    if let Some(sha) = string_field(v, "sha256")? {
        if ids::sha256_hex(&bytes) != sha {
            return Err("`original` does not match its sha256: the export is damaged".into());
        }
    }
    let metadata = match v.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("`metadata` must be an object".into()),
    };
    let id = string_field(v, "id")?;
    let key = match (string_field(v, "idempotency_key")?, &id) {
        (Some(k), _) => k,
        (None, Some(id)) => format!("import:{id}"),
        (None, None) => format!(
            "import:{}",
            ids::sha256_hex(
                json!([media_type, ids::sha256_hex(&bytes), v.get("source")])
                    .to_string()
                    .as_bytes()
            )
        ),
    };
    let created_at = match v.get("created_at") {
        None | Some(Value::Null) => None,
        Some(t) => Some(t.as_i64().ok_or("`created_at` must be Unix milliseconds")?),
    };
    let expires_at = match v.get("expires_at") {
        None | Some(Value::Null) => None,
        Some(t) => Some(t.as_i64().ok_or("`expires_at` must be Unix milliseconds")?),
    };
    let request = IngestRequest {
        expires_at,
        content: Content::File {
            filename: string_field(v, "title")?,
            mime_type: Some(media_type),
            bytes,
        },
        metadata,
        idempotency_key: Some(key),
        source: string_field(v, "source")?,
        provenance: string_field(v, "provenance")?,
        wait: false,
    };
    Ok(Some((
        request,
        Restore {
            doc_id: id,
            created_at,
        },
    )))
}

/// A line of the MCP memory server's file as an ingest request; `kinds`
/// remembers entity lines' kinds for later relation lines.
pub fn mcp_memory_document(
    v: &Value,
    kinds: &mut McpKinds,
) -> Result<Option<(IngestRequest, Restore)>, String> {
    let text_of = |key: &str| -> Result<String, String> {
        string_field(v, key)?
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| format!("`{key}` is missing or blank"))
    };
    let (text, metadata, source, key) = match v.get("type").and_then(Value::as_str) {
        Some("entity") => {
            let name = text_of("name")?;
            let entity_type = string_field(v, "entityType")?.unwrap_or_else(|| "entity".into());
            let observations: Vec<&str> = match v.get("observations") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|o| o.as_str().ok_or("`observations` must hold strings"))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`observations` must be an array".into()),
            };
            let label = format!("{name} ({entity_type})");
            let text = if observations.is_empty() {
                label
            } else {
                observations
                    .iter()
                    .map(|o| format!("{label}: {}", o.trim()))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let kind = entity_kind(&entity_type);
            kinds.remember(&name, kind);
            let mut metadata = json!({"entity": name, "entity_type": entity_type,
                                      "imported_from": MCP_MEMORY_ORIGIN});
            if declarable(&name) {
                metadata[DECLARED_GRAPH_KEY] =
                    json!({"entities": [{"name": name.trim(), "kind": kind}]});
            }
            let key = format!("mcp-memory:entity:{}", ids::sha256_hex(name.as_bytes()));
            (
                text,
                metadata,
                format!("{MCP_MEMORY_SOURCE_PREFIX}{name}"),
                key,
            )
        }
        Some("relation") => {
            let (from, relation, to) = (text_of("from")?, text_of("relationType")?, text_of("to")?);
            let phrase = relation_phrase(&relation);
            if phrase.is_empty() {
                return Err("`relationType` has no letters or digits".into());
            }
            let text = format!("{} {phrase} {}", from.trim(), to.trim());
            let mut metadata = json!({"relation": relation, "from": from, "to": to,
                                      "imported_from": MCP_MEMORY_ORIGIN});
            if declarable(&from)
                && declarable(&to)
                && phrase.len() <= MAX_LLM_PREDICATE_BYTES
                && text.len() <= MAX_LLM_EVIDENCE_BYTES
            {
                metadata[DECLARED_GRAPH_KEY] = json!({"triples": [{
                    "subject": from.trim(), "subject_kind": kinds.get(&from),
                    "predicate": phrase,
                    "object": to.trim(), "object_kind": kinds.get(&to),
                    "negated": false, "evidence": text}]});
            }
            let identity = json!([from, relation, to]).to_string();
            let key = format!(
                "mcp-memory:relation:{}",
                ids::sha256_hex(identity.as_bytes())
            );
            (
                text,
                metadata,
                format!("{MCP_MEMORY_SOURCE_PREFIX}{from}"),
                key,
            )
        }
        _ => return Err("neither an entity nor a relation".into()),
    };
    let request = IngestRequest {
        expires_at: None,
        content: Content::Text {
            text,
            media_type: None,
        },
        metadata: metadata.as_object().cloned().unwrap_or_default(),
        idempotency_key: Some(key),
        source: Some(source),
        provenance: None,
        wait: false,
    };
    Ok(Some((request, Restore::default())))
}

/// Whether a name can be declared to the graph (within the bounds every
/// triple's names have); a longer one is imported as text only.
fn declarable(name: &str) -> bool {
    name.trim().len() <= MAX_LLM_NAME_BYTES && !name.chars().any(char::is_control)
}

/// The graph kind of a memory-server `entityType` (free text), if it names
/// one: people, organizations, places, artifacts and concepts.
pub fn entity_kind(entity_type: &str) -> Option<&'static str> {
    let t = entity_type.trim().to_lowercase().replace(['_', '-'], " ");
    let t = t
        .strip_suffix('s')
        .filter(|s| !s.ends_with('s'))
        .unwrap_or(&t);
    Some(match t {
        "person" | "people" | "human" | "user" | "individual" | "contact" | "character"
        | "author" | "customer" | "employee" | "friend" | "colleague" => "person",
        "organization" | "organisation" | "company" | "org" | "team" | "business"
        | "institution" | "agency" | "corporation" | "group" | "university" | "school"
        | "startup" | "employer" | "companie" => "organization",
        "place" | "location" | "city" | "country" | "region" | "address" | "venue" | "building"
        | "site" | "state" | "town" | "village" => "place",
        "artifact" | "product" | "software" | "tool" | "project" | "document" | "file"
        | "device" | "library" | "application" | "app" | "service" | "repository"
        | "technology" | "framework" | "system" | "package" | "book" => "artifact",
        "concept" | "topic" | "idea" | "skill" | "subject" | "field" | "preference"
        | "interest" | "language" | "theme" => "concept",
        _ => return None,
    })
}

/// A memory-server `relationType` as a phrase of lowercase words:
/// `works_at`, `worksAt` and `works-at` are all "works at" (only letters,
/// digits and apostrophes survive, as a graph predicate requires).
pub fn relation_phrase(relation_type: &str) -> String {
    let mut spaced = String::with_capacity(relation_type.len() + 4);
    let mut previous: Option<char> = None;
    for c in relation_type.chars() {
        if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_numeric()) {
            spaced.push(' ');
        }
        spaced.extend(if c.is_alphanumeric() || c == '\'' {
            c.to_lowercase().collect::<Vec<_>>()
        } else {
            vec![' ']
        });
        previous = Some(c);
    }
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What [`read_bounded_line`] read.
pub struct LineRead {
    /// Bytes consumed from the input, newline included.
    pub bytes: usize,
    /// The line was longer than the limit: `buf` holds only its start.
    pub too_long: bool,
}

/// Reads one line (without its `\n` / `\r\n`) into `buf`, keeping at most
/// `limit` bytes: a longer line is consumed to its end but not buffered.
/// `None` at end of input.
pub fn read_bounded_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<LineRead>> {
    buf.clear();
    let mut consumed = 0;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            if consumed == 0 {
                return Ok(None);
            }
            break;
        }
        let (piece, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + piece.len() > limit {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(piece);
            }
        }
        let used = found.unwrap_or(available.len());
        reader.consume(used);
        consumed += used;
        if found.is_some() {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(LineRead {
        bytes: consumed,
        too_long,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format and one request per importable line of a whole file.
    fn requests(text: &str) -> Result<(Format, Vec<(IngestRequest, Restore)>), String> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let first: Value =
            serde_json::from_str(lines.next().ok_or("empty")?).map_err(|e| e.to_string())?;
        let format = detect(&first)?;
        let mut out = Vec::new();
        let mut kinds = McpKinds::default();
        let all = std::iter::once(first)
            .chain(lines.map(|l| serde_json::from_str(l).unwrap_or(Value::Null)));
        for v in all.skip(usize::from(format == Format::Export)) {
            let r = match format {
                Format::Export => export_document(&v)?,
                Format::McpMemory => mcp_memory_document(&v, &mut kinds)?,
            };
            out.extend(r);
        }
        Ok((format, out))
    }

    #[test]
    fn bounded_lines_skip_what_is_too_long() {
        let input = b"short\r\nxxxxxxxxxxxx\nlast";
        let mut r = &input[..];
        let mut buf = Vec::new();
        let a = read_bounded_line(&mut r, &mut buf, 8).unwrap().unwrap();
        assert_eq!(
            (buf.as_slice(), a.bytes, a.too_long),
            (&b"short"[..], 7, false)
        );
        let b = read_bounded_line(&mut r, &mut buf, 8).unwrap().unwrap();
        assert!(b.too_long);
        assert_eq!(b.bytes, 13);
        let c = read_bounded_line(&mut r, &mut buf, 8).unwrap().unwrap();
        assert_eq!((buf.as_slice(), c.too_long), (&b"last"[..], false));
        assert!(read_bounded_line(&mut r, &mut buf, 8).unwrap().is_none());
    }

    #[test]
    fn mcp_memory_lines_become_documents() {
        let text = r#"{"type":"entity","name":"Alice","entityType":"person","observations":["works at Acme","likes tea"]}
{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}"#;
        let (format, reqs) = requests(text).unwrap();
        assert_eq!(format, Format::McpMemory);
        assert_eq!(reqs.len(), 2);
        let (entity, _) = &reqs[0];
        let Content::Text { text, .. } = &entity.content else {
            panic!("text expected")
        };
        assert_eq!(
            text,
            "Alice (person): works at Acme\nAlice (person): likes tea"
        );
        assert_eq!(entity.metadata["entity"], "Alice");
        assert_eq!(entity.source.as_deref(), Some("mcp-memory:Alice"));
        let (relation, _) = &reqs[1];
        let Content::Text { text, .. } = &relation.content else {
            panic!("text expected")
        };
        assert_eq!(text, "Alice works at Acme");
        assert_eq!(relation.metadata["relation"], "works_at");
        // The graph is declared: the entity with its kind, the relation as
        // a triple quoting the text, its ends with the kinds of their
        // entity lines.
        assert_eq!(
            entity.metadata[DECLARED_GRAPH_KEY],
            json!({"entities": [{"name": "Alice", "kind": "person"}]})
        );
        assert_eq!(
            relation.metadata[DECLARED_GRAPH_KEY],
            json!({"triples": [{"subject": "Alice", "subject_kind": "person",
                                "predicate": "works at", "object": "Acme", "object_kind": null,
                                "negated": false, "evidence": "Alice works at Acme"}]})
        );
        for r in &reqs {
            let declared = crate::graph::declared::parse(&r.0.metadata);
            assert!(matches!(declared, Ok(Some(_))), "{declared:?}");
        }
        // Keys are deterministic: the same line gives the same key.
        let (_, again) = requests(text_line_twice()).unwrap();
        assert_eq!(again[0].0.idempotency_key, again[1].0.idempotency_key);
    }

    #[test]
    fn relation_types_become_phrases_and_entity_types_kinds() {
        for (t, phrase) in [
            ("works_at", "works at"),
            ("worksAt", "works at"),
            ("is-part-of", "is part of"),
            ("MENTORS", "mentors"),
            ("reports to (since 2020)", "reports to since 2020"),
            ("__", ""),
        ] {
            assert_eq!(relation_phrase(t), phrase, "{t}");
        }
        for (t, kind) in [
            ("person", Some("person")),
            ("People", Some("person")),
            ("company", Some("organization")),
            ("Organizations", Some("organization")),
            ("city", Some("place")),
            ("address", Some("place")),
            ("software_project", None),
            ("project", Some("artifact")),
            ("event", None),
        ] {
            assert_eq!(entity_kind(t), kind, "{t}");
        }
        let mut kinds = McpKinds::default();
        let long = "N".repeat(MAX_LLM_NAME_BYTES + 1);
        let line = json!({"type": "relation", "from": long, "to": "B", "relationType": "r"});
        let (req, _) = mcp_memory_document(&line, &mut kinds).unwrap().unwrap();
        assert!(
            req.metadata.get(DECLARED_GRAPH_KEY).is_none(),
            "a name beyond the bounds is imported as text only"
        );
    }

    fn text_line_twice() -> &'static str {
        "{\"type\":\"relation\",\"from\":\"A\",\"to\":\"B\",\"relationType\":\"r\"}\n\
         {\"type\":\"relation\",\"from\":\"A\",\"to\":\"B\",\"relationType\":\"r\"}"
    }

    #[test]
    fn export_lines_are_checked() {
        let header = json!({"format": EXPORT_FORMAT, "version": 1}).to_string();
        let good = json!({"type": "document", "id": "doc_0123456789abcdef01234567",
            "media_type": "text/plain", "original": base64::encode(b"hello"),
            "sha256": ids::sha256_hex(b"hello"), "created_at": 5, "metadata": {"a": 1}});
        let (format, reqs) = requests(&format!("{header}\n{good}")).unwrap();
        assert_eq!(format, Format::Export);
        let (req, restore) = &reqs[0];
        assert_eq!(
            req.idempotency_key.as_deref(),
            Some("import:doc_0123456789abcdef01234567")
        );
        assert_eq!(restore.created_at, Some(5));
        let mut bad = good.clone();
        bad["sha256"] = json!(ids::sha256_hex(b"other"));
        assert!(export_document(&bad).unwrap_err().contains("damaged"));
        let newer = json!({"format": EXPORT_FORMAT, "version": EXPORT_VERSION + 1});
        assert!(detect(&newer).unwrap_err().contains("upgrade"));
        assert!(detect(&json!({"hello": 1})).is_err());
    }
}
