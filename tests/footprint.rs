//! The disk footprint of a small memory, through the real binary: a server
//! that has stopped receiving writes empties its write-ahead log
//! (`IDLE_CHECKPOINT_MS`, 2 s), and a data directory holding a few hundred
//! short documents stays small while the server runs. Sizes are allocated
//! blocks, not apparent lengths (a sparse tail costs nothing). A store an
//! earlier release wrote with exact f32 copies of its vectors opens without
//! them, and answers from the int8 rows alone. A document's text is stored
//! once, and chunks an earlier release stored with a copy are still read.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// `IDLE_CHECKPOINT_MS` (src/store/checkpoint.rs).
const IDLE_CHECKPOINT: Duration = Duration::from_millis(2000);
/// The log may keep this much on disk once the server is idle (issue 20).
const IDLE_WAL_BYTES: u64 = 4 * 1024 * 1024;
/// The whole data directory of a small memory, server running (issue 20).
const SMALL_MEMORY_BYTES: u64 = 8 * 1000 * 1000;
/// Short documents ingested, one per turn of a made-up conversation.
const TURNS: usize = 400;

fn allocated(path: &Path) -> u64 {
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.blocks() * 512
    }
    #[cfg(not(unix))]
    {
        meta.len()
    }
}

fn allocated_tree(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        total += if path.is_dir() {
            allocated_tree(&path)
        } else {
            allocated(&path)
        };
    }
    total
}

fn wal(dir: &Path) -> u64 {
    allocated(&dir.join("memory.db-wal"))
}

