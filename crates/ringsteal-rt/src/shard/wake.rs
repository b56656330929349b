//! Delivering wakes from whatever thread runs this code: after work was queued for a shard,
//! claim its doorbell and ring it by the best path from here (MSG_RING through this
//! thread's own shard ring, ring-less MSG_RING, or the target's eventfd); and queue a woken
//! task on its home shard.
//!
//! These are methods of [`Shared`], so a call reads `shared.notify(i)` anywhere, but they
//! live here, above `shared/` (ADR-0016): choosing the path needs the current thread's
//! shard, which `shared/` may not know. Nothing in `shared/` calls them.
//!
//! Owns: the choice of doorbell path and of queue for a woken task. May not: decide where a
//! new task goes (`runtime/spawn.rs`), or write a descriptor itself (`RemoteShard` rings
//! eventfds and ring-less MSG_RING, the shard's driver sends MSG_RING).

use std::sync::Arc;
use std::time::Duration;

use super::context;
use crate::shared::remote::Doorbell;
use crate::shared::Shared;
use crate::task::Notified;

impl Shared {
    /// Stops new work and wakes every shard so it notices.
    pub(crate) fn begin_shutdown(&self, timeout: Duration) {
        self.mark_shutdown(timeout);
        for i in 0..self.shards.len() {
            self.notify(i);
        }
    }

    /// After work was left for `target`: rings its doorbell if it sleeps.
    pub(crate) fn notify(&self, target: usize) {
        if self.shards[target].claim_doorbell() {
            self.ring_doorbell(target);
        }
    }

    /// After stealable work was queued: wakes one sleeping, driven shard (not `except`) so it
    /// can steal.
    pub(crate) fn notify_idle(&self, except: Option<usize>) {
        if let Some(t) = self.claim_idle(except) {
            self.ring_doorbell(t);
        }
    }

    /// Rings `target`'s doorbell by the best path from this thread. The caller claimed it.
    pub(crate) fn ring_doorbell(&self, target: usize) {
        let via_shard = self.wake.shard_to_shard == Doorbell::MsgRing;
        context::with_shard_of(self, |cur| match cur {
            Some(shard) if via_shard => shard.msg_ring_doorbell(target),
            _ => {
                let by_msg_ring = self.shards[target].ring_from_any_thread(self.wake.foreign);
                // A ring-less MSG_RING sent by a shard of this runtime (an SQPOLL runtime's
                // shards ring doorbells this way) counts like one sent from its ring; one
                // from any other thread is counted at its target (an eventfd doorbell is
                // counted where it is written).
                match (by_msg_ring, cur) {
                    (true, Some(shard)) => shard.counters().msg_ring_doorbells.incr(),
                    (true, None) => self.shards[target].counters.foreign_doorbells.incr(),
                    (false, _) => {}
                }
            }
        });
    }

    /// Queues a woken task on its home shard, if the current thread is one of this runtime's
    /// shards (whose own `Arc` keeps `self` alive throughout). Otherwise returns the task: the
    /// caller must queue it with [`schedule_foreign`](Self::schedule_foreign) while holding
    /// its own reference to `self`, since once the task is queued it may run, complete and
    /// drop the last reference the caller was relying on.
    #[inline]
    pub(crate) fn schedule_woken(&self, task: Notified) -> Option<Notified> {
        let home = task.home().unwrap_or(0);
        context::with_shard_of(self, |cur| match cur {
            Some(shard) if shard.index == home => {
                shard.push_local(task);
                None
            }
            Some(_) => {
                self.push_woken_remote(home, task);
                None
            }
            None => Some(task),
        })
    }

    /// Queues a woken task from a thread that is not a shard of this runtime. Takes an `Arc`
    /// so that `Shared` outlives the doorbell rung after the push.
    pub(crate) fn schedule_foreign(self: Arc<Self>, task: Notified) {
        let home = task.home().unwrap_or(0);
        self.push_woken_remote(home, task);
        self.sweep_if_shut_down(&self.shards[home].inbox);
    }

    fn push_woken_remote(&self, home: usize, task: Notified) {
        let remote = &self.shards[home];
        remote.inbox.push(task);
        remote.counters.remote_wakes.incr();
        self.notify(home);
    }
}
