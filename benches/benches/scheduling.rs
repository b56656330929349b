//! Scheduling family of issue 6: spawn_join, ping_pong_rtt,
//! fanout_fanin_balanced, fanout_fanin_skewed, steal_imbalance,
//! idle_wake_latency. Peer side (tokio, compio, spargio); what each workload
//! measures, and which peer cannot express which variant, is in NOTES.md.
//!
//! Criterion ids are `<workload>/<runtime>` or `<workload>/<variant>/<runtime>`.
//!
//! ringsteal (`peers/ringsteal_rt.rs`) runs side by side with the peers in the
//! same process and the same run, in a rotated order (`peers::run_rotated`);
//! cross-task signals are the same futures for every runtime (`signals.rs`). Extra ringsteal
//! variants are named `ringsteal_<what>` (for example `spawn_join/ringsteal_split`,
//! `ping_pong_rtt/pinned_spinning/ringsteal_msg`).

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringsteal::{Placement, RuntimeHandle};
use ringsteal_benches::util::{block_on, part};
use ringsteal_benches::workloads::fanout_fanin::{self, Shape};
use ringsteal_benches::workloads::{ping_pong_rtt, spawn_join, steal_imbalance};
use ringsteal_benches::{bind_current_thread, cpu_for, threads};

mod peers;
mod signals;
use peers::{
    compio_rt, entry, makespan, ringsteal_rt, run_rotated, spargio_rt, tokio_rt, RuntimePerThread,
    Span,
};

// ---------------------------------------------------------------- spawn_join

/// ringsteal's spawn_join driver on `rt`: from `block_on` (shard 0), spawn the tasks with
/// `ringsteal::spawn` and join them.
fn ringsteal_spawn_join(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    rt: &ringsteal::Runtime,
) {
    use spawn_join::{task_value, TASKS};
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let mut handles = Vec::with_capacity(TASKS);
                    for i in 0..TASKS {
                        handles.push(ringsteal::spawn(async move { black_box(task_value(i)) }));
                    }
                    let mut sum = 0u64;
                    for h in handles {
                        sum += ringsteal_rt::join(h).await;
                    }
                    total += start.elapsed();
                    spawn_join::check(sum);
                }
                total
            })
        })
    });
}

