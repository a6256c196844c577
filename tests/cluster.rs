//! The store's schema and data on a real 3-node rqlite cluster
//! (`tests/cluster_common`), through the real binary's `cluster`
//! subcommand and the client it uses:
//!
//! - a data directory pushed into the cluster arrives identical on every
//!   replica (per-table digests, SQLite's and FTS5's integrity checks),
//!   and pulled back into a new directory answers every question exactly
//!   as the original did;
//! - writes under the retry rule the store's writes follow (an operation
//!   id, recorded once) lose nothing acknowledged and apply nothing twice
//!   through a `kill -9` of the leader and through a paused leader;
//! - without a quorum, writes are refused at once and never apply, a
//!   write whose answer was lost applies whole or not at all, and reads of
//!   a node's own copy go on.

mod cluster_common;
mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alayasiki_mcp::store::cluster::copy::{self, digests_of_cluster, digests_of_local};
use alayasiki_mcp::store::cluster::wire::{Param, Statement};
use alayasiki_mcp::store::cluster::{ClusterClient, ClusterError, ReadLevel};
use alayasiki_mcp::store::{VECTOR_CLEAR, VECTOR_PUT};
use cluster_common::{rqlited, Cluster, ELECTION_TIMEOUT};
use common::{cli_ok, TempDir, BIN};

/// Runs `alayasiki-mcp cluster ARGS` against `address`.
fn cluster_cli(address: &str, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .arg("cluster")
        .args(args)
        .env("ALAYASIKI_CLUSTER", address)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .output()
        .expect("run alayasiki-mcp cluster")
}

fn local_db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        dir.join("memory.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap()
}

/// A memory with documents of several kinds, one of them forgotten (so
/// the full-text index holds a deletion).
fn a_memory(dir: &Path) {
    let notes = TempDir::new("cluster-notes");
    let topics = [
        (
            "ferry",
            "The harbour ferry leaves at dawn; Mira Okafor checks the tide tables.",
        ),
        (
            "orchard",
            "Apple trees in the north orchard were grafted by Tomas Reyes in spring.",
        ),
        (
            "station",
            "The weather station on Kestrel Ridge logs wind speed every ten minutes.",
        ),
        (
            "library",
            "The county library lends telescopes; Ada Lindqvist runs the star club.",
        ),
    ];
    for i in 0..24 {
        let (name, text) = topics[i % topics.len()];
        std::fs::write(
            notes.path().join(format!("{name}-{i}.md")),
            format!(
                "# {name} {i}\n\n{text} Entry {i} of the log, with a note on day {}.\n",
                i * 3
            ),
        )
        .unwrap();
    }
    let pdf = format!("{}/fixtures/pdf", env!("CARGO_MANIFEST_DIR"));
    cli_ok(dir, &["ingest", notes.path().to_str().unwrap(), &pdf]);
    cli_ok(
        dir,
        &[
            "forget",
            "--source",
            notes.path().join("ferry-0.md").to_str().unwrap(),
        ],
    );
}

const QUESTIONS: &[&str] = &[
    "who checks the tide tables",
    "when were the apple trees grafted",
    "how often is wind speed logged",
    "what does the library lend",
];

fn answers(dir: &Path) -> Vec<String> {
    QUESTIONS
        .iter()
        .map(|q| cli_ok(dir, &["query", q]))
        .collect()
}

