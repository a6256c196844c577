//! The reads recall's lanes make: the keyword lane's full-text ranking, the
//! vector lane's nearest vectors, and chunks by key for the lanes that rank
//! keys themselves (graph, communities, neighbours). Each reads through a
//! [`Scope`]: a candidate whose document the scope does not admit is passed
//! over inside the lane, and the lane looks further down its own ranking
//! until it has what it was asked for or the ranking is exhausted.
//!
//! A listed scope answers "admitted?" from its list; a checked one from
//! its tenant's admission catalog (see `admission`) when it has one, else
//! from the documents, for a batch of candidates per statement (one
//! statement per candidate cost more than the lookups it makes). How deep a lane
//! looks next follows the share of candidates admitted so far.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;

use super::chunks::{chunk_text_beside, hit_row, ChunkHit};
use super::scope::Scope;
use super::tenant::{TenantReader, VISIBLE};
use super::vectors::{SlotScore, TenantVectors};
use crate::error::Result;

/// The vector lane under a filter takes this many int8 candidates per
/// candidate it wants admitted (a share of 1 in 64 is found in one scan);
/// if too few were admitted, it scans again as deep as the share admitted
/// says it needs, times [`DEPTH_MARGIN`], and at least [`DEEPER`] times
/// deeper. A scan costs the same at any depth; admission checks stop as
/// soon as enough are admitted.
pub const FILTERED_VECTOR_DEPTH: usize = 64;

/// The keyword lane under a filter first ranks this many matches per
/// result it wants (a share of 1 in 16 is found in one look); a further
/// look goes as deep as the share admitted says it needs.
pub const FILTERED_KEYWORD_DEPTH: usize = 16;

/// The least a further look multiplies the depth by.
pub const DEEPER: usize = 2;

/// Margin on the depth a further look estimates it needs.
const DEPTH_MARGIN: f64 = 1.5;

/// Most candidates whose admission one statement checks.
const CHECK_BATCH: usize = 256;

/// Columns of a [`ChunkHit`] for a query over `chunks c JOIN documents d`,
/// with `score` in the BM25 column.
fn hit_columns(score: &str) -> String {
    format!(
        "c.id, c.ordinal, c.byte_start, c.byte_end, {}, d.doc_id, d.source,
         d.title, d.metadata, d.provenance, d.created_at, {score}, c.page",
        chunk_text_beside("c", "d")
    )
}

/// The next depth of a lane that has looked `looked` deep and kept `kept`
/// of the `wanted`.
fn deeper(depth: usize, looked: usize, kept: usize, wanted: usize) -> usize {
    let share = kept.max(1) as f64 / looked.max(1) as f64;
    let needed = (wanted as f64 / share * DEPTH_MARGIN).ceil() as usize;
    needed.max(depth * DEEPER)
}

/// What a chunk is looked up by.
#[derive(Clone, Copy)]
pub(super) enum Key {
    Chunk,
    /// A vector slot in the files of this generation.
    Slot(i64),
}

impl Key {
    fn column(self) -> &'static str {
        match self {
            Key::Chunk => "c.id",
            Key::Slot(_) => "c.vector_slot",
        }
    }

    /// The generation of the files a slot key is in.
    fn generation(self) -> Option<i64> {
        match self {
            Key::Chunk => None,
            Key::Slot(generation) => Some(generation),
        }
    }
}

