//! Reaping: taking CQEs off the CQ (flushing deferred task work and CQ overflow first) and
//! routing each by the tag in its `user_data` (`user_data.rs`).
//!
//! Routing is one arm per tag, and every op CQE goes through [`Driver::op_cqe`], which sees
//! the whole CQE (`res` and `flags`). That is where new completion kinds plug in: a CQE with
//! `IORING_CQE_F_MORE` is one of a *stream* (multishot accept/recv, a zero-copy send whose
//! notification follows), recorded in the op's cell while its SQE keeps its reference; one
//! with `IORING_CQE_F_BUFFER` names a provided buffer (bits 16.. of `flags`), which the cell
//! receives with the flags. A new kind of completion that is not an op gets its own tag and
//! arm in [`Driver::dispatch`].
//!
//! Owns: the count of CQEs owed to op cells, the release of the references their SQEs
//! held, and a batch taken off the CQ until each of its CQEs is dispatched (the rest of a
//! batch whose dispatch unwound waits for the next reap, never lost). May not: wake
//! anything (wakers go into [`Reaped`] for the shard).

use std::ptr::NonNull;

use ringsteal_uring::abi::{
    IORING_CQE_F_MORE, IORING_CQE_F_NOTIF, IORING_SQ_CQ_OVERFLOW, IORING_SQ_TASKRUN,
};
use ringsteal_uring::io_uring_cqe;

use super::user_data::*;
use super::{Driver, Reaped};
use crate::op::raw::{release, OpHeader};
use crate::stats::ShardCounters;
use crate::util::wake_later::collecting;

impl Driver {
    /// True if CQEs are ready or the kernel holds completion work back until we enter (or
    /// the rest of a batch whose dispatch unwound is still to be dispatched): the shard has
    /// more to do and should not sleep.
    ///
    /// `IORING_SQ_TASKRUN` counts only until an enter that ran the deferred work posted
    /// nothing and left it set ([`taskrun_stale`](Self::taskrun_stale)): the kernel can leave
    /// the flag set with no work behind it, and clears it only when deferred work next runs,
    /// which may be seconds away on an idle shard. Trusting it, a shard spun on no-op enters
    /// instead of sleeping. Sleeping is safe whatever the flag says: the park's enter runs
    /// deferred work before it waits, and work queued later wakes it.
    pub(crate) fn has_completions(&self) -> bool {
        self.ring.cq_ready() > 0
            || (self.ring.taskrun_pending() && !self.taskrun_stale)
            || self.ring.cq_overflow_pending()
            || !self.undispatched.is_empty()
    }

    /// True if a [`reap`](Self::reap) may find something: [`has_completions`], or the
    /// `IORING_SQ_TASKRUN` flag even when it looked stale, so that a busy shard, which does
    /// not park, still enters to run deferred work the flag may announce.
    ///
    /// [`has_completions`]: Self::has_completions
    pub(crate) fn worth_reaping(&self) -> bool {
        self.has_completions() || self.ring.taskrun_pending()
    }

    /// Reaps every available CQE into `out` (flushing deferred work and overflow first).
    /// Returns the number of CQEs seen.
    pub(crate) fn reap(&mut self, out: &mut Reaped, counters: &ShardCounters) -> usize {
        // Cells freed here may wake wakers (a provided buffer back in its ring un-stalls a
        // stream): they join the wakers of the completed ops, woken after the reap.
        // (Usually nothing: an empty vector, which neither allocates nor needs moving.)
        let mut later = Vec::new();
        let total = collecting(&mut later, || {
            if self.lost.is_some() {
                // What the kernel will never take completes here, with the ring's error.
                self.fail_unsubmitted(out, counters);
            }
            self.reap_now(out, counters)
        });
        if !later.is_empty() {
            out.wakers.append(&mut later);
        }
        total
    }

