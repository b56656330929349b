//! `IORING_OP_SENDMSG` and `IORING_OP_RECVMSG`: addressed datagrams (`send_to`/`recv_from`)
//! and vectored stream I/O. The `msghdr`, its iovec array and the address live in the op.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::{truncating, SockAddr};
use crate::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf, IoVecBufMut};
use crate::op::limits::msg_iovecs;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// A `msghdr` with its iovecs and address, owned by an op. Built in `prepare`, when the op
/// sits at its final address, so its pointers (into itself and the op's buffers) stay valid.
struct Msg {
    hdr: libc::msghdr,
    iov: Vec<libc::iovec>,
    addr: Option<SockAddr>,
}

// SAFETY: the raw pointers in `hdr`/`iov` point into the op that owns this `Msg` (its iovec
// Vec, its address, its buffers); they are plain addresses, used only by the kernel.
unsafe impl Send for Msg {}

impl Msg {
    fn new(addr: Option<SockAddr>) -> Self {
        Self {
            // SAFETY: an all-zero msghdr is valid (no name, no iovecs, no control data).
            hdr: unsafe { std::mem::zeroed() },
            iov: Vec::new(),
            addr,
        }
    }

    /// Points the header at `iov` and the address (if any); returns the header's address.
    fn header(&mut self, iov: Vec<libc::iovec>) -> *mut libc::msghdr {
        self.iov = iov;
        self.hdr.msg_iov = self.iov.as_mut_ptr();
        self.hdr.msg_iovlen = self.iov.len() as _;
        if let Some(addr) = self.addr.as_mut() {
            self.hdr.msg_name = addr.as_mut_ptr().cast();
            self.hdr.msg_namelen = addr.len();
        }
        &mut self.hdr
    }

    /// After a `recvmsg`: the address the kernel wrote, with the length it reported.
    fn received_addr(&self) -> SockAddr {
        let mut addr = self.addr.unwrap_or_else(SockAddr::empty);
        *addr.len_mut() = self.hdr.msg_namelen;
        addr
    }
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Msg")
            .field("iovecs", &self.iov.len())
            .field("addr", &self.addr)
            .finish()
    }
}

fn one_iovec(ptr: *const u8, len: usize) -> Vec<libc::iovec> {
    vec![libc::iovec {
        iov_base: ptr as *mut libc::c_void,
        iov_len: len,
    }]
}

/// Sends the initialised bytes of `buf` as one datagram to `addr` (`sendmsg`, with
/// `MSG_NOSIGNAL`).
pub fn send_to<B: IoBuf>(fd: &SharedFd, buf: B, addr: SockAddr) -> Op<SendTo<B>> {
    Op::new(SendTo {
        fd: fd.clone(),
        buf,
        msg: Msg::new(Some(addr)),
    })
}

/// The operation of [`send_to`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd, SockAddr};
///     let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     op::send_to(&a, b"datagram".to_vec(), SockAddr::from_std(&b_addr)).await.0.unwrap();
///     let (res, buf) = op::recv_from(&b, Vec::with_capacity(16)).await;
///     let (n, from) = res.unwrap();
///     assert_eq!((&buf[..n], from.as_std()), (&b"datagram"[..], Some(a_addr)));
/// });
/// ```
#[derive(Debug)]
pub struct SendTo<B> {
    fd: SharedFd,
    buf: B,
    msg: Msg,
}

