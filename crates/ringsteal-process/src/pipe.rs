//! [`ChildStdin`], [`ChildStdout`], [`ChildStderr`]: the parent's ends of a child's pipes, read
//! and written with owned buffers through the ring (`IORING_OP_READ`/`WRITE` at the pipe's
//! position, `u64::MAX`).
//!
//! The pipes stay in blocking mode, as std creates them: io_uring never blocks a shard on one
//! (it retries a read or write when the pipe is ready, or on a kernel worker). The child gets
//! the other ends in the mode it expects. A write to a pipe whose reader is gone fails with
//! `BrokenPipe` and never kills the process with `SIGPIPE` (`sigpipe.rs` says how).
//!
//! A descriptor some other program left in non-blocking mode (a pipe adopted with `from_std`,
//! or the process's own standard streams, `stdio.rs`) may make io_uring fail a transfer with
//! `EAGAIN` rather than wait: older kernels did for pollable files (liburing issue 364), and
//! a file that cannot be polled still does. (Linux 6.18 here waits on non-blocking pipes and
//! terminals as on blocking ones.) Such a transfer waits for the descriptor to be ready
//! (`IORING_OP_POLL_ADD`) and is made again, holding its turn throughout, so callers never
//! see `WouldBlock`.
//!
//! Every method takes `&self`: one task may read stdout while another writes stdin. Reads of
//! one pipe, and writes of one pipe, take turns in a [`Lane`], as a TCP stream's do: a
//! `write_all` is never interleaved with another task's write, a write whose future was
//! dropped still goes before the next one, and the bytes of a read whose future was dropped
//! after it had read (a `select!` that took another branch, a `timeout` that lost the race)
//! go to the next read instead of being lost.

use std::future::Future;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::process::Stdio;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut, IoVecBuf};
use ringsteal_rt::io::{
    read_exact_in_lane, write_all_in_lane, write_all_vectored_in_lane, InLane, Lane, LaneGuard,
    ReadyAgain,
};
use ringsteal_rt::op::{Operation, ReadAt, SharedFd, WriteAt, WritevAt};

use crate::sigpipe;

/// The pipe's position: pipes have no offset, so every transfer is "at the current position".
const STREAM: u64 = u64::MAX;

/// How much `read_to_end` asks for at a time (a pipe holds 64 KiB by default).
const READ_CHUNK: usize = 64 * 1024;

/// The writing end of a child's stdin (set up with `Stdio::piped()`). Dropping it closes the
/// pipe (once no write is in flight), which the child reads as end of file.
///
/// ```
/// use ringsteal_process::{Command, Stdio};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
///     let stdin = child.stdin.take().unwrap();
///     let (res, _) = stdin.write_all(b"through cat".to_vec()).await;
///     res?;
///     drop(stdin); // end of file for cat
///     let out = child.wait_with_output().await?;
///     assert_eq!(out.stdout, b"through cat");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct ChildStdin {
    fd: SharedFd,
    /// The writes' turns (see the module docs).
    lane: Lane,
}

impl ChildStdin {
    pub(crate) fn from_owned(fd: OwnedFd) -> Self {
        Self {
            fd: SharedFd::new(fd),
            lane: Lane::new(),
        }
    }

    /// Adopts std's handle (e.g. from a child spawned by `std::process::Command`).
    pub fn from_std(stdin: std::process::ChildStdin) -> Self {
        Self::from_owned(stdin.into())
    }

    /// Writes the initialised bytes of `buf` (possibly fewer); yields the count and the
    /// buffer. `BrokenPipe` once the child has closed its end, even in a program that restored
    /// `SIGPIPE`'s default action (see the module docs).
    pub async fn write<B: IoBuf>(&self, buf: B) -> BufResult<usize, B> {
        write_in_pipe(&self.fd, &self.lane, buf).await
    }

