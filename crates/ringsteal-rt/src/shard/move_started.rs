//! Moving started tasks to an idle shard.
//!
//! A task spawned `Stealable` (the default) may move between polls: when a tick starts with
//! two or more tasks waiting in the run queue and another shard is idle, the older half of the
//! waiting movable tasks goes into that shard's stealable queue, as a burst of new spawns does
//! (`hand_off_if_idle_shard`). Each leaves this shard's list of started tasks here, on the
//! thread that owns the list, and joins the list of the shard that polls it next, exactly as
//! a task that has not started yet: to the rest of the runtime a moved task *is* one, but
//! for its future, which is `Send` (only `spawn`'s tasks are movable).
//!
//! What it does not move: tasks placed anywhere but `Stealable` (pinned, sticky,
//! round-robin, preferred, local) and a task being polled. The target must have been idle
//! for a while ([`MOVE_MIN_IDLE`]): a shard idle only between its own requests (tasks waiting
//! for a database's replies) would take waiting tasks at every such moment, and their next
//! wakes would cross back (ADR-0039's amendment). And it must stay idle for a while yet: a
//! shard parked until one of its own timers, due within [`MOVE_HORIZON`], is about to be
//! busy (without this, tasks woken by timers at the same instant on two shards would move
//! back and forth every time). A task's in-flight operations stay on the ring
//! they were submitted to; their completions wake it where it is, and what it submits next
//! goes to its new ring.
//!
//! Shard 0 runs only inside `block_on`. As it leaves, it moves every movable task it holds
//! to the other shards ([`move_out_leaving_block_on`](Shard::move_out_leaving_block_on)),
//! so that tasks moved to it (or started on it) keep running until the next `block_on`.

use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::{Shard, HAND_OFF_MAX};
use crate::task::Notified;

/// Waiting tasks looked at for a movable one before an idle shard is claimed: a run queue of
/// tasks that never move (a server's connections, dealt round-robin) is not scanned whole
/// on every tick.
const LOOK_AHEAD: usize = 64;

/// A parked shard whose next timer is due sooner than this is not a target.
const MOVE_HORIZON: Duration = Duration::from_micros(100);

/// A shard idle for less than this is not a target: it is between bursts of its own work.
const MOVE_MIN_IDLE: Duration = Duration::from_micros(100);

impl Shard {
    /// At the start of a tick: moves waiting started tasks to an idle shard, if there is one
    /// and two or more tasks wait here.
    #[inline]
    pub(crate) fn move_started_if_idle_shard(&self) {
        if self.movable_alive.get() > 0
            && self.shared.shards.len() > 1
            && self.run_queue.borrow().len() >= 2
        {
            self.move_started_to_idle_shard();
        }
    }

    #[inline(never)]
    fn move_started_to_idle_shard(&self) {
        let anyone_idle = self
            .shared
            .shards
            .iter()
            .enumerate()
            .any(|(i, r)| i != self.index && r.idle.load(Relaxed));
        if !anyone_idle || self.shared.is_shutdown() {
            return;
        }
        let mut rq = self.run_queue.borrow_mut();
        if !rq.iter().take(LOOK_AHEAD).any(Notified::is_movable) {
            return;
        }
        let busy_from = self
            .clock_ns()
            .saturating_add(MOVE_HORIZON.as_nanos() as u64);
        let idle_before = self
            .real_ns()
            .saturating_sub(MOVE_MIN_IDLE.as_nanos() as u64);
        let Some(target) = self.claim_idle_shard(|t| {
            let r = &self.shared.shards[t];
            r.parked_until_ns.load(Relaxed) > busy_from
                && r.idle_since_ns.load(Relaxed) <= idle_before
        }) else {
            return;
        };
        let movable = rq.iter().filter(|t| t.is_movable()).count();
        let give = movable.div_ceil(2).min(HAND_OFF_MAX);
        let moved = take_oldest(&mut rq, give, Notified::is_movable, |task| {
            // Leaves our list (the owner reference stays with the task) and its next poll,
            // wherever that is, links it into that shard's list.
            self.unlist(&task.task_ref());
            self.shared.shards[target].stealable.push(task);
        });
        drop(rq);
        self.counters().tasks_alive.set(self.owned.len() as u64);
        self.counters().tasks_moved.add(moved as u64);
        self.handed_over(target);
    }

