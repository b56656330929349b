//! TCP over loopback, each behaviour under every wake mechanism and ring mode: connect and
//! accept with every address form, reads and writes of every shape, peek, shutdown, options,
//! std conversions, and halves used from two shards at once.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::time::Duration;

use common::with_every_runtime;
use ringsteal_net::{TcpListener, TcpSocket, TcpStream};
use ringsteal_rt::buf::StaticBuf;
use ringsteal_rt::io::{AsyncReadOwned, AsyncWriteOwned};
use ringsteal_rt::Placement;
use support::*;

#[test]
fn static_bytes_are_written_from_a_spawned_task() {
    // `spawn` needs the task's future to be Send for every lifetime the compiler erased in
    // it: a `StaticBuf` (no lifetime) passes where a held `&'static str` can fail to compile.
    with_every_runtime("static bytes from a task", 2, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let writer = ringsteal_rt::spawn(async move {
                server.write_all(StaticBuf::from("+PONG\r\n")).await.0?;
                let mut w = ringsteal_rt::io::BufWriter::new(server);
                w.write_all(StaticBuf::new(b"bye")).await.0?;
                w.flush().await
            });
            let (res, got) = client.read_exact(vec![0; 10]).await;
            res.unwrap();
            assert_eq!(got, b"+PONG\r\nbye", "{config:?}");
            writer.await.unwrap().unwrap();
        });
    });
}

#[test]
fn bytes_written_on_one_end_are_read_on_the_other() {
    with_every_runtime("tcp round trip", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (res, _) = client.write_all(b"hello, server".to_vec()).await;
            res.unwrap();
            let (res, buf) = server.read_exact(vec![0u8; 13]).await;
            res.unwrap();
            assert_eq!(buf, b"hello, server");
            let (res, _) = server.write(b"hi".to_vec()).await;
            assert_eq!(res.unwrap(), 2);
            let (res, buf) = client.read(Vec::with_capacity(64)).await;
            assert_eq!(&buf[..res.unwrap()], b"hi");
        })
    });
}

#[test]
fn accept_reports_the_peer_address_and_both_ends_agree() {
    with_every_runtime("tcp addresses", 1, |_, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let connect = ringsteal_rt::spawn(async move { TcpStream::connect(addr).await });
            let (server, peer) = listener.accept().await.unwrap();
            let client = connect.await.unwrap().unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            assert_eq!(server.peer_addr().unwrap(), peer);
            assert_eq!(client.peer_addr().unwrap(), addr);
            assert_eq!(server.local_addr().unwrap(), addr);
        })
    });
}

#[test]
fn bind_and_connect_take_every_address_form() {
    with_every_runtime("tcp address forms", 1, |_, rt| {
        rt.block_on(async {
            let ip: std::net::IpAddr = "127.0.0.1".parse().unwrap();
            let l1 = TcpListener::bind((ip, 0)).await.unwrap();
            let l2 = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let l3 = TcpListener::bind(String::from("127.0.0.1:0"))
                .await
                .unwrap();
            // A host name: resolved on the blocking pool.
            let l4 = TcpListener::bind("localhost:0").await.unwrap();
            assert!(l4.local_addr().unwrap().ip().is_loopback());
            let (a1, a2, a3, a4) = (
                l1.local_addr().unwrap(),
                l2.local_addr().unwrap(),
                l3.local_addr().unwrap(),
                l4.local_addr().unwrap(),
            );
            let clients = [
                ringsteal_rt::spawn(TcpStream::connect(a1)),
                ringsteal_rt::spawn(TcpStream::connect(("127.0.0.1", a2.port()))),
                ringsteal_rt::spawn(async move { TcpStream::connect(a3.to_string()).await }),
                ringsteal_rt::spawn(TcpStream::connect(("localhost", a4.port()))),
                ringsteal_rt::spawn(async move { TcpStream::connect(&[a1][..]).await }),
            ];
            for (client, listener) in clients.into_iter().zip([&l1, &l2, &l3, &l4, &l1]) {
                let (_, peer) = listener.accept().await.unwrap();
                assert_eq!(peer, client.await.unwrap().unwrap().local_addr().unwrap());
            }
        })
    });
}

