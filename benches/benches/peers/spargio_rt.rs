//! spargio: one runtime with `threads` shards (worker threads, one io_uring
//! each). The criterion thread is not a shard: it hands a driver task to a
//! shard (`spawn_pinned` / `spawn_stealable`) and waits for its `JoinHandle`
//! with a plain `block_on`, as `spargio::run_with` and `#[spargio::main]` do.
//!
//! Idle behaviour: spargio shards never block in the kernel. With the default
//! `IdleStrategy` they `thread::yield_now()` in a loop (both cores stay busy
//! while the runtime lives); `IdleStrategy::Sleep(d)` sleeps a fixed `d` per
//! idle pass instead. So spargio has no "parked" mode to measure.
//!
//! API read from docs.rs/spargio 0.5.13 and its book (RuntimeBuilder::{shards,
//! stealable_queue_capacity, idle_strategy}, RuntimeHandle::{spawn_pinned,
//! spawn_stealable, spawn_stealable_on, spawn_local_on}, ShardCtx::{current,
//! remote, next_event}, RemoteShard::send_raw_nowait, sleep, timeout,
//! fs::{File::open, File::read_at_into, read}).

use std::future::Future;

use ringsteal_benches::util::block_on;
use spargio::{Runtime, RuntimeBuilder, ShardId};

/// The builder every spargio benchmark starts from: `threads` shards, all
/// other settings at their defaults.
pub(crate) fn builder(threads: usize) -> RuntimeBuilder {
    Runtime::builder().shards(threads)
}

/// `builder(threads)` with shard `i` bound to CPU `cpu_for(i)` through
/// `RuntimeBuilder::thread_affinity` (for the CPU-pinned variants).
pub(crate) fn builder_pinned_to_cpus(threads: usize) -> RuntimeBuilder {
    builder(threads).thread_affinity((0..threads).map(ringsteal_benches::cpu_for))
}

/// Builder for workloads that queue many stealable tasks at once.
///
/// CAVEAT (shared/measuring.md): spargio's stealable queue is bounded by
/// `stealable_queue_capacity`, 4096 by default, and a spawn past it fails with
/// `RuntimeError::Overloaded` instead of waiting. A driver that spawns
/// `tasks` tasks before joining any (spawn_join: 100k) must raise it to at
/// least `tasks`, which is what spargio's performance guide says the knob is
/// for. Without this the benchmark would measure an error, not spargio.
pub(crate) fn builder_for_spawns(threads: usize, tasks: usize) -> RuntimeBuilder {
    builder(threads).stealable_queue_capacity(tasks.next_power_of_two().max(4096))
}

/// Builds the runtime.
pub(crate) fn build(builder: RuntimeBuilder) -> Runtime {
    builder.build().expect("spargio runtime (io_uring)")
}

/// Runs `fut` as a task pinned to `shard` and waits for its output.
pub(crate) fn run_pinned<F>(rt: &Runtime, shard: ShardId, fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let join = rt
        .handle()
        .spawn_pinned(shard, fut)
        .expect("spargio spawn_pinned");
    block_on(join).expect("spargio driver task")
}

/// Runs `fut` spawned the default way (`spawn_stealable`, as `spargio::run`
/// does with the entry future) and waits for its output.
pub(crate) fn run_default<F>(rt: &Runtime, fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let join = rt
        .handle()
        .spawn_stealable(fut)
        .expect("spargio spawn_stealable");
    block_on(join).expect("spargio driver task")
}

/// The shard the calling task runs on.
pub(crate) fn current_shard() -> ShardId {
    spargio::ShardCtx::current()
        .expect("not on a spargio shard")
        .shard_id()
}
