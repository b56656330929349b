//! Driver states the runtime rarely reaches, set up on a real (small) ring: a full SQ at
//! park time, and a kernel that refuses submissions. `EBUSY`/`EAGAIN` from `io_uring_enter`
//! cannot be provoked on demand on current kernels, so the driver's test switch
//! `refuse_submits` makes its submissions fail with `WouldBlock` as they would.

use std::io;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ringsteal_uring::abi::{IORING_SQ_NEED_WAKEUP, IOSQE_CQE_SKIP_SUCCESS};
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
        d.drain_wait(deadline - now, c);
    }
}

pub(crate) const ENTRIES: u32 = 4;

/// A driver on a small ring of this thread, with the kernel's best plain mode.
pub(crate) fn driver() -> Driver {
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
pub(crate) struct Nothing;

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
    let header = unsafe { op.as_ref() };
    // As if its one SQE were in flight (it is not: the cancel will find nothing).
    header.set_expected(1);
    header.add_ref();
    d.push_cancel(op, &counters);
    assert_eq!(d.in_flight, 1, "the cancel's CQE is still owed");
    // The SQE "completes" before the cancel is reaped, so the cancel's miss ends it.
    assert!(header.complete(0, 0, 0).is_some());
    // SAFETY: the reference the SQE held; ours keeps the cell alive.
    unsafe { release(op) };
    d.refuse_submits = 0;
    submit_and_reap(&mut d, ENTRIES as usize + 1, &counters);
    assert_eq!(d.in_flight, 0);
    // SAFETY: drops our reference, the last: the cancel's CQE released its own.
    unsafe { release(op) };
}

/// A dropped linked op is cancelled request by request: a cancel that misses (`-ENOENT`) a
/// request still in flight is aimed at it again, a bounded number of times; once the request
/// completes, the next cancel goes to the next request of the chain. Here the op's two
/// requests were never submitted, so every cancel misses; the test completes the first
/// request by hand between two cancels.
#[test]
fn a_cancel_that_misses_aims_again_moves_on_along_the_chain_and_gives_up_in_the_end() {
    let counters = ShardCounters::default();
    let mut d = driver();
    let cell = OpCell::allocate(Nothing, 0);
    let op = cell.cast::<OpHeader>();
    // SAFETY: the cell is live: we hold its first reference.
    let header = unsafe { op.as_ref() };
    header.set_expected(2);
    header.add_ref();
    d.push_cancel(op, &counters);
    let mut out = Reaped::default();
    let mut cancels = 0;
    let mut reap_one = |d: &mut Driver| {
        d.submit(&counters).unwrap();
        d.ring.submit_and_wait(1).unwrap();
        let n = d.reap(&mut out, &counters);
        assert_eq!(n, 1, "one cancel in flight at a time");
        cancels += n;
    };
    reap_one(&mut d);
    assert_eq!(
        d.in_flight, 1,
        "a cancel missed SQE 0 in flight: it is aimed again"
    );
    assert!(
        header.complete(0, 16, 0).is_none(),
        "SQE 1 is still in flight"
    );
    // SAFETY: the reference SQE 0 held; ours keeps the cell alive.
    unsafe { release(op) };
    // Misses SQE 0, now done: the next goes to SQE 1, without counting a miss.
    reap_one(&mut d);
    let mut rounds = 0;
    while d.in_flight > 0 {
        reap_one(&mut d);
        rounds += 1;
        assert!(
            rounds <= 2 * usize::from(super::cancel::MAX_MISSES),
            "cancels without end"
        );
    }
    // One at SQE 0, one more that found it done, then at SQE 1 until the misses run out.
    assert_eq!(cancels, 2 + usize::from(super::cancel::MAX_MISSES));
    assert!(header.complete(1, 0, 0).is_some());
    // SAFETY: the reference SQE 1 held, then ours, the last.
    unsafe {
        release(op);
        release(op);
    }
}