fn spawn_join(c: &mut Criterion) {
    use spawn_join::{task_value, TASKS};
    let n = threads();
    let mut g = c.benchmark_group("spawn_join");
    g.throughput(Throughput::Elements(TASKS as u64));
    g.sample_size(10);

    run_rotated(
        &mut g,
        "spawn_join",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: a driver in `block_on` (shard 0: the criterion thread is
                // a shard while inside it) spawns with `ringsteal::spawn` (Stealable:
                // queued on shard 0, where the idle shard steals batches) and joins.
                let rt = ringsteal_rt::runtime(n);
                ringsteal_spawn_join(g, "ringsteal", &rt);
                // ringsteal_split: compio's share-nothing shape on ringsteal. One task
                // Pinned(t) per shard spawns its half with `ringsteal::spawn` and joins
                // it; makespan from a common barrier. (The halves stay stealable; with
                // both shards busy nothing moves.)
                g.bench_function("ringsteal_split", |b| {
                    b.iter_custom(|iters| {
                        rt.block_on(async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let barrier = Arc::new(Barrier::new(n));
                                let halves: Vec<_> = (0..n)
                                    .map(|t| {
                                        let barrier = barrier.clone();
                                        ringsteal::spawn_with(Placement::Pinned(t), async move {
                                            let range = part(TASKS, n, t);
                                            barrier.wait();
                                            let start = Instant::now();
                                            let mut handles = Vec::with_capacity(range.len());
                                            for i in range {
                                                handles.push(ringsteal::spawn(async move {
                                                    black_box(task_value(i))
                                                }));
                                            }
                                            let mut sum = 0u64;
                                            for h in handles {
                                                sum += ringsteal_rt::join(h).await;
                                            }
                                            ((start, Instant::now()), sum)
                                        })
                                    })
                                    .collect();
                                let mut out = Vec::with_capacity(n);
                                for h in halves {
                                    out.push(ringsteal_rt::join(h).await);
                                }
                                let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                                total += makespan(&spans);
                                spawn_join::check(out.iter().map(|o| o.1).sum());
                            }
                            total
                        })
                    })
                });
            }),
            entry("ringsteal_1_shard", |g| {
                // ringsteal_1_shard: the same driver on a one-shard runtime (no other
                // thread), for the per-task cost on one shard (issue 3: under 150 ns).
                // Not a like-for-like comparison with the 2-thread peers.
                let rt = ringsteal_rt::runtime(1);
                ringsteal_spawn_join(g, "ringsteal_1_shard", &rt);
            }),
            entry("tokio", |g| {
                // tokio: a driver task on a worker spawns with `tokio::spawn`.
                let rt = tokio_rt::multi_thread(n);
                g.bench_function("tokio", |b| {
                    b.iter_custom(|iters| {
                        tokio_rt::run_on_worker(&rt, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let mut handles = Vec::with_capacity(TASKS);
                                for i in 0..TASKS {
                                    handles.push(tokio::spawn(
                                        async move { black_box(task_value(i)) },
                                    ));
                                }
                                let mut sum = 0u64;
                                for h in handles {
                                    sum += h.await.expect("join");
                                }
                                total += start.elapsed();
                                spawn_join::check(sum);
                            }
                            total
                        })
                    })
                });
            }),
            entry("compio", |g| {
                // compio: share-nothing; each of the n runtimes spawns and joins its
                // share of the tasks locally (compio::runtime::spawn). Makespan.
                let th = compio_rt::Threads::new(n);
                g.bench_function("compio", |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let barrier = Arc::new(Barrier::new(n));
                            let out = th.run_on_all(move |t| {
                                let barrier = barrier.clone();
                                async move {
                                    let range = part(TASKS, n, t);
                                    barrier.wait();
                                    let start = Instant::now();
                                    let mut handles = Vec::with_capacity(range.len());
                                    for i in range {
                                        handles.push(compio::runtime::spawn(async move {
                                            black_box(task_value(i))
                                        }));
                                    }
                                    let mut sum = 0u64;
                                    for h in handles {
                                        sum += compio_rt::join(h).await;
                                    }
                                    ((start, Instant::now()), sum)
                                }
                            });
                            let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                            total += makespan(&spans);
                            spawn_join::check(out.iter().map(|o| o.1).sum());
                        }
                        total
                    })
                });
            }),
            entry("spargio", |g| {
                // spargio: a driver pinned to shard 0 spawns with
                // `spawn_stealable_on(current shard)`, the placement spargio's book
                // recommends by default. The stealable queue must hold all TASKS at
                // once: see the capacity caveat on `builder_for_spawns`.
                let rt = spargio_rt::build(spargio_rt::builder_for_spawns(n, TASKS));
                let h = rt.handle();
                g.bench_function("spargio", |b| {
                    b.iter_custom(|iters| {
                        let h = h.clone();
                        spargio_rt::run_pinned(&rt, 0, async move {
                            let me = spargio_rt::current_shard();
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let mut handles = Vec::with_capacity(TASKS);
                                for i in 0..TASKS {
                                    handles.push(
                                        h.spawn_stealable_on(me, async move {
                                            black_box(task_value(i))
                                        })
                                        .expect("spargio spawn (raise stealable_queue_capacity?)"),
                                    );
                                }
                                let mut sum = 0u64;
                                for j in handles {
                                    sum += j.await.expect("join");
                                }
                                total += start.elapsed();
                                spawn_join::check(sum);
                            }
                            total
                        })
                    })
                });
            }),
        ],
    );
    g.finish();
}

// ------------------------------------------------------------- ping_pong_rtt

const PING: u16 = 1;
const PONG: u16 = 2;
const STOP: u16 = 3;

