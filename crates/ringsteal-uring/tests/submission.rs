//! Submitting through a real ring: a NOP round trip, a full SQ, and what the probe says.

mod common;

use std::io;
use std::time::Instant;

use ringsteal_uring::abi::{IORING_OP_NOP, IORING_OP_READ};
use ringsteal_uring::{opcode, Ring};

#[test]
fn a_nop_comes_back_with_its_user_data_and_a_zero_result() {
    let mut ring = Ring::new(8).expect("io_uring is available");
    // SAFETY: a NOP references no memory.
    unsafe { ring.push(&opcode::nop().with_user_data(0xdead_beef_0000_0001)) }.unwrap();
    assert_eq!(ring.sq_pending(), 1);
    let cqe = common::wait_one(&mut ring);
    assert_eq!(cqe.user_data, 0xdead_beef_0000_0001);
    assert_eq!(cqe.res, 0);
    assert_eq!(cqe.flags, 0);
    assert_eq!(ring.sq_pending(), 0);
    assert!(ring.pop_cqe().is_none(), "one NOP, one completion");
}

#[test]
fn ten_thousand_nops_pass_through_a_64_entry_ring_by_submitting_whenever_the_sq_is_full() {
    const N: u64 = 10_000;
    let mut ring = Ring::new(64).expect("io_uring is available");
    assert_eq!(ring.sq_entries(), 64);
    let deadline = Instant::now() + common::HANG_GUARD;
    let mut seen = vec![false; N as usize];
    let (mut next, mut reaped, mut sq_full) = (0u64, 0u64, 0u32);
    while reaped < N {
        assert!(Instant::now() < deadline, "hung after {reaped} of {N} NOPs");
        while next < N {
            // SAFETY: a NOP references no memory.
            match unsafe { ring.push(&opcode::nop().with_user_data(next)) } {
                Ok(()) => next += 1,
                Err(returned) => {
                    assert_eq!(
                        returned.user_data, next,
                        "push hands back the SQE it refused"
                    );
                    assert_eq!(ring.sq_space_left(), 0);
                    sq_full += 1;
                    break;
                }
            }
        }
        let want = if next == N { 1 } else { 0 };
        match ring.submit_and_wait(want) {
            Ok(_) => {}
            // The kernel may refuse new work while completions are backed up: reap, retry.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("submit failed: {e}"),
        }
        while let Some(cqe) = ring.pop_cqe() {
            assert_eq!(cqe.res, 0);
            let slot = &mut seen[cqe.user_data as usize];
            assert!(!*slot, "NOP {} completed twice", cqe.user_data);
            *slot = true;
            reaped += 1;
        }
    }
    assert!(seen.iter().all(|s| *s));
    assert!(sq_full >= 100, "the SQ filled up only {sq_full} times");
    assert_eq!(ring.cq_dropped(), 0);
}

#[test]
fn the_probe_reports_nop_and_read_as_supported() {
    let ring = Ring::new(2).expect("io_uring is available");
    let probe = ring.probe().expect("IORING_REGISTER_PROBE works");
    assert!(probe.is_supported(IORING_OP_NOP));
    assert!(probe.is_supported(IORING_OP_READ));
    assert!(probe.last_op() >= IORING_OP_READ);
    let names: Vec<_> = probe.supported_ops().filter_map(|(_, name)| name).collect();
    assert!(
        names.contains(&"NOP") && names.contains(&"READ"),
        "{names:?}"
    );
}

#[test]
fn a_pending_sqe_can_be_replaced_until_the_kernel_consumes_it() {
    use ringsteal_uring::abi::IOSQE_CQE_SKIP_SUCCESS;
    let mut ring = Ring::new(4).expect("io_uring is available");
    let withdrawn = opcode::nop()
        .with_flags(IOSQE_CQE_SKIP_SUCCESS)
        .with_user_data(2);
    // SAFETY: NOPs reference no memory; only this thread uses the ring.
    unsafe {
        assert!(!ring.replace_last_pending(&withdrawn), "nothing pushed yet");
        ring.push(&opcode::nop().with_user_data(1)).unwrap();
        ring.push(&opcode::nop().with_user_data(3)).unwrap();
        assert!(ring.replace_last_pending(&withdrawn));
    }
    assert_eq!(ring.sq_pending(), 2, "replaced in place, not added");
    ring.submit_and_wait(1).unwrap();
    let cqe = common::wait_one(&mut ring);
    assert_eq!(
        cqe.user_data, 1,
        "the SQE before the replaced one is untouched"
    );
    assert!(
        ring.pop_cqe().is_none(),
        "the replaced SQE (user_data 3) was never submitted"
    );
    // SAFETY: as above.
    let replaced = unsafe { ring.replace_last_pending(&withdrawn) };
    assert!(!replaced, "consumed");
}

/// Whatever the pattern of pushes, replacements of the last pending SQE and batches pushed in
/// two goes, over many wraps of the ring, every SQE reaches the kernel once, as written; on a
/// ring without the SQ index array (`NO_SQARRAY`) too.
#[test]
fn every_sqe_reaches_the_kernel_once_as_written_whatever_the_batches() {
    let mut rings = vec![("index array", Ring::new(8).expect("io_uring is available"))];
    match ringsteal_uring::RingBuilder::new(8).no_sqarray().build() {
        Ok(ring) => rings.push(("NO_SQARRAY", ring)),
        Err(e) => eprintln!("NO_SQARRAY refused ({e}); the index-array ring alone"),
    }
    for (what, mut ring) in rings {
        let mut next = 0u64;
        let mut expected = Vec::new();
        // Batches of every size from 1 to the whole ring, some ending in a replaced SQE, some
        // submitted in two pushes with the first still pending, over many wraps of the ring.
        for round in 0..200u64 {
            let size = 1 + (round % 8) as usize;
            let first = size / 2;
            for _ in 0..first {
                // SAFETY: a NOP references no memory.
                unsafe { ring.push(&opcode::nop().with_user_data(next)) }.unwrap();
                expected.push(next);
                next += 1;
            }
            if round % 3 == 0 && first > 0 {
                // Replace the last pending one: its user data changes, the count does not.
                let replaced = next + 1_000_000;
                // SAFETY: as above; nothing enters this ring from elsewhere.
                assert!(unsafe {
                    ring.replace_last_pending(&opcode::nop().with_user_data(replaced))
                });
                *expected.last_mut().unwrap() = replaced;
            }
            for _ in first..size {
                // SAFETY: as above.
                unsafe { ring.push(&opcode::nop().with_user_data(next)) }.unwrap();
                expected.push(next);
                next += 1;
            }
            let mut got: Vec<u64> = common::wait_cqes(&mut ring, size)
                .iter()
                .map(|c| c.user_data)
                .collect();
            got.sort_unstable();
            let mut want = std::mem::take(&mut expected);
            want.sort_unstable();
            assert_eq!(got, want, "{what}: round {round}");
        }
        assert_eq!(ring.sq_dropped(), 0, "{what}: the kernel dropped an SQE");
        assert!(ring.pop_cqe().is_none(), "{what}: no extra completion");
    }
}
