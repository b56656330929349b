//! Sockets closed under armed streams of completions, and runtimes shut down with them
//! armed: a socket whose handle is dropped while a multishot receive or accept is armed
//! stays open for that request (it names the descriptor) and is closed when the stream
//! goes, except a listener, which stops listening the moment its last handle goes; a peer
//! closing or resetting ends a receive stream after every byte it sent; and
//! a runtime dropped with multishot accepts and receives armed on both shards, buffers
//! held and a receive stalled for want of buffers, closes every descriptor and frees
//! everything (`scripts/asan.sh` runs this binary under AddressSanitizer with leak
//! detection). Descriptors are counted in `/proc/self/fd`, so this binary holds one test
//! that runs its cases in sequence, under every wake mechanism and ring mode.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::{Read, Write};
use std::time::Duration;

use common::{hang_guard, Config, HANG_LIMIT};
use ringsteal_net::{TcpListener, UdpSocket};
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

/// Reads from `s` until end of stream (a hang-guarded blocking read on a std socket).
fn std_read_to_eof(s: &mut std::net::TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(OP_GUARD)).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all)
        .expect("end of stream within the guard");
    all
}

fn a_stream_dropped_with_a_receive_armed_keeps_its_socket_until_the_receive_goes(config: Config) {
    let rt = config.runtime(2);
    rt.block_on(async {
        let (l, addr) = listener().await;
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let (server, _) = l.accept().await.unwrap();
        let mut data = server.recv_stream();
        client.write_all(b"one").unwrap();
        assert_eq!(&data.next().await.unwrap().unwrap()[..], b"one");
        // The handle goes; the armed receive still names the socket, which stays open.
        drop(server);
        client.write_all(b"two").unwrap();
        let two = timeout(OP_GUARD, data.next())
            .await
            .expect("the receive died");
        assert_eq!(&two.unwrap().unwrap()[..], b"two", "{config:?}");
        // The stream goes, and with it the last use of the socket: the peer sees the end.
        // (Read on another thread: the shard must run to cancel the receive.)
        drop(data);
        let rest = ringsteal_rt::spawn_blocking(move || std_read_to_eof(&mut client));
        assert_eq!(rest.await.unwrap(), b"", "{config:?}");
    });
}

fn a_peer_closing_or_resetting_ends_the_receive_stream_after_its_data(config: Config) {
    let rt = config.runtime(1);
    rt.block_on(async {
        let (client, server) = tcp_pair().await;
        let mut data = server.recv_stream();
        let mut first = Box::pin(data.next());
        assert!(poll_once(&mut first).await.is_none(), "armed, nothing sent");
        drop(first);
        client
            .write_all(stream_bytes(4, 0, 300_000))
            .await
            .0
            .unwrap();
        drop(client);
        let mut got = Vec::new();
        while let Some(buf) = timeout(OP_GUARD, data.next()).await.expect("stalled") {
            got.extend_from_slice(&buf.unwrap());
        }
        check_stream(4, 0, &got);
        assert_eq!(got.len(), 300_000, "{config:?}");
        assert!(data.next().await.is_none(), "{config:?}: stays ended");

        let (client, server) = tcp_pair().await;
        let mut data = server.recv_stream();
        let mut first = Box::pin(data.next());
        assert!(poll_once(&mut first).await.is_none());
        drop(first);
        client.set_linger(Some(Duration::ZERO)).unwrap();
        drop(client); // a reset
        let err = timeout(OP_GUARD, data.next())
            .await
            .expect("stalled")
            .expect("an error, not the end")
            .unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::ConnectionReset,
            "{config:?}"
        );
        assert!(data.next().await.is_none(), "{config:?}");
        // Its read side is free again: a read sees the connection's state, not a hang.
        let (res, _) = timeout(OP_GUARD, server.read(Vec::with_capacity(8)))
            .await
            .expect("the read side stayed held");
        assert!(matches!(res, Ok(0) | Err(_)), "{config:?}: {res:?}");
    });
}

