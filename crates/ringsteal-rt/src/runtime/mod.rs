//! [`Runtime`] (owns the shards, runs `block_on`, shuts down) and its public parts: the
//! builder, the handle and spawning.
//!
//! The top of the core (ADR-0016): it builds `shared/` state and `shard/`s and may import
//! both; neither imports it.

mod borrowing_task;
mod builder;
mod handle;
pub(crate) mod spawn;
mod tokio_names;

pub use crate::shared::config::{IdleStrategy, WakeMechanism};
pub use builder::Builder;
pub use handle::{EnterGuard, RuntimeHandle};

use std::future::Future;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::RingMode;
use crate::features::KernelFeatures;
use crate::shard::context::{self, ShardGuard};
use crate::shard::{sched, Shard};
use crate::shared::Shared;
use crate::util::{affinity, drain_queue};

/// A ringsteal runtime: `n` shards, each a thread with its own io_uring.
///
/// The thread that builds the runtime is shard 0: it runs the runtime while it is inside
/// [`block_on`](Self::block_on), so the future given there (which need not be `Send`) does its
/// I/O straight on shard 0's ring. Shards 1..n are threads the runtime starts.
///
/// `Runtime` is not `Send`: shard 0's ring belongs to this thread (the kernel's
/// `SINGLE_ISSUER` rule), so `block_on` and the drop happen here. Use
/// [`handle`](Self::handle) to spawn from anywhere.
///
/// Between `block_on` calls shard 0 does not run. As `block_on` returns, the `Stealable`
/// tasks it holds, started or not, move to the other shards and go on running there
/// (unless [`Builder::move_started_tasks`](crate::Builder::move_started_tasks) is off);
/// tasks placed there by name (`Pinned(0)`, a `Sticky` key that maps to it), dealt to it,
/// or local to it wait (like tokio's current-thread runtime), and `RoundRobin` deals to
/// the other shards only.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build()?;
/// let answer = rt.block_on(async {
///     let handle = ringsteal_rt::spawn(async { 6 * 7 });
///     handle.await.unwrap()
/// });
/// assert_eq!(answer, 42);
/// # Ok::<(), ringsteal_rt::BuildError>(())
/// ```
pub struct Runtime {
    shared: Arc<Shared>,
    shard0: Option<Shard>,
    threads: Vec<std::thread::JoinHandle<()>>,
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("shards", &self.shared.shards.len())
            .finish()
    }
}

impl Runtime {
    /// A builder with default settings.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// A runtime with default settings (one shard per CPU).
    pub fn new() -> Result<Self, crate::BuildError> {
        Builder::new().build()
    }

    pub(crate) fn from_parts(
        shared: Arc<Shared>,
        shard0: Shard,
        threads: Vec<std::thread::JoinHandle<()>>,
    ) -> Self {
        Self {
            shared,
            shard0: Some(shard0),
            threads,
            _not_send: PhantomData,
        }
    }

    /// A handle for spawning onto this runtime from any thread.
    pub fn handle(&self) -> RuntimeHandle {
        RuntimeHandle::from_shared(self.shared.clone())
    }