    /// Writes every initialised byte of `buf`, or fails (`BrokenPipe` once the child has
    /// closed its end, `WriteZero` if the kernel accepts nothing). Holds the pipe's writes
    /// for the whole call: another task's write goes before or after all of it.
    pub async fn write_all<B: IoBuf>(&self, buf: B) -> BufResult<(), B> {
        write_all_in_pipe(&self.fd, &self.lane, buf).await
    }

    /// The shared descriptor, for the low-level op API.
    pub fn shared_fd(&self) -> &SharedFd {
        &self.fd
    }

    /// The descriptor and the writes' lane, for the I/O traits (`pipe_io.rs`).
    pub(crate) fn writing(&self) -> (&SharedFd, &Lane) {
        (&self.fd, &self.lane)
    }

    /// The descriptor, if no write is in flight on it (otherwise the handle comes back).
    pub fn into_owned_fd(self) -> Result<OwnedFd, Self> {
        let Self { fd, lane } = self;
        fd.try_unwrap().map_err(|fd| Self { fd, lane })
    }
}

/// One write of `buf`, in its turn.
pub(crate) async fn write_in_pipe<B: IoBuf>(
    fd: &SharedFd,
    lane: &Lane,
    buf: B,
) -> BufResult<usize, B> {
    write_in_lane(fd, lane.acquire().await, buf).await.0
}

/// Writes every initialised byte of `buf`, holding the write lane throughout.
pub(crate) async fn write_all_in_pipe<B: IoBuf>(
    fd: &SharedFd,
    lane: &Lane,
    buf: B,
) -> BufResult<(), B> {
    let guard = lane.acquire().await;
    write_all_in_lane(guard, buf, |guard, rest| write_in_lane(fd, guard, rest)).await
}

/// One vectored write, in its turn.
pub(crate) async fn writev_in_pipe<B: IoVecBuf>(
    fd: &SharedFd,
    lane: &Lane,
    bufs: B,
) -> BufResult<usize, B> {
    let guard = lane.acquire().await;
    when_ready(fd, libc::POLLOUT, bufs, guard, |bufs, guard| {
        write_op_in_lane(WritevAt::new(fd, bufs, STREAM), guard)
    })
    .await
    .0
}

/// Writes every initialised byte of `bufs`, in order, holding the write lane throughout:
/// another task's write goes before or after all of it (a length-delimited frame's header
/// and body stay together).
pub(crate) async fn write_all_vectored_in_pipe<B: IoVecBuf>(
    fd: &SharedFd,
    lane: &Lane,
    bufs: B,
) -> BufResult<(), B> {
    let guard = lane.acquire().await;
    write_all_vectored_in_lane(guard, bufs, |guard, rest| {
        when_ready(fd, libc::POLLOUT, rest, guard, |rest, guard| {
            write_op_in_lane(WritevAt::new(fd, rest, STREAM), guard)
        })
    })
    .await
}

/// One write of `buf` holding the write lane, which comes back with the result.
async fn write_in_lane<B: IoBuf>(
    fd: &SharedFd,
    guard: LaneGuard,
    buf: B,
) -> (BufResult<usize, B>, LaneGuard) {
    when_ready(fd, libc::POLLOUT, buf, guard, |buf, guard| {
        write_op_in_lane(WriteAt::new(fd, buf, STREAM), guard)
    })
    .await
}

/// Makes the transfer `attempt` (holding the lane, whose guard it gives back), and again
/// each time it fails with `EAGAIN` once `fd` is ready for `events` (see the module docs),
/// backing off after a few in a row (`ReadyAgain`). A failed wait ends it with the wait's
/// error.
pub(crate) async fn when_ready<B, F, Fut>(
    fd: &SharedFd,
    events: i16,
    mut buf: B,
    mut guard: LaneGuard,
    mut attempt: F,
) -> (BufResult<usize, B>, LaneGuard)
where
    F: FnMut(B, LaneGuard) -> Fut,
    Fut: Future<Output = (BufResult<usize, B>, LaneGuard)>,
{
    let mut again = ReadyAgain::new(events);
    loop {
        let ((res, back), back_guard) = attempt(buf, guard).await;
        if !matches!(&res, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            return ((res, back), back_guard);
        }
        if let Err(e) = again.wait(fd).await {
            return ((Err(e), back), back_guard);
        }
        (buf, guard) = (back, back_guard);
    }
}