/// Connects to `addr` from a std socket (a plain blocking connect: loopback answers at once).
fn std_connect(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpStream> {
    std::net::TcpStream::connect_timeout(&addr, OP_GUARD)
}

fn a_listener_dropped_with_its_accepts_armed_stops_listening_at_once(config: Config) {
    let rt = config.runtime(2);
    rt.block_on(async {
        // An `Incoming` outlives its listener and still accepts.
        let (first, addr) = listener().await;
        let mut incoming = first.incoming();
        drop(first);
        let _c = std_connect(addr).unwrap();
        let conn = timeout(OP_GUARD, incoming.next())
            .await
            .expect("no connection");
        drop(conn.unwrap().unwrap());
        // Armed again (the multishot request), then dropped with the listener gone: the
        // cancel has not completed yet, and still nothing listens and the port is free.
        let mut next = Box::pin(incoming.next());
        assert!(
            poll_once(&mut next).await.is_none(),
            "armed, nobody connecting"
        );
        drop(next);
        drop(incoming);
        let refused = std_connect(addr).expect_err("still listening");
        assert_eq!(
            refused.kind(),
            std::io::ErrorKind::ConnectionRefused,
            "{config:?}"
        );
        let again = TcpListener::bind(addr).await;
        assert!(again.is_ok(), "{config:?}: rebinding failed: {again:?}");
        drop(again);

        // The same for a single accept dropped under a timeout, on an accept loop's shard.
        let (second, addr) = listener().await;
        let armed = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
            let waited = timeout(Duration::from_millis(1), second.accept()).await;
            assert!(waited.is_err(), "nobody connected");
            drop(second);
            TcpListener::bind(addr).await.map(drop)
        });
        let rebound = armed.await.unwrap();
        assert!(rebound.is_ok(), "{config:?}: rebinding failed: {rebound:?}");

        // A listener handed to std keeps listening, cancelled accept or not.
        let (third, addr) = listener().await;
        let mut incoming = third.incoming();
        let mut next = Box::pin(incoming.next());
        assert!(poll_once(&mut next).await.is_none());
        drop(next);
        drop(incoming);
        let std_listener = third.into_std().unwrap();
        // (The connection itself may go to the cancelled accept if it is still armed, which
        // closes it: that it is not refused is what says the socket listens.)
        let c = std_connect(addr);
        assert!(
            c.is_ok(),
            "{config:?}: the std listener stopped listening: {c:?}"
        );
        drop(std_listener);
    });
}

fn a_unix_listener_dropped_with_its_accept_armed_refuses_connections_at_once(config: Config) {
    let rt = config.runtime(1);
    rt.block_on(async {
        let name = format!("\0ringsteal-closing-{}-{config:?}", std::process::id());
        let listener = ringsteal_net::UnixListener::bind(&name).unwrap();
        let mut incoming = listener.incoming();
        let mut next = Box::pin(incoming.next());
        assert!(poll_once(&mut next).await.is_none());
        drop(next);
        drop((incoming, listener));
        let refused = ringsteal_net::UnixStream::connect(&name)
            .await
            .expect_err("still listening");
        assert_eq!(
            refused.kind(),
            std::io::ErrorKind::ConnectionRefused,
            "{config:?}"
        );
    });
}

/// Arms an accept on `listener` (one poll, nobody connecting), then drops it: its cancel is
/// in flight, holding the socket, when the caller drops the listener.
async fn arm_and_drop_an_accept(listener: &TcpListener) {
    let mut accept = Box::pin(listener.accept());
    assert!(
        poll_once(&mut accept).await.is_none(),
        "armed, nobody connecting"
    );
}

/// The rule's two limits: a listener without `SO_REUSEADDR` (made by `TcpSocket`) frees its
/// port for `TcpListener::bind` at once too (the dying socket gets the option), and a
/// listener adopted from std is never shut down, since another descriptor (here a kept
/// `try_clone`) may listen on the same socket.
fn listeners_without_reuseaddr_or_adopted_from_std(config: Config) {
    let rt = config.runtime(1);
    rt.block_on(async {
        // An explicit port: one bound as port 0 is given back by the shutdown itself.
        let (plain, addr) = loop {
            let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = free.local_addr().unwrap();
            drop(free);
            let socket = ringsteal_net::TcpSocket::new_v4().unwrap();
            // Someone else may have taken the port meanwhile: then another one.
            if socket.bind(addr).is_ok() {
                break (socket.listen(16).unwrap(), addr);
            }
        };
        arm_and_drop_an_accept(&plain).await;
        drop(plain);
        let again = TcpListener::bind(addr).await;
        assert!(again.is_ok(), "{config:?}: rebinding failed: {again:?}");
        drop(again);

        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        let kept = std_listener.try_clone().unwrap();
        let adopted = TcpListener::from_std(std_listener).unwrap();
        arm_and_drop_an_accept(&adopted).await;
        drop(adopted);
        let c = std_connect(addr);
        assert!(
            c.is_ok(),
            "{config:?}: the kept clone stopped listening: {c:?}"
        );
        drop((c, kept));

        let bare = format!("ringsteal-adopted-{}-{config:?}", std::process::id());
        let name = format!("\0{bare}");
        let std_listener = {
            use std::os::linux::net::SocketAddrExt;
            let at = std::os::unix::net::SocketAddr::from_abstract_name(&bare).unwrap();
            std::os::unix::net::UnixListener::bind_addr(&at).unwrap()
        };
        let kept = std_listener.try_clone().unwrap();
        let adopted = ringsteal_net::UnixListener::from_std(std_listener).unwrap();
        let mut accept = Box::pin(adopted.accept());
        assert!(poll_once(&mut accept).await.is_none());
        drop(accept);
        drop(adopted);
        let c = ringsteal_net::UnixStream::connect(&name).await;
        assert!(
            c.is_ok(),
            "{config:?}: the kept clone stopped listening: {c:?}"
        );
        drop((c, kept));
    });
}

