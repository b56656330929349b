//! tokio's readiness methods on streams: `readable`/`try_read` and `writable`/`try_write`
//! move a stream's bytes exactly, wait on the ring instead of spinning, report the end of
//! the stream and errors, and never overtake or split an owned-buffer read or write of the
//! same stream (they say `WouldBlock` while one is in flight); on datagram sockets
//! `readable`/`try_recv(_from)` and `writable`/`try_send(_to)` move whole datagrams.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;
use std::net::Shutdown;
use std::os::fd::AsRawFd;

use common::with_every_runtime;
use ringsteal_net::{TcpStream, UdpSocket, UnixDatagram, UnixStream};
use ringsteal_rt::io::Interest;
use ringsteal_rt::time::timeout;
use ringsteal_rt::Placement;
use support::*;

const LEN: usize = 1 << 20;

/// Sends `LEN` bytes of stream `seed` with `writable` + `try_write` only.
async fn send_by_readiness(s: &TcpStream, seed: u64) {
    let data = stream_bytes(seed, 0, LEN);
    let mut sent = 0;
    while sent < LEN {
        timeout(OP_GUARD, s.writable())
            .await
            .expect("writable never came")
            .unwrap();
        match s.try_write(&data[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("try_write: {e}"),
        }
    }
    s.shutdown(Shutdown::Write).await.unwrap();
}

/// Receives stream `seed` to its end with `readable` + `try_read` only, checking each byte;
/// returns how many bytes came.
async fn receive_by_readiness(s: &TcpStream, seed: u64) -> usize {
    let mut buf = vec![0; 64 * 1024];
    let mut got = 0;
    loop {
        timeout(OP_GUARD, s.readable())
            .await
            .expect("readable never came")
            .unwrap();
        match s.try_read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => {
                check_stream(seed, got as u64, &buf[..n]);
                got += n;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("try_read: {e}"),
        }
    }
}

#[test]
fn a_mebibyte_each_way_by_readiness_alone_arrives_whole_across_shards() {
    with_every_runtime("readiness transfer", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (client, server) = (std::sync::Arc::new(client), std::sync::Arc::new(server));
            // The server's side runs on shard 1, the client's here (shard 0).
            let s = server.clone();
            let echo_side = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let got = receive_by_readiness(&s, 2).await;
                send_by_readiness(&s, 3).await;
                got
            });
            send_by_readiness(&client, 2).await;
            assert_eq!(receive_by_readiness(&client, 3).await, LEN);
            assert_eq!(echo_side.await.unwrap(), LEN);
        })
    });
}

#[test]
fn try_read_would_block_while_an_owned_read_is_in_flight_and_takes_nothing_from_it() {
    with_every_runtime("try_read beside read", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read_exact(vec![0; 4]));
            assert!(poll_once(&mut read).await.is_none(), "nothing sent yet");
            send_outside_the_ring(&client, b"abcdef");
            until_bytes_waiting(&server, 1).await;
            let mut buf = [0; 8];
            let err = server.try_read(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            assert!(
                err.to_string().contains("in flight"),
                "the read holds the lane: {err}"
            );
            let (res, first) = timeout(OP_GUARD, read).await.expect("read never completed");
            res.unwrap();
            assert_eq!(first, b"abcd", "the owned read got the first bytes");
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            assert_eq!(server.try_read(&mut buf).unwrap(), 2);
            assert_eq!(&buf[..2], b"ef");
        })
    });
}

#[test]
fn bytes_kept_by_a_cancelled_read_are_readable_at_once_and_come_first() {
    with_every_runtime("try_read after a cancelled read", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(3)));
            assert!(poll_once(&mut read).await.is_none());
            send_outside_the_ring(&client, b"xyz");
            // Until the kernel's receive has taken the bytes; then the read is dropped, and
            // its lane keeps them.
            until_bytes_taken(&server).await;
            drop(read);
            // Nothing in the socket now: readable answers for the kept bytes alone, once the
            // dropped read's lane is free.
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            assert_eq!(bytes_waiting(&server), 0);
            let mut first = [0; 8];
            assert_eq!(server.try_read(&mut first).unwrap(), 3, "the kept bytes");
            assert_eq!(&first[..3], b"xyz");
            send_outside_the_ring(&client, b"123");
            let mut all = b"xyz".to_vec();
            let mut buf = [0; 2];
            while all.len() < 6 {
                server.readable().await.unwrap();
                match server.try_read(&mut buf) {
                    Ok(n) => all.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            assert_eq!(all, b"xyz123", "nothing lost or reordered");
        })
    });
}

