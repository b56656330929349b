//! [`Shared`]: the state of one runtime that every thread may reach: the shards' shared
//! halves ([`RemoteShard`]), the global queue for spawns from outside, the configuration,
//! the wake plan, the clock and the blocking pool.
//!
//! This layer sits below both `shard/` and `runtime/` (ADR-0016): a shard reaches the others
//! through it, and the runtime builds it and hands it to the shards. It knows nothing of a
//! shard's thread-local half nor of which thread it runs on.
//!
//! Owns: the runtime-wide flags (shutdown, final sweep), the round-robin cursor, claiming an
//! idle shard's doorbell, and the per-shard state other threads touch (`remote.rs`, with the
//! sleep/wake protocol in `sleep_flag.rs`).
//! May not: import `shard/` or `runtime/`, run tasks, touch a ring, or pick a doorbell path
//! (that needs the current thread's shard: `shard/wake.rs` does it, as methods of `Shared`).

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod remote;
pub(crate) mod reservation;
mod sleep_flag;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::time::{Duration, Instant};

use crossbeam_deque::Injector;
use parking_lot::Mutex;

use crate::blocking::pool::BlockingPool;
use crate::driver::{RingMode, RingSetup};
use crate::features::KernelFeatures;
use crate::stats::SharedCounter;
use crate::task::Notified;
use crate::util::{drain_queue, CachePadded};
use config::Config;
use remote::{Doorbell, RemoteShard};

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
    /// What of io_uring this runtime may use (probed once, narrowed by the builder).
    pub(crate) features: KernelFeatures,
    pub(crate) blocking: BlockingPool,
    pub(crate) spawned_external: SharedCounter,
    /// The instant timer ticks count from.
    pub(crate) clock_origin: Instant,
    /// The runtime's clock (pausable in tests, ADR-0013).
    pub(crate) clock: clock::Clock,
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
    pub(crate) fn new(config: Config, wake: WakePlan, features: KernelFeatures) -> Self {
        let n = config.shards;
        let origin = Instant::now();
        Self {
            shards: (0..n)
                .map(|_| CachePadded(RemoteShard::new(config.reservation)))
                .collect(),
            injector: Injector::new(),
            blocking: BlockingPool::new(&config),
            wake,
            features,
            spawned_external: SharedCounter::default(),
            clock_origin: origin,
            clock: clock::Clock::new(origin),
            cpus: if config.pin_shards {
                crate::util::affinity::allowed_cpus()
            } else {
                Vec::new()
            },
            rr: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            swept: AtomicBool::new(false),
            shutdown_timeout_ns: AtomicU64::new(saturating_nanos(config.shutdown_timeout)),
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

    /// Stops new work (the caller then wakes every shard so it notices: see
    /// `shard/wake.rs`, `Shared::begin_shutdown`).
    pub(crate) fn mark_shutdown(&self, timeout: Duration) {
        self.shutdown_timeout_ns
            .store(saturating_nanos(timeout), Relaxed);
        self.shutdown.store(true, SeqCst);
    }

    /// The next shard of the round-robin cursor.
    pub(crate) fn next_round_robin(&self) -> usize {
        self.rr.fetch_add(1, Relaxed) % self.shards.len()
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
        drain_queue(queue, drop);
    }

    /// After a thread queued a command for `shard` (an op cancel, say): if the final sweep
    /// has begun, it may be past that queue already, and nobody would ever take the command:
    /// a cancel would keep its reference, and the op, with its buffer and descriptor, would
    /// never be freed. So give up what is queued there now, as the sweep does
    /// ([`RemoteShard::release_cmds`]). As in `sweep_if_shut_down`, either this sees `swept`
    /// or the sweep sees the command.
    pub(crate) fn sweep_cmds_if_shut_down(&self, shard: usize) {
        std::sync::atomic::fence(SeqCst);
        if self.swept.load(SeqCst) {
            self.shards[shard].release_cmds();
        }
    }
}

/// `d` in nanoseconds, `u64::MAX` (about 584 years: no limit) if longer.
fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
