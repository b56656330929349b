//! Fixed workloads for instruction counting with valgrind's callgrind
//! (`scripts/bench_callgrind.sh`): instruction counts are repeatable on a noisy
//! machine where timings are not.
//!
//! ```text
//! callgrind_probe spawn_join N   # shards(1): spawn N tiny tasks, then join them all
//! callgrind_probe cross_wake N   # shards(2): N round trips between a task Pinned(0)
//!                                # and a task Pinned(1), two cross-shard wakes each
//! callgrind_probe op_nop N       # shards(1): N `IORING_OP_NOP` ops awaited one by one
//! callgrind_probe read_qd1 N     # shards(1): N 4 KiB reads of a cached file, one in flight
//! callgrind_probe read_qd32 N    # shards(1): N 4 KiB reads, 32 reader tasks in flight
//! callgrind_probe floor_qd1 N    # no runtime: the same reads on a raw ring, one in flight
//! callgrind_probe floor_qd32 N   # no runtime: the same reads on a raw ring, 32 in flight
//! callgrind_probe stream_rtt N   # shards(1): N 64-byte round trips over a UnixStream pair
//! ```
//!
//! The script runs each probe at two sizes and divides the difference in
//! instructions by the difference in operations, which cancels runtime start-up,
//! shutdown and process overhead.
//!
//! - `spawn_join` runs on a single shard (`Park`), so no second thread makes the
//!   count depend on scheduling.
//! - `op_nop` runs on a single shard too: the whole single-shot op path (the op cell,
//!   the SQE, the submit, the reap and the wake of the awaiting future), with the kernel's
//!   share of a NOP as small as it gets.
//! - `read_qd1` and `read_qd32` are `fs_read_4k_qd1`/`_qd32` on one shard: reader tasks
//!   spawned the default way, each awaiting `File::read_at` into a reused buffer (the
//!   submit, the reap, the wake and the poll to completion of every read). The file is
//!   small ([`PROBE_FILE_BLOCKS`] blocks) and written just before, so every read is a
//!   page-cache copy that completes inside the `io_uring_enter` that submits it.
//! - `floor_qd1` and `floor_qd32` read the same blocks in the same order through a bare
//!   [`Ring`] with no runtime (as `floors::uring_reads` does with the io-uring crate):
//!   what the reads cost in user space when nothing but the ring is between the program
//!   and the kernel. The difference to `read_*` is the runtime's share of every read.
//! - `stream_rtt` is the owned-buffer stream path on one shard: two tasks on the ends of a
//!   [`UnixStream::pair`](ringsteal::net::UnixStream::pair), the client `write_all`s 64
//!   bytes and `read_exact`s the echo, the server `read_exact`s and `write_all`s them back.
//!   One round trip is two writes and two reads, each taking and freeing its stream's lane
//!   (`io::Lane`) around its request: what a request/response service pays per exchange on
//!   top of the op path. Its shard spins (`SpinThenPark(1 h)`, idle loop left out, as for
//!   `cross_wake`): a shard waiting in `io_uring_enter` for a socket would stop valgrind.
//! - `cross_wake` cannot let a shard park: valgrind 3.19 (Debian 12) does not
//!   treat `io_uring_enter` as a blocking system call, so a thread waiting in it
//!   keeps valgrind's global lock and every other thread stops (the process
//!   hangs as soon as a shard parks). Its shards therefore spin
//!   (`SpinThenPark(1 h)`), and the script leaves the idle loop out of the count
//!   (`--toggle-collect` on `Shard::idle`): what is counted is the wake itself
//!   (the task's state transition, the push into the other shard's inbox and
//!   the check of its `sleeping` flag), the target's tick that takes the task
//!   from its inbox, and the polls. The MSG_RING doorbell to a *parked* shard is
//!   not in this count; `idle_wake_latency` and `ping_pong_rtt/pinned_parked`
//!   time it instead.
//!
//! Valgrind runs one thread at a time and switches threads after a fixed
//! number of basic blocks, so with no thread blocking in the kernel the
//! interleaving, and the count, repeat from run to run.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use std::time::Duration;

use ringsteal::uring::{opcode, Ring};
use ringsteal::{IdleStrategy, Placement, Runtime};
use ringsteal_benches::files::BLOCK;
use ringsteal_benches::workloads::fs_read_4k::{share, Offsets};

