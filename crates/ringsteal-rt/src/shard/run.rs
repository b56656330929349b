//! The shard loop: a *tick* takes in remote work, completions and expired timers, then polls
//! a bounded batch of tasks, then submits the SQEs those polls queued.
//!
//! Fairness: a tick polls at most [`BUDGET`] tasks, from the run queue in FIFO order (a task
//! woken during the tick goes to the back and may run again in the same tick), taking a task
//! that has not started yet every 4th poll; completions, timers and the inbox are taken in
//! between every two ticks; and every [`INJECTOR_INTERVAL`] ticks the first poll takes a task
//! spawned from outside. So a task that wakes itself in a loop, or a chain of local spawns,
//! cannot starve other tasks, new tasks, outside spawns, I/O completions or timers, and it
//! does not pay for that maintenance on every wake.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::main_wake::MainWake;
use super::Shard;
use crate::task::Notified;
use crate::util::{contain_panic, drain_queue, retry_steal};

/// Task polls per tick.
pub(crate) const BUDGET: usize = 61;

/// Every this many ticks, the first poll takes work placed from elsewhere (the global queue,
/// this shard's placed-stealable queue) before local work, so a shard whose own queues never
/// run dry cannot starve spawns from outside (tokio's global queue interval).
const INJECTOR_INTERVAL: u32 = 61;

/// A poll this long, in the first tick after work was handed over to this shard, ends the
/// reservation of the rest of that work (`shared/reservation.rs`): the shard is busy with
/// real work, and an idle shard should take what is still queued here. Quick polls (tasks
/// that start I/O and wait) keep it to the end of the tick.
const RESERVED_POLL_LIMIT: Duration = Duration::from_micros(20);

impl Shard {
    /// Drives `fut` to completion on this thread, running the shard meanwhile.
    pub(crate) fn block_on<F: Future>(&self, fut: F) -> F::Output {
        let wake = Arc::new(MainWake::new(self.shared.clone(), self.index));
        let waker = Waker::from(wake.clone());
        let mut cx = Context::from_waker(&waker);
        let _serving = self.polling.serve_block_on(&waker);
        let mut fut = pin!(fut);
        loop {
            if wake.take() {
                // Running the main future: not a shard to hand work over to.
                self.set_idle(false);
                let polled = fut.as_mut().poll(&mut cx);
                self.yielded_through_other_waker.set(false);
                self.end_of_poll();
                if let Poll::Ready(v) = polled {
                    return v;
                }
                self.hand_off_if_idle_shard();
            }
            if !self.tick() && !wake.is_set() {
                self.idle(Some(&wake));
            }
        }
    }

    /// Runs until the runtime shuts down (worker shards).
    pub(crate) fn run_worker(&self) {
        while !self.shared.is_shutdown() {
            #[cfg(test)]
            self.remote().panic_if_asked();
            if !self.tick() {
                self.idle(None);
            }
        }
    }

    /// One tick. Returns true if it did anything or has more to do right away.
    pub(crate) fn tick(&self) -> bool {
        self.tick.set(self.tick.get().wrapping_add(1));
        self.maintain();
        self.publish_run_queue_depth();
        self.move_started_if_idle_shard();
        let mut polled = 0;
        while polled < BUDGET {
            // Mostly the run queue (started and woken tasks, FIFO, including those woken
            // during this tick), but every 4th poll a task that has not started yet, so a
            // busy run queue cannot starve new work.
            let task = if polled == 0 && self.tick.get() % INJECTOR_INTERVAL == 0 {
                self.next_from_elsewhere()
                    .or_else(|| self.run_queue.borrow_mut().pop_front())
                    .or_else(|| self.worker.pop())
            } else if polled % 4 == 3 {
                self.next_unstarted()
                    .or_else(|| self.run_queue.borrow_mut().pop_front())
            } else {
                let local = self.run_queue.borrow_mut().pop_front();
                local.or_else(|| self.next_unstarted())
            };
            let Some(task) = task else { break };
            self.publish_run_queue_depth();
            if self.holds_reservation() {
                self.run_while_reserved(task);
            } else {
                self.run_task(task);
            }
            polled += 1;
        }
        if polled > 0 {
            self.set_idle(false);
            // What was handed over here has been started: what is still queued is stealable
            // as usual.
            self.release_reservation();
        }
        self.submit();
        // Completions that arrived during submission (a page-cache read completes inline)
        // mean more to do right away, not a trip through the idle path.
        polled > 0
            || !self.run_queue.borrow().is_empty()
            || !self.woken_after_reap.is_empty()
            || self.driver.borrow().has_completions()
    }

    /// Publishes how many tasks wait in the run queue now, for stats (`tasks_queued`): at
    /// the start of each tick and of each poll, so a shard busy in one long poll shows what
    /// waited behind it when that poll began.
    #[inline]
    fn publish_run_queue_depth(&self) {
        let queued = self.run_queue.borrow().len() as u64;
        self.counters().run_queue_depth.set(queued);
    }

