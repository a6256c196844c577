//! One session's graph: its notes (in write order), the nodes and edges
//! the caller named explicitly, and what the session is charged.
//!
//! Owns the shape of a session and the rules for adding to it: a write is
//! first [`SessionGraph::check`]ed against the graph (edges must join known
//! nodes) and only then [`SessionGraph::apply`]d, which cannot fail, so a
//! write is either wholly stored or not at all. It never decides who may
//! see a graph, when it expires or whether the budget allows a write: the
//! registry does, under its lock, before calling in here.
//!
//! Notes, nodes and edges are immutable once stored and held by `Arc`, so
//! readers take a cheap snapshot under the registry lock and search or
//! serialize it after releasing the lock.

use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::limits::{MAX_SESSION_ID_BYTES, MAX_WM_NAME_BYTES};

/// A caller-chosen session name: 1 to [`MAX_SESSION_ID_BYTES`] characters
/// of `[A-Za-z0-9._:-]` (safe in URIs, logs and file names as is).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(String);

impl SessionId {
    pub fn parse(raw: &str) -> Result<SessionId> {
        if raw.is_empty() || raw.len() > MAX_SESSION_ID_BYTES {
            return Err(Error::invalid(format!(
                "`session_id` must be 1 to {MAX_SESSION_ID_BYTES} characters \
                 (MAX_SESSION_ID_BYTES) of A-Z, a-z, 0-9, '.', '_', ':' and '-'"
            )));
        }
        if let Some(bad) = raw
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "._:-".contains(*c)))
        {
            return Err(Error::invalid(format!(
                "`session_id` may contain only A-Z, a-z, 0-9, '.', '_', ':' and '-' \
                 (found {bad:?})"
            )));
        }
        Ok(SessionId(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A stored note: one write's searchable content.
#[derive(Debug)]
pub struct Note {
    /// `{session_id}/{seq}`: the note's id in evidence (`document_id`) and
    /// citations (`chunk_id` is `{id}:{ordinal}`). `/` cannot occur in a
    /// session id, so the id is unambiguous and never looks like a
    /// persistent document id.
    pub id: String,
    /// The write's position in its session (1-based).
    pub seq: u32,
    pub media_type: String,
    /// The searchable text; evidence spans are byte offsets into it.
    pub text: String,
    /// The content as written, when `text` differs from it (JSON is
    /// flattened into `path: value` lines for search).
    pub original: Option<String>,
    /// Facts about an uploaded file (its bytes are not kept).
    pub file: Option<FileFacts>,
    pub metadata: Map<String, Value>,
    pub written_at_ms: i64,
    pub chunks: Vec<NoteChunk>,
    /// One vector per chunk, set once embedding finished after admission;
    /// unset if it failed (the note is then found by keyword only).
    pub vectors: OnceLock<Vec<Vec<f32>>>,
}

/// An uploaded file, described rather than kept.
#[derive(Debug, Clone, Serialize)]
pub struct FileFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    pub bytes: usize,
    pub sha256: String,
}

/// A searchable passage of a note: `note.text[start..end]`, with its
/// stemmed term counts for BM25.
#[derive(Debug, Clone)]
pub struct NoteChunk {
    pub ordinal: usize,
    pub start: usize,
    pub end: usize,
    pub term_counts: HashMap<String, u32>,
    /// Words in the passage (stopwords included, as FTS5 counts length).
    pub length: u32,
}

/// A node as written: `{id, label, kind?, properties?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeInput {
    pub id: String,
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Map<String, Value>>,
}

/// An edge as written: `{from, to, relation, properties?}`, joining node
/// ids of the same session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeInput {
    pub from: String,
    pub to: String,
    pub relation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Map<String, Value>>,
}

impl NodeInput {
    /// Parses the `nodes` argument: an array of node objects.
    pub fn parse_list(value: &Value) -> Result<Vec<NodeInput>> {
        let items = array("nodes", value)?;
        let mut seen = HashSet::new();
        let mut nodes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("nodes[{i}]");
            let o = object(&at, item, &["id", "label", "kind", "properties"])?;
            let node = NodeInput {
                id: name(&at, o, "id")?.ok_or_else(|| missing(&at, "id"))?,
                label: name(&at, o, "label")?.ok_or_else(|| missing(&at, "label"))?,
                kind: name(&at, o, "kind")?,
                properties: properties(&at, o)?,
            };
            if !seen.insert(node.id.clone()) {
                return Err(Error::invalid(format!(
                    "{at}.id {:?} repeats an earlier node of this write",
                    node.id
                )));
            }
            nodes.push(node);
        }
        Ok(nodes)
    }
}

