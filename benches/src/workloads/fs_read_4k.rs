//! `fs_read_4k_qd1` and `fs_read_4k_qd32`: 4 KiB random reads of a warm 64 MiB
//! file ([`crate::files::random_read_file`]).
//!
//! One criterion iteration = one 4 KiB read (the groups report
//! `Throughput::Elements(1)`, so criterion prints reads per second, i.e. IOPS).
//! Implementations use `iter_custom` and issue the requested number of reads
//! with [`QD1`] or [`QD32`] of them in flight: [`QD32`] readers, each reading
//! its share one after another, at offsets from its own deterministic sequence
//! ([`Offsets`]). Every buffer is checked ([`crate::files::check_block`]).
//!
//! The file is re-read before each timed run (outside the timing), because the
//! host evicts idle page-cache pages; see `files`.

use crate::files::BLOCK;
use crate::util::XorShift;

/// Reads in flight for `fs_read_4k_qd1`.
pub const QD1: usize = 1;
/// Reads in flight for `fs_read_4k_qd32`.
pub const QD32: usize = 32;

/// The block-aligned random offsets of reader `reader`.
#[derive(Clone, Debug)]
pub struct Offsets {
    rng: XorShift,
    blocks: u64,
}

impl Offsets {
    /// Offsets for reader `reader` over a file of `blocks` 4 KiB blocks.
    pub fn new(reader: usize, blocks: u64) -> Self {
        Self {
            rng: XorShift::new(0x5EED_0000 + reader as u64),
            blocks,
        }
    }

    /// Next offset (a multiple of 4096 inside the file).
    pub fn next_offset(&mut self) -> u64 {
        (self.rng.next_u64() % self.blocks) * BLOCK as u64
    }
}

/// How `total` reads are split over `readers` readers: reader `r` does this many.
pub fn share(total: u64, readers: usize, r: usize) -> u64 {
    let readers = readers as u64;
    total / readers + u64::from((r as u64) < total % readers)
}

/// Panics unless the read returned the right block.
pub fn check(buf: &[u8], offset: u64) {
    assert!(
        crate::files::check_block(buf, offset),
        "fs_read_4k: wrong data at offset {offset}"
    );
}
