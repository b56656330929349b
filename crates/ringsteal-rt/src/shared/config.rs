//! [`Config`]: the settings a runtime was built with, read by every layer below the builder
//! (shards, the blocking pool, ring setup), and the public enums among them.
//!
//! Owns: the values. May not: check or apply them (`runtime/builder.rs` checks them; each
//! layer applies its own).

use std::time::Duration;

use crate::driver::{RingOptions, SqPoll};
use crate::features::{Feature, KernelFeatures};

/// What an idle shard does before it blocks in the kernel, set with
/// [`Builder::idle`](crate::Builder::idle).
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::{IdleStrategy, Runtime};
///
/// // Latency first: spin up to 50 µs for new work before parking.
/// let rt = Runtime::builder()
///     .shards(1)
///     .idle(IdleStrategy::SpinThenPark(Duration::from_micros(50)))
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 1 + 1 }), 2);
/// assert_eq!(IdleStrategy::default(), IdleStrategy::Park);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdleStrategy {
    /// Block right away (no CPU while idle; a wake costs a thread wake-up, 20–50 µs on a VM).
    #[default]
    Park,
    /// Poll for new work for up to this long, then block. Buys sub-microsecond wake latency
    /// while work keeps coming, and still returns to zero CPU once idle.
    SpinThenPark(Duration),
}

/// How shards wake each other, set with [`Builder::wake`](crate::Builder::wake).
///
/// ```
/// use ringsteal_rt::{Placement, Runtime, WakeMechanism};
///
/// // The eventfd fallback, as on a kernel older than 5.18: everything still works.
/// let rt = Runtime::builder().shards(2).wake(WakeMechanism::EventFd).build().unwrap();
/// let on = rt.block_on(async {
///     ringsteal_rt::spawn_with(Placement::Pinned(1), async { ringsteal_rt::current_shard() }).await
/// });
/// assert_eq!(on.unwrap(), Some(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WakeMechanism {
    /// `IORING_OP_MSG_RING` between shards where the kernel has it (5.18), ring-less
    /// `IORING_REGISTER_SEND_MSG_RING` from other threads where it has that (6.13), and the
    /// eventfd otherwise.
    #[default]
    Auto,
    /// Require `IORING_OP_MSG_RING` between shards; building fails on kernels without it.
    MsgRing,
    /// Force the fallback: every doorbell is a write to the target shard's eventfd, which the
    /// shard keeps a read armed on.
    EventFd,
}

/// Settings a runtime was built with.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) shards: usize,
    pub(crate) ring_entries: u32,
    pub(crate) thread_name: String,
    pub(crate) pin_shards: bool,
    pub(crate) idle: IdleStrategy,
    pub(crate) wake: WakeMechanism,
    pub(crate) defer_taskrun: bool,
    pub(crate) coop_taskrun: bool,
    pub(crate) blocking_threads: usize,
    /// Most io-wq workers each shard's ring starts for requests that may wait without end
    /// (the kernel's unbounded class): `Builder::max_io_workers`.
    pub(crate) io_workers: u32,
    pub(crate) blocking_keep_alive: Duration,
    pub(crate) shutdown_timeout: Duration,
    /// Shutdown may use `IORING_ASYNC_CANCEL_ANY` (5.19); off emulates older kernels.
    pub(crate) cancel_any: bool,
    /// Capabilities the runtime must behave as if the kernel lacked (testing fallbacks).
    pub(crate) without_features: Vec<Feature>,
    /// The clock starts paused (tests; single shard only).
    pub(crate) start_paused: bool,
    /// `Some(idle)`: ask for SQPOLL rings whose kernel thread sleeps after `idle`.
    pub(crate) sqpoll: Option<Duration>,
    /// Testing aid: SQPOLL is asked for in a way the kernel refuses.
    pub(crate) sqpoll_refused: bool,
    /// Longest time work handed over to an idle shard is kept for it
    /// (`shared/reservation.rs`; only tests change it).
    pub(crate) reservation: Duration,
    /// A `Stealable` task may move to an idle shard between polls (`shard/move_started.rs`).
    pub(crate) move_started: bool,
    /// Provided buffers per shard (a power of two) for receive streams.
    pub(crate) recv_buf_count: u16,
    /// Bytes per provided buffer (and per heap buffer of the receive fallback).
    pub(crate) recv_buf_len: u32,
    /// Run on each thread the runtime starts (shards 1.., blocking threads), first thing.
    pub(crate) on_thread_start: Option<ThreadHook>,
    /// Run on each thread the runtime starts, last thing before it exits.
    pub(crate) on_thread_stop: Option<ThreadHook>,
    /// Run on a shard's thread just before it sleeps in the kernel, and just after it wakes.
    pub(crate) on_thread_park: Option<ThreadHook>,
    pub(crate) on_thread_unpark: Option<ThreadHook>,
    /// Stack size of each thread the runtime starts; `None`: std's default (2 MiB, or
    /// `RUST_MIN_STACK`).
    pub(crate) thread_stack_size: Option<usize>,
    /// Names each thread the runtime starts (`Builder::thread_name_fn`); `None`: the
    /// numbered names from `thread_name`.
    pub(crate) thread_name_fn: Option<ThreadNameFn>,
}

