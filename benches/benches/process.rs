//! Process family: `process_spawn_wait` — spawn and wait for `true` 1,000 times, 32 at a
//! time, ringsteal vs `tokio::process`, side by side in one run.
//!
//! Both runtimes get `threads()` threads and run the same shape: 32 tasks spread over the
//! threads, each spawning and waiting for its share of the 1,000 children one after another,
//! so 32 children are alive at once. Every exit status is checked. Spawning is the same
//! `posix_spawn` in both (both use std's `Command`); what differs is the wait: one
//! `IORING_OP_WAITID` on a pidfd (ringsteal) against tokio's pidfd registered with its epoll
//! reactor, then `waitpid`.
//!
//! The runtimes are built here the way each one's docs build a multi-threaded runtime, and
//! run in the group's rotated order (`peers::run_rotated`), not ringsteal first.

mod peers;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringsteal::Placement;
use ringsteal_benches::threads;

use peers::{entry, run_rotated};

/// Children per iteration.
const CHILDREN: usize = 1_000;
/// Children alive at once (tasks).
const DEPTH: usize = 32;

/// How many children task `t` of `DEPTH` spawns.
fn share(t: usize) -> usize {
    CHILDREN / DEPTH + usize::from(t < CHILDREN % DEPTH)
}

fn process_spawn_wait(c: &mut Criterion) {
    let n = threads();
    let mut g = c.benchmark_group("process_spawn_wait");
    g.throughput(Throughput::Elements(CHILDREN as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));

    let mut entries = Vec::new();
    entries.push(entry("ringsteal", move |g| {
        let rt = ringsteal::Runtime::builder()
            .shards(n)
            .build()
            .expect("ringsteal runtime");
        g.bench_function("ringsteal", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let ok = rt.block_on(async {
                        let tasks: Vec<_> = (0..DEPTH)
                            .map(|t| {
                                ringsteal::spawn_with(Placement::RoundRobin, async move {
                                    let mut ok = 0;
                                    for _ in 0..share(t) {
                                        let status = ringsteal::process::Command::new("true")
                                            .status()
                                            .await
                                            .expect("spawn and wait true");
                                        ok += usize::from(status.success());
                                    }
                                    ok
                                })
                            })
                            .collect();
                        let mut ok = 0;
                        for t in tasks {
                            ok += t.await.expect("task");
                        }
                        ok
                    });
                    assert_eq!(ok, CHILDREN, "ringsteal: a child failed");
                }
                start.elapsed()
            })
        });
    }));
    entries.push(entry("tokio", move |g| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()
            .expect("tokio runtime");
        g.bench_function("tokio", |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let ok = rt.block_on(async {
                        let tasks: Vec<_> = (0..DEPTH)
                            .map(|t| {
                                tokio::spawn(async move {
                                    let mut ok = 0;
                                    for _ in 0..share(t) {
                                        let status = tokio::process::Command::new("true")
                                            .status()
                                            .await
                                            .expect("spawn and wait true");
                                        ok += usize::from(status.success());
                                    }
                                    ok
                                })
                            })
                            .collect();
                        let mut ok = 0;
                        for t in tasks {
                            ok += t.await.expect("task");
                        }
                        ok
                    });
                    assert_eq!(ok, CHILDREN, "tokio: a child failed");
                }
                start.elapsed()
            })
        });
    }));
    run_rotated(&mut g, "process_spawn_wait", entries);
    g.finish();
}

criterion_group!(benches, process_spawn_wait);
criterion_main!(benches);
