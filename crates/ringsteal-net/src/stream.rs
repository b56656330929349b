//! [`StreamCore`]: what a connected byte-stream socket (TCP, Unix) is made of — its
//! descriptor and one [`Lane`] per direction — and its I/O: io_uring requests, or inline
//! system calls where the stream's hints say the socket will serve one at once (`inline`).
//!
//! Every read holds the read lane from before it is submitted to its last completion, and
//! every write the write lane (see `ringsteal_rt::io::Lane`): a read or write whose future is
//! dropped keeps its lane until the kernel is done with it, so the next one cannot overtake
//! it, and the bytes an abandoned read received are returned by the next read. `read_exact`,
//! `write_all` and `write_all_vectored` hold their lane for the whole call, so two tasks
//! using them on one stream never interleave their bytes.
//!
//! May not: know the address family (the TCP and Unix types wrap it).

use std::io;
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf, IoVecBufMut};
use ringsteal_rt::io::{
    read_buf_by, write_all_vectored_in_lane, AppendBuf, AsyncReadOwned, InLane, Lane, LaneGuard,
    PollParts, ProvidedRead, ProvidedReadOutput, ReadinessCache, SpliceEnd,
};
use ringsteal_rt::op::{RecvOp, RecvVectored, SendOp, SendVectored, SendZc, SharedFd};

use crate::inline::{self, Inline, StreamHints};
use crate::recv_stream::RecvStream;

mod readiness;
mod write_then_read;

/// Smallest write that [`write_all_zc`](crate::TcpStream::write_all_zc) and
/// [`send_zc`](crate::TcpStream::send_zc) send with `IORING_OP_SEND_ZC`; smaller ones are
/// plain sends. Zero-copy saves the copy into the socket buffer but pins the pages and
/// returns the buffer only after the peer acknowledged the data, which costs more than a
/// copy of a small buffer. Measured: ADR-0008's addendum has the figures.
///
/// ```
/// assert_eq!(ringsteal_net::SEND_ZC_MIN, 64 * 1024);
/// ```
pub const SEND_ZC_MIN: usize = 64 * 1024;

/// A connected stream socket: its descriptor and its read and write lanes. Clones (for the
/// halves of a split) share all three.
#[derive(Clone, Debug)]
pub(crate) struct StreamCore {
    /// What `ready` saw and no `try_` call has said `WouldBlock` to since (tokio's model),
    /// shared by the halves. Declared before `fd`: the last handle drops it (asking for the
    /// cancels of its polls) before its reference to the descriptor.
    readiness: Arc<ReadinessCache>,
    fd: SharedFd,
    read: Lane,
    write: Lane,
    /// What past transfers say about the next (whether to try them inline).
    hints: StreamHints,
}

