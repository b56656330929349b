//! Zero-copy writes on TCP streams (`send_zc`, `write_all_zc`): large buffers arrive intact
//! although the writer scribbles over each buffer the moment it comes back (a buffer handed
//! back before the kernel let go of its pages would show as corrupted data), small ones go
//! as plain sends, and a zero-copy write holds the stream's write side until its
//! notification, so writes from tasks on two shards never interleave. Under every wake
//! mechanism and ring mode, with and without the kernel's zero-copy send.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use common::under_every_config;
use ringsteal_net::SEND_ZC_MIN;
use ringsteal_rt::{Feature, Placement};
use support::*;

const PATHS: [bool; 2] = [true, false];

#[test]
fn zero_copy_writes_arrive_intact_although_each_buffer_is_overwritten_on_return() {
    const ROUNDS: u64 = 6;
    under_every_config("write_all_zc", 1, |config, b| {
        for zero_copy in PATHS {
            let b = if zero_copy {
                b.clone()
            } else {
                b.clone().without_feature(Feature::SendZc)
            };
            let rt = b.build().unwrap();
            rt.block_on(async {
                let (client, server) = tcp_pair().await;
                let reader = ringsteal_rt::spawn(async move { read_to_eof(&server).await });
                // Sizes around the threshold and well above it.
                let sizes = [SEND_ZC_MIN - 1, SEND_ZC_MIN, 3 << 20];
                let mut pos = 0u64;
                let mut buf = Vec::new();
                for round in 0..ROUNDS {
                    let len = sizes[round as usize % sizes.len()];
                    buf.clear();
                    buf.extend_from_slice(&stream_bytes(5, pos, len));
                    let (res, back) = if round % 2 == 0 {
                        client.write_all_zc(buf).await
                    } else {
                        let (res, back) = client.send_zc(buf).await;
                        // A short send: write the rest the ordinary way.
                        let n = res.unwrap();
                        let rest = back[n..].to_vec();
                        (client.write_all(rest).await.0, back)
                    };
                    res.unwrap_or_else(|e| panic!("{config:?} zc={zero_copy}: {e}"));
                    buf = back;
                    // The kernel is done with these pages: this must not reach the reader.
                    buf.fill(0xEE);
                    pos += len as u64;
                }
                drop(client);
                let got = reader.await.unwrap();
                check_stream(5, 0, &got);
                assert_eq!(got.len() as u64, pos, "{config:?} zc={zero_copy}");
            });
        }
    });
}

#[test]
fn zero_copy_and_plain_writes_from_two_shards_never_interleave() {
    const BLOCK: usize = 256 * 1024;
    const BLOCKS: usize = 12;
    under_every_config(
        "write_all_zc and write_all from two shards",
        2,
        |config, b| {
            let rt = b.build().unwrap();
            rt.block_on(async {
                let (client, server) = tcp_pair().await;
                let reader = ringsteal_rt::spawn(async move { read_to_eof(&server).await });
                let client = std::sync::Arc::new(client);
                let writers: Vec<_> = (0..2u8)
                    .map(|w| {
                        let client = client.clone();
                        ringsteal_rt::spawn_with(Placement::Pinned(w as usize), async move {
                            for i in 0..BLOCKS {
                                let block = vec![w * 100 + i as u8; BLOCK];
                                let res = if w == 0 {
                                    client.write_all_zc(block).await.0
                                } else {
                                    client.write_all(block).await.0
                                };
                                res.unwrap();
                            }
                        })
                    })
                    .collect();
                for w in writers {
                    w.await.unwrap();
                }
                drop(client);
                let got = reader.await.unwrap();
                assert_eq!(got.len(), 2 * BLOCKS * BLOCK, "{config:?}");
                for (k, block) in got.chunks(BLOCK).enumerate() {
                    assert!(
                        block.iter().all(|&x| x == block[0]),
                        "{config:?}: block {k} mixes the bytes of two writes"
                    );
                }
            });
        },
    );
}

/// A runtime dropped while a zero-copy write waits on a peer that stopped reading (as the
/// end of `#[ringsteal::main]` drops it) shuts down at once, as with a plain write: the
/// notifications that only the peer's acknowledgement would bring are given up, their
/// buffers leaked, instead of waited for until the shutdown timeout.
#[test]
fn a_runtime_dropped_with_a_zero_copy_write_to_a_silent_peer_shuts_down_at_once() {
    under_every_config("write_all_zc at shutdown", 1, |config, b| {
        let timeout = std::time::Duration::from_secs(60);
        let rt = b.shutdown_timeout(timeout).build().unwrap();
        let peer = rt.block_on(async {
            let (listener, addr) = listener().await;
            let peer = std::net::TcpStream::connect(addr).unwrap(); // never reads
            let (server, _) = listener.accept().await.unwrap();
            ringsteal_rt::spawn(async move {
                let _ = server.write_all_zc(vec![1u8; 32 << 20]).await;
            });
            until_bytes_waiting(&peer, 1).await;
            peer
        });
        let start = std::time::Instant::now();
        drop(rt);
        let took = start.elapsed();
        assert!(
            took < timeout / 3,
            "{config:?}: the runtime took {took:?} to drop, waiting on the silent peer"
        );
        drop(peer);
    });
}

/// What the docs of `shutdown` say for a zero-copy write waiting on a peer that stopped
/// reading: `shutdown(Both)` does not end it (its buffer sits in the kernel's send queue
/// until the peer acknowledges it), but dropping the write and then the stream with a zero
/// linger does: the reset makes the kernel let go of the pages, and nothing stays in flight.
#[test]
fn a_zero_copy_write_to_a_silent_peer_ends_when_dropped_with_the_stream_at_zero_linger() {
    under_every_config("write_all_zc to a silent peer, reset", 1, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let peer = std::net::TcpStream::connect(addr).unwrap(); // never reads
            let (server, _) = listener.accept().await.unwrap();
            let server = std::sync::Arc::new(server);
            let writer = {
                let server = server.clone();
                ringsteal_rt::spawn(async move { server.write_all_zc(vec![1u8; 32 << 20]).await.0 })
            };
            until_bytes_waiting(&peer, 1).await;
            server.shutdown(std::net::Shutdown::Both).await.unwrap();
            writer.abort();
            assert!(
                writer.await.is_err(),
                "{config:?}: the write was still waiting"
            );
            let server = std::sync::Arc::into_inner(server).expect("the writer let go of it");
            server.set_zero_linger().unwrap();
            drop(server);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let in_flight = || {
                ringsteal_rt::RuntimeHandle::current()
                    .stats()
                    .total()
                    .ops_in_flight
            };
            while in_flight() > 0 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: the zero-copy send's notification never came"
                );
                ringsteal_rt::yield_now().await;
            }
        });
    });
}