#[test]
fn readable_reports_the_end_of_the_stream_and_a_reset() {
    with_every_runtime("readable at the end", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut readable = Box::pin(server.readable());
            assert!(
                poll_once(&mut readable).await.is_none(),
                "nothing to read yet"
            );
            client.shutdown(Shutdown::Write).await.unwrap();
            timeout(OP_GUARD, readable).await.unwrap().unwrap();
            assert_eq!(server.try_read(&mut [0; 4]).unwrap(), 0, "end of stream");

            let (client, server) = tcp_pair().await;
            let mut readable = Box::pin(server.readable());
            assert!(poll_once(&mut readable).await.is_none());
            client.set_linger(Some(std::time::Duration::ZERO)).unwrap();
            drop(client); // a reset
            timeout(OP_GUARD, readable).await.unwrap().unwrap();
            let err = server.try_read(&mut [0; 4]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionReset);
        })
    });
}

#[test]
fn tokio_s_ready_loop_moves_a_mebibyte_each_way_and_sees_the_end() {
    // The loop from tokio's `TcpStream::ready` docs, on both ends at once (each its own
    // task, on its own shard): wait for either direction, then try what is ready.
    async fn exchange(s: TcpStream, seed: u64, peer: u64) -> TcpStream {
        let out = stream_bytes(seed, 0, LEN);
        let (mut sent, mut got, mut buf) = (0, Vec::new(), vec![0; 64 * 1024]);
        let mut read_done = false;
        while !read_done || sent < LEN {
            let interest = match (read_done, sent < LEN) {
                (false, true) => Interest::READABLE | Interest::WRITABLE,
                (false, false) => Interest::READABLE,
                _ => Interest::WRITABLE,
            };
            let ready = timeout(OP_GUARD, s.ready(interest))
                .await
                .expect("stalled")
                .unwrap();
            if ready.is_readable() && !read_done {
                match s.try_read(&mut buf) {
                    Ok(0) => read_done = true,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("read: {e}"),
                }
            }
            if ready.is_writable() && sent < LEN {
                match s.try_write(&out[sent..]) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("write: {e}"),
                }
                if sent == LEN {
                    s.shutdown(Shutdown::Write).await.unwrap();
                }
            }
        }
        assert_eq!(got.len(), LEN);
        check_stream(peer, 0, &got);
        let ready = s.ready(Interest::READABLE).await.unwrap();
        assert!(ready.is_read_closed(), "{ready:?}");
        s
    }
    with_every_runtime("ready loop", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let a = ringsteal_rt::spawn_with(Placement::Pinned(0), exchange(client, 1, 2));
            let b = ringsteal_rt::spawn_with(Placement::Pinned(1), exchange(server, 2, 1));
            let (a, b) = (a.await.unwrap(), b.await.unwrap());
            // Both sides shut their write side: a hang-up, closed both ways.
            let ready = a
                .ready(Interest::READABLE | Interest::WRITABLE)
                .await
                .unwrap();
            assert!(ready.is_read_closed(), "{config:?}: {ready:?}");
            drop(b);
        })
    });
}

#[test]
fn ready_for_both_directions_reports_room_while_an_owned_read_holds_the_read_lane() {
    with_every_runtime("ready beside a held read lane", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // An owned-buffer read in flight: it holds the read lane until bytes come.
            let mut read = Box::pin(server.read(Vec::with_capacity(8)));
            assert!(poll_once(&mut read).await.is_none(), "nothing to read yet");
            let ready = timeout(
                OP_GUARD,
                server.ready(Interest::READABLE | Interest::WRITABLE),
            )
            .await
            .expect("waited for the read lane instead of reporting room")
            .unwrap();
            assert!(
                ready.is_writable() && !ready.is_readable(),
                "{config:?}: {ready:?}"
            );
            assert_eq!(server.try_write(b"room").unwrap(), 4);
            client.write_all(b"data".to_vec()).await.0.unwrap();
            let (n, buf) = read.await;
            assert_eq!(&buf[..n.unwrap()], b"data", "{config:?}");
        })
    });
}