fn ping_pong(c: &mut Criterion) {
    let mut g = c.benchmark_group("ping_pong_rtt");
    g.throughput(Throughput::Elements(1));

    // ---- pinned_parked: two tasks on two different threads that park when idle.
    // In the pinned variants thread i is also bound to CPU i, every runtime
    // through its own affinity setting (see `ringsteal_benches::cpu_for`).

    run_rotated(
        &mut g,
        "ping_pong_rtt/pinned_parked",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: shards(2), pin_shards(true), Park; pinger Pinned(0),
                // responder Pinned(1), token through futures::channel::mpsc (ringsteal
                // ships no channel; compio and spargio use the same one here).
                // `ringsteal_msg`: the same pair passing the token as a raw MSG_RING
                // payload (`RuntimeHandle::send_msg` / `recv_msg`), no channel.
                let rt = ringsteal_rt::pinned_parked(2);
                g.bench_function("pinned_parked/ringsteal", |b| {
                    b.iter_custom(|iters| ringsteal_ping_pong_channel(&rt, iters))
                });
                g.bench_function("pinned_parked/ringsteal_msg", |b| {
                    b.iter_custom(|iters| ringsteal_ping_pong_msg(&rt, iters))
                });
            }),
            entry("tokio", |g| {
                // tokio: its multi-thread runtime cannot pin a task to a worker, so
                // the two tasks run on two current_thread runtimes, one per thread,
                // as their `block_on` futures.
                let th = tokio_rt::PinnedThreads::new(2);
                g.bench_function("pinned_parked/tokio", |b| {
                    b.iter_custom(|iters| per_thread_ping_pong(&th, iters))
                });
            }),
            entry("compio", |g| {
                // compio: two runtimes on two threads, the tasks as their `block_on`
                // futures (compio's faster way across threads: peers/compio_rt.rs).
                let th = compio_rt::Threads::pinned_to_cpus(2);
                g.bench_function("pinned_parked/compio", |b| {
                    b.iter_custom(|iters| per_thread_ping_pong(&th, iters))
                });
            }),
        ],
    );
    // spargio: not expressible (shards never park); see NOTES.md.

    // ---- pinned_spinning: the same pair, runtime allowed to spin when idle.

    run_rotated(
        &mut g,
        "ping_pong_rtt/pinned_spinning",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: shards(2), pin_shards(true), SpinThenPark(50 us): an idle
                // shard polls for up to 50 us, then blocks in the kernel (the runtime
                // returns to zero CPU when idle: crates/ringsteal-rt/tests/idle_cpu.rs).
                // `ringsteal` passes the token through futures::channel::mpsc;
                // `ringsteal_msg` as a raw MSG_RING payload, the same mechanism as
                // spargio's raw msg_ring variant below (the like-for-like comparison).
                let rt = ringsteal_rt::pinned_spinning(2);
                g.bench_function("pinned_spinning/ringsteal", |b| {
                    b.iter_custom(|iters| ringsteal_ping_pong_channel(&rt, iters))
                });
                g.bench_function("pinned_spinning/ringsteal_msg", |b| {
                    b.iter_custom(|iters| ringsteal_ping_pong_msg(&rt, iters))
                });
            }),
            // tokio, compio: not expressible (no spin-before-park setting); NOTES.md.
            entry("spargio", |g| {
                // spargio: tasks pinned with `spawn_local_on(shard, ..)`; the token
                // travels as a raw msg_ring message (`RemoteShard::send_raw_nowait`,
                // received with `ShardCtx::next_event`), spargio's direct cross-shard
                // signal. Default idle strategy: shards busy-poll (yield) when idle.
                let rt = spargio_rt::build(spargio_rt::builder_pinned_to_cpus(2));
                let h = rt.handle();
                g.bench_function("pinned_spinning/spargio", |b| {
                    b.iter_custom(|iters| {
                        assert!(
                            iters < u64::from(u32::MAX / 2),
                            "token is a u32 on the wire"
                        );
                        let responder = h
                            .spawn_local_on(1, |ctx| async move {
                                let peer = ctx.remote(0).expect("shard 0");
                                loop {
                                    let spargio::Event::RingMsg { tag, val, .. } =
                                        ctx.next_event().await;
                                    match tag {
                                        PING => peer.send_raw_nowait(PONG, val + 1).expect("pong"),
                                        STOP => break,
                                        _ => {}
                                    }
                                }
                            })
                            .expect("spawn responder");
                        let pinger = h
                            .spawn_local_on(0, move |ctx| async move {
                                let peer = ctx.remote(1).expect("shard 1");
                                let mut token = 0u32;
                                let start = Instant::now();
                                for _ in 0..iters {
                                    peer.send_raw_nowait(PING, token + 1).expect("ping");
                                    loop {
                                        let spargio::Event::RingMsg { tag, val, .. } =
                                            ctx.next_event().await;
                                        if tag == PONG {
                                            token = val;
                                            break;
                                        }
                                    }
                                }
                                let d = start.elapsed();
                                peer.send_raw_nowait(STOP, 0).expect("stop");
                                (d, u64::from(token))
                            })
                            .expect("spawn pinger");
                        let (d, token) = block_on(pinger).expect("spargio pinger");
                        block_on(responder).expect("spargio responder");
                        ping_pong_rtt::check(token, iters);
                        d
                    })
                });
                drop(rt);
            }),
        ],
    );

    // ---- default_placement: both tasks spawned the runtime's default way.

    run_rotated(
        &mut g,
        "ping_pong_rtt/default_placement",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: `block_on` spawns the driver with `ringsteal::spawn` and
                // awaits it; the driver spawns the responder with `ringsteal::spawn`.
                // A single queued stealable task does not wake an idle shard
                // (ADR-0005), so the pair normally stays on one shard.
                let rt = ringsteal_rt::runtime(threads());
                g.bench_function("default_placement/ringsteal", |b| {
                    b.iter_custom(|iters| {
                        let (pinger, responder) = signals::ping_pong_pair();
                        let (d, token) = ringsteal_rt::run_spawned(&rt, async move {
                            let responder = ringsteal::spawn(responder.run());
                            let out = pinger.run(iters).await;
                            ringsteal_rt::join(responder).await;
                            out
                        });
                        ping_pong_rtt::check(token, iters);
                        d
                    })
                });
            }),
            entry("tokio", |g| {
                // tokio: driver (pinger) and responder both `tokio::spawn`ed on the
                // multi-thread runtime; the scheduler usually keeps both on one worker.
                let rt = tokio_rt::multi_thread(threads());
                g.bench_function("default_placement/tokio", |b| {
                    b.iter_custom(|iters| {
                        let (pinger, responder) = signals::ping_pong_pair();
                        let (d, token) = tokio_rt::run_on_worker(&rt, async move {
                            tokio::spawn(responder.run());
                            pinger.run(iters).await
                        });
                        ping_pong_rtt::check(token, iters);
                        d
                    })
                });
            }),
            entry("compio", |g| {
                // compio: `compio::runtime::spawn` always places a task on the current
                // thread, so by default both tasks share one of the runtimes.
                let th = compio_rt::Threads::new(threads());
                g.bench_function("default_placement/compio", |b| {
                    b.iter_custom(|iters| {
                        let (pinger, responder) = signals::ping_pong_pair();
                        let rx = th.spawn_task_on(0, move || async move {
                            compio::runtime::spawn(responder.run()).detach();
                            pinger.run(iters).await
                        });
                        let (d, token) = rx.recv().expect("compio pinger");
                        ping_pong_rtt::check(token, iters);
                        d
                    })
                });
            }),
            entry("spargio", |g| {
                // spargio: driver spawned with `spawn_stealable` (what `spargio::run`
                // does), responder with `spawn_stealable_on(current shard)` (the
                // book's default).
                let rt = spargio_rt::build(spargio_rt::builder(threads()));
                let h = rt.handle();
                g.bench_function("default_placement/spargio", |b| {
                    b.iter_custom(|iters| {
                        let h = h.clone();
                        let (pinger, responder) = signals::ping_pong_pair();
                        let (d, token) = spargio_rt::run_default(&rt, async move {
                            h.spawn_stealable_on(spargio_rt::current_shard(), responder.run())
                                .expect("spawn responder");
                            pinger.run(iters).await
                        });
                        ping_pong_rtt::check(token, iters);
                        d
                    })
                });
                drop(rt);
            }),
        ],
    );
    g.finish();
}

