//! A real rqlite cluster on loopback for the cluster tests: `rqlited`
//! processes on free ports, each with its own data directory, started,
//! killed, paused and restarted by the test, and all stopped on drop.
//!
//! The server is `ALAYASIKI_RQLITED`, else the pinned build
//! `scripts/rqlite_install.sh` puts under `target/rqlite/`. Without
//! either, the tests say so and pass, except under CI (`CI` set), where
//! `scripts/test` installs it and a missing server fails them.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use alayasiki_mcp::store::cluster::{ClusterAddress, ClusterClient};

/// Raft timeouts shorter than rqlite's defaults (1 s), so that elections
/// in the tests take well under a second.
pub const ELECTION_TIMEOUT: Duration = Duration::from_millis(500);

/// The `rqlited` to run, or `None` (outside CI) to skip.
pub fn rqlited() -> Option<PathBuf> {
    let pinned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/rqlite/8.26.8-0/package/bin/rqlited");
    let found = std::env::var_os("ALAYASIKI_RQLITED")
        .map(PathBuf::from)
        .or_else(|| pinned.exists().then_some(pinned));
    match found {
        Some(p) => {
            assert!(
                p.exists(),
                "ALAYASIKI_RQLITED={} does not exist",
                p.display()
            );
            Some(p)
        }
        None if std::env::var_os("CI").is_some() => {
            panic!("no rqlited: run scripts/rqlite_install.sh (scripts/test does)")
        }
        None => {
            eprintln!("skipped: no rqlited (run scripts/rqlite_install.sh)");
            None
        }
    }
}

/// `n` distinct free ports. Every listener is held until all are chosen:
/// a port released at once can come back from the next bind to port 0
/// before the node given it has bound it (two nodes were once handed the
/// same port, and the second failed to start).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

pub struct Node {
    pub id: String,
    pub http: u16,
    pub raft: u16,
    dir: PathBuf,
    child: Option<Child>,
    paused: bool,
}

impl Node {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.http)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

