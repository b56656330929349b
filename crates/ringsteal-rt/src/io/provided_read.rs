//! [`ProvidedRead`]: one receive into a provided buffer, holding a stream's read lane. The
//! kernel picks the buffer from the polling shard's group only when data arrives, so a read
//! that waits holds no memory: what lets a thousand idle connections blocked in `read_buf`
//! cost a thousand small requests, not a thousand read buffers. Abandoned, it keeps what it
//! received for the lane's next read, as [`InLane::read`](super::InLane::read) does.
//!
//! May not: read any other way (the caller does, with the guard given back, when there is no
//! provided buffer).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use ringsteal_uring::abi::IORING_CQE_F_SOCK_NONEMPTY;

use super::in_lane::keep_end;
use super::lane::LaneGuard;
use crate::buf::RecvBuf;
use crate::op::{recv_event, Event, Once, RecvOnce, SharedFd};

/// One `IORING_OP_RECV` on a socket that selects a provided buffer of the polling shard's
/// group (see [`Builder::recv_buffers`](crate::Builder::recv_buffers)), run while holding
/// the stream's read lane. Await it for a [`ProvidedReadOutput`], which gives the guard back.
///
/// Dropped before it completes, the receive is cancelled and the guard is held until its
/// completion: bytes it still received go back into the lane, ahead of anything later, and
/// an end of stream or an error it met is kept for the next read.
///
/// ```
/// use ringsteal_rt::io::{Lane, ProvidedRead, ProvidedReadOutput};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     let lane = Lane::new();
///     op::send(&b, b"hi".to_vec(), 0).await.0.unwrap();
///     let guard = lane.acquire().await;
///     match ProvidedRead::new(&a, guard).await {
///         ProvidedReadOutput::Data { buf, .. } => assert_eq!(&buf[..], b"hi"),
///         // A kernel or runtime without provided buffers: read another way.
///         ProvidedReadOutput::Unavailable(_guard) => {}
///         other => panic!("{other:?}"),
///     }
/// });
/// ```
pub struct ProvidedRead {
    request: RecvOnce,
    guard: Option<LaneGuard>,
}

/// What a [`ProvidedRead`] yields, each with the lane's guard.
///
/// ```
/// use ringsteal_rt::io::{Lane, ProvidedRead, ProvidedReadOutput};
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     drop(b); // the peer is gone: the read meets the end of the stream
///     let a = SharedFd::new(a.into());
///     let lane = Lane::new();
///     match ProvidedRead::new(&a, lane.acquire().await).await {
///         ProvidedReadOutput::Eof(_guard) => {}
///         ProvidedReadOutput::Unavailable(_guard) => {} // no provided buffers here
///         other => panic!("{other:?}"),
///     }
/// });
/// ```
#[derive(Debug)]
pub enum ProvidedReadOutput {
    /// At least one byte received.
    Data {
        /// The bytes, in a provided buffer (back to its ring when dropped).
        buf: RecvBuf,
        /// The socket still had bytes queued after them (`IORING_CQE_F_SOCK_NONEMPTY`).
        more_queued: bool,
        /// The lane's guard.
        guard: LaneGuard,
    },
    /// The peer shut down its sending side (end of stream).
    Eof(LaneGuard),
    /// The receive failed.
    Failed(io::Error, LaneGuard),
    /// No provided buffer to receive into: the shard has none (the kernel or the builder
    /// lacks them, or it was not polled on a shard), or none was free (`ENOBUFS`). Nothing
    /// was received; read another way.
    Unavailable(LaneGuard),
}

impl ProvidedRead {
    /// A receive on `fd` holding `guard`, submitted on the first poll.
    pub fn new(fd: &SharedFd, guard: LaneGuard) -> Self {
        Self {
            request: RecvOnce::new(fd),
            guard: Some(guard),
        }
    }
}

impl Future for ProvidedRead {
    type Output = ProvidedReadOutput;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ProvidedReadOutput> {
        let this = self.get_mut();
        // Checked before anything is submitted: polled again after it completed, it must not
        // receive again without the lane.
        assert!(
            this.guard.is_some(),
            "a ProvidedRead polled after it completed"
        );
        let done = match this.request.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(done) => done,
        };
        let guard = this.guard.take().expect("checked above");
        Poll::Ready(match done {
            Err(None) => ProvidedReadOutput::Unavailable(guard),
            Err(Some(e)) => ProvidedReadOutput::Failed(e, guard),
            Ok(Once { res, flags, buf }) => match recv_event(res, buf) {
                Event::Data(buf) => ProvidedReadOutput::Data {
                    buf,
                    more_queued: flags & IORING_CQE_F_SOCK_NONEMPTY != 0,
                    guard,
                },
                Event::Eof => ProvidedReadOutput::Eof(guard),
                Event::NoBuffers => ProvidedReadOutput::Unavailable(guard),
                Event::Failed(e) => ProvidedReadOutput::Failed(e, guard),
            },
        })
    }
}

impl Drop for ProvidedRead {
    fn drop(&mut self) {
        if !self.request.is_armed() {
            return; // not submitted, or completed: the guard (if still here) just goes
        }
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        // The completion, whenever it comes: its bytes and its end go back into the lane,
        // whose guard is dropped only after it.
        self.request.abandon(move |once: Once, wakers| {
            let res = if once.res >= 0 {
                Ok(once.res as usize)
            } else {
                Err(io::Error::from_raw_os_error(-once.res))
            };
            // A provided buffer always has room: `Ok(0)` is the end of the stream.
            keep_end(&res, 1, &mut guard);
            if let Some(buf) = once.buf {
                if once.res > 0 {
                    guard.unread(&buf);
                }
                buf.release_into(wakers);
            }
        });
    }
}
