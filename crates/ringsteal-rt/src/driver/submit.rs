//! Submission: pushing SQEs into the SQ (submitting early when it is full), keeping those
//! the kernel will not take yet in the backlog (`EBUSY`/`EAGAIN`: completions must be reaped
//! first), and handing queued SQEs to the kernel in batches.
//!
//! Owns: SQ order (behind a backlog, new SQEs wait their turn) and the count of CQEs owed to
//! op cells. May not: reap, or decide what an SQE means (callers set `user_data`).

use std::io;

use ringsteal_uring::abi::IORING_SQ_NEED_WAKEUP;
use ringsteal_uring::io_uring_sqe;

use super::backlog;
use super::{Driver, RingMode};
use crate::stats::ShardCounters;

impl Driver {
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
    pub(super) unsafe fn push_or_defer(
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
            // On an SQPOLL ring this loop spins until the poller thread has read the SQ (a
            // descheduled poller makes that a time slice). Deferring to the backlog instead
            // left requests unsubmitted that callers count on being in the kernel (the CQ
            // fill of `op_stream_last.rs`), and `IORING_ENTER_SQ_WAIT` could wait for ever on
            // kernels whose poller stops while the CQ has overflowed; so it spins.
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
        // The usual case first: nothing waits in the backlog and the SQ has room. Anything
        // else (a full SQ, a backlog, more SQEs than the SQ has slots) takes the general path.
        // SAFETY: forwarded from the caller.
        if !(self.backlog.is_empty() && unsafe { self.ring.push_all(sqes) }) {
            // SAFETY: forwarded from the caller.
            unsafe { self.push(sqes, counters)? };
        }
        self.add_in_flight(sqes.len(), counters);
        Ok(())
    }

    /// SQEs queued (in the SQ or the backlog) and not yet consumed by the kernel.
    pub(crate) fn sq_pending(&self) -> u32 {
        self.ring.sq_pending() + self.backlog.len()
    }

    /// Adds the SQEs the kernel consumed since the last count to `sqes_submitted`. Counted
    /// from the kernel's SQ head rather than around each submission, because an SQPOLL
    /// poller consumes SQEs whenever it runs, also after the submission that queued them
    /// has returned.
    pub(super) fn count_consumed(&mut self, counters: &ShardCounters) {
        let head = self.ring.sq_consumed();
        counters
            .sqes_submitted
            .add(u64::from(head.wrapping_sub(self.sq_counted)));
        self.sq_counted = head;
    }

    /// Hands queued SQEs, the backlog's included, to the kernel (no-op when none are queued).
    /// `WouldBlock` (`EBUSY`/`EAGAIN`) leaves them queued for a later call.
    pub(crate) fn submit(&mut self, counters: &ShardCounters) -> io::Result<()> {
        if let Some(errno) = self.lost {
            // Entering would fail again (`lost.rs`): the shard fails what is queued.
            return Err(io::Error::from_raw_os_error(errno));
        }
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
            self.count_consumed(counters);
            if let Err(e) = res {
                self.note_enter_error(&e);
                return Err(e);
            }
            if self.backlog.is_empty() || consumed == 0 {
                return Ok(());
            }
        }
    }
}