/// The user's function naming the runtime's threads (`Builder::thread_name_fn`).
#[derive(Clone)]
pub(crate) struct ThreadNameFn(pub(crate) std::sync::Arc<dyn Fn() -> String + Send + Sync>);

impl ThreadNameFn {
    /// The name for the next thread: what `name_fn` returns, or `default()` without one,
    /// when it panics (contained), or when its name holds a NUL byte (which no thread name
    /// may: std's spawn would panic).
    pub(crate) fn name(name_fn: &Option<ThreadNameFn>, default: impl FnOnce() -> String) -> String {
        let Some(ThreadNameFn(f)) = name_fn else {
            return default();
        };
        let mut named = None;
        crate::util::contain_panic(|| named = Some(f()));
        match named {
            Some(name) if !name.contains('\0') => name,
            _ => default(),
        }
    }
}

impl std::fmt::Debug for ThreadNameFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadNameFn")
    }
}

/// A user closure run on the runtime's own threads (`Builder::on_thread_start`/`_stop`,
/// `on_thread_park`/`_unpark`).
#[derive(Clone)]
pub(crate) struct ThreadHook(pub(crate) std::sync::Arc<dyn Fn() + Send + Sync>);

impl ThreadHook {
    /// Runs `hook`, if set; a panic in it is contained (the thread goes on, as a shard must).
    pub(crate) fn run(hook: &Option<ThreadHook>) {
        if let Some(ThreadHook(f)) = hook {
            crate::util::contain_panic(|| f());
        }
    }
}

impl std::fmt::Debug for ThreadHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadHook")
    }
}

impl Config {
    /// True if shards try SQPOLL rings: asked for, and in the runtime's feature set. The one
    /// answer both ring setup and the wake plan (synchronous doorbells) go by (ADR-0018).
    pub(crate) fn tries_sqpoll(&self, features: &KernelFeatures) -> bool {
        self.sqpoll.is_some() && features.supports(Feature::Sqpoll)
    }

    pub(crate) fn ring_options(&self, features: &KernelFeatures) -> RingOptions {
        let sqpoll = match self.sqpoll {
            None => SqPoll::Off,
            Some(_) if !self.tries_sqpoll(features) => SqPoll::Unavailable,
            Some(idle) => SqPoll::Try {
                idle_ms: sqpoll_idle_ms(idle),
                refused_for_testing: self.sqpoll_refused,
            },
        };
        RingOptions {
            entries: self.ring_entries,
            allow_defer_taskrun: self.defer_taskrun,
            allow_coop_taskrun: self.coop_taskrun,
            sqpoll,
        }
    }
}

/// SQPOLL's idle time in whole milliseconds, rounded up (zero would mean the kernel's default
/// of one second).
fn sqpoll_idle_ms(idle: Duration) -> u32 {
    let ms = idle.as_nanos().div_ceil(1_000_000).max(1);
    u32::try_from(ms).unwrap_or(u32::MAX)
}
