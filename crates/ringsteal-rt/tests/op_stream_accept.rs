//! Accept streams (`op::accept_multishot`): every connection from one multishot request,
//! re-armed when the kernel ends it, and the same stream on single-shot accepts where the
//! builder takes multishot accept away. Under every wake and ring configuration.

mod common;
mod stream_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::sync::mpsc;

use common::{accept_queue_len, under_every_config};
use ringsteal_rt::op::{self, SharedFd};
use stream_support::{listener, Path};

/// Clients each send their index, so the test can tell the accepted connections apart.
fn connect_clients(addr: std::net::SocketAddr, n: u8) -> std::thread::JoinHandle<Vec<TcpStream>> {
    std::thread::spawn(move || {
        (0..n)
            .map(|i| {
                let mut s = TcpStream::connect(addr).expect("connect");
                s.write_all(&[i]).expect("send the index");
                s
            })
            .collect()
    })
}

/// The index the client behind `conn` sent.
fn index_of(conn: OwnedFd) -> u8 {
    let mut s = TcpStream::from(conn);
    let mut b = [0u8];
    s.read_exact(&mut b).expect("read the client's index");
    b[0]
}

/// Takes `n` connections from `incoming` and checks that they are the `n` clients, each once.
async fn accept_each(incoming: &mut op::AcceptStream, n: u8, what: &str) {
    let mut seen = vec![false; n as usize];
    for _ in 0..n {
        let conn = incoming
            .next()
            .await
            .expect("a connection")
            .expect("accepted");
        let i = index_of(conn) as usize;
        assert!(!seen[i], "{what}: client {i} accepted twice");
        seen[i] = true;
    }
}

#[test]
fn an_accept_stream_yields_every_connection_from_one_request() {
    const N: u8 = 32;
    under_every_config("accept stream", 1, |config, b| {
        for path in Path::ACCEPT {
            let rt = path.apply(b.clone()).build().unwrap();
            let (submitted, rearms) = rt.block_on(async {
                let (l, addr) = listener();
                let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
                let clients = connect_clients(addr, N);
                accept_each(&mut incoming, N, &format!("{config:?} {path:?}")).await;
                drop(clients.join().unwrap());
                let rearms = ringsteal_rt::RuntimeHandle::current()
                    .stats()
                    .total()
                    .stream_rearms;
                (incoming.requests_submitted(), rearms)
            });
            match path {
                Path::Native => {
                    assert_eq!(
                        submitted, 1,
                        "{config:?}: {N} connections from one accept SQE"
                    );
                    assert_eq!(rearms, 0, "{config:?}");
                }
                _ => {
                    assert_eq!(
                        submitted,
                        u64::from(N),
                        "{config:?}: one single-shot accept each"
                    );
                    assert_eq!(rearms, u64::from(N) - 1, "{config:?}");
                }
            }
        }
    });
}

#[test]
fn a_multishot_accept_ended_by_a_full_cq_is_re_armed_and_loses_no_connection() {
    // A ring of 4 SQ entries has 16 CQ entries: 48 connections accepted while the shard is
    // not reaping fill it, and the kernel ends the multishot accept rather than overflow.
    const N: u8 = 48;
    under_every_config("accept stream, full CQ", 1, |config, b| {
        let rt = b.ring_entries(4).build().unwrap();
        rt.block_on(async {
            let (l, addr) = listener();
            let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
            // Arm it (first poll), and let the tick submit it.
            let first =
                std::future::poll_fn(|cx| std::task::Poll::Ready(incoming.poll_next(cx))).await;
            assert!(first.is_pending(), "nobody connected yet");
            ringsteal_rt::yield_now().await;
            // Connect everyone while this shard runs no tick (nothing is reaped).
            let (tx, rx) = mpsc::channel();
            let clients = std::thread::spawn(move || {
                let c = connect_clients(addr, N).join().unwrap();
                tx.send(()).unwrap();
                c
            });
            while rx.try_recv().is_err() {
                std::hint::spin_loop();
            }
            accept_each(&mut incoming, N, &format!("{config:?}")).await;
            drop(clients.join().unwrap());
            assert!(
                incoming.requests_submitted() >= 2,
                "{config:?}: the kernel should have ended the multishot accept on a full CQ"
            );
            let stats = ringsteal_rt::RuntimeHandle::current().stats().total();
            assert!(stats.stream_rearms >= 1, "{config:?}: {stats:?}");
        });
    });
}

