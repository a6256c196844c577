//! The HTTP client a node uses to reach the cluster.
//!
//! Every request goes to one node, the last that answered, and moves on to
//! the next when that node cannot be reached or answers that it has no
//! leader (nothing was applied then; another node may have one); rqlite
//! forwards writes and leader-level reads to its leader itself. Each request has a deadline
//! covering connect, send and the whole body, and the body read is
//! bounded, so a dead or dripping node can cost a caller time but never
//! hang it. A caller with a deadline of its own (a write's, see
//! `replica`) passes it: the request, and the nodes it moves on to, end
//! by then (a frozen node accepts connections and never answers, so
//! without it each node tried would cost the client's whole timeout).
//!
//! Writes are whole transactions (one `POST /db/execute?transaction`, one
//! Raft entry): they apply entirely or not at all, and a success means the
//! cluster committed them. A write whose answer never came may or may not
//! have applied ([`ClusterError::Uncertain`]); [`ClusterClient::commit`]
//! retries such writes until a deadline, which is safe only for statements
//! that apply once however often they run (upserts keyed by an operation
//! id). rqlite's queued writes (`?queue`) acknowledge before the cluster
//! commits; they are never used.
//!
//! Must never: retry a write that is not declared idempotent, report
//! success before the cluster committed, or put credentials anywhere but
//! the `Authorization` header.

use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::address::ClusterAddress;
use super::wire::{self, Executed, Failure, Param, Rows, Statement};
use crate::limits::{
    CLUSTER_CONNECT_TIMEOUT, CLUSTER_RETRY_PAUSE, MAX_CLUSTER_RESPONSE_BYTES,
    MAX_CLUSTER_STATEMENTS,
};

/// The least time a request is given however close its caller's deadline
/// is: enough for a node to answer that it has no leader, so that a
/// caller out of time still learns why once.
pub const MIN_REQUEST_TIME: Duration = Duration::from_millis(200);

/// What a read asks of the node that serves it (rqlite's read levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadLevel {
    /// The node's own copy, however far behind the leader it is
    /// (`level=none`): the cheapest, and served without a quorum.
    Local,
    /// The leader's copy, checked locally by the leader (`level=weak`):
    /// sees every committed write unless the leader was deposed in the
    /// last election timeout without knowing it.
    Leader,
    /// Through the Raft log (`level=strong`): sees every write committed
    /// before the read began. One consensus round per read.
    Consensus,
}

impl ReadLevel {
    fn param(self) -> &'static str {
        match self {
            ReadLevel::Local => "none",
            ReadLevel::Leader => "weak",
            ReadLevel::Consensus => "strong",
        }
    }
}

/// Why a cluster request failed. The text is for the log: it may name a
/// node or quote SQL, so it never goes to a client as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterError {
    /// The cluster has no leader (no quorum): writes and leader reads are
    /// refused until it elects one. Nothing was applied.
    NoQuorum(String),
    /// No node could be reached; nothing was sent to any.
    Unreachable(String),
    /// A request was sent but its answer never came: a write may or may
    /// not have applied.
    Uncertain(String),
    /// The cluster refused the statements (an SQL error); a transaction
    /// applied none of them.
    Rejected(String),
    /// The credentials were refused.
    Unauthorized(String),
    /// An answer this client does not understand.
    Protocol(String),
}

impl ClusterError {
    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ClusterError::NoQuorum(_) | ClusterError::Unreachable(_) | ClusterError::Uncertain(_)
        )
    }
}

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClusterError::NoQuorum(d) => write!(f, "the cluster has no leader: {d}"),
            ClusterError::Unreachable(d) => write!(f, "no cluster node reachable: {d}"),
            ClusterError::Uncertain(d) => write!(f, "no answer from the cluster: {d}"),
            ClusterError::Rejected(d) => write!(f, "the cluster refused the statements: {d}"),
            ClusterError::Unauthorized(d) => write!(f, "the cluster refused the credentials: {d}"),
            ClusterError::Protocol(d) => write!(f, "unexpected answer from the cluster: {d}"),
        }
    }
}

impl std::error::Error for ClusterError {}

/// One node as the cluster describes itself (`GET /nodes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNode {
    pub id: String,
    /// Its HTTP API, as the node advertises it.
    pub api_addr: String,
    pub voter: bool,
    pub reachable: bool,
    pub leader: bool,
}

