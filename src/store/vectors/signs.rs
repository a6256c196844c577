//! The sign pass: a first look at a large tenant's vectors through one bit
//! per dimension, so that a search reads about an eighth of the int8 rows'
//! bytes and scores only the best of them from the int8 rows.
//!
//! The int8 scan reads every row's bytes, and past a few hundred thousand
//! rows it is bound by memory bandwidth (272 bytes a row at dimension
//! 256). The sign index keeps, in memory, each row's signs around the mean
//! vector (which bit is above the mean: 32 bytes at dimension 256) and one
//! weight, the row's mean distance from the mean. A question scores a row
//! by adding its own (int8) components where the row's bit is set and
//! subtracting them where it is not, times the weight: an estimate of the
//! dot product that orders the rows well enough to pick candidates, never
//! the score returned. The question's components are cut to four bits
//! for it, so the sum is four bit counts per word of signs
//! ([`kernel::scan_signs`]).
//!
//! Which candidates are kept: the best [`SIGN_CANDIDATES_PER_WANTED`] per
//! int8 candidate asked for (and at least [`MIN_SIGN_CANDIDATES`], and one
//! row in [`SIGN_CANDIDATE_SHARE`]), scored again from the int8 rows. A question close to a few stored rows finds
//! them (measured at a million notes: the same top ten as the full int8
//! scan); one that is close to nothing has its top ten among thousands of
//! near-ties, and may come back with other rows of the same score (see
//! BENCHMARKS.md, "The vector lane at ten million").
//!
//! The index is built once per file, on a helper thread, when a search
//! first finds a tenant of [`SIGN_PASS_MIN_ROWS`] rows or more (searches
//! scan the int8 rows meanwhile), and extended by the searches that find
//! rows added since. It is never written to disk: it is derived from the
//! int8 rows, and nothing proportional to the store is read at start.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use memmap2::Mmap;

use super::kernel::{self, row_parts, TopK};
use super::HEADER_BYTES;

/// Sign-pass candidates scored from the int8 rows, per int8 candidate
/// asked for.
pub const SIGN_CANDIDATES_PER_WANTED: usize = 16;

/// The fewest sign-pass candidates scored from the int8 rows.
pub const MIN_SIGN_CANDIDATES: usize = 4_096;

/// ... and at least one row in this many: the more rows, the more of them
/// lie as close to a question as its tenth best, and one bit a dimension
/// does not tell them apart.
pub const SIGN_CANDIDATE_SHARE: u64 = 256;

/// A search whose sign pass would leave more than one row in this many to
/// score from the int8 rows scans every int8 row instead: a row read out
/// of order costs several read in order (measured: at a million rows, a
/// filtered look scoring 61,000 picked rows took longer than the scan).
pub const SIGN_PASS_MAX_SHARE: u64 = 64;

/// Tenants with fewer rows are never searched through the sign index:
/// even its fewest candidates would be more than [`SIGN_PASS_MAX_SHARE`]
/// allows (262,144 rows; the int8 scan of as many takes about 2 ms). A
/// search of ten results passes the share from here, the query lane's
/// sixty from about 500,000 rows.
pub const SIGN_PASS_MIN_ROWS: u64 = MIN_SIGN_CANDIDATES as u64 * SIGN_PASS_MAX_SHARE;

/// Rows the mean vector is estimated from, spread over the file.
const MEAN_SAMPLE_ROWS: u64 = 65_536;

/// One row's signs and weight per row, and the mean they are taken around.
pub struct Signs {
    dim: usize,
    /// Words of signs per row: one bit per dimension, rounded up (the bits
    /// past the dimension are zero).
    words: usize,
    mean: Vec<f32>,
    bits: Vec<u64>,
    weights: Vec<f32>,
}

impl Signs {
    /// The index of the first `rows` rows of `body` (a q8 file's rows,
    /// `q8_row` bytes each).
    pub fn build(body: &[u8], q8_row: usize, dim: usize, rows: u64) -> Signs {
        let step = (rows / MEAN_SAMPLE_ROWS).max(1) as usize;
        let mut sum = vec![0f64; dim];
        let mut sampled = 0usize;
        for row in body.chunks_exact(q8_row).take(rows as usize).step_by(step) {
            let (values, scale) = row_parts(row, dim);
            for (s, &v) in sum.iter_mut().zip(values) {
                *s += f64::from(f32::from(v) * scale);
            }
            sampled += 1;
        }
        let mean = sum
            .iter()
            .map(|s| (s / sampled.max(1) as f64) as f32)
            .collect();
        let mut signs = Signs {
            dim,
            words: dim.div_ceil(64),
            mean,
            bits: Vec::new(),
            weights: Vec::new(),
        };
        signs.extend(body, q8_row, rows);
        signs
    }

    /// Rows indexed.
    pub fn rows(&self) -> u64 {
        self.weights.len() as u64
    }

