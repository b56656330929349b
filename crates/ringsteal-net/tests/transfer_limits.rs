//! Transfers past what one request can carry are short, as std's and tokio's are, never
//! refused: a buffer longer than the kernel's largest single transfer (2 GiB less a page),
//! and vectored reads and writes of more than 1024 buffers (`UIO_MAXIOV`), which
//! `write_all_vectored` then finishes.

#[path = "../../ringsteal-rt/tests/common/mod.rs"]
mod common;
mod support;

use common::{hang_guard, HANG_LIMIT};
use ringsteal_rt::Runtime;
use support::*;

/// 2 GiB: only reserved, never touched (a read fills 3 bytes of it; a write reads zero
/// pages, which commit nothing).
const HUGE: usize = (i32::MAX as usize) + 1;

/// More buffers than one vectored request takes.
const MANY: usize = 2000;

fn run(what: &str, body: impl std::future::Future<Output = ()> + Send + 'static) {
    hang_guard(what, HANG_LIMIT, move || {
        Runtime::builder().shards(1).build().unwrap().block_on(body)
    });
}

/// An empty buffer of `HUGE` capacity, reserved lazily; `None` (the test is skipped) where
/// it cannot be (a tight memory limit).
fn huge_buffer() -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(HUGE).ok()?;
    Some(v)
}

/// `HUGE` zero bytes from fresh zero pages (calloc's, which touch nothing), or `None`.
fn huge_zeros() -> Option<Vec<u8>> {
    let layout = std::alloc::Layout::array::<u8>(HUGE).ok()?;
    // SAFETY: a non-zero size; a null result is handled.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: allocated by the global allocator with this layout; all HUGE bytes are
    // initialised (zero).
    Some(unsafe { Vec::from_raw_parts(ptr, HUGE, HUGE) })
}

#[test]
fn a_read_into_a_buffer_of_more_than_2_gib_returns_what_is_queued() {
    run("huge read", async {
        let Some(buf) = huge_buffer() else { return };
        let (client, server) = tcp_pair().await;
        client.write_all(b"abc".to_vec()).await.0.unwrap();
        let (res, buf) = server.read(buf).await;
        let n = res.expect("std and tokio: Ok(3)");
        assert_eq!(&buf[..n], b"abc");
        drop(client);
        let (res, _) = server.read_exact(buf).await;
        assert_eq!(
            res.unwrap_err().kind(),
            std::io::ErrorKind::UnexpectedEof,
            "the stream ended"
        );
    });
}

#[test]
fn a_write_of_more_than_2_gib_is_short() {
    run("huge write", async {
        let Some(buf) = huge_zeros() else { return };
        let (client, _server) = tcp_pair().await;
        let (res, _) = client.write(buf).await;
        let n = res.expect("std and tokio: a short write");
        assert!(n > 0 && n < HUGE, "{n}");
    });
}

fn numbered() -> Vec<Vec<u8>> {
    (0..MANY).map(|i| vec![i as u8]).collect()
}

#[test]
fn vectored_transfers_of_more_than_1024_buffers_are_short_and_write_all_finishes_them() {
    run("vectored > UIO_MAXIOV", async {
        let (client, server) = tcp_pair().await;
        let (res, _) = client.writev(numbered()).await;
        assert_eq!(res.expect("std and tokio: Ok(1024)"), 1024);
        let (res, _) = client.write_all_vectored(numbered()).await;
        res.unwrap();
        let (res, got) = server.read_exact(vec![0u8; 1024 + MANY]).await;
        res.unwrap();
        let expected: Vec<u8> = (0..1024).chain(0..MANY).map(|i| i as u8).collect();
        assert_eq!(got, expected);

        client.write_all(vec![7u8; 1500]).await.0.unwrap();
        let bufs: Vec<Vec<u8>> = (0..MANY).map(|_| Vec::with_capacity(1)).collect();
        let (res, _) = server.readv(bufs).await;
        assert_eq!(res.expect("std: a short read into the first 1024"), 1024);
    });
}

/// On a datagram socket one request is one message: more than 1024 buffers are refused
/// whole (`EMSGSIZE`, as `sendmsg(2)` and `recvmsg(2)` do), never sent cut or received with
/// the datagram's tail dropped unseen.
#[test]
fn datagrams_of_more_than_1024_buffers_are_refused_not_cut() {
    run("datagram > UIO_MAXIOV", async {
        use ringsteal_rt::op::{self, SharedFd};
        let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
        let (res, _) = op::sendv(&a, numbered()).await;
        assert!(res.is_err(), "sent cut: {res:?}");
        op::send(&a, vec![9u8; MANY], 0).await.0.unwrap();
        let bufs: Vec<Vec<u8>> = (0..MANY + 1).map(|_| Vec::with_capacity(1)).collect();
        let (res, _) = op::recvv(&b, bufs, 0).await;
        assert!(res.is_err(), "received cut: {res:?}");
        // Refused, so still queued, whole.
        let (res, got) = op::recv(&b, Vec::with_capacity(4096), 0).await;
        assert_eq!(res.unwrap(), MANY);
        assert!(got.iter().all(|&x| x == 9));
    });
}
