//! `write_all_then_read`: a stream's reply and the read of the next request as one pair of
//! linked requests (ADR-0040). One op per round trip where the two calls take two; a large
//! write is sent whole before the read; another task's write does not wait for the read; a
//! dropped pair keeps what it read; a write that fails leaves the read unmade.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::future::Future;
use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};

use common::{with_every_runtime, PollsInline};
use ringsteal_net::{TcpStream, UnixStream};
use ringsteal_rt::buf::BufResult;
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};
use support::*;

/// A std peer on its own thread, connected to a fresh listener; returns the server's end.
async fn with_std_peer<T: Send + 'static>(
    peer: impl FnOnce(std::net::TcpStream) -> T + Send + 'static,
) -> (TcpStream, std::thread::JoinHandle<T>) {
    let (l, addr) = listener().await;
    let thread = std::thread::spawn(move || {
        let s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).unwrap();
        peer(s)
    });
    let (server, _) = l.accept().await.expect("accept");
    (server, thread)
}

/// What `write_all_then_read` yields.
type Pair = (BufResult<(), Vec<u8>>, BufResult<usize, Vec<u8>>);

/// A pair on `server` whose reply (`reply`) `client` has read, polled once and not since: its
/// read is waiting in the kernel.
async fn pair_waiting_to_read<'a>(
    client: &TcpStream,
    server: &'a TcpStream,
) -> Pin<Box<dyn Future<Output = Pair> + Send + 'a>> {
    let mut pair = Box::pin(server.write_all_then_read(b"reply".to_vec(), Vec::with_capacity(64)));
    assert!(
        poll_once(&mut pair).await.is_none(),
        "the pair waits for its read"
    );
    let (res, got) = client.read_exact(vec![0; 5]).await;
    res.unwrap();
    assert_eq!(got, b"reply");
    pair
}

/// One read on `s`, failing if it does not complete in time (a lane never let go).
async fn read_within_guard(s: &TcpStream) -> Vec<u8> {
    let (res, got) = ringsteal_rt::time::timeout(OP_GUARD, s.read(Vec::with_capacity(64)))
        .await
        .expect("the read lane was never let go");
    let n = res.unwrap();
    got[..n].to_vec()
}

#[test]
fn each_reply_and_the_read_after_it_take_one_op() {
    const ROUNDS: u64 = 20;
    with_every_runtime("write_all_then_read ops", 1, |_, rt| {
        rt.block_on(async {
            let (server, peer) = with_std_peer(|mut s| {
                let mut got = [0u8; 8];
                for round in 0..ROUNDS {
                    s.write_all(&round.to_le_bytes()).unwrap();
                    s.read_exact(&mut got).unwrap();
                    assert_eq!(u64::from_le_bytes(got), round * 10, "reply {round}");
                }
            })
            .await;
            let (res, mut buf) = server.read(Vec::with_capacity(8)).await;
            assert_eq!(res.unwrap(), 8);
            let before = ops_completed();
            for round in 0..ROUNDS {
                let request = u64::from_le_bytes(buf[..8].try_into().unwrap());
                assert_eq!(request, round);
                let reply = (request * 10).to_le_bytes().to_vec();
                buf.clear();
                let ((sent, _), (n, next)) = server.write_all_then_read(reply, buf).await;
                sent.unwrap();
                buf = next;
                if round + 1 < ROUNDS {
                    assert_eq!(n.unwrap(), 8, "round {round}");
                } else {
                    assert_eq!(n.unwrap(), 0, "the peer closed");
                }
            }
            // The two calls would have made 40.
            assert_eq!(ops_completed() - before, ROUNDS);
            peer.join().unwrap();
        })
    });
}

#[test]
fn a_write_larger_than_the_socket_buffer_is_sent_whole_before_the_read() {
    const LEN: usize = 8 << 20;
    with_every_runtime("write_all_then_read large", 1, |_, rt| {
        rt.block_on(async {
            let (server, peer) = with_std_peer(|mut s| {
                let mut got = vec![0u8; LEN];
                s.read_exact(&mut got).unwrap();
                check_stream(7, 0, &got);
                s.write_all(b"next").unwrap();
            })
            .await;
            let out = stream_bytes(7, 0, LEN);
            let ((sent, out), (n, next)) = server
                .write_all_then_read(out, Vec::with_capacity(16))
                .await;
            sent.unwrap();
            assert_eq!(out.len(), LEN, "the buffer comes back");
            assert_eq!(&next[..n.unwrap()], b"next");
            peer.join().unwrap();
        })
    });
}