#[test]
fn a_pending_socket_error_makes_ready_say_readable_so_try_recv_returns_it() {
    // A connected UDP socket whose peer's port is closed: the kernel's ICMP reply leaves an
    // error pending, reported on every poll until a call returns it. `ready` must say
    // readable then, or tokio's loop (`ready`, `try_recv` if readable) never makes the call.
    with_every_runtime("ready on a pending error", 1, |config, rt| {
        rt.block_on(async {
            let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = closed.local_addr().unwrap();
            drop(closed);
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            s.connect(port).await.unwrap();
            s.send(b"anyone?".to_vec()).await.0.unwrap();
            let ready = timeout(OP_GUARD, s.ready(Interest::READABLE))
                .await
                .expect("stalled")
                .unwrap();
            assert!(
                ready.is_error() && ready.is_readable(),
                "{config:?}: {ready:?}"
            );
            let err = s.try_recv(&mut [0; 16]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{config:?}");
        })
    });
}

#[test]
fn an_error_left_in_the_error_queue_is_reported_once_and_then_readable_sleeps() {
    // With IP_RECVERR, the ICMP reply from a closed port also goes into the socket's error
    // queue, and the kernel reports POLLERR to every poll until someone reads the queue
    // (MSG_ERRQUEUE). A caller that does not must see the error once (as tokio's
    // edge-triggered epoll reports it) and then sleep until the socket changes: a wait
    // that re-armed a one-shot poll would return at once every time, and the loop below
    // would go round once per shard tick.
    with_every_runtime("a lasting error", 1, |config, rt| {
        rt.block_on(async {
            let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let peer = closed.local_addr().unwrap();
            drop(closed);
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let on: libc::c_int = 1;
            // SAFETY: sets an int option on a socket the test owns; `on` outlives the call.
            let set = unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::IPPROTO_IP,
                    libc::IP_RECVERR,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
            s.connect(peer).await.unwrap();
            s.send(b"anyone?".to_vec()).await.0.unwrap();
            // Reported once: the pending error, then WouldBlock with the entry still queued.
            let ready = timeout(OP_GUARD, s.readable()).await.expect("stalled");
            ready.unwrap();
            let err = s.try_recv(&mut [0; 16]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{config:?}");
            let mut buf = [0; 16];
            let mut reports = 0;
            loop {
                match s.try_recv(&mut buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    other => panic!("{config:?}: {other:?}"),
                }
                // The error is still reported to every poll (the queue is not read): the
                // wait must not end within twenty rounds of the ring (each a no-op request,
                // so an enter and a reap).
                let mut readable = Box::pin(s.readable());
                let mut woke = None;
                for _ in 0..20 {
                    woke = poll_once(&mut readable).await;
                    if woke.is_some() {
                        break;
                    }
                    ringsteal_rt::op::nop().await.unwrap();
                }
                match woke {
                    None => break,
                    Some(r) => {
                        r.unwrap();
                        reports += 1;
                        // Once more at most: a second poll that sees the error alone
                        // tells a lasting error from a pending one `recv` would clear.
                        assert!(
                            reports < 2,
                            "{config:?}: readable said ready {reports} times with nothing to read"
                        );
                    }
                }
            }
            // Still asleep; data wakes it.
            let sender = std::net::UdpSocket::bind(peer).unwrap();
            sender.send_to(b"data", s.local_addr().unwrap()).unwrap();
            timeout(OP_GUARD, s.readable())
                .await
                .expect("stalled")
                .unwrap();
            let n = s.try_recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"data", "{config:?}");
        })
    });
}

#[test]
fn writable_waits_for_room_and_try_write_would_block_while_a_write_is_in_flight() {
    with_every_runtime("writable", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let chunk = vec![5u8; 64 * 1024];
            let mut sent = 0;
            loop {
                match a.try_write(&chunk) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            let mut writable = Box::pin(a.writable());
            assert!(
                poll_once(&mut writable).await.is_none(),
                "the socket is full"
            );
            // An owned-buffer write waits for room, holding the write lane.
            let mut write = Box::pin(a.write_all(b"tail".to_vec()));
            assert!(poll_once(&mut write).await.is_none());
            let err = a.try_write(b"x").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            // Said by the lane, not the full socket (which would say WouldBlock too).
            assert!(err.to_string().contains("in flight"), "{err}");
            let drain = async {
                let mut drained = 0;
                while drained < sent + 4 {
                    let (res, _) = timeout(OP_GUARD, b.read(Vec::with_capacity(256 * 1024)))
                        .await
                        .expect("read never completed");
                    drained += res.unwrap();
                }
                drained
            };
            let ((res, _), drained) = join(write, drain).await;
            res.unwrap();
            timeout(OP_GUARD, writable).await.unwrap().unwrap();
            assert_eq!(drained, sent + 4);
        })
    });
}

