//! Networking family of issue 12, side by side in one run:
//!
//! - stream workloads, every runtime as the *client* of the same std echo peer (a thread
//!   per connection, `net::thread_server::echo`), as in spargio's own network benchmarks:
//!   `net_echo_rtt_256b`, `net_stream_4k_window32`, `net_stream_hotspot_rotation_4k`,
//!   `net_pipeline_hotspot_rotation_4k_window32` (shapes in `workloads::net_streams`, client
//!   loops in `net_clients.rs`);
//! - HTTP/1.1 servers under `wrk` with 1,000 keep-alive connections: `http_1000_concurrent`
//!   (`GET /`, the 14-byte greeting), `..._pipelined16` (16 requests per write) and
//!   `..._16k` (16 KiB bodies), against `examples/http_server`'s code on ringsteal
//!   (`http_ringsteal.rs`), a tokio server of the same shape (`http_tokio.rs`), a std thread-per-connection server
//!   and a raw io_uring floor (`http_floor.rs`). Every server runs on threads of its own; the
//!   bench thread only runs wrk. Beside each time, server CPU per request (`net::report`),
//!   and again from wrk runs interleaved across the servers (`interleaved_cpu`).
//!
//! Every runtime gets `threads()` threads; the runtimes and servers of a group run in a
//! rotated order (`peers::run_rotated`). Every server is first checked, answer by answer,
//! by the in-process client (`net::http_client`); that check is all the http groups do in
//! criterion's `--test` pass when `wrk` is missing. Measuring needs wrk
//! (`apt-get install -y wrk`): without it the http groups measure nothing and say so.

mod http_floor;
mod http_ringsteal;
mod http_tokio;
mod http_tokio_connection;
mod net_clients;
mod peers;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use ringsteal::Placement;
use ringsteal_benches::http::server::Reads;
use ringsteal_benches::net::interleaved::{first_measured_round, Turns};
use ringsteal_benches::net::thread_server::{self, ThreadServer};
use ringsteal_benches::net::{http_client, raise_fd_limit, report, wrk};
use ringsteal_benches::workloads::net_streams::Shape;
use ringsteal_benches::{order, threads};

use peers::{compio_rt, entry, ringsteal_rt, run_rotated, spargio_rt, tokio_rt, Group};

/// Whether criterion runs in `--test` mode (every benchmark once): the http groups then use
/// small wrk runs.
fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// The first round an interleaved group keeps: [`first_measured_round`], which assumes
/// criterion's normal sampling (warm-up calls, then one call per sample). `--quick` and
/// `--profile-time` sample otherwise, so which calls were warm-up cannot be told there: every
/// round is kept, and a note says so.
fn first_kept_round(call_starts: &[usize], samples: usize) -> usize {
    let other_sampling = std::env::args()
        .any(|a| a == "--quick" || a == "--profile-time" || a.starts_with("--profile-time="));
    if other_sampling {
        static NOTE: std::sync::Once = std::sync::Once::new();
        NOTE.call_once(|| {
            eprintln!(
                "note: criterion's --quick and --profile-time sample differently: the \
                 interleaved rounds include its warm-up"
            )
        });
        0
    } else {
        first_measured_round(call_starts, samples)
    }
}

// ------------------------------------------------------------------------ stream workloads

