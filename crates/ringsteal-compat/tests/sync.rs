//! Runtime-agnostic synchronisation on ringsteal: `tokio::sync` (built with no runtime
//! features), `futures::channel`, `async-channel`, and the `select!`/`join!` macros, used
//! from tasks on every shard, from the blocking pool and from plain threads, under MSG_RING
//! and eventfd wakes. Every test counts what it sent and received, so a lost wakeup shows as
//! a hang (caught by the hang guard) and a lost or duplicated message as a wrong count.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use common::{hang_guard, Config, HANG_LIMIT};
use ringsteal_rt::{Placement, Runtime};

/// Runs `body` on a 2-shard runtime under MSG_RING wakes and under eventfd wakes.
fn under_both_wakes<F>(name: &str, body: F)
where
    F: Fn(&Runtime) + Send + Sync + Copy + 'static,
{
    for config in [Config::MsgRing, Config::EventFd] {
        hang_guard(&format!("{name} [{config:?}]"), HANG_LIMIT, move || {
            body(&config.runtime(2))
        });
    }
}

const PER_PRODUCER: u64 = 5_000;

#[test]
fn tokio_mpsc_carries_every_message_from_shards_the_blocking_pool_and_threads() {
    under_both_wakes("tokio mpsc", |rt| {
        // A small bound, so senders park on a full channel and the receiver wakes them.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(8);
        let handle = rt.handle();
        let mut producers = Vec::new();
        for shard in 0..2 {
            let tx = tx.clone();
            producers.push(handle.spawn_with(Placement::Pinned(shard), async move {
                for i in 0..PER_PRODUCER {
                    tx.send(i).await.unwrap();
                }
            }));
        }
        {
            let tx = tx.clone();
            producers.push(handle.spawn_blocking(move || {
                for i in 0..PER_PRODUCER {
                    tx.blocking_send(i).unwrap();
                }
            }));
        }
        let thread = {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..PER_PRODUCER {
                    tx.blocking_send(i).unwrap();
                }
            })
        };
        drop(tx);
        let (count, sum) = rt.block_on(async move {
            let (mut count, mut sum) = (0u64, 0u64);
            while let Some(v) = rx.recv().await {
                count += 1;
                sum += v;
            }
            (count, sum)
        });
        thread.join().unwrap();
        rt.block_on(async {
            for p in producers {
                p.await.unwrap();
            }
        });
        assert_eq!(count, 4 * PER_PRODUCER);
        assert_eq!(sum, 4 * (PER_PRODUCER * (PER_PRODUCER - 1) / 2));
    });
}

#[test]
fn tokio_oneshots_complete_across_shards_and_from_threads() {
    under_both_wakes("tokio oneshot", |rt| {
        rt.block_on(async {
            for round in 0..500u64 {
                let (tx, rx) = tokio::sync::oneshot::channel();
                // Senders alternate between the other shard and a plain thread.
                if round % 2 == 0 {
                    ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                        tx.send(round).unwrap();
                    });
                } else {
                    std::thread::spawn(move || tx.send(round).unwrap());
                }
                let waiter = ringsteal_rt::spawn_with(Placement::Pinned(round as usize % 2), rx);
                assert_eq!(waiter.await.unwrap().unwrap(), round);
            }
            // A dropped sender wakes its receiver with an error.
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            std::thread::spawn(move || drop(tx));
            assert!(rx.await.is_err());
        })
    });
}

#[test]
fn tokio_mutex_serialises_tasks_on_every_shard_and_blocking_lockers() {
    under_both_wakes("tokio mutex", |rt| {
        let lock = Arc::new(tokio::sync::Mutex::new((0u64, false)));
        let handle = rt.handle();
        let mut tasks = Vec::new();
        for t in 0..8 {
            let lock = lock.clone();
            tasks.push(handle.spawn_with(Placement::Pinned(t % 2), async move {
                for _ in 0..300 {
                    let mut g = lock.lock().await;
                    assert!(!g.1, "two holders at once");
                    g.1 = true;
                    ringsteal_rt::yield_now().await; // hold it across a suspension
                    g.0 += 1;
                    g.1 = false;
                }
            }));
        }
        let blocking = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for _ in 0..300 {
                    let mut g = lock.blocking_lock();
                    assert!(!g.1);
                    g.0 += 1;
                }
            })
        };
        rt.block_on(async {
            for t in tasks {
                t.await.unwrap();
            }
        });
        blocking.join().unwrap();
        assert_eq!(lock.try_lock().unwrap().0, 9 * 300);
    });
}

