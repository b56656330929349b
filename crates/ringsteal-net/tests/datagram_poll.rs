//! tokio's `poll_*` methods on the datagram sockets (`poll_recv_ready`, `poll_send_ready`,
//! `poll_recv`, `poll_send`, `poll_recv_from`, `poll_send_to`, `poll_peek_from`,
//! `poll_peek_sender`, `poll_peek`): what
//! poll-based code (a DNS library's socket trait, a QUIC endpoint) is written against.
//! Over real sockets, under every wake mechanism and ring mode: datagrams arrive whole and
//! in order across shards, a sender whose queue is full waits for room and loses nothing, a
//! `WouldBlock` makes the next readiness poll wait instead of answering ready again (no
//! spinning), a datagram a dropped receive kept comes first, and a refused send is an error.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::future::poll_fn;
use std::io::ErrorKind;
use std::task::Poll;

use common::{with_every_runtime, Signal};
use ringsteal_net::{UdpSocket, UnixDatagram};
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

/// Datagrams of the flood test: far more than a Unix datagram socket queues
/// (`net.unix.max_dgram_qlen`, 512 by default), so the sender has to wait for room.
const FLOOD: u64 = 5_000;

fn numbered(i: u64) -> [u8; 64] {
    let mut d = [0u8; 64];
    d[..8].copy_from_slice(&i.to_le_bytes());
    d[8..].fill(i as u8);
    d
}

#[test]
fn a_sender_with_a_full_queue_waits_for_room_and_every_datagram_arrives_in_order() {
    with_every_runtime("datagram poll flood", 2, |config, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            // The receiver on shard 1, by `poll_recv` alone, once the sender found the
            // queue full (so that the wait for room is always taken).
            let full = Signal::new();
            let go = full.clone();
            let receiver = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                go.wait_for(1).await;
                let mut buf = [0u8; 128];
                for i in 0..FLOOD {
                    let n = timeout(OP_GUARD, poll_fn(|cx| b.poll_recv(cx, &mut buf)))
                        .await
                        .expect("poll_recv never came")
                        .unwrap();
                    assert_eq!(&buf[..n], &numbered(i)[..], "datagram {i}");
                }
                b
            });
            let mut waited = 0u64;
            for i in 0..FLOOD {
                let d = numbered(i);
                // Count the sends that did not go at once: the queue was full.
                let first = poll_fn(|cx| Poll::Ready(a.poll_send(cx, &d))).await;
                let sent = match first {
                    Poll::Ready(sent) => sent,
                    Poll::Pending => {
                        waited += 1;
                        if waited == 1 {
                            full.add();
                        }
                        timeout(OP_GUARD, poll_fn(|cx| a.poll_send(cx, &d)))
                            .await
                            .expect("poll_send never found room")
                    }
                };
                assert_eq!(sent.unwrap(), 64);
            }
            let b = timeout(OP_GUARD, receiver).await.unwrap().unwrap();
            assert!(waited > 0, "{config:?}: the receiver started early");
            let err = b.try_recv(&mut [0; 8]).unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::WouldBlock,
                "{config:?}: one too many"
            );
        })
    });
}

#[test]
fn udp_poll_recv_from_and_poll_send_to_answer_each_other_across_shards() {
    with_every_runtime("udp poll ping-pong", 2, |config, rt| {
        rt.block_on(async {
            let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let (server_addr, client_addr) =
                (server.local_addr().unwrap(), client.local_addr().unwrap());
            const ROUNDS: u64 = 300;
            // The server echoes from shard 1, poll-based: peek (the sender), then take it.
            let echo = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut buf = [0u8; 128];
                for _ in 0..ROUNDS {
                    let sender = poll_fn(|cx| server.poll_peek_sender(cx)).await.unwrap();
                    let (n, from) = poll_fn(|cx| server.poll_peek_from(cx, &mut buf))
                        .await
                        .unwrap();
                    assert_eq!(sender, from, "the sender peeked first");
                    let (m, again) = poll_fn(|cx| server.poll_recv_from(cx, &mut buf))
                        .await
                        .unwrap();
                    assert_eq!((m, again), (n, from), "a peek leaves the datagram queued");
                    poll_fn(|cx| server.poll_send_to(cx, &buf[..n], from))
                        .await
                        .unwrap();
                }
            });
            let mut buf = [0u8; 128];
            for i in 0..ROUNDS {
                let d = numbered(i);
                poll_fn(|cx| client.poll_send_to(cx, &d, server_addr))
                    .await
                    .unwrap();
                let (n, from) =
                    timeout(OP_GUARD, poll_fn(|cx| client.poll_recv_from(cx, &mut buf)))
                        .await
                        .expect("the echo never came")
                        .unwrap();
                assert_eq!(
                    (&buf[..n], from),
                    (&d[..], server_addr),
                    "{config:?}: round {i}"
                );
            }
            timeout(OP_GUARD, echo).await.unwrap().unwrap();
            assert_ne!(client_addr, server_addr);
        })
    });
}