/// ringsteal ping-pong between a pinger Pinned(0) and a responder Pinned(1),
/// the token passed through `futures::channel::mpsc`. Timed in the pinger.
fn ringsteal_ping_pong_channel(rt: &ringsteal::Runtime, iters: u64) -> Duration {
    let (pinger, responder) = signals::ping_pong_pair();
    let (d, token) = rt.block_on(async move {
        let responder = ringsteal::spawn_with(Placement::Pinned(1), responder.run());
        let pinger = ringsteal::spawn_with(Placement::Pinned(0), pinger.run(iters));
        let out = ringsteal_rt::join(pinger).await;
        ringsteal_rt::join(responder).await;
        out
    });
    ping_pong_rtt::check(token, iters);
    d
}

/// Ping-pong on a runtime per thread (tokio, compio): the responder on thread 1 and the
/// pinger on thread 0, each its runtime's `block_on` future. Timed in the pinger.
fn per_thread_ping_pong(th: &impl RuntimePerThread, iters: u64) -> Duration {
    let (pinger, responder) = signals::ping_pong_pair();
    let _responder = th.run_on(1, move || responder.run());
    let (d, token) = th
        .run_on(0, move || pinger.run(iters))
        .recv()
        .expect("pinger");
    ping_pong_rtt::check(token, iters);
    d
}

