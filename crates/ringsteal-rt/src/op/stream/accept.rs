//! Multishot `IORING_OP_ACCEPT` (5.19): a stream of accepted connections from one SQE, and
//! its fallback, one single-shot accept at a time.
//!
//! Policy (ADR-0008): every completion is an owned descriptor the moment the kernel reports
//! it, so a connection accepted after the stream was dropped is closed, not leaked. No
//! address is taken: each completion of a multishot accept would overwrite the same storage,
//! so callers ask the descriptor (`getpeername`). When the kernel ends the request: with a
//! connection (the CQ was full) it is yielded and the accept re-armed at the next poll; with
//! `EMFILE`, `ENFILE`, `ENOBUFS` or `ENOMEM` the error is yielded and the accept re-armed
//! after a back-off (5 ms, doubling to 1 s, reset by the next connection), since nothing
//! signals when descriptors or memory free up; with an error that says the socket cannot
//! accept (`EBADF`, `ENOTSOCK`, `EINVAL`, `EOPNOTSUPP`, or `ECANCELED`) the error is yielded
//! and the stream ends; any other error (`ECONNABORTED`, `EPERM`, ...) is yielded and the
//! accept re-armed at the next poll.
//!
//! Accepting ahead is bounded: once [`ACCEPT_AHEAD`] connections wait untaken, the driver
//! cancels the request (`Source::AHEAD_LIMIT`); its `ECANCELED` end is the stream's own
//! pause, not an error, and the accept is re-armed once the consumer has taken what came
//! before it. Meanwhile new clients wait in the kernel's backlog, as with `accept()`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::task::{Context, Poll};
use std::time::Duration;

use ringsteal_uring::{io_uring_sqe, opcode};

use super::cell::Source;
use super::{not_on_shard, Multishot, Polled};
use crate::features::Feature;
use crate::op::{cqe_result, SharedFd};
use crate::shard::context;
use crate::time::Sleep;

/// Connections accepted and not yet taken after which the multishot accept is cancelled
/// (and re-armed once they are taken): a consumer that stops taking them, a server at its
/// connection limit, leaves the next clients in the kernel's backlog instead of holding a
/// descriptor for each. The bound is soft: the cancel is submitted at the shard's next tick,
/// and until it lands the kernel may still take what arrives, and, each time it runs the
/// accept, every connection its backlog holds (as long as the CQ has room).
pub const ACCEPT_AHEAD: usize = 64;

/// First back-off after the kernel ran out of descriptors or memory.
const BACKOFF_FIRST: Duration = Duration::from_millis(5);
/// Longest back-off.
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Accepts connections on the listening socket `fd` as a stream: one multishot
/// `IORING_OP_ACCEPT` (re-armed whenever the kernel ends it), or single-shot accepts one at
/// a time where the runtime has no multishot accept. Each item is a new descriptor
/// (`SOCK_CLOEXEC`, blocking mode as the listener's `accept4` gives it) or an error; errors
/// that do not end the stream are `EMFILE`/`ENFILE`/`ENOBUFS`/`ENOMEM` (the stream retries
/// after a growing pause) and per-connection ones such as `ECONNABORTED`.
///
/// The request is submitted on the first poll, on the polling shard's ring; dropping the
/// stream cancels it, and connections accepted but not yet taken are closed. A stream that
/// is not polled holds about [`ACCEPT_AHEAD`] accepted connections at most: then the
/// request is paused until they are taken, and later clients wait in the kernel's backlog.
///
/// ```
/// use std::net::{TcpListener, TcpStream};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let addr = listener.local_addr().unwrap();
///     let mut incoming = op::accept_multishot(&SharedFd::new(listener.into()));
///     let clients: Vec<_> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
///     for _ in &clients {
///         let conn = incoming.next().await.unwrap().unwrap();
///         let conn = std::net::TcpStream::from(conn);
///         assert_eq!(conn.local_addr().unwrap(), addr);
///     }
/// });
/// ```
pub fn accept_multishot(fd: &SharedFd) -> AcceptStream {
    AcceptStream {
        source: Some(AcceptSource {
            fd: fd.clone(),
            multishot: true,
        }),
        request: Multishot::new(),
        backoff: None,
        next_pause: BACKOFF_FIRST,
        ended: false,
    }
}

