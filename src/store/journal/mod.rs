//! The journal: the `jobs` table that makes ingestion crash-safe.
//!
//! An ingest commits its document and a pending job together (see
//! `documents::admit`). The ingestion worker completes the job in a second
//! transaction that writes the chunks, their full-text rows and the job's
//! new state at once, so a crash leaves either nothing or everything. Jobs
//! still pending at start-up are replayed; completing a job that is no
//! longer pending is a no-op, which makes replay exactly-once in effect.
//! Attempts and failures, and the way back for failed jobs, are in
//! [`attempts`].

mod attempts;

pub(super) use attempts::note_restart;
pub use attempts::{interrupted_reason, Attempt, FailureKind};

use rusqlite::{params, Connection, OptionalExtension};

use super::chunks::{chunk_text, NewChunk};
use super::name_hints::NameHints;
use super::tenant::{Tenant, TenantReader, TenantWriter};
use crate::error::{Error, Result};
use crate::knowledge::confidence::Provenance;
use crate::knowledge::fragment::Fragment;

/// What completing an index job writes of a prepared document
/// ([`TenantWriter::complete_job`]): the parts of `ingest::Prepared` the
/// store keeps, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct IndexedDocument<'a> {
    /// The extracted text, or `None` when it is the original itself.
    pub text: Option<&'a str>,
    pub chunks: &'a [NewChunk],
    /// One vector per chunk; `None` if the embedder failed (an embed job
    /// is then queued).
    pub vectors: Option<&'a [Vec<f32>]>,
    /// Entities, mentions and relations the chunks contain.
    pub graph: &'a Fragment,
    /// The facts the document's metadata declares; recorded before `graph`.
    pub declared: &'a Fragment,
    /// `graph`'s names as a read snapshot resolved them, if one did.
    pub names: Option<&'a NameHints>,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Done,
    Failed,
}

impl JobState {
    pub fn name(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> JobState {
        match s {
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            _ => JobState::Pending,
        }
    }
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// Extract, chunk, embed and index a new document.
    Ingest,
    /// Embed chunks stored without vectors (the embedder was unavailable,
    /// or a reindex).
    Embed,
    /// Add the optional LLM's triples to an indexed document's graph. Run
    /// by its own thread (`ingest::enrich`), never ahead of indexing, and
    /// never counted as indexing backlog.
    LlmExtract,
}

impl JobKind {
    fn name(self) -> &'static str {
        match self {
            JobKind::Ingest => "ingest",
            JobKind::Embed => "embed",
            JobKind::LlmExtract => LLM_EXTRACT,
        }
    }

    fn parse(name: &str) -> JobKind {
        match name {
            "embed" => JobKind::Embed,
            LLM_EXTRACT => JobKind::LlmExtract,
            _ => JobKind::Ingest,
        }
    }
}

/// `jobs.kind` of [`JobKind::LlmExtract`] (spelled out in SQL below).
const LLM_EXTRACT: &str = "llm_extract";

/// Which pending jobs a worker takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobQueue {
    /// Ingest jobs first, then embed jobs: the ingestion worker's.
    Indexing,
    /// LLM extraction jobs, oldest first: the enricher's.
    LlmExtraction,
}

/// A job the worker should run, with the tenant it belongs to.
#[derive(Debug, Clone)]
pub struct PendingJob {
    pub job_id: i64,
    pub kind: JobKind,
    pub tenant: Tenant,
    /// Internal document key (never shown to clients).
    pub document_key: i64,
    /// The document's external id.
    pub doc_id: String,
    /// The document's `source`, which links it to its neighbours.
    pub source: Option<String>,
    /// Who asserted the document's content.
    pub provenance: Provenance,
    /// Begun before and not finished (in a batch or alone): runs alone.
    pub begun: bool,
    /// Times the job was begun alone and not finished (see the module docs).
    pub attempts: i64,
    /// When the job last changed (admitted, begun), in ms by the clock of
    /// the node that changed it.
    pub updated_at: i64,
    /// The size of the document's original (bytes): what indexing it
    /// holds in memory grows with it.
    pub bytes: i64,
}

/// Failed jobs counted by [`FailureKind::code`], in code order.
pub type FailureCounts = Vec<(String, i64)>;

/// One failed document, for `alayasiki_status`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecentFailure {
    pub document_id: String,
    /// [`FailureKind::code`].
    pub reason: String,
    /// Client-safe explanation.
    pub message: String,
    /// When it failed (RFC 3339).
    pub failed_at: String,
}