/// Ingests `TURNS` short documents the way a chat client would (one at a
/// time, the session as source) and waits until all are indexed.
fn ingest_conversation(s: &mut Server) {
    let names = ["Caroline", "Melanie", "Jon", "Gina", "Deborah", "Jolene"];
    let places = ["Boston", "Lisbon", "the lake", "Seattle", "the museum"];
    for i in 0..TURNS {
        let text = format!(
            "{}: I went to {} with {} last week, turn {i}, and we talked about painting zz{i}q.",
            names[i % names.len()],
            places[i % places.len()],
            names[(i * 7 + 3) % names.len()],
        );
        s.ok(
            "alayasiki_ingest",
            json!({"content": text, "source": format!("chat/session_{}", i / 20), "wait": false}),
        );
    }
    let deadline = Instant::now() + TIMEOUT;
    while s.ok("alayasiki_status", json!({}))["jobs"]["pending"] != 0 {
        assert!(Instant::now() < deadline, "ingestion did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_idle_server_empties_its_log_and_a_small_memory_stays_small() {
    let dir = TempDir::new("footprint");
    let mut s = Server::ready(dir.path());
    ingest_conversation(&mut s);
    let written = Instant::now();
    let busy_log = wal(dir.path());
    // Otherwise the check below could not fail.
    assert!(
        busy_log > IDLE_WAL_BYTES,
        "{TURNS} ingests left only {busy_log} bytes of log"
    );
    // ~2.5 s without writes, plus slack for a loaded machine: the server
    // checkpoints once IDLE_CHECKPOINT has passed without a write.
    std::thread::sleep(IDLE_CHECKPOINT + Duration::from_millis(500));
    let deadline = written + IDLE_CHECKPOINT + Duration::from_secs(8);
    while wal(dir.path()) > IDLE_WAL_BYTES && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let idle_log = wal(dir.path());
    assert!(
        idle_log <= IDLE_WAL_BYTES,
        "log {idle_log} bytes after {:?} idle (was {busy_log})",
        written.elapsed()
    );
    let total = allocated_tree(dir.path());
    assert!(
        total <= SMALL_MEMORY_BYTES,
        "data directory {total} bytes for {TURNS} short documents"
    );
    // Still serving, and nothing was lost: the last turn is found.
    let q = s.query(&format!("zz{}q", TURNS - 1));
    assert!(
        !q["evidence"].as_array().unwrap().is_empty(),
        "the last turn is not found after the idle checkpoint: {q}"
    );
    // A write after the idle checkpoint starts a new log.
    s.ingest("One more turn after the pauseqq.");
    assert!(wal(dir.path()) > 0);
    // Killed now, the store loses nothing: what the idle checkpoint moved
    // into the database and what the new log holds are both there.
    s.kill();
    let mut s = Server::ready(dir.path());
    for marker in [format!("zz{}q", TURNS - 1), "zz0q".into(), "pauseqq".into()] {
        let q = s.query(&marker);
        assert!(
            !q["evidence"].as_array().unwrap().is_empty(),
            "{marker} lost after kill -9: {q}"
        );
    }
    let (status, _) = s.close();
    assert!(status.success());
}

/// `fixtures/vectors_f32`: a store the release before the int8-only vector
/// files wrote (see its README).
const F32_STORE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/vectors_f32/data");

/// A fresh copy of [`F32_STORE`], which the tests may change.
fn earlier_release_store(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    copy_dir(Path::new(F32_STORE), dir.path());
    dir
}

/// The document id and text of the first evidence item for `question`.
fn first_evidence(s: &mut Server, question: &str) -> (String, String) {
    let q = s.ok(
        "alayasiki_query",
        json!({"query": question, "mode": "evidence", "top_k": 1}),
    );
    let item = &q["evidence"][0];
    let field = |name: &str| {
        item[name]
            .as_str()
            .unwrap_or_else(|| panic!("{q}"))
            .to_string()
    };
    (field("document_id"), field("text"))
}

#[test]
fn a_store_written_with_exact_vector_copies_opens_without_them() {
    let dir = earlier_release_store("f32-store");
    let exact = dir.path().join("vectors/t1.g0.f32");
    let q8 = dir.path().join("vectors/t1.g0.q8");
    assert!(exact.exists());
    let mut s = Server::ready(dir.path());
    // The vector lane alone finds each stored note by a paraphrase.
    for (question, source) in [
        ("When can I visit the glasshouse?", "greenhouse.txt"),
        ("Who bought seeds for planting?", "seeds.txt"),
        ("What broke in the field?", "pump.txt"),
    ] {
        let q = s.ok(
            "alayasiki_query",
            json!({"query": question, "mode": "evidence", "lanes": ["vector"], "top_k": 1}),
        );
        let got = evidence_sources(&q);
        assert!(
            got.len() == 1 && got[0].ends_with(source),
            "{question}: {got:?}"
        );
    }
    assert!(!exact.exists(), "the f32 copies were deleted on open");
    // New rows go on after the old ones, in the int8 file alone.
    s.ingest("The compost heap behind the shed is turned every other Sunday.");
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "How often is the compost turned?", "mode": "evidence",
               "lanes": ["vector"], "top_k": 1}),
    );
    let text = q["evidence"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("compost heap"), "{q}");
    s.close();
    let row = (256 + 4usize).next_multiple_of(16) as u64;
    assert!(std::fs::metadata(&q8).unwrap().len() >= 256 + 4 * row);
    assert!(!exact.exists());
}

