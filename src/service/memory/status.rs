//! What a caller can learn about its memory (`alayasiki_status`) and what
//! it is charged for using it.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::Memory;
use crate::clock::now_ms;
use crate::error::Result;
use crate::service::principal::Permission;
use crate::service::working_memory::WorkingMemoryStatus;
use crate::store::{RecentFailure, UsageRecord, UsageTotals};

/// Failed documents `alayasiki_status` lists (the most recent first); all
/// of them are counted in `jobs.failed` and `jobs.failed_by_reason`.
pub const STATUS_RECENT_FAILURES: usize = 10;

/// Counts and settings for `alayasiki_status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub version: &'static str,
    /// Where the server keeps its files: told only to callers with the
    /// admin permission (the local stdio identity, the admin role), so a
    /// remote reader learns counts, not the server's paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    pub tenant: String,
    pub subject: String,
    pub schema_version: i64,
    pub durability: &'static str,
    pub documents: i64,
    pub chunks: i64,
    /// Entities of the tenant's knowledge graph, and the stated relations
    /// between them (not co-occurrence links): told only to callers who
    /// see the whole tenant, since the graph is built over all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relations: Option<i64>,
    pub jobs: JobCounts,
    pub store_bytes: u64,
    /// The caller's working-memory sessions and the shared limits.
    pub working_memory: WorkingMemoryStatus,
    /// What this caller (tenant and subject) has used over the HTTP API and
    /// SSE; calls over stdio are not charged.
    pub usage: UsageTotals,
    /// The memory browser this process serves on loopback, when it does:
    /// told only to admin callers, like `data_dir` (it names a path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<BrowserStatus>,
    /// The rqlite cluster the memory lives on, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterStatus>,
    /// The memory owner that serves this caller and the other local
    /// clients of the directory, when this process is one: told only to
    /// admin callers, like `data_dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<OwnerStatus>,
}

/// The memory owner process as status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnerStatus {
    pub pid: u32,
    /// When it started (RFC 3339).
    pub since: String,
    pub version: &'static str,
    /// Local clients connected now, this one included.
    pub clients: usize,
}

/// What the transport that serves local clients tells the service of the
/// owner process: the live count of its clients included.
#[derive(Debug, Clone)]
pub struct OwnerProcess {
    pub pid: u32,
    pub since: String,
    pub clients: Arc<std::sync::atomic::AtomicUsize>,
}

/// The cluster as this node sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterStatus {
    /// The last entry of the cluster's log this node's replica applied: a
    /// read on any node sent with `X-Alayasiki-After` set to it sees
    /// everything this node had when it answered (API.md).
    pub position: i64,
    /// The cluster's nodes, voters and not (empty when none answered).
    pub nodes: Vec<ClusterNodeStatus>,
    /// The leader's id, when there is one: without it writes are refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader: Option<String>,
    /// Why the nodes are not listed (no node answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
    /// Set when this node can no longer follow the log
    /// ([`STRANDED`]); `GET /health` then answers 503.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stranded: Option<&'static str>,
}

/// What status and `GET /health` say of a node whose log no longer holds
/// the entries it needs (the details are in its log).
pub const STRANDED: &str = "this node fell further behind the cluster's log than the log keeps \
     entries: it serves what it had, and joins again from a snapshot when restarted";

#[derive(Debug, Clone, Serialize)]
pub struct ClusterNodeStatus {
    pub id: String,
    /// Its HTTP address: told only to admin callers, like `data_dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub voter: bool,
    pub reachable: bool,
    pub leader: bool,
}