/// A stored chunk of a document, as LLM extraction reads it.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    pub chunk_key: i64,
    /// Byte offset in the document's extracted text.
    pub start: usize,
    pub text: String,
}

/// What the worker needs to process a document.
#[derive(Debug, Clone)]
pub struct JobInput {
    pub doc_id: String,
    pub media_type: String,
    pub original: Vec<u8>,
    pub metadata: String,
}

/// For `reindex`: every tenant moves to a new, empty vector generation,
/// every chunk loses its vector, and every indexed document gets an embed
/// job, all in one transaction (a crash leaves the old state or the new).
pub(super) fn schedule_reembedding(conn: &Connection) -> Result<()> {
    let now = crate::clock::now_ms();
    let tx = conn.unchecked_transaction()?;
    // Every value bound or taken from the rows before the statement, never
    // from the row it writes: run twice, a statement leaves what it left once.
    let generations: Vec<(i64, i64)> = tx
        .prepare("SELECT id, vector_generation FROM tenants")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (tenant, generation) in generations {
        tx.execute(
            "UPDATE tenants SET vector_rows = 0, vector_generation = ?2 WHERE id = ?1",
            [tenant, generation + 1],
        )?;
    }
    tx.execute(
        "UPDATE chunks SET vector_slot = NULL WHERE vector_slot IS NOT NULL",
        [],
    )?;
    // Failed embed jobs too: the new ones replace them.
    tx.execute(
        "DELETE FROM jobs WHERE kind = 'embed' AND state IN ('pending', 'failed')",
        [],
    )?;
    let first: i64 = tx.query_row("SELECT COALESCE(MAX(id), 0) FROM jobs", [], |r| r.get(0))?;
    let queued = tx.execute(
        "INSERT INTO jobs(id, tenant_id, document_id, kind, state, created_at, updated_at)
         SELECT ?2 + ROW_NUMBER() OVER (ORDER BY d.id), d.tenant_id, d.id, 'embed', 'pending',
                ?1, ?1
           FROM documents d
          WHERE d.state = 'ready' AND EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)
          ORDER BY d.id
         ON CONFLICT DO NOTHING",
        [now, first],
    )?;
    tx.commit()?;
    log::info!("reindex: {queued} document(s) queued for embedding");
    Ok(())
}

/// Tenants with pending LLM extraction jobs.
pub(super) fn tenants_with_llm_jobs(conn: &Connection) -> Result<Vec<Tenant>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT t.name FROM jobs j JOIN tenants t ON t.id = j.tenant_id
          WHERE j.state = 'pending' AND j.kind = 'llm_extract'",
    )?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for name in names {
        out.push(Tenant::new(&name?).map_err(Error::internal)?);
    }
    Ok(out)
}

/// Pending jobs are read in steps of this many rows: the limit goes into
/// the SQL rounded up to a step, then the rows are cut to the limit. A bound
/// limit is planned by its value and re-prepared at every new value, and
/// the worker asks for a different number nearly every time.
const PENDING_READ_STEP: usize = 256;

pub(super) fn pending(conn: &Connection, queue: JobQueue, limit: usize) -> Result<Vec<PendingJob>> {
    let cap = limit.div_ceil(PENDING_READ_STEP).max(1) * PENDING_READ_STEP;
    let mut stmt = conn.prepare_cached(&match queue {
        JobQueue::Indexing => format!(
            "SELECT j.id, t.name, j.document_id, d.doc_id, j.kind, d.source, d.provenance,
                    j.begun OR j.attempts > 0, j.attempts, j.updated_at, d.byte_size
               FROM jobs j JOIN tenants t ON t.id = j.tenant_id
                           JOIN documents d ON d.id = j.document_id
              WHERE j.state = 'pending' AND j.kind != 'llm_extract'
              ORDER BY j.kind = 'embed', j.id LIMIT {cap}"
        ),
        JobQueue::LlmExtraction => format!(
            "SELECT j.id, t.name, j.document_id, d.doc_id, j.kind, d.source, d.provenance,
                    j.begun OR j.attempts > 0, j.attempts, j.updated_at, d.byte_size
               FROM jobs j JOIN tenants t ON t.id = j.tenant_id
                           JOIN documents d ON d.id = j.document_id
              WHERE j.state = 'pending' AND j.kind = 'llm_extract'
              ORDER BY j.id LIMIT {cap}"
        ),
    })?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, Option<String>>(6)?,
            r.get::<_, bool>(7)?,
            r.get::<_, i64>(8)?,
            r.get::<_, i64>(9)?,
            r.get::<_, i64>(10)?,
        ))
    })?;
    let mut jobs = Vec::new();
    for row in rows.take(limit) {
        let (
            job_id,
            tenant,
            document_key,
            doc_id,
            kind,
            source,
            provenance,
            begun,
            attempts,
            updated_at,
            bytes,
        ) = row?;
        let kind = JobKind::parse(&kind);
        let tenant = Tenant::new(&tenant).map_err(Error::internal)?;
        jobs.push(PendingJob {
            job_id,
            kind,
            tenant,
            document_key,
            doc_id,
            source,
            provenance: Provenance::parse(provenance.as_deref()),
            begun,
            attempts,
            updated_at,
            bytes,
        });
    }
    Ok(jobs)
}