#[test]
fn a_zero_linger_resets_the_connection_and_quickack_reads_back() {
    with_every_runtime("tcp zero linger", 2, |_, rt| {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            // Set on the socket before it connects, it holds for the stream.
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_zero_linger().unwrap();
            assert_eq!(socket.linger().unwrap(), Some(Duration::ZERO));
            let client = socket.connect(addr).await.unwrap();
            assert_eq!(client.linger().unwrap(), Some(Duration::ZERO));
            let (server, _) = listener.accept().await.unwrap();
            client.set_quickack(true).unwrap();
            assert!(client.quickack().unwrap());
            client.set_quickack(false).unwrap();
            assert!(!client.quickack().unwrap());
            // Unsent bytes go with the reset: the server reads the reset, never an end of
            // stream, from a client dropped on another shard.
            ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
                client.write_all(b"gone".to_vec()).await.0.unwrap();
                drop(client);
            })
            .await
            .unwrap();
            let mut buf = vec![0u8; 16];
            let err = loop {
                let (res, b) = server.read(buf).await;
                buf = b;
                match res {
                    Ok(0) => panic!("an end of stream, not a reset"),
                    Ok(_) => buf.clear(), // bytes the kernel delivered before the reset
                    Err(e) => break e,
                }
            };
            assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}");
            // The stream's own setter, on the accepted side of another connection.
            let client = TcpStream::connect(addr).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            server.set_zero_linger().unwrap();
            drop(server);
            let (res, _) = client.read(vec![0u8; 16]).await;
            assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset);
        })
    });
}

#[test]
fn an_ipv6_socket_sets_its_traffic_class() {
    let Ok(socket) = TcpSocket::new_v6() else {
        eprintln!("no IPv6 on this kernel: skipped");
        return;
    };
    socket.set_tclass_v6(0x28).unwrap();
    assert_eq!(socket.tclass_v6().unwrap(), 0x28);
    // And an IPv4 socket has none: the kernel's error, not a silent no-op.
    let v4 = TcpSocket::new_v4().unwrap();
    let err = v4.set_tclass_v6(0x28).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOPROTOOPT), "{err}");
}

#[test]
fn ipv6_loopback_works_where_the_host_has_it() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback on this host: skipped");
        return;
    }
    with_every_runtime("tcp ipv6", 1, |_, rt| {
        rt.block_on(async {
            let l = TcpListener::bind("[::1]:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            assert!(addr.is_ipv6());
            let c = ringsteal_rt::spawn(async move { TcpStream::connect(addr).await });
            let (s, _) = l.accept().await.unwrap();
            let c = c.await.unwrap().unwrap();
            c.write_all(b"v6".to_vec()).await.0.unwrap();
            let (res, buf) = s.read_exact(vec![0; 2]).await;
            res.unwrap();
            assert_eq!(buf, b"v6");
        })
    });
}

#[test]
fn a_peek_shows_the_bytes_the_next_read_returns() {
    with_every_runtime("tcp peek", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            client.write_all(b"peekaboo".to_vec()).await.0.unwrap();
            let (res, peeked) = server.peek(Vec::with_capacity(4)).await;
            assert_eq!(&peeked[..res.unwrap()], b"peek");
            let (res, read) = server.read_exact(vec![0u8; 8]).await;
            res.unwrap();
            assert_eq!(read, b"peekaboo");
        })
    });
}

#[test]
fn vectored_reads_and_writes_keep_buffer_order() {
    with_every_runtime("tcp vectored", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let bufs = vec![b"one ".to_vec(), b"two ".to_vec(), b"three".to_vec()];
            let (res, bufs) = client.writev(bufs).await;
            assert_eq!(res.unwrap(), 13);
            assert_eq!(bufs.len(), 3, "the buffers come back");
            // Fill exactly: a vectored read may return early.
            let mut got = Vec::new();
            while got.len() < 13 {
                let (res, parts) = server
                    .readv(vec![Vec::with_capacity(5), Vec::with_capacity(20)])
                    .await;
                let n = res.unwrap();
                let flat: Vec<u8> = parts.concat();
                assert_eq!(flat.len(), n);
                got.extend(flat);
            }
            assert_eq!(got, b"one two three");
            let (res, _) = client
                .write_all_vectored((b"len:".to_vec(), vec![7u8; 100_000]))
                .await;
            res.unwrap();
            let (res, all) = server.read_exact(vec![0u8; 100_004]).await;
            res.unwrap();
            assert_eq!(&all[..4], b"len:");
            assert!(all[4..].iter().all(|&b| b == 7));
        })
    });
}

