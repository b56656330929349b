//! Poll-based I/O over io_uring readiness ([`PollStream`]): what the `futures-io`,
//! `tokio::io` and `hyper::rt` adapters (`ringsteal-compat`) are built on.
//!
//! A poll-based read lends its buffer for one call only, so it cannot be handed to an
//! io_uring request that outlives the call. Instead (ADR-0014): wait until the descriptor is
//! ready ([`Readiness`], a `POLL_ADD` on the shard's ring), then move the bytes with a
//! non-blocking system call straight between the socket and the caller's buffer (`sys.rs`).
//! A call that returns `Pending` has done nothing and holds nothing: no bytes taken, no
//! buffer referenced, no lane held.
//!
//! **With the owned-buffer API on the same stream** (its lanes, ADR-0015): each poll-based
//! read or write makes its system call under its direction's lane lock, while no request
//! holds the lane ([`Lane::poll_free`]), so it waits
//! behind an owned-buffer request in flight (an abandoned one included), serves the bytes an
//! abandoned read kept before asking the kernel, and is never overtaken or split by an
//! owned-buffer request. Sequential use of both APIs, in either order, is therefore exact.
//! Used concurrently from two tasks, each read or write is atomic and the stream order is
//! the order in which they took the lane, as with two tasks sharing one `&TcpStream`.
//!
//! A thread yields once after 64 transfers in a row that did not wait (`streak.rs`), as
//! tokio's coop budget makes a task do, so a socket that stays ready cannot hold its shard.
//!
//! Owns: the poll-based stream; `readiness.rs` the waiting, `sys.rs` the system calls.
//! May not: submit requests that reference caller memory.

mod readiness;
mod streak;
mod sys;
mod try_io;

pub use readiness::Readiness;
pub use try_io::{
    try_peek_from, try_peek_in_lane, try_read_in_lane, try_read_in_lane_uninit,
    try_read_vectored_in_lane, try_recv_from, try_recv_from_uninit, try_send_to, try_write_in_lane,
    try_write_vectored_in_lane,
};

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::task::{ready, Context, Poll};

use super::lane::Lane;
use crate::op::SharedFd;

/// A socket's descriptor and the lanes that order its reads and writes: what a type hands
/// to [`PollStream`] to be driven by readiness. `None` for a direction the handle cannot
/// use (the read half of a split stream has no write lane).
///
/// ```
/// use ringsteal_rt::io::{Lane, PollParts};
/// use ringsteal_rt::op::SharedFd;
///
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let parts = PollParts {
///     fd: SharedFd::new(a.into()),
///     read: Some(Lane::new()),
///     write: None,
/// };
/// assert!(parts.write.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct PollParts {
    /// The descriptor (a connected stream socket).
    pub fd: SharedFd,
    /// The lane of its reads, if this handle reads.
    pub read: Option<Lane>,
    /// The lane of its writes, if this handle writes.
    pub write: Option<Lane>,
}

/// A stream socket that poll-based I/O can drive: TCP and Unix streams and their owned
/// halves implement it (`ringsteal-net`).
///
/// ```
/// use ringsteal_rt::io::{Lane, PollParts, PollSource};
/// use ringsteal_rt::op::SharedFd;
///
/// struct MySocket(SharedFd, Lane, Lane);
/// impl PollSource for MySocket {
///     fn poll_parts(&self) -> PollParts {
///         PollParts { fd: self.0.clone(), read: Some(self.1.clone()), write: Some(self.2.clone()) }
///     }
/// }
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let s = MySocket(SharedFd::new(a.into()), Lane::new(), Lane::new());
/// assert!(s.poll_parts().read.is_some());
/// ```
pub trait PollSource {
    /// The descriptor and lanes, shared with `self` (clones of the same lanes).
    fn poll_parts(&self) -> PollParts;
}

struct Direction {
    lane: Lane,
    ready: Readiness,
}

impl Direction {
    fn new(lane: Option<Lane>, ready: impl FnOnce() -> Readiness) -> Option<Self> {
        lane.map(|lane| Direction {
            lane,
            ready: ready(),
        })
    }
}

