//! Two real `alayasiki-api` nodes serving one memory on a real 3-node
//! rqlite cluster (`--store rqlite://…`, through `ALAYASIKI_STORE`):
//!
//! - the first node founds the cluster's memory, the others join it from
//!   a snapshot (one at the start, one once it holds documents), and
//!   `status` shows the cluster's nodes and leader;
//! - a write acknowledged by one node is seen by a read on the other that
//!   names its position (`X-Alayasiki-After`);
//! - ingests through both nodes while the cluster's leader is killed with
//!   `kill -9` and restarted, then while the next leader is paused with
//!   `SIGSTOP` for three election timeouts: every acknowledged ingest is
//!   on every replica exactly once, and the replicas are identical table
//!   for table;
//! - the same script of ingests, forgets and queries answers the same on a
//!   local store and on both nodes (the differential test);
//! - a node whose vector files are damaged, or that has none, rebuilds
//!   them from the cluster and answers vector-only queries exactly as the
//!   other node does; a memory pushed with `alayasiki-mcp cluster push` is
//!   served, vectors and all, by a node that joins it;
//! - a compaction on one node compacts every node's files and the
//!   cluster's vector rows; community summaries are rebuilt by one node;
//! - the log keeps entries for its retention, and a node away for longer
//!   joins again from a snapshot at its next start;
//! - ids a store gave out when entities were numbered in one sequence for
//!   all tenants name the same entities on every node after a push, and a
//!   tenant's new entities are numbered after its own, alike on every node;
//! - without a quorum, writes are refused with 503 and `Retry-After`, and
//!   reads go on;
//! - a node's directory is refused by a server started without its cluster;
//! - a broad recall filter on one node (answered by its admission catalog)
//!   sees each ingest and forget made through the other.

mod cluster_common;
mod http_common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alayasiki_mcp::store::cluster::copy::digests_of_local;
use alayasiki_mcp::store::DB_FILE;
use cluster_common::{rqlited, Cluster, ELECTION_TIMEOUT};
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

