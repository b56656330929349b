//! `accept()` is cancel-safe, as tokio's is: a connection the kernel accepted for an accept
//! whose future was dropped (the `select!` branch not taken, the `timeout` that fired) is
//! kept for the listener's next accept or `incoming()`, not closed. Under every wake
//! mechanism and ring mode.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::{Read, Write};
use std::time::Duration;

use common::{accept_queue_len, with_every_runtime, Rng};
use support::*;

#[test]
fn a_connection_accepted_for_a_dropped_accept_goes_to_the_next_one() {
    with_every_runtime("kept by a dropped accept", 1, |config, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            for through_incoming in [false, true] {
                let mut client = accept_dropped_after_the_kernel_accepted(&listener, addr).await;
                let server = if through_incoming {
                    listener.incoming().next().await.unwrap().unwrap()
                } else {
                    let (server, peer) = listener.accept().await.unwrap();
                    assert_eq!(peer, client.local_addr().unwrap(), "{config:?}");
                    server
                };
                assert_eq!(server.peer_addr().unwrap(), client.local_addr().unwrap());
                client.write_all(b"ping").unwrap();
                let (res, got) = server.read_exact(vec![0; 4]).await;
                res.unwrap();
                assert_eq!(got, b"ping", "{config:?}");
                server.write_all(b"pong".to_vec()).await.0.unwrap();
                let mut back = [0u8; 4];
                client.read_exact(&mut back).unwrap();
                assert_eq!(&back, b"pong", "{config:?}");
            }
        });
    });
}

#[test]
fn connections_a_dropped_incoming_accepted_go_to_the_next_accept() {
    const N: usize = 3;
    with_every_runtime("kept by a dropped incoming", 1, |config, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let incoming = armed_incoming(&listener).await;
            let clients: Vec<_> = (0..N)
                .map(|i| {
                    let mut c = std::net::TcpStream::connect(addr).unwrap();
                    c.write_all(&[i as u8]).unwrap();
                    c
                })
                .collect();
            // The kernel accepted every client for the stream, which nobody polls again.
            common::yield_until(|| accept_queue_len(addr) == 0).await;
            drop(incoming);
            // Its cancel has ended the request: whatever it accepted was handed over.
            let handle = ringsteal_rt::RuntimeHandle::current();
            common::yield_until(|| handle.stats().total().ops_in_flight == 0).await;
            let mut seen = [false; N];
            for _ in 0..N {
                let (conn, peer) = ringsteal_rt::time::timeout(OP_GUARD, listener.accept())
                    .await
                    .unwrap_or_else(|_| panic!("{config:?}: a client was lost"))
                    .unwrap();
                let (res, index) = conn.read_exact(vec![0; 1]).await;
                res.unwrap();
                let i = usize::from(index[0]);
                assert!(!seen[i], "{config:?}: client {i} accepted twice");
                seen[i] = true;
                assert_eq!(peer, clients[i].local_addr().unwrap(), "{config:?}");
            }
        });
    });
}

#[test]
fn a_kept_connection_whose_client_reset_is_accepted_not_an_error() {
    // A dropped `Incoming` keeps what it accepted, without an address; its client resets
    // before the listener's `accept()` takes it. tokio's accept returns such a connection
    // (its read then reports the reset): an error here would end the usual
    // `let (s, _) = listener.accept().await?` loop over one client's reset.
    with_every_runtime("kept connection reset", 1, |config, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let incoming = armed_incoming(&listener).await;
            let client = std::net::TcpStream::connect(addr).unwrap();
            common::yield_until(|| accept_queue_len(addr) == 0).await;
            reset_on_close(&client);
            drop(client);
            drop(incoming);
            let handle = ringsteal_rt::RuntimeHandle::current();
            common::yield_until(|| handle.stats().total().ops_in_flight == 0).await;
            let (conn, peer) = ringsteal_rt::time::timeout(OP_GUARD, listener.accept())
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the kept connection was lost"))
                .unwrap_or_else(|e| panic!("{config:?}: one client's reset failed accept: {e}"));
            assert_eq!(peer.port(), 0, "{config:?}: {peer}");
            assert!(peer.ip().is_unspecified(), "{config:?}: {peer}");
            let (res, _) = conn.read(Vec::with_capacity(8)).await;
            let err = res.expect_err("a reset connection read cleanly");
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::ConnectionReset,
                "{config:?}"
            );
        });
    });
}