#[test]
fn datagrams_by_readiness_arrive_whole_with_their_source_across_shards() {
    const N: u64 = 200;
    with_every_runtime("udp readiness", 2, |_, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let (to, from) = (rx.local_addr().unwrap(), tx.local_addr().unwrap());
            let receiver = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut buf = [0; 64];
                let mut next = 0;
                while next < N {
                    timeout(OP_GUARD, rx.readable())
                        .await
                        .expect("readable never came")
                        .unwrap();
                    loop {
                        match rx.try_recv_from(&mut buf) {
                            Ok((n, source)) => {
                                assert_eq!(source, from);
                                assert_eq!(
                                    &buf[..n],
                                    &stream_bytes(next, 0, 8 + next as usize % 50)
                                );
                                next += 1;
                                // Acknowledge every tenth, so the sender never overruns the
                                // receive buffer (loopback drops what does not fit).
                                if next % 10 == 0 {
                                    rx.send_to(vec![1], from).await.0.unwrap();
                                }
                            }
                            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                            Err(e) => panic!("try_recv_from: {e}"),
                        }
                    }
                }
                next
            });
            for i in 0..N {
                let datagram = stream_bytes(i, 0, 8 + i as usize % 50);
                loop {
                    tx.writable().await.unwrap();
                    match tx.try_send_to(&datagram, to) {
                        Ok(n) => break assert_eq!(n, datagram.len()),
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => panic!("try_send_to: {e}"),
                    }
                }
                if i % 10 == 9 {
                    let (res, _) = timeout(OP_GUARD, tx.recv(Vec::with_capacity(1)))
                        .await
                        .expect("no acknowledgement");
                    res.unwrap();
                }
            }
            assert_eq!(timeout(OP_GUARD, receiver).await.unwrap().unwrap(), N);
        })
    });
}

#[test]
fn a_full_datagram_peer_makes_try_send_would_block_until_writable_says_there_is_room() {
    with_every_runtime("unix datagram writable", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            let mut readable = Box::pin(b.readable());
            assert!(poll_once(&mut readable).await.is_none(), "nothing sent yet");
            let mut sent = 0u32;
            loop {
                match a.try_send(&sent.to_le_bytes()) {
                    Ok(4) => sent += 1,
                    Ok(n) => panic!("a datagram of 4 bytes sent as {n}"),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("try_send: {e}"),
                }
                assert!(sent < 1 << 20, "the peer's queue never filled");
            }
            timeout(OP_GUARD, readable).await.unwrap().unwrap();
            let mut writable = Box::pin(a.writable());
            assert!(
                poll_once(&mut writable).await.is_none(),
                "the peer's queue is full"
            );
            // The sender's room comes back as the peer takes the datagrams (the kernel
            // reports it once a quarter of the send buffer is in use at most).
            let mut buf = [0; 8];
            for i in 0..sent {
                let (n, from) = b.try_recv_from(&mut buf).unwrap();
                assert_eq!((n, &buf[..4]), (4, &i.to_le_bytes()[..]), "in order");
                assert!(from.is_unnamed());
            }
            timeout(OP_GUARD, writable)
                .await
                .expect("room never reported")
                .unwrap();
            assert_eq!(a.try_send(b"more").unwrap(), 4);
            assert_eq!(b.try_recv(&mut buf).unwrap(), 4);
            let err = b.try_recv(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
        })
    });
}

