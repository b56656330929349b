//! Wakes: across shards (ping-pong between pinned tasks, the `block_on` future woken from
//! elsewhere), from plain threads, and the runtime context in blocking closures and entered
//! threads.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use ringsteal_rt::{
    current_shard, spawn_with, BuildError, Feature, Placement, Runtime, RuntimeHandle,
    WakeMechanism,
};

const ROUNDS: u64 = 2000;

#[test]
fn tasks_pinned_on_two_shards_ping_pong_through_cross_shard_wakes() {
    with_every_runtime("ping-pong", 2, |_, rt| {
        let before = rt.handle().stats();
        rt.block_on(async {
            let (ping, pong) = (Signal::new(), Signal::new());
            let (pi, po) = (ping.clone(), pong.clone());
            let left = spawn_with(Placement::Pinned(0), async move {
                for i in 1..=ROUNDS {
                    pi.add();
                    po.wait_for(i).await;
                }
                current_shard()
            });
            let (pi, po) = (ping.clone(), pong.clone());
            let right = spawn_with(Placement::Pinned(1), async move {
                for i in 1..=ROUNDS {
                    pi.wait_for(i).await;
                    po.add();
                }
                current_shard()
            });
            assert_eq!(right.await.unwrap(), Some(1));
            assert_eq!(left.await.unwrap(), Some(0));
            assert_eq!((ping.get(), pong.get()), (ROUNDS, ROUNDS));
        });
        let after = rt.handle().stats();
        // How many rounds needed a wake depends on timing (a side that finds the other's
        // signal already given does not wait), but the cross-shard path was used.
        let woken: u64 = (0..2)
            .map(|s| after.shards[s].remote_wakes - before.shards[s].remote_wakes)
            .sum();
        assert!(woken > 0, "no remote wake in {ROUNDS} rounds");
    });
}

#[test]
fn the_block_on_future_is_woken_from_another_shard_and_from_a_plain_thread() {
    with_every_runtime("main future wakes", 2, |_, rt| {
        rt.block_on(async {
            ping_pong_with_shard_1(ROUNDS / 4).await;

            let from_thread = Signal::new();
            let f = from_thread.clone();
            let thread = std::thread::spawn(move || {
                for _ in 0..ROUNDS / 4 {
                    f.add();
                }
            });
            from_thread.wait_for(ROUNDS / 4).await;
            thread.join().unwrap();
        });
    });
}

#[test]
fn a_plain_thread_wakes_tasks_on_every_shard_and_is_woken_by_them() {
    with_every_runtime("plain thread wakes", 3, |_, rt| {
        rt.block_on(async {
            let go = Signal::new();
            let acks: Vec<Arc<Signal>> = (0..3).map(|_| Signal::new()).collect();
            let tasks: Vec<_> = (0..3)
                .map(|s| {
                    let (go, ack) = (go.clone(), acks[s].clone());
                    spawn_with(Placement::Pinned(s), async move {
                        for i in 1..=ROUNDS / 4 {
                            go.wait_for(i).await;
                            assert_eq!(current_shard(), Some(s));
                            ack.add();
                        }
                    })
                })
                .collect();
            // The plain thread waits for the acks with a thread-parking waker, which the
            // shards wake.
            let (g, a) = (go.clone(), acks.clone());
            let thread = std::thread::spawn(move || {
                for i in 1..=ROUNDS / 4 {
                    g.add();
                    for ack in &a {
                        block_on_plain(ack.wait_for(i));
                    }
                }
            });
            for t in tasks {
                t.await.unwrap();
            }
            // Join the thread without blocking shard 0.
            ringsteal_rt::spawn_blocking(move || thread.join().unwrap())
                .await
                .unwrap();
        });
    });
}

#[test]
fn runtime_handle_current_works_inside_spawn_blocking() {
    with_every_runtime("current in blocking", 2, |_, rt| {
        rt.block_on(async {
            let inner = ringsteal_rt::spawn_blocking(|| {
                assert_eq!(current_shard(), None, "a blocking thread is not a shard");
                let handle = RuntimeHandle::current();
                assert_eq!(handle.shards(), 2);
                let pinned = handle.spawn_with(Placement::Pinned(1), async { current_shard() });
                let free = ringsteal_rt::spawn(async { current_shard().is_some() });
                (pinned, free)
            });
            let (pinned, free) = inner.await.unwrap();
            assert_eq!(pinned.await.unwrap(), Some(1));
            assert!(free.await.unwrap());
        });
    });
}

