//! ringsteal: one runtime with `threads` shards. The thread that builds the
//! runtime and calls `Runtime::block_on` *is* shard 0 (ADR-0002), so the
//! criterion thread serves as shard 0 while a benchmark runs inside `block_on`
//! and `shards(threads)` is `threads` threads in all, the same count as every
//! peer. Outside `block_on` shard 0 does not run and shard 1.. park.
//!
//! The runtime is built on the criterion thread (it is `!Send`) right before a
//! group's ringsteal benchmarks and dropped right after, like every peer's.
//!
//! Variants used by the suites:
//! - [`runtime`]: `shards(threads)`, everything else at its default (`Park`,
//!   `WakeMechanism::Auto`, no CPU pinning), the way the book's examples build it;
//! - [`spinning`]: `shards(threads)` with `IdleStrategy::SpinThenPark(SPIN)`;
//! - [`pinned_parked`]: `pin_shards(true)`, `IdleStrategy::Park`;
//! - [`pinned_spinning`]: `pin_shards(true)`, `IdleStrategy::SpinThenPark(SPIN)`.
//!
//! CPU pinning: before commit 542306a, `pin_shards(true)` left the thread that
//! called `block_on` pinned to CPU 0 and pinned every shard of a later pinned
//! runtime to that CPU (threads started afterwards inherited the one-CPU mask).
//! ringsteal now restores the caller's mask itself; the pinned constructors
//! here still return a [`Pinned`] guard that puts the criterion thread's mask
//! back when the runtime is dropped, so a regression there cannot skew the
//! runtimes measured after it.
//!
//! API read from the crate docs and the book (`book/src/runtime.md`,
//! `placement.md`, `time.md`, `fs.md`, `wakes.md`) and `examples/tour.rs`.

use std::future::Future;
use std::ops::Deref;
use std::time::Duration;

use ringsteal::{Builder, IdleStrategy, Runtime};

/// Spin budget of the `pinned_spinning` variant: an idle shard polls for up
/// to this long before blocking in the kernel (and so returns to zero CPU
/// this long after the last work).
pub(crate) const SPIN: Duration = Duration::from_micros(50);

/// The builder every ringsteal benchmark starts from: `threads` shards.
pub(crate) fn builder(threads: usize) -> Builder {
    Runtime::builder().shards(threads)
}

/// Builds the runtime on the calling thread (shard 0).
pub(crate) fn build(builder: Builder) -> Runtime {
    builder
        .build()
        .unwrap_or_else(|e| panic!("ringsteal runtime: {e}"))
}

/// `shards(threads)` with default settings (parking, no pinning).
pub(crate) fn runtime(threads: usize) -> Runtime {
    build(builder(threads))
}

/// `shards(threads)` whose shards spin up to [`SPIN`] before parking (no pinning).
pub(crate) fn spinning(threads: usize) -> Runtime {
    build(builder(threads).idle(IdleStrategy::SpinThenPark(SPIN)))
}

/// `shards(threads)`, shard i pinned to CPU i, `Park`.
pub(crate) fn pinned_parked(threads: usize) -> Pinned {
    Pinned::new(builder(threads).pin_shards(true).idle(IdleStrategy::Park))
}

/// `shards(threads)`, shard i pinned to CPU i, `SpinThenPark(SPIN)`.
pub(crate) fn pinned_spinning(threads: usize) -> Pinned {
    Pinned::new(
        builder(threads)
            .pin_shards(true)
            .idle(IdleStrategy::SpinThenPark(SPIN)),
    )
}

/// A runtime with `pin_shards(true)`; dropping it drops the runtime and then
/// gives the calling thread back the CPU mask it had before (see the module
/// docs for why).
pub(crate) struct Pinned {
    rt: Option<Runtime>,
    saved: libc::cpu_set_t,
}

impl Pinned {
    fn new(builder: Builder) -> Self {
        // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
        let mut saved: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: sched_getaffinity writes into `saved`, of the size passed; pid 0 = this thread.
        let rc = unsafe {
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut saved)
        };
        assert_eq!(
            rc,
            0,
            "sched_getaffinity: {}",
            std::io::Error::last_os_error()
        );
        Self {
            rt: Some(build(builder)),
            saved,
        }
    }
}

impl Deref for Pinned {
    type Target = Runtime;
    fn deref(&self) -> &Runtime {
        self.rt.as_ref().expect("runtime lives until drop")
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        drop(self.rt.take());
        // SAFETY: `saved` is a valid cpu_set_t of the size passed; pid 0 = this thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.saved) };
    }
}

/// Joins a ringsteal task, re-raising its panic.
pub(crate) async fn join<T>(h: ringsteal::JoinHandle<T>) -> T {
    match h.await {
        Ok(v) => v,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("ringsteal task: {e}"),
    }
}

/// Tasks stolen so far, over all shards (`stats().total().tasks_stolen`).
pub(crate) fn tasks_stolen(rt: &Runtime) -> u64 {
    rt.handle().stats().total().tasks_stolen
}

/// Timers registered in all shards' wheels right now.
pub(crate) fn timers_active(rt: &Runtime) -> u64 {
    rt.handle().stats().total().timers_active
}

/// Runs `fut` as a task spawned from `block_on` with `ringsteal::spawn` (it
/// starts on shard 0, the calling thread) and returns its output.
pub(crate) fn run_spawned<F>(rt: &Runtime, fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.block_on(async move { join(ringsteal::spawn(fut)).await })
}

/// Runs `fut` as a task spawned from `block_on` with `Placement::Pinned(shard)`
/// and returns its output.
pub(crate) fn run_pinned<F>(rt: &Runtime, shard: usize, fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.block_on(async move {
        join(ringsteal::spawn_with(
            ringsteal::Placement::Pinned(shard),
            fut,
        ))
        .await
    })
}

/// How the ops completed so far were shared among the runtime's shards, e.g. `62% 38%`
/// (the networking suite prints it after each ringsteal benchmark: where the work ran);
/// `None` if no op completed (the benchmark was filtered out).
pub(crate) fn ops_per_shard(rt: &Runtime) -> Option<String> {
    let ops: Vec<u64> = rt
        .handle()
        .stats()
        .shards
        .iter()
        .map(|s| s.ops_completed)
        .collect();
    let total = ops.iter().sum::<u64>();
    if total == 0 {
        return None;
    }
    let shares: Vec<String> = ops
        .iter()
        .map(|o| format!("{}%", o * 100 / total))
        .collect();
    Some(shares.join(" "))
}
