//! Stats: every counter of `RuntimeStats` moves when the runtime does what it counts.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ringsteal_rt::{
    current_shard, spawn_with, Placement, Runtime, RuntimeHandle, RuntimeStats, ShardStats,
};

/// `after - before` for every counter of one shard (gauges as they are after).
fn delta(before: &ShardStats, after: &ShardStats) -> ShardStats {
    let mut d = after.clone();
    d.polls -= before.polls;
    d.spawned_local -= before.spawned_local;
    d.spawned_remote -= before.spawned_remote;
    d.steal_attempts -= before.steal_attempts;
    d.steal_successes -= before.steal_successes;
    d.tasks_stolen -= before.tasks_stolen;
    d.tasks_handed_off -= before.tasks_handed_off;
    d.msg_ring_doorbells -= before.msg_ring_doorbells;
    d.eventfd_doorbells -= before.eventfd_doorbells;
    d.foreign_doorbells -= before.foreign_doorbells;
    d.eventfd_wakes -= before.eventfd_wakes;
    d.remote_wakes -= before.remote_wakes;
    d.enters -= before.enters;
    d.sqes_submitted -= before.sqes_submitted;
    d.cq_overflows -= before.cq_overflows;
    d.parks -= before.parks;
    d.parked -= before.parked;
    d.ops_completed -= before.ops_completed;
    d.timers_fired -= before.timers_fired;
    d.messages_received -= before.messages_received;
    d
}

fn deltas(before: &RuntimeStats, after: &RuntimeStats) -> Vec<ShardStats> {
    before
        .shards
        .iter()
        .zip(&after.shards)
        .map(|(b, a)| delta(b, a))
        .collect()
}

/// Ping-pong between tasks pinned on shards 0 and 1: every round needs a cross-shard wake
/// of a shard that has gone to sleep.
fn ping_pong(rt: &Runtime, rounds: u64) {
    rt.block_on(ping_pong_with_shard_1(rounds));
}

#[test]
fn poll_and_spawn_counters_count_every_task_where_it_was_placed() {
    with_every_runtime("spawn counters", 2, |_, rt| {
        let handle = rt.handle();
        let before = handle.stats();
        rt.block_on(async {
            let mut joins = Vec::new();
            for _ in 0..10 {
                joins.push(spawn_with(Placement::Pinned(1), async {}));
                joins.push(spawn_with(Placement::Pinned(0), async {}));
            }
            for _ in 0..5 {
                joins.push(ringsteal_rt::spawn(async {}));
            }
            for _ in 0..3 {
                joins.push(ringsteal_rt::spawn_local(async {}));
            }
            for j in joins {
                j.await.unwrap();
            }
        });
        let h = handle.clone();
        let from_thread = std::thread::spawn(move || {
            let mut joins = Vec::new();
            for _ in 0..4 {
                joins.push(h.spawn_with(Placement::Pinned(1), async {}));
            }
            for _ in 0..6 {
                joins.push(h.spawn(async {}));
            }
            joins
        })
        .join()
        .unwrap();
        rt.block_on(async move {
            for j in from_thread {
                j.await.unwrap();
            }
        });
        let after = handle.stats();
        let d = deltas(&before, &after);
        assert_eq!(d[0].spawned_local, 10 + 5 + 3, "{:?}", d[0]);
        assert_eq!(d[1].spawned_remote, 10 + 4, "{:?}", d[1]);
        assert_eq!(after.spawned_external - before.spawned_external, 6);
        assert!(d[1].polls >= 14, "{:?}", d[1]);
        assert!(d[0].polls + d[1].polls >= 10 + 10 + 5 + 3 + 4 + 6);
        assert_eq!(
            after.total().polls,
            after.shards[0].polls + after.shards[1].polls
        );
    });
}

#[test]
fn steal_counters_count_attempts_successes_and_stolen_tasks() {
    with_every_runtime("steal counters", 2, |_, rt| {
        let before = rt.handle().stats();
        let nudges = rt.block_on(async {
            let done = Arc::new(AtomicUsize::new(0));
            for _ in 0..40 {
                let d = done.clone();
                drop(ringsteal_rt::spawn(async move {
                    d.fetch_add(1, SeqCst);
                }));
            }
            spin_until_all_ran(&done, 40, || drop(ringsteal_rt::spawn(async {})))
        });
        let d = deltas(&before, &rt.handle().stats());
        // Shard 0 spins, so shard 1 ran all 40: each either handed to it as it was woken
        // (ADR-0005's hand-off) or stolen by it (the nudges too, the last maybe not yet).
        let moved = d[1].tasks_stolen + d[0].tasks_handed_off;
        assert!(
            (40..=40 + nudges).contains(&moved),
            "{nudges} nudges: {:?} {:?}",
            d[0],
            d[1]
        );
        assert!(d[1].steal_successes >= 1, "{:?}", d[1]);
        assert!(d[1].steal_attempts >= d[1].steal_successes, "{:?}", d[1]);
    });
}

