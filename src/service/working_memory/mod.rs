//! Working memory: per-identity session graphs held in memory, searchable
//! like memory but never mixed into it unless promoted.
//!
//! [`WorkingMemory`] is the registry: one per process, owned by
//! `MemoryService`, so every transport (stdio, HTTP/SSE) and every
//! reconnect shares the same sessions and the same budget. It owns:
//! - **ownership**: a graph is keyed by its owner (tenant, subject) and its
//!   caller-chosen [`SessionId`]. Another identity's look-up misses exactly
//!   as for an id nobody used ([`unknown_session`] is the one error for
//!   both), and its write creates its own, separate graph, so nothing an
//!   identity can do reveals that another uses the same id;
//! - **lifetime**: a graph expires its TTL after its last write and is
//!   reclaimed (its budget freed) by the next operation that looks, always
//!   before a write is admitted; nothing survives a restart;
//! - **the budget** ([`budget`]): every write is charged under the registry
//!   lock before anything is stored; a charge stays with its graph until
//!   the graph is reclaimed, even if work after admission (embedding) fails.
//!
//! It must never store a write it has not charged, hold its lock while
//! extracting, embedding or searching, or answer one identity with
//! another's data. Preparation ([`note`]), the graph ([`session_graph`])
//! and search ([`search`]) are separate modules; what callers do through
//! `Memory` is in `caller`.

pub mod budget;
mod caller;
pub mod note;
pub mod search;
pub mod session_graph;

use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::clock::{now_ms, rfc3339};
use crate::error::{Error, Result};
use crate::service::Principal;
use crate::store::NewChunk;
use budget::Usage;
use note::WriteDraft;
use session_graph::{Note, SessionGraph, SessionSnapshot};

pub use caller::{MemoryWrite, PromoteReceipt, PromotedNote, WriteReceipt};
pub use session_graph::{EdgeInput, NodeInput, SessionId};

/// Milliseconds on a monotonic clock: TTLs must not stretch or shrink when
/// the wall clock is adjusted. Injected in tests.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Who owns a session graph: the identity that first wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    tenant: String,
    subject: String,
}

impl Owner {
    pub fn of(principal: &Principal) -> Owner {
        Owner {
            tenant: principal.tenant.name().to_string(),
            subject: principal.subject.clone(),
        }
    }

    pub fn subject(&self) -> &str {
        &self.subject
    }
}

/// The one error for a session this identity cannot see: never written,
/// expired, or another identity's. Identical in every case by design.
pub fn unknown_session(id: &SessionId) -> Error {
    unknown_session_named(id.as_str())
}

/// [`unknown_session`] for any text, a malformed id included.
pub fn unknown_session_named(id: &str) -> Error {
    Error::NotFound(format!(
        "no working-memory session {id:?} for this identity (sessions expire after their last \
         write; see alayasiki_status for yours)"
    ))
}

/// What admitting a write stored.
pub struct Admission {
    pub seq: u32,
    /// The stored note and its passages (with context), to embed after the
    /// lock is released.
    pub note: Option<(Arc<Note>, Vec<NewChunk>)>,
    pub expires_at_ms: i64,
}

/// One of the caller's live sessions (for `alayasiki_status`).
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    pub session_id: String,
    pub notes: usize,
    pub nodes: usize,
    pub edges: usize,
    pub writes: usize,
    pub bytes_charged: usize,
    pub expires_at: String,
}

/// One of the caller's live sessions as the memory browser lists it.
#[derive(Debug, Clone)]
pub struct SessionListing {
    pub session_id: String,
    pub notes: usize,
    pub nodes: usize,
    pub edges: usize,
    pub writes: usize,
    pub bytes_charged: usize,
    /// Wall-clock Unix ms.
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub expires_at_ms: i64,
    /// Milliseconds until it expires, on the registry's monotonic clock.
    pub ms_left: u64,
}

/// Working memory as `alayasiki_status` reports it: the caller's own
/// sessions and the limits (never others' usage).
#[derive(Debug, Clone, Serialize)]
pub struct WorkingMemoryStatus {
    pub ttl_secs: u64,
    pub sessions: Vec<SessionSummary>,
    pub limits: WorkingMemoryLimits,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkingMemoryLimits {
    pub sessions: usize,
    pub writes: usize,
    pub bytes: usize,
    pub content_bytes_per_write: usize,
    pub metadata_bytes_per_write: usize,
    pub graph_bytes_per_write: usize,
    /// The most one tenant's sessions may hold of the three shared totals
    /// (`WM_TENANT_SHARE_QUARTERS` of each).
    pub tenant_sessions: usize,
    pub tenant_writes: usize,
    pub tenant_bytes: usize,
}

/// What deleting a session removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeletedSession {
    pub session_id: String,
    pub notes: usize,
    pub nodes: usize,
    pub edges: usize,
    pub writes: usize,
    /// Bytes charged to the session, returned to the budget.
    pub bytes_released: usize,
}