/// The stream of [`accept_multishot`]: `poll_next`, or `next().await`.
///
/// ```
/// use std::net::{TcpListener, TcpStream};
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").unwrap();
///     let addr = listener.local_addr().unwrap();
///     let mut incoming: op::AcceptStream = op::accept_multishot(&SharedFd::new(listener.into()));
///     let _clients: Vec<_> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
///     for _ in 0..4 {
///         incoming.next().await.unwrap().unwrap();
///     }
///     // One multishot request took all four (one per connection on the fallback).
///     assert!(incoming.requests_submitted() >= 1);
/// });
/// ```
pub struct AcceptStream {
    /// The request's data while nothing is armed.
    source: Option<AcceptSource>,
    request: Multishot<AcceptSource>,
    /// Waiting before the next accept (descriptors or memory ran out).
    backoff: Option<Sleep>,
    next_pause: Duration,
    ended: bool,
}

pub(crate) struct AcceptSource {
    fd: SharedFd,
    multishot: bool,
}

// SAFETY: the SQE names only the descriptor (no address storage), which the source keeps
// open; a multishot or single-shot accept ends with one CQE without F_MORE.
unsafe impl Source for AcceptSource {
    type Item = io::Result<OwnedFd>;
    const AHEAD_LIMIT: Option<usize> = Some(ACCEPT_AHEAD);

    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn prepare(&mut self) -> io_uring_sqe {
        let fd = self.fd.as_raw_fd();
        if self.multishot {
            opcode::accept_multishot(fd, libc::SOCK_CLOEXEC)
        } else {
            opcode::accept(
                fd,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        }
    }

    unsafe fn item(&self, res: i32, _flags: u32) -> io::Result<OwnedFd> {
        // SAFETY: a non-negative result of ACCEPT is a new descriptor nobody else owns
        // (caller's contract: this CQE is delivered once).
        cqe_result(res).map(|fd| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }
}

/// What an accept error means for the stream.
enum AcceptError {
    /// The socket cannot accept: end the stream.
    Fatal,
    /// Out of descriptors or memory: retry after a pause.
    Exhausted,
    /// This connection failed: retry at once.
    Transient,
}

fn classify(e: &io::Error) -> AcceptError {
    match e.raw_os_error() {
        Some(libc::EBADF | libc::ENOTSOCK | libc::EINVAL | libc::EOPNOTSUPP | libc::ECANCELED) => {
            AcceptError::Fatal
        }
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => AcceptError::Exhausted,
        _ => AcceptError::Transient,
    }
}

fn is_cancelled(res: &io::Result<OwnedFd>) -> bool {
    matches!(res, Err(e) if e.raw_os_error() == Some(libc::ECANCELED))
}

impl AcceptStream {
    /// The next connection (or error); `None` once the stream has ended.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<OwnedFd>>> {
        loop {
            if self.request.is_armed() {
                return match self.request.poll_next(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Polled::Item(conn)) => Poll::Ready(Some(self.delivered(conn))),
                    Poll::Ready(Polled::Ended(last, source)) => {
                        self.source = Some(source);
                        if self.request.ended_at_bound() && is_cancelled(&last) {
                            // Paused at `ACCEPT_AHEAD`, and everything accepted is taken:
                            // re-arm.
                            continue;
                        }
                        Poll::Ready(Some(self.delivered(last)))
                    }
                };
            }
            if self.ended {
                return Poll::Ready(None);
            }
            if let Some(pause) = &mut self.backoff {
                if pause.poll_elapsed(cx).is_pending() {
                    return Poll::Pending;
                }
                self.backoff = None;
            }
            if let Err(e) = self.arm(cx) {
                self.ended = true;
                return Poll::Ready(Some(Err(e)));
            }
        }
    }

