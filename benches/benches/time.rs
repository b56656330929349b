//! Time family of issue 6: timer_churn, sleep_precision. Peer side (tokio,
//! compio, spargio); see NOTES.md for what each measures.
//!
//! ringsteal (`peers/ringsteal_rt.rs`) runs side by side with the peers in the
//! same run, in a rotated order (`peers::run_rotated`).

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringsteal::Placement;
use ringsteal_benches::threads;
use ringsteal_benches::util::{block_on, PendingOnce};
use ringsteal_benches::workloads::{sleep_precision, timer_churn};

mod peers;
use peers::{compio_rt, entry, makespan, ringsteal_rt, run_rotated, spargio_rt, tokio_rt, Span};

// -------------------------------------------------------------- timer_churn

fn timer_churn(c: &mut Criterion) {
    use timer_churn::{per_thread, TIMEOUT, TIMERS};
    let n = threads();
    let mut g = c.benchmark_group("timer_churn");
    g.throughput(Throughput::Elements(TIMERS as u64));
    g.sample_size(10);

    run_rotated(
        &mut g,
        "timer_churn",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: shards(n); one task Pinned(t) per shard runs its share
                // of `ringsteal::time::timeout` (each registers a timer in the shard's
                // wheel at the first poll and removes it when the inner future
                // completes); makespan from a common barrier. Afterwards no timer may
                // be left in any wheel (`stats().timers_active`).
                let rt = ringsteal_rt::runtime(n);
                g.bench_function("ringsteal", |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let barrier = Arc::new(Barrier::new(n));
                            let out = rt.block_on(async move {
                                let hs: Vec<_> = (0..n)
                                    .map(|t| {
                                        let barrier = barrier.clone();
                                        ringsteal::spawn_with(Placement::Pinned(t), async move {
                                            barrier.wait();
                                            let start = Instant::now();
                                            let mut ok = 0usize;
                                            for _ in 0..per_thread(t, n) {
                                                ok += usize::from(
                                                    ringsteal::time::timeout(
                                                        TIMEOUT,
                                                        PendingOnce::new(),
                                                    )
                                                    .await
                                                    .is_ok(),
                                                );
                                            }
                                            ((start, Instant::now()), ok)
                                        })
                                    })
                                    .collect();
                                let mut out = Vec::with_capacity(n);
                                for h in hs {
                                    out.push(ringsteal_rt::join(h).await);
                                }
                                out
                            });
                            let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                            total += makespan(&spans);
                            timer_churn::check(out.iter().map(|o| o.1).sum());
                            assert_eq!(
                                ringsteal_rt::timers_active(&rt),
                                0,
                                "timer_churn: timers left in a wheel"
                            );
                        }
                        total
                    })
                });
            }),
            entry("tokio", |g| {
                // tokio: a driver on a worker spawns one task per worker thread
                // (tokio cannot pin them; the idle worker steals one). Each task
                // records its own span and the time is the makespan, as for the other
                // runtimes; no barrier, since both tasks may start on one worker
                // (a blocking barrier could then never be passed).
                let rt = tokio_rt::multi_thread(n);
                g.bench_function("tokio", |b| {
                    b.iter_custom(|iters| {
                        tokio_rt::run_on_worker(&rt, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let tasks: Vec<_> = (0..n)
                                    .map(|t| {
                                        tokio::spawn(async move {
                                            let start = Instant::now();
                                            let mut ok = 0usize;
                                            for _ in 0..per_thread(t, n) {
                                                ok += usize::from(
                                                    tokio::time::timeout(
                                                        TIMEOUT,
                                                        PendingOnce::new(),
                                                    )
                                                    .await
                                                    .is_ok(),
                                                );
                                            }
                                            ((start, Instant::now()), ok)
                                        })
                                    })
                                    .collect();
                                let mut out = Vec::with_capacity(n);
                                for t in tasks {
                                    out.push(t.await.expect("join"));
                                }
                                let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                                total += makespan(&spans);
                                timer_churn::check(out.iter().map(|o| o.1).sum());
                            }
                            total
                        })
                    })
                });
            }),
            entry("compio", |g| {
                // compio: one runtime per thread, each runs its share.
                let th = compio_rt::Threads::new(n);
                g.bench_function("compio", |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let barrier = Arc::new(Barrier::new(n));
                            let out = th.run_on_all(move |t| {
                                let barrier = barrier.clone();
                                async move {
                                    barrier.wait();
                                    let start = Instant::now();
                                    let mut ok = 0usize;
                                    for _ in 0..per_thread(t, n) {
                                        ok += usize::from(
                                            compio::time::timeout(TIMEOUT, PendingOnce::new())
                                                .await
                                                .is_ok(),
                                        );
                                    }
                                    ((start, Instant::now()), ok)
                                }
                            });
                            let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                            total += makespan(&spans);
                            timer_churn::check(out.iter().map(|o| o.1).sum());
                        }
                        total
                    })
                });
            }),
            entry("spargio", |g| {
                // spargio: one task pinned to each shard (`spawn_pinned`), each runs
                // its share of `spargio::timeout`. Note: spargio's timer is a kernel
                // timeout SQE per `sleep`, and a dropped timer's SQE stays in flight
                // until it expires, so each iteration leaves TIMERS kernel timeouts
                // pending for 50 ms; that cost is part of what is measured.
                let rt = spargio_rt::build(spargio_rt::builder(n));
                let h = rt.handle();
                g.bench_function("spargio", |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let barrier = Arc::new(Barrier::new(n));
                            let joins: Vec<_> = (0..n)
                                .map(|t| {
                                    let barrier = barrier.clone();
                                    h.spawn_pinned(t as spargio::ShardId, async move {
                                        barrier.wait();
                                        let start = Instant::now();
                                        let mut ok = 0usize;
                                        for _ in 0..per_thread(t, n) {
                                            ok += usize::from(
                                                spargio::timeout(TIMEOUT, PendingOnce::new())
                                                    .await
                                                    .is_ok(),
                                            );
                                        }
                                        ((start, Instant::now()), ok)
                                    })
                                    .expect("spawn_pinned")
                                })
                                .collect();
                            let out: Vec<_> = joins
                                .into_iter()
                                .map(|j| block_on(j).expect("join"))
                                .collect();
                            let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                            total += makespan(&spans);
                            timer_churn::check(out.iter().map(|o| o.1).sum());
                        }
                        total
                    })
                });
                drop(rt);
            }),
        ],
    );
    g.finish();
}

