//! Two real `alayasiki-api` nodes serving one memory on a real 3-node
//! rqlite cluster (`--store rqlite://…`, through `ALAYASIKI_STORE`):
//!
//! - the first node founds the cluster's memory, the second joins it from
//!   a snapshot, and `status` shows the cluster's nodes and leader;
//! - a write acknowledged by one node is seen by a read on the other that
//!   names its position (`X-Alayasiki-After`);
//! - ingests through both nodes while the cluster's leader is killed with
//!   `kill -9` and restarted: every acknowledged ingest is on both
//!   replicas exactly once, and the replicas are identical table for
//!   table;
//! - a node whose vector files are deleted rebuilds them from the cluster
//!   and answers vector-only queries exactly as the other node does;
//! - without a quorum, writes are refused with 503 and `Retry-After`, and
//!   reads go on.

mod cluster_common;
mod http_common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alayasiki_mcp::store::cluster::copy::digests_of_local;
use cluster_common::{rqlited, Cluster};
use http_common::{admin, request, Api, Reply, TempDir};
use serde_json::{json, Value};

fn node(dir: &Path, cluster: &Cluster) -> Api {
    Api::start(
        dir,
        &[
            ("ALAYASIKI_STORE", &cluster.address()),
            (
                "ALAYASIKI_LOG",
                &std::env::var("CLUSTER_API_LOG").unwrap_or("warn".into()),
            ),
        ],
    )
}

fn call(api: &Api, path: &str, token: &str, body: &Value, after: Option<i64>) -> Reply {
    let mut headers = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    if let Some(p) = after {
        headers.push(("X-Alayasiki-After".into(), p.to_string()));
    }
    request(
        api.addr,
        "POST",
        path,
        &headers,
        Some(body.to_string().as_bytes()),
    )
}

fn position(reply: &Reply) -> i64 {
    reply
        .header("X-Alayasiki-Position")
        .expect("a cluster node's answer carries its position")
        .parse()
        .unwrap()
}

/// Ingests `text` under `key` through `api`, retrying 503s (a leader
/// changing) for up to 30 s; the document id and the answer's position.
fn ingest(api: &Api, token: &str, key: &str, text: &str) -> Option<(String, i64)> {
    let body = json!({"content": text, "source": "team", "idempotency_key": key, "wait": true});
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = call(api, "/v1/tools/alayasiki_ingest", token, &body, None);
        match r.status {
            200 => {
                return Some((
                    r.json()["document_id"].as_str().unwrap().to_string(),
                    position(&r),
                ))
            }
            503 if Instant::now() < deadline => {
                assert!(r.header("Retry-After").is_some(), "503 without Retry-After");
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => {
                eprintln!(
                    "ingest {key}: {} {}",
                    r.status,
                    String::from_utf8_lossy(&r.body)
                );
                return None;
            }
        }
    }
}

