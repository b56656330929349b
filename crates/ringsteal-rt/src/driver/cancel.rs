//! Cancelling what is in flight: one op (`ASYNC_CANCEL` by `user_data`, request by request
//! along a linked op's chain), or, at shutdown, everything on the ring.
//!
//! A linked op (a READ linked to a WRITE, perhaps with a link timeout) is several requests.
//! Cancelling the first cancels the rest of the chain, but only while the first is still in
//! flight: once it has completed, a cancel aimed at it finds nothing (`-ENOENT`) while the
//! next request runs on, holding the op's descriptors and buffer (a write into a full pipe
//! would never end). So a dropped op is cancelled request by request: one `ASYNC_CANCEL` at
//! a time, aimed at the first of its requests whose last CQE has not been reaped (skipping a
//! zero-copy send whose result is in: only its notification is owed, and no cancel can stop
//! that, `OpHeader::first_cancellable_sqe`); when that
//! cancel misses (`-ENOENT`: the request completed, or is a linked one the kernel has not
//! issued yet) or the request completes anyway (`-EALREADY`: it was running), the next
//! cancel goes to the next request still in flight. A cancel that lands (`0`) ends the
//! chain. The state lives in the op's header (`OpHeader::cancel_state`), touched only here,
//! on the op's shard.
//!
//! A stream of completions (`op/stream/`) is one request, SQE 0, so the walk along a chain
//! never goes past it; what a stream adds is a second way to find it. Its cell names a
//! descriptor (`OpVTable::cancel_fd`), and each aim at it is a pair of cancels: by
//! descriptor and `user_data` (see [`cancel_by_fd`]) and by `user_data` alone. The pair is
//! one attempt, judged when both have answered: landed if either found the request; a miss
//! (aimed again, within the same bound) if neither did while it is still armed. So a
//! multishot receive a by-`user_data` cancel does not find is looked for again rather than
//! left armed.
//!
//! References: every cancel SQE holds one on the op, released when its CQE is reaped
//! (`reap.rs`), after this file has seen the CQE. The first cancel's reference is taken by
//! whoever asked for the cancel (`op::cancel`), the rest here.
//!
//! Owns: the cancel SQEs and their `user_data`. May not: wait for the cancelled requests
//! (the shutdown drain in `shard/drain.rs` does, reaping as usual) or free what they name.

use std::ptr::NonNull;

use std::os::fd::RawFd;

use ringsteal_uring::abi::{IORING_ASYNC_CANCEL_FD, IORING_ASYNC_CANCEL_USERDATA};
use ringsteal_uring::{io_uring_sqe, opcode};

use super::user_data::{pointer, TAG_CANCEL, TAG_IGNORE, TAG_OP};
use super::Driver;
use crate::op::raw::{release, OpHeader};
use crate::stats::ShardCounters;

/// In `OpHeader::cancel_state`: the op's future is gone; cancel what is in flight.
const REQUESTED: u16 = 1;
/// Bits 1..3: one more than the SQE the cancels in flight are aimed at (0: none).
const AIMED_SHIFT: u16 = 1;
const AIMED_MASK: u16 = 0b11 << AIMED_SHIFT;
/// Bits 3..5: how many cancels aimed at that SQE have not answered yet (one, or two for a
/// request also looked for by descriptor).
const OUTSTANDING_SHIFT: u16 = 3;
const OUTSTANDING_MASK: u16 = 0b11 << OUTSTANDING_SHIFT;
/// What the cancels of the current aim answered so far: `0` (it landed), `-EALREADY` (the
/// request is running and ends on its own), `-ENOENT` (nothing found).
const LANDED: u16 = 1 << 5;
const RUNNING: u16 = 1 << 6;
const MISSED: u16 = 1 << 7;
const ANSWERS: u16 = LANDED | RUNNING | MISSED;
/// Bits 8..16: how many aims missed (`-ENOENT`) a request that was still in flight.
const MISS: u16 = 1 << 8;
/// After this many misses at the same request the op is left to complete on its own.
/// A miss means the request was between being issued and being findable (a linked request
/// whose predecessor just completed, a multishot receive a by-`user_data` cancel did not
/// find): the next cancel, a tick later, finds it. The bound only keeps a request that no
/// cancel can ever find from costing a cancel every tick.
pub(super) const MAX_MISSES: u16 = 64;
const _: () = assert!(MAX_MISSES < u16::MAX >> 8, "the miss count fits its bits");

fn aimed(state: u16) -> Option<usize> {
    (((state & AIMED_MASK) >> AIMED_SHIFT) as usize).checked_sub(1)
}

fn outstanding(state: u16) -> u16 {
    (state & OUTSTANDING_MASK) >> OUTSTANDING_SHIFT
}

