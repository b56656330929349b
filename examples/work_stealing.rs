//! Work stealing: an imbalanced load, and how placement and stealing spread it.
//!
//! One task on shard 0 spawns many CPU-bound jobs of uneven size (every fourth one is eight
//! times heavier) three ways, and the runtime's counters say where they ran:
//!
//! * `Pinned(0)`: every job on shard 0. The other shards idle; the wall time is the sum.
//! * `RoundRobin`: dealt out in turn, placed before they run. Even counts, uneven work: with
//!   two shards, the heavy jobs (every fourth) all land on the same shard.
//! * `Stealable` (what `spawn` does): queued on the spawning shard, and an idle shard takes
//!   queued jobs (about half the queue at a time) before they start. Whoever is free takes
//!   the next job, so the work evens out, whatever the sizes.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example work_stealing
//! cargo run --release --example work_stealing -- 2000
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use ringsteal::{Placement, Runtime, RuntimeHandle};
use ringsteal_examples::cli;

const USAGE: &str = "work_stealing [JOBS]    (default 400)";
/// One unit of work: about 50 µs of arithmetic in a release build.
const UNIT: u64 = 20_000;

fn main() {
    let args = cli::args(USAGE, 1);
    let jobs: usize = cli::arg_or(&args, 0, 400, USAGE);
    let shards = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let rt = Runtime::builder()
        .shards(shards)
        .build()
        .unwrap_or_else(|e| cli::fail(USAGE, e));
    println!("{jobs} jobs (every fourth 8x heavier) spawned from shard 0, on {shards} shards");
    println!(
        "   {:<12} {:>10}  {:<24} {:<24} {:>7}",
        "placement", "wall", "jobs per shard", "work units per shard", "stolen"
    );
    for (name, placement) in [
        ("Pinned(0)", Placement::Pinned(0)),
        ("RoundRobin", Placement::RoundRobin),
        ("Stealable", Placement::Stealable),
    ] {
        let before = rt.handle().stats().total();
        let (wall, jobs_on, units_on) = rt.block_on(run(jobs, shards, placement));
        let after = rt.handle().stats().total();
        println!(
            "   {name:<12} {wall:>10.1?}  {:<24} {:<24} {:>7}",
            format!("{jobs_on:?}"),
            format!("{units_on:?}"),
            after.tasks_stolen - before.tasks_stolen
        );
    }
}

/// Spawns the jobs with `placement` and waits for them; returns the wall time and, per
/// shard, the jobs and the work units that ran there.
async fn run(jobs: usize, shards: usize, placement: Placement) -> (Duration, Vec<u64>, Vec<u64>) {
    let start = Instant::now();
    let handles: Vec<_> = (0..jobs)
        .map(|i| {
            let units = if i % 4 == 0 { 8 } else { 1 };
            RuntimeHandle::current().spawn_with(placement, async move {
                let mut x = i as u64;
                for _ in 0..units * UNIT {
                    x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                black_box(x);
                (ringsteal::current_shard().unwrap_or(0), units)
            })
        })
        .collect();
    let (mut jobs_on, mut units_on) = (vec![0; shards], vec![0; shards]);
    for handle in handles {
        match handle.await {
            Ok((shard, units)) => {
                jobs_on[shard] += 1;
                units_on[shard] += units;
            }
            Err(e) => cli::fail(USAGE, e),
        }
    }
    (start.elapsed(), jobs_on, units_on)
}
