//! [`FastRand`]: a tiny non-cryptographic generator (xorshift64*) for victim selection.

use std::cell::Cell;

/// Per-shard random numbers; `!Sync`, no atomics.
#[derive(Debug)]
pub(crate) struct FastRand(Cell<u64>);

impl FastRand {
    pub(crate) fn new(seed: u64) -> Self {
        Self(Cell::new(seed | 1))
    }

    pub(crate) fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// Mixes a sticky key so that nearby keys spread over shards (splitmix64 finaliser).
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