pub struct Cluster {
    bin: PathBuf,
    root: PathBuf,
    pub nodes: Vec<Node>,
    /// One cluster at a time: elections of 500 ms on a loaded 2-core CI
    /// machine stay meaningful only if the clusters do not compete.
    _turn: std::sync::MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Cluster {
    /// Starts `n` voters, the first bootstrapping the cluster and the rest
    /// joining it, and waits until all of them have the same leader.
    pub fn start(bin: &Path, n: usize) -> Cluster {
        let root = std::env::temp_dir().join(format!(
            "alayasiki-rqlite-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&root).unwrap();
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let mut cluster = Cluster {
            bin: bin.to_path_buf(),
            root,
            nodes: Vec::new(),
            _turn: turn,
        };
        let ports = free_ports(2 * n);
        for i in 0..n {
            let id = format!("n{i}");
            cluster.nodes.push(Node {
                dir: cluster.root.join(&id),
                id,
                http: ports[2 * i],
                raft: ports[2 * i + 1],
                child: None,
                paused: false,
            });
            cluster.spawn(i);
            if i == 0 {
                cluster.wait_for_leader(Duration::from_secs(20));
            }
        }
        // Generous: on a loaded two-core machine three rqlite nodes joining
        // once took longer than 30 s; a healthy start returns in a few.
        cluster.wait_for_members(n, Duration::from_secs(60));
        cluster
    }

    fn spawn(&mut self, i: usize) {
        let join = (i > 0).then(|| format!("127.0.0.1:{}", self.nodes[0].raft));
        let node = &self.nodes[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.root.join(format!("{}.log", node.id)))
            .unwrap();
        let timeout = format!("{}ms", ELECTION_TIMEOUT.as_millis());
        let mut cmd = Command::new(&self.bin);
        cmd.args(["-node-id", &node.id])
            .args(["-http-addr", &format!("127.0.0.1:{}", node.http)])
            .args(["-raft-addr", &format!("127.0.0.1:{}", node.raft)])
            .args(["-raft-timeout", &timeout])
            .args(["-raft-election-timeout", &timeout]);
        if let Some(j) = &join {
            cmd.args(["-join", j]);
        }
        let child = cmd
            .arg(&node.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("spawn rqlited");
        self.nodes[i].child = Some(child);
        self.nodes[i].paused = false;
    }

    /// `rqlite://` with every node.
    pub fn address(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.http))
            .collect();
        format!("rqlite://{}", hosts.join(","))
    }

    /// `rqlite://` with node `i` only (its own copy, for replica checks).
    pub fn address_of(&self, i: usize) -> String {
        format!("rqlite://127.0.0.1:{}", self.nodes[i].http)
    }

    pub fn client(&self, timeout: Duration) -> ClusterClient {
        ClusterClient::new(ClusterAddress::parse(&self.address()).unwrap(), timeout).unwrap()
    }

    pub fn client_of(&self, i: usize, timeout: Duration) -> ClusterClient {
        ClusterClient::new(ClusterAddress::parse(&self.address_of(i)).unwrap(), timeout).unwrap()
    }

    /// The index of the node every running node agrees is the leader.
    pub fn leader(&self) -> Option<usize> {
        let mut seen = None;
        for (i, n) in self.nodes.iter().enumerate() {
            if !n.is_running() || n.paused {
                continue;
            }
            let leader_id = self
                .client_of(i, Duration::from_secs(2))
                .nodes()
                .ok()?
                .into_iter()
                .find(|m| m.leader)?
                .id;
            let at = self.nodes.iter().position(|m| m.id == leader_id)?;
            if seen.is_some_and(|s| s != at) {
                return None;
            }
            seen = Some(at);
        }
        seen
    }

    pub fn wait_for_leader(&self, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            if let Some(l) = self.leader() {
                return l;
            }
            assert!(Instant::now() < deadline, "no leader within {within:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_for_members(&self, n: usize, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let members = self
                .client_of(0, Duration::from_secs(2))
                .nodes()
                .map(|m| m.iter().filter(|x| x.reachable).count())
                .unwrap_or(0);
            if members == n && self.leader().is_some() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{n} members not up within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `kill -9`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.nodes[i].child.take() {
            if self.nodes[i].paused {
                signal(c.id(), "CONT");
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        self.nodes[i].paused = false;
    }

    /// Starts a killed node again on its data directory.
    pub fn restart(&mut self, i: usize) {
        assert!(!self.nodes[i].is_running());
        self.spawn(i);
    }

    /// `SIGSTOP`: the process is frozen, its sockets still open.
    pub fn pause(&mut self, i: usize) {
        signal(self.nodes[i].pid().unwrap(), "STOP");
        self.nodes[i].paused = true;
    }

    /// `SIGCONT`.
    pub fn resume(&mut self, i: usize) {
        signal(self.nodes[i].pid().unwrap(), "CONT");
        self.nodes[i].paused = false;
    }

    /// Waits until every running node has applied as far as the leader
    /// committed (its `/status` says so).
    pub fn wait_converged(&self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let indexes: Vec<Option<(u64, u64)>> = self
                .nodes
                .iter()
                .filter(|n| n.is_running())
                .map(|n| applied(&n.url()))
                .collect();
            let leader_commit = indexes.iter().flatten().map(|x| x.1).max();
            if let Some(c) = leader_commit {
                if indexes.iter().all(|x| x.is_some_and(|(a, _)| a >= c)) {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "replicas not converged: {indexes:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until every running node's own copy holds the same rows
    /// (per-table digests), and returns them.
    pub fn wait_replicas_equal(&self, within: Duration) -> Vec<(String, u64, String)> {
        use alayasiki_mcp::store::cluster::copy::digests_of_cluster;
        use alayasiki_mcp::store::cluster::ReadLevel;
        let deadline = Instant::now() + within;
        loop {
            let copies: Vec<_> = (0..self.nodes.len())
                .filter(|&i| self.nodes[i].is_running())
                .map(|i| {
                    digests_of_cluster(&self.client_of(i, Duration::from_secs(5)), ReadLevel::Local)
                        .ok()
                })
                .collect();
            if copies.iter().all(Option::is_some) && copies.windows(2).all(|w| w[0] == w[1]) {
                return copies[0].clone().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "replicas still differ after {within:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The data directory of the logs, for a failing test's message.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A node's (applied, commit) Raft indexes.
fn applied(url: &str) -> Option<(u64, u64)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .build()
        .into();
    let body: serde_json::Value = agent
        .get(format!("{url}/status"))
        .call()
        .ok()?
        .body_mut()
        .read_json()
        .ok()?;
    let raft = &body["store"]["raft"];
    Some((
        raft["applied_index"].as_u64()?,
        raft["commit_index"].as_u64()?,
    ))
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{name} {pid}");
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        } else {
            eprintln!("rqlite logs kept in {}", self.root.display());
        }
    }
}
