//! The driver: one per shard. Owns the shard's ring, knows what every `user_data` means,
//! pushes SQEs (submitting early when the SQ is full), submits in batches, reaps CQEs and
//! turns them into wakes, messages and freed op cells.
//!
//! May not: run tasks or wake them itself. Reaping collects wakers into the caller's
//! [`Reaped`] buffer and the shard wakes them after the driver is no longer borrowed, so a
//! wake that rings another shard's doorbell can use this ring again.

mod backlog;
mod eventfd;
mod setup;
#[cfg(test)]
mod tests;
pub(crate) mod user_data;

pub(crate) use eventfd::signal as signal_eventfd;
pub(crate) use setup::{create_ring, RingOptions};
pub use setup::{RingMode, RingRefusal, RingSetup};

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::task::Waker;
use std::time::Duration;

use ringsteal_uring::abi::{IORING_CQE_F_MORE, IORING_SQ_CQ_OVERFLOW, IORING_SQ_NEED_WAKEUP};
use ringsteal_uring::{io_uring_cqe, io_uring_sqe, opcode, Ring, Wait};

use crate::op::raw::{release, OpHeader};
use crate::stats::ShardCounters;
use backlog::Backlog;
use eventfd::EventFd;
use user_data::*;

/// Longest sleep while the eventfd read could not be armed.
const UNARMED_PARK: Duration = Duration::from_millis(1);

/// What a reap produced, for the shard to act on once the driver is released.
#[derive(Default)]
pub(crate) struct Reaped {
    pub(crate) wakers: Vec<Waker>,
    /// Raw messages from MSG_RING completions: (sequence number, truncated; payload).
    pub(crate) messages: VecDeque<(u64, u64)>,
    /// Shards whose doorbell this shard sent by MSG_RING and the kernel refused: the shard
    /// rings their eventfd instead (ADR-0006).
    pub(crate) failed_doorbells: Vec<usize>,
}

/// A shard's ring and its bookkeeping.
pub(crate) struct Driver {
    ring: Ring,
    mode: RingMode,
    /// CQEs still owed to op cells (main, second, cancel).
    in_flight: usize,
    eventfd: Option<EventFd>,
    cqes: Box<[io_uring_cqe]>,
    /// SQEs that found the SQ full while the kernel refused submissions (`EBUSY`/`EAGAIN`):
    /// moved into the SQ, in order, as soon as it has room.
    backlog: Backlog,
    /// Tests: how many more submissions fail with `WouldBlock` as `EBUSY` would.
    #[cfg(test)]
    pub(crate) refuse_submits: u32,
    /// Shutdown may cancel with `IORING_ASYNC_CANCEL_ANY | ALL` (see [`drain`](Self::drain)).
    cancel_any: bool,
}

impl Driver {
    pub(crate) fn new(ring: Ring, mode: RingMode, with_eventfd: bool) -> io::Result<Self> {
        let eventfd = if with_eventfd {
            Some(EventFd::new()?)
        } else {
            None
        };
        let mut d = Self {
            ring,
            mode,
            in_flight: 0,
            eventfd,
            cqes: vec![io_uring_cqe::default(); 256].into_boxed_slice(),
            cancel_any: true,
            backlog: Backlog::default(),
            #[cfg(test)]
            refuse_submits: 0,
        };
        d.arm_eventfd();
        Ok(d)
    }

    /// Whether [`drain`](Self::drain) may use `IORING_ASYNC_CANCEL_ANY` (off: as on 5.15–5.18).
    pub(crate) fn set_cancel_any(&mut self, allow: bool) {
        self.cancel_any = allow;
    }

    pub(crate) fn ring_fd(&self) -> RawFd {
        self.ring.fd()
    }

    pub(crate) fn eventfd(&self) -> Option<RawFd> {
        self.eventfd.as_ref().map(EventFd::fd)
    }

    pub(crate) fn mode(&self) -> RingMode {
        self.mode
    }