    /// The next connection (or error); `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<io::Result<OwnedFd>> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Drops the stream but keeps its connections: every connection the kernel accepted for
    /// it and nobody took, those queued now and those the cancelled request still delivers
    /// before its last completion, is passed to `keep` in order, on whichever thread sees
    /// it (usually the shard's, as it reaps: wake tasks from `keep` through
    /// [`wake_after_reap`](crate::op::wake_after_reap)). `keep` is dropped after that last
    /// completion (at once if nothing is armed). Dropping the stream instead closes them.
    ///
    /// This is how `ringsteal::net`'s `Incoming` hands them to its listener's next accept.
    ///
    /// ```
    /// use std::net::{TcpListener, TcpStream};
    /// use std::sync::{Arc, Mutex};
    /// use ringsteal_rt::op::{self, SharedFd};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// let kept = Arc::new(Mutex::new(Vec::new()));
    /// let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let listener = SharedFd::new(listener.into());
    /// rt.block_on(async {
    ///     let mut incoming = op::accept_multishot(&listener);
    ///     let _first = TcpStream::connect(addr).unwrap();
    ///     incoming.next().await.unwrap().unwrap();
    ///     let _second = TcpStream::connect(addr).unwrap();
    ///     let k = kept.clone();
    ///     incoming.abandon_into(move |conn| k.lock().unwrap().push(conn));
    ///     // Once the cancelled request has ended, what it accepted was kept.
    ///     while Arc::strong_count(&kept) > 1 {
    ///         op::nop().await.unwrap();
    ///     }
    /// });
    /// // The second client was either accepted (and kept) or is still in the backlog.
    /// let kept = kept.lock().unwrap().len();
    /// let backlog = std::net::TcpListener::from(listener.try_unwrap().unwrap());
    /// backlog.set_nonblocking(true).unwrap();
    /// assert_eq!(kept + usize::from(backlog.accept().is_ok()), 1);
    /// ```
    pub fn abandon_into(mut self, mut keep: impl FnMut(OwnedFd) + Send + 'static) {
        self.request.abandon(Some(Box::new(
            move |conn: io::Result<OwnedFd>, _: &mut _| {
                if let Ok(conn) = conn {
                    keep(conn);
                }
            },
        )));
    }

    /// Accept requests submitted so far: 1 for a multishot accept the kernel never ended,
    /// one per connection on the single-shot fallback.
    pub fn requests_submitted(&self) -> u64 {
        self.request.armings()
    }

    /// Applies the policy to one delivered result.
    fn delivered(&mut self, res: io::Result<OwnedFd>) -> io::Result<OwnedFd> {
        match &res {
            Ok(_) => self.next_pause = BACKOFF_FIRST,
            Err(e) => match classify(e) {
                AcceptError::Fatal => self.ended = true,
                AcceptError::Exhausted if !self.request.is_armed() => {
                    self.backoff = Some(crate::time::sleep(self.next_pause));
                    self.next_pause = (self.next_pause * 2).min(BACKOFF_MAX);
                }
                AcceptError::Exhausted | AcceptError::Transient => {}
            },
        }
        res
    }

    /// Submits the next accept on the current shard.
    fn arm(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let mut source = self
            .source
            .take()
            .expect("an unarmed stream keeps its source");
        context::with_shard(|shard| {
            let Some(shard) = shard else {
                return Err(not_on_shard());
            };
            source.multishot = shard.shared.features.supports(Feature::MultishotAccept);
            self.request
                .arm(shard, source, cx.waker())
                .map_err(|(source, e)| {
                    self.source = Some(source);
                    e
                })
        })
    }
}

impl std::fmt::Debug for AcceptStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcceptStream")
            .field("armed", &self.request.is_armed())
            .field("requests_submitted", &self.request.armings())
            .field("ended", &self.ended)
            .finish()
    }
}