impl StreamCore {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        Self::from_shared(SharedFd::new(fd))
    }

    pub(crate) fn from_shared(fd: SharedFd) -> Self {
        Self {
            readiness: Arc::default(),
            fd,
            read: Lane::new(),
            write: Lane::new(),
            hints: StreamHints::default(),
        }
    }

    pub(crate) fn fd(&self) -> &SharedFd {
        &self.fd
    }

    /// True if both are handles to the same stream (the halves of one split).
    pub(crate) fn same_stream(&self, other: &StreamCore) -> bool {
        self.fd.as_raw_fd() == other.fd.as_raw_fd()
    }

    /// The descriptor and the lanes of the directions a handle uses, for poll-based I/O.
    pub(crate) fn poll_parts(&self, read: bool, write: bool) -> PollParts {
        PollParts {
            fd: self.fd.clone(),
            read: read.then(|| self.read.clone()),
            write: write.then(|| self.write.clone()),
        }
    }

    pub(crate) fn splice_source(&self) -> SpliceEnd<'_> {
        SpliceEnd::new(&self.fd, &self.read)
    }

    pub(crate) fn splice_sink(&self) -> SpliceEnd<'_> {
        SpliceEnd::new(&self.fd, &self.write)
    }

    /// A read with the lane held that needs no ring request: from the lane's leftover bytes
    /// or the end an abandoned read met (a reset, the peer's end of stream: `take_kept`),
    /// or inline when the socket had bytes queued after the last read
    /// ([`try_inline_read`](Self::try_inline_read)). `Err` gives the buffer back for a
    /// `RECV`. (The callers await the `RECV` in their own bodies: a helper future per read
    /// cost the 64-byte round trip 5 % more instructions.)
    fn read_without_ring<B: IoBufMut>(
        &self,
        guard: &mut LaneGuard,
        mut buf: B,
    ) -> Result<BufResult<usize, B>, B> {
        if guard.has_kept() {
            match guard.take_kept(buf) {
                Ok(done) => return Ok(done),
                Err(b) => buf = b,
            }
        }
        match self.try_inline_read(&mut buf) {
            Inline::Done(n) => Ok((Ok(n), buf)),
            Inline::Failed(e) => Ok((Err(e), buf)),
            Inline::UseRing => Err(buf),
        }
    }

    /// Takes queued bytes into `buf` at once if the socket had bytes queued after the last
    /// read (`inline`). The read lane must be held, with no leftover bytes.
    fn try_inline_read<B: IoBufMut>(&self, buf: &mut B) -> Inline {
        let len = buf.bytes_total();
        if len == 0 || !self.hints.bytes_queued() {
            return Inline::UseRing;
        }
        // SAFETY: `IoBufMut`'s contract: `stable_mut_ptr` is valid for writes of
        // `bytes_total()` bytes while `buf` is alive, and the exclusive borrow keeps it alive
        // and unmoved until the slice is gone (at the end of this function); `len` is not 0,
        // so the pointer is not null.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(buf.stable_mut_ptr().cast::<MaybeUninit<u8>>(), len)
        };
        let got = inline::try_recv(self.fd.as_raw_fd(), dst);
        if let Inline::Done(n) = got {
            // SAFETY: the receive initialised the first n bytes (n <= len).
            unsafe { buf.set_init(n) };
            // A full buffer may have left more queued; a short one took all there was.
            self.hints.set_bytes_queued(n == len);
        }
        got
    }

    pub(crate) async fn read<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        self.hints.read();
        let mut guard = self.read.acquire().await;
        let buf = match self.read_without_ring(&mut guard, buf) {
            Ok(done) => return done,
            Err(buf) => buf,
        };
        let out = InLane::read(RecvOp::new(&self.fd, buf, 0), guard).await;
        self.hints.set_bytes_queued(out.socket_nonempty());
        out.into_parts().0
    }

    /// tokio's `read_buf`: one read, appended to `dst`, which stays with the caller. A read
    /// that has to wait receives into a provided buffer (`ProvidedRead`), which the kernel
    /// takes from the shard's group only when data arrives: a connection idle in
    /// `read_buf` holds no read buffer, as under tokio (a read buffer of its own held 4 KiB
    /// per idle connection). Kept bytes, bytes known to be queued, and a shard without
    /// provided buffers (or with none free) read into the thread's spare buffer instead.
    /// Dropped, it keeps what it received for the next read, as `read` does.
    pub(crate) async fn read_buf<A: AppendBuf + ?Sized>(&self, dst: &mut A) -> io::Result<usize> {
        self.hints.read();
        let mut guard = self.read.acquire().await;
        if guard.has_kept() || self.hints.bytes_queued() {
            // Kept bytes or end, or bytes the socket said it had: taken at once if they are
            // there. A hint that no longer holds (the last read took exactly what was
            // queued) or a spent inline streak goes on below, not into a ring read of the
            // spare buffer, which would sit in the kernel while the connection idles.
            let mut no_bytes_at_hand = false;
            let n = read_buf_by(dst, |spare| {
                std::future::ready(match self.read_without_ring(&mut guard, spare) {
                    Ok(done) => done,
                    Err(spare) => {
                        no_bytes_at_hand = true;
                        (Ok(0), spare)
                    }
                })
            })
            .await?;
            if !no_bytes_at_hand {
                return Ok(n);
            }
        }
        match ProvidedRead::new(&self.fd, guard).await {
            ProvidedReadOutput::Data {
                buf, more_queued, ..
            } => {
                self.hints.set_bytes_queued(more_queued);
                dst.append_bytes(&buf);
                return Ok(buf.len());
            }
            ProvidedReadOutput::Eof(_) => return Ok(0),
            ProvidedReadOutput::Failed(e, _) => return Err(e),
            ProvidedReadOutput::Unavailable(g) => guard = g,
        }
        read_buf_by(dst, |spare| async move {
            match self.read_without_ring(&mut guard, spare) {
                Ok(done) => done,
                Err(spare) => {
                    let out = InLane::read(RecvOp::new(&self.fd, spare, 0), guard).await;
                    self.hints.set_bytes_queued(out.socket_nonempty());
                    out.into_parts().0
                }
            }
        })
        .await
    }

    /// Holds the read lane throughout; if dropped, every byte it took goes back to the
    /// stream (`InLane::read_rest`), so a dropped `read_exact` loses nothing either.
    /// (`ringsteal_rt::io::read_exact_in_lane` is this loop for other types; with a future
    /// per part, it cost `stream_rtt` 2.5 % more instructions, so the stream keeps its own,
    /// and its own `write_all_by` for the same reason.)
    pub(crate) async fn read_exact<B: IoBufMut>(&self, buf: B) -> BufResult<(), B> {
        let want = buf.bytes_total();
        self.hints.read();
        let mut guard = self.read.acquire().await;
        let mut buf = buf;
        let mut filled = 0;
        while filled < want {
            // As `read`, into the rest of the buffer; an abandoned ring read gives back the
            // earlier bytes too (`InLane::read_rest`).
            let (res, rest) = match self.read_without_ring(&mut guard, buf.slice(filled..)) {
                Ok(done) => done,
                Err(rest) => {
                    let out = InLane::read_rest(RecvOp::new(&self.fd, rest, 0), guard).await;
                    self.hints.set_bytes_queued(out.socket_nonempty());
                    let (done, g) = out.into_parts();
                    guard = g;
                    done
                }
            };
            buf = rest.into_inner();
            match res {
                Ok(0) => return (Err(unexpected_eof()), buf),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return (Err(e), buf),
            }
        }
        (Ok(()), buf)
    }

    pub(crate) async fn readv<B: IoVecBufMut>(&self, bufs: B) -> BufResult<usize, B> {
        self.hints.read();
        let mut guard = self.read.acquire().await;
        if guard.has_leftover() {
            let (n, bufs) = guard.take_leftover_vectored(bufs);
            return (Ok(n), bufs);
        }
        let room = bufs.iovecs().iter().any(|v| v.iov_len > 0);
        if room {
            if let Some(end) = guard.take_end() {
                return (end, bufs);
            }
        }
        InLane::readv(RecvVectored::new(&self.fd, bufs, 0), guard)
            .await
            .into_parts()
            .0
    }

    pub(crate) async fn peek<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
        let mut guard = self.read.acquire().await;
        if guard.has_leftover() {
            let (n, buf) = guard.peek_leftover(buf);
            return (Ok(n), buf);
        }
        if let Some(end) = guard.take_end() {
            // A peek takes nothing: the end stays for the next read (the error is the
            // kernel's, which a peek of the socket would have taken the same way).
            match end {
                Ok(_) => guard.keep_end(None),
                Err(e) => return (Err(e), buf),
            }
            return (Ok(0), buf);
        }
        // A peek consumes nothing: an abandoned one has nothing to give back.
        InLane::other(RecvOp::new(&self.fd, buf, libc::MSG_PEEK), guard)
            .await
            .into_parts()
            .0
    }

    async fn write_with<B: IoBuf>(
        &self,
        guard: LaneGuard,
        buf: B,
    ) -> (BufResult<usize, B>, LaneGuard) {
        InLane::other(SendOp::new(&self.fd, buf, 0), guard)
            .await
            .into_parts()
    }

    /// Offers `buf` to the socket at once if this write continues a run of writes, or
    /// starts one on a stream that writes in runs (`inline`), and records the write. The
    /// write lane must be held.
    fn try_inline<B: IoBuf>(&self, buf: &B) -> Inline {
        if !self.hints.write_inline() {
            return Inline::UseRing;
        }
        inline::try_send(self.fd.as_raw_fd(), init_bytes(buf))
    }

    /// One write: an inline send if it continues a run of writes (or starts one on a stream
    /// that writes in runs) and the socket takes anything at once, else a `SEND`.
    pub(crate) async fn write<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        let guard = self.write.acquire().await;
        match self.try_inline(&buf) {
            Inline::Done(n) => (Ok(n), buf),
            Inline::Failed(e) => (Err(e), buf),
            Inline::UseRing => self.write_with(guard, buf).await.0,
        }
    }

    pub(crate) async fn write_all<B: IoBuf>(&self, buf: B) -> BufResult<(), B> {
        self.write_all_by(buf, false, None).await
    }

    /// Writes every byte of `buf` holding the write lane throughout, with plain sends or,
    /// if `zero_copy`, zero-copy ones from [`SEND_ZC_MIN`] bytes up. A plain write first
    /// offers the bytes inline (`inline`); what the socket does not take at once goes
    /// by ring.
    async fn write_all_by<B: IoBuf>(
        &self,
        buf: B,
        zero_copy: bool,
        held: Option<HeldWrite>,
    ) -> BufResult<(), B> {
        let want = buf.bytes_init();
        // One future for the whole call, the lane taken here or handed in: a helper future
        // for the part after the lane cost `stream_rtt` 0.8 % more instructions (6317 against
        // 6265 per round trip).
        let (mut guard, mut done, inline) = match held {
            None => {
                let guard = self.write.acquire().await;
                let inline = !zero_copy && want > 0 && self.hints.write_inline();
                (guard, 0, inline)
            }
            Some(h) => (h.guard, h.done, h.inline),
        };
        let mut buf = buf;
        if inline {
            match inline::try_send(self.fd.as_raw_fd(), init_bytes(&buf)) {
                Inline::Done(0) => return (Err(write_zero()), buf),
                Inline::Done(n) => done = n,
                Inline::Failed(e) => return (Err(e), buf),
                Inline::UseRing => {}
            }
        }
        while done < want {
            let rest = buf.slice(done..want);
            // The ops are awaited here, not through `write_with`/`send_zc_with`: a future is
            // copied whole when it is moved into place, and each wrapper kept its arguments
            // beside its op, doubling this future (520 bytes). The zero-copy op, large and
            // for large buffers only, is boxed.
            let ((res, slice), g) = if zero_copy && rest.bytes_init() >= SEND_ZC_MIN {
                Box::pin(InLane::other(SendZc::new(&self.fd, rest), guard))
                    .await
                    .into_parts()
            } else {
                InLane::other(SendOp::new(&self.fd, rest, 0), guard)
                    .await
                    .into_parts()
            };
            guard = g;
            buf = slice.into_inner();
            match res {
                Ok(0) => return (Err(write_zero()), buf),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return (Err(e), buf),
            }
        }
        (Ok(()), buf)
    }

    async fn writev_with<B: IoVecBuf>(
        &self,
        guard: LaneGuard,
        bufs: B,
    ) -> (BufResult<usize, B>, LaneGuard) {
        InLane::other(SendVectored::new(&self.fd, bufs), guard)
            .await
            .into_parts()
    }

    pub(crate) async fn writev<B: IoVecBuf>(&self, bufs: B) -> BufResult<usize, B> {
        let guard = self.write.acquire().await;
        self.writev_with(guard, bufs).await.0
    }

    pub(crate) async fn write_all_vectored<B: IoVecBuf>(&self, bufs: B) -> BufResult<(), B> {
        let guard = self.write.acquire().await;
        write_all_vectored_in_lane(guard, bufs, |guard, rest| self.writev_with(guard, rest)).await
    }

    /// The stream's data as owned buffers, from one multishot receive holding the read lane.
    pub(crate) fn recv_stream(&self) -> RecvStream {
        RecvStream::new(&self.fd, &self.read, &self.hints)
    }

    /// One send, holding the write lane until the kernel is done with the buffer: zero-copy
    /// from [`SEND_ZC_MIN`] bytes up (until the notification), a plain send below.
    async fn send_zc_with<B: IoBuf>(
        &self,
        guard: LaneGuard,
        buf: B,
    ) -> (BufResult<usize, B>, LaneGuard) {
        if buf.bytes_init() < SEND_ZC_MIN {
            return self.write_with(guard, buf).await;
        }
        InLane::other(SendZc::new(&self.fd, buf), guard)
            .await
            .into_parts()
    }

    pub(crate) async fn send_zc<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        let guard = self.write.acquire().await;
        self.send_zc_with(guard, buf).await.0
    }

    pub(crate) async fn write_all_zc<B: IoBuf>(&self, buf: B) -> BufResult<(), B> {
        self.write_all_by(buf, true, None).await
    }

    /// `shutdown(how)`, as a system call (it never blocks; the ring's `SHUTDOWN` always runs
    /// on a kernel worker thread, 16 times slower: `sockopt::shutdown`). Shutting down the
    /// write side waits for the write lane, so the FIN goes after every byte of earlier
    /// writes (abandoned ones included), and succeeds on a connection already gone
    /// (`ENOTCONN`: the peer reset it), as tokio's. Both sides at once goes at once, as
    /// std's does from another thread: it is how a task ends a connection whose writer waits
    /// for a peer that stopped reading (the write then fails, `BrokenPipe`), which waiting
    /// for that writer's lane would never do. Not a zero-copy write: its buffer sits in the
    /// send queue until the peer acknowledges it (the public docs say how to end one).
    pub(crate) async fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match how {
            Shutdown::Read | Shutdown::Both => crate::sockopt::shutdown(&self.fd, how),
            Shutdown::Write => {
                let _guard = self.write.acquire().await;
                match crate::sockopt::shutdown(&self.fd, how) {
                    // The connection is already gone (the peer reset it): the write side is
                    // shut either way, as tokio's `shutdown` (and the poll path's) says.
                    Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(()),
                    res => res,
                }
            }
        }
    }

    /// The descriptor, for `into_std`; duplicated if a request outside the lanes (a
    /// readiness poll) still holds it. Refused, with the core and the reason given back,
    /// while bytes could be lost: kept bytes of a cancelled read are buffered (std could
    /// not return them), or a read or write is in flight (a cancelled read may still
    /// receive bytes, and a cancelled write still send, after the handover).
    pub(crate) fn into_owned_fd(self) -> Result<io::Result<OwnedFd>, (Self, &'static str)> {
        // Held first: a cancelled read's bytes go back into the lane before it lets go, so
        // once the lane is seen free (Acquire), they are seen too. The other order could
        // miss bytes put back between the two checks.
        if self.read.is_held() || self.write.is_held() {
            return Err((
                self,
                "a read or write is in flight on this stream (a cancelled one until its shard \
                 has reaped the cancellation, or a receive stream); try again once it is done",
            ));
        }
        if self.hints.receive_stream_alive() {
            return Err((
                self,
                "a receive stream of this stream is alive (it would receive on the socket after \
                 the handover); drop it first",
            ));
        }
        if self.read.has_leftover() {
            return Err((
                self,
                "bytes received by a cancelled read are buffered in this stream; read them \
                 before converting it into a std stream",
            ));
        }
        Ok(into_owned(self.fd))
    }
}

