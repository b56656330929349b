//! `sleep_precision`: how long `sleep(d)` really takes, for d = 100 us and 1 ms.
//!
//! One criterion iteration = one `sleep(d)` on an otherwise idle runtime; the
//! measured time is the sleep's duration, from just before creating the sleep
//! to the task running again after it. The overshoot is criterion's median
//! minus `d`.
//!
//! Known resolution: tokio's timer wheel has 1 ms granularity and rounds every
//! deadline up to the next whole millisecond, so tokio's `sleep(100 us)` takes
//! about 1 ms or more and `sleep(1 ms)` between 1 and 2 ms.

use std::time::Duration;

/// The requested sleep durations, with their criterion ids.
pub const DURATIONS: [(&str, Duration); 2] = [
    ("100us", Duration::from_micros(100)),
    ("1ms", Duration::from_millis(1)),
];

/// Panics if a sleep returned early.
pub fn check(requested: Duration, actual: Duration) {
    assert!(
        actual >= requested,
        "sleep_precision: sleep({requested:?}) returned after {actual:?}"
    );
}
