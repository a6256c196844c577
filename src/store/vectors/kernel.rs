//! Scan kernels: int8 and f32 dot products, quantization, top-k selection.
//!
//! Written so the compiler vectorizes them: sixteen (or thirty-two)
//! independent accumulators over `chunks_exact`, no SIMD crates. The int8
//! kernel is compiled twice, once for the baseline x86-64 target and once
//! with AVX2 enabled, and the AVX2 copy is chosen at run time when the CPU
//! has it: a wheel must run on any x86-64, so `target-cpu=native` is never
//! an option, but the scan is compute-bound at the baseline.

use std::cmp::Ordering;

/// Quantizes a vector to int8 with one scale: `v[i] ≈ q[i] * scale`.
pub fn quantize(v: &[f32], out: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (q, x) in out.iter_mut().zip(v) {
        *q = (x * inv).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// Exact f32 dot product.
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    dot_with_f32(a, b)
}

/// Dot product of an f32 vector with an int8 one (a stored row before its
/// scale): what re-scoring a scan's best candidates computes.
pub fn dot_f32_i8(a: &[f32], b: &[i8]) -> f32 {
    dot_with_f32(a, b)
}

/// The f32 dot product of `a` with `b`'s values widened to f32: sixteen
/// accumulators, one loop for both element types.
#[inline(always)]
fn dot_with_f32<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    let mut acc = [0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..16 {
            acc[j] += x[j] * y[j].into();
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += x * (*y).into();
    }
    sum
}

/// A q8 row's int8 values and its scale: `dim` values, then the scale as a
/// little-endian f32 (see [`scan_q8`]).
#[inline(always)]
pub fn row_parts(row: &[u8], dim: usize) -> (&[i8], f32) {
    let scale = f32::from_le_bytes([row[dim], row[dim + 1], row[dim + 2], row[dim + 3]]);
    (as_i8(&row[..dim]), scale)
}

#[inline(always)]
fn dot_i8_generic(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 32];
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..32 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_generic(a, b)
}

/// The int8 dot product, using AVX2 when the CPU has it.
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: `dot_i8_avx2` only requires the AVX2 instructions it
            // was compiled with, and `has_avx2` confirmed at run time that
            // this CPU executes them. It has no other preconditions.
            return unsafe { dot_i8_avx2(a, b) };
        }
    }
    dot_i8_generic(a, b)
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    use std::sync::OnceLock;
    static AVX2: OnceLock<bool> = OnceLock::new();
    *AVX2.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
}

/// Scores every row of a q8 block against `q` and keeps the best in `top`.
/// A row is `dim` int8 values then a little-endian f32 scale, padded to
/// `row_bytes`.
pub fn scan_q8(
    rows: &[u8],
    row_bytes: usize,
    dim: usize,
    q: &[i8],
    qscale: f32,
    first_slot: u64,
    top: &mut TopK,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: `scan_q8_avx2` only requires the AVX2 instructions it
            // was compiled with, and `has_avx2` confirmed at run time that
            // this CPU executes them. It has no other preconditions.
            return unsafe { scan_q8_avx2(rows, row_bytes, dim, q, qscale, first_slot, top) };
        }
    }
    scan_q8_generic(rows, row_bytes, dim, q, qscale, first_slot, top)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_q8_avx2(
    rows: &[u8],
    row_bytes: usize,
    dim: usize,
    q: &[i8],
    qscale: f32,
    first_slot: u64,
    top: &mut TopK,
) {
    scan_q8_generic(rows, row_bytes, dim, q, qscale, first_slot, top)
}

/// The scan loop, inlined into each target-feature copy so the dot product
/// inside it is vectorized for that target and no call is made per row.
#[inline(always)]
fn scan_q8_generic(
    rows: &[u8],
    row_bytes: usize,
    dim: usize,
    q: &[i8],
    qscale: f32,
    first_slot: u64,
    top: &mut TopK,
) {
    let mut floor = top.floor();
    for (i, row) in rows.chunks_exact(row_bytes).enumerate() {
        let (values, scale) = row_parts(row, dim);
        let score = dot_i8_generic(q, values) as f32 * scale * qscale;
        if score > floor {
            top.push(score, first_slot + i as u64);
            floor = top.floor();
        }
    }
}

/// A question cut to four bits a component for the sign pass
/// (`signs`): component `i` is `low + level × step`, bit `p` of its level
/// is bit `i` of plane `p`.
pub struct SignQuestion {
    words: usize,
    /// Plane-major: plane `p`, word `w` at `p * words + w`.
    planes: Vec<u64>,
    step: f32,
    low: f32,
    /// The sum of the cut components.
    total: f32,
}

