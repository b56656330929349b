//! [`Reservation`]: work handed over to an idle shard is kept for it for a moment.
//!
//! After a poll that left several stealable tasks queued, a shard hands the older half to an
//! idle shard and rings it (ADR-0005). Waking takes tens of microseconds; the shard that
//! handed the work over, whose own half only started I/O, is idle again within a few, and a
//! steal then would take back half of what it gave while the receiver is still waking: the
//! burst ends up on one shard, where its tasks stay once started. So other shards leave the
//! receiver's queues alone until it has started the work (its next tick that runs tasks, or
//! a poll there that runs long: it is busy, and stealing helps), or it goes idle, or
//! [`RESERVATION`] has passed, whichever comes first. The time bound keeps every queue
//! stealable in the end, whatever the receiver is doing (a long poll of `block_on`'s own
//! future, say); a shard that finds only reserved work parks no longer than the reservation
//! lasts.
//!
//! A hint: it never decides whether a task runs, only how soon another shard may take it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Longest time handed-over work is kept for its receiver: a few wake-ups of a parked shard.
pub(crate) const RESERVATION: Duration = Duration::from_micros(250);

/// When work was last handed over to a shard, while it is kept for it.
#[derive(Debug)]
pub(crate) struct Reservation {
    /// [`now_ns`] at the hand-off; 0 if nothing is reserved.
    since: AtomicU64,
    /// How long it holds at most: [`RESERVATION`] (the builder may change it for a test).
    limit: Duration,
}

impl Default for Reservation {
    fn default() -> Self {
        Self::lasting(RESERVATION)
    }
}

impl Reservation {
    /// A reservation that holds at most `limit`.
    pub(crate) fn lasting(limit: Duration) -> Self {
        Self {
            since: AtomicU64::new(0),
            limit,
        }
    }

    /// Work was just handed over.
    pub(crate) fn reserve(&self) {
        self.since.store(now_ns(), Relaxed);
    }

    /// The receiver has started the work, or went idle: nothing is reserved.
    #[inline]
    pub(crate) fn release(&self) {
        if self.is_set() {
            self.since.store(0, Relaxed);
        }
    }

    /// True if work is reserved (however long ago).
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.since.load(Relaxed) != 0
    }

    /// How much longer other shards should leave the receiver's queues alone; `None` if they
    /// may steal now (nothing reserved, or for long enough).
    pub(crate) fn left(&self) -> Option<Duration> {
        self.left_at(now_ns())
    }

    /// [`left`](Self::left) at time `now` ([`now_ns`]).
    fn left_at(&self, now: u64) -> Option<Duration> {
        let since = self.since.load(Relaxed);
        if since == 0 {
            return None;
        }
        let age = Duration::from_nanos(now.saturating_sub(since));
        self.limit.checked_sub(age).filter(|left| !left.is_zero())
    }
}

/// Nanoseconds on a process-wide monotonic clock, never 0.
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = EPOCH.get_or_init(Instant::now);
    epoch.elapsed().as_nanos() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_holds_until_released_or_for_its_time() {
        let r = Reservation::default();
        assert!(!r.is_set() && r.left().is_none());
        r.reserve();
        assert!(r.is_set());
        // Times relative to the hand-off, so the test does not depend on how fast it runs
        // (under Miri, 250 µs of its clock pass between two statements).
        let at = r.since.load(Relaxed);
        let left = r.left_at(at).expect("just reserved");
        assert!(left <= RESERVATION);
        assert!(
            r.left_at(at + 100_000).is_some(),
            "100 µs later it still holds"
        );
        r.release();
        assert!(!r.is_set() && r.left().is_none());
        // An old reservation no longer holds anyone back (it is still set until released).
        r.reserve();
        let at = r.since.load(Relaxed);
        let after = at + RESERVATION.as_nanos() as u64;
        assert!(r.is_set() && r.left_at(after).is_none());
        // And on the real clock, once that much time has passed.
        let old = Instant::now();
        while old.elapsed() <= RESERVATION {
            std::hint::spin_loop();
        }
        assert!(r.is_set() && r.left().is_none());
    }

    #[test]
    fn a_longer_reservation_holds_for_its_own_time() {
        let r = Reservation::lasting(Duration::from_secs(10));
        r.reserve();
        let at = r.since.load(Relaxed);
        assert!(r.left_at(at + RESERVATION.as_nanos() as u64 * 2).is_some());
        assert!(r.left_at(at + 10_000_000_000).is_none());
    }
}
