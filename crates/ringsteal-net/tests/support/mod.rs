//! Helpers for the net tests, next to the runtime's own (`common`, shared with
//! `ringsteal-rt/tests` through a `#[path]` module, not copied): connected pairs over
//! loopback, self-checking byte streams, descriptor counts.
//!
//! No helper sleeps to synchronise; every wait is on an event or an op, bounded by the
//! hang guard.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use ringsteal_net::{TcpListener, TcpStream};

/// A bound for single operations inside tests: far above anything healthy on a loaded
/// 2-core machine, far below the hang guard, so a stuck op fails with a clear message.
pub const OP_GUARD: Duration = Duration::from_secs(20);

/// A listener on an ephemeral loopback port.
pub async fn listener() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = l.local_addr().unwrap();
    (l, addr)
}

/// A connected pair over loopback: (client, server).
pub async fn tcp_pair() -> (TcpStream, TcpStream) {
    let (l, addr) = listener().await;
    let connect = ringsteal_rt::spawn(async move { TcpStream::connect(addr).await });
    let (server, _) = l.accept().await.expect("accept");
    let client = connect.await.unwrap().expect("connect");
    (client, server)
}

/// Byte `pos` of the self-checking stream `seed`: a reader can check every byte it gets
/// against its absolute position, so a lost, duplicated or reordered byte is caught where it
/// happens.
pub fn stream_byte(seed: u64, pos: u64) -> u8 {
    let mut x = pos
        .wrapping_add(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    (x >> 56) as u8
}

/// `len` bytes of stream `seed` from position `pos`.
pub fn stream_bytes(seed: u64, pos: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| stream_byte(seed, pos + i))
        .collect()
}

/// Panics at the first byte of `got` that is not stream `seed` at `pos..`.
pub fn check_stream(seed: u64, pos: u64, got: &[u8]) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != stream_byte(seed, pos + i as u64)) {
        panic!(
            "stream {seed}: byte {} is {:#04x}, expected {:#04x} (lost, duplicated or reordered bytes)",
            pos + i as u64,
            got[i],
            stream_byte(seed, pos + i as u64)
        );
    }
}

/// Open descriptors of this process.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// What descriptor `fd` of this process refers to: `socket:[inode]` for a socket, unique to
/// it while any descriptor refers to it (unlike the descriptor count, which tests running
/// beside in the same binary change).
pub fn fd_target(fd: std::os::fd::RawFd) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap()
}

/// True while a descriptor of this process still refers to `target` (from [`fd_target`]).
pub fn still_open(target: &std::path::Path) -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .any(|t| t == target)
}

/// Yields until at most `limit` descriptors are open: requests dropped by the caller (and
/// their cancels) are still in flight for a while after the drop, and close their
/// descriptors only when the shard reaps their last completion. A leak never gets there,
/// and fails after [`OP_GUARD`] with the count.
pub async fn until_fds_at_most(limit: usize, what: &str) {
    let deadline = std::time::Instant::now() + OP_GUARD;
    loop {
        let open = open_fds();
        if open <= limit {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {open} descriptors open, at most {limit} expected"
        );
        ringsteal_rt::yield_now().await;
    }
}

/// Reads from `s` until end of stream; returns everything read.
pub async fn read_to_eof(s: &TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let (res, buf) =
            ringsteal_rt::time::timeout(OP_GUARD, s.read(Vec::with_capacity(64 * 1024)))
                .await
                .expect("read timed out");
        match res.expect("read") {
            0 => return all,
            n => all.extend_from_slice(&buf[..n]),
        }
    }
}

