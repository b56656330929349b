//! Cancelling what is in flight: one op (`ASYNC_CANCEL` by its `user_data`), or, at
//! shutdown, everything on the ring.
//!
//! Owns: the cancel SQEs and their `user_data`. May not: wait for the cancelled requests
//! (the shutdown drain in `shard/drain.rs` does, reaping as usual) or free what they name.

use std::ptr::NonNull;

use std::os::fd::RawFd;

use ringsteal_uring::abi::{IORING_ASYNC_CANCEL_FD, IORING_ASYNC_CANCEL_USERDATA};
use ringsteal_uring::{io_uring_sqe, opcode};

use super::user_data::{pointer, TAG_CANCEL, TAG_EVENTFD, TAG_IGNORE, TAG_OP};
use super::Driver;
use crate::op::raw::OpHeader;
use crate::stats::ShardCounters;

impl Driver {
    /// Queues an `ASYNC_CANCEL` of the op at `op`. The caller has taken a reference on the
    /// op for the cancel's own CQE, which the reap releases.
    pub(crate) fn push_cancel(&mut self, op: NonNull<OpHeader>, counters: &ShardCounters) {
        // Cancelling the first SQE of a link chain cancels the rest of the chain too.
        let target = pointer(op.as_ptr() as *const (), TAG_OP);
        // SAFETY: the caller's reference keeps the cell alive.
        if let Some(fd) = unsafe { OpHeader::cancel_fd(op) } {
            // A multishot request: also look for it by its descriptor (see `cancel_by_fd`).
            // SAFETY: as above; the extra reference is the second cancel's, released by its CQE.
            unsafe { op.as_ref() }.add_ref();
            self.push_cancel_sqe(cancel_by_fd(fd, target, op), counters);
        }
        let sqe =
            opcode::cancel(target, 0).with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
        self.push_cancel_sqe(sqe, counters);
    }

    fn push_cancel_sqe(&mut self, sqe: io_uring_sqe, counters: &ShardCounters) {
        // SAFETY: a cancel references no memory; the op cell it names is kept alive by the
        // reference the caller took until the cancel's CQE.
        if unsafe { self.push_op(std::slice::from_ref(&sqe), counters) }.is_err() {
            // `push` defers what the kernel refuses for now, so this is a hard submission
            // error: a dropped op may never complete on its own, so keep the cancel for a
            // later submission rather than lose it.
            self.backlog.push(std::slice::from_ref(&sqe));
            self.add_in_flight(1, counters);
        }
    }

    /// Shutdown: queues cancels for everything in flight on this ring and stops re-arming
    /// the eventfd read. The caller then submits and reaps until
    /// [`is_quiescent`](Self::is_quiescent) (or its deadline), pushing the op cancels that
    /// destructors queue meanwhile: without `CANCEL_ANY` nothing else ends those ops.
    pub(crate) fn cancel_all(&mut self, counters: &ShardCounters) {
        self.draining = true;
        // The armed eventfd read is cancelled by its exact `user_data`, which every kernel
        // supports: the cancel-all below needs `IORING_ASYNC_CANCEL_ANY` (5.19) and fails with
        // `EINVAL` on older kernels, which would leave the read armed until the deadline. (If
        // the cancel-all ends the read first, this one finds nothing: `ENOENT`, ignored.)
        if self.eventfd.as_ref().is_some_and(|e| e.armed) {
            let sqe = opcode::cancel(TAG_EVENTFD, 0).with_user_data(TAG_IGNORE);
            // SAFETY: a cancel references no memory.
            let _ = unsafe { self.push(std::slice::from_ref(&sqe), counters) };
        }
        if self.cancel_any {
            let sqe = opcode::cancel_all().with_user_data(TAG_IGNORE);
            // SAFETY: a cancel references no memory.
            let _ = unsafe { self.push(std::slice::from_ref(&sqe), counters) };
        }
    }
}

/// A cancel of the request `target` that matches its descriptor too
/// (`IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_USERDATA`, Linux 6.6). Multishot requests get
/// this one besides the plain by-`user_data` cancel: a by-`user_data` cancel of a multishot
/// receive has been seen to miss it (`-ENOENT`) while a by-descriptor one found it (liburing
/// issue 1375), and a descriptor alone would also cancel other requests on the same socket (a
/// send of the other half). Kernels without the `USERDATA` key answer `-EINVAL`, and the plain
/// cancel does the work. Whichever finds the request first cancels it; the other finds nothing.
fn cancel_by_fd(fd: RawFd, target: u64, op: NonNull<OpHeader>) -> io_uring_sqe {
    let mut sqe = opcode::cancel(
        target,
        IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_USERDATA,
    )
    .with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
    sqe.fd = fd;
    sqe
}
