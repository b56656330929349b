//! Stopping a shard: cancel every task it started, drop every task queued for it, cancel
//! every operation in flight on its ring and wait for their completions (`drain.rs`: so no
//! buffer the kernel may write is freed early), then close its doorbell for good. User code
//! met on the way (destructors, wakers) runs contained: a panic in it must not skip the drain
//! (ADR-0019).

use std::ptr::NonNull;
use std::time::Instant;

use super::Shard;
use crate::op::raw::OpHeader;
use crate::shared::remote::RemoteCmd;
use crate::task;
use crate::util::wake_later::collecting;
use crate::util::{contain_panic, drain_queue, retry_steal};

impl Shard {
    /// Runs on the shard's own thread. Returns false if some completions did not arrive before
    /// `deadline` (their memory is then leaked, never freed under the kernel).
    pub(crate) fn shutdown(&self, deadline: Instant) -> bool {
        // Tasks first: dropping their futures detaches their ops (queuing cancels) and may
        // wake or release other tasks, so repeat until nothing is left.
        loop {
            let mut progressed = false;
            while let Some(t) = self.owned.pop() {
                task::shutdown(t);
                progressed = true;
            }
            self.counters().tasks_alive.set(0);
            progressed |= self.drop_queued(false);
            if !progressed {
                break;
            }
        }
        // Wakers left in the wheel and among the message waiters are user code when dropped:
        // a panic there must not cut the shutdown short (the ring would not be drained).
        let timers = self.wheel.borrow_mut().clear(self.counters());
        let waiters = self.messages.borrow_mut().take_waiters();
        for w in timers.into_iter().chain(waiters) {
            contain_panic(|| drop(w));
        }
        let mut reaped = crate::driver::Reaped::default();
        let drained = self.drain_ring(deadline, &mut reaped);
        // The paused clock's list lets go of its cells (those still in flight keep the
        // references of their requests).
        self.release_all_holds();
        // Doorbells and messages this shard sent that the kernel refused meanwhile still
        // reach their targets (if those are still running).
        self.ring_failed_doorbells(&mut reaped.failed_doorbells);
        self.requeue_failed_messages(&mut reaped.failed_messages);
        // Op futures are gone, so these wakers belong to tasks that no longer exist here or
        // to other shards' tasks; waking them is harmless and releases their references.
        for w in reaped.wakers.drain(..) {
            contain_panic(|| w.wake());
        }
        // Cancels that arrived after the drain (an op dropped by another thread, or by a waker
        // above) come too late for this ring: release their references.
        self.drop_queued(true);
        self.remote().close();
        drained
    }

    /// Drops everything queued here; true if anything was. `drained`: the ring has been
    /// drained, so nothing pushed to it now would be submitted or reaped.
    fn drop_queued(&self, drained: bool) -> bool {
        let mut any = false;
        while let Some(t) = self.run_queue.borrow_mut().pop_front() {
            drop(t);
            any = true;
        }
        while let Some(t) = self.worker.pop() {
            drop(t);
            any = true;
        }
        let remote = self.remote();
        for q in [&remote.inbox, &remote.stealable] {
            any |= drain_queue(q, drop) > 0;
        }
        if !remote.cmds.is_empty() {
            self.run_remote_cmds_for_shutdown(drained);
            any = true;
        }
        any
    }

    fn run_remote_cmds_for_shutdown(&self, drained: bool) {
        while let Some(op) = self.next_queued_cancel() {
            if drained {
                // After the drain, the op either completed (this may be the last reference:
                // releasing it frees the cell, as `final_sweep` does) or is leaked with the
                // references its unreaped CQEs hold; a cancel would never be submitted.
                // SAFETY: the command owned one reference on the op.
                unsafe { crate::op::raw::release(op) }
            } else {
                let mut later = Vec::new();
                collecting(&mut later, || {
                    self.driver.borrow_mut().push_cancel(op, self.counters())
                });
                for w in later {
                    contain_panic(|| w.wake());
                }
            }
        }
    }

    /// The next op cancel queued for this shard by another thread (or by a drop that found
    /// the driver borrowed); timer commands met on the way are carried out (the wheel is
    /// empty by then, so they find nothing).
    pub(super) fn next_queued_cancel(&self) -> Option<NonNull<OpHeader>> {
        while let Some(cmd) = retry_steal(|| self.remote().cmds.steal()) {
            match cmd {
                RemoteCmd::CancelOp(op) => return Some(op.0),
                RemoteCmd::CancelTimer(key) | RemoteCmd::ResetTimer(key, _) => {
                    self.remove_timer(self.wheel.borrow_mut(), key);
                }
                RemoteCmd::ForeignTimer(timer) => timer.abandon(),
            }
        }
        None
    }
}