#[test]
fn the_readiness_loop_waits_for_a_dropped_receive_stream_instead_of_spinning() {
    // A receive stream dropped with data queued in it gives the data back to the stream's
    // read lane, which it holds until the kernel has finished its request. `readable` must
    // wait for that (try_read says WouldBlock meanwhile): reporting ready at once would make
    // this loop go round without yielding, and the shard would never reap the completion
    // that frees the lane (a hang, reported by the hang guard).
    with_every_runtime("readiness after a receive stream", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let data = stream_bytes(9, 0, 64 * 1024);
            send_outside_the_ring(&client, &data);
            until_bytes_waiting(&server, data.len()).await;
            let mut got = {
                let mut rs = server.recv_stream();
                let first = timeout(OP_GUARD, rs.next())
                    .await
                    .unwrap()
                    .unwrap()
                    .unwrap();
                first.to_vec()
            }; // dropped with the rest queued in it, or still in the socket
            let mut buf = vec![0; 64 * 1024];
            while got.len() < data.len() {
                server.readable().await.unwrap();
                match server.try_read(&mut buf) {
                    Ok(0) => panic!("end of stream after {} bytes", got.len()),
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                }
            }
            check_stream(9, 0, &got);
        })
    });
}

/// tokio's `try_write_vectored` / `try_read_vectored`: a mebibyte each way through slices of
/// uneven sizes arrives whole and in order across shards; a vectored read says `WouldBlock`
/// while an owned read holds the lane, and returns the bytes a cancelled read kept first.
#[test]
fn the_vectored_try_forms_move_bytes_exactly_and_respect_the_lanes() {
    use std::io::{IoSlice, IoSliceMut};
    with_every_runtime("vectored try forms", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let server = std::sync::Arc::new(server);
            let s = server.clone();
            let receiver = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let (mut head, mut tail) = (vec![0; 1000], vec![0; 7000]);
                let mut got = Vec::with_capacity(LEN);
                loop {
                    timeout(OP_GUARD, s.readable()).await.unwrap().unwrap();
                    let mut bufs = [IoSliceMut::new(&mut head), IoSliceMut::new(&mut tail)];
                    match s.try_read_vectored(&mut bufs) {
                        Ok(0) => return got,
                        Ok(n) => {
                            let first = n.min(head.len());
                            got.extend_from_slice(&head[..first]);
                            got.extend_from_slice(&tail[..n - first]);
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => panic!("try_read_vectored: {e}"),
                    }
                }
            });
            let data = stream_bytes(7, 0, LEN);
            let mut sent = 0;
            while sent < LEN {
                timeout(OP_GUARD, client.writable()).await.unwrap().unwrap();
                let rest = &data[sent..];
                let split = rest.len().min(3000);
                let bufs = [IoSlice::new(&rest[..split]), IoSlice::new(&rest[split..])];
                match client.try_write_vectored(&bufs) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("try_write_vectored: {e}"),
                }
            }
            client.shutdown(Shutdown::Write).await.unwrap();
            let got = receiver.await.unwrap();
            assert_eq!(got.len(), LEN);
            check_stream(7, 0, &got);

            // Behind an owned read, and after a cancelled one.
            let (client, server) = tcp_pair().await;
            let mut read = Box::pin(server.read(Vec::with_capacity(3)));
            assert!(poll_once(&mut read).await.is_none());
            let (mut a, mut b) = ([0; 2], [0; 8]);
            let err = server
                .try_read_vectored(&mut [IoSliceMut::new(&mut a), IoSliceMut::new(&mut b)])
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            send_outside_the_ring(&client, b"xyz");
            until_bytes_taken(&server).await;
            drop(read);
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            let mut empty = [0u8; 0];
            let mut bufs = [
                IoSliceMut::new(&mut empty),
                IoSliceMut::new(&mut a),
                IoSliceMut::new(&mut b),
            ];
            // The kept bytes go into the first non-empty buffer alone.
            assert_eq!(server.try_read_vectored(&mut bufs).unwrap(), 2);
            assert_eq!(&a, b"xy");
            let mut rest = [0; 4];
            assert_eq!(server.try_read(&mut rest).unwrap(), 1);
            assert_eq!(rest[0], b'z', "nothing lost or reordered");
        })
    });
}

