//! A ring whose descriptor is registered with its thread (`IORING_REGISTER_RING_FDS`) enters
//! the kernel through the slot; a full table leaves a ring entering by its descriptor; a
//! dropped ring gives its slot back.

use std::time::Duration;

use ringsteal_uring::{opcode, Ring, Wait};

/// Slots per thread in the kernel's table of registered rings (`IO_RINGFD_REG_MAX`).
const SLOTS: usize = 16;

/// A NOP with `user_data` submitted and awaited, through every way the ring enters.
fn nop_round_trip(ring: &mut Ring, user_data: u64) {
    // SAFETY: a NOP references no memory; only this thread uses the ring.
    unsafe { ring.push(&opcode::nop().with_user_data(user_data)) }.unwrap();
    ring.submit_and_wait(1).unwrap();
    assert_eq!(ring.pop_cqe().unwrap().user_data, user_data);
    // SAFETY: as above.
    unsafe { ring.push(&opcode::nop().with_user_data(user_data + 1)) }.unwrap();
    let wait = ring
        .submit_and_wait_timeout(1, Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(wait, Wait::Completed);
    ring.flush_completions().unwrap();
    assert_eq!(ring.pop_cqe().unwrap().user_data, user_data + 1);
}

#[test]
fn a_registered_ring_submits_waits_and_flushes_through_its_slot() {
    let mut ring = Ring::new(4).expect("io_uring is available");
    assert!(!ring.ring_fd_registered());
    // SAFETY: this thread is the only one that enters the ring, and it drops it.
    unsafe { ring.register_ring_fd() }.expect("Linux 5.18+ registers ring descriptors");
    assert!(ring.ring_fd_registered());
    // SAFETY: as above; a second registration is a no-op.
    unsafe { ring.register_ring_fd() }.unwrap();
    nop_round_trip(&mut ring, 10);
}

#[test]
fn a_ring_refused_a_slot_enters_by_its_descriptor() {
    std::thread::spawn(|| {
        let mut held = Vec::new();
        for _ in 0..SLOTS {
            let mut ring = Ring::new(4).unwrap();
            // SAFETY: this thread is the only one that enters these rings, and drops them.
            unsafe { ring.register_ring_fd() }.expect("a free slot");
            held.push(ring);
        }
        let mut refused = Ring::new(4).unwrap();
        // SAFETY: as above.
        let err = unsafe { refused.register_ring_fd() }.expect_err("every slot is taken");
        assert_eq!(err.raw_os_error(), Some(libc::EBUSY), "{err}");
        assert!(!refused.ring_fd_registered());
        nop_round_trip(&mut refused, 20);
        for ring in &mut held {
            nop_round_trip(ring, 30);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn a_dropped_ring_gives_its_slot_back() {
    std::thread::spawn(|| {
        for i in 0..3 * SLOTS as u64 {
            let mut ring = Ring::new(4).unwrap();
            // SAFETY: this thread is the only one that enters the ring, and drops it.
            unsafe { ring.register_ring_fd() }
                .unwrap_or_else(|e| panic!("ring {i}: the slots of dropped rings are free: {e}"));
            nop_round_trip(&mut ring, 100 + 2 * i);
        }
    })
    .join()
    .unwrap();
}
