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

    // Submit 96 NOPs, 16 at a time, without reaping a single completion.
    let mut submitted = 0u64;
    while submitted < total {
        for _ in 0..ring.sq_space_left() {
            if submitted == total {
                break;
            }
            // SAFETY: a NOP references no memory.
            unsafe { ring.push(&opcode::nop().with_user_data(submitted)) }.unwrap();
            submitted += 1;
        }
        match ring.submit() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                panic!("the kernel refused submissions while the CQ overflowed (EBUSY)")
            }
            Err(e) => panic!("submit failed: {e}"),
        }
    }
    assert_eq!(ring.cq_ready() as u64, cq, "the CQ is full");
    assert!(ring.cq_overflow_pending(), "IORING_SQ_CQ_OVERFLOW is set");

    // Reap everything: drain the CQ, then flush the overflow list into it, until done.
    let deadline = Instant::now() + common::HANG_GUARD;
    let mut seen = vec![false; total as usize];
    let mut reaped = 0;
    while reaped < total {
        assert!(
            Instant::now() < deadline,
            "hung: {reaped} of {total} reaped"
        );
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
        if reaped < total {
            assert!(
                ring.cq_overflow_pending(),
                "completions are missing but none overflowed"
            );
            ring.flush_completions().expect("flush the overflow list");
        }
    }
    assert!(!ring.cq_overflow_pending());
    assert_eq!(ring.cq_dropped(), 0, "no completion was dropped");
    assert!(ring.pop_cqe().is_none());
}
