//! Bad input and faults over loopback, under every wake mechanism and ring mode: each ends
//! in a clear error, never a panic, a hang or unbounded memory.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::time::Duration;

use common::{block_on_plain, with_every_runtime};
use ringsteal_net::{TcpListener, TcpStream, UdpSocket};
use ringsteal_rt::time::timeout;
use support::*;

#[test]
fn connecting_where_nobody_listens_is_connection_refused() {
    with_every_runtime("connection refused", 1, |_, rt| {
        rt.block_on(async {
            // A port that was free a moment ago and has no listener now.
            let addr = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap();
            let err = TcpStream::connect(addr).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
        })
    });
}

#[test]
fn a_reset_from_the_peer_mid_stream_is_connection_reset() {
    with_every_runtime("reset by peer", 2, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let sent = stream_bytes(3, 0, 200_000);
            server.write_all(sent.clone()).await.0.unwrap();
            // A read is waiting when the reset arrives.
            let reader = ringsteal_rt::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let (res, buf) = timeout(OP_GUARD, client.read(Vec::with_capacity(16 * 1024)))
                        .await
                        .expect("a reset must end the read, not hang it");
                    match res {
                        Ok(0) => return (got, None, client),
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                        Err(e) => return (got, Some(e), client),
                    }
                }
            });
            server.set_linger(Some(Duration::ZERO)).unwrap();
            drop(server); // SO_LINGER 0: close sends a reset
            let (got, err, client) = reader.await.unwrap();
            check_stream(3, 0, &got);
            assert_eq!(
                err.expect("ended by the reset, not end of stream").kind(),
                ErrorKind::ConnectionReset
            );
            // Writing to the reset connection is an error too (and no SIGPIPE).
            let (res, _) = client.write(b"anyone?".to_vec()).await;
            let kind = res.unwrap_err().kind();
            assert!(
                matches!(kind, ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
                "{kind:?}"
            );
            // Passing the half-close on, as a proxy does, succeeds as with tokio (the kernel
            // says ENOTCONN: the write side is shut either way); a read shutdown does not.
            client.shutdown(Shutdown::Write).await.unwrap();
            let err = client.shutdown(Shutdown::Read).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotConnected);
        })
    });
}

#[test]
fn writing_to_a_peer_that_closed_is_broken_pipe_or_reset() {
    with_every_runtime("write after close", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            drop(server);
            // The first write may still be accepted (the peer answers it with a reset).
            let mut last = None;
            for _ in 0..100 {
                let (res, _) = client.write_all(vec![0u8; 64 * 1024]).await;
                if let Err(e) = res {
                    last = Some(e);
                    break;
                }
            }
            let kind = last.expect("writes to a closed peer never failed").kind();
            assert!(
                matches!(kind, ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
                "{kind:?}"
            );
        })
    });
}

/// `ioctl(fd, request)` for the socket queue sizes (`TIOCOUTQ`, `FIONREAD`).
fn queued(fd: &impl AsRawFd, request: libc::c_ulong) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: the ioctl writes one int into `n`.
    assert_eq!(unsafe { libc::ioctl(fd.as_raw_fd(), request, &mut n) }, 0);
    n as usize
}

#[test]
fn a_peer_that_stops_reading_makes_the_writer_wait_with_bounded_memory() {
    const LEN: usize = 64 << 20;
    with_every_runtime("peer stops reading", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let data = stream_bytes(11, 0, LEN);
            // 64 MiB cannot fit in the socket buffers: the write waits for the peer.
            let stalled = timeout(Duration::from_millis(300), client.write_all(data)).await;
            assert!(
                stalled.is_err(),
                "a write of 64 MiB finished although nobody reads"
            );
            // What left the writer is only what the kernel's buffers hold: no copy of the
            // data piles up anywhere (the write's own buffer went back with its cancel).
            let in_flight = queued(&client, libc::TIOCOUTQ) + queued(&server, libc::FIONREAD);
            assert!(
                in_flight < 16 << 20,
                "{in_flight} bytes queued in the kernel"
            );
            // The reader comes back: it gets a prefix of the data, then what follows.
            client.write_all(b"<after>".to_vec()).await.0.unwrap();
            client.shutdown(std::net::Shutdown::Write).await.unwrap();
            let all = read_to_eof(&server).await;
            assert!(all.ends_with(b"<after>"));
            let prefix = &all[..all.len() - 7];
            assert!(!prefix.is_empty() && prefix.len() < LEN);
            check_stream(11, 0, prefix);
        })
    });
}

