//! Forgetting through the real binary: by id, idempotency key and source;
//! afterwards no query, resource or export returns the text, also after a
//! restart; the vector slot is zeroed on disk at once (and slots are not
//! reused); `compact` then removes it from the files; shared originals
//! survive; the audit trail says who forgot what, without content.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::{json, Value};

/// Words that occur only in the forgotten document.
const SECRET: &str = "Quokkabridge ledger: the vault code is ZEPHYRMANTIS-4471.";

fn evidence_texts(q: &Value) -> Vec<String> {
    q["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect()
}

/// Chunks the keyword lane finds for `words`.
fn keyword_hits(s: &mut Server, words: &str) -> Vec<String> {
    evidence_texts(&s.ok(
        "alayasiki_query",
        json!({"query": words, "mode": "evidence", "lanes": ["keyword"], "top_k": 100}),
    ))
}

/// Asserts the secret is in no evidence of either lane, and that no chunk
/// matches its words (not even through a neighbour's context).
fn assert_secret_gone(s: &mut Server) {
    let words = "ZEPHYRMANTIS quokkabridge vault";
    assert_eq!(keyword_hits(s, words), Vec::<String>::new());
    let nearest = evidence_texts(&s.ok(
        "alayasiki_query",
        json!({"query": SECRET, "mode": "evidence", "lanes": ["vector"], "top_k": 100}),
    ));
    assert!(
        nearest
            .iter()
            .all(|t| !t.contains("ZEPHYR") && !t.contains("vault")),
        "{nearest:?}"
    );
}

/// Every byte of every file in the data directory.
fn files_contain(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    hits.push(p.display().to_string());
                }
            }
        }
    }
    hits
}

