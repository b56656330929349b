//! Driver states the runtime rarely reaches, set up on a real (small) ring: a full SQ at
//! park time, and a kernel that refuses submissions. `EBUSY`/`EAGAIN` from `io_uring_enter`
//! cannot be provoked on demand on current kernels, so the driver's test switch
//! `refuse_submits` makes its submissions fail with `WouldBlock` as they would.

use std::io;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringsteal_uring::abi::IOSQE_CQE_SKIP_SUCCESS;
use ringsteal_uring::opcode;

use super::user_data::{TAG_DOORBELL, TAG_IGNORE};
use super::*;
use crate::op::raw::{release, OpCell, OpHeader};
use crate::op::{Operation, Sqes};

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
            sqpoll: SqPoll::Off,
        };
        let (ring, setup) = create_ring(opts).unwrap();
        let c = ShardCounters::default();
        let mut d = Driver::new(ring, setup.mode, true).unwrap();
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
        drain(&mut d, &mut out, &c);
        tx.send(wakes).unwrap();
    });
    let wakes = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("HUNG: parked with no eventfd read armed");
    assert_eq!(wakes, 2);
}

/// What the shard's shutdown drain does, for a driver alone: cancel everything, then submit,
/// reap and wait until nothing is in flight (bounded).
fn drain(d: &mut Driver, out: &mut Reaped, c: &ShardCounters) {
    let deadline = Instant::now() + Duration::from_secs(5);
    d.cancel_all(c);
    loop {
        d.submit(c).unwrap();
        d.reap(out, c);
        if d.is_quiescent() {
            return;
        }
        let now = Instant::now();
        assert!(now < deadline, "the drain did not complete");
        d.wait_for_completion(deadline - now);
    }
}

const ENTRIES: u32 = 4;

fn driver() -> Driver {
    let (ring, setup) = create_ring(RingOptions {
        entries: ENTRIES,
        allow_defer_taskrun: true,
        allow_coop_taskrun: true,
        sqpoll: SqPoll::Off,
    })
    .expect("an io_uring");
    Driver::new(ring, setup.mode, false).expect("a driver")
}

/// Submits and reaps until `cqes` CQEs arrived (bounded: each round completes NOPs).
fn submit_and_reap(d: &mut Driver, cqes: usize, counters: &ShardCounters) {
    let mut seen = 0;
    let mut out = Reaped::default();
    for _ in 0..1000 {
        d.submit(counters).expect("submit");
        seen += d.reap(&mut out, counters);
        if seen >= cqes && d.sq_pending() == 0 {
            break;
        }
    }
    assert_eq!(seen, cqes, "CQEs reaped");
    assert_eq!(d.sq_pending(), 0);
}

#[test]
fn sqes_pushed_while_submissions_are_refused_wait_in_order_instead_of_failing() {
    let counters = ShardCounters::default();
    let mut d = driver();
    d.refuse_submits = u32::MAX;
    let n = 3 * ENTRIES as usize;
    for i in 0..n {
        let sqe = opcode::nop().with_user_data(TAG_DOORBELL);
        // SAFETY: a NOP references no memory.
        let res = unsafe { d.push(std::slice::from_ref(&sqe), &counters) };
        assert!(res.is_ok(), "push {i} with a full SQ failed: {res:?}");
    }
    assert_eq!(d.sq_pending() as usize, n);
    d.refuse_submits = 0;
    submit_and_reap(&mut d, n, &counters);
}

/// A NOP with nothing to give back.
struct Nothing;

// SAFETY: a NOP references no memory.
unsafe impl Operation for Nothing {
    type Output = ();
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::nop())
    }
    fn complete(self, _: &[(i32, u32)]) {}
    fn fail(self, _: io::Error) {}
}

#[test]
fn a_cancel_that_finds_the_sq_full_while_submissions_are_refused_is_kept() {
    let counters = ShardCounters::default();
    let mut d = driver();
    d.refuse_submits = u32::MAX;
    for _ in 0..ENTRIES {
        let sqe = opcode::nop().with_user_data(TAG_DOORBELL);
        // SAFETY: a NOP references no memory.
        unsafe { d.push(std::slice::from_ref(&sqe), &counters) }.unwrap();
    }
    let cell = OpCell::allocate(Nothing, 0);
    let op = cell.cast::<OpHeader>();
    // SAFETY: the cell is live: we hold its first reference.
    unsafe { op.as_ref() }.add_ref();
    d.push_cancel(op, &counters);
    assert_eq!(d.in_flight, 1, "the cancel's CQE is still owed");
    d.refuse_submits = 0;
    submit_and_reap(&mut d, ENTRIES as usize + 1, &counters);
    assert_eq!(d.in_flight, 0);
    // SAFETY: drops our reference, the last: the cancel's CQE released its own.
    unsafe { release(op) };
}

/// An SQE left in the backlog (the submission that would have made room was refused) must go
/// to the kernel when the shard parks, once the kernel accepts again: parking with it still
/// queued would sleep on work nothing submits (here, with no timeout, for ever).
#[test]
fn a_park_submits_the_backlog_before_it_sleeps() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let counters = ShardCounters::default();
        let mut d = driver();
        let mut fds = [0; 2];
        // SAFETY: plain syscall into a local array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // Fill the SQ with polls that never complete (nothing is written to the pipe).
        for _ in 0..ENTRIES {
            let sqe =
                opcode::poll_add(fds[0], libc::POLLIN as u32, false).with_user_data(TAG_IGNORE);
            // SAFETY: a poll references no memory.
            unsafe { d.push(std::slice::from_ref(&sqe), &counters) }.unwrap();
        }
        d.refuse_submits = 1;
        let nop = opcode::nop().with_user_data(TAG_IGNORE);
        // SAFETY: a NOP references no memory.
        unsafe { d.push(std::slice::from_ref(&nop), &counters) }.unwrap();
        assert_eq!(d.backlog.len(), 1, "setup: the NOP waits in the backlog");
        // The NOP's CQE is what ends this park.
        d.park(None, &counters);
        let left = d.backlog.len();
        // SAFETY: closing our own pipe; the polls on it complete (cancelled at ring exit).
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        tx.send(left).unwrap();
    });
    let left = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("HUNG: park slept with the backlog NOP never submitted");
    assert_eq!(left, 0);
}
