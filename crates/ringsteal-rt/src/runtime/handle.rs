//! [`RuntimeHandle`]: spawn onto a runtime from any thread.

use std::future::Future;
use std::sync::Arc;

use super::spawn;
use crate::driver::{RingMode, RingSetup};
use crate::error::SpawnError;
use crate::features::KernelFeatures;
use crate::msg;
use crate::placement::Placement;
use crate::shard::context::{self, EnterGuard as ContextGuard};
use crate::shared::Shared;
use crate::stats::RuntimeStats;
use crate::task::JoinHandle;

/// A cheap, cloneable, `Send + Sync` handle to a runtime.
///
/// ```
/// use ringsteal_rt::{Placement, Runtime};
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// let handle = rt.handle();
/// // Spawn from a plain thread: the task runs on shard 1.
/// let join = std::thread::spawn(move || handle.spawn_with(Placement::Pinned(1), async { 7 }))
///     .join()
///     .unwrap();
/// assert_eq!(rt.block_on(join).unwrap(), 7);
/// ```
#[derive(Clone)]
pub struct RuntimeHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RuntimeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeHandle")
            .field("shards", &self.shared.shards.len())
            .finish()
    }
}

impl RuntimeHandle {
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// The runtime of the current thread (a shard, a blocking-pool thread, or a thread inside
    /// [`enter`](Self::enter)).
    ///
    /// # Panics
    /// If there is none; see [`try_current`](Self::try_current).
    pub fn current() -> Self {
        Self::try_current().expect(
            "RuntimeHandle::current() called outside a ringsteal runtime: call it from a task, \
             a spawn_blocking closure, or inside RuntimeHandle::enter",
        )
    }

    /// The runtime of the current thread, if any. `None` too in a thread-local's destructor
    /// that runs after the thread's record of entered runtimes is gone, as the thread exits
    /// (where tokio's says `is_thread_local_destroyed`): never a panic, which there would
    /// abort the process.
    pub fn try_current() -> Option<Self> {
        context::current_shared().map(Self::from_shared)
    }

    /// Makes this runtime the current one on this thread until the guard drops, so that
    /// [`current`](Self::current) and the free `spawn` and `spawn_blocking` functions work
    /// here. Guards nest (the innermost runtime entered is current); one dropped out of order
    /// takes only its own runtime off the thread. The guard stays on its thread (it is not
    /// `Send`). In a thread-local's destructor as the thread exits, once the thread's record
    /// of entered runtimes is gone, the guard enters nothing (spawns then fail as off a
    /// runtime) rather than panic.
    ///
    /// Inside a task of another runtime too (as tokio's `Handle::enter`): spawns go to this
    /// runtime while the guard lives, but the task's own I/O and timers stay on the ring of
    /// the shard that runs it. A runtime entered before a `block_on` is not current inside
    /// it (the `block_on`'s runtime is) unless entered again there.
    ///
    /// The runtime is entered for the *thread*, not the task: while the guard lives, every
    /// task its shard polls sees this runtime as current, and their spawns go there too. So
    /// inside a task, enter, spawn, and drop the guard before the next `.await`:
    ///
    /// ```
    /// use ringsteal_rt::{Runtime, RuntimeHandle};
    ///
    /// let rt = Runtime::builder().shards(1).build().unwrap();
    /// let other = Runtime::builder().shards(2).build().unwrap();
    /// let handle = other.handle();
    /// rt.block_on(async move {
    ///     let spawned = {
    ///         let _guard = handle.enter();
    ///         ringsteal_rt::spawn(async { RuntimeHandle::current().shards() })
    ///     }; // the guard is gone before the await
    ///     assert_eq!(spawned.await.unwrap(), 2);
    /// });
    /// ```
    pub fn enter(&self) -> EnterGuard {
        EnterGuard {
            _inner: ContextGuard::new(self.shared.clone()),
        }
    }