fn stream_group(c: &mut Criterion, group: &str, shape: Shape) {
    let n = threads();
    let peer = ThreadServer::start("echo-peer", thread_server::echo).expect("echo peer");
    let addr = peer.addr();
    let mut g = c.benchmark_group(group);
    if shape == Shape::EchoRtt {
        g.throughput(Throughput::Elements(1));
    } else {
        g.throughput(Throughput::Bytes(shape.bytes_per_iteration()));
    }
    g.sample_size(stream_samples(shape));
    let spread = shape != Shape::EchoRtt;
    let mut entries = vec![
        entry("ringsteal", |g: &mut Group<'_>| {
            // The streams spawned with `ringsteal::spawn` from `block_on`, and, where there
            // are several, with `RoundRobin` (placement decides which shard each
            // connection's task lives on).
            let mut variants = vec![("ringsteal", None)];
            if spread {
                variants.push(("ringsteal_round_robin", Some(Placement::RoundRobin)));
            }
            for (id, placement) in variants {
                let rt = ringsteal_rt::runtime(n);
                g.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        net_clients::ringsteal(&rt, addr, shape, iters, placement)
                    })
                });
                if let Some(shares) = ringsteal_rt::ops_per_shard(&rt) {
                    eprintln!("{group}/{id}: ops completed per shard {shares}");
                }
            }
        }),
        entry("tokio", |g: &mut Group<'_>| {
            let rt = tokio_rt::multi_thread(n);
            g.bench_function("tokio", |b| {
                b.iter_custom(|iters| net_clients::tokio(&rt, addr, shape, iters))
            });
        }),
        entry("compio", |g: &mut Group<'_>| {
            let th = compio_rt::Threads::new(n);
            g.bench_function("compio", |b| {
                b.iter_custom(|iters| net_clients::compio(&th, addr, shape, iters))
            });
        }),
        entry("spargio", |g: &mut Group<'_>| {
            let rt = spargio_rt::build(spargio_rt::builder(n));
            g.bench_function("spargio", |b| {
                b.iter_custom(|iters| net_clients::spargio(&rt, addr, shape, iters))
            });
            drop(rt);
        }),
    ];
    if shape == Shape::EchoRtt {
        entries.push(entry("ringsteal_spinning", |g: &mut Group<'_>| {
            // The same client on shards that spin up to 50 µs before parking: no kernel
            // wake-up when the echo comes back within the spin (spargio always spins).
            let rt = ringsteal_rt::spinning(n);
            g.bench_function("ringsteal_spinning", |b| {
                b.iter_custom(|iters| net_clients::ringsteal(&rt, addr, shape, iters, None))
            });
        }));
    }
    run_rotated(&mut g, group, entries);
    interleaved_streams(&mut g, group, shape, addr, n);
    g.finish();
    drop(peer);
}

/// Criterion samples per benchmark of the stream group of `shape` (the interleaved rounds
/// it keeps: [`first_kept_round`]).
fn stream_samples(shape: Shape) -> usize {
    if shape == Shape::EchoRtt {
        100
    } else {
        20
    }
}

/// The runtimes of [`interleaved_streams`] for `shape`, in the order of its records (and of
/// [`stream_turn`]'s `i`). The second ringsteal row is `RoundRobin` placement for the
/// multi-stream shapes; for the echo round trip (one stream, in the driver) shards that spin
/// before they park.
fn stream_runtimes(shape: Shape) -> [&'static str; 5] {
    let second = if shape == Shape::EchoRtt {
        "ringsteal_spinning"
    } else {
        "ringsteal_round_robin"
    };
    ["ringsteal", second, "tokio", "compio", "spargio"]
}

/// Iterations of `shape` in one runtime's turn of [`interleaved_streams`]: a few tenths of a
/// second each, so that the start of a turn (a runtime just built, new connections, new echo
/// threads) is a small part of it, as in criterion's samples.
fn turn_iterations(shape: Shape) -> u64 {
    match shape {
        Shape::EchoRtt => 5_000,
        Shape::Window => 200,
        Shape::HotspotRotation => 20,
        _ => 10,
    }
}

/// One turn of runtime `i` of [`stream_runtimes`]: built, `iters` iterations of `shape`
/// (the time the client loop reports), dropped (one runtime alive at a time, so spargio's
/// spinning never takes CPU from another).
fn stream_turn(
    i: usize,
    shape: Shape,
    addr: std::net::SocketAddr,
    n: usize,
    iters: u64,
) -> Duration {
    match i {
        1 if shape == Shape::EchoRtt => {
            net_clients::ringsteal(&ringsteal_rt::spinning(n), addr, shape, iters, None)
        }
        0 | 1 => {
            let rt = ringsteal_rt::runtime(n);
            let placement = (i == 1).then_some(Placement::RoundRobin);
            net_clients::ringsteal(&rt, addr, shape, iters, placement)
        }
        2 => net_clients::tokio(&tokio_rt::multi_thread(n), addr, shape, iters),
        3 => net_clients::compio(&compio_rt::Threads::new(n), addr, shape, iters),
        _ => {
            let rt = spargio_rt::build(spargio_rt::builder(n));
            let took = net_clients::spargio(&rt, addr, shape, iters);
            drop(rt);
            took
        }
    }
}

