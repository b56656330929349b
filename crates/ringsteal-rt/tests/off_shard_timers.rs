//! Timers polled on a thread that runs no shard but is in a runtime's context, as tokio's
//! allow: a `spawn_blocking` closure that drives a `sleep`, a `timeout` or an `Interval`
//! with another executor, or a thread inside `RuntimeHandle::enter`. Before, any such poll
//! before the deadline panicked ("timers live in a shard's wheel").

mod common;

use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use common::{block_on_plain, hang_guard, with_every_runtime, HANG_LIMIT};
use ringsteal_rt::time::{interval, sleep, timeout, Instant};
use ringsteal_rt::{spawn_blocking, Runtime};

const NAP: Duration = Duration::from_millis(20);

#[test]
fn a_sleep_driven_by_another_executor_in_spawn_blocking_ends_at_its_deadline() {
    for shards in [1, 2] {
        with_every_runtime("sleep in spawn_blocking", shards, |_, rt| {
            let waited = rt.block_on(async {
                spawn_blocking(|| {
                    let start = Instant::now();
                    block_on_plain(sleep(NAP));
                    start.elapsed()
                })
                .await
                .unwrap()
            });
            assert!(waited >= NAP, "woke after {waited:?}");
        });
    }
}

#[test]
fn a_timeout_and_an_interval_work_off_the_shards() {
    with_every_runtime("timeout and interval in spawn_blocking", 2, |_, rt| {
        rt.block_on(async {
            spawn_blocking(|| {
                let late = block_on_plain(timeout(NAP, std::future::pending::<()>()));
                assert!(late.is_err(), "a pending future's timeout elapses");
                assert_eq!(block_on_plain(timeout(NAP, async { 3 })), Ok(3));
                let start = Instant::now();
                let mut ticks = interval(Duration::from_millis(5));
                for _ in 0..4 {
                    block_on_plain(ticks.tick());
                }
                assert!(start.elapsed() >= Duration::from_millis(15));
            })
            .await
            .unwrap();
        });
    });
}

#[test]
fn a_sleep_moved_off_its_shard_and_dropped_there_leaves_no_timer() {
    with_every_runtime("sleep moved off its shard", 2, |_, rt| {
        let handle = rt.handle();
        rt.block_on(async move {
            let mut nap = sleep(Duration::from_secs(3600));
            // Registered in this shard's wheel first.
            std::future::poll_fn(|cx| {
                assert!(std::pin::Pin::new(&mut nap).poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            spawn_blocking(move || {
                // Polled here, it moves to a wheel by message; dropped, it leaves it.
                let mut nap = nap;
                block_on_plain(std::future::poll_fn(|cx| {
                    assert!(std::pin::Pin::new(&mut nap).poll(cx).is_pending());
                    Poll::Ready(())
                }));
            })
            .await
            .unwrap();
            // The hang guard bounds this wait for the shards to carry the removals out.
            while handle.stats().total().timers_active > 0 {
                ringsteal_rt::yield_now().await;
            }
        });
    });
}

#[test]
fn a_sleep_reset_off_the_shards_wakes_its_task_at_the_new_deadline() {
    with_every_runtime("sleep reset off the shards", 2, |_, rt| {
        rt.block_on(async {
            spawn_blocking(|| {
                let start = Instant::now();
                let mut nap = sleep(Duration::from_secs(3600));
                let mut reset = false;
                block_on_plain(std::future::poll_fn(|cx| {
                    let poll = std::pin::Pin::new(&mut nap).poll(cx);
                    if !reset {
                        assert!(poll.is_pending());
                        // Set, then moved: the task must not need another poll to hear of
                        // the new deadline (it is parked until woken).
                        nap.reset(Instant::now() + NAP);
                        reset = true;
                    }
                    poll
                }));
                let waited = start.elapsed();
                assert!(
                    waited >= NAP && waited < Duration::from_secs(60),
                    "{waited:?}"
                );
            })
            .await
            .unwrap();
        });
    });
}

#[test]
fn a_sleep_polled_on_a_thread_inside_enter_completes() {
    hang_guard("sleep inside enter", HANG_LIMIT, || {
        let rt = Runtime::builder().shards(2).build().unwrap();
        let handle = rt.handle();
        let waited = std::thread::spawn(move || {
            let _entered = handle.enter();
            let start = Instant::now();
            block_on_plain(sleep(NAP));
            start.elapsed()
        })
        .join()
        .unwrap();
        assert!(waited >= NAP, "woke after {waited:?}");
    });
}

#[test]
fn a_sleep_polled_on_a_plain_thread_panics_saying_no_runtime_has_its_timer() {
    let polled = std::thread::spawn(|| block_on_plain(sleep(NAP))).join();
    let payload = polled.expect_err("a plain thread has no runtime for the timer");
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(text.contains("outside a ringsteal runtime"), "{text}");
}

#[test]
fn a_foreign_sleep_whose_runtime_shuts_down_panics_instead_of_waiting_for_ever() {
    hang_guard("foreign sleep at shutdown", HANG_LIMIT, || {
        let rt = Runtime::builder().shards(2).build().unwrap();
        let handle = rt.handle();
        let (set_tx, set_rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            let _entered = handle.enter();
            let mut nap = sleep(Duration::from_secs(3600));
            let mut told = false;
            block_on_plain(std::future::poll_fn(|cx| {
                let poll = std::pin::Pin::new(&mut nap).poll(cx);
                if !told {
                    told = true;
                    set_tx.send(()).unwrap();
                }
                poll
            }));
        });
        set_rx.recv().unwrap();
        drop(rt);
        let payload = sleeper.join().expect_err("the timer's runtime is gone");
        let text = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(text.contains("shut down"), "{text}");
    });
}
