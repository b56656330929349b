//! [`copy`]: everything from a reader to a writer, in the kernel with `IORING_OP_SPLICE`
//! through a pipe, or through a user-space buffer.
//!
//! The policy (ADR-0015, with the measurements): `copy` splices when both sides offer a
//! descriptor and the source is a regular file — the `sendfile` case, where the splice into
//! the pipe never waits for a peer. From a socket or a pipe it copies through a buffer: the
//! kernel runs a splice on one of its worker threads, which a splice from an idle socket
//! would hold until data arrives, one thread per idle connection of a proxy.
//! [`copy_spliced`] and [`copy_buffered`] choose explicitly. A splice the kernel refuses
//! (`EINVAL` from a `/proc` file that cannot be spliced from, or a sink that cannot be
//! spliced into; no `IORING_OP_SPLICE`) has moved nothing: the copy goes on through a
//! buffer, after writing out what is already in its pipe, as std's `io::copy` falls back
//! from `copy_file_range`/`splice`.
//!
//! May not: reorder bytes: a source's leftover bytes go out before anything it splices.

use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::task::Poll;

use super::in_lane::InLane;
use super::provided::{buffer_with_capacity, write_zero};
use super::traits::{AsyncReadOwned, AsyncWriteOwned, SpliceEnd};
use crate::buf::IoBuf;
use crate::op::{self, Operation, SharedFd, Splice, Sqes};

/// Size of the buffer of a plain copy.
pub(crate) const COPY_BUF: usize = 64 * 1024;
/// Most bytes one splice moves into the pipe: the pipe is grown to this (`F_SETPIPE_SZ`,
/// within the default `fs.pipe-max-size`), so each round trip through the pipe moves up to
/// a megabyte. Measured: with the default 64 KiB pipe, splicing was about half as fast as
/// the buffered copy (ADR-0015).
const SPLICE_CHUNK: usize = 1024 * 1024;

/// Copies everything `reader` yields until its end into `writer`, flushes the writer (as
/// tokio's `copy` does: a `BufWriter` gives up its last bytes), and yields the byte count.
/// Does not shut down the writer. Through a buffer, it also flushes the writer whenever the
/// reader has nothing yet, as tokio's does, so a proxy's request or reply does not wait in a
/// buffering writer for the end of the stream.
///
/// Where both sides offer a descriptor ([`AsyncReadOwned::splice_source`],
/// [`AsyncWriteOwned::splice_sink`]) and the source is a regular file, the bytes move in the
/// kernel (`IORING_OP_SPLICE` into a pipe and out of it) without passing through user space;
/// otherwise through a 64 KiB buffer (see the module docs for why sockets are not spliced
/// from by default), and through the buffer too if the kernel refuses the splice. Bytes the
/// reader kept from a cancelled read go first either way.
///
/// Dropping the future loses the bytes already taken from the reader and not yet written.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let mut src: &[u8] = b"copied";
///     let mut dst = Vec::new();
///     let n = ringsteal_rt::io::copy(&mut src, &mut dst).await.unwrap();
///     assert_eq!((n, &dst[..]), (6, &b"copied"[..]));
///
///     // The writer is flushed at the end: nothing stays in a `BufWriter`.
///     let mut src: &[u8] = b"flushed";
///     let mut dst = ringsteal_rt::io::BufWriter::new(Vec::new());
///     ringsteal_rt::io::copy(&mut src, &mut dst).await.unwrap();
///     assert_eq!((dst.buffer(), &dst.get_ref()[..]), (&b""[..], &b"flushed"[..]));
/// });
/// ```
pub async fn copy<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    copy_through(reader, writer, COPY_BUF).await
}

/// [`copy`], with a buffer of `buf_size` bytes where it copies through one.
pub(crate) async fn copy_through<R, W>(
    reader: &mut R,
    writer: &mut W,
    buf_size: usize,
) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    let spliced = match (reader.splice_source(), writer.splice_sink()) {
        (Some(src), Some(dst)) if is_regular_file(src.fd()) => Some(splice_copy(src, dst).await?),
        _ => None,
    };
    let total = finish_buffered(reader, writer, spliced, buf_size).await?;
    writer.flush().await?;
    Ok(total)
}

/// What a copy still has to do after its splices, if any (`spliced`): nothing if they
/// reached the end; otherwise, the kernel having refused one, write out what is in the pipe
/// and copy the rest through a buffer. Yields the total count.
async fn finish_buffered<R, W>(
    reader: &mut R,
    writer: &mut W,
    spliced: Option<Spliced>,
    buf_size: usize,
) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    let moved = match spliced {
        Some(Spliced::ToTheEnd(total)) => return Ok(total),
        Some(Spliced::Refused { moved, pipe }) => {
            let held = pipe.bytes as u64;
            drain_pipe(pipe, writer).await?;
            moved + held
        }
        None => 0,
    };
    Ok(moved + buffered_copy(reader, writer, buf_size).await?)
}

