//! [`Shared`]: the state of one runtime that every thread may reach: the shards' shared
//! halves, the global queue for spawns from outside, configuration, the blocking pool.
//!
//! Owns: placement of new tasks and delivery of wakes (which queue, which doorbell).
//! May not: run tasks (shards do) or touch a ring (only a shard touches its own).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_deque::Injector;
use parking_lot::Mutex;

use super::builder::Config;
use super::context;
use crate::blocking::BlockingPool;
use crate::driver::user_data::TAG_DOORBELL;
use crate::driver::{signal_eventfd, RingMode, RingSetup};
use crate::shard::remote::{Doorbell, RemoteShard};
use crate::stats::SharedCounter;
use crate::task::Notified;
use crate::util::CachePadded;

/// How doorbells travel in this runtime (decided once, from the probe and the builder).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WakePlan {
    /// From one shard to another.
    pub(crate) shard_to_shard: Doorbell,
    /// From a thread that is not a shard.
    pub(crate) foreign: Doorbell,
}

impl WakePlan {
    /// Every shard keeps an eventfd armed: it is the fallback path, and the safety net when a
    /// MSG_RING send fails (the kernel can refuse one under memory pressure).
    pub(crate) fn needs_eventfd(&self) -> bool {
        true
    }
}

/// One runtime's shared state.
pub(crate) struct Shared {
    pub(crate) shards: Box<[CachePadded<RemoteShard>]>,
    /// Stealable tasks spawned from outside the runtime.
    pub(crate) injector: Injector<Notified>,
    pub(crate) config: Config,
    pub(crate) wake: WakePlan,
    pub(crate) blocking: BlockingPool,
    pub(crate) spawned_external: SharedCounter,
    /// The instant timer ticks count from.
    pub(crate) clock_origin: Instant,
    /// The runtime's clock (pausable in tests, see `time/clock.rs`).
    pub(crate) clock: crate::time::clock::Clock,
    /// The CPUs shards are pinned to with `pin_shards` (the building thread's mask).
    pub(crate) cpus: Vec<usize>,
    rr: AtomicUsize,
    shutdown: AtomicBool,
    /// Every shard thread has exited and the final sweep has begun: from here on, a thread
    /// that queues a task must drop it itself (see `sweep_if_shut_down`).
    swept: AtomicBool,
    shutdown_timeout_ns: AtomicU64,
    ring_setups: Mutex<Vec<Option<RingSetup>>>,
}

impl Shared {
    pub(crate) fn new(config: Config, wake: WakePlan) -> Self {
        let n = config.shards;
        let origin = Instant::now();
        Self {
            shards: (0..n).map(|_| CachePadded(RemoteShard::new())).collect(),
            injector: Injector::new(),
            blocking: BlockingPool::new(&config),
            wake,
            spawned_external: SharedCounter::default(),
            clock_origin: origin,
            clock: crate::time::clock::Clock::new(origin),
            cpus: if config.pin_shards {
                super::affinity::allowed_cpus()
            } else {
                Vec::new()
            },
            rr: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            swept: AtomicBool::new(false),
            shutdown_timeout_ns: AtomicU64::new(config.shutdown_timeout.as_nanos() as u64),
            ring_setups: Mutex::new(vec![None; n]),
            config,
        }
    }

