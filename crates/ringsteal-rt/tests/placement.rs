//! Placement: every `Placement` variant puts a task where design.md's table says, a started
//! task never changes shard (a `Stealable` one only with moving off: `moving.rs` has the
//! rest), bad shard numbers are clear errors, local spawns stay local, and
//! plain threads can spawn with every placement whether or not shard 0 is inside `block_on`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use common::*;
use ringsteal_rt::{current_shard, spawn_with, JoinHandle, Placement, RuntimeHandle, SpawnError};

#[test]
fn pinned_tasks_run_on_the_shard_they_name() {
    with_every_runtime("pinned", 3, |_, rt| {
        rt.block_on(async {
            for round in 0..5 {
                for s in 0..3 {
                    let on = spawn_with(Placement::Pinned(s), async { current_shard() })
                        .await
                        .unwrap();
                    assert_eq!(on, Some(s), "Pinned({s}) ran on {on:?} in round {round}");
                }
            }
        });
    });
}

#[test]
fn sticky_keys_always_land_on_the_same_shard_and_spread_over_all_shards() {
    with_every_runtime("sticky", 3, |_, rt| {
        let by_key = rt.block_on(async {
            let mut by_key = BTreeMap::new();
            for key in 0..64u64 {
                let handles: Vec<_> = (0..4)
                    .map(|_| spawn_with(Placement::Sticky(key), async { current_shard() }))
                    .collect();
                let mut shards = BTreeSet::new();
                for h in handles {
                    shards.insert(h.await.unwrap().expect("ran on a shard"));
                }
                assert_eq!(shards.len(), 1, "Sticky({key}) ran on shards {shards:?}");
                by_key.insert(key, *shards.first().unwrap());
            }
            by_key
        });
        let used: BTreeSet<usize> = by_key.values().copied().collect();
        assert_eq!(
            used,
            BTreeSet::from([0, 1, 2]),
            "64 keys should reach every shard: {by_key:?}"
        );
        // And the mapping is stable across calls.
        let again = rt.block_on(
            rt.handle()
                .spawn_with(Placement::Sticky(17), async { current_shard() }),
        );
        assert_eq!(again.unwrap(), Some(by_key[&17]));
    });
}

#[test]
fn round_robin_visits_every_shard_in_turn() {
    with_every_runtime("round robin", 3, |_, rt| {
        let order = rt.block_on(async {
            let handles: Vec<_> = (0..15)
                .map(|_| spawn_with(Placement::RoundRobin, async { current_shard().unwrap() }))
                .collect();
            let mut order = Vec::new();
            for h in handles {
                order.push(h.await.unwrap());
            }
            order
        });
        for pair in order.windows(2) {
            assert_eq!(pair[1], (pair[0] + 1) % 3, "round robin order {order:?}");
        }
        for s in 0..3 {
            assert_eq!(order.iter().filter(|&&x| x == s).count(), 5, "{order:?}");
        }
    });
}

#[test]
fn stealable_and_stealable_preferred_tasks_run_to_completion() {
    with_every_runtime("stealable", 3, |_, rt| {
        rt.block_on(async {
            let mut handles = Vec::new();
            for i in 0..30 {
                let placement = match i % 4 {
                    0 | 1 => Placement::Stealable,
                    p => Placement::StealablePreferred(p % 3),
                };
                handles.push(spawn_with(placement, async move {
                    ringsteal_rt::yield_now().await;
                    (i, current_shard())
                }));
            }
            for (i, h) in handles.into_iter().enumerate() {
                let (j, on) = h.await.unwrap();
                assert_eq!(i, j);
                assert!(on.is_some_and(|s| s < 3), "task {i} ran on {on:?}");
            }
        });
    });
}

#[test]
fn stealable_preferred_tasks_are_stolen_when_their_shard_is_busy() {
    with_every_runtime("preferred stolen", 3, |_, rt| {
        rt.block_on(async {
            // Shard 1 is kept busy by a pinned spinner; work preferring it runs elsewhere.
            let release = Arc::new(AtomicUsize::new(0));
            let spinning = Arc::new(AtomicUsize::new(0));
            let (r, s) = (release.clone(), spinning.clone());
            let spinner = spawn_with(Placement::Pinned(1), async move {
                s.store(1, SeqCst);
                spin_until(|| r.load(SeqCst) == 1);
            });
            yield_until(|| spinning.load(SeqCst) == 1).await;
            let handles: Vec<_> = (0..16)
                .map(|_| spawn_with(Placement::StealablePreferred(1), async { current_shard() }))
                .collect();
            for h in handles {
                let on = h.await.unwrap();
                assert!(
                    matches!(on, Some(0) | Some(2)),
                    "preferred shard 1 was busy, yet the task ran on {on:?}"
                );
            }
            release.store(1, SeqCst);
            spinner.await.unwrap();
        });
    });
}