/// [`copy`] through the kernel whenever both sides offer a descriptor, sockets included
/// (through a buffer otherwise). A splice from a socket holds one of the kernel's worker
/// threads until data arrives: fine for a busy stream, costly for many idle ones.
pub async fn copy_spliced<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    let spliced = match (reader.splice_source(), writer.splice_sink()) {
        (Some(src), Some(dst)) => Some(splice_copy(src, dst).await?),
        _ => None,
    };
    let total = finish_buffered(reader, writer, spliced, COPY_BUF).await?;
    writer.flush().await?;
    Ok(total)
}

/// [`copy`] through a user-space buffer, whatever the two sides offer.
pub async fn copy_buffered<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    let total = buffered_copy(reader, writer, COPY_BUF).await?;
    writer.flush().await?;
    Ok(total)
}

async fn buffered_copy<R, W>(reader: &mut R, writer: &mut W, buf_size: usize) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    if buf_size == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a copy through a buffer of 0 bytes would never move a byte",
        ));
    }
    let mut total = 0u64;
    // A size no allocation can have (`copy_bidirectional_with_sizes(.., usize::MAX, ..)`) is
    // `OutOfMemory`, not an abort.
    let mut buf = buffer_with_capacity(buf_size)?;
    // Written since the writer's last flush.
    let mut unflushed = false;
    loop {
        buf.clear();
        let (res, b) = if unflushed {
            let mut read = std::pin::pin!(reader.read(buf));
            let mut now = poll_once(read.as_mut()).await;
            if now.is_pending() {
                // A ring read is rarely done at its first poll: give the shard one turn to
                // take its completion in (a file's, a pipe's with bytes), so that only a
                // reader that really waits makes the writer flush.
                crate::yield_now().await;
                now = poll_once(read.as_mut()).await;
            }
            match now {
                Poll::Ready(out) => out,
                Poll::Pending => {
                    // The reader has nothing yet: what was written goes out before the wait,
                    // as tokio's copy flushes when its read would block (a buffering writer
                    // would otherwise hold a proxy's reply until the end of the stream).
                    writer.flush().await?;
                    unflushed = false;
                    read.await
                }
            }
        } else {
            reader.read(buf).await
        };
        buf = b;
        let n = match res {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (res, b) = writer.write_all(buf.slice(..n)).await;
        buf = b.into_inner();
        res?;
        unflushed = true;
        total += n as u64;
    }
}

/// Polls `fut` once, in the caller's context.
async fn poll_once<F: Future>(mut fut: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
}

/// How a splice copy ended.
enum Spliced {
    /// The source's end reached; the count.
    ToTheEnd(u64),
    /// The kernel refused a splice (it moved nothing): `moved` bytes are written out, and
    /// what the pipe holds (`pipe`) is not yet.
    Refused { moved: u64, pipe: PipeLeft },
}

/// The copy's pipe, with the bytes it holds that the sink has not taken.
struct PipeLeft {
    read_end: SharedFd,
    bytes: usize,
}

/// True for an error that says the kernel will not splice these descriptors, not that the
/// I/O failed: nothing moved, and a copy through a buffer can do what the splice could not.
fn splice_refused(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        )
}

/// Source → pipe → sink, all in the kernel. Each splice holds its side's lane, so it is
/// ordered with the side's own reads and writes.
async fn splice_copy(src: SpliceEnd<'_>, dst: SpliceEnd<'_>) -> io::Result<Spliced> {
    let (pipe_r, pipe_w) = pipe()?;
    let mut total = 0u64;
    loop {
        let n = match fill_pipe(src, &pipe_w, &pipe_r).await {
            Ok(0) => return Ok(Spliced::ToTheEnd(total)),
            Ok(n) => n,
            Err(e) if splice_refused(&e) => {
                let pipe = PipeLeft {
                    read_end: pipe_r,
                    bytes: 0,
                };
                return Ok(Spliced::Refused { moved: total, pipe });
            }
            Err(e) => return Err(e),
        };
        let mut left = n;
        while left > 0 {
            let guard = dst.lane().acquire().await;
            let out = InLane::other(
                PipeSplice {
                    splice: Splice::new(
                        &pipe_r,
                        u64::MAX,
                        dst.fd(),
                        u64::MAX,
                        left,
                        libc::SPLICE_F_MOVE,
                    ),
                    _other_end: pipe_w.clone(),
                },
                guard,
            )
            .await;
            match out.into_parts().0 {
                Ok(0) => return Err(write_zero()),
                Ok(m) => left -= m,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if splice_refused(&e) => {
                    let moved = total + (n - left) as u64;
                    let pipe = PipeLeft {
                        read_end: pipe_r,
                        bytes: left,
                    };
                    return Ok(Spliced::Refused { moved, pipe });
                }
                Err(e) => return Err(e),
            }
        }
        total += n as u64;
    }
}