#[test]
fn enter_guards_dropped_out_of_order_leave_no_runtime_current() {
    with_every_runtime("enter out of order", 2, |config, rt| {
        let other = config.runtime(3);
        let (h2, h3) = (rt.handle(), other.handle());
        std::thread::spawn(move || {
            let outer = h2.enter();
            let inner = h3.enter();
            drop(outer); // out of order: the inner runtime stays current
            assert_eq!(RuntimeHandle::current().shards(), 3);
            drop(inner);
            assert!(
                RuntimeHandle::try_current().is_none(),
                "a runtime stayed current after all its guards were dropped"
            );
        })
        .join()
        .unwrap();
        drop(other);
    });
}

#[test]
fn entering_a_handle_makes_its_runtime_current_on_a_plain_thread() {
    with_every_runtime("enter", 2, |config, rt| {
        let other = config.runtime(3);
        let (h2, h3) = (rt.handle(), other.handle());
        let joins = std::thread::spawn(move || {
            assert!(RuntimeHandle::try_current().is_none());
            let outer = h2.enter();
            assert_eq!(RuntimeHandle::current().shards(), 2);
            let a = ringsteal_rt::spawn(async { current_shard() });
            let b = ringsteal_rt::spawn_with(Placement::Pinned(1), async { current_shard() });
            let c = ringsteal_rt::spawn_blocking(|| RuntimeHandle::current().shards());
            {
                let _inner = h3.enter();
                assert_eq!(RuntimeHandle::current().shards(), 3);
            }
            assert_eq!(
                RuntimeHandle::current().shards(),
                2,
                "the outer runtime is back"
            );
            drop(outer);
            assert!(RuntimeHandle::try_current().is_none());
            (a, b, c)
        })
        .join()
        .unwrap();
        rt.block_on(async move {
            let (a, b, c) = joins;
            assert!(a.await.unwrap().is_some());
            assert_eq!(b.await.unwrap(), Some(1));
            assert_eq!(c.await.unwrap(), 2);
        });
    });
}

/// Inside a task, entering another runtime makes it current (as tokio's `Handle::enter`
/// inside a runtime): `spawn`, `spawn_blocking` and `RuntimeHandle::current` use it until
/// the guard drops, while the task's own ops and timers stay on its shard's ring. A runtime
/// entered *before* `block_on` is not current inside it: the shard's runtime is.
#[test]
fn a_runtime_entered_inside_a_task_is_current_until_its_guard_drops() {
    with_every_runtime("enter inside a task", 2, |config, rt| {
        let other = config.runtime(3);
        let h3 = other.handle();
        let h3_outer = other.handle();
        let _entered_before = h3_outer.enter();
        rt.block_on(async move {
            assert_eq!(
                RuntimeHandle::current().shards(),
                2,
                "block_on's runtime is current"
            );
            // Entered, spawned, and let go before any await (the guard is the thread's, so
            // held across an await it would be every task's on this shard).
            let guard = h3.enter();
            assert_eq!(RuntimeHandle::current().shards(), 3);
            let spawned = ringsteal_rt::spawn(async { RuntimeHandle::current().shards() });
            let blocking = ringsteal_rt::spawn_blocking(|| RuntimeHandle::current().shards());
            // A timer this task registers while entered goes to its own shard's wheel, not
            // to the entered runtime's (polled once here, in this poll: no other task runs).
            let mut timer = Box::pin(ringsteal_rt::time::sleep(std::time::Duration::from_millis(
                1,
            )));
            let own_timers = || RuntimeHandle::current().stats().total().timers_active;
            let before = (own_timers(), h3.stats().total().timers_active);
            let pending = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::future::Future::poll(timer.as_mut(), cx).is_pending())
            })
            .await;
            assert!(pending);
            drop(guard);
            assert_eq!(
                own_timers(),
                before.0 + 1,
                "{config:?}: not on the task's shard"
            );
            assert_eq!(h3.stats().total().timers_active, before.1, "{config:?}");
            timer.await;
            assert_eq!(spawned.await.unwrap(), 3);
            assert_eq!(blocking.await.unwrap(), 3);
            assert_eq!(
                RuntimeHandle::current().shards(),
                2,
                "back to the task's runtime"
            );
            let spawned = ringsteal_rt::spawn(async { RuntimeHandle::current().shards() });
            assert_eq!(spawned.await.unwrap(), 2);
        });
        assert_eq!(
            RuntimeHandle::current().shards(),
            3,
            "the outer guard holds again"
        );
    });
}

