//! Connections waiting in `read_buf` hold no read buffer: the read waits in the kernel with a
//! provided buffer to be picked when data arrives, as tokio's `read_buf` waits on readiness
//! with none. (Reading into a buffer of its own held 4 KiB per idle connection: 8 MB more
//! than tokio for 2,000 idle connections in a ported mini-redis.) A test binary of its own,
//! since it counts the process's live bytes with a global allocator.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use common::counting::{live_bytes, Counting};
use common::Config;
use ringsteal_net::TcpStream;
use ringsteal_rt::io::{AsyncReadOwned, BufWriter};
use ringsteal_rt::RuntimeHandle;
use support::*;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The live bytes per reader that `start` (which sets `readers` reads going) adds once every
/// one of them waits in the kernel: the task, its future and the request's cell, and a
/// read buffer if the read holds one.
async fn bytes_each_waiting_read_holds(
    handle: &RuntimeHandle,
    readers: usize,
    start: impl FnOnce(),
) -> isize {
    let in_flight_before = handle.stats().total().ops_in_flight;
    let before = live_bytes();
    start();
    common::yield_until(|| {
        handle.stats().total().ops_in_flight >= in_flight_before + readers as u64
    })
    .await;
    (live_bytes() - before) / readers as isize
}

/// `n` connected pairs: the clients, and the server ends.
async fn tcp_pairs(n: usize) -> (Vec<TcpStream>, Vec<TcpStream>) {
    let mut pairs = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (client, server) = tcp_pair().await;
        pairs.0.push(client);
        pairs.1.push(server);
    }
    pairs
}

async fn send_each_a_byte(clients: &[TcpStream]) {
    for client in clients {
        client.write_all(b"x".to_vec()).await.0.unwrap();
    }
}

#[test]
fn connections_idle_in_read_buf_hold_no_read_buffer() {
    const CONNECTIONS: usize = 128;
    let rt = Config::ALL[0].runtime(1);
    let handle = rt.handle();
    rt.block_on(async move {
        let (clients, servers) = tcp_pairs(CONNECTIONS).await;
        let frames: Vec<Vec<u8>> = (0..CONNECTIONS).map(|_| Vec::with_capacity(64)).collect();
        let mut readers = Vec::new();
        let per_connection = bytes_each_waiting_read_holds(&handle, CONNECTIONS, || {
            for (i, (server, mut frame)) in servers.into_iter().zip(frames).enumerate() {
                readers.push(ringsteal_rt::spawn(async move {
                    // Half through a `BufWriter`, as a ported `Connection` reads: the
                    // wrapper must pass `read_buf` on, not read into a buffer of its own.
                    let n = if i % 2 == 0 {
                        server.read_buf(&mut frame).await
                    } else {
                        BufWriter::new(server).read_buf(&mut frame).await
                    };
                    (n.unwrap(), frame)
                }));
            }
        })
        .await;
        assert!(
            per_connection < 2048,
            "each connection idle in read_buf holds {per_connection} bytes"
        );
        send_each_a_byte(&clients).await;
        for reader in readers {
            let (n, frame) = reader.await.unwrap();
            assert_eq!((n, &frame[..]), (1, &b"x"[..]));
        }
    });
}

/// The same after a burst: each connection first gets 32 KiB, more than one provided buffer
/// holds, so its first read ends with bytes the socket says it still has, and its second
/// takes exactly those (a read that fills its buffer leaves the hint that more may be
/// queued); the next `read_buf` finds none at hand and must wait with a provided buffer, not
/// with a ring read of the thread's spare buffer (a review found ~12 KiB of spare per
/// connection parked that way).
#[test]
fn connections_idle_in_read_buf_after_a_burst_hold_no_read_buffer() {
    const CONNECTIONS: usize = 64;
    const BURST: usize = 32 * 1024;
    let rt = Config::ALL[0].runtime(1);
    let handle = rt.handle();
    rt.block_on(async move {
        let (clients, servers) = tcp_pairs(CONNECTIONS).await;
        let burst_read = common::Signal::new();
        let go = common::Signal::new();
        let readers: Vec<_> = servers
            .into_iter()
            .map(|server| {
                let (burst_read, go) = (burst_read.clone(), go.clone());
                ringsteal_rt::spawn(async move {
                    // Room for the burst exactly: after the first 16 KiB (one provided
                    // buffer), the read of the rest asks for exactly what is queued.
                    let mut frame = Vec::with_capacity(BURST);
                    while frame.len() < BURST {
                        assert!(server.read_buf(&mut frame).await.unwrap() > 0);
                    }
                    burst_read.add();
                    go.wait_for(1).await;
                    let n = server.read_buf(&mut frame).await.unwrap();
                    (n, frame.len())
                })
            })
            .collect();
        for client in &clients {
            client.write_all(vec![7u8; BURST]).await.0.unwrap();
        }
        burst_read.wait_for(CONNECTIONS as u64).await;
        let per_connection = bytes_each_waiting_read_holds(&handle, CONNECTIONS, || go.add()).await;
        assert!(
            per_connection < 2048,
            "each connection idle in read_buf after a burst holds {per_connection} bytes"
        );
        send_each_a_byte(&clients).await;
        for reader in readers {
            assert_eq!(reader.await.unwrap(), (1, BURST + 1));
        }
    });
}
