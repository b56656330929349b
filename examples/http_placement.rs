//! A measuring harness, not a tutorial: a small HTTP/1.1 keep-alive server written the way
//! the book's quick start writes a server (an accept loop, one task per connection), with
//! the connection tasks placed one of several ways, for `scripts/server_placement.sh` to load
//! with `wrk` (ADR-0009 has the figures).
//!
//! ```text
//! http_placement <placement> <port> <seconds> [shards]
//!   default      ringsteal::spawn per connection: whatever the runtime decides
//!   acceptor     spawn_with(Placement::Stealable): the connection starts on the accept loop's
//!                shard (an idle shard may steal it before its first poll)
//!   round-robin  spawn_with(Placement::RoundRobin): connections dealt to the shards in turn
//!   reuseport    one SO_REUSEPORT listener and accept loop per shard; each connection stays
//!                on the shard whose listener the kernel gave it to
//!   incoming     like default, with listener.incoming() (one multishot accept) in place of accept()
//! ```
//!
//! With `HTTP_WORK_US=n` in the environment, each request first spins for `n` µs of CPU (a
//! handler that computes something). It prints `listening on ADDR` (port 0 picks a free
//! port; with `reuseport` every shard's listener then shares the port the first one got).
//! After `seconds` (with `0`: at SIGINT) it prints, per shard, the connections and requests it
//! served and the runtime's counters, then exits.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use ringsteal::buf::IoBuf;
use ringsteal::net::{TcpListener, TcpSocket, TcpStream};
use ringsteal::Placement;
use ringsteal_examples::cli;

const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, world!";

/// Connections and requests served, per shard.
#[derive(Default)]
struct Served {
    connections: [AtomicU64; 32],
    requests: [AtomicU64; 32],
}

/// Serves one keep-alive connection: every complete request in the buffer gets a response
/// (pipelined ones in one write); `Connection: close` ends it after the response.
async fn serve(stream: TcpStream, served: Arc<Served>, work: Duration) {
    let shard = ringsteal::current_shard().unwrap_or(0);
    served.connections[shard].fetch_add(1, Relaxed);
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut out: Vec<u8> = Vec::with_capacity(RESPONSE.len() * 4);
    loop {
        if buf.capacity() - buf.len() < 1024 {
            buf.reserve(4096);
        }
        let len = buf.len();
        let (res, slice) = stream.read(buf.slice(len..)).await;
        buf = slice.into_inner();
        match res {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut start = 0;
        let mut close = false;
        while let Some(end) = find(&buf[start..], b"\r\n\r\n") {
            let head = &buf[start..start + end];
            close |= find(head, b"Connection: close").is_some()
                || find(head, b"connection: close").is_some();
            let t0 = std::time::Instant::now();
            while t0.elapsed() < work {
                std::hint::spin_loop();
            }
            out.extend_from_slice(RESPONSE);
            start += end + 4;
            served.requests[shard].fetch_add(1, Relaxed);
        }
        buf.drain(..start);
        if !out.is_empty() {
            let (res, mut o) = stream.write_all(out).await;
            if res.is_err() {
                return;
            }
            o.clear();
            out = o;
        }
        if close {
            return;
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn reuseport_listener(port: u16) -> std::io::Result<TcpListener> {
    let s = TcpSocket::new_v4()?;
    s.set_reuseaddr(true)?;
    s.set_reuseport(true)?;
    s.bind(([127, 0, 0, 1], port).into())?;
    s.listen(1024)
}

const USAGE: &str =
    "http_placement <default|acceptor|round-robin|reuseport|incoming> <port> <seconds> [shards]";

fn main() {
    let args = cli::args(USAGE, 4);
    let mode = cli::required(&args, 0, "the placement", USAGE).to_owned();
    if ![
        "default",
        "acceptor",
        "round-robin",
        "reuseport",
        "incoming",
    ]
    .contains(&mode.as_str())
    {
        cli::usage_error(USAGE, format_args!("unknown placement {mode:?}"));
    }
    let port: u16 = cli::required(&args, 1, "the port", USAGE)
        .parse()
        .unwrap_or_else(|e| cli::usage_error(USAGE, format_args!("port: {e}")));
    let secs: u64 = cli::required(&args, 2, "the seconds", USAGE)
        .parse()
        .unwrap_or_else(|e| cli::usage_error(USAGE, format_args!("seconds: {e}")));
    let shards: usize = cli::arg_or(&args, 3, 2, USAGE);
    let work = Duration::from_micros(match std::env::var("HTTP_WORK_US") {
        Ok(w) => w
            .parse()
            .unwrap_or_else(|e| cli::usage_error(USAGE, format_args!("HTTP_WORK_US={w}: {e}"))),
        Err(_) => 0,
    });
    if !(1..=32).contains(&shards) {
        cli::usage_error(USAGE, "shards: from 1 to 32");
    }
    let rt = ringsteal::Runtime::builder()
        .shards(shards)
        .build()
        .unwrap_or_else(|e| cli::fail(USAGE, e));
    let served = Arc::new(Served::default());
    let bind = |port| {
        reuseport_listener(port)
            .unwrap_or_else(|e| cli::fail(USAGE, format_args!("cannot listen on port {port}: {e}")))
    };
    rt.block_on(async {
        // Listening for SIGINT starts before `listening on` is printed.
        let interrupted = (secs == 0).then(ringsteal::signal::ctrl_c);
        let s = served.clone();
        let first = bind(port);
        let addr = first.local_addr().unwrap_or_else(|e| cli::fail(USAGE, e));
        println!("listening on {addr}");
        if mode == "reuseport" {
            let mut first = Some(first);
            for shard in 0..shards {
                let listener = first.take().unwrap_or_else(|| bind(addr.port()));
                let s = s.clone();
                ringsteal::spawn_with(Placement::Pinned(shard), async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        let s = s.clone();
                        ringsteal::spawn_with(Placement::Pinned(shard), serve(stream, s, work));
                    }
                });
            }
        } else {
            let listener = first;
            // The accept loop as the quick start writes it: a spawned task.
            ringsteal::spawn(async move {
                if mode == "incoming" {
                    let mut incoming = listener.incoming();
                    while let Some(conn) = incoming.next().await {
                        let Ok(stream) = conn else { continue };
                        ringsteal::spawn(serve(stream, s.clone(), work));
                    }
                    return;
                }
                while let Ok((stream, _)) = listener.accept().await {
                    let task = serve(stream, s.clone(), work);
                    match mode.as_str() {
                        "acceptor" => drop(ringsteal::spawn_with(Placement::Stealable, task)),
                        "round-robin" => drop(ringsteal::spawn_with(Placement::RoundRobin, task)),
                        _ => drop(ringsteal::spawn(task)), // "default"
                    }
                }
            });
        }
        match interrupted {
            Some(interrupted) => interrupted.await.unwrap_or_else(|e| cli::fail(USAGE, e)),
            None => ringsteal::time::sleep(Duration::from_secs(secs)).await,
        }
    });
    let stats = rt.handle().stats();
    for (i, sh) in stats.shards.iter().enumerate() {
        println!(
            "shard {i}: connections {} requests {} polls {} ops {} steals {} handed_off {}",
            served.connections[i].load(Relaxed),
            served.requests[i].load(Relaxed),
            sh.polls,
            sh.ops_completed,
            sh.tasks_stolen,
            sh.tasks_handed_off,
        );
    }
    // Open connections would hold the runtime's shutdown; the figures are out.
    std::process::exit(0);
}