/// Benchmark `<group>/interleaved`: the stream shapes with the runtimes' turns interleaved.
/// One criterion iteration is a round of one turn per runtime ([`turn_iterations`] each), in
/// an order shuffled every round ([`order::round_order`]); only the rounds of criterion's
/// measurement are kept, not its warm-up's. It prints, per peer, the median over the rounds of the
/// peer's time divided by ringsteal's (above 1: ringsteal faster), for both ringsteal rows,
/// and records every turn for the report ([`Turns`]). Criterion's groups above measure one
/// runtime after the other, and this VM's speed drifts over minutes with the host's load, so
/// a drift between two runtimes' turns reads as a difference between them; here every
/// runtime sees every stretch of the run.
fn interleaved_streams(
    g: &mut Group<'_>,
    group: &str,
    shape: Shape,
    addr: std::net::SocketAddr,
    n: usize,
) {
    let iters = if test_mode() {
        1
    } else {
        turn_iterations(shape)
    };
    let names = stream_runtimes(shape);
    let mut turns = Turns::new(&names, iters);
    let mut round = 0;
    let mut call_starts = Vec::new();
    let seed = order::seed();
    g.throughput(Throughput::Bytes(
        shape.bytes_per_iteration() * iters * names.len() as u64,
    ));
    g.bench_function("interleaved", |b| {
        b.iter_custom(|rounds| {
            call_starts.push(round as usize);
            let mut took = Duration::ZERO;
            for _ in 0..rounds {
                for i in order::round_order(seed, group, round, names.len()) {
                    let t = stream_turn(i, shape, addr, n, iters);
                    took += t;
                    turns.push(i, t);
                }
                round += 1;
            }
            took
        })
    });
    turns.drop_rounds_before(first_kept_round(&call_starts, stream_samples(shape)));
    turns.report(group, &[0, 1], 2, !test_mode());
}

fn net_echo_rtt_256b(c: &mut Criterion) {
    stream_group(c, "net_echo_rtt_256b", Shape::EchoRtt);
}

fn net_stream_4k_window32(c: &mut Criterion) {
    stream_group(c, "net_stream_4k_window32", Shape::Window);
}

fn net_stream_hotspot_rotation_4k(c: &mut Criterion) {
    stream_group(c, "net_stream_hotspot_rotation_4k", Shape::HotspotRotation);
}

fn net_pipeline_hotspot_rotation_4k_window32(c: &mut Criterion) {
    stream_group(
        c,
        "net_pipeline_hotspot_rotation_4k_window32",
        Shape::PipelineHotspot,
    );
}

// ----------------------------------------------------------------------------- http groups

/// Keep-alive connections wrk holds open.
const CONNECTIONS: usize = 1000;
/// Connections of the in-process check of every server.
const CHECK_CONNECTIONS: usize = 64;

/// One http group: what wrk asks for, and how many requests one criterion iteration is
/// (sized so an iteration takes a few tenths of a second here, 50 requests per connection
/// and up: every wrk run also opens and closes its 1,000 connections, and that is measured
/// with the requests).
struct HttpShape {
    group: &'static str,
    path: &'static str,
    pipeline: usize,
    requests: u64,
}

const HTTP_SHAPES: [HttpShape; 3] = [
    HttpShape {
        group: "http_1000_concurrent",
        path: "/",
        pipeline: 1,
        requests: 50_000,
    },
    HttpShape {
        group: "http_1000_concurrent_pipelined16",
        path: "/",
        pipeline: 16,
        requests: 400_000,
    },
    HttpShape {
        group: "http_1000_concurrent_16k",
        path: "/bytes/16384",
        pipeline: 1,
        requests: 25_000,
    },
];

impl HttpShape {
    /// Requests per criterion iteration (a few per connection in `--test` mode).
    fn requests(&self) -> u64 {
        if test_mode() {
            (CONNECTIONS * self.pipeline * 4) as u64
        } else {
            self.requests
        }
    }

    fn load(&self, iters: u64) -> wrk::Load {
        wrk::Load {
            connections: CONNECTIONS,
            threads: threads(),
            requests: self.requests() * iters,
            path: self.path.to_string(),
            pipeline: self.pipeline,
        }
    }
}

