//! Cancelling what is in flight: one op (`ASYNC_CANCEL` by `user_data`, request by request
//! along a linked op's chain), or, at shutdown, everything on the ring.
//!
//! A linked op (a READ linked to a WRITE, perhaps with a link timeout) is several requests.
//! Cancelling the first cancels the rest of the chain, but only while the first is still in
//! flight: once it has completed, a cancel aimed at it finds nothing (`-ENOENT`) while the
//! next request runs on, holding the op's descriptors and buffer (a write into a full pipe
//! would never end). So a dropped op is cancelled request by request: one `ASYNC_CANCEL` at
//! a time, aimed at the first of its requests whose last CQE has not been reaped; when that
//! cancel misses (`-ENOENT`: the request completed, or is a linked one the kernel has not
//! issued yet) or the request completes anyway (`-EALREADY`: it was running), the next
//! cancel goes to the next request still in flight. A cancel that lands (`0`) ends the
//! chain. The state lives in the op's header (`OpHeader::cancel_state`), touched only here,
//! on the op's shard.
//!
//! Owns: the cancel SQEs and their `user_data`. May not: wait for the cancelled requests
//! (the shutdown drain in `shard/drain.rs` does, reaping as usual) or free what they name.

use std::ptr::NonNull;

use ringsteal_uring::opcode;

use super::user_data::{pointer, TAG_CANCEL, TAG_EVENTFD, TAG_IGNORE, TAG_OP};
use super::Driver;
use crate::op::raw::{release, OpHeader};
use crate::stats::ShardCounters;

/// In `OpHeader::cancel_state`: the op's future is gone; cancel what is in flight.
const REQUESTED: u32 = 1;
/// Bits 1..3: one more than the SQE an `ASYNC_CANCEL` in flight is aimed at (0: none).
const AIMED_SHIFT: u32 = 1;
const AIMED_MASK: u32 = 0b11 << AIMED_SHIFT;
/// Bits 8..: how many cancels missed (`-ENOENT`) a request that was still in flight.
const MISS: u32 = 1 << 8;
/// After this many misses at the same request the op is left to complete on its own.
/// A miss means the request was between being issued and being findable (a linked request
/// whose predecessor just completed): the next cancel, a tick later, finds it. The bound only
/// keeps a request that no cancel can ever find from costing a cancel every tick.
pub(super) const MAX_MISSES: u32 = 64;

fn aimed(state: u32) -> Option<usize> {
    (((state & AIMED_MASK) >> AIMED_SHIFT) as usize).checked_sub(1)
}

fn with_aimed(state: u32, sqe: Option<usize>) -> u32 {
    let field = sqe.map_or(0, |i| i as u32 + 1) << AIMED_SHIFT;
    (state & !AIMED_MASK) | field
}

impl Driver {
    /// The op's future is gone while requests of it are in flight: cancels them (see the
    /// module docs). The caller has taken a reference on the op for a cancel's CQE, which
    /// the reap releases (or which is released here if there is nothing to cancel).
    pub(crate) fn push_cancel(&mut self, op: NonNull<OpHeader>, counters: &ShardCounters) {
        // SAFETY: the caller's reference keeps the cell alive.
        let header = unsafe { op.as_ref() };
        let state = header.cancel_state() | REQUESTED;
        header.set_cancel_state(state);
        match header.first_unfinished_sqe() {
            Some(sqe) if aimed(state).is_none() => self.aim_cancel(op, sqe, counters),
            // Everything but the link timeout has completed (the kernel ends the timeout),
            // or a cancel is already in flight.
            // SAFETY: releases the caller's reference (it may be the last: the op's CQEs
            // may all have arrived since the cancel was asked for).
            _ => unsafe { release(op) },
        }
    }

    /// Queues an `ASYNC_CANCEL` of the op's SQE `sqe`, with a reference the caller took.
    fn aim_cancel(&mut self, op: NonNull<OpHeader>, sqe: usize, counters: &ShardCounters) {
        // SAFETY: the caller's reference keeps the cell alive.
        let header = unsafe { op.as_ref() };
        header.set_cancel_state(with_aimed(header.cancel_state(), Some(sqe)));
        let target = pointer(op.as_ptr() as *const (), TAG_OP + sqe as u64);
        let cancel =
            opcode::cancel(target, 0).with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
        // SAFETY: a cancel references no memory; the op cell it names is kept alive by the
        // reference the caller took until the cancel's CQE.
        if unsafe { self.push_op(std::slice::from_ref(&cancel), counters) }.is_err() {
            // `push` defers what the kernel refuses for now, so this is a hard submission
            // error: a dropped op may never complete on its own, so keep the cancel for a
            // later submission rather than lose it.
            self.backlog.push(std::slice::from_ref(&cancel));
            self.add_in_flight(1, counters);
        }
    }

    /// After the last CQE of the op's SQE `tag` (or, `TAG_CANCEL`, of a cancel aimed at it)
    /// with result `res`, while the reaped CQE's reference still holds the op: if the op is
    /// being cancelled, aims the next cancel where it is needed.
    pub(super) fn continue_cancel(
        &mut self,
        op: NonNull<OpHeader>,
        tag: u64,
        res: i32,
        counters: &ShardCounters,
    ) {
        // SAFETY: the reaped CQE's reference keeps the cell alive.
        let header = unsafe { op.as_ref() };
        let mut state = header.cancel_state();
        if state & REQUESTED == 0 {
            return;
        }
        let next = header.first_unfinished_sqe();
        if tag == TAG_CANCEL {
            let was_aimed = aimed(state);
            state = with_aimed(state, None);
            header.set_cancel_state(state);
            let target_done = was_aimed.is_some_and(|i| header.sqe_done(i));
            if res == 0 || (!target_done && res != -libc::ENOENT) {
                // Landed: the request and the rest of its chain end with `-ECANCELED`. Or
                // running (`-EALREADY`): its own CQE moves the cancel on.
                return;
            }
            if !target_done {
                // Missed a request still in flight: aim at it again, a bounded number of times.
                if state >> 8 >= MAX_MISSES {
                    return;
                }
                state += MISS;
                header.set_cancel_state(state);
            }
        } else if aimed(state).is_some() {
            // A cancel is in flight; its CQE moves things on.
            return;
        }
        if let Some(sqe) = next {
            header.add_ref();
            self.aim_cancel(op, sqe, counters);
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