    /// Runs `task` while work handed over to this shard is reserved for it
    /// (`shared/reservation.rs`): thieves leave it alone while this tick starts it, unless
    /// a poll shows the shard is busy for real ([`RESERVED_POLL_LIMIT`]).
    #[inline(never)]
    fn run_while_reserved(&self, task: Notified) {
        let started = Instant::now();
        self.run_task(task);
        if started.elapsed() >= RESERVED_POLL_LIMIT {
            self.release_reservation();
            // Busy for real: an idle shard (the one that handed the work over went to sleep
            // instead of taking it back) should take what is still queued here.
            if !self.worker.is_empty() || !self.remote().stealable.is_empty() {
                self.shared.notify_idle(Some(self.index));
            }
        }
    }

    pub(crate) fn run_task(&self, task: Notified) {
        self.counters().polls.incr();
        self.polling.start_task(task.as_ptr(), task.id());
        task.run();
        self.polling.end_task();
        if self.yielded_through_other_waker.get() {
            self.yielded_through_other_waker.set(false);
        }
        self.end_of_poll();
        self.hand_off_if_idle_shard();
    }

    /// The next stealable task that has not started: our own deque first, then work placed
    /// here from elsewhere, then the runtime's global queue.
    pub(crate) fn next_unstarted(&self) -> Option<Notified> {
        self.worker.pop().or_else(|| self.next_from_elsewhere())
    }

    /// A task placed here from elsewhere, or from the runtime's global queue (a batch moves
    /// into our deque).
    fn next_from_elsewhere(&self) -> Option<Notified> {
        [&self.remote().stealable, &self.shared.injector]
            .into_iter()
            .filter(|injector| !injector.is_empty())
            .find_map(|injector| retry_steal(|| injector.steal_batch_and_pop(&self.worker)))
    }

    /// Takes in what arrived since the last tick: woken and placed tasks, remote requests,
    /// messages, completions and expired timers.
    pub(crate) fn maintain(&self) {
        let remote = self.remote();
        // Once the runtime is being dropped, what arrives from other threads stays in the
        // inbox for the shutdown to drop: a task woken by another shard's cancels (one
        // awaiting a `JoinHandle` there) must not run on to completion meanwhile (its
        // handle would say it finished). Such wakes all come after the flag was set, so a
        // shard that takes them in sees it here. (Looked at only when something came.)
        if !remote.inbox.is_empty() && !self.shared.is_shutdown() {
            let mut rq = self.run_queue.borrow_mut();
            drain_queue(&remote.inbox, |t| rq.push_back(t));
        }
        if !remote.cmds.is_empty() {
            self.run_remote_cmds();
        }
        let mut reaped = self.reaped.borrow_mut();
        {
            let mut driver = self.driver.borrow_mut();
            if driver.worth_reaping() {
                driver.reap(&mut reaped, self.counters());
            }
        }
        if !reaped.failed_doorbells.is_empty() {
            self.ring_failed_doorbells(&mut reaped.failed_doorbells);
        }
        if !reaped.failed_messages.is_empty() {
            self.requeue_failed_messages(&mut reaped.failed_messages);
        }
        {
            let mut wheel = self.wheel.borrow_mut();
            if !wheel.is_empty() {
                let now = self.shared.clock.now();
                wheel.fire(now, &mut reaped.wakers, self.counters());
            }
        }
        // Raw messages from both paths; the inbox puts them in sequence order.
        if !reaped.messages.is_empty() || !remote.messages.is_empty() {
            let mut inbox = self.messages.borrow_mut();
            for (seq, payload) in reaped.messages.drain(..) {
                inbox.accept_truncated(seq, payload);
            }
            drain_queue(&remote.messages, |(seq, payload)| {
                inbox.accept(seq, payload);
                self.counters().messages_received.incr();
            });
        }
        let wakers = std::mem::take(&mut reaped.wakers);
        drop(reaped);
        {
            let mut inbox = self.messages.borrow_mut();
            if !inbox.queue.is_empty() && inbox.has_waiters() {
                let waiters = inbox.take_waiters();
                drop(inbox);
                for w in waiters {
                    contain_panic(|| w.wake());
                }
            }
        }
        let mut wakers = wakers;
        // In the order the completions came (popped from the back of the reversed vector:
        // cheaper than a `Drain`, and the emptied vector keeps its capacity).
        wakers.reverse();
        while let Some(w) = wakers.pop() {
            // A user waker that panics must not lose the other wakes.
            contain_panic(|| w.wake());
        }
        // Then the tasks that yielded until now: behind what the completions woke.
        if !self.woken_after_reap.is_empty() {
            self.release_woken_after_reap();
        }
        // Give the (now empty) buffer back for reuse.
        let mut reaped = self.reaped.borrow_mut();
        if reaped.wakers.capacity() < wakers.capacity() {
            std::mem::swap(&mut reaped.wakers, &mut wakers);
        }
        drop(reaped);
        self.flush_pending_doorbells();
    }

    /// Hands the SQEs queued during the tick to the kernel.
    pub(crate) fn submit(&self) {
        let mut driver = self.driver.borrow_mut();
        if driver.sq_pending() > 0 && driver.submit(self.counters()).is_err() {
            drop(driver);
            self.submit_failed();
        }
    }
}
