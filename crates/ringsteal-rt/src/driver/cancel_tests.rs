//! How a request of a cell that names a descriptor (a stream of completions, `op/stream/`) is
//! cancelled: each aim at it is a pair of cancels, by descriptor and `user_data` and by
//! `user_data` alone, judged as one attempt when both have answered. On a real ring, with a
//! stand-in cell of such a kind (the driver sees only the header and its table).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Waker;

use ringsteal_uring::opcode;

use super::cancel::MAX_MISSES;
use super::tests::driver;
use super::user_data::{pointer, TAG_OP};
use super::*;
use crate::op::raw::{release, OpHeader, OpVTable};

/// A cell whose kind looks for its request by descriptor too, as a stream's does.
#[repr(C)]
struct FdCell {
    header: OpHeader,
    fd: RawFd,
    frees: Arc<AtomicUsize>,
}

const FD_CELL: &OpVTable = &OpVTable {
    free: free_fd_cell,
    more: no_more,
    end: None,
    cancel_fd: fd_of,
};

unsafe fn free_fd_cell(op: NonNull<OpHeader>) {
    // SAFETY: made by `fd_cell` with `Box::into_raw`; the last reference is gone.
    let cell = unsafe { Box::from_raw(op.cast::<FdCell>().as_ptr()) };
    cell.frees.fetch_add(1, SeqCst);
}

unsafe fn no_more(_: NonNull<OpHeader>, _: usize, _: i32, _: u32, _: &mut Vec<Waker>) {
    unreachable!("the requests of these tests post one CQE each");
}

unsafe fn fd_of(op: NonNull<OpHeader>) -> Option<RawFd> {
    // SAFETY: the caller's reference keeps the cell alive.
    Some(unsafe { op.cast::<FdCell>().as_ref() }.fd)
}

/// A cell naming `fd`, expecting one request's CQE, with the future's reference and one more
/// taken for the first cancel (as `op::cancel` takes it). Returns the cell and its free count.
fn fd_cell(fd: RawFd) -> (NonNull<OpHeader>, Arc<AtomicUsize>) {
    let frees = Arc::new(AtomicUsize::new(0));
    let cell = Box::new(FdCell {
        header: OpHeader::new(0, FD_CELL),
        fd,
        frees: frees.clone(),
    });
    let op = NonNull::from(Box::leak(cell)).cast::<OpHeader>();
    // SAFETY: the cell is live: we hold its first reference.
    unsafe { op.as_ref() }.set_expected(1);
    (op, frees)
}

fn socket_pair() -> (OwnedFd, OwnedFd) {
    let (rx, tx) = std::os::unix::net::UnixStream::pair().unwrap();
    (rx.into(), tx.into())
}

/// Arms a poll of the idle socket `rx` under the cell's `user_data` (a real request for the
/// cancels to find), and submits it.
fn arm_poll(d: &mut Driver, rx: &OwnedFd, op: NonNull<OpHeader>, c: &ShardCounters) {
    let poll = opcode::poll_add(rx.as_raw_fd(), libc::POLLIN as u32, false)
        .with_user_data(pointer(op.as_ptr() as *const (), TAG_OP));
    // SAFETY: a poll references no memory; the cell outlives its CQE (its reference).
    unsafe { d.push_op(std::slice::from_ref(&poll), c) }.unwrap();
    d.submit(c).unwrap();
}

/// Submits and reaps until nothing is in flight; returns the CQEs reaped. Never more than
/// `limit` in flight at once.
fn run_until_quiet(d: &mut Driver, limit: usize, c: &ShardCounters) -> usize {
    let mut out = Reaped::default();
    let mut cqes = 0;
    for _ in 0..10_000 {
        assert!(d.in_flight <= limit, "{} requests in flight", d.in_flight);
        if d.in_flight == 0 {
            return cqes;
        }
        d.submit(c).unwrap();
        d.ring.submit_and_wait(1).unwrap();
        cqes += d.reap(&mut out, c);
    }
    panic!("cancels without end");
}