#[test]
fn a_started_task_never_changes_shard_across_awaits_with_moving_off() {
    started_tasks_stay("no migration", false);
}

#[test]
fn a_started_preferred_task_never_changes_shard_across_awaits() {
    // With moving on (the default), a `Stealable` task may move (`moving.rs`); the
    // `StealablePreferred` half of the tasks must not.
    started_tasks_stay("preferred stay", true);
}

/// 48 tasks, half `Stealable`, half `StealablePreferred`, wait in every way for 40 rounds and
/// check after each that they are still on the shard of their first poll (the `Stealable`
/// ones only if `moving` is off).
fn started_tasks_stay(name: &str, moving: bool) {
    under_every_config(name, 3, move |config, builder| {
        let rt = builder
            .move_started_tasks(moving)
            .build()
            .unwrap_or_else(|e| panic!("building a {config:?} runtime: {e}"));
        rt.block_on(async {
            let signal = Signal::new();
            let started = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            for i in 0..48u64 {
                let (signal, started) = (signal.clone(), started.clone());
                let placement = if i % 2 == 0 {
                    Placement::Stealable
                } else {
                    Placement::StealablePreferred((i % 3) as usize)
                };
                handles.push(spawn_with(placement, async move {
                    let home = current_shard().expect("on a shard");
                    started.fetch_add(1, SeqCst);
                    for round in 0..40u64 {
                        match round % 4 {
                            0 => ringsteal_rt::yield_now().await,
                            1 => {
                                // Cross-shard wakes: every task bumps the signal and waits
                                // until the others have caught up a little.
                                signal.add();
                                signal.wait_for(round * 12).await;
                            }
                            2 => {
                                ringsteal_rt::time::sleep(std::time::Duration::from_micros(50))
                                    .await
                            }
                            _ => {
                                let h = ringsteal_rt::spawn(async { current_shard() });
                                let _ = h.await.unwrap();
                            }
                        }
                        if !moving || i % 2 == 1 {
                            assert_eq!(
                                current_shard(),
                                Some(home),
                                "task {i} moved in round {round}"
                            );
                        }
                    }
                    home
                }));
            }
            // Keep shard 0 busy until every task has started, so most are stolen first.
            spin_until_all_ran(&started, 48, || {
                drop(spawn_with(Placement::Stealable, async {}))
            });
            let mut homes = BTreeSet::new();
            for h in handles {
                homes.insert(h.await.unwrap());
            }
            assert!(
                !homes.contains(&0),
                "shard 0 was busy until all started: {homes:?}"
            );
        });
    });
}