/// An SQPOLL ring's poller reads the SQ whenever it likes, so a MSG_RING pushed there could
/// be read after the sender's guard on the target's descriptor ended (a closed, reused
/// number), and could not be withdrawn: the driver sends none from such a ring, and nothing
/// reaches its SQ (SQPOLL runtimes ring doorbells and send messages without one, ADR-0018).
#[test]
fn an_sqpoll_ring_refuses_to_send_msg_rings() {
    let Some(mut d) = sqpoll_driver(10) else {
        return;
    };
    let counters = ShardCounters::default();
    let target = driver();
    let err = d
        .send_doorbell(target.ring_fd(), 1, &counters)
        .expect_err("a doorbell from an SQPOLL ring");
    assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{err}");
    let message = SentMessage {
        target: 1,
        seq: 0,
        payload: 7,
    };
    let err = d
        .send_message(target.ring_fd(), message, &counters)
        .expect_err("a message from an SQPOLL ring");
    assert_eq!(err.kind(), io::ErrorKind::Unsupported, "{err}");
    assert_eq!(d.sq_pending(), 0, "nothing left for the poller");
    assert_eq!(
        counters.sqes_submitted.get(),
        0,
        "nothing went to the poller"
    );
    assert_eq!(d.in_flight, 0);
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

/// `IORING_NOP_INJECT_RESULT` (Linux 6.10; not in every `linux/io_uring.h` yet): a NOP that
/// completes with `sqe.len` as its result.
const IORING_NOP_INJECT_RESULT: u32 = 1 << 0;

/// A NOP standing in for `sqe` that the kernel completes with `-errno`, under `sqe`'s
/// `user_data` and flags: the completion a refused request of that SQE would post.
pub(crate) fn failing_nop(
    errno: i32,
    sqe: ringsteal_uring::io_uring_sqe,
) -> ringsteal_uring::io_uring_sqe {
    let mut nop = opcode::nop()
        .with_flags(sqe.flags)
        .with_user_data(sqe.user_data);
    nop.op_flags.nop_flags = IORING_NOP_INJECT_RESULT;
    nop.len = (-errno) as u32;
    nop
}

/// True if this kernel honours `IORING_NOP_INJECT_RESULT`, so [`failing_nop`] fails.
pub(crate) fn kernel_injects_nop_results() -> bool {
    let Ok(mut ring) = ringsteal_uring::Ring::new(2) else {
        return false;
    };
    let sqe = failing_nop(libc::EOVERFLOW, opcode::nop().with_user_data(1));
    // SAFETY: a NOP references no memory.
    if unsafe { ring.push(&sqe) }.is_err() || ring.submit_and_wait(1).is_err() {
        return false;
    }
    ring.pop_cqe().is_some_and(|c| c.res == -libc::EOVERFLOW)
}

/// A CQE whose dispatch unwinds (only a runtime bug can: user code is contained where it
/// runs) loses only itself: the rest of its batch, already taken off the CQ, is dispatched
/// by the next reap, in order, before anything newer.
#[test]
fn a_dispatch_that_unwinds_leaves_the_rest_of_its_batch_to_the_next_reap() {
    use super::user_data::encode_message;
    let counters = ShardCounters::default();
    let mut d = driver();
    // Four raw messages, as NOPs whose CQE carries a message's user_data (res 0).
    let message = |seq: u64| encode_message(0, seq).1;
    for seq in 0..ENTRIES as u64 {
        let sqe = opcode::nop().with_user_data(message(seq));
        // SAFETY: a NOP references no memory.
        unsafe { d.push(std::slice::from_ref(&sqe), &counters) }.unwrap();
    }
    d.submit(&counters).unwrap();
    d.ring.submit_and_wait(ENTRIES).unwrap();
    d.panic_dispatching = Some(message(1));
    let mut out = Reaped::default();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        d.reap(&mut out, &counters);
    }));
    assert!(unwound.is_err(), "setup: the second dispatch unwinds");
    let seqs = |out: &Reaped| -> Vec<u64> { out.messages.iter().map(|&(seq, _)| seq).collect() };
    assert_eq!(seqs(&out), [0], "dispatched before the unwind");
    // A newer CQE comes after what the unwound reap left.
    let sqe = opcode::nop().with_user_data(message(9));
    // SAFETY: a NOP references no memory.
    unsafe { d.push(std::slice::from_ref(&sqe), &counters) }.unwrap();
    d.submit(&counters).unwrap();
    d.ring.submit_and_wait(1).unwrap();
    let seen = d.reap(&mut out, &counters);
    assert_eq!(seen, 3, "the two left over and the new one");
    assert_eq!(seqs(&out), [0, 2, 3, 9]);
}

/// An SQPOLL poller reads the SQ when it runs, also after the submission that woke it
/// returned: `sqes_submitted` must still count every SQE it consumed (it counted only what
/// was consumed before `io_uring_enter` returned, so a poller that woke a little late left
/// SQEs uncounted for good).
#[test]
fn sqes_an_sqpoll_poller_consumes_late_are_counted() {
    let Some(mut d) = sqpoll_driver(1) else {
        return;
    };
    let counters = ShardCounters::default();
    let nop = opcode::nop()
        .with_flags(IOSQE_CQE_SKIP_SUCCESS)
        .with_user_data(TAG_IGNORE);
    let deadline = Instant::now() + Duration::from_secs(60);
    for round in 1..=4u64 {
        // Let the poller fall asleep, so that the submission only wakes it and returns.
        while d.ring.sq_flags() & IORING_SQ_NEED_WAKEUP == 0 {
            assert!(Instant::now() < deadline, "the poller never slept");
            std::thread::yield_now();
        }
        for _ in 0..8 {
            // SAFETY: a NOP references no memory.
            unsafe { d.push(&[nop], &counters) }.unwrap();
        }
        d.submit(&counters).unwrap();
        while d.sq_pending() != 0 {
            assert!(Instant::now() < deadline, "the poller never read the SQ");
            std::thread::yield_now();
        }
        // Nothing is queued: the shard's next park counts what the poller consumed.
        d.park(Some(Duration::ZERO), &counters);
        assert_eq!(counters.sqes_submitted.get(), round * 8, "round {round}");
    }
}

/// A driver on an SQPOLL ring whose poller sleeps after `idle_ms`, or `None` (and a line
/// saying the test is skipped) where the kernel refuses SQPOLL.
fn sqpoll_driver(idle_ms: u32) -> Option<Driver> {
    let (ring, setup) = create_ring(RingOptions {
        entries: ENTRIES,
        allow_defer_taskrun: false,
        allow_coop_taskrun: false,
        sqpoll: SqPoll::Try {
            idle_ms,
            refused_for_testing: false,
        },
    })
    .expect("an io_uring");
    if setup.mode != RingMode::SqPoll {
        eprintln!("skipped: no SQPOLL ring here ({setup})");
        return None;
    }
    Some(Driver::new(ring, setup.mode, false).expect("a driver"))
}
