//! `TaskGroup::join_next`: results in the order tasks finish, panics and aborts included,
//! handles added from outside, cancel safety, and mixing with `join_all`; under every wake
//! and ring configuration.

mod common;

use std::time::Duration;

use common::{quiet_intentional_panics, with_every_runtime};
use ringsteal_rt::sync::CancellationToken;
use ringsteal_rt::task::TaskGroup;
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;

/// A task body that finishes with `v` once `gate` is cancelled.
async fn after(gate: CancellationToken, v: u32) -> u32 {
    gate.cancelled().await;
    v
}

#[test]
fn join_next_returns_results_in_the_order_tasks_finish() {
    with_every_runtime("join_next order", 2, |_, rt| {
        rt.block_on(async {
            let gates: Vec<CancellationToken> = (0..3).map(|_| CancellationToken::new()).collect();
            let mut group = TaskGroup::new();
            for (i, gate) in gates.iter().enumerate() {
                group.spawn_with(Placement::Pinned(i % 2), after(gate.clone(), i as u32));
            }
            for i in [2, 0, 1] {
                gates[i].cancel();
                let got = group.join_next().await.expect("a task is left").unwrap();
                assert_eq!(got, i as u32);
                assert_eq!(
                    group.len(),
                    2 - [2, 0, 1].iter().position(|&j| j == i).unwrap()
                );
            }
            assert!(group.join_next().await.is_none());
            assert!(group.is_empty());
        });
    });
}

/// Several tasks that finished before `join_next` looks come out in the order they
/// finished, as tokio's `JoinSet` gives them, not in some other order.
#[test]
fn results_of_tasks_that_finished_together_come_out_in_finishing_order() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    with_every_runtime("join_next order of finished tasks", 1, |_, rt| {
        rt.block_on(async {
            let gates: Vec<CancellationToken> = (0..6).map(|_| CancellationToken::new()).collect();
            let done = Arc::new(AtomicUsize::new(0));
            let mut group = TaskGroup::new();
            for (i, gate) in gates.iter().enumerate() {
                let (gate, done) = (gate.clone(), done.clone());
                group.spawn_with(Placement::Pinned(0), async move {
                    gate.cancelled().await;
                    done.fetch_add(1, SeqCst);
                    i
                });
            }
            // Let every task start and wait on its gate.
            ringsteal_rt::yield_now().await;
            // All on this shard: woken (and so finished) in the order the gates open.
            let order = [3, 1, 5, 2, 0, 4];
            for &i in &order {
                gates[i].cancel();
            }
            while done.load(SeqCst) < order.len() {
                ringsteal_rt::yield_now().await;
            }
            let mut got = Vec::new();
            while let Some(result) = group.join_next().await {
                got.push(result.unwrap());
            }
            assert_eq!(got, order);
        });
    });
}

#[test]
fn join_next_reports_panics_and_aborts_and_handles_added_from_outside() {
    quiet_intentional_panics();
    with_every_runtime("join_next errors", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let never = CancellationToken::new();
            let mut group = TaskGroup::new();
            group.spawn_with(Placement::Pinned(1), async {
                panic!("intentional: a task in a group panics")
            });
            group.spawn_with(Placement::Pinned(0), after(never.clone(), 0));
            // Spawned elsewhere and added: it cannot announce itself, join_next polls it.
            group.insert(handle.spawn_with(Placement::Pinned(1), async { 7 }));
            let mut panicked = 0;
            let mut ok = Vec::new();
            for _ in 0..2 {
                match group.join_next().await.unwrap() {
                    Ok(v) => ok.push(v),
                    Err(e) if e.is_panic() => panicked += 1,
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            assert_eq!((panicked, ok), (1, vec![7]));
            // The last one waits for a gate that never opens: abort it.
            assert_eq!(group.len(), 1);
            group.abort_all();
            assert!(group.join_next().await.unwrap().unwrap_err().is_cancelled());
            assert!(group.join_next().await.is_none());
        });
    });
}