/// Registers benchmark `id` of `shape`: each iteration batch is one wrk run made by `run`,
/// its time scaled from the requests completed to the requests asked for (a thread stops
/// with requests still in flight). The runs of criterion's measurement (not its warm-up's)
/// are recorded with their CPU (`net::report`).
fn bench_wrk(
    g: &mut Group<'_>,
    shape: &HttpShape,
    id: &str,
    mut run: impl FnMut(wrk::Load) -> Result<wrk::Run, String>,
) {
    let mut runs = Vec::new();
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let load = shape.load(iters);
            let asked = load.requests;
            let r = run(load).unwrap_or_else(|e| panic!("{}/{id}: {e}", shape.group));
            runs.push(r);
            r.duration.mul_f64(asked as f64 / r.requests as f64)
        })
    });
    // One run per call: the calls are the runs.
    let call_starts: Vec<usize> = (0..runs.len()).collect();
    runs.drain(..first_kept_round(&call_starts, HTTP_SAMPLES));
    report::record(
        &format!("{}/{id}", shape.group),
        shape.requests(),
        &runs,
        !test_mode(),
    );
}

/// Checks the server at `addr` with the in-process client, then (if `with_wrk`) registers
/// benchmark `id` loading it with wrk.
fn check_and_measure(
    g: &mut Group<'_>,
    shape: &HttpShape,
    id: &str,
    addr: std::net::SocketAddr,
    with_wrk: bool,
) {
    let answered = http_client::check_server(addr, CHECK_CONNECTIONS)
        .unwrap_or_else(|e| panic!("{}/{id}: the server answered wrongly: {e}", shape.group));
    assert_eq!(
        answered,
        CHECK_CONNECTIONS as u64 * http_client::REQUESTS_PER_CONNECTION
    );
    if with_wrk {
        bench_wrk(g, shape, id, |load| wrk::run(addr, &load));
    }
}

/// Criterion samples per HTTP benchmark (wrk runs; for `interleaved`, rounds kept).
const HTTP_SAMPLES: usize = 10;

fn http_group(c: &mut Criterion, shape: &HttpShape) {
    let n = threads();
    raise_fd_limit().expect("raise the descriptor limit");
    let with_wrk = wrk::available();
    if !with_wrk {
        eprintln!(
            "{}: wrk not found (apt-get install -y wrk): NOT MEASURED; every server is only \
             checked by the in-process client",
            shape.group
        );
    }
    let mut g = c.benchmark_group(shape.group);
    g.throughput(Throughput::Elements(shape.requests()));
    g.sample_size(HTTP_SAMPLES);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_secs(1));
    let floor = format!("floor_io_uring_{n}t");
    let floor = floor.as_str();
    let mut entries = Vec::new();
    for (id, reads) in [
        ("ringsteal", Reads::Single),
        ("ringsteal_recv_stream", Reads::RecvStream),
    ] {
        entries.push(entry(id, move |g: &mut Group<'_>| {
            let s = http_ringsteal::Server::start(n, reads);
            check_and_measure(g, shape, id, s.addr(), with_wrk);
            if let Some(shares) = s.stop() {
                eprintln!("{}/{id}: ops completed per shard {shares}", shape.group);
            }
        }));
    }
    entries.push(entry("tokio", |g: &mut Group<'_>| {
        let s = http_tokio::Server::start(n);
        check_and_measure(g, shape, "tokio", s.addr(), with_wrk);
        s.stop();
    }));
    entries.push(entry("std_threads", |g: &mut Group<'_>| {
        let s = ThreadServer::start("std-http", thread_server::http).expect("std server");
        check_and_measure(g, shape, "std_threads", s.addr(), with_wrk);
    }));
    entries.push(entry(floor, move |g: &mut Group<'_>| {
        let s = http_floor::Server::start(n).expect("io_uring floor server");
        check_and_measure(g, shape, floor, s.addr(), with_wrk);
        s.stop();
    }));
    run_rotated(&mut g, shape.group, entries);
    if with_wrk {
        interleaved_cpu(&mut g, shape, n);
    }
    g.finish();
}

/// The servers of [`interleaved_cpu`], all up at once (idle ones park and use no CPU).
struct Interleaved {
    ringsteal: http_ringsteal::Server,
    recv_stream: http_ringsteal::Server,
    tokio: http_tokio::Server,
    floor: http_floor::Server,
}

impl Interleaved {
    /// Ids, in the order of [`addrs`](Self::addrs) (ringsteal's first, tokio's third).
    fn ids(n: usize) -> [String; 4] {
        [
            "ringsteal".into(),
            "ringsteal_recv_stream".into(),
            "tokio".into(),
            format!("floor_io_uring_{n}t"),
        ]
    }