/// Payload that stops the raw-message responder (tokens stay far below it).
const STOP_MSG: u64 = u64::MAX;

/// ringsteal ping-pong between a pinger Pinned(0) and a responder Pinned(1),
/// the token passed as a raw MSG_RING payload (`RuntimeHandle::send_msg` /
/// `ringsteal::recv_msg`). Timed in the pinger.
fn ringsteal_ping_pong_msg(rt: &ringsteal::Runtime, iters: u64) -> Duration {
    let (d, token) = rt.block_on(async move {
        let responder = ringsteal::spawn_with(Placement::Pinned(1), async move {
            let h = RuntimeHandle::current();
            loop {
                let t = ringsteal::recv_msg().await;
                if t == STOP_MSG {
                    break;
                }
                h.send_msg(0, t + 1).expect("pong");
            }
        });
        let pinger = ringsteal::spawn_with(Placement::Pinned(0), async move {
            let h = RuntimeHandle::current();
            let mut token = 0u64;
            let start = Instant::now();
            for _ in 0..iters {
                h.send_msg(1, token + 1).expect("ping");
                token = ringsteal::recv_msg().await;
            }
            let d = start.elapsed();
            h.send_msg(1, STOP_MSG).expect("stop");
            (d, token)
        });
        let out = ringsteal_rt::join(pinger).await;
        ringsteal_rt::join(responder).await;
        out
    });
    ping_pong_rtt::check(token, iters);
    d
}

// ------------------------------------------------- fanout_fanin_{balanced,skewed}

