//! A real `alayasiki-api` node on a real 3-node rqlite cluster while the
//! cluster fails, against the time bounds README and API.md promise:
//!
//! - without a quorum (both followers killed), a write is refused with 503
//!   within `CLUSTER_WRITE_WAIT` (plus one request), also right after
//!   reads whose usage rows would have held the writer, and says
//!   `Retry-After: 5`; the loss is one warning in the log, the recovery
//!   one note, nothing at error level; the reads' usage rows are written
//!   once the cluster has a leader again;
//! - with both followers frozen (`SIGSTOP`: their sockets accept and never
//!   answer, like a partition that drops packets), writes are answered
//!   503 within `CLUSTER_WRITE_DEADLINE`, one after another;
//! - a node killed with `kill -9` while it indexes documents it
//!   acknowledged takes them up as soon as it is started again, well
//!   before `JOB_ADOPT_GRACE` (30 s) would let another node do it.
//!
//! `CLUSTER_OUTAGE_LOG=debug` shows the node's log on failure.

mod cluster_common;
mod http_common;

use std::path::Path;
use std::time::{Duration, Instant};

use cluster_common::{rqlited, Cluster};
use http_common::{admin, request, Api, Reply, TempDir};
use serde_json::{json, Value};

/// `CLUSTER_WRITE_WAIT`: how long a write waits for a leader.
const CLUSTER_WRITE_WAIT: Duration = Duration::from_secs(5);
/// `CLUSTER_WRITE_DEADLINE`: how long a write waits for its answer.
const CLUSTER_WRITE_DEADLINE: Duration = Duration::from_secs(30);
/// `JOB_ADOPT_GRACE`: how long other nodes leave a node's jobs to it.
const JOB_ADOPT_GRACE: Duration = Duration::from_secs(30);
/// What a refused write may take past `CLUSTER_WRITE_WAIT`: its last
/// request to the cluster, and a loaded two-core machine.
const SLACK: Duration = Duration::from_millis(2500);

fn node(dir: &Path, cluster: &Cluster) -> Api {
    Api::start(
        dir,
        &[
            ("ALAYASIKI_STORE", &cluster.address()),
            (
                "ALAYASIKI_LOG",
                &std::env::var("CLUSTER_OUTAGE_LOG").unwrap_or("info".into()),
            ),
        ],
    )
}

fn call(api: &Api, tool: &str, token: &str, body: &Value) -> Reply {
    request(
        api.addr,
        "POST",
        &format!("/v1/tools/{tool}"),
        &[
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Content-Type".to_string(), "application/json".to_string()),
        ],
        Some(body.to_string().as_bytes()),
    )
}

fn ingest(api: &Api, token: &str, key: &str, text: &str) -> Reply {
    call(
        api,
        "alayasiki_ingest",
        token,
        &json!({"content": text, "idempotency_key": key}),
    )
}

/// A write's status and how long it took to be answered.
fn timed_ingest(api: &Api, token: &str, key: &str) -> (Reply, Duration) {
    let started = Instant::now();
    let r = ingest(api, token, key, &format!("Never stored: {key}."));
    (r, started.elapsed())
}

fn status(api: &Api, token: &str) -> Value {
    call(api, "alayasiki_status", token, &json!({})).json()
}

fn log_lines(api: &Api, level: &str) -> Vec<String> {
    let marker = format!(" {level:5} ");
    api.stderr
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(&marker))
        .cloned()
        .collect()
}

