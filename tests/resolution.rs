//! Entity resolution across documents through the real binary: two
//! documents naming one entity differently share one entity, a question
//! naming either name finds both documents' facts, and similar names of
//! different things stay apart.

mod common;

use common::*;
use serde_json::{json, Value};

fn query(s: &mut Server, q: &str) -> Value {
    s.ok(
        "alayasiki_query",
        json!({"query": q, "mode": "evidence", "search_mode": "local"}),
    )
}

fn communities(s: &mut Server) -> Value {
    let r = s.request("resources/read", json!({"uri": "alayasiki://communities"}));
    serde_json::from_str(r["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
}

/// Every entity name in the community summaries.
fn entity_names(s: &mut Server) -> Vec<String> {
    communities(s)["communities"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["entities"].as_array().unwrap().clone())
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

/// (subject, predicate, object, evidence text) of every relation shown on
/// the evidence of a query.
fn relations(r: &Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for e in r["evidence"].as_array().unwrap() {
        for rel in e["relations"].as_array().cloned().unwrap_or_default() {
            out.push((
                rel["subject"].as_str().unwrap().to_string(),
                rel["predicate"].as_str().unwrap().to_string(),
                rel["object"].as_str().unwrap().to_string(),
                e["text"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

#[test]
fn two_documents_naming_one_person_differently_share_one_entity() {
    let dir = TempDir::new("resolve-person");
    let mut s = Server::ready(dir.path());
    s.ingest("Marie Sklodowska Curie was born in Warsaw.");
    s.ingest("Marie Curie works at the University of Paris.");
    let names = entity_names(&mut s);
    assert!(
        names.iter().any(|n| n == "Marie Sklodowska Curie"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "Marie Curie"),
        "the second name became an alias, not an entity: {names:?}"
    );
    let c = communities(&mut s);
    let facts = c["communities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["entities"].to_string().contains("Marie Sklodowska Curie"))
        .map(|c| c["facts"].to_string())
        .unwrap();
    assert!(
        facts.contains("Warsaw") && facts.contains("University of Paris"),
        "one entity holds both documents' facts: {facts}"
    );
    // Either name in a question reaches both documents' facts.
    let r = query(&mut s, "Where was Marie Curie born?");
    let rels = relations(&r);
    assert!(
        rels.iter()
            .any(|(_, p, o, text)| p == "born in" && o == "Warsaw" && text.contains("Sklodowska")),
        "{rels:?}"
    );
}

#[test]
fn a_question_naming_the_alias_finds_the_other_documents_relation() {
    let dir = TempDir::new("resolve-acronym");
    let mut s = Server::ready(dir.path());
    s.ingest("Acme Corp. opened an office in New York City.");
    s.ingest("Dana Scully moved to NYC last spring.");
    let names = entity_names(&mut s);
    assert!(!names.iter().any(|n| n == "NYC"), "{names:?}");
    // The question uses the first document's name; the relation is from
    // the second, which wrote "NYC".
    let r = query(&mut s, "Who moved to New York City?");
    let rels = relations(&r);
    assert!(
        rels.iter().any(|(subj, p, o, text)| subj == "Dana Scully"
            && p == "moved to"
            && o == "New York City"
            && text.contains("NYC")),
        "{rels:?}"
    );
    // And the other way round: the acronym in a question is the entity.
    let r = query(&mut s, "What opened an office in NYC?");
    assert!(
        r["explain"]["entities"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "New York City"),
        "{}",
        r["explain"]
    );
    assert!(
        r["evidence"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Acme Corp. opened an office"),
        "{}",
        r["evidence"]
    );
}

#[test]
fn similar_names_of_different_things_stay_separate() {
    let dir = TempDir::new("resolve-apart");
    let mut s = Server::ready(dir.path());
    s.ingest("John Smith works at Acme.");
    s.ingest("Jane Smith works at Initech.");
    s.ingest("Apple acquired Shazam.");
    s.ingest("Apple Records signed the Beatles.");
    s.ingest("Paris Hilton visited Tokyo.");
    s.ingest("Paris is the capital of France.");
    let names = entity_names(&mut s);
    for name in [
        "John Smith",
        "Jane Smith",
        "Apple",
        "Apple Records",
        "Paris Hilton",
        "Paris",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
    let r = query(&mut s, "Where does Jane Smith work?");
    let rels = relations(&r);
    assert!(
        rels.iter()
            .any(|(subj, _, o, _)| subj == "Jane Smith" && o == "Initech"),
        "{rels:?}"
    );
    assert!(
        !rels
            .iter()
            .any(|(subj, _, o, _)| subj == "Jane Smith" && o == "Acme"),
        "John's employer is not Jane's: {rels:?}"
    );
}

#[test]
fn a_question_name_reaches_a_longer_stored_name() {
    let dir = TempDir::new("resolve-question");
    let mut s = Server::ready(dir.path());
    s.ingest("Harvard University hired Fox Mulder.");
    s.ingest("Lisbon is the capital of Portugal.");
    let r = query(&mut s, "Who did Harvard hire?");
    assert_eq!(
        r["explain"]["entities"],
        json!(["Harvard University"]),
        "{}",
        r["explain"]
    );
    let rels = relations(&r);
    assert!(
        rels.iter()
            .any(|(_, p, o, _)| p == "hired" && o == "Fox Mulder"),
        "{rels:?}"
    );
}
