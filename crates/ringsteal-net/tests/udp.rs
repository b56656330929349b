//! UDP over loopback under every wake mechanism and ring mode: addressed and connected
//! datagrams, truncation, peek, concurrent receivers, and the broadcast and multicast
//! setters; datagram streams on every receive path.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::net::Ipv4Addr;

use common::{under_every_config, with_every_runtime};
use ringsteal_net::UdpSocket;
use ringsteal_rt::time::timeout;
use ringsteal_rt::{Placement, RuntimeHandle};
use support::{DATAGRAM_PATHS, OP_GUARD};

#[test]
fn datagrams_arrive_whole_with_their_sender() {
    with_every_runtime("udp send_to/recv_from", 1, |_, rt| {
        rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind(("127.0.0.1", 0)).await.unwrap();
            let b_addr = b.local_addr().unwrap();
            for msg in [&b"one"[..], b"", b"three"] {
                let (res, _) = a.send_to(msg.to_vec(), b_addr).await;
                assert_eq!(res.unwrap(), msg.len());
                let (res, buf) = b.recv_from(Vec::with_capacity(64)).await;
                let (n, from) = res.unwrap();
                assert_eq!((&buf[..n], from), (msg, a.local_addr().unwrap()));
            }
            // A host name as the target.
            let (res, _) = a
                .send_to(b"named".to_vec(), ("localhost", b_addr.port()))
                .await;
            res.unwrap();
            let (res, buf) = b.recv(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"named");
        })
    });
}

#[test]
fn connected_sockets_send_and_receive_without_addresses() {
    with_every_runtime("udp connected", 1, |_, rt| {
        rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            a.connect(b.local_addr().unwrap()).await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();
            assert_eq!(a.peer_addr().unwrap(), b.local_addr().unwrap());
            a.send(b"ping".to_vec()).await.0.unwrap();
            let (res, buf) = b.recv(Vec::with_capacity(16)).await;
            assert_eq!(&buf[..res.unwrap()], b"ping");
            b.send(b"pong".to_vec()).await.0.unwrap();
            let (res, buf) = a.recv(Vec::with_capacity(16)).await;
            assert_eq!(&buf[..res.unwrap()], b"pong");
        })
    });
}

#[test]
fn a_short_buffer_truncates_and_peek_leaves_the_datagram_queued() {
    with_every_runtime("udp truncate and peek", 1, |_, rt| {
        rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = b.local_addr().unwrap();
            a.send_to(b"abcdefgh".to_vec(), to).await.0.unwrap();
            a.send_to(b"next".to_vec(), to).await.0.unwrap();
            let (res, buf) = b.peek(Vec::with_capacity(3)).await;
            assert_eq!(&buf[..res.unwrap()], b"abc");
            let (res, buf) = b.recv_from(Vec::with_capacity(3)).await;
            assert_eq!(
                &buf[..res.unwrap().0],
                b"abc",
                "the rest of the datagram is discarded"
            );
            let (res, buf) = b.recv(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"next");
        })
    });
}

#[test]
fn many_tasks_on_both_shards_receive_from_one_socket_at_once() {
    with_every_runtime("udp concurrent receivers", 2, |_, rt| {
        rt.block_on(async {
            let server = std::sync::Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            let to = server.local_addr().unwrap();
            let receivers: Vec<_> = (0..8)
                .map(|_| {
                    let s = server.clone();
                    ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
                        let (res, buf) = s.recv(Vec::with_capacity(8)).await;
                        buf[..res.unwrap()].to_vec()
                    })
                })
                .collect();
            let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            for i in 0..8u8 {
                client.send_to(vec![i], to).await.0.unwrap();
            }
            let mut got: Vec<u8> = Vec::new();
            for r in receivers {
                got.extend(r.await.unwrap());
            }
            got.sort();
            assert_eq!(got, (0..8).collect::<Vec<_>>());
        })
    });
}

