//! A shard: one thread, the ring it alone submits to, and its run queues.
//!
//! Owns (thread-local, `!Send`): the run queue of started and pinned tasks, the deque of
//! stealable tasks not yet started, the list of tasks it has started, its driver and timer
//! wheel, its raw-message queue, and its share of the runtime's reference credits. The
//! shared half (inbox, sleeping flag, doorbell) is [`RemoteShard`], in `shared/`.
//!
//! Layering (ADR-0016): `shard/` stands on `shared/` (and the driver, tasks, the wheel) and
//! never imports `runtime/`; `runtime/` builds shards and drives shard 0.
//!
//! Files: `run.rs` (the loop and a tick), `steal.rs` (taking work from other shards),
//! `park.rs` (sleeping and doorbells), `wake.rs` (delivering wakes and doorbells from the
//! current thread), `commands.rs` (requests from other threads: cancel an op, remove or move
//! a timer), `context.rs` (which shard and runtime the current thread runs),
//! `sched.rs` (the reference a task holds to its runtime), `main_wake.rs` (the waker of
//! `block_on`'s future), `inbox.rs` (raw messages in order), `shutdown.rs` and `drain.rs`
//! (stopping without freeing what the kernel may write), `thread.rs` (creating shards and
//! running worker threads).

mod after_reap;
mod busy;
mod clock_holds;
mod commands;
pub(crate) mod context;
mod drain;
mod inbox;
mod lost_ring;
pub(crate) mod main_wake;
mod move_started;
mod park;
mod polling;
mod run;
pub(crate) mod sched;
mod shutdown;
mod steal;
pub(crate) mod thread;
mod wake;

#[cfg(test)]
mod doorbell_tests;
#[cfg(test)]
mod give_up_tests;
#[cfg(test)]
mod msg_refusal_tests;
#[cfg(test)]
mod stale_taskrun_tests;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::Arc;

use crossbeam_deque::Worker;

use crate::driver::{Driver, Reaped, SentMessage};
use crate::shared::remote::RemoteShard;
use crate::shared::Shared;
use crate::stats::ShardCounters;
use crate::task::{Notified, OwnedTasks, TaskRef};
use crate::time::wheel::Wheel;
use crate::util::FastRand;
pub(crate) use commands::run_here_or_send;
pub(crate) use inbox::Inbox;

/// Most tasks handed to an idle shard at once; the rest it steals, 32 at a time, as needed.
pub(super) const HAND_OFF_MAX: usize = 256;

/// The thread-local half of a shard.
pub(crate) struct Shard {
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
    /// `shared.shards[index]`, looked up once: the loop reaches its own counters and queues
    /// many times per tick.
    me: NonNull<RemoteShard>,
    pub(crate) run_queue: RefCell<VecDeque<Notified>>,
    pub(crate) worker: Worker<Notified>,
    pub(crate) owned: OwnedTasks,
    pub(crate) driver: RefCell<Driver>,
    pub(crate) wheel: RefCell<Wheel>,
    pub(crate) messages: RefCell<Inbox>,
    reaped: RefCell<Reaped>,
    /// Doorbells claimed while the driver was borrowed, rung at the next safe point.
    pending_doorbells: RefCell<Vec<usize>>,
    /// Tasks that yielded until the shard has taken in its completions
    /// ([`wake_after_reap`](context::wake_after_reap)): woken by the next `maintain`, after
    /// the tasks its completions woke.
    pub(crate) woken_after_reap: after_reap::WokenAfterReap,
    /// What the shard is polling now: which wakers `woken_after_reap` takes.
    pub(crate) polling: polling::Polling,
    /// The task being polled yielded for I/O through a waker it does not own (a
    /// combinator's): that waker was woken at once, and the task, requeued as its poll
    /// ends, goes after the reap (`push_local`). Cleared after each task poll.
    pub(crate) yielded_through_other_waker: Cell<bool>,
    /// References on `shared` held for tasks spawned here (see `sched.rs`).
    pub(crate) credits: Cell<usize>,
    /// Set when a stealable task was queued here since the last hand-off check.
    queued_stealable: Cell<bool>,
    /// How many of the tasks in `owned` may move (`move_started.rs`): with none, a tick does
    /// not look for an idle shard.
    movable_alive: Cell<usize>,
    /// Set by [`spread_next_spawn`](crate::spread_next_spawn) during the current poll: the
    /// next spawn with default placement goes round-robin. Cleared after every poll.
    spread_next: Cell<bool>,
    pub(crate) rng: FastRand,
    tick: Cell<u32>,
    /// File requests a paused clock waits for (`clock_holds.rs`).
    clock_holds: clock_holds::ClockHolds,
}