fn fanout_fanin(c: &mut Criterion, group: &str, shape: &'static Shape) {
    let n = threads();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(shape.tasks() as u64));
    g.sample_size(10);
    shape.expected(); // computed once, outside any timing

    run_rotated(
        &mut g,
        group,
        vec![
            entry("ringsteal", |g| {
                // ringsteal: a driver in `block_on` spawns the requests with
                // `ringsteal::spawn`; each request spawns its branches the same way and
                // joins them. Idle shards steal queued requests and branches.
                let rt = ringsteal_rt::runtime(n);
                g.bench_function("ringsteal", |b| {
                    b.iter_custom(|iters| {
                        rt.block_on(async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let requests: Vec<_> = (0..shape.requests)
                                    .map(|r| {
                                        ringsteal::spawn(async move {
                                            let branches: Vec<_> = (0..shape.fanout)
                                                .map(|br| {
                                                    ringsteal::spawn(
                                                        async move { shape.branch(r, br) },
                                                    )
                                                })
                                                .collect();
                                            let mut sum = 0u64;
                                            for b in branches {
                                                sum = sum.wrapping_add(ringsteal_rt::join(b).await);
                                            }
                                            sum
                                        })
                                    })
                                    .collect();
                                let mut sum = 0u64;
                                for r in requests {
                                    sum = sum.wrapping_add(ringsteal_rt::join(r).await);
                                }
                                total += start.elapsed();
                                shape.check(sum);
                            }
                            total
                        })
                    })
                });
            }),
            entry("tokio", |g| {
                let rt = tokio_rt::multi_thread(n);
                g.bench_function("tokio", |b| {
                    b.iter_custom(|iters| {
                        tokio_rt::run_on_worker(&rt, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let requests: Vec<_> = (0..shape.requests)
                                    .map(|r| {
                                        tokio::spawn(async move {
                                            let branches: Vec<_> = (0..shape.fanout)
                                                .map(|br| {
                                                    tokio::spawn(async move { shape.branch(r, br) })
                                                })
                                                .collect();
                                            let mut sum = 0u64;
                                            for b in branches {
                                                sum = sum.wrapping_add(b.await.expect("branch"));
                                            }
                                            sum
                                        })
                                    })
                                    .collect();
                                let mut sum = 0u64;
                                for r in requests {
                                    sum = sum.wrapping_add(r.await.expect("request"));
                                }
                                total += start.elapsed();
                                shape.check(sum);
                            }
                            total
                        })
                    })
                });
            }),
            entry("compio", |g| {
                // compio: request r is handled on thread r % n, fanning out locally.
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
                                    let requests: Vec<_> = (t..shape.requests)
                                        .step_by(n)
                                        .map(|r| {
                                            compio::runtime::spawn(async move {
                                                let branches: Vec<_> = (0..shape.fanout)
                                                    .map(|br| {
                                                        compio::runtime::spawn(async move {
                                                            shape.branch(r, br)
                                                        })
                                                    })
                                                    .collect();
                                                let mut sum = 0u64;
                                                for b in branches {
                                                    sum =
                                                        sum.wrapping_add(compio_rt::join(b).await);
                                                }
                                                sum
                                            })
                                        })
                                        .collect();
                                    let mut sum = 0u64;
                                    for r in requests {
                                        sum = sum.wrapping_add(compio_rt::join(r).await);
                                    }
                                    ((start, Instant::now()), sum)
                                }
                            });
                            let spans: Vec<Span> = out.iter().map(|o| o.0).collect();
                            total += makespan(&spans);
                            shape.check(out.iter().fold(0u64, |a, o| a.wrapping_add(o.1)));
                        }
                        total
                    })
                });
            }),
            entry("spargio", |g| {
                // spargio: the driver is an ingress, so requests go out with plain
                // `spawn_stealable` (the book's advice for a dispatcher); branches
                // with `spawn_stealable_on(current shard)` (the book's default).
                let rt = spargio_rt::build(spargio_rt::builder_for_spawns(
                    n,
                    shape.tasks() + shape.requests,
                ));
                let h = rt.handle();
                g.bench_function("spargio", |b| {
                    b.iter_custom(|iters| {
                        let h = h.clone();
                        spargio_rt::run_pinned(&rt, 0, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let requests: Vec<_> = (0..shape.requests)
                                    .map(|r| {
                                        let h2 = h.clone();
                                        h.spawn_stealable(async move {
                                            let me = spargio_rt::current_shard();
                                            let branches: Vec<_> = (0..shape.fanout)
                                                .map(|br| {
                                                    h2.spawn_stealable_on(me, async move {
                                                        shape.branch(r, br)
                                                    })
                                                    .expect("spawn branch")
                                                })
                                                .collect();
                                            let mut sum = 0u64;
                                            for b in branches {
                                                sum = sum.wrapping_add(b.await.expect("branch"));
                                            }
                                            sum
                                        })
                                        .expect("spawn request")
                                    })
                                    .collect();
                                let mut sum = 0u64;
                                for r in requests {
                                    sum = sum.wrapping_add(r.await.expect("request"));
                                }
                                total += start.elapsed();
                                shape.check(sum);
                            }
                            total
                        })
                    })
                });
                drop(rt);
            }),
        ],
    );
    g.finish();
}