#[test]
fn a_would_block_makes_the_next_readiness_poll_wait_for_the_kernel() {
    with_every_runtime("datagram poll readiness", 1, |config, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            a.try_send(b"one").unwrap();
            timeout(OP_GUARD, poll_fn(|cx| b.poll_recv_ready(cx)))
                .await
                .unwrap()
                .unwrap();
            // Cached: ready again at once, as tokio's, while nothing said otherwise.
            let again = poll_fn(|cx| Poll::Ready(b.poll_recv_ready(cx))).await;
            assert!(matches!(again, Poll::Ready(Ok(()))), "{config:?}");
            let mut buf = [0u8; 8];
            assert_eq!(b.try_recv(&mut buf).unwrap(), 3);
            let err = b.try_recv(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            // The WouldBlock cleared the cache: the poll now waits (a spinning
            // `poll_recv_ready`-then-`try_recv` loop would answer ready here).
            let waiting = poll_fn(|cx| Poll::Ready(b.poll_recv_ready(cx))).await;
            assert!(
                waiting.is_pending(),
                "{config:?}: ready with nothing queued"
            );
            // And it wakes this task once a datagram comes.
            a.try_send(b"two").unwrap();
            timeout(OP_GUARD, poll_fn(|cx| b.poll_recv_ready(cx)))
                .await
                .expect("the kept poll never woke us")
                .unwrap();
            assert_eq!(b.try_recv(&mut buf).unwrap(), 3);

            // The same for sends: room is cached, a full queue says WouldBlock, and the
            // next `poll_send_ready` waits until the receiver takes one.
            timeout(OP_GUARD, poll_fn(|cx| a.poll_send_ready(cx)))
                .await
                .unwrap()
                .unwrap();
            let again = poll_fn(|cx| Poll::Ready(a.poll_send_ready(cx))).await;
            assert!(
                matches!(again, Poll::Ready(Ok(()))),
                "{config:?}: room not cached"
            );
            let mut queued = 0;
            loop {
                match a.try_send(b"fill") {
                    Ok(_) => queued += 1,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            assert!(queued > 0);
            let waiting = poll_fn(|cx| Poll::Ready(a.poll_send_ready(cx))).await;
            assert!(
                waiting.is_pending(),
                "{config:?}: room reported in a full queue"
            );
            let reader = std::thread::spawn(move || {
                let mut buf = [0u8; 8];
                let b = b.into_std().unwrap();
                b.set_nonblocking(false).unwrap();
                b.recv(&mut buf).unwrap()
            });
            timeout(OP_GUARD, poll_fn(|cx| a.poll_send_ready(cx)))
                .await
                .expect("room never reported")
                .unwrap();
            assert_eq!(reader.join().unwrap(), 4);
        })
    });
}

#[test]
fn a_datagram_a_dropped_receive_kept_comes_first_and_a_refused_send_is_an_error() {
    with_every_runtime("datagram poll kept", 1, |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let (rx_addr, tx_addr) = (rx.local_addr().unwrap(), tx.local_addr().unwrap());
            tx.send_to(b"kept", rx_addr).unwrap();
            drop_after_first_poll(rx.recv_from(Vec::with_capacity(16))).await;
            tx.send_to(b"queued", rx_addr).unwrap();
            let mut buf = [0u8; 16];
            for want in [&b"kept"[..], b"queued"] {
                let (n, from) = timeout(OP_GUARD, poll_fn(|cx| rx.poll_recv_from(cx, &mut buf)))
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!((&buf[..n], from), (want, tx_addr), "{config:?}");
            }

            // No socket at the path: the send fails, it does not wait.
            let lone = UnixDatagram::unbound().unwrap();
            let missing = format!("/nonexistent-ringsteal-{}", std::process::id());
            let err = timeout(
                OP_GUARD,
                poll_fn(|cx| lone.poll_send_to(cx, b"x", &missing)),
            )
            .await
            .unwrap()
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound, "{config:?}");
            // An empty buffer has no room for a datagram: refused, nothing taken.
            let (a, b) = UnixDatagram::pair().unwrap();
            a.try_send(b"whole").unwrap();
            let err = poll_fn(|cx| b.poll_recv(cx, &mut [])).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{config:?}");
            assert_eq!(poll_fn(|cx| b.poll_recv(cx, &mut buf)).await.unwrap(), 5);
        })
    });
}