impl TenantReader<'_> {
    /// The base parameters of a lane statement: tenant `?1`, `key` `?2`,
    /// visibility `?8`, `?9`.
    fn lane_params(&self, tenant_id: i64, key: Value) -> Vec<Value> {
        let v = self.visible;
        let mut p = vec![Value::Integer(tenant_id), key];
        p.resize(7, Value::Null);
        p.push(Value::Integer(v.now));
        p.push(Value::Integer(v.since));
        p
    }

    /// The chunks at `keys` (in rank order) that `scope` admits (and that
    /// are this tenant's and visible), as hits with their keys, in the same
    /// order, read [`CHECK_BATCH`] keys to a statement (a statement per key
    /// cost the vector lane about two milliseconds of its sixty hits at a
    /// million chunks).
    fn admitted_hits(
        &self,
        tenant_id: i64,
        by: Key,
        keys: &[i64],
        scope: &Scope,
    ) -> Result<Vec<(i64, ChunkHit)>> {
        let keys: Vec<i64> = if matches!(by, Key::Chunk) {
            keys.iter()
                .copied()
                .filter(|&k| scope.lists(k) != Some(false))
                .collect()
        } else {
            keys.to_vec()
        };
        // What the catalog admitted needs only its rows read (and their
        // version and retention checked again, in this snapshot).
        let (condition, keys, bind) = match scope.catalog_admits(by.generation(), &keys) {
            Some(admitted) => (scope.version_condition(), admitted, false),
            None => (scope.condition(), keys, true),
        };
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {}, {col} FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?1 AND {col} IN (SELECT value FROM json_each(?2))
                AND {VISIBLE} AND {condition}",
            hit_columns("0.0"),
            col = by.column(),
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut found = HashMap::with_capacity(keys.len());
        for batch in keys.chunks(CHECK_BATCH) {
            let list = serde_json::to_string(batch).unwrap_or_else(|_| "[]".into());
            let params = self.lane_params(tenant_id, Value::Text(list));
            let params = if bind { scope.bind(params) } else { params };
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            while let Some(row) = rows.next()? {
                found.insert(row.get::<_, i64>(13)?, hit_row(row)?);
            }
        }
        Ok(keys
            .iter()
            .filter_map(|&k| found.remove(&k).map(|hit| (k, hit)))
            .collect())
    }

    /// Of `keys` (in rank order), those whose chunk `scope` admits, in the
    /// same order.
    pub(super) fn admitted_keys(
        &self,
        tenant_id: i64,
        by: Key,
        keys: &[i64],
        scope: &Scope,
    ) -> Result<Vec<i64>> {
        if matches!(by, Key::Chunk) && scope.is_listed() {
            return Ok(keys
                .iter()
                .copied()
                .filter(|&k| scope.lists(k) == Some(true))
                .collect());
        }
        if let Some(admitted) = scope.catalog_admits(by.generation(), keys) {
            return Ok(admitted);
        }
        let sql = format!(
            "SELECT {col} FROM chunks c JOIN documents d ON d.id = c.document_id
              WHERE c.tenant_id = ?1 AND {col} IN (SELECT value FROM json_each(?2))
                AND {VISIBLE} AND {}",
            scope.condition(),
            col = by.column()
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut admitted = HashSet::new();
        for batch in keys.chunks(CHECK_BATCH) {
            let list = serde_json::to_string(batch).unwrap_or_else(|_| "[]".into());
            let rows = stmt.query_map(
                rusqlite::params_from_iter(
                    scope.bind(self.lane_params(tenant_id, Value::Text(list))),
                ),
                |r| r.get::<_, i64>(0),
            )?;
            for row in rows {
                admitted.insert(row?);
            }
        }
        Ok(keys
            .iter()
            .copied()
            .filter(|k| admitted.contains(k))
            .collect())
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

    /// Matches of `match_expr` in `order` that `scope` admits, until
    /// `limit` are kept or the matches run out.
    ///
    /// A look is one bounded ranking (FTS5's `ORDER BY rank LIMIT` keeps
    /// only the best), checked a batch at a time; a deeper one runs only
    /// when too few were admitted (unfiltered: when superseded versions
    /// took places). A listed scope ranks every match once instead.
    ///
    /// A depth is written into the SQL, not bound: SQLite plans a bound
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
        if limit == 0 || scope.is_empty() {
            return Ok(Vec::new());
        }
        let score = if order == "rank" { "rank" } else { "0.0" };
        let kept = if scope.is_listed() {
            // Every match is ranked once and tested against the list (a
            // lookup each): a listed scope admits a small share, which a
            // bounded look would rarely hold enough of.
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT rowid, {score} FROM {fts} WHERE {fts} MATCH ?1 ORDER BY {order}"
            ))?;
            let mut rows = stmt.query([match_expr])?;
            let mut kept: Vec<(i64, f64)> = Vec::with_capacity(limit);
            while let Some(r) = rows.next()? {
                let key: i64 = r.get(0)?;
                if scope.lists(key) == Some(true) {
                    kept.push((key, r.get(1)?));
                    if kept.len() == limit {
                        break;
                    }
                }
            }
            kept
        } else {
            // Bounded looks (sorting every match cost more than ranking
            // it), checked a batch at a time, deeper only when too few
            // were admitted.
            let mut depth = if scope.filters() {
                limit * FILTERED_KEYWORD_DEPTH
            } else {
                limit
            };
            let mut looked = 0;
            let mut kept: Vec<(i64, f64)> = Vec::with_capacity(limit);
            loop {
                let mut stmt = self.conn.prepare_cached(&format!(
                    "SELECT rowid, {score} FROM {fts} WHERE {fts} MATCH ?1
                      ORDER BY {order} LIMIT {depth}"
                ))?;
                let ranked: Vec<(i64, f64)> = stmt
                    .query_map([match_expr], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                let fresh = &ranked[looked.min(ranked.len())..];
                let (mut at, mut size) = (0, (limit * 2).min(CHECK_BATCH));
                while at < fresh.len() && kept.len() < limit {
                    let end = (at + size).min(fresh.len());
                    let mut batch = fresh[at..end].to_vec();
                    self.keep_admitted(tenant_id, Key::Chunk, &mut batch, &mut kept, scope)?;
                    (at, size) = (end, CHECK_BATCH);
                }
                if kept.len() >= limit || ranked.len() < depth {
                    break kept;
                }
                looked = ranked.len();
                depth = deeper(depth, looked, kept.len(), limit);
            }
        };
        // Admitted a moment ago in this read; a chunk deleted since is
        // simply left out.
        let kept: Vec<(i64, f64)> = kept.into_iter().take(limit).collect();
        let keys: Vec<i64> = kept.iter().map(|(k, _)| *k).collect();
        let ranks: HashMap<i64, f64> = kept.into_iter().collect();
        let hits = self.admitted_hits(tenant_id, Key::Chunk, &keys, scope)?;
        Ok(hits
            .into_iter()
            .map(|(key, mut hit)| {
                hit.bm25 = ranks[&key];
                hit
            })
            .collect())
    }

    /// Moves `batch` (candidates in rank order) into `kept`, those `scope`
    /// admits only, in order.
    fn keep_admitted<T: Copy>(
        &self,
        tenant_id: i64,
        by: Key,
        batch: &mut Vec<(i64, T)>,
        kept: &mut Vec<(i64, T)>,
        scope: &Scope,
    ) -> Result<()> {
        let keys: Vec<i64> = batch.iter().map(|(k, _)| *k).collect();
        let admitted: HashSet<i64> = self
            .admitted_keys(tenant_id, by, &keys, scope)?
            .into_iter()
            .collect();
        kept.extend(batch.drain(..).filter(|(k, _)| admitted.contains(k)));
        Ok(())
    }

    /// The `k` chunks `scope` admits whose vectors are most similar to
    /// `query`, best first (`bm25` holds the negated cosine so that lower
    /// is better, as for keyword hits).
    pub fn vector_search(&self, query: &[f32], k: usize, scope: &Scope) -> Result<Vec<ChunkHit>> {
        Ok(self.vector_search_beside(query, k, scope, || ())?.0)
    }

    /// [`Self::vector_search`], and `beside` run on this thread while the
    /// vectors are scanned on another: an unfiltered search reads nothing
    /// from SQLite between the files' generation and its hits, so the
    /// keyword lane's ranking (on this reader's connection) and the vector
    /// scan overlap. Under a filter the two run one after the other.
    pub fn vector_search_beside<T>(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
        beside: impl FnOnce() -> T,
    ) -> Result<(Vec<ChunkHit>, T)> {
        let Some(tenant_id) = self.tenant_id.filter(|_| k > 0 && !scope.is_empty()) else {
            return Ok((Vec::new(), beside()));
        };
        let mut beside = Some(beside);
        let mut done = None;
        // One snapshot for the files' generation and the slots' chunks: a
        // compaction renumbers the slots and switches the files at once
        // (`maintenance`), and a slot read against the other generation's
        // rows would name the wrong chunk.
        let hits = self.in_snapshot(|| {
            let generation: i64 = self
                .conn
                .prepare_cached("SELECT vector_generation FROM tenants WHERE id = ?1")?
                .query_row([tenant_id], |r| r.get(0))?;
            // A compaction stages its files before it commits and keeps
            // the old ones until it has: both generations are found. None:
            // the tenant has no vector files (or this snapshot outlived a
            // switch).
            let Some(vectors) = self.vectors.matching(tenant_id, generation) else {
                return Ok(Vec::new());
            };
            let found = if let Some(slots) = scope.slots(generation) {
                vectors.score_slots(query, k, slots)
            } else if !scope.filters() {
                let run = beside.take();
                let (found, out) = std::thread::scope(|s| {
                    let scan = s.spawn(|| vectors.search(query, k));
                    let out = run.map(|f| f());
                    (scan.join(), out)
                });
                done = out;
                found.map_err(|_| crate::error::Error::internal("the vector scan panicked"))?
            } else {
                self.filtered_vector_search(tenant_id, generation, &vectors, query, k, scope)?
            };
            self.hits_at_slots(tenant_id, generation, &found, k, scope)
        })?;
        let out = match (done, beside) {
            (Some(out), _) => out,
            (None, Some(f)) => f(),
            (None, None) => unreachable!("`beside` is taken only where its result is kept"),
        };
        Ok((hits, out))
    }

    /// The `k` best of the tenant's vectors whose chunks `scope` (a
    /// filter) admits: the int8 scan's candidates in its order, checked a
    /// batch at a time until `k` are admitted (each check costs three
    /// B-tree descents, as much as the scan spends on a thousand rows, so
    /// no more are admitted than are returned); those are scored again
    /// with the query unquantized.
    fn filtered_vector_search(
        &self,
        tenant_id: i64,
        generation: i64,
        vectors: &TenantVectors,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<SlotScore>> {
        let wanted = k;
        let mut depth = wanted * FILTERED_VECTOR_DEPTH;
        let mut looked = 0;
        let mut kept: Vec<(i64, ())> = Vec::with_capacity(wanted);
        loop {
            let candidates = vectors.candidates(query, depth);
            let fresh = &candidates[looked.min(candidates.len())..];
            let (mut at, mut size) = (0, (wanted * 2).min(CHECK_BATCH));
            while at < fresh.len() && kept.len() < wanted {
                let end = (at + size).min(fresh.len());
                let mut batch: Vec<(i64, ())> =
                    fresh[at..end].iter().map(|c| (c.slot as i64, ())).collect();
                self.keep_admitted(
                    tenant_id,
                    Key::Slot(generation),
                    &mut batch,
                    &mut kept,
                    scope,
                )?;
                (at, size) = (end, CHECK_BATCH);
            }
            if kept.len() >= wanted || candidates.len() < depth {
                break;
            }
            looked = candidates.len();
            depth = deeper(depth, looked, kept.len(), wanted);
        }
        let slots: Vec<u64> = kept.iter().take(wanted).map(|(s, _)| *s as u64).collect();
        Ok(vectors.score_slots(query, k, &slots))
    }

    /// The chunks at `found` slots that `scope` admits, as hits, at most
    /// `k`.
    fn hits_at_slots(
        &self,
        tenant_id: i64,
        generation: i64,
        found: &[SlotScore],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<ChunkHit>> {
        // A slot without an admitted chunk belonged to a deleted chunk, or
        // to a document the scope leaves out: it is skipped.
        let slots: Vec<i64> = found.iter().map(|f| f.slot as i64).collect();
        let scores: HashMap<i64, f32> = found.iter().map(|f| (f.slot as i64, f.score)).collect();
        let hits = self.admitted_hits(tenant_id, Key::Slot(generation), &slots, scope)?;
        Ok(hits
            .into_iter()
            .take(k)
            .map(|(slot, mut hit)| {
                hit.bm25 = -f64::from(scores[&slot]);
                hit
            })
            .collect())
    }

    /// The newest chunks (at most `DEPTH`, by key, newest first) whose
    /// text holds the full-text phrase `phrase`: a probe bounded however
    /// many chunks match, for the near-duplicate check of an ingest.
    /// `DEPTH` is written into the SQL (see [`Self::full_text`]).
    pub fn newest_with_phrase<const DEPTH: usize>(&self, phrase: &str) -> Result<Vec<i64>> {
        let Some(fts) = self.fts_table() else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 ORDER BY rowid DESC LIMIT {DEPTH}"
        ))?;
        let keys = stmt
            .query_map([format!("text : {phrase}")], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
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
        let mut at = 0;
        while at < scored.len() && hits.len() < limit {
            // No more keys to a statement than hits still wanted: a batch
            // never reads a row past the limit.
            let size = (limit - hits.len()).min(CHECK_BATCH);
            let batch = &scored[at..(at + size).min(scored.len())];
            at += batch.len();
            let keys: Vec<i64> = batch.iter().map(|(k, _)| *k).collect();
            let mut scores = HashMap::with_capacity(batch.len());
            for &(key, score) in batch {
                scores.entry(key).or_insert(score);
            }
            for (key, mut hit) in self.admitted_hits(tenant_id, Key::Chunk, &keys, scope)? {
                hit.bm25 = -scores[&key];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_further_look_goes_as_deep_as_the_share_admitted_says() {
        // 10 of 240 admitted, 30 wanted: about 720 needed, with margin.
        assert_eq!(deeper(240, 240, 10, 30), 1080);
        // Most admitted: still at least twice as deep.
        assert_eq!(deeper(240, 240, 29, 30), 480);
        // None admitted: as though one had been.
        assert_eq!(deeper(240, 240, 0, 30), 10_800);
    }
}
