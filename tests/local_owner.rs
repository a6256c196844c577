//! One memory for every agent on the machine: `alayasiki-mcp` on stdio
//! reaches the data directory's owner over its socket, starting it when
//! none answers. Through the real binary: several clients on one
//! directory, clients started at the same instant, an owner killed under
//! its clients (once, and fifty times while four clients ingest), an
//! owner that stops when idle and comes back, and a directory a server
//! keeps to itself.
#![cfg(unix)]

mod common;

use common::owner::{
    alive, client, client_with, owner_pid, owners_of, stop_owner, wait_until, SHARED,
};
use common::{Server, TempDir, TIMEOUT};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn found(s: &mut Server, question: &str, marker: &str) -> bool {
    s.query(question)["evidence"].to_string().contains(marker)
}

#[test]
fn agents_on_one_directory_share_one_memory() {
    let dir = TempDir::new("owner-shared");
    let mut agents: Vec<Server> = (0..3).map(|_| client(dir.path())).collect();
    assert_eq!(owners_of(dir.path()), 1);
    let owner = owner_pid(dir.path());
    // Status names the owner serving every agent.
    let status = agents[1].ok("alayasiki_status", json!({}));
    assert_eq!(status["owner"]["pid"], owner, "{status}");
    assert_eq!(status["owner"]["clients"], 3, "{status}");
    assert_eq!(status["owner"]["version"], env!("CARGO_PKG_VERSION"));
    // Each agent's acknowledged write is found by every other's next query.
    let facts = [
        ("Rosalind docks the ferries at Kestrel Quay.", "Kestrel"),
        (
            "The lighthouse lamp at Fennick Point was rebuilt in copper.",
            "Fennick",
        ),
        ("Marten keeps the tide tables for Oyster Reach.", "Oyster"),
    ];
    for (i, (fact, _)) in facts.iter().enumerate() {
        agents[i].ingest(fact);
    }
    for agent in agents.iter_mut() {
        for (_, marker) in &facts {
            assert!(
                found(agent, &format!("Where is {marker}?"), marker),
                "{marker}"
            );
        }
    }
    // One agent leaving leaves the owner serving the others.
    let leaving = agents.remove(0);
    let (status, _) = leaving.close();
    assert!(status.success(), "{status:?}");
    assert!(found(&mut agents[0], "Where is Fennick Point?", "Fennick"));
    assert_eq!(owner_pid(dir.path()), owner);
    assert!(alive(owner));
    for a in agents {
        a.close();
    }
    stop_owner(dir.path());
}

#[test]
fn clients_started_at_the_same_instant_find_one_owner() {
    let dir = TempDir::new("owner-race");
    let path = dir.path().to_path_buf();
    let clients: Vec<Server> = std::thread::scope(|s| {
        let started: Vec<_> = (0..16)
            .map(|_| {
                let path = path.clone();
                s.spawn(move || client(&path))
            })
            .collect();
        started.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(owners_of(&path), 1, "one owner for 16 clients");
    let mut clients = clients;
    clients[3].ingest("The ferry Albatross sails at dawn from Gull Harbour.");
    for c in clients.iter_mut() {
        assert!(found(c, "When does the Albatross sail?", "Albatross"));
    }
    for c in clients {
        c.close();
    }
    stop_owner(&path);
}

#[test]
fn a_killed_owner_is_replaced_and_the_session_goes_on() {
    let dir = TempDir::new("owner-killed");
    let mut agent = client(dir.path());
    let kept = agent.ingest("The pilot boat Corvina moors at Slate Jetty.");
    let first = owner_pid(dir.path());
    // A request in flight when the owner dies gets a clear error; the
    // next is served by a new owner without a new initialize.
    let big: String = (0..4000)
        .map(|i| format!("Harbour log line {i}: the crane at berth {i} lifted cargo. "))
        .collect();
    agent.send(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                       "params": {"name": "alayasiki_ingest",
                                  "arguments": {"content": big, "wait": true}}}));
    std::thread::sleep(Duration::from_millis(30));
    std::process::Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .unwrap();
    let reply = agent.recv();
    assert_eq!(reply["id"], 77, "{reply}");
    if reply.get("error").is_some() {
        assert_eq!(reply["error"]["code"], -32001, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("owner stopped"),
            "{reply}"
        );
    }
    let evidence = agent.query("Where does the Corvina moor?")["evidence"].to_string();
    assert!(evidence.contains(&kept), "{evidence}");
    let second = owner_pid(dir.path());
    assert_ne!(first, second);
    assert_eq!(owners_of(dir.path()), 1);
    agent.close();
    stop_owner(dir.path());
}