#[test]
fn shutting_down_the_write_side_gives_the_peer_end_of_stream_after_the_data() {
    with_every_runtime("tcp shutdown", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            client.write_all(vec![1u8; 300_000]).await.0.unwrap();
            client.shutdown(Shutdown::Write).await.unwrap();
            let all = read_to_eof(&server).await;
            assert_eq!(all.len(), 300_000);
            // The other direction still works.
            server.write_all(b"after".to_vec()).await.0.unwrap();
            let (res, buf) = client.read_exact(vec![0; 5]).await;
            res.unwrap();
            assert_eq!(buf, b"after");
            // AsyncWriteOwned::shutdown is the same for the server's side.
            let mut s = &server;
            AsyncWriteOwned::shutdown(&mut s).await.unwrap();
            let (res, _) = client.read(Vec::with_capacity(8)).await;
            assert_eq!(res.unwrap(), 0);
        })
    });
}

#[test]
fn socket_options_read_back_what_was_set() {
    with_every_runtime("tcp options", 1, |_, rt| {
        rt.block_on(async {
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_reuseaddr(true).unwrap();
            assert!(socket.reuseaddr().unwrap());
            socket.set_reuseport(true).unwrap();
            assert!(socket.reuseport().unwrap());
            socket.set_send_buffer_size(64 * 1024).unwrap();
            assert!(socket.send_buffer_size().unwrap() >= 64 * 1024);
            socket.set_recv_buffer_size(32 * 1024).unwrap();
            assert!(socket.recv_buffer_size().unwrap() >= 32 * 1024);
            socket.set_keepalive(true).unwrap();
            assert!(socket.keepalive().unwrap());
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = socket.local_addr().unwrap();
            let listener = socket.listen(16).unwrap();
            assert_eq!(listener.local_addr().unwrap(), addr);
            listener.set_ttl(42).unwrap();
            assert_eq!(listener.ttl().unwrap(), 42);

            let client = TcpSocket::new_v4().unwrap();
            client.set_nodelay(true).unwrap();
            client.set_linger(Some(Duration::from_secs(3))).unwrap();
            assert_eq!(client.linger().unwrap(), Some(Duration::from_secs(3)));
            let stream = client.connect(addr).await.unwrap();
            assert!(stream.nodelay().unwrap());
            stream.set_nodelay(false).unwrap();
            assert!(!stream.nodelay().unwrap());
            stream.set_ttl(7).unwrap();
            assert_eq!(stream.ttl().unwrap(), 7);
            // Whole seconds in the kernel: a fraction rounds up, never down to the reset
            // of `Some(ZERO)`.
            stream.set_linger(Some(Duration::from_millis(500))).unwrap();
            assert_eq!(stream.linger().unwrap(), Some(Duration::from_secs(1)));
            // The longest linger is the kernel's longest, not a wrapped-around reset.
            stream.set_linger(Some(Duration::MAX)).unwrap();
            assert_eq!(
                stream.linger().unwrap(),
                Some(Duration::from_secs(libc::c_int::MAX as u64))
            );
            stream.set_linger(Some(Duration::ZERO)).unwrap();
            assert_eq!(stream.linger().unwrap(), Some(Duration::ZERO));
            stream.set_linger(None).unwrap();
            assert_eq!(stream.linger().unwrap(), None);
            stream.set_keepalive(true).unwrap();
            assert!(stream.keepalive().unwrap());
            let _ = listener.accept().await.unwrap();
        })
    });
}

