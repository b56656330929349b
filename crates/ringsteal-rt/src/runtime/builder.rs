//! [`Builder`]: every knob of a runtime, and the checks that turn it into one.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::Runtime;
use crate::driver::MIN_RING_ENTRIES;
use crate::error::BuildError;
use crate::features::{Feature, KernelFeatures};
use crate::shard::thread::{create_shard, run_worker_thread, Ready};
use crate::shard::Shard;
use crate::shared::config::{Config, IdleStrategy, ThreadHook, ThreadNameFn, WakeMechanism};
use crate::shared::remote::Doorbell;

use crate::shared::{Shared, WakePlan};
use crate::util::thread_builder;

/// The default of [`Builder::max_io_workers`]: tokio's blocking pool's limit.
const DEFAULT_IO_WORKERS: u32 = 512;

/// Provided buffers per shard, by default.
const DEFAULT_RECV_BUF_COUNT: u16 = 256;
/// Bytes per provided buffer, by default: a TCP segment train or a typical request fits.
const DEFAULT_RECV_BUF_LEN: u32 = 16 * 1024;
/// The largest provided buffer the builder accepts.
const MAX_RECV_BUF_LEN: u32 = 64 * 1024 * 1024;
/// The smallest `thread_stack_size` taken: a shard thread of a debug build needs about
/// 32 KiB to start (16 KiB aborted, a review measured), with room to spare here.
const MIN_THREAD_STACK: usize = 64 * 1024;

