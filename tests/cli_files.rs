//! The file subcommands through the real binary: `export` → `import` into an
//! empty directory gives the same query results; importing is idempotent;
//! the MCP reference memory server's file becomes documents and graph
//! relations; `export --tenant` holds one tenant's documents; `ingest PATH`
//! walks folders, skips what it cannot read with reasons, and resumes
//! without duplicates; `query` prints evidence for people.

mod common;

use common::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Duration;

const QUESTIONS: &[&str] = &[
    "When does the ferry to the island leave?",
    "Which garden beds need shade?",
    "Who maintains the lighthouse?",
    "page about soil and water",
];

/// Evidence for each question, as the parts a round trip must preserve.
fn answers(dir: &std::path::Path) -> Vec<Value> {
    let mut s = Server::ready(dir);
    let out = QUESTIONS
        .iter()
        .map(|q| {
            let r = s.ok("alayasiki_query", json!({"query": q, "top_k": 5}));
            let evidence: Vec<Value> = r["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    json!([
                        e["document_id"],
                        e["chunk_id"],
                        e["source"],
                        e["title"],
                        e["metadata"],
                        e["provenance"],
                        e["created_at"],
                        e["span"],
                        e["page"],
                        e["text"],
                        (e["score"].as_f64().unwrap() * 1e6).round()
                    ])
                })
                .collect();
            json!({"evidence": evidence, "answer": r["answer"]["text"]})
        })
        .collect();
    s.close();
    out
}

fn populate(dir: &std::path::Path) {
    let mut s = Server::ready(dir);
    s.ok(
        "alayasiki_ingest",
        json!({"content": "The ferry to the island leaves at 07:40 from pier 3.",
               "source": "timetable", "metadata": {"kind": "schedule"},
               "idempotency_key": "ferry", "provenance": "external"}),
    );
    s.ok(
        "alayasiki_ingest",
        json!({"content": "# Garden\n\nThe primulas need a shaded bed.\n\n## Water\n\nDaily in July.",
               "media_type": "text/markdown", "source": "garden.md"}),
    );
    s.ok(
        "alayasiki_ingest",
        json!({"content": "{\"lighthouse\": {\"keeper\": \"Ines Duarte\", \"since\": 2019}}",
               "media_type": "application/json", "source": "staff"}),
    );
    s.ok(
        "alayasiki_ingest",
        json!({"File": {"filename": "report.pdf",
                        "content": b64(&fixture_bytes("pdf/libreoffice-report.pdf"))}}),
    );
    s.ok(
        "alayasiki_ingest",
        json!({"File": {"content": b64(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0"),
                        "metadata": {"caption": "The lighthouse keeper's cottage"}}}),
    );
    // Neighbours from one source: context must be rebuilt the same way.
    for turn in [
        "Who maintains the lighthouse now?",
        "Ines does, since 2019.",
    ] {
        s.ok(
            "alayasiki_ingest",
            json!({"content": turn, "source": "chat"}),
        );
    }
    s.close();
}

#[test]
fn export_then_import_into_an_empty_directory_gives_the_same_answers() {
    let a = TempDir::new("export-a");
    populate(a.path());
    let before = answers(a.path());
    let export = cli_ok(a.path(), &["export"]);
    let lines: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["format"], "alayasiki-mcp-export");
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines.len(), 1 + 7);
    let ferry = &lines[1];
    for field in [
        "id",
        "source",
        "title",
        "media_type",
        "metadata",
        "provenance",
        "created_at",
        "sha256",
        "original",
    ] {
        assert!(!ferry[field].is_null(), "{field} missing: {ferry}");
    }
    assert_eq!(ferry["idempotency_key"], "ferry");
    let pdf = lines
        .iter()
        .find(|l| l["media_type"] == "application/pdf")
        .unwrap();
    assert_eq!(
        pdf["original"],
        b64(&fixture_bytes("pdf/libreoffice-report.pdf"))
    );

    let file = TempDir::new("export-file");
    let path = file.path().join("memory.jsonl");
    std::fs::write(&path, &export).unwrap();
    let b = TempDir::new("export-b");
    let b_dir = b.path().join("fresh"); // does not exist yet
    let out = cli_ok(&b_dir, &["import", path.to_str().unwrap()]);
    assert!(
        out.contains("7 document(s) imported, 0 already present, 0 line(s) skipped"),
        "{out}"
    );
    assert_eq!(answers(&b_dir), before);

    // Idempotent: a second import stores nothing.
    let out = cli_ok(&b_dir, &["import", path.to_str().unwrap()]);
    assert!(
        out.contains("0 document(s) imported, 7 already present"),
        "{out}"
    );
    let mut s = Server::ready(&b_dir);
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 7);
    drop(s);

    // Cut short (the header and four documents of seven): what is there is
    // imported, and the command says what is missing and fails.
    let cut: Vec<&str> = export.lines().take(5).collect();
    std::fs::write(&path, cut.join("\n")).unwrap();
    let c_dir = b.path().join("cut");
    let out = cli(&c_dir, &["import", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("4 document(s) imported"), "{stdout}");
    assert!(
        stderr.contains("declares 7 document(s); 3 are not in the file"),
        "{stderr}"
    );
}

