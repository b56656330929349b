//! [`Placement`]: where a spawned task first runs, and whether idle shards may steal it.

/// Where a task runs. Once a task has been polled it stays on the shard that polled it (its
/// in-flight I/O lives on that shard's ring); placement decides that first shard. The one
/// exception is [`Stealable`](Self::Stealable): such a task may move to an idle shard while
/// it waits to run.
///
/// | Placement | First runs on | Stealable before start |
/// |---|---|---|
/// | `Pinned(s)` | shard `s` | no |
/// | `Sticky(key)` | `mix(key) % shards` | no |
/// | `RoundRobin` | the next shard of a per-runtime cursor (skipping shard 0 outside `block_on`) | no |
/// | `Stealable` | the spawning shard (any idle shard for spawns from outside) | yes |
/// | `StealablePreferred(s)` | shard `s`'s stealable queue | yes |
///
/// ```
/// use ringsteal_rt::{Placement, Runtime};
///
/// let rt = Runtime::builder().shards(2).build().unwrap();
/// let on = rt.block_on(async {
///     ringsteal_rt::spawn_with(Placement::Pinned(1), async { ringsteal_rt::current_shard() })
///         .await
///         .unwrap()
/// });
/// assert_eq!(on, Some(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Placement {
    /// Run on this shard; never stolen. Required for `!Send` tasks.
    Pinned(usize),
    /// Run on the shard this key maps to: the same key always lands on the same shard
    /// (session affinity). Never stolen.
    Sticky(u64),
    /// Run where this task is spawned (from outside the runtime: wherever a shard is free);
    /// an idle shard may steal it before it starts, and once started it may move to an idle
    /// shard while it waits to run again (the only placement whose tasks move; turned off
    /// with [`Builder::move_started_tasks`](crate::Builder::move_started_tasks)). The
    /// default of [`spawn`](crate::spawn),
    /// except for a spawn right after an accepted connection, which is dealt
    /// [`RoundRobin`](Self::RoundRobin) (see [`spread_next_spawn`](crate::spread_next_spawn)).
    /// Named explicitly in [`spawn_with`](crate::spawn_with), it is always this.
    #[default]
    Stealable,
    /// Queue on this shard first (locality), but let an idle shard steal it before it starts.
    StealablePreferred(usize),
    /// Spread: each spawn goes to the next shard in turn. Never stolen. Shard 0 is skipped
    /// while no thread is inside [`Runtime::block_on`](crate::Runtime::block_on), so a task
    /// dealt then does not wait for the next `block_on` (a `Pinned(0)` or `Sticky` task that
    /// names shard 0 does; so may one dealt at the very moment `block_on` returns).
    RoundRobin,
}
