//! 1,000 concurrent connections, each echoing 1 MiB through a server whose connection tasks
//! are placed round-robin over two shards, under every wake mechanism and ring mode. Every
//! byte that comes back is compared with what was sent at that position of that connection:
//! nothing lost, duplicated, reordered or crossed between connections.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::{hang_guard, Config};
use ringsteal_net::{TcpListener, TcpStream};
use ringsteal_rt::Placement;
use support::*;

const CONNECTIONS: usize = 1000;
const PER_CONNECTION: usize = 1 << 20;
const BUF: usize = 32 * 1024;

/// Two megabytes of the self-checking stream; connection `i` sends the megabyte that starts
/// at its own offset, so no two connections send the same bytes.
fn base() -> &'static [u8] {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| stream_bytes(0xec40, 0, 2 * PER_CONNECTION))
}

fn offset(i: usize) -> usize {
    (i * 7919) % PER_CONNECTION
}

/// Echoes until the client ends its stream, then ends ours.
async fn echo(stream: TcpStream) {
    let mut buf = Vec::with_capacity(BUF);
    loop {
        buf.clear();
        let (res, b) = stream.read(buf).await;
        let n = res.expect("server read");
        if n == 0 {
            return;
        }
        let (res, b) = stream.write_all(b).await;
        res.expect("server write");
        buf = b;
    }
}

/// Connection `i`: sends its megabyte from one task and checks the echo in another, on
/// whatever shards round-robin picks.
async fn client(addr: std::net::SocketAddr, i: usize) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (rd, wr) = stream.into_split();
    let sender = ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
        let start = offset(i);
        let mut pos = 0;
        while pos < PER_CONNECTION {
            let n = (BUF * 2).min(PER_CONNECTION - pos);
            let chunk = base()[start + pos..start + pos + n].to_vec();
            wr.write_all(chunk).await.0.expect("client write");
            pos += n;
        }
        // Dropping the write half ends our stream: the server finishes and closes.
    });
    let mut got = 0;
    let mut buf = Vec::with_capacity(BUF);
    loop {
        buf.clear();
        let (res, b) = rd.read(buf).await;
        let n = res.expect("client read");
        if n == 0 {
            break;
        }
        let expected = &base()[offset(i) + got..offset(i) + got + n];
        assert!(
            b[..n] == *expected,
            "connection {i}: echo differs from what was sent at byte {got}"
        );
        got += n;
        buf = b;
    }
    assert_eq!(got, PER_CONNECTION, "connection {i}: echo ended early");
    sender.await.unwrap();
}

fn run(config: Config) {
    let rt = config.builder(2).build().unwrap();
    let per_shard = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served: Arc<[AtomicUsize; 2]> = Arc::new(Default::default());
        let server = {
            let served = served.clone();
            ringsteal_rt::spawn_with(Placement::Pinned(0), async move {
                let mut conns = Vec::with_capacity(CONNECTIONS);
                for _ in 0..CONNECTIONS {
                    let (stream, _) = listener.accept().await.expect("accept");
                    let served = served.clone();
                    conns.push(ringsteal_rt::spawn_with(
                        Placement::RoundRobin,
                        async move {
                            served[ringsteal_rt::current_shard().unwrap()].fetch_add(1, Relaxed);
                            echo(stream).await;
                        },
                    ));
                }
                for c in conns {
                    c.await.unwrap();
                }
            })
        };
        let clients: Vec<_> = (0..CONNECTIONS)
            .map(|i| ringsteal_rt::spawn_with(Placement::RoundRobin, client(addr, i)))
            .collect();
        for c in clients {
            c.await.unwrap();
        }
        server.await.unwrap();
        [served[0].load(Relaxed), served[1].load(Relaxed)]
    });
    assert_eq!(per_shard.iter().sum::<usize>(), CONNECTIONS);
    assert!(
        per_shard.iter().all(|&n| n >= CONNECTIONS / 4),
        "connections per shard: {per_shard:?}"
    );
}

#[test]
fn a_thousand_connections_echo_a_megabyte_each_intact() {
    base();
    for config in Config::ALL {
        hang_guard(
            &format!("1000 x 1 MiB echo [{config:?}]"),
            Duration::from_secs(300),
            move || run(config),
        );
    }
}
