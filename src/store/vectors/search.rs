//! Searching a tenant's vectors: an int8 scan of every committed row (in
//! two threads past [`PARALLEL_SCAN_MIN_ROWS`]), then the best candidates
//! scored again with the query unquantized ([`TenantVectors::score_slots`]),
//! so that only the stored rows' rounding is left in the order of the
//! results.

use super::kernel::{self, dot_f32, quantize, TopK};
use super::{
    SlotScore, TenantVectors, HEADER_BYTES, MIN_RESCORED, PARALLEL_SCAN_MIN_ROWS,
    RESCORE_PER_RESULT,
};

impl TenantVectors {
    /// The `k` rows most similar to `query` (cosine; the query need not be
    /// normalized), best first: an int8 scan of every committed row, then
    /// the best candidates scored again with the query unquantized.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<SlotScore> {
        let keep = (k * RESCORE_PER_RESULT).max(MIN_RESCORED);
        let candidates: Vec<u64> = self
            .candidates(query, keep)
            .iter()
            .map(|c| c.slot)
            .collect();
        self.score_slots(query, k, &candidates)
    }

    /// The `keep` rows the int8 scan finds most similar to `query`, best
    /// first by that approximate score.
    pub fn candidates(&self, query: &[f32], keep: usize) -> Vec<SlotScore> {
        let snap = self
            .snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
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
        let body = &q8[HEADER_BYTES as usize..HEADER_BYTES as usize + rows * self.q8_row];
        let found = if rows >= PARALLEL_SCAN_MIN_ROWS {
            let half = rows / 2;
            let (a, b) = body.split_at(half * self.q8_row);
            std::thread::scope(|s| {
                let left = s.spawn(|| self.scan(a, 0, &q, qscale, keep));
                let mut right = self.scan(b, half as u64, &q, qscale, keep);
                right.merge(left.join().unwrap_or_else(|_| TopK::new(0)));
                right
            })
        } else {
            self.scan(body, 0, &q, qscale, keep)
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
        let snap = self
            .snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
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
