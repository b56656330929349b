//! A tour of ringsteal: what this kernel offers, the runtime's shards and how tasks are placed,
//! stealing, timers, files, cross-shard messages, cancellation, an HTTP server on every shard
//! under load, and the counters behind it.
//!
//! ```text
//! cargo run --release --example tour
//! ```
//!
//! The HTTP section drives the server for 2 seconds; `RINGSTEAL_TOUR_HTTP_SECS` changes that
//! (the example test sets it short).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringsteal::buf::IoBuf;
use ringsteal::net::TcpListener;
use ringsteal::sync::CancellationToken;
use ringsteal::task::TaskGroup;
use ringsteal::time::{sleep, timeout};
use ringsteal::{fs, op, Placement, Runtime, RuntimeHandle};
use ringsteal_examples::http::{self, Client, Request, Response};

fn main() {
    let shards = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let rt = match Runtime::builder().shards(shards).build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut tour = Sections::default();
    tour.start("1. the kernel");
    kernel(&rt);
    rt.block_on(async {
        tour.start("2. placement");
        placement(shards).await;
        tour.start("3. stealing");
        stealing(shards).await;
        tour.start("4. timers");
        timers().await;
        tour.start("5. files");
        if let Err(e) = files().await {
            eprintln!("   file tour failed: {e}");
        }
        tour.start("6. messages between shards");
        messages().await;
        tour.start("7. cancellation");
        cancellation(shards).await;
        tour.start("8. an HTTP server on every shard, under load");
        if let Err(e) = http_load(shards).await {
            eprintln!("   HTTP tour failed: {e}");
        }
    });
    tour.start("9. counters");
    counters(&rt.handle());
    tour.finish();
}

/// The sections' titles as they start, and how long each took, printed at the end.
#[derive(Default)]
struct Sections {
    took: Vec<(String, Duration)>,
    current: Option<(String, Instant)>,
}

impl Sections {
    fn start(&mut self, title: &str) {
        self.end_current();
        println!("\n{title}");
        self.current = Some((title.to_owned(), Instant::now()));
    }

    fn end_current(&mut self) {
        if let Some((title, start)) = self.current.take() {
            let number = title.split('.').next().unwrap_or(&title).to_owned();
            self.took.push((number, start.elapsed()));
        }
    }

    fn finish(mut self) {
        self.end_current();
        let total: Duration = self.took.iter().map(|(_, d)| *d).sum();
        let each: Vec<String> = self
            .took
            .iter()
            .map(|(n, d)| format!("{n}: {:.2}s", d.as_secs_f64()))
            .collect();
        println!(
            "\ntour took {:.1}s ({})",
            total.as_secs_f64(),
            each.join(", ")
        );
    }
}

fn kernel(rt: &Runtime) {
    let features = ringsteal::uring::Features::get().expect("the runtime built, so io_uring works");
    let yes = |b: bool| if b { "yes" } else { "no" };
    println!(
        "   MSG_RING {} | SEND_MSG_RING {} | DEFER_TASKRUN {} | multishot recv {} | PBUF_RING {}",
        yes(features.msg_ring()),
        yes(features.send_msg_ring()),
        yes(features.defer_taskrun()),
        yes(features.multishot_recv()),
        yes(features.pbuf_ring())
    );
    println!(
        "   {} shards, rings: {:?}",
        rt.handle().shards(),
        rt.ring_modes()
    );
}

async fn placement(shards: usize) {
    let on = |p: Placement| ringsteal::spawn_with(p, async { ringsteal::current_shard().unwrap() });
    println!(
        "   Pinned(1)          -> shard {}",
        on(Placement::Pinned(1)).await.unwrap()
    );
    let a = on(Placement::Sticky(7)).await.unwrap();
    let b = on(Placement::Sticky(7)).await.unwrap();
    println!("   Sticky(7) twice    -> shards {a} and {b}");
    let mut rr = Vec::new();
    for _ in 0..shards {
        rr.push(on(Placement::RoundRobin).await.unwrap());
    }
    println!("   RoundRobin x{shards}      -> shards {rr:?}");
    let local = std::rc::Rc::new("a !Send value");
    let text = ringsteal::spawn_local(async move { local.to_string() })
        .await
        .unwrap();
    println!(
        "   spawn_local        -> {text:?} on shard {:?}",
        ringsteal::current_shard()
    );
    let err = ringsteal::try_spawn_with(Placement::Pinned(shards + 3), async {}).unwrap_err();
    println!("   Pinned({})          -> error: {err}", shards + 3);
}