/// The registry of live session graphs and their shared budget.
pub struct WorkingMemory {
    ttl_ms: u64,
    clock: Clock,
    /// Wall-clock milliseconds at the clock's zero, for display.
    wall_at_zero_ms: i64,
    registry: Mutex<Registry>,
}

type GraphKey = (Owner, SessionId);

#[derive(Default)]
struct Registry {
    graphs: HashMap<GraphKey, SessionGraph>,
    /// Totals over every live graph.
    usage: Usage,
    /// Totals over each tenant's live graphs (a tenant with none has no
    /// entry).
    tenants: HashMap<String, Usage>,
}

impl WorkingMemory {
    /// A registry on the process's monotonic clock (on the fixed clock in
    /// deterministic mode, so expiry times are the same on every run).
    pub fn new(ttl: Duration) -> WorkingMemory {
        let wall_at_zero = now_ms();
        if crate::clock::is_fixed() {
            let clock: Clock =
                Arc::new(move || u64::try_from(now_ms() - wall_at_zero).unwrap_or(0));
            return WorkingMemory::with_clock(ttl, clock, wall_at_zero);
        }
        let start = Instant::now();
        let clock: Clock =
            Arc::new(move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX));
        WorkingMemory::with_clock(ttl, clock, wall_at_zero)
    }

    /// A registry on an injected clock (tests).
    pub fn with_clock(ttl: Duration, clock: Clock, wall_at_zero_ms: i64) -> WorkingMemory {
        WorkingMemory {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            clock,
            wall_at_zero_ms,
            registry: Mutex::new(Registry::default()),
        }
    }

    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }

    fn wall(&self, t: u64) -> i64 {
        self.wall_at_zero_ms
            .saturating_add(i64::try_from(t).unwrap_or(i64::MAX))
    }

    /// Locks the registry, reads the clock and reclaims expired graphs.
    /// The clock is read under the lock so time never runs backwards
    /// between two operations.
    fn open(&self) -> (MutexGuard<'_, Registry>, u64) {
        // A panic while holding the lock cannot leave the registry half
        // updated (each update is checked before it mutates), so a
        // poisoned lock is safe to use.
        let mut registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        let now = (self.clock)();
        registry.reclaim_expired(now);
        (registry, now)
    }

    /// Stores a prepared write in the caller's session (creating it), if
    /// the graph accepts it and the budget allows: refused writes store
    /// nothing and charge nothing.
    pub fn admit(&self, owner: &Owner, id: &SessionId, draft: WriteDraft) -> Result<Admission> {
        let (mut registry, now) = self.open();
        let registry = &mut *registry;
        let key = (owner.clone(), id.clone());
        let existing = registry.graphs.get_mut(&key);
        let new_graph = existing.is_none();
        let mut fresh = None;
        let graph = match existing {
            Some(g) => g,
            None => fresh.insert(SessionGraph::new(id.clone(), now, self.ttl_ms)),
        };
        graph.check(&draft.graph)?;
        // The note is built before the charge so that, once charged,
        // storing it is all that is left and nothing can fail.
        let seq = graph.next_seq();
        let note = draft.note.map(|n| {
            let note = Arc::new(Note {
                id: format!("{}/{seq}", id.as_str()),
                seq,
                media_type: n.media_type,
                text: n.text,
                original: n.original,
                file: n.file,
                metadata: n.metadata,
                written_at_ms: self.wall(now),
                chunks: n.chunks,
                vectors: Default::default(),
            });
            (note, n.passages)
        });
        let charged = draft.charge.bytes();
        // The tenant's share is checked on a copy, so a write the global
        // budget then refuses changes neither total.
        let mut tenant = registry
            .tenants
            .get(&owner.tenant)
            .copied()
            .unwrap_or_default();
        tenant.admit_tenant_share(new_graph, charged)?;
        registry.usage.admit(new_graph, charged)?;
        registry.tenants.insert(owner.tenant.clone(), tenant);
        graph.apply(
            note.as_ref().map(|(n, _)| n.clone()),
            draft.graph,
            charged,
            now,
            self.ttl_ms,
        );
        let expires_at_ms = self.wall(graph.expires_at);
        if let Some(g) = fresh {
            registry.graphs.insert(key, g);
        }
        Ok(Admission {
            seq,
            note,
            expires_at_ms,
        })
    }

    /// A consistent copy of the caller's session.
    pub fn snapshot(&self, owner: &Owner, id: &SessionId) -> Result<SessionSnapshot> {
        let (registry, _) = self.open();
        registry
            .graphs
            .get(&(owner.clone(), id.clone()))
            .map(|g| g.snapshot(|t| self.wall(t)))
            .ok_or_else(|| unknown_session(id))
    }

    /// Deletes the caller's session before it expires: its notes, nodes
    /// and edges go, and what it was charged returns to the budget at once.
    pub fn delete(&self, owner: &Owner, id: &SessionId) -> Result<DeletedSession> {
        let (mut registry, _) = self.open();
        let registry = &mut *registry;
        let graph = registry
            .graphs
            .remove(&(owner.clone(), id.clone()))
            .ok_or_else(|| unknown_session(id))?;
        registry.usage.release(graph.writes, graph.bytes);
        if let Some(t) = registry.tenants.get_mut(&owner.tenant) {
            t.release(graph.writes, graph.bytes);
            if t.graphs == 0 {
                registry.tenants.remove(&owner.tenant);
            }
        }
        let snap = graph.snapshot(|t| self.wall(t));
        Ok(DeletedSession {
            session_id: id.as_str().to_string(),
            notes: snap.notes.len(),
            nodes: snap.nodes.len(),
            edges: snap.edges.len(),
            writes: snap.writes,
            bytes_released: snap.bytes,
        })
    }

    /// The caller's live sessions, by id.
    pub fn sessions(&self, owner: &Owner) -> Vec<SessionSummary> {
        self.listing(owner)
            .into_iter()
            .map(|l| SessionSummary {
                session_id: l.session_id,
                notes: l.notes,
                nodes: l.nodes,
                edges: l.edges,
                writes: l.writes,
                bytes_charged: l.bytes_charged,
                expires_at: rfc3339(l.expires_at_ms),
            })
            .collect()
    }

    /// The caller's live sessions with their times, by id.
    pub fn listing(&self, owner: &Owner) -> Vec<SessionListing> {
        let (registry, now) = self.open();
        let mut out: Vec<SessionListing> = registry
            .graphs
            .iter()
            .filter(|((o, _), _)| o == owner)
            .map(|((_, id), g)| {
                let snap = g.snapshot(|t| self.wall(t));
                SessionListing {
                    session_id: id.as_str().to_string(),
                    notes: snap.notes.len(),
                    nodes: snap.nodes.len(),
                    edges: snap.edges.len(),
                    writes: snap.writes,
                    bytes_charged: snap.bytes,
                    created_at_ms: snap.created_at_ms,
                    updated_at_ms: snap.updated_at_ms,
                    expires_at_ms: snap.expires_at_ms,
                    ms_left: g.expires_at.saturating_sub(now),
                }
            })
            .collect();
        out.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        out
    }

    /// What `alayasiki_status` shows this owner.
    pub fn status(&self, owner: &Owner) -> WorkingMemoryStatus {
        use crate::limits::*;
        WorkingMemoryStatus {
            ttl_secs: self.ttl().as_secs(),
            sessions: self.sessions(owner),
            limits: WorkingMemoryLimits {
                sessions: MAX_WM_SESSIONS,
                writes: MAX_WM_WRITES,
                bytes: MAX_WM_BYTES,
                content_bytes_per_write: MAX_WM_CONTENT_BYTES,
                metadata_bytes_per_write: MAX_WM_METADATA_BYTES,
                graph_bytes_per_write: MAX_WM_GRAPH_BYTES,
                tenant_sessions: budget::TENANT_SHARE.graphs,
                tenant_writes: budget::TENANT_SHARE.writes,
                tenant_bytes: budget::TENANT_SHARE.bytes,
            },
        }
    }

    /// Totals over live graphs, after reclaiming expired ones (for tests
    /// and the operator; never shown to callers).
    pub fn usage(&self) -> Usage {
        let (registry, _) = self.open();
        registry.usage
    }

    /// Checks that the totals are exactly the sum over live graphs.
    #[cfg(test)]
    fn assert_consistent(&self) {
        let (registry, _) = self.open();
        let sum = registry
            .graphs
            .values()
            .fold(Usage::default(), |u, g| Usage {
                graphs: u.graphs + 1,
                writes: u.writes + g.writes,
                bytes: u.bytes + g.bytes,
            });
        assert_eq!(registry.usage, sum);
        let mut tenants: HashMap<String, Usage> = HashMap::new();
        for ((owner, _), g) in &registry.graphs {
            let t = tenants.entry(owner.tenant.clone()).or_default();
            t.graphs += 1;
            t.writes += g.writes;
            t.bytes += g.bytes;
        }
        assert_eq!(registry.tenants, tenants);
    }
}

impl Registry {
    /// Drops graphs whose TTL has passed and frees their budget.
    fn reclaim_expired(&mut self, now: u64) {
        let (usage, tenants) = (&mut self.usage, &mut self.tenants);
        self.graphs.retain(|(owner, _), g| {
            let live = g.expires_at > now;
            if !live {
                usage.release(g.writes, g.bytes);
                if let Some(t) = tenants.get_mut(&owner.tenant) {
                    t.release(g.writes, g.bytes);
                    if t.graphs == 0 {
                        tenants.remove(&owner.tenant);
                    }
                }
            }
            live
        });
    }
}

#[cfg(test)]
mod tests;
