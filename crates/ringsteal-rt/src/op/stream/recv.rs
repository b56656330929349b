//! Multishot `IORING_OP_RECV` into provided buffers (6.0): a stream of received data from one
//! SQE, and its fallback, one single-shot receive into a heap buffer at a time. The stream's
//! policy (re-arm, waiting for buffers, end) is `receiver.rs`'s.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use ringsteal_uring::{io_uring_sqe, opcode};

use super::cell::{Release, Source};
use super::receiver::{Event, ReceiveSource, Receiver};
use super::recv_group;
use crate::buf::provided::BufGroup;
use crate::buf::RecvBuf;
use crate::op::SharedFd;
use crate::shard::Shard;

/// Receives from the socket `fd` as a stream of buffers: one multishot `IORING_OP_RECV`
/// selecting from the polling shard's provided buffers (see
/// [`Builder::recv_buffers`](crate::Builder::recv_buffers)), re-armed whenever the kernel
/// ends it, or, where the runtime has no multishot receive or buffer rings, single-shot
/// receives into heap buffers of the same size. Each item is the data of one receive, in
/// order; the stream ends (`None`) at end of file, or after yielding an error.
///
/// Running out of provided buffers is not an error: until half of its shard's buffers are
/// back, the stream takes data that arrives with single-shot receives into heap buffers,
/// then re-arms its multishot receive, in order, losing nothing. The request is submitted on
/// the first poll, on the polling shard's ring; dropping the stream cancels it, and buffers
/// received but not yet taken go back to their ring.
///
/// A stream may move to another task, on another shard: its armed request stays on the
/// ring that armed it (that shard reaps its completions and wakes the new task) until the
/// kernel ends it, and the next request goes to the new shard's ring (at once if the stream
/// was waiting for buffers). So a stream armed inside `Runtime::block_on` and handed to a
/// worker shard's task delivers only while shard 0 runs, inside a `block_on`, until its
/// request ends.
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (rx, mut tx) = std::os::unix::net::UnixStream::pair().unwrap();
///     let mut stream = op::recv_multishot(&SharedFd::new(rx.into()));
///     tx.write_all(b"ping").unwrap();
///     drop(tx);
///     let mut got = Vec::new();
///     while let Some(buf) = stream.next().await {
///         got.extend_from_slice(&buf.unwrap());
///     }
///     assert_eq!(got, b"ping");
/// });
/// ```
pub fn recv_multishot(fd: &SharedFd) -> RecvStream {
    RecvStream(Receiver::new(fd))
}

/// The stream of [`recv_multishot`]: `poll_next`, or `next().await`.
///
/// ```
/// use std::io::Write;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (rx, mut tx) = std::os::unix::net::UnixStream::pair().unwrap();
///     let mut stream: op::RecvStream = op::recv_multishot(&SharedFd::new(rx.into()));
///     tx.write_all(b"one").unwrap();
///     assert_eq!(&stream.next().await.unwrap().unwrap()[..], b"one");
///     tx.write_all(b"two").unwrap();
///     assert_eq!(&stream.next().await.unwrap().unwrap()[..], b"two");
/// });
/// ```
#[derive(Debug)]
pub struct RecvStream(Receiver<RecvSource>);

impl RecvStream {
    /// The next buffer of data (or the error that ended the stream); `None` at end of file.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<RecvBuf>>> {
        self.0.poll_next(cx)
    }

    /// The next buffer of data (or the error that ended the stream); `None` at end of file.
    pub async fn next(&mut self) -> Option<io::Result<RecvBuf>> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Receive requests submitted so far: 1 for a multishot receive the kernel never ended,
    /// one per receive on the single-shot fallback.
    pub fn requests_submitted(&self) -> u64 {
        self.0.requests_submitted()
    }

    /// Drops the stream but keeps its data: the bytes of every receive the kernel delivered
    /// and nobody took, those queued now and those the cancelled request still delivers
    /// before its last completion, are passed to `keep` in order (each buffer goes back to
    /// its ring right after). `keep` is dropped after that last completion (at once if
    /// nothing is armed), on whichever thread sees it, so a guard it owns is held until the
    /// kernel can deliver nothing more. Dropping the stream instead discards that data.
    ///
    /// This is how `ringsteal::net`'s receive streams give undelivered bytes back to their
    /// stream's next `read`.
    ///
    /// ```
    /// use std::io::Write;
    /// use std::sync::{Arc, Mutex};
    /// use ringsteal_rt::op::{self, SharedFd};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// let kept = Arc::new(Mutex::new(Vec::new()));
    /// rt.block_on(async {
    ///     let (rx, mut tx) = std::os::unix::net::UnixStream::pair().unwrap();
    ///     let mut stream = op::recv_multishot(&SharedFd::new(rx.into()));
    ///     tx.write_all(b"taken").unwrap();
    ///     assert_eq!(&stream.next().await.unwrap().unwrap()[..], b"taken");
    ///     tx.write_all(b"kept").unwrap();
    ///     let k = kept.clone();
    ///     stream.abandon_into(move |bytes| k.lock().unwrap().extend_from_slice(bytes));
    ///     // Once the cancelled request has ended, whatever it received was kept.
    ///     while Arc::strong_count(&kept) > 1 {
    ///         ringsteal_rt::op::nop().await.unwrap();
    ///     }
    /// });
    /// // "kept" was either received (and kept) or is still in the socket: never lost.
    /// assert!(kept.lock().unwrap().is_empty() || &kept.lock().unwrap()[..] == b"kept");
    /// ```
    pub fn abandon_into(mut self, mut keep: impl FnMut(&[u8]) + Send + 'static) {
        self.0
            .abandon(Box::new(move |item: Received, wakers: &mut Vec<Waker>| {
                let (res, buf) = item.into_parts();
                if let Some(buf) = buf {
                    if res > 0 {
                        keep(&buf);
                    }
                    buf.release_into(wakers);
                }
            }));
    }
}

