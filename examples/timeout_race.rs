//! What happens to a read, and to its buffer, when a timeout wins the race.
//!
//! In ringsteal a read is a request the kernel holds, with the buffer it will fill. Giving up
//! on it is not free: the runtime must cancel the request in the kernel
//! (`IORING_OP_ASYNC_CANCEL`) and keep the buffer alive until the kernel says it let go.
//! Three races over a socket pair show the three outcomes:
//!
//! 1. A `time::timeout` around the read fires: the future, buffer inside, is dropped. The
//!    runtime cancels the request and frees the buffer when the cancel's completion arrives
//!    (watch "requests in flight" go from 2, the read and its cancel, to 0). The buffer
//!    never comes back.
//! 2. A deadline in the kernel (`Op::with_timeout`, a linked `IORING_OP_LINK_TIMEOUT`): the
//!    request itself fails with `TimedOut`, and its result brings the buffer back, empty and
//!    reusable.
//! 3. Data arrives as the read is given up: the kernel may already have copied it into the
//!    dropped read's buffer. The stream keeps those bytes, and the next read returns them:
//!    nothing is lost.
//!
//! Try:
//!
//! ```text
//! cargo run --example timeout_race
//! ```

use std::time::{Duration, Instant};

use ringsteal::net::UnixStream;
use ringsteal::time::timeout;
use ringsteal::{op, RuntimeHandle};
use ringsteal_examples::cli;
use ringsteal_examples::future::{race, Either};

const USAGE: &str = "timeout_race";

#[ringsteal::main(shards = 1)]
async fn main() {
    cli::args(USAGE, 0);
    if let Err(e) = races().await {
        cli::fail(USAGE, e);
    }
}

async fn races() -> std::io::Result<()> {
    let (writer, reader) = UnixStream::pair()?;

    println!("1. a timeout drops the read");
    let before = shard_stats();
    let start = Instant::now();
    let read = reader.read(Vec::with_capacity(4096));
    let res = timeout(Duration::from_millis(20), read).await;
    let right_after = shard_stats();
    println!(
        "   timed out after {:.1?}: {}",
        start.elapsed(),
        res.map_or_else(|e| e.to_string(), |_| "the read finished first".into())
    );
    println!(
        "   requests in flight right after the drop: {} (the read, whose 4 KiB buffer the runtime holds because the kernel may still write into it, and the cancel sent after it)",
        right_after.ops_in_flight
    );
    // Let the shard reap the cancellation's completion.
    while shard_stats().ops_in_flight > 0 && start.elapsed() < Duration::from_secs(5) {
        ringsteal::time::sleep(Duration::from_millis(1)).await;
    }
    let after = shard_stats();
    println!(
        "   once the kernel answered: {} in flight, {} cancelled with ASYNC_CANCEL; the buffer is freed, never returned",
        after.ops_in_flight,
        after.ops_cancelled - before.ops_cancelled
    );

    println!("2. a deadline inside the kernel");
    let start = Instant::now();
    let (res, buf) = op::recv(reader.shared_fd(), Vec::with_capacity(4096), 0)
        .with_timeout(Duration::from_millis(20))
        .await;
    println!(
        "   the request itself failed after {:.1?}: {:?}",
        start.elapsed(),
        res.map_err(|e| e.kind())
    );
    println!(
        "   and gave its buffer back: {} bytes in it, capacity {}: ready for the next read",
        buf.len(),
        buf.capacity()
    );

    println!("3. data arrives as the read is given up");
    writer.write_all(b"hello".to_vec()).await.0?;
    // Submit a read (the first poll) and drop it at once: the bytes are already there, so
    // the kernel may complete the read before the cancel reaches it.
    let first = race(reader.read(Vec::with_capacity(64)), async {}).await;
    match first {
        Either::Left((res, buf)) => println!(
            "   the read won the race: {:?}",
            res.map(|n| String::from_utf8_lossy(&buf[..n]).into_owned())
        ),
        Either::Right(()) => println!("   the read was dropped right after it was submitted"),
    }
    let (res, buf) = reader.read(Vec::with_capacity(64)).await;
    let n = res?;
    println!(
        "   the next read returns {:?}: nothing was lost",
        String::from_utf8_lossy(&buf[..n])
    );
    Ok(())
}

fn shard_stats() -> ringsteal::ShardStats {
    RuntimeHandle::current().stats().shards[0].clone()
}
