//! `steal_imbalance`: all work is spawned from one thread; makespan.
//!
//! One criterion iteration = a driver task on one runtime thread spawns
//! [`TASKS`] CPU-bound tasks ([`ITERS`] work steps, ~25 us each, ~27 ms in all)
//! the runtime's stealable/default way, then joins them. The time is the
//! makespan: from the first spawn to the last join. Ideal on 2 threads is half
//! the serial time; a runtime that cannot move work off the spawning thread
//! (compio) takes the serial time, which is what it is measured at.

use crate::util::synthetic_work;
use std::sync::OnceLock;

/// Tasks per iteration.
pub const TASKS: usize = 1024;
/// Work steps per task.
pub const ITERS: u32 = 20_000;

/// The body of task `i`.
#[inline]
pub fn task(i: usize) -> u64 {
    synthetic_work(i as u64, ITERS)
}

/// Wrapping sum of every task result (computed serially once).
pub fn expected() -> u64 {
    static E: OnceLock<u64> = OnceLock::new();
    *E.get_or_init(|| (0..TASKS).map(task).fold(0u64, u64::wrapping_add))
}

/// Panics unless `checksum` is the wrapping sum of all task results.
pub fn check(checksum: u64) {
    assert_eq!(checksum, expected(), "steal_imbalance: wrong checksum");
}
