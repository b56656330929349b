//! Receive streams under buffer pressure, across shards: 64 connections echo 256 KiB each
//! through a two-shard server whose connections read with `recv_stream()` and echo each
//! received buffer as it is (holding it until its write completes), with eight provided
//! buffers per shard for 32 connections each. The shards' rings run dry all the time, so
//! streams keep switching between provided buffers and heap receives (ADR-0027). Every byte
//! that comes back is compared with what was sent at that position of that connection:
//! nothing lost, duplicated, reordered or crossed. Under every wake mechanism and ring mode.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::sync::OnceLock;
use std::time::Duration;

use common::{hang_guard, Config};
use ringsteal_net::{TcpListener, TcpStream};
use ringsteal_rt::{Feature, Placement, RuntimeHandle};
use support::*;

const CONNECTIONS: usize = 64;
const PER_CONNECTION: usize = 256 * 1024;
const CHUNK: usize = 16 * 1024;

/// The self-checking stream; connection `i` sends the part that starts at its own offset.
fn base() -> &'static [u8] {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| stream_bytes(0x5eed, 0, 2 * PER_CONNECTION))
}

fn offset(i: usize) -> usize {
    (i * 7919) % PER_CONNECTION
}

/// Echoes every received buffer back as it is, until the client ends its stream.
async fn echo(stream: TcpStream) {
    let mut received = stream.recv_stream();
    while let Some(buf) = received.next().await {
        let buf = buf.expect("server receive");
        stream.write_all(buf).await.0.expect("server write");
    }
}

/// Connection `i`: sends its part from one task and checks the echo in this one.
async fn client(addr: std::net::SocketAddr, i: usize) {
    let sent = &base()[offset(i)..offset(i) + PER_CONNECTION];
    checked_echo_client(addr, i, sent, CHUNK, CHUNK, None).await;
}

fn run(config: Config) {
    let rt = config.builder(2).recv_buffers(8, 2048).build().unwrap();
    let multishot = {
        let f = rt.features();
        f.supports(Feature::MultishotRecv) && f.supports(Feature::ProvidedBufferRing)
    };
    let heap_receives = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = ringsteal_rt::spawn(async move {
            let mut conns = Vec::with_capacity(CONNECTIONS);
            for _ in 0..CONNECTIONS {
                let (stream, _) = listener.accept().await.expect("accept");
                conns.push(ringsteal_rt::spawn_with(
                    Placement::RoundRobin,
                    echo(stream),
                ));
            }
            for c in conns {
                c.await.unwrap();
            }
        });
        let clients: Vec<_> = (0..CONNECTIONS)
            .map(|i| ringsteal_rt::spawn(client(addr, i)))
            .collect();
        for c in clients {
            c.await.unwrap();
        }
        server.await.unwrap();
        RuntimeHandle::current()
            .stats()
            .total()
            .enobufs_heap_receives
    });
    if multishot {
        // Eight buffers a shard for 32 streams that each hold one while they write: the
        // rings ran dry, and data went through the heap path.
        assert!(heap_receives > 0, "{config:?}: the heap path never ran");
    }
}

#[test]
fn sixty_four_receive_streams_short_of_buffers_echo_every_byte_intact() {
    base();
    for config in Config::ALL {
        hang_guard(
            &format!("64 recv streams x 256 KiB, 8 buffers a shard [{config:?}]"),
            Duration::from_secs(120),
            move || run(config),
        );
    }
}
