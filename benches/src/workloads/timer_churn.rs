//! `timer_churn`: 100,000 `timeout(50 ms, fut)` split over the runtime threads.
//!
//! `fut` is [`crate::util::PendingOnce`]: pending at its first poll (it wakes
//! itself) and ready at its second. So every `timeout` really registers its
//! 50 ms timer when first polled, and cancels it when the inner future
//! completes at the second poll; no timer ever fires. Each thread runs
//! `TIMERS / threads` such timeouts one after another.
//!
//! One criterion iteration = all [`TIMERS`] timeouts on all threads (makespan).

use std::time::Duration;

/// Timeouts per iteration, over all threads.
pub const TIMERS: usize = 100_000;
/// The timeout of each `timeout` call; far longer than the run, so none fires.
pub const TIMEOUT: Duration = Duration::from_millis(50);

/// Timeouts run by thread `t` of `threads`.
pub fn per_thread(t: usize, threads: usize) -> usize {
    TIMERS / threads + usize::from(t < TIMERS % threads)
}

/// Panics unless all `TIMERS` timeouts completed with their inner future.
pub fn check(completed_ok: usize) {
    assert_eq!(
        completed_ok, TIMERS,
        "timer_churn: some timeouts fired or were lost"
    );
}
