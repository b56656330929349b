//! Ping-pong between two shards over a socket pair: a counter goes back and forth, each
//! side adding one, and the round trip is timed.
//!
//! Shows cross-shard wakes: each side's task is pinned to its own shard, so every message
//! wakes the other shard, and when it is asleep the sender rings it with one
//! `IORING_OP_MSG_RING` (the "doorbells" below). The same game with both tasks on one shard
//! shows what the hop between threads costs.
//!
//! Try:
//!
//! ```text
//! cargo run --release --example ping_pong
//! cargo run --release --example ping_pong -- 100000
//! ```

use std::time::{Duration, Instant};

use ringsteal::net::UnixStream;
use ringsteal::{Placement, RuntimeHandle};
use ringsteal_examples::cli;

const USAGE: &str = "ping_pong [ROUND_TRIPS]    (default 10000)";

#[ringsteal::main(shards = 2)]
async fn main() {
    let args = cli::args(USAGE, 1);
    let rounds: u64 = cli::arg_or(&args, 0, 10_000, USAGE);
    if rounds == 0 {
        cli::usage_error(USAGE, "ROUND_TRIPS must be at least 1");
    }
    for (what, ping, pong) in [("shard 0 <-> shard 1", 0, 1), ("both on shard 0", 0, 0)] {
        let doorbells_before = doorbells();
        match game(rounds, ping, pong).await {
            Ok(rtts) => println!(
                "{what}: {rounds} round trips, median {:.1?}, p99 {:.1?}; {} doorbells rung",
                rtts[rtts.len() / 2],
                rtts[rtts.len() * 99 / 100],
                doorbells() - doorbells_before
            ),
            Err(e) => cli::fail(USAGE, e),
        }
    }
}

/// Plays `rounds` round trips with the pinger on shard `ping` and the ponger on `pong`;
/// returns the sorted round-trip times.
async fn game(rounds: u64, ping: usize, pong: usize) -> std::io::Result<Vec<Duration>> {
    let (a, b) = UnixStream::pair()?;
    let ponger = ringsteal::spawn_with(Placement::Pinned(pong), async move {
        loop {
            let (res, buf) = b.read_exact([0u8; 8]).await;
            if res.is_err() {
                return; // the pinger hung up
            }
            let n = u64::from_le_bytes(buf) + 1;
            if b.write_all(n.to_le_bytes()).await.0.is_err() {
                return;
            }
        }
    });
    let pinger = ringsteal::spawn_with(Placement::Pinned(ping), async move {
        let mut rtts = Vec::with_capacity(rounds as usize);
        for i in 0..rounds {
            let start = Instant::now();
            a.write_all(i.to_le_bytes()).await.0?;
            let (res, buf) = a.read_exact([0u8; 8]).await;
            res?;
            rtts.push(start.elapsed());
            assert_eq!(
                u64::from_le_bytes(buf),
                i + 1,
                "the counter came back wrong"
            );
        }
        Ok::<_, std::io::Error>(rtts)
    });
    let mut rtts = pinger.await.map_err(std::io::Error::other)??;
    ponger.await.map_err(std::io::Error::other)?;
    rtts.sort();
    Ok(rtts)
}

/// Doorbells rung so far (MSG_RING or eventfd wakes of a sleeping shard).
fn doorbells() -> u64 {
    let total = RuntimeHandle::current().stats().total();
    total.msg_ring_doorbells + total.eventfd_doorbells
}