#[test]
fn a_socket_bound_to_the_loopback_interface_with_a_tos_connects_and_carries_bytes() {
    with_every_runtime("tcp tos and device", 1, |_, rt| {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_tos_v4(0x10).unwrap();
            assert_eq!(socket.tos_v4().unwrap(), 0x10);
            assert_eq!(
                socket.tos().unwrap(),
                0x10,
                "the older name reads the same option"
            );
            assert_eq!(socket.device().unwrap(), None, "bound to no interface yet");
            let err = socket.bind_device(Some(b"no-such-if0")).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
            let err = socket.bind_device(Some(b"sixteen-bytes-ab")).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
            match socket.bind_device(Some(b"lo")) {
                Ok(()) => {
                    assert_eq!(socket.device().unwrap().as_deref(), Some(&b"lo"[..]));
                    socket.bind_device(None).unwrap();
                    assert_eq!(socket.device().unwrap(), None, "the binding is removed");
                    socket.bind_device(Some(b"lo")).unwrap();
                }
                // A kernel before 5.7 without CAP_NET_RAW: the rest still runs.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
                Err(e) => panic!("bind_device(lo): {e}"),
            }
            let client = socket.connect(addr).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            client.write_all(b"through lo".to_vec()).await.0.unwrap();
            let (res, got) = server.read_exact(vec![0; 10]).await;
            res.unwrap();
            assert_eq!(got, b"through lo");
        })
    });
}

#[test]
fn sockets_adopted_from_std_before_connecting_listen_and_connect() {
    with_every_runtime("tcp from_std_stream", 1, |_, rt| {
        rt.block_on(async {
            // Sockets std cannot make itself: created by hand, one of them blocking.
            let fresh = |flags: i32| {
                use std::os::fd::FromRawFd;
                // SAFETY: plain system call; the descriptor is checked before use.
                let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | flags, 0) };
                assert!(raw >= 0, "{}", std::io::Error::last_os_error());
                // SAFETY: a new descriptor nothing else owns.
                unsafe { std::net::TcpStream::from_raw_fd(raw) }
            };
            let socket = TcpSocket::from_std_stream(fresh(libc::SOCK_CLOEXEC));
            socket.set_reuseaddr(true).unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let listener = socket.listen(16).unwrap();
            let addr = listener.local_addr().unwrap();
            let client =
                TcpSocket::from_std_stream(fresh(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK));
            let client = client.connect(addr).await.unwrap();
            let (server, peer) = listener.accept().await.unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            client.write_all(b"adopted".to_vec()).await.0.unwrap();
            let (res, got) = server.read_exact(vec![0; 7]).await;
            res.unwrap();
            assert_eq!(got, b"adopted");
        })
    });
}

#[test]
fn two_sockets_with_reuseport_share_a_port_and_one_without_is_refused() {
    with_every_runtime("tcp reuseport", 1, |_, rt| {
        rt.block_on(async {
            let first = TcpSocket::new_v4().unwrap();
            first.set_reuseport(true).unwrap();
            first.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = first.local_addr().unwrap();
            let _l1 = first.listen(8).unwrap();
            let second = TcpSocket::new_v4().unwrap();
            second.set_reuseport(true).unwrap();
            second.bind(addr).unwrap();
            let _l2 = second.listen(8).unwrap();
            let third = TcpSocket::new_v4().unwrap();
            let err = third.bind(addr).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
        })
    });
}

#[test]
fn std_streams_convert_both_ways_and_keep_the_connection() {
    with_every_runtime("tcp std conversions", 1, |_, rt| {
        rt.block_on(async {
            let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = std_listener.local_addr().unwrap();
            let listener = TcpListener::from_std(std_listener).unwrap();
            let std_client = std::net::TcpStream::connect(addr).unwrap();
            let client = TcpStream::from_std(std_client).unwrap();
            let (server, _) = listener.accept().await.unwrap();
            client.write_all(b"via ring".to_vec()).await.0.unwrap();
            let mut std_server = server.into_std().unwrap();
            let mut buf = [0u8; 8];
            std::io::Read::read_exact(&mut std_server, &mut buf).unwrap();
            assert_eq!(&buf, b"via ring");
            std::io::Write::write_all(&mut std_server, b"via std").unwrap();
            let (res, got) = client.read_exact(vec![0; 7]).await;
            res.unwrap();
            assert_eq!(got, b"via std");
            let back = listener.into_std().unwrap();
            assert_eq!(back.local_addr().unwrap(), addr);
        })
    });
}