impl EdgeInput {
    /// Parses the `edges` argument: an array of edge objects.
    pub fn parse_list(value: &Value) -> Result<Vec<EdgeInput>> {
        let items = array("edges", value)?;
        let mut seen = HashSet::new();
        let mut edges = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("edges[{i}]");
            let o = object(&at, item, &["from", "to", "relation", "properties"])?;
            let edge = EdgeInput {
                from: name(&at, o, "from")?.ok_or_else(|| missing(&at, "from"))?,
                to: name(&at, o, "to")?.ok_or_else(|| missing(&at, "to"))?,
                relation: name(&at, o, "relation")?.ok_or_else(|| missing(&at, "relation"))?,
                properties: properties(&at, o)?,
            };
            // An edge is stored by its ends and relation: a second one in
            // the same write would be charged and counted, then replace
            // the first.
            if !seen.insert((edge.from.clone(), edge.to.clone(), edge.relation.clone())) {
                return Err(Error::invalid(format!(
                    "{at} repeats an earlier edge of this write ({:?} -[{:?}]-> {:?})",
                    edge.from, edge.relation, edge.to
                )));
            }
            edges.push(edge);
        }
        Ok(edges)
    }
}

fn array<'v>(field: &str, value: &'v Value) -> Result<&'v Vec<Value>> {
    value
        .as_array()
        .ok_or_else(|| Error::invalid(format!("`{field}` must be an array of objects")))
}

fn object<'v>(at: &str, value: &'v Value, allowed: &[&str]) -> Result<&'v Map<String, Value>> {
    let o = value
        .as_object()
        .ok_or_else(|| Error::invalid(format!("{at} must be an object")))?;
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        let k: String = k.chars().take(64).collect();
        return Err(Error::invalid(format!(
            "{at} has unknown field `{k}`; valid fields: {}",
            allowed.join(", ")
        )));
    }
    Ok(o)
}

/// An optional non-blank string of at most [`MAX_WM_NAME_BYTES`].
fn name(at: &str, o: &Map<String, Value>, key: &str) -> Result<Option<String>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Err(Error::invalid(format!("{at}.{key} must not be blank")))
        }
        Some(Value::String(s)) if s.len() > MAX_WM_NAME_BYTES => {
            Err(Error::LimitExceeded(format!(
                "{at}.{key} is {} bytes; the limit is {MAX_WM_NAME_BYTES} (MAX_WM_NAME_BYTES)",
                s.len()
            )))
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::invalid(format!("{at}.{key} must be a string"))),
    }
}

fn missing(at: &str, key: &str) -> Error {
    Error::invalid(format!("{at} needs `{key}` (a string)"))
}

fn properties(at: &str, o: &Map<String, Value>) -> Result<Option<Map<String, Value>>> {
    match o.get("properties") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(p)) => Ok(Some(p.clone())),
        Some(_) => Err(Error::invalid(format!("{at}.properties must be an object"))),
    }
}

/// A stored node or edge: what was written, and by which write (its seq).
#[derive(Debug, Serialize)]
pub struct Stored<T> {
    #[serde(flatten)]
    pub item: T,
    /// The seq of the write that last set it.
    pub written_by: u32,
}

/// One session's contents and accounting. Times are the registry's
/// monotonic milliseconds ([`super::WorkingMemory`] converts them for
/// display).
#[derive(Debug)]
pub struct SessionGraph {
    pub id: SessionId,
    pub created_at: u64,
    pub updated_at: u64,
    pub expires_at: u64,
    /// Writes and bytes charged to this graph; released only when the
    /// graph is reclaimed, even if work after admission failed.
    pub writes: usize,
    pub bytes: usize,
    next_seq: u32,
    notes: Vec<Arc<Note>>,
    nodes: Vec<Arc<Stored<NodeInput>>>,
    node_index: HashMap<String, usize>,
    edges: Vec<Arc<Stored<EdgeInput>>>,
    edge_index: HashMap<(String, String, String), usize>,
}

/// The nodes and edges a write adds, parsed before admission.
#[derive(Debug)]
pub struct GraphWrite {
    pub nodes: Vec<NodeInput>,
    pub edges: Vec<EdgeInput>,
}

