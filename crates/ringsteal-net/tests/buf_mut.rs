//! tokio's `try_read_buf` and `try_recv_buf(_from)` (feature `bytes`): reads and receives
//! that never wait, into the next chunk of a `bytes::BufMut` (memory not initialised yet),
//! which then advances; and the datagram sockets' `recv_buf(_from)`, which wait for one. Over real sockets, under every wake mechanism and ring mode: they
//! move a stream's bytes exactly across shards, respect the lanes as `try_read` does, take
//! what a dropped read or receive kept first, and grow a full `Vec` or `BytesMut`.
//! (`cargo test --workspace` turns the feature on through the examples' dependencies.)
#![cfg(feature = "bytes")]

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;

use bytes::BytesMut;
use common::with_every_runtime;
use ringsteal_net::{UdpSocket, UnixDatagram, UnixStream};
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

const LEN: usize = 1 << 20;

#[test]
fn try_read_buf_moves_a_mebibyte_exactly_across_shards_and_sees_the_end() {
    with_every_runtime("try_read_buf a mebibyte", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // Read on shard 1 by readiness alone, into a BytesMut that starts small and
            // grows as try_read_buf fills it.
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut got = BytesMut::with_capacity(100);
                loop {
                    timeout(OP_GUARD, server.readable())
                        .await
                        .expect("readable never came")
                        .unwrap();
                    match server.try_read_buf(&mut got) {
                        Ok(0) => break got,
                        Ok(_) => {}
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => panic!("try_read_buf: {e}"),
                    }
                }
            });
            let (res, _) = client.write_all(stream_bytes(7, 0, LEN)).await;
            res.unwrap();
            drop(client);
            let got = timeout(OP_GUARD, reader).await.unwrap().unwrap();
            assert!(
                got[..] == stream_bytes(7, 0, LEN)[..],
                "{config:?}: bytes lost or reordered ({} of {LEN})",
                got.len()
            );
        })
    });
}

#[test]
fn try_read_buf_respects_the_read_lane_and_takes_kept_bytes_first() {
    with_every_runtime("try_read_buf beside read", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut buf = Vec::new(); // no room at all: it grows for the first read

            // Nothing queued.
            let err = server.try_read_buf(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock, "{config:?}");
            assert!(buf.is_empty(), "advanced by nothing");

            // An owned read in flight holds the lane: try_read_buf takes none of its bytes.
            let mut read = Box::pin(server.read(Vec::with_capacity(3)));
            assert!(poll_once(&mut read).await.is_none(), "nothing sent yet");
            send_outside_the_ring(&client, b"xyz");
            until_bytes_taken(&server).await;
            let err = server.try_read_buf(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            assert!(err.to_string().contains("in flight"), "{err}");
            // Dropped after its receive took the bytes: the lane keeps them, and they come
            // first, before what the socket has next.
            drop(read);
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            send_outside_the_ring(&client, b"123");
            let mut all = Vec::new();
            while all.len() < 6 {
                server.readable().await.unwrap();
                match server.try_read_buf(&mut all) {
                    Ok(n) => assert!(n > 0, "the stream ended early"),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            assert_eq!(all, b"xyz123", "{config:?}: nothing lost or reordered");

            // A buffer that cannot grow and has no room left reads nothing: Ok(0), as
            // tokio's (the bytes stay queued).
            send_outside_the_ring(&client, b"!");
            until_bytes_waiting(&server, 1).await;
            let mut full: &mut [u8] = &mut [];
            assert_eq!(server.try_read_buf(&mut full).unwrap(), 0);
            let mut one = [0u8; 1];
            assert_eq!(server.try_read(&mut one).unwrap(), 1);
            assert_eq!(&one, b"!");
        })
    });
}

#[test]
fn try_read_buf_on_a_unix_stream_and_a_read_half() {
    with_every_runtime("try_read_buf unix", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let (read_half, _write_half) = b.into_split();
            a.write_all(b"half".to_vec()).await.0.unwrap();
            let mut got = BytesMut::new();
            while got.len() < 4 {
                timeout(OP_GUARD, read_half.readable())
                    .await
                    .unwrap()
                    .unwrap();
                match read_half.try_read_buf(&mut got) {
                    Ok(n) => assert!(n > 0, "the stream ended early"),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            assert_eq!(&got[..], b"half");
        })
    });
}