fn fanout_fanin_balanced(c: &mut Criterion) {
    fanout_fanin(c, "fanout_fanin_balanced", &fanout_fanin::BALANCED);
}

fn fanout_fanin_skewed(c: &mut Criterion) {
    fanout_fanin(c, "fanout_fanin_skewed", &fanout_fanin::SKEWED);
}

// ----------------------------------------------------------- steal_imbalance

fn steal_imbalance(c: &mut Criterion) {
    use steal_imbalance::{task, TASKS};
    let n = threads();
    let mut g = c.benchmark_group("steal_imbalance");
    g.throughput(Throughput::Elements(TASKS as u64));
    g.sample_size(10);
    steal_imbalance::expected();

    run_rotated(
        &mut g,
        "steal_imbalance",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: a driver in `block_on` (shard 0) spawns all TASKS with
                // `ringsteal::spawn` (Placement::Stealable: queued on shard 0) and
                // joins them; the idle shard steals. The stats must show steals.
                let rt = ringsteal_rt::runtime(n);
                g.bench_function("ringsteal", |b| {
                    b.iter_custom(|iters| {
                        let stolen_before = ringsteal_rt::tasks_stolen(&rt);
                        let total = rt.block_on(async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let hs: Vec<_> = (0..TASKS)
                                    .map(|i| {
                                        ringsteal::spawn_with(Placement::Stealable, async move {
                                            task(i)
                                        })
                                    })
                                    .collect();
                                let mut sum = 0u64;
                                for h in hs {
                                    sum = sum.wrapping_add(ringsteal_rt::join(h).await);
                                }
                                total += start.elapsed();
                                steal_imbalance::check(sum);
                            }
                            total
                        });
                        if n > 1 {
                            assert!(
                                ringsteal_rt::tasks_stolen(&rt) > stolen_before,
                                "steal_imbalance: no task was stolen"
                            );
                        }
                        total
                    })
                });
            }),
            entry("tokio", |g| {
                let rt = tokio_rt::multi_thread(n);
                g.bench_function("tokio", |b| {
                    b.iter_custom(|iters| {
                        tokio_rt::run_on_worker(&rt, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let hs: Vec<_> = (0..TASKS)
                                    .map(|i| tokio::spawn(async move { task(i) }))
                                    .collect();
                                let mut sum = 0u64;
                                for h in hs {
                                    sum = sum.wrapping_add(h.await.expect("join"));
                                }
                                total += start.elapsed();
                                steal_imbalance::check(sum);
                            }
                            total
                        })
                    })
                });
            }),
            entry("compio", |g| {
                // compio: all work spawned on runtime 0 stays there (no stealing);
                // the other runtime idles. This is compio's real behaviour here.
                let th = compio_rt::Threads::new(n);
                g.bench_function("compio", |b| {
                    b.iter_custom(|iters| {
                        let rx = th.spawn_task_on(0, move || async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let hs: Vec<_> = (0..TASKS)
                                    .map(|i| compio::runtime::spawn(async move { task(i) }))
                                    .collect();
                                let mut sum = 0u64;
                                for h in hs {
                                    sum = sum.wrapping_add(compio_rt::join(h).await);
                                }
                                total += start.elapsed();
                                steal_imbalance::check(sum);
                            }
                            total
                        });
                        rx.recv().expect("compio driver")
                    })
                });
            }),
            entry("spargio", |g| {
                // spargio: all tasks `spawn_stealable_on(0)` from a driver on shard 0.
                let rt = spargio_rt::build(spargio_rt::builder_for_spawns(n, TASKS));
                let h = rt.handle();
                g.bench_function("spargio", |b| {
                    b.iter_custom(|iters| {
                        let h = h.clone();
                        spargio_rt::run_pinned(&rt, 0, async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let start = Instant::now();
                                let hs: Vec<_> = (0..TASKS)
                                    .map(|i| {
                                        h.spawn_stealable_on(0, async move { task(i) })
                                            .expect("spawn")
                                    })
                                    .collect();
                                let mut sum = 0u64;
                                for j in hs {
                                    sum = sum.wrapping_add(j.await.expect("join"));
                                }
                                total += start.elapsed();
                                steal_imbalance::check(sum);
                            }
                            total
                        })
                    })
                });
                drop(rt);
            }),
        ],
    );
    g.finish();
}

