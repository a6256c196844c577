//! The rqlite cluster a store can live on: Raft-replicated SQLite behind an
//! HTTP API, which runs this store's schema (`sql/`) unchanged.
//!
//! - [`address`]: `rqlite://host:port,…` with credentials and TLS options.
//! - [`wire`]: statements and their parameters out, rows back, as rqlite's
//!   JSON carries them (BLOBs as `unhex(?)` of hex text).
//! - `client`: [`ClusterClient`], requests to the nodes with a deadline and
//!   failover; transactions, reads at a [`ReadLevel`], the node list; the
//!   retry rule that makes a write apply once.
//! - [`copy`]: a local database into a cluster and back, row for row, with
//!   per-table digests that prove the two equal (`tables`: the schema and
//!   the rows as a copy reads them; `digest`: the digests).
//! - [`replica`]: a local store that feeds its write transactions to the
//!   cluster's log and applies everyone else's, in order ([`entry`]: an
//!   entry's statements as the log stores them; `apply`: one entry
//!   applied on a follower, its vector rows and compactions included).
//!   `quorum`: whether the cluster has a leader, logged once per loss;
//!   [`own_jobs`]: the jobs a node journalled itself, kept in its replica
//!   so that a restart takes them up at once.
//! - [`node`]: a data directory made and kept a replica of the cluster's
//!   memory (founding it, joining from a snapshot, resuming).
//! - [`vector_cache`]: a node's vector files as a cache of the cluster's
//!   vector rows: filled by a push, rebuilt when missing or damaged.
//!
//! What rqlite imposes on the SQL that runs there (checked over `sql/` and
//! every statement in `src/` by `tests/source_rules.rs`): no explicit
//! transactions (a request is the transaction), no journal or checkpoint
//! pragmas, nothing nondeterministic in triggers or defaults (each replica
//! re-runs the statements, so times and ids are passed in).

pub mod address;
mod apply;
mod client;
pub mod copy;
mod digest;
pub mod entry;
mod leases;
pub mod node;
mod ops;
pub mod own_jobs;
mod quorum;
pub mod replica;
mod tables;
pub mod vector_cache;
pub mod wire;

pub use address::ClusterAddress;
pub use client::{ClusterClient, ClusterError, ClusterNode, ReadLevel};
