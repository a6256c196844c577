//! The reads recall's lanes make: the keyword lane's full-text ranking, the
//! vector lane's nearest vectors, and chunks by key for the lanes that rank
//! keys themselves (graph, communities, neighbours). Each reads through a
//! [`Scope`]: a candidate whose document the scope does not admit is passed
//! over inside the lane, and the lane looks further down its own ranking
//! until it has what it was asked for or the ranking is exhausted.

use rusqlite::types::Value;

use super::chunks::{hit_row, ChunkHit};
use super::scope::Scope;
use super::tenant::{TenantReader, VISIBLE};
use crate::error::Result;

/// A lane first looks this many times as deep as it was asked when its
/// scope filters (each further look is [`DEEPER`] times deeper): about the
/// share of candidates a broad filter passes over.
pub const FILTERED_DEPTH: usize = 4;

/// How much deeper each further look goes.
pub const DEEPER: usize = 8;

/// Columns of a [`ChunkHit`] for a query over `chunks c JOIN documents d`,
/// with `score` in the BM25 column.
fn hit_columns(score: &str) -> String {
    format!(
        "c.id, c.ordinal, c.byte_start, c.byte_end, c.text, d.doc_id, d.source,
         d.title, d.metadata, d.provenance, d.created_at, {score}, c.page"
    )
}

