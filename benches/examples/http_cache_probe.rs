//! What one HTTP request costs a server's thread in instructions and in first-level cache
//! misses, under valgrind's cache simulation: the http groups' ringsteal server
//! (`ringsteal_benches::http::server`, `http::serve` per connection) on one spinning shard,
//! or the same-shape tokio server (`app::Requests`) on one worker, answering `CONNS` keep-alive
//! connections that each send one request per round for `ROUNDS` rounds (a std client
//! thread). Unlike timings on this VM, the counts repeat from run to run; per request =
//! (count at 300 rounds - count at 100) / (200 x CONNS). ADR-0041 has the figures.
//!
//! ```text
//! cargo build --release -p ringsteal-benches --example http_cache_probe
//! valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes \
//!     target/release/examples/http_cache_probe ringsteal|tokio 100 ROUNDS
//! ```
//!
//! The server's thread is the main thread for ringsteal (subtract `Shard::idle`, which
//! spins: a shard parked in `io_uring_enter` would stop valgrind) and the worker for tokio.
//! How many completions one ringsteal tick handles depends on how valgrind schedules the
//! spinning shard against the client, and varies between runs (the per-tick work in
//! `tick`, `reap` and `submit`, and clock reads around the idle loop, moved the thread's
//! total by 7 % between two runs of the same code); the task's poll
//! (`ringsteal_rt::task::harness::poll`, inclusive: the request's whole path in the task)
//! repeats, so compare that between builds.

use std::io::{Read, Write};
use std::net::SocketAddr;

#[path = "../benches/http_tokio_connection.rs"]
mod http_tokio_connection;

use http_tokio_connection::connection as tokio_conn;

/// The request every connection sends, once per round.
const REQ: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

/// Opens `conns` connections to `addr`; each round, sends one request on every connection,
/// then reads every response.
fn client(addr: SocketAddr, conns: usize, rounds: usize) {
    let mut cs: Vec<std::net::TcpStream> = (0..conns)
        .map(|_| {
            let s = std::net::TcpStream::connect(addr).unwrap();
            s.set_nodelay(true).unwrap();
            s
        })
        .collect();
    let mut buf = [0u8; 4096];
    for _ in 0..rounds {
        for c in &mut cs {
            c.write_all(REQ).unwrap();
        }
        for c in &mut cs {
            let mut got = 0;
            loop {
                let n = c.read(&mut buf[got..]).unwrap();
                got += n;
                if buf[..got].ends_with(b"Hello, world!\n") {
                    break;
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(which), Some(Ok(conns)), Some(Ok(rounds))) = (
        args.get(1).map(String::as_str),
        args.get(2).map(|a| a.parse::<usize>()),
        args.get(3).map(|a| a.parse::<usize>()),
    ) else {
        eprintln!("usage: http_cache_probe ringsteal|tokio CONNS ROUNDS");
        std::process::exit(2);
    };
    match which {
        "ringsteal" => {
            let rt = ringsteal::Runtime::builder()
                .shards(1)
                .idle(ringsteal::IdleStrategy::SpinThenPark(
                    std::time::Duration::from_secs(3600),
                ))
                .build()
                .unwrap();
            let listener = rt
                .block_on(async { ringsteal::net::TcpListener::bind("127.0.0.1:0").await })
                .unwrap();
            let addr = listener.local_addr().unwrap();
            rt.block_on(async move {
                drop(ringsteal::spawn(ringsteal_benches::http::server::serve(
                    listener,
                    ringsteal_benches::http::server::Reads::Single,
                )));
                ringsteal::spawn_blocking(move || client(addr, conns, rounds))
                    .await
                    .unwrap();
            });
            drop(rt);
        }
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            let listener = rt
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .unwrap();
            let addr = listener.local_addr().unwrap();
            rt.spawn(async move {
                loop {
                    let (s, _) = listener.accept().await.unwrap();
                    tokio::spawn(tokio_conn(s));
                }
            });
            let c = std::thread::spawn(move || client(addr, conns, rounds));
            c.join().unwrap();
            rt.shutdown_background();
        }
        other => {
            eprintln!("unknown server {other:?}: ringsteal or tokio");
            std::process::exit(2);
        }
    }
}
