//! `IORING_OP_SEND_ZC` (6.0): a send whose pages the kernel transmits from the caller's buffer
//! instead of copying them, and its fallback, a plain `IORING_OP_SEND`.
//!
//! The request posts two CQEs: the first (with `IORING_CQE_F_MORE`) carries the result; the
//! second (`IORING_CQE_F_NOTIF`) says the kernel no longer references the buffer. The op is
//! complete, and the buffer handed back, only after the notification (`op/raw.rs` keeps the
//! first CQE's result and adds the notification's flags). Notifications of different sends
//! may arrive in any order: each is matched to its own cell by `user_data`. A cancelled
//! zero-copy send may still post one, which the cell also waits for; and
//! `IOSQE_CQE_SKIP_SUCCESS`, which the kernel refuses with it, is never set (the op layer
//! clears it).

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::buf::{BufResult, IoBuf};
use crate::features::Feature;
use crate::op::limits::sqe_len;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};
use crate::shard::context;

/// Sends the initialised bytes of `buf` on the socket `fd` without copying them
/// (`IORING_OP_SEND_ZC`, with `MSG_NOSIGNAL`), or with a plain send where the runtime has no
/// zero-copy send ([`Feature::SendZc`](crate::Feature::SendZc); decided when the op is
/// submitted, on its first poll, by the runtime of the shard that submits it, so an op made
/// outside a runtime follows the runtime that runs it). Yields the byte count (possibly short, as `send`'s) and the buffer, which comes
/// back only once the kernel has let go of its pages: after the transmitted data was
/// acknowledged, not merely queued. So a zero-copy send completes later than a plain one;
/// it pays for large buffers (tens of kilobytes and up), where the copy it saves costs more
/// than the page pinning and the second completion. Sockets without zero-copy support
/// (Unix sockets) fail with `EOPNOTSUPP` where the zero-copy send is used; the plain send
/// of the fallback works on any socket (so test on a kernel that has `SEND_ZC`).
///
/// ```
/// use std::io::Read;
/// use std::net::{TcpListener, TcpStream};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
///     let (mut rx, _) = listener.accept().unwrap();
///     let data = vec![7u8; 64 * 1024];
///     let reader = std::thread::spawn(move || {
///         let mut got = vec![0; 64 * 1024];
///         rx.read_exact(&mut got).map(|()| got)
///     });
///     let (res, data) = op::send_zc(&SharedFd::new(tx.into()), data).await;
///     let sent = res.unwrap();
///     assert_eq!(&reader.join().unwrap().unwrap()[..sent], &data[..sent]);
/// });
/// ```
pub fn send_zc<B: IoBuf>(fd: &SharedFd, buf: B) -> Op<SendZc<B>> {
    Op::new(SendZc::new(fd, buf))
}

/// The operation of [`send_zc`]: an [`Op`] future yielding the byte count and the buffer.
///
/// ```
/// use std::net::{TcpListener, TcpStream};
/// use ringsteal_rt::op::{self, Op, SendZc, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
///     let _rx = listener.accept().unwrap();
///     let send: Op<SendZc<Vec<u8>>> = op::send_zc(&SharedFd::new(tx.into()), b"hello".to_vec());
///     let (res, buf) = send.await;
///     assert_eq!(res.unwrap(), 5);
///     assert_eq!(buf, b"hello");
/// });
/// ```
#[derive(Debug)]
pub struct SendZc<B> {
    /// Dropped once the send has posted its result (`send_result_posted`): a socket whose
    /// peer stops reading must still close when its owner drops it.
    fd: Option<SharedFd>,
    buf: B,
}

impl<B: IoBuf> SendZc<B> {
    /// The operation's data, to wrap (in an `io::InLane`, say) before making it an [`Op`];
    /// [`send_zc`] is `Op::new(SendZc::new(fd, buf))`.
    ///
    /// ```
    /// use std::net::{TcpListener, TcpStream};
    /// use ringsteal_rt::op::{Op, SendZc, SharedFd};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    ///     let _rx = listener.accept().unwrap();
    ///     let (res, _) = Op::new(SendZc::new(&SharedFd::new(tx.into()), vec![1u8; 3])).await;
    ///     assert_eq!(res.unwrap(), 3);
    /// });
    /// ```
    pub fn new(fd: &SharedFd, buf: B) -> Self {
        Self {
            fd: Some(fd.clone()),
            buf,
        }
    }
}

/// True if the runtime of the shard this thread runs has zero-copy sends.
fn submitting_shard_has_zero_copy() -> bool {
    context::with_shard(|shard| shard.is_some_and(|s| s.shared.features.supports(Feature::SendZc)))
}