#[test]
fn try_io_runs_your_system_call_in_the_lanes_and_async_io_waits_for_it() {
    with_every_runtime("stream try_io", 2, |config, rt| {
        rt.block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let mut buf = [0u8; 16];
            let err = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::WouldBlock,
                "{config:?}: nothing sent"
            );
            let sent = a
                .try_io(Interest::WRITABLE, || raw_send(&a, b"own"))
                .unwrap();
            assert_eq!(sent, 3);
            timeout(OP_GUARD, b.readable()).await.unwrap().unwrap();
            let n = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap();
            assert_eq!(&buf[..n], b"own", "{config:?}");

            // An owned read in flight holds the read lane: WouldBlock, f not called.
            let mut read = Box::pin(b.read(Vec::with_capacity(8)));
            assert!(poll_once(&mut read).await.is_none());
            let err = b
                .try_io(Interest::READABLE, || -> std::io::Result<()> {
                    panic!("called while a read holds the lane")
                })
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            // Bytes the dropped read kept: try_io refuses, try_read takes them first.
            send_outside_the_ring(&a, b"kept");
            until_bytes_taken(&b).await;
            drop(read);
            timeout(OP_GUARD, b.readable()).await.unwrap().unwrap();
            let err = b
                .try_io(Interest::READABLE, || raw_recv(&b, &mut buf))
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Other, "{config:?}");
            assert_eq!(b.try_read(&mut buf).unwrap(), 4);
            assert_eq!(&buf[..4], b"kept");

            // async_io waits until the other shard's task writes.
            let writer = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                a.write_all(b"later".to_vec()).await.0.unwrap();
                a
            });
            let n = timeout(
                OP_GUARD,
                b.async_io(Interest::READABLE, || raw_recv(&b, &mut buf)),
            )
            .await
            .expect("async_io never saw the bytes")
            .unwrap();
            assert_eq!(&buf[..n], b"later", "{config:?}");
            timeout(OP_GUARD, writer).await.unwrap().unwrap();
        })
    });
}

#[test]
fn readable_answers_from_the_cache_until_a_would_block_and_reports_the_end_it_read() {
    with_every_runtime("stream cached readiness", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            send_outside_the_ring(&client, &[7; 400]);
            until_bytes_waiting(&server, 400).await;
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            // tokio's loop, 10 bytes at a time: each readable() answers from the cache,
            // not with a request of its own.
            let before = ops_completed();
            let mut buf = [0u8; 10];
            for _ in 0..40 {
                server.readable().await.unwrap();
                assert_eq!(server.try_read(&mut buf).unwrap(), 10);
            }
            let requests = ops_completed() - before;
            assert!(
                requests < 10,
                "{config:?}: {requests} requests for 40 cached waits"
            );
            // Drained: the WouldBlock clears the cache, so the next wait asks the kernel.
            let err = server.try_read(&mut buf).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::WouldBlock);
            let mut wait = Box::pin(server.readable());
            assert!(
                poll_once(&mut wait).await.is_none(),
                "{config:?}: ready when drained"
            );
            drop(wait);
            // The end of the stream a read returned is reported by the next wait, though
            // the cache had only "readable", from before the peer closed.
            send_outside_the_ring(&client, b"last");
            until_bytes_waiting(&server, 4).await;
            timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
            drop(client);
            assert_eq!(server.try_read(&mut buf).unwrap(), 4);
            let end = loop {
                timeout(OP_GUARD, server.readable()).await.unwrap().unwrap();
                match server.try_read(&mut buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                    other => break other,
                }
            };
            assert_eq!(end.unwrap(), 0);
            let ready = server.ready(Interest::READABLE).await.unwrap();
            assert!(ready.is_read_closed(), "{config:?}: {ready:?}");
        })
    });
}

