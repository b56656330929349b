//! Edges of the time API on a real runtime, under every wake and ring configuration:
//! durations too long to count, resets from other threads, timeouts that complete, late
//! intervals, and cancel-safe group joins.

mod common;

use std::future::poll_fn;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use common::{block_on_plain, with_every_runtime};
use ringsteal_rt::sync::CancellationToken;
use ringsteal_rt::task::TaskGroup;
use ringsteal_rt::time::{
    interval, sleep, timeout, timeout_at, Instant, MissedTickBehavior, Sleep,
};
use ringsteal_rt::Placement;

/// A future that is pending at its first poll (waking itself) and ready with `v` at its
/// second: a timer around it is really registered, then completed.
fn pending_once<T: Unpin>(v: T) -> impl std::future::Future<Output = T> + Unpin {
    let mut v = Some(v);
    let mut polled = false;
    poll_fn(move |cx| {
        if polled {
            Poll::Ready(v.take().expect("polled after completion"))
        } else {
            polled = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
}

#[test]
fn durations_too_long_to_count_never_elapse() {
    with_every_runtime("huge durations", 1, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let forever = [
                Duration::from_micros(u64::MAX),
                Duration::from_millis(u64::MAX),
                Duration::from_secs(u64::MAX),
                Duration::MAX,
            ];
            for d in forever {
                assert!(
                    timeout(Duration::from_millis(5), sleep(d)).await.is_err(),
                    "sleep({d:?}) completed"
                );
                assert_eq!(timeout(d, pending_once(7)).await, Ok(7), "timeout({d:?})");
                if let Some(at) = Instant::now().checked_add(d) {
                    assert_eq!(timeout_at(at, pending_once(8)).await, Ok(8));
                }
            }
            let mut never = interval(Duration::MAX);
            never.tick().await; // the first tick is immediate
            assert!(timeout(Duration::from_millis(5), never.tick())
                .await
                .is_err());
            drop(never);
            assert_eq!(handle.stats().total().timers_active, 0);
        });
    });
}

#[test]
fn a_completed_timeout_removes_its_timer_before_it_is_dropped() {
    with_every_runtime("completed timeout", 1, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let mut t = pin!(timeout(Duration::from_secs(60), pending_once(1)));
            assert_eq!(t.as_mut().await, Ok(1));
            // `t` is still alive: its timer must already be gone.
            assert_eq!(handle.stats().total().timers_active, 0);
        });
    });
}

/// A `Sleep` shared between a waiting task and whoever resets it.
type SharedSleep = Arc<Mutex<Sleep>>;

/// Waits on the shared `Sleep`, checking under its lock (so no reset can slip in between)
/// that it completes only once its current deadline has passed.
fn wait_on(sleep: SharedSleep) -> impl std::future::Future<Output = ()> + Send {
    poll_fn(move |cx| {
        let mut sleep = sleep.lock().unwrap();
        sleep.poll_elapsed(cx).map(|()| {
            assert!(
                Instant::now() >= sleep.deadline(),
                "a Sleep completed before its deadline"
            );
        })
    })
}

/// Spawns a task on shard 1 that registers `sleep`'s timer there, due `due` after the
/// registration, then waits on it (through [`wait_on`]) and returns when it woke; resolves
/// once the timer is registered. The deadline is set on shard 1, right before the poll that
/// registers it, and set again if it passed in between (the thread was descheduled that
/// long): the timer is registered with a deadline still ahead, however loaded the machine.
async fn spawn_waiter_on_shard_1(
    handle: &ringsteal_rt::RuntimeHandle,
    sleep: &SharedSleep,
    due: Duration,
) -> ringsteal_rt::JoinHandle<Instant> {
    let registered = CancellationToken::new();
    let waiter = {
        let sleep = sleep.clone();
        let registered = registered.clone();
        handle.spawn_with(Placement::Pinned(1), async move {
            poll_fn(|cx| {
                let mut sleep = sleep.lock().unwrap();
                loop {
                    sleep.reset(Instant::now() + due);
                    if sleep.poll_elapsed(cx).is_pending() {
                        return Poll::Ready(());
                    }
                }
            })
            .await;
            registered.cancel();
            wait_on(sleep).await;
            Instant::now()
        })
    };
    registered.cancelled().await;
    waiter
}

#[test]
fn a_reset_from_another_shard_or_thread_wakes_the_waiter_at_the_new_deadline() {
    with_every_runtime("remote reset", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            for from_plain_thread in [false, true] {
                let sleep: SharedSleep = Arc::new(Mutex::new(sleep(Duration::from_secs(600))));
                let waiter =
                    spawn_waiter_on_shard_1(&handle, &sleep, Duration::from_secs(600)).await;
                let deadline = Instant::now() + Duration::from_millis(3);
                if from_plain_thread {
                    let sleep = sleep.clone();
                    std::thread::spawn(move || sleep.lock().unwrap().reset(deadline))
                        .join()
                        .unwrap();
                } else {
                    // From shard 0: the entry lives in shard 1's wheel.
                    sleep.lock().unwrap().reset(deadline);
                }
                let woke = waiter.await.unwrap();
                assert!(woke >= deadline, "woken before the new deadline");
            }
        });
    });
}