/// The data of one receive request.
pub(crate) enum RecvSource {
    /// Multishot, selecting from a shard's buffer group.
    Provided { fd: SharedFd, group: Arc<BufGroup> },
    /// One receive into a heap buffer.
    Heap { fd: SharedFd, buf: Vec<u8> },
}

/// One receive completion: its result and the buffer it filled (or consumed: an end of file
/// may still carry one, which goes back when this is dropped).
pub(crate) struct Received {
    res: i32,
    buf: Option<RecvBuf>,
}

impl Received {
    pub(crate) fn new(res: i32, buf: Option<RecvBuf>) -> Self {
        Self { res, buf }
    }

    pub(crate) fn into_parts(self) -> (i32, Option<RecvBuf>) {
        (self.res, self.buf)
    }
}

impl Release for Received {
    fn release(self, wakers: &mut Vec<Waker>) {
        if let Some(buf) = self.buf {
            buf.release_into(wakers);
        }
    }
}

// SAFETY: the provided form names only the descriptor and a buffer group (registered on the
// ring the request is submitted to, and kept registered until the shard's last CQE); the
// heap form points into `buf`, owned by the source. Both end with one CQE without F_MORE.
unsafe impl Source for RecvSource {
    type Item = Received;

    fn fd(&self) -> RawFd {
        match self {
            RecvSource::Provided { fd, .. } | RecvSource::Heap { fd, .. } => fd.as_raw_fd(),
        }
    }

    fn prepare(&mut self) -> io_uring_sqe {
        match self {
            RecvSource::Provided { fd, group } => {
                opcode::recv_multishot(fd.as_raw_fd(), group.id(), 0)
            }
            RecvSource::Heap { fd, buf } => {
                let len = crate::op::limits::sqe_len(buf.capacity());
                opcode::recv(fd.as_raw_fd(), buf.as_mut_ptr(), len, 0)
            }
        }
    }

    unsafe fn item(&self, res: i32, flags: u32) -> Received {
        let buf = match self {
            // SAFETY: a CQE of a request that selected from `group` on its own ring, once.
            RecvSource::Provided { group, .. } => unsafe { group.take(res, flags) },
            RecvSource::Heap { .. } => None,
        };
        Received { res, buf }
    }

    unsafe fn last(&mut self, res: i32, flags: u32) -> Received {
        match self {
            RecvSource::Heap { buf, .. } if res > 0 => {
                let mut data = std::mem::take(buf);
                // SAFETY: the kernel wrote `res` bytes, at most the capacity it was given.
                unsafe { data.set_len((res as usize).min(data.capacity())) };
                Received {
                    res,
                    buf: Some(RecvBuf::heap(data)),
                }
            }
            // SAFETY: forwarded from the caller.
            _ => unsafe { self.item(res, flags) },
        }
    }
}

impl ReceiveSource for RecvSource {
    type Out = RecvBuf;

    fn for_shard(fd: SharedFd, shard: &Shard) -> Self {
        match recv_group(shard) {
            Some(group) => RecvSource::Provided { fd, group },
            None => Self::heap(fd, shard),
        }
    }

    fn heap(fd: SharedFd, shard: &Shard) -> Self {
        RecvSource::Heap {
            fd,
            buf: Vec::with_capacity(shard.shared.config.recv_buf_len as usize),
        }
    }

    fn event(item: Received) -> Event<RecvBuf> {
        recv_event(item.res, item.buf)
    }

    fn group(self) -> Option<Arc<BufGroup>> {
        match self {
            RecvSource::Provided { group, .. } => Some(group),
            RecvSource::Heap { .. } => None,
        }
    }
}

/// What a receive's completion `res` with the buffer it named means: data, the end of the
/// stream, the group ran dry (`ENOBUFS`), or an error. For the receive streams and the
/// single receive of a stream's `read_buf` (`recv_once.rs`).
pub(crate) fn recv_event(res: i32, buf: Option<RecvBuf>) -> Event<RecvBuf> {
    match (res, buf) {
        (n, Some(buf)) if n > 0 => Event::Data(buf),
        (n, None) if n > 0 => Event::Failed(io::Error::other(
            "a receive completed with data but named no buffer",
        )),
        (0, _) => Event::Eof,
        (e, _) if e == -libc::ENOBUFS => Event::NoBuffers,
        (e, _) => Event::Failed(io::Error::from_raw_os_error(-e)),
    }
}
