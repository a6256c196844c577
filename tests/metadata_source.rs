//! A `source` given in metadata is the document's source (unless the
//! `source` argument is given, which wins): through ingest, import and
//! working-memory promotion; in evidence, resources and export; and
//! `forget --source` finds it.

mod common;

use common::{cli, Server, TempDir};
use serde_json::{json, Value};

fn sources_of(evidence: &Value) -> Vec<String> {
    evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap_or("<null>").to_string())
        .collect()
}

#[test]
fn metadata_source_is_the_document_source_unless_the_argument_names_one() {
    let dir = TempDir::new("meta-source");
    let mut s = Server::ready(dir.path());
    let only_meta = s.ok(
        "alayasiki_ingest",
        json!({"content": "The lighthouse keeper logs the fog horn hours.",
               "metadata": {"source": "notes.md"}}),
    );
    s.ok(
        "alayasiki_ingest",
        json!({"content": "The lighthouse lamp was replaced with an LED array.",
               "source": "maintenance.log", "metadata": {"source": "ignored.md"}}),
    );
    // The canonical Text shape carries metadata too.
    s.ok(
        "alayasiki_ingest",
        json!({"Text": {"content": "The lighthouse stairs have 217 steps.",
                        "metadata": {"source": "tour.md"}}}),
    );
    let evidence = s.query("lighthouse");
    let mut sources = sources_of(&evidence);
    sources.sort();
    assert_eq!(
        sources,
        ["maintenance.log", "notes.md", "tour.md"],
        "{evidence}"
    );

    // Resources show it.
    let id = only_meta["document_id"].as_str().unwrap();
    let listed = s.request("resources/list", json!({}));
    let shown: Vec<&Value> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["uri"].as_str().is_some_and(|u| u.ends_with(id)))
        .collect();
    assert_eq!(shown.len(), 1, "{listed}");
    assert!(
        shown[0]["description"]
            .as_str()
            .unwrap()
            .ends_with("from notes.md"),
        "{listed}"
    );
    s.close();

    // Export carries it, and import of that export keeps it.
    let export = cli(dir.path(), &["export"]);
    assert!(export.status.success());
    let lines: Vec<Value> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let exported = lines
        .iter()
        .find(|l| l["id"] == id || l["document_id"] == id)
        .unwrap_or_else(|| panic!("document {id} not in export: {lines:?}"));
    assert_eq!(exported["source"], "notes.md", "{exported}");

    // forget --source finds it.
    let forget = cli(dir.path(), &["forget", "--source", "notes.md"]);
    assert!(
        forget.status.success(),
        "{}",
        String::from_utf8_lossy(&forget.stderr)
    );
    let mut s = Server::ready(dir.path());
    let mut left = sources_of(&s.query("lighthouse"));
    left.sort();
    assert_eq!(left, ["maintenance.log", "tour.md"]);
    s.close();
}

#[test]
fn an_import_takes_the_source_from_metadata_when_the_line_has_none() {
    let dir = TempDir::new("meta-source-import");
    let file = dir.path().join("in.jsonl");
    // An export of one document without a source of its own.
    let header = json!({"format": "alayasiki-mcp-export", "version": 1, "documents": 1});
    let text = "The ferry to the island leaves at dawn.";
    let line = json!({"type": "document", "media_type": "text/plain",
                      "original": base64(text.as_bytes()),
                      "metadata": {"source": "timetable.md"}});
    std::fs::write(&file, format!("{header}\n{line}\n")).unwrap();
    let data = dir.path().join("memory");
    let out = cli(&data, &["import", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut s = Server::ready(&data);
    assert_eq!(sources_of(&s.query("ferry island")), ["timetable.md"]);
    s.close();
}

#[test]
fn a_promoted_note_keeps_the_source_its_metadata_names() {
    let dir = TempDir::new("meta-source-promote");
    let mut s = Server::ready(dir.path());
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "trip", "content": "The glacier hike needs crampons.",
               "metadata": {"source": "gear-list.md"}}),
    );
    s.ok(
        "alayasiki_memory_write",
        json!({"session_id": "trip", "content": "The glacier hut sleeps twelve."}),
    );
    s.ok("alayasiki_memory_promote", json!({"session_id": "trip"}));
    let mut sources = sources_of(&s.query("glacier"));
    sources.sort();
    assert_eq!(sources, ["gear-list.md", "working-memory:trip"]);
    s.close();
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