/// A write request (plain or vectored) holding the write lane: `SIGPIPE` blocked on this
/// thread first, and a pending one discarded after `EPIPE` (`sigpipe.rs`).
async fn write_op_in_lane<T, B>(op: T, guard: LaneGuard) -> (BufResult<usize, B>, LaneGuard)
where
    T: Operation<Output = BufResult<usize, B>>,
{
    sigpipe::block_on_this_thread();
    let ((res, buf), guard) = InLane::other(op, guard).await.into_parts();
    if matches!(&res, Err(e) if e.raw_os_error() == Some(libc::EPIPE)) {
        sigpipe::discard_pending();
    }
    ((res, buf), guard)
}

/// One read into `buf` holding the read lane: bytes a dropped read kept come first, then
/// the end it met (the writer's close), once.
pub(crate) async fn read_in_pipe<B: IoBufMut>(
    fd: &SharedFd,
    lane: &Lane,
    buf: B,
) -> BufResult<usize, B> {
    let mut guard = lane.acquire().await;
    let buf = match guard.take_kept(buf) {
        Ok(done) => return done,
        Err(buf) => buf,
    };
    when_ready(fd, libc::POLLIN, buf, guard, |buf, guard| async move {
        InLane::read(ReadAt::new(fd, buf, STREAM), guard)
            .await
            .into_parts()
    })
    .await
    .0
}

/// A pipe that could not become a [`Stdio`] because an operation is still in flight on it
/// (a dropped read or write, until its shard has reaped the cancellation), or because bytes
/// a dropped read kept wait for the next read (they would be lost): the pipe, given
/// back unchanged. Converts into an `io::Error` (kind `Other`), so `?` works where the pipe is
/// not wanted back.
///
/// ```
/// use ringsteal_process::{ChildStdout, Command, PipeBusy, Stdio};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut child = Command::new("true").stdout(Stdio::piped()).spawn().unwrap();
///     let stdout = child.stdout.take().unwrap();
///     // Nothing in flight: the pipe becomes a Stdio for the next child.
///     let passed: Result<Stdio, PipeBusy<ChildStdout>> = stdout.try_into();
///     assert!(passed.is_ok());
///     child.wait().await.unwrap();
/// });
/// ```
pub struct PipeBusy<P>(P);

impl<P> PipeBusy<P> {
    /// The pipe, unchanged.
    pub fn into_pipe(self) -> P {
        self.0
    }
}

impl<P> std::fmt::Debug for PipeBusy<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PipeBusy(..)")
    }
}

impl<P> std::fmt::Display for PipeBusy<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "an operation is still in flight on this pipe, or bytes a dropped read kept wait \
             for the next read",
        )
    }
}

impl<P> std::error::Error for PipeBusy<P> {}

impl<P> From<PipeBusy<P>> for io::Error {
    fn from(e: PipeBusy<P>) -> Self {
        io::Error::other(e.to_string())
    }
}

