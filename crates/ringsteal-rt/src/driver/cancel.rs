//! Cancelling what is in flight: one op (`ASYNC_CANCEL` by its `user_data`), or, at
//! shutdown, everything on the ring.
//!
//! Owns: the cancel SQEs and their `user_data`. May not: wait for the cancelled requests
//! (the shutdown drain in `shard/drain.rs` does, reaping as usual) or free what they name.

use std::ptr::NonNull;

use ringsteal_uring::opcode;

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
        let sqe =
            opcode::cancel(target, 0).with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
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
