//! Datagram receives are cancel-safe, as tokio's are: a datagram the kernel delivered to a
//! receive whose future was dropped (the `select!` branch not taken, the `timeout` that
//! fired) is kept for the socket's next receive, peek or `try_recv`, not lost. And a receive
//! into a buffer with no room, which would discard a whole datagram, is refused. Under every
//! wake mechanism and ring mode, for UDP and Unix datagram sockets.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::with_every_runtime;
use ringsteal_net::{UdpSocket, UnixDatagram};
use support::drop_after_first_poll;

/// A hang guard for a receive that should find its datagram.
async fn within<F: Future>(f: F) -> F::Output {
    ringsteal_rt::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the datagram was lost")
}

#[test]
fn a_datagram_taken_by_a_dropped_receive_goes_to_the_next_one() {
    with_every_runtime("datagram kept by a dropped receive", 1, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let (rx_addr, tx_addr) = (rx.local_addr().unwrap(), tx.local_addr().unwrap());

            // recv_from, then recv_from.
            tx.send_to(b"one", rx_addr).unwrap();
            drop_after_first_poll(rx.recv_from(Vec::with_capacity(16))).await;
            let (res, buf) = within(rx.recv_from(Vec::with_capacity(16))).await;
            let (n, from) = res.unwrap();
            assert_eq!((&buf[..n], from), (&b"one"[..], tx_addr), "{config:?}");

            // A kept datagram makes the socket readable, shows in peeks, and is what
            // try_recv_from takes, sender and all.
            tx.send_to(b"two", rx_addr).unwrap();
            drop_after_first_poll(rx.recv_from(Vec::with_capacity(16))).await;
            within(rx.readable()).await.unwrap();
            let (res, buf) = within(rx.peek_from(Vec::with_capacity(16))).await;
            let (n, from) = res.unwrap();
            assert_eq!((&buf[..n], from), (&b"two"[..], tx_addr), "{config:?}");
            let (res, buf) = within(rx.peek(Vec::with_capacity(2))).await;
            assert_eq!(
                &buf[..res.unwrap()],
                b"tw",
                "cut to fit, as the kernel cuts"
            );
            let mut slice = [0; 16];
            // try_peek_from and try_peek_sender see it and leave it.
            let (n, from) = rx.try_peek_from(&mut slice).unwrap();
            assert_eq!((&slice[..n], from), (&b"two"[..], tx_addr), "{config:?}");
            assert_eq!(rx.try_peek_sender().unwrap(), tx_addr);
            let (n, from) = rx.try_recv_from(&mut slice).unwrap();
            assert_eq!((&slice[..n], from), (&b"two"[..], tx_addr), "{config:?}");
            let err = rx.try_recv_from(&mut slice).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "taken once");
            let err = rx.try_peek_from(&mut slice).unwrap_err();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::WouldBlock,
                "nothing left to peek"
            );

            // From the kernel's queue: a peek leaves the datagram for the receive.
            tx.send_to(b"queued", rx_addr).unwrap();
            within(rx.readable()).await.unwrap();
            let (n, from) = rx.try_peek_from(&mut slice).unwrap();
            assert_eq!((&slice[..n], from), (&b"queued"[..], tx_addr), "{config:?}");
            assert_eq!(rx.try_peek_sender().unwrap(), tx_addr);
            let (n, _) = rx.try_recv_from(&mut slice).unwrap();
            assert_eq!(&slice[..n], b"queued", "the peek took nothing");

            // recv on a socket that is not connected, then recv_from: the sender was
            // recorded with the datagram (there is no peer to ask).
            tx.send_to(b"2b", rx_addr).unwrap();
            drop_after_first_poll(rx.recv(Vec::with_capacity(16))).await;
            let (res, buf) = within(rx.recv_from(Vec::with_capacity(16))).await;
            let (n, from) = res.unwrap();
            assert_eq!((&buf[..n], from), (&b"2b"[..], tx_addr), "{config:?}");

            // recv on a connected socket, then recv_from: the sender is the peer.
            rx.connect(tx_addr).await.unwrap();
            tx.send_to(b"three", rx_addr).unwrap();
            drop_after_first_poll(rx.recv(Vec::with_capacity(16))).await;
            let (res, buf) = within(rx.recv_from(Vec::with_capacity(16))).await;
            let (n, from) = res.unwrap();
            assert_eq!((&buf[..n], from), (&b"three"[..], tx_addr), "{config:?}");

            // Unix datagram sockets keep them too.
            let (a, b) = UnixDatagram::pair().unwrap();
            a.send(b"four".to_vec()).await.0.unwrap();
            drop_after_first_poll(b.recv(Vec::with_capacity(16))).await;
            let mut slice = [0; 16];
            within(b.readable()).await.unwrap();
            assert_eq!(b.try_recv(&mut slice).unwrap(), 4);
            assert_eq!(&slice[..4], b"four", "{config:?}");
        })
    });
}

