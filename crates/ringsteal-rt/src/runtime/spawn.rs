//! Spawning: turning a future and a [`Placement`] into a queued task.
//!
//! Owns: the placement rules of design.md. A task spawned from a shard onto that same shard
//! goes into a thread-local queue with no atomics beyond the task's own; anything else goes
//! through the target's inbox (or stealable queue, or the global injector) and a doorbell if
//! the target sleeps.

use std::future::Future;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use crate::error::SpawnError;
use crate::placement::Placement;
use crate::shard::context;
use crate::shard::sched::SchedHandle;
use crate::shard::Shard;
use crate::shared::Shared;
use crate::task::{new_task, new_task_with, JoinHandle, Notified, HOME_UNSET};
use crate::util::mix64;

/// Where a placement sends a task, once resolved against the shard count.
enum Target {
    /// A shard's run queue (not stealable).
    Fixed(usize),
    /// The stealable queue of the spawning shard (or the global injector from outside).
    Stealable,
    /// A shard's stealable queue.
    Preferred(usize),
}

fn resolve(shared: &Shared, placement: Placement) -> Result<Target, SpawnError> {
    let n = shared.shards.len();
    let check = |s: usize| {
        if s < n {
            Ok(s)
        } else {
            Err(SpawnError::NoSuchShard {
                shard: s,
                shards: n,
            })
        }
    };
    Ok(match placement {
        Placement::Pinned(s) => Target::Fixed(check(s)?),
        // A key names its shard, driven or not: a task sticky to shard 0 outside `block_on`
        // waits for the next one, as a pinned one does.
        Placement::Sticky(key) => Target::Fixed((mix64(key) % n as u64) as usize),
        // Round robin names no shard: it deals to the shards a thread drives, so a task is
        // not left on shard 0 outside `block_on` until the next one.
        Placement::RoundRobin => Target::Fixed(next_driven_in_turn(shared)),
        Placement::Stealable => Target::Stealable,
        Placement::StealablePreferred(s) => Target::Preferred(check(s)?),
    })
}

/// The next shard of the round-robin cursor that a thread drives, skipping shard 0 outside
/// `block_on` (the cursor's own shard if none is driven, which cannot last: workers are
/// driven from their start until shutdown).
fn next_driven_in_turn(shared: &Shared) -> usize {
    let first = shared.next_round_robin();
    if shared.shards[first].driven.load(SeqCst) {
        return first;
    }
    for _ in 1..shared.shards.len() {
        let s = shared.next_round_robin();
        if shared.shards[s].driven.load(SeqCst) {
            return s;
        }
    }
    first
}

/// The placement of a spawn that names none ([`spawn`](crate::spawn)): `Stealable`, unless
/// the spawning task has just accepted a connection ([`spread_next_spawn`](crate::spread_next_spawn)
/// during this poll, on a runtime of two shards or more): then `RoundRobin`, so that the
/// connection's task, which never moves once started (only `Stealable` tasks do), is dealt
/// to the shards in turn (ADR-0009).
pub(crate) fn default_placement(shared: &Shared) -> Placement {
    context::with_shard_of(shared, |cur| match cur {
        Some(shard) if shared.shards.len() > 1 && shard.take_spread_hint() => Placement::RoundRobin,
        _ => Placement::Stealable,
    })
}

/// Spawns a `Send` future with `placement`.
pub(crate) fn spawn_with<F>(
    shared: &Arc<Shared>,
    placement: Placement,
    future: F,
) -> Result<JoinHandle<F::Output>, SpawnError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let target = resolve(shared, placement)?;
    if shared.is_shutdown() {
        return Err(SpawnError::ShuttingDown);
    }
    context::with_shard_of(Arc::as_ptr(shared), |cur| {
        let home = match target {
            Target::Fixed(s) => s as u32,
            Target::Stealable | Target::Preferred(_) => HOME_UNSET,
        };
        // A task spawned `Stealable` may move between shards once started too; one placed
        // anywhere else stays where it starts (`shard/move_started.rs`).
        let movable = matches!(target, Target::Stealable) && shared.config.move_started;
        let (task, join) = new_task_with(future, SchedHandle::new(shared, cur), home, movable);
        match (target, cur) {
            (Target::Fixed(s), _) => place_on(shared, cur, s, task),
            (Target::Stealable, Some(shard)) => shard.push_stealable(task),
            (Target::Preferred(s), Some(shard)) if shard.index == s => shard.push_stealable(task),
            (Target::Stealable, None) => {
                shared.injector.push(task);
                shared.spawned_external.incr();
                shared.notify_idle(None);
                shared.sweep_if_shut_down(&shared.injector);
            }
            (Target::Preferred(s), _) => {
                let remote = &shared.shards[s];
                remote.stealable.push(task);
                remote.counters.spawned_remote.incr();
                let rang = remote.claim_doorbell();
                if rang {
                    shared.ring_doorbell(s);
                }
                // A shard nobody drives (shard 0 outside `block_on`) counts as asleep, so its
                // doorbell may wait in a ring no thread watches: let an idle shard steal.
                if !rang || !remote.driven.load(SeqCst) {
                    shared.notify_idle(cur.map(|c| c.index));
                }
                if cur.is_none() {
                    shared.sweep_if_shut_down(&remote.stealable);
                }
            }
        }
        Ok(join)
    })
}

/// Queues `task` to run on shard `s` (not stealable).
fn place_on(shared: &Shared, cur: Option<&Shard>, s: usize, task: Notified) {
    match cur {
        Some(shard) if shard.index == s => {
            shard.counters().spawned_local.incr();
            shard.push_local(task);
        }
        _ => {
            let remote = &shared.shards[s];
            remote.inbox.push(task);
            remote.counters.spawned_remote.incr();
            shared.notify(s);
            if cur.is_none() {
                shared.sweep_if_shut_down(&remote.inbox);
            }
        }
    }
}

/// Spawns a `!Send` future on the current shard.
pub(crate) fn spawn_local<F>(future: F) -> Result<JoinHandle<F::Output>, SpawnError>
where
    F: Future + 'static,
    F::Output: 'static,
{
    context::with_shard(|cur| {
        let shard = cur.ok_or(SpawnError::NotOnShard)?;
        if shard.shared.is_shutdown() {
            return Err(SpawnError::ShuttingDown);
        }
        let (task, join) = new_task(
            future,
            SchedHandle::new(&shard.shared, Some(shard)),
            shard.index as u32,
        );
        shard.counters().spawned_local.incr();
        shard.push_local(task);
        Ok(join)
    })
}

/// Spawns, on shard `s`, the `!Send` future that `make` creates there.
pub(crate) fn spawn_local_on<C, F>(
    shared: &Arc<Shared>,
    s: usize,
    make: C,
) -> Result<JoinHandle<F::Output>, SpawnError>
where
    C: FnOnce() -> F + Send + 'static,
    F: Future + 'static,
    F::Output: Send + 'static,
{
    let n = shared.shards.len();
    if s >= n {
        return Err(SpawnError::NoSuchShard {
            shard: s,
            shards: n,
        });
    }
    if shared.is_shutdown() {
        return Err(SpawnError::ShuttingDown);
    }
    context::with_shard_of(Arc::as_ptr(shared), |cur| {
        let fut = crate::task::LocalOn::new(make);
        let (task, join) = new_task(fut, SchedHandle::new(shared, cur), s as u32);
        place_on(shared, cur, s, task);
        Ok(join)
    })
}
