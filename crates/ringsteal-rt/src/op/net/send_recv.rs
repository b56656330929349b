//! `IORING_OP_SEND` and `IORING_OP_RECV` with owned buffers.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::truncating;
use crate::buf::{BufResult, IoBuf, IoBufMut};
use crate::op::limits::sqe_len;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Sends the initialised bytes of `buf` on the socket `fd` with `flags` and `MSG_NOSIGNAL`
/// (always: a peer that went away is an `EPIPE`/`ECONNRESET` error, never a `SIGPIPE`).
/// Yields the byte count (possibly short) and the buffer.
pub fn send<B: IoBuf>(fd: &SharedFd, buf: B, flags: i32) -> Op<SendOp<B>> {
    Op::new(SendOp::new(fd, buf, flags))
}

/// The operation of [`send`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     assert_eq!(op::send(&a, b"hi".to_vec(), 0).await.0.unwrap(), 2);
///     let (n, buf) = op::recv(&b, Vec::with_capacity(8), 0).await;
///     assert_eq!(&buf[..n.unwrap()], b"hi");
/// });
/// ```
#[derive(Debug)]
pub struct SendOp<B> {
    fd: SharedFd,
    buf: B,
    flags: i32,
}

impl<B: IoBuf> SendOp<B> {
    /// The operation's data, to wrap (e.g. in [`InLane`](crate::io::InLane)) before
    /// [`Op::new`]; [`send`] is `Op::new(SendOp::new(..))`.
    pub fn new(fd: &SharedFd, buf: B, flags: i32) -> Self {
        SendOp {
            fd: fd.clone(),
            buf,
            flags: flags | libc::MSG_NOSIGNAL,
        }
    }
}

// SAFETY: the SQE points into `buf`, which the op owns (IoBuf contract).
unsafe impl<B: IoBuf> Operation for SendOp<B> {
    type Output = BufResult<usize, B>;
    fn prepare(&mut self) -> Sqes {
        let len = sqe_len(self.buf.bytes_init());
        Sqes::One(opcode::send(
            self.fd.as_raw_fd(),
            self.buf.stable_ptr(),
            len,
            self.flags,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        (cqe_result(results[0].0).map(|n| n as usize), self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}

/// Receives into `buf` (from its start, up to its capacity) from the socket `fd` with `flags`
/// (`MSG_PEEK`, `MSG_WAITALL`, ...). Yields the byte count (0: the peer shut down its
/// sending side) and the buffer, its initialised length extended. With `MSG_TRUNC` the count
/// is the kernel's, as `recv(2)` says: on a datagram socket the datagram's whole length
/// (which may be more than the buffer holds: it then holds the datagram's first
/// `bytes_total()` bytes), on a stream socket the bytes discarded unread (the buffer's
/// uninitialised part is zeroed first, so it holds zeros for them).
pub fn recv<B: IoBufMut>(fd: &SharedFd, buf: B, flags: i32) -> Op<RecvOp<B>> {
    Op::new(RecvOp::new(fd, buf, flags))
}

/// The operation of [`recv`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     op::send(&a, b"peek".to_vec(), 0).await.0.unwrap();
///     let (n, buf) = op::recv(&b, Vec::with_capacity(8), libc::MSG_PEEK).await;
///     assert_eq!(&buf[..n.unwrap()], b"peek");
///     let (n, _) = op::recv(&b, Vec::with_capacity(8), 0).await;
///     assert_eq!(n.unwrap(), 4, "the peek left the bytes queued");
/// });
/// ```
#[derive(Debug)]
pub struct RecvOp<B> {
    fd: SharedFd,
    buf: B,
    flags: i32,
}

impl<B: IoBufMut> RecvOp<B> {
    /// The operation's data, to wrap before [`Op::new`]; [`recv`] is
    /// `Op::new(RecvOp::new(..))`.
    pub fn new(fd: &SharedFd, mut buf: B, flags: i32) -> Self {
        if truncating::is_truncating(flags) {
            truncating::zero_spare(&mut buf);
        }
        RecvOp {
            fd: fd.clone(),
            buf,
            flags,
        }
    }
}

// SAFETY: the SQE points into `buf`, which the op owns (IoBufMut contract).
unsafe impl<B: IoBufMut> Operation for RecvOp<B> {
    type Output = BufResult<usize, B>;
    fn prepare(&mut self) -> Sqes {
        let len = sqe_len(self.buf.bytes_total());
        Sqes::One(opcode::recv(
            self.fd.as_raw_fd(),
            self.buf.stable_mut_ptr(),
            len,
            self.flags,
        ))
    }
    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let res = cqe_result(results[0].0).map(|n| {
            // SAFETY: the kernel wrote n bytes at the start of the buffer; with `MSG_TRUNC`
            // (`truncating.rs`) it may report more than it wrote, but the buffer was zeroed
            // to its capacity first, and the count is clamped to that.
            unsafe { self.buf.set_init((n as usize).min(self.buf.bytes_total())) };
            n as usize
        });
        (res, self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}