fn doc_ids_of(dir: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open_with_flags(
        dir.join(alayasiki_mcp::store::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = conn.prepare("SELECT doc_id FROM documents").unwrap();
    let ids = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    ids
}

fn user_version(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        dir.join(alayasiki_mcp::store::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

fn status(api: &Api, token: &str) -> Value {
    call(api, "/v1/tools/alayasiki_status", token, &json!({}), None).json()
}

/// Waits until both nodes have applied the cluster's whole log.
fn wait_same_position(a: &Api, b: &Api, token: &str) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (pa, pb) = (
            status(a, token)["cluster"]["position"].as_i64().unwrap(),
            status(b, token)["cluster"]["position"].as_i64().unwrap(),
        );
        if pa == pb {
            // Status calls are charged (written) too: settle once more.
            std::thread::sleep(Duration::from_millis(300));
            let (qa, qb) = (
                status(a, token)["cluster"]["position"].as_i64().unwrap(),
                status(b, token)["cluster"]["position"].as_i64().unwrap(),
            );
            if qa == qb {
                return qa;
            }
        }
        assert!(
            Instant::now() < deadline,
            "positions {pa} and {pb} never met"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn vector_top_k(api: &Api, token: &str, q: &str) -> Vec<String> {
    let r = call(
        api,
        "/v1/tools/alayasiki_query",
        token,
        &json!({"query": q, "mode": "evidence", "lanes": ["vector"], "top_k": 5}),
        None,
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}#{}", e["document_id"], e["chunk_id"]))
        .collect()
}

#[test]
fn two_api_nodes_share_one_memory_through_a_leader_kill() {
    let Some(bin) = rqlited() else { return };
    let mut cluster = Cluster::start(&bin, 3);
    let (dir_a, dir_b) = (TempDir::new("cluster-a"), TempDir::new("cluster-b"));
    let token = admin("agent", "team");
    let a = node(dir_a.path(), &cluster);
    let b = node(dir_b.path(), &cluster);

    // Status names the cluster's nodes and its leader.
    let s = status(&b, &token);
    assert_eq!(s["cluster"]["nodes"].as_array().unwrap().len(), 3, "{s}");
    assert!(s["cluster"]["leader"].is_string(), "{s}");

    // Read-your-writes across nodes.
    let (doc, at) = ingest(
        &a,
        &token,
        "first",
        "The lighthouse keeper logs the tide at dawn.",
    )
    .unwrap();
    let r = call(
        &b,
        "/v1/tools/alayasiki_query",
        &token,
        &json!({"query": "When is the tide logged?", "mode": "evidence"}),
        Some(at),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(position(&r) >= at);
    assert_eq!(
        r.json()["evidence"][0]["document_id"],
        json!(doc),
        "{}",
        r.json()
    );
    // A position no node has reached is refused in time, not waited on forever.
    let started = Instant::now();
    let r = call(
        &b,
        "/v1/tools/alayasiki_query",
        &token,
        &json!({"query": "tide"}),
        Some(at + 1_000_000),
    );
    assert_eq!(r.status, 503);
    assert!(r.header("Retry-After").is_some());
    assert!(started.elapsed() < Duration::from_secs(10));

    // Ingests through both nodes; the leader is killed with kill -9 midway.
    let acked = Arc::new(Mutex::new(vec![doc]));
    let stop = Arc::new(AtomicBool::new(false));
    let a = Arc::new(a);
    let b = Arc::new(b);
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(w, api)| {
            let (acked, stop, token) = (acked.clone(), stop.clone(), token.clone());
            std::thread::spawn(move || {
                for i in 0..20 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let text = format!(
                        "Note {i} from writer {w}: shipment {} arrived at dock {} on day {}.",
                        w * 100 + i,
                        i % 7,
                        i
                    );
                    if let Some((id, _)) = ingest(&api, &token, &format!("w{w}-{i}"), &text) {
                        acked.lock().unwrap().push(id);
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    cluster.kill(leader);
    for w in writers {
        w.join().unwrap();
    }
    cluster.restart(leader);
    cluster.wait_for_leader(Duration::from_secs(20));
    let acked: Vec<String> = acked.lock().unwrap().clone();
    assert_eq!(
        acked.len(),
        41,
        "every ingest was acknowledged after retries"
    );
    wait_same_position(&a, &b, &token);
    for dir in [dir_a.path(), dir_b.path()] {
        let ids = doc_ids_of(dir);
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "a document twice");
        for id in &acked {
            assert!(unique.contains(id), "{id} missing from {}", dir.display());
        }
    }
    let same = |a: &Api, b: &Api| {
        for q in ["shipment at dock 3", "tide at dawn", "day 12 arrival"] {
            assert_eq!(
                vector_top_k(a, &token, q),
                vector_top_k(b, &token, q),
                "{q}"
            );
        }
    };
    same(&a, &b);

    // A node that lost its vector files rebuilds them from the cluster.
    let mut b = Arc::try_unwrap(b).ok().unwrap();
    b.terminate();
    assert!(b.wait(Duration::from_secs(20)).is_some());
    std::fs::remove_dir_all(dir_b.path().join("vectors")).unwrap();
    let b = node(dir_b.path(), &cluster);
    same(&a, &b);

    // No quorum: writes refused with 503 and Retry-After, reads go on.
    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    let others: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    cluster.kill(others[0]);
    cluster.kill(others[1]);
    let started = Instant::now();
    let r = call(
        &a,
        "/v1/tools/alayasiki_ingest",
        &token,
        &json!({"content": "never stored", "idempotency_key": "nq"}),
        None,
    );
    assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.header("Retry-After").is_some());
    assert!(started.elapsed() < Duration::from_secs(20));
    let text = String::from_utf8_lossy(&r.body);
    assert!(!text.contains("127.0.0.1"), "a node's address in {text}");
    let q = call(
        &a,
        "/v1/tools/alayasiki_query",
        &token,
        &json!({"query": "tide at dawn", "mode": "evidence"}),
        None,
    );
    assert_eq!(q.status, 200);
    cluster.restart(others[0]);
    cluster.restart(others[1]);
    cluster.wait_for_leader(Duration::from_secs(20));

    // Replicas identical, table for table.
    wait_same_position(&a, &b, &token);
    // Each node's last calls are charged after their answers: once A is
    // stopped, B applies whatever A wrote last.
    std::thread::sleep(Duration::from_millis(500));
    let mut a = Arc::try_unwrap(a).ok().unwrap();
    let mut b = b;
    a.terminate();
    assert!(a.wait(Duration::from_secs(20)).is_some());
    let deadline = Instant::now() + Duration::from_secs(20);
    while user_version(dir_b.path()) < user_version(dir_a.path()) {
        assert!(
            Instant::now() < deadline,
            "B never applied A's last entries"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    b.terminate();
    assert!(b.wait(Duration::from_secs(20)).is_some());
    assert_eq!(user_version(dir_a.path()), user_version(dir_b.path()));
    let digests = |dir: &Path| {
        let conn = rusqlite::Connection::open(dir.join(alayasiki_mcp::store::DB_FILE)).unwrap();
        digests_of_local(&conn).unwrap()
    };
    let (da, db) = (digests(dir_a.path()), digests(dir_b.path()));
    let differ: Vec<&String> = da
        .iter()
        .zip(&db)
        .filter(|(x, y)| x != y)
        .map(|(x, _)| &x.0)
        .collect();
    assert_eq!(da.len(), db.len());
    assert!(differ.is_empty(), "tables differ: {differ:?}");
    assert!(!doc_ids_of(dir_a.path()).iter().any(|d| d.is_empty()));

    // A node's replica is the cluster's: served without the cluster, refused.
    match Api::try_start(dir_a.path(), &[("ALAYASIKI_STORE", "")]) {
        Err((Some(status), stderr)) => {
            assert_eq!(status.code(), Some(1));
            assert!(stderr.contains("replica"), "{stderr}");
        }
        Err((None, stderr)) => panic!("no exit status: {stderr}"),
        Ok(_) => panic!("a cluster node's directory was served on its own"),
    }
}