/// A `tools/call` of `tool` over Streamable HTTP (the stateless
/// revision), optionally naming a position to see.
fn mcp_call(
    api: &Api,
    token: &str,
    id: u64,
    tool: &str,
    arguments: Value,
    after: Option<i64>,
) -> Reply {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta}});
    let mut headers: Vec<(String, String)> = [
        ("Authorization", format!("Bearer {token}")),
        ("Content-Type", "application/json".into()),
        ("Accept", "application/json, text/event-stream".into()),
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", tool.into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Some(p) = after {
        headers.push(("X-Alayasiki-After".into(), p.to_string()));
    }
    request(
        api.addr,
        "POST",
        "/mcp",
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
                // A local server's answers carry no position.
                let at = r.header("X-Alayasiki-Position").map_or(0, |_| position(&r));
                return Some((r.json()["document_id"].as_str().unwrap().to_string(), at));
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

/// Ingests per node and fault phase.
const WRITES_PER_NODE: usize = 15;

/// Ingests [`WRITES_PER_NODE`] notes through each of `a` and `b` at once,
/// running `fault` once they are under way; the acknowledged ids.
fn ingest_through(
    a: &Arc<Api>,
    b: &Arc<Api>,
    token: &str,
    tag: &str,
    fault: impl FnOnce(),
) -> Vec<String> {
    let acked = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(w, api)| {
            let (acked, token, tag) = (acked.clone(), token.to_string(), tag.to_string());
            std::thread::spawn(move || {
                for i in 0..WRITES_PER_NODE {
                    let text = format!(
                        "Note {i} ({tag}) from writer {w}: shipment {} arrived at dock {} on day {}.",
                        w * 100 + i,
                        i % 7,
                        i
                    );
                    let key = format!("{tag}-w{w}-{i}");
                    if let Some((id, _)) = ingest(&api, &token, &key, &text) {
                        acked.lock().unwrap().push(id);
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    fault();
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    acked
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

/// The nodes whose log entries rebuilt community summaries (a batch is
/// named `{node}-{start}-{n}`).
fn community_builders(cluster: &Cluster) -> HashSet<String> {
    use alayasiki_mcp::store::cluster::{wire::Statement, ReadLevel};
    let rows = cluster
        .client(Duration::from_secs(10))
        .query(
            &[Statement::plain(
                "SELECT batch FROM cluster_log WHERE statements LIKE '%communities_version%'",
            )],
            ReadLevel::Leader,
        )
        .unwrap();
    rows[0]
        .rows
        .iter()
        .map(|r| {
            let batch = r[0].as_str().unwrap();
            batch.rsplitn(3, '-').nth(2).unwrap().to_string()
        })
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

    // The same through MCP: a Streamable HTTP reply carries the position,
    // the other node's MCP POST waits for it, and an SSE POST naming a
    // position nobody has reached is refused before it is accepted.
    let r = mcp_call(
        &a,
        &token,
        1,
        "alayasiki_ingest",
        json!({"content": "The ferry bell rings at noon.", "idempotency_key": "mcp-1",
               "wait": true}),
        None,
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let at_mcp = position(&r);
    assert!(at_mcp > at);
    let r = mcp_call(
        &b,
        &token,
        2,
        "alayasiki_query",
        json!({"query": "When does the ferry bell ring?", "mode": "evidence"}),
        Some(at_mcp),
    );
    assert_eq!(r.status, 200);
    assert!(position(&r) >= at_mcp);
    assert!(String::from_utf8_lossy(&r.body).contains("The ferry bell rings at noon."));
    let sse = http_common::Sse::open(b.addr, &token);
    let started = Instant::now();
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let refused = request(
        b.addr,
        "POST",
        &sse.endpoint,
        &[
            ("Authorization".into(), format!("Bearer {token}")),
            ("Content-Type".into(), "application/json".into()),
            ("X-Alayasiki-After".into(), (at_mcp + 1_000_000).to_string()),
        ],
        Some(list.to_string().as_bytes()),
    );
    assert_eq!(
        refused.status,
        503,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert_eq!(refused.code(), "behind");
    assert!(started.elapsed() < Duration::from_secs(10));
    drop(sse);
    // At most MAX_POSITION_WAITS (8) requests wait for a position at once:
    // the ninth is answered `behind` at once, and the eight after their
    // wait (CLUSTER_POSITION_WAIT, 5 s).
    const MAX_POSITION_WAITS: usize = 8;
    let unreached = vec![
        ("Authorization".to_string(), format!("Bearer {token}")),
        (
            "X-Alayasiki-After".to_string(),
            (at_mcp + 1_000_000).to_string(),
        ),
    ];
    std::thread::scope(|s| {
        let started = Instant::now();
        let waiting: Vec<_> = (0..MAX_POSITION_WAITS)
            .map(|_| s.spawn(|| request(b.addr, "GET", "/v1/status", &unreached, None)))
            .collect();
        std::thread::sleep(Duration::from_secs(1));
        let ninth = request(b.addr, "GET", "/v1/status", &unreached, None);
        assert_eq!((ninth.status, ninth.code()), (503, "behind".to_string()));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the ninth waited: {:?}",
            started.elapsed()
        );
        for w in waiting {
            let r = w.join().unwrap();
            assert_eq!((r.status, r.code()), (503, "behind".to_string()));
        }
        assert!(started.elapsed() >= Duration::from_secs(5));
    });

    // Ingests through both nodes; the leader is killed with kill -9 midway,
    // then (once it is back) paused with SIGSTOP for three election
    // timeouts.
    let a = Arc::new(a);
    let b = Arc::new(b);
    let mut acked = vec![doc];
    let killed = std::cell::Cell::new(None);
    acked.extend(ingest_through(&a, &b, &token, "kill", || {
        let leader = cluster.wait_for_leader(Duration::from_secs(10));
        cluster.kill(leader);
        killed.set(Some(leader));
    }));
    cluster.restart(killed.get().unwrap());
    cluster.wait_for_leader(Duration::from_secs(20));
    acked.extend(ingest_through(&a, &b, &token, "pause", || {
        let leader = cluster.wait_for_leader(Duration::from_secs(10));
        cluster.pause(leader);
        std::thread::sleep(ELECTION_TIMEOUT * 3);
        cluster.resume(leader);
    }));
    cluster.wait_for_leader(Duration::from_secs(20));
    assert_eq!(
        acked.len(),
        1 + 2 * 2 * WRITES_PER_NODE,
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

    // A node whose vector files are damaged rebuilds them from the
    // cluster (one that has none, node C below, builds them the same way).
    let mut b = Arc::try_unwrap(b).ok().unwrap();
    b.terminate();
    assert!(b.wait(Duration::from_secs(20)).is_some());
    // Damaged: the quantized file cut inside its header.
    for file in std::fs::read_dir(dir_b.path().join("vectors")).unwrap() {
        let path = file.unwrap().path();
        if path.extension().is_some_and(|e| e == "q8") {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(64).unwrap();
        }
    }
    let b = node(dir_b.path(), &cluster);
    // Built again whole: a header and a row per chunk.
    let rebuilt = |dir: &Path| {
        std::fs::read_dir(dir.join("vectors")).is_ok_and(|files| {
            files.flatten().any(|f| {
                f.path().extension().is_some_and(|e| e == "q8")
                    && f.metadata().unwrap().len() > 4096
            })
        })
    };
    assert!(rebuilt(dir_b.path()), "B did not rebuild its vector files");
    same(&a, &b);

    // A third node joins the memory as it now is, from a snapshot.
    let dir_c = TempDir::new("cluster-c");
    let c = node(dir_c.path(), &cluster);
    let at = wait_same_position(&a, &c, &token);
    assert!(at > 0);
    let on_c: HashSet<String> = doc_ids_of(dir_c.path()).into_iter().collect();
    assert!(acked.iter().all(|id| on_c.contains(id)));
    same(&a, &c);
    let cluster_tables: i64 = rusqlite::Connection::open_with_flags(
        dir_c.path().join(alayasiki_mcp::store::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap()
    .query_row(
        "SELECT count(*) FROM sqlite_master WHERE name LIKE 'cluster\\_%' ESCAPE '\\'",
        [],
        |r| r.get(0),
    )
    .unwrap();
    assert_eq!(
        cluster_tables, 0,
        "the snapshot's cluster tables stayed on C"
    );
    assert!(
        rebuilt(dir_c.path()),
        "C did not build its vector files from the cluster"
    );
    drop(c);

    // Community summaries followed the graph through both fault phases,
    // rebuilt by one node: the other left the chore to it instead of
    // building and writing the same summaries again.
    let builders = community_builders(&cluster);
    assert_eq!(builders.len(), 1, "{builders:?}");

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

/// What a query answered, without what differs between two memories that
/// stored the same documents (their random ids): each evidence's source,
/// text and score, and the answer.
fn answers(api: &Api, token: &str, q: &str, after: i64) -> (Vec<(Value, Value, f64)>, Value) {
    let r = call(
        api,
        "/v1/tools/alayasiki_query",
        token,
        &json!({"query": q, "top_k": 8}),
        Some(after),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    let evidence = v["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"].clone(),
                e["text"].clone(),
                e["score"].as_f64().unwrap(),
            )
        })
        .collect();
    let answer = &v["answer"];
    let spans: Vec<Value> = answer["citations"]
        .as_array()
        .map(|c| c.iter().map(|c| c["span"].clone()).collect())
        .unwrap_or_default();
    (evidence, json!([answer["text"], spans]))
}

#[test]
fn the_same_script_answers_the_same_locally_and_on_the_cluster() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_l, dir_a, dir_b) = (
        TempDir::new("diff-local"),
        TempDir::new("diff-a"),
        TempDir::new("diff-b"),
    );
    let token = admin("agent", "team");
    let local = Api::start(dir_l.path(), &[("ALAYASIKI_STORE", "")]);
    let a = node(dir_a.path(), &cluster);
    let b = node(dir_b.path(), &cluster);
    let people = ["Ada Okafor", "Bruno Salas", "Chen Wei", "Dana Novak"];
    let mut at = 0;
    for i in 0..12 {
        let (p, q) = (people[i % 4], people[(i + 1) % 4]);
        let body = json!({
            "content": format!(
                "{p} met {q} at the Kestrel Ridge station on day {i}. {p} works with {q} on \
                 the harbour ferry schedule, and {q} leads survey number {}.", i % 3),
            "source": format!("notes/{}.md", i % 4),
            "wait": true,
        });
        let on_local = call(&local, "/v1/tools/alayasiki_ingest", &token, &body, None);
        assert_eq!(on_local.status, 200);
        let node = if i % 2 == 0 { &a } else { &b };
        let on_node = call(node, "/v1/tools/alayasiki_ingest", &token, &body, None);
        assert_eq!(
            on_node.status,
            200,
            "{}",
            String::from_utf8_lossy(&on_node.body)
        );
        assert_eq!(on_node.json()["state"], "ready");
        at = at.max(position(&on_node));
    }
    let forget = json!({"source": "notes/2.md"});
    let forgot_local = call(&local, "/v1/tools/alayasiki_forget", &token, &forget, None);
    let forgot_node = call(&b, "/v1/tools/alayasiki_forget", &token, &forget, None);
    assert_eq!(forgot_local.status, 200);
    assert_eq!(forgot_node.status, 200);
    let counts = |r: &Reply| -> Vec<(Value, Value)> {
        r.json()["forgotten"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["chunks"].clone(), f["vectors"].clone()))
            .collect()
    };
    assert_eq!(counts(&forgot_local), counts(&forgot_node));
    assert_eq!(counts(&forgot_local).len(), 3);
    at = at.max(position(&forgot_node));

    // Compaction while serving, on the local server and on A (B forgot):
    // admins only; the forgotten rows go on every node, and the cluster's
    // vector rows follow.
    let ingestor = http_common::sign(http_common::claims("agent", "team", &["ingestor"], ""));
    assert_eq!(
        call(&a, "/v1/compact", &ingestor, &json!({}), None).status,
        403
    );
    let vector_queries = ["harbour ferry schedule", "survey number 1"];
    // By text: the two memories' documents have ids of their own.
    let vector_texts = |api: &Api, q: &str| -> Vec<Value> {
        let body = json!({"query": q, "mode": "evidence", "lanes": ["vector"], "top_k": 5});
        let r = call(api, "/v1/tools/alayasiki_query", &token, &body, None);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let texts = r.json()["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["text"].clone())
            .collect();
        texts
    };
    let before: Vec<Vec<Value>> = vector_queries
        .iter()
        .map(|q| vector_texts(&local, q))
        .collect();
    let on_a_before: Vec<Vec<String>> = vector_queries
        .iter()
        .map(|q| vector_top_k(&a, &token, q))
        .collect();
    assert_eq!(
        before,
        vector_queries
            .iter()
            .map(|q| vector_texts(&a, q))
            .collect::<Vec<_>>()
    );
    let compacted_local = call(&local, "/v1/compact", &token, &json!({}), None);
    let compacted_node = call(&a, "/v1/compact", &token, &json!({}), Some(at));
    assert_eq!(compacted_local.status, 200);
    assert_eq!(
        compacted_node.status,
        200,
        "{}",
        String::from_utf8_lossy(&compacted_node.body)
    );
    let rows = |r: &Reply| {
        (
            r.json()["vector_rows_before"].clone(),
            r.json()["vector_rows_after"].clone(),
        )
    };
    assert_eq!(rows(&compacted_local), rows(&compacted_node));
    let (was, now) = rows(&compacted_node);
    assert_eq!(
        was.as_u64().unwrap() - now.as_u64().unwrap(),
        3,
        "the forgotten rows"
    );
    at = at.max(position(&compacted_node));
    wait_same_position(&a, &b, &token);
    for dir in [dir_a.path(), dir_b.path()] {
        let (rows, generation): (i64, i64) = rusqlite::Connection::open(dir.join(DB_FILE))
            .unwrap()
            .query_row(
                "SELECT vector_rows, vector_generation FROM tenants",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((rows, generation), (now.as_i64().unwrap(), 1), "{dir:?}");
        let files: Vec<String> = std::fs::read_dir(dir.join("vectors"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            files.iter().all(|f| f.contains(".g1.")),
            "{dir:?}: {files:?}"
        );
    }
    let in_cluster = cluster
        .client(Duration::from_secs(10))
        .query_text(
            "SELECT count(*) || '/' || max(slot) FROM cluster_vectors",
            vec![],
        )
        .unwrap();
    assert_eq!(
        in_cluster.as_deref(),
        Some(format!("{}/{}", now, now.as_i64().unwrap() - 1).as_str()),
        "the cluster's vector rows renumbered"
    );
    // The chunks and their full-text pages, merged alike (other tables
    // take the usage of the calls that follow).
    let indexed = |dir: &Path| -> Vec<(String, u64, String)> {
        let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
        digests_of_local(&conn)
            .unwrap()
            .into_iter()
            .filter(|(t, _, _)| t == "chunks" || t.starts_with("fts_"))
            .collect()
    };
    let on_a = indexed(dir_a.path());
    assert!(on_a.len() > 2, "{on_a:?}");
    assert_eq!(on_a, indexed(dir_b.path()));
    // A node that joins now builds its files from the renumbered rows.
    let dir_c = TempDir::new("diff-c");
    let c = node(dir_c.path(), &cluster);
    for ((q, texts), ids) in vector_queries.iter().zip(&before).zip(&on_a_before) {
        for node in [&local, &a, &b, &c] {
            assert_eq!(&vector_texts(node, q), texts, "{q}");
        }
        for node in [&a, &b, &c] {
            assert_eq!(&vector_top_k(node, &token, q), ids, "{q}");
        }
    }
    for q in [
        "who leads survey number 2",
        "where did Chen Wei meet Dana Novak",
        "harbour ferry schedule",
        "what happened on day 6",
    ] {
        let expected = answers(&local, &token, q, 0);
        assert!(!expected.0.is_empty(), "{q}");
        for (n, node) in [&a, &b, &c].into_iter().enumerate() {
            let got = answers(node, &token, q, at);
            assert_eq!(got.1, expected.1, "{q}: the answer");
            assert_eq!(got.0.len(), expected.0.len(), "{q}");
            for (g, e) in got.0.iter().zip(&expected.0) {
                assert_eq!((&g.0, &g.1), (&e.0, &e.1), "{q}");
                // Recency is part of the score, and the two memories
                // stored each note a few milliseconds apart. C joined from
                // a snapshot, whose full-text pages rqlite's own SQLite
                // wrote (README, "Ranking on a node that joined from a
                // snapshot"): the same chunks, BM25 a little apart.
                let tolerance = if n == 2 { 1e-2 } else { 1e-6 };
                assert!(
                    (g.2 - e.2).abs() <= tolerance * e.2.abs().max(1.0),
                    "{q} on node {n}: {g:?} {e:?}"
                );
            }
        }
    }
}

/// A document whose indexing is one write of about 15,000 statements:
/// more than the writer puts into one entry beside others, and more than
/// a cluster transaction was once allowed. Admitted on A, indexed by A
/// alone (B leaves A's fresh job to A), found on B.
#[test]
fn a_large_document_is_indexed_once_and_found_on_every_node() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_a, dir_b) = (TempDir::new("large-a"), TempDir::new("large-b"));
    let token = admin("agent", "team");
    let a = node(dir_a.path(), &cluster);
    let b = node(dir_b.path(), &cluster);
    let words = [
        "amber", "basalt", "cinder", "delta", "ember", "fjord", "granite", "heath",
    ];
    let mut long = String::new();
    for i in 0..9_000usize {
        let w = |k: usize| words[(i * 7 + k * 3 + i / 8) % words.len()];
        long.push_str(&format!(
            "Line {i} of the field log: {} {} {} by the {} cairn. ",
            w(0),
            w(1),
            w(2),
            w(3)
        ));
    }
    long.push_str("The lighthouse keeper Ines Varga logged a green flash at dusk.");
    assert!(long.len() > 500_000, "{}", long.len());
    let body = json!({"content": long, "source": "logs/field.txt", "wait": true});
    let on_a = call(&a, "/v1/tools/alayasiki_ingest", &token, &body, None);
    assert_eq!(on_a.status, 200, "{}", String::from_utf8_lossy(&on_a.body));
    assert_eq!(on_a.json()["state"], "ready", "{}", on_a.json());
    let chunks = on_a.json()["chunks"].as_u64().unwrap();
    assert!(chunks > 400, "{chunks} chunks");
    let q = json!({"query": "who logged a green flash at dusk", "mode": "evidence"});
    let found = call(
        &b,
        "/v1/tools/alayasiki_query",
        &token,
        &q,
        Some(position(&on_a)),
    );
    assert_eq!(found.status, 200);
    let top = &found.json()["evidence"][0];
    assert_eq!(top["source"], "logs/field.txt", "{}", found.json());
    assert!(top["text"].as_str().unwrap().contains("Ines Varga"));
    // Indexed, not failed: B left A's fresh job to A, so the two never
    // raced each other's commits for it (which could spend its attempts).
    let status = call(&b, "/v1/tools/alayasiki_status", &token, &json!({}), None).json();
    assert_eq!(status["jobs"]["pending"], 0, "{status}");
    assert_eq!(status["jobs"]["failed"], 0, "{status}");
    let rows: i64 = rusqlite::Connection::open(dir_b.path().join(alayasiki_mcp::store::DB_FILE))
        .unwrap()
        .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows as u64, chunks, "B holds every chunk once");
}

#[test]
fn a_memory_pushed_into_a_cluster_is_served_by_nodes_that_join_it() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_l, dir_n) = (TempDir::new("pushed-local"), TempDir::new("pushed-node"));
    let token = admin("agent", "team");
    let mut local = Api::start(dir_l.path(), &[("ALAYASIKI_STORE", "")]);
    for i in 0..8 {
        let text = format!(
            "Ledger {i}: the river barge carried {} crates of pears to market {}.",
            i * 3,
            i % 3
        );
        ingest(&local, &token, &format!("p{i}"), &text).unwrap();
    }
    let queries = ["crates of pears", "river barge to market 2"];
    let before: Vec<Vec<String>> = queries
        .iter()
        .map(|q| vector_top_k(&local, &token, q))
        .collect();
    local.terminate();
    assert!(local.wait(Duration::from_secs(20)).is_some());

    let pushed = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .args(["cluster", "push", "--data-dir"])
        .arg(dir_l.path())
        .env("ALAYASIKI_CLUSTER", cluster.address())
        .env("ALAYASIKI_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );

    // A node with an empty directory joins it, vectors and all.
    let n = node(dir_n.path(), &cluster);
    let mut ids = doc_ids_of(dir_n.path());
    let mut original = doc_ids_of(dir_l.path());
    ids.sort();
    original.sort();
    assert_eq!(ids, original);
    let after: Vec<Vec<String>> = queries
        .iter()
        .map(|q| vector_top_k(&n, &token, q))
        .collect();
    assert_eq!(after, before);
    // The pushed directory is still a memory of its own, served alone.
    drop(n);
    let again = Api::start(dir_l.path(), &[("ALAYASIKI_STORE", "")]);
    assert_eq!(vector_top_k(&again, &token, queries[0]), before[0]);
}

/// The entities of the caller's tenant as `node` lists them: name → id.
fn entity_ids(api: &Api, token: &str) -> std::collections::BTreeMap<String, String> {
    let headers = vec![("Authorization".to_string(), format!("Bearer {token}"))];
    let r = request(api.addr, "GET", "/v1/entities?limit=100", &headers, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["entities"]
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

/// A store written when entity ids came from one sequence shared by all
/// tenants (`fixtures/legacy_ids`), pushed into a cluster: on both nodes
/// its ids name the same entities, and an entity one node adds is
/// numbered after its tenant's own highest and named alike on the other.
#[test]
fn ids_of_a_pushed_store_name_the_same_entities_on_every_node() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_l, dir_a, dir_b) = (
        TempDir::new("ids-local"),
        TempDir::new("ids-node-a"),
        TempDir::new("ids-node-b"),
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/legacy_ids");
    std::fs::copy(
        fixture.join("data").join(DB_FILE),
        dir_l.path().join(DB_FILE),
    )
    .unwrap();
    let given: std::collections::BTreeMap<String, String> =
        serde_json::from_slice(&std::fs::read(fixture.join("ids.json")).unwrap()).unwrap();
    let acme = admin("alice", "acme");
    // Its vector files rebuilt (the fixture leaves them out), which opens
    // it once with this binary, as `cluster push` asks.
    let reindexed = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .args(["reindex", "--data-dir"])
        .arg(dir_l.path())
        .env("ALAYASIKI_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        reindexed.status.success(),
        "{}",
        String::from_utf8_lossy(&reindexed.stderr)
    );
    let local = Api::start(dir_l.path(), &[("ALAYASIKI_STORE", "")]);
    assert_eq!(entity_ids(&local, &acme), given);
    local.terminate();
    drop(local);
    let pushed = std::process::Command::new(env!("CARGO_BIN_EXE_alayasiki-mcp"))
        .args(["cluster", "push", "--data-dir"])
        .arg(dir_l.path())
        .env("ALAYASIKI_CLUSTER", cluster.address())
        .env("ALAYASIKI_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );

    let a = node(dir_a.path(), &cluster);
    let b = node(dir_b.path(), &cluster);
    assert_eq!(entity_ids(&a, &acme), given);
    assert_eq!(entity_ids(&b, &acme), given);
    ingest(&a, &acme, "lisbon", "Lisbon is the capital of Portugal.").unwrap();
    wait_same_position(&a, &b, &acme);
    let on_a = entity_ids(&a, &acme);
    assert_eq!(entity_ids(&b, &acme), on_a);
    let highest = given
        .values()
        .map(|id| id[4..].parse::<u64>().unwrap())
        .max()
        .unwrap();
    let new: Vec<&String> = on_a
        .iter()
        .filter(|(name, _)| !given.contains_key(*name))
        .map(|(_, id)| id)
        .collect();
    assert!(!new.is_empty(), "{on_a:?}");
    assert!(new.contains(&&format!("ent_{}", highest + 1)), "{on_a:?}");
}

/// A founder that stopped while it copied its memory in (the memory
/// claimed in its name, a table half copied, never ready) clears what it
/// left and founds the memory again at its next start; a node that joins
/// after has every document. Without the founding file the same directory
/// would be refused, and no other node could ever join.
#[test]
fn a_founder_that_stopped_while_copying_in_founds_again_at_its_next_start() {
    use alayasiki_mcp::store::cluster::node::FOUNDING_FILE;
    use alayasiki_mcp::store::cluster::replica::create_cluster_tables;
    use alayasiki_mcp::store::cluster::wire::Statement;
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_a, dir_b) = (TempDir::new("refound-a"), TempDir::new("refound-b"));
    let token = admin("agent", "team");
    let mut local = Api::start(dir_a.path(), &[("ALAYASIKI_STORE", "")]);
    let mut docs = Vec::new();
    for i in 0..3 {
        let text = format!(
            "Orchard row {i} was pruned by the cooperative in week {}.",
            i + 4
        );
        docs.push(ingest(&local, &token, &format!("o{i}"), &text).unwrap().0);
    }
    local.terminate();
    assert!(local.wait(Duration::from_secs(20)).is_some());

    // What the founder had done when it stopped.
    let client = cluster.client(Duration::from_secs(10));
    create_cluster_tables(&client).unwrap();
    client
        .commit(
            &[
                Statement::plain(
                    "INSERT INTO cluster_meta(key, value) VALUES ('id', 'mem_halfway')",
                ),
                Statement::plain("CREATE TABLE tenants(id INTEGER PRIMARY KEY, name TEXT)"),
                Statement::plain("INSERT INTO tenants VALUES (1, 'team')"),
                Statement::plain("INSERT INTO cluster_vectors VALUES (1, 0, x'00000000')"),
            ],
            Instant::now() + Duration::from_secs(10),
        )
        .unwrap();
    std::fs::write(dir_a.path().join(FOUNDING_FILE), "mem_halfway\n").unwrap();

    let a = node(dir_a.path(), &cluster);
    assert!(!dir_a.path().join(FOUNDING_FILE).exists());
    let mut on_a = doc_ids_of(dir_a.path());
    on_a.sort();
    docs.sort();
    assert_eq!(on_a, docs);
    let b = node(dir_b.path(), &cluster);
    wait_same_position(&a, &b, &token);
    let mut on_b = doc_ids_of(dir_b.path());
    on_b.sort();
    assert_eq!(on_b, docs, "B joined the memory A founded again");
    let q = json!({"query": "which orchard row was pruned in week 5", "mode": "evidence"});
    let r = call(&b, "/v1/tools/alayasiki_query", &token, &q, None);
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("Orchard row 1"));
}

/// The log keeps entries for its retention (2 s here): older ones are
/// deleted, the text of a forgotten document with them, and a node that
/// was away for longer joins again from a snapshot when it restarts,
/// with every document the others have.
#[test]
fn the_log_keeps_entries_for_its_retention_and_a_node_away_longer_joins_again() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_a, dir_b) = (TempDir::new("pruned-a"), TempDir::new("pruned-b"));
    let token = admin("agent", "team");
    let env = |address: &str| {
        vec![
            ("ALAYASIKI_STORE".to_string(), address.to_string()),
            (
                "ALAYASIKI_CLUSTER_LOG_RETENTION_SECS".to_string(),
                "2".to_string(),
            ),
            ("ALAYASIKI_LOG".to_string(), "warn".to_string()),
        ]
    };
    let start = |dir: &Path| {
        let vars = env(&cluster.address());
        let refs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Api::start(dir, &refs)
    };
    let a = start(dir_a.path());
    let mut b = start(dir_b.path());
    let (secret, _) = ingest(
        &a,
        &token,
        "secret",
        "The vault code word is Zanzibarite, known to the quartermaster only.",
    )
    .unwrap();
    for i in 0..3 {
        ingest(
            &a,
            &token,
            &format!("early{i}"),
            &format!("Early note {i} about the pier."),
        )
        .unwrap();
    }
    wait_same_position(&a, &b, &token);
    let away_at = user_version(dir_b.path());
    // B is cut off (frozen) while the log moves past it.
    b.signal("STOP");

    let forgot = call(
        &a,
        "/v1/tools/alayasiki_forget",
        &token,
        &json!({"document_id": secret}),
        None,
    );
    assert_eq!(
        forgot.status,
        200,
        "{}",
        String::from_utf8_lossy(&forgot.body)
    );
    let client = cluster.client(Duration::from_secs(10));
    let int = |sql: &str| -> i64 {
        use alayasiki_mcp::store::cluster::{wire::Statement, ReadLevel};
        client
            .query(&[Statement::plain(sql)], ReadLevel::Leader)
            .unwrap()[0]
            .rows[0][0]
            .as_i64()
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut later = 0;
    loop {
        // Writes keep coming, so the entries that stored the secret grow old.
        ingest(
            &a,
            &token,
            &format!("later{later}"),
            &format!("Later note {later} on the tide."),
        )
        .unwrap();
        later += 1;
        let holding = int("SELECT count(*) FROM cluster_log WHERE statements LIKE '%Zanzibarite%'");
        if holding == 0 && int("SELECT MIN(seq) FROM cluster_log") > away_at + 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the log was never pruned");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        int("SELECT count(*) FROM cluster_log") >= 1,
        "the newest entry stays"
    );
    // The operations of pruned entries go with them.
    assert!(int("SELECT count(*) FROM cluster_ops") >= 1);
    let pruned_ops =
        "SELECT count(*) FROM cluster_ops WHERE seq < (SELECT MIN(seq) FROM cluster_log)";
    let deadline = Instant::now() + Duration::from_secs(10);
    while int(pruned_ops) > 0 {
        assert!(Instant::now() < deadline, "pruned entries' operations stay");
        std::thread::sleep(Duration::from_millis(300));
    }
    // A pruned number cannot be taken again (by a node that fell behind).
    let pruned = alayasiki_mcp::store::cluster::wire::Statement::new(
        "INSERT INTO cluster_log(seq, batch, statements) VALUES (?, 'late', '[]')",
        vec![alayasiki_mcp::store::cluster::wire::Param::Int(away_at + 1)],
    );
    assert!(client.transaction(&[pruned]).is_err());

    // Back, B finds the entries it needs gone: it says so, leaves a load
    // balancer's pool, and goes on serving what it had.
    b.signal("CONT");
    let health = |api: &Api| request(api.addr, "GET", "/health", &[], None);
    let deadline = Instant::now() + Duration::from_secs(10);
    while health(&b).status != 503 {
        assert!(Instant::now() < deadline, "B never said it is stranded");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(health(&b).json()["status"], "stranded");
    assert_eq!(health(&a).status, 200);
    let stranded = status(&b, &token)["cluster"]["stranded"].clone();
    assert!(
        stranded.as_str().is_some_and(|s| s.contains("restarted")),
        "{stranded}"
    );
    assert!(status(&a, &token)["cluster"].get("stranded").is_none());
    let early = call(
        &b,
        "/v1/tools/alayasiki_query",
        &token,
        &json!({"query": "early note about the pier", "mode": "evidence"}),
        None,
    );
    assert_eq!(early.status, 200);
    assert!(String::from_utf8_lossy(&early.body).contains("pier"));
    b.terminate();
    assert!(b.wait(Duration::from_secs(20)).is_some());

    // B was away for longer than the log keeps entries: it joins again.
    let b = start(dir_b.path());
    let at = wait_same_position(&a, &b, &token);
    assert!(at > away_at);
    let mut on_a = doc_ids_of(dir_a.path());
    let mut on_b = doc_ids_of(dir_b.path());
    on_a.sort();
    on_b.sort();
    assert_eq!(on_b, on_a);
    assert!(!on_b.contains(&secret));
    let db = std::fs::read(dir_b.path().join(alayasiki_mcp::store::DB_FILE)).unwrap();
    assert!(
        !db.windows(11).any(|w| w == b"Zanzibarite"),
        "B's new replica holds the forgotten text"
    );
    let q = json!({"query": "what was the later note about", "mode": "evidence"});
    let r = call(&b, "/v1/tools/alayasiki_query", &token, &q, None);
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("Later note"));

    // A replica stopped between discarding its database and receiving the
    // snapshot joins again the same way.
    let mut b = b;
    b.terminate();
    assert!(b.wait(Duration::from_secs(20)).is_some());
    std::fs::remove_file(dir_b.path().join(alayasiki_mcp::store::DB_FILE)).unwrap();
    let b = start(dir_b.path());
    wait_same_position(&a, &b, &token);
    let mut again = doc_ids_of(dir_b.path());
    again.sort();
    assert_eq!(again, on_a);
}

/// The sources a broad filter (a media type no index narrows) admits on
/// `api`, once it has applied position `at`.
fn markdown_sources(api: &Api, token: &str, at: i64) -> Vec<String> {
    let r = call(
        api,
        "/v1/tools/alayasiki_query",
        token,
        &json!({"query": "lighthouse tide", "mode": "evidence", "top_k": 20,
                "filter": {"media_type": "text/markdown"}}),
        Some(at),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let mut got: Vec<String> = r.json()["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    got
}

#[test]
fn a_broad_filter_on_one_node_sees_each_write_made_through_the_other() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let (dir_a, dir_b) = (TempDir::new("filter-a"), TempDir::new("filter-b"));
    let token = admin("agent", "team");
    let a = node(dir_a.path(), &cluster);
    let b = node(dir_b.path(), &cluster);
    let write = |i: usize, media_type: &str| {
        let body = json!({"Text": {"content": format!("The lighthouse keeper {i} logs the tide."),
                                   "media_type": media_type, "source": format!("log/{i}")},
                          "wait": true});
        let r = call(&a, "/v1/tools/alayasiki_ingest", &token, &body, None);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        position(&r)
    };
    write(0, "text/plain");
    let at = write(1, "text/markdown");
    assert_eq!(markdown_sources(&b, &token, at), ["log/1"]);
    // The catalog b built for that query follows what a writes next.
    let at = write(2, "text/markdown");
    write(3, "text/plain");
    assert_eq!(markdown_sources(&b, &token, at), ["log/1", "log/2"]);
    let r = call(
        &a,
        "/v1/tools/alayasiki_forget",
        &token,
        &json!({"source": "log/1"}),
        None,
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(markdown_sources(&b, &token, position(&r)), ["log/2"]);
    assert_eq!(markdown_sources(&a, &token, position(&r)), ["log/2"]);
}