    /// Spawns a task with default placement, as tokio's `Runtime::spawn`: the same as
    /// `rt.handle().spawn(future)` ([`RuntimeHandle::spawn`]). With one shard, the task runs
    /// in the next [`block_on`](Self::block_on) (shard 0 runs only inside it); with more,
    /// the other shards take it at once.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
    /// let task = rt.spawn(async { 6 * 7 });
    /// assert_eq!(rt.block_on(task).unwrap(), 42);
    /// ```
    pub fn spawn<F>(&self, future: F) -> crate::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle().spawn(future)
    }

    /// Runs `f` on the blocking pool, as tokio's `Runtime::spawn_blocking`
    /// ([`RuntimeHandle::spawn_blocking`]).
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// let answer = rt.spawn_blocking(|| std::fs::metadata("/").is_ok());
    /// assert!(rt.block_on(answer).unwrap());
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> crate::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle().spawn_blocking(f)
    }

    /// Makes this runtime the current one for this thread until the guard is dropped, as
    /// tokio's `Runtime::enter` ([`RuntimeHandle::enter`]).
    pub fn enter(&self) -> EnterGuard {
        self.handle().enter()
    }

    /// Shuts down without waiting for blocking tasks or for requests in flight, as tokio's
    /// `shutdown_background`: [`shutdown_timeout`](Self::shutdown_timeout) with a zero
    /// timeout. Buffers the kernel may still write into are kept (leaked) rather than freed.
    /// Unlike tokio's, it still waits for each shard's thread to see the shutdown, so a task
    /// that never yields holds it up (see [`shutdown_timeout`](Self::shutdown_timeout)).
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel::<()>();
    /// // A blocking task that waits until after the shutdown.
    /// drop(rt.spawn_blocking(move || rx.recv()));
    /// rt.shutdown_background(); // returns without waiting for it
    /// drop(tx);
    /// ```
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// What of io_uring this runtime uses: the kernel's capabilities, probed when it was
    /// built, less what the builder took away.
    pub fn features(&self) -> &KernelFeatures {
        &self.shared.features
    }

    /// The mode each shard's ring ended up with (probe-dependent); see
    /// [`RuntimeHandle::ring_modes`].
    pub fn ring_modes(&self) -> Vec<Option<RingMode>> {
        self.shared.ring_modes()
    }

    /// Each shard's ring mode and why better ones were refused; see
    /// [`RuntimeHandle::ring_setups`].
    pub fn ring_setups(&self) -> Vec<Option<crate::RingSetup>> {
        self.shared.ring_setups()
    }

    /// Runs `future` to completion on this thread, which serves as shard 0 meanwhile.
    ///
    /// # Panics
    /// If called from inside a task (a shard cannot block on itself).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.block_on_leaving(future, Leaving::ForNow)
    }

    /// [`block_on`](Self::block_on), then drops the runtime: what `#[ringsteal::main]` and
    /// `#[ringsteal::test]` run. Shard 0 does not hand the tasks it holds to the other shards
    /// as it leaves (`shard/move_started.rs`), since the shutdown right after would only
    /// cancel them there, after one more poll each.
    #[doc(hidden)]
    pub fn block_on_then_drop<F: Future>(self, future: F) -> F::Output {
        let out = self.block_on_leaving(future, Leaving::ForGood);
        drop(self);
        out
    }

    fn block_on_leaving<F: Future>(&self, future: F, leaving: Leaving) -> F::Output {
        assert!(
            !context::on_shard(),
            "Runtime::block_on called from inside a ringsteal task: a shard cannot block on itself; \
             .await the future instead, or use spawn_blocking"
        );
        let shard = self.shard0.as_ref().expect("shard 0 exists until drop");
        let _pinned = self
            .shared
            .config
            .pin_shards
            .then(|| affinity::PinGuard::pin(&self.shared.cpus, 0));
        let _guard = ShardGuard::enter(shard);
        let remote = shard.remote();
        remote.driven.store(true, SeqCst);
        shard.busy_from(crate::util::monotonic_ns());
        remote.wake_up();
        // Hands the shard back on the way out, also when the future panics (dropped before
        // `_guard`, so this thread is still shard 0 meanwhile).
        let _leave = LeaveBlockOn {
            shared: &self.shared,
            shard,
            leaving,
        };
        shard.block_on(future)
    }

    /// The runtime's shared state, for unit tests that reach into it.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Shuts down, waiting at most `timeout` for in-flight I/O and blocking tasks.
    ///
    /// The timeout does not bound a task that never yields (a loop with no `.await`): its
    /// shard's thread never sees the shutdown, and this waits for it. (tokio's returns and
    /// leaves that thread running; a shard's ring and the buffers its kernel requests hold
    /// cannot be freed while its thread runs.)
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.shutdown(timeout);
    }

    fn shutdown(&mut self, timeout: Duration) {
        let Some(shard0) = self.shard0.take() else {
            return;
        };
        let deadline = crate::util::deadline_after(timeout);
        self.shared.begin_shutdown(timeout);
        {
            let _guard = ShardGuard::enter(&shard0);
            shard0.shutdown(deadline);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // No shard runs any more: drop what is still queued (cancelling its join handles)
        // before waiting for the blocking pool, whose closures may be waiting on those
        // handles (`RuntimeHandle::block_on` of a task that never started). From here a push
        // drops what it pushes.
        final_sweep(&self.shared);
        self.shared.blocking.shutdown(Some(deadline));
        sched::return_credits(&shard0);
        drop(shard0);
    }
}

