//! The extractive answer through the real binary: it quotes the document
//! whose evidence carries the question's terms best, and stops instead of
//! padding with sentences from elsewhere.

mod common;

use common::*;
use serde_json::{json, Value};

fn answer(s: &mut Server, question: &str) -> Value {
    s.ok(
        "alayasiki_query",
        json!({"query": question, "mode": "answer"}),
    )
}

fn cited_documents(q: &Value) -> Vec<String> {
    q["answer"]["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["document_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn answer_quotes_the_how_to_not_a_long_section_sharing_its_words() {
    let dir = TempDir::new("answer_howto");
    let mut s = Server::ready(dir.path());
    let long_section = "Long tests\n\n\
        - The long tests run for several hours.\n\
        - Long tests are run nightly on the fuzzing machines.\n\
        - Each of the long tests writes its log to the scratch disk.\n\
        - Failures in long tests are mailed to the team.";
    s.ingest(long_section);
    let how_to = s.ingest(
        "Testing zstd\n\nTo run the zstd tests, type make check in the tests directory. \
         It builds the test programs first.",
    );
    let q = answer(&mut s, "How do I run the zstd tests?");
    let text = q["answer"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("To run the zstd tests, type make check in the tests directory. ["),
        "{text}"
    );
    assert!(
        !text.contains("Long tests") && !text.contains("long tests"),
        "{text}"
    );
    assert_eq!(cited_documents(&q), [how_to], "{}", q["answer"]);
}

#[test]
fn answer_from_a_document_stored_twice_is_not_padded_with_an_unrelated_note() {
    let dir = TempDir::new("answer_twice");
    let mut s = Server::ready(dir.path());
    let backups = "Backups\n\nThe nightly backup job copies the database to the archive bucket \
                   at 02:00. Restores are done with the restore script.";
    let first = s.ingest(backups);
    let second = s.ok(
        "alayasiki_ingest",
        json!({"content": backups, "source": "wiki/backups-copy"}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    s.ingest(
        "Configuration note: every job may run for at most ten minutes. A job that runs \
         longer is stopped. Set the job limit in runner.toml.",
    );
    let q = answer(&mut s, "When does the nightly backup job run?");
    let text = q["answer"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "The nightly backup job copies the database to the archive bucket at 02:00. ["
        ),
        "{text}"
    );
    assert!(
        !text.contains("Configuration")
            && !text.contains("runner.toml")
            && !text.contains("ten minutes"),
        "{text}"
    );
    let cited = cited_documents(&q);
    assert_eq!(cited.len(), 1, "{}", q["answer"]);
    assert!(cited[0] == first || cited[0] == second, "{}", q["answer"]);
}
