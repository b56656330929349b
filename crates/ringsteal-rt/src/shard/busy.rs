//! The shard's side of its busy time (`ShardStats::busy`, `busy_clock.rs`): a stretch
//! begins when the shard is driven (a worker's thread from its start, shard 0 inside
//! `block_on`) and when it wakes from a park; it ends when it parks and when it stops being
//! driven. Spinning before a park counts as busy: the thread holds its CPU. The times come
//! from clock reads the park already makes; nothing runs on the tick's path.

use super::Shard;

impl Shard {
    /// A busy stretch begins at `at` (of `util::monotonic_ns`).
    #[inline]
    pub(crate) fn busy_from(&self, at: u64) {
        self.counters().busy.begin(at);
    }

    /// The busy stretch under way, if any, ends at `at` (of `util::monotonic_ns`).
    #[inline]
    pub(crate) fn busy_until(&self, at: u64) {
        self.counters().busy.end(at);
    }
}