impl TenantReader<'_> {
    /// The base parameters of a lane statement: tenant `?1`, `key` `?2`,
    /// visibility `?8`, `?9`.
    fn lane_params(&self, tenant_id: i64, key: i64) -> Vec<Value> {
        let v = self.visible;
        let mut p = vec![Value::Integer(tenant_id), Value::Integer(key)];
        p.resize(7, Value::Null);
        p.push(Value::Integer(v.now));
        p.push(Value::Integer(v.since));
        p
    }

    /// The chunk `key` as a hit, if `scope` admits it (and it is this
    /// tenant's and visible).
    fn admitted_chunk(&self, tenant_id: i64, key: i64, scope: &Scope) -> Result<Option<ChunkHit>> {
        if scope.lists(key) == Some(false) {
            return Ok(None);
        }
        let sql = format!(
            "SELECT {} FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?1 AND c.id = ?2 AND {VISIBLE} AND {}",
            hit_columns("0.0"),
            scope.condition()
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(
            scope.bind(self.lane_params(tenant_id, key)),
        ))?;
        Ok(match rows.next()? {
            Some(row) => Some(hit_row(row)?),
            None => None,
        })
    }

    /// Best chunks for an FTS5 MATCH expression that `scope` admits, best
    /// first. The expression must come from the query layer's builder,
    /// which quotes every term.
    pub fn keyword_search(
        &self,
        match_expr: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<ChunkHit>> {
        self.full_text(match_expr, limit, scope, "rank")
    }

    /// Like [`Self::keyword_search`] but takes the newest matches instead of
    /// ranking every match (FTS5 walks rowids backwards); `bm25` is 0 for
    /// all. For questions made only of terms so common that ranking all
    /// matches would be slow and uninformative (even BM25's IDF would scan
    /// every posting).
    pub fn keyword_search_recent(
        &self,
        match_expr: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<ChunkHit>> {
        self.full_text(match_expr, limit, scope, "rowid DESC")
    }

    /// Matches of `match_expr` in `order`, looked at in order (FTS5's
    /// `ORDER BY rank LIMIT` is optimised, so each look is one bounded
    /// ranking), keeping those `scope` admits, until `limit` are kept or
    /// the matches run out.
    ///
    /// The depth is written into the SQL, not bound: SQLite plans a bound
    /// LIMIT by its value and re-prepares the statement whenever the value
    /// changes (measured: about 12% of a query's CPU when lanes asked for
    /// different limits). Each distinct depth is one cached statement.
    fn full_text(
        &self,
        match_expr: &str,
        limit: usize,
        scope: &Scope,
        order: &str,
    ) -> Result<Vec<ChunkHit>> {
        let (Some(tenant_id), Some(fts)) = (self.tenant_id, self.fts_table()) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let newest = order != "rank";
        let mut depth = if scope.filters() {
            limit * FILTERED_DEPTH
        } else {
            limit
        };
        let mut looked = 0;
        let mut hits = Vec::with_capacity(limit);
        loop {
            let ranked: Vec<(i64, f64)> = {
                let score = if newest { "0.0" } else { "rank" };
                let mut stmt = self.conn.prepare_cached(&format!(
                    "SELECT rowid, {score} FROM {fts} WHERE {fts} MATCH ?1
                      ORDER BY {order} LIMIT {depth}"
                ))?;
                let rows = stmt.query_map([match_expr], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            for &(key, rank) in &ranked[looked.min(ranked.len())..] {
                if let Some(mut hit) = self.admitted_chunk(tenant_id, key, scope)? {
                    hit.bm25 = rank;
                    hits.push(hit);
                    if hits.len() == limit {
                        return Ok(hits);
                    }
                }
            }
            if ranked.len() < depth {
                return Ok(hits);
            }
            looked = ranked.len();
            depth *= DEEPER;
        }
    }

    /// The `k` chunks `scope` admits whose vectors are most similar to
    /// `query`, best first (`bm25` holds the negated cosine so that lower
    /// is better, as for keyword hits).
    pub fn vector_search(&self, query: &[f32], k: usize, scope: &Scope) -> Result<Vec<ChunkHit>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        // One snapshot for the files' generation and the slots' chunks: a
        // compaction renumbers the slots and switches the files at once
        // (`maintenance`), and a slot read against the other generation's
        // rows would name the wrong chunk.
        self.in_snapshot(|| self.vector_search_in_snapshot(tenant_id, query, k, scope))
    }

    fn vector_search_in_snapshot(
        &self,
        tenant_id: i64,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<ChunkHit>> {
        let generation: i64 = self
            .conn
            .prepare_cached("SELECT vector_generation FROM tenants WHERE id = ?1")?
            .query_row([tenant_id], |r| r.get(0))?;
        // A compaction stages its files before it commits and keeps the
        // old ones until it has: both generations are found. None: the
        // tenant has no vector files (or this snapshot outlived a switch).
        let Some(vectors) = self.vectors.matching(tenant_id, generation) else {
            return Ok(Vec::new());
        };
        if k == 0 {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?1 AND c.vector_slot = ?2 AND {VISIBLE} AND {}",
            hit_columns("0.0"),
            scope.condition()
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut hits = Vec::with_capacity(k);
        let mut keep = |found: &[super::vectors::SlotScore], hits: &mut Vec<ChunkHit>| {
            for f in found {
                // A slot without an admitted chunk belonged to a deleted
                // chunk, or to a document the scope leaves out: skip it.
                let mut rows = stmt.query(rusqlite::params_from_iter(
                    scope.bind(self.lane_params(tenant_id, f.slot as i64)),
                ))?;
                if let Some(row) = rows.next()? {
                    let mut hit = hit_row(row)?;
                    hit.bm25 = -f64::from(f.score);
                    hits.push(hit);
                    if hits.len() == k {
                        break;
                    }
                }
            }
            Ok::<_, crate::error::Error>(())
        };
        if let Some(slots) = scope.slots(generation) {
            keep(&vectors.search_among(query, k, slots), &mut hits)?;
            return Ok(hits);
        }
        let mut depth = if scope.filters() {
            k * FILTERED_DEPTH
        } else {
            k
        };
        let mut looked = 0;
        loop {
            let found = vectors.search(query, depth);
            keep(&found[looked.min(found.len())..], &mut hits)?;
            if hits.len() >= k || found.len() < depth {
                return Ok(hits);
            }
            looked = found.len();
            depth *= DEEPER;
        }
    }

    /// The first `limit` chunks by key that `scope` admits, in the order
    /// given, each with its score (negated into `bm25`, lower is better).
    /// Keys not of this tenant are skipped.
    pub fn scoped_chunks_by_keys(
        &self,
        scored: &[(i64, f64)],
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<ChunkHit>> {
        let Some(tenant_id) = self.tenant_id else {
            return Ok(Vec::new());
        };
        let mut hits = Vec::with_capacity(scored.len().min(limit));
        for &(key, score) in scored {
            if hits.len() == limit {
                break;
            }
            if let Some(mut hit) = self.admitted_chunk(tenant_id, key, scope)? {
                hit.bm25 = -score;
                hits.push(hit);
            }
        }
        Ok(hits)
    }

    /// Chunks by key, in the order given, each with `score` (negated into
    /// `bm25`, lower is better), superseded versions included. Keys not of
    /// this tenant are skipped.
    pub fn chunks_by_keys(&self, scored: &[(i64, f64)]) -> Result<Vec<ChunkHit>> {
        self.scoped_chunks_by_keys(scored, usize::MAX, &Scope::everything())
    }
}