/// A runtime left with, on both shards: an armed multishot accept, receive streams armed
/// with data queued and buffers held, one stalled for want of buffers, a datagram stream,
/// and a `read_buf` waiting for a provided buffer; then dropped from outside `block_on`.
fn a_runtime_dropped_with_streams_armed_closes_every_socket(config: Config) {
    let mut clients = Vec::new();
    {
        let rt = config.builder(2).recv_buffers(4, 4096).build().unwrap();
        rt.block_on(async {
            let (tx, rx) = std::sync::mpsc::channel::<std::net::TcpStream>();
            let mut ready = Vec::new();
            for shard in 0..2 {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let tx = tx.clone();
                let (armed_tx, armed_rx) = std::sync::mpsc::channel::<()>();
                ringsteal_rt::spawn_with(Placement::Pinned(shard), async move {
                    let mut incoming = listener.incoming();
                    let mut first = Box::pin(incoming.next());
                    assert!(poll_once(&mut first).await.is_none());
                    drop(first);
                    let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                    let mut datagrams = udp.recv_stream();
                    let mut d = Box::pin(datagrams.next());
                    assert!(poll_once(&mut d).await.is_none());
                    drop(d);
                    // Three connections: one idle, one holding a buffer with more queued
                    // (its request ended when the group of four ran dry), one stalled for
                    // want of buffers. Small writes: this task must not block its shard.
                    let mut conns = Vec::new();
                    let mut held = Vec::new();
                    for i in 0..3u64 {
                        let client = std::net::TcpStream::connect(addr).unwrap();
                        let mut c = client.try_clone().unwrap();
                        tx.send(client).unwrap();
                        let server = incoming.next().await.unwrap().unwrap();
                        let mut data = server.recv_stream();
                        if i > 0 {
                            c.write_all(&stream_bytes(i, 0, 12 * 1024)).unwrap();
                        }
                        if i == 1 {
                            held.push(data.next().await.unwrap().unwrap());
                        } else {
                            let mut n = Box::pin(data.next());
                            let _ = poll_once(&mut n).await;
                        }
                        conns.push((server, data));
                    }
                    // And one idle in `read_buf`: a receive armed to select a provided
                    // buffer when data comes.
                    let client = std::net::TcpStream::connect(addr).unwrap();
                    tx.send(client).unwrap();
                    let idle = incoming.next().await.unwrap().unwrap();
                    let mut frame = Vec::new();
                    let mut idle_read = Box::pin(idle.read_buf(&mut frame));
                    assert!(poll_once(&mut idle_read).await.is_none());
                    armed_tx.send(()).unwrap();
                    // Waits forever: the runtime is dropped with all of it in flight.
                    std::future::pending::<()>().await;
                    drop((idle_read, conns, held, incoming, datagrams, udp));
                });
                ready.push(armed_rx);
            }
            drop(tx);
            for r in ready {
                // A worker shard's task gets there on its own; shard 0's needs this loop
                // to run it.
                while r.try_recv().is_err() {
                    ringsteal_rt::yield_now().await;
                }
            }
            clients.extend(rx.try_iter());
        });
    }
    // Every accepted socket was closed with the runtime: each client sees the end.
    assert_eq!(clients.len(), 8);
    for c in &mut clients {
        let mut rest = Vec::new();
        c.set_read_timeout(Some(OP_GUARD)).unwrap();
        // End of stream, or a reset (the server closed with unread bytes); a socket that
        // outlived its runtime would leave this read waiting until the read timeout.
        match c.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("{config:?}: an accepted socket outlived its runtime ({e})"),
        }
    }
}

#[test]
fn sockets_closed_under_armed_streams_and_runtimes_dropped_with_them() {
    for config in Config::ALL {
        hang_guard(
            &format!("streams closing [{config:?}]"),
            HANG_LIMIT,
            move || {
                let start = open_fds();
                a_stream_dropped_with_a_receive_armed_keeps_its_socket_until_the_receive_goes(
                    config,
                );
                a_peer_closing_or_resetting_ends_the_receive_stream_after_its_data(config);
                a_listener_dropped_with_its_accepts_armed_stops_listening_at_once(config);
                a_unix_listener_dropped_with_its_accept_armed_refuses_connections_at_once(config);
                listeners_without_reuseaddr_or_adopted_from_std(config);
                a_runtime_dropped_with_streams_armed_closes_every_socket(config);
                assert_eq!(open_fds(), start, "{config:?}: descriptors left open");
            },
        );
    }
}
