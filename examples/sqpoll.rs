//! SQPOLL: a kernel thread that takes the shard's requests from the ring, so submitting
//! costs no system call while it is awake.
//!
//! Normally a shard tells the kernel about new requests with `io_uring_enter`. With
//! `Builder::sqpoll(idle)` a kernel thread polls the submission queue instead, and sleeps
//! after `idle` without work (the shard wakes it with one system call). It costs a CPU while
//! it polls: worth it for a busy shard on a machine with cores to spare.
//!
//! SQPOLL is not always allowed (before Linux 5.11 it needs privileges; container policies
//! may refuse it). ringsteal then builds the ring without it and says why
//! (`ring_setups()`); this example prints that explanation and exits cleanly. `--refused`
//! shows that path on a machine that allows SQPOLL: it asks for the poller on a CPU that does
//! not exist, which every kernel refuses.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example sqpoll
//! cargo run --release --example sqpoll -- --refused
//! ```

use std::time::{Duration, Instant};

use ringsteal::{op, IdleStrategy, RingMode, Runtime};
use ringsteal_examples::{cli, future::join_all};

const USAGE: &str = "sqpoll [--refused]";
const REQUESTS: usize = 20_000;

fn main() {
    let args = cli::args(USAGE, 1);
    let refused = match args.as_slice() {
        [] => false,
        [flag] if flag == "--refused" => true,
        _ => cli::usage_error(USAGE, "the only argument is --refused"),
    };
    // A shard that spins briefly before parking, so that it can see completions without
    // entering the kernel to wait for them.
    let idle = IdleStrategy::SpinThenPark(Duration::from_micros(200));
    let plain = Runtime::builder().shards(1).idle(idle);
    let polled = plain
        .clone()
        .sqpoll(Duration::from_millis(100))
        .sqpoll_refused_for_testing(refused);

    let rt = polled.build().unwrap_or_else(|e| cli::fail(USAGE, e));
    let setup = rt.handle().ring_setups()[0].clone().expect("one shard");
    if setup.mode != RingMode::SqPoll {
        println!("SQPOLL is not permitted here:");
        for refusal in &setup.refused {
            println!("   {refusal}");
        }
        println!(
            "ringsteal built the ring as {:?} instead: the same program runs unchanged, with one system call per batch of submissions.",
            setup.mode
        );
        println!(
            "{REQUESTS} requests on the fallback ring: {}",
            workload(&rt)
        );
        return;
    }
    println!("shard 0's ring: {setup} (a kernel thread polls its submission queue)");
    let polled_run = workload(&rt);
    drop(rt);
    let rt = plain.build().unwrap_or_else(|e| cli::fail(USAGE, e));
    let plain_run = workload(&rt);
    let mode = rt.handle().ring_setups()[0]
        .clone()
        .expect("one shard")
        .mode;
    println!("{REQUESTS} requests, in batches of 100:");
    println!("   {:<20} {polled_run}", "SqPoll ring:");
    println!("   {:<20} {plain_run}", format!("{mode:?} ring:"));
    println!(
        "(With SQPOLL the shard enters the kernel only to wait, when the poller has not finished a batch by the time the shard runs out of work: on a machine whose CPUs are all busy, the poller waits for a CPU too.)"
    );
}

/// What a run of the workload cost.
struct Run {
    took: Duration,
    enters: u64,
    waits: u64,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>10.1?}, {:>5} system calls, {:>5} of them to wait for completions",
            self.took, self.enters, self.waits
        )
    }
}

/// Runs `REQUESTS` no-op requests, 100 at a time, on `rt`'s shard 0.
fn workload(rt: &Runtime) -> Run {
    let before = rt.handle().stats().shards[0].clone();
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..REQUESTS / 100 {
            for res in join_all((0..100).map(|_| op::nop())).await {
                if let Err(e) = res {
                    cli::fail(USAGE, format_args!("a no-op request failed: {e}"));
                }
            }
        }
    });
    let after = rt.handle().stats().shards[0].clone();
    Run {
        took: start.elapsed(),
        enters: after.enters - before.enters,
        waits: after.parks - before.parks,
    }
}