/// Nothing is armed under the cell's `user_data`, so both cancels of every aim find nothing
/// (`-ENOENT`; the by-descriptor one may answer `-EINVAL` on kernels before 6.6): the pair is
/// one miss, aimed again as a pair, until the bound; each cancel held its own reference.
#[test]
fn a_stream_cancel_pair_that_finds_nothing_is_one_miss_and_is_retried_as_a_pair() {
    let c = ShardCounters::default();
    let mut d = driver();
    let (rx, _tx) = socket_pair();
    let (op, frees) = fd_cell(rx.as_raw_fd());
    // SAFETY: the cell is live: we hold its first reference.
    let header = unsafe { op.as_ref() };
    header.add_ref();
    d.push_cancel(op, &c);
    assert_eq!(d.in_flight, 2, "a pair: by descriptor and by user_data");
    let cqes = run_until_quiet(&mut d, 2, &c);
    assert_eq!(
        cqes,
        2 * (1 + usize::from(MAX_MISSES)),
        "first aim, then every miss"
    );
    // The request "ends" now; its reference, then ours, the last.
    assert!(header.complete(0, -libc::ECANCELED, 0).is_some());
    // SAFETY: the reference the request held; ours keeps the cell alive.
    unsafe { release(op) };
    assert_eq!(
        frees.load(SeqCst),
        0,
        "a cancel's reference was released twice"
    );
    // SAFETY: our reference, the last.
    unsafe { release(op) };
    assert_eq!(
        frees.load(SeqCst),
        1,
        "a cancel's reference was never released"
    );
}

/// A real request (a poll of an idle socket) armed under the cell's `user_data`: one cancel
/// of the pair finds it, the other finds nothing. That is one landed attempt: the request
/// ends with `-ECANCELED` and no cancel is aimed again.
#[test]
fn a_stream_request_one_cancel_of_the_pair_finds_is_cancelled_without_a_retry() {
    let c = ShardCounters::default();
    let mut d = driver();
    let (rx, _tx) = socket_pair();
    let (op, frees) = fd_cell(rx.as_raw_fd());
    arm_poll(&mut d, &rx, op, &c);
    // SAFETY: the cell is live: we hold its first reference.
    let header = unsafe { op.as_ref() };
    assert!(!header.is_complete(), "the socket is idle");
    header.add_ref();
    d.push_cancel(op, &c);
    let cqes = run_until_quiet(&mut d, 3, &c);
    assert_eq!(cqes, 3, "the poll and the two cancels, no retry");
    assert!(header.is_complete());
    assert_eq!(header.results()[0].0, -libc::ECANCELED);
    assert_eq!(frees.load(SeqCst), 0);
    // SAFETY: our reference, the last.
    unsafe { release(op) };
    assert_eq!(frees.load(SeqCst), 1);
}

/// A kernel that refuses the by-descriptor cancel's key (`EINVAL`, before 6.6; here made so
/// with an unknown flag): the pair still cancels (its by-`user_data` half lands), and from
/// then on the driver sends only that half, rather than a cancel the kernel refuses every
/// time (which, before 5.18, also ends the submission of what is queued after it).
#[test]
fn a_refused_by_descriptor_cancel_is_not_sent_again() {
    let c = ShardCounters::default();
    let mut d = driver();
    d.by_fd_extra_flags = 1 << 31;
    let (rx, _tx) = socket_pair();
    for round in 0..2 {
        let (op, frees) = fd_cell(rx.as_raw_fd());
        arm_poll(&mut d, &rx, op, &c);
        // SAFETY: the cell is live: we hold its first reference.
        let header = unsafe { op.as_ref() };
        header.add_ref();
        d.push_cancel(op, &c);
        let expected = if round == 0 { 2 } else { 1 };
        assert_eq!(
            d.in_flight,
            1 + expected,
            "round {round}: the poll and {expected} cancels"
        );
        let cqes = run_until_quiet(&mut d, 3, &c);
        assert_eq!(cqes, 1 + expected, "round {round}: no retry");
        assert!(header.is_complete());
        assert_eq!(header.results()[0].0, -libc::ECANCELED, "round {round}");
        // SAFETY: our reference, the last.
        unsafe { release(op) };
        assert_eq!(frees.load(SeqCst), 1, "round {round}");
    }
}