    /// Marks the start of the final sweep (every shard thread has exited).
    pub(crate) fn begin_final_sweep(&self) {
        self.swept.store(true, SeqCst);
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Acquire)
    }

    pub(crate) fn shutdown_timeout(&self) -> Duration {
        Duration::from_nanos(self.shutdown_timeout_ns.load(Relaxed))
    }

    pub(crate) fn record_ring_setup(&self, shard: usize, setup: RingSetup) {
        self.ring_setups.lock()[shard] = Some(setup);
    }

    pub(crate) fn ring_modes(&self) -> Vec<Option<RingMode>> {
        let setups = self.ring_setups.lock();
        setups.iter().map(|s| s.as_ref().map(|s| s.mode)).collect()
    }

    pub(crate) fn ring_setups(&self) -> Vec<Option<RingSetup>> {
        self.ring_setups.lock().clone()
    }

    /// Stops new work and wakes every shard so it notices.
    pub(crate) fn begin_shutdown(&self, timeout: Duration) {
        self.shutdown_timeout_ns
            .store(timeout.as_nanos() as u64, Relaxed);
        self.shutdown.store(true, SeqCst);
        for i in 0..self.shards.len() {
            self.notify(i);
        }
    }

    /// The next shard of the round-robin cursor.
    pub(crate) fn next_round_robin(&self) -> usize {
        self.rr.fetch_add(1, Relaxed) % self.shards.len()
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

    /// Claims the doorbell of one sleeping, driven shard (not `except`); the caller must ring
    /// it.
    pub(crate) fn claim_idle(&self, except: Option<usize>) -> Option<usize> {
        std::sync::atomic::fence(SeqCst);
        let n = self.shards.len();
        let start = self.rr.load(Relaxed);
        (0..n).map(|i| (start + i) % n).find(|&t| {
            let r = &self.shards[t];
            Some(t) != except && r.driven.load(Relaxed) && r.sleeping.claim_after_fence()
        })
    }

    /// Rings `target`'s doorbell by the best path from this thread. The caller claimed it.
    pub(crate) fn ring_doorbell(&self, target: usize) {
        let via_shard = self.wake.shard_to_shard == Doorbell::MsgRing;
        let sent = context::with_shard_of(self, |cur| match cur {
            Some(shard) if via_shard => {
                shard.msg_ring_doorbell(target);
                true
            }
            _ => false,
        });
        if sent {
            return;
        }
        let remote = &self.shards[target];
        let foreign = self.wake.foreign;
        remote.with_open_fds(|ring_fd, eventfd| {
            if foreign == Doorbell::SendMsgRing
                && ringsteal_uring::send_msg_ring(ring_fd, 0, TAG_DOORBELL).is_ok()
            {
                // A ring-less MSG_RING: counted like one sent from a ring when a shard of this
                // runtime sent it (an SQPOLL runtime's shards ring doorbells this way).
                context::with_shard_of(self, |cur| {
                    if let Some(shard) = cur {
                        shard.counters().msg_ring_doorbells.incr();
                    }
                });
                return;
            }
            if eventfd >= 0 {
                signal_eventfd(eventfd);
                remote.counters.eventfd_doorbells.incr();
            }
        });
    }

    /// Queues a woken task on its home shard, if the current thread is one of this runtime's
    /// shards (whose own `Arc` keeps `self` alive throughout). Otherwise returns the task: the
    /// caller must queue it with [`schedule_foreign`](Self::schedule_foreign) while holding
    /// its own reference to `self`, since once the task is queued it may run, complete and
    /// drop the last reference the caller was relying on.
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

    /// After a thread that is not one of this runtime's shards pushed a task into `queue`:
    /// if the final sweep has begun, it may be past that queue already, leaving the task
    /// there for good (it and `Shared` keep each other alive, and its `JoinHandle` never
    /// resolves). So drop what is queued there now. Gated on the sweep, not on the shutdown
    /// flag: until every shard thread has exited, a shard may still be cancelling its own
    /// tasks, and only it may touch their owner links or drop a started future. Either the
    /// pusher sees `swept` here or the sweep, which stores it and then fences, sees the task.
    pub(crate) fn sweep_if_shut_down(&self, queue: &Injector<Notified>) {
        std::sync::atomic::fence(SeqCst);
        if !self.swept.load(SeqCst) {
            return;
        }
        loop {
            match queue.steal() {
                crossbeam_deque::Steal::Success(t) => drop(t),
                crossbeam_deque::Steal::Empty => break,
                crossbeam_deque::Steal::Retry => continue,
            }
        }
    }
}