#[test]
fn tokio_semaphore_bounds_concurrency_and_takes_permits_added_from_threads() {
    under_both_wakes("tokio semaphore", |rt| {
        rt.block_on(async {
            let sem = Arc::new(tokio::sync::Semaphore::new(3));
            let inside = Arc::new(AtomicUsize::new(0));
            let peak = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = (0..40)
                .map(|i| {
                    let (sem, inside, peak) = (sem.clone(), inside.clone(), peak.clone());
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        for _ in 0..20 {
                            let _permit = sem.acquire().await.unwrap();
                            let now = inside.fetch_add(1, SeqCst) + 1;
                            peak.fetch_max(now, SeqCst);
                            ringsteal_rt::yield_now().await;
                            inside.fetch_sub(1, SeqCst);
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            assert!(
                peak.load(SeqCst) <= 3,
                "{} holders at once",
                peak.load(SeqCst)
            );
            // Permits added by a plain thread wake waiters on the shards.
            let empty = Arc::new(tokio::sync::Semaphore::new(0));
            let waiters: Vec<_> = (0..10)
                .map(|i| {
                    let s = empty.clone();
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        s.acquire().await.unwrap().forget();
                    })
                })
                .collect();
            let s = empty.clone();
            std::thread::spawn(move || {
                for _ in 0..10 {
                    s.add_permits(1);
                }
            });
            for w in waiters {
                w.await.unwrap();
            }
        })
    });
}

#[test]
fn tokio_notify_ping_pongs_between_a_shard_and_a_plain_thread() {
    under_both_wakes("tokio notify", |rt| {
        let ping = Arc::new(tokio::sync::Notify::new());
        let pong = Arc::new(tokio::sync::Notify::new());
        const ROUNDS: u64 = 2_000;
        let thread = {
            let (ping, pong) = (ping.clone(), pong.clone());
            std::thread::spawn(move || {
                for _ in 0..ROUNDS {
                    common::block_on_plain(ping.notified());
                    pong.notify_one();
                }
            })
        };
        rt.block_on(async {
            let task = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                for _ in 0..ROUNDS {
                    ping.notify_one(); // stored as a permit if the thread is not waiting yet
                    pong.notified().await;
                }
            });
            task.await.unwrap();
        });
        thread.join().unwrap();
    });
}

#[test]
fn tokio_notify_waiters_wakes_every_waiting_task() {
    under_both_wakes("tokio notify_waiters", |rt| {
        rt.block_on(async {
            let notify = Arc::new(tokio::sync::Notify::new());
            let ready = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = (0..16)
                .map(|i| {
                    let (n, r) = (notify.clone(), ready.clone());
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        let notified = n.notified();
                        tokio::pin!(notified);
                        notified.as_mut().enable(); // registered before we say we are ready
                        r.fetch_add(1, SeqCst);
                        notified.await;
                    })
                })
                .collect();
            while ready.load(SeqCst) < 16 {
                ringsteal_rt::yield_now().await;
            }
            let n = notify.clone();
            std::thread::spawn(move || n.notify_waiters())
                .join()
                .unwrap();
            for t in tasks {
                t.await.unwrap();
            }
        })
    });
}

#[test]
fn tokio_watch_receivers_see_values_in_order_and_the_last_one() {
    under_both_wakes("tokio watch", |rt| {
        let (tx, rx) = tokio::sync::watch::channel(0u64);
        const LAST: u64 = 10_000;
        rt.block_on(async move {
            let readers: Vec<_> = (0..4)
                .map(|i| {
                    let mut rx = rx.clone();
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        let mut seen = 0;
                        while seen < LAST {
                            rx.changed().await.unwrap();
                            let v = *rx.borrow_and_update();
                            assert!(v >= seen, "went back from {seen} to {v}");
                            seen = v;
                        }
                    })
                })
                .collect();
            let writer = std::thread::spawn(move || {
                for v in 1..=LAST {
                    tx.send(v).unwrap();
                }
                tx // keep the channel open until the readers are done
            });
            for r in readers {
                r.await.unwrap();
            }
            drop(writer.join().unwrap());
        })
    });
}

#[test]
fn tokio_broadcast_delivers_every_message_to_every_receiver() {
    under_both_wakes("tokio broadcast", |rt| {
        rt.block_on(async {
            const N: u64 = 3_000;
            let (tx, _) = tokio::sync::broadcast::channel::<u64>(N as usize);
            let readers: Vec<_> = (0..4)
                .map(|i| {
                    let mut rx = tx.subscribe();
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        let mut next = 0;
                        while let Ok(v) = rx.recv().await {
                            assert_eq!(v, next);
                            next += 1;
                        }
                        next
                    })
                })
                .collect();
            let sender = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                for v in 0..N {
                    tx.send(v).unwrap();
                    if v % 64 == 0 {
                        ringsteal_rt::yield_now().await;
                    }
                }
            });
            sender.await.unwrap();
            for r in readers {
                assert_eq!(r.await.unwrap(), N);
            }
        })
    });
}