#[test]
fn shutting_down_both_sides_ends_a_write_that_waits_for_a_peer_that_stopped_reading() {
    const LEN: usize = 64 << 20;
    with_every_runtime("shutdown both under a stalled write", 1, |config, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            let client = std::sync::Arc::new(client);
            // 64 MiB cannot fit in the socket buffers: the write waits, holding the write
            // lane, until the peer reads, which it never does.
            let writer = {
                let client = client.clone();
                ringsteal_rt::spawn(async move { client.write_all(vec![7u8; LEN]).await.0 })
            };
            while queued(&server, libc::FIONREAD) == 0 {
                ringsteal_rt::yield_now().await;
            }
            // Ten seconds: a hang guard only.
            let shut = timeout(
                Duration::from_secs(10),
                client.shutdown(std::net::Shutdown::Both),
            )
            .await;
            shut.unwrap_or_else(|_| panic!("{config:?}: shutdown waited for the writer"))
                .unwrap();
            let res = timeout(Duration::from_secs(10), writer).await;
            let err = res
                .unwrap_or_else(|_| panic!("{config:?}: the write went on waiting"))
                .unwrap()
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::BrokenPipe, "{config:?}: {err}");
        })
    });
}

#[test]
fn binding_an_address_in_use_is_addr_in_use() {
    with_every_runtime("address in use", 1, |_, rt| {
        rt.block_on(async {
            let (_first, addr) = listener().await;
            let err = TcpListener::bind(addr).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AddrInUse);
            let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let err = UdpSocket::bind(udp.local_addr().unwrap())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AddrInUse);
        })
    });
}

#[test]
fn a_host_name_that_does_not_resolve_is_an_error_not_a_hang() {
    // `.invalid` never resolves (RFC 2606).
    with_every_runtime("unresolvable host", 1, |_, rt| {
        rt.block_on(async {
            let err = TcpStream::connect("no-such-host.invalid:80")
                .await
                .unwrap_err();
            assert_ne!(err.kind(), ErrorKind::TimedOut, "{err}");
            assert!(err.to_string().contains("no-such-host.invalid"), "{err}");
            assert!(TcpListener::bind(("no-such-host.invalid", 0))
                .await
                .is_err());
            let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let (res, buf) = udp.send_to(b"x".to_vec(), "no-such-host.invalid:9").await;
            assert!(res.is_err());
            assert_eq!(buf, b"x", "the buffer comes back");
            assert!(ringsteal_net::lookup_host("no-such-host.invalid:1")
                .await
                .is_err());
            // A port that is not a number is refused before any lookup.
            assert!(TcpStream::connect("localhost:http-ish").await.is_err());
        })
    });
}

#[test]
fn reads_after_the_peer_closed_keep_returning_end_of_stream() {
    with_every_runtime("end of stream", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            server.write_all(b"last words".to_vec()).await.0.unwrap();
            drop(server);
            assert_eq!(read_to_eof(&client).await, b"last words");
            for _ in 0..3 {
                assert_eq!(client.read(Vec::with_capacity(8)).await.0.unwrap(), 0);
            }
            let (res, _) = client.read_exact(vec![0; 4]).await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::UnexpectedEof);
        })
    });
}

#[test]
fn io_polled_outside_a_runtime_fails_instead_of_panicking() {
    let rt = common::Config::MsgRing.runtime(1);
    let (client, server) = rt.block_on(tcp_pair());
    let (res, buf) = block_on_plain(client.read(Vec::with_capacity(8)));
    assert!(res.is_err());
    assert_eq!(buf.capacity(), 8);
    let err = block_on_plain(TcpStream::connect(server.local_addr().unwrap())).unwrap_err();
    assert!(err.to_string().contains("ringsteal"), "{err}");
}
