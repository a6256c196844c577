//! The tool table: one entry per tool, each defined in its own file with its
//! schema, the permission it needs, and a handler that parses arguments into
//! a typed request and calls the service.
//!
//! `tools/list`, `tools/call` and the tool reference in docs/tools.md are all
//! generated from [`TOOLS`], so they cannot disagree.
//!
//! Structured output (MCP 2025-06-18 and later): every tool declares an
//! `outputSchema`, and a successful `tools/call` result carries the tool's
//! value both as `structuredContent` and, serialized, as its first text
//! block (for older clients). The protocol layer drops `outputSchema` and
//! `structuredContent` for sessions of older revisions.

mod args;
mod forget;
mod ingest;
mod memory_delete;
mod memory_promote;
mod memory_read;
mod memory_write;
mod output;
mod query;
mod recall_filter;
mod schema;
mod share;
mod status;
mod update;

pub use args::Args;
pub use share::parse as parse_share;

/// A query's `filter` and `include_history` arguments, as the query tool
/// reads them (the CLI's `query --filter` reads them the same way).
pub fn recall_filter(arguments: &Map<String, Value>) -> Result<crate::store::RecallFilter> {
    recall_filter::parse(&Args::new(arguments, &["filter", "include_history"])?)
}

use serde_json::{json, Map, Value};

use super::jsonrpc::INVALID_PARAMS;
use super::mcp::Fault;
use crate::error::{Error, Result};
use crate::service::{Memory, Permission};

/// One tool, declaratively.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments (`type: object`).
    pub input_schema: fn() -> Value,
    /// JSON Schema (2020-12) of the value `call` returns on success
    /// (`type: object`; see `output`).
    pub output_schema: fn() -> Value,
    pub permission: Permission,
    /// Whether calling it changes stored memory.
    pub mutates: bool,
    /// Parses the arguments and runs the tool; the value (an object) is the
    /// result's `structuredContent` and, serialized, its text block.
    pub call: fn(&Memory<'_>, &Map<String, Value>) -> Result<Value>,
}

/// The name of the tool that stores a document (ordered apart from other
/// writes: see `protocol::ordering`).
pub const INGEST: &str = "alayasiki_ingest";

/// Every tool the server offers, in listing order.
pub static TOOLS: &[&Tool] = &[
    &ingest::TOOL,
    &update::TOOL,
    &query::TOOL,
    &status::TOOL,
    &forget::TOOL,
    &share::TOOL,
    &memory_write::TOOL,
    &memory_read::TOOL,
    &memory_promote::TOOL,
    &memory_delete::TOOL,
];

/// Tools that delete stored memory (MCP's `destructiveHint`).
const DESTRUCTIVE: &[&str] = &["alayasiki_forget", "alayasiki_memory_delete"];

/// Tools of working-memory sessions: closed to the anonymous caller, whose
/// sessions every anonymous client would share.
const WORKING_MEMORY: &[&str] = &[
    "alayasiki_memory_write",
    "alayasiki_memory_read",
    "alayasiki_memory_promote",
    "alayasiki_memory_delete",
];

/// Whether the anonymous caller may call `tool`: reading tools of
/// persistent memory only.
pub fn open_to_anonymous(tool: &Tool) -> bool {
    !tool.mutates && !WORKING_MEMORY.contains(&tool.name)
}

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().copied().find(|t| t.name == name)
}

/// The `tools` array of `tools/list`.
pub fn list() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": (t.input_schema)(),
                "outputSchema": (t.output_schema)(),
                "annotations": {
                    "readOnlyHint": !t.mutates,
                    "destructiveHint": DESTRUCTIVE.contains(&t.name),
                    "idempotentHint": !t.mutates,
                    "openWorldHint": false
                }
            })
        })
        .collect()
}

/// `tools/call`: protocol faults (unknown tool, malformed params) are
/// JSON-RPC errors; everything the tool itself rejects is an `isError`
/// result the model can read.
pub fn call(memory: &Memory<'_>, params: &Map<String, Value>) -> std::result::Result<Value, Fault> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Fault::new(INVALID_PARAMS, "tools/call needs name (a string)"))?;
    let tool =
        find(name).ok_or_else(|| Fault::new(INVALID_PARAMS, format!("unknown tool: {name}")))?;
    let empty = Map::new();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err(Fault::new(INVALID_PARAMS, "arguments must be an object")),
    };
    Ok(match invoke(tool, memory, arguments) {
        Ok(value) => json!({
            "content": [{"type": "text", "text": value.to_string()}],
            "structuredContent": value,
            "isError": false
        }),
        Err(e) => {
            let e = e.logged(name);
            json!({
                "content": [{"type": "text", "text": format!("{}: {}", e.code(), e.client_message())}],
                "isError": true
            })
        }
    })
}