#[test]
fn another_task_writes_while_the_read_waits() {
    with_every_runtime(
        "write_all_then_read lets go of the write lane",
        2,
        |_, rt| {
            rt.block_on(async {
                let (client, server) = tcp_pair().await;
                let server = Arc::new(server);
                let replier = server.clone();
                let pair = ringsteal_rt::spawn(async move {
                    replier
                        .write_all_then_read(b"first ".to_vec(), Vec::with_capacity(16))
                        .await
                });
                // The pair's write arrives; its read then waits for the client.
                let (res, got) = client.read_exact(vec![0; 6]).await;
                res.unwrap();
                assert_eq!(got, b"first ");
                // A write from another task goes while the pair's read still waits.
                let (res, _) =
                    ringsteal_rt::time::timeout(OP_GUARD, server.write_all(b"second".to_vec()))
                        .await
                        .expect("the write waited for the pair's read");
                res.unwrap();
                let (res, got) = client.read_exact(vec![0; 6]).await;
                res.unwrap();
                assert_eq!(got, b"second");
                assert!(!pair.is_finished(), "nothing was sent for the pair to read");
                client.write_all(b"request".to_vec()).await.0.unwrap();
                let ((sent, _), (n, got)) = pair.await.unwrap();
                sent.unwrap();
                assert_eq!(&got[..n.unwrap()], b"request");
            })
        },
    );
}

#[test]
fn a_dropped_pair_keeps_what_its_read_received() {
    with_every_runtime("write_all_then_read dropped", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let before = ops_completed();
            let pair = pair_waiting_to_read(&client, &server).await;
            send_outside_the_ring(&client, b"late request");
            // The client's read was one op; the pair completes as the second.
            until_ops_completed(before, 2).await;
            drop(pair);
            assert_eq!(read_within_guard(&server).await, b"late request");
        })
    });
}

#[test]
fn a_write_to_a_reset_peer_fails_and_the_read_is_not_made() {
    with_every_runtime("write_all_then_read to a reset peer", 1, |_, rt| {
        rt.block_on(async {
            // The peer takes part of a large write, then resets the connection.
            let (server, peer) = with_std_peer(|mut s| {
                let mut some = vec![0u8; 64 << 10];
                s.read_exact(&mut some).unwrap();
                reset_on_close(&s);
            })
            .await;
            let ((sent, _), (read, _)) = server
                .write_all_then_read(vec![1u8; 16 << 20], Vec::with_capacity(16))
                .await;
            peer.join().unwrap();
            let e = sent.expect_err("a reset peer took everything");
            assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ),
                "{e}"
            );
            let r = read.expect_err("the read was made after a failed write");
            assert_eq!(r.kind(), e.kind());
            assert!(r.to_string().contains("not read"), "{r}");
        })
    });
}

#[test]
fn through_the_traits_and_a_pointer_it_is_still_a_write_then_a_read() {
    with_every_runtime("write_all_then_read through traits", 1, |_, rt| {
        rt.block_on(async {
            let (mut a, b) = UnixStream::pair().unwrap();
            let echo = ringsteal_rt::spawn(async move {
                for _ in 0..2 {
                    let (res, buf) = b.read(Vec::with_capacity(64)).await;
                    res.unwrap();
                    b.write_all(buf).await.0.unwrap();
                }
            });
            async fn ask<S: AsyncReadOwned + AsyncWriteOwned>(s: &mut S, what: &[u8]) -> Vec<u8> {
                let ((sent, _), (n, got)) = s
                    .write_all_then_read(what.to_vec(), Vec::with_capacity(64))
                    .await;
                sent.unwrap();
                let n = n.unwrap();
                got[..n].to_vec()
            }
            // The stream's own pair, and the provided two calls through `&mut`.
            assert_eq!(ask(&mut a, b"one").await, b"one");
            assert_eq!(ask(&mut &mut a, b"two").await, b"two");
            echo.await.unwrap();
        })
    });
}

