//! The client side of the stream workloads (`workloads::net_streams`) on every runtime.
//!
//! Each runtime runs the same loop per stream ([`Plan`]): write every frame of a batch
//! (one `write_all` each, awaited), then read the batch back (one `read_exact` per frame),
//! checking each frame and running its CPU stage. Connections are made (with `TCP_NODELAY`)
//! before the clock starts; the time is from just before the stream tasks are spawned to
//! just after the last is joined (compio: the makespan of its threads' spans, from a
//! barrier). `net_echo_rtt_256b`'s single stream runs in the driver itself, not spawned.
//!
//! How the 8 streams are spread over the 2 threads, each runtime's own way:
//! - ringsteal: `ringsteal::spawn` from `block_on` (shard 0: the default placement,
//!   stealable, so the idle shard takes half of the burst), or
//!   `ringsteal::spawn_with(Placement::RoundRobin, ..)`;
//! - tokio: `tokio::spawn` from a task on the multi-thread runtime;
//! - compio: stream `s` connected, spawned and run on runtime `s % 2`;
//! - spargio: `TcpStream::connect_many_round_robin` (sessions alternate between shards),
//!   each stream's task `spawn_on_session` (on its session's shard), from a driver on shard 0.

use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use compio::BufResult;
use ringsteal::Placement;
use ringsteal_benches::workloads::net_streams::{fill_frame, frame_buffer, Plan, Shape};

use crate::peers::{compio_rt, makespan, ringsteal_rt, spargio_rt, tokio_rt, Span};

/// Frames and the sum of the CPU stages of one stream.
type Done = (u64, u64);

/// The plans of every stream of `shape` for `iters` iterations.
fn plans(shape: Shape, iters: u64) -> Vec<Plan> {
    (0..shape.streams())
        .map(|s| Plan::new(shape, s, iters))
        .collect()
}

/// Panics unless the streams echoed every frame of their plans.
fn check(plans: &[Plan], done: &[Done]) {
    let want: u64 = plans.iter().map(Plan::frames).sum();
    let got: u64 = done.iter().map(|d| d.0).sum();
    assert_eq!(got, want, "frames echoed");
    black_box(done.iter().fold(0u64, |a, d| a.wrapping_add(d.1)));
}

// ------------------------------------------------------------------------------ ringsteal

async fn ringsteal_stream(stream: ringsteal::net::TcpStream, plan: Plan) -> Done {
    let (mut tx, mut rx) = (
        frame_buffer(plan.frame_len()),
        frame_buffer(plan.frame_len()),
    );
    let (mut index, mut sum) = (0u64, 0u64);
    for &batch in plan.batches() {
        for k in 0..batch as u64 {
            fill_frame(&mut tx, plan.stream(), index + k);
            let (res, b) = stream.write_all(tx).await;
            tx = b;
            res.expect("ringsteal write_all");
        }
        for k in 0..batch as u64 {
            let (res, b) = stream.read_exact(rx).await;
            rx = b;
            res.expect("ringsteal read_exact");
            sum = sum.wrapping_add(plan.receive(&rx, index + k));
        }
        index += batch as u64;
    }
    (index, sum)
}

/// `iters` iterations of `shape` on ringsteal, the streams spawned with `placement`
/// (`None`: `ringsteal::spawn`, the default placement).
pub(crate) fn ringsteal(
    rt: &ringsteal::Runtime,
    addr: SocketAddr,
    shape: Shape,
    iters: u64,
    placement: Option<Placement>,
) -> Duration {
    let plans = plans(shape, iters);
    rt.block_on(async move {
        let mut conns = Vec::new();
        for _ in 0..plans.len() {
            let s = ringsteal::net::TcpStream::connect(addr)
                .await
                .expect("connect");
            s.set_nodelay(true).expect("nodelay");
            conns.push(s);
        }
        let start = Instant::now();
        let done: Vec<Done> = if shape == Shape::EchoRtt {
            vec![ringsteal_stream(conns.pop().expect("one stream"), plans[0].clone()).await]
        } else {
            let tasks: Vec<_> = conns
                .into_iter()
                .zip(plans.iter().cloned())
                .map(|(c, p)| match placement {
                    None => ringsteal::spawn(ringsteal_stream(c, p)),
                    Some(placement) => ringsteal::spawn_with(placement, ringsteal_stream(c, p)),
                })
                .collect();
            let mut done = Vec::new();
            for t in tasks {
                done.push(ringsteal_rt::join(t).await);
            }
            done
        };
        let took = start.elapsed();
        check(&plans, &done);
        took
    })
}

// ---------------------------------------------------------------------------------- tokio

async fn tokio_stream(mut stream: tokio::net::TcpStream, plan: Plan) -> Done {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut tx, mut rx) = (
        frame_buffer(plan.frame_len()),
        frame_buffer(plan.frame_len()),
    );
    let (mut index, mut sum) = (0u64, 0u64);
    for &batch in plan.batches() {
        for k in 0..batch as u64 {
            fill_frame(&mut tx, plan.stream(), index + k);
            stream.write_all(&tx).await.expect("tokio write_all");
        }
        for k in 0..batch as u64 {
            stream.read_exact(&mut rx).await.expect("tokio read_exact");
            sum = sum.wrapping_add(plan.receive(&rx, index + k));
        }
        index += batch as u64;
    }
    (index, sum)
}

