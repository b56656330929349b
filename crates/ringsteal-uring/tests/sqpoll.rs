//! SQPOLL rings: submissions reach the kernel without a system call while the poller polls;
//! once it sleeps (`IORING_SQ_NEED_WAKEUP`), a submission wakes it; a wait with nothing to
//! submit leaves it asleep.

mod common;

use std::time::{Duration, Instant};

use ringsteal_uring::abi::IORING_SQ_NEED_WAKEUP;
use ringsteal_uring::{opcode, Ring, RingBuilder};

fn sqpoll_ring(idle_ms: u32) -> Ring {
    RingBuilder::new(8)
        .sqpoll(idle_ms)
        .build()
        .expect("this machine allows SQPOLL")
}

/// Waits (bounded) for the poller to go to sleep: the kernel sets the flag after its idle time.
fn wait_until_poller_sleeps(ring: &Ring) {
    let start = Instant::now();
    while ring.sq_flags() & IORING_SQ_NEED_WAKEUP == 0 {
        assert!(
            start.elapsed() < common::HANG_GUARD,
            "the SQPOLL thread never slept"
        );
        std::thread::yield_now();
    }
}

fn nop_round_trip(ring: &mut Ring, user_data: u64) {
    // SAFETY: a NOP references no memory.
    unsafe { ring.push(&opcode::nop().with_user_data(user_data)) }.expect("the SQ has room");
    ring.submit_and_wait(1).expect("submit and wait");
    let cqe = ring.pop_cqe().expect("the NOP completed");
    assert_eq!((cqe.user_data, cqe.res), (user_data, 0));
}

#[test]
fn a_submission_wakes_a_sleeping_poller() {
    let mut ring = sqpoll_ring(1);
    nop_round_trip(&mut ring, 1);
    for round in 2..6 {
        wait_until_poller_sleeps(&ring);
        nop_round_trip(&mut ring, round);
    }
}

#[test]
fn a_wait_with_nothing_to_submit_leaves_the_poller_asleep() {
    // Woken, the poller would poll for its whole idle time, far longer than the wait below.
    let mut ring = sqpoll_ring(300);
    nop_round_trip(&mut ring, 1);
    wait_until_poller_sleeps(&ring);
    let outcome = ring
        .submit_and_wait_timeout(1, Some(Duration::from_millis(20)))
        .expect("a timed wait");
    assert_eq!(outcome, ringsteal_uring::Wait::TimedOut);
    assert_ne!(
        ring.sq_flags() & IORING_SQ_NEED_WAKEUP,
        0,
        "the wait woke the poller although there was nothing for it to read"
    );
}

#[test]
fn a_submission_that_wakes_the_poller_counts_the_sqes_it_handed_over() {
    let mut ring = sqpoll_ring(1);
    nop_round_trip(&mut ring, 1);
    wait_until_poller_sleeps(&ring);
    for user_data in [2, 3] {
        // SAFETY: a NOP references no memory.
        unsafe { ring.push(&opcode::nop().with_user_data(user_data)) }.expect("the SQ has room");
    }
    assert_eq!(
        ring.submit().expect("submit"),
        2,
        "two SQEs went to the poller"
    );
    let done = common::wait_cqes(&mut ring, 2);
    assert!(done.iter().all(|c| c.res == 0));
}
