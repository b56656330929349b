//! Requests for a shard that may come from any thread ([`RemoteCmd`]: cancel an op, remove
//! or move a timer): doing one at once when the current thread is that shard and the state
//! it needs is free, sending it otherwise ([`run_here_or_send`]), and carrying out those that
//! arrive (`Shard::run_remote_cmds`, each tick).
//!
//! Owns: the rule "run it here if this is the owning shard, else queue a command and ring".
//! May not: decide what to cancel or when (ops and timers do); at shutdown the commands are
//! taken by `shutdown.rs`, which knows the ring is draining. May not let user code unwind
//! through the loop: a waker woken or dropped here runs inside `contain_panic` (ADR-0019).

use std::cell::RefMut;
use std::ptr::NonNull;
use std::time::Instant;

use super::context;
use super::Shard;
use crate::driver::Driver;
use crate::op::raw::OpHeader;
use crate::shared::remote::RemoteCmd;
use crate::shared::Shared;
use crate::time::wheel::{TimerKey, Wheel};
use crate::util::wake_later::collecting;
use crate::util::{contain_panic, drain_queue};

/// Runs `here` if the current thread is shard `shard` of `shared`'s runtime, and `here`
/// manages (it returns false when the state it needs is borrowed up the stack: a drop
/// running inside a driver or wheel operation). Otherwise queues `cmd()` for that shard and
/// rings it, so a parked shard acts on it now rather than at its next wake; past the
/// runtime's final sweep, nobody will, and the command is given up at once instead.
pub(crate) fn run_here_or_send(
    shared: &Shared,
    shard: usize,
    here: impl FnOnce(&Shard) -> bool,
    cmd: impl FnOnce() -> RemoteCmd,
) {
    let done = context::with_shard_of(shared, |cur| match cur {
        Some(s) if s.index == shard => here(s),
        _ => false,
    });
    if !done {
        shared.shards[shard].cmds.push(cmd());
        shared.notify(shard);
        shared.sweep_cmds_if_shut_down(shard);
    }
}

impl Shard {
    /// Queues an `ASYNC_CANCEL` of `op` on this ring, unless the driver is borrowed. The
    /// caller took the reference the cancel's CQE releases.
    pub(crate) fn try_cancel_op(&self, op: NonNull<OpHeader>) -> bool {
        match self.driver.try_borrow_mut() {
            Ok(driver) => {
                self.cancel_op(driver, op);
                true
            }
            Err(_) => false,
        }
    }

    /// Removes timer `key` from this shard's wheel, unless the wheel is borrowed.
    pub(crate) fn try_remove_timer(&self, key: TimerKey) -> bool {
        match self.wheel.try_borrow_mut() {
            Ok(wheel) => {
                self.remove_timer(wheel, key);
                true
            }
            Err(_) => false,
        }
    }

    /// Moves timer `key` to `deadline`, keeping its waker, unless the wheel is borrowed.
    pub(crate) fn try_move_timer(&self, key: TimerKey, deadline: Instant) -> bool {
        match self.wheel.try_borrow_mut() {
            Ok(wheel) => {
                self.move_timer(wheel, key, deadline);
                true
            }
            Err(_) => false,
        }
    }

    /// Carries out the commands other threads queued here.
    pub(super) fn run_remote_cmds(&self) {
        drain_queue(&self.remote().cmds, |cmd| match cmd {
            RemoteCmd::CancelOp(op) => self.cancel_op(self.driver.borrow_mut(), op.0),
            RemoteCmd::CancelTimer(key) => self.remove_timer(self.wheel.borrow_mut(), key),
            RemoteCmd::ResetTimer(key, deadline) => {
                self.move_timer(self.wheel.borrow_mut(), key, deadline)
            }
            RemoteCmd::ForeignTimer(timer) => self.insert_foreign_timer(&timer),
        });
    }

    /// Puts a timer of a `Sleep` polled off the shards into this shard's wheel (or fires it,
    /// if the wheel is past its deadline).
    fn insert_foreign_timer(&self, timer: &std::sync::Arc<crate::time::ForeignTimer>) {
        // Fired at once, its waker wakes a task elsewhere: after the wheel is released.
        timer.insert_with(|waker| {
            let mut wheel = self.wheel.borrow_mut();
            let tick = wheel.deadline_tick(timer.deadline());
            if wheel.has_passed(tick) {
                return None;
            }
            wheel.insert(tick, waker(), self.counters()).ok()
        });
    }

    fn cancel_op(&self, mut driver: RefMut<'_, Driver>, op: NonNull<OpHeader>) {
        // The cancel's reference may be the op's last (it completed since the cancel was
        // asked for): freeing it may wake wakers, which wait until the driver is released.
        let mut later = Vec::new();
        collecting(&mut later, || driver.push_cancel(op, self.counters()));
        drop(driver);
        for w in later {
            contain_panic(|| w.wake());
        }
    }

    /// Also used at shutdown, where every timer command becomes a removal.
    pub(super) fn remove_timer(&self, mut wheel: RefMut<'_, Wheel>, key: TimerKey) {
        let waker = wheel.remove(key, self.counters());
        // The waker's destructor is user code: it may reach the wheel again (so the wheel is
        // released first), and a panic in it must not unwind through the shard loop.
        drop(wheel);
        contain_panic(|| drop(waker));
    }

    fn move_timer(&self, mut wheel: RefMut<'_, Wheel>, key: TimerKey, deadline: Instant) {
        let tick = wheel.deadline_tick(deadline);
        // A stale key means the entry fired: its task re-checks the new deadline when it polls.
        if let Err(waker) = wheel.reschedule(key, tick, self.counters()) {
            drop(wheel);
            // A user waker, run from the loop when the request came from another thread.
            contain_panic(|| waker.wake());
        }
    }
}