/// Pending indexing jobs across tenants, counted on the partial index of
/// pending jobs (cheap however many jobs are done). LLM extraction is
/// enrichment, not indexing: it is not counted.
pub(super) fn pending_count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM jobs INDEXED BY jobs_pending
          WHERE state = 'pending' AND kind != 'llm_extract'",
        [],
        |r| r.get(0),
    )?)
}

const BACKLOG_SQL: &str = "SELECT (SELECT count(*) FROM jobs INDEXED BY jobs_pending
                WHERE state = 'pending' AND kind != 'llm_extract'),
        (SELECT count(*) FROM jobs INDEXED BY jobs_failed
                WHERE state = 'failed' AND kind != 'llm_extract')";

/// A tenant's pending indexing jobs, pending LLM jobs and failed indexing
/// jobs (in that order), on the same partial indexes.
const JOB_COUNTS_SQL: &str = "SELECT count(*) FILTER (WHERE kind != 'llm_extract'),
        count(*) FILTER (WHERE kind = 'llm_extract'),
        (SELECT count(*) FROM jobs INDEXED BY jobs_failed
          WHERE state = 'failed' AND tenant_id = ?1 AND kind != 'llm_extract')
   FROM jobs INDEXED BY jobs_pending WHERE state = 'pending' AND tenant_id = ?1";