    #[inline(always)]
    fn reap_now(&mut self, out: &mut Reaped, counters: &ShardCounters) -> usize {
        // One read of the flags word for both questions (the usual answer is no to both).
        let flags = self.ring.sq_flags();
        let entered_for_taskrun = flags & IORING_SQ_TASKRUN != 0;
        if flags & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN) != 0 {
            if flags & IORING_SQ_CQ_OVERFLOW != 0 {
                counters.cq_overflows.incr();
            }
            counters.enters.incr();
            let _ = self.ring.flush_completions();
        }
        let mut total = 0;
        if !self.undispatched.is_empty() {
            total += self.dispatch_left_over(out, counters);
        }
        loop {
            let n = self.ring.reap(&mut self.cqes);
            if n == 0 {
                break;
            }
            total += n;
            // The CQ head is past the batch already: what a dispatch that unwinds leaves
            // undispatched must stay on record, or nothing would ever see it.
            self.undispatched.end = n;
            for i in 0..n {
                self.undispatched.start = i + 1;
                let cqe = self.cqes[i];
                self.dispatch(cqe, out, counters);
            }
            if n < self.cqes.len() && !self.ring.cq_overflow_pending() {
                break;
            }
            if self.ring.cq_overflow_pending() {
                counters.enters.incr();
                let _ = self.ring.flush_completions();
            }
        }
        counters.ops_in_flight.set(self.in_flight as u64);
        // Entered because of the flag, got nothing, and the flag is still set: it announces
        // no work (or work queued during the enter, which the next park's enter runs).
        self.taskrun_stale = entered_for_taskrun && total == 0 && self.ring.taskrun_pending();
        total
    }

    /// Dispatches, in order, the rest of a batch whose dispatch unwound in an earlier reap
    /// (the CQE that unwound is not dispatched again: its cell stays allocated, a leak, never
    /// a double release). Returns how many.
    #[cold]
    #[inline(never)]
    fn dispatch_left_over(&mut self, out: &mut Reaped, counters: &ShardCounters) -> usize {
        let left = self.undispatched.len();
        while let Some(i) = self.undispatched.next() {
            let cqe = self.cqes[i];
            self.dispatch(cqe, out, counters);
        }
        left
    }

    /// Routes one CQE by its tag. Inlined into both callers: the reap's loop is the hot path,
    /// and with the cold second caller the compiler stopped inlining it there (callgrind:
    /// `read_qd32` +18 instructions per read).
    #[inline(always)]
    pub(super) fn dispatch(
        &mut self,
        cqe: io_uring_cqe,
        out: &mut Reaped,
        counters: &ShardCounters,
    ) {
        #[cfg(test)]
        if self.panic_dispatching == Some(cqe.user_data) {
            self.panic_dispatching = None;
            panic!("test: a dispatch that unwinds");
        }
        let (tag, rest) = split(cqe.user_data);
        match tag {
            TAG_OP..=TAG_OP_LAST | TAG_CANCEL => {
                if let Some(op) = NonNull::new(rest as *mut OpHeader) {
                    self.op_cqe(op, tag, &cqe, out, counters);
                }
            }
            TAG_DOORBELL => {}
            TAG_MESSAGE => {
                counters.messages_received.incr();
                out.messages
                    .push_back(decode_message(cqe.res, cqe.user_data));
            }
            TAG_EVENTFD => self.eventfd_read_completed(counters),
            TAG_IGNORE => self.send_completed(rest, cqe.res, out),
            _ => {}
        }
    }

    /// A CQE of an op's SQE number `tag` (or, `TAG_CANCEL`, of a cancel aimed at the op).
    /// Inlined into the reap's loop, its hot path: left to itself, the compiler stopped
    /// inlining it once the notification handling came in (callgrind: `op_nop` +13
    /// instructions per op).
    #[inline(always)]
    fn op_cqe(
        &mut self,
        op: NonNull<OpHeader>,
        tag: u64,
        cqe: &io_uring_cqe,
        out: &mut Reaped,
        counters: &ShardCounters,
    ) {
        // One test for both rare kinds, so that the usual CQE pays for one branch.
        if cqe.flags & (IORING_CQE_F_MORE | IORING_CQE_F_NOTIF) != 0 {
            if cqe.flags & IORING_CQE_F_MORE != 0 {
                // Not the SQE's last CQE (multishot, or a zero-copy send whose notification
                // follows): it neither counts down nor releases.
                if tag != TAG_CANCEL {
                    // SAFETY: the cell is alive: this SQE holds a reference on it.
                    if unsafe { op.as_ref() }.notifies(tag as usize) {
                        self.notification_owed(op);
                    }
                    // SAFETY: as above. The cell's kind decides what the CQE means (a kept
                    // result, or one more item of a stream).
                    unsafe {
                        OpHeader::more(op, tag as usize, cqe.res, cqe.flags, &mut out.wakers)
                    };
                }
                return;
            }
            // A zero-copy send's notification: its last CQE.
            self.notification_arrived(op);
        }
        self.in_flight -= 1;
        if tag != TAG_CANCEL {
            // SAFETY: the cell is alive: this CQE's SQE holds a reference on it; this is the
            // SQE's last CQE, reaped once.
            unsafe { OpHeader::end(op, tag as usize, cqe.res, cqe.flags) };
            // SAFETY: as above.
            let done = unsafe { op.as_ref() }.complete(tag as usize, cqe.res, cqe.flags);
            if let Some(waker) = done {
                counters.ops_completed.incr();
                out.wakers.extend(waker);
            }
        }
        self.continue_cancel(op, tag, cqe.res, counters);
        // SAFETY: releases the reference the SQE held.
        unsafe { release(op) };
    }
}