#[test]
fn import_reports_bad_lines_and_keeps_the_rest() {
    let dir = TempDir::new("importbad");
    let file = dir.path().join("in.jsonl");
    let good = json!({"type": "document", "id": "doc_00000000000000000000000a",
        "media_type": "text/plain", "original": b64(b"kept line"), "created_at": 1000});
    let damaged = json!({"type": "document", "media_type": "text/plain",
        "original": b64(b"x"), "sha256": "00"});
    let encrypted = json!({"type": "document", "media_type": "application/pdf",
        "original": b64(&fixture_bytes("pdf/encrypted.pdf"))});
    std::fs::write(
        &file,
        format!(
            "{}\n{good}\nnot json\n{damaged}\n{encrypted}\n",
            json!({"format": "alayasiki-mcp-export", "version": 1})
        ),
    )
    .unwrap();
    let mem = dir.path().join("m");
    let out = cli_ok(&mem, &["import", file.to_str().unwrap()]);
    assert!(
        out.contains("1 document(s) imported, 0 already present, 3 line(s) skipped"),
        "{out}"
    );
    assert!(out.contains("line 3: not JSON"), "{out}");
    assert!(
        out.contains("line 4: `original` does not match its sha256"),
        "{out}"
    );
    assert!(out.contains("line 5: the PDF is encrypted"), "{out}");
    // The id and creation time came along.
    let mut s = Server::ready(&mem);
    let r = s.request(
        "resources/read",
        json!({"uri": "alayasiki://documents/doc_00000000000000000000000a"}),
    );
    assert_eq!(r["result"]["contents"][0]["text"], "kept line");
    let q = s.query("kept line");
    assert_eq!(q["evidence"][0]["created_at"], "1970-01-01T00:00:01.000Z");
    s.close();

    // Neither format: refused before anything is stored.
    std::fs::write(&file, "{\"hello\": 1}\n").unwrap();
    let out = cli(&mem, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("server-memory"));
}

