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
//! round-robin, preferred, local), a task being polled, tasks queued until the next reap
//! (`woken_after_reap`). Its in-flight operations stay on the ring they were submitted to;
//! their completions wake it where it is, and what it submits next goes to its new ring.

use std::collections::VecDeque;

use super::{Shard, HAND_OFF_MAX};
use crate::task::Notified;

/// Waiting tasks looked at for a movable one before an idle shard is claimed: a run queue of
/// tasks that never move (a server's connections, dealt round-robin) is not scanned whole
/// on every tick.
const LOOK_AHEAD: usize = 64;

impl Shard {
    /// At the start of a tick: moves waiting started tasks to an idle shard, if there is one
    /// and two or more tasks wait here.
    #[inline]
    pub(crate) fn move_started_if_idle_shard(&self) {
        if self.shared.shards.len() > 1 && self.run_queue.borrow().len() >= 2 {
            self.move_started_to_idle_shard();
        }
    }

    #[inline(never)]
    fn move_started_to_idle_shard(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let anyone_idle = self
            .shared
            .shards
            .iter()
            .enumerate()
            .any(|(i, r)| i != self.index && r.idle.load(Relaxed));
        if !anyone_idle {
            return;
        }
        let mut rq = self.run_queue.borrow_mut();
        if !rq.iter().take(LOOK_AHEAD).any(Notified::is_movable) {
            return;
        }
        let Some(target) = self.claim_idle_shard() else {
            return;
        };
        let give = (rq.len() / 2).min(HAND_OFF_MAX);
        let moved = take_movable(&mut rq, give, |task| {
            // Leaves our list (the owner reference stays with the task) and its next poll,
            // wherever that is, links it into that shard's list.
            self.owned.remove(&task.task_ref());
            self.shared.shards[target].stealable.push(task);
        });
        drop(rq);
        self.counters().tasks_alive.set(self.owned.len() as u64);
        self.counters().tasks_moved.add(moved as u64);
        self.handed_over(target);
    }
}

/// Takes up to `max` movable tasks out of `queue`, oldest first, passing each to `to`; the
/// others keep their order. Returns how many were taken.
fn take_movable(queue: &mut VecDeque<Notified>, max: usize, mut to: impl FnMut(Notified)) -> usize {
    let mut taken = 0;
    for _ in 0..queue.len() {
        let Some(task) = queue.pop_front() else { break };
        if taken < max && task.is_movable() {
            to(task);
            taken += 1;
        } else {
            queue.push_back(task);
        }
    }
    taken
}
