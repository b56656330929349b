//! Runtime statistics: per-shard counters and a [`RuntimeStats`] snapshot.
//!
//! Owns: the counters. Counters written only by their own shard use a relaxed load and store
//! (no locked instruction on the hot path); counters other threads bump use `fetch_add`.
//! Readers get a relaxed snapshot: each value is exact, the set is not one instant.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use crate::busy_clock::BusyClock;
use crate::util::{monotonic_ns, CachePadded};

/// A counter bumped only by the thread that owns it (readers may be anywhere).
#[derive(Debug, Default)]
pub(crate) struct LocalCounter(AtomicU64);

impl LocalCounter {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }
    #[inline]
    pub(crate) fn incr(&self) {
        self.add(1);
    }
    #[inline]
    pub(crate) fn set(&self, v: u64) {
        self.0.store(v, Relaxed);
    }
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A gauge any thread may set, shared with what it measures (which may outlive the runtime:
/// a provided-buffer group held by its buffers).
#[derive(Debug, Default)]
pub(crate) struct SharedGauge(pub(crate) Arc<AtomicU64>);

impl SharedGauge {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A counter any thread may bump.
#[derive(Debug, Default)]
pub(crate) struct SharedCounter(AtomicU64);

impl SharedCounter {
    #[inline]
    pub(crate) fn incr(&self) {
        self.0.fetch_add(1, Relaxed);
    }
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// The live counters of one shard. Counters other threads bump come first, then a full
/// cache line of padding, then the shard's own: a remote `fetch_add` must not contend with
/// the shard bumping its counters on every poll or spin.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct ShardCounters {
    pub(crate) spawned_remote: SharedCounter,
    pub(crate) eventfd_doorbells: SharedCounter,
    pub(crate) foreign_doorbells: SharedCounter,
    pub(crate) remote_wakes: SharedCounter,
    pub(crate) ops_cancelled: SharedCounter,
    pub(crate) enobufs_stalls: SharedCounter,
    pub(crate) enobufs_heap_receives: SharedCounter,
    pub(crate) bufs_in_use: SharedGauge,
    _separate_lines: CachePadded<()>,
    pub(crate) polls: LocalCounter,
    /// The run queue's length at the start of the shard's last tick or poll (beside `polls`:
    /// both are written on every poll).
    pub(crate) run_queue_depth: LocalCounter,
    pub(crate) spawned_local: LocalCounter,
    pub(crate) steal_attempts: LocalCounter,
    pub(crate) steal_successes: LocalCounter,
    pub(crate) tasks_stolen: LocalCounter,
    pub(crate) tasks_handed_off: LocalCounter,
    pub(crate) tasks_moved: LocalCounter,
    pub(crate) msg_ring_doorbells: LocalCounter,
    pub(crate) eventfd_wakes: LocalCounter,
    pub(crate) enters: LocalCounter,
    pub(crate) sqes_submitted: LocalCounter,
    pub(crate) cq_overflows: LocalCounter,
    pub(crate) parks: LocalCounter,
    pub(crate) parked_ns: LocalCounter,
    /// How long the shard has been busy (`busy_clock.rs`; the shard's hooks: `shard/busy.rs`).
    pub(crate) busy: BusyClock,
    pub(crate) ops_in_flight: LocalCounter,
    pub(crate) ops_completed: LocalCounter,
    pub(crate) timers_active: LocalCounter,
    pub(crate) timers_fired: LocalCounter,
    pub(crate) messages_received: LocalCounter,
    pub(crate) tasks_alive: LocalCounter,
    pub(crate) stream_rearms: LocalCounter,
    pub(crate) spawns_spread: LocalCounter,
    /// 1 once the kernel refused the shard's provided-buffer group.
    pub(crate) recv_buffers_refused: LocalCounter,
}

/// A snapshot of one shard's counters.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async { ringsteal_rt::spawn(async {}).await.unwrap() });
/// let stats = rt.handle().stats();
/// assert_eq!(stats.shards.len(), 2);
/// assert!(stats.total().polls >= 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardStats {
    /// Task polls.
    pub polls: u64,
    /// Tasks spawned onto this shard by code running on it.
    pub spawned_local: u64,
    /// Tasks spawned onto this shard from another thread.
    pub spawned_remote: u64,
    /// Attempts to steal queued work from other shards.
    pub steal_attempts: u64,
    /// Attempts that found work.
    pub steal_successes: u64,
    /// Tasks taken by those steals.
    pub tasks_stolen: u64,
    /// Queued, unstarted tasks this shard handed to a sleeping shard as it woke it.
    pub tasks_handed_off: u64,
    /// Started tasks waiting to run here that this shard moved to an idle shard (only tasks
    /// spawned `Stealable` move; [`Builder::move_started_tasks`](crate::Builder::move_started_tasks)).
    pub tasks_moved: u64,
    /// `IORING_OP_MSG_RING` doorbells this shard sent to sleeping shards (ring-less ones,
    /// `IORING_REGISTER_SEND_MSG_RING`, when its runtime uses SQPOLL).
    pub msg_ring_doorbells: u64,
    /// Ring-less `IORING_OP_MSG_RING` doorbells rung at this shard by threads that are not
    /// shards of its runtime (a spawn through a `RuntimeHandle` from a plain thread).
    pub foreign_doorbells: u64,
    /// eventfd doorbells written to this shard (fallback path and non-shard threads).
    pub eventfd_doorbells: u64,
    /// Times this shard's armed eventfd read completed (it was woken through its eventfd).
    pub eventfd_wakes: u64,
    /// Wakes of this shard's tasks that came from other threads.
    pub remote_wakes: u64,
    /// `io_uring_enter` calls.
    pub enters: u64,
    /// SQEs the kernel consumed from this shard's SQ. On an SQPOLL ring the poller thread
    /// consumes them on its own time; they are counted at the shard's next submission or
    /// park.
    pub sqes_submitted: u64,
    /// Times the kernel reported CQ overflow (completions held back, then flushed).
    pub cq_overflows: u64,
    /// Times the shard parked (blocked in `io_uring_enter` waiting for a completion).
    pub parks: u64,
    /// Time spent parked.
    pub parked: Duration,
    /// Time the shard was driven (a worker from its start, shard 0 inside `block_on`) and
    /// not parked in the kernel: running tasks, taking in completions, and spinning before
    /// a park (tokio's busy duration), up to the moment the snapshot was taken.
    pub busy: Duration,
    /// Requests (SQEs) submitted and not yet completed (gauge): an operation counts once per
    /// request, so one with a link timeout counts two, and a dropped one's cancel one more
    /// until it completes.
    pub ops_in_flight: u64,
    /// Operations cancelled with `IORING_OP_ASYNC_CANCEL`: dropped before completion, or
    /// an accept stream paused at its bound ([`ACCEPT_AHEAD`](crate::op::ACCEPT_AHEAD)).
    pub ops_cancelled: u64,
    /// Operations whose final completion arrived.
    pub ops_completed: u64,
    /// Timers registered in this shard's wheel (gauge).
    pub timers_active: u64,
    /// Timers that fired.
    pub timers_fired: u64,
    /// Raw cross-shard messages received.
    pub messages_received: u64,
    /// Tasks started on this shard and not yet finished (gauge).
    pub tasks_alive: u64,
    /// Tasks waiting for this shard to poll them (gauge; tokio's local and per-worker queue
    /// depths in one): its stealable tasks not yet started, tasks placed or woken here from
    /// other threads, and its run queue as it was when the shard's current (or last) poll
    /// began (a shard busy in one long poll shows what waited behind it then, not what was
    /// woken since). A queue that stays long on one shard while others are idle is work its
    /// placement keeps there (`Pinned`, `Sticky`, or started tasks that do not move).
    pub tasks_queued: u64,
    /// Requests that streams of completions (multishot accept and receive) submitted on this
    /// shard after their first: the kernel ended a multishot request (buffers ran out, the
    /// CQ was full, an error) and the stream went on, or, on the single-shot fallbacks, each
    /// request after the first.
    pub stream_rearms: u64,
    /// Tasks spawned here with default placement that were dealt round-robin to the shards
    /// instead of queued here, because the spawning task had just accepted a connection
    /// ([`spread_next_spawn`](crate::spread_next_spawn)).
    pub spawns_spread: u64,
    /// Times a multishot receive armed on this shard ended because the shard's provided
    /// buffers had all been taken (`ENOBUFS`): its stream re-arms once half of them are free,
    /// and receives into heap buffers if data comes first (`enobufs_heap_receives`).
    pub enobufs_stalls: u64,
    /// Receives into a heap buffer by streams of this shard that were short of provided
    /// buffers when data arrived (one per such receive; see `enobufs_stalls`).
    pub enobufs_heap_receives: u64,
    /// Provided buffers of this shard that the application holds (gauge): taken by receive
    /// streams and not yet dropped.
    pub bufs_in_use: u64,
    /// The kernel refused to register this shard's provided buffers when a receive stream
    /// first asked for them (`ENOMEM` for the mapping or the ring, `RLIMIT_MEMLOCK` on
    /// kernels that count it, or a `Builder::recv_buffers` size the host cannot back). Its
    /// receive streams then receive into heap buffers, one request per receive, and it does
    /// not try again. In [`RuntimeStats::total`], true if any shard's was refused.
    pub recv_buffers_refused: bool,
    /// The shard has run out of work and found none since (gauge: spinning, parked, or woken
    /// and not yet running anything), or nobody drives it (shard 0 outside `block_on`).
    pub idle: bool,
}

impl ShardCounters {
    pub(crate) fn snapshot(&self) -> ShardStats {
        ShardStats {
            polls: self.polls.get(),
            spawned_local: self.spawned_local.get(),
            spawned_remote: self.spawned_remote.get(),
            steal_attempts: self.steal_attempts.get(),
            steal_successes: self.steal_successes.get(),
            tasks_stolen: self.tasks_stolen.get(),
            tasks_handed_off: self.tasks_handed_off.get(),
            tasks_moved: self.tasks_moved.get(),
            msg_ring_doorbells: self.msg_ring_doorbells.get(),
            eventfd_doorbells: self.eventfd_doorbells.get(),
            foreign_doorbells: self.foreign_doorbells.get(),
            eventfd_wakes: self.eventfd_wakes.get(),
            remote_wakes: self.remote_wakes.get(),
            enters: self.enters.get(),
            sqes_submitted: self.sqes_submitted.get(),
            cq_overflows: self.cq_overflows.get(),
            parks: self.parks.get(),
            parked: Duration::from_nanos(self.parked_ns.get()),
            busy: Duration::from_nanos(self.busy.read(monotonic_ns())),
            ops_in_flight: self.ops_in_flight.get(),
            ops_cancelled: self.ops_cancelled.get(),
            ops_completed: self.ops_completed.get(),
            timers_active: self.timers_active.get(),
            timers_fired: self.timers_fired.get(),
            messages_received: self.messages_received.get(),
            tasks_alive: self.tasks_alive.get(),
            // The queues other threads see are added by `RuntimeHandle::stats`.
            tasks_queued: self.run_queue_depth.get(),
            stream_rearms: self.stream_rearms.get(),
            spawns_spread: self.spawns_spread.get(),
            enobufs_stalls: self.enobufs_stalls.get(),
            enobufs_heap_receives: self.enobufs_heap_receives.get(),
            bufs_in_use: self.bufs_in_use.get(),
            recv_buffers_refused: self.recv_buffers_refused.get() != 0,
            idle: false,
        }
    }
}

/// Counters of every shard, plus runtime-wide ones: a snapshot from
/// [`RuntimeHandle::stats`](crate::RuntimeHandle::stats), for a metrics endpoint or a log
/// line (the book's tuning chapter says how to read it).
///
/// ```
/// use ringsteal_rt::Runtime;
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// rt.block_on(async {
///     let tasks: Vec<_> = (0..8).map(|i| ringsteal_rt::spawn(async move { i })).collect();
///     for t in tasks {
///         t.await.unwrap();
///     }
/// });
/// let stats = rt.handle().stats();
/// assert_eq!(stats.shards.len(), 2);
/// let total = stats.total();
/// assert!(total.polls >= 8, "every task was polled");
/// println!("stolen {} of {} spawned", total.tasks_stolen, total.spawned_local + stats.spawned_external);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeStats {
    /// One entry per shard, by index.
    pub shards: Vec<ShardStats>,
    /// Stealable tasks spawned from outside the runtime (through the global injector).
    pub spawned_external: u64,
    /// Of those, the ones no shard has taken yet (gauge, tokio's global queue depth).
    pub queued_external: u64,
    /// Closures run on the blocking pool.
    pub blocking_spawned: u64,
    /// Blocking-pool threads alive now.
    pub blocking_threads: u64,
}