#[test]
fn a_bound_listener_hands_its_own_descriptor_to_std_and_keeps_listening() {
    with_every_runtime("tcp listener into_std", 1, |_, rt| {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let fd = listener.as_raw_fd();
            let client = TcpStream::connect(addr).await.unwrap();
            let (_served, _) = listener.accept().await.unwrap();
            let back = listener.into_std().unwrap();
            assert_eq!(
                back.as_raw_fd(),
                fd,
                "no duplicate when nothing else holds it"
            );
            // Still listening: handing over is not dropping.
            let _second = std::net::TcpStream::connect(addr).unwrap();
            let (_, peer) = back.accept().unwrap();
            assert_ne!(Some(peer), client.local_addr().ok());
        })
    });
}

#[test]
fn owned_halves_read_and_write_at_once_from_two_shards() {
    const LEN: usize = 4 << 20;
    /// Writes stream `seed` on `w` in uneven chunks, then drops `w` (end of stream).
    async fn send<W: AsyncWriteOwned>(mut w: W, seed: u64) {
        let mut pos = 0;
        while pos < LEN {
            let chunk = stream_bytes(seed, pos as u64, 99_991.min(LEN - pos));
            pos += chunk.len();
            w.write_all(chunk).await.0.unwrap();
        }
    }
    /// Reads stream `seed` from `r` to its end, checking every byte; yields the shard.
    async fn receive<R: AsyncReadOwned>(mut r: R, seed: u64) -> Option<usize> {
        let mut got = 0u64;
        loop {
            let (res, buf) = r.read(Vec::with_capacity(64 * 1024)).await;
            let n = res.unwrap();
            if n == 0 {
                assert_eq!(got, LEN as u64, "stream {seed} ended early");
                return ringsteal_rt::current_shard();
            }
            check_stream(seed, got, &buf[..n]);
            got += n as u64;
        }
    }
    with_every_runtime("tcp halves on two shards", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (s_rd, s_wr) = server.into_split();
            let (c_rd, c_wr) = client.into_split();
            // Both directions at once; each stream's two halves on different shards.
            let tasks = [
                ringsteal_rt::spawn_with(Placement::Pinned(1), async move {
                    send(c_wr, 1).await;
                    ringsteal_rt::current_shard()
                }),
                ringsteal_rt::spawn_with(Placement::Pinned(0), receive(s_rd, 1)),
                ringsteal_rt::spawn_with(Placement::Pinned(0), async move {
                    send(s_wr, 2).await;
                    ringsteal_rt::current_shard()
                }),
                ringsteal_rt::spawn_with(Placement::Pinned(1), receive(c_rd, 2)),
            ];
            let mut shards = Vec::new();
            for t in tasks {
                shards.push(t.await.unwrap());
            }
            assert_eq!(shards, [Some(1), Some(0), Some(0), Some(1)]);
        })
    });
}

#[test]
fn halves_reunite_only_with_their_own_stream() {
    with_every_runtime("tcp reunite", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = tcp_pair().await;
            let (a_rd, a_wr) = a.into_split();
            let (b_rd, b_wr) = b.into_split();
            let err = a_rd.reunite(b_wr).unwrap_err();
            let (a_rd, b_wr) = (err.0, err.1);
            // From the write half too, as tokio has it.
            let err = a_wr.reunite(b_rd).unwrap_err();
            let (b_rd, a_wr) = (err.0, err.1);
            let a = a_wr.reunite(a_rd).unwrap();
            let b = b_rd.reunite(b_wr).unwrap();
            // Reuniting did not shut anything down.
            a.write_all(b"still open".to_vec()).await.0.unwrap();
            let (res, buf) = b.read_exact(vec![0; 10]).await;
            res.unwrap();
            assert_eq!(buf, b"still open");
        })
    });
}

#[test]
fn dropping_the_owned_write_half_shuts_down_only_the_write_side() {
    with_every_runtime("tcp write half drop", 1, |_, rt| {
        rt.block_on(async {
            let (a, b) = tcp_pair().await;
            let (a_rd, a_wr) = a.into_split();
            a_wr.write_all(b"bye".to_vec()).await.0.unwrap();
            drop(a_wr);
            assert_eq!(read_to_eof(&b).await, b"bye");
            b.write_all(b"reply".to_vec()).await.0.unwrap();
            let (res, buf) = a_rd.read_exact(vec![0; 5]).await;
            res.unwrap();
            assert_eq!(buf, b"reply");
            // forget() leaves the write side open.
            let (c, d) = tcp_pair().await;
            let (_c_rd, c_wr) = c.into_split();
            c_wr.forget();
            d.write_all(b"x".to_vec()).await.0.unwrap();
            let r = ringsteal_rt::time::timeout(
                Duration::from_millis(50),
                d.read(Vec::with_capacity(1)),
            )
            .await;
            assert!(r.is_err(), "no end of stream after forget");
        })
    });
}