// ----------------------------------------------------------- sleep_precision

fn sleep_precision(c: &mut Criterion) {
    let n = threads();
    let mut g = c.benchmark_group("sleep_precision");

    for (name, d) in sleep_precision::DURATIONS {
        run_rotated(
            &mut g,
            &format!("sleep_precision/{name}"),
            vec![
                entry("ringsteal", |g| {
                    // ringsteal: `ringsteal::time::sleep(d)` in a task spawned with
                    // `ringsteal::spawn` from `block_on` (it runs on shard 0, which
                    // blocks in io_uring_enter with the deadline as EXT_ARG timeout).
                    // Default idle strategy (Park): no spinning helps the figure.
                    let rt = ringsteal_rt::runtime(n);
                    g.bench_function(format!("{name}/ringsteal"), |b| {
                        b.iter_custom(|iters| {
                            ringsteal_rt::run_spawned(&rt, async move {
                                timed_sleeps(iters, d, ringsteal::time::sleep).await
                            })
                        })
                    });
                }),
                entry("tokio", |g| {
                    // tokio: `tokio::time::sleep` in a task on a worker. Tokio's timer
                    // has 1 ms resolution and rounds deadlines up: expect >= 1 ms.
                    let rt = tokio_rt::multi_thread(n);
                    g.bench_function(format!("{name}/tokio"), |b| {
                        b.iter_custom(|iters| {
                            tokio_rt::run_on_worker(&rt, async move {
                                timed_sleeps(iters, d, tokio::time::sleep).await
                            })
                        })
                    });
                }),
                entry("compio", |g| {
                    // compio: `compio::time::sleep` on runtime 0 (a BTreeMap of
                    // deadlines, waited for through the io_uring_enter timeout).
                    let th = compio_rt::Threads::new(n);
                    g.bench_function(format!("{name}/compio"), |b| {
                        b.iter_custom(|iters| {
                            let rx = th.spawn_task_on(0, move || async move {
                                timed_sleeps(iters, d, compio::time::sleep).await
                            });
                            rx.recv().expect("compio sleeper")
                        })
                    });
                }),
                entry("spargio", |g| {
                    // spargio: `spargio::sleep` in a task pinned to shard 0 (a native
                    // io_uring timeout on that shard's ring).
                    let rt = spargio_rt::build(spargio_rt::builder(n));
                    g.bench_function(format!("{name}/spargio"), |b| {
                        b.iter_custom(|iters| {
                            spargio_rt::run_pinned(&rt, 0, async move {
                                timed_sleeps(iters, d, spargio::sleep).await
                            })
                        })
                    });
                    drop(rt);
                }),
            ],
        );
    }
    g.finish();
}

/// `iters` sleeps of `d` made by `sleep` (awaited in whatever runtime awaits this), each
/// timed from just before the sleep is created to the task running again after it, and
/// checked not to return early; returns the sum of the times.
async fn timed_sleeps<F, Fut>(iters: u64, d: Duration, mut sleep: F) -> Duration
where
    F: FnMut(Duration) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        sleep(d).await;
        let took = start.elapsed();
        sleep_precision::check(d, took);
        total += took;
    }
    total
}

criterion_group!(benches, timer_churn, sleep_precision);
criterion_main!(benches);