/// The core as a reader by `&`, so the streams' inherent methods (which take `&self`) can
/// reach the traits' provided ones (`read_buf`).
impl AsyncReadOwned for &StreamCore {
    fn read<B: IoBufMut>(
        &mut self,
        buf: B,
    ) -> impl std::future::Future<Output = BufResult<usize, B>> + Send {
        let core: &StreamCore = self;
        core.read(buf)
    }

    fn read_buf<A: AppendBuf + ?Sized>(
        &mut self,
        buf: &mut A,
    ) -> impl std::future::Future<Output = io::Result<usize>> + Send {
        let core: &StreamCore = self;
        core.read_buf(buf)
    }
}

/// A `write_all` already under way when [`StreamCore::write_all_by`] takes it over: the
/// write lane is held, `done` bytes are sent, and the hints were asked whether to offer the
/// rest inline (`inline`; asking records the write, so it is asked once).
struct HeldWrite {
    guard: LaneGuard,
    done: usize,
    inline: bool,
}

/// The descriptor of `fd`, for an `into_std`: itself if nothing else holds it, a duplicate
/// if a cancelled request still does (it is closed when that request completes).
pub(crate) fn into_owned(fd: SharedFd) -> io::Result<OwnedFd> {
    match fd.try_unwrap() {
        Ok(fd) => Ok(fd),
        Err(shared) => dup(&shared),
    }
}

/// `dup(fd)`, close-on-exec.
fn dup(fd: &impl AsRawFd) -> io::Result<OwnedFd> {
    // SAFETY: plain system call; a non-negative result is a new descriptor nobody owns.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// The initialised bytes of `buf`, what a write sends.
pub(crate) fn init_bytes<B: IoBuf>(buf: &B) -> &[u8] {
    let len = buf.bytes_init();
    if len == 0 {
        // `IoBuf` allows a null pointer for an empty buffer (the kernel takes it with length
        // 0); a slice may not have one.
        return &[];
    }
    // SAFETY: `IoBuf`'s contract: `stable_ptr` points at `bytes_init()` initialised bytes,
    // valid while `buf` is alive and unchanged, which the shared borrow guarantees; `len`
    // is not 0, so the pointer is not null.
    unsafe { std::slice::from_raw_parts(buf.stable_ptr(), len) }
}

fn unexpected_eof() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the stream ended before the buffer was full",
    )
}

fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the socket accepted no bytes")
}