#[test]
fn a_reset_to_a_later_deadline_from_elsewhere_is_never_early() {
    with_every_runtime("remote reset later", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let sleep: SharedSleep = Arc::new(Mutex::new(sleep(Duration::from_secs(600))));
            // `wait_on` checks, under the lock, that the sleep completes only after its
            // deadline as it stands then: the old one if shard 1 was too slow to see the
            // reset at all, else the new one. Registered on shard 1 due in 20 ms.
            let waiter = spawn_waiter_on_shard_1(&handle, &sleep, Duration::from_millis(20)).await;
            // Hold the sleep while its old deadline passes, so the old entry is due (and may
            // fire, waking the waiter, which then waits for the lock) before the reset:
            // whichever of the firing and the reset shard 1 sees first, the waiter must
            // not complete before the new deadline.
            {
                let mut guard = sleep.lock().unwrap();
                let old = guard.deadline();
                while Instant::now() <= old {
                    std::hint::spin_loop();
                }
                guard.reset(Instant::now() + Duration::from_millis(20));
            }
            waiter.await.unwrap();
        });
    });
}

#[test]
fn a_late_delay_interval_keeps_a_full_period_after_the_late_tick() {
    with_every_runtime("late delay interval", 1, |_, rt| {
        rt.block_on(async {
            let period = Duration::from_millis(20);
            // A first tick seen more than the missed-tick threshold (5 ms) after it was due
            // is itself late, and Delay moves the schedule at once: a busy machine gets a few
            // more tries to see it on time.
            let (mut iv, first) = 'on_time: {
                for _ in 0..20 {
                    let mut iv = interval(period);
                    iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
                    let first = iv.tick().await;
                    if Instant::now() <= first + Duration::from_millis(5) {
                        break 'on_time (iv, first);
                    }
                }
                eprintln!("SKIPPED: no first tick was seen on time");
                return;
            };
            // Make the second tick late by half a period (more than the 5 ms threshold, less
            // than a full period) by keeping the shard busy.
            let busy_until = first + period + period / 2;
            while Instant::now() < busy_until {
                std::hint::spin_loop();
            }
            let second = iv.tick().await;
            assert_eq!(second, first + period);
            let third = iv.tick().await;
            assert!(
                third - second >= period * 3 / 2,
                "Delay: the tick after a late one is a full period after it was seen, \
                 not on the old schedule ({:?} apart)",
                third - second
            );
        });
    });
}

#[test]
fn an_abandoned_join_all_leaves_the_tasks_in_the_group() {
    with_every_runtime("cancel-safe join_all", 2, |_, rt| {
        rt.block_on(async {
            let mut group = TaskGroup::new();
            let release = CancellationToken::new();
            for shard in 0..2 {
                let release = release.clone();
                group.spawn_with(Placement::Pinned(shard), async move {
                    release.cancelled().await;
                    shard
                });
            }
            group.spawn_with(Placement::Pinned(0), async { 9 });
            assert!(timeout(Duration::from_millis(5), group.join_all())
                .await
                .is_err());
            assert_eq!(group.len(), 3, "an abandoned join keeps every task");
            group.abort_all();
            let results = group.join_all().await;
            assert_eq!(results.len(), 3);
            assert!(results[0].as_ref().unwrap_err().is_cancelled());
            assert!(results[1].as_ref().unwrap_err().is_cancelled());
            assert_eq!(*results[2].as_ref().unwrap(), 9, "its result was kept");
            assert!(group.is_empty());
        });
    });
}

#[test]
fn run_until_cancelled_prefers_cancellation_over_a_ready_future() {
    let token = CancellationToken::new();
    token.cancel();
    assert_eq!(block_on_plain(token.run_until_cancelled(async { 1 })), None);
}

#[test]
fn a_very_deep_token_chain_cancels_and_drops_without_recursion() {
    // Cancelling or dropping a chain of 100,000 tokens must not use stack per level: run it
    // on a thread with a small stack, where one frame per level would overflow.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let root = CancellationToken::new();
            let mut leaf = root.clone();
            for _ in 0..100_000 {
                leaf = leaf.child_token();
            }
            root.cancel();
            assert!(leaf.is_cancelled());
            drop(root);
            drop(leaf);
            let root = CancellationToken::new();
            let mut leaf = root.child_token();
            for _ in 0..100_000 {
                leaf = leaf.child_token();
            }
            drop(root);
            drop(leaf); // frees the whole chain
        })
        .unwrap()
        .join()
        .expect("a deep token chain overflowed the stack");
}

#[test]
fn a_spinning_shard_stops_spinning_for_a_due_timer_or_an_outside_spawn() {
    // With a spin limit far longer than the work (and than the hang guard), a shard that
    // only checked its own queues while spinning would fire the timer, or run the spawn,
    // only once the limit ran out: the hang guard reports that (no real-time bound here, so
    // a loaded machine cannot fail it).
    let limit = Duration::from_secs(3600);
    common::under_every_config("spinning shard", 1, move |_, builder| {
        let rt = builder
            .idle(ringsteal_rt::IdleStrategy::SpinThenPark(limit))
            .build()
            .unwrap();
        let handle = rt.handle();
        rt.block_on(async move {
            sleep(Duration::from_millis(2)).await;
            let spawned = std::thread::spawn(move || handle.spawn(async { 3 }))
                .join()
                .unwrap();
            assert_eq!(spawned.await.unwrap(), 3);
        });
    });
}
