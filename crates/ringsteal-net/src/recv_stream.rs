//! [`RecvStream`]: a byte stream's incoming data as owned buffers, from one multishot
//! receive request (`ringsteal_rt::op::recv_multishot`), holding the stream's read lane.
//!
//! The lane keeps the stream's reads in order (ADR-0015): the receive stream acquires it on
//! its first poll, first yields any bytes an abandoned read left in it, and keeps it while
//! its request may still deliver. When it is dropped with a request armed, what the kernel
//! delivered and the application did not take (queued now, or delivered until the
//! cancelled request's last completion) goes back into the lane, in order, and the lane is
//! released only after that last completion: the next `read` returns those bytes first, and
//! nothing is lost or reordered.
//!
//! May not: know the address family, or submit anything but through the op layer.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use ringsteal_rt::buf::RecvBuf;
use ringsteal_rt::io::{AcquireOwned, Lane, LaneGuard};
use ringsteal_rt::op::{self, SharedFd};

use crate::inline::StreamHints;

/// Most leftover bytes yielded in one buffer (a cancelled `read_exact` may have left many).
const LEFTOVER_CHUNK: usize = 64 * 1024;

/// The data arriving on a TCP or Unix stream, as owned buffers: from
/// [`TcpStream::recv_stream`](crate::TcpStream::recv_stream),
/// [`UnixStream::recv_stream`](crate::UnixStream::recv_stream) or a read half's.
///
/// One multishot `IORING_OP_RECV` delivers buffers as data arrives, with no request per
/// read: each is a [`RecvBuf`], a provided buffer of the polling shard (lent back to it when
/// dropped; [`Builder::recv_buffers`](ringsteal_rt::Builder::recv_buffers) sizes them) or,
/// where the runtime has no multishot receive or buffer rings, a heap buffer from a
/// single-shot receive. A stream that finds its shard's provided buffers all taken receives
/// into heap buffers, one receive at a time, until half are back, without losing or
/// reordering data. `None` is end of stream; an error ends it too.
///
/// The request is armed at the stream's first poll; from then on it keeps receiving while
/// nobody polls the stream: what arrives waits in it, in
/// the shard's provided buffers. So a stream left unpolled while its peer keeps sending
/// (its task waits for a slow write, say) takes every buffer of its shard, and the shard's
/// other receive streams receive into heap buffers meanwhile; drop it instead (its bytes go
/// back to the stream's next read) and make a new one to read again.
///
/// While it lives (from its first poll), the stream's other reads (`read`, `read_exact`,
/// `peek`, another receive stream) wait: it holds the stream's read side. Dropping it gives
/// every byte the kernel delivered to it and nobody took back to the stream, and the next
/// read returns them first: switching between a receive stream and `read` loses nothing.
/// Writes are not affected. `poll_next` has the signature of `futures::Stream::poll_next`.
///
/// Its request holds the socket: while the receive stream lives, dropping the
/// `TcpStream`/`UnixStream` does not close the connection, and the peer sees no end of
/// stream. The connection closes once both are dropped. (Dropping the write half of a split
/// stream still shuts its side down, as tokio's does: the peer then sees end of stream.)
///
/// ```
/// use ringsteal_net::UnixStream;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = UnixStream::pair()?;
///     a.write_all(b"first".to_vec()).await.0?;
///     let mut data = b.recv_stream();
///     let buf = data.next().await.unwrap()?; // a RecvBuf: owned, lent back on drop
///     assert_eq!(&buf[..], b"first");
///     a.write_all(b"second".to_vec()).await.0?;
///     // Whatever the stream received and we did not take goes back to `b`.
///     drop(data);
///     let (res, rest) = b.read_exact(vec![0; 6]).await;
///     res?;
///     assert_eq!(rest, b"second");
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct RecvStream {
    lane: Lane,
    /// Waiting for the read lane: kept across polls, so the stream keeps its place in the
    /// queue (a fresh `acquire()` per poll would give it up at every `Pending`).
    waiting: Option<AcquireOwned>,
    guard: Option<LaneGuard>,
    receives: Option<op::RecvStream>,
    ended: bool,
    /// The stream's hints: data delivered here ends a run of writes. They also count the
    /// receive streams alive, until this one has ended or is dropped (`counted`).
    hints: StreamHints,
    counted: bool,
}

impl RecvStream {
    pub(crate) fn new(fd: &SharedFd, lane: &Lane, hints: &StreamHints) -> Self {
        hints.count_receive_stream(true);
        Self {
            counted: true,
            lane: lane.clone(),
            waiting: None,
            guard: None,
            receives: Some(op::recv_multishot(fd)),
            ended: false,
            hints: hints.clone(),
        }
    }

    /// The next buffer of data (or the error that ended the stream); `None` at end of
    /// stream. The first poll waits for the stream's other reads to finish.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<RecvBuf>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let guard = match &mut self.guard {
            Some(guard) => guard,
            None => {
                let lane = &self.lane;
                let waiting = self.waiting.get_or_insert_with(|| lane.acquire_owned());
                let guard = std::task::ready!(Pin::new(waiting).poll(cx));
                self.waiting = None;
                self.guard.insert(guard)
            }
        };
        self.hints.read();
        if guard.has_leftover() {
            let (_, kept) = guard.take_leftover(Vec::with_capacity(LEFTOVER_CHUNK));
            return Poll::Ready(Some(Ok(RecvBuf::from(kept))));
        }
        if let Some(end) = guard.take_end() {
            // An abandoned read met the stream's end (or a reset) before this stream began.
            self.ended = true;
            self.guard = None;
            self.uncount();
            return Poll::Ready(end.err().map(Err));
        }
        let receives = self.receives.as_mut().expect("present until dropped");
        let next = std::task::ready!(receives.poll_next(cx));
        if !matches!(next, Some(Ok(_))) {
            // The request has ended: nothing more can arrive through it, so the stream's
            // other reads may go on, and it may change hands (`into_std`).
            self.ended = true;
            self.guard = None;
            self.uncount();
        }
        Poll::Ready(next)
    }

    /// The next buffer of data (or the error that ended the stream); `None` at end of
    /// stream.
    pub async fn next(&mut self) -> Option<io::Result<RecvBuf>> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Receive requests submitted so far: 1 for a multishot receive the kernel never
    /// ended (more after running short of buffers: each heap receive meanwhile counts), one
    /// per buffer on the single-shot fallback.
    pub fn requests_submitted(&self) -> u64 {
        self.receives
            .as_ref()
            .map_or(0, op::RecvStream::requests_submitted)
    }

    /// No longer counted among the stream's live receive streams.
    fn uncount(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.hints.count_receive_stream(false);
        }
    }
}

impl Drop for RecvStream {
    fn drop(&mut self) {
        self.uncount();
        let Some(receives) = self.receives.take() else {
            return;
        };
        match self.guard.take() {
            // Holding the lane: what the request delivered and nobody took goes back into
            // it, in order, and the lane is held until the request's last completion.
            Some(mut guard) => receives.abandon_into(move |bytes| guard.keep(bytes)),
            // Never got the lane, so never armed: nothing to give back.
            None => drop(receives),
        }
    }
}

impl fmt::Debug for RecvStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvStream")
            .field("holds_read_side", &self.guard.is_some())
            .field("ended", &self.ended)
            .field("requests_submitted", &self.requests_submitted())
            .finish()
    }
}