/// Pending and failed indexing jobs across tenants, counted on the partial
/// indexes of each state: this runs at every start, and the jobs done (one
/// per document ever stored) must not be read for it.
pub(super) fn backlog(conn: &Connection) -> Result<(i64, i64)> {
    Ok(conn.query_row(BACKLOG_SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

impl TenantWriter<'_> {
    pub(super) fn enqueue_job(
        &mut self,
        document_key: i64,
        kind: JobKind,
        now: i64,
    ) -> Result<i64> {
        let id = self.new_id("jobs")?;
        self.conn.insert_new(
            "INSERT INTO jobs(id, tenant_id, document_id, kind, state, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5) ON CONFLICT DO NOTHING",
            params![id, self.tenant_id, document_key, kind.name(), now],
        )?;
        Ok(id)
    }

    pub(super) fn latest_job(&mut self, document_key: i64) -> Result<(i64, JobState)> {
        let (id, state): (i64, String) = self
            .conn
            .prepare_cached(
                "SELECT id, state FROM jobs WHERE tenant_id = ?1 AND document_id = ?2
                  ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![self.tenant_id, document_key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        Ok((id, JobState::parse(&state)))
    }

    /// Writes the document's chunks with their vectors and its graph
    /// fragment (and its extracted text, when that differs from the
    /// original) and marks the job done. Without vectors (the embedder failed) the
    /// chunks are searchable by keyword at once and an embed job is queued.
    /// Returns false (and writes nothing) if the job is not pending: a
    /// replay of finished work is a no-op.
    pub fn complete_job(
        &mut self,
        job_id: i64,
        document_key: i64,
        prepared: IndexedDocument<'_>,
        provenance: Provenance,
        now: i64,
    ) -> Result<bool> {
        if !self.claim(job_id, document_key)? {
            return Ok(false);
        }
        let (text, chunks, vectors) = (prepared.text, prepared.chunks, prepared.vectors);
        let text_bytes = match text {
            Some(t) => t.len(),
            None => self.original_size(document_key)?,
        };
        let chunk_keys = self.insert_chunks(document_key, text_bytes, chunks, vectors)?;
        // Declared facts first: their kinds name new entities and their
        // evidence is the one kept when the rules found the same relation.
        self.record_graph(
            document_key,
            &chunk_keys,
            prepared.declared,
            None,
            provenance,
            now,
        )?;
        self.record_graph(
            document_key,
            &chunk_keys,
            prepared.graph,
            prepared.names,
            provenance,
            now,
        )?;
        self.unsupport_if_superseded(document_key)?;
        if vectors.is_none() && !chunks.is_empty() {
            self.enqueue_job(document_key, JobKind::Embed, now)?;
        }
        self.exec(
            "UPDATE documents SET state = 'ready', text = ?3, error = NULL
              WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, document_key, text],
        )?;
        self.mark_done(job_id, now)?;
        Ok(true)
    }

    /// Attaches vectors to chunks stored without them and marks the embed
    /// job done (false if it was not pending).
    pub fn complete_embed_job(
        &mut self,
        job_id: i64,
        document_key: i64,
        chunk_keys: &[i64],
        vectors: &[Vec<f32>],
        now: i64,
    ) -> Result<bool> {
        if !self.claim(job_id, document_key)? {
            return Ok(false);
        }
        if !vectors.is_empty() {
            let first = self.append_vectors(vectors)?;
            for (i, key) in chunk_keys.iter().enumerate() {
                self.exec(
                    "UPDATE chunks SET vector_slot = ?3 WHERE tenant_id = ?1 AND id = ?2",
                    params![self.tenant_id, key, first + i as i64],
                )?;
            }
        }
        self.mark_done(job_id, now)?;
        Ok(true)
    }

    /// Closes this tenant's pending LLM extraction jobs with `reason`: LLM
    /// extraction was configured when they were queued but is not now, and
    /// no thread would run them. Their documents keep the rule-based graph.
    pub fn skip_llm_extraction(&mut self, reason: &str, now: i64) -> Result<usize> {
        Ok(self.exec(
            "UPDATE jobs SET state = 'done', error = ?2, updated_at = ?3
              WHERE tenant_id = ?1 AND state = 'pending' AND kind = 'llm_extract'",
            params![self.tenant_id, reason, now],
        )?)
    }

    /// Queues LLM extraction for a document just indexed.
    pub fn queue_llm_extraction(&mut self, document_key: i64, now: i64) -> Result<i64> {
        self.enqueue_job(document_key, JobKind::LlmExtract, now)
    }

    /// Adds the LLM's checked triples to the document's graph
    /// (`chunk_keys[i]` is the key of the fragment's chunk `i`) and closes
    /// the job, with `note` (client-safe) saying what went wrong, if
    /// anything did. False (nothing written) if the job is not pending,
    /// e.g. because the document was forgotten meanwhile.
    pub fn complete_llm_job(
        &mut self,
        job: &PendingJob,
        chunk_keys: &[i64],
        fragment: &Fragment,
        note: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        if !self.claim(job.job_id, job.document_key)? {
            return Ok(false);
        }
        self.record_graph(
            job.document_key,
            chunk_keys,
            fragment,
            None,
            job.provenance,
            now,
        )?;
        self.unsupport_if_superseded(job.document_key)?;
        self.exec(
            "UPDATE jobs SET state = 'done', error = ?3, updated_at = ?4
              WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, job.job_id, note, now],
        )?;
        Ok(true)
    }

    /// The size of a document's original bytes.
    fn original_size(&mut self, document_key: i64) -> Result<usize> {
        let size: i64 = self
            .conn
            .prepare_cached("SELECT byte_size FROM documents WHERE tenant_id = ?1 AND id = ?2")?
            .query_row(params![self.tenant_id, document_key], |r| r.get(0))?;
        Ok(size.max(0) as usize)
    }

    /// Marks a claimed job done.
    fn mark_done(&mut self, job_id: i64, now: i64) -> Result<()> {
        self.exec(
            "UPDATE jobs SET state = 'done', error = NULL, updated_at = ?3
              WHERE tenant_id = ?1 AND id = ?2",
            params![self.tenant_id, job_id, now],
        )?;
        Ok(())
    }

    /// True if the job exists for this tenant and document and is pending.
    fn claim(&mut self, job_id: i64, document_key: i64) -> Result<bool> {
        let state: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT state FROM jobs WHERE tenant_id = ?1 AND id = ?2 AND document_id = ?3",
            )?
            .query_row(params![self.tenant_id, job_id, document_key], |r| r.get(0))
            .optional()?;
        Ok(state.as_deref() == Some("pending"))
    }
}

impl TenantReader<'_> {
    /// The state of a job of this tenant (`None` if it is not theirs).
    pub fn job_state(&self, job_id: i64) -> Result<Option<(JobState, Option<String>)>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        let row: Option<(String, Option<String>)> = self
            .conn
            .prepare_cached("SELECT state, error FROM jobs WHERE tenant_id = ?1 AND id = ?2")?
            .query_row(params![tenant_id, job_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(row.map(|(s, e)| (JobState::parse(&s), e)))
    }

    /// The input of a job: the document's original bytes and type.
    pub fn job_input(&self, document_key: i64) -> Result<Option<JobInput>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(None);
        };
        Ok(self
            .conn
            .prepare_cached(
                "SELECT d.doc_id, d.media_type, o.bytes, d.metadata
                   FROM documents d JOIN originals o ON o.id = d.original_id
                  WHERE d.tenant_id = ?1 AND d.id = ?2",
            )?
            .query_row(params![tenant_id, document_key], |r| {
                Ok(JobInput {
                    doc_id: r.get(0)?,
                    media_type: r.get(1)?,
                    original: r.get(2)?,
                    metadata: r.get(3)?,
                })
            })
            .optional()?)
    }

    /// Pending and failed indexing jobs of this tenant, and its pending
    /// LLM extraction jobs.
    pub fn job_counts(&self) -> Result<(i64, i64, i64)> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok((0, 0, 0));
        };
        Ok(self.conn.query_row(JOB_COUNTS_SQL, [tenant_id], |r| {
            Ok((r.get(0)?, r.get(2)?, r.get(1)?))
        })?)
    }

    /// This tenant's failed indexing jobs counted by reason code, and the
    /// `recent` most recent failures (newest first).
    pub fn failures(&self, recent: usize) -> Result<(FailureCounts, Vec<RecentFailure>)> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok((Vec::new(), Vec::new()));
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT coalesce(failure, 'content'), count(*) FROM jobs
              WHERE tenant_id = ?1 AND state = 'failed' AND kind != 'llm_extract'
              GROUP BY 1 ORDER BY 1",
        )?;
        let counts = stmt
            .query_map([tenant_id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if counts.is_empty() {
            return Ok((counts, Vec::new()));
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.doc_id, coalesce(j.failure, 'content'), coalesce(j.error, ''), j.updated_at
               FROM jobs j JOIN documents d ON d.id = j.document_id
              WHERE j.tenant_id = ?1 AND j.state = 'failed' AND j.kind != 'llm_extract'
              ORDER BY j.updated_at DESC, j.id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![tenant_id, recent as i64], |r| {
            Ok(RecentFailure {
                document_id: r.get(0)?,
                reason: r.get(1)?,
                message: r.get(2)?,
                failed_at: crate::clock::rfc3339(r.get(3)?),
            })
        })?;
        Ok((counts, rows.collect::<rusqlite::Result<_>>()?))
    }

    /// The chunks of a document, in order (for LLM extraction).
    pub fn document_chunks(&self, document_key: i64) -> Result<Vec<StoredChunk>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.id, c.byte_start, {} FROM chunks c
              WHERE c.tenant_id = ?1 AND c.document_id = ?2 ORDER BY c.ordinal",
            chunk_text("c")
        ))?;
        let rows = stmt.query_map(params![tenant_id, document_key], |r| {
            Ok(StoredChunk {
                chunk_key: r.get(0)?,
                start: r.get::<_, i64>(1)? as usize,
                text: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Durability;

    /// The counts taken at every start (and by status) read the partial
    /// indexes of pending and failed jobs, never the whole jobs table:
    /// one job per document ever stored made a start at a million
    /// documents read hundreds of megabytes.
    #[test]
    fn backlog_and_job_counts_read_only_the_partial_indexes() {
        let dir = std::env::temp_dir().join(crate::ids::new_id("journal-plan"));
        std::fs::create_dir_all(&dir).unwrap();
        let conn = crate::store::db::open_writer(&dir, Durability::Normal).unwrap();
        for sql in [BACKLOG_SQL, JOB_COUNTS_SQL] {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let tenant = vec![1; stmt.parameter_count()];
            let steps: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(tenant), |r| {
                    r.get::<_, String>(3)
                })
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            let over_jobs: Vec<&String> = steps.iter().filter(|s| s.contains("jobs")).collect();
            assert!(!over_jobs.is_empty(), "{steps:?}");
            for step in over_jobs {
                assert!(
                    step.contains("jobs_pending") || step.contains("jobs_failed"),
                    "{sql}: {step}"
                );
            }
        }
        std::fs::remove_dir_all(dir).ok();
    }
}
