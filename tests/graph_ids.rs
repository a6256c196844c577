//! Entity and relation ids through the real `alayasiki-api`: a tenant's
//! ids are numbered within the tenant, so they say nothing about other
//! tenants (how many entities they hold, whether they wrote first), and
//! the ids a store made by the previous release gave out still name the
//! same entities, with new ones numbered after the tenant's own.

mod common;
mod http_common;

use http_common::{admin, Api, TempDir};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What tenant `acme` stores: the same text in every store of these tests.
const ACME_TEXT: &str = "Acme Corp. acquired Widgets Inc. in 2023. \
                         Dana Scully works at Acme Corp. as chief engineer.";

fn ingest(api: &Api, token: &str, text: &str) {
    let body = json!({"content": text, "wait": true});
    let r = api.call("POST", "/v1/ingest", token, Some(&body));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["state"], "ready", "{}", r.json());
}

fn get(api: &Api, path: &str, token: &str) -> Value {
    let r = api.call("GET", path, token, None);
    assert_eq!(
        r.status,
        200,
        "{path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

/// Every entity of the caller's tenant: name → id.
fn entity_ids(api: &Api, token: &str) -> BTreeMap<String, String> {
    get(api, "/v1/entities?limit=100", token)["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["entity_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every relation of the caller's graph: "source label target" → id.
fn relation_ids(api: &Api, token: &str) -> BTreeMap<String, String> {
    get(api, "/v1/graph?limit=100", token)["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                format!("{} {} {}", e["source"], e["label"], e["target"]),
                e["relation_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `n` sentences naming distinct companies and people: many entities and
/// relations for another tenant to hold.
fn crowd(n: usize) -> String {
    (0..n)
        .map(|i| format!("Person{i} Example works at Company{i} Holdings. "))
        .collect()
}

/// The number in an id (`ent_12` → 12).
fn number(id: &str) -> u64 {
    id.rsplit('_').next().unwrap().parse().unwrap()
}

#[test]
fn a_tenants_ids_are_the_same_whatever_other_tenants_stored_first() {
    let acme = admin("alice", "acme");
    let globex = admin("bob", "globex");

    let alone_dir = TempDir::new("ids-alone");
    let alone = Api::start(alone_dir.path(), &[]);
    ingest(&alone, &acme, ACME_TEXT);
    let (entities_alone, relations_alone) =
        (entity_ids(&alone, &acme), relation_ids(&alone, &acme));
    drop(alone);

    let crowded_dir = TempDir::new("ids-crowded");
    let crowded = Api::start(crowded_dir.path(), &[]);
    ingest(&crowded, &globex, &crowd(40));
    let globex_entities = entity_ids(&crowded, &globex);
    assert!(globex_entities.len() >= 40, "{globex_entities:?}");
    ingest(&crowded, &acme, ACME_TEXT);
    let entities_crowded = entity_ids(&crowded, &acme);
    let relations_crowded = relation_ids(&crowded, &acme);

    assert!(entities_alone.len() >= 3, "{entities_alone:?}");
    assert!(!relations_alone.is_empty(), "{relations_alone:?}");
    assert_eq!(entities_alone, entities_crowded);
    assert_eq!(relations_alone, relations_crowded);
    // Numbered from one within the tenant, whoever came first.
    let first = entities_crowded.values().map(|id| number(id)).min();
    assert_eq!(first, Some(1), "{entities_crowded:?}");

    // Each id names its own tenant's entity: the same id in the other
    // tenant is that tenant's own (or none), never this one's.
    let (name, id) = entities_crowded.iter().next().unwrap();
    let mine = get(&crowded, &format!("/v1/entities/{id}"), &acme);
    assert_eq!(mine["name"], name.as_str(), "{mine}");
    let theirs = crowded.call("GET", &format!("/v1/entities/{id}"), &globex, None);
    if theirs.status == 200 {
        assert!(
            globex_entities.contains_key(theirs.json()["name"].as_str().unwrap()),
            "{}",
            theirs.json()
        );
    } else {
        assert_eq!(theirs.status, 404);
    }
    // A neighbourhood read by a new id reaches the same entities.
    let graph = get(&crowded, &format!("/v1/graph?entity={id}"), &acme);
    for node in graph["nodes"].as_array().unwrap() {
        let name = node["name"].as_str().unwrap();
        assert_eq!(
            entities_crowded.get(name).map(String::as_str),
            node["entity_id"].as_str(),
            "{graph}"
        );
    }
}

/// A data directory written by the release before tenant-local ids
/// (`fixtures/legacy_ids`): `globex` stored, then `acme`, then `globex`
/// again, so that acme's ids sit in the middle of the one sequence the
/// release numbered every tenant's entities from. `ids.json` holds the
/// ids that release gave acme's entities.
const LEGACY_STORE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/legacy_ids");

/// The fixture's database in `dir`, with its vector files rebuilt
/// (`alayasiki-mcp reindex`: the fixture leaves them out).
fn legacy_store_in(dir: &Path) {
    let data = Path::new(LEGACY_STORE).join("data");
    common::copy_dir(&data, dir);
    let reindexed = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .args(["reindex", "--data-dir"])
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        reindexed.status.success(),
        "{}",
        String::from_utf8_lossy(&reindexed.stderr)
    );
}

#[test]
fn ids_given_by_the_previous_release_still_name_their_entities() {
    let acme = admin("alice", "acme");
    let dir = TempDir::new("ids-legacy");
    legacy_store_in(dir.path());
    let given: BTreeMap<String, String> =
        serde_json::from_slice(&std::fs::read(Path::new(LEGACY_STORE).join("ids.json")).unwrap())
            .unwrap();
    assert!(given.len() >= 3, "{given:?}");
    let api = Api::start(dir.path(), &[]);

    // The same ids, listed and read one by one.
    assert_eq!(entity_ids(&api, &acme), given);
    for (name, id) in &given {
        let e = get(&api, &format!("/v1/entities/{id}"), &acme);
        assert_eq!(e["name"], name.as_str(), "{e}");
        let g = get(&api, &format!("/v1/graph?entity={id}"), &acme);
        assert_eq!(g["nodes"][0]["entity_id"], id.as_str(), "{g}");
    }

    // New entities continue after acme's own highest number, not after
    // the highest of the store (globex wrote after acme).
    let highest = given.values().map(|id| number(id)).max().unwrap();
    ingest(&api, &acme, "Lisbon is the capital of Portugal.");
    let now = entity_ids(&api, &acme);
    let mut new: Vec<u64> = now
        .iter()
        .filter(|(name, _)| !given.contains_key(*name))
        .map(|(_, id)| number(id))
        .collect();
    new.sort_unstable();
    assert!(!new.is_empty(), "{now:?}");
    let expected: Vec<u64> = (highest + 1..=highest + new.len() as u64).collect();
    assert_eq!(new, expected, "{now:?}");
    for (name, id) in &given {
        assert_eq!(now.get(name), Some(id));
    }
}
