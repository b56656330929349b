//! The monotonic clock in nanoseconds, for times a shard takes on its hot paths (how long
//! it parked, how long it was busy): a subtraction of two of these is one instruction,
//! where `Instant` arithmetic normalises seconds and nanoseconds into a `Duration` first.
//! The same clock as `Instant` (`CLOCK_MONOTONIC`).

/// Nanoseconds of the monotonic clock (from an unspecified origin; only differences mean
/// anything).
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call; `CLOCK_MONOTONIC` exists on
    // every Linux, so the call cannot fail (and `ts` stays zero if it somehow did).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_runs_with_instant() {
        let (a, start) = (monotonic_ns(), std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (b, took) = (monotonic_ns(), start.elapsed());
        let diff = b - a;
        assert!(diff >= 2_000_000, "{diff} ns");
        // Read inside the Instant pair's span, give or take the reads' order.
        assert!(
            diff <= took.as_nanos() as u64 + 1_000_000,
            "{diff} ns in {took:?}"
        );
    }
}