    /// Shard 0 leaving `block_on`: every movable task it holds goes to the other shards,
    /// where it keeps running (shard 0 runs only inside `block_on`). Those waiting for a wake
    /// are woken for it (one spurious poll on their new shard, which futures allow); those
    /// queued here go as they are. A wake another thread is delivering to shard 0 at this
    /// very moment may still land in its inbox after the move: that task waits for the next
    /// `block_on`, as every task placed on shard 0 does.
    pub(crate) fn move_out_leaving_block_on(&self) {
        let n = self.shared.shards.len();
        if n < 2 || self.movable_alive.get() == 0 || self.shared.is_shutdown() {
            return;
        }
        if self.run_queue.try_borrow_mut().is_err() {
            return; // unwinding from inside a tick: leave everything for the next block_on
        }
        // Tasks that yielded (through a waker a combinator wraps) wait for the reap of a
        // tick that will not come before the next block_on: queue them, and wake the
        // wakers that wait with them, so that they move with the rest. (A task already
        // notified ignores the wake below.)
        if !self.woken_after_reap.is_empty() {
            self.release_woken_after_reap();
        }
        // Woken here, they queue here: this shard is their home and the current one.
        self.owned.for_each(|task| {
            if task.header().movable {
                crate::task::wake_by_ref(task);
            }
        });
        let mut rq = self.run_queue.borrow_mut();
        crate::util::drain_queue(&self.remote().inbox, |t| rq.push_back(t));
        // Dealt to shards 1.. in turn, from a random one.
        let mut next = self.rng.below(n - 1) + 1;
        let mut rung = Vec::new();
        let moved = take_oldest(&mut rq, usize::MAX, Notified::is_movable, |task| {
            self.unlist(&task.task_ref());
            self.shared.shards[next].stealable.push(task);
            if rung.is_empty() {
                rung.resize(n, false);
            }
            rung[next] = true;
            next = next % (n - 1) + 1;
        });
        drop(rq);
        self.counters().tasks_alive.set(self.owned.len() as u64);
        self.counters().tasks_moved.add(moved as u64);
        for (target, _) in rung.iter().enumerate().filter(|(_, r)| **r) {
            self.shared.notify(target);
        }
    }

    /// Publishes when this shard, about to park with `timeout` (or just awake: `None`), has
    /// its next timer due (`RemoteShard::parked_until_ns`).
    pub(crate) fn publish_parked_until(&self, timeout: Option<Duration>) {
        if self.shared.shards.len() < 2 {
            return;
        }
        let until = timeout.map_or(u64::MAX, |t| {
            self.clock_ns()
                .saturating_add(t.as_nanos().min(u64::MAX as u128) as u64)
        });
        self.remote().parked_until_ns.store(until, Relaxed);
    }

    /// The runtime's clock, in nanoseconds since its origin.
    /// Real time since the runtime's clock origin, in nanoseconds (a paused clock does not
    /// stop it).
    pub(crate) fn real_ns(&self) -> u64 {
        let since = std::time::Instant::now().saturating_duration_since(self.shared.clock_origin);
        since.as_nanos().min(u64::MAX as u128) as u64
    }

    fn clock_ns(&self) -> u64 {
        let since = self
            .shared
            .clock
            .now()
            .saturating_duration_since(self.shared.clock_origin);
        since.as_nanos().min(u64::MAX as u128) as u64
    }
}

/// Takes up to `max` tasks that `may_go` out of `queue`, oldest first, passing each to `to`;
/// the others keep their order. Returns how many were taken.
fn take_oldest(
    queue: &mut VecDeque<Notified>,
    max: usize,
    may_go: impl Fn(&Notified) -> bool,
    mut to: impl FnMut(Notified),
) -> usize {
    let mut passed_over = Vec::new();
    let mut taken = 0;
    while taken < max {
        let Some(task) = queue.pop_front() else { break };
        if may_go(&task) {
            to(task);
            taken += 1;
        } else {
            passed_over.push(task);
        }
    }
    for task in passed_over.into_iter().rev() {
        queue.push_front(task);
    }
    taken
}