/// Configures and builds a [`Runtime`].
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::{IdleStrategy, Runtime, WakeMechanism};
///
/// let rt = Runtime::builder()
///     .shards(2)
///     .ring_entries(256)
///     .thread_name("my-shard")
///     .idle(IdleStrategy::SpinThenPark(Duration::from_micros(50)))
///     .wake(WakeMechanism::Auto)
///     .build()?;
/// assert_eq!(rt.handle().shards(), 2);
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    config: Config,
    shards_set: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// Defaults: one shard per available CPU, 256 SQ entries per ring, `Park`, `Auto`,
    /// `SINGLE_ISSUER | DEFER_TASKRUN` where the kernel has it, a blocking pool of up to 512
    /// threads kept alive 10 s, and up to 30 s at shutdown for in-flight I/O to complete.
    pub fn new() -> Self {
        Self {
            config: Config {
                shards: 1,
                ring_entries: 256,
                thread_name: "ringsteal-shard".to_string(),
                pin_shards: false,
                idle: IdleStrategy::Park,
                wake: WakeMechanism::Auto,
                defer_taskrun: true,
                coop_taskrun: true,
                blocking_threads: 512,
                io_workers: DEFAULT_IO_WORKERS,
                blocking_keep_alive: Duration::from_secs(10),
                shutdown_timeout: Duration::from_secs(30),
                cancel_any: true,
                start_paused: false,
                sqpoll: None,
                sqpoll_refused: false,
                reservation: crate::shared::reservation::RESERVATION,
                move_started: true,
                without_features: Vec::new(),
                recv_buf_count: DEFAULT_RECV_BUF_COUNT,
                recv_buf_len: DEFAULT_RECV_BUF_LEN,
                on_thread_start: None,
                on_thread_stop: None,
                on_thread_park: None,
                on_thread_unpark: None,
                thread_stack_size: None,
                thread_name_fn: None,
            },
            shards_set: false,
        }
    }

    /// Number of shards, counting the thread that calls `block_on` (shard 0): `n - 1` threads
    /// are started. Default: the available parallelism.
    pub fn shards(mut self, n: usize) -> Self {
        self.config.shards = n;
        self.shards_set = true;
        self
    }

    /// SQ entries per ring (rounded up to a power of two, and to at least 4: an operation
    /// with a timeout takes two slots, a linked copy with one three; the CQ gets four times
    /// as many, up to the kernel's limit of 65536, which caps it from 16384 SQ entries on).
    /// Outside 1..=32768, [`build`](Self::build) fails (`BuildError::Config`).
    pub fn ring_entries(mut self, n: u32) -> Self {
        self.config.ring_entries = n;
        self
    }

    /// Name prefix of shard threads (`{name}-{index}`) and blocking threads. A name with a
    /// NUL byte makes [`build`](Self::build) fail (`BuildError::Config`).
    pub fn thread_name(mut self, name: impl Into<String>) -> Self {
        self.config.thread_name = name.into();
        self
    }

    /// Pin shard `i` to CPU `i % cpus` (of the CPUs this process may use). The blocking
    /// pool's threads are not pinned: they run with the building thread's mask.
    pub fn pin_shards(mut self, pin: bool) -> Self {
        self.config.pin_shards = pin;
        self
    }

    /// What an idle shard does before blocking.
    pub fn idle(mut self, idle: IdleStrategy) -> Self {
        self.config.idle = idle;
        self
    }

    /// How shards wake each other.
    pub fn wake(mut self, wake: WakeMechanism) -> Self {
        self.config.wake = wake;
        self
    }

    /// Allow `SINGLE_ISSUER | DEFER_TASKRUN` rings (default true). `false` forces the
    /// `COOP_TASKRUN` fallback, for testing it.
    pub fn defer_taskrun(mut self, allow: bool) -> Self {
        self.config.defer_taskrun = allow;
        self
    }

    /// Allow `COOP_TASKRUN` rings (default true). With `defer_taskrun(false)` too, this forces
    /// plain rings.
    pub fn coop_taskrun(mut self, allow: bool) -> Self {
        self.config.coop_taskrun = allow;
        self
    }

    /// Most threads the blocking pool starts (default 512).
    pub fn max_blocking_threads(mut self, n: usize) -> Self {
        self.config.blocking_threads = n;
        self
    }

    /// Most kernel worker threads (`iou-wrk-*`) each shard's ring may start for requests
    /// that can wait without end, the kernel's *unbounded* io-wq class (default 512, as
    /// tokio's blocking pool): a Unix `connect` to a listener whose backlog is full, a Unix
    /// datagram `send_to` a full receiver, a splice from a pipe. The kernel retries those in
    /// a worker of its own, each blocked until it can go on, and by default starts as many
    /// as the process may have threads (`RLIMIT_NPROC`): 3,000 connects to a listener that
    /// does not accept made 2,000 threads. Past the limit, such requests wait in the kernel's
    /// queue until a worker is free. (Reads and writes of files are the *bounded* class,
    /// which the kernel already limits.) Set through `IORING_REGISTER_IOWQ_MAX_WORKERS`;
    /// must be at least 1. The kernel keeps these workers per thread: shard 0's limit is
    /// that of the thread that calls `block_on`, which keeps it after the runtime is gone,
    /// for any other ring it uses.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).max_io_workers(64).build().unwrap();
    /// rt.block_on(async { ringsteal_rt::op::nop().await.unwrap() });
    /// ```
    pub fn max_io_workers(mut self, n: u32) -> Self {
        self.config.io_workers = n;
        self
    }

    /// How long an idle blocking thread waits for work before exiting (default 10 s);
    /// `Duration::MAX` keeps idle threads for good.
    pub fn blocking_keep_alive(mut self, d: Duration) -> Self {
        self.config.blocking_keep_alive = d;
        self
    }

    /// How long dropping the runtime waits for in-flight I/O to complete after cancelling it
    /// (default 30 s; `Duration::MAX`: as long as it takes). Memory of I/O that has not
    /// completed by then is leaked, never freed.
    pub fn shutdown_timeout(mut self, d: Duration) -> Self {
        self.config.shutdown_timeout = d;
        self
    }

    /// Asks for `SQPOLL` rings: a kernel thread per shard takes submissions from the ring with
    /// no system call while it polls, and sleeps after `idle` without work (rounded up to
    /// whole milliseconds; the shard wakes it with `IORING_SQ_NEED_WAKEUP` and one system call
    /// when it submits again). It costs a CPU polling for up to `idle` after each submission:
    /// worth it for a busy shard on a machine with cores to spare.
    ///
    /// Where the kernel refuses SQPOLL (`EPERM` for unprivileged users before 5.11, a seccomp
    /// or container policy), the shard falls back to the best other mode, and
    /// [`RuntimeHandle::ring_setups`](crate::RuntimeHandle::ring_setups) says which and why.
    /// SQPOLL is not tried at all where the runtime's
    /// [`KernelFeatures`](crate::KernelFeatures) lack [`Feature::Sqpoll`] (the kernel refused it
    /// when probed).
    /// SQPOLL rings cannot use `DEFER_TASKRUN` or `COOP_TASKRUN` (the kernel refuses the
    /// combination), so completions are posted asynchronously; and a shard whose ring has
    /// SQPOLL rings other shards' doorbells with a system call (ring-less `MSG_RING` where the
    /// kernel has it, the eventfd otherwise), not an SQE its poller would send later.
    ///
    /// **Credentials.** The kernel poller submits every request with the credentials of the
    /// thread that set its ring up (the shard's, as it started), not those of the thread that
    /// queued the request at the time: a process that drops privileges (`setuid`,
    /// `setfsuid`, capabilities) after building the runtime keeps the old ones for every
    /// file and socket request of an SQPOLL shard. Drop them before building the runtime.
    /// (Rings without SQPOLL run each request with its submitter's current credentials, also
    /// on the kernel's worker threads.)
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringsteal_rt::{RingMode, Runtime};
    ///
    /// let rt = Runtime::builder().shards(2).sqpoll(Duration::from_millis(2)).build()?;
    /// let answer = rt.block_on(async { ringsteal_rt::spawn(async { 6 * 7 }).await.unwrap() });
    /// assert_eq!(answer, 42);
    /// for setup in rt.handle().ring_setups().into_iter().flatten() {
    ///     assert!(setup.mode == RingMode::SqPoll || !setup.refused.is_empty(), "{setup}");
    /// }
    /// # Ok::<(), ringsteal_rt::BuildError>(())
    /// ```
    pub fn sqpoll(mut self, idle: Duration) -> Self {
        self.config.sqpoll = Some(idle);
        self
    }

    /// Testing aid: with `true` and [`sqpoll`](Self::sqpoll), SQPOLL is asked for with its
    /// thread pinned to a CPU that does not exist, which every kernel refuses (`EINVAL`), so
    /// the fallback from a refused ring setup can be tested on a machine that allows SQPOLL.
    /// (`without_feature(Feature::Sqpoll)` tests the other fallback: SQPOLL not tried.)
    #[doc(hidden)]
    pub fn sqpoll_refused_for_testing(mut self, refuse: bool) -> Self {
        self.config.sqpoll_refused = refuse;
        self
    }

    /// Runs `f` first thing on each thread the runtime starts: shards 1 and up (once the
    /// shard is built, before it runs a task), and blocking-pool threads (not the thread
    /// that builds the runtime, shard 0), as tokio's `on_thread_start`: to set
    /// thread-locals, name a profiler's threads, count them. The runtime is current in `f`
    /// (`RuntimeHandle::current()` works), as in tokio. A panic in `f` is contained, and the
    /// thread goes on.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let counter = started.clone();
    /// let rt = ringsteal_rt::Runtime::builder()
    ///     .shards(2)
    ///     .on_thread_start(move || {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(started.load(Ordering::SeqCst), 1, "shard 1's thread");
    /// rt.block_on(async { ringsteal_rt::spawn_blocking(|| ()).await.unwrap() });
    /// assert_eq!(started.load(Ordering::SeqCst), 2, "and a blocking thread");
    /// ```
    pub fn on_thread_start(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.config.on_thread_start = Some(ThreadHook(Arc::new(f)));
        self
    }

    /// Names each thread the runtime starts (shards 1 and up, blocking threads) with what
    /// `f` returns, called once per thread as it is made, as tokio's `thread_name_fn`.
    /// Shard 0 is the caller's thread and keeps its name. A name `f` cannot give (it
    /// panics, contained, or returns one with a NUL byte) falls back to
    /// [`thread_name`](Self::thread_name)'s numbered one. For a blocking thread `f` runs
    /// while the blocking pool is locked, as tokio's does: it must not start blocking work
    /// itself.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// static NEXT: AtomicUsize = AtomicUsize::new(0);
    /// let rt = ringsteal_rt::Runtime::builder()
    ///     .shards(2)
    ///     .thread_name_fn(|| format!("pool-{}", NEXT.fetch_add(1, Ordering::SeqCst)))
    ///     .build()
    ///     .unwrap();
    /// let name = rt.block_on(async {
    ///     ringsteal_rt::spawn_blocking(|| std::thread::current().name().map(String::from))
    ///         .await
    ///         .unwrap()
    /// });
    /// assert_eq!(name.as_deref(), Some("pool-1"), "shard 1 took pool-0");
    /// ```
    pub fn thread_name_fn(mut self, f: impl Fn() -> String + Send + Sync + 'static) -> Self {
        self.config.thread_name_fn = Some(ThreadNameFn(Arc::new(f)));
        self
    }

    /// Runs `f` last thing on each thread the runtime started, as it exits (a shard at the
    /// runtime's shutdown, after its tasks were dropped; a blocking thread when it retires),
    /// as tokio's `on_thread_stop`, with the runtime still current. A panic in `f` is
    /// contained.
    pub fn on_thread_stop(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.config.on_thread_stop = Some(ThreadHook(Arc::new(f)));
        self
    }

    /// Runs `f` on a shard's thread when it has nothing to run and goes to sleep in the kernel
    /// (`io_uring_enter` waiting for a completion, a doorbell or the next timer), as tokio's
    /// `on_thread_park`: to count idle periods, flush a thread-local buffer, mark a profiler's
    /// idle time. Every shard, shard 0 included while it serves `block_on`; not the blocking
    /// pool's threads. The shard's last look for work comes after `f` (work `f` makes, or
    /// that arrives meanwhile, ends the park at once), and a shard that spins
    /// (`IdleStrategy::SpinThenPark`) and finds work does not park at all. `f` must not
    /// block; a panic in it is contained.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let parks = Arc::new(AtomicUsize::new(0));
    /// let counter = parks.clone();
    /// let rt = ringsteal_rt::Runtime::builder()
    ///     .shards(1)
    ///     .on_thread_park(move || {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// rt.block_on(ringsteal_rt::time::sleep(std::time::Duration::from_millis(5)));
    /// assert!(parks.load(Ordering::SeqCst) >= 1, "the shard slept through the timer");
    /// ```
    pub fn on_thread_park(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.config.on_thread_park = Some(ThreadHook(Arc::new(f)));
        self
    }

    /// Runs `f` on a shard's thread when the park [`on_thread_park`](Self::on_thread_park)
    /// announced ends, before it runs anything, as tokio's `on_thread_unpark`. Each park hook
    /// is followed by exactly one unpark hook on the same thread. A panic in `f` is
    /// contained.
    pub fn on_thread_unpark(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.config.on_thread_unpark = Some(ThreadHook(Arc::new(f)));
        self
    }

    /// Sets the stack size, in bytes, of every thread the runtime starts (shards 1 and up,
    /// blocking threads), as tokio's `thread_stack_size`; std's default otherwise (2 MiB,
    /// or `RUST_MIN_STACK`). Shard 0 is the thread that builds the runtime: its stack is
    /// its own. A size the system refuses fails [`build`](Self::build) with the system's
    /// error (`BuildError::Thread`) when there are shards to start; a blocking task that
    /// then finds no thread it could start is cancelled (its `JoinHandle` yields a cancelled
    /// error), as any whose thread cannot be started. A size under 64 KiB, which a shard
    /// could overflow as it starts, fails `build` with `BuildError::Config`. Never a panic.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder()
    ///     .shards(2)
    ///     .thread_stack_size(32 << 20)
    ///     .build()
    ///     .unwrap();
    /// // Deep recursion that needs more than the default 2 MiB, on a blocking thread.
    /// fn depth(n: u64) -> u64 {
    ///     let pad = std::hint::black_box([0u8; 512]);
    ///     if n == 0 { pad[0] as u64 } else { 1 + depth(n - 1) }
    /// }
    /// let deep = rt.block_on(rt.spawn_blocking(|| depth(5_000)));
    /// assert_eq!(deep.unwrap(), 5_000);
    /// ```
    pub fn thread_stack_size(mut self, bytes: usize) -> Self {
        self.config.thread_stack_size = Some(bytes);
        self
    }

    /// Whether a task spawned [`Stealable`](crate::Placement::Stealable) may move to an idle
    /// shard after it has started (default true). Set false, every task stays on the shard
    /// of its first poll, as tasks placed any other way always do.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder()
    ///     .shards(2)
    ///     .move_started_tasks(false)
    ///     .build()
    ///     .unwrap();
    /// let shard = rt.block_on(async { ringsteal_rt::spawn(async { ringsteal_rt::current_shard() }).await });
    /// assert!(shard.unwrap().is_some());
    /// ```
    pub fn move_started_tasks(mut self, yes: bool) -> Self {
        self.config.move_started = yes;
        self
    }

    /// Testing aid: how long work handed over to an idle shard is kept for it at most
    /// (250 µs; ADR-0005). A test of what the reservation does sets it long, so that how
    /// fast a loaded machine wakes the receiving shard cannot decide the outcome.
    #[doc(hidden)]
    pub fn reservation_for_testing(mut self, limit: Duration) -> Self {
        self.config.reservation = limit;
        self
    }

    /// Starts the runtime with its clock paused, as if [`time::pause`](crate::time::pause)
    /// were its first call (default false). For tests of timeouts and retries; needs a
    /// single shard, so the shard count defaults to 1 with it (on every machine), and `build`
    /// fails if [`shards`](Self::shards) set any other count.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringsteal_rt::time::{sleep, Instant};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().start_paused(true).build()?; // one shard
    /// assert_eq!(rt.handle().shards(), 1);
    /// rt.block_on(async {
    ///     let start = Instant::now();
    ///     sleep(Duration::from_secs(86_400)).await; // a day, at once
    ///     assert_eq!(start.elapsed(), Duration::from_secs(86_400));
    /// });
    /// # Ok::<(), ringsteal_rt::BuildError>(())
    /// ```
    pub fn start_paused(mut self, paused: bool) -> Self {
        self.config.start_paused = paused;
        self
    }

    /// Provided buffers for receive streams (`op::recv_multishot`, `op::recvmsg_multishot`):
    /// each shard registers `count` buffers (a power of two, at most 32768) of `len` bytes
    /// with its ring the first time a stream on it needs them. Default: 256 buffers of
    /// 16 KiB, 4 MiB of address space per shard that uses them (pages are touched as data
    /// arrives). A stream that finds its shard's ring empty goes back to it once half of the
    /// buffers are free again (not as soon as one is), and meanwhile receives what arrives
    /// into heap buffers, an allocation per receive; so size `count` for at least twice the
    /// buffers your tasks hold at once to keep receives batched. `len` bounds one receive (and a
    /// datagram: with `recvmsg_multishot`, `len` minus 144 bytes of header and address). The
    /// single-shot fallbacks receive into heap buffers of `len` bytes.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).recv_buffers(1024, 4096).build()?;
    /// # drop(rt);
    /// # Ok::<(), ringsteal_rt::BuildError>(())
    /// ```
    pub fn recv_buffers(mut self, count: u16, len: u32) -> Self {
        self.config.recv_buf_count = count;
        self.config.recv_buf_len = len;
        self
    }

    /// Testing aid, not a tuning knob: with `false`, shutdown does not use
    /// `IORING_ASYNC_CANCEL_ANY | ALL` (Linux 5.19), as on a 5.15–5.18 kernel where that cancel
    /// fails with `EINVAL`, so the fallback path (cancelling each request by its `user_data`)
    /// can be tested on any kernel. Default `true`.
    #[doc(hidden)]
    pub fn shutdown_cancel_any(mut self, allow: bool) -> Self {
        self.config.cancel_any = allow;
        self
    }

    /// Testing aid, not a tuning knob: the runtime behaves as if the kernel lacked
    /// `feature`, so that the fallback path can be tested on any kernel
    /// ([`KernelFeatures::supports`](crate::KernelFeatures::supports) says false, and every
    /// user of the feature set takes its fallback). `Feature::MsgRing` makes doorbells
    /// eventfd writes (and `WakeMechanism::MsgRing` fail to build); `Feature::SendMsgRing`
    /// makes threads without a ring write eventfds; `Feature::Sqpoll` makes
    /// [`sqpoll`](Self::sqpoll) fall back without trying. May be called several times.
    /// `Feature::Opcode(n)` of an opcode with no fallback (one no named feature stands for)
    /// makes [`build`](Self::build) fail with `BuildError::Config`: there is nothing to test.
    #[doc(hidden)]
    pub fn without_feature(mut self, feature: Feature) -> Self {
        self.config.without_features.push(feature);
        self
    }

    /// Builds the runtime: probes io_uring, creates shard 0's ring on this thread and starts
    /// the other shards, each creating its own ring.
    pub fn build(&self) -> Result<Runtime, BuildError> {
        let mut config = self.config.clone();
        if !self.shards_set {
            // A paused clock needs a single shard: that is its default, on every machine.
            config.shards = if config.start_paused {
                1
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            };
        }
        if config.shards == 0 || config.shards > 4096 {
            return Err(BuildError::Config(format!(
                "shards must be between 1 and 4096, got {}",
                config.shards
            )));
        }
        if let Some(why) = config.without_features.iter().find_map(|f| f.refusal()) {
            return Err(BuildError::Config(why));
        }
        if config.thread_name.contains('\0') {
            return Err(BuildError::Config(format!(
                "thread_name must not contain a NUL byte, got {:?}",
                config.thread_name
            )));
        }
        if config.ring_entries == 0 || config.ring_entries > 32768 {
            return Err(BuildError::Config(format!(
                "ring_entries must be between 1 and 32768, got {}",
                config.ring_entries
            )));
        }
        // One operation may take up to MAX_SQES linked slots (a linked copy with a timeout):
        // a smaller ring could never submit it.
        config.ring_entries = config.ring_entries.max(MIN_RING_ENTRIES);
        if config.recv_buf_count == 0
            || !config.recv_buf_count.is_power_of_two()
            || config.recv_buf_count > 32768
        {
            return Err(BuildError::Config(format!(
                "recv_buffers: the count must be a power of two between 1 and 32768, got {}",
                config.recv_buf_count
            )));
        }
        if config.recv_buf_len == 0 || config.recv_buf_len > MAX_RECV_BUF_LEN {
            return Err(BuildError::Config(format!(
                "recv_buffers: the length must be between 1 and {MAX_RECV_BUF_LEN} bytes, got {}",
                config.recv_buf_len
            )));
        }
        if config.io_workers == 0 {
            return Err(BuildError::Config(
                "max_io_workers must be at least 1".into(),
            ));
        }
        if config.blocking_threads == 0 {
            return Err(BuildError::Config(
                "max_blocking_threads must be at least 1".into(),
            ));
        }
        if let Some(bytes) = config.thread_stack_size.filter(|&b| b < MIN_THREAD_STACK) {
            // std raises a tiny size to the system's minimum (16 KiB) rather than refusing
            // it, and a shard thread overflows that while it starts (an abort in a debug
            // build): refused here, with the reason.
            return Err(BuildError::Config(format!(
                "thread_stack_size must be at least {MIN_THREAD_STACK} bytes, got {bytes}"
            )));
        }
        if config.start_paused && config.shards != 1 {
            return Err(BuildError::Config(format!(
                "start_paused needs a single shard (a paused clock is single-shard only), got {} shards",
                config.shards
            )));
        }
        let features =
            KernelFeatures::probe(&config.without_features).map_err(BuildError::Unavailable)?;
        let mut wake = plan_wakes(config.wake, &features)?;
        if config.tries_sqpoll(&features) {
            // An SQE on an SQPOLL ring is taken by its kernel thread later, after the sender
            // has let go of the guard that keeps the target's ring fd open (shared/remote.rs):
            // the MSG_RING could then name a closed, reused fd. Ring doorbells synchronously
            // (ADR-0018).
            wake.shard_to_shard = wake.foreign;
        }
        let shared = Arc::new(Shared::new(config, wake, features));
        if shared.config.start_paused {
            // A fresh clock, never paused: this cannot fail.
            let _ = shared.clock.pause();
        }
        let shard0 = create_shard(0, &shared)?;
        let mut threads = Vec::new();
        let (tx, rx) = mpsc::channel::<Ready>();
        for index in 1..shared.config.shards {
            let (s, tx) = (shared.clone(), tx.clone());
            let name = ThreadNameFn::name(&shared.config.thread_name_fn, || {
                format!("{}-{index}", shared.config.thread_name)
            });
            match thread_builder(name, shared.config.thread_stack_size)
                .spawn(move || run_worker_thread(index, s, tx))
            {
                Ok(t) => threads.push(t),
                Err(e) => return Err(abort_build(&shared, threads, shard0, BuildError::Thread(e))),
            }
        }
        drop(tx);
        for _ in 1..shared.config.shards {
            match rx.recv() {
                Ok(Ok(_mode)) => {}
                Ok(Err(e)) => return Err(abort_build(&shared, threads, shard0, e)),
                Err(_) => {
                    let e = BuildError::Thread(std::io::Error::other(
                        "a shard thread exited during start-up",
                    ));
                    return Err(abort_build(&shared, threads, shard0, e));
                }
            }
        }
        Ok(Runtime::from_parts(shared, shard0, threads))
    }
}