/// Taking MSG_RING away in the builder makes a runtime behave as on a kernel without it:
/// requiring MSG_RING fails to build, and `Auto` rings every doorbell through eventfds,
/// which still deliver every cross-shard wake.
#[test]
fn a_runtime_built_without_msg_ring_wakes_through_eventfds() {
    let required = Runtime::builder()
        .shards(2)
        .wake(WakeMechanism::MsgRing)
        .without_feature(Feature::MsgRing)
        .build();
    assert!(
        matches!(required, Err(BuildError::Config(_))),
        "{required:?}"
    );
    hang_guard("ping-pong without MSG_RING", HANG_LIMIT, || {
        let rt = Runtime::builder()
            .shards(2)
            .without_feature(Feature::MsgRing)
            .build()
            .unwrap();
        assert!(!rt.features().supports(Feature::MsgRing));
        rt.block_on(ping_pong_with_shard_1(ROUNDS / 4));
        let stats = rt.handle().stats().total();
        assert_eq!(stats.msg_ring_doorbells, 0, "{stats:?}");
    });
}

/// Taking ring-less MSG_RING (`IORING_REGISTER_SEND_MSG_RING`, 6.13) away makes a runtime
/// behave as on a 5.18–6.12 kernel: shards still ring each other with MSG_RING, but a thread
/// without a ring (a plain thread holding a handle, a blocking-pool thread) rings a sleeping
/// shard's eventfd instead. Messages sent to an idle shard from a plain thread, spawns onto it
/// joined on that thread, and blocking-pool results all arrive; the idle shard's eventfd
/// doorbells show that path was taken. Under every wake mechanism and ring mode (with SQPOLL,
/// whose rings cannot send MSG_RING, shard-to-shard doorbells take the eventfd too).
#[test]
fn threads_without_a_ring_wake_shards_through_eventfds_without_ring_less_msg_ring() {
    /// Rounds after which an idle shard has surely been found asleep at least once.
    const MAX_ROUNDS: u64 = 2000;
    under_every_config("foreign wakes without SendMsgRing", 2, |config, b| {
        let rt = b.without_feature(Feature::SendMsgRing).build().unwrap();
        assert!(!rt.features().supports(Feature::SendMsgRing));
        let handle = rt.handle();
        let doorbells_on_1 = |h: &RuntimeHandle| h.stats().shards[1].eventfd_doorbells;
        let before = doorbells_on_1(&handle);
        rt.block_on(async {
            // Shard 1 receives one message at a time and acknowledges it, then has nothing
            // to do and goes to sleep; the plain thread sends the next message once it has
            // the acknowledgement, until one of them found shard 1 asleep.
            let ack = Signal::new();
            let a = ack.clone();
            let stop = u64::MAX;
            let receiver = spawn_with(Placement::Pinned(1), async move {
                let mut got = Vec::new();
                loop {
                    let m = ringsteal_rt::recv_msg().await;
                    if m == stop {
                        return got;
                    }
                    got.push(m);
                    a.add();
                }
            });
            let h = rt.handle();
            let sender = std::thread::spawn(move || {
                let mut sent = 0;
                while sent < MAX_ROUNDS && doorbells_on_1(&h) == before {
                    h.send_msg(1, sent).unwrap();
                    sent += 1;
                    block_on_plain(ack.wait_for(sent));
                }
                h.send_msg(1, stop).unwrap();
                // Spawns onto the shards, joined on this thread: the shard wakes it.
                let joins: Vec<_> = (0..20u64)
                    .map(|i| {
                        h.spawn_with(Placement::Pinned((i % 2) as usize), async move { i * 3 })
                    })
                    .collect();
                let sum: u64 = joins.into_iter().map(|j| block_on_plain(j).unwrap()).sum();
                (sent, sum)
            });
            let got = receiver.await.unwrap();
            // Blocking-pool results wake tasks on both shards.
            let blocking: Vec<_> = (0..10u64)
                .map(|i| {
                    spawn_with(Placement::Pinned((i % 2) as usize), async move {
                        ringsteal_rt::spawn_blocking(move || i + 1).await.unwrap()
                    })
                })
                .collect();
            let mut total = 0;
            for j in blocking {
                total += j.await.unwrap();
            }
            assert_eq!(total, (1..=10).sum::<u64>(), "{config:?}");
            let (sent, sum) = ringsteal_rt::spawn_blocking(move || sender.join().unwrap())
                .await
                .unwrap();
            assert_eq!(got, (0..sent).collect::<Vec<_>>(), "{config:?}");
            assert_eq!(sum, (0..20u64).map(|i| i * 3).sum::<u64>(), "{config:?}");
            // Shard-to-shard wakes still arrive, by MSG_RING where the ring can send it.
            ping_pong_with_shard_1(200).await;
        });
        assert!(
            doorbells_on_1(&handle) > before,
            "{config:?}: {MAX_ROUNDS} messages to an idle shard and no eventfd doorbell: {:?}",
            handle.stats().shards[1]
        );
    });
}

