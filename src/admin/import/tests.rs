//! Import tests: format detection and one request per line of each format.

use super::*;
use crate::base64;
use crate::graph::declared::DECLARED_GRAPH_KEY;
use crate::ids;
use crate::limits::MAX_LLM_NAME_BYTES;
use crate::service::Content;
use serde_json::json;

/// The format and one request per importable line of a whole file.
fn requests(text: &str) -> Result<(Format, Vec<(IngestRequest, Restore)>), String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first: Value =
        serde_json::from_str(lines.next().ok_or("empty")?).map_err(|e| e.to_string())?;
    let format = detect(&first)?;
    let mut out = Vec::new();
    let mut kinds = McpKinds::default();
    let all =
        std::iter::once(first).chain(lines.map(|l| serde_json::from_str(l).unwrap_or(Value::Null)));
    for v in all.skip(usize::from(format == Format::Export)) {
        let r = match format {
            Format::Export => Some(export_document(&v)?),
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
        ("İLGİLİ", "ilgili"),
        ("2024", "2024"),
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
    for (key, ms) in [
        ("created_at", -1),
        ("created_at", crate::clock::LATEST_TIME_MS + 1),
        ("expires_at", i64::MAX),
    ] {
        let mut far = good.clone();
        far[key] = json!(ms);
        assert!(
            export_document(&far).unwrap_err().contains(key),
            "{key} {ms}"
        );
    }
    let mut last = good.clone();
    last["created_at"] = json!(crate::clock::LATEST_TIME_MS);
    assert!(export_document(&last).is_ok());
    let mut bad = good.clone();
    bad["sha256"] = json!(ids::sha256_hex(b"other"));
    assert!(export_document(&bad).unwrap_err().contains("damaged"));
    // Lines that are not documents are refused with a reason, never passed
    // over in silence (the count of skipped lines then says so).
    for (line, reason) in [
        (json!([1, 2]), "not a JSON object"),
        (json!("text"), "not a JSON object"),
        (json!(null), "not a JSON object"),
        (json!({"media_type": "text/plain"}), "`type` is missing"),
        (json!({"type": 7}), "`type` is missing"),
        (
            json!({"type": "other\u{1b}[31m"}),
            r#"type "other\u{1b}[31m""#,
        ),
    ] {
        let err = export_document(&line).unwrap_err();
        assert!(err.contains(reason), "{line}: {err}");
    }
    let newer = json!({"format": EXPORT_FORMAT, "version": EXPORT_VERSION + 1});
    assert!(detect(&newer).unwrap_err().contains("upgrade"));
    assert!(detect(&json!({"hello": 1})).is_err());
}
