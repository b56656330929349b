//! A stream read made when the kernel said the socket still had bytes queued after the
//! stream's last read (`IORING_CQE_F_SOCK_NONEMPTY`), or after an inline read that filled its
//! buffer, takes them with one non-blocking `recv(2)` in its first poll; a read that then finds
//! the socket empty goes by ring. Either way the stream's bytes, its end and its errors read as
//! they would by ring.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use std::io::ErrorKind;
use std::net::Shutdown;
use std::time::Duration;

use common::with_every_runtime;
use ringsteal_net::TcpStream;
use ringsteal_rt::time::timeout;
use support::*;

/// Queues `bytes` on `server` from `client` (outside the ring) and reads the first `first`
/// of them by ring: the kernel's answer says more are queued.
async fn queue_and_read_some(client: &TcpStream, server: &TcpStream, bytes: &[u8], first: usize) {
    send_outside_the_ring(client, bytes);
    until_bytes_waiting(server, bytes.len()).await;
    let before = ops_completed();
    let (res, buf) = server.read(Vec::with_capacity(first)).await;
    assert_eq!(&buf[..res.unwrap()], &bytes[..first]);
    assert_eq!(ops_completed(), before + 1, "the first read went by ring");
}

#[test]
fn a_read_after_a_receive_that_left_bytes_queued_completes_in_its_first_poll() {
    with_every_runtime("inline read", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            queue_and_read_some(&client, &server, b"0123456789", 4).await;
            let before = ops_completed();
            let mut next = Box::pin(server.read(Vec::with_capacity(64)));
            let (res, buf) = poll_once(&mut next).await.expect("the read waited");
            assert_eq!(&buf[..res.unwrap()], b"456789");
            let mut exact = Box::pin(server.read_exact(vec![0; 3]));
            assert!(
                poll_once(&mut exact).await.is_none(),
                "the socket is empty and the last read took all there was: by ring"
            );
            send_outside_the_ring(&client, b"abc");
            let (res, buf) = timeout(OP_GUARD, exact).await.expect("never completed");
            res.unwrap();
            assert_eq!(buf, b"abc");
            assert_eq!(
                ops_completed(),
                before + 1,
                "one request, for the waiting read"
            );
        })
    });
}

#[test]
fn a_read_that_finds_the_socket_empty_waits_on_the_ring_for_the_next_bytes() {
    with_every_runtime("inline read then ring", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            queue_and_read_some(&client, &server, b"01234567", 4).await;
            // Inline, and it filled its buffer: the next read tries inline too.
            let mut full = Box::pin(server.read(Vec::with_capacity(4)));
            let (res, buf) = poll_once(&mut full).await.expect("the read waited");
            assert_eq!(&buf[..res.unwrap()], b"4567");
            let mut next = Box::pin(server.read(Vec::with_capacity(4)));
            assert!(poll_once(&mut next).await.is_none(), "nothing is queued");
            send_outside_the_ring(&client, b"late");
            let (res, buf) = timeout(OP_GUARD, next).await.expect("never completed");
            assert_eq!(&buf[..res.unwrap()], b"late");
        })
    });
}

#[test]
fn an_inline_read_returns_the_end_of_the_stream_after_its_bytes() {
    with_every_runtime("inline read at eof", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            send_outside_the_ring(&client, b"01234567");
            client.shutdown(Shutdown::Write).await.unwrap();
            until_bytes_waiting(&server, 8).await;
            let (res, buf) = server.read(Vec::with_capacity(4)).await;
            assert_eq!(&buf[..res.unwrap()], b"0123");
            let (res, buf) = server.read_exact(vec![0; 4]).await;
            res.unwrap();
            assert_eq!(buf, b"4567");
            let (res, _) = timeout(OP_GUARD, server.read(Vec::with_capacity(4)))
                .await
                .expect("never completed");
            assert_eq!(res.unwrap(), 0, "end of stream");
            let (res, _) = server.read_exact(vec![0; 1]).await;
            assert_eq!(res.unwrap_err().kind(), ErrorKind::UnexpectedEof);
        })
    });
}

#[test]
fn a_reset_seen_by_an_inline_read_is_connection_reset() {
    with_every_runtime("inline read reset", 1, |_, rt| {
        rt.block_on(async {
            let (client, server) = tcp_pair().await;
            queue_and_read_some(&client, &server, &[7; 4096], 1).await;
            client.set_linger(Some(Duration::ZERO)).unwrap();
            drop(client); // resets the connection
            let deadline = std::time::Instant::now() + OP_GUARD;
            let err = loop {
                assert!(std::time::Instant::now() < deadline, "reads never failed");
                let read = server.read(Vec::with_capacity(1000));
                match timeout(OP_GUARD, read).await.expect("a read hung").0 {
                    Ok(0) => panic!("the reset read as an end of stream"),
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
        })
    });
}