impl RuntimeStats {
    /// The sum over all shards (gauges are summed too; `idle` if every shard is idle).
    pub fn total(&self) -> ShardStats {
        let mut t = ShardStats {
            idle: !self.shards.is_empty(),
            ..ShardStats::default()
        };
        for s in &self.shards {
            t.polls += s.polls;
            t.spawned_local += s.spawned_local;
            t.spawned_remote += s.spawned_remote;
            t.steal_attempts += s.steal_attempts;
            t.steal_successes += s.steal_successes;
            t.tasks_stolen += s.tasks_stolen;
            t.tasks_handed_off += s.tasks_handed_off;
            t.tasks_moved += s.tasks_moved;
            t.msg_ring_doorbells += s.msg_ring_doorbells;
            t.eventfd_doorbells += s.eventfd_doorbells;
            t.foreign_doorbells += s.foreign_doorbells;
            t.eventfd_wakes += s.eventfd_wakes;
            t.remote_wakes += s.remote_wakes;
            t.enters += s.enters;
            t.sqes_submitted += s.sqes_submitted;
            t.cq_overflows += s.cq_overflows;
            t.parks += s.parks;
            t.parked += s.parked;
            t.busy += s.busy;
            t.ops_in_flight += s.ops_in_flight;
            t.ops_cancelled += s.ops_cancelled;
            t.ops_completed += s.ops_completed;
            t.timers_active += s.timers_active;
            t.timers_fired += s.timers_fired;
            t.messages_received += s.messages_received;
            t.tasks_alive += s.tasks_alive;
            t.tasks_queued += s.tasks_queued;
            t.stream_rearms += s.stream_rearms;
            t.spawns_spread += s.spawns_spread;
            t.enobufs_stalls += s.enobufs_stalls;
            t.enobufs_heap_receives += s.enobufs_heap_receives;
            t.bufs_in_use += s.bufs_in_use;
            t.recv_buffers_refused |= s.recv_buffers_refused;
            t.idle &= s.idle;
        }
        t
    }
}