    /// Queues SQEs (all in consecutive slots), submitting first if the SQ lacks room. If the
    /// kernel refuses submissions for now (`EBUSY`/`EAGAIN`: completions must be reaped
    /// first), the SQEs wait in the backlog and go to the SQ at a later submission.
    ///
    /// # Safety
    /// As for `Ring::push`: everything the SQEs point at must stay valid until their CQEs.
    pub(crate) unsafe fn push(
        &mut self,
        sqes: &[io_uring_sqe],
        counters: &ShardCounters,
    ) -> io::Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.push_or_defer(sqes, counters, true) }
    }

    /// [`push`](Self::push), or with `may_defer` false, `WouldBlock` instead of the backlog.
    ///
    /// # Safety
    /// As for [`push`](Self::push).
    unsafe fn push_or_defer(
        &mut self,
        sqes: &[io_uring_sqe],
        counters: &ShardCounters,
        may_defer: bool,
    ) -> io::Result<()> {
        if sqes.len() > self.ring.sq_entries() as usize || sqes.len() > backlog::GROUP {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "more linked SQEs than the ring has slots",
            ));
        }
        // SAFETY: the backlog holds SQEs pushed under this function's contract.
        unsafe { self.backlog.flush_into(&mut self.ring) };
        // Behind a backlog the SQEs wait their turn, so that SQ order stays push order.
        while self.backlog.is_empty() {
            // SAFETY: forwarded from the caller.
            if unsafe { self.ring.push_all(sqes) } {
                return Ok(());
            }
            // The SQ is full: hand what is queued to the kernel to make room.
            match self.submit(counters) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        if !may_defer {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "the submission queue is backed up",
            ));
        }
        // The kernel wants completions reaped first; the shard's next tick does that and its
        // submission moves these on.
        self.backlog.push(sqes);
        Ok(())
    }

    /// Queues an op SQE (or a linked pair) and counts the CQEs it owes.
    ///
    /// # Safety
    /// As for [`push`](Self::push).
    pub(crate) unsafe fn push_op(
        &mut self,
        sqes: &[io_uring_sqe],
        counters: &ShardCounters,
    ) -> io::Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.push(sqes, counters)? };
        self.in_flight += sqes.len();
        counters.ops_in_flight.set(self.in_flight as u64);
        Ok(())
    }

    /// Queues an `ASYNC_CANCEL` of the op at `op`. The caller has taken a reference on the
    /// op for the cancel's own CQE, which [`reap`](Self::reap) releases.
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
            self.in_flight += 1;
            counters.ops_in_flight.set(self.in_flight as u64);
        }
    }

    /// Queues a doorbell (or a message) into another ring, with no CQE here on success; a
    /// failure posts one here with `on_error` ([`doorbell_send`] or `TAG_IGNORE`).
    pub(crate) fn push_msg_ring(
        &mut self,
        target_fd: RawFd,
        res: u32,
        user_data: u64,
        on_error: u64,
        counters: &ShardCounters,
    ) -> io::Result<()> {
        let sqe = opcode::msg_ring(target_fd, res, user_data, 0, 0)
            .with_flags(ringsteal_uring::abi::IOSQE_CQE_SKIP_SUCCESS)
            .with_user_data(on_error);
        // Never deferred: it names a ring fd that is only known to be open while the caller
        // holds the target's fd guard, so it goes to the SQ now or the caller falls back.
        // SAFETY: MSG_RING with MSG_DATA references no memory.
        unsafe { self.push_or_defer(std::slice::from_ref(&sqe), counters, false) }
    }

    /// SQEs queued (in the SQ or the backlog) and not yet consumed by the kernel.
    pub(crate) fn sq_pending(&self) -> u32 {
        self.ring.sq_pending() + self.backlog.len()
    }

    /// Hands queued SQEs, the backlog's included, to the kernel (no-op when none are queued).
    /// `WouldBlock` (`EBUSY`/`EAGAIN`) leaves them queued for a later call.
    pub(crate) fn submit(&mut self, counters: &ShardCounters) -> io::Result<()> {
        loop {
            // SAFETY: the backlog holds SQEs pushed under `push`'s contract.
            unsafe { self.backlog.flush_into(&mut self.ring) };
            let before = self.ring.sq_pending();
            if before == 0 {
                return Ok(());
            }
            // An SQPOLL ring enters the kernel only to wake its sleeping poller thread.
            if self.mode != RingMode::SqPoll || self.ring.sq_flags() & IORING_SQ_NEED_WAKEUP != 0 {
                counters.enters.incr();
            }
            #[cfg(test)]
            if self.refuse_submits > 0 {
                self.refuse_submits -= 1;
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "refused (test)"));
            }
            let res = self.ring.submit();
            let consumed = before.saturating_sub(self.ring.sq_pending());
            counters.sqes_submitted.add(u64::from(consumed));
            res?;
            if self.backlog.is_empty() || consumed == 0 {
                return Ok(());
            }
        }
    }

    /// True if CQEs are ready or the kernel holds completion work back until we enter.
    pub(crate) fn has_completions(&self) -> bool {
        self.ring.cq_ready() > 0 || self.ring.taskrun_pending() || self.ring.cq_overflow_pending()
    }

    /// Reaps every available CQE into `out` (flushing deferred work and overflow first).
    /// Returns the number of CQEs seen.
    pub(crate) fn reap(&mut self, out: &mut Reaped, counters: &ShardCounters) -> usize {
        if self.ring.sq_flags() & IORING_SQ_CQ_OVERFLOW != 0 {
            counters.cq_overflows.incr();
        }
        if self.ring.taskrun_pending() || self.ring.cq_overflow_pending() {
            counters.enters.incr();
            let _ = self.ring.flush_completions();
        }
        let mut total = 0;
        loop {
            let n = self.ring.reap(&mut self.cqes);
            if n == 0 {
                break;
            }
            total += n;
            for i in 0..n {
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
        total
    }

    fn dispatch(&mut self, cqe: io_uring_cqe, out: &mut Reaped, counters: &ShardCounters) {
        let (tag, rest) = split(cqe.user_data);
        match tag {
            TAG_OP..=TAG_OP_LAST | TAG_CANCEL => {
                let Some(op) = NonNull::new(rest as *mut OpHeader) else {
                    return;
                };
                if cqe.flags & IORING_CQE_F_MORE != 0 {
                    // Not the SQE's last CQE (multishot, or a zero-copy send whose
                    // notification follows): it neither counts down nor releases.
                    if tag != TAG_CANCEL {
                        // SAFETY: the cell is alive: this SQE holds a reference on it.
                        unsafe { op.as_ref() }.record_more(tag as usize, cqe.res, cqe.flags);
                    }
                    return;
                }
                self.in_flight -= 1;
                if tag != TAG_CANCEL {
                    // SAFETY: the cell is alive: this CQE's SQE holds a reference on it.
                    let done = unsafe { op.as_ref() }.complete(tag as usize, cqe.res, cqe.flags);
                    if let Some(waker) = done {
                        counters.ops_completed.incr();
                        out.wakers.extend(waker);
                    }
                }
                // SAFETY: releases the reference the SQE held.
                unsafe { release(op) };
            }
            TAG_DOORBELL => {}
            TAG_MESSAGE => {
                counters.messages_received.incr();
                out.messages
                    .push_back(decode_message(cqe.res, cqe.user_data));
            }
            TAG_EVENTFD => {
                counters.eventfd_wakes.incr();
                if let Some(efd) = self.eventfd.as_mut() {
                    efd.armed = false;
                }
                self.arm_eventfd();
            }
            TAG_IGNORE => {
                if let Some(target) = doorbell_target(rest) {
                    out.failed_doorbells.push(target);
                }
            }
            _ => {}
        }
    }

    fn arm_eventfd(&mut self) {
        let Some(efd) = self.eventfd.as_mut() else {
            return;
        };
        if efd.armed {
            return;
        }
        let sqe = opcode::read(efd.fd(), efd.buf_ptr(), 8, u64::MAX).with_user_data(TAG_EVENTFD);
        // SAFETY: the 8-byte buffer is boxed inside `efd`, which outlives the read: at
        // shutdown the driver waits for this CQE or leaks the buffer.
        if unsafe { self.ring.push(&sqe) }.is_ok() {
            efd.armed = true;
        }
    }

    /// Blocks until a CQE arrives or `timeout` passes, submitting queued SQEs first.
    pub(crate) fn park(&mut self, timeout: Option<Duration>, counters: &ShardCounters) {
        // SAFETY: the backlog holds SQEs pushed under `push`'s contract.
        unsafe { self.backlog.flush_into(&mut self.ring) };
        if !self.backlog.is_empty() {
            // The SQ is full: submitting makes room and moves the rest on (it loops).
            let _ = self.submit(counters);
        }
        let unarmed = |d: &Self| d.eventfd.as_ref().is_some_and(|e| !e.armed);
        if unarmed(self) {
            self.arm_eventfd();
            if unarmed(self) {
                // The SQ is full: hand it to the kernel to make room, then arm, so eventfd
                // doorbells (other threads' wakes) can reach this sleep.
                let _ = self.submit(counters);
                self.arm_eventfd();
            }
        }
        // Still unarmed, or SQEs still waiting in the backlog (the kernel took nothing): sleep
        // briefly and retry rather than sleep deaf to eventfd doorbells, or with work that
        // nothing will submit.
        let timeout = if unarmed(self) || !self.backlog.is_empty() {
            Some(timeout.map_or(UNARMED_PARK, |t| t.min(UNARMED_PARK)))
        } else {
            timeout
        };
        counters.enters.incr();
        let before = self.ring.sq_pending();
        match self.ring.submit_and_wait_timeout(1, timeout) {
            Ok(Wait::Completed | Wait::TimedOut | Wait::Interrupted) => {}
            Err(_) => {
                // EBUSY and friends: completions are backed up; the next tick reaps them.
            }
        }
        counters
            .sqes_submitted
            .add(u64::from(before.saturating_sub(self.ring.sq_pending())));
    }

    /// Shutdown: cancels everything in flight and waits (up to `deadline`) for the CQEs that
    /// free op memory. Returns true if nothing the kernel could write is left in flight.
    ///
    /// `next_cancel` yields cancels queued for this ring while it drains (an op dropped by a
    /// destructor the drain runs finds the driver borrowed and queues its cancel): they are
    /// submitted in the loop, since without `CANCEL_ANY` nothing else would end those ops.
    pub(crate) fn drain(
        &mut self,
        deadline: std::time::Instant,
        out: &mut Reaped,
        counters: &ShardCounters,
        mut next_cancel: impl FnMut() -> Option<NonNull<OpHeader>>,
    ) -> bool {
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
        // Taken out of `self` so that its completion is not re-armed; the cancels above end
        // the armed read.
        let mut efd = self.eventfd.take();
        loop {
            let _ = self.submit(counters);
            self.reap_draining(out, counters, &mut efd);
            let eventfd_busy = efd.as_ref().is_some_and(|e| e.armed);
            if self.in_flight == 0 && !eventfd_busy {
                self.eventfd = efd;
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                // Never free what the kernel may still write: leak the eventfd buffer; op
                // cells are freed only by their CQEs, which will never be reaped now.
                if let Some(e) = efd {
                    e.leak_if_armed();
                }
                return false;
            }
            // Cancels queued meanwhile (by destructors the reap just ran) go in before waiting:
            // the completions the wait is for may depend on them.
            let mut queued = false;
            while let Some(op) = next_cancel() {
                self.push_cancel(op, counters);
                queued = true;
            }
            if !queued {
                let _ = self.ring.submit_and_wait_timeout(1, Some(deadline - now));
            }
        }
    }

    fn reap_draining(
        &mut self,
        out: &mut Reaped,
        counters: &ShardCounters,
        efd: &mut Option<EventFd>,
    ) {
        if self.ring.taskrun_pending() || self.ring.cq_overflow_pending() {
            let _ = self.ring.flush_completions();
        }
        while let Some(cqe) = self.ring.pop_cqe() {
            if split(cqe.user_data).0 == TAG_EVENTFD {
                if let Some(e) = efd.as_mut() {
                    e.armed = false;
                }
                continue;
            }
            self.dispatch(cqe, out, counters);
        }
        counters.ops_in_flight.set(self.in_flight as u64);
    }
}
