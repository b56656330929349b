//! Work stealing: stealable tasks that have not started are taken by idle shards when their
//! shard is busy, and the stats count every steal.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use common::*;
use ringsteal_rt::{current_shard, Placement};

/// Spawns `n` stealable tasks from shard 0's main future, then keeps shard 0 in a CPU loop
/// (no await) until all of them ran. Returns the shards they ran on.
fn run_while_shard_0_spins(rt: &ringsteal_rt::Runtime, n: usize) -> Vec<usize> {
    rt.block_on(async move {
        let done = Arc::new(AtomicUsize::new(0));
        let ran_on = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (done, ran_on) = (done.clone(), ran_on.clone());
                ringsteal_rt::spawn(async move {
                    ran_on.lock().unwrap().push(current_shard().unwrap());
                    done.fetch_add(1, SeqCst);
                })
            })
            .collect();
        // Shard 0 is blocked in this loop: it never gets to run its own queued tasks.
        spin_until(|| done.load(SeqCst) == n);
        for h in handles {
            h.await.unwrap();
        }
        let ran_on = ran_on.lock().unwrap().clone();
        ran_on
    })
}

#[test]
fn queued_stealable_tasks_run_on_another_shard_while_their_shard_is_blocked() {
    with_every_runtime("steal from blocked shard 0", 2, |_, rt| {
        let before = rt.handle().stats();
        let ran_on = run_while_shard_0_spins(&rt, 64);
        assert_eq!(ran_on.len(), 64);
        assert!(
            ran_on.iter().all(|&s| s == 1),
            "shard 0 was blocked, yet tasks ran there: {ran_on:?}"
        );
        let after = rt.handle().stats();
        let (b, a) = (&before.shards[1], &after.shards[1]);
        assert!(
            a.steal_successes > b.steal_successes,
            "no successful steal counted: {a:?}"
        );
        assert_eq!(
            a.tasks_stolen - b.tasks_stolen,
            64,
            "every task was stolen from shard 0: {a:?}"
        );
        // At most 32 tasks move per steal, so 64 need at least two.
        assert!(a.steal_successes - b.steal_successes >= 2, "{a:?}");
        assert!(a.steal_attempts >= a.steal_successes, "{a:?}");
        // Shard 0 stole nothing: it was busy.
        assert_eq!(after.shards[0].tasks_stolen, before.shards[0].tasks_stolen);
    });
}

#[test]
fn every_idle_shard_may_steal_from_a_blocked_one() {
    with_every_runtime("steal with three shards", 3, |_, rt| {
        let ran_on = run_while_shard_0_spins(&rt, 96);
        assert!(ran_on.iter().all(|&s| s != 0), "{ran_on:?}");
        let stats = rt.handle().stats();
        let stolen: u64 = stats.shards.iter().map(|s| s.tasks_stolen).sum();
        // At least once each: a task queued in a thief's deque may be stolen again by the
        // other idle shard before it starts.
        assert!(stolen >= 96, "every task was stolen: {stats:?}");
    });
}

#[test]
fn stealable_preferred_tasks_for_a_blocked_shard_are_stolen_and_counted() {
    with_every_runtime("steal preferred", 2, |_, rt| {
        rt.block_on(async {
            let done = Arc::new(AtomicUsize::new(0));
            let ran_on = Arc::new(Mutex::new(Vec::new()));
            for _ in 0..32 {
                let (done, ran_on) = (done.clone(), ran_on.clone());
                drop(ringsteal_rt::spawn_with(
                    Placement::StealablePreferred(0),
                    async move {
                        ran_on.lock().unwrap().push(current_shard().unwrap());
                        done.fetch_add(1, SeqCst);
                    },
                ));
            }
            spin_until(|| done.load(SeqCst) == 32);
            assert!(ran_on.lock().unwrap().iter().all(|&s| s == 1));
        });
        let s1 = &rt.handle().stats().shards[1];
        assert_eq!(s1.tasks_stolen, 32, "{s1:?}");
        assert!(s1.steal_successes >= 1, "{s1:?}");
    });
}

#[test]
fn stealable_spawns_from_outside_run_on_a_free_shard_while_shard_0_is_blocked() {
    with_every_runtime("injector while blocked", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let done = Arc::new(AtomicUsize::new(0));
            let d = done.clone();
            // A plain thread spawns through the global injector while shard 0 spins.
            let thread = std::thread::spawn(move || {
                (0..32)
                    .map(|_| {
                        let d = d.clone();
                        handle.spawn(async move {
                            d.fetch_add(1, SeqCst);
                            current_shard()
                        })
                    })
                    .collect::<Vec<_>>()
            });
            spin_until(|| done.load(SeqCst) == 32);
            for h in thread.join().unwrap() {
                assert_eq!(h.await.unwrap(), Some(1));
            }
        });
        assert_eq!(rt.handle().stats().spawned_external, 32);
    });
}