/// Spin budget of the `cross_wake` shards: longer than any probe runs.
const NEVER_PARK: Duration = Duration::from_secs(3600);

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(n)) = (args.next(), args.next()) else {
        usage();
    };
    let Ok(n) = n.parse::<u64>() else { usage() };
    match mode.as_str() {
        "spawn_join" => spawn_join(n),
        "cross_wake" => cross_wake(n),
        "op_nop" => op_nop(n),
        "read_qd1" => with_probe_file(|path| read(path, n, 1)),
        "read_qd32" => with_probe_file(|path| read(path, n, 32)),
        "floor_qd1" => with_probe_file(|path| floor(path, n, 1)),
        "floor_qd32" => with_probe_file(|path| floor(path, n, 32)),
        "stream_rtt" => stream_rtt(n),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: callgrind_probe spawn_join|cross_wake|op_nop|read_qd1|read_qd32|floor_qd1|floor_qd32|stream_rtt N"
    );
    std::process::exit(2);
}

fn build(shards: usize, idle: IdleStrategy) -> Runtime {
    Runtime::builder()
        .shards(shards)
        .idle(idle)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("ringsteal runtime: {e}");
            std::process::exit(1)
        })
}

/// Spawns `n` tasks on a one-shard runtime, then joins them all.
fn spawn_join(n: u64) {
    let rt = build(1, IdleStrategy::Park);
    let sum = rt.block_on(async move {
        let handles: Vec<_> = (0..n).map(|i| ringsteal::spawn(async move { i })).collect();
        let mut sum = 0u64;
        for h in handles {
            sum += h.await.expect("join");
        }
        sum
    });
    assert_eq!(sum, n * n.saturating_sub(1) / 2);
}

/// Awaits `n` NOP ops one after another on a one-shard runtime.
fn op_nop(n: u64) {
    let rt = build(1, IdleStrategy::Park);
    rt.block_on(async move {
        for _ in 0..n {
            ringsteal::op::nop().await.expect("nop");
        }
    });
}

/// Blocks in the file the read probes read: 1 MiB, small enough to write quickly under
/// valgrind and to stay in the page cache.
const PROBE_FILE_BLOCKS: u64 = 256;

/// Runs `f` with the path of a freshly written [`PROBE_FILE_BLOCKS`]-block file (in the
/// temporary directory, removed afterwards). Written just before the reads, so its pages are
/// in the page cache.
fn with_probe_file(f: impl FnOnce(&std::path::Path)) {
    let path = std::env::temp_dir().join(format!("ringsteal-callgrind-{}", std::process::id()));
    let data: Vec<u8> = (0..PROBE_FILE_BLOCKS as usize * BLOCK)
        .map(|i| i as u8)
        .collect();
    std::fs::write(&path, &data).unwrap_or_else(|e| {
        eprintln!("write {}: {e}", path.display());
        std::process::exit(1)
    });
    f(&path);
    let _ = std::fs::remove_file(&path);
}

/// `n` 4 KiB reads on a one-shard runtime by `depth` reader tasks (spawned the default way,
/// as `fs_read_4k` does), each reading its share one after another into a reused buffer.
fn read(path: &std::path::Path, n: u64, depth: usize) {
    let rt = build(1, IdleStrategy::Park);
    let path = path.to_path_buf();
    rt.block_on(async move {
        let f = Arc::new(ringsteal::fs::File::open(&path).await.expect("open"));
        let readers: Vec<_> = (0..depth)
            .map(|r| {
                let f = f.clone();
                ringsteal::spawn(async move {
                    let mut offs = Offsets::new(r, PROBE_FILE_BLOCKS);
                    let mut buf = Vec::with_capacity(BLOCK);
                    for _ in 0..share(n, depth, r) {
                        buf.clear();
                        let (res, b) = f.read_at(buf, offs.next_offset()).await;
                        buf = b;
                        assert_eq!(res.expect("read_at"), BLOCK, "short read");
                    }
                })
            })
            .collect();
        for r in readers {
            r.await.expect("reader");
        }
    });
}