// SAFETY: the SQE points at the msghdr in the op, which points at the op's iovec array, its
// address and into `buf`, all owned by the op.
unsafe impl<B: IoBuf> Operation for SendTo<B> {
    type Output = BufResult<usize, B>;
    fn prepare(&mut self) -> Sqes {
        let iov = one_iovec(self.buf.stable_ptr(), self.buf.bytes_init());
        let hdr = self.msg.header(iov);
        Sqes::One(opcode::sendmsg(
            self.fd.as_raw_fd(),
            hdr,
            libc::MSG_NOSIGNAL,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        (cqe_result(results[0].0).map(|n| n as usize), self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}

/// Receives one datagram into `buf` (from its start, up to its capacity; the rest of a longer
/// datagram is discarded, as with `recvfrom`) and the sender's address (`recvmsg`).
pub fn recv_from<B: IoBufMut>(fd: &SharedFd, buf: B) -> Op<RecvFrom<B>> {
    Op::new(RecvFrom::new(fd, buf))
}

/// The operation of [`recv_from`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd, SockAddr};
///     let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     op::send_to(&a, b"datagram".to_vec(), SockAddr::from_std(&b_addr)).await.0.unwrap();
///     let (res, buf) = op::recv_from(&b, Vec::with_capacity(16)).await;
///     let (n, from) = res.unwrap();
///     assert_eq!((&buf[..n], from.as_std()), (&b"datagram"[..], Some(a_addr)));
/// });
/// ```
#[derive(Debug)]
pub struct RecvFrom<B> {
    fd: SharedFd,
    buf: B,
    msg: Msg,
    flags: i32,
}

impl<B: IoBufMut> RecvFrom<B> {
    /// The operation's data, to wrap before [`Op::new`]; [`recv_from`] is
    /// `Op::new(RecvFrom::new(..))`.
    pub fn new(fd: &SharedFd, buf: B) -> Self {
        RecvFrom {
            fd: fd.clone(),
            buf,
            msg: Msg::new(Some(SockAddr::empty())),
            flags: 0,
        }
    }

    /// As [`new`](Self::new), with `MSG_PEEK`: the datagram stays queued for the next
    /// receive.
    ///
    /// ```
    /// use ringsteal_rt::op::{self, Op, RecvFrom, SharedFd, SockAddr};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    ///     let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    ///     let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
    ///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
    ///     op::send_to(&a, b"again".to_vec(), SockAddr::from_std(&b_addr)).await.0.unwrap();
    ///     let (res, _) = Op::new(RecvFrom::peeking(&b, Vec::with_capacity(8))).await;
    ///     assert_eq!(res.unwrap().1.as_std(), Some(a_addr));
    ///     let (res, buf) = op::recv_from(&b, Vec::with_capacity(8)).await;
    ///     assert_eq!(&buf[..res.unwrap().0], b"again", "still queued after the peek");
    /// });
    /// ```
    pub fn peeking(fd: &SharedFd, buf: B) -> Self {
        RecvFrom {
            flags: libc::MSG_PEEK,
            ..Self::new(fd, buf)
        }
    }
}

// SAFETY: as for SendTo; the kernel writes into `buf` and the address storage, both in the op.
unsafe impl<B: IoBufMut> Operation for RecvFrom<B> {
    type Output = BufResult<(usize, SockAddr), B>;
    fn prepare(&mut self) -> Sqes {
        let iov = one_iovec(self.buf.stable_mut_ptr(), self.buf.bytes_total());
        let hdr = self.msg.header(iov);
        Sqes::One(opcode::recvmsg(self.fd.as_raw_fd(), hdr, self.flags))
    }
    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let res = cqe_result(results[0].0).map(|n| {
            // SAFETY: the kernel wrote n bytes at the start of the buffer (never more than
            // it holds without `MSG_TRUNC`, which no constructor passes; clamped all the same).
            unsafe { self.buf.set_init((n as usize).min(self.buf.bytes_total())) };
            (n as usize, self.msg.received_addr())
        });
        (res, self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}

/// Sends `bufs` in order on a connected socket (`sendmsg`, with `MSG_NOSIGNAL`; unlike
/// `writev`, a peer that went away never raises `SIGPIPE`).
pub fn sendv<B: IoVecBuf>(fd: &SharedFd, bufs: B) -> Op<SendVectored<B>> {
    Op::new(SendVectored::new(fd, bufs))
}

/// The operation of [`sendv`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     let (n, _) = op::sendv(&a, vec![b"ab".to_vec(), b"cd".to_vec()]).await;
///     assert_eq!(n.unwrap(), 4);
///     let (n, bufs) = op::recvv(&b, vec![Vec::with_capacity(1), Vec::with_capacity(8)], 0).await;
///     assert_eq!(n.unwrap(), 4);
///     assert_eq!(bufs, [b"a".to_vec(), b"bcd".to_vec()]);
/// });
/// ```
#[derive(Debug)]
pub struct SendVectored<B> {
    fd: SharedFd,
    bufs: B,
    msg: Msg,
}

impl<B: IoVecBuf> SendVectored<B> {
    /// The operation's data, to wrap before [`Op::new`].
    pub fn new(fd: &SharedFd, bufs: B) -> Self {
        SendVectored {
            fd: fd.clone(),
            bufs,
            msg: Msg::new(None),
        }
    }
}

// SAFETY: as for SendTo, with one iovec per buffer of `bufs`.
unsafe impl<B: IoVecBuf> Operation for SendVectored<B> {
    type Output = BufResult<usize, B>;
    fn prepare(&mut self) -> Sqes {
        let iov = msg_iovecs(self.fd.as_raw_fd(), self.bufs.iovecs());
        let hdr = self.msg.header(iov);
        Sqes::One(opcode::sendmsg(
            self.fd.as_raw_fd(),
            hdr,
            libc::MSG_NOSIGNAL,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        (cqe_result(results[0].0).map(|n| n as usize), self.bufs)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.bufs)
    }
}

/// Receives into `bufs` in order (`recvmsg`), with `flags`.
pub fn recvv<B: IoVecBufMut>(fd: &SharedFd, bufs: B, flags: i32) -> Op<RecvVectored<B>> {
    Op::new(RecvVectored::new(fd, bufs, flags))
}

/// The operation of [`recvv`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     let (n, _) = op::sendv(&a, vec![b"ab".to_vec(), b"cd".to_vec()]).await;
///     assert_eq!(n.unwrap(), 4);
///     let (n, bufs) = op::recvv(&b, vec![Vec::with_capacity(1), Vec::with_capacity(8)], 0).await;
///     assert_eq!(n.unwrap(), 4);
///     assert_eq!(bufs, [b"a".to_vec(), b"bcd".to_vec()]);
/// });
/// ```
#[derive(Debug)]
pub struct RecvVectored<B> {
    fd: SharedFd,
    bufs: B,
    flags: i32,
    msg: Msg,
    /// With `MSG_TRUNC`: the bytes the buffers hold in all, zeroed where they were not
    /// initialised (`truncating.rs`); the count is clamped to it.
    truncating: Option<usize>,
}

impl<B: IoVecBufMut> RecvVectored<B> {
    /// The operation's data, to wrap before [`Op::new`].
    pub fn new(fd: &SharedFd, mut bufs: B, flags: i32) -> Self {
        let truncating =
            truncating::is_truncating(flags).then(|| truncating::zero_spare_vectored(&mut bufs));
        RecvVectored {
            fd: fd.clone(),
            bufs,
            flags,
            truncating,
            msg: Msg::new(None),
        }
    }
}

// SAFETY: as for SendVectored; the kernel writes into the buffers of `bufs`.
unsafe impl<B: IoVecBufMut> Operation for RecvVectored<B> {
    type Output = BufResult<usize, B>;
    fn prepare(&mut self) -> Sqes {
        let iov = msg_iovecs(self.fd.as_raw_fd(), self.bufs.iovecs_mut());
        let hdr = self.msg.header(iov);
        Sqes::One(opcode::recvmsg(self.fd.as_raw_fd(), hdr, self.flags))
    }
    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let res = cqe_result(results[0].0).map(|n| {
            let filled = self
                .truncating
                .map_or(n as usize, |all| (n as usize).min(all));
            // SAFETY: the kernel filled n bytes across the buffers in order; with `MSG_TRUNC`
            // it may report more than it wrote, but the buffers were zeroed first, and the
            // count is clamped to what they hold.
            unsafe { self.bufs.set_init(filled) };
            n as usize
        });
        (res, self.bufs)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.bufs)
    }
}
