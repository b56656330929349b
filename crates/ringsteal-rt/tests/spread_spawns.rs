//! Spawns after an accepted connection: `spread_next_spawn` deals the next default-placed
//! `spawn` of the same poll to the shards in turn (ADR-0009), exactly once per hint; a hint
//! never outlives the poll that left it, explicit placements ignore it (and leave it for the
//! next default spawn), and task groups and handles follow it as `spawn` does.

mod common;

use common::*;
use ringsteal_rt::task::TaskGroup;
use ringsteal_rt::{current_shard, spawn, spawn_with, spread_next_spawn, Placement, RuntimeHandle};

fn spread_count() -> u64 {
    RuntimeHandle::current().stats().total().spawns_spread
}

#[test]
fn spawns_after_a_hint_are_dealt_to_every_shard_in_turn() {
    with_every_runtime("spread spawns", 3, |config, rt| {
        let per_shard = rt.block_on(async {
            // From a task, as an accept loop runs.
            spawn(async {
                let mut tasks = Vec::new();
                for _ in 0..30 {
                    spread_next_spawn();
                    tasks.push(spawn(async { current_shard().unwrap() }));
                }
                let mut per_shard = [0; 3];
                for t in tasks {
                    per_shard[t.await.unwrap()] += 1;
                }
                per_shard
            })
            .await
            .unwrap()
        });
        assert_eq!(per_shard, [10, 10, 10], "{config:?}");
        assert_eq!(rt.handle().stats().total().spawns_spread, 30, "{config:?}");
    });
}

#[test]
fn a_hint_serves_one_default_spawn_of_the_same_poll() {
    with_every_runtime("spread hint scope", 2, |config, rt| {
        rt.block_on(async {
            spread_next_spawn();
            // Explicit placements ignore the hint and leave it.
            let explicit = spawn_with(Placement::Stealable, async {});
            assert_eq!(spread_count(), 0, "{config:?}");
            let first = spawn(async {});
            let second = spawn(async {});
            assert_eq!(spread_count(), 1, "{config:?}: one hint, one spread spawn");
            explicit.await.unwrap();
            first.await.unwrap();
            second.await.unwrap();
            // A hint the poll did not use is gone by the next poll.
            spread_next_spawn();
            ringsteal_rt::yield_now().await;
            spawn(async {}).await.unwrap();
            assert_eq!(spread_count(), 1, "{config:?}: the hint outlived its poll");
            // Handles and task groups place their default spawns the same way.
            spread_next_spawn();
            RuntimeHandle::current().spawn(async {}).await.unwrap();
            spread_next_spawn();
            let mut group = TaskGroup::new();
            group.spawn(async {});
            group.join_all().await;
            assert_eq!(spread_count(), 3, "{config:?}");
        });
    });
}

#[test]
fn on_one_shard_a_hint_changes_nothing() {
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    rt.block_on(async {
        spread_next_spawn();
        assert_eq!(spawn(async { current_shard() }).await.unwrap(), Some(0));
        assert_eq!(spread_count(), 0);
    });
}