/// `state` with `cancels` cancels in flight at `sqe` (none if `None`) and no answers yet.
fn aiming(state: u16, sqe: Option<usize>, cancels: u16) -> u16 {
    let aim = sqe.map_or(0, |i| i as u16 + 1) << AIMED_SHIFT;
    (state & !(AIMED_MASK | OUTSTANDING_MASK | ANSWERS)) | aim | cancels << OUTSTANDING_SHIFT
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
        match header.first_cancellable_sqe() {
            Some(sqe) if aimed(state).is_none() => self.aim_cancel(op, sqe, counters),
            // Everything but the link timeout has completed (the kernel ends the timeout),
            // or cancels are already in flight.
            // SAFETY: releases the caller's reference (it may be the last: the op's CQEs
            // may all have arrived since the cancel was asked for).
            _ => unsafe { release(op) },
        }
    }

    /// Queues the cancels of the op's SQE `sqe`: one by `user_data`, with the reference the
    /// caller took, and, for a cell whose kind names a descriptor (`OpVTable::cancel_fd`: a
    /// stream, whose one request is SQE 0), one by descriptor and `user_data` too, with a
    /// reference taken here. Every cancel SQE holds one reference until its CQE.
    fn aim_cancel(&mut self, op: NonNull<OpHeader>, sqe: usize, counters: &ShardCounters) {
        // SAFETY: the caller's reference keeps the cell alive.
        let header = unsafe { op.as_ref() };
        let target = pointer(op.as_ptr() as *const (), TAG_OP + sqe as u64);
        let fd = match self.cancel_by_fd {
            // SAFETY: as above.
            true => unsafe { OpHeader::cancel_fd(op) },
            false => None,
        };
        let cancels = 1 + u16::from(fd.is_some());
        header.set_cancel_state(aiming(header.cancel_state(), Some(sqe), cancels));
        if let Some(fd) = fd {
            // A multishot request: also look for it by its descriptor (see `cancel_by_fd`).
            header.add_ref();
            let flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_USERDATA;
            #[cfg(test)]
            let flags = flags | self.by_fd_extra_flags;
            self.push_cancel_sqe(cancel_by_fd(fd, target, op, flags), counters);
        }
        let cancel =
            opcode::cancel(target, 0).with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
        self.push_cancel_sqe(cancel, counters);
    }

    /// Queues one cancel SQE, whose reference on the op its caller took.
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

    /// After the last CQE of the op's SQE `tag` (or, `TAG_CANCEL`, of a cancel aimed at it)
    /// with result `res`, while the reaped CQE's reference still holds the op: if the op is
    /// being cancelled, aims the next cancel where it is needed.
    ///
    /// The cancels of one aim (two for a stream) are one attempt, decided when the last of
    /// them answers: if any landed, the request ends; if one found it running, its own CQE
    /// moves things on; if the request finished meanwhile, the next one is aimed at; if they
    /// found nothing while it is still in flight, it is a miss, aimed at again (a bounded
    /// number of times). Any other answer (a kernel that refuses the cancel itself) gives up.
    pub(super) fn continue_cancel(
        &mut self,
        op: NonNull<OpHeader>,
        tag: u64,
        res: i32,
        counters: &ShardCounters,
    ) {
        if tag == TAG_CANCEL && res == -libc::EINVAL {
            // Only the by-descriptor cancel can be refused so (a by-`user_data` one has no
            // key to refuse): this kernel lacks `IORING_ASYNC_CANCEL_USERDATA`. Sent again,
            // it would be refused every time, and on kernels without `SUBMIT_ALL` (before
            // 5.18) its refusal ends the submission of the SQEs queued after it.
            self.cancel_by_fd = false;
        }
        // SAFETY: the reaped CQE's reference keeps the cell alive.
        let header = unsafe { op.as_ref() };
        let mut state = header.cancel_state();
        if state & REQUESTED == 0 {
            return;
        }
        if tag == TAG_CANCEL {
            state |= match res {
                0 => LANDED,
                e if e == -libc::EALREADY => RUNNING,
                e if e == -libc::ENOENT => MISSED,
                // `-EINVAL` from a by-descriptor cancel on a kernel without the key: it
                // tells nothing, its partner's answer decides.
                _ => 0,
            };
            let left = outstanding(state).saturating_sub(1);
            state = (state & !OUTSTANDING_MASK) | left << OUTSTANDING_SHIFT;
            if left > 0 {
                header.set_cancel_state(state);
                return;
            }
            let was_aimed = aimed(state);
            let answers = state & ANSWERS;
            state = aiming(state, None, 0);
            header.set_cancel_state(state);
            let target_done = was_aimed.map_or(true, |i| header.sqe_done(i));
            if answers & LANDED != 0 || (!target_done && answers & RUNNING != 0) {
                // Landed: the request and the rest of its chain end with `-ECANCELED`. Or
                // running (`-EALREADY`): its own CQE moves the cancel on.
                return;
            }
            if !target_done {
                if answers & MISSED == 0 || state >> 8 >= MAX_MISSES {
                    // Refused, or missed too often: left to complete on its own.
                    return;
                }
                // Missed a request still in flight: aim at it again.
                state += MISS;
                header.set_cancel_state(state);
            }
        } else if aimed(state).is_some() {
            // Cancels are in flight; the last of their CQEs moves things on.
            return;
        }
        if let Some(sqe) = header.first_cancellable_sqe() {
            header.add_ref();
            self.aim_cancel(op, sqe, counters);
        }
    }

    /// Shutdown: queues cancels for everything in flight on this ring. From here on the
    /// eventfd read is re-armed only by the drain's waits, for as long as op completions are
    /// owed, and then cancelled ([`drain_wait`](Self::drain_wait)). The caller submits and
    /// reaps until [`is_quiescent`](Self::is_quiescent) (or its deadline), pushing the op
    /// cancels that destructors and other threads queue meanwhile: without `CANCEL_ANY`
    /// nothing else ends those ops.
    pub(crate) fn cancel_all(&mut self, counters: &ShardCounters) {
        self.draining = true;
        // The cancel-all needs `IORING_ASYNC_CANCEL_ANY` (5.19); older kernels fail it with
        // `EINVAL`, and only the ops' own cancels end them. It ends the eventfd read too.
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
/// cancel does the work; the driver then stops sending this one. Whichever finds the request
/// first cancels it; the other finds nothing.
///
/// `flags` are `IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_USERDATA` (tests add one).
fn cancel_by_fd(fd: RawFd, target: u64, op: NonNull<OpHeader>, flags: u32) -> io_uring_sqe {
    let mut sqe =
        opcode::cancel(target, flags).with_user_data(pointer(op.as_ptr() as *const (), TAG_CANCEL));
    sqe.fd = fd;
    sqe
}
