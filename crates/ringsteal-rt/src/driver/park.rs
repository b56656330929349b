//! Blocking in `io_uring_enter` until a CQE arrives or a deadline passes: the shard's sleep,
//! and the shutdown drain's wait.
//!
//! Owns: what must hold before the thread sleeps in the kernel (SQEs submitted, the eventfd
//! read armed so other threads' doorbells reach the sleep). May not: decide when to sleep
//! (the shard's sleep protocol does, `shard/park.rs`).

use std::time::Duration;

use ringsteal_uring::Wait;

use super::lost::LOST_PARK;
use super::Driver;
use crate::stats::ShardCounters;

/// Longest sleep while the eventfd read could not be armed.
const UNARMED_PARK: Duration = Duration::from_millis(1);

impl Driver {
    /// Blocks until a CQE arrives or `timeout` passes, submitting queued SQEs first.
    pub(crate) fn park(&mut self, timeout: Option<Duration>, counters: &ShardCounters) {
        if self.lost.is_some() {
            // Entering would fail at once. With SQEs to fail, return to let the shard fail
            // them (`Shard::handle_lost_ring`); else sleep on the clock: work from other
            // threads waits at most this long.
            if !self.lost_with_unsubmitted() {
                std::thread::sleep(timeout.map_or(LOST_PARK, |t| t.min(LOST_PARK)));
            }
            return;
        }
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
            // (A timer centuries away is capped by the ring's wait itself: some kernels add
            // the timeout to the current time without an overflow check.)
            timeout
        };
        counters.enters.incr();
        match self.ring.submit_and_wait_timeout(1, timeout) {
            Ok(Wait::Completed | Wait::TimedOut | Wait::Interrupted) => {}
            Err(e) => {
                // EBUSY and friends: completions are backed up; the next tick reaps them.
                // An error no retry mends loses the ring (`lost.rs`).
                self.note_enter_error(&e);
            }
        }
        self.count_consumed(counters);
    }

    /// Shutdown drain: submits what is queued and waits up to `timeout` for one CQE (no
    /// backlog bookkeeping: the drain submits and reaps itself each round). While op
    /// completions are owed the eventfd read is armed first, so an eventfd doorbell ends the
    /// wait; once none is, the read is cancelled instead, and its CQE ends the wait.
    pub(crate) fn drain_wait(&mut self, timeout: Duration, counters: &ShardCounters) {
        self.eventfd_for_drain(counters);
        if let Err(e) = self.ring.submit_and_wait_timeout(1, Some(timeout)) {
            self.note_enter_error(&e);
        }
    }
}