    /// Runs `future` on this runtime and blocks the calling thread until it is done, as
    /// tokio's `Handle::block_on`: for synchronous code that needs an async result (a
    /// `spawn_blocking` closure, a plain thread, a callback from a C library).
    ///
    /// Unlike tokio's, the future runs as a task on the runtime's shards (spawned with
    /// default placement), not on the calling thread, since io_uring requests are made from
    /// a shard: so it must be `Send`. It may borrow from the caller (this call returns only
    /// once the task is over, its future dropped: ADR-0042), and so may its output. A panic
    /// in it is resumed here. As for any spawn, a runtime of one shard runs the task only
    /// while its own thread is inside [`Runtime::block_on`](crate::Runtime::block_on) (shard
    /// 0 runs only then): call this from a `spawn_blocking` closure, or give the runtime a
    /// second shard.
    ///
    /// ```
    /// use ringsteal_rt::{Runtime, RuntimeHandle};
    ///
    /// let rt = Runtime::builder().shards(2).build().unwrap();
    /// let n = rt.block_on(async {
    ///     ringsteal_rt::spawn_blocking(|| {
    ///         // Synchronous code on a blocking-pool thread, needing an async result.
    ///         let words = vec!["io", "uring"];
    ///         RuntimeHandle::current().block_on(async {
    ///             ringsteal_rt::op::nop().await.unwrap();
    ///             // Borrows `words`, which outlives the call.
    ///             words.iter().map(|w| w.len()).sum::<usize>()
    ///         })
    ///     })
    ///     .await
    ///     .unwrap()
    /// });
    /// assert_eq!(n, 7);
    /// ```
    ///
    /// # Panics
    /// On a shard's thread (inside a task or a `Runtime::block_on`): blocking it could keep
    /// the future itself from running; `.await` it there instead. Also if the runtime shuts
    /// down before the future is done (it never ran, or was dropped unfinished): the
    /// runtime's drop cancels a task that never started before it waits for the blocking
    /// pool, so such a call ends then.
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        assert!(
            !context::on_shard(),
            "RuntimeHandle::block_on called on a ringsteal shard (inside a task or \
             Runtime::block_on): blocking this thread could keep the future from running; \
             .await it instead"
        );
        match super::borrowing_task::run_and_wait(self, future) {
            Ok(out) => out,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("RuntimeHandle::block_on: the runtime shut down first ({e})"),
        }
    }

    /// What of io_uring this runtime uses (see [`KernelFeatures`]): ask it before choosing
    /// between an opcode and its fallback.
    ///
    /// ```
    /// use ringsteal_rt::{Feature, RuntimeHandle};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let native = RuntimeHandle::current().features().supports(Feature::Ftruncate);
    ///     println!("set_len through the ring: {native}");
    /// });
    /// ```
    pub fn features(&self) -> &KernelFeatures {
        &self.shared.features
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shared.shards.len()
    }

    /// Spawns a task with default placement (see [`crate::spawn`]: stealable, or dealt
    /// round-robin right after an accepted connection).
    ///
    /// # Panics
    /// Never for a stealable task, except when the runtime is shutting down: then the task is
    /// not run and its `JoinHandle` yields a cancelled error (no panic).
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(self.default_placement(), future)
    }

    /// The placement [`spawn`](Self::spawn) uses (see [`crate::spawn`]).
    pub(crate) fn default_placement(&self) -> Placement {
        spawn::default_placement(&self.shared)
    }

    /// Spawns with an explicit placement.
    ///
    /// # Panics
    /// If the placement names a shard the runtime does not have (the message names the shard
    /// count); [`try_spawn_with`](Self::try_spawn_with) returns that as an error instead.
    pub fn spawn_with<F>(&self, placement: Placement, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match spawn::spawn_with(&self.shared, placement, future) {
            Ok(join) => join,
            Err(SpawnError::ShuttingDown) => cancelled_handle(),
            Err(e) => panic!("{e}"),
        }
    }

    /// Spawns with an explicit placement, reporting a bad shard or a shutdown as an error.
    pub fn try_spawn_with<F>(
        &self,
        placement: Placement,
        future: F,
    ) -> Result<JoinHandle<F::Output>, SpawnError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn::spawn_with(&self.shared, placement, future)
    }

    /// Spawns a `!Send` future on shard `shard`: `make` (which is `Send`) runs there and
    /// creates the future, which then never leaves that shard.
    ///
    /// # Panics
    /// If `shard` is out of range.
    pub fn spawn_local_on<C, F>(&self, shard: usize, make: C) -> JoinHandle<F::Output>
    where
        C: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        match spawn::spawn_local_on(&self.shared, shard, make) {
            Ok(join) => join,
            Err(SpawnError::ShuttingDown) => cancelled_handle(),
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs `f` on the blocking pool.
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        crate::blocking::spawn_blocking(&self.shared, f)
    }

    /// Sends a 64-bit message to `shard`, to be read with [`recv_msg`](crate::recv_msg) there:
    /// inside a completion posted into its ring (`IORING_OP_MSG_RING`) if it sleeps, which
    /// wakes it; through its message queue, with no system call, if it is awake. Messages
    /// from one sender arrive in the order sent.
    pub fn send_msg(&self, shard: usize, payload: u64) -> Result<(), SpawnError> {
        msg::send(&self.shared, shard, payload)
    }

    /// The mode each shard's ring ended up with, by shard (`None` only for a shard whose
    /// ring is not created yet, which a built runtime does not have).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringsteal_rt::{RingMode, Runtime};
    ///
    /// let rt = Runtime::builder().shards(2).sqpoll(Duration::from_millis(5)).build()?;
    /// for mode in rt.handle().ring_modes() {
    ///     // SQPOLL where the kernel allowed it; the best other mode where it did not.
    ///     println!("{:?}", mode.expect("built"));
    /// }
    /// # Ok::<(), ringsteal_rt::BuildError>(())
    /// ```
    pub fn ring_modes(&self) -> Vec<Option<RingMode>> {
        self.shared.ring_modes()
    }

    /// Each shard's ring mode and, for every better mode the kernel refused, its answer: why
    /// a shard runs without SQPOLL, or without `DEFER_TASKRUN` (see [`RingSetup`]).
    pub fn ring_setups(&self) -> Vec<Option<RingSetup>> {
        self.shared.ring_setups()
    }

    /// A snapshot of the runtime's counters.
    pub fn stats(&self) -> RuntimeStats {
        RuntimeStats {
            shards: self
                .shared
                .shards
                .iter()
                .map(|s| {
                    let mut stats = s.counters.snapshot();
                    // A shard nobody drives (shard 0 outside `block_on`) runs nothing: idle,
                    // whatever its flag said when it was last driven.
                    stats.idle = s.idle.load(std::sync::atomic::Ordering::Relaxed)
                        || !s.driven.load(std::sync::atomic::Ordering::Relaxed);
                    stats.tasks_queued += s.queued_outside_run_queue() as u64;
                    stats
                })
                .collect(),
            spawned_external: self.shared.spawned_external.get(),
            queued_external: self.shared.injector.len() as u64,
            blocking_spawned: self.shared.blocking.spawned(),
            blocking_threads: self.shared.blocking.threads() as u64,
        }
    }
}

/// A handle to a task that was never run because the runtime is shutting down.
fn cancelled_handle<T: Send + 'static>() -> JoinHandle<T> {
    crate::task::cancelled_join_handle()
}

/// Returned by [`RuntimeHandle::enter`]: while it lives, this thread's current runtime is
/// the handle's, so [`RuntimeHandle::current`] and the free spawn functions work on a thread
/// the runtime does not own. Dropping it restores what was current before.
///
/// ```
/// use ringsteal_rt::{Runtime, RuntimeHandle};
///
/// let rt = Runtime::builder().shards(1).build().unwrap();
/// let handle = rt.handle();
/// let answer = std::thread::spawn(move || {
///     let _guard = handle.enter();
///     let task = ringsteal_rt::spawn(async { 40 + 2 });
///     assert!(RuntimeHandle::try_current().is_some());
///     task
/// })
/// .join()
/// .unwrap();
/// assert_eq!(rt.block_on(answer).unwrap(), 42);
/// ```
pub struct EnterGuard {
    _inner: ContextGuard,
}

impl std::fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnterGuard")
    }
}