impl Shard {
    pub(crate) fn new(
        index: usize,
        shared: Arc<Shared>,
        driver: Driver,
        worker: Worker<Notified>,
    ) -> Self {
        let origin = shared.clock_origin;
        Self {
            index,
            me: NonNull::from(&*shared.shards[index]),
            run_queue: RefCell::new(VecDeque::with_capacity(256)),
            worker,
            owned: OwnedTasks::new(),
            driver: RefCell::new(driver),
            wheel: RefCell::new(Wheel::new(origin)),
            messages: RefCell::new(Inbox::default()),
            reaped: RefCell::new(Reaped::default()),
            pending_doorbells: RefCell::new(Vec::new()),
            woken_after_reap: after_reap::WokenAfterReap::default(),
            polling: polling::Polling::default(),
            yielded_through_other_waker: Cell::new(false),
            credits: Cell::new(0),
            queued_stealable: Cell::new(false),
            movable_alive: Cell::new(0),
            spread_next: Cell::new(false),
            rng: FastRand::new(
                0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1).wrapping_mul(0x2545_f491),
            ),
            tick: Cell::new(0),
            clock_holds: clock_holds::ClockHolds::default(),
            shared,
        }
    }

    #[inline]
    pub(crate) fn remote(&self) -> &RemoteShard {
        // SAFETY: `me` points into `shared.shards`, a boxed slice that `shared` (an `Arc` this
        // shard holds) owns and never moves or resizes.
        unsafe { self.me.as_ref() }
    }

    #[inline]
    pub(crate) fn counters(&self) -> &ShardCounters {
        &self.remote().counters
    }

    /// First poll of `task` here (its very first, or its first since it moved): it now
    /// lives on this shard.
    pub(crate) fn bind(&self, task: &TaskRef) {
        task.header().set_home(self.index);
        self.owned.push(task);
        if task.header().movable {
            self.movable_alive.set(self.movable_alive.get() + 1);
        }
        self.counters().tasks_alive.set(self.owned.len() as u64);
    }

    /// `task` completed here.
    pub(crate) fn release(&self, task: &TaskRef) {
        if self.unlist(task) {
            self.counters().tasks_alive.set(self.owned.len() as u64);
        }
    }

    /// Takes `task` out of this shard's list of started tasks (completed, or moving away);
    /// true if it was in it.
    pub(crate) fn unlist(&self, task: &TaskRef) -> bool {
        let removed = self.owned.remove(task);
        if removed && task.header().movable {
            self.movable_alive.set(self.movable_alive.get() - 1);
        }
        removed
    }

    /// Queues a stealable, not yet started task here. When the queue reaches 2, 4, 8...
    /// tasks, a sleeping shard is woken to steal: that is what lets queued work run elsewhere
    /// while this shard is stuck in a long poll. A single queued task wakes no one: it runs
    /// here as soon as the current task yields, which keeps a spawner and its child on one
    /// shard (ADR-0005).
    pub(crate) fn push_stealable(&self, task: Notified) {
        self.worker.push(task);
        self.queued_stealable.set(true);
        self.counters().spawned_local.incr();
        let len = self.worker.len();
        if len >= 2 && len.is_power_of_two() && self.shared.shards.len() > 1 {
            self.shared.notify_idle(Some(self.index));
        }
    }

    /// After a poll that left stealable work queued: hands part of it to an idle shard.
    ///
    /// Waking a shard takes tens of microseconds; by the time it could steal, this shard may
    /// have started every task (one that only submits I/O starts in well under a
    /// microsecond), and a started task moves only while it waits to run again
    /// (`move_started.rs`). So the older half of the queue (at most
    /// [`HAND_OFF_MAX`]) moves into an idle shard's stealable queue at once, and the shard is
    /// rung if it sleeps. Checked after the poll, when a burst of spawns is complete, and at
    /// most once per idle period of the receiver (its `idle` flag is claimed), so a waking
    /// shard is not handed everything. The tasks stay stealable there.
    #[inline]
    pub(crate) fn hand_off_if_idle_shard(&self) {
        // Only after a poll that queued stealable work: a cell test on every other poll.
        if self.queued_stealable.replace(false) {
            self.hand_off_to_idle_shard();
        }
    }

    /// The rest of [`hand_off_if_idle_shard`](Self::hand_off_if_idle_shard), out of line.
    #[inline(never)]
    fn hand_off_to_idle_shard(&self) {
        let queued = self.worker.len();
        if queued < 2 {
            return;
        }
        let Some(target) = self.claim_idle_shard(|_| true) else {
            return;
        };
        let remote = &self.shared.shards[target];
        let give = (queued / 2).min(HAND_OFF_MAX);
        let mut given = 0;
        while given < give {
            match self.worker.pop() {
                Some(task) => remote.stealable.push(task),
                None => break,
            }
            given += 1;
        }
        self.counters().tasks_handed_off.add(given as u64);
        self.handed_over(target);
    }

    /// An idle shard (one that ran out of work and has found none since: spinning, parked,
    /// or woken and not yet running) that `accept`s, whose idle flag this call claims, so
    /// that each idle period receives one hand-over.
    pub(crate) fn claim_idle_shard(&self, accept: impl Fn(usize) -> bool) -> Option<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        let n = self.shared.shards.len();
        if n < 2 {
            return None;
        }
        let start = self.rng.below(n);
        (0..n).map(|i| (start + i) % n).find(|&t| {
            let r = &self.shared.shards[t];
            t != self.index
                && r.driven.load(Relaxed)
                && r.idle.load(Relaxed)
                && accept(t)
                && r.idle.swap(false, Relaxed)
        })
    }

    /// Work was pushed into `target`'s stealable queue for it: reserve it and ring the shard.
    pub(crate) fn handed_over(&self, target: usize) {
        let remote = &self.shared.shards[target];
        remote.reservation.reserve();
        // Rings only if it sleeps; a spinning or waking shard finds the work by itself.
        self.shared.notify(target);
        // Shard 0 may have left `block_on` since `driven` was read: its doorbell then rings
        // where no thread watches, and its exit check may have missed these tasks. The fence
        // in `notify` pairs with the one in `LeaveBlockOn`: one side sees the other.
        if !remote.driven.load(std::sync::atomic::Ordering::SeqCst) {
            self.shared.notify_idle(Some(target));
        }
    }

    /// The task being polled has just taken a new long-lived piece of work (a connection):
    /// its next spawn with default placement is spread (see `spawn::default_placement`).
    pub(crate) fn spread_next_spawn(&self) {
        self.spread_next.set(true);
    }

    /// Takes the hint [`spread_next_spawn`](Self::spread_next_spawn) left, counting it.
    pub(crate) fn take_spread_hint(&self) -> bool {
        let spread = self.spread_next.replace(false);
        if spread {
            self.counters().spawns_spread.incr();
        }
        spread
    }

    /// A poll ended: a hint it left unused does not reach the next task.
    #[inline]
    pub(crate) fn end_of_poll(&self) {
        self.spread_next.set(false);
    }

    /// Marks this shard as out of work (a hint for [`hand_off_if_idle_shard`](Self::hand_off_if_idle_shard)).
    pub(crate) fn set_idle(&self, idle: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        let flag = &self.remote().idle;
        if flag.load(Relaxed) != idle {
            if idle && self.shared.shards.len() > 1 {
                self.remote().idle_since_ns.store(self.real_ns(), Relaxed);
            }
            flag.store(idle, Relaxed);
        }
        if idle {
            self.release_reservation();
        }
    }

    /// True if work was handed over to this shard and is reserved for it
    /// (`shared/reservation.rs`).
    #[inline]
    pub(crate) fn holds_reservation(&self) -> bool {
        self.remote().reservation.is_set()
    }

    /// Opens this shard's queues to thieves again after a hand-off.
    #[inline]
    pub(crate) fn release_reservation(&self) {
        self.remote().reservation.release();
    }

    /// Queues a task to run here (started, pinned or woken).
    #[inline]
    pub(crate) fn push_local(&self, task: Notified) {
        if self.yielded_through_other_waker.get() {
            return self.push_local_after_yield(task);
        }
        self.run_queue.borrow_mut().push_back(task);
    }

    /// [`push_local`](Self::push_local) while the task being polled has yielded for I/O
    /// through a waker some combinator wraps: that task, requeued as its poll ends, goes
    /// after the reap, as its own yield would; any other goes to the run queue.
    #[cold]
    #[inline(never)]
    fn push_local_after_yield(&self, task: Notified) {
        if self.polling.is_task(&task) {
            self.woken_after_reap.push_task(task);
        } else {
            self.run_queue.borrow_mut().push_back(task);
        }
    }

    /// Rings `target`'s doorbell through this shard's ring (MSG_RING), now if the driver is
    /// free, otherwise at the next safe point. The caller has claimed the doorbell. If the
    /// kernel does not take the MSG_RING, the target's eventfd is written instead (ADR-0006);
    /// one it refuses later comes back as an error CQE and takes the same path.
    pub(crate) fn msg_ring_doorbell(&self, target: usize) {
        match self.driver.try_borrow_mut() {
            Ok(mut driver) => {
                let remote = &self.shared.shards[target];
                remote.with_open_fds(|ring_fd, _| {
                    let c = self.counters();
                    if driver.send_doorbell(ring_fd, target, c).is_ok() {
                        c.msg_ring_doorbells.incr();
                    } else {
                        // Withdrawn, not left to go out later: the eventfd rings instead.
                        remote.ring_eventfd();
                    }
                });
            }
            Err(_) => self.pending_doorbells.borrow_mut().push(target),
        }
    }

    /// Leaving `block_on`: reaps what the ring has completed, so that doorbells and messages
    /// the last poll sent and the kernel refused (a MSG_RING usually completes at its
    /// submission) reach their targets now, not at the next `block_on`, and the wakers of
    /// the completions reaped are woken now too: a request the last poll cancelled (a
    /// dropped read) lets go of its stream's lane here, and the task on another shard
    /// waiting for that lane must not wait for the next `block_on`. (Tasks of this shard
    /// that they wake queue here, and go to the other shards with the rest as it leaves.)
    /// Raw messages reaped wait in `reaped` for the next tick. Does nothing if the driver
    /// or `reaped` is borrowed up the stack (a panic unwinding out of a tick).
    pub(crate) fn handle_refused_sends(&self) {
        let Ok(mut reaped) = self.reaped.try_borrow_mut() else {
            return;
        };
        match self.driver.try_borrow_mut() {
            Ok(mut driver) if driver.worth_reaping() => {
                driver.reap(&mut reaped, self.counters());
            }
            _ => return,
        }
        if !reaped.failed_doorbells.is_empty() {
            self.ring_failed_doorbells(&mut reaped.failed_doorbells);
        }
        if !reaped.failed_messages.is_empty() {
            self.requeue_failed_messages(&mut reaped.failed_messages);
        }
        let wakers = std::mem::take(&mut reaped.wakers);
        drop(reaped);
        for w in wakers {
            // A user waker that panics must not lose the other wakes (as in `maintain`).
            crate::util::contain_panic(|| w.wake());
        }
    }

    /// Falls back to the eventfd for doorbells whose MSG_RING the kernel refused.
    pub(crate) fn ring_failed_doorbells(&self, targets: &mut Vec<usize>) {
        for t in targets.drain(..) {
            self.shared.shards[t].ring_eventfd();
        }
    }

    /// Messages whose MSG_RING the kernel refused after submission: each goes into its
    /// target's message queue, where its sequence number puts it back in order, and the
    /// target's eventfd rings (the send had claimed its doorbell, so no one else will ring).
    pub(crate) fn requeue_failed_messages(&self, failed: &mut Vec<SentMessage>) {
        for m in failed.drain(..) {
            let remote = &self.shared.shards[m.target];
            remote.messages.push((m.seq, m.payload));
            remote.ring_eventfd();
        }
    }

    /// Sends a raw message (payload and sequence number) into `target`'s ring (MSG_RING).
    /// True if the kernel took it: it then arrives, or comes back refused and is re-queued
    /// ([`requeue_failed_messages`](Self::requeue_failed_messages)), so the caller must not
    /// also queue it. False if it was not sent at all (the driver is borrowed, or the kernel
    /// did not take it now); the caller queues it instead.
    pub(crate) fn msg_ring_message(&self, target: usize, payload: u64, seq: u64) -> bool {
        let Ok(mut driver) = self.driver.try_borrow_mut() else {
            return false;
        };
        let message = SentMessage {
            target,
            seq,
            payload,
        };
        let mut sent = false;
        self.shared.shards[target].with_open_fds(|ring_fd, _| {
            sent = driver
                .send_message(ring_fd, message, self.counters())
                .is_ok();
        });
        sent
    }

    /// Rings the doorbells deferred while the driver was borrowed. Called at the end of
    /// `maintain`, before parking and on leaving `block_on`, so none waits for this shard's
    /// next wakeup. If the driver is still borrowed (a panic unwinding past a borrow), they go
    /// through the targets' eventfds.
    #[inline]
    pub(crate) fn flush_pending_doorbells(&self) {
        if !self.pending_doorbells.borrow().is_empty() {
            self.ring_pending_doorbells();
        }
    }

    /// The rest of [`flush_pending_doorbells`](Self::flush_pending_doorbells), out of line.
    #[inline(never)]
    fn ring_pending_doorbells(&self) {
        let targets = std::mem::take(&mut *self.pending_doorbells.borrow_mut());
        let driver_free = self.driver.try_borrow_mut().is_ok();
        for t in targets {
            if driver_free {
                self.msg_ring_doorbell(t);
            } else {
                self.shared.shards[t].ring_eventfd();
            }
        }
    }
}