/// Relations (subject, predicate, object, extractor) the graph attached to
/// evidence for `question` in a local (entity-centred) search.
fn local_relations(s: &mut Server, question: &str) -> Vec<(String, String, String, String)> {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": question, "mode": "evidence", "search_mode": "local"}),
    );
    let mut out: Vec<_> = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["relations"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            let f = |k: &str| r[k].as_str().unwrap().to_string();
            (f("subject"), f("predicate"), f("object"), f("extractor"))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A relation as (subject, label, object, pieces of evidence).
type Edge = (String, String, String, i64);

/// The graph as rows: entities (name, kind) and relations, straight from
/// the store.
fn graph_rows(mem: &std::path::Path) -> (Vec<(String, String)>, Vec<Edge>) {
    let conn = rusqlite::Connection::open(mem.join("memory.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT name, kind FROM entities ORDER BY name")
        .unwrap();
    let entities = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut stmt = conn
        .prepare(
            "SELECT s.name, r.label, o.name,
                    (SELECT count(*) FROM relation_evidence ev WHERE ev.relation_id = r.id)
               FROM relations r JOIN entities s ON s.id = r.subject_id
               JOIN entities o ON o.id = r.object_id
              WHERE r.kind = 'pattern' ORDER BY 1, 2, 3",
        )
        .unwrap();
    let relations = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (entities, relations)
}

#[test]
fn mcp_memory_server_files_become_documents_and_graph() {
    let dir = TempDir::new("mcpmem");
    let file = dir.path().join("memory.jsonl");
    // As written by @modelcontextprotocol/server-memory: entities first,
    // names and relation types as its users write them.
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"entity","name":"Ada Quill","entityType":"person","observations":["Works at Harbor Labs","Prefers tea over coffee"]}"#, "\n",
            r#"{"type":"entity","name":"Harbor Labs","entityType":"organization","observations":["Builds tidal turbines"]}"#, "\n",
            r#"{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish"]}"#, "\n",
            r#"{"type":"entity","name":"Lisbon","entityType":"city","observations":[]}"#, "\n",
            r#"{"type":"relation","from":"Ada Quill","to":"Harbor Labs","relationType":"works_at"}"#, "\n",
            r#"{"type":"relation","from":"Ada Quill","to":"John_Smith","relationType":"mentors"}"#, "\n",
            r#"{"type":"relation","from":"John_Smith","to":"Lisbon","relationType":"livesIn"}"#, "\n",
        ),
    )
    .unwrap();
    let mem = dir.path().join("m");
    let out = cli_ok(&mem, &["import", file.to_str().unwrap()]);
    assert!(out.contains("MCP memory-server file"), "{out}");
    assert!(out.contains("7 document(s) imported"), "{out}");
    let graph = graph_rows(&mem);
    let out = cli_ok(&mem, &["import", file.to_str().unwrap()]);
    assert!(
        out.contains("0 document(s) imported, 7 already present"),
        "{out}"
    );
    assert_eq!(
        graph_rows(&mem),
        graph,
        "a re-import adds no entity, edge or evidence"
    );

    // Each entity is one graph entity of the kind its entityType maps to,
    // and the relations join exactly those entities, one piece of evidence
    // each (the relation's own document).
    let (entities, relations) = graph;
    for (name, kind) in [
        ("Ada Quill", "person"),
        ("Harbor Labs", "organization"),
        ("John_Smith", "person"),
        ("Lisbon", "place"),
    ] {
        let found: Vec<_> = entities.iter().filter(|(n, _)| n == name).collect();
        assert_eq!(
            found,
            [&(name.to_string(), kind.to_string())],
            "{entities:?}"
        );
    }
    let edge = |s: &str, p: &str, o: &str| (s.to_string(), p.to_string(), o.to_string(), 1);
    for e in [
        edge("Ada Quill", "mentors", "John_Smith"),
        edge("Ada Quill", "works at", "Harbor Labs"),
        edge("John_Smith", "lives in", "Lisbon"),
    ] {
        assert!(relations.contains(&e), "{e:?} not in {relations:?}");
    }

    let mut s = Server::ready(&mem);
    let q = s.query("What does Ada drink?");
    let top = &q["evidence"][0];
    assert_eq!(
        top["text"],
        "Ada Quill (person): Works at Harbor Labs\nAda Quill (person): Prefers tea over coffee"
    );
    assert_eq!(top["metadata"]["entity"], "Ada Quill");
    assert_eq!(top["metadata"]["entity_type"], "person");
    assert_eq!(top["source"], "mcp-memory:Ada Quill");
    // A graph search finds the relations with their predicates, as
    // declared (not guessed from text), with their documents as evidence.
    let declared = |s: &str, p: &str, o: &str| {
        (
            s.to_string(),
            p.to_string(),
            o.to_string(),
            "declared".to_string(),
        )
    };
    let found = local_relations(&mut s, "Who does Ada Quill mentor?");
    assert!(
        found.contains(&declared("Ada Quill", "mentors", "John_Smith")),
        "{found:?}"
    );
    assert!(
        found.contains(&declared("Ada Quill", "works at", "Harbor Labs")),
        "{found:?}"
    );
    let found = local_relations(&mut s, "Where does John_Smith live?");
    assert!(
        found.contains(&declared("John_Smith", "lives in", "Lisbon")),
        "{found:?}"
    );
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Ada Quill works at", "mode": "evidence", "lanes": ["keyword"]}),
    );
    let relation = q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["metadata"]["relation"] == "works_at")
        .expect("relation document");
    assert_eq!(relation["text"], "Ada Quill works at Harbor Labs");
    assert_eq!(relation["metadata"]["to"], "Harbor Labs");
    // Forgetting an entity's source removes it with what it asserted,
    // its edges included.
    let r = s.ok(
        "alayasiki_forget",
        json!({"source": "mcp-memory:Ada Quill"}),
    );
    assert_eq!(r["documents"], 3);
    let found = local_relations(&mut s, "Who does Ada Quill mentor?");
    assert!(found.iter().all(|r| r.0 != "Ada Quill"), "{found:?}");
    s.close();
    let (_, relations) = graph_rows(&mem);
    assert_eq!(relations, [edge("John_Smith", "lives in", "Lisbon")]);
}