    fn start(n: usize) -> Self {
        Self {
            ringsteal: http_ringsteal::Server::start(n, Reads::Single),
            recv_stream: http_ringsteal::Server::start(n, Reads::RecvStream),
            tokio: http_tokio::Server::start(n),
            floor: http_floor::Server::start(n).expect("io_uring floor server"),
        }
    }

    fn addrs(&self) -> [std::net::SocketAddr; 4] {
        [
            self.ringsteal.addr(),
            self.recv_stream.addr(),
            self.tokio.addr(),
            self.floor.addr(),
        ]
    }

    fn stop(self) {
        drop((self.ringsteal.stop(), self.recv_stream.stop()));
        self.tokio.stop();
        self.floor.stop();
    }
}

/// Benchmark `<group>/interleaved`: server CPU per request with the servers' wrk runs
/// interleaved. One criterion iteration is a round of one wrk run per server (ringsteal's
/// two, tokio's, the floor's), in an order shuffled every round ([`order::round_order`]: no
/// server always runs right after the same one, whose closing connections would otherwise
/// always fall into its run); only the rounds of criterion's measurement are kept. On this VM the CPU a request
/// costs drifts by a quarter over minutes (the host's load), and the criterion runs above
/// measure one server after the other, so a drift between two servers' turns reads as a
/// difference between them; here every server sees every stretch of the run. The runs are
/// recorded as `<group>/interleaved/<server>` (`net::report`), and the median of the
/// per-round ratios of tokio's CPU to each ringsteal server's is printed.
fn interleaved_cpu(g: &mut Group<'_>, shape: &HttpShape, n: usize) {
    let ids = Interleaved::ids(n);
    let mut servers: Option<Interleaved> = None;
    let mut runs: Vec<Vec<wrk::Run>> = vec![Vec::new(); ids.len()];
    let mut round = 0;
    let mut call_starts = Vec::new();
    let seed = order::seed();
    g.throughput(Throughput::Elements(shape.requests() * ids.len() as u64));
    g.bench_function("interleaved", |b| {
        b.iter_custom(|iters| {
            call_starts.push(round as usize);
            let addrs = servers.get_or_insert_with(|| Interleaved::start(n)).addrs();
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                for i in order::round_order(seed, shape.group, round, ids.len()) {
                    let run = wrk::run(addrs[i], &shape.load(1))
                        .unwrap_or_else(|e| panic!("{}/interleaved/{}: {e}", shape.group, ids[i]));
                    took += run.duration;
                    runs[i].push(run);
                }
                round += 1;
            }
            took
        })
    });
    let Some(servers) = servers else {
        return; // filtered out
    };
    servers.stop();
    let first = first_kept_round(&call_starts, HTTP_SAMPLES);
    for r in &mut runs {
        r.drain(..first.min(r.len()));
    }
    for (id, runs) in ids.iter().zip(&runs) {
        let id = format!("{}/interleaved/{id}", shape.group);
        report::record(&id, shape.requests(), runs, !test_mode());
    }
    let cpu = |r: &wrk::Run| r.server_cpu.as_secs_f64() / r.requests.max(1) as f64;
    for i in 0..2 {
        let mut ratios: Vec<f64> = runs[2]
            .iter()
            .zip(&runs[i])
            .map(|(tokio, mine)| cpu(tokio) / cpu(mine))
            .collect();
        ratios.sort_by(f64::total_cmp);
        eprintln!(
            "{}/interleaved/{}: tokio's server CPU per request / ringsteal's, median of {} \
             rounds {:.2}x (range {:.2}-{:.2}x)",
            shape.group,
            ids[i],
            ratios.len(),
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}

fn http_1000_concurrent(c: &mut Criterion) {
    http_group(c, &HTTP_SHAPES[0]);
}

fn http_1000_concurrent_pipelined16(c: &mut Criterion) {
    http_group(c, &HTTP_SHAPES[1]);
}

fn http_1000_concurrent_16k(c: &mut Criterion) {
    http_group(c, &HTTP_SHAPES[2]);
}

criterion_group!(
    benches,
    net_echo_rtt_256b,
    net_stream_4k_window32,
    net_stream_hotspot_rotation_4k,
    net_pipeline_hotspot_rotation_4k_window32,
    http_1000_concurrent,
    http_1000_concurrent_pipelined16,
    http_1000_concurrent_16k
);
criterion_main!(benches);