impl SessionGraph {
    pub fn new(id: SessionId, now: u64, ttl_ms: u64) -> SessionGraph {
        SessionGraph {
            id,
            created_at: now,
            updated_at: now,
            expires_at: now.saturating_add(ttl_ms),
            writes: 0,
            bytes: 0,
            next_seq: 1,
            notes: Vec::new(),
            nodes: Vec::new(),
            node_index: HashMap::new(),
            edges: Vec::new(),
            edge_index: HashMap::new(),
        }
    }

    /// The seq the next write will get.
    pub fn next_seq(&self) -> u32 {
        self.next_seq
    }

    /// Refuses a write whose edges join nodes that neither the graph nor
    /// the write itself has.
    pub fn check(&self, write: &GraphWrite) -> Result<()> {
        let written: HashSet<&str> = write.nodes.iter().map(|n| n.id.as_str()).collect();
        let known = |id: &str| written.contains(id) || self.node_index.contains_key(id);
        for (i, e) in write.edges.iter().enumerate() {
            for (end, id) in [("from", &e.from), ("to", &e.to)] {
                if !known(id) {
                    return Err(Error::invalid(format!(
                        "edges[{i}].{end} {id:?} is not a node of this session; add it in \
                         `nodes` (this write or an earlier one)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Stores a checked, admitted write. Nodes and edges written again
    /// (same node id; same from, relation and to) replace the earlier ones
    /// in place, keeping their position.
    pub fn apply(
        &mut self,
        note: Option<Arc<Note>>,
        write: GraphWrite,
        charged: usize,
        now: u64,
        ttl_ms: u64,
    ) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.saturating_add(1);
        self.writes += 1;
        self.bytes += charged;
        self.updated_at = now;
        self.expires_at = now.saturating_add(ttl_ms);
        if let Some(note) = note {
            self.notes.push(note);
        }
        for node in write.nodes {
            let stored = Arc::new(Stored {
                item: node,
                written_by: seq,
            });
            match self.node_index.get(&stored.item.id) {
                Some(&i) => self.nodes[i] = stored,
                None => {
                    self.node_index
                        .insert(stored.item.id.clone(), self.nodes.len());
                    self.nodes.push(stored);
                }
            }
        }
        for edge in write.edges {
            let key = (edge.from.clone(), edge.relation.clone(), edge.to.clone());
            let stored = Arc::new(Stored {
                item: edge,
                written_by: seq,
            });
            match self.edge_index.get(&key) {
                Some(&i) => self.edges[i] = stored,
                None => {
                    self.edge_index.insert(key, self.edges.len());
                    self.edges.push(stored);
                }
            }
        }
    }

    /// A consistent copy of the contents, cheap to take under a lock.
    pub fn snapshot(&self, wall: impl Fn(u64) -> i64) -> SessionSnapshot {
        SessionSnapshot {
            id: self.id.clone(),
            created_at_ms: wall(self.created_at),
            updated_at_ms: wall(self.updated_at),
            expires_at_ms: wall(self.expires_at),
            writes: self.writes,
            bytes: self.bytes,
            notes: self.notes.clone(),
            nodes: self.nodes.clone(),
            edges: self.edges.clone(),
        }
    }
}

/// A session's contents at one moment, with wall-clock times.
#[derive(Debug, Clone)]
pub struct SessionSnapshot {
    pub id: SessionId,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub expires_at_ms: i64,
    pub writes: usize,
    pub bytes: usize,
    pub notes: Vec<Arc<Note>>,
    pub nodes: Vec<Arc<Stored<NodeInput>>>,
    pub edges: Vec<Arc<Stored<EdgeInput>>>,
}

impl SessionSnapshot {
    /// The session as JSON (the resource `alayasiki://sessions/{id}` and
    /// `alayasiki_memory_read` without a query): notes in write order.
    pub fn to_json(&self) -> Value {
        let notes: Vec<Value> = self.notes.iter().map(|n| note_json(n)).collect();
        json!({
            "session_id": self.id.as_str(),
            "created_at": rfc3339(self.created_at_ms),
            "updated_at": rfc3339(self.updated_at_ms),
            "expires_at": rfc3339(self.expires_at_ms),
            "writes": self.writes,
            "bytes_charged": self.bytes,
            "notes": notes,
            "nodes": self.nodes.iter().map(|n| n.as_ref()).collect::<Vec<_>>(),
            "edges": self.edges.iter().map(|e| e.as_ref()).collect::<Vec<_>>(),
        })
    }
}

fn note_json(n: &Note) -> Value {
    let mut v = json!({
        "note_id": n.id,
        "seq": n.seq,
        "media_type": n.media_type,
        "text": n.text,
        "metadata": n.metadata,
        "written_at": rfc3339(n.written_at_ms),
        "chunks": n.chunks.len(),
    });
    if let Some(original) = &n.original {
        v["content"] = Value::String(original.clone());
    }
    if let Some(file) = &n.file {
        v["file"] = json!(file);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_validated_at_both_edges() {
        assert!(SessionId::parse("task-1.a:b_C").is_ok());
        assert!(SessionId::parse(&"a".repeat(MAX_SESSION_ID_BYTES)).is_ok());
        assert!(SessionId::parse(&"a".repeat(MAX_SESSION_ID_BYTES + 1)).is_err());
        for bad in ["", "a/b", "a b", "é", "a\n", "../x"] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn nodes_and_edges_are_parsed_strictly() {
        let nodes = NodeInput::parse_list(&json!([
            {"id": "a", "label": "Alice", "kind": "person", "properties": {"age": 3}},
            {"id": "b", "label": "Bob"}
        ]))
        .unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(
            serde_json::to_string(&nodes[1]).unwrap(),
            r#"{"id":"b","label":"Bob"}"#
        );
        for bad in [
            json!({"id": "a"}),
            json!([{"id": "a"}]),
            json!([{"id": "a", "label": "A", "colour": "red"}]),
            json!([{"id": "", "label": "A"}]),
            json!([{"id": "a", "label": 3}]),
            json!([{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]),
            json!([{"id": "a", "label": "A", "properties": []}]),
        ] {
            assert!(NodeInput::parse_list(&bad).is_err(), "{bad}");
        }
        let long = "x".repeat(MAX_WM_NAME_BYTES + 1);
        let err = NodeInput::parse_list(&json!([{"id": long, "label": "A"}])).unwrap_err();
        assert_eq!(err.code(), "limit_exceeded");
        assert!(EdgeInput::parse_list(&json!([{"from": "a", "to": "b"}])).is_err());
        let twice = json!([
            {"from": "a", "to": "b", "relation": "knows"},
            {"from": "a", "to": "b", "relation": "likes"},
            {"from": "a", "to": "b", "relation": "knows", "properties": {"since": 1}}
        ]);
        let err = EdgeInput::parse_list(&twice).unwrap_err().to_string();
        assert!(err.contains("edges[2] repeats an earlier edge"), "{err}");
        assert_eq!(
            EdgeInput::parse_list(&json!(twice.as_array().unwrap()[..2]))
                .unwrap()
                .len(),
            2
        );
    }

    fn write(nodes: Value, edges: Value) -> GraphWrite {
        GraphWrite {
            nodes: NodeInput::parse_list(&nodes).unwrap(),
            edges: EdgeInput::parse_list(&edges).unwrap(),
        }
    }

    #[test]
    fn edges_must_join_known_nodes_and_rewrites_replace_in_place() {
        let mut g = SessionGraph::new(SessionId::parse("s").unwrap(), 0, 100);
        let dangling = write(
            json!([{"id": "a", "label": "A"}]),
            json!([{"from": "a", "to": "b", "relation": "knows"}]),
        );
        assert!(g.check(&dangling).is_err());
        let first = write(
            json!([{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]),
            json!([{"from": "a", "to": "b", "relation": "knows"}]),
        );
        g.check(&first).unwrap();
        g.apply(None, first, 10, 5, 100);
        // A later write may refer to earlier nodes and relabel one.
        let second = write(
            json!([{"id": "a", "label": "Alice"}]),
            json!([{"from": "b", "to": "a", "relation": "knows"},
                   {"from": "a", "to": "b", "relation": "knows", "properties": {"since": 2020}}]),
        );
        g.check(&second).unwrap();
        g.apply(None, second, 20, 50, 100);
        let snap = g.snapshot(|t| t as i64);
        assert_eq!(snap.nodes[0].item.label, "Alice");
        assert_eq!(snap.nodes[0].written_by, 2);
        assert_eq!(snap.edges.len(), 2);
        assert!(snap.edges[0].item.properties.is_some());
        assert_eq!((g.writes, g.bytes, g.expires_at), (2, 30, 150));
    }
}