async fn stealing(shards: usize) {
    // Queue stealable tasks on this shard, then keep it busy: idle shards take them.
    let ran_on = Arc::new(Mutex::new(BTreeMap::<usize, usize>::new()));
    let done = Arc::new(AtomicUsize::new(0));
    let tasks = 64;
    for _ in 0..tasks {
        let (ran_on, done) = (ran_on.clone(), done.clone());
        drop(ringsteal::spawn(async move {
            *ran_on
                .lock()
                .unwrap()
                .entry(ringsteal::current_shard().unwrap())
                .or_default() += 1;
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    let start = Instant::now();
    while done.load(Ordering::SeqCst) < tasks && start.elapsed() < Duration::from_secs(5) {
        std::hint::spin_loop(); // shard 0 is blocked in this loop
    }
    let stats = RuntimeHandle::current().stats().total();
    println!(
        "   {tasks} tasks queued on shard 0 while it spun; they ran on {:?} (shard: count)",
        ran_on.lock().unwrap()
    );
    println!(
        "   steals: {} successful of {} attempts, {} tasks stolen ({} shards)",
        stats.steal_successes, stats.steal_attempts, stats.tasks_stolen, shards
    );
    while done.load(Ordering::SeqCst) < tasks {
        ringsteal::yield_now().await;
    }
}

async fn timers() {
    for d in [Duration::from_micros(100), Duration::from_millis(1)] {
        let mut over = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            sleep(d).await;
            over.push(t.elapsed() - d);
        }
        over.sort();
        println!(
            "   sleep({d:?}): median overshoot {:?} (never early)",
            over[10]
        );
    }
    let t = Instant::now();
    let mut churn = 0;
    for _ in 0..100_000 {
        let mut first = true;
        let ready_on_second_poll = std::future::poll_fn(move |cx| {
            if std::mem::take(&mut first) {
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(())
            }
        });
        if timeout(Duration::from_millis(50), ready_on_second_poll)
            .await
            .is_ok()
        {
            churn += 1;
        }
    }
    println!(
        "   {churn} timeouts registered and cancelled in {:?}",
        t.elapsed()
    );
}

async fn files() -> std::io::Result<()> {
    let dir = std::env::temp_dir().join(format!("ringsteal-tour-{}", std::process::id()));
    fs::create_dir_all(&dir).await?;
    let path = dir.join("data.bin");
    let data: Vec<u8> = (0..(4 << 20)).map(|i| (i % 251) as u8).collect();
    let t = Instant::now();
    fs::write(&path, &data).await?;
    println!("   wrote 4 MiB in {:?}", t.elapsed());

    let file = fs::File::open(&path).await?;
    let t = Instant::now();
    let reads = 20_000;
    let mut buf = Vec::with_capacity(4096);
    for i in 0..reads {
        let offset = (i * 7919 % 1024) as u64 * 4096;
        buf.clear();
        let (res, b) = file.read_at(buf, offset).await;
        res?;
        buf = b;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "   {reads} random 4 KiB reads, one at a time: {:.0} k IOPS",
        reads as f64 / secs / 1e3
    );

    let copy = dir.join("copy.bin");
    let t = Instant::now();
    let n = fs::copy(&path, &copy).await?;
    println!(
        "   fs::copy of {n} bytes (copy_file_range on the blocking pool) in {:?}, equal: {}",
        t.elapsed(),
        fs::read(&copy).await? == data
    );

    let (res, buf) = file
        .read_at(Vec::with_capacity(16).slice(..16), 0)
        .with_timeout(Duration::from_secs(1))
        .await;
    println!(
        "   read with a kernel-side deadline: {} bytes",
        res?.min(buf.into_inner().len())
    );
    let (rx, _tx) = std::os::unix::net::UnixStream::pair()?;
    let silent = op::SharedFd::new(rx.into());
    let (res, _) = op::read_at(&silent, Vec::with_capacity(8), u64::MAX)
        .with_timeout(Duration::from_millis(2))
        .await;
    println!(
        "   read of a silent socket with a 2 ms deadline: {:?}",
        res.unwrap_err().kind()
    );

    let missing = fs::read(dir.join("missing")).await.unwrap_err();
    println!("   reading a missing file: {missing}");
    file.close().await?;
    std::fs::remove_dir_all(&dir)
}

async fn messages() {
    let handle = RuntimeHandle::current();
    let target = handle.shards() - 1;
    let receiver = ringsteal::spawn_with(Placement::Pinned(target), async {
        let mut sum = 0u64;
        for _ in 0..1000 {
            sum += ringsteal::recv_msg().await;
        }
        sum
    });
    let t = Instant::now();
    for i in 1..=1000u64 {
        handle.send_msg(target, i).unwrap();
    }
    let sum = receiver.await.unwrap();
    println!(
        "   1000 payloads sent to shard {target} inside MSG_RING completions: sum {sum} in {:?}",
        t.elapsed()
    );
}

async fn cancellation(shards: usize) {
    let root = CancellationToken::new();
    let mut group = TaskGroup::with_token(root.child_token());
    for s in 0..shards {
        let token = group.token().clone();
        group.spawn_with(Placement::Pinned(s), async move {
            token.cancelled().await;
            s
        });
    }
    root.cancel();
    let stopped: Vec<usize> = group
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    println!("   cancelling the root token stopped the group's tasks on shards {stopped:?}");
    let never = ringsteal::spawn(std::future::pending::<()>());
    never.abort();
    println!("   an aborted task reports: {}", never.await.unwrap_err());
}

/// Client connections of the HTTP section.
const HTTP_CLIENTS: usize = 32;

async fn http_load(shards: usize) -> std::io::Result<()> {
    let secs = std::env::var("RINGSTEAL_TOUR_HTTP_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(2.0);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // Observed, not assumed: each connection and request counts itself on the shard it runs on.
    let connections: Arc<Vec<AtomicU64>> =
        Arc::new((0..shards).map(|_| AtomicU64::new(0)).collect());
    let requests: Arc<Vec<AtomicU64>> = Arc::new((0..shards).map(|_| AtomicU64::new(0)).collect());
    let before = RuntimeHandle::current().stats();
    let server = {
        let (connections, requests) = (connections.clone(), requests.clone());
        // The obvious server: an accept loop (one multishot accept request, `incoming()`)
        // and a plain `spawn` per connection. A spawn right after a connection was taken is
        // dealt to the shards in turn (ADR-0009), so every shard serves with no placement
        // named here.
        ringsteal::spawn(async move {
            let mut incoming = listener.incoming();
            while let Some(Ok(stream)) = incoming.next().await {
                let (connections, requests) = (connections.clone(), requests.clone());
                ringsteal::spawn(async move {
                    connections[ringsteal::current_shard().unwrap_or(0)]
                        .fetch_add(1, Ordering::Relaxed);
                    let _ = stream.set_nodelay(true);
                    let hello = |_: Request| {
                        requests[ringsteal::current_shard().unwrap_or(0)]
                            .fetch_add(1, Ordering::Relaxed);
                        std::future::ready(Response::static_text(200, "Hello, world!\n"))
                    };
                    let _ = http::serve(stream, &hello, None).await;
                });
            }
        })
    };
    // The clients run on a runtime of their own, on another thread, so that the counters
    // below are the server's alone.
    let duration = Duration::from_secs_f64(secs);
    let clients = std::thread::spawn(move || drive_http(addr, duration));
    let load = ringsteal::spawn_blocking(move || clients.join())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|_| std::io::Error::other("the client thread panicked"))??;
    server.abort();
    let after = RuntimeHandle::current().stats();

    let mut latencies = load.latencies;
    latencies.sort();
    let n = latencies.len();
    if n == 0 {
        return Err(std::io::Error::other("no request completed"));
    }
    println!(
        "   {HTTP_CLIENTS} keep-alive connections, one request at a time each, for {:.1?}: {n} requests, {:.0} requests/s",
        load.elapsed,
        n as f64 / load.elapsed.as_secs_f64()
    );
    println!(
        "   latency as each client saw it: p50 {:.1?}, p99 {:.1?}, max {:.1?}",
        latencies[n / 2],
        latencies[n * 99 / 100],
        latencies[n - 1]
    );
    let dealt: u64 = after
        .shards
        .iter()
        .zip(&before.shards)
        .map(|(a, b)| a.spawns_spread - b.spawns_spread)
        .sum();
    println!("   connection tasks dealt to the shards in turn after an accept: {dealt}");
    println!(
        "   {:>5} {:>11} {:>9} {:>9} {:>9} {:>8} {:>7}",
        "shard", "connections", "requests", "polls", "sqes", "enters", "parks"
    );
    for (i, (b, a)) in before.shards.iter().zip(&after.shards).enumerate() {
        println!(
            "   {:>5} {:>11} {:>9} {:>9} {:>9} {:>8} {:>7}",
            i,
            connections[i].load(Ordering::Relaxed),
            requests[i].load(Ordering::Relaxed),
            a.polls - b.polls,
            a.sqes_submitted - b.sqes_submitted,
            a.enters - b.enters,
            a.parks - b.parks
        );
    }
    Ok(())
}

/// What the HTTP clients measured.
struct Load {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

/// Runs `HTTP_CLIENTS` keep-alive clients against `addr` for `duration`, on a one-shard
/// runtime of this thread; each sends `GET /` and waits for the answer, again and again.
fn drive_http(addr: SocketAddr, duration: Duration) -> std::io::Result<Load> {
    let rt = Runtime::builder().shards(1).build()?;
    rt.block_on(async move {
        let start = Instant::now();
        let clients: Vec<_> = (0..HTTP_CLIENTS)
            .map(|_| {
                ringsteal::spawn(async move {
                    let mut client = Client::connect(addr).await?;
                    let mut latencies = Vec::new();
                    // At least one request each, however late this client connected: every
                    // connection is then served before the counts below are read.
                    loop {
                        let sent = Instant::now();
                        let (head, body) = client.get("/").await?;
                        latencies.push(sent.elapsed());
                        if head.status != 200 || body != b"Hello, world!\n" {
                            return Err(std::io::Error::other("a wrong answer"));
                        }
                        if start.elapsed() >= duration {
                            break;
                        }
                    }
                    Ok::<_, std::io::Error>(latencies)
                })
            })
            .collect();
        let mut all = Vec::new();
        for client in clients {
            all.extend(client.await.map_err(std::io::Error::other)??);
        }
        Ok(Load {
            latencies: all,
            elapsed: start.elapsed(),
        })
    })
}

fn counters(handle: &RuntimeHandle) {
    let stats = handle.stats();
    println!(
        "   {:>5} {:>9} {:>7} {:>7} {:>9} {:>8} {:>9} {:>9} {:>10} {:>10}",
        "shard",
        "polls",
        "steals",
        "stolen",
        "doorbells",
        "enters",
        "sqes",
        "parks",
        "parked",
        "busy"
    );
    for (i, s) in stats.shards.iter().enumerate() {
        println!(
            "   {:>5} {:>9} {:>7} {:>7} {:>9} {:>8} {:>9} {:>9} {:>10.1?} {:>10.1?}",
            i,
            s.polls,
            s.steal_successes,
            s.tasks_stolen,
            s.msg_ring_doorbells + s.eventfd_doorbells,
            s.enters,
            s.sqes_submitted,
            s.parks,
            s.parked,
            s.busy
        );
    }
    println!(
        "   blocking pool: {} closures, {} threads alive",
        stats.blocking_spawned, stats.blocking_threads
    );
}