#[test]
fn a_spawn_from_a_plain_thread_runs_when_the_block_on_it_woke_returns_at_once() {
    // A plain thread's spawn goes to the injector and rings one sleeping shard. With every
    // shard asleep that may be shard 0, parked in `block_on`; if the main future is ready
    // when shard 0 wakes, `block_on` returns without looking at the injector, and no worker
    // was rung for the task. Leaving `block_on` must pass the work on.
    with_every_runtime("spawn at block_on's return", 2, |config, rt| {
        let handle = rt.handle();
        // SAFETY: gettid has no preconditions.
        let main_tid = unsafe { libc::gettid() };
        let shard_1_tid = rt.block_on(async {
            ringsteal_rt::spawn_with(Placement::Pinned(1), async {
                // SAFETY: gettid has no preconditions.
                unsafe { libc::gettid() }
            })
            .await
            .unwrap()
        });
        for round in 0..20 {
            let token = ringsteal_rt::sync::CancellationToken::new();
            let (tx, rx) = std::sync::mpsc::channel();
            let spawner = {
                let (handle, token) = (handle.clone(), token.clone());
                std::thread::spawn(move || {
                    // Both shards asleep: the spawn's doorbell may go to either.
                    while !(blocked_in_io_uring_enter(main_tid)
                        && blocked_in_io_uring_enter(shard_1_tid))
                    {
                        std::thread::yield_now();
                    }
                    drop(handle.spawn(async move { tx.send(()).unwrap() }));
                    token.cancel();
                })
            };
            rt.block_on(token.cancelled());
            spawner.join().unwrap();
            // The main thread stays out of block_on: only shard 1 can run the task.
            rx.recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{config:?}, round {round}: the spawn never ran"));
        }
    });
}

/// A thread-local whose destructor, as the thread exits, asks for the runtime, tries to
/// spawn and enters one: after the thread's record of entered runtimes is gone.
struct AsksAtExit {
    handle: RuntimeHandle,
    answers: std::sync::mpsc::Sender<(bool, bool, bool)>,
}

impl Drop for AsksAtExit {
    fn drop(&mut self) {
        let current = RuntimeHandle::try_current().is_some();
        let spawned = ringsteal_rt::try_spawn_with(Placement::Stealable, async {}).is_ok();
        let entered = {
            let _guard = self.handle.enter();
            RuntimeHandle::try_current().is_some()
        };
        let _ = self.answers.send((current, spawned, entered));
    }
}

thread_local! {
    static ASKS_AT_EXIT: std::cell::RefCell<Option<AsksAtExit>> = const { std::cell::RefCell::new(None) };
}

#[test]
fn a_thread_local_destructor_asking_for_the_runtime_gets_none_not_a_panic() {
    // Destructors run in the reverse order of the thread-locals' first use: the runtime's
    // record of entered runtimes, first used after `ASKS_AT_EXIT`, is gone before its
    // destructor runs. A panic there would abort the whole test binary.
    let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = rt.handle();
    std::thread::spawn(move || {
        ASKS_AT_EXIT.with(|slot| {
            *slot.borrow_mut() = Some(AsksAtExit {
                handle: handle.clone(),
                answers: tx,
            })
        });
        let guard = handle.enter();
        assert!(RuntimeHandle::try_current().is_some());
        drop(guard);
    })
    .join()
    .expect("the thread exited without a panic");
    let answers = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the destructor ran and answered");
    assert_eq!(
        answers,
        (false, false, false),
        "no runtime is current, nothing spawns and entering enters nothing, once the \
         thread's record is gone"
    );
}