#[test]
fn out_of_range_shards_are_errors_that_name_the_shard_count() {
    let rt = Config::MsgRing.runtime(3);
    let handle = rt.handle();
    let err = handle
        .try_spawn_with(Placement::Pinned(3), async {})
        .unwrap_err();
    assert_eq!(
        err,
        SpawnError::NoSuchShard {
            shard: 3,
            shards: 3
        }
    );
    assert!(err.to_string().contains("3 shards"), "{err}");
    let err = handle
        .try_spawn_with(Placement::StealablePreferred(9), async {})
        .unwrap_err();
    assert_eq!(
        err,
        SpawnError::NoSuchShard {
            shard: 9,
            shards: 3
        }
    );
    // Placements that name no shard cannot be out of range.
    for p in [
        Placement::Sticky(u64::MAX),
        Placement::RoundRobin,
        Placement::Stealable,
    ] {
        drop(handle.try_spawn_with(p, async {}).unwrap());
    }
    assert_eq!(
        handle.send_msg(3, 1),
        Err(SpawnError::NoSuchShard {
            shard: 3,
            shards: 3
        })
    );

    let msg = panic_message(|| drop(handle.spawn_with(Placement::Pinned(4), async {})));
    assert!(msg.contains("shard 4") && msg.contains("3 shards"), "{msg}");
    let msg = panic_message(|| drop(handle.spawn_with(Placement::StealablePreferred(3), async {})));
    assert!(msg.contains("3 shards"), "{msg}");
    let msg = panic_message(|| drop(handle.spawn_local_on(3, || async {})));
    assert!(msg.contains("3 shards"), "{msg}");

    // The free functions, from inside the runtime.
    rt.block_on(async {
        let err = ringsteal_rt::try_spawn_with(Placement::Pinned(5), async {}).unwrap_err();
        assert_eq!(
            err,
            SpawnError::NoSuchShard {
                shard: 5,
                shards: 3
            }
        );
        let msg = panic_message(|| drop(spawn_with(Placement::Pinned(3), async {})));
        assert!(msg.contains("3 shards"), "{msg}");
    });
    // A one-shard runtime says "1 shard".
    let one = Config::MsgRing.runtime(1);
    let msg = panic_message(|| drop(one.handle().spawn_with(Placement::Pinned(1), async {})));
    assert!(msg.contains("1 shard "), "{msg}");
}

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn spawn_local_runs_a_non_send_future_on_the_current_shard() {
    with_every_runtime("spawn_local", 2, |_, rt| {
        rt.block_on(async {
            let shared = Rc::new(20);
            let s = shared.clone();
            let (on, v) = ringsteal_rt::spawn_local(async move {
                ringsteal_rt::yield_now().await;
                (current_shard(), *s + 1)
            })
            .await
            .unwrap();
            assert_eq!((on, v), (Some(0), 21));

            // From a (local) task on shard 1.
            let on = RuntimeHandle::current()
                .spawn_local_on(1, || async {
                    let rc = Rc::new(std::cell::Cell::new(0));
                    let r = rc.clone();
                    let inner = ringsteal_rt::spawn_local(async move {
                        r.set(r.get() + 1);
                        ringsteal_rt::yield_now().await;
                        current_shard()
                    });
                    let on = inner.await.unwrap();
                    assert_eq!(rc.get(), 1);
                    on
                })
                .await
                .unwrap();
            assert_eq!(on, Some(1));
        });
    });
    // Outside a shard it is a clear panic.
    let msg = panic_message(|| drop(ringsteal_rt::spawn_local(async {})));
    assert!(msg.contains("spawn_local"), "{msg}");
}

/// Where a future was created, where it ran, and which shard it was meant for.
type CreatedRanIn = (Option<usize>, Option<usize>, usize);

#[test]
fn spawn_local_on_creates_the_future_on_the_target_shard() {
    with_every_runtime("spawn_local_on", 3, |_, rt| {
        let handle = rt.handle();
        // From a plain thread, before anything runs.
        let from_thread: Vec<JoinHandle<CreatedRanIn>> = {
            let handle = handle.clone();
            std::thread::spawn(move || {
                (0..3)
                    .map(|s| {
                        handle.spawn_local_on(s, move || {
                            let created_on = current_shard();
                            let rc = Rc::new(s);
                            async move {
                                ringsteal_rt::yield_now().await;
                                (created_on, current_shard(), *rc)
                            }
                        })
                    })
                    .collect()
            })
            .join()
            .unwrap()
        };
        rt.block_on(async move {
            for (s, h) in from_thread.into_iter().enumerate() {
                assert_eq!(h.await.unwrap(), (Some(s), Some(s), s));
            }
            // From inside the runtime.
            for s in 0..3 {
                let h = RuntimeHandle::current().spawn_local_on(s, move || {
                    let created_on = current_shard();
                    let rc = Rc::new(());
                    async move {
                        let _keep = rc;
                        (created_on, current_shard())
                    }
                });
                assert_eq!(h.await.unwrap(), (Some(s), Some(s)));
            }
        });
    });
}

/// Every placement, spawned through `handle`, each task reporting where it ran.
fn spawn_every_placement(handle: &RuntimeHandle) -> Vec<(Placement, JoinHandle<Option<usize>>)> {
    let n = handle.shards();
    let mut placements = Vec::new();
    for s in 0..n {
        placements.push(Placement::Pinned(s));
        placements.push(Placement::StealablePreferred(s));
    }
    for key in 0..8 {
        placements.push(Placement::Sticky(key));
    }
    for _ in 0..2 * n {
        placements.push(Placement::RoundRobin);
        placements.push(Placement::Stealable);
    }
    placements
        .into_iter()
        .map(|p| (p, handle.spawn_with(p, async { current_shard() })))
        .collect()
}