#[test]
fn an_accept_started_before_a_dropped_request_hands_its_connection_over_takes_it() {
    // The kernel accepts a client for an `Incoming` just before it is dropped; the
    // connection reaches the listener's kept queue only when the shard reaps that
    // completion, after the next `accept()` has asked the kernel for a new one. That accept
    // must take the kept connection, not wait for another client.
    with_every_runtime("kept after the next accept started", 1, |config, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            for round in 0..20u8 {
                let mut incoming = listener.incoming();
                // Armed with a waker that wakes nothing: the request's end must not be what
                // wakes the accept below (only the kept queue may).
                let waker = std::task::Waker::from(std::sync::Arc::new(WakesNothing));
                let first = incoming.poll_next(&mut std::task::Context::from_waker(&waker));
                assert!(first.is_pending(), "nobody connected yet");
                ringsteal_rt::yield_now().await;
                let mut client = std::net::TcpStream::connect(addr).unwrap();
                client.write_all(&[round]).unwrap();
                drop(incoming);
                let (conn, _) = ringsteal_rt::time::timeout(OP_GUARD, listener.accept())
                    .await
                    .unwrap_or_else(|_| panic!("{config:?}: round {round}: the accept stalled"))
                    .unwrap();
                let (res, got) = conn.read_exact(vec![0; 1]).await;
                res.unwrap();
                assert_eq!(got, [round], "{config:?}");
            }
        });
    });
}

struct WakesNothing;

impl std::task::Wake for WakesNothing {
    fn wake(self: std::sync::Arc<Self>) {}
}

#[test]
fn an_accept_loop_under_short_timeouts_loses_no_connection() {
    // Every accept races a timeout of 0 to 200 µs: many give up while a connection is being
    // accepted. Each client sends its number and waits for it back; every one must be served.
    const CLIENTS: u32 = 200;
    with_every_runtime("accept under timeouts", 2, |config, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let clients = std::thread::spawn(move || {
                for i in 0..CLIENTS {
                    let mut c = std::net::TcpStream::connect(addr).unwrap();
                    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                    c.write_all(&i.to_be_bytes()).unwrap();
                    let mut back = [0u8; 4];
                    c.read_exact(&mut back)
                        .unwrap_or_else(|e| panic!("client {i} was not served: {e}"));
                    assert_eq!(u32::from_be_bytes(back), i);
                }
            });
            let mut rng = Rng::new(7);
            let mut served = vec![false; CLIENTS as usize];
            let mut gave_up = 0u32;
            while served.iter().any(|s| !s) {
                if clients.is_finished() {
                    // A client gave up (its connection was closed): its panic says which.
                    clients.join().unwrap();
                    panic!("{config:?}: the clients finished, yet some were never served");
                }
                let wait = Duration::from_micros(rng.below(200));
                let Ok(accepted) = ringsteal_rt::time::timeout(wait, listener.accept()).await
                else {
                    gave_up += 1;
                    continue;
                };
                let (conn, _) = accepted.unwrap();
                let (res, got) = conn.read_exact(vec![0; 4]).await;
                res.unwrap();
                let i = u32::from_be_bytes(got[..].try_into().unwrap());
                assert!(!served[i as usize], "{config:?}: client {i} served twice");
                served[i as usize] = true;
                conn.write_all(got).await.0.unwrap();
            }
            clients.join().unwrap();
            assert!(gave_up > 0, "{config:?}: no accept ever gave up");
        });
    });
}

/// `listener`'s connections as a stream, its multishot accept armed (polled once, while
/// nobody has connected).
async fn armed_incoming(
    listener: &ringsteal_net::TcpListener,
) -> ringsteal_net::Incoming<ringsteal_net::TcpStream> {
    let mut incoming = listener.incoming();
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(incoming.poll_next(cx))).await;
    assert!(first.is_pending(), "nobody connected yet");
    incoming
}