#[test]
fn poll_read_ready_and_poll_write_ready_move_a_mebibyte_and_wait_for_the_lanes() {
    use std::future::poll_fn;
    use std::task::Poll;
    with_every_runtime("stream poll ready", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // Poll-based code on both ends, as a hand-written `AsyncRead` over a tokio
            // stream would be: wait with poll_*_ready, move bytes with try_*.
            let reader = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let (mut got, mut buf) = (0usize, vec![0u8; 64 * 1024]);
                loop {
                    timeout(OP_GUARD, poll_fn(|cx| server.poll_read_ready(cx)))
                        .await
                        .expect("poll_read_ready never came")
                        .unwrap();
                    match server.try_read(&mut buf) {
                        Ok(0) => return (server, got),
                        Ok(n) => {
                            check_stream(5, got as u64, &buf[..n]);
                            got += n;
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => panic!("try_read: {e}"),
                    }
                }
            });
            let data = stream_bytes(5, 0, LEN);
            let mut sent = 0;
            while sent < LEN {
                timeout(OP_GUARD, poll_fn(|cx| client.poll_write_ready(cx)))
                    .await
                    .expect("poll_write_ready never came")
                    .unwrap();
                match client.try_write(&data[sent..]) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("try_write: {e}"),
                }
            }
            client.shutdown(Shutdown::Write).await.unwrap();
            let (server, got) = timeout(OP_GUARD, reader).await.unwrap().unwrap();
            assert_eq!(got, LEN, "{config:?}");

            // An owned read in flight holds the read lane: not ready until it completes.
            let (a, b) = UnixStream::pair().unwrap();
            let mut read = Box::pin(b.read(Vec::with_capacity(8)));
            assert!(poll_once(&mut read).await.is_none());
            send_outside_the_ring(&a, b"mine");
            let first = poll_fn(|cx| Poll::Ready(b.poll_read_ready(cx))).await;
            assert!(
                first.is_pending(),
                "{config:?}: ready while a read holds the lane"
            );
            let (res, got) = timeout(OP_GUARD, read).await.unwrap();
            assert_eq!((res.unwrap(), &got[..]), (4, &b"mine"[..]));
            drop(server);
        })
    });
}

#[test]
fn poll_peek_waits_for_bytes_leaves_them_for_the_read_and_sees_kept_bytes_and_the_end() {
    use std::future::poll_fn;
    use std::task::Poll;
    with_every_runtime("stream poll_peek", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let mut peeked = [0u8; 4];
            // Nothing sent: the peek waits (on the ring), then sees the bytes when they come.
            let first = poll_fn(|cx| Poll::Ready(server.poll_peek(cx, &mut peeked))).await;
            assert!(first.is_pending(), "{config:?}: a peek with nothing sent");
            send_outside_the_ring(&client, b"peekaboo");
            let n = timeout(OP_GUARD, poll_fn(|cx| server.poll_peek(cx, &mut peeked)))
                .await
                .expect("poll_peek never came")
                .unwrap();
            assert_eq!(&peeked[..n], &b"peek"[..n], "{config:?}");
            // Peeking again gives the same bytes; the read then takes them all, in order.
            let again = poll_fn(|cx| server.poll_peek(cx, &mut peeked))
                .await
                .unwrap();
            assert_eq!(&peeked[..again], &b"peek"[..again], "{config:?}");
            let (res, got) = server.read_exact(vec![0; 8]).await;
            res.unwrap();
            assert_eq!(got, b"peekaboo", "{config:?}: the peeks took nothing");

            // Bytes a cancelled read kept come first, and stay kept.
            let mut read = Box::pin(server.read(Vec::with_capacity(3)));
            assert!(poll_once(&mut read).await.is_none());
            send_outside_the_ring(&client, b"xyz");
            until_bytes_taken(&server).await;
            drop(read);
            send_outside_the_ring(&client, b"123");
            until_bytes_waiting(&server, 3).await;
            let n = timeout(OP_GUARD, poll_fn(|cx| server.poll_peek(cx, &mut peeked)))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&peeked[..n], b"xyz", "{config:?}: the kept bytes first");
            let (res, got) = server.read_exact(vec![0; 6]).await;
            res.unwrap();
            assert_eq!(got, b"xyz123", "{config:?}: nothing lost or reordered");

            // On a read half too, from another shard; and the end of the stream is 0.
            client.write_all(b"half".to_vec()).await.0.unwrap();
            client.shutdown(Shutdown::Write).await.unwrap();
            until_bytes_waiting(&server, 4).await;
            let (read_half, _write_half) = server.into_split();
            let peeker = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let mut buf = [0u8; 8];
                let n = poll_fn(|cx| read_half.poll_peek(cx, &mut buf))
                    .await
                    .unwrap();
                let data = buf[..n].to_vec();
                let (res, taken) = read_half.read(Vec::with_capacity(8)).await;
                res.unwrap();
                let end = poll_fn(|cx| read_half.poll_peek(cx, &mut buf))
                    .await
                    .unwrap();
                (data, taken, end)
            });
            let (data, taken, end) = timeout(OP_GUARD, peeker).await.unwrap().unwrap();
            assert_eq!(data, b"half", "{config:?}");
            assert_eq!(taken, b"half", "{config:?}");
            assert_eq!(end, 0, "{config:?}: the end of the stream");
        })
    });
}
