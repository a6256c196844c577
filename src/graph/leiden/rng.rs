//! The only source of randomness in community detection: a seeded `SplitMix64`
//! generator (Steele, Lea & Flood 2014), written out here so that results are
//! a pure function of the graph and the parameters on every platform and
//! toolchain, with no dependency whose stream could change between versions.

/// Golden-ratio increment of the `SplitMix64` state.
const STATE_INCREMENT: u64 = 0x9E37_79B9_7F4A_7C15;
/// First output-mixing multiplier of `SplitMix64`.
const MIX_MULTIPLIER_1: u64 = 0xBF58_476D_1CE4_E5B9;
/// Second output-mixing multiplier of `SplitMix64`.
const MIX_MULTIPLIER_2: u64 = 0x94D0_49BB_1331_11EB;
/// Number of random mantissa bits in an `f64` drawn from `[0, 1)`.
const F64_MANTISSA_BITS: u32 = 53;

/// Small, fast, statistically sound 64-bit generator; not cryptographic.
#[derive(Debug, Clone)]
pub(super) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(super) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(STATE_INCREMENT);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(MIX_MULTIPLIER_1);
        z = (z ^ (z >> 27)).wrapping_mul(MIX_MULTIPLIER_2);
        z ^ (z >> 31)
    }

    /// Uniform draw from `[0, 1)`.
    pub(super) fn next_f64(&mut self) -> f64 {
        let bits = self.next_u64() >> (64 - F64_MANTISSA_BITS);
        bits as f64 / (1u64 << F64_MANTISSA_BITS) as f64
    }

    /// Uniform draw from `0..bound` (`0` when `bound` is `0`). Uses the
    /// multiply-high reduction; its bias is below 2^-32 for any `bound` a
    /// graph can have, which is irrelevant for visiting orders.
    pub(super) fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Fisher-Yates shuffle.
    pub(super) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