#[test]
fn an_idle_owner_stops_and_the_next_client_starts_another() {
    let dir = TempDir::new("owner-idle");
    let mut agent = client(dir.path());
    agent.ingest("The dredger Halcyon clears the channel at Moss Bank.");
    let first = owner_pid(dir.path());
    let (status, _) = agent.close();
    assert!(status.success());
    // ALAYASIKI_OWNER_IDLE_SECS=1: gone soon after its last client, and its
    // socket with it.
    assert!(
        wait_until(Duration::from_secs(10), || !alive(first)),
        "the owner stayed"
    );
    assert!(!dir.path().join("alayasiki.sock").exists());
    let mut again = client(dir.path());
    assert!(found(
        &mut again,
        "What clears the channel at Moss Bank?",
        "Halcyon"
    ));
    assert_ne!(owner_pid(dir.path()), first);
    again.close();
    stop_owner(dir.path());
}

#[test]
fn a_directory_served_in_process_is_named_not_shared() {
    let dir = TempDir::new("owner-held");
    // An in-process server keeps the directory to itself.
    let mut alone = Server::start(dir.path());
    alone.initialize();
    let mut relay = Server::capturing(dir.path(), &[], SHARED);
    relay.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}}}));
    let reply = relay.recv_within(TIMEOUT).expect("an answer");
    assert_eq!(reply["error"]["code"], -32001, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("alayasiki-mcp (pid"), "{message}");
    alone.close();
}

/// Owners `kill -9`ed under the ingesting clients in
/// [`fifty_owner_kills_under_four_ingesting_clients_lose_and_double_nothing`].
const KILLS: usize = 50;

/// Clients ingesting on one directory while their owner is killed.
const INGESTING_CLIENTS: usize = 4;

/// The longest a new owner is left to serve before it is killed: each kill
/// comes at a random moment up to this long after the owner appeared.
const KILL_WITHIN: Duration = Duration::from_millis(300);

/// The longest one write may take to be acknowledged, retries included,
/// while owners are killed (a hung client fails the test here, not at the
/// harness's reply timeout).
const RETRIED_WITHIN: Duration = Duration::from_secs(10);