#[test]
fn doorbells_are_msg_ring_sends_under_msg_ring_and_eventfd_writes_under_eventfd() {
    under_every_config("doorbell counters", 2, |config, builder| {
        let rt = builder.build().unwrap();
        let before = rt.handle().stats();
        ping_pong(&rt, 300);
        let after = rt.handle().stats();
        let d = deltas(&before, &after);
        let msg_ring: u64 = d.iter().map(|s| s.msg_ring_doorbells).sum();
        let eventfd: u64 = d.iter().map(|s| s.eventfd_doorbells).sum();
        let eventfd_wakes: u64 = d.iter().map(|s| s.eventfd_wakes).sum();
        // An SQPOLL runtime's shards ring doorbells without their ring: ring-less MSG_RING
        // where the kernel has it, the eventfd otherwise.
        let sqpoll_eventfd = config == Config::SqPoll && !kernel_has_send_msg_ring();
        if config == Config::EventFd || !kernel_has_msg_ring() || sqpoll_eventfd {
            assert_eq!(msg_ring, 0, "{config:?}: {d:?}");
            assert!(eventfd > 0, "{config:?}: no eventfd doorbell: {d:?}");
            assert!(eventfd_wakes > 0, "{config:?}: no eventfd wake: {d:?}");
            // Several writes may land before one read completes, never the reverse. Counted
            // since the runtime started: a window could begin between a doorbell and its
            // wake.
            for s in &after.shards {
                assert!(s.eventfd_wakes <= s.eventfd_doorbells, "{config:?}: {s:?}");
            }
        } else {
            assert!(msg_ring > 0, "{config:?}: no MSG_RING doorbell: {d:?}");
            assert_eq!(
                eventfd, 0,
                "{config:?}: shard-to-shard wakes used the eventfd"
            );
            assert_eq!(eventfd_wakes, 0, "{config:?}: {d:?}");
            // A MSG_RING doorbell is an SQE of the sender's ring (a system call with SQPOLL).
            for s in d.iter().filter(|_| config != Config::SqPoll) {
                assert!(
                    s.sqes_submitted >= s.msg_ring_doorbells,
                    "{config:?}: {s:?}"
                );
            }
        }
    });
}

#[test]
fn doorbells_from_a_plain_thread_are_counted_at_their_target() {
    // A spawn through a handle from a thread that is no shard wakes a sleeping shard with a
    // ring-less MSG_RING (where the kernel has it) or its eventfd: either is counted.
    under_every_config("foreign doorbells", 2, |config, builder| {
        let rt = builder.build().unwrap();
        let handle = rt.handle();
        let before = handle.stats();
        for _ in 0..30 {
            // Shard 1 has run out of work (it parks next, or has): the spawn must wake it.
            while !handle.stats().shards[1].idle {
                std::thread::yield_now();
            }
            let (tx, rx) = std::sync::mpsc::channel();
            drop(handle.spawn_with(Placement::Pinned(1), async move {
                tx.send(()).unwrap();
            }));
            rx.recv().unwrap();
        }
        let d = deltas(&before, &handle.stats());
        let rung: u64 = d
            .iter()
            .map(|s| s.foreign_doorbells + s.eventfd_doorbells + s.msg_ring_doorbells)
            .sum();
        assert!(
            rung > 0,
            "{config:?}: shard 1 was woken 30 times and no doorbell was counted: {d:?}"
        );
        assert!(d[0].foreign_doorbells == 0, "{config:?}: {d:?}");
        drop(rt);
    });
}

