//! Helpers for the store's unit tests (and the ingestion worker's): a fresh
//! store in a temporary directory, a document stored and indexed in one
//! call (admission and its ingestion job, as the worker would run them),
//! and a pending job as the worker's batching sees one.

use crate::config::Durability;
use crate::embed::BuiltinEmbedder;
use crate::ingest::media::MediaKind;
use crate::ingest::Prepared;
use crate::knowledge::confidence::Provenance;
use crate::store::{JobKind, NewDocument, PendingJob, Store, Tenant, VectorSpec};

/// A new store under a unique temporary directory named after `prefix`.
pub fn temp_store(prefix: &str) -> (std::path::PathBuf, Store) {
    let dir = std::env::temp_dir().join(crate::ids::new_id(prefix));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = VectorSpec {
        embedder_id: "t".into(),
        dim: crate::embed::embedder::BUILTIN_DIM,
    };
    let store = Store::open(
        &dir,
        Durability::Normal,
        spec,
        &crate::graph::resolution::POLICY,
    )
    .unwrap();
    (dir, store)
}

/// A new plain-text document holding `original`: no source, title,
/// metadata, provenance, idempotency key or expiry.
pub fn plain_document(original: Vec<u8>) -> NewDocument {
    NewDocument {
        doc_id: crate::ids::new_document_id(),
        source: None,
        title: None,
        media_type: "text/plain".into(),
        sha256: crate::ids::sha256_hex(&original),
        original,
        metadata: "{}".into(),
        provenance: None,
        created_by: "test".into(),
        idempotency: None,
        expires_at: None,
        content_key: None,
        dedupe: false,
        replaces: Default::default(),
        sight: crate::store::Sight::Whole,
        scopes: Vec::new(),
    }
}

/// The rows `sql` returns with the tenant's id bound as `?1`, read in the
/// writer's transaction (so every write before it is seen), each mapped
/// by `row`.
pub fn tenant_rows<T: Send + 'static>(
    store: &Store,
    tenant: &Tenant,
    sql: &str,
    row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Vec<T> {
    let sql = sql.to_string();
    store
        .write(tenant, move |w| {
            let mut stmt = w.conn.raw().prepare(&sql)?;
            let rows = stmt.query_map([w.tenant_id], row)?;
            Ok(rows.collect::<rusqlite::Result<Vec<T>>>()?)
        })
        .unwrap()
}

/// Stores `text` as a plain-text document with `provenance`, indexed with
/// the built-in embedder; returns its key.
pub fn remember(store: &Store, tenant: &Tenant, text: &str, provenance: &str) -> i64 {
    remember_prepared(store, tenant, text, prepare(text), provenance)
}

/// `text` prepared as the ingestion path would (plain text, the built-in
/// embedder).
pub fn prepare(text: &str) -> Prepared {
    crate::ingest::prepare(MediaKind::PlainText, text.as_bytes(), &BuiltinEmbedder).unwrap()
}

/// Like [`remember`], with the work already prepared from `text`.
pub fn remember_prepared(
    store: &Store,
    tenant: &Tenant,
    text: &str,
    prepared: Prepared,
    provenance: &str,
) -> i64 {
    let doc = NewDocument {
        provenance: Some(provenance.into()),
        ..plain_document(text.as_bytes().to_vec())
    };
    let p = Provenance::parse(Some(provenance));
    store
        .write(tenant, move |w| {
            let a = w.admit(doc, 1)?;
            w.complete_job(a.job_id, a.document_key, prepared.indexed(), p, 1)?;
            Ok(a.document_key)
        })
        .unwrap()
}

/// A pending job of `kind` for document `id` (its key and job id alike) in
/// tenant "t", with `bytes` of original, never begun.
pub fn pending_job(id: i64, kind: JobKind, bytes: i64) -> PendingJob {
    PendingJob {
        job_id: id,
        kind,
        tenant: Tenant::new("t").unwrap(),
        document_key: id,
        doc_id: format!("doc_{id}"),
        source: None,
        provenance: Provenance::Agent,
        begun: false,
        attempts: 0,
        updated_at: 0,
        bytes,
    }
}