#[test]
fn the_io_traits_work_on_streams_references_and_halves() {
    async fn echo_once<S: AsyncReadOwned + AsyncWriteOwned>(mut s: S) -> usize {
        let (res, buf) = s.read(Vec::with_capacity(64)).await;
        let n = res.unwrap();
        s.write_all(buf).await.0.unwrap();
        n
    }
    with_every_runtime("tcp traits", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            // Generic code over the traits can be spawned: its future is Send.
            let task = ringsteal_rt::spawn(async move { echo_once(server).await });
            client.write_all(b"generic".to_vec()).await.0.unwrap();
            let mut c = &client;
            let (res, buf) = AsyncReadOwned::read_exact(&mut c, vec![0; 7]).await;
            res.unwrap();
            assert_eq!(buf, b"generic");
            assert_eq!(task.await.unwrap(), 7);
            let (mut rd, wr) = client.into_split();
            wr.write_all(b"!".to_vec()).await.0.unwrap();
            drop(wr);
            let (res, rest) = rd.read_to_end(Vec::new()).await;
            assert_eq!((res.unwrap(), rest.len()), (0, 0), "the server closed");
        })
    });
}

#[test]
fn many_tasks_accept_on_one_listener() {
    with_every_runtime("tcp concurrent accepts", 2, |_, rt| {
        rt.block_on(async {
            let (listener, addr) = listener().await;
            let listener = std::sync::Arc::new(listener);
            let acceptors: Vec<_> = (0..8)
                .map(|_| {
                    let l = listener.clone();
                    ringsteal_rt::spawn_with(Placement::RoundRobin, async move {
                        let (s, _) = l.accept().await.unwrap();
                        let (res, buf) = s.read(Vec::with_capacity(8)).await;
                        buf[..res.unwrap()].to_vec()
                    })
                })
                .collect();
            let mut clients = Vec::new();
            for i in 0..8u8 {
                let c = TcpStream::connect(addr).await.unwrap();
                c.write_all(vec![i]).await.0.unwrap();
                clients.push(c);
            }
            let mut seen: Vec<u8> = Vec::new();
            for a in acceptors {
                seen.extend(a.await.unwrap());
            }
            seen.sort();
            assert_eq!(seen, (0..8).collect::<Vec<u8>>());
        })
    });
}

#[test]
fn a_listener_adopted_in_non_blocking_mode_as_tokio_asks_keeps_it_and_accepts() {
    use std::os::linux::net::SocketAddrExt;
    with_every_runtime("non-blocking listener adopted", 1, |config, rt| {
        rt.block_on(async {
            let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            std_listener.set_nonblocking(true).unwrap();
            let addr = std_listener.local_addr().unwrap();
            let listener = TcpListener::from_std(std_listener).unwrap();
            // The mode is the socket's, shared with every other descriptor of it: left alone.
            assert!(nonblocking(listener.as_raw_fd()), "{config:?}");
            let unix_name = format!(
                "\0ringsteal-test-nb-{}-{}",
                std::process::id(),
                common::unique()
            );
            let std_unix = std::os::unix::net::UnixListener::bind_addr(
                &std::os::unix::net::SocketAddr::from_abstract_name(&unix_name.as_bytes()[1..])
                    .unwrap(),
            )
            .unwrap();
            std_unix.set_nonblocking(true).unwrap();
            let unix = ringsteal_net::UnixListener::from_std(std_unix).unwrap();
            assert!(nonblocking(unix.as_raw_fd()), "{config:?}");
            // The accepts are armed before anyone connects, and wait (Linux 5.18 and later).
            let accepted = ringsteal_rt::spawn(async move { listener.accept().await.map(|_| ()) });
            let unix_accepted = ringsteal_rt::spawn(async move { unix.accept().await.map(|_| ()) });
            ringsteal_rt::yield_now().await;
            let _client = TcpStream::connect(addr).await.unwrap();
            let _unix_client = ringsteal_net::UnixStream::connect(&unix_name)
                .await
                .unwrap();
            accepted.await.unwrap().unwrap();
            unix_accepted.await.unwrap().unwrap();
        })
    });
}