#[test]
fn a_pair_dropped_while_its_read_waits_is_cancelled_and_loses_nothing() {
    with_every_runtime("write_all_then_read dropped while reading", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let pair = pair_waiting_to_read(&client, &server).await;
            // The send is done and the receive waits in the kernel: dropping cancels it.
            drop(pair);
            client.write_all(b"after".to_vec()).await.0.unwrap();
            assert_eq!(read_within_guard(&server).await, b"after");
            // Both lanes are free: a write goes too.
            server.write_all(b"ok".to_vec()).await.0.unwrap();
            let (res, got) = client.read_exact(vec![0; 2]).await;
            res.unwrap();
            assert_eq!(got, b"ok");
        })
    });
}

#[test]
fn a_pair_dropped_while_its_write_waits_lets_go_of_both_lanes() {
    with_every_runtime("write_all_then_read dropped while writing", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // Far more than the socket buffers hold, to a client that does not read yet: the
            // send waits in the kernel, and the receive behind it has not started.
            let mut pair =
                Box::pin(server.write_all_then_read(vec![7u8; 32 << 20], Vec::with_capacity(64)));
            assert!(
                poll_once(&mut pair).await.is_none(),
                "the send cannot finish"
            );
            drop(pair);
            // The cancel ends the send (a prefix of it went out) and the receive with it.
            client.write_all(b"still read".to_vec()).await.0.unwrap();
            assert_eq!(read_within_guard(&server).await, b"still read");
            // The client now takes what the cancelled send got out, then a last write.
            let drain = ringsteal_rt::spawn(async move { read_to_eof(&client).await });
            let write = server.write_all(b"!".to_vec());
            let (res, _) = ringsteal_rt::time::timeout(OP_GUARD, write)
                .await
                .expect("the write lane was never let go");
            res.unwrap();
            server.shutdown(std::net::Shutdown::Write).await.unwrap();
            let got = drain.await.unwrap();
            let (last, prefix) = got.split_last().expect("the last write arrived");
            assert_eq!(*last, b'!');
            assert!(
                prefix.iter().all(|&b| b == 7),
                "only a prefix of the cancelled send"
            );
        })
    });
}

#[test]
fn a_write_waiting_for_the_lane_is_woken_after_the_reap() {
    const LEN: usize = 8 << 20;
    with_every_runtime(
        "write_all_then_read hands the write lane over",
        1,
        |config, rt| {
            rt.block_on(async {
                let (client, server) = tcp_pair().await;
                // A pair whose send waits (more than the socket buffers hold, nobody reading)...
                let mut pair =
                    Box::pin(server.write_all_then_read(vec![3u8; LEN], Vec::with_capacity(16)));
                assert!(
                    poll_once(&mut pair).await.is_none(),
                    "the send cannot finish yet"
                );
                // ...and a write queued behind it, whose waker polls a new op at once when woken,
                // as an executor that runs tasks inline would.
                let inline = PollsInline::for_this_task().await;
                let mut write = Box::pin(server.write_all(b"after".to_vec()));
                let waker = Waker::from(inline.clone());
                let polled = write.as_mut().poll(&mut Context::from_waker(&waker));
                assert!(polled.is_pending(), "the write waits for the pair's send");
                let peer = ringsteal_rt::spawn(async move {
                    let (res, got) = client.read_exact(vec![0; LEN]).await;
                    res.unwrap();
                    assert!(got.iter().all(|&b| b == 3));
                    client.write_all(b"next".to_vec()).await.0.unwrap();
                    let (res, got) = client.read_exact(vec![0; 5]).await;
                    res.unwrap();
                    assert_eq!(got, b"after");
                });
                // The send's completion lets the lane go while the driver reaps: the waiting
                // write's waker must run after the reap, where it can submit.
                inline.check_next_wake(config).await;
                write.await.0.unwrap();
                let ((sent, _), (n, got)) = pair.await;
                sent.unwrap();
                assert_eq!(&got[..n.unwrap()], b"next");
                peer.await.unwrap();
            })
        },
    );
}
