//! One memory for every agent on the machine: `alayasiki-mcp` on stdio
//! reaches the data directory's owner over its socket, starting it when
//! none answers. Through the real binary: several clients on one
//! directory, clients started at the same instant, an owner killed under
//! its clients, an owner that stops when idle and comes back, and a
//! directory a server keeps to itself.
#![cfg(unix)]

mod common;

use common::{Server, TempDir, TIMEOUT};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// The environment of a client that reaches the owner (the harness serves
/// in-process otherwise); the owner it starts inherits it and stops one
/// second after its last client leaves.
const SHARED: &[(&str, &str)] = &[
    ("ALAYASIKI_IN_PROCESS", ""),
    ("ALAYASIKI_OWNER_IDLE_SECS", "1"),
];

fn client(dir: &Path) -> Server {
    let mut s = Server::start_with(dir, SHARED);
    s.initialize();
    s
}

/// The pid the directory's owner record names.
fn owner_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("alayasiki.owner")).expect("an owner record");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["program"], "alayasiki-mcp owner", "{v}");
    v["pid"].as_u64().unwrap() as u32
}

fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped by the client that started it)
    // counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.split(") ")
                .nth(1)
                .is_some_and(|rest| rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Processes running `alayasiki-mcp owner` on `dir`.
fn owners_of(dir: &Path) -> usize {
    let want = format!("owner\0--data-dir\0{}\0", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&want))
        })
        .count()
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Stops the owner of `dir` (SIGTERM) if one still runs.
fn stop_owner(dir: &Path) {
    if let Ok(text) = std::fs::read_to_string(dir.join("alayasiki.owner")) {
        if let Some(pid) = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["pid"].as_u64())
        {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
        }
    }
}

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
