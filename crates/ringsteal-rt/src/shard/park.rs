//! Going idle: steal, optionally spin, then sleep in `io_uring_enter` until a completion,
//! a doorbell or the next timer.
//!
//! The sleep follows the protocol in `shared/remote.rs`: publish `sleeping`, re-check every source
//! of work, and only then block. An idle runtime blocks every shard in the kernel and uses no
//! CPU. On a paused clock (ADR-0013) the shard auto-advances the clock to its next timer
//! instead of sleeping until it.

use std::time::{Duration, Instant};

use super::main_wake::MainWake;
use super::Shard;
use crate::shared::config::{IdleStrategy, ThreadHook};
use crate::util::monotonic_ns;

impl Shard {
    /// Called when a tick found nothing to do.
    pub(crate) fn idle(&self, main: Option<&MainWake>) {
        self.set_idle(true);
        if let Some(task) = self.steal() {
            self.run_task(task);
            return;
        }
        // A paused clock does not pass while spinning: go straight to auto-advance.
        let spin = match self.shared.config.idle {
            IdleStrategy::SpinThenPark(limit) if !self.shared.clock.is_paused() => Some(limit),
            _ => None,
        };
        if let Some(limit) = spin {
            // SQEs queued by the last tick (a doorbell, a reply) must not wait for the park.
            self.submit();
            let start = Instant::now();
            // The spin ends at the next timer too: the wheel fires in the run loop, and a
            // spinning shard is the most precise timer there is.
            let clock_now = self.shared.clock.now();
            let timer_due = self
                .wheel
                .borrow()
                .next_timeout(clock_now)
                .map(|t| start + t);
            let mut round = 0u32;
            loop {
                // Cheap signals every round; other shards' queues (their cache lines) and the
                // clock only every 16th.
                if self.has_local_work(main) {
                    return;
                }
                if round % 16 == 15 {
                    if let Some(task) = self.steal() {
                        self.run_task(task);
                        return;
                    }
                    // Spawns from outside the runtime: the run loop takes them.
                    if !self.shared.injector.is_empty() {
                        return;
                    }
                    let now = Instant::now();
                    if timer_due.is_some_and(|due| now >= due) {
                        return;
                    }
                    if now - start >= limit {
                        break;
                    }
                }
                round = round.wrapping_add(1);
                for _ in 0..8 {
                    std::hint::spin_loop();
                }
            }
        }
        self.park(main);
    }

    /// Sleeps (see [`sleep`](Self::sleep)) between the user's park and unpark hooks. The park
    /// hook runs before the last look for work, so work it makes (a spawn here) is seen.
    fn park(&self, main: Option<&MainWake>) {
        let config = &self.shared.config;
        ThreadHook::run(&config.on_thread_park);
        self.sleep(main);
        ThreadHook::run(&config.on_thread_unpark);
    }

    fn sleep(&self, main: Option<&MainWake>) {
        // Doorbells deferred by polls since the last `maintain` must not wait out our sleep.
        self.flush_pending_doorbells();
        let remote = self.remote();
        remote.prepare_sleep();
        let mut timeout = self.wheel.borrow().next_timeout(self.shared.clock.now());
        if self.has_work(main) || timeout == Some(Duration::ZERO) {
            remote.wake_up();
            return;
        }
        if self.shared.clock.is_paused() {
            match self.auto_advance(timeout) {
                Paused::Ran => {
                    remote.wake_up();
                    return;
                }
                // Until woken: by a completion, a doorbell, or the blocking pool going idle.
                Paused::Sleep => timeout = None,
            }
        }
        // Work kept for a shard that is waking up is ours to steal once its time is up.
        if let Some(reserved) = self.reserved_elsewhere() {
            timeout = Some(timeout.map_or(reserved, |t| t.min(reserved)));
        }
        let counters = self.counters();
        let started = monotonic_ns();
        self.busy_until(started);
        self.publish_parked_until(timeout);
        let lost = {
            let mut driver = self.driver.borrow_mut();
            driver.park(timeout, counters);
            driver.is_lost()
        };
        if lost {
            self.handle_lost_ring();
        }
        self.publish_parked_until(None);
        remote.wake_up();
        let woke = monotonic_ns();
        self.busy_from(woke);
        counters.parks.incr();
        counters.parked_ns.add(woke.saturating_sub(started));
    }

    /// The shortest time queued work elsewhere stays reserved for its shard (`None`: none is).
    fn reserved_elsewhere(&self) -> Option<Duration> {
        self.shared
            .shards
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != self.index)
            .filter_map(|(_, r)| r.reserved_for().filter(|_| r.has_stealable()))
            .min()
    }

    /// True if anything is waiting for this shard (checked after publishing `sleeping`).
    pub(crate) fn has_work(&self, main: Option<&MainWake>) -> bool {
        self.has_local_work(main)
            || !self.shared.injector.is_empty()
            || self.others_have_stealable()
    }

    /// True if work arrived in this shard's own queues, ring, inbox or main future.
    fn has_local_work(&self, main: Option<&MainWake>) -> bool {
        !self.run_queue.borrow().is_empty()
            || !self.woken_after_reap.is_empty()
            || !self.worker.is_empty()
            || self.remote().has_remote_work()
            || self.driver.borrow().has_completions()
            || main.is_some_and(MainWake::is_set)
            || (main.is_none() && self.shared.is_shutdown())
    }
}

/// What a shard with a paused clock does instead of sleeping until its next timer.
enum Paused {
    /// It took completions, or moved the clock to the next timer: back to the run loop.
    Ran,
    /// Nothing can move the clock now: sleep until woken.
    Sleep,
}

impl Shard {
    /// Auto-advance (called by an idle shard that has published `sleeping` and found no work,
    /// no completion included): with a timer pending in `timeout`, no blocking closure queued
    /// or running, no file request in flight, and every SQE taken by the kernel, moves the
    /// clock to the timer's deadline.
    /// Single shard only (`try_pause` ensures it), so this shard being idle means the runtime
    /// is.
    fn auto_advance(&self, timeout: Option<Duration>) -> Paused {
        let Some(timeout) = timeout else {
            return Paused::Sleep;
        };
        if self.shared.blocking.pending() > 0 {
            // Its completion rings this shard (`BlockingPool` notifies a paused runtime).
            return Paused::Sleep;
        }
        if self.release_completed_holds() {
            // A file request in flight (`Operation::holds_paused_clock`): its completion
            // wakes this shard, whose next park looks again.
            return Paused::Sleep;
        }
        if self.has_local_work(None) {
            // Freeing a completed request's cell woke something.
            return Paused::Ran;
        }
        {
            let mut driver = self.driver.borrow_mut();
            if driver.sq_pending() > 0 {
                // Requests the kernel has not taken yet (an SQPOLL thread picks them up on its
                // own time; a backlog waits for room) may complete at once when it does: give
                // them that chance before time jumps.
                let _ = driver.submit(self.counters());
                return Paused::Ran;
            }
        }
        let now = self.shared.clock.now();
        if let Some(to) = now.checked_add(timeout) {
            self.shared.clock.advance_to(to);
        }
        Paused::Ran
    }
}