#[test]
fn futures_channels_cross_shards_and_threads() {
    use futures::{SinkExt, StreamExt};
    under_both_wakes("futures channels", |rt| {
        rt.block_on(async {
            let (tx, mut rx) = futures::channel::mpsc::channel::<u64>(4);
            let mut producers = Vec::new();
            for shard in 0..2 {
                let mut tx = tx.clone();
                producers.push(ringsteal_rt::spawn_with(
                    Placement::Pinned(shard),
                    async move {
                        for i in 0..PER_PRODUCER {
                            tx.send(i).await.unwrap();
                        }
                    },
                ));
            }
            let mut ttx = tx.clone();
            let thread = std::thread::spawn(move || {
                common::block_on_plain(async move {
                    for i in 0..PER_PRODUCER {
                        ttx.send(i).await.unwrap();
                    }
                })
            });
            drop(tx);
            let mut count = 0;
            while rx.next().await.is_some() {
                count += 1;
            }
            assert_eq!(count, 3 * PER_PRODUCER);
            thread.join().unwrap();
            for p in producers {
                p.await.unwrap();
            }
            // A oneshot answered from the blocking pool.
            let (otx, orx) = futures::channel::oneshot::channel();
            ringsteal_rt::spawn_blocking(move || otx.send(42).unwrap());
            assert_eq!(orx.await.unwrap(), 42);
        })
    });
}

#[test]
fn async_channel_shares_work_between_consumers_on_both_shards_exactly_once() {
    under_both_wakes("async-channel", |rt| {
        rt.block_on(async {
            let (tx, rx) = async_channel::bounded::<u64>(16);
            let total = Arc::new(AtomicU64::new(0));
            let consumers: Vec<_> = (0..4)
                .map(|i| {
                    let (rx, total) = (rx.clone(), total.clone());
                    ringsteal_rt::spawn_with(Placement::Pinned(i % 2), async move {
                        let mut got = 0u64;
                        while let Ok(v) = rx.recv().await {
                            total.fetch_add(v, SeqCst);
                            got += 1;
                        }
                        got
                    })
                })
                .collect();
            drop(rx);
            let t1 = {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    for i in 0..PER_PRODUCER {
                        tx.send_blocking(i).unwrap();
                    }
                })
            };
            let t2 = {
                let tx = tx.clone();
                ringsteal_rt::spawn_blocking(move || {
                    for i in 0..PER_PRODUCER {
                        tx.send_blocking(i).unwrap();
                    }
                })
            };
            for i in 0..PER_PRODUCER {
                tx.send(i).await.unwrap();
            }
            drop(tx);
            t1.join().unwrap();
            t2.await.unwrap();
            let mut received = 0;
            for c in consumers {
                received += c.await.unwrap();
            }
            assert_eq!(received, 3 * PER_PRODUCER);
            assert_eq!(
                total.load(SeqCst),
                3 * (PER_PRODUCER * (PER_PRODUCER - 1) / 2)
            );
        })
    });
}

#[test]
fn select_and_join_macros_run_inside_ringsteal_tasks() {
    under_both_wakes("select and join", |rt| {
        rt.block_on(async {
            let task = ringsteal_rt::spawn_with(Placement::Pinned(1), async {
                // tokio::select!: a message wins over a long ringsteal sleep, which is dropped.
                let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
                std::thread::spawn(move || tx.blocking_send(7).unwrap());
                let got = tokio::select! {
                    v = rx.recv() => v,
                    _ = ringsteal_rt::time::sleep(Duration::from_secs(3600)) => None,
                };
                assert_eq!(got, Some(7));

                // futures::select!: a short ringsteal sleep wins over a channel with no sender
                // activity.
                use futures::FutureExt;
                let (_keep, never) = futures::channel::oneshot::channel::<()>();
                let mut never = never.fuse();
                let mut nap = Box::pin(ringsteal_rt::time::sleep(Duration::from_millis(2)).fuse());
                let which = futures::select! {
                    _ = never => "channel",
                    _ = nap => "sleep",
                };
                assert_eq!(which, "sleep");

                // futures::join! and tokio::join! of ringsteal tasks on both shards.
                let a = ringsteal_rt::spawn_with(Placement::Pinned(0), async { 1 });
                let b = ringsteal_rt::spawn_with(Placement::Pinned(1), async { 2 });
                let (a, b) = futures::join!(a, b);
                let (c, d) = tokio::join!(async { 3 }, async {
                    ringsteal_rt::time::sleep(Duration::from_millis(1)).await;
                    4
                });
                a.unwrap() + b.unwrap() + c + d
            });
            assert_eq!(task.await.unwrap(), 10);
        })
    });
}
