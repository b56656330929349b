//! Timers: `sleep`, `interval` and `timeout`, and how late each one wakes.
//!
//! Shows that timers live in each shard's own wheel (no system call per timer, 10,000 of them
//! from one task cost almost nothing), that a sleep never ends early, and how a timeout
//! reports the deadline it missed.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example timer
//! cargo run --release --example timer -- 20    # twenty interval ticks instead of five
//! ```

use std::time::{Duration, Instant};

use ringsteal::time::{interval, sleep, timeout};
use ringsteal::RuntimeHandle;
use ringsteal_examples::{cli, future::join_all};

const USAGE: &str = "timer [TICKS]    (TICKS of the 100 ms interval, default 5)";

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let ticks: u32 = cli::arg_or(&args, 0, 5, USAGE);

    println!("1. sleep: how late it wakes (it is never early)");
    for d in [
        Duration::from_micros(100),
        Duration::from_millis(1),
        Duration::from_millis(10),
    ] {
        let mut late = Vec::new();
        for _ in 0..10 {
            let start = Instant::now();
            sleep(d).await;
            late.push(start.elapsed() - d);
        }
        late.sort();
        println!(
            "   sleep({d:?}): late by {:?} at best, {:?} median, {:?} at worst",
            late[0], late[5], late[9]
        );
    }

    println!("2. interval: a tick every 100 ms on a fixed schedule");
    let start = Instant::now();
    let mut every = interval(Duration::from_millis(100));
    for n in 0..ticks {
        every.tick().await; // the first tick is immediate
        println!("   tick {n} at +{:.1?}", start.elapsed());
    }

    println!("3. timeout: a deadline around a future");
    let start = Instant::now();
    let slow = timeout(Duration::from_millis(10), sleep(Duration::from_secs(60))).await;
    println!(
        "   a 60 s sleep under a 10 ms timeout: {} after {:.1?}",
        match slow {
            Ok(()) => "finished (unexpected)".to_owned(),
            Err(e) => format!("gave up ({e})"),
        },
        start.elapsed()
    );
    let quick = timeout(Duration::from_secs(1), async { 6 * 7 }).await;
    println!("   a ready future under a 1 s timeout: {quick:?}");

    println!("4. many timers at once");
    let fired_before = fired();
    let start = Instant::now();
    let lateness = join_all((0..10_000u64).map(|i| async move {
        let d = Duration::from_micros(i * 5); // spread over 0..50 ms
        let t = Instant::now();
        sleep(d).await;
        t.elapsed() - d
    }))
    .await;
    println!(
        "   10000 sleeps from one task, spread over 50 ms: all done in {:.1?}, the latest woke {:?} late; {} timers fired",
        start.elapsed(),
        lateness.iter().max().copied().unwrap_or_default(),
        fired() - fired_before
    );
}

/// Timers fired on this runtime so far.
fn fired() -> u64 {
    RuntimeHandle::current().stats().total().timers_fired
}
