//! More completions than the CQ holds: with `IORING_FEAT_NODROP` the kernel keeps the excess
//! in its overflow list, flags `IORING_SQ_CQ_OVERFLOW`, and hands every one over once the
//! application reaps and enters with GETEVENTS. None is lost.

mod common;

use std::io;
use std::time::Instant;

use ringsteal_uring::abi::IORING_FEAT_NODROP;
use ringsteal_uring::{opcode, RingBuilder};

#[test]
fn completions_beyond_the_cq_size_wait_in_the_overflow_list_and_are_all_reaped() {
    let mut ring = RingBuilder::new(16).build().expect("io_uring is available");
    assert!(
        ring.features() & IORING_FEAT_NODROP != 0,
        "this kernel drops CQEs on overflow (no IORING_FEAT_NODROP, Linux < 5.5)"
    );
    let cq = ring.cq_entries() as u64;
    assert_eq!(cq, 32, "the CQ defaults to twice the SQ");
    let total = cq * 3;

    // Submit all the NOPs, 16 at a time, without reaping (older kernels stop us earlier with
    // EBUSY once the CQ has overflowed); then reap everything, flushing the overflow list
    // into the CQ as it drains, and submit whatever is still queued.
    let deadline = Instant::now() + common::HANG_GUARD;
    let mut seen = vec![false; total as usize];
    let (mut pushed, mut reaped, mut filling) = (0u64, 0u64, true);
    while reaped < total {
        assert!(
            Instant::now() < deadline,
            "hung: {reaped} of {total} reaped"
        );
        while pushed < total && ring.sq_space_left() > 0 {
            // SAFETY: a NOP references no memory.
            unsafe { ring.push(&opcode::nop().with_user_data(pushed)) }.unwrap();
            pushed += 1;
        }
        match ring.submit() {
            Ok(_) => {}
            // Older kernels refuse new submissions while CQEs wait in the overflow list;
            // the queued SQEs go in on a later round, once the CQ has drained.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                assert!(
                    ring.cq_overflow_pending(),
                    "EBUSY from submit while nothing overflowed"
                );
                filling = false;
            }
            Err(e) => panic!("submit failed: {e}"),
        }
        if filling {
            if pushed < total {
                continue;
            }
            filling = false;
        }
        if reaped == 0 {
            assert_eq!(ring.cq_ready() as u64, cq, "the CQ is full");
            assert!(ring.cq_overflow_pending(), "IORING_SQ_CQ_OVERFLOW is set");
        }
        while let Some(cqe) = ring.pop_cqe() {
            assert_eq!(cqe.res, 0);
            assert!(
                !seen[cqe.user_data as usize],
                "completion {} twice",
                cqe.user_data
            );
            seen[cqe.user_data as usize] = true;
            reaped += 1;
        }
        if reaped < total && ring.cq_overflow_pending() {
            ring.flush_completions().expect("flush the overflow list");
        }
    }
    assert!(!ring.cq_overflow_pending());
    assert_eq!(ring.cq_dropped(), 0, "no completion was dropped");
    assert!(ring.pop_cqe().is_none());
}
