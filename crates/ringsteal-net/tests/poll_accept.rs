//! `poll_accept`, tokio's poll form of `accept`, on TCP and Unix listeners: a loop over it
//! serves every client, and what its request accepts is never stranded (an `accept()` takes
//! the request over and wakes the poll's caller; a dropped listener leaves the connection
//! to an `Incoming`; `into_std` still listens). Under every wake mechanism and ring mode.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::future::{poll_fn, Future};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use common::{accept_queue_len, with_every_runtime, yield_until};
use ringsteal_net::{TcpListener, TcpStream, UnixListener, UnixStream};
use ringsteal_rt::Placement;
use support::*;

/// A waker that counts its wakes.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<Counting>, Waker) {
    let count = Arc::new(Counting::default());
    (count.clone(), Waker::from(count))
}

/// Polls `listener.poll_accept` once with a counting waker, which must leave it pending
/// (nobody connected); the count says how often that waker was woken since.
fn poll_accept_pending(listener: &TcpListener) -> Arc<Counting> {
    let (count, waker) = counting();
    let poll = listener.poll_accept(&mut Context::from_waker(&waker));
    assert!(poll.is_pending(), "nobody connected yet");
    count
}

#[test]
fn a_loop_over_poll_accept_serves_every_client_once() {
    const CLIENTS: u8 = 24;
    with_every_runtime("poll_accept loop", 2, |config, rt| {
        rt.block_on(async move {
            let (listener, addr) = listener().await;
            let clients: Vec<_> = (0..CLIENTS)
                .map(|i| {
                    ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                        let s = TcpStream::connect(addr).await.unwrap();
                        s.write_all(vec![i]).await.0.unwrap();
                        let (res, back) = s.read_exact(vec![0; 1]).await;
                        res.unwrap();
                        (i, back[0], s.local_addr().unwrap())
                    })
                })
                .collect();
            let mut peers = Vec::new();
            for _ in 0..CLIENTS {
                let (conn, peer) = poll_fn(|cx| listener.poll_accept(cx)).await.unwrap();
                let (res, got) = conn.read_exact(vec![0; 1]).await;
                res.unwrap();
                conn.write_all(vec![got[0] + 100]).await.0.unwrap();
                peers.push(peer);
            }
            for client in clients {
                let (i, back, local) = client.await.unwrap();
                assert_eq!(back, i + 100, "{config:?}");
                assert!(peers.contains(&local), "{config:?}: client {i}'s address");
            }
            peers.sort();
            peers.dedup();
            assert_eq!(
                peers.len(),
                usize::from(CLIENTS),
                "{config:?}: a client twice"
            );
        });
    });
}

#[test]
fn an_accept_takes_over_the_request_a_poll_accept_left_and_wakes_its_caller() {
    with_every_runtime("accept after poll_accept", 1, |config, rt| {
        rt.block_on(async move {
            let (listener, addr) = listener().await;
            // The connection arrives while only the poll's request waits for one.
            let _woken = poll_accept_pending(&listener);
            let first = std::net::TcpStream::connect(addr).unwrap();
            yield_until(|| accept_queue_len(addr) == 0).await;
            let (_, peer) = ringsteal_rt::time::timeout(OP_GUARD, listener.accept())
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the poll's connection was stranded"))
                .unwrap();
            assert_eq!(peer, first.local_addr().unwrap(), "{config:?}");

            // The accept comes first: taking the request over wakes the poll's caller.
            let count = poll_accept_pending(&listener);
            let mut accept = std::pin::pin!(listener.accept());
            let polled = poll_fn(|cx| Poll::Ready(accept.as_mut().poll(cx))).await;
            assert!(polled.is_pending(), "{config:?}");
            assert_eq!(count.0.load(Ordering::SeqCst), 1, "{config:?}: not woken");
            let second = std::net::TcpStream::connect(addr).unwrap();
            let (_, peer) = ringsteal_rt::time::timeout(OP_GUARD, accept)
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the accept stalled"))
                .unwrap();
            assert_eq!(peer, second.local_addr().unwrap(), "{config:?}");

            // The woken caller asks again: a request of its own, woken by its connection.
            let (count, waker) = counting();
            let mut cx = Context::from_waker(&waker);
            assert!(listener.poll_accept(&mut cx).is_pending());
            let third = std::net::TcpStream::connect(addr).unwrap();
            yield_until(|| count.0.load(Ordering::SeqCst) > 0).await;
            let Poll::Ready(accepted) = listener.poll_accept(&mut cx) else {
                panic!("{config:?}: woken, yet pending");
            };
            assert_eq!(accepted.unwrap().1, third.local_addr().unwrap());
        });
    });
}

#[test]
fn a_connection_a_poll_accept_took_goes_to_an_incoming_when_the_listener_is_dropped() {
    with_every_runtime("poll_accept then drop", 1, |config, rt| {
        rt.block_on(async move {
            let (listener, addr) = listener().await;
            let _woken = poll_accept_pending(&listener);
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            client.write_all(b"x").unwrap();
            // The kernel accepted it for the poll's request, which nobody polls again.
            yield_until(|| accept_queue_len(addr) == 0).await;
            let mut incoming = listener.incoming();
            drop(listener);
            let conn = ringsteal_rt::time::timeout(OP_GUARD, incoming.next())
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the connection was lost"))
                .unwrap()
                .unwrap();
            assert_eq!(conn.peer_addr().unwrap(), client.local_addr().unwrap());
            let (res, got) = conn.read_exact(vec![0; 1]).await;
            res.unwrap();
            assert_eq!(got, b"x", "{config:?}");
            conn.write_all(b"y".to_vec()).await.0.unwrap();
            let mut back = [0u8; 1];
            client.read_exact(&mut back).unwrap();
            assert_eq!(&back, b"y");
        });
    });
}

#[test]
fn a_listener_with_a_poll_accept_in_flight_goes_into_std_still_listening() {
    with_every_runtime("poll_accept then into_std", 1, |config, rt| {
        rt.block_on(async move {
            let (listener, addr) = listener().await;
            let _woken = poll_accept_pending(&listener);
            let std_listener = listener.into_std().unwrap();
            // The request was cancelled as it went; a client now queues for the std one.
            let client = std::net::TcpStream::connect(addr).unwrap();
            let (_conn, peer) = std_listener.accept().unwrap();
            assert_eq!(peer, client.local_addr().unwrap(), "{config:?}");
        });
    });
}

#[test]
fn a_unix_listener_accepts_through_poll_accept_too() {
    with_every_runtime("unix poll_accept", 2, |config, rt| {
        rt.block_on(async move {
            let name = format!(
                "\0ringsteal-test-poll-accept-{}-{config:?}",
                std::process::id()
            );
            let listener = UnixListener::bind(&name).unwrap();
            let client = {
                let name = name.clone();
                ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    let s = UnixStream::connect(&name).await.unwrap();
                    s.write_all(b"hi".to_vec()).await.0.unwrap();
                })
            };
            let (conn, peer) = poll_fn(|cx| listener.poll_accept(cx)).await.unwrap();
            assert!(peer.is_unnamed(), "{config:?}");
            let (res, got) = conn.read_exact(vec![0; 2]).await;
            res.unwrap();
            assert_eq!(got, b"hi", "{config:?}");
            client.await.unwrap();
        });
    });
}
