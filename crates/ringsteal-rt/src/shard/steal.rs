//! Taking queued, not yet started work from other shards.
//!
//! A shard with nothing to run tries every other shard once, from a random start: first the
//! victim's own stealable deque, then the stealable queue others filled for it (neither while
//! work handed over to it waits for it to wake and start it: `shared/reservation.rs`). Each
//! steal takes a batch (about half of the victim's queue, at most 32 tasks) into our deque
//! and runs one. Started tasks are not in these queues while they sit in their shard's run
//! queue: a started task moves only when its shard hands it to an idle one
//! (`move_started.rs`), into that shard's stealable queue.

use super::Shard;
use crate::task::Notified;
use crate::util::retry_steal;

impl Shard {
    /// Steals a batch from some other shard; returns one task of it to run now.
    pub(crate) fn steal(&self) -> Option<Notified> {
        let n = self.shared.shards.len();
        if n < 2 {
            return None;
        }
        // Look before taking: an attempt touches the victims' queues with atomic operations;
        // a look only reads them.
        if !self.others_have_stealable() {
            return None;
        }
        let counters = self.counters();
        counters.steal_attempts.incr();
        let start = self.rng.below(n);
        for i in 0..n {
            let victim = (start + i) % n;
            if victim == self.index {
                continue;
            }
            let remote = &self.shared.shards[victim];
            if !remote.open_to_thieves() {
                continue;
            }
            if let Some(stealer) = remote.stealer.get() {
                if let Some(t) = retry_steal(|| stealer.steal_batch_and_pop(&self.worker)) {
                    return Some(self.stole(t));
                }
            }
            if let Some(t) = retry_steal(|| remote.stealable.steal_batch_and_pop(&self.worker)) {
                return Some(self.stole(t));
            }
        }
        None
    }

    fn stole(&self, task: Notified) -> Notified {
        let counters = self.counters();
        counters.steal_successes.incr();
        counters.tasks_stolen.add(1 + self.worker.len() as u64);
        task
    }

    /// True if another shard has queued work we could steal.
    pub(crate) fn others_have_stealable(&self) -> bool {
        self.shared
            .shards
            .iter()
            .enumerate()
            .any(|(i, r)| i != self.index && r.has_stealable() && r.open_to_thieves())
    }
}