#[test]
fn broadcast_multicast_and_ttl_setters_read_back() {
    with_every_runtime("udp options", 1, |_, rt| {
        rt.block_on(async {
            let s = UdpSocket::bind("0.0.0.0:0").await.unwrap();
            s.set_broadcast(true).unwrap();
            assert!(s.broadcast().unwrap());
            s.set_multicast_loop_v4(false).unwrap();
            assert!(!s.multicast_loop_v4().unwrap());
            s.set_multicast_ttl_v4(4).unwrap();
            assert_eq!(s.multicast_ttl_v4().unwrap(), 4);
            s.set_ttl(33).unwrap();
            assert_eq!(s.ttl().unwrap(), 33);
            s.set_tos_v4(0x08).unwrap();
            assert_eq!(s.tos_v4().unwrap(), 0x08);
            s.set_tos(0x10).unwrap(); // the older name
            assert_eq!(s.tos_v4().unwrap(), 0x10);
            s.set_tos_v4(0x08).unwrap();
            // An IPv4 socket has no IPv6 traffic class: the kernel says so.
            let err = s.set_tclass_v6(0x28).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENOPROTOOPT), "{err}");
            assert_eq!(s.device().unwrap(), None);
            let err = s.bind_device(Some(b"no-such-if0")).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
            // Bound to the loopback interface, it still receives what comes over it (the
            // datagram below); a kernel before 5.7 without CAP_NET_RAW refuses the binding.
            match s.bind_device(Some(b"lo")) {
                Ok(()) => assert_eq!(s.device().unwrap().as_deref(), Some(&b"lo"[..])),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
                Err(e) => panic!("bind_device(lo): {e}"),
            }
            let group = Ipv4Addr::new(239, 255, 42, 99);
            match s.join_multicast_v4(group, Ipv4Addr::UNSPECIFIED) {
                // A host without a multicast route refuses to join; that is the host's call.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {}
                res => {
                    res.unwrap();
                    s.leave_multicast_v4(group, Ipv4Addr::UNSPECIFIED).unwrap();
                }
            }
            let std_socket = s.into_std().unwrap();
            assert!(std_socket.broadcast().unwrap());
            // And back: the adopted socket keeps its options and carries datagrams.
            let s = UdpSocket::from_std(std_socket).unwrap();
            assert_eq!(s.ttl().unwrap(), 33);
            assert_eq!(s.tos().unwrap(), 0x08);
            let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = s.local_addr().unwrap().port();
            peer.send_to(b"to the adopted", ("127.0.0.1", port))
                .unwrap();
            let (res, buf) = s.recv_from(Vec::with_capacity(64)).await;
            let (n, from) = res.unwrap();
            assert_eq!(
                (&buf[..n], from),
                (&b"to the adopted"[..], peer.local_addr().unwrap())
            );
        })
    });
}

#[test]
fn a_multicast_datagram_reaches_a_member_on_loopback() {
    let group = Ipv4Addr::new(239, 255, 42, 98);
    // Only where the host routes multicast over loopback.
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    if probe
        .join_multicast_v4(&group, &Ipv4Addr::LOCALHOST)
        .is_err()
    {
        eprintln!("no multicast on loopback here: skipped");
        return;
    }
    with_every_runtime("udp multicast", 1, move |_, rt| {
        rt.block_on(async move {
            let member = UdpSocket::bind("0.0.0.0:0").await.unwrap();
            member
                .join_multicast_v4(group, Ipv4Addr::LOCALHOST)
                .unwrap();
            let port = member.local_addr().unwrap().port();
            let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            sender.set_multicast_loop_v4(true).unwrap();
            // IP_MULTICAST_IF is not wrapped: send through loopback by binding to it.
            sender
                .send_to(b"to the group".to_vec(), (group, port))
                .await
                .0
                .unwrap();
            let (res, buf) =
                ringsteal_rt::time::timeout(support::OP_GUARD, member.recv(Vec::with_capacity(64)))
                    .await
                    .expect("the multicast datagram never arrived");
            assert_eq!(&buf[..res.unwrap()], b"to the group");
        })
    });
}

#[test]
fn a_datagram_stream_delivers_each_datagram_whole_with_its_source() {
    // Few and small enough that the socket's receive buffer holds them all: UDP drops
    // what does not fit, on loopback too.
    const N: u32 = 64;
    let len = |i: u32| (i as usize * 7) % 400;
    with_every_runtime("udp recv stream", 2, move |config, rt| {
        rt.block_on(async {
            let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = rx.local_addr().unwrap();
            let mut datagrams = rx.recv_stream();
            // A sender on the other shard; loopback UDP keeps one sender's order.
            let from = ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                for i in 0..N {
                    tx.send_to(vec![i as u8; len(i)], to).await.0.unwrap();
                }
                tx.local_addr().unwrap()
            });
            let mut got = Vec::new();
            for _ in 0..N {
                got.push(datagrams.next().await.unwrap().unwrap());
            }
            let from = from.await.unwrap();
            for (i, d) in got.iter().enumerate() {
                let i = i as u32;
                assert_eq!(d.source(), Some(from), "{config:?}");
                assert_eq!(d.payload(), vec![i as u8; len(i)], "{config:?}");
                assert!(!d.is_truncated(), "{config:?}");
            }
        });
    });
}

