//! Cooperative fairness: a task that wakes itself in a loop cannot starve the other tasks of
//! its shard, its timers, wakes from other shards, or the future given to `block_on`.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use common::*;
use ringsteal_rt::{current_shard, spawn_with, JoinHandle, Placement};

/// Spawns on `shard` a task that yields forever (until `stop`), counting its polls.
fn spawn_hog(shard: usize, stop: &Arc<AtomicBool>, polls: &Arc<AtomicU64>) -> JoinHandle<()> {
    let (stop, polls) = (stop.clone(), polls.clone());
    spawn_with(Placement::Pinned(shard), async move {
        while !stop.load(SeqCst) {
            polls.fetch_add(1, SeqCst);
            ringsteal_rt::yield_now().await;
        }
    })
}

/// A future that wakes itself and returns `Pending` forever (without `yield_now`).
struct SelfWaker(Arc<AtomicBool>);

impl Future for SelfWaker {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.load(SeqCst) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn a_task_yielding_forever_does_not_starve_the_other_tasks_of_its_shard() {
    with_every_runtime("hog vs tasks", 2, |_, rt| {
        rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let polls = Arc::new(AtomicU64::new(0));
            let hog = spawn_hog(1, &stop, &polls);
            let self_waker = spawn_with(Placement::Pinned(1), SelfWaker(stop.clone()));
            yield_until(|| polls.load(SeqCst) > 10).await;
            for round in 0..20 {
                let handles: Vec<_> = (0..10)
                    .map(|i| {
                        spawn_with(Placement::Pinned(1), async move {
                            ringsteal_rt::yield_now().await;
                            (i, current_shard())
                        })
                    })
                    .collect();
                for (i, h) in handles.into_iter().enumerate() {
                    assert_eq!(h.await.unwrap(), (i, Some(1)), "round {round}");
                }
            }
            stop.store(true, SeqCst);
            hog.await.unwrap();
            self_waker.await.unwrap();
        });
    });
}

#[test]
fn a_task_yielding_forever_does_not_starve_timers_on_its_shard() {
    with_every_runtime("hog vs timers", 2, |_, rt| {
        rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let polls = Arc::new(AtomicU64::new(0));
            let hog = spawn_hog(1, &stop, &polls);
            yield_until(|| polls.load(SeqCst) > 10).await;
            let slept = spawn_with(Placement::Pinned(1), async {
                let start = Instant::now();
                ringsteal_rt::time::sleep(Duration::from_millis(5)).await;
                let mut ticks = ringsteal_rt::time::interval(Duration::from_millis(1));
                for _ in 0..5 {
                    ticks.tick().await;
                }
                (current_shard(), start.elapsed())
            });
            let (on, took) = slept.await.unwrap();
            assert_eq!(on, Some(1));
            assert!(took >= Duration::from_millis(9), "fired early: {took:?}");
            stop.store(true, SeqCst);
            hog.await.unwrap();
        });
    });
}

#[test]
fn a_task_yielding_forever_does_not_starve_wakes_from_other_shards() {
    with_every_runtime("hog vs remote wakes", 2, |_, rt| {
        rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let polls = Arc::new(AtomicU64::new(0));
            let hogs = [spawn_hog(1, &stop, &polls), spawn_hog(1, &stop, &polls)];
            yield_until(|| polls.load(SeqCst) > 10).await;
            let (ping, pong) = (Signal::new(), Signal::new());
            let (pi, po) = (ping.clone(), pong.clone());
            let responder = spawn_with(Placement::Pinned(1), async move {
                for i in 1..=100 {
                    pi.wait_for(i).await;
                    po.add();
                }
            });
            for i in 1..=100 {
                ping.add();
                pong.wait_for(i).await;
            }
            responder.await.unwrap();
            stop.store(true, SeqCst);
            for h in hogs {
                h.await.unwrap();
            }
        });
    });
}

#[test]
fn a_task_yielding_forever_on_shard_0_does_not_starve_the_block_on_future() {
    with_every_runtime("hog vs block_on", 2, |_, rt| {
        rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let polls = Arc::new(AtomicU64::new(0));
            let hog = spawn_hog(0, &stop, &polls);
            let self_waker = spawn_with(Placement::Pinned(0), SelfWaker(stop.clone()));
            // The main future sleeps, is woken from shard 1, and yields, all beside the hog.
            ringsteal_rt::time::sleep(Duration::from_millis(2)).await;
            let other = spawn_with(Placement::Pinned(1), async { current_shard() });
            assert_eq!(other.await.unwrap(), Some(1));
            for _ in 0..100 {
                ringsteal_rt::yield_now().await;
            }
            assert!(polls.load(SeqCst) > 0);
            stop.store(true, SeqCst);
            hog.await.unwrap();
            self_waker.await.unwrap();
        });
    });
}

/// A chain of local spawns (each task spawns the next, so the shard's own deque is never
/// empty) must not starve a task spawned from a plain thread: it runs while the chain is
/// still going. The chain goes on until the outside task has run, so a starved one fails the
/// test at the hang guard, however long the outside thread took to spawn it.
#[test]
fn a_chain_of_local_spawns_does_not_starve_spawns_from_outside() {
    fn link(n: u64, count: Arc<AtomicU64>, outsider_ran: Arc<AtomicBool>, done: Arc<Signal>) {
        count.store(n, SeqCst);
        if outsider_ran.load(SeqCst) {
            done.add();
            return;
        }
        drop(ringsteal_rt::spawn(async move {
            link(n + 1, count, outsider_ran, done)
        }));
    }
    hang_guard("injector starvation", HANG_LIMIT, || {
        let rt = Config::MsgRing.runtime(1);
        let handle = rt.handle();
        rt.block_on(async move {
            let (count, done) = (Arc::new(AtomicU64::new(0)), Signal::new());
            let ran = Arc::new(AtomicBool::new(false));
            let (c, r, d) = (count.clone(), ran.clone(), done.clone());
            drop(ringsteal_rt::spawn(async move { link(1, c, r, d) }));
            let (c, r, h) = (count.clone(), ran.clone(), handle.clone());
            let outsider = std::thread::spawn(move || {
                spin_until(|| c.load(SeqCst) > 100);
                h.spawn(async move { r.store(true, SeqCst) })
            });
            done.wait_for(1).await;
            outsider.join().unwrap().await.unwrap();
        });
    });
}