macro_rules! reader {
    ($name:ident, $stream:literal, $std:ty, $fd_doc:literal) => {
        #[doc = concat!("The reading end of a child's ", $stream, " (set up with `Stdio::piped()`).")]
        /// Reads end (`Ok(0)`) once the child, and every process it passed the pipe to, has
        /// closed it.
        ///
        /// ```
        /// use ringsteal_process::{Command, Stdio};
        ///
        /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        /// rt.block_on(async {
        #[doc = concat!("    let mut child = Command::new(\"sh\").args([\"-c\", \"echo hi >&", $fd_doc, "\"])")]
        #[doc = concat!("        .", $stream, "(Stdio::piped()).spawn()?;")]
        #[doc = concat!("    let pipe = child.", $stream, ".take().unwrap();")]
        ///     let (res, text) = pipe.read_to_end(Vec::new()).await;
        ///     assert_eq!(res?, 3);
        ///     assert_eq!(text, b"hi\n");
        ///     assert!(child.wait().await?.success());
        ///     Ok::<_, std::io::Error>(())
        /// })
        /// .unwrap();
        /// ```
        #[derive(Debug)]
        pub struct $name {
            fd: SharedFd,
            /// The reads' turns, and the bytes a dropped read kept (see the module docs).
            lane: Lane,
        }

        impl $name {
            pub(crate) fn from_owned(fd: OwnedFd) -> Self {
                Self {
                    fd: SharedFd::new(fd),
                    lane: Lane::new(),
                }
            }

            /// Adopts std's handle (e.g. from a child spawned by `std::process::Command`).
            pub fn from_std(pipe: $std) -> Self {
                Self::from_owned(pipe.into())
            }

            /// Reads into `buf` (up to its capacity); yields the count (0 at end) and the
            /// buffer, its initialised length extended. Dropped after the kernel read, the
            /// bytes go to the next read (see the module docs).
            pub async fn read<B: IoBufMut>(&self, buf: B) -> BufResult<usize, B> {
                read_in_pipe(&self.fd, &self.lane, buf).await
            }

            /// Fills `buf` to its capacity, or fails with `UnexpectedEof` if the pipe ends
            /// first. Holds the pipe's reads for the whole call: dropped, it gives back every
            /// byte it took, to the next read.
            pub async fn read_exact<B: IoBufMut>(&self, buf: B) -> BufResult<(), B> {
                read_exact_in_pipe(&self.fd, &self.lane, buf).await
            }

            /// Appends everything up to end of file to `buf`; yields the count appended.
            /// (Dropped before the end, the bytes appended so far go with `buf`; only a read
            /// in flight keeps its own.)
            pub async fn read_to_end(&self, buf: Vec<u8>) -> BufResult<usize, Vec<u8>> {
                read_to_end(&self.fd, &self.lane, buf).await
            }

            /// The shared descriptor, for the low-level op API.
            pub fn shared_fd(&self) -> &SharedFd {
                &self.fd
            }

            /// The descriptor and the reads' lane, for [`read_to_end`] over either pipe and
            /// for the I/O traits (`pipe_io.rs`).
            pub(crate) fn reading(&self) -> (&SharedFd, &Lane) {
                (&self.fd, &self.lane)
            }

            /// The descriptor, if no read is in flight on it and no bytes of a dropped read
            /// wait for the next one (otherwise the handle comes back: they would be lost).
            pub fn into_owned_fd(self) -> Result<OwnedFd, Self> {
                let Self { fd, lane } = self;
                // Held first: a dropped read puts its bytes back before it lets go of the
                // lane, so once the lane is seen free, they are seen too.
                if lane.is_held() || lane.has_leftover() {
                    return Err(Self { fd, lane });
                }
                fd.try_unwrap().map_err(|fd| Self { fd, lane })
            }
        }
    };
}

reader!(ChildStdout, "stdout", std::process::ChildStdout, "1");
reader!(ChildStderr, "stderr", std::process::ChildStderr, "2");

/// A `read_exact` holding the read lane throughout, so that, dropped, it gives back every
/// byte it took (its earlier reads' included).
pub(crate) async fn read_exact_in_pipe<B: IoBufMut>(
    fd: &SharedFd,
    lane: &Lane,
    buf: B,
) -> BufResult<(), B> {
    let guard = lane.acquire().await;
    read_exact_in_lane(guard, buf, |mut guard, rest| async move {
        let rest = match guard.take_kept(rest) {
            Ok(done) => return (done, guard),
            Err(rest) => rest,
        };
        when_ready(fd, libc::POLLIN, rest, guard, |rest, guard| async move {
            InLane::read_rest(ReadAt::new(fd, rest, STREAM), guard)
                .await
                .into_parts()
        })
        .await
    })
    .await
}