/// Polls `fut` once from the current task: `Some` if it completed. Used to start an
/// operation (its SQE goes out on the first poll) and then drop it at a chosen moment.
pub async fn poll_once<F: std::future::Future + Unpin>(fut: &mut F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut *fut).poll(cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// Polls `recv` once (its request goes to the kernel with the shard's next submission),
/// then drops it: with a datagram already queued, the kernel completes the request for a
/// future that is gone, and the socket keeps the datagram for its next receive.
pub async fn drop_after_first_poll<F: std::future::Future>(recv: F) {
    let mut recv = std::pin::pin!(recv);
    let first =
        std::future::poll_fn(|cx| std::task::Poll::Ready(recv.as_mut().poll(cx).is_pending()))
            .await;
    assert!(first, "a receive waits for its completion");
}

/// Operations completed so far on the current runtime (all shards).
pub fn ops_completed() -> u64 {
    ringsteal_rt::RuntimeHandle::current()
        .stats()
        .total()
        .ops_completed
}

/// Yields until `n` more operations than `since` have completed on the current runtime: the
/// kernel has answered them and the shard has reaped their completions.
pub async fn until_ops_completed(since: u64, n: u64) {
    let deadline = std::time::Instant::now() + OP_GUARD;
    while ops_completed() < since + n {
        assert!(
            std::time::Instant::now() < deadline,
            "operations never completed"
        );
        ringsteal_rt::yield_now().await;
    }
}

/// Runs two futures concurrently on the current task; yields both outputs.
pub async fn join<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            std::task::Poll::Ready((ra.take().unwrap(), rb.take().unwrap()))
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}

/// Writes all of `bytes` to the socket `s` with plain blocking `send(2)` calls, outside the
/// ring: for tests that count operations, which a stream write may or may not be (it first
/// tries an inline send).
pub fn send_outside_the_ring(s: &impl std::os::fd::AsRawFd, bytes: &[u8]) {
    let mut done = 0;
    while done < bytes.len() {
        // SAFETY: the rest of `bytes` is valid for reads for the call, which keeps no pointer.
        let n = unsafe {
            libc::send(
                s.as_raw_fd(),
                bytes[done..].as_ptr().cast(),
                bytes.len() - done,
                libc::MSG_NOSIGNAL,
            )
        };
        assert!(n > 0, "send: {}", std::io::Error::last_os_error());
        done += n as usize;
    }
}

/// Bytes waiting in the receive queue of the socket `s` (`FIONREAD`).
pub fn bytes_waiting(s: &impl std::os::fd::AsRawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into a live local.
    let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(rc, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    n as usize
}

/// Yields until at least `n` bytes wait in the receive queue of `s` (loopback delivers a
/// send before it returns, almost always; this covers the rest).
pub async fn until_bytes_waiting(s: &impl std::os::fd::AsRawFd, n: usize) {
    let deadline = std::time::Instant::now() + OP_GUARD;
    while bytes_waiting(s) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "the bytes never arrived"
        );
        ringsteal_rt::yield_now().await;
    }
}

/// Yields until the receive queue of `s` is empty: a read in flight has taken the bytes (it
/// runs when the shard next enters the kernel).
pub async fn until_bytes_taken(s: &impl std::os::fd::AsRawFd) {
    let deadline = std::time::Instant::now() + OP_GUARD;
    while bytes_waiting(s) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the receive never ran"
        );
        ringsteal_rt::yield_now().await;
    }
}

/// One way a datagram stream (`recv_stream` of a UDP or Unix datagram socket) receives, and
/// the payload room it leaves each datagram.
#[derive(Clone, Copy, Debug)]
pub struct DatagramPath {
    pub name: &'static str,
    /// The feature taken away, if any.
    pub without: Option<ringsteal_rt::Feature>,
    /// The `recv_buffers` length (8 buffers of it).
    pub buf_len: u32,
    /// The bytes of a datagram it delivers; the rest is truncated.
    pub room: usize,
    /// Single-shot receives into heap buffers: one request per datagram.
    pub single_shot: bool,
}

impl DatagramPath {
    /// `b` set up to receive this way.
    pub fn apply(self, b: ringsteal_rt::Builder) -> ringsteal_rt::Builder {
        let b = b.recv_buffers(8, self.buf_len);
        match self.without {
            Some(f) => b.without_feature(f),
            None => b,
        }
    }
}