// --------------------------------------------------------- idle_wake_latency

fn idle_wake(c: &mut Criterion) {
    let mut g = c.benchmark_group("idle_wake_latency");
    g.sample_size(20);

    // Every row runs the same waiter and notifier (`signals::idle_wake_pair`):
    // the wake is the completion of a futures::channel::oneshot, for every
    // runtime. The notifier blocks its own thread for PARK_GAP on purpose
    // (outside the timing): the gap must not depend on a runtime's timer.

    run_rotated(
        &mut g,
        "idle_wake_latency",
        vec![
            entry("ringsteal", |g| {
                // ringsteal: shards(2), pin_shards(true), Park. Waiter Pinned(1),
                // notifier Pinned(0): the wake goes into shard 1's inbox plus one
                // MSG_RING doorbell from shard 0's ring.
                let rt = ringsteal_rt::pinned_parked(2);
                g.bench_function("ringsteal", |b| {
                    b.iter_custom(|iters| {
                        let (waiter, notifier) = signals::idle_wake_pair();
                        rt.block_on(async move {
                            let waiter =
                                ringsteal::spawn_with(Placement::Pinned(1), waiter.run(iters));
                            let notifier =
                                ringsteal::spawn_with(Placement::Pinned(0), notifier.run(iters));
                            let total = ringsteal_rt::join(notifier).await;
                            ringsteal_rt::join(waiter).await;
                            total
                        })
                    })
                });
                // ringsteal_plain_thread: the notifier is a plain thread (no ring,
                // bound to CPU 0, driven by a park/unpark `block_on`), so the wake
                // takes the path for threads outside the runtime:
                // IORING_REGISTER_SEND_MSG_RING where the kernel has it (6.13+, as
                // here), the shard's eventfd otherwise.
                g.bench_function("ringsteal_plain_thread", |b| {
                    b.iter_custom(|iters| {
                        let (waiter, notifier) = signals::idle_wake_pair();
                        let notifier = std::thread::spawn(move || {
                            bind_current_thread(cpu_for(0)).expect("sched_setaffinity");
                            block_on(notifier.run(iters))
                        });
                        ringsteal_rt::run_pinned(&rt, 1, waiter.run(iters));
                        notifier.join().expect("notifier thread")
                    })
                });
            }),
            entry("tokio", |g| {
                // tokio: threads bound to CPUs 0 and 1, as in ping_pong_rtt/pinned_*;
                // waiter and notifier as the `block_on` futures of two current_thread
                // runtimes.
                let th = tokio_rt::PinnedThreads::new(2);
                g.bench_function("tokio", |b| {
                    b.iter_custom(|iters| per_thread_idle_wake(&th, iters))
                });
            }),
            entry("compio", |g| {
                // compio: the same on two runtimes bound to CPUs 0 and 1.
                let th = compio_rt::Threads::pinned_to_cpus(2);
                g.bench_function("compio", |b| {
                    b.iter_custom(|iters| per_thread_idle_wake(&th, iters))
                });
            }),
        ],
    );
    // spargio: not expressible (its shards never park); see NOTES.md.
    g.finish();
}

/// `idle_wake_latency` on a runtime per thread (tokio, compio): the waiter on thread 1 and
/// the notifier on thread 0, each its runtime's `block_on` future. Returns the notifier's
/// sum of samples.
fn per_thread_idle_wake(th: &impl RuntimePerThread, iters: u64) -> Duration {
    let (waiter, notifier) = signals::idle_wake_pair();
    let _waiter = th.run_on(1, move || waiter.run(iters));
    th.run_on(0, move || notifier.run(iters))
        .recv()
        .expect("notifier")
}

criterion_group!(
    benches,
    spawn_join,
    ping_pong,
    fanout_fanin_balanced,
    fanout_fanin_skewed,
    steal_imbalance,
    idle_wake
);
criterion_main!(benches);
