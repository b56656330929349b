//! Waiting with an `IORING_ENTER_EXT_ARG` timeout: `ETIME` is the expected outcome, not an
//! error, and the wait lasts at least as long as asked.

mod common;

use std::time::{Duration, Instant};

use ringsteal_uring::{opcode, Ring, Wait};

#[test]
fn a_wait_with_nothing_in_flight_times_out_with_timed_out_and_not_early() {
    let mut ring = Ring::new(4).expect("io_uring is available");
    let timeout = Duration::from_millis(50);
    let start = Instant::now();
    let mut outcome = Wait::Interrupted;
    while outcome == Wait::Interrupted {
        // A signal may cut the wait short; wait for the rest.
        let left = timeout.saturating_sub(start.elapsed());
        outcome = ring
            .submit_and_wait_timeout(1, Some(left))
            .expect("ETIME is reported as Wait::TimedOut, not as an error");
    }
    let waited = start.elapsed();
    assert_eq!(outcome, Wait::TimedOut);
    assert!(
        waited >= timeout,
        "returned after {waited:?}, before the {timeout:?} timeout"
    );
    assert!(waited < common::HANG_GUARD, "hung for {waited:?}");
    assert!(ring.pop_cqe().is_none());
}

#[test]
fn a_wait_with_a_timeout_returns_completed_when_the_completion_is_there() {
    let mut ring = Ring::new(4).expect("io_uring is available");
    // SAFETY: a NOP references no memory.
    unsafe { ring.push(&opcode::nop().with_user_data(3)) }.unwrap();
    let outcome = ring
        .submit_and_wait_timeout(1, Some(common::HANG_GUARD))
        .expect("wait");
    assert_eq!(outcome, Wait::Completed);
    assert_eq!(ring.pop_cqe().map(|c| c.user_data), Some(3));
}

#[test]
fn a_wait_with_the_longest_timeout_waits_for_the_completion_instead_of_timing_out_at_once() {
    let mut ring = Ring::new(4).expect("io_uring is available");
    // Some kernels add the timeout to the current time without an overflow check: passed on
    // unclamped, `Duration::MAX` gives them a deadline in the past, and the wait ends at once
    // with ETIME. (The kernel this was written on, 6.18, saturates, so it passes either way
    // there; the clamp is for the kernels that do not.)
    let ts = ringsteal_uring::abi::__kernel_timespec::from_duration(Duration::from_millis(30));
    // SAFETY: `ts` outlives the wait below, which reaps the timeout's only completion.
    unsafe { ring.push(&opcode::timeout(&ts, 0, 0).with_user_data(9)) }.unwrap();
    let start = Instant::now();
    let mut outcome = Wait::Interrupted;
    while outcome == Wait::Interrupted {
        outcome = ring
            .submit_and_wait_timeout(1, Some(Duration::MAX))
            .expect("wait");
    }
    assert_eq!(outcome, Wait::Completed, "after {:?}", start.elapsed());
    assert_eq!(ring.pop_cqe().map(|c| c.user_data), Some(9));
}
