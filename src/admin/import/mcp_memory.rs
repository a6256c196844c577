//! Lines of the knowledge-graph file of `@modelcontextprotocol/server-memory`:
//! an entity or a relation becomes one document whose metadata declares the
//! graph it stands for (see the parent module).

use serde_json::{json, Value};

use super::string_field;
use crate::graph::declared::DECLARED_GRAPH_KEY;
use crate::ids;
use crate::limits::{MAX_LLM_NAME_BYTES, MAX_SOURCE_BYTES};
use crate::service::{Content, IngestRequest, Restore};

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
            (text, metadata, source_of(&name), key)
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
            // Declared only where the graph takes it as it is (a predicate
            // of digits alone, a name too long): else the line is text only.
            let triple = json!({
                "subject": from.trim(), "subject_kind": kinds.get(&from),
                "predicate": phrase,
                "object": to.trim(), "object_kind": kinds.get(&to),
                "negated": false, "evidence": text});
            if crate::graph::llm_triples::is_valid_triple(&triple) {
                metadata[DECLARED_GRAPH_KEY] = json!({ "triples": [triple] });
            }
            let identity = json!([from, relation, to]).to_string();
            let key = format!(
                "mcp-memory:relation:{}",
                ids::sha256_hex(identity.as_bytes())
            );
            (text, metadata, source_of(&from), key)
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
        allow_duplicate: false,
        replaces: Default::default(),
        title: None,
        scopes: Vec::new(),
    };
    Ok(Some((request, Restore::default())))
}

/// The source of an entity's documents (its own and its relations'):
/// `mcp-memory:<name>`, or for a name too long for `MAX_SOURCE_BYTES` its
/// beginning and a digest of the whole, so every long name keeps a source
/// of its own.
fn source_of(name: &str) -> String {
    let whole = format!("{MCP_MEMORY_SOURCE_PREFIX}{name}");
    if whole.len() <= MAX_SOURCE_BYTES {
        return whole;
    }
    let digest = &ids::sha256_hex(name.as_bytes())[..16];
    let end = crate::text::floor_char_boundary(
        name,
        MAX_SOURCE_BYTES - MCP_MEMORY_SOURCE_PREFIX.len() - digest.len() - "…#".len(),
    );
    format!("{MCP_MEMORY_SOURCE_PREFIX}{}…#{digest}", &name[..end])
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
        // Lowercasing may add a combining mark ("İ" is "i" and U+0307),
        // which a predicate may not hold: only letters and digits stay.
        spaced.extend(if c.is_alphanumeric() || c == '\'' {
            c.to_lowercase()
                .filter(|l| l.is_alphanumeric() || *l == '\'')
                .collect::<Vec<_>>()
        } else {
            vec![' ']
        });
        previous = Some(c);
    }
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}
