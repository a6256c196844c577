//! Searching a tenant's vectors: an int8 scan of every committed row (in
//! two threads past [`PARALLEL_SCAN_MIN_ROWS`]; past
//! [`signs::SIGN_PASS_MIN_ROWS`], of the rows the sign pass picks), then
//! the best candidates scored again with the query unquantized
//! ([`TenantVectors::score_slots`]), so that only the stored rows'
//! rounding is left in the order of the results.

use std::sync::Arc;

use memmap2::Mmap;

use super::kernel::{self, dot_f32, quantize, TopK};
use super::signs::{self, MIN_SIGN_CANDIDATES, SIGN_CANDIDATES_PER_WANTED};
use super::{
    SlotScore, TenantVectors, HEADER_BYTES, MIN_RESCORED, PARALLEL_SCAN_MIN_ROWS,
    RESCORE_PER_RESULT,
};

/// Which rows the int8 scan scores.
#[derive(Clone, Copy)]
enum Pass {
    /// Those the sign pass picks, when the tenant and the search call for
    /// it; else every row.
    Picked,
    EveryRow,
}

impl TenantVectors {
    /// The `k` rows most similar to `query` (cosine; the query need not be
    /// normalized), best first: an int8 scan of the committed rows (those
    /// the sign pass picks, in a large tenant), then the best candidates
    /// scored again with the query unquantized.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<SlotScore> {
        self.search_by(query, k, Pass::Picked)
    }

    /// [`Self::search`] with an int8 scan of every row, whatever the
    /// tenant's size: what the sign pass approximates (benchmarks and
    /// tests compare the two).
    pub fn search_every_row(&self, query: &[f32], k: usize) -> Vec<SlotScore> {
        self.search_by(query, k, Pass::EveryRow)
    }

    fn search_by(&self, query: &[f32], k: usize, pass: Pass) -> Vec<SlotScore> {
        let keep = (k * RESCORE_PER_RESULT).max(MIN_RESCORED);
        let candidates: Vec<u64> = self
            .candidates_by(query, keep, pass)
            .iter()
            .map(|c| c.slot)
            .collect();
        self.score_slots(query, k, &candidates)
    }

    /// The `keep` rows the int8 scan finds most similar to `query`, best
    /// first by that approximate score (in a large tenant, of the rows the
    /// sign pass picks).
    pub fn candidates(&self, query: &[f32], keep: usize) -> Vec<SlotScore> {
        self.candidates_by(query, keep, Pass::Picked)
    }

    fn candidates_by(&self, query: &[f32], keep: usize, pass: Pass) -> Vec<SlotScore> {
        let snap = self.snapshot();
        let Some(q8) = snap.q8 else {
            return Vec::new();
        };
        let rows = snap.rows as usize;
        let Some(query) = self.unit(query) else {
            return Vec::new();
        };
        if rows == 0 || keep == 0 {
            return Vec::new();
        }
        let mut q = vec![0i8; self.spec.dim];
        let qscale = quantize(&query, &mut q);
        let picked = match pass {
            Pass::Picked => self.sign_pass(&q8, rows, &q, keep),
            Pass::EveryRow => None,
        };
        let found = match picked {
            Some(picked) => {
                signs::rescore(&q8, self.q8_row, self.spec.dim, &q, qscale, &picked, keep)
            }
            None => self.scan_all(&q8, rows, &q, qscale, keep),
        };
        found
            .into_sorted()
            .into_iter()
            .map(|s| SlotScore {
                slot: s.slot,
                score: s.score,
            })
            .collect()
    }

    /// The `k` rows among `slots` most similar to `query`, best first: the
    /// unquantized query against each stored row (its int8 values times
    /// its scale). Slots past the committed rows are skipped.
    pub fn score_slots(&self, query: &[f32], k: usize, slots: &[u64]) -> Vec<SlotScore> {
        let snap = self.snapshot();
        let (Some(q8), Some(query)) = (snap.q8, self.unit(query)) else {
            return Vec::new();
        };
        if k == 0 {
            return Vec::new();
        }
        let dim = self.spec.dim;
        let mut top = TopK::new(k);
        for &slot in slots.iter().filter(|&&s| s < snap.rows) {
            let start = HEADER_BYTES as usize + slot as usize * self.q8_row;
            let row = &q8[start..start + self.q8_row];
            let (values, scale) = kernel::row_parts(row, dim);
            top.push(kernel::dot_f32_i8(&query, values) * scale, slot);
        }
        top.into_sorted()
            .into_iter()
            .map(|s| SlotScore {
                slot: s.slot,
                score: s.score,
            })
            .collect()
    }

    /// `query` scaled to unit length; `None` for a query of the wrong
    /// dimension, zero or not finite.
    fn unit(&self, query: &[f32]) -> Option<Vec<f32>> {
        let norm = dot_f32(query, query).sqrt();
        (query.len() == self.spec.dim && norm != 0.0 && norm.is_finite())
            .then(|| query.iter().map(|x| x / norm).collect())
    }

    /// Builds the sign index of the committed rows now, on this thread
    /// (benchmarks and tests: searches build it on a helper thread).
    pub fn build_sign_index(&self) {
        let snap = self.snapshot();
        if let Some(q8) = snap.q8 {
            self.signs
                .build_now(&q8, self.q8_row, self.spec.dim, snap.rows);
        }
    }

    /// The rows the sign pass picks for the int8 rows to score, for a
    /// tenant large enough and a search narrow enough to use it (`None`:
    /// scan every row).
    fn sign_pass(&self, q8: &Arc<Mmap>, rows: usize, q: &[i8], keep: usize) -> Option<Vec<u64>> {
        let rows = rows as u64;
        let wanted = (keep * SIGN_CANDIDATES_PER_WANTED)
            .max(MIN_SIGN_CANDIDATES)
            .max((rows / signs::SIGN_CANDIDATE_SHARE) as usize);
        if rows < signs::SIGN_PASS_MIN_ROWS || wanted as u64 > rows / signs::SIGN_PASS_MAX_SHARE {
            return None;
        }
        self.signs
            .candidates(q8, self.q8_row, self.spec.dim, rows, q, wanted)
    }

    /// The best `keep` int8 scores of every one of the first `rows` rows.
    fn scan_all(&self, q8: &[u8], rows: usize, q: &[i8], qscale: f32, keep: usize) -> TopK {
        let body = &q8[HEADER_BYTES as usize..HEADER_BYTES as usize + rows * self.q8_row];
        if rows >= PARALLEL_SCAN_MIN_ROWS {
            let half = rows / 2;
            let (a, b) = body.split_at(half * self.q8_row);
            std::thread::scope(|s| {
                let left = s.spawn(|| self.scan(a, 0, q, qscale, keep));
                let mut right = self.scan(b, half as u64, q, qscale, keep);
                right.merge(left.join().unwrap_or_else(|_| TopK::new(0)));
                right
            })
        } else {
            self.scan(body, 0, q, qscale, keep)
        }
    }

    fn scan(&self, rows: &[u8], first_slot: u64, q: &[i8], qscale: f32, keep: usize) -> TopK {
        let mut top = TopK::new(keep);
        kernel::scan_q8(
            rows,
            self.q8_row,
            self.spec.dim,
            q,
            qscale,
            first_slot,
            &mut top,
        );
        top
    }
}