// SAFETY: the SQE points into `buf`, which the op owns (IoBuf contract) until the op is
// complete: for SEND_ZC that is the notification CQE (the first CQE has F_MORE, so it neither
// completes nor frees the op).
unsafe impl<B: IoBuf> Operation for SendZc<B> {
    type Output = BufResult<usize, B>;
    const ZERO_COPY_SEND: bool = true;
    fn prepare(&mut self) -> Sqes {
        let (fd, ptr, len) = (
            // Always `Some` here: prepared once, before any result. (-1 would be `EBADF`.)
            self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd),
            self.buf.stable_ptr(),
            sqe_len(self.buf.bytes_init()),
        );
        let flags = libc::MSG_NOSIGNAL;
        // `prepare` runs on the submitting shard: its runtime's feature set decides.
        Sqes::One(if submitting_shard_has_zero_copy() {
            opcode::send_zc(fd, ptr, len, flags)
        } else {
            opcode::send(fd, ptr, len, flags)
        })
    }
    fn send_result_posted(&mut self) {
        // The kernel holds its own reference to the socket while the data is queued.
        self.fd = None;
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        (cqe_result(results[0].0).map(|n| n as usize), self.buf)
    }
    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::Poll;

    use ringsteal_uring::abi::{IORING_CQE_F_MORE, IORING_CQE_F_NOTIF};

    use super::*;
    use crate::op::{nop, State};
    use crate::{Feature, Runtime};

    fn set_buf(fd: &impl AsRawFd, opt: i32, bytes: i32) {
        // SAFETY: setsockopt reads the local int for the call only.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&bytes as *const i32).cast(),
                std::mem::size_of::<i32>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "setsockopt: {}", io::Error::last_os_error());
    }

    /// A connection whose receiver reads nothing (until the test reads), with a large send
    /// buffer: a large send is queued whole, but only what the receive window takes (its
    /// buffer does not grow while nobody reads) goes out; the rest waits, unsent, in the
    /// sender's queue, referencing the sender's pages, so its notification cannot come.
    /// (A tiny receive buffer would stall it harder, but then the receiver's window updates
    /// wait for the zero-window probe timer and draining it takes seconds.)
    fn stalled_pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        set_buf(&tx, libc::SO_SNDBUF, 4 << 20);
        let (rx, _) = l.accept().unwrap();
        (tx, rx)
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Polls `op` once (submitting it on the first poll); true if it is still pending.
    async fn poll_once<F: Future + Unpin>(op: &mut F) -> bool {
        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *op).poll(cx).is_pending())).await
    }

    fn header<B: IoBuf>(op: &Op<SendZc<B>>) -> &crate::op::raw::OpHeader {
        let State::Submitted(cell) = op.state else {
            panic!("not submitted")
        };
        // SAFETY: the op's reference keeps the cell alive while `op` is borrowed.
        unsafe { &(*cell.as_ptr()).header }
    }

    /// Ring round trips until the send's first CQE (the result, with F_MORE) was reaped.
    async fn until_first_cqe<B: IoBuf>(op: &Op<SendZc<B>>) -> i32 {
        for _ in 0..100_000 {
            let (res, flags) = header(op).slot_for_tests(0);
            if flags & IORING_CQE_F_MORE != 0 {
                return res;
            }
            nop().await.unwrap();
        }
        panic!("the zero-copy send's first completion never came");
    }

    /// Runs `body` on a one-shard runtime that has SEND_ZC (nothing to check on a kernel
    /// without it) with a zero-copy send of `buf` over a stalled connection, submitted and
    /// with its first completion reaped; also the bytes it sent and the receiving end.
    fn with_stalled_send<B, F, Fut>(buf: B, body: F)
    where
        B: IoBuf,
        F: FnOnce(Op<SendZc<B>>, i32, TcpStream) -> Fut,
        Fut: Future<Output = ()>,
    {
        let rt = Runtime::builder().shards(1).build().unwrap();
        if !rt.features().supports(Feature::SendZc) {
            return;
        }
        rt.block_on(async {
            let (tx, rx) = stalled_pair();
            let mut op = send_zc(&SharedFd::new(tx.into()), buf);
            assert!(poll_once(&mut op).await);
            let sent = until_first_cqe(&op).await;
            body(op, sent, rx).await;
        });
    }

    /// Reads `n` bytes from `rx` on a thread of its own.
    fn read_in_thread(mut rx: TcpStream, n: i32) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut got = vec![0; n as usize];
            rx.read_exact(&mut got).unwrap();
            got
        })
    }

    #[test]
    fn a_zero_copy_send_returns_its_buffer_only_after_the_notification() {
        with_stalled_send(data(1 << 20), |mut op, sent, rx| async move {
            let window = 256 * 1024;
            assert!(
                sent > window,
                "the send queued {sent} bytes: not clearly more than the receive window"
            );
            // The result is in; the kernel still holds the pages of the unsent part.
            for _ in 0..200 {
                nop().await.unwrap();
            }
            assert!(
                !header(&op).is_complete(),
                "complete before the notification"
            );
            assert!(
                poll_once(&mut op).await,
                "the buffer came back before the notification"
            );
            // The receiver drains what was sent: the data goes out, is acknowledged, and
            // the kernel lets go of the pages.
            let reader = read_in_thread(rx, sent);
            let (res, buf) = op.await;
            assert_eq!(res.unwrap(), sent as usize);
            assert_eq!(buf, data(1 << 20), "the buffer comes back untouched");
            assert_eq!(reader.join().unwrap(), &buf[..sent as usize]);
        });
    }

    #[test]
    fn the_notification_flag_reaches_the_op_with_the_first_completions_result() {
        with_stalled_send(data(256 * 1024), |mut op, sent, rx| async move {
            let reader = read_in_thread(rx, sent);
            while poll_once(&mut op).await {
                nop().await.unwrap();
                if header(&op).is_complete() {
                    break;
                }
            }
            let (res, flags) = header(&op).op_results(-libc::ETIMEDOUT)[0];
            assert_eq!(
                res, sent,
                "the notification keeps the first completion's result"
            );
            assert_ne!(
                flags & IORING_CQE_F_NOTIF,
                0,
                "completed by the notification"
            );
            reader.join().unwrap();
            let (res, _) = op.await;
            assert_eq!(res.unwrap(), sent as usize);
        });
    }

    /// A buffer that records when it is dropped.
    struct Tracked(Vec<u8>, Arc<AtomicBool>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.1.store(true, Ordering::SeqCst);
        }
    }
    // SAFETY: forwards to the Vec, whose heap storage does not move.
    unsafe impl IoBuf for Tracked {
        fn stable_ptr(&self) -> *const u8 {
            self.0.as_ptr()
        }
        fn bytes_init(&self) -> usize {
            self.0.len()
        }
        fn bytes_total(&self) -> usize {
            self.0.capacity()
        }
    }

    #[test]
    fn a_dropped_zero_copy_send_keeps_its_buffer_until_the_notification() {
        let dropped = Arc::new(AtomicBool::new(false));
        let buf = Tracked(data(1 << 20), dropped.clone());
        with_stalled_send(buf, |op, sent, rx| async move {
            // Dropping it cancels nothing the kernel already did: its pages stay referenced.
            drop(op);
            for _ in 0..200 {
                nop().await.unwrap();
            }
            assert!(
                !dropped.load(Ordering::SeqCst),
                "freed before the notification"
            );
            let reader = read_in_thread(rx, sent);
            while !dropped.load(Ordering::SeqCst) {
                nop().await.unwrap();
            }
            assert_eq!(reader.join().unwrap(), data(1 << 20)[..sent as usize]);
        });
    }

    /// A plain send of "plain" on a Unix socket (which has no zero-copy send: a SEND_ZC there
    /// fails with EOPNOTSUPP) by `op`, awaited on `rt`.
    fn assert_sends_plainly(
        rt: &Runtime,
        op: Op<SendZc<Vec<u8>>>,
        rx: &std::os::unix::net::UnixStream,
    ) {
        let (res, _) = rt.block_on(op);
        assert_eq!(res.expect("a plain send, not a zero-copy one"), 5);
        let mut got = [0; 5];
        (&*rx).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"plain");
    }

    #[test]
    // The op is made inside the runtime on purpose, and awaited in a later `block_on`.
    #[allow(clippy::async_yields_async)]
    fn without_zero_copy_the_send_is_a_plain_one() {
        let rt = Runtime::builder()
            .shards(1)
            .without_feature(Feature::SendZc)
            .build()
            .unwrap();
        let (tx, rx) = std::os::unix::net::UnixStream::pair().unwrap();
        let op = rt.block_on(async { send_zc(&SharedFd::new(tx.into()), b"plain".to_vec()) });
        assert_sends_plainly(&rt, op, &rx);
    }

    #[test]
    // Ops are made inside (or outside) one runtime on purpose, and awaited in another.
    #[allow(clippy::async_yields_async)]
    fn the_runtime_that_submits_the_send_decides_whether_it_is_zero_copy() {
        let plain = Runtime::builder()
            .shards(1)
            .without_feature(Feature::SendZc)
            .build()
            .unwrap();
        // Made outside any runtime, then run by one without zero-copy sends.
        let (tx, rx) = std::os::unix::net::UnixStream::pair().unwrap();
        let op = send_zc(&SharedFd::new(tx.into()), b"plain".to_vec());
        assert_sends_plainly(&plain, op, &rx);
        // Made inside a runtime that has them, then run by one without.
        let zc = Runtime::builder().shards(1).build().unwrap();
        let (tx, rx) = std::os::unix::net::UnixStream::pair().unwrap();
        let op = zc.block_on(async { send_zc(&SharedFd::new(tx.into()), b"plain".to_vec()) });
        assert_sends_plainly(&plain, op, &rx);
    }
}
