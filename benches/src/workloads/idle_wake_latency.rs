//! `idle_wake_latency`: a thread parked in the runtime, woken from another.
//!
//! A *waiter* task sits on thread B; B has nothing else to run, so it parks
//! (blocks in the kernel). A *notifier* task on thread A waits until the waiter
//! has said it is about to wait, lets [`PARK_GAP`] pass so B is really asleep,
//! reads the clock and notifies. The waiter reads the clock as soon as it runs;
//! the sample is the difference (both clocks are `CLOCK_MONOTONIC`).
//!
//! One criterion iteration = one sample; `iter_custom` returns the sum of the
//! samples (not the wall time, which also holds the gaps), so criterion reports
//! the mean notify-to-running latency of each batch.

use std::time::Duration;

/// How long the notifier waits after the waiter announced itself, so that the
/// waiter's thread has gone to sleep in the kernel before it is notified.
pub const PARK_GAP: Duration = Duration::from_micros(200);

/// Panics if a sample is implausible (negative or more than a second).
pub fn check(sample: Duration) {
    assert!(
        sample < Duration::from_secs(1),
        "idle_wake_latency: sample {sample:?}"
    );
}