/// Levels a component of a [`SignQuestion`] is cut to.
const SIGN_LEVELS: u32 = 16;

impl SignQuestion {
    pub fn new(q: &[i8], words: usize) -> SignQuestion {
        let low = q.iter().copied().min().map_or(0.0, f32::from);
        let high = q.iter().copied().max().map_or(0.0, f32::from);
        let step = if high > low {
            (high - low) / (SIGN_LEVELS - 1) as f32
        } else {
            1.0
        };
        let mut planes = vec![0u64; 4 * words];
        let mut total = 0f32;
        for (i, &x) in q.iter().enumerate().take(words * 64) {
            let level = ((f32::from(x) - low) / step)
                .round()
                .clamp(0.0, (SIGN_LEVELS - 1) as f32) as u32;
            total += low + level as f32 * step;
            for p in 0..4 {
                if level >> p & 1 == 1 {
                    planes[p * words + i / 64] |= 1 << (i % 64);
                }
            }
        }
        SignQuestion {
            words,
            planes,
            step,
            low,
            total,
        }
    }

    /// The cut question's dot product with a row of signs counted as +1
    /// where set and −1 where not, from the row's set bits and the levels
    /// under them.
    #[inline(always)]
    fn finish(&self, levels: u32, set: u32) -> f32 {
        2.0 * (self.step * levels as f32 + self.low * set as f32) - self.total
    }
}

/// Estimates every row of signs (`question.words` words each, weighted by
/// `weights`) against the question and keeps the best in `top`.
pub fn scan_signs(
    bits: &[u64],
    weights: &[f32],
    question: &SignQuestion,
    first_slot: u64,
    top: &mut TopK,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_popcnt() {
            // SAFETY: `scan_signs_popcnt` only requires the POPCNT
            // instruction it was compiled with, and `has_popcnt` confirmed
            // at run time that this CPU executes it. It has no other
            // preconditions.
            return unsafe { scan_signs_popcnt(bits, weights, question, first_slot, top) };
        }
    }
    scan_signs_generic(bits, weights, question, first_slot, top)
}

