//! A ring the kernel refuses for good: `io_uring_enter` fails with an error no retry mends
//! (a seccomp filter or security module installed after the runtime was built, a ring
//! descriptor someone closed). Retrying, as for `EBUSY`, spun the shard at full CPU with
//! every request waiting for ever.
//!
//! Once lost, the ring is entered no more: the park sleeps on the clock instead, and the
//! SQEs the kernel never consumed are taken back and each completed here with the refusal's
//! error, as if the kernel had failed it (so the futures waiting on them get an error and
//! their buffers back, and a request's cell is freed by that CQE as by any other). Requests
//! the kernel consumed before are left to it: their memory stays allocated (the shutdown's
//! drain gives up on them at once). An SQPOLL ring's SQ cannot be taken back (its poller
//! thread may be reading it): the requests in it wait (those still in the backlog fail).
//!
//! Owns: which enter errors lose the ring, and the failing of unsubmitted SQEs. May not:
//! decide what the runtime does about it (the shard stops the runtime, ADR-0019).

use std::io;
use std::time::Duration;

use ringsteal_uring::io_uring_cqe;

use super::{Driver, Reaped, RingMode};
use crate::stats::ShardCounters;

/// Longest sleep of a shard whose ring is lost (nothing but the clock can end it): how late
/// it sees work from other threads.
pub(super) const LOST_PARK: Duration = Duration::from_millis(10);

/// True if an `io_uring_enter` that failed with `errno` may work when tried again: an
/// interrupted wait, a kernel backed up (`EBUSY`, `EAGAIN`) or short of memory for now, a
/// timeout. `EBADR` (completions were dropped on a CQ overflow) is reported once and the
/// ring goes on working. Anything else (`EPERM`, `EACCES` and `ENOSYS` from a seccomp filter
/// or a security module, `EBADF` or `ENXIO` for a ring descriptor gone, `EFAULT`, `EINVAL`,
/// `EEXIST`, `EOWNERDEAD`) will fail every later enter the same way.
pub(crate) fn enter_error_is_transient(errno: i32) -> bool {
    matches!(
        errno,
        libc::EINTR | libc::EAGAIN | libc::EBUSY | libc::ENOMEM | libc::ETIME | libc::EBADR
    )
}

impl Driver {
    /// Notes an error `io_uring_enter` returned: one that is not transient loses the ring.
    #[cold]
    pub(super) fn note_enter_error(&mut self, err: &io::Error) {
        if self.lost.is_some() {
            return;
        }
        if let Some(errno) = err.raw_os_error() {
            if !enter_error_is_transient(errno) {
                self.lost = Some(errno);
            }
        }
    }

    /// True once the ring is lost.
    #[inline]
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.is_some()
    }

    /// True if the ring is lost and holds SQEs it could take back and fail: work for the
    /// next reap, which the park must not sleep before.
    pub(super) fn lost_with_unsubmitted(&self) -> bool {
        self.lost.is_some()
            && ((self.mode != RingMode::SqPoll && self.ring.sq_pending() > 0)
                || !self.backlog.is_empty())
    }

    /// On a lost ring: takes back every SQE the kernel never consumed (the SQ's and the
    /// backlog's, in push order) and completes each with the ring's error, as if the kernel
    /// had failed it. The first call after the loss also puts the error in `out` for the
    /// shard to act on.
    #[cold]
    #[inline(never)]
    pub(super) fn fail_unsubmitted(&mut self, out: &mut Reaped, counters: &ShardCounters) {
        let Some(errno) = self.lost else {
            return;
        };
        if !self.lost_reported {
            self.lost_reported = true;
            out.lost_ring = Some(errno);
        }
        let mut taken = Vec::new();
        // SAFETY: this thread is the only one that enters the ring, and it is not entering
        // now; `withdraw_pending` refuses an SQPOLL ring (whose SQ then stays as it is).
        let _ = unsafe { self.ring.withdraw_pending(&mut taken) };
        // The backlog never reached the SQ: its SQEs can be failed on any ring.
        self.backlog.take_all(&mut taken);
        for sqe in taken {
            let cqe = io_uring_cqe {
                user_data: sqe.user_data,
                res: -errno,
                flags: 0,
            };
            self.dispatch(cqe, out, counters);
        }
    }
}

#[cfg(test)]
mod tests {
    use ringsteal_uring::opcode;

    use super::*;
    use crate::driver::tests::{driver, Nothing, ENTRIES};
    use crate::driver::user_data::{pointer, TAG_OP};
    use crate::op::raw::{release, OpCell, OpHeader};

    #[test]
    fn only_interruptions_a_backed_up_kernel_and_timeouts_are_retried() {
        for errno in [
            libc::EINTR,
            libc::EAGAIN,
            libc::EBUSY,
            libc::ENOMEM,
            libc::ETIME,
            libc::EBADR,
        ] {
            assert!(enter_error_is_transient(errno), "{errno}");
        }
        for errno in [
            libc::EPERM,
            libc::EACCES,
            libc::ENOSYS,
            libc::EBADF,
            libc::ENXIO,
            libc::EFAULT,
            libc::EINVAL,
            libc::EEXIST,
            libc::EOWNERDEAD,
        ] {
            assert!(!enter_error_is_transient(errno), "{errno}");
        }
    }

    /// SQEs in the SQ and in the backlog (pushed while the kernel refused submissions with
    /// `EBUSY`) when the ring is lost: each op completes once, with the ring's error, in push
    /// order, and nothing is owed after.
    #[test]
    fn a_lost_ring_fails_every_request_the_kernel_never_took_in_push_order() {
        let counters = ShardCounters::default();
        let mut d = driver();
        d.refuse_submits = u32::MAX;
        let ops: Vec<_> = (0..3 * ENTRIES)
            .map(|_| {
                let op = OpCell::allocate(Nothing, 0).cast::<OpHeader>();
                // SAFETY: the cell is live: we hold its first reference.
                let header = unsafe { op.as_ref() };
                // The SQE's reference, which its CQE releases.
                header.set_expected(1);
                let sqe = opcode::nop().with_user_data(pointer(op.as_ptr() as *const (), TAG_OP));
                // SAFETY: a NOP references no memory.
                unsafe { d.push_op(std::slice::from_ref(&sqe), &counters) }.unwrap();
                op
            })
            .collect();
        assert!(!d.backlog.is_empty(), "setup: some wait in the backlog");
        d.note_enter_error(&io::Error::from_raw_os_error(libc::EPERM));
        assert!(
            d.lost_with_unsubmitted(),
            "failing them is work for the shard"
        );
        let mut out = Reaped::default();
        d.reap(&mut out, &counters);
        assert_eq!(out.lost_ring, Some(libc::EPERM));
        assert_eq!(d.in_flight, 0);
        assert_eq!(d.sq_pending(), 0);
        assert!(d.backlog.is_empty());
        assert!(!d.lost_with_unsubmitted(), "nothing is left to fail");
        for op in ops {
            // SAFETY: our reference keeps the cell alive.
            let header = unsafe { op.as_ref() };
            assert!(header.is_complete());
            assert_eq!(header.first_result().0, -libc::EPERM);
            // SAFETY: drops our reference, the last: the failed CQE released the SQE's.
            unsafe { release(op) };
        }
        // A second reap reports nothing new, and no enter is tried any more.
        let mut again = Reaped::default();
        d.reap(&mut again, &counters);
        assert_eq!(again.lost_ring, None);
        let enters = counters.enters.get();
        d.park(Some(Duration::from_millis(1)), &counters);
        assert_eq!(counters.enters.get(), enters, "a lost ring is not entered");
    }
}