#[test]
fn an_accept_stream_nobody_takes_from_stops_accepting_at_its_bound_and_loses_nothing() {
    // The server at its connection limit: the stream is armed, then not polled while
    // clients keep arriving. It accepts `ACCEPT_AHEAD`, pauses, and leaves the rest in the
    // kernel's backlog; taken again, it delivers every client once.
    const LATE: usize = 32;
    const N: usize = op::ACCEPT_AHEAD + LATE;
    under_every_config("accept stream, bound", 1, |config, b| {
        let rt = b.build().unwrap();
        if !rt
            .handle()
            .features()
            .supports(ringsteal_rt::Feature::MultishotAccept)
        {
            // Single-shot accepts take one connection per poll: nothing is accepted ahead.
            eprintln!("SKIPPED: this kernel has no multishot accept");
            return;
        }
        let submitted = rt.block_on(async move {
            let (l, addr) = listener();
            let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
            let first =
                std::future::poll_fn(|cx| std::task::Poll::Ready(incoming.poll_next(cx))).await;
            assert!(first.is_pending(), "nobody connected yet");
            let handle = ringsteal_rt::RuntimeHandle::current();
            // The clients, on a blocking thread; this shard, idle meanwhile, reaps the
            // accepts.
            let clients = ringsteal_rt::spawn_blocking(move || {
                let stats = || handle.stats().total();
                let mut clients = Vec::new();
                let mut connect = |i: usize| {
                    let mut c = TcpStream::connect(addr).expect("connect");
                    c.write_all(&[i as u8]).expect("send the index");
                    clients.push(c);
                };
                for i in 0..op::ACCEPT_AHEAD {
                    connect(i);
                    // Accepted ahead: the kernel took it from the backlog.
                    common::spin_until(|| accept_queue_len(addr) == 0);
                }
                // The bound is reached: the request is cancelled and ends.
                common::spin_until(|| stats().ops_cancelled >= 1);
                common::spin_until(|| stats().ops_in_flight == 0);
                for i in op::ACCEPT_AHEAD..N {
                    connect(i);
                }
                // Nothing accepts them: they wait in the backlog, no descriptor held here.
                // (Each is there once its handshake is done, which the connect may not wait
                // for.)
                common::spin_until(|| accept_queue_len(addr) >= LATE);
                assert_eq!(accept_queue_len(addr), LATE, "{config:?}");
                clients
            })
            .await
            .unwrap();
            accept_each(&mut incoming, N as u8, &format!("{config:?}")).await;
            drop(clients);
            incoming.requests_submitted()
        });
        assert_eq!(submitted, 2, "{config:?}: armed, paused, armed again");
    });
}

#[test]
fn an_accept_stream_on_a_socket_that_cannot_accept_yields_the_error_and_ends() {
    under_every_config("accept stream, not listening", 1, |config, b| {
        for path in Path::ACCEPT {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                // A bound but not listening socket: accept fails with EINVAL.
                let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                let mut incoming = op::accept_multishot(&SharedFd::new(sock.into()));
                let err = incoming.next().await.expect("an error").unwrap_err();
                assert!(
                    matches!(
                        err.raw_os_error(),
                        Some(libc::EINVAL | libc::EOPNOTSUPP | libc::ENOTSOCK)
                    ),
                    "{config:?} {path:?}: {err}"
                );
                assert!(
                    incoming.next().await.is_none(),
                    "{config:?} {path:?}: the stream ends"
                );
            });
        }
    });
}

#[test]
fn an_accept_stream_polled_off_the_runtime_fails_cleanly() {
    let (l, _) = listener();
    let mut incoming = op::accept_multishot(&SharedFd::new(l.into()));
    let res = common::block_on_plain(incoming.next());
    assert!(res.expect("an error").is_err());
    assert!(common::block_on_plain(incoming.next()).is_none());
}

#[test]
fn a_stream_dropped_on_another_shard_is_cancelled_and_accepts_nothing_more() {
    under_every_config("accept stream dropped elsewhere", 2, |config, b| {
        let rt = b.build().unwrap();
        rt.block_on(async {
            let (l, addr) = listener();
            let l = SharedFd::new(l.into());
            let mut incoming = op::accept_multishot(&l);
            let c = TcpStream::connect(addr).unwrap();
            drop(incoming.next().await.unwrap().unwrap());
            drop(c);
            // Armed on shard 0; dropped by a task on shard 1, which asks shard 0 to cancel.
            ringsteal_rt::spawn_with(
                ringsteal_rt::Placement::Pinned(1),
                async move { drop(incoming) },
            )
            .await
            .unwrap();
            let handle = ringsteal_rt::RuntimeHandle::current();
            common::yield_until(|| handle.stats().total().ops_in_flight == 0).await;
            // Nothing accepts for us any more: the next connection waits in the backlog.
            let late = TcpStream::connect(addr).unwrap();
            let std_listener =
                std::net::TcpListener::from(l.try_unwrap().expect("no request holds the listener"));
            let (conn, peer) = std_listener.accept().unwrap();
            assert_eq!(peer, late.local_addr().unwrap(), "{config:?}");
            drop(conn);
        });
    });
}