fn plan_wakes(wake: WakeMechanism, features: &KernelFeatures) -> Result<WakePlan, BuildError> {
    let msg_ring = features.supports(Feature::MsgRing);
    let foreign = if features.supports(Feature::SendMsgRing) {
        Doorbell::SendMsgRing
    } else {
        Doorbell::EventFd
    };
    Ok(match wake {
        WakeMechanism::Auto if msg_ring => WakePlan { shard_to_shard: Doorbell::MsgRing, foreign },
        WakeMechanism::Auto => WakePlan { shard_to_shard: Doorbell::EventFd, foreign: Doorbell::EventFd },
        WakeMechanism::MsgRing if msg_ring => WakePlan { shard_to_shard: Doorbell::MsgRing, foreign },
        WakeMechanism::MsgRing => {
            return Err(BuildError::Config(
                "WakeMechanism::MsgRing needs IORING_OP_MSG_RING (Linux 5.18); use WakeMechanism::Auto to fall back to eventfd".into(),
            ))
        }
        WakeMechanism::EventFd => WakePlan { shard_to_shard: Doorbell::EventFd, foreign: Doorbell::EventFd },
    })
}

fn abort_build(
    shared: &Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
    shard0: Shard,
    err: BuildError,
) -> BuildError {
    shared.begin_shutdown(Duration::from_secs(1));
    for t in threads {
        let _ = t.join();
    }
    shard0.remote().close();
    crate::shard::sched::return_credits(&shard0);
    drop(shard0);
    err
}