/// Where the memory browser of this process is (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrowserStatus {
    /// The page's address, e.g. `http://127.0.0.1:PORT/ui`.
    pub address: String,
    /// The owner-only file that holds the full URL with the secret.
    pub url_file: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobCounts {
    /// Documents waiting to be indexed (or embedded).
    pub pending: i64,
    pub failed: i64,
    /// Failed jobs by reason code (`interrupted`, `content`, `internal`,
    /// `missing_original`); shown only when some failed.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_reason: BTreeMap<String, i64>,
    /// The [`STATUS_RECENT_FAILURES`] most recent failures: document id,
    /// reason code, client-safe message, when. Each has a way back:
    /// re-sending the same ingest request (same idempotency key and
    /// content), or `alayasiki-mcp retry-failed`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recent_failures: Vec<RecentFailure>,
    /// Indexed documents waiting for LLM extraction (shown only when some
    /// are).
    #[serde(skip_serializing_if = "is_zero")]
    pub llm_pending: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl super::MemoryService {
    /// Queues every failed indexing job of every tenant again, its
    /// attempts forgotten (`alayasiki-mcp retry-failed` and `reindex`).
    /// Returns how many.
    pub fn requeue_failed(&self) -> Result<usize> {
        let requeued = self.store.requeue_all_failed()?;
        self.worker.wake();
        Ok(requeued)
    }

    /// Records where the memory browser of this process is served (`None`
    /// once it stops), for `alayasiki_status`. The transport that serves
    /// it tells the service; the service knows nothing of HTTP.
    pub fn announce_browser(&self, browser: Option<BrowserStatus>) {
        *self.browser.lock().unwrap_or_else(|e| e.into_inner()) = browser;
    }

    /// Records that this process is the memory owner of local clients, for
    /// `alayasiki_status`. The transport that serves them tells the
    /// service, as for the browser.
    pub fn announce_owner(&self, owner: OwnerProcess) {
        *self.owner.lock().unwrap_or_else(|e| e.into_inner()) = Some(owner);
    }

    fn owner(&self) -> Option<OwnerStatus> {
        let owner = self.owner.lock().unwrap_or_else(|e| e.into_inner());
        owner.as_ref().map(|o| OwnerStatus {
            pid: o.pid,
            since: o.since.clone(),
            version: env!("CARGO_PKG_VERSION"),
            clients: o.clients.load(std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Records the cluster the memory lives on, for `alayasiki_status`.
    pub fn announce_cluster(&self, client: crate::store::cluster::ClusterClient) {
        *self.cluster.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(client));
    }

    /// Whether this node can no longer follow its cluster's log
    /// ([`STRANDED`]).
    pub fn stranded(&self) -> bool {
        self.store.stranded()
    }

    /// Whether the memory lives on a cluster.
    pub fn on_cluster(&self) -> bool {
        self.cluster
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    fn cluster_status(&self, admin: bool) -> Result<Option<ClusterStatus>> {
        let client = self
            .cluster
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(client) = client else {
            return Ok(None);
        };
        let position = self.store.log_position()?;
        let stranded = self.stranded().then_some(STRANDED);
        Ok(Some(match client.nodes() {
            Ok(nodes) => ClusterStatus {
                position,
                leader: nodes.iter().find(|n| n.leader).map(|n| n.id.clone()),
                nodes: nodes
                    .into_iter()
                    .map(|n| ClusterNodeStatus {
                        address: admin.then_some(n.api_addr),
                        id: n.id,
                        voter: n.voter,
                        reachable: n.reachable,
                        leader: n.leader,
                    })
                    .collect(),
                unreachable: None,
                stranded,
            },
            Err(e) => {
                log::warn!("cluster status: {e}");
                ClusterStatus {
                    position,
                    nodes: Vec::new(),
                    leader: None,
                    unreachable: Some("no cluster node answered".into()),
                    stranded,
                }
            }
        }))
    }

    fn browser(&self) -> Option<BrowserStatus> {
        self.browser
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Memory<'_> {
    pub fn status(&self) -> Result<Status> {
        self.require(Permission::Query)?;
        let reader = self.reader()?;
        let (pending, failed, llm_pending) = reader.job_counts()?;
        let (by_reason, recent_failures) = reader.failures(STATUS_RECENT_FAILURES)?;
        // A caller limited to memory scopes counts what it sees, and is not
        // told which documents of others failed.
        let ((documents, chunks), graph, by_reason, recent_failures) = if reader.is_limited() {
            (
                reader.seen_counts()?,
                None,
                Default::default(),
                Default::default(),
            )
        } else {
            (
                (reader.document_count()?, reader.chunk_count()?),
                Some(reader.graph_counts()?),
                by_reason,
                recent_failures,
            )
        };
        Ok(Status {
            version: env!("CARGO_PKG_VERSION"),
            data_dir: self
                .principal
                .permits(Permission::Admin)
                .then(|| self.service.data_dir.display().to_string()),
            tenant: self.principal.tenant.name().to_string(),
            subject: self.principal.subject.clone(),
            schema_version: crate::store::latest_schema_version(),
            durability: self.service.store.durability().name(),
            documents,
            chunks,
            entities: graph.map(|(entities, _)| entities),
            relations: graph.map(|(_, relations)| relations),
            jobs: JobCounts {
                pending,
                failed,
                failed_by_reason: by_reason.into_iter().collect(),
                recent_failures,
                llm_pending,
            },
            store_bytes: self.service.store.size_bytes(),
            working_memory: self.memory_status(),
            usage: reader.usage(&self.principal.subject)?,
            ui: self
                .principal
                .permits(Permission::Admin)
                .then(|| self.service.browser())
                .flatten(),
            cluster: self
                .service
                .cluster_status(self.principal.permits(Permission::Admin))?,
            owner: self
                .principal
                .permits(Permission::Admin)
                .then(|| self.service.owner())
                .flatten(),
        })
    }

    /// Charges a completed call to this caller (`Store::charge`). Returns
    /// at once: a failure to write it is logged, never the caller's
    /// problem.
    pub fn charge(&self, operation: &str, request_bytes: u64, reply_bytes: u64, took: Duration) {
        let record = UsageRecord {
            subject: self.principal.subject.clone(),
            operation: operation.to_string(),
            request_bytes,
            reply_bytes,
            duration_us: took.as_micros().min(u64::MAX as u128) as u64,
            at: now_ms(),
        };
        self.service.store.charge(&self.principal.tenant, record);
    }
}