/// On one shard, two tasks that each run `yield_once` in a loop beside a task completing
/// NOPs: how many NOPs completed (at least) and during how many yields. The second yielder
/// keeps the run queue non-empty, so a yield that only requeued its task would be polled
/// again within the tick, before the shard looks at its ring.
async fn nops_during_yields<F, Fut>(yield_once: F) -> (u64, u64)
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let stop = Arc::new(AtomicBool::new(false));
    let (yields, nops) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let nopper = ringsteal_rt::spawn({
        let (stop, nops) = (stop.clone(), nops.clone());
        async move {
            while !stop.load(SeqCst) {
                ringsteal_rt::op::nop().await.unwrap();
                nops.fetch_add(1, SeqCst);
            }
        }
    });
    let yielders: Vec<_> = (0..2)
        .map(|_| {
            let (stop, yields, yield_once) = (stop.clone(), yields.clone(), yield_once.clone());
            ringsteal_rt::spawn(async move {
                while !stop.load(SeqCst) {
                    yields.fetch_add(1, SeqCst);
                    yield_once().await;
                }
            })
        })
        .collect();
    yield_until(|| yields.load(SeqCst) >= 3_000).await;
    stop.store(true, SeqCst);
    let (yielded, done) = (yields.load(SeqCst), nops.load(SeqCst));
    for y in yielders {
        y.await.unwrap();
    }
    nopper.await.unwrap();
    (done, yielded)
}

/// A task that yields in a loop runs again only after its shard has taken in its
/// completions, as tokio's `yield_now` waits for its driver: the I/O of the shard's other
/// tasks moves once per yield, not once per tick of 61 polls. (With a yield that only
/// requeued the task, about 1 NOP completed per 30 yields here.)
#[test]
fn each_yield_lets_the_shard_take_in_its_completions_first() {
    with_every_runtime("yield vs io", 1, |config, rt| {
        let (done, yields) = rt.block_on(nops_during_yields(ringsteal_rt::yield_now));
        // (With SQPOLL a NOP completes when the kernel's thread gets to it.)
        assert!(
            done >= yields / 4 || config == Config::SqPoll,
            "{done} NOPs completed during {yields} yields"
        );
    });
}

/// A yield under an executor nested inside a task (`futures::executor::block_on`, here
/// `block_on_plain`) wakes that executor at once: deferring its waker to the shard's next
/// reap would never wake it, since the shard is blocked in that very poll (tokio issue 6996).
/// The task's own yields still wait for the reap (the test above).
#[test]
fn a_yield_under_an_executor_nested_in_a_task_wakes_that_executor() {
    with_every_runtime("nested yield in a task", 2, |_, rt| {
        rt.block_on(async {
            let handles: Vec<_> = (0..2)
                .map(|shard| {
                    spawn_with(Placement::Pinned(shard), async {
                        block_on_plain(async {
                            for _ in 0..100 {
                                ringsteal_rt::yield_now().await;
                            }
                            current_shard()
                        })
                    })
                })
                .collect();
            for (shard, h) in handles.into_iter().enumerate() {
                assert_eq!(h.await.unwrap(), Some(shard));
            }
        });
    });
}

/// The same under the future given to `block_on`, which shard 0 polls on the caller's thread.
#[test]
fn a_yield_under_an_executor_nested_in_block_on_wakes_that_executor() {
    with_every_runtime("nested yield in block_on", 1, |_, rt| {
        let shard = rt.block_on(async {
            block_on_plain(async {
                for _ in 0..100 {
                    ringsteal_rt::yield_now().await;
                }
                current_shard()
            })
        });
        assert_eq!(shard, Some(0));
    });
}

/// A waker that wraps a task's, as `FuturesUnordered`'s does (a different waker that wakes
/// the task when woken).
struct Wrapping(std::task::Waker);

impl std::task::Wake for Wrapping {
    fn wake(self: Arc<Self>) {
        self.0.wake_by_ref();
    }
}

/// A `yield_now` polled with a wrapping waker, as under `FuturesUnordered`.
async fn yield_through_a_wrapped_waker() {
    let mut yielding = std::pin::pin!(ringsteal_rt::yield_now());
    std::future::poll_fn(|cx| {
        let wrapped = std::task::Waker::from(Arc::new(Wrapping(cx.waker().clone())));
        yielding
            .as_mut()
            .poll(&mut std::task::Context::from_waker(&wrapped))
    })
    .await
}

/// A task whose yield goes through a waker a combinator wraps also runs again only after
/// its shard has taken in its completions (the wrapped waker is woken at once, as a nested
/// executor's must be, and the task it requeues goes after the reap). Found by review: with
/// the wrapped waker merely woken, about 1 NOP completed per 30 yields.
#[test]
fn a_yield_through_a_wrapped_waker_also_lets_the_shard_take_in_its_completions() {
    with_every_runtime("wrapped yield vs io", 1, |config, rt| {
        let (done, yields) = rt.block_on(nops_during_yields(yield_through_a_wrapped_waker));
        assert!(
            done >= yields / 4 || config == Config::SqPoll,
            "{done} NOPs completed during {yields} yields"
        );
    });
}