#[test]
fn try_io_runs_your_system_call_and_its_would_block_makes_the_next_poll_wait() {
    use ringsteal_rt::io::Interest;
    with_every_runtime("datagram try_io", 2, |config, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            let mut buf = [0u8; 16];
            a.try_send(b"raw").unwrap();
            timeout(OP_GUARD, poll_fn(|cx| b.poll_recv_ready(cx)))
                .await
                .unwrap()
                .unwrap();
            let n = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap();
            assert_eq!(&buf[..n], b"raw", "{config:?}");
            let err = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            // The WouldBlock of the test's own call cleared the cache.
            let waiting = poll_fn(|cx| Poll::Ready(b.poll_recv_ready(cx))).await;
            assert!(
                waiting.is_pending(),
                "{config:?}: ready with nothing queued"
            );

            // A datagram a dropped receive kept: try_io cannot see it, so it refuses
            // (instead of letting a readiness loop spin) until try_recv takes it.
            a.try_send(b"kept").unwrap();
            drop_after_first_poll(b.recv(Vec::with_capacity(16))).await;
            timeout(OP_GUARD, poll_fn(|cx| b.poll_recv_ready(cx)))
                .await
                .unwrap()
                .unwrap();
            let err = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Other, "{config:?}");
            assert_eq!(b.try_recv(&mut buf).unwrap(), 4);

            // async_io waits for the datagram a task on the other shard sends.
            let sender = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                a.send(b"later".to_vec()).await.0.unwrap();
                a
            });
            let n = timeout(
                OP_GUARD,
                b.async_io(Interest::READABLE, || raw_recv(&b, &mut buf)),
            )
            .await
            .expect("async_io never saw the datagram")
            .unwrap();
            assert_eq!(&buf[..n], b"later", "{config:?}");
            timeout(OP_GUARD, sender).await.unwrap().unwrap();
        })
    });
}

#[test]
fn readiness_waits_answer_from_the_cache_without_a_request_each() {
    with_every_runtime("datagram cached readiness", 1, |config, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            timeout(OP_GUARD, a.writable()).await.unwrap().unwrap();
            // A poll-style library asks before every send (quinn does): each answer comes
            // from the cache, as tokio's, not from a request of its own. (40 datagrams
            // left unread: fewer than the kernel's writability threshold of a default send
            // buffer, so the kernel would say writable too.)
            let before = ops_completed();
            for i in 0..40u8 {
                a.writable().await.unwrap();
                poll_fn(|cx| a.poll_send_ready(cx)).await.unwrap();
                a.try_send(&[i]).unwrap();
            }
            let requests = ops_completed() - before;
            assert!(
                requests < 10,
                "{config:?}: {requests} requests for 80 cached waits"
            );
            // Reads too, until a WouldBlock clears what was cached.
            b.readable().await.unwrap();
            let before = ops_completed();
            let mut buf = [0u8; 4];
            for i in 0..40u8 {
                b.readable().await.unwrap();
                assert_eq!(b.try_recv(&mut buf).unwrap(), 1);
                assert_eq!(buf[0], i);
            }
            let requests = ops_completed() - before;
            assert!(
                requests < 10,
                "{config:?}: {requests} requests for 40 cached waits"
            );
            assert_eq!(
                b.try_recv(&mut buf).unwrap_err().kind(),
                ErrorKind::WouldBlock
            );
            let waiting = poll_fn(|cx| Poll::Ready(b.poll_recv_ready(cx))).await;
            assert!(
                waiting.is_pending(),
                "{config:?}: the WouldBlock cleared the cache"
            );
        })
    });
}

#[test]
fn a_poll_left_armed_on_shard_0_does_not_strand_a_wait_from_another_shard() {
    // A socket polled once inside `block_on` (shard 0, which runs only there), then waited
    // on by a task on shard 1 after `block_on` returned: the kept poll armed on shard 0's
    // ring would complete only when shard 0 ran again. The wait must arm its own poll.
    with_every_runtime("kept poll from another shard", 2, |config, rt| {
        let (a, b) = rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            let first = poll_fn(|cx| Poll::Ready(b.poll_recv_ready(cx))).await;
            assert!(first.is_pending(), "nothing sent yet");
            (a, b)
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = rt.handle().spawn_with(Placement::Pinned(1), async move {
            let got = poll_fn(|cx| b.poll_recv_ready(cx)).await;
            tx.send(got.is_ok()).unwrap();
            b
        });
        a.try_send(b"late").unwrap();
        let woke = rx.recv_timeout(OP_GUARD);
        assert_eq!(
            woke,
            Ok(true),
            "{config:?}: the wait on shard 1 was stranded"
        );
        let b = rt.block_on(waiter).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(b.try_recv(&mut buf).unwrap(), 4);
    });
}

#[test]
fn udp_poll_peek_and_try_peek_leave_the_connected_peers_datagram_queued() {
    with_every_runtime("udp poll_peek", 2, |config, rt| {
        rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            a.connect(b.local_addr().unwrap()).await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();
            let mut buf = [0u8; 16];
            assert_eq!(
                b.try_peek(&mut buf).unwrap_err().kind(),
                ErrorKind::WouldBlock,
                "{config:?}"
            );
            // Sent from shard 1 while the peek waits.
            let sender = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                a.send(b"first".to_vec()).await.0.unwrap();
                a.send(b"second".to_vec()).await.0.unwrap();
            });
            let n = timeout(OP_GUARD, poll_fn(|cx| b.poll_peek(cx, &mut buf)))
                .await
                .expect("the datagram never came")
                .unwrap();
            assert_eq!(&buf[..n], b"first", "{config:?}");
            assert_eq!(b.try_peek(&mut buf).unwrap(), 5, "still queued");
            timeout(OP_GUARD, sender).await.unwrap().unwrap();
            for want in [&b"first"[..], b"second"] {
                let n = poll_fn(|cx| b.poll_recv(cx, &mut buf)).await.unwrap();
                assert_eq!(&buf[..n], want, "{config:?}: in order, none lost");
            }
        })
    });
}
