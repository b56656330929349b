//! `concurrent_reads [FILE]`: 100 reads of a file in flight at once, from one task.
//!
//! Shows the async model in one picture. A read is an io_uring request that is submitted
//! when its future is first polled; a task that polls 100 of them before waiting (here with a
//! plain `join_all`, no spawning) has 100 requests in the kernel at once, sent in one
//! submission. The same 100 reads awaited one at a time cost a trip into the kernel each.
//! Both passes must read the same bytes.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example concurrent_reads               # on a 6.5 MB file it writes
//! cargo run --release --example concurrent_reads -- Cargo.lock # on any file
//! ```

use std::time::{Duration, Instant};

use ringsteal::fs::{self, File};
use ringsteal::RuntimeHandle;
use ringsteal_examples::{cli, future::join_all};

const USAGE: &str = "concurrent_reads [FILE]    (default: a 6.5 MB file written to the temp dir)";
const READS: u64 = 100;
const CHUNK: usize = 64 * 1024;

#[ringsteal::main(shards = 1)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let scratch = std::env::temp_dir().join(format!("ringsteal-reads-{}", std::process::id()));
    let path = match args.first() {
        Some(path) => path.into(),
        None => {
            let data: Vec<u8> = (0..READS as usize * CHUNK)
                .map(|i| (i % 251) as u8)
                .collect();
            if let Err(e) = fs::write(&scratch, &data).await {
                cli::fail(
                    USAGE,
                    format_args!("cannot write {}: {e}", scratch.display()),
                );
            }
            scratch.clone()
        }
    };
    let file = File::open(&path)
        .await
        .unwrap_or_else(|e| cli::fail(USAGE, format_args!("cannot open {}: {e}", path.display())));
    let len = match file.metadata().await {
        Ok(m) if m.is_file() => m.len(),
        Ok(_) => cli::fail(
            USAGE,
            format_args!("{} is not a regular file", path.display()),
        ),
        Err(e) => cli::fail(USAGE, e),
    };
    // 100 offsets spread over the file (the same few again and again on a small file).
    let offsets: Vec<u64> = (0..READS).map(|i| i * len / READS / 4096 * 4096).collect();
    println!(
        "{READS} reads of up to {} KiB from {} ({len} bytes)",
        CHUNK / 1024,
        path.display()
    );

    all_at_once(&file, &offsets).await; // once untimed, so both passes find the file cached
    let (seq, seq_cost, seq_sum) = measure(one_at_a_time(&file, &offsets)).await;
    let (con, con_cost, con_sum) = measure(all_at_once(&file, &offsets)).await;
    println!("one at a time: {seq:>10.1?}, {seq_cost}");
    println!("all at once:   {con:>10.1?}, {con_cost}");
    println!(
        "same bytes both ways: {}",
        if seq_sum == con_sum { "yes" } else { "NO" }
    );
    if args.is_empty() {
        let _ = fs::remove_file(&scratch).await;
    }
    if seq_sum != con_sum {
        std::process::exit(1);
    }
}

/// Awaits each read before starting the next.
async fn one_at_a_time(file: &File, offsets: &[u64]) -> u64 {
    let mut sum = 0;
    for &pos in offsets {
        sum += read(file, pos).await;
    }
    sum
}

/// Starts every read, then waits for them all: one task, `offsets.len()` requests in flight.
async fn all_at_once(file: &File, offsets: &[u64]) -> u64 {
    join_all(offsets.iter().map(|&pos| read(file, pos)))
        .await
        .into_iter()
        .sum()
}

/// Reads a chunk at `pos`; returns a checksum of what it read.
async fn read(file: &File, pos: u64) -> u64 {
    let (res, buf) = file.read_at(Vec::with_capacity(CHUNK), pos).await;
    match res {
        Ok(_) => buf.iter().map(|&b| u64::from(b)).sum(),
        Err(e) => cli::fail(USAGE, format_args!("read at {pos}: {e}")),
    }
}

/// Runs `work`, and says how long it took and what it cost this shard in trips into the
/// kernel (`io_uring_enter` calls) and requests submitted.
async fn measure(work: impl std::future::Future<Output = u64>) -> (Duration, String, u64) {
    let before = RuntimeHandle::current().stats().shards[0].clone();
    let start = Instant::now();
    let sum = work.await;
    let took = start.elapsed();
    let after = RuntimeHandle::current().stats().shards[0].clone();
    let cost = format!(
        "{} system calls (io_uring_enter) for {} requests",
        after.enters - before.enters,
        after.sqes_submitted - before.sqes_submitted
    );
    (took, cost, sum)
}