/// The floor of [`read`]: the same `n` reads at the same offsets on a bare ring, `depth` in
/// flight (reader `r`'s reads in slot `r`), reaped with `submit_and_wait(1)`.
fn floor(path: &std::path::Path, n: u64, depth: usize) {
    let file = std::fs::File::open(path).expect("open");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut ring = Ring::new((depth as u32).next_power_of_two()).expect("io_uring setup");
    let mut bufs = vec![vec![0u8; BLOCK]; depth];
    let mut offs: Vec<_> = (0..depth)
        .map(|r| Offsets::new(r, PROBE_FILE_BLOCKS))
        .collect();
    let mut left: Vec<u64> = (0..depth).map(|r| share(n, depth, r)).collect();
    let mut in_flight = 0;
    let push = |ring: &mut Ring, slot: usize, buf: &mut Vec<u8>, off: u64| {
        let sqe = opcode::read(fd, buf.as_mut_ptr(), BLOCK as u32, off).with_user_data(slot as u64);
        // SAFETY: the buffer of `slot` is neither moved nor touched until this read's CQE is
        // reaped below, and `file` outlives the ring's last CQE.
        unsafe { ring.push(&sqe) }.expect("submission queue full");
    };
    for slot in 0..depth {
        if left[slot] > 0 {
            left[slot] -= 1;
            push(&mut ring, slot, &mut bufs[slot], offs[slot].next_offset());
            in_flight += 1;
        }
    }
    while in_flight > 0 {
        ring.submit_and_wait(1).expect("io_uring_enter");
        while let Some(cqe) = ring.pop_cqe() {
            assert_eq!(cqe.res, BLOCK as i32, "io_uring read failed or was short");
            in_flight -= 1;
            let slot = cqe.user_data as usize;
            if left[slot] > 0 {
                left[slot] -= 1;
                push(&mut ring, slot, &mut bufs[slot], offs[slot].next_offset());
                in_flight += 1;
            }
        }
    }
}

/// A one-shot, reusable flag with a waker: the smallest cross-task signal, so
/// the count is the runtime's wake path and not a channel's bookkeeping.
#[derive(Default)]
struct Signal {
    set: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    fn raise(&self) {
        self.set.store(true, Ordering::SeqCst);
        if let Some(w) = self.waker.lock().expect("waker lock").take() {
            w.wake();
        }
    }

    fn wait(self: &Arc<Self>) -> Wait {
        Wait(self.clone())
    }
}

struct Wait(Arc<Signal>);

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let s = &self.0;
        if s.set.swap(false, Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *s.waker.lock().expect("waker lock") = Some(cx.waker().clone());
        if s.set.swap(false, Ordering::SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// `n` round trips between a task on shard 0 and a task on shard 1: two
/// cross-shard task wakes per round trip, each normally with a MSG_RING
/// doorbell to a parked shard.
fn cross_wake(n: u64) {
    let rt = build(2, IdleStrategy::SpinThenPark(NEVER_PARK));
    let ping = Arc::new(Signal::default());
    let pong = Arc::new(Signal::default());
    rt.block_on(async move {
        let (ping2, pong2) = (ping.clone(), pong.clone());
        let responder = ringsteal::spawn_with(Placement::Pinned(1), async move {
            for _ in 0..n {
                ping2.wait().await;
                pong2.raise();
            }
        });
        let pinger = ringsteal::spawn_with(Placement::Pinned(0), async move {
            for _ in 0..n {
                ping.raise();
                pong.wait().await;
            }
        });
        pinger.await.expect("pinger");
        responder.await.expect("responder");
    });
}

/// Bytes of one `stream_rtt` message.
const RTT_MSG: usize = 64;

/// `n` round trips of [`RTT_MSG`] bytes between two tasks on the ends of a Unix stream pair,
/// on one spinning shard: the client writes and reads the echo, the server echoes.
fn stream_rtt(n: u64) {
    let rt = build(1, IdleStrategy::SpinThenPark(NEVER_PARK));
    rt.block_on(async move {
        let (client, server) = ringsteal::net::UnixStream::pair().expect("socketpair");
        let echo = ringsteal::spawn(async move {
            let mut buf = Vec::with_capacity(RTT_MSG);
            for _ in 0..n {
                buf.clear();
                let (res, b) = server.read_exact(buf).await;
                res.expect("server read_exact");
                let (res, b) = server.write_all(b).await;
                res.expect("server write_all");
                buf = b;
            }
        });
        let mut msg = vec![7u8; RTT_MSG];
        let mut back = Vec::with_capacity(RTT_MSG);
        for _ in 0..n {
            let (res, m) = client.write_all(msg).await;
            res.expect("client write_all");
            msg = m;
            back.clear();
            let (res, b) = client.read_exact(back).await;
            res.expect("client read_exact");
            back = b;
            assert_eq!(back, msg, "echo differs");
        }
        echo.await.expect("echo task");
    });
}