#[test]
fn an_abandoned_join_next_loses_nothing() {
    with_every_runtime("cancel-safe join_next", 2, |_, rt| {
        rt.block_on(async {
            let gate = CancellationToken::new();
            let mut group = TaskGroup::new();
            for i in 0..4 {
                group.spawn_with(Placement::Pinned(i % 2), after(gate.clone(), i as u32));
            }
            for _ in 0..3 {
                assert!(timeout(Duration::from_millis(2), group.join_next())
                    .await
                    .is_err());
            }
            assert_eq!(group.len(), 4);
            gate.cancel();
            let mut got = Vec::new();
            // Mixed: one by join_next, the rest by join_all (in spawn order).
            got.push(group.join_next().await.unwrap().unwrap());
            got.extend(group.join_all().await.into_iter().map(Result::unwrap));
            got.sort();
            assert_eq!(got, [0, 1, 2, 3]);
            assert!(group.join_next().await.is_none());
        });
    });
}

#[test]
fn join_next_drains_many_stealable_tasks() {
    with_every_runtime("join_next many", 2, |_, rt| {
        rt.block_on(async {
            let mut group = TaskGroup::new();
            for i in 0..20_000u64 {
                group.spawn(async move {
                    ringsteal_rt::yield_now().await;
                    i
                });
            }
            let mut sum = 0;
            let mut n = 0;
            while let Some(r) = group.join_next().await {
                sum += r.unwrap();
                n += 1;
            }
            assert_eq!((n, sum), (20_000, 20_000 * 19_999 / 2));
        });
    });
}

#[test]
fn try_join_next_takes_only_finished_tasks_and_shutdown_ends_every_one() {
    with_every_runtime("try_join_next and shutdown", 2, |config, rt| {
        rt.block_on(async {
            let mut group = TaskGroup::new();
            let gate = CancellationToken::new();
            let g = gate.clone();
            group.spawn_with(Placement::Pinned(1), async move {
                g.cancelled().await;
                1
            });
            group.spawn_with(Placement::Pinned(1), async { 2 });
            // The quick one finishes; the gated one cannot.
            let quick = loop {
                if let Some(result) = group.try_join_next() {
                    break result.unwrap();
                }
                ringsteal_rt::yield_now().await;
            };
            assert_eq!(quick, 2, "{config:?}");
            assert!(
                group.try_join_next().is_none(),
                "{config:?}: the other waits"
            );
            assert_eq!(group.len(), 1);
            // Shutdown aborts the waiting task and returns once it has ended.
            timeout(Duration::from_secs(20), group.shutdown())
                .await
                .expect("shutdown returned");
            assert!(group.is_empty(), "{config:?}");
            assert!(group.try_join_next().is_none());
            drop(gate);
        });
    });
}

#[test]
fn detached_tasks_run_on_and_the_group_goes_on_with_new_ones() {
    with_every_runtime("detach_all", 2, |_, rt| {
        rt.block_on(async {
            let gate = CancellationToken::new();
            let (tx, rx) = std::sync::mpsc::channel();
            let mut group = TaskGroup::new();
            for i in 0..6u32 {
                let (gate, tx) = (gate.clone(), tx.clone());
                group.spawn_with(Placement::Pinned((i % 2) as usize), async move {
                    gate.cancelled().await;
                    tx.send(i).unwrap();
                    i
                });
            }
            // One that has likely finished, not joined yet: it goes with the rest.
            group.spawn(async { 100 });
            ringsteal_rt::yield_now().await;
            assert_eq!(group.len(), 7);
            group.detach_all();
            assert!(group.is_empty());
            assert!(group.try_join_next().is_none());
            // New tasks join as before; the detached ones never come out.
            group.spawn(async { 7 });
            assert_eq!(group.join_next().await.unwrap().unwrap(), 7);
            assert!(group.join_next().await.is_none());
            // Dropping the group aborts nothing of what it detached.
            drop(group);
            gate.cancel();
            drop(tx);
            let mut ran: Vec<u32> = timeout(Duration::from_secs(20), async {
                let mut ran = Vec::new();
                while ran.len() < 6 {
                    match rx.try_recv() {
                        Ok(i) => ran.push(i),
                        Err(_) => ringsteal_rt::yield_now().await,
                    }
                }
                ran
            })
            .await
            .expect("the detached tasks ran");
            ran.sort_unstable();
            assert_eq!(ran, (0..6).collect::<Vec<_>>());
        });
    });
}