    /// Indexes the rows of `body` after those already indexed, up to
    /// `rows`.
    pub fn extend(&mut self, body: &[u8], q8_row: usize, rows: u64) {
        let from = self.rows() as usize;
        let Some(new) = (rows as usize).checked_sub(from) else {
            return;
        };
        self.bits.reserve(new * self.words);
        self.weights.reserve(new);
        let mut centred = vec![0f32; self.dim];
        for row in body.chunks_exact(q8_row).skip(from).take(new) {
            let (values, scale) = row_parts(row, self.dim);
            let mut distance = 0f32;
            for ((c, &v), m) in centred.iter_mut().zip(values).zip(&self.mean) {
                *c = f32::from(v) * scale - m;
                distance += c.abs();
            }
            for word in centred.chunks(64) {
                let bits = word
                    .iter()
                    .enumerate()
                    .fold(0u64, |b, (i, &c)| b | (u64::from(c > 0.0) << i));
                self.bits.push(bits);
            }
            self.weights.push(distance / self.dim as f32);
        }
    }

    /// The `keep` rows below `rows` whose estimate against the quantized
    /// question `q` is best (on two threads past
    /// [`super::PARALLEL_SCAN_MIN_ROWS`]: beside the keyword lane too, which
    /// measured faster than leaving it a core of its own).
    pub fn best(&self, q: &[i8], rows: u64, keep: usize) -> Vec<u64> {
        let question = kernel::SignQuestion::new(q, self.words);
        let rows = (rows.min(self.rows())) as usize;
        let scan = |from: usize, to: usize| {
            let mut top = TopK::new(keep);
            kernel::scan_signs(
                &self.bits[from * self.words..to * self.words],
                &self.weights[from..to],
                &question,
                from as u64,
                &mut top,
            );
            top
        };
        let found = if rows >= super::PARALLEL_SCAN_MIN_ROWS {
            let half = rows / 2;
            std::thread::scope(|s| {
                let left = s.spawn(|| scan(0, half));
                let mut right = scan(half, rows);
                right.merge(left.join().unwrap_or_else(|_| TopK::new(0)));
                right
            })
        } else {
            scan(0, rows)
        };
        found.into_sorted().into_iter().map(|s| s.slot).collect()
    }
}

/// A tenant file's sign index: absent until first built.
#[derive(Default)]
pub struct SignState {
    index: RwLock<Option<Signs>>,
    building: AtomicBool,
}

impl SignState {
    /// The `keep` rows of the first `rows` the sign pass picks for the
    /// int8 rows to score, or `None` while the index is being built (the
    /// first call starts building it on a helper thread).
    pub fn candidates(
        self: &Arc<Self>,
        map: &Arc<Mmap>,
        q8_row: usize,
        dim: usize,
        rows: u64,
        q: &[i8],
        keep: usize,
    ) -> Option<Vec<u64>> {
        {
            let index = self.index.read().unwrap_or_else(|p| p.into_inner());
            match index.as_ref() {
                None => {
                    drop(index);
                    self.start_building(map, q8_row, dim, rows);
                    return None;
                }
                Some(signs) if signs.rows() >= rows => return Some(signs.best(q, rows, keep)),
                Some(_) => {}
            }
        }
        // Rows were added since the index last looked: index them first
        // (whoever takes the lock first does; the others find it done).
        if let Some(signs) = self
            .index
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            signs.extend(body(map, q8_row, rows), q8_row, rows);
        }
        let index = self.index.read().unwrap_or_else(|p| p.into_inner());
        index.as_ref().map(|signs| signs.best(q, rows, keep))
    }

    /// Builds the index of the first `rows` rows of `map` on a helper
    /// thread, unless one is building it already.
    fn start_building(self: &Arc<Self>, map: &Arc<Mmap>, q8_row: usize, dim: usize, rows: u64) {
        if self.building.swap(true, Ordering::AcqRel) {
            return;
        }
        let (state, map) = (self.clone(), map.clone());
        let spawned = std::thread::Builder::new()
            .name("vector-signs".into())
            .spawn(move || {
                let signs = Signs::build(body(&map, q8_row, rows), q8_row, dim, rows);
                state.install(signs);
            });
        if let Err(e) = spawned {
            log::warn!("vector searches scan every row: the sign index was not built: {e}");
            self.building.store(false, Ordering::Release);
        }
    }

    /// Builds the index now, on this thread (benchmarks and tests).
    pub fn build_now(&self, map: &Mmap, q8_row: usize, dim: usize, rows: u64) {
        self.install(Signs::build(body(map, q8_row, rows), q8_row, dim, rows));
    }

    /// Makes `signs` the index, unless one of as many rows is there
    /// already (built meanwhile, or extended since).
    fn install(&self, signs: Signs) {
        let mut index = self.index.write().unwrap_or_else(|p| p.into_inner());
        if index.as_ref().is_none_or(|held| held.rows() < signs.rows()) {
            *index = Some(signs);
        }
    }
}

/// The bytes of the first `rows` rows of a mapped q8 file.
fn body(map: &Mmap, q8_row: usize, rows: u64) -> &[u8] {
    let start = HEADER_BYTES as usize;
    &map[start..start + rows as usize * q8_row]
}

/// The int8 scores of `slots` against the quantized question, best
/// `keep`: the same score the full scan gives each row.
pub fn rescore(
    map: &Mmap,
    q8_row: usize,
    dim: usize,
    q: &[i8],
    qscale: f32,
    slots: &[u64],
    keep: usize,
) -> TopK {
    let mut top = TopK::new(keep);
    for &slot in slots {
        let start = HEADER_BYTES as usize + slot as usize * q8_row;
        let (values, scale) = row_parts(&map[start..start + q8_row], dim);
        top.push(kernel::dot_i8(q, values) as f32 * scale * qscale, slot);
    }
    top
}
