//! Deadlines from durations a user set, which may be too large to add to the clock
//! (`Duration::MAX` for "no limit").
//!
//! May not: read the runtime's (pausable) clock: these are real-time deadlines for threads.

use std::time::{Duration, Instant};

/// About 30 years: as good as never for a deadline, and always addable (the real clock's
/// deadlines here, the runtime clock's "never" in `time::sleep`).
pub(crate) const NEVER: Duration = Duration::from_secs(86400 * 365 * 30);

/// `Instant::now() + d`, or about 30 years from now if `d` is longer: never overflows.
pub(crate) fn deadline_after(d: Duration) -> Instant {
    Instant::now() + d.min(NEVER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_too_large_to_add_is_a_far_deadline() {
        let far = deadline_after(Duration::MAX);
        assert!(far > Instant::now() + Duration::from_secs(86400 * 365));
        let near = deadline_after(Duration::from_millis(5));
        assert!(near <= Instant::now() + Duration::from_millis(5));
    }
}