#[test]
fn forgotten_documents_are_gone_everywhere_and_stay_gone() {
    let dir = TempDir::new("forget");
    let (secret_id, shared_id) = {
        let mut s = Server::ready(dir.path());
        let r = s.ok(
            "alayasiki_ingest",
            json!({"content": format!("{SECRET}\n\nIt opens the north door."),
                   "source": "chat-7", "idempotency_key": "secret-1"}),
        );
        let secret_id = r["document_id"].as_str().unwrap().to_string();
        // The next message from the same source took the secret as context.
        s.ok(
            "alayasiki_ingest",
            json!({"content": "Thanks, noted. The south door uses a key.", "source": "chat-7"}),
        );
        // Two documents with identical bytes (the second stored although it
        // duplicates the first) share one original.
        let shared = "Identical bytes stored twice under two sources.";
        let a = s.ok(
            "alayasiki_ingest",
            json!({"content": shared, "source": "a"}),
        );
        s.ok(
            "alayasiki_ingest",
            json!({"content": shared, "source": "b", "allow_duplicate": true}),
        );
        for i in 0..3 {
            s.ok(
                "alayasiki_ingest",
                json!({"content": format!("Filler note {i} about gardening."), "source": "notes"}),
            );
        }
        assert!(keyword_hits(&mut s, "ZEPHYRMANTIS quokkabridge")
            .iter()
            .any(|t| t.contains("ZEPHYRMANTIS")));
        // The neighbour is found by the secret's words through its context.
        assert!(keyword_hits(&mut s, "ZEPHYRMANTIS")
            .iter()
            .any(|t| t.starts_with("Thanks, noted")));
        // The files hold it now (so the check after compaction means something).
        assert!(!files_contain(dir.path(), b"ZEPHYRMANTIS").is_empty());
        let before = s.ok("alayasiki_status", json!({}));

        let r = s.ok("alayasiki_forget", json!({"document_id": secret_id}));
        assert_eq!(r["documents"], 1, "{r}");
        assert_eq!(r["forgotten"][0]["document_id"], secret_id.as_str());
        assert_eq!(r["forgotten"][0]["original_deleted"], true);
        let chunks = r["chunks"].as_i64().unwrap();
        assert!(chunks >= 1);
        let after = s.ok("alayasiki_status", json!({}));
        assert_eq!(
            after["documents"],
            before["documents"].as_i64().unwrap() - 1
        );
        assert_eq!(after["chunks"], before["chunks"].as_i64().unwrap() - chunks);

        // Neither its own chunks nor the neighbour that borrowed its words
        // as context are found by them.
        assert_secret_gone(&mut s);
        assert!(s.query("south door key")["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"] == "Thanks, noted. The south door uses a key."));
        for uri in [
            format!("alayasiki://documents/{secret_id}"),
            format!("alayasiki://documents/{secret_id}/original"),
        ] {
            let r = s.request("resources/read", json!({ "uri": uri }));
            assert_eq!(r["error"]["code"], -32002, "{r}");
        }
        let listed = s.request("resources/list", json!({}));
        assert!(!listed.to_string().contains(&secret_id));
        // Forgetting again finds nothing; so does its idempotency key.
        let (is_error, msg) = s.call("alayasiki_forget", json!({"document_id": secret_id}));
        assert!(
            is_error && msg.as_str().unwrap().starts_with("not_found"),
            "{msg}"
        );
        let (is_error, _) = s.call("alayasiki_forget", json!({"idempotency_key": "secret-1"}));
        assert!(is_error);
        // The key is free again: the same key may now store new content.
        s.ok(
            "alayasiki_ingest",
            json!({"content": "A replacement note.", "idempotency_key": "secret-1"}),
        );

        // One of two documents sharing bytes: the original stays for the other.
        let r = s.ok(
            "alayasiki_forget",
            json!({"document_id": a["document_id"].as_str().unwrap()}),
        );
        assert_eq!(r["forgotten"][0]["original_deleted"], false, "{r}");
        let shared_id = {
            let q = s.query("Identical bytes stored twice");
            q["evidence"][0]["document_id"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let r = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{shared_id}/original")}),
        );
        assert_eq!(r["result"]["contents"][0]["text"], shared);

        // By source: every document from it.
        let r = s.ok("alayasiki_forget", json!({"source": "notes"}));
        assert_eq!(r["documents"], 3, "{r}");
        assert!(keyword_hits(&mut s, "Filler gardening").is_empty());
        s.close();
        (secret_id, shared_id)
    };

    // After a restart: still gone, and the export does not have it either.
    {
        let mut s = Server::ready(dir.path());
        assert_secret_gone(&mut s);
        let r = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{secret_id}")}),
        );
        assert_eq!(r["error"]["code"], -32002);
        assert!(!s.query("Identical bytes stored twice")["evidence"]
            .as_array()
            .unwrap()
            .is_empty());
        s.close();
    }
    let export = cli_ok(dir.path(), &["export"]);
    assert!(!export.contains("ZEPHYRMANTIS"));
    assert!(!export.contains(&b64(SECRET.as_bytes())[..20]));
    assert!(!export.contains(&secret_id));
    assert!(export.contains(&shared_id));

    // The audit trail names who forgot which document, without content.
    {
        let conn = Connection::open(dir.path().join("memory.db")).unwrap();
        let (subject, detail): (String, String) = conn
            .query_row(
                "SELECT subject, detail FROM audit WHERE action = 'forget' AND target = ?1",
                [&secret_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(subject, "local-agent");
        let detail: Value = serde_json::from_str(&detail).unwrap();
        assert_eq!(detail["selected_by"], "document_id");
        assert!(!detail.to_string().contains("ZEPHYR"));
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM audit WHERE action = 'forget'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 5);
    }

    // Compaction rewrites the vector files and merges the full-text index:
    // then not a byte of the forgotten text is left in the data directory.
    cli_ok(dir.path(), &["compact"]);
    for needle in ["ZEPHYRMANTIS", "zephyrmanti", "Quokkabridge", "quokkabridg"] {
        let hits = files_contain(dir.path(), needle.as_bytes());
        assert!(hits.is_empty(), "{needle:?} still in {hits:?}");
    }
    let mut s = Server::ready(dir.path());
    assert!(!s.query("south door key")["evidence"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn forget_arguments_are_checked() {
    let dir = TempDir::new("forgetargs");
    let mut s = Server::ready(dir.path());
    for args in [
        json!({}),
        json!({"document_id": "a", "source": "b"}),
        json!({"document_id": ""}),
        json!({"doc": "a"}),
        json!({"source": "x".repeat(2000)}),
    ] {
        let (is_error, msg) = s.call("alayasiki_forget", args.clone());
        assert!(is_error, "{args} accepted: {msg}");
    }
    let (is_error, msg) = s.call("alayasiki_forget", json!({"source": "nothing here"}));
    assert!(
        is_error && msg.as_str().unwrap().starts_with("not_found"),
        "{msg}"
    );
}

#[test]
fn forgetting_a_pdf_removes_its_pages_and_vectors() {
    let dir = TempDir::new("forgetpdf");
    let mut s = Server::ready(dir.path());
    let r = s.ok(
        "alayasiki_ingest",
        json!({"File": {"content": b64(&fixture_bytes("pdf/groff-columns.pdf")),
                        "source": "paper"}}),
    );
    let id = r["document_id"].as_str().unwrap().to_string();
    let r = s.ok("alayasiki_forget", json!({"source": "paper"}));
    assert_eq!(r["forgotten"][0]["document_id"], id.as_str());
    assert_eq!(r["vectors"], r["chunks"], "{r}");
    assert_eq!(s.ok("alayasiki_status", json!({}))["chunks"], 0);
}

#[test]
fn cli_forget_reports_and_refuses_unknown() {
    let dir = TempDir::new("forgetcli");
    {
        let mut s = Server::ready(dir.path());
        s.ok(
            "alayasiki_ingest",
            json!({"content": "Remove me via the command line.", "idempotency_key": "k9"}),
        );
        s.close();
    }
    let out = cli_ok(dir.path(), &["forget", "--key", "k9"]);
    assert!(out.contains("forgot 1 document(s)"), "{out}");
    let again = cli(dir.path(), &["forget", "--key", "k9"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no document"));
    let out = cli_ok(dir.path(), &["query", "remove command line"]);
    assert!(out.contains("No evidence"), "{out}");
}

/// The vector file of a tenant: (row bytes, path), as `store::vectors`
/// lays it out (a 256-byte header holding the dimension at bytes 12..16,
/// then fixed rows by slot: the int8 values and their scale).
fn vector_file(dir: &std::path::Path, tenant: i64, generation: i64) -> (usize, std::path::PathBuf) {
    let q8 = dir.join(format!("vectors/t{tenant}.g{generation}.q8"));
    let header = std::fs::read(&q8).unwrap();
    assert_eq!(&header[..8], b"ALAYAVEC");
    let dim = u32::from_le_bytes(header[12..16].try_into().unwrap()) as usize;
    ((dim + 4).next_multiple_of(16), q8)
}

const HEADER_BYTES: usize = 256;

fn row(path: &std::path::Path, row_bytes: usize, slot: i64) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let at = HEADER_BYTES + slot as usize * row_bytes;
    bytes[at..at + row_bytes].to_vec()
}

/// (tenant id, vector generation, committed rows) of tenant `local`, and
/// the vector slot of each chunk of `doc_id`.
fn slots(dir: &std::path::Path, doc_id: &str) -> ((i64, i64, i64), Vec<i64>) {
    let conn = Connection::open(dir.join("memory.db")).unwrap();
    let tenant = conn
        .query_row(
            "SELECT id, vector_generation, vector_rows FROM tenants WHERE name = 'local'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT c.vector_slot FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE d.doc_id = ?1 AND c.vector_slot IS NOT NULL ORDER BY c.ordinal",
        )
        .unwrap();
    let slots = stmt
        .query_map([doc_id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (tenant, slots)
}

#[test]
fn forgetting_zeroes_the_vector_slot_on_disk_and_it_stays_zero() {
    let dir = TempDir::new("forgetslot");
    let (secret, kept) = {
        let mut s = Server::ready(dir.path());
        let secret = s.ingest(SECRET);
        let kept = s.ingest("A note that stays: the greenhouse opens at nine.");
        s.close();
        (secret, kept)
    };
    let ((tenant, generation, rows), secret_slots) = slots(dir.path(), &secret);
    let (_, kept_slots) = slots(dir.path(), &kept);
    assert_eq!(secret_slots.len(), 1, "one chunk, one vector");
    assert_eq!(rows, 2);
    let slot = secret_slots[0];
    let (q8_row, q8) = vector_file(dir.path(), tenant, generation);
    let stored = row(&q8, q8_row, slot);
    let kept_before = row(&q8, q8_row, kept_slots[0]);
    assert!(
        stored.iter().any(|&b| b != 0),
        "the slot holds the embedding"
    );

    {
        let mut s = Server::ready(dir.path());
        let r = s.ok("alayasiki_forget", json!({"document_id": secret}));
        assert_eq!(r["vectors"], 1, "{r}");
        s.close();
    }
    // After the forget (and the restart the server exit makes), the
    // file's row for that slot is zeros, and the embedding's bytes are
    // nowhere in it; the other document's row is untouched.
    let assert_forgotten = || {
        assert!(row(&q8, q8_row, slot).iter().all(|&b| b == 0));
        let file = std::fs::read(&q8).unwrap();
        assert!(!file.windows(64).any(|w| w == &stored[..64]));
        assert_eq!(row(&q8, q8_row, kept_slots[0]), kept_before);
    };
    assert_forgotten();

    // Slots are not reused: the store only appends, and SQLite is the
    // truth about which rows are live (the design's vector file), so a new
    // chunk takes a new slot and the forgotten one stays zero until
    // `compact` rewrites the files without it.
    let newer = {
        let mut s = Server::ready(dir.path());
        assert_secret_gone(&mut s);
        let id = s.ingest("Another note: the seed order arrives on Tuesday.");
        s.close();
        id
    };
    let ((_, _, rows), newer_slots) = slots(dir.path(), &newer);
    assert_eq!(newer_slots, [rows - 1]);
    assert!(newer_slots[0] > slot && newer_slots[0] > kept_slots[0]);
    assert_forgotten();

    cli_ok(dir.path(), &["compact"]);
    let ((tenant, generation, rows), kept_slots) = slots(dir.path(), &kept);
    assert_eq!(rows, 2, "compaction drops the freed row");
    // The row compaction copied is the same bytes: read back and quantized
    // again, a stored vector is the same row.
    let (q8_row, q8) = vector_file(dir.path(), tenant, generation);
    assert_eq!(row(&q8, q8_row, kept_slots[0]), kept_before);
    let file = std::fs::read(&q8).unwrap();
    assert!(!file.windows(64).any(|w| w == &stored[..64]));
}

/// A document spanning many pages of the database (its chunks updated as
/// they get vector slots, its row as it gets its text) leaves no copy of
/// its words in the file after a forget: `secure_delete` is on for every
/// write, so an updated row's old copy was overwritten too. Without it,
/// the words outlived the forget and `compact` in page free space.
#[test]
fn a_long_forgotten_document_leaves_no_copy_in_the_database_file() {
    let dir = TempDir::new("forget-long");
    {
        let mut s = Server::ready(dir.path());
        s.ok(
            "alayasiki_ingest",
            json!({"content": "A survivor note about tea.", "source": "keep.md"}),
        );
        let long: Vec<String> = (0..200)
            .map(|i| format!("Paragraph {i}: Ottoline Quillonby shipped the xarbenite crate."))
            .collect();
        let r = s.ok(
            "alayasiki_ingest",
            json!({"content": long.join("\n\n"), "source": "secret.md"}),
        );
        assert!(r["chunks"].as_u64().unwrap() > 10, "{r}");
        s.ok("alayasiki_forget", json!({"source": "secret.md"}));
        s.close();
    }
    for needle in ["Quillonby", "xarbenite"] {
        let hits = files_contain(dir.path(), needle.as_bytes());
        assert!(hits.is_empty(), "{needle:?} still in {hits:?}");
    }
}

/// Forgetting queues a new vector for the next document of the same
/// source. Short commands that open the memory and exit before that job
/// finishes (an orderly stop) never count an attempt against it, so it
/// never fails as "interrupted" (it did after three such commands); the
/// `forget` command itself waits for the job (`FORGET_SETTLE_MS`); and a
/// forget by source reports every document's own vectors.
#[test]
fn short_commands_after_a_forget_never_fail_the_next_documents_indexing() {
    let dir = TempDir::new("forget-orderly");
    {
        let mut s = Server::ready(dir.path());
        for i in 0..12 {
            s.ok(
                "alayasiki_ingest",
                json!({"content": format!("Harbor log {i}: the ferry number {i} left pier nine."),
                       "source": "harbor", "idempotency_key": format!("k{i}")}),
            );
        }
        for i in 0..4 {
            s.ok(
                "alayasiki_ingest",
                json!({"content": format!("Crate note {i}: Petra packed crate {i}."),
                       "source": "crates"}),
            );
        }
        s.close();
    }
    let jobs = || {
        let conn = Connection::open(dir.path().join("memory.db")).unwrap();
        conn.query_row(
            "SELECT count(*) FILTER (WHERE state = 'failed'),
                    count(*) FILTER (WHERE state = 'pending')
               FROM jobs",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )
        .unwrap()
    };
    // Half forgotten by a server killed at once (its re-embedding left
    // pending, at most one attempt counted by the kill), each followed by
    // short commands; the other half by the command, which waits.
    for i in (0..12).step_by(2) {
        if i < 6 {
            let mut s = Server::ready(dir.path());
            s.ok(
                "alayasiki_forget",
                json!({"idempotency_key": format!("k{i}")}),
            );
            s.kill();
        } else {
            cli_ok(dir.path(), &["forget", "--key", &format!("k{i}")]);
            assert_eq!(jobs(), (0, 0));
        }
        for _ in 0..4 {
            let miss = cli(dir.path(), &["forget", "--id", "doc_none"]);
            assert_eq!(miss.status.code(), Some(1));
        }
        assert_eq!(jobs().0, 0, "a job failed after forgetting k{i}");
    }

    let out = cli_ok(dir.path(), &["forget", "--source", "crates"]);
    assert!(out.contains("forgot 4 document(s)"), "{out}");
    for line in out.lines().filter(|l| l.starts_with("forgot doc_")) {
        assert!(line.contains(": 1 chunks, 1 vectors"), "{line}");
    }
    assert_eq!(jobs(), (0, 0));
    let mut s = Server::ready(dir.path());
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "ferry left pier nine", "lanes": ["vector"], "mode": "evidence", "top_k": 10}),
    );
    assert_eq!(q["evidence"].as_array().unwrap().len(), 6, "{q}");
}