/// A stream socket driven by readiness: `poll_read`, `poll_write`, `poll_flush` and
/// `poll_shutdown` with borrowed buffers, as the `futures-io`, `tokio::io` and `hyper::rt`
/// traits want them. Each read or write makes its system call under its direction's lane
/// lock ([`Lane::poll_free`]), which orders it with the owned-buffer API of the same stream
/// (ADR-0014).
///
/// * `poll_read` returns bytes the kernel had; `Pending` took none.
/// * `poll_write` returns only bytes the kernel took; `Pending` sent none, so a caller may
///   change its buffer before the next call (as h2 does).
/// * `poll_flush` has nothing of its own to flush; it waits until no owned-buffer write of
///   the stream is in flight.
/// * `poll_shutdown` sends the FIN (`shutdown(SHUT_WR)`) after every earlier write.
///
/// ```
/// use std::future::poll_fn;
/// use std::mem::MaybeUninit;
/// use ringsteal_rt::io::{Lane, PollParts, PollStream};
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let part = |s: std::os::unix::net::UnixStream| PollParts {
///         fd: SharedFd::new(s.into()),
///         read: Some(Lane::new()),
///         write: Some(Lane::new()),
///     };
///     let (mut a, mut b) = (PollStream::new(part(a)), PollStream::new(part(b)));
///     let n = poll_fn(|cx| a.poll_write(cx, b"ping")).await.unwrap();
///     assert_eq!(n, 4);
///     let mut buf = [MaybeUninit::uninit(); 16];
///     let n = poll_fn(|cx| b.poll_read(cx, &mut buf)).await.unwrap();
///     assert_eq!(n, 4);
///     poll_fn(|cx| a.poll_shutdown(cx)).await.unwrap();
///     assert_eq!(poll_fn(|cx| b.poll_read(cx, &mut buf)).await.unwrap(), 0, "end of stream");
/// });
/// ```
pub struct PollStream {
    fd: SharedFd,
    read: Option<Direction>,
    write: Option<Direction>,
}

impl PollStream {
    /// Drives `parts` by readiness. Both directions start maybe-ready.
    pub fn new(parts: PollParts) -> Self {
        let PollParts { fd, read, write } = parts;
        // Reads wait often (every request of a connection): one multishot poll, kept.
        // Writes wait only when the send buffer is full: a one-shot poll then.
        Self {
            read: Direction::new(read, || Readiness::multishot(&fd, Readiness::READ)),
            write: Direction::new(write, || Readiness::new(&fd, Readiness::WRITE)),
            fd,
        }
    }

    /// The descriptor.
    pub fn fd(&self) -> &SharedFd {
        &self.fd
    }

    /// Reads into `dst`: the bytes an abandoned owned-buffer read kept first, else what the
    /// socket has (`Ok(0)`: end of stream, or an empty `dst`). Pending until the socket is
    /// readable; a pending call has taken nothing. Only ever writes initialised bytes into
    /// `dst` (callers may pass an initialised slice viewed as `MaybeUninit`).
    pub fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        dst: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        streak::within_streak(cx, |cx| self.poll_read_now(cx, dst))
    }

    fn poll_read_now(
        &mut self,
        cx: &mut Context<'_>,
        dst: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        let Some(dir) = &mut self.read else {
            return Poll::Ready(Err(unsupported("read")));
        };
        if dst.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let fd = self.fd.as_raw_fd();
        loop {
            // Readiness first (it arms or drains the poll, outside the lane's lock), then,
            // under the lane's lock, the kept bytes or the system call: one lock per read,
            // and kept bytes are served even while the socket has nothing.
            let ready = dir.ready.poll_ready(cx);
            let read = ready!(dir.lane.poll_free(cx, |kept| {
                let n = kept.take_into(dst);
                if n > 0 {
                    return Read::Kept(n);
                }
                match ready {
                    Poll::Pending => Read::Wait,
                    Poll::Ready(Err(e)) => Read::Done(Err(e)),
                    Poll::Ready(Ok(())) => Read::Done(sys::recv(fd, dst, 0)),
                }
            }));
            match read {
                Read::Kept(n) => return Poll::Ready(Ok(n)),
                Read::Wait => return Poll::Pending,
                Read::Done(Ok(n)) => {
                    if n > 0 && n < dst.len() {
                        // Short: the socket is most likely drained. The next read waits for
                        // the kernel's word instead of spending a system call on EAGAIN.
                        dir.ready.clear_ready();
                    }
                    return Poll::Ready(Ok(n));
                }
                Read::Done(Err(e)) => ready!(retry(e, &mut dir.ready))?,
            }
        }
    }

    /// Writes from `src`, returning how many bytes the kernel took (possibly short). Pending
    /// until the socket has room; a pending call has sent nothing.
    pub fn poll_write(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        let fd = self.fd.as_raw_fd();
        self.poll_send(cx, src.len(), || sys::send(fd, src))
    }

    /// Writes from `bufs` in order with one `sendmsg`; as [`poll_write`](Self::poll_write).
    pub fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let fd = self.fd.as_raw_fd();
        // One `sendmsg` takes at most `IOV_MAX` slices: leading empty ones would use them up
        // and send nothing (read as `Ok(0)`, a write of zero bytes), and the count a full
        // send is judged by is that of the slices it was given.
        let first = bufs
            .iter()
            .position(|b| !b.is_empty())
            .unwrap_or(bufs.len());
        let bufs = &bufs[first..bufs.len().min(first + sys::IOV_MAX)];
        let want = bufs.iter().map(|b| b.len()).sum();
        self.poll_send(cx, want, || sys::send_vectored(fd, bufs))
    }

    fn poll_send(
        &mut self,
        cx: &mut Context<'_>,
        want: usize,
        send: impl FnMut() -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        streak::within_streak(cx, |cx| self.poll_send_now(cx, want, send))
    }

    fn poll_send_now(
        &mut self,
        cx: &mut Context<'_>,
        want: usize,
        mut send: impl FnMut() -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        let Some(dir) = &mut self.write else {
            return Poll::Ready(Err(unsupported("write")));
        };
        if want == 0 {
            return Poll::Ready(Ok(0));
        }
        loop {
            ready!(dir.ready.poll_ready(cx))?;
            // The send under the lane's lock: after any owned-buffer write in flight.
            match ready!(dir.lane.poll_free(cx, |_| send())) {
                Ok(n) => {
                    if n < want {
                        // Short: the send buffer is full; wait for room next time.
                        dir.ready.clear_ready();
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) => ready!(retry(e, &mut dir.ready))?,
            }
        }
    }

    /// Nothing is buffered here; ready once no owned-buffer write of the stream is in flight.
    pub fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(dir) = &mut self.write else {
            return Poll::Ready(Err(unsupported("write")));
        };
        ready!(dir.lane.poll_free(cx, |_| ()));
        Poll::Ready(Ok(()))
    }

    /// Sends the FIN (`shutdown(SHUT_WR)`) once no owned-buffer write of the stream is in
    /// flight: the peer reads end of stream after every byte written before.
    pub fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(dir) = &mut self.write else {
            return Poll::Ready(Err(unsupported("write")));
        };
        let fd = self.fd.as_raw_fd();
        dir.lane.poll_free(cx, |_| sys::shutdown_write(fd))
    }
}

impl std::fmt::Debug for PollStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollStream")
            .field("fd", &self.fd.as_raw_fd())
            .field("reads", &self.read.is_some())
            .field("writes", &self.write.is_some())
            .finish()
    }
}

/// What one step of [`PollStream::poll_read`] under the lane's lock came to.
enum Read {
    /// Bytes an abandoned owned-buffer read kept (the socket was not asked).
    Kept(usize),
    /// The socket is not ready and nothing was kept: wait for the readiness report.
    Wait,
    /// The system call's result (or the readiness wait's error).
    Done(io::Result<usize>),
}

/// What to do after a failed system call: `EAGAIN` clears readiness and goes round again
/// (`Ready(Ok)`), `EINTR` goes round again, anything else is the result.
fn retry(e: io::Error, ready: &mut Readiness) -> Poll<io::Result<()>> {
    match e.kind() {
        io::ErrorKind::WouldBlock => {
            ready.clear_ready();
            Poll::Ready(Ok(()))
        }
        io::ErrorKind::Interrupted => Poll::Ready(Ok(())),
        _ => Poll::Ready(Err(e)),
    }
}

fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("this half of the stream does not {what}"),
    )
}