#[cfg(target_arch = "x86_64")]
fn has_popcnt() -> bool {
    use std::sync::OnceLock;
    static POPCNT: OnceLock<bool> = OnceLock::new();
    *POPCNT.get_or_init(|| {
        std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("avx2")
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn scan_signs_popcnt(
    bits: &[u64],
    weights: &[f32],
    question: &SignQuestion,
    first_slot: u64,
    top: &mut TopK,
) {
    scan_signs_generic(bits, weights, question, first_slot, top)
}

/// The sign scan, with the word count fixed at compile time for the
/// common dimensions (256, 384, 768) so the counts of a row unroll.
#[inline(always)]
fn scan_signs_generic(
    bits: &[u64],
    weights: &[f32],
    question: &SignQuestion,
    first_slot: u64,
    top: &mut TopK,
) {
    match question.words {
        4 => scan_signs_fixed::<4>(bits, weights, question, first_slot, top),
        6 => scan_signs_fixed::<6>(bits, weights, question, first_slot, top),
        12 => scan_signs_fixed::<12>(bits, weights, question, first_slot, top),
        words => {
            // Other widths take this plain loop. Sharing the fixed arms'
            // blocked loop through a closure measured 4-5 % slower at
            // dimension 256 (bench_vectors, 1M rows), so the row's counts
            // are written out in each.
            let mut floor = top.floor();
            for (i, (row, &weight)) in bits.chunks_exact(words).zip(weights).enumerate() {
                let (mut levels, mut set) = (0u32, 0u32);
                for (w, &b) in row.iter().enumerate() {
                    set += b.count_ones();
                    for p in 0..4 {
                        levels += (question.planes[p * words + w] & b).count_ones() << p;
                    }
                }
                let estimate = question.finish(levels, set) * weight;
                if estimate > floor {
                    top.push(estimate, first_slot + i as u64);
                    floor = top.floor();
                }
            }
        }
    }
}

#[inline(always)]
fn scan_signs_fixed<const W: usize>(
    bits: &[u64],
    weights: &[f32],
    question: &SignQuestion,
    first_slot: u64,
    top: &mut TopK,
) {
    let mut planes = [[0u64; W]; 4];
    for (p, plane) in planes.iter_mut().enumerate() {
        plane.copy_from_slice(&question.planes[p * W..(p + 1) * W]);
    }
    // A block of estimates first, then the block's candidates: the first
    // loop has no branch, so it runs several rows at once.
    let mut block = [0f32; SIGN_BLOCK_ROWS];
    let mut floor = top.floor();
    for (b, (rows, weights)) in bits
        .chunks(W * SIGN_BLOCK_ROWS)
        .zip(weights.chunks(SIGN_BLOCK_ROWS))
        .enumerate()
    {
        for ((estimate, row), &weight) in block.iter_mut().zip(rows.chunks_exact(W)).zip(weights) {
            let (mut levels, mut set) = (0u32, 0u32);
            for w in 0..W {
                let b = row[w];
                set += b.count_ones();
                for (p, plane) in planes.iter().enumerate() {
                    levels += (plane[w] & b).count_ones() << p;
                }
            }
            *estimate = question.finish(levels, set) * weight;
        }
        let first = first_slot + (b * SIGN_BLOCK_ROWS) as u64;
        for (i, &estimate) in block.iter().take(weights.len()).enumerate() {
            if estimate > floor {
                top.push(estimate, first + i as u64);
                floor = top.floor();
            }
        }
    }
}

/// Rows whose estimates the sign scan computes before keeping any.
const SIGN_BLOCK_ROWS: usize = 256;

/// Views bytes as i8 (same size, alignment 1, every bit pattern valid).
#[inline(always)]
pub fn as_i8(bytes: &[u8]) -> &[i8] {
    // SAFETY: u8 and i8 have identical size and alignment and every bit
    // pattern is a valid value of both, so the slice reinterpretation is
    // sound; the length and lifetime are carried over unchanged.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
}

/// A scored slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub score: f32,
    pub slot: u64,
}

/// Keeps the `k` best scores seen.
///
/// Candidates above the current floor are appended to a buffer; when it
/// holds `2k`, the best `k` are selected (linear time) and the floor rises
/// to the worst of them. Each candidate costs amortised constant time,
/// where a heap of `k` cost `log k` per candidate let in: a filtered
/// search keeps thousands, and sifting them through a heap cost as much as
/// the scan.
pub struct TopK {
    k: usize,
    buf: Vec<Scored>,
    floor: f32,
}

/// Best first: higher score, then lower slot (a total order, so the `k`
/// kept among ties do not depend on the order they came in).
fn best_first(a: &Scored, b: &Scored) -> Ordering {
    b.score.total_cmp(&a.score).then(a.slot.cmp(&b.slot))
}

impl TopK {
    pub fn new(k: usize) -> TopK {
        TopK {
            k,
            buf: Vec::with_capacity(2 * k.min(1 << 16)),
            floor: f32::NEG_INFINITY,
        }
    }

    #[inline]
    pub fn push(&mut self, score: f32, slot: u64) {
        if self.k == 0 || score <= self.floor {
            return;
        }
        self.buf.push(Scored { score, slot });
        if self.buf.len() >= 2 * self.k {
            self.shrink();
        }
    }

    /// Keeps the best `k` of the buffer and raises the floor to the worst
    /// of them.
    fn shrink(&mut self) {
        if self.buf.len() > self.k {
            self.buf.select_nth_unstable_by(self.k - 1, best_first);
            self.buf.truncate(self.k);
        }
        if self.buf.len() == self.k {
            self.floor = self
                .buf
                .iter()
                .map(|s| s.score)
                .fold(f32::INFINITY, f32::min);
        }
    }

    /// The score a candidate must beat to enter (−∞ until `k` are known;
    /// it may lag behind the true `k`-th best until the buffer is next
    /// shrunk).
    #[inline]
    pub fn floor(&self) -> f32 {
        self.floor
    }

    pub fn merge(&mut self, other: TopK) {
        for s in other.buf {
            self.push(s.score, s.slot);
        }
    }

    /// Best first.
    pub fn into_sorted(mut self) -> Vec<Scored> {
        self.shrink();
        let mut v = self.buf;
        v.sort_by(best_first);
        v.truncate(self.k);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> f32 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }

    #[test]
    fn int8_dot_matches_a_plain_loop_for_every_length() {
        let mut seed = 3u64;
        for len in 0..300 {
            let a: Vec<i8> = (0..len).map(|_| (rng(&mut seed) * 254.0) as i8).collect();
            let b: Vec<i8> = (0..len).map(|_| (rng(&mut seed) * 254.0) as i8).collect();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!(dot_i8(&a, &b), plain, "len {len}");
            assert_eq!(dot_i8_generic(&a, &b), plain);
        }
    }

    #[test]
    fn f32_dot_matches_a_plain_loop() {
        let mut seed = 5u64;
        for len in [0, 1, 15, 16, 17, 256, 383] {
            let a: Vec<f32> = (0..len).map(|_| rng(&mut seed)).collect();
            let b: Vec<f32> = (0..len).map(|_| rng(&mut seed)).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot_f32(&a, &b) - plain).abs() < 1e-4);
        }
    }

    #[test]
    fn the_sign_estimate_is_the_cut_questions_dot_product_with_the_signs() {
        let mut seed = 17u64;
        for dim in [8usize, 64, 100, 256, 384, 768, 1000] {
            let words = dim.div_ceil(64);
            let q: Vec<i8> = (0..dim).map(|_| (rng(&mut seed) * 254.0) as i8).collect();
            let question = SignQuestion::new(&q, words);
            let n = 300;
            let mut bits = vec![0u64; n * words];
            for (i, b) in bits.iter_mut().enumerate() {
                let used = (dim - (i % words) * 64).min(64);
                let word =
                    ((rng(&mut seed).to_bits() as u64) << 32) ^ (rng(&mut seed).to_bits() as u64);
                *b = if used == 64 {
                    word
                } else {
                    word & ((1 << used) - 1)
                };
            }
            let weights: Vec<f32> = (0..n).map(|_| rng(&mut seed) + 1.0).collect();
            let mut top = TopK::new(n);
            scan_signs(&bits, &weights, &question, 0, &mut top);
            let got = top.into_sorted();
            assert_eq!(got.len(), n);
            for s in got {
                let row = &bits[s.slot as usize * words..][..words];
                let terms: Vec<f32> = (0..dim)
                    .map(|i| {
                        let level = ((f32::from(q[i]) - question.low) / question.step).round();
                        let cut = question.low + level * question.step;
                        if row[i / 64] >> (i % 64) & 1 == 1 {
                            cut
                        } else {
                            -cut
                        }
                    })
                    .collect();
                let weight = weights[s.slot as usize];
                let plain = terms.iter().sum::<f32>() * weight;
                let size = terms.iter().map(|t| t.abs()).sum::<f32>() * weight;
                assert!((s.score - plain).abs() <= 1e-5 * size, "dim {dim}");
            }
        }
    }

    #[test]
    fn quantization_round_trips_within_half_a_step() {
        let v = [0.5f32, -0.25, 0.0, 0.125, -0.5];
        let mut q = [0i8; 5];
        let scale = quantize(&v, &mut q);
        for (x, qi) in v.iter().zip(q) {
            assert!((x - qi as f32 * scale).abs() <= scale / 2.0 + 1e-6);
        }
        let mut z = [1i8; 3];
        assert_eq!(quantize(&[0.0; 3], &mut z), 0.0);
        assert_eq!(z, [0; 3]);
    }

    #[test]
    fn top_k_keeps_the_best_in_order() {
        let mut t = TopK::new(3);
        for (i, s) in [0.1f32, 0.9, 0.5, 0.7, 0.2, 0.95].iter().enumerate() {
            t.push(*s, i as u64);
        }
        let slots: Vec<u64> = t.into_sorted().iter().map(|s| s.slot).collect();
        assert_eq!(slots, [5, 1, 3]);
    }

    #[test]
    fn top_k_keeps_the_best_k_of_any_stream_ties_broken_by_slot() {
        let mut seed = 11u64;
        for (k, n) in [(1, 10), (3, 2), (10, 1000), (64, 5000), (500, 700)] {
            let scores: Vec<f32> = (0..n)
                .map(|_| (rng(&mut seed) * 16.0).round() / 16.0)
                .collect();
            let mut top = TopK::new(k);
            for (slot, &s) in scores.iter().enumerate() {
                top.push(s, slot as u64);
            }
            let mut want: Vec<Scored> = scores
                .iter()
                .enumerate()
                .map(|(slot, &score)| Scored {
                    score,
                    slot: slot as u64,
                })
                .collect();
            want.sort_by(best_first);
            want.truncate(k);
            assert_eq!(top.into_sorted(), want, "k {k}, n {n}");
        }
        assert!(TopK::new(0).into_sorted().is_empty());
    }
}