fn fts_tables(client: &ClusterClient) -> Vec<String> {
    let rows = client
        .query(
            &[Statement::plain(
                "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'",
            )],
            ReadLevel::Leader,
        )
        .unwrap();
    rows[0]
        .rows
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_data_directory_goes_into_the_cluster_and_back_unchanged() {
    let Some(bin) = rqlited() else { return };
    let original = TempDir::new("cluster-original");
    a_memory(original.path());
    let before = answers(original.path());
    let cluster = Cluster::start(&bin, 3);
    let address = cluster.address();

    let out = cluster_cli(
        &address,
        &["push", "--data-dir", original.path().to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "push failed: {stderr}");
    assert!(stderr.contains("copied and checked"), "{stderr}");

    // Every replica holds exactly the original's rows, and checks sound.
    let local = digests_of_local(&local_db(original.path())).unwrap();
    assert!(local.iter().any(|(t, n, _)| t == "chunks" && *n > 0));
    assert!(
        local.iter().any(|(t, _, _)| t.ends_with("_data")),
        "FTS pages copied"
    );
    cluster.wait_converged(Duration::from_secs(20));
    for i in 0..cluster.nodes.len() {
        let node = cluster.client_of(i, Duration::from_secs(10));
        assert_eq!(
            digests_of_cluster(&node, ReadLevel::Local).unwrap(),
            local,
            "replica {i} differs from the original"
        );
        let check = node
            .query(
                &[Statement::plain("PRAGMA integrity_check")],
                ReadLevel::Local,
            )
            .unwrap();
        assert_eq!(check[0].rows[0][0].as_str(), Some("ok"), "replica {i}");
    }
    let client = cluster.client(Duration::from_secs(10));
    let fts = fts_tables(&client);
    assert!(!fts.is_empty());
    for t in &fts {
        let check = Statement::plain(format!("INSERT INTO {t}({t}) VALUES ('integrity-check')"));
        client
            .transaction(&[check])
            .unwrap_or_else(|e| panic!("{t}: {e}"));
    }

    // A second push is refused, and changes nothing.
    let again = cluster_cli(
        &address,
        &["push", "--data-dir", original.path().to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    assert_eq!(
        digests_of_cluster(&client, ReadLevel::Leader).unwrap(),
        local
    );

    // Pulled back row for row...
    let copy = TempDir::new("cluster-copy");
    copy::pull_dir(&client, copy.path()).unwrap();
    assert_eq!(digests_of_local(&local_db(copy.path())).unwrap(), local);

    // ...and through the binary, which re-embeds: the same answers.
    let pulled = TempDir::new("cluster-pulled");
    let out = cluster_cli(
        &address,
        &["pull", "--data-dir", pulled.path().to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(answers(pulled.path()), before);

    // Pulling over a store is refused, and leaves it as it was.
    let again = cluster_cli(
        &address,
        &["pull", "--data-dir", pulled.path().to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    assert_eq!(answers(pulled.path()), before);
}

/// What a write that must apply once looks like: an operation id, and a
/// counter the first application alone moves.
fn op(id: &str, writer: i64, n: i64) -> Vec<Statement> {
    vec![
        Statement::new(
            "UPDATE applied SET count = count + 1
              WHERE k = 1 AND NOT EXISTS (SELECT 1 FROM ops WHERE op_id = ?)",
            vec![id.into()],
        ),
        Statement::new(
            "INSERT INTO ops(op_id, writer, n) VALUES (?, ?, ?) ON CONFLICT(op_id) DO NOTHING",
            vec![id.into(), Param::Int(writer), Param::Int(n)],
        ),
    ]
}

enum Fault {
    KillLeader,
    PauseLeader,
}

/// Two writers, each through a different node, write `per_writer`
/// operations with the retry rule while `fault` strikes the leader once a
/// quarter of them are acknowledged.
fn writes_through(fault: Fault, per_writer: usize) {
    let Some(bin) = rqlited() else { return };
    let mut cluster = Cluster::start(&bin, 3);
    let setup = cluster.client(Duration::from_secs(5));
    setup
        .transaction(&[
            Statement::plain(
                "CREATE TABLE ops(op_id TEXT PRIMARY KEY, writer INTEGER, n INTEGER) WITHOUT ROWID",
            ),
            Statement::plain("CREATE TABLE applied(k INTEGER PRIMARY KEY, count INTEGER NOT NULL)"),
            Statement::plain("INSERT INTO applied VALUES (1, 0)"),
        ])
        .unwrap();

    let acked = Arc::new(Mutex::new(HashSet::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            // Each writer enters through its own node first.
            let client = ClusterClient::new(
                alayasiki_mcp::store::cluster::ClusterAddress::parse(&format!(
                    "rqlite://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
                    cluster.nodes[(w + 1) % 3].http,
                    cluster.nodes[(w + 2) % 3].http,
                    cluster.nodes[w % 3].http
                ))
                .unwrap(),
                Duration::from_secs(3),
            )
            .unwrap();
            let (acked, count, failed) = (acked.clone(), count.clone(), failed.clone());
            std::thread::spawn(move || {
                for n in 0..per_writer {
                    let id = format!("w{w}-{n}");
                    match client.commit(
                        &op(&id, w as i64, n as i64),
                        Instant::now() + Duration::from_secs(30),
                    ) {
                        Ok(_) => {
                            acked.lock().unwrap().insert(id);
                            count.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => {
                            eprintln!("{id}: {e}");
                            failed.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                }
            })
        })
        .collect();

    while count.load(Ordering::SeqCst) < per_writer / 2 && !failed.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    let struck_at = Instant::now();
    match fault {
        Fault::KillLeader => {
            cluster.kill(leader);
            std::thread::sleep(ELECTION_TIMEOUT * 4);
            cluster.restart(leader);
        }
        Fault::PauseLeader => {
            cluster.pause(leader);
            std::thread::sleep(ELECTION_TIMEOUT * 3);
            cluster.resume(leader);
        }
    }
    for w in writers {
        w.join().unwrap();
    }
    assert!(
        !failed.load(Ordering::SeqCst),
        "a write failed past its deadline"
    );
    eprintln!(
        "{} writes acknowledged, the leader struck {:.1}s before the last",
        count.load(Ordering::SeqCst),
        struck_at.elapsed().as_secs_f64()
    );
    cluster.wait_for_leader(Duration::from_secs(20));
    cluster.wait_converged(Duration::from_secs(30));
    cluster.wait_replicas_equal(Duration::from_secs(30));

    let acked = acked.lock().unwrap();
    assert_eq!(acked.len(), 2 * per_writer);
    for i in 0..3 {
        let node = cluster.client_of(i, Duration::from_secs(10));
        let rows = node
            .query(
                &[
                    Statement::plain("SELECT op_id FROM ops"),
                    Statement::plain("SELECT count FROM applied WHERE k = 1"),
                ],
                ReadLevel::Local,
            )
            .unwrap();
        let stored: HashSet<String> = rows[0]
            .rows
            .iter()
            .map(|r| r[0].as_str().unwrap().to_string())
            .collect();
        let missing: Vec<&String> = acked.difference(&stored).collect();
        assert!(
            missing.is_empty(),
            "replica {i} lost acknowledged writes: {missing:?}"
        );
        assert_eq!(
            rows[1].rows[0][0].as_i64(),
            Some(stored.len() as i64),
            "replica {i}: an operation applied twice"
        );
    }
}

#[test]
fn a_killed_leader_loses_no_acknowledged_write_and_applies_none_twice() {
    writes_through(Fault::KillLeader, 300);
}

#[test]
fn a_paused_leader_loses_no_acknowledged_write_and_applies_none_twice() {
    writes_through(Fault::PauseLeader, 300);
}

#[test]
fn without_a_quorum_writes_are_refused_at_once_and_nothing_is_half_written() {
    let Some(bin) = rqlited() else { return };
    let mut cluster = Cluster::start(&bin, 3);
    let client = cluster.client(Duration::from_secs(3));
    client
        .transaction(&[
            Statement::plain("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)"),
            Statement::plain("INSERT INTO t VALUES (1, 'kept')"),
        ])
        .unwrap();
    cluster.wait_converged(Duration::from_secs(10));
    let survivor = cluster.wait_for_leader(Duration::from_secs(5));
    for i in 0..3 {
        if i != survivor {
            cluster.kill(i);
        }
    }
    // The old leader steps down once it hears from no follower.
    let only = cluster.client_of(survivor, Duration::from_secs(3));
    let deadline = Instant::now() + Duration::from_secs(15);
    let refused = loop {
        let started = Instant::now();
        let r = only.transaction(&[
            Statement::plain("INSERT INTO t VALUES (2, 'half')"),
            Statement::plain("INSERT INTO t VALUES (3, 'written')"),
        ]);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "a write hung for {took:?}");
        match r {
            Err(ClusterError::NoQuorum(_)) => break took,
            Err(ClusterError::Uncertain(_)) if Instant::now() < deadline => continue,
            other => panic!("a write without a quorum: {other:?}"),
        }
    };
    eprintln!("refused in {refused:?}");
    // Writes sent while the node still thought itself the leader were
    // uncertain (they sit in its log and may commit once the others are
    // back). Once it knows there is no leader, a write is refused outright:
    // this one must never apply.
    let started = Instant::now();
    let r = only.transaction(&[
        Statement::plain("INSERT INTO t VALUES (4, 'never')"),
        Statement::plain("INSERT INTO t VALUES (5, 'applied')"),
    ]);
    assert!(matches!(r, Err(ClusterError::NoQuorum(_))), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // The binary says so too, and fails.
    let out = cluster_cli(&cluster.address_of(survivor), &["status"]);
    assert_eq!(out.status.code(), Some(1));
    // Reads of the node's own copy go on.
    let rows = only
        .query(
            &[Statement::plain("SELECT v FROM t ORDER BY k")],
            ReadLevel::Local,
        )
        .unwrap();
    assert_eq!(rows[0].rows.len(), 1);
    assert!(matches!(
        only.query(&[Statement::plain("SELECT 1")], ReadLevel::Leader),
        Err(ClusterError::NoQuorum(_))
    ));

    // With the quorum back, the refused transaction is nowhere.
    for i in 0..3 {
        if i != survivor {
            cluster.restart(i);
        }
    }
    cluster.wait_for_leader(Duration::from_secs(20));
    cluster.wait_converged(Duration::from_secs(20));
    cluster.wait_replicas_equal(Duration::from_secs(20));
    for i in 0..3 {
        let rows = cluster
            .client_of(i, Duration::from_secs(5))
            .query(
                &[Statement::plain("SELECT k FROM t ORDER BY k")],
                ReadLevel::Local,
            )
            .unwrap();
        let keys: Vec<i64> = rows[0]
            .rows
            .iter()
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        // The refused write nowhere; the uncertain one whole or not at all.
        assert!(keys == [1] || keys == [1, 2, 3], "replica {i}: {keys:?}");
    }
}

/// A CA and a certificate it signed for 127.0.0.1, made with `openssl`.
fn certificates(dir: &Path) -> Option<()> {
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    std::fs::write(dir.join("san.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    let made = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "node.key",
        "-out",
        "node.csr",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "node.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.cnf",
        "-out",
        "node.pem",
    ]);
    if made {
        Some(())
    } else if std::env::var_os("CI").is_some() {
        panic!("openssl could not make the test certificates");
    } else {
        eprintln!("skipped: no openssl");
        None
    }
}

#[test]
fn tls_and_basic_auth_reach_the_cluster_and_wrong_ones_do_not() {
    let Some(bin) = rqlited() else { return };
    let dir = TempDir::new("cluster-tls");
    if certificates(dir.path()).is_none() {
        return;
    }
    std::fs::write(
        dir.path().join("auth.json"),
        r#"[{"username": "memory", "password": "s3:cret", "perms": ["all"]}]"#,
    )
    .unwrap();
    // Both ports chosen while both are held, so that they differ.
    let held: Vec<std::net::TcpListener> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let (port, raft) = (
        held[0].local_addr().unwrap().port(),
        held[1].local_addr().unwrap().port(),
    );
    drop(held);
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let mut node = Command::new(&bin)
        .args([
            "-node-id",
            "tls0",
            "-http-addr",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["-raft-addr", &format!("127.0.0.1:{raft}")])
        .args(["-http-cert", &p("node.pem"), "-http-key", &p("node.key")])
        .args(["-auth", &p("auth.json")])
        .arg(p("data"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ca = p("ca.pem");
    let good = format!("rqlites://memory:s3:cret@127.0.0.1:{port}?ca={ca}");
    let client = |address: &str| {
        ClusterClient::new(
            alayasiki_mcp::store::cluster::ClusterAddress::parse(address).unwrap(),
            Duration::from_secs(3),
        )
        .unwrap()
    };
    let trusted = client(&good);
    trusted
        .await_leader(Instant::now() + Duration::from_secs(20))
        .unwrap();
    trusted
        .transaction(&[
            Statement::plain("CREATE TABLE t(x)"),
            Statement::plain("INSERT INTO t VALUES (1)"),
        ])
        .unwrap();
    let rows = trusted
        .query(&[Statement::plain("SELECT x FROM t")], ReadLevel::Consensus)
        .unwrap();
    assert_eq!(rows[0].rows[0][0].as_i64(), Some(1));

    // The binary over the same address; the password never printed.
    let out = cluster_cli(&good, &["status"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("memory:***@") && !stdout.contains("s3:cret"),
        "{stdout}"
    );

    let refused =
        |address: &str| client(address).query(&[Statement::plain("SELECT 1")], ReadLevel::Local);
    let wrong_password = format!("rqlites://memory:nope@127.0.0.1:{port}?ca={ca}");
    let anonymous = format!("rqlites://127.0.0.1:{port}?ca={ca}");
    assert!(matches!(
        refused(&wrong_password),
        Err(ClusterError::Unauthorized(_))
    ));
    assert!(matches!(
        refused(&anonymous),
        Err(ClusterError::Unauthorized(_))
    ));
    // An untrusted certificate, and plain HTTP to a TLS port, reach nothing.
    let untrusted = format!("rqlites://memory:s3:cret@127.0.0.1:{port}");
    assert!(
        matches!(refused(&untrusted), Err(ClusterError::Unreachable(_))),
        "{:?}",
        refused(&untrusted)
    );
    let plain = format!("rqlite://memory:s3:cret@127.0.0.1:{port}");
    assert!(refused(&plain).is_err());
    let _ = node.kill();
    let _ = node.wait();
}

/// Every write transaction of a real workload (ingests through the MCP
/// tools, a file's original bytes, entity resolution, a forget, queries'
/// usage rows), recorded by the store's tap and run in the same order on
/// a copy of the store it started from and on the cluster, makes the same
/// rows in all three (on the copy, full-text pages included; on the
/// cluster's other SQLite version, an index that finds the same chunks),
/// and the copy answers every question as the original does.
///
/// Every statement is an upsert or binds the values it sets, so a
/// transaction applied twice (a retry after a lost answer) leaves what it
/// left once: the cluster is sent each one twice, and a second copy runs
/// each twice; both still hold exactly the original's rows.
#[test]
fn recorded_writes_replayed_make_the_same_store_here_and_on_the_cluster() {
    use alayasiki_mcp::protocol::mcp::{Server as Mcp, Session};
    use alayasiki_mcp::service::{MemoryService, Principal, Role};
    use alayasiki_mcp::store::{Recorded, Tenant};
    use serde_json::json;

    let Some(bin) = rqlited() else { return };
    let open = |dir: &Path| {
        MemoryService::open(
            dir,
            alayasiki_mcp::config::Durability::Normal,
            Arc::new(alayasiki_mcp::embed::BuiltinEmbedder),
        )
        .unwrap()
    };
    // One starting point, three places.
    let origin = TempDir::new("replay-origin");
    open(origin.path()).shutdown();
    let copy = TempDir::new("replay-copy");
    let twice = TempDir::new("replay-twice");
    for dir in [&copy, &twice] {
        std::fs::copy(
            origin.path().join("memory.db"),
            dir.path().join("memory.db"),
        )
        .unwrap();
    }
    let cluster = Cluster::start(&bin, 3);
    let client = cluster.client(Duration::from_secs(10));
    copy::push_dir(copy.path(), &client).unwrap();

    let service = Arc::new(open(origin.path()));
    let recorded: Arc<Mutex<Vec<Vec<Recorded>>>> = Arc::default();
    let log = recorded.clone();
    service.set_write_tap(Some(Box::new(move |statements: &[Recorded]| {
        log.lock().unwrap().push(statements.to_vec());
        Ok(())
    })));
    let mcp = Mcp::new(service.clone());
    let session = Session::new(Principal {
        tenant: Tenant::new("team").unwrap(),
        subject: "replayer".into(),
        roles: vec![Role::Admin],
        scopes: vec![],
        memory: alayasiki_mcp::service::MemoryAccess::Unrestricted,
        anonymous: false,
    });
    let call = |name: &str, args: serde_json::Value| {
        let r = mcp
            .handle(
                &session,
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": args}}),
            )
            .unwrap();
        assert_ne!(r["result"]["isError"], true, "{name}: {r}");
        r
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "replay", "version": "1"}}});
    assert!(mcp.handle(&session, init).unwrap()["result"].is_object());
    let people = [
        "Mira Okafor",
        "Tomas Reyes",
        "Ada Lindqvist",
        "Kenji Watanabe",
    ];
    for i in 0..16 {
        let (a, b) = (people[i % 4], people[(i + 1) % 4]);
        call(
            "alayasiki_ingest",
            json!({"content": format!(
                "{a} met {b} at the Kestrel Ridge station on day {i}. {a} works with {b} \
                 on the harbour ferry schedule, and {b} leads the orchard survey."),
                "source": format!("notes/{}.md", i % 5)}),
        );
    }
    let pdf = common::fixture_bytes("pdf/libreoffice-report.pdf");
    call(
        "alayasiki_ingest",
        json!({"File": {"filename": "report.pdf", "content": common::b64(&pdf)}}),
    );
    call("alayasiki_forget", json!({"source": "notes/3.md"}));
    for q in ["who leads the orchard survey", "what did the report find"] {
        call("alayasiki_query", json!({"query": q}));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while service.backlog().unwrap().0 > 0 {
        assert!(Instant::now() < deadline, "indexing did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(mcp);
    service.shutdown();
    let recorded = recorded.lock().unwrap().clone();
    let statements: usize = recorded.iter().map(Vec::len).sum();
    eprintln!(
        "{} transactions, {statements} statements recorded",
        recorded.len()
    );
    assert!(recorded.iter().flatten().any(|r| r
        .params
        .iter()
        .any(|v| matches!(v, rusqlite::types::Value::Blob(_)))));

    // Run them in order on the copy, and on the cluster. Vector rows are
    // recorded for the cluster's table alone (a node keeps them in files).
    alayasiki_mcp::store::cluster::replica::create_cluster_tables(&client).unwrap();
    let for_cluster_only = |sql: &str| sql == VECTOR_PUT || sql == VECTOR_CLEAR;
    assert!(recorded.iter().flatten().any(|r| r.sql == VECTOR_PUT));
    let open_copy = |dir: &TempDir| {
        let conn = rusqlite::Connection::open(dir.path().join("memory.db")).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        conn
    };
    let run_locally = |conn: &mut rusqlite::Connection, transaction: &[Recorded]| {
        let tx = conn.transaction().unwrap();
        tx.pragma_update(None, "defer_foreign_keys", true).unwrap();
        for r in transaction.iter().filter(|r| !for_cluster_only(&r.sql)) {
            if r.params.is_empty() {
                tx.execute_batch(&r.sql)
            } else {
                tx.execute(&r.sql, rusqlite::params_from_iter(&r.params))
                    .map(|_| ())
            }
            .unwrap_or_else(|e| panic!("{}: {e}", r.sql));
        }
        tx.commit().unwrap();
    };
    let (mut local, mut local_twice) = (open_copy(&copy), open_copy(&twice));
    for transaction in &recorded {
        run_locally(&mut local, transaction);
        run_locally(&mut local_twice, transaction);
        run_locally(&mut local_twice, transaction);
        let remote: Vec<Statement> = transaction
            .iter()
            .map(|r| Statement::from_recorded(&r.sql, &r.params).unwrap())
            .collect();
        client.transaction(&remote).unwrap();
        client.transaction(&remote).unwrap();
    }
    drop((local, local_twice));

    let original = digests_of_local(&local_db(origin.path())).unwrap();
    assert_eq!(digests_of_local(&local_db(copy.path())).unwrap(), original);
    // Sent twice, each full-text row was replaced by itself: the cluster's
    // index and the second copy's hold the same entries as the original's
    // (one per chunk; they find and rank the same, below), in other pages
    // and segments. Every other row is the same.
    let on_cluster = digests_of_cluster(&client, ReadLevel::Leader).unwrap();
    let twice_db = local_db(twice.path());
    let on_twice = digests_of_local(&twice_db).unwrap();
    let not_fulltext = |d: &[(String, u64, String)]| -> Vec<(String, u64, String)> {
        d.iter()
            .filter(|(t, _, _)| !t.starts_with("fts_"))
            .cloned()
            .collect()
    };
    let entries = |d: &[(String, u64, String)]| -> u64 {
        d.iter().find(|(t, _, _)| t == "fts_1_docsize").unwrap().1
    };
    for replayed in [&on_cluster, &on_twice] {
        assert_eq!(not_fulltext(replayed), not_fulltext(&original));
        assert_eq!(entries(replayed), entries(&original));
    }
    open_copy(&twice)
        .execute("INSERT INTO fts_1(fts_1) VALUES ('integrity-check')", [])
        .unwrap();
    let origin_db = local_db(origin.path());
    for term in [
        "orchard",
        "ferry OR survey",
        "kestrel",
        "report",
        "mira AND tomas",
    ] {
        let sql =
            "SELECT rowid, round(rank, 9) FROM fts_1 WHERE fts_1 MATCH ? ORDER BY rank, rowid";
        let mut stmt = origin_db.prepare(sql).unwrap();
        let here: Vec<i64> = stmt
            .query_map([term], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let there = client
            .query(&[Statement::new(sql, vec![term.into()])], ReadLevel::Leader)
            .unwrap();
        let there: Vec<i64> = there[0]
            .rows
            .iter()
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        assert!(!here.is_empty(), "{term}");
        assert_eq!(here, there, "{term}");
        let ranked = |db: &rusqlite::Connection| -> Vec<(i64, f64)> {
            db.prepare(sql)
                .unwrap()
                .query_map([term], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        assert_eq!(ranked(&twice_db), ranked(&origin_db), "{term}");
    }
    client
        .transaction(&[Statement::plain(
            "INSERT INTO fts_1(fts_1) VALUES ('integrity-check')",
        )])
        .unwrap();

    // The copy, its vectors rebuilt, answers as the original does.
    cli_ok(copy.path(), &["reindex"]);
    for q in [
        "who leads the orchard survey",
        "who works on the ferry schedule",
        "report",
    ] {
        assert_eq!(
            cli_ok(copy.path(), &["query", q]),
            cli_ok(origin.path(), &["query", q])
        );
    }
}

/// A writer node commits every write transaction through the cluster's
/// log, a `kill -9` of the leader in the middle of its ingests included;
/// a follower node applies the log as it grows. Every acknowledged
/// ingest is on the follower and on the cluster exactly once, and the
/// follower's database ends identical to the writer's, table for table.
#[test]
fn a_follower_applies_what_the_writer_committed_through_the_cluster() {
    use alayasiki_mcp::embed::{BuiltinEmbedder, Embedder};
    use alayasiki_mcp::protocol::mcp::{Server as Mcp, Session};
    use alayasiki_mcp::service::{MemoryService, Principal, Role};
    use alayasiki_mcp::store::cluster::replica::ClusterReplicator;
    use alayasiki_mcp::store::{Store, Tenant, VectorSpec};
    use serde_json::json;

    let Some(bin) = rqlited() else { return };
    let open = |dir: &Path| {
        MemoryService::open(
            dir,
            alayasiki_mcp::config::Durability::Normal,
            Arc::new(BuiltinEmbedder),
        )
        .unwrap()
    };
    let writer_dir = TempDir::new("replica-writer");
    open(writer_dir.path()).shutdown();
    let follower_dir = TempDir::new("replica-follower");
    std::fs::copy(
        writer_dir.path().join("memory.db"),
        follower_dir.path().join("memory.db"),
    )
    .unwrap();
    let mut cluster = Cluster::start(&bin, 3);
    copy::push_dir(writer_dir.path(), &cluster.client(Duration::from_secs(10))).unwrap();

    let replicator = |node: &str| {
        Box::new(ClusterReplicator::new(cluster.client(Duration::from_secs(5)), node).unwrap())
    };
    let follower = Store::open(
        follower_dir.path(),
        alayasiki_mcp::config::Durability::Normal,
        VectorSpec {
            embedder_id: BuiltinEmbedder.id().to_string(),
            dim: BuiltinEmbedder.dim(),
        },
        &alayasiki_mcp::graph::resolution::POLICY,
    )
    .unwrap();
    follower.set_write_tap(Some(replicator("follower")));
    let service = Arc::new(open(writer_dir.path()));
    service.set_write_tap(Some(replicator("writer")));

    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let ingests = {
        let (service, acked) = (service.clone(), acked.clone());
        std::thread::spawn(move || {
            let mcp = Mcp::new(service);
            let session = Session::new(Principal {
                tenant: Tenant::new("team").unwrap(),
                subject: "writer".into(),
                roles: vec![Role::Admin],
                scopes: vec![],
                memory: alayasiki_mcp::service::MemoryAccess::Unrestricted,
                anonymous: false,
            });
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "writer", "version": "1"}}});
            assert!(mcp.handle(&session, init).unwrap()["result"].is_object());
            for i in 0..40 {
                let r = mcp
                    .handle(
                        &session,
                        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                            "name": "alayasiki_ingest", "arguments": {
                                "content": format!("Log {i}: the ferry to Kestrel Ridge left at {i} past six."),
                                "idempotency_key": format!("log-{i}")}}}),
                    )
                    .unwrap();
                if r["result"]["isError"] == true {
                    eprintln!("ingest {i} refused: {r}");
                    continue;
                }
                let text = r["result"]["content"][0]["text"].as_str().unwrap();
                let receipt: serde_json::Value = serde_json::from_str(text).unwrap();
                acked
                    .lock()
                    .unwrap()
                    .push(receipt["document_id"].as_str().unwrap().to_string());
            }
        })
    };
    while acked.lock().unwrap().len() < 10 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let leader = cluster.wait_for_leader(Duration::from_secs(10));
    cluster.kill(leader);
    std::thread::sleep(ELECTION_TIMEOUT * 4);
    cluster.restart(leader);
    ingests.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while service.backlog().unwrap().0 > 0 {
        assert!(Instant::now() < deadline, "indexing did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    service.shutdown();
    drop(service);
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 30,
        "only {} of 40 ingests acknowledged",
        acked.len()
    );

    // The follower reaches the writer's position, and holds what it holds.
    let version = |dir: &Path| -> i64 {
        local_db(dir)
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    let target = version(writer_dir.path());
    assert!(target > 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while version(follower_dir.path()) < target {
        assert!(Instant::now() < deadline, "the follower stays behind");
        std::thread::sleep(Duration::from_millis(50));
    }
    follower.close();
    let original = digests_of_local(&local_db(writer_dir.path())).unwrap();
    let followed = digests_of_local(&local_db(follower_dir.path())).unwrap();
    let differ: Vec<_> = original
        .iter()
        .zip(&followed)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("{} ({} rows here, {} there)", a.0, a.1, b.1))
        .collect();
    assert!(
        differ.is_empty() && original.len() == followed.len(),
        "differ: {differ:?}"
    );
    for (name, at) in [
        ("follower", local_db(follower_dir.path())),
        ("writer", local_db(writer_dir.path())),
    ] {
        for id in &acked {
            let n: i64 = at
                .query_row(
                    "SELECT count(*) FROM documents WHERE doc_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{name}: {id}");
        }
    }
    // The restarted node rejoins while this runs: wait for it to settle.
    cluster.wait_for_leader(Duration::from_secs(20));
    cluster.wait_converged(Duration::from_secs(20));
    let client = cluster.client(Duration::from_secs(10));
    let on_cluster = client
        .query(
            &[Statement::plain("SELECT doc_id FROM documents")],
            ReadLevel::Leader,
        )
        .unwrap();
    let there: HashSet<String> = on_cluster[0]
        .rows
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        there.len(),
        on_cluster[0].rows.len(),
        "a document twice on the cluster"
    );
    assert!(acked.iter().all(|id| there.contains(id)));
    let entries = client
        .query(
            &[Statement::plain("SELECT count(*) FROM cluster_log")],
            ReadLevel::Leader,
        )
        .unwrap();
    assert_eq!(entries[0].rows[0][0].as_i64(), Some(target));

    // Every operation is in the ledger once, under an entry the log holds.
    let ledger = client
        .query(
            &[
                Statement::plain("SELECT count(*), count(DISTINCT op) FROM cluster_ops"),
                Statement::plain(
                    "SELECT count(*) FROM cluster_ops \
                      WHERE seq NOT IN (SELECT seq FROM cluster_log)",
                ),
                Statement::plain("SELECT op FROM cluster_ops ORDER BY seq LIMIT 1"),
            ],
            ReadLevel::Leader,
        )
        .unwrap();
    let (ops, distinct) = (
        ledger[0].rows[0][0].as_i64().unwrap(),
        ledger[0].rows[0][1].as_i64().unwrap(),
    );
    assert!(ops >= acked.len() as i64, "{ops} operations recorded");
    assert_eq!(ops, distinct);
    assert_eq!(ledger[1].rows[0][0].as_i64(), Some(0));
    // An operation sent again, in a new entry after the newest, is refused
    // whole: neither the entry nor its writes apply.
    let first_op = ledger[2].rows[0][0].as_str().unwrap().to_string();
    let again = client.transaction(&[
        Statement::new(
            "INSERT INTO cluster_log(seq, batch, statements) VALUES (?, 'again', '[]')",
            vec![Param::Int(target + 1)],
        ),
        Statement::new(
            "INSERT INTO cluster_ops(op, seq) VALUES (?, ?)",
            vec![first_op.into(), Param::Int(target + 1)],
        ),
        Statement::new(
            "UPDATE documents SET title = 'twice' WHERE doc_id = ?",
            vec![acked[0].clone().into()],
        ),
    ]);
    match again {
        Err(ClusterError::Rejected(e)) => assert!(e.contains("cluster_ops"), "{e}"),
        other => panic!("an operation sent again was not refused: {other:?}"),
    }
    let after = client
        .query(
            &[
                Statement::plain("SELECT MAX(seq) FROM cluster_log"),
                Statement::plain("SELECT count(*) FROM documents WHERE title = 'twice'"),
            ],
            ReadLevel::Leader,
        )
        .unwrap();
    assert_eq!(after[0].rows[0][0].as_i64(), Some(target));
    assert_eq!(after[1].rows[0][0].as_i64(), Some(0));
}