/// Every way a datagram stream receives: multishot `recvmsg` into provided buffers, whose
/// first 144 bytes hold the header and source address; the single-shot `recvmsg` into a
/// heap buffer of the full length taken without multishot receive or without buffer rings;
/// and the same heap fallback taken implicitly when provided buffers are too small to hold
/// the 144 bytes.
pub const DATAGRAM_PATHS: [DatagramPath; 4] = [
    DatagramPath {
        name: "multishot recvmsg",
        without: None,
        buf_len: 1024,
        room: 1024 - 144,
        single_shot: false,
    },
    DatagramPath {
        name: "no multishot recv",
        without: Some(ringsteal_rt::Feature::MultishotRecv),
        buf_len: 1024,
        room: 1024,
        single_shot: true,
    },
    DatagramPath {
        name: "no buffer ring",
        without: Some(ringsteal_rt::Feature::ProvidedBufferRing),
        buf_len: 1024,
        room: 1024,
        single_shot: true,
    },
    DatagramPath {
        name: "buffers smaller than the header",
        without: None,
        buf_len: 100,
        room: 100,
        single_shot: true,
    },
];

/// One client of an echo server test, connection `i`: connects to `addr`, sends `sent` in
/// writes of `write_chunk` bytes from a task of its own (spawned with `placement`, or
/// `spawn`'s default), ends its half, and reads the echo here into a buffer of `read_buf`
/// bytes, comparing every byte with what was sent at that position: nothing lost,
/// duplicated, reordered or crossed between connections.
pub async fn checked_echo_client(
    addr: SocketAddr,
    i: usize,
    sent: &'static [u8],
    write_chunk: usize,
    read_buf: usize,
    placement: Option<ringsteal_rt::Placement>,
) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (rd, wr) = stream.into_split();
    let send = async move {
        for chunk in sent.chunks(write_chunk) {
            wr.write_all(chunk.to_vec()).await.0.expect("client write");
        }
        // Dropping the write half ends our stream: the server finishes and closes.
    };
    let sender = match placement {
        Some(p) => ringsteal_rt::spawn_with(p, send),
        None => ringsteal_rt::spawn(send),
    };
    let mut got = 0;
    let mut buf = Vec::with_capacity(read_buf);
    loop {
        buf.clear();
        let (res, b) = rd.read(buf).await;
        let n = res.expect("client read");
        if n == 0 {
            break;
        }
        assert!(
            b[..n] == sent[got..got + n],
            "connection {i}: echo differs from what was sent at byte {got}"
        );
        got += n;
        buf = b;
    }
    assert_eq!(got, sent.len(), "connection {i}: echo ended early");
    sender.await.unwrap();
}

/// Runs an `accept()` of `listener` until the kernel has accepted a connection from a new
/// client of `addr` for it and the shard has reaped that, then drops it, as a `select!`
/// drops the branch it did not take; returns the client.
pub async fn accept_dropped_after_the_kernel_accepted(
    listener: &TcpListener,
    addr: SocketAddr,
) -> std::net::TcpStream {
    let mut accept = Box::pin(listener.accept());
    assert!(
        poll_once(&mut accept).await.is_none(),
        "nobody connected yet"
    );
    let before = ops_completed();
    let client = std::net::TcpStream::connect(addr).unwrap();
    until_ops_completed(before, 1).await;
    drop(accept);
    client
}

/// `recv(2)` on `socket`'s descriptor with `MSG_DONTWAIT`: a system call of the test's own,
/// as a library's `recvmmsg` inside `try_io` would be.
pub fn raw_recv(socket: &impl std::os::fd::AsRawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for writes of its length; the descriptor is open (borrowed).
    let n = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `send(2)` of `bytes` on `socket`'s descriptor with `MSG_DONTWAIT`.
pub fn raw_send(socket: &impl std::os::fd::AsRawFd, bytes: &[u8]) -> std::io::Result<usize> {
    // SAFETY: `bytes` is valid for reads of its length; the descriptor is open (borrowed).
    let n = unsafe {
        libc::send(
            socket.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Sets `SO_LINGER` 0 on `s`: its close resets the connection (the peer sees
/// `ConnectionReset`).
pub fn reset_on_close(s: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a `linger` of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}
