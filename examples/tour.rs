//! A tour of ringsteal: what this kernel offers, the runtime's shards and how tasks are placed,
//! stealing, timers, files, cross-shard messages, cancellation, and the counters behind it.
//!
//! ```text
//! cargo run --release --example tour
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringsteal::buf::IoBuf;
use ringsteal::sync::CancellationToken;
use ringsteal::task::TaskGroup;
use ringsteal::time::{sleep, timeout};
use ringsteal::{fs, op, Placement, Runtime, RuntimeHandle};

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
    section("1. the kernel");
    kernel(&rt);
    rt.block_on(async {
        section("2. placement");
        placement(shards).await;
        section("3. stealing");
        stealing(shards).await;
        section("4. timers");
        timers().await;
        section("5. files");
        if let Err(e) = files().await {
            eprintln!("   file tour failed: {e}");
        }
        section("6. messages between shards");
        messages().await;
        section("7. cancellation");
        cancellation(shards).await;
    });
    section("8. counters");
    counters(&rt.handle());
}

fn section(title: &str) {
    println!("\n{title}");
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
        "   fs::copy of {n} bytes (linked read+write per MiB) in {:?}, equal: {}",
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

fn counters(handle: &RuntimeHandle) {
    let stats = handle.stats();
    println!(
        "   {:>5} {:>9} {:>7} {:>7} {:>9} {:>8} {:>9} {:>9} {:>10}",
        "shard", "polls", "steals", "stolen", "doorbells", "enters", "sqes", "parks", "parked"
    );
    for (i, s) in stats.shards.iter().enumerate() {
        println!(
            "   {:>5} {:>9} {:>7} {:>7} {:>9} {:>8} {:>9} {:>9} {:>10.1?}",
            i,
            s.polls,
            s.steal_successes,
            s.tasks_stolen,
            s.msg_ring_doorbells + s.eventfd_doorbells,
            s.enters,
            s.sqes_submitted,
            s.parks,
            s.parked
        );
    }
    println!(
        "   blocking pool: {} closures, {} threads alive",
        stats.blocking_spawned, stats.blocking_threads
    );
}