fn check_ran_where_placed(p: Placement, on: Option<usize>, shards: usize) {
    let on = on.unwrap_or_else(|| panic!("{p:?} ran off-shard"));
    assert!(on < shards);
    if let Placement::Pinned(s) = p {
        assert_eq!(on, s, "{p:?} ran on shard {on}");
    }
}

#[test]
fn a_plain_thread_spawns_with_every_placement_while_shard_0_is_inside_block_on() {
    with_every_runtime("plain thread, block_on", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let spawned = Arc::new(Mutex::new(Vec::new()));
            let done = Signal::new();
            let (s, d) = (spawned.clone(), done.clone());
            let thread = std::thread::spawn(move || {
                *s.lock().unwrap() = spawn_every_placement(&handle);
                d.add();
            });
            done.wait_for(1).await;
            thread.join().unwrap();
            let spawned = std::mem::take(&mut *spawned.lock().unwrap());
            assert!(!spawned.is_empty());
            for (p, h) in spawned {
                check_ran_where_placed(p, h.await.unwrap(), 2);
            }
        });
    });
}

#[test]
fn a_plain_thread_spawns_with_every_placement_while_shard_0_is_outside_block_on() {
    with_every_runtime("plain thread, no block_on", 2, |_, rt| {
        // Warm up: shard 0 has run once and left block_on.
        rt.block_on(async {});
        let handle = rt.handle();
        let for_shard_0 = std::thread::spawn(move || {
            let mut later = Vec::new();
            for (p, h) in spawn_every_placement(&handle) {
                match p {
                    // Work that names shard 0 (pinned, or sticky with a key that maps there)
                    // waits for the next block_on.
                    Placement::Pinned(0) | Placement::Sticky(_) => later.push((p, h)),
                    // Everything else runs now, with shard 0 idle outside block_on: dealt
                    // (round robin) or handed (stealable) to the only driven shard, not left
                    // where nobody runs it. Waited for on this plain thread.
                    _ => {
                        let on = block_on_plain(h).unwrap();
                        assert_eq!(on, Some(1), "{p:?} should run on the only driven shard");
                    }
                }
            }
            later
        })
        .join()
        .unwrap();
        let shards: BTreeSet<usize> = rt.block_on(async move {
            let mut shards = BTreeSet::new();
            for (p, h) in for_shard_0 {
                let on = h.await.unwrap();
                check_ran_where_placed(p, on, 2);
                shards.insert(on.unwrap());
            }
            shards
        });
        assert_eq!(
            shards,
            BTreeSet::from([0, 1]),
            "sticky keys reach both shards"
        );
    });
}

#[test]
fn round_robin_spawns_made_outside_block_on_skip_shard_0_and_reach_it_again_inside() {
    with_every_runtime("dealing after block_on", 2, |_, rt| {
        rt.block_on(async {});
        let handle = rt.handle();
        // Outside block_on: every one of them runs on shard 1.
        let outside: Vec<_> = (0..16)
            .map(|_| handle.spawn_with(Placement::RoundRobin, async { current_shard() }))
            .collect();
        for h in outside {
            assert_eq!(block_on_plain(h).unwrap(), Some(1));
        }
        // Inside: both shards again.
        let inside: BTreeSet<usize> = rt.block_on(async {
            let mut on = BTreeSet::new();
            for _ in 0..8 {
                let h = ringsteal_rt::spawn_with(Placement::RoundRobin, async { current_shard() });
                on.insert(h.await.unwrap().unwrap());
            }
            on
        });
        assert_eq!(inside, BTreeSet::from([0, 1]));
    });
}

#[test]
fn stealable_preferred_work_for_an_undriven_shard_0_is_taken_by_another_shard() {
    // The first spawn after block_on returns names shard 0, which nobody drives now: an idle
    // shard must still be told, or the task waits for the next block_on.
    with_every_runtime("preferred 0, undriven", 2, |_, rt| {
        rt.block_on(async {});
        let handle = rt.handle();
        std::thread::spawn(move || {
            let h = handle.spawn_with(Placement::StealablePreferred(0), async { current_shard() });
            assert_eq!(block_on_plain(h).unwrap(), Some(1));
        })
        .join()
        .unwrap();
    });
}