/// Whether the runtime outlives the `block_on` that is returning.
#[derive(Clone, Copy, PartialEq)]
enum Leaving {
    /// It does: another `block_on` may follow.
    ForNow,
    /// It is dropped right after (`Runtime::block_on_then_drop`).
    ForGood,
}

/// Leaves `block_on`: submits what the last tick queued, marks shard 0 undriven and asleep,
/// and (unless the runtime is dropped right after) hands its movable tasks to the other
/// shards and wakes an idle shard for the stealable work still queued here.
struct LeaveBlockOn<'a> {
    shared: &'a Shared,
    shard: &'a Shard,
    leaving: Leaving,
}

impl Drop for LeaveBlockOn<'_> {
    fn drop(&mut self) {
        let (shard, remote) = (self.shard, self.shard.remote());
        // Deferred doorbells would otherwise wait for the next `block_on`.
        shard.flush_pending_doorbells();
        // `try_borrow_mut`: after a panic the driver may still be borrowed up the stack.
        if let Ok(mut driver) = shard.driver.try_borrow_mut() {
            if driver.sq_pending() > 0 {
                let _ = driver.submit(shard.counters());
            }
        }
        shard.handle_refused_sends();
        shard.busy_until(crate::util::monotonic_ns());
        remote.driven.store(false, SeqCst);
        // Outside block_on the shard counts as asleep: wakes ring its doorbell and wait there.
        remote.sleeping.mark_asleep();
        // Pairs with the fence a hand-off to this shard issues before it re-reads `driven`.
        std::sync::atomic::fence(SeqCst);
        if self.leaving == Leaving::ForGood {
            return; // the shutdown cancels what is queued, wherever it is
        }
        // Tasks that may move go on running elsewhere (`shard/move_started.rs`).
        shard.move_out_leaving_block_on();
        // Queued stealable work (spawned here, or placed here by `StealablePreferred(0)`)
        // would otherwise wait for the next block_on. So would a spawn from a thread outside
        // the runtime: it rang one sleeping shard, and that may have been this one, which is
        // leaving without having looked at the injector (its main future was ready first).
        if !shard.worker.is_empty()
            || !remote.stealable.is_empty()
            || !self.shared.injector.is_empty()
        {
            self.shared.notify_idle(Some(0));
        }
    }
}

/// Drops whatever other threads left in shard queues after the shards exited.
fn final_sweep(shared: &Shared) {
    // Pairs with the fence in `Shared::sweep_if_shut_down`: a push this sweep misses is
    // followed by a check that sees `swept` and drops it.
    shared.begin_final_sweep();
    std::sync::atomic::fence(SeqCst);
    for remote in shared.shards.iter() {
        for q in [&remote.inbox, &remote.stealable] {
            drain_queue(q, drop);
        }
        remote.release_cmds();
        drain_queue(&remote.messages, drop);
    }
    drain_queue(&shared.injector, drop);
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let timeout = self.shared.config.shutdown_timeout;
        self.shutdown(timeout);
    }
}