#[test]
fn without_a_quorum_writes_are_refused_within_the_leader_wait_and_reads_stay_charged() {
    let Some(bin) = rqlited() else { return };
    let mut cluster = Cluster::start(&bin, 3);
    let dir = TempDir::new("outage-quorum");
    let token = admin("agent", "team");
    let reader = admin("reader", "team");
    let a = node(dir.path(), &cluster);
    let r = ingest(&a, &token, "before", "The lighthouse keeper logs the tide.");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    cluster.kill(followers[0]);
    cluster.kill(followers[1]);
    // An idle node finds out by itself (it follows the log).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log_lines(&a, "WARN")
        .iter()
        .any(|l| l.contains("no leader"))
    {
        assert!(
            Instant::now() < deadline,
            "the loss of quorum went unnoticed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Reads go on from the replica; each is charged to `reader`.
    const READS: usize = 3;
    for _ in 0..READS {
        let q = call(
            &a,
            "alayasiki_query",
            &reader,
            &json!({"query": "tide", "mode": "evidence"}),
        );
        assert_eq!(q.status, 200, "{}", String::from_utf8_lossy(&q.body));
    }
    // A write right after them waits for a leader once, not once per step
    // and once more per batch of their usage rows; so does the next.
    for key in ["nq-1", "nq-2"] {
        let (r, took) = timed_ingest(&a, &token, key);
        eprintln!("no quorum: {key} answered {} in {took:?}", r.status);
        assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.code(), "unavailable");
        assert!(
            took < CLUSTER_WRITE_WAIT + SLACK,
            "{key} answered after {took:?}"
        );
        // The node looked for a leader for CLUSTER_WRITE_WAIT: so should
        // the client before it asks again.
        assert_eq!(r.header("Retry-After"), Some("5"), "{key}");
        let text = String::from_utf8_lossy(&r.body);
        assert!(!text.contains("127.0.0.1"), "a node's address in {text}");
    }

    cluster.restart(followers[0]);
    cluster.restart(followers[1]);
    cluster.wait_for_leader(Duration::from_secs(20));
    let r = ingest(&a, &token, "after", "The ferry bell rings at noon.");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    // The reads' usage rows, held while there was no leader, are written.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = status(&a, &reader);
        let queries = s["usage"]["by_operation"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["operation"] == "alayasiki_query")
            .map_or(0, |o| o["calls"].as_i64().unwrap());
        if queries == READS as i64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reads' usage was not written: {}",
            s["usage"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // An expected loss of quorum: one warning, one note when it ends,
    // nothing at error level.
    std::thread::sleep(Duration::from_millis(300));
    let errors = log_lines(&a, "ERROR");
    assert!(errors.is_empty(), "{errors:#?}");
    let lost: Vec<String> = log_lines(&a, "WARN")
        .into_iter()
        .filter(|l| l.contains("no leader"))
        .collect();
    assert_eq!(lost.len(), 1, "{lost:#?}");
    let back: Vec<String> = log_lines(&a, "INFO")
        .into_iter()
        .filter(|l| l.contains("has a leader again"))
        .collect();
    assert_eq!(back.len(), 1, "{back:#?}");
}

#[test]
fn with_both_followers_frozen_writes_are_answered_within_the_write_deadline() {
    let Some(bin) = rqlited() else { return };
    let mut cluster = Cluster::start(&bin, 3);
    let dir = TempDir::new("outage-frozen");
    let token = admin("agent", "team");
    let other = admin("agent", "other-team");
    let a = node(dir.path(), &cluster);
    let r = ingest(&a, &token, "before", "The lighthouse keeper logs the tide.");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    cluster.pause(followers[0]);
    cluster.pause(followers[1]);

    // Two tenants write at once, twice each: every write is answered
    // within the deadline, the node's writer never held past it.
    let started = Instant::now();
    let answered: Vec<(u16, Duration)> = std::thread::scope(|s| {
        let writers: Vec<_> = [(&token, "t"), (&other, "o")]
            .into_iter()
            .map(|(tok, tag)| {
                let a = &a;
                s.spawn(move || {
                    (0..2)
                        .map(|i| {
                            let (r, took) = timed_ingest(a, tok, &format!("frozen-{tag}{i}"));
                            eprintln!("frozen: {tag}{i} answered {} in {took:?}", r.status);
                            if r.status == 503 {
                                assert!(r.header("Retry-After").is_some());
                            }
                            (r.status, took)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    eprintln!("frozen: four writes in {:?}", started.elapsed());
    for (status, took) in &answered {
        assert_eq!(*status, 503);
        assert!(*took < CLUSTER_WRITE_DEADLINE, "answered after {took:?}");
    }

    cluster.resume(followers[0]);
    cluster.resume(followers[1]);
    cluster.wait_for_leader(Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = ingest(&a, &token, "after", "The ferry bell rings at noon.");
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "no write after the thaw");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn pending_jobs(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        dir.join(alayasiki_mcp::store::DB_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row(
        "SELECT count(*) FROM jobs WHERE state = 'pending' AND kind = 'ingest'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_node_killed_while_indexing_takes_its_own_documents_up_as_soon_as_it_restarts() {
    let Some(bin) = rqlited() else { return };
    let cluster = Cluster::start(&bin, 3);
    let dir = TempDir::new("outage-own-jobs");
    let token = admin("agent", "team");
    // Large documents keep the worker busy, so the kill lands mid-backlog.
    let body = "Paragraph about the harbour and its cranes. ".repeat(1_500);
    let mut tries = 0;
    let acked = loop {
        tries += 1;
        let a = node(dir.path(), &cluster);
        let mut acked = Vec::new();
        for i in 0..8 {
            let r = call(
                &a,
                "alayasiki_ingest",
                &token,
                &json!({"content": format!("Marker zq{tries}x{i}. {body}"), "wait": false,
                        "idempotency_key": format!("k{tries}-{i}")}),
            );
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
            acked.push(r.json()["document_id"].as_str().unwrap().to_string());
        }
        a.signal("KILL");
        let mut a = a;
        assert!(a.wait(Duration::from_secs(10)).is_some());
        let pending = pending_jobs(dir.path());
        eprintln!("try {tries}: {pending} acknowledged documents pending at the kill");
        if pending > 0 {
            break acked;
        }
        assert!(tries < 3, "the kill never interrupted indexing");
    };

    let started = Instant::now();
    let a = node(dir.path(), &cluster);
    let deadline = started + JOB_ADOPT_GRACE;
    loop {
        let s = status(&a, &token);
        if s["jobs"]["pending"] == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still pending after {:?}: {}",
            started.elapsed(),
            s["jobs"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = started.elapsed();
    eprintln!("own pending documents indexed {took:?} after the restart began");
    assert!(
        took < JOB_ADOPT_GRACE / 2,
        "indexed only after {took:?}: left for the grace"
    );
    // Each acknowledged document is there, once.
    for (i, id) in acked.iter().enumerate() {
        let q = call(
            &a,
            "alayasiki_query",
            &token,
            &json!({"query": format!("zq{tries}x{i}"), "mode": "evidence", "top_k": 100,
                    "lanes": ["keyword"]}),
        );
        let found = q.json()["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["document_id"] == json!(id));
        assert!(found, "{id} not found");
    }
}