#[test]
fn try_recv_buf_takes_whole_datagrams_with_their_senders_a_kept_one_first() {
    with_every_runtime("try_recv_buf", 1, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let (rx_addr, tx_addr) = (rx.local_addr().unwrap(), tx.local_addr().unwrap());
            let mut buf = BytesMut::with_capacity(1500);
            let err = rx.try_recv_buf_from(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock, "{config:?}");

            // A datagram a dropped receive took comes first, with its sender.
            tx.send_to(b"kept", rx_addr).unwrap();
            drop_after_first_poll(rx.recv_from(Vec::with_capacity(16))).await;
            tx.send_to(b"queued", rx_addr).unwrap();
            timeout(OP_GUARD, rx.readable()).await.unwrap().unwrap();
            let (n, from) = rx.try_recv_buf_from(&mut buf).unwrap();
            assert_eq!(
                (n, &buf[..], from),
                (4, &b"kept"[..], tx_addr),
                "{config:?}"
            );
            // Then the kernel's, appended after it.
            timeout(OP_GUARD, rx.readable()).await.unwrap().unwrap();
            let (n, from) = rx.try_recv_buf_from(&mut buf).unwrap();
            assert_eq!((n, from), (6, tx_addr));
            assert_eq!(&buf[..], b"keptqueued", "{config:?}");

            // Connected: try_recv_buf.
            rx.connect(tx_addr).await.unwrap();
            tx.send_to(b"peer", rx_addr).unwrap();
            timeout(OP_GUARD, rx.readable()).await.unwrap().unwrap();
            let mut vec = Vec::new();
            assert_eq!(rx.try_recv_buf(&mut vec).unwrap(), 4);
            assert_eq!(vec, b"peer");

            // A datagram longer than the chunk is cut to it, as the kernel cuts.
            tx.send_to(&[9; 100], rx_addr).unwrap();
            timeout(OP_GUARD, rx.readable()).await.unwrap().unwrap();
            let mut small = [0u8; 10];
            let mut room: &mut [u8] = &mut small;
            assert_eq!(rx.try_recv_buf(&mut room).unwrap(), 10);
            assert_eq!(small, [9; 10]);
            // And one with no room at all is refused, taking nothing.
            tx.send_to(b"stays", rx_addr).unwrap();
            timeout(OP_GUARD, rx.readable()).await.unwrap().unwrap();
            let mut none: &mut [u8] = &mut [];
            assert!(rx.try_recv_buf(&mut none).is_err());
            let mut vec = Vec::new();
            assert_eq!(rx.try_recv_buf(&mut vec).unwrap(), 5);
            assert_eq!(vec, b"stays");

            // Unix datagram sockets: a kept one first there too.
            let (a, b) = UnixDatagram::pair().unwrap();
            a.send(b"four".to_vec()).await.0.unwrap();
            drop_after_first_poll(b.recv(Vec::with_capacity(16))).await;
            a.send(b"five!".to_vec()).await.0.unwrap();
            let mut got = Vec::new();
            while got.len() < 9 {
                timeout(OP_GUARD, b.readable()).await.unwrap().unwrap();
                match b.try_recv_buf_from(&mut got) {
                    Ok((_, from)) => assert!(from.is_unnamed()),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            assert_eq!(got, b"fourfive!", "{config:?}");
        })
    });
}

#[test]
fn recv_buf_waits_for_a_datagram_takes_a_kept_one_first_and_dropped_takes_nothing() {
    with_every_runtime("recv_buf", 2, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let (rx_addr, tx_addr) = (rx.local_addr().unwrap(), tx.local_addr().unwrap());
            let mut buf = BytesMut::with_capacity(1500);
            // Dropped while it waits, it has taken nothing.
            drop_after_first_poll(rx.recv_buf_from(&mut buf)).await;
            assert!(buf.is_empty(), "{config:?}");

            // A datagram a dropped owned receive may have kept (or its cancel left queued)
            // comes back without waiting for another.
            tx.send_to(b"kept".to_vec(), rx_addr).await.0.unwrap();
            drop_after_first_poll(rx.recv_from(Vec::with_capacity(16))).await;
            let (n, from) = timeout(OP_GUARD, rx.recv_buf_from(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the kept datagram was not taken"))
                .unwrap();
            assert_eq!(
                (n, &buf[..], from),
                (4, &b"kept"[..], tx_addr),
                "{config:?}"
            );

            // It waits: the datagram is sent from shard 1 once the receive is pending.
            let (sender, (n, from)) = {
                let mut receive = std::pin::pin!(rx.recv_buf_from(&mut buf));
                assert!(poll_once(&mut receive).await.is_none(), "nothing sent yet");
                let sender = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    tx.send_to(b"later".to_vec(), rx_addr).await.0.unwrap();
                    tx
                });
                (sender, timeout(OP_GUARD, receive).await.unwrap().unwrap())
            };
            assert_eq!((n, from), (5, tx_addr));
            assert_eq!(&buf[..], b"keptlater", "{config:?}: appended");

            // Connected: recv_buf, into a Vec.
            let tx = sender.await.unwrap();
            rx.connect(tx_addr).await.unwrap();
            tx.send_to(b"peer".to_vec(), rx_addr).await.0.unwrap();
            let mut vec = Vec::with_capacity(64);
            let n = timeout(OP_GUARD, rx.recv_buf(&mut vec))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((n, &vec[..]), (4, &b"peer"[..]), "{config:?}");

            // Unix datagram sockets.
            let (a, b) = UnixDatagram::pair().unwrap();
            let mut got = Vec::with_capacity(64);
            let (n, from) = {
                let mut receive = std::pin::pin!(b.recv_buf_from(&mut got));
                assert!(poll_once(&mut receive).await.is_none(), "nothing sent yet");
                a.send(b"unix".to_vec()).await.0.unwrap();
                timeout(OP_GUARD, receive).await.unwrap().unwrap()
            };
            assert!(from.is_unnamed());
            assert_eq!((n, &got[..]), (4, &b"unix"[..]), "{config:?}");
            a.send(b"again".to_vec()).await.0.unwrap();
            assert_eq!(
                timeout(OP_GUARD, b.recv_buf(&mut got))
                    .await
                    .unwrap()
                    .unwrap(),
                5
            );
            assert_eq!(got, b"unixagain", "{config:?}");
        })
    });
}