pub(crate) async fn read_to_end(
    fd: &SharedFd,
    lane: &Lane,
    mut buf: Vec<u8>,
) -> BufResult<usize, Vec<u8>> {
    let start = buf.len();
    loop {
        if buf.capacity() - buf.len() < READ_CHUNK / 2 {
            if let Err(e) = buf.try_reserve(READ_CHUNK) {
                return (Err(io::Error::new(io::ErrorKind::OutOfMemory, e)), buf);
            }
        }
        let len = buf.len();
        let (res, slice) = read_in_pipe(fd, lane, buf.slice(len..)).await;
        buf = slice.into_inner();
        match res {
            Ok(0) => return (Ok(buf.len() - start), buf),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (Err(e), buf),
        }
    }
}

macro_rules! fd_traits {
    ($($name:ident),*) => {$(
        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.fd.as_raw_fd()
            }
        }

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                // SAFETY: the descriptor is open while `self` (which holds it) is borrowed.
                unsafe { BorrowedFd::borrow_raw(self.fd.as_raw_fd()) }
            }
        }

        /// Passes the pipe on to another child (`Command::stdin(...)`), if no op is in flight
        /// on it; otherwise the error gives the pipe back ([`PipeBusy::into_pipe`]), and
        /// converts into an `io::Error` for `?`.
        impl TryFrom<$name> for Stdio {
            type Error = PipeBusy<$name>;

            fn try_from(pipe: $name) -> Result<Stdio, PipeBusy<$name>> {
                pipe.into_owned_fd().map(Stdio::from).map_err(PipeBusy)
            }
        }
    )*};
}

fd_traits!(ChildStdin, ChildStdout, ChildStderr);

#[cfg(test)]
mod tests {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::time::Duration;

    use super::*;

    /// A transfer that fails with `WouldBlock` is made again once the descriptor is ready, with
    /// the buffer and the turn it gave back; any other outcome ends it. (The kernel here waits
    /// on non-blocking pipes itself, so the failures are made up; the wait is a real poll.)
    #[test]
    fn a_transfer_that_would_block_is_made_again_once_ready() {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two new descriptors into the array.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both are descriptors pipe2 just made, owned by nobody else.
        let (_read, write) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let fd = SharedFd::new(write);
        let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async {
            let lane = Lane::new();
            let attempts = AtomicUsize::new(0);
            let started = std::time::Instant::now();
            let guard = lane.acquire().await;
            let ((res, buf), guard) =
                when_ready(&fd, libc::POLLOUT, vec![7u8; 3], guard, |buf, guard| {
                    let n = attempts.fetch_add(1, SeqCst);
                    async move {
                        let res = if n < 6 {
                            Err(io::Error::from(io::ErrorKind::WouldBlock))
                        } else {
                            Ok(buf.len())
                        };
                        ((res, buf), guard)
                    }
                })
                .await;
            assert_eq!(res.unwrap(), 3);
            assert_eq!(
                buf,
                [7, 7, 7],
                "the buffer comes back through every attempt"
            );
            // Past the third, the retries waited on a timer too (1, 2 and 4 ms).
            assert_eq!(attempts.load(SeqCst), 7);
            assert!(
                started.elapsed() >= Duration::from_millis(3),
                "{:?}",
                started.elapsed()
            );
            drop(guard);

            // Another error ends it at once.
            let guard = lane.acquire().await;
            let ((res, _), _guard) =
                when_ready(&fd, libc::POLLOUT, (), guard, |buf, guard| async move {
                    (
                        (Err(io::Error::from(io::ErrorKind::BrokenPipe)), buf),
                        guard,
                    )
                })
                .await;
            assert_eq!(res.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        });
    }
}
