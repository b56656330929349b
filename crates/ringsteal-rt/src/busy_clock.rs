//! [`BusyClock`]: how long one shard has been busy, readable from any thread at any moment
//! (`ShardStats::busy`).
//!
//! The shard, its only writer, marks where its busy stretches begin and end, in nanoseconds
//! of `util::monotonic_ns`; a reader adds the stretch under way, up to its own `now`, to the
//! total of those that ended. A stretch's end changes two words together, so the writer
//! publishes under a sequence number (a seqlock): a reader that overlaps a change reads
//! again, so no read counts a stretch twice, or sees one end without its time.
//!
//! Owns: the words and their protocol. May not: read the clock (callers pass the time).

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::loom::sync::atomic::{fence, AtomicU64};

/// `since_ns` while no stretch is under way.
const NOT_BUSY: u64 = u64::MAX;

/// The busy time of one shard (see the module doc).
#[derive(Debug)]
pub(crate) struct BusyClock {
    /// Odd while the writer changes the words below.
    seq: AtomicU64,
    /// Nanoseconds of the stretches that ended.
    ended_ns: AtomicU64,
    /// When the stretch under way began, or [`NOT_BUSY`].
    since_ns: AtomicU64,
}

impl Default for BusyClock {
    fn default() -> Self {
        Self {
            seq: AtomicU64::new(0),
            ended_ns: AtomicU64::new(0),
            since_ns: AtomicU64::new(NOT_BUSY),
        }
    }
}

impl BusyClock {
    /// Writer: a busy stretch begins at `at` (nothing, if one is under way).
    pub(crate) fn begin(&self, at: u64) {
        if self.since_ns.load(Relaxed) == NOT_BUSY {
            self.publish(|| self.since_ns.store(at, Relaxed));
        }
    }

    /// Writer: the stretch under way, if any, ends at `at`.
    pub(crate) fn end(&self, at: u64) {
        let since = self.since_ns.load(Relaxed);
        if since == NOT_BUSY {
            return;
        }
        let ended = self
            .ended_ns
            .load(Relaxed)
            .saturating_add(at.saturating_sub(since));
        self.publish(|| {
            self.ended_ns.store(ended, Relaxed);
            self.since_ns.store(NOT_BUSY, Relaxed);
        });
    }

    /// Makes `change` under an odd sequence number (one writer: a plain load and stores).
    fn publish(&self, change: impl FnOnce()) {
        let seq = self.seq.load(Relaxed);
        self.seq.store(seq.wrapping_add(1), Relaxed);
        // Orders the odd number before the changes: a reader that sees a change sees it.
        fence(Release);
        change();
        self.seq.store(seq.wrapping_add(2), Release);
    }

    /// Reader, any thread: the busy nanoseconds as of `now` (a stretch that began after
    /// `now` counts nothing yet).
    pub(crate) fn read(&self, now: u64) -> u64 {
        loop {
            let before = self.seq.load(Acquire);
            if before % 2 == 0 {
                let ended = self.ended_ns.load(Relaxed);
                let since = self.since_ns.load(Relaxed);
                // Orders the loads before the check: a change they saw shows in `seq`.
                fence(Acquire);
                if self.seq.load(Relaxed) == before {
                    let current = match since {
                        NOT_BUSY => 0,
                        since => now.saturating_sub(since),
                    };
                    return ended.saturating_add(current);
                }
            }
            crate::loom::hint::spin_loop();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ended_stretches_add_up_and_the_one_under_way_counts_to_now() {
        let clock = BusyClock::default();
        assert_eq!(clock.read(100), 0, "never busy");
        clock.begin(10);
        clock.begin(20); // already busy: the stretch still began at 10
        assert_eq!(clock.read(15), 5);
        clock.end(30);
        clock.end(35); // not busy: nothing
        assert_eq!(clock.read(1000), 20, "parked: stands still");
        clock.begin(40);
        assert_eq!(clock.read(45), 25);
        assert_eq!(clock.read(39), 20, "began after the reader's now");
        clock.end(50);
        assert_eq!(clock.read(60), 30);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::Arc;
    use loom::thread;

    use super::*;

    #[test]
    fn loom_busy_clock_reads_are_never_torn() {
        // Bounded: a reader that retries can be preempted without end.
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let clock = Arc::new(BusyClock::default());
            clock.begin(0);
            clock.end(5);
            // At now = 100 the writer's states read 5, 95, 25, 85, in that order; a torn
            // read (a stretch's end without its time, or its time twice) reads another value
            // or an earlier state after a later one.
            let reader = {
                let clock = clock.clone();
                thread::spawn(move || {
                    let state = |read: u64| match read {
                        5 => 0,
                        95 => 1,
                        25 => 2,
                        85 => 3,
                        other => panic!("torn read: {other}"),
                    };
                    let first = state(clock.read(100));
                    let second = state(clock.read(100));
                    assert!(first <= second, "read state {second} after state {first}");
                })
            };
            clock.begin(10);
            clock.end(30);
            clock.begin(40);
            reader.join().unwrap();
            assert_eq!(clock.read(100), 85);
        });
    }
}
