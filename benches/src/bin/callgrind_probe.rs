//! Fixed workloads for instruction counting with valgrind's callgrind
//! (`scripts/bench_callgrind.sh`): instruction counts are repeatable on a noisy
//! machine where timings are not.
//!
//! ```text
//! callgrind_probe spawn_join N   # shards(1): spawn N tiny tasks, then join them all
//! callgrind_probe cross_wake N   # shards(2): N round trips between a task Pinned(0)
//!                                # and a task Pinned(1), two cross-shard wakes each
//! callgrind_probe op_nop N       # shards(1): N `IORING_OP_NOP` ops awaited one by one
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

use ringsteal::{IdleStrategy, Placement, Runtime};

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
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!("usage: callgrind_probe spawn_join|cross_wake|op_nop N");
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