/// `iters` iterations of `shape` on tokio's multi-thread runtime.
pub(crate) fn tokio(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    shape: Shape,
    iters: u64,
) -> Duration {
    let plans = plans(shape, iters);
    tokio_rt::run_on_worker(rt, async move {
        let mut conns = Vec::new();
        for _ in 0..plans.len() {
            let s = tokio::net::TcpStream::connect(addr).await.expect("connect");
            s.set_nodelay(true).expect("nodelay");
            conns.push(s);
        }
        let start = Instant::now();
        let done: Vec<Done> = if shape == Shape::EchoRtt {
            vec![tokio_stream(conns.pop().expect("one stream"), plans[0].clone()).await]
        } else {
            let tasks: Vec<_> = conns
                .into_iter()
                .zip(plans.iter().cloned())
                .map(|(c, p)| tokio::spawn(tokio_stream(c, p)))
                .collect();
            let mut done = Vec::new();
            for t in tasks {
                done.push(t.await.expect("tokio stream task"));
            }
            done
        };
        let took = start.elapsed();
        check(&plans, &done);
        took
    })
}

// --------------------------------------------------------------------------------- compio

async fn compio_stream(mut stream: compio::net::TcpStream, plan: Plan) -> Done {
    use compio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut tx, mut rx) = (
        frame_buffer(plan.frame_len()),
        frame_buffer(plan.frame_len()),
    );
    let (mut index, mut sum) = (0u64, 0u64);
    for &batch in plan.batches() {
        for k in 0..batch as u64 {
            fill_frame(&mut tx, plan.stream(), index + k);
            let BufResult(res, b) = stream.write_all(tx).await;
            tx = b;
            res.expect("compio write_all");
        }
        for k in 0..batch as u64 {
            rx.clear();
            let BufResult(res, b) = stream.read_exact(rx).await;
            rx = b;
            res.expect("compio read_exact");
            sum = sum.wrapping_add(plan.receive(&rx, index + k));
        }
        index += batch as u64;
    }
    (index, sum)
}

/// `iters` iterations of `shape` on one compio runtime per thread; stream `s` on thread
/// `s % threads`.
pub(crate) fn compio(
    th: &compio_rt::Threads,
    addr: SocketAddr,
    shape: Shape,
    iters: u64,
) -> Duration {
    let plans = plans(shape, iters);
    let active = th.len().min(plans.len());
    let barrier = Arc::new(Barrier::new(active));
    let rxs: Vec<_> = (0..active)
        .map(|t| {
            let mine: Vec<Plan> = plans.iter().skip(t).step_by(active).cloned().collect();
            let barrier = barrier.clone();
            th.spawn_task_on(t, move || async move {
                let mut conns = Vec::new();
                for _ in 0..mine.len() {
                    let s = compio::net::TcpStream::connect(addr)
                        .await
                        .expect("connect");
                    s.set_nodelay(true).expect("nodelay");
                    conns.push(s);
                }
                barrier.wait();
                let start = Instant::now();
                let done: Vec<Done> = if shape == Shape::EchoRtt {
                    vec![compio_stream(conns.pop().expect("one stream"), mine[0].clone()).await]
                } else {
                    let tasks: Vec<_> = conns
                        .into_iter()
                        .zip(mine)
                        .map(|(c, p)| compio::runtime::spawn(compio_stream(c, p)))
                        .collect();
                    let mut done = Vec::new();
                    for t in tasks {
                        done.push(compio_rt::join(t).await);
                    }
                    done
                };
                ((start, Instant::now()), done)
            })
        })
        .collect();
    let mut spans: Vec<Span> = Vec::new();
    let mut done = Vec::new();
    for rx in rxs {
        let (span, d) = rx.recv().expect("compio client thread");
        spans.push(span);
        done.extend(d);
    }
    check(&plans, &done);
    makespan(&spans)
}

// -------------------------------------------------------------------------------- spargio

async fn spargio_stream(stream: spargio::net::TcpStream, plan: Plan) -> Done {
    let (mut tx, mut rx) = (
        frame_buffer(plan.frame_len()),
        frame_buffer(plan.frame_len()),
    );
    let (mut index, mut sum) = (0u64, 0u64);
    for &batch in plan.batches() {
        for k in 0..batch as u64 {
            fill_frame(&mut tx, plan.stream(), index + k);
            tx = stream
                .write_all_owned(tx)
                .await
                .expect("spargio write_all_owned");
        }
        for k in 0..batch as u64 {
            rx = stream
                .read_exact_owned(rx)
                .await
                .expect("spargio read_exact_owned");
            sum = sum.wrapping_add(plan.receive(&rx, index + k));
        }
        index += batch as u64;
    }
    (index, sum)
}

/// `iters` iterations of `shape` on spargio, from a driver pinned to shard 0.
pub(crate) fn spargio(
    rt: &spargio::Runtime,
    addr: SocketAddr,
    shape: Shape,
    iters: u64,
) -> Duration {
    let plans = plans(shape, iters);
    let h = rt.handle();
    spargio_rt::run_pinned(rt, 0, async move {
        let done: Vec<Done>;
        let start;
        if shape == Shape::EchoRtt {
            // Session on the driver's shard (spargio's default for a connect).
            let s = spargio::net::TcpStream::connect(h.clone(), addr)
                .await
                .expect("connect");
            start = Instant::now();
            done = vec![spargio_stream(s, plans[0].clone()).await];
        } else {
            let conns =
                spargio::net::TcpStream::connect_many_round_robin(h.clone(), addr, plans.len())
                    .await
                    .expect("connect");
            start = Instant::now();
            let tasks: Vec<_> = conns
                .into_iter()
                .zip(plans.iter().cloned())
                .map(|(c, p)| {
                    c.clone()
                        .spawn_on_session(&h, spargio_stream(c, p))
                        .expect("spargio spawn_on_session")
                })
                .collect();
            let mut all = Vec::new();
            for t in tasks {
                all.push(t.await.expect("spargio stream task"));
            }
            done = all;
        }
        let took = start.elapsed();
        check(&plans, &done);
        took
    })
}
