//! Panic isolation: a panicking task is caught and reported through its `JoinHandle`; its
//! shard, the tasks beside it and the tasks spawned after it keep running.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use common::*;
use ringsteal_rt::{current_shard, spawn_with, Placement};

#[test]
fn many_panicking_tasks_do_not_stop_their_shard_or_the_tasks_beside_them() {
    quiet_intentional_panics();
    with_every_runtime("panic isolation", 2, |_, rt| {
        rt.block_on(async {
            // A long-lived task on shard 1 that must survive its neighbours' panics.
            let go = Signal::new();
            let g = go.clone();
            let survivor = spawn_with(Placement::Pinned(1), async move {
                g.wait_for(1).await;
                current_shard()
            });
            let mut panics = Vec::new();
            for i in 0..200u32 {
                let p = if i % 2 == 0 {
                    Placement::Pinned(1)
                } else {
                    Placement::Stealable
                };
                panics.push(spawn_with(p, async move {
                    if i % 4 < 2 {
                        // Panic after an await, not only in the first poll.
                        ringsteal_rt::yield_now().await;
                    }
                    panic!("INTENTIONAL test panic {i}");
                }));
            }
            for (i, h) in panics.into_iter().enumerate() {
                let err = h.await.unwrap_err();
                assert!(err.is_panic(), "task {i}: {err:?}");
                let msg = err.into_panic();
                assert_eq!(
                    msg.downcast_ref::<String>().unwrap(),
                    &format!("INTENTIONAL test panic {i}")
                );
            }
            go.add();
            assert_eq!(survivor.await.unwrap(), Some(1));
            // More work on the same shards still runs.
            let counter = Arc::new(AtomicUsize::new(0));
            let more: Vec<_> = (0..100)
                .map(|i| {
                    let c = counter.clone();
                    spawn_with(Placement::Pinned(i % 2), async move {
                        ringsteal_rt::yield_now().await;
                        c.fetch_add(1, SeqCst);
                        current_shard()
                    })
                })
                .collect();
            for (i, h) in more.into_iter().enumerate() {
                assert_eq!(h.await.unwrap(), Some(i % 2));
            }
            assert_eq!(counter.load(SeqCst), 100);
        });
    });
}

#[test]
fn a_panic_in_the_main_future_side_of_block_on_leaves_the_runtime_usable() {
    quiet_intentional_panics();
    let rt = Config::MsgRing.runtime(2);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            let h = spawn_with(Placement::Pinned(1), async { 1 });
            assert_eq!(h.await.unwrap(), 1);
            panic!("INTENTIONAL test panic in block_on");
        })
    }));
    assert!(caught.is_err());
    let out = rt.block_on(async {
        let a = spawn_with(Placement::Pinned(0), async { current_shard() });
        let b = spawn_with(Placement::Pinned(1), async { current_shard() });
        (a.await.unwrap(), b.await.unwrap())
    });
    assert_eq!(out, (Some(0), Some(1)));
}

#[test]
fn work_left_by_a_block_on_that_panicked_is_still_taken_by_another_shard() {
    // The stealable task queued by the panicking main future must not wait for the next
    // block_on: shard 0 is not driven any more, so another shard should take it.
    quiet_intentional_panics();
    with_every_runtime("panicked block_on", 2, |_, rt| {
        let left = std::sync::Mutex::new(None);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                *left.lock().unwrap() = Some(ringsteal_rt::spawn(async { current_shard() }));
                panic!("INTENTIONAL test panic after spawning");
            })
        }));
        assert!(caught.is_err());
        let handle = left.lock().unwrap().take().unwrap();
        let on = std::thread::spawn(move || block_on_plain(handle).unwrap())
            .join()
            .unwrap();
        assert_eq!(on, Some(1));
    });
}

#[test]
fn a_destructor_that_panics_during_abort_is_reported_as_a_panic() {
    quiet_intentional_panics();
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("INTENTIONAL test panic in a destructor");
        }
    }
    with_every_runtime("panicking destructor", 2, |_, rt| {
        rt.block_on(async {
            let started = Signal::new();
            let s = started.clone();
            let h = spawn_with(Placement::Pinned(1), async move {
                let _bomb = PanicOnDrop;
                s.add();
                std::future::pending::<()>().await;
            });
            started.wait_for(1).await;
            h.abort();
            let err = h.await.unwrap_err();
            assert!(err.is_panic(), "{err:?}");
            // Shard 1 is still alive.
            let on = spawn_with(Placement::Pinned(1), async { current_shard() });
            assert_eq!(on.await.unwrap(), Some(1));
        });
    });
}

#[test]
fn a_future_whose_destructor_panics_after_its_output_is_reported_as_a_panic() {
    // As tokio reports it: the task ended in a panic, whatever it returned first. (An
    // `async` block drops its locals before it returns: a hand-written future is needed.)
    quiet_intentional_panics();
    struct ReadyThenPanicOnDrop;
    impl std::future::Future for ReadyThenPanicOnDrop {
        type Output = u32;
        fn poll(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<u32> {
            std::task::Poll::Ready(7)
        }
    }
    impl Drop for ReadyThenPanicOnDrop {
        fn drop(&mut self) {
            panic!("{INTENTIONAL}: a destructor after the output");
        }
    }
    with_every_runtime("destructor panics after ready", 2, |_, rt| {
        rt.block_on(async {
            for placement in [Placement::Pinned(1), Placement::Stealable] {
                let err = spawn_with(placement, ReadyThenPanicOnDrop)
                    .await
                    .unwrap_err();
                assert!(err.is_panic(), "{placement:?}: {err:?}");
            }
        });
    });
}

/// A waker that panics when woken (a foreign executor's bug).
struct PanickyWaker;

impl std::task::Wake for PanickyWaker {
    fn wake(self: Arc<Self>) {
        panic!("{INTENTIONAL}: a JoinHandle's waker");
    }
}

#[test]
fn a_panicking_join_handle_waker_does_not_kill_the_shard() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    quiet_intentional_panics();
    with_every_runtime("panicking join waker", 2, |_, rt| {
        let handle = rt.handle();
        let gate = Signal::new();
        let g = gate.clone();
        let mut join = handle.spawn_with(Placement::Pinned(1), async move {
            g.wait_for(1).await;
            7
        });
        // Registers the panicking waker, from this plain thread.
        let waker = Waker::from(Arc::new(PanickyWaker));
        let first = Pin::new(&mut join).poll(&mut Context::from_waker(&waker));
        assert!(matches!(first, Poll::Pending));
        // The task completes on shard 1, which then wakes the JoinHandle.
        gate.add();
        // Shard 1 survives and runs the next task.
        let next = handle.spawn_with(Placement::Pinned(1), async { current_shard() });
        assert_eq!(block_on_plain(next).unwrap(), Some(1));
        assert_eq!(block_on_plain(join).unwrap(), 7);
    });
}