/// A small xorshift generator: the kill moments are random, and the seed is
/// printed so that a failing run can be replayed
/// (`ALAYASIKI_TEST_SEED=<seed>`).
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = std::env::var("ALAYASIKI_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("kill moments from ALAYASIKI_TEST_SEED={seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The pid the owner record names now, if any (it still names a killed
/// owner until the next one takes the directory).
fn recorded_owner(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("alayasiki.owner")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    (v["program"] == "alayasiki-mcp owner").then_some(v["pid"].as_u64()? as u32)
}

/// Sets its flag when dropped, also by a panic: a failing thread stops
/// the others instead of leaving them looping.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What one client's ingest loop saw.
#[derive(Default)]
struct Ingested {
    /// Acknowledged writes: idempotency key → document id.
    acknowledged: Vec<(String, String)>,
    /// Requests answered OWNER_LOST (-32001), each then retried.
    lost: usize,
    /// The longest a write took to be acknowledged, retries included.
    slowest: Duration,
}

/// Ingests documents with unique idempotency keys until `stop`, retrying a
/// request the owner lost (same key, same content) until acknowledged.
fn ingest_until_stopped(
    agent: &mut Server,
    client: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> Ingested {
    let _stop_all_on_panic = StopOnDrop(stop);
    let mut seen = Ingested::default();
    // Half the clients wait for indexing, half only for the journal: both
    // acknowledgements must survive.
    let wait = client.is_multiple_of(2);
    for n in 0.. {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let key = format!("kill-test-{client}-{n}");
        let content = format!(
            "Client {client} logged entry {n}: the tender {key} moored at berth {n} of Wrack Pier."
        );
        let first_try = Instant::now();
        loop {
            let reply = agent.request(
                "tools/call",
                json!({"name": "alayasiki_ingest",
                       "arguments": {"content": content, "idempotency_key": key, "wait": wait}}),
            );
            if let Some(error) = reply.get("error") {
                assert_eq!(error["code"], -32001, "client {client}: {reply}");
                seen.lost += 1;
                assert!(
                    first_try.elapsed() < RETRIED_WITHIN,
                    "client {client}: {key} not acknowledged within {RETRIED_WITHIN:?}: {reply}"
                );
                // A client that retries at once is answered at once while
                // no owner is up yet: a short pause spares the two cores.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            let result = &reply["result"];
            assert!(result.is_object(), "client {client}: {reply}");
            assert_ne!(result["isError"], true, "client {client}: {reply}");
            let receipt: Value =
                serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
            let id = receipt["document_id"].as_str().expect("a document id");
            seen.acknowledged.push((key, id.to_string()));
            seen.slowest = seen.slowest.max(first_try.elapsed());
            break;
        }
    }
    seen
}

/// The documents of `dir` as `export` writes them, read in-process once
/// every client and owner has stopped.
fn exported(dir: &Path) -> Vec<Value> {
    let out = std::process::Command::new(common::BIN)
        .args(["export", "--data-dir"])
        .arg(dir)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .output()
        .expect("run alayasiki-mcp export");
    assert!(
        out.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().expect("an export header");
    let documents: Vec<Value> = lines.collect();
    assert_eq!(header["documents"], documents.len(), "{header}");
    documents
}

/// `kill -9` of the owner at random moments while four clients ingest,
/// fifty times: a request in flight gets OWNER_LOST and is retried with its
/// idempotency key; afterwards every acknowledged write is stored exactly
/// once (and indexed), and every client's next request is served in the
/// session it had, by one owner.
#[test]
fn fifty_owner_kills_under_four_ingesting_clients_lose_and_double_nothing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let began = Instant::now();
    let dir = TempDir::new("owner-kills");
    let mut agents: Vec<Server> = (0..INGESTING_CLIENTS).map(|_| client(dir.path())).collect();
    let stop = AtomicBool::new(false);
    let mut rng = Rng::seeded();
    let (seen, killed) = std::thread::scope(|s| {
        let loops: Vec<_> = agents
            .iter_mut()
            .enumerate()
            .map(|(i, agent)| {
                let stop = &stop;
                s.spawn(move || ingest_until_stopped(agent, i, stop))
            })
            .collect();
        // The killer: waits for each new owner, lets it serve for a random
        // moment, kills it.
        let _stop_clients = StopOnDrop(&stop);
        let mut killed = Vec::new();
        while killed.len() < KILLS && !stop.load(Ordering::SeqCst) {
            let pid = recorded_owner(dir.path()).filter(|pid| !killed.contains(pid) && alive(*pid));
            let Some(pid) = pid else {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            };
            std::thread::sleep(Duration::from_millis(
                rng.below(KILL_WITHIN.as_millis() as u64),
            ));
            let status = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
            assert!(status.success(), "kill -9 {pid}");
            killed.push(pid);
        }
        drop(_stop_clients);
        let seen: Vec<Ingested> = loops.into_iter().map(|h| h.join().unwrap()).collect();
        (seen, killed.len())
    });
    assert_eq!(killed, KILLS, "the clients stopped early");
    let lost: usize = seen.iter().map(|s| s.lost).sum();
    let acknowledged: usize = seen.iter().map(|s| s.acknowledged.len()).sum();
    let slowest = seen.iter().map(|s| s.slowest).max().unwrap_or_default();
    eprintln!(
        "{KILLS} owners killed under {INGESTING_CLIENTS} clients in {:?}: {acknowledged} writes \
         acknowledged, {lost} requests answered OWNER_LOST and retried, the slowest write \
         acknowledged {slowest:?} after it was first sent",
        began.elapsed()
    );
    assert!(lost > 0, "no kill caught a request in flight");
    // Every client's next request is served, in the session it had.
    for agent in agents.iter_mut() {
        let status = agent.ok("alayasiki_status", json!({}));
        assert_eq!(status["owner"]["clients"], INGESTING_CLIENTS, "{status}");
    }
    assert_eq!(owners_of(dir.path()), 1, "one owner after the kills");
    // What was acknowledged before a kill and not yet indexed is indexed
    // by the owners that replay the journal.
    assert!(
        wait_until(Duration::from_secs(20), || {
            let jobs = &agents[0].ok("alayasiki_status", json!({}))["jobs"];
            jobs["pending"] == 0
        }),
        "indexing did not finish"
    );
    let last_owner = owner_pid(dir.path());
    for agent in agents {
        let (status, _) = agent.close();
        assert!(status.success(), "{status:?}");
    }
    stop_owner(dir.path());
    assert!(
        wait_until(Duration::from_secs(10), || !alive(last_owner)),
        "the last owner stayed"
    );
    // Every acknowledged write is there exactly once, as the document its
    // acknowledgement named, and indexed; nothing else is.
    let documents = exported(dir.path());
    let mut stored: std::collections::HashMap<String, Vec<&Value>> = Default::default();
    for d in &documents {
        let key = d["idempotency_key"].as_str().expect("a key").to_string();
        stored.entry(key).or_default().push(d);
    }
    for (key, id) in seen.iter().flat_map(|s| &s.acknowledged) {
        let copies = stored.remove(key).unwrap_or_default();
        assert_eq!(copies.len(), 1, "{key} is stored {} times", copies.len());
        assert_eq!(copies[0]["id"], id.as_str(), "{key}: {}", copies[0]);
        assert_eq!(copies[0]["state"], "ready", "{key}: {}", copies[0]);
    }
    assert!(stored.is_empty(), "never acknowledged: {:?}", stored.keys());
    eprintln!("checked in {:?}", began.elapsed());
}

/// Names a build of this crate as another version, for
/// [`an_owner_of_another_version_is_drained_and_replaced`]
/// (`scripts/owner_skew_test.sh` builds one and sets it).
const OTHER_VERSION_BIN: &str = "ALAYASIKI_OTHER_VERSION_BIN";

/// Stops the owner of a directory when dropped, also by a panic (owners
/// that wait a long idle period would outlive a failed test).
struct StopsOwner<'a>(&'a Path);

impl Drop for StopsOwner<'_> {
    fn drop(&mut self) {
        stop_owner(self.0);
    }
}

/// An agent of another version (the one a user upgraded away from) has
/// the owner; a client of this version is served by it, and once the last
/// of their clients leaves it stops at once, long before its idle period;
/// the next client starts an owner of this version, which has every write
/// of both.
#[test]
#[ignore = "needs a build of another version: scripts/owner_skew_test.sh"]
fn an_owner_of_another_version_is_drained_and_replaced() {
    let other = std::env::var_os(OTHER_VERSION_BIN)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("{OTHER_VERSION_BIN} names no binary"));
    let version = |bin: &Path| {
        let out = std::process::Command::new(bin).arg("--version").output();
        let out = out.expect("run --version");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let other_version = version(&other);
    let this_version = format!("alayasiki-mcp {}", env!("CARGO_PKG_VERSION"));
    assert_ne!(other_version, this_version, "{OTHER_VERSION_BIN}");
    let dir = TempDir::new("owner-skew");
    let _stops_owner = StopsOwner(dir.path());
    // Owners stay five minutes with no client: one that stops sooner made
    // way.
    let env = &[
        ("ALAYASIKI_IN_PROCESS", ""),
        ("ALAYASIKI_OWNER_IDLE_SECS", "300"),
    ];
    let mut upgraded_away = Server::start_program(&other, dir.path(), env);
    upgraded_away.initialize();
    let before = upgraded_away.ingest("The schooner Whimbrel winters at Carrick Slip.");
    let old_owner = owner_pid(dir.path());
    let status = upgraded_away.ok("alayasiki_status", json!({}));
    let old_owner_version = status["owner"]["version"].clone();
    assert_eq!(
        format!("alayasiki-mcp {}", old_owner_version.as_str().unwrap()),
        other_version,
        "{status}"
    );
    // A client of this version is served by the owner it finds, and sees
    // its writes; the other version's client sees this one's.
    let mut upgraded = Server::capturing(dir.path(), &[], env);
    upgraded.initialize();
    let status = upgraded.ok("alayasiki_status", json!({}));
    assert_eq!(status["owner"]["pid"], old_owner, "{status}");
    assert_eq!(status["owner"]["version"], old_owner_version, "{status}");
    assert_eq!(status["owner"]["clients"], 2, "{status}");
    assert!(found(
        &mut upgraded,
        "Where does the Whimbrel winter?",
        &before
    ));
    let during = upgraded.ingest("The ketch Godwit is laid up at Penhallow Hard.");
    assert!(found(
        &mut upgraded_away,
        "Where is the Godwit laid up?",
        &during
    ));
    assert!(
        upgraded.stderr().contains("makes way for this version"),
        "{}",
        upgraded.stderr()
    );
    // The other version's agent leaves: the owner serves the client still
    // connected.
    let (status, _) = upgraded_away.close();
    assert!(status.success(), "{status:?}");
    assert!(found(
        &mut upgraded,
        "Where does the Whimbrel winter?",
        &before
    ));
    assert!(alive(old_owner));
    // Its last client leaves: it stops at once, not after its idle period.
    let (status, _) = upgraded.close();
    assert!(status.success(), "{status:?}");
    let left = Instant::now();
    assert!(
        wait_until(Duration::from_secs(10), || !alive(old_owner)),
        "the owner of another version stayed"
    );
    eprintln!(
        "the owner of another version stopped {:?} after its last client left",
        left.elapsed()
    );
    // The next client starts an owner of this version, with every write.
    let mut next = client_with(dir.path(), env);
    let status = next.ok("alayasiki_status", json!({}));
    assert_ne!(status["owner"]["pid"], old_owner, "{status}");
    assert_eq!(status["owner"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(found(&mut next, "Where does the Whimbrel winter?", &before));
    assert!(found(&mut next, "Where is the Godwit laid up?", &during));
    assert_eq!(owners_of(dir.path()), 1);
    next.close();
}

#[test]
fn working_memory_is_shared_by_an_identity_and_outlives_a_client_restart() {
    let dir = TempDir::new("owner-working-memory");
    // The owner stays while the client restarts.
    let staying = [
        ("ALAYASIKI_IN_PROCESS", ""),
        ("ALAYASIKI_OWNER_IDLE_SECS", "30"),
    ];
    let mut first = client_with(dir.path(), &staying);
    let mut beside = client_with(dir.path(), &staying);
    first.ok(
        "alayasiki_memory_write",
        json!({"session_id": "task-7", "content": "Hypothesis: the tide gauge drifts after midnight."}),
    );
    // Another session of the same identity reads it at once.
    let read = beside.ok("alayasiki_memory_read", json!({"session_id": "task-7"}));
    assert!(read.to_string().contains("tide gauge drifts"), "{read}");
    // The writing client exits and comes back: the graph is still there.
    let (status, _) = first.close();
    assert!(status.success());
    beside.close();
    let owner = owner_pid(dir.path());
    let mut back = client_with(dir.path(), &staying);
    assert_eq!(owner_pid(dir.path()), owner);
    let read = back.ok("alayasiki_memory_read", json!({"session_id": "task-7"}));
    assert!(read.to_string().contains("tide gauge drifts"), "{read}");
    // Another identity does not see it.
    let mut other = client_with(
        dir.path(),
        &[
            ("ALAYASIKI_IN_PROCESS", ""),
            ("ALAYASIKI_OWNER_IDLE_SECS", "30"),
            ("ALAYASIKI_MCP_SUBJECT", "another-agent"),
        ],
    );
    let (_, theirs) = other.call("alayasiki_memory_read", json!({"session_id": "task-7"}));
    assert!(
        !theirs.to_string().contains("tide gauge drifts"),
        "{theirs}"
    );
    back.close();
    other.close();
    stop_owner(dir.path());
}