/// The client. Cheap to share: requests from many threads run at once.
pub struct ClusterClient {
    address: ClusterAddress,
    agent: ureq::Agent,
    authorization: Option<String>,
    /// The node that answered last: requests start there.
    preferred: AtomicUsize,
    timeout: Duration,
}

impl ClusterClient {
    /// A client whose every request ends within `timeout`.
    pub fn new(address: ClusterAddress, timeout: Duration) -> Result<ClusterClient, String> {
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(CLUSTER_CONNECT_TIMEOUT)))
            .http_status_as_error(false)
            .max_redirects(0);
        if let Some(path) = &address.ca_file {
            let pem = std::fs::read(path)
                .map_err(|e| format!("cannot read the cluster CA file {path}: {e}"))?;
            let certs = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect::<Vec<_>>();
            if certs.is_empty() {
                return Err(format!("the cluster CA file {path} holds no certificate"));
            }
            config = config.tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)))
                    .build(),
            );
        }
        let authorization = address.credentials.as_ref().map(|(user, password)| {
            format!(
                "Basic {}",
                crate::base64::encode(format!("{user}:{password}").as_bytes())
            )
        });
        Ok(ClusterClient {
            address,
            agent: config.build().into(),
            authorization,
            preferred: AtomicUsize::new(0),
            timeout,
        })
    }

    pub fn address(&self) -> &ClusterAddress {
        &self.address
    }

    /// Runs `statements` as one transaction: all applied and committed by
    /// the cluster, or none. Sent once: see [`ClusterClient::commit`].
    pub fn transaction(&self, statements: &[Statement]) -> Result<Vec<Executed>, ClusterError> {
        self.transaction_by(statements, None)
    }

    /// [`ClusterClient::transaction`], answered by `deadline` when one is
    /// given (else within the client's timeout).
    pub fn transaction_by(
        &self,
        statements: &[Statement],
        deadline: Option<Instant>,
    ) -> Result<Vec<Executed>, ClusterError> {
        let body = self.post("/db/execute?transaction", statements, true, deadline)?;
        let results = wire::results(&body, statements.len()).map_err(|f| failed(f, true))?;
        Ok(results.iter().map(wire::executed).collect())
    }

    /// [`ClusterClient::transaction`], tried again after every transient
    /// failure until it succeeds or `deadline` passes. Only for statements
    /// that apply once however often they run.
    pub fn commit(
        &self,
        statements: &[Statement],
        deadline: Instant,
    ) -> Result<Vec<Executed>, ClusterError> {
        loop {
            match self.transaction(statements) {
                Err(e) if e.is_transient() && Instant::now() + CLUSTER_RETRY_PAUSE < deadline => {
                    log::debug!("cluster write retried: {e}");
                    std::thread::sleep(CLUSTER_RETRY_PAUSE);
                }
                other => return other,
            }
        }
    }

    /// Runs read-only `statements` at `level`, one [`Rows`] each.
    pub fn query(
        &self,
        statements: &[Statement],
        level: ReadLevel,
    ) -> Result<Vec<Rows>, ClusterError> {
        self.query_by(statements, level, None)
    }

    /// [`ClusterClient::query`], answered by `deadline` when one is given.
    pub fn query_by(
        &self,
        statements: &[Statement],
        level: ReadLevel,
        deadline: Option<Instant>,
    ) -> Result<Vec<Rows>, ClusterError> {
        let path = format!("/db/query?level={}", level.param());
        let body = self.post(&path, statements, false, deadline)?;
        let results = wire::results(&body, statements.len()).map_err(|f| failed(f, false))?;
        results
            .iter()
            .map(wire::rows)
            .collect::<Result<_, _>>()
            .map_err(ClusterError::Protocol)
    }

    /// The first column of the first row `sql` reads at the leader, as
    /// text (`None` when there is no row, or it is not text).
    pub fn query_text(
        &self,
        sql: &str,
        params: Vec<Param>,
    ) -> Result<Option<String>, ClusterError> {
        self.query_text_by(sql, params, None)
    }

    /// [`ClusterClient::query_text`], answered by `deadline` when one is
    /// given.
    pub fn query_text_by(
        &self,
        sql: &str,
        params: Vec<Param>,
        deadline: Option<Instant>,
    ) -> Result<Option<String>, ClusterError> {
        let rows = self.query_by(&[Statement::new(sql, params)], ReadLevel::Leader, deadline)?;
        Ok(rows[0]
            .rows
            .first()
            .and_then(|r| r[0].as_str())
            .map(str::to_string))
    }

    /// The cluster's nodes, voters and not, as the first node that answers
    /// sees them.
    pub fn nodes(&self) -> Result<Vec<ClusterNode>, ClusterError> {
        let body = self.send(
            |node, _| {
                let req = self.agent.get(format!("{node}/nodes?nonvoters"));
                match &self.authorization {
                    Some(a) => req.header("Authorization", a).call(),
                    None => req.call(),
                }
            },
            false,
            None,
        )?;
        let map = body
            .as_object()
            .ok_or_else(|| ClusterError::Protocol("/nodes is not an object".into()))?;
        let mut nodes: Vec<ClusterNode> = map
            .iter()
            .map(|(id, n)| ClusterNode {
                id: id.clone(),
                api_addr: n["api_addr"].as_str().unwrap_or("").to_string(),
                voter: n["voter"].as_bool().unwrap_or(false),
                reachable: n["reachable"].as_bool().unwrap_or(false),
                leader: n["leader"].as_bool().unwrap_or(false),
            })
            .collect();
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(nodes)
    }

    /// Writes one node's consistent snapshot of its database (rqlite's
    /// `/db/backup` of that node's own copy) to `out`, streamed, from the
    /// first node that answers; returns its size. A follower's snapshot may
    /// be a little behind the leader's, never torn.
    pub fn backup(&self, out: &mut dyn std::io::Write) -> Result<u64, ClusterError> {
        let n = self.address.nodes.len();
        let mut last = String::new();
        for k in 0..n {
            let node = &self.address.nodes[(self.preferred.load(Ordering::Relaxed) + k) % n];
            let req = self.agent.get(format!("{node}/db/backup?noleader"));
            let sent = match &self.authorization {
                Some(a) => req.header("Authorization", a).call(),
                None => req.call(),
            };
            let mut response = match sent {
                Ok(r) => r,
                Err(e) => {
                    last = format!("{node}: {e}");
                    continue;
                }
            };
            match response.status().as_u16() {
                200 => {}
                401 | 403 => {
                    return Err(ClusterError::Unauthorized(format!(
                        "{node}: backup refused"
                    )))
                }
                status => {
                    last = format!("{node}: backup answered HTTP {status}");
                    continue;
                }
            }
            let mut body = response.body_mut().with_config().limit(u64::MAX).reader();
            return std::io::copy(&mut body, out)
                .map_err(|e| ClusterError::Unreachable(format!("{node}: backup cut off: {e}")));
        }
        Err(ClusterError::Unreachable(last))
    }

    /// Waits until the cluster has a leader, or `deadline` passes (then
    /// the last reason there is none).
    pub fn await_leader(&self, deadline: Instant) -> Result<(), ClusterError> {
        loop {
            let why = match self.nodes() {
                Ok(nodes) if nodes.iter().any(|n| n.leader) => return Ok(()),
                Ok(_) => ClusterError::NoQuorum("no node is the leader".into()),
                Err(e) if e.is_transient() => e,
                Err(e) => return Err(e),
            };
            if Instant::now() + CLUSTER_RETRY_PAUSE >= deadline {
                return Err(why);
            }
            std::thread::sleep(CLUSTER_RETRY_PAUSE);
        }
    }

    fn post(
        &self,
        path: &str,
        statements: &[Statement],
        write: bool,
        deadline: Option<Instant>,
    ) -> Result<Value, ClusterError> {
        if statements.is_empty() || statements.len() > MAX_CLUSTER_STATEMENTS {
            return Err(ClusterError::Protocol(format!(
                "{} statements in one request (1 to {MAX_CLUSTER_STATEMENTS})",
                statements.len()
            )));
        }
        let body = Value::Array(
            statements
                .iter()
                .map(Statement::to_json)
                .collect::<Result<_, _>>()
                .map_err(ClusterError::Protocol)?,
        );
        let sep = if path.contains('?') { '&' } else { '?' };
        self.send(
            |node, time| {
                // rqlite's own deadline for reaching the leader and
                // applying, a little inside ours so that its answer (not
                // our timeout) says why.
                let inner = time.mul_f32(0.8).as_millis().max(1);
                let req = self
                    .agent
                    .post(format!("{node}{path}{sep}timeout={inner}ms"))
                    .config()
                    .timeout_global(Some(time))
                    .timeout_connect(Some(time.min(CLUSTER_CONNECT_TIMEOUT)))
                    .build();
                match &self.authorization {
                    Some(a) => req.header("Authorization", a).send_json(&body),
                    None => req.send_json(&body),
                }
            },
            write,
            deadline,
        )
    }

    /// The time a request started now may take when `nodes_left` nodes
    /// may still be tried: the client's timeout, cut to a fair share of
    /// what is left before `deadline` (at least [`MIN_REQUEST_TIME`]), so
    /// that one frozen node cannot take all of it from the others.
    fn request_time(&self, deadline: Option<Instant>, nodes_left: usize) -> Duration {
        match deadline {
            Some(d) => {
                let share = d.saturating_duration_since(Instant::now()) / nodes_left.max(1) as u32;
                self.timeout.min(share).max(MIN_REQUEST_TIME)
            }
            None => self.timeout,
        }
    }

    /// Sends with `request` (given the node and the time it may take) to
    /// each node in turn from the preferred one until one answers, or
    /// `deadline` passes (after the first). Once a write has been sent, a
    /// lost answer is [`ClusterError::Uncertain`] and no other node is
    /// tried.
    fn send(
        &self,
        request: impl Fn(&str, Duration) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        write: bool,
        deadline: Option<Instant>,
    ) -> Result<Value, ClusterError> {
        let n = self.address.nodes.len();
        let first = self.preferred.load(Ordering::Relaxed) % n;
        let mut last = String::new();
        let mut no_quorum = None;
        for k in 0..n {
            if k > 0 && deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let i = (first + k) % n;
            let node = &self.address.nodes[i];
            // Until this node answers, the next request starts at the next.
            self.preferred.store((i + 1) % n, Ordering::Relaxed);
            let mut response = match request(node, self.request_time(deadline, n - k)) {
                Ok(r) => r,
                Err(e) if write && !unsent(&e) => {
                    return Err(ClusterError::Uncertain(format!("{node}: {e}")));
                }
                Err(e) => {
                    last = format!("{node}: {e}");
                    continue;
                }
            };
            let status = response.status().as_u16();
            let text = match response
                .body_mut()
                .with_config()
                .limit(MAX_CLUSTER_RESPONSE_BYTES)
                .lossy_utf8(true)
                .read_to_string()
            {
                Ok(t) => t,
                Err(e) if write => return Err(ClusterError::Uncertain(format!("{node}: {e}"))),
                Err(e) => {
                    last = format!("{node}: {e}");
                    continue;
                }
            };
            let excerpt = || {
                format!(
                    "{node}: HTTP {status}: {}",
                    crate::model_endpoint::excerpt(&text)
                )
            };
            // "leader not found", "store not open": nothing was applied,
            // and another node may know better (this one may be cut off,
            // or just starting).
            if status == 503 {
                no_quorum = Some(excerpt());
                continue;
            }
            self.preferred.store(i, Ordering::Relaxed);
            return match status {
                200..=299 => {
                    serde_json::from_str(&text).map_err(|_| ClusterError::Protocol(excerpt()))
                }
                401 | 403 => Err(ClusterError::Unauthorized(excerpt())),
                // rqlite's own deadline passed: the write may still apply.
                _ if write && text.contains("timeout") => Err(ClusterError::Uncertain(excerpt())),
                _ => Err(ClusterError::Protocol(excerpt())),
            };
        }
        Err(match no_quorum {
            Some(why) => ClusterError::NoQuorum(why),
            None => ClusterError::Unreachable(last),
        })
    }
}

/// What a failure a response reports means for its caller.
fn failed(f: Failure, write: bool) -> ClusterError {
    match f {
        Failure::Statement(e) => ClusterError::Rejected(e),
        // Said before anything was tried: nothing applied.
        Failure::Request(e) if e.contains("leader not found") || e.contains("not leader") => {
            ClusterError::NoQuorum(e)
        }
        // A forwarded write whose leader failed, a commit whose leadership
        // was lost: it may have applied.
        Failure::Request(e) if write => ClusterError::Uncertain(e),
        Failure::Request(e) => ClusterError::NoQuorum(e),
    }
}

/// Whether the request certainly never reached the node (so another node
/// may be tried even for a write).
fn unsent(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::AddrNotAvailable
        ),
        ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => true,
        _ => false,
    }
}
