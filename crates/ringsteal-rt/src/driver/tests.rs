//! Driver states the runtime rarely reaches, set up on a real ring.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringsteal_uring::abi::IOSQE_CQE_SKIP_SUCCESS;

use super::*;

/// The eventfd read completes while the SQ is full, so it cannot be re-armed on the spot;
/// `park` must make room and arm it before blocking, or an eventfd doorbell written meanwhile
/// never wakes it.
#[test]
fn a_park_with_a_full_sq_arms_the_eventfd_read_first() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let opts = RingOptions {
            entries: 4,
            allow_defer_taskrun: false,
            allow_coop_taskrun: false,
        };
        let (ring, mode) = create_ring(opts).unwrap();
        let c = ShardCounters::default();
        let mut d = Driver::new(ring, mode, true).unwrap();
        let efd = d.eventfd().unwrap();
        let mut out = Reaped::default();
        // The read is in flight; a doorbell completes it.
        d.submit(&c).unwrap();
        signal_eventfd(efd);
        d.ring.submit_and_wait(1).unwrap();
        // Fill the SQ with NOPs that post no CQE, then reap: the re-arm finds no room.
        let nop = opcode::nop()
            .with_flags(IOSQE_CQE_SKIP_SUCCESS)
            .with_user_data(TAG_IGNORE);
        // SAFETY: a NOP references no memory.
        while unsafe { d.ring.push(&nop) }.is_ok() {}
        d.reap(&mut out, &c);
        assert!(
            !d.eventfd.as_ref().unwrap().armed,
            "setup: the re-arm should fail"
        );
        // Another doorbell; only an armed read turns it into a wakeup.
        signal_eventfd(efd);
        d.park(None, &c);
        d.reap(&mut out, &c);
        let wakes = c.eventfd_wakes.get();
        d.drain(Instant::now() + Duration::from_secs(5), &mut out, &c);
        tx.send(wakes).unwrap();
    });
    let wakes = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("HUNG: parked with no eventfd read armed");
    assert_eq!(wakes, 2);
}