/// Hashes are stored as their bytes; the rows an earlier release wrote hold
/// them as hex text and are still found and read by them: the same note
/// again is a duplicate of the stored one, its bytes, stored anyway, share
/// the stored original, and both originals read back checked.
#[test]
fn hashes_stored_as_hex_by_an_earlier_release_still_find_their_copies() {
    let dir = earlier_release_store("hex-keys");
    let seeds = "Marta ordered tomato seeds from the Lisbon nursery for the spring beds.\n";
    let mut s = Server::ready(dir.path());
    let (old_id, _) = first_evidence(&mut s, "tomato seeds");
    let again = s.ok("alayasiki_ingest", json!({"content": seeds}));
    assert_eq!(again["duplicate_of"], old_id.as_str(), "{again}");
    let kept = s.ok(
        "alayasiki_ingest",
        json!({"content": seeds, "allow_duplicate": true}),
    );
    assert!(kept.get("duplicate_of").is_none(), "{kept}");
    let fresh = s.ingest("The rain barrel by the greenhouse holds two hundred litres.");
    // A read checks the original against the hash its document recorded:
    // hex text in the old row, bytes in the new one.
    for (id, text) in [
        (old_id.as_str(), seeds),
        (
            fresh.as_str(),
            "The rain barrel by the greenhouse holds two hundred litres.",
        ),
    ] {
        let read = s.request(
            "resources/read",
            json!({"uri": format!("alayasiki://documents/{id}/original")}),
        );
        assert_eq!(read["result"]["contents"][0]["text"], text, "{read}");
    }
    s.close();

    let db = rusqlite::Connection::open(dir.path().join("memory.db")).unwrap();
    let originals: i64 = db
        .query_row("SELECT count(*) FROM originals", [], |r| r.get(0))
        .unwrap();
    assert_eq!(originals, 4, "the copy shares the stored original");
    let (key_type, key_len, hash_type, hash_len): (String, i64, String, i64) = db
        .query_row(
            "SELECT typeof(d.content_key), length(d.content_key),
                    typeof(o.sha256) || typeof(d.sha256), length(o.sha256) + length(d.sha256)
               FROM documents d JOIN originals o ON o.id = d.original_id
              WHERE d.doc_id = ?1",
            [&fresh],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (key_type.as_str(), key_len, hash_type.as_str(), hash_len),
        ("blob", 33, "blobblob", 64)
    );
    // A note written now is found again by its packed keys too.
    let mut s = Server::ready(dir.path());
    let twice = s.ok(
        "alayasiki_ingest",
        json!({"content": "The rain barrel by the greenhouse holds two hundred litres."}),
    );
    assert_eq!(twice["duplicate_of"], fresh.as_str(), "{twice}");
    s.close();
}

/// A note's text is stored once: the chunks of a document written now keep
/// only their spans and read their text back from its original (or from
/// its extracted text, for JSON), while the chunks an earlier release wrote
/// with a copy of their text are read from that copy. Evidence is the same
/// either way.
#[test]
fn a_documents_text_is_stored_once_and_evidence_reads_it_back() {
    let dir = earlier_release_store("text-once");
    let note = "Zoë’s café on Rua Augusta opens at nine 🥐; the naïve crêpes sell out by ten.";
    let mut s = Server::ready(dir.path());
    let note_id = s.ingest(note);
    let json_doc = s.ok(
        "alayasiki_ingest",
        json!({"content": r#"{"kiosk": "Ferreira", "opens": "the kiosk by the tram stop opens at seven"}"#,
               "media_type": "application/json"}),
    );
    let json_id = json_doc["document_id"].as_str().unwrap().to_string();
    assert_eq!(
        first_evidence(&mut s, "When does the café on Rua Augusta open?"),
        (note_id.clone(), note.to_string())
    );
    let (found, text) = first_evidence(&mut s, "When does the kiosk by the tram stop open?");
    assert_eq!(found, json_id);
    assert!(
        text.contains("the kiosk by the tram stop opens at seven"),
        "{text}"
    );
    let (_, old) = first_evidence(&mut s, "tomato seeds");
    assert!(old.contains("tomato seeds"), "{old}");
    s.close();

    let db = rusqlite::Connection::open(dir.path().join("memory.db")).unwrap();
    let copies = |doc_id: &str| -> Vec<String> {
        let mut stmt = db
            .prepare(
                "SELECT c.text FROM chunks c JOIN documents d ON d.id = c.document_id
                  WHERE d.doc_id = ?1",
            )
            .unwrap();
        stmt.query_map([doc_id], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    assert_eq!(copies(&note_id), [""]);
    assert_eq!(copies(&json_id), [""]);
    let extracted: Option<String> = db
        .query_row(
            "SELECT text FROM documents WHERE doc_id = ?1",
            [&json_id],
            |r| r.get(0),
        )
        .unwrap();
    assert!(extracted.is_some_and(|t| t.contains(&text)));
    let old_copies: i64 = db
        .query_row(
            "SELECT count(*) FROM chunks WHERE text LIKE '%tomato seeds%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        old_copies, 1,
        "the earlier release's chunks keep their copy"
    );
}
