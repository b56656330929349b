//! The obvious server uses every shard (ADR-0009): an HTTP-like keep-alive load over 64
//! connections against a server written as the book's quick start writes one (an accept
//! loop spawned with `spawn`, one `spawn` per connection, nothing placed by hand) on a
//! 2-shard runtime is served by both shards, half the connections each. Checked with the
//! runtime's per-shard counters and where each connection's task ran; the placement is
//! round-robin, so the split is exact, with no timing in it. Under every wake mechanism and
//! ring mode, with `accept()` and with `incoming()`, and with `incoming()` on the
//! single-shot accepts of kernels without multishot accept.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::under_every_config;
use ringsteal_net::{TcpListener, TcpStream};
use ringsteal_rt::Feature;

const CONNECTIONS: usize = 64;
const REQUESTS: usize = 20;
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// The quick start's connection handler: read a request, write the response, repeat.
/// Records the shard it runs on, and counts itself in `ended` when the client has closed.
async fn serve(stream: TcpStream, shards: Arc<Mutex<Vec<usize>>>, ended: Arc<AtomicUsize>) {
    shards
        .lock()
        .unwrap()
        .push(ringsteal_rt::current_shard().unwrap());
    serve_requests(stream).await;
    ended.fetch_add(1, Ordering::SeqCst);
}

async fn serve_requests(stream: TcpStream) {
    let mut buf = Vec::with_capacity(1024);
    loop {
        let (res, mut b) = stream.read(buf).await;
        match res {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if stream.write_all(RESPONSE.to_vec()).await.0.is_err() {
            return;
        }
        b.clear();
        buf = b;
    }
}

/// 64 keep-alive clients on plain threads (outside the runtime, so the shards' counters
/// count the server alone), each sending `REQUESTS` requests and reading each response.
fn load(addr: SocketAddr) {
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                s.set_nodelay(true).unwrap();
                let mut got = vec![0; RESPONSE.len()];
                for _ in 0..REQUESTS {
                    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                    s.read_exact(&mut got).unwrap();
                    assert_eq!(got, RESPONSE);
                }
            })
        })
        .collect();
    clients.into_iter().for_each(|c| c.join().unwrap());
}

/// How the quick start's accept loop takes its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Accepts {
    /// `accept()` in a loop.
    OneByOne,
    /// `incoming()`, on whatever accept the kernel has (multishot here).
    Incoming,
    /// `incoming()` on a runtime without multishot accept: one accept per connection.
    IncomingSingleShot,
}

fn served_by_both_shards(name: &str, accepts: Accepts) {
    under_every_config(name, 2, move |config, b| {
        let b = match accepts {
            Accepts::IncomingSingleShot => b.without_feature(Feature::MultishotAccept),
            Accepts::OneByOne | Accepts::Incoming => b,
        };
        let rt = b.build().unwrap();
        let shards = Arc::new(Mutex::new(Vec::new()));
        let submitted = Arc::new(AtomicUsize::new(0));
        let sub = submitted.clone();
        let before = rt.handle().stats();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let s = shards.clone();
            let ended = Arc::new(AtomicUsize::new(0));
            let e = ended.clone();
            // The accept loop, as the quick start writes it.
            let server = ringsteal_rt::spawn(async move {
                if accepts != Accepts::OneByOne {
                    let mut incoming = listener.incoming();
                    while let Some(stream) = incoming.next().await {
                        sub.store(incoming.requests_submitted() as usize, Ordering::SeqCst);
                        ringsteal_rt::spawn(serve(stream.unwrap(), s.clone(), e.clone()));
                    }
                } else {
                    while let Ok((stream, _)) = listener.accept().await {
                        ringsteal_rt::spawn(serve(stream, s.clone(), e.clone()));
                    }
                }
            });
            ringsteal_rt::spawn_blocking(move || load(addr))
                .await
                .unwrap();
            server.abort();
            // Every handler has seen its client close: each response's send was reaped
            // (the clients' last reads return before the shard reaps the last sends).
            common::yield_until(|| ended.load(Ordering::SeqCst) == CONNECTIONS).await;
        });
        if accepts == Accepts::IncomingSingleShot {
            assert_eq!(
                submitted.load(Ordering::SeqCst),
                CONNECTIONS,
                "{config:?}: one single-shot accept per connection"
            );
        }
        let stats = rt.handle().stats();
        let per_shard: Vec<usize> = (0..2)
            .map(|i| shards.lock().unwrap().iter().filter(|&&s| s == i).count())
            .collect();
        assert_eq!(
            per_shard,
            [CONNECTIONS / 2; 2],
            "{config:?}: connections per shard"
        );
        assert_eq!(
            stats.total().spawns_spread - before.total().spawns_spread,
            CONNECTIONS as u64,
            "{config:?}"
        );
        // Each shard received and answered the requests of its half of the connections
        // (every handler has ended, so each of its reads and writes was reaped).
        for i in 0..2 {
            let ops = stats.shards[i].ops_completed - before.shards[i].ops_completed;
            assert!(
                ops >= (CONNECTIONS / 2 * REQUESTS * 2) as u64,
                "{config:?}: shard {i} completed {ops} ops: {stats:?}"
            );
        }
    });
}

#[test]
fn the_quick_start_server_is_served_by_both_shards() {
    served_by_both_shards("quick start server, accept()", Accepts::OneByOne);
}

#[test]
fn the_quick_start_server_with_incoming_is_served_by_both_shards() {
    served_by_both_shards("quick start server, incoming()", Accepts::Incoming);
}

/// Without multishot accept (kernels before 5.19) `incoming()` submits one single-shot
/// accept per connection, and the connections it yields are still placed on both shards.
#[test]
fn the_quick_start_server_with_incoming_on_single_shot_accepts_is_served_by_both_shards() {
    served_by_both_shards(
        "quick start server, incoming() without multishot accept",
        Accepts::IncomingSingleShot,
    );
}