#[test]
fn a_sleeping_shard_counts_its_parks_enters_and_parked_time() {
    with_every_runtime("park counters", 2, |_, rt| {
        // Let shard 1 finish starting up and fall asleep.
        ping_pong(&rt, 1);
        let first = rt.handle().stats();
        // Up to three sleeps: a thread preempted for most of the 50 ms before it entered the
        // kernel parks for less (a loaded machine), which says nothing about the counter.
        let mut parked = Vec::new();
        let (after, d) = loop {
            let before = rt.handle().stats();
            rt.block_on(ringsteal_rt::time::sleep(Duration::from_millis(50)));
            let after = rt.handle().stats();
            let d = deltas(&before, &after);
            parked.push(d[0].parked);
            if d[0].parked >= Duration::from_millis(25) || parked.len() == 3 {
                break (after, d);
            }
        };
        assert!(d[0].parks >= 1, "{:?}", d[0]);
        assert!(d[0].enters >= 1, "{:?}", d[0]);
        assert!(
            d[0].parked >= Duration::from_millis(25),
            "shard 0 slept 50 ms (three times) but counted {parked:?} parked"
        );
        assert_eq!(d[0].timers_fired, 1, "{:?}", d[0]);
        assert_eq!(after.shards[0].timers_active, 0);
        // Shard 1 had nothing to do: it stayed parked. A park is counted when it ends, so
        // wake it, then its parked time covers the 50 ms. Up to three sleeps, as for shard 0:
        // a thread preempted before it parked parks for less.
        let mut parked_1 = Vec::new();
        let mut since = first;
        let (woken, d1) = loop {
            ping_pong(&rt, 1);
            let woken = rt.handle().stats();
            let d1 = delta(&since.shards[1], &woken.shards[1]);
            parked_1.push(d1.parked);
            if d1.parked >= Duration::from_millis(25) || parked_1.len() == 3 {
                break (woken, d1);
            }
            since = woken;
            rt.block_on(ringsteal_rt::time::sleep(Duration::from_millis(50)));
        };
        // (Its enter for that park was counted when the park began, before this window.)
        assert!(d1.parks >= 1, "{d1:?}");
        assert!(
            d1.parked >= Duration::from_millis(25),
            "shard 1 stayed idle through 50 ms (three times) but counted {parked_1:?} parked"
        );
        assert!(woken.shards[1].sqes_submitted >= 1, "{:?}", woken.shards[1]);
        assert_eq!(
            woken.total().parked,
            woken.shards[0].parked + woken.shards[1].parked
        );
    });
}

#[test]
fn shard_0_counts_as_idle_outside_block_on() {
    // Nobody drives it then: it runs nothing, whatever its flag said inside the last
    // `block_on`.
    let rt = Runtime::builder().shards(2).build().unwrap();
    rt.block_on(async { ringsteal_rt::yield_now().await });
    let handle = rt.handle();
    // Shard 1 goes idle on its own time: the hang guard of the test harness bounds this.
    while !handle.stats().shards[1].idle {
        std::thread::yield_now();
    }
    let stats = handle.stats();
    assert!(stats.shards[0].idle, "{:?}", stats.shards[0]);
    assert!(stats.total().idle);
}

#[test]
fn gauges_follow_live_tasks_and_timers() {
    with_every_runtime("gauges", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async {
            let started = Signal::new();
            let s = started.clone();
            let sleeper = spawn_with(Placement::Pinned(1), async move {
                let sleep = ringsteal_rt::time::sleep(Duration::from_secs(3600));
                s.add();
                sleep.await;
            });
            started.wait_for(1).await;
            yield_until(|| {
                let s1 = &RuntimeHandle::current().stats().shards[1];
                s1.tasks_alive == 1 && s1.timers_active == 1
            })
            .await;
            sleeper.abort();
            assert!(sleeper.await.unwrap_err().is_cancelled());
            yield_until(|| {
                let s1 = &RuntimeHandle::current().stats().shards[1];
                s1.tasks_alive == 0 && s1.timers_active == 0
            })
            .await;
        });
        assert_eq!(handle.stats().shards[1].tasks_alive, 0);
    });
}

#[test]
fn every_raw_message_is_counted_by_its_receiver_whatever_path_it_took() {
    with_every_runtime("message counter", 2, |_, rt| {
        let handle = rt.handle();
        let before = handle.stats();
        rt.block_on(async {
            let receiver = spawn_with(Placement::Pinned(1), async {
                for _ in 0..30 {
                    ringsteal_rt::recv_msg().await;
                }
                current_shard()
            });
            // 10 from shard 0, 10 from a plain thread, 10 from shard 1 itself.
            for i in 0..10 {
                RuntimeHandle::current().send_msg(1, i).unwrap();
            }
            let h = RuntimeHandle::current();
            std::thread::spawn(move || (0..10).for_each(|i| h.send_msg(1, i).unwrap()))
                .join()
                .unwrap();
            spawn_with(Placement::Pinned(1), async {
                (0..10).for_each(|i| RuntimeHandle::current().send_msg(1, i).unwrap())
            })
            .await
            .unwrap();
            assert_eq!(receiver.await.unwrap(), Some(1));
        });
        let d = deltas(&before, &handle.stats());
        assert_eq!(d[1].messages_received, 30, "{:?}", d[1]);
    });
}