#[test]
fn local_and_blocking_tasks_join_through_the_group() {
    with_every_runtime("group local and blocking", 2, |_, rt| {
        rt.block_on(async {
            let mut group = TaskGroup::new();
            let gate = CancellationToken::new();
            for i in 0..4u32 {
                // `!Send` state, on this shard.
                let local = std::rc::Rc::new(i);
                let gate = gate.clone();
                group.spawn_local(async move {
                    gate.cancelled().await;
                    *local
                });
                group.spawn_blocking(move || 10 + i);
            }
            // The blocking ones finish first; each comes out once, announced.
            let mut blocking: Vec<u32> = Vec::new();
            for _ in 0..4 {
                blocking.push(group.join_next().await.unwrap().unwrap());
            }
            blocking.sort_unstable();
            assert_eq!(blocking, [10, 11, 12, 13]);
            gate.cancel();
            let mut local: Vec<u32> = group
                .join_all()
                .await
                .into_iter()
                .map(Result::unwrap)
                .collect();
            local.sort_unstable();
            assert_eq!(local, [0, 1, 2, 3]);
            // An aborted local task reports its abort.
            group.spawn_local(std::future::pending::<u32>()).abort();
            assert!(group.join_next().await.unwrap().unwrap_err().is_cancelled());
        });
    });
}

ringsteal_rt::task_local! {
    static REQUEST: u64;
}

#[test]
fn a_task_local_value_follows_its_task_across_awaits_and_children_do_not_inherit_it() {
    with_every_runtime("task-local values", 2, |config, rt| {
        rt.block_on(async {
            // Tasks on both shards, interleaved: each sees its own value after every await.
            let mut group = TaskGroup::new();
            for id in 0..16u64 {
                group.spawn_with(
                    Placement::Pinned((id % 2) as usize),
                    REQUEST.scope(id, async move {
                        for _ in 0..10 {
                            ringsteal_rt::time::sleep(Duration::from_micros(id * 10)).await;
                            assert_eq!(REQUEST.get(), id);
                        }
                        // A task it spawns does not inherit the value.
                        let child = ringsteal_rt::spawn(async { REQUEST.try_with(|r| *r) });
                        assert!(child.await.unwrap().is_err());
                        id
                    }),
                );
            }
            let mut seen: Vec<u64> = group
                .join_all()
                .await
                .into_iter()
                .map(Result::unwrap)
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..16).collect::<Vec<_>>(), "{config:?}");
            assert!(
                REQUEST.try_with(|_| ()).is_err(),
                "no value outside the scopes"
            );
            assert!(REQUEST.try_get().is_err());
            REQUEST
                .scope(5, async { assert_eq!(REQUEST.try_get().unwrap(), 5) })
                .await;
        });
    });
}

/// `spawn_local` takes futures whose output is `!Send`, as tokio's `JoinSet::spawn_local`
/// does: joined in finishing order, aborted, and dropped with the group.
#[test]
fn local_tasks_with_outputs_that_are_not_send_join_abort_and_drop() {
    use std::rc::Rc;
    with_every_runtime("local !Send outputs", 2, |_, rt| {
        rt.block_on(async {
            let gates: Vec<CancellationToken> = (0..3).map(|_| CancellationToken::new()).collect();
            let mut group = TaskGroup::new();
            for (i, gate) in gates.iter().enumerate() {
                let gate = gate.clone();
                group.spawn_local(async move {
                    gate.cancelled().await;
                    Rc::new(i)
                });
            }
            gates[1].cancel();
            assert_eq!(*group.join_next().await.unwrap().unwrap(), 1);
            group.abort_all();
            let rest = group.join_all().await;
            assert_eq!(rest.len(), 2);
            assert!(rest
                .iter()
                .all(|r| r.as_ref().is_err_and(|e| e.is_cancelled())));
            let mut dropped = TaskGroup::new();
            dropped.spawn_local(std::future::pending::<Rc<u8>>());
            drop(dropped);
        });
    });
}
