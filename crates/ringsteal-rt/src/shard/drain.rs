//! Draining a shard's ring at shutdown: cancel everything in flight and wait, up to a
//! deadline, for the completions that free op memory (ADR-0003: a cell is freed by its last
//! CQE). What does not complete in time is leaked, never freed under the kernel; so are
//! zero-copy sends that owe only their notification, without waiting (a peer that stopped
//! reading would hold the shutdown for its whole timeout).
//!
//! Cancels other threads ask for meanwhile (an op dropped elsewhere: without `CANCEL_ANY`
//! nothing else ends it) are carried out as they come: the drain sleeps as a parked shard
//! does, `sleeping` published and the command queue re-checked first, so their doorbell
//! wakes it (the driver keeps the eventfd read armed while op completions are owed).
//!
//! Part of shutting down (`shutdown.rs`); the driver supplies the primitives (cancel all,
//! submit, reap, wait) and stays the only owner of the ring.

use std::time::Instant;

use super::Shard;
use crate::driver::Reaped;
use crate::util::wake_later::collecting;

impl Shard {
    /// Returns true if nothing the kernel could write is left in flight. Wakers of ops that
    /// completed meanwhile are left in `reaped` for the caller.
    pub(super) fn drain_ring(&self, deadline: Instant, reaped: &mut Reaped) -> bool {
        let counters = self.counters();
        let remote = self.remote();
        let mut driver = self.driver.borrow_mut();
        driver.cancel_all(counters);
        loop {
            let _ = driver.submit(counters);
            driver.reap(reaped, counters);
            if driver.is_quiescent() {
                return true;
            }
            if driver.is_lost() {
                // The kernel refuses this ring for good (`driver/lost.rs`): what it had
                // consumed can never be reaped, so it stays allocated; waiting would only
                // spin until the deadline.
                return false;
            }
            if driver.owes_only_notifications() && !self.push_queued_cancels(&mut driver, reaped) {
                // Zero-copy sends waiting for a peer's acknowledgement: the kernel only reads
                // their pages, and may for as long as that peer likes. Leak them (the cells
                // and their buffers stay allocated for good) rather than wait out the
                // deadline.
                driver.give_up_notifications();
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                // Never free what the kernel may still write: op cells are freed only by
                // their CQEs, which will never be reaped now, and the eventfd's buffer is
                // leaked by its destructor while a read is armed.
                return false;
            }
            // Cancels queued meanwhile (an op dropped by a destructor the reap just ran finds
            // the driver borrowed and queues its cancel; one dropped on another thread sends
            // it) go in before waiting: the completions the wait is for may depend on them,
            // and without `CANCEL_ANY` nothing else would end those ops.
            if self.push_queued_cancels(&mut driver, reaped) {
                continue;
            }
            // Doorbells this shard owes others (a cancel a destructor here asked of another
            // shard) go out now, through their eventfds: the driver is borrowed.
            self.flush_pending_doorbells();
            // Sleep as a parked shard does: publish, re-check, wait. A cancel sent after the
            // re-check finds `sleeping` and rings the doorbell, which ends the wait.
            remote.prepare_sleep();
            if self.push_queued_cancels(&mut driver, reaped) {
                remote.wake_up();
                continue;
            }
            driver.drain_wait(deadline - now, counters);
            remote.wake_up();
        }
    }

    /// Pushes the op cancels queued for this shard; true if there were any. Wakes that
    /// freeing an op asks for meanwhile go into `reaped`, for after the drain.
    fn push_queued_cancels(&self, driver: &mut crate::driver::Driver, reaped: &mut Reaped) -> bool {
        let mut queued = false;
        while let Some(op) = self.next_queued_cancel() {
            collecting(&mut reaped.wakers, || {
                driver.push_cancel(op, self.counters())
            });
            queued = true;
        }
        queued
    }
}