#[test]
fn receives_raced_against_timeouts_lose_no_datagram() {
    const COUNT: usize = 2000;
    const BATCH: usize = 50;
    with_every_runtime("datagram receives under timeouts", 2, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let rx_addr = rx.local_addr().unwrap();
            let received = Arc::new(AtomicUsize::new(0));
            // Batches small enough for the socket's receive buffer, each sent once the
            // receiver has the one before: the kernel itself drops none.
            let sender = {
                let received = received.clone();
                std::thread::spawn(move || {
                    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                    for i in 0..COUNT {
                        while received.load(Ordering::Acquire) + BATCH <= i {
                            std::thread::yield_now();
                        }
                        tx.send_to(&(i as u32).to_le_bytes(), rx_addr).unwrap();
                    }
                })
            };
            let mut seen = vec![false; COUNT];
            let mut rounds = 0u64;
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while received.load(Ordering::Acquire) < COUNT {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{config:?}: {} of {COUNT} datagrams arrived",
                    received.load(Ordering::Acquire)
                );
                // Every third receive is dropped after its first poll, whether or not a
                // datagram is queued; the others race a short timeout.
                rounds += 1;
                if rounds % 3 == 0 {
                    drop_after_first_poll(rx.recv_from(Vec::with_capacity(8))).await;
                    continue;
                }
                let recv = rx.recv_from(Vec::with_capacity(8));
                if let Ok((res, buf)) =
                    ringsteal_rt::time::timeout(Duration::from_micros(50), recv).await
                {
                    let n = res.unwrap().0;
                    let i = u32::from_le_bytes(buf[..n].try_into().unwrap()) as usize;
                    assert!(!seen[i], "{config:?}: datagram {i} twice");
                    seen[i] = true;
                    received.fetch_add(1, Ordering::AcqRel);
                }
            }
            sender.join().unwrap();
            assert!(seen.iter().all(|s| *s));
        })
    });
}

#[test]
fn a_receive_into_a_buffer_with_no_room_is_refused_and_takes_nothing() {
    with_every_runtime("datagram receive with no room", 1, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            tx.send_to(b"kept".to_vec(), rx.local_addr().unwrap())
                .await
                .0
                .unwrap();
            // Nor does a try_recv into an empty slice take one.
            within(rx.readable()).await.unwrap();
            let err = rx.try_recv_from(&mut []).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{config:?}");
            // What `std::mem::take(&mut buf)` leaves after a dropped receive took `buf`.
            let (res, _) = rx.recv_from(Vec::new()).await;
            let err = res.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{config:?}");
            let (res, _) = rx.recv(Vec::new()).await;
            assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
            let (res, buf) = within(rx.recv(Vec::with_capacity(8))).await;
            assert_eq!(&buf[..res.unwrap()], b"kept", "{config:?}");
        })
    });
}

/// A receive polled once (its request armed), then the peer sends two datagrams, then the
/// receive is dropped: its request may still be in flight (it ends at the shard's next
/// reap on some ring modes), holding the first. A `try_recv` then must not take the second
/// from the kernel first: it says `WouldBlock` until the first is kept, and the datagrams
/// come out in order (before, the second came first on COOP and SQPOLL rings; a review
/// found it).
#[test]
fn a_try_recv_never_overtakes_a_dropped_receives_datagram() {
    with_every_runtime("try_recv after a dropped receive", 1, |config, rt| {
        rt.block_on(async {
            for round in 0..5 {
                let (a, b) = UnixDatagram::pair().unwrap();
                let mut recv = Box::pin(b.recv(Vec::with_capacity(16)));
                std::future::poll_fn(|cx| {
                    assert!(recv.as_mut().poll(cx).is_pending(), "nothing sent yet");
                    std::task::Poll::Ready(())
                })
                .await;
                // Submitted and armed by the shard's next tick.
                ringsteal_rt::yield_now().await;
                a.try_send(b"first").unwrap();
                a.try_send(b"second").unwrap();
                drop(recv);
                let mut got = Vec::new();
                // At once, then each time the socket says it is readable.
                let mut first_try = true;
                while got.len() < 2 {
                    if !std::mem::take(&mut first_try) {
                        within(b.readable()).await.unwrap();
                    }
                    let mut buf = [0u8; 16];
                    match b.try_recv(&mut buf) {
                        Ok(n) => got.push(buf[..n].to_vec()),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) => panic!("{config:?}: {e}"),
                    }
                }
                assert_eq!(got, [&b"first"[..], b"second"], "{config:?} round {round}");
            }
        })
    });
}