fn nonblocking(fd: std::os::fd::RawFd) -> bool {
    // SAFETY: F_GETFL passes no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

#[test]
fn owned_halves_report_the_addresses_of_their_stream() {
    with_every_runtime("addresses of halves", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let (local, peer) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
            let (rd, wr) = client.into_split();
            assert_eq!(
                (rd.local_addr().unwrap(), rd.peer_addr().unwrap()),
                (local, peer)
            );
            assert_eq!(
                (wr.local_addr().unwrap(), wr.peer_addr().unwrap()),
                (local, peer)
            );
            assert_eq!(server.peer_addr().unwrap(), local);
            let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
            let (rd, wr) = a.into_split();
            assert!(rd.local_addr().unwrap().is_unnamed());
            assert!(wr.peer_addr().unwrap().is_unnamed());
            drop(b);
        })
    });
}

/// tokio's halves give their stream by `AsRef`, for its socket options: a port that sets
/// `TCP_NODELAY` through a write half, or reads through `rd.as_ref()`, must work the same.
#[test]
fn every_half_gives_its_stream_by_as_ref() {
    with_every_runtime("halves as_ref", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let peer = client.peer_addr().unwrap();
            {
                let (r, w) = client.split();
                let stream: &TcpStream = w.as_ref();
                stream.set_nodelay(true).unwrap();
                assert!(r.as_ref().nodelay().unwrap());
                assert_eq!(r.as_ref().peer_addr().unwrap(), peer);
                // The borrowed halves' own addresses, as tokio's.
                assert_eq!(r.peer_addr().unwrap(), peer);
                assert_eq!(w.peer_addr().unwrap(), peer);
                assert_eq!(w.local_addr().unwrap(), r.as_ref().local_addr().unwrap());
                assert_eq!(r.local_addr().unwrap(), w.local_addr().unwrap());
            }
            let (rd, wr) = client.into_split();
            wr.as_ref().set_nodelay(false).unwrap();
            assert!(!rd.as_ref().nodelay().unwrap());
            assert_eq!(AsRef::<TcpStream>::as_ref(&wr).peer_addr().unwrap(), peer);
            // Reads and writes through the reference use the halves' lanes: the reader on
            // another shard gets what was written through the write half's stream.
            let reader = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
                let (res, buf) = rd.as_ref().read_exact(vec![0; 5]).await;
                res.unwrap();
                (rd, buf)
            });
            server.write_all(b"hello".to_vec()).await.0.unwrap();
            let (rd, buf) = reader.await.unwrap();
            assert_eq!(buf, b"hello");
            wr.as_ref().write_all(b"back".to_vec()).await.0.unwrap();
            let (res, buf) = server.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(buf, b"back");
            let client = rd.reunite(wr).unwrap();
            assert_eq!(client.peer_addr().unwrap(), peer);
            let (a, b) = ringsteal_net::UnixStream::pair().unwrap();
            let (rd, _wr) = a.into_split();
            let stream: &ringsteal_net::UnixStream = rd.as_ref();
            assert!(stream.peer_addr().unwrap().is_unnamed());
            drop(b);
        })
    });
}

#[test]
fn a_read_into_an_empty_buffer_returns_once_readable_and_takes_nothing() {
    // As tokio's: it waits for the socket to be readable, then reads nothing (`Ok(0)`,
    // which only an empty buffer makes mean anything but end of stream).
    with_every_runtime("empty buffer read", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let read = ringsteal_rt::spawn(async move {
                let (res, buf) = server.read(Vec::new()).await;
                (res, buf, server)
            });
            let (res, _) = client.write_all(b"kept".to_vec()).await;
            res.unwrap();
            let (res, buf, server) = ringsteal_rt::time::timeout(OP_GUARD, read)
                .await
                .unwrap_or_else(|_| panic!("{config:?}: the empty read never returned"))
                .unwrap();
            assert_eq!((res.unwrap(), buf.len()), (0, 0), "{config:?}");
            let (res, got) = server.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(got, b"kept", "{config:?}: the empty read took bytes");
        });
    });
}