/// Runs `tool` for the caller of `memory` after checking its permission:
/// the one way every transport (MCP `tools/call`, the HTTP API) runs a tool.
pub fn invoke(tool: &Tool, memory: &Memory<'_>, arguments: &Map<String, Value>) -> Result<Value> {
    if memory.principal().anonymous && !open_to_anonymous(tool) {
        return Err(Error::Forbidden(crate::service::ANONYMOUS_REFUSAL.into()));
    }
    if !memory.principal().permits(tool.permission) {
        return Err(Error::Forbidden(format!(
            "this identity may not call {} (needs scope {} or a role granting it)",
            tool.name,
            tool.permission.scope()
        )));
    }
    (tool.call)(memory, arguments)
}

/// The tool reference of docs/tools.md, in Markdown.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "A successful result holds the tool's JSON object twice: as `structuredContent`, \
         described by the tool's `outputSchema` (protocol revision 2025-06-18 and later), and \
         serialized as the text of its first content block, for older clients. The tables \
         below list each tool's arguments and the top-level fields of its result; `always` \
         marks the fields every result has.\n\n",
    );
    for t in TOOLS {
        let schema = (t.input_schema)();
        out.push_str(&format!("### `{}`\n\n{}\n\n", t.name, t.description));
        match schema["properties"].as_object() {
            Some(props) if !props.is_empty() => {
                out.push_str("| argument | type | required | description |\n|---|---|---|---|\n");
                out.push_str(&rows(&schema, props));
                out.push('\n');
            }
            _ => out.push_str("No arguments.\n\n"),
        }
        let output = (t.output_schema)();
        let summary = output["description"].as_str().unwrap_or("");
        out.push_str(&format!("Result: {summary}\n\n"));
        out.push_str("| result field | type | always | description |\n|---|---|---|---|\n");
        if let Some(props) = output["properties"].as_object() {
            out.push_str(&rows(&output, props));
        }
        out.push('\n');
    }
    out
}

/// One table row per property of `schema`: name, type, whether required,
/// description.
fn rows(schema: &Value, props: &Map<String, Value>) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::new();
    for (name, p) in props {
        let ty = type_name(p);
        let req = if required.contains(&name.as_str()) {
            "yes"
        } else {
            "no"
        };
        let desc = p["description"].as_str().unwrap_or("").replace('|', "\\|");
        out.push_str(&format!("| `{name}` | {ty} | {req} | {desc} |\n"));
    }
    out
}

/// A property's type for the reference: its `type`, or its `anyOf`
/// branches' types joined with "or".
fn type_name(p: &Value) -> String {
    match (&p["type"], p["anyOf"].as_array()) {
        (Value::String(t), _) => t.clone(),
        (_, Some(branches)) => branches
            .iter()
            .filter_map(|b| b["type"].as_str())
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_mcp_naming_guidance_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for t in TOOLS {
            assert!(seen.insert(t.name));
            assert!((1..=128).contains(&t.name.len()));
            assert!(t
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
        }
    }

    #[test]
    fn the_anonymous_caller_may_call_only_the_reading_tools_of_persistent_memory() {
        for name in WORKING_MEMORY {
            assert!(find(name).is_some(), "{name}");
        }
        let open: Vec<&str> = TOOLS
            .iter()
            .filter(|t| open_to_anonymous(t))
            .map(|t| t.name)
            .collect();
        assert_eq!(open, ["alayasiki_query", "alayasiki_status"]);
    }

    #[test]
    fn destructive_tools_exist_and_mutate() {
        for name in DESTRUCTIVE {
            assert!(find(name).is_some_and(|t| t.mutates), "{name}");
        }
    }

    #[test]
    fn every_schema_is_an_object_schema_with_described_properties() {
        for t in TOOLS {
            for s in [(t.input_schema)(), (t.output_schema)()] {
                assert_eq!(s["type"], "object", "{}", t.name);
                for (name, p) in s["properties"].as_object().unwrap() {
                    assert!(
                        p["description"].is_string(),
                        "{}.{name} lacks a description",
                        t.name
                    );
                }
            }
        }
    }

    #[test]
    fn readme_tool_reference_matches_the_table() {
        // The reference lives in docs/tools.md (the README links to it).
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md"))
            .expect("docs/tools.md");
        let begin = "<!-- tools:begin -->\n";
        let end = "<!-- tools:end -->";
        let start = readme
            .find(begin)
            .expect("docs/tools.md has a tools:begin marker")
            + begin.len();
        let stop = readme
            .find(end)
            .expect("docs/tools.md has a tools:end marker");
        let generated = reference_markdown();
        if readme[start..stop] != generated && std::env::var_os("UPDATE_README").is_some() {
            let updated = format!("{}{}{}", &readme[..start], generated, &readme[stop..]);
            std::fs::write(
                concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md"),
                updated,
            )
            .unwrap();
            return;
        }
        assert_eq!(
            readme[start..stop],
            generated,
            "docs/tools.md's tool reference is stale; run UPDATE_README=1 cargo test readme_tool_reference"
        );
    }
}