/// A datagram stream delivers the same datagrams on every receive path (multishot recvmsg
/// into provided buffers, and the single-shot heap fallback taken without multishot
/// receive, without buffer rings, or with buffers too small for the header): each with its
/// source, an empty one as empty, and one larger than the path's payload room cut to that
/// room and marked truncated. The fallbacks submit one request per datagram.
#[test]
fn a_datagram_stream_delivers_the_same_datagrams_on_every_receive_path() {
    const LENS: [usize; 6] = [0, 1, 99, 500, 1024, 4000];
    under_every_config("udp recv stream paths", 1, |config, b| {
        for path in DATAGRAM_PATHS {
            let rt = path.apply(b.clone()).build().unwrap();
            rt.block_on(async {
                let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let mut datagrams = rx.recv_stream();
                for len in LENS {
                    let to = rx.local_addr().unwrap();
                    tx.send_to(vec![len as u8; len], to).await.0.unwrap();
                    let d = timeout(OP_GUARD, datagrams.next())
                        .await
                        .expect("the datagram never arrived")
                        .unwrap()
                        .unwrap();
                    let what = format!("{config:?} {}: {len} bytes", path.name);
                    assert_eq!(d.source(), Some(tx.local_addr().unwrap()), "{what}");
                    assert_eq!(d.payload(), vec![len as u8; len.min(path.room)], "{what}");
                    assert_eq!(d.is_truncated(), len > path.room, "{what}");
                }
                if path.single_shot {
                    assert_eq!(
                        datagrams.requests_submitted(),
                        LENS.len() as u64,
                        "{config:?} {}: one receive per datagram",
                        path.name
                    );
                }
            });
        }
    });
}

/// A datagram stream whose application holds every provided buffer of its shard goes on
/// delivering: the datagrams that arrive meanwhile come in heap buffers, whole and with their
/// source, in order, and one longer than a provided buffer's payload room is cut to that room
/// as it would have been in a provided buffer (on the fallbacks, which have no provided
/// buffers, heap buffers have the whole length as room).
#[test]
fn a_datagram_stream_goes_on_while_its_application_holds_every_buffer() {
    // Buffers of 512 bytes: 512 - 144 of payload room.
    const ROOM: usize = 512 - 144;
    under_every_config("udp recv stream, buffers held", 1, |config, b| {
        for without in [None, Some(ringsteal_rt::Feature::MultishotRecv)] {
            let b = b.clone().recv_buffers(4, 512);
            let rt = match without {
                Some(f) => b.without_feature(f),
                None => b,
            }
            .build()
            .unwrap();
            let multishot = {
                let f = rt.features();
                f.supports(ringsteal_rt::Feature::MultishotRecv)
                    && f.supports(ringsteal_rt::Feature::ProvidedBufferRing)
            };
            rt.block_on(async {
                let rx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let tx = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let to = rx.local_addr().unwrap();
                let from = tx.local_addr().unwrap();
                let mut datagrams = rx.recv_stream();
                let mut held = Vec::new();
                // Four held: every buffer of the shard.
                for i in 0..4u8 {
                    tx.send_to(vec![i; 100], to).await.0.unwrap();
                    held.push(next_datagram(&mut datagrams, i, config).await);
                }
                // Four more at once, and one too long for a buffer's room.
                for i in 4..8u8 {
                    tx.send_to(vec![i; 100 + usize::from(i)], to)
                        .await
                        .0
                        .unwrap();
                }
                tx.send_to(vec![8; ROOM + 50], to).await.0.unwrap();
                for i in 4..8u8 {
                    let d = next_datagram(&mut datagrams, i, config).await;
                    assert_eq!(d.source(), Some(from), "{config:?}");
                    assert_eq!(d.payload(), vec![i; 100 + usize::from(i)], "{config:?}");
                    held.push(d);
                }
                let long = next_datagram(&mut datagrams, 8, config).await;
                // The single-shot fallbacks give the whole 512 bytes to the payload.
                let room = if multishot { ROOM } else { 512 };
                assert_eq!(long.payload(), vec![8; (ROOM + 50).min(room)], "{config:?}");
                assert_eq!(long.is_truncated(), multishot, "{config:?}");
                let heap = RuntimeHandle::current()
                    .stats()
                    .total()
                    .enobufs_heap_receives;
                assert_eq!(heap > 0, multishot, "{config:?}: {heap} heap receives");
            });
        }
    });
}

async fn next_datagram(
    datagrams: &mut ringsteal_net::RecvMsgStream,
    i: u8,
    config: common::Config,
) -> ringsteal_net::Datagram {
    timeout(OP_GUARD, datagrams.next())
        .await
        .unwrap_or_else(|_| panic!("{config:?}: datagram {i} never came"))
        .unwrap()
        .unwrap()
}

/// A datagram sent to a port nobody listens on comes back as an ICMP error, pending on the
/// connected socket: `take_error` takes it (once), as tokio's does.
#[test]
fn take_error_takes_the_refusal_a_connected_socket_was_sent() {
    with_every_runtime("udp take_error", 1, |config, rt| {
        rt.block_on(async {
            let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let target = closed.local_addr().unwrap();
            drop(closed);
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            s.connect(target).await.unwrap();
            assert!(s.take_error().unwrap().is_none());
            s.send(b"anyone?".to_vec()).await.0.unwrap();
            // The refusal makes the socket readable (an error is pending).
            timeout(OP_GUARD, s.readable())
                .await
                .expect("no ICMP error came back")
                .unwrap();
            let err = s.take_error().unwrap().expect("the refusal is pending");
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::ConnectionRefused,
                "{config:?}"
            );
            assert!(s.take_error().unwrap().is_none(), "taken once");
        })
    });
}