#[test]
fn blocking_pool_counters_count_closures_and_threads() {
    let rt = Config::MsgRing.runtime(1);
    let handle = rt.handle();
    assert_eq!(handle.stats().blocking_spawned, 0);
    rt.block_on(async {
        for i in 0..5 {
            assert_eq!(ringsteal_rt::spawn_blocking(move || i).await.unwrap(), i);
        }
    });
    let stats = handle.stats();
    assert_eq!(stats.blocking_spawned, 5);
    assert!(
        (1..=5).contains(&stats.blocking_threads),
        "threads alive: {}",
        stats.blocking_threads
    );
}

#[test]
fn queue_gauges_count_what_waits_for_a_busy_shard_and_fall_to_zero() {
    with_every_runtime("queue gauges", 2, |config, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            // Shard 1 is kept inside one poll, then another (its thread waits on a std
            // channel), so what is placed there waits.
            let (first, release_first) = blocker_on_shard_1();
            let (second, release_second) = blocker_on_shard_1();
            first.started.recv().unwrap();
            let mut joins: Vec<_> = (0..5)
                .map(|_| spawn_with(Placement::Pinned(1), async {}))
                .collect();
            // Spawned from outside while shard 0 too is inside a poll (this one, joining the
            // thread): nobody takes them from the global queue yet.
            let h = handle.clone();
            let (external, seen) = std::thread::spawn(move || {
                let external: Vec<_> = (0..3).map(|_| h.spawn(async {})).collect();
                (external, h.stats())
            })
            .join()
            .unwrap();
            // The second blocker and the five, in shard 1's inbox.
            assert_eq!(seen.shards[1].tasks_queued, 6, "{config:?}: {seen:?}");
            assert_eq!(seen.queued_external, 3, "{config:?}: {seen:?}");
            assert_eq!(seen.total().tasks_queued, seen.shards[0].tasks_queued + 6);
            // Now the five wait in shard 1's run queue, behind the second blocker's poll.
            release_first.send(()).unwrap();
            second.started.recv().unwrap();
            let seen = handle.stats();
            assert_eq!(seen.shards[1].tasks_queued, 5, "{config:?}: {seen:?}");
            release_second.send(()).unwrap();
            joins.extend(external);
            joins.push(first.join);
            joins.push(second.join);
            for j in joins {
                j.await.unwrap();
            }
            // Each shard publishes an empty run queue at its next tick; wait for that.
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            loop {
                let stats = handle.stats();
                if stats.total().tasks_queued == 0 && stats.queued_external == 0 {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: still queued: {stats:?}"
                );
                ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
            }
        });
    });
}

/// A task on shard 1 that says when it started, then holds the shard's thread until
/// released.
struct Blocker {
    started: std::sync::mpsc::Receiver<()>,
    join: ringsteal_rt::JoinHandle<()>,
}

fn blocker_on_shard_1() -> (Blocker, std::sync::mpsc::Sender<()>) {
    let (started_tx, started) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let join = spawn_with(Placement::Pinned(1), async move {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    (Blocker { started, join }, release)
}

#[test]
fn busy_time_grows_while_a_shard_runs_and_not_while_it_is_parked() {
    const WORK: Duration = Duration::from_millis(60);
    with_every_runtime("busy time", 2, |config, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let before = handle.stats().shards[1].busy;
            // Shard 1 runs one task that holds its thread for WORK.
            spawn_with(Placement::Pinned(1), async {
                let start = std::time::Instant::now();
                while start.elapsed() < WORK {
                    std::hint::spin_loop();
                }
            })
            .await
            .unwrap();
            // The stretch under way counts up to the snapshot.
            let ran = handle.stats().shards[1].busy - before;
            assert!(ran >= WORK, "{config:?}: {ran:?} busy for {WORK:?} of work");
            // Now shard 1 has nothing to do: it parks, and its busy time stands still
            // (give or take the moment it takes to park).
            common::yield_until(|| handle.stats().shards[1].idle).await;
            let idle_from = handle.stats().shards[1].busy;
            ringsteal_rt::time::sleep(Duration::from_millis(100)).await;
            let stats = handle.stats();
            let grew = stats.shards[1].busy - idle_from;
            assert!(grew < WORK / 2, "{config:?}: {grew:?} busy while parked");
            assert!(stats.shards[0].busy > Duration::ZERO, "{config:?}: shard 0");
            assert_eq!(
                stats.total().busy,
                stats.shards[0].busy + stats.shards[1].busy
            );
        });
    });
}