/// Writes the bytes left in the copy's pipe to `writer`, in order: they left the source
/// already.
async fn drain_pipe<W: AsyncWriteOwned + ?Sized>(pipe: PipeLeft, writer: &mut W) -> io::Result<()> {
    let mut left = pipe.bytes;
    let mut buf = Vec::with_capacity(left.min(COPY_BUF));
    while left > 0 {
        buf.clear();
        // The pipe holds exactly `left` bytes and its write end is closed: this never waits.
        let (res, b) = op::read_at(&pipe.read_end, buf, u64::MAX).await;
        buf = b;
        let n = match res {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the copy's pipe ended before the bytes it held were read",
                ))
            }
            Ok(n) => n.min(left),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (res, b) = writer.write_all(buf.slice(..n)).await;
        buf = b.into_inner();
        res?;
        left -= n;
    }
    Ok(())
}

/// Moves the next bytes of `src` into the (empty) pipe: its leftover first, then a splice.
async fn fill_pipe(src: SpliceEnd<'_>, pipe_w: &SharedFd, pipe_r: &SharedFd) -> io::Result<usize> {
    loop {
        let mut guard = match src.waits_for() {
            Some(first) => {
                let _first = first.acquire().await;
                src.lane().acquire().await
            }
            None => src.lane().acquire().await,
        };
        if guard.has_leftover() {
            // At most PIPE_BUF bytes: a pipe write that size into an empty pipe is whole.
            let (n, buf) = guard.take_leftover(Vec::with_capacity(libc::PIPE_BUF));
            drop(guard);
            let (res, _) = op::write_at(pipe_w, buf, u64::MAX).await;
            let written = res?;
            debug_assert_eq!(written, n);
            return Ok(written);
        }
        if let Some(end) = guard.take_end() {
            // What an abandoned read met: the end of the source, or its error.
            return end;
        }
        let out = InLane::other(
            PipeSplice {
                splice: Splice::new(
                    src.fd(),
                    u64::MAX,
                    pipe_w,
                    u64::MAX,
                    SPLICE_CHUNK,
                    libc::SPLICE_F_MOVE,
                ),
                _other_end: pipe_r.clone(),
            },
            guard,
        )
        .await;
        match out.into_parts().0 {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            res => return res,
        }
    }
}

/// A splice into or out of the copy's pipe that also holds the pipe's other end until its
/// completion. Closing either end of a pipe takes the pipe's lock, which the kernel holds
/// while a splice waits for its socket (for data to read, or for room to write): had the
/// copy's future been dropped mid-splice, closing the other end would have blocked the
/// shard's thread until the socket moved, before the splice's cancel was even submitted.
/// Held here, the end is closed with the op, after the cancelled splice has completed.
struct PipeSplice {
    splice: Splice,
    _other_end: SharedFd,
}

// SAFETY: `Splice`'s SQE and completion, passed on unchanged (so `Splice`'s safety argument
// holds); the extra descriptor is only held.
unsafe impl Operation for PipeSplice {
    type Output = io::Result<usize>;
    const TIMED_OUT_RESULT: i32 = Splice::TIMED_OUT_RESULT;

    fn prepare(&mut self) -> Sqes {
        self.splice.prepare()
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        self.splice.complete(results)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        self.splice.fail(err)
    }
}

/// True if `fd` is a regular file (`fstat`).
fn is_regular_file(fd: &SharedFd) -> bool {
    // SAFETY: fstat writes into a local stat buffer; the descriptor is held open by `fd`.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
    }
}

/// A new pipe, both ends close-on-exec, grown to [`SPLICE_CHUNK`] where allowed.
fn pipe() -> io::Result<(SharedFd, SharedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both are new descriptors nobody else owns.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: plain fcntl on a descriptor we own. A refusal (a lower pipe-max-size) leaves
    // the default size, which only makes the splices smaller.
    unsafe {
        libc::fcntl(
            w.as_raw_fd(),
            libc::F_SETPIPE_SZ,
            SPLICE_CHUNK as libc::c_int,
        )
    };
    Ok((SharedFd::new(r), SharedFd::new(w)))
}