/// Lines of a memory-server file the graph cannot take as they are are
/// still imported, as text: a relation type of digits alone, and an
/// entity whose name is longer than a source may be (each keeps a source
/// of its own). A type whose lowercase gains a combining mark ("İ") is
/// declared with the mark left out.
#[test]
fn mcp_memory_lines_beyond_the_graphs_bounds_are_imported_as_text() {
    let dir = TempDir::new("mcpmem-edges");
    let file = dir.path().join("memory.jsonl");
    let long_a = format!("Long {}", "N".repeat(1100));
    let long_b = format!("Long {}", "M".repeat(1100));
    let lines = [
        json!({"type": "entity", "name": "Ada Quill", "entityType": "person", "observations": ["Sails on weekends"]}),
        json!({"type": "entity", "name": "Harbor Labs", "entityType": "company", "observations": []}),
        json!({"type": "relation", "from": "Ada Quill", "to": "Harbor Labs", "relationType": "2024"}),
        json!({"type": "relation", "from": "Ada Quill", "to": "Harbor Labs", "relationType": "İLGİLİ"}),
        json!({"type": "entity", "name": long_a, "entityType": "concept", "observations": ["first long name"]}),
        json!({"type": "entity", "name": long_b, "entityType": "concept", "observations": ["second long name"]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let mem = dir.path().join("m");
    let out = cli_ok(&mem, &["import", file.to_str().unwrap()]);
    assert!(out.contains("6 document(s) imported"), "{out}");
    assert!(out.contains("0 line(s) skipped"), "{out}");
    let (_, relations) = graph_rows(&mem);
    assert!(
        relations.contains(&("Ada Quill".into(), "ilgili".into(), "Harbor Labs".into(), 1)),
        "{relations:?}"
    );
    assert!(relations.iter().all(|r| r.1 != "2024"), "{relations:?}");
    let mut s = Server::ready(&mem);
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Ada Quill 2024 Harbor Labs", "mode": "evidence", "lanes": ["keyword"]}),
    );
    assert!(
        q["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"] == "Ada Quill 2024 Harbor Labs"),
        "{q}"
    );
    let mut sources = Vec::new();
    for words in ["first long name", "second long name"] {
        let q = s.ok(
            "alayasiki_query",
            json!({"query": words, "mode": "evidence", "lanes": ["keyword"], "top_k": 1}),
        );
        let source = q["evidence"][0]["source"].as_str().unwrap().to_string();
        assert!(
            source.starts_with("mcp-memory:Long NNN") || source.starts_with("mcp-memory:Long MMM"),
            "{source}"
        );
        assert!(
            source.len() <= alayasiki_mcp::limits::MAX_SOURCE_BYTES,
            "{}",
            source.len()
        );
        sources.push(source);
    }
    assert_ne!(sources[0], sources[1]);
    s.close();
}

/// The texts of an export's documents (its originals, decoded), and its
/// header.
fn exported(export: &str) -> (Value, Vec<String>) {
    let mut lines = export
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().expect("a header line");
    let texts = lines
        .map(|l| {
            let bytes = alayasiki_mcp::base64::decode(l["original"].as_str().unwrap()).unwrap();
            String::from_utf8(bytes).unwrap()
        })
        .collect();
    (header, texts)
}

#[test]
fn export_holds_one_tenants_documents_and_refuses_an_unknown_tenant() {
    let dir = TempDir::new("exporttenant");
    let texts = |tenant: &str| -> Vec<String> {
        (0..3)
            .map(|i| format!("Ledger {tenant} entry {i}: the {tenant} vault holds item {i}."))
            .collect()
    };
    for tenant in ["alpha", "beta"] {
        let mut s = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", tenant)]);
        s.initialize();
        for text in texts(tenant) {
            s.ok(
                "alayasiki_ingest",
                json!({"content": text, "source": format!("{tenant}-notes")}),
            );
        }
        s.close();
    }
    for (tenant, other) in [("alpha", "beta"), ("beta", "alpha")] {
        let export = cli_ok(dir.path(), &["export", "--tenant", tenant]);
        let (header, mut got) = exported(&export);
        assert_eq!(header["tenant"], tenant);
        assert_eq!(header["documents"], 3);
        got.sort();
        assert_eq!(got, texts(tenant));
        assert!(
            !export.contains(other),
            "{other} leaked into {tenant}'s export"
        );
        for text in texts(other) {
            assert!(!export.contains(&b64(text.as_bytes())[..24]));
        }
    }
    // Without --tenant, ALAYASIKI_MCP_TENANT chooses, as for the server.
    let out = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["export", "--data-dir"])
        .arg(dir.path())
        .env("ALAYASIKI_LOG", "warn")
        .env("ALAYASIKI_MCP_TENANT", "beta")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let (header, _) = exported(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(header["tenant"], "beta");

    // A tenant that never wrote here (a misspelling, or the default
    // `local` in a directory only other tenants used) is an error, not an
    // empty backup: exit 1, nothing on stdout.
    for args in [&["export", "--tenant", "alpah"][..], &["export"][..]] {
        let out = cli(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("has no memory in this data directory"),
            "{stderr}"
        );
    }

    // A tenant whose documents were all forgotten exports the header alone.
    let out = cli_ok(
        dir.path(),
        &["forget", "--source", "alpha-notes", "--tenant", "alpha"],
    );
    assert!(out.contains("forgot 3 document(s)"), "{out}");
    let export = cli_ok(dir.path(), &["export", "--tenant", "alpha"]);
    let (header, got) = exported(&export);
    assert_eq!(
        (header["documents"].as_i64(), got.len()),
        (Some(0), 0),
        "{export}"
    );
    assert!(!export.contains("Ledger"));
    assert_eq!(
        exported(&cli_ok(dir.path(), &["export", "--tenant", "beta"]))
            .1
            .len(),
        3
    );
}

/// A folder of mixed files for bulk ingestion.
fn corpus(root: &std::path::Path) {
    let w = |rel: &str, bytes: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    w(
        "notes/ferry.md",
        b"# Ferry\n\nThe ferry leaves at 07:40 from pier 3.\n",
    );
    w(
        "notes/deep/a/b/todo.txt",
        b"Buy rope for the harbour crane.\n",
    );
    w("data/staff.json", br#"{"keeper": "Ines Duarte"}"#);
    w(
        "data/LICENSE",
        b"Permission is hereby granted, free of charge.\n",
    );
    w(
        "docs/report.pdf",
        &fixture_bytes("pdf/libreoffice-report.pdf"),
    );
    w("docs/locked.pdf", &fixture_bytes("pdf/encrypted.pdf"));
    w(
        "bin/tool",
        &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0xff, 0xfe, 0],
    );
    w("img/photo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    w("bad/latin1.txt", b"caf\xe9 cr\xe8me\n");
    w("empty.txt", b"");
    w(".hidden/secret.txt", b"not walked");
    w(
        "big.txt",
        &vec![b'a'; alayasiki_mcp::limits::MAX_CONTENT_BYTES + 1],
    );
    for i in 0..40 {
        w(
            &format!("many/note{i:02}.txt"),
            format!("Note {i}: tide table entry {i}.").as_bytes(),
        );
    }
}

#[test]
fn bulk_ingest_walks_skips_with_reasons_and_resumes_without_duplicates() {
    let dir = TempDir::new("bulk");
    let root = dir.path().join("corpus");
    corpus(&root);
    let mem = dir.path().join("m");
    let root_arg = root.to_str().unwrap();

    // Interrupt a first run part-way (kill -9), then run to completion.
    let mut child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["ingest", root_arg, "--data-dir"])
        .arg(&mem)
        .env("ALAYASIKI_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let _ = child.kill();
    let _ = child.wait();

    let out = cli(&mem, &["ingest", root_arg]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Progress lines went to stderr (not a terminal: plain lines).
    assert!(stderr.contains("ingest: 100% 49/49 files"), "{stderr}");
    let count = |label: &str| -> usize {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {stdout}"));
        line.split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let stored = count("stored:");
    let already = count("already stored:");
    assert_eq!(stored + already, 45, "{stdout}");
    assert_eq!(count("skipped:"), 7, "{stdout}");
    assert_eq!(count("failed:"), 0, "{stdout}");
    for reason in [
        "binary of no supported type",
        "encrypted PDF",
        "image or audio: needs a description",
        "not valid UTF-8 text",
        "empty",
        "larger than 4.2 MB (MAX_CONTENT_BYTES)",
        "hidden (name starts with a dot)",
    ] {
        assert!(stdout.contains(reason), "{reason} not reported:\n{stdout}");
    }

    // A second run finds everything stored: no duplicates.
    let again = cli_ok(&mem, &["ingest", root_arg]);
    assert!(again.contains("already stored: 45 file(s)"), "{again}");
    let mut s = Server::ready(&mem);
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 45);
    let q = s.query("pier 3 ferry");
    let source = q["evidence"][0]["source"].as_str().unwrap();
    assert!(source.ends_with("notes/ferry.md"), "{source}");
    assert_eq!(q["evidence"][0]["title"], "ferry.md");
    s.close();

    // `query` prints evidence for people: rank, score, source, span, page.
    let printed = cli_ok(&mem, &["query", "Ærøskøbing", "--top-k", "2"]);
    assert!(printed.contains("Evidence:"), "{printed}");
    let first = printed
        .lines()
        .find(|l| l.starts_with("[1] score "))
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(first.contains("docs/report.pdf"), "{first}");
    assert!(first.contains("bytes 0-"), "{first}");
    assert!(first.contains("page 1"), "{first}");
    assert!(printed.contains("    "), "{printed}");
}

#[test]
fn cli_usage_errors_exit_2() {
    let dir = TempDir::new("cliusage");
    for args in [
        vec!["ingest"],
        vec!["query"],
        vec!["forget"],
        vec!["import"],
        vec!["compact", "--tenant", "x"],
    ] {
        let out = cli(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    // Reading subcommands do not create a memory where there is none.
    let out = cli(&dir.path().join("none"), &["query", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("none").exists());
}

/// A data directory that is something else than a directory is named as
/// what it is: not "no memory store", and not "cannot create" for a path
/// that is there.
#[test]
fn a_data_directory_that_is_a_file_is_named_as_such() {
    let dir = TempDir::new("dir-problems");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "not a directory").unwrap();
    let shown = file.display().to_string();
    // An empty file to import: what matters is the data directory.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    for (args, want) in [
        (
            &["query", "pump"][..],
            format!("alayasiki-mcp query: cannot read data directory {shown}: Not a directory"),
        ),
        (
            &["import", empty.to_str().unwrap()][..],
            format!("alayasiki-mcp import: data directory {shown} exists and is not a directory"),
        ),
    ] {
        let out = cli(&file, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(&want), "{args:?}: {stderr}");
    }
    let stderr = server_refuses(&file);
    assert!(
        stderr.contains(&format!(
            "data directory {shown} exists and is not a directory"
        )),
        "{stderr}"
    );
}

/// A data directory whose lock cannot be made (here its lock file's name is
/// taken by a folder) is refused naming the directory and the reason, by the
/// server and by a subcommand alike.
#[test]
fn a_data_directory_that_cannot_be_locked_is_named() {
    let dir = TempDir::new("unlockable");
    let data = dir.path().join("memory");
    std::fs::create_dir_all(data.join("alayasiki.lock")).unwrap();
    let want = format!("cannot lock the data directory {}: ", data.display());
    let stderr = server_refuses(&data);
    assert!(stderr.contains(&want), "{stderr}");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = cli(&data, &["import", empty.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&want), "{stderr}");
}

/// Starts the stdio server on `data`, which must refuse to start (exit 1),
/// and returns what it said on stderr.
fn server_refuses(data: &std::path::Path) -> String {
    let out = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("--data-dir")
        .arg(data)
        .env("ALAYASIKI_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}
