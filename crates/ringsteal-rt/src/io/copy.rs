//! [`copy`]: everything from a reader to a writer, in the kernel with `IORING_OP_SPLICE`
//! through a pipe, or through a user-space buffer.
//!
//! The policy (ADR-0015, with the measurements): `copy` splices when both sides offer a
//! descriptor and the source is a regular file — the `sendfile` case, where the splice into
//! the pipe never waits for a peer. From a socket or a pipe it copies through a buffer: the
//! kernel runs a splice on one of its worker threads, which a splice from an idle socket
//! would hold until data arrives, one thread per idle connection of a proxy.
//! [`copy_spliced`] and [`copy_buffered`] choose explicitly.
//!
//! May not: reorder bytes: a source's leftover bytes go out before anything it splices.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::in_lane::InLane;
use super::provided::write_zero;
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

/// Copies everything `reader` yields until its end into `writer`, and yields the byte count.
/// Does not flush or shut down the writer.
///
/// Where both sides offer a descriptor ([`AsyncReadOwned::splice_source`],
/// [`AsyncWriteOwned::splice_sink`]) and the source is a regular file, the bytes move in the
/// kernel (`IORING_OP_SPLICE` into a pipe and out of it) without passing through user space;
/// otherwise through a 64 KiB buffer (see the module docs for why sockets are not spliced
/// from by default). Bytes the reader kept from a cancelled read go first either way.
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
    if let (Some(src), Some(dst)) = (reader.splice_source(), writer.splice_sink()) {
        if is_regular_file(src.fd()) {
            return splice_copy(src, dst).await;
        }
    }
    buffered_copy(reader, writer, buf_size).await
}

/// [`copy`] through the kernel whenever both sides offer a descriptor, sockets included
/// (through a buffer otherwise). A splice from a socket holds one of the kernel's worker
/// threads until data arrives: fine for a busy stream, costly for many idle ones.
pub async fn copy_spliced<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    if let (Some(src), Some(dst)) = (reader.splice_source(), writer.splice_sink()) {
        return splice_copy(src, dst).await;
    }
    buffered_copy(reader, writer, COPY_BUF).await
}

/// [`copy`] through a user-space buffer, whatever the two sides offer.
pub async fn copy_buffered<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncReadOwned + ?Sized,
    W: AsyncWriteOwned + ?Sized,
{
    buffered_copy(reader, writer, COPY_BUF).await
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
    let mut buf = Vec::with_capacity(buf_size);
    loop {
        buf.clear();
        let (res, b) = reader.read(buf).await;
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
        total += n as u64;
    }
}

/// Source → pipe → sink, all in the kernel. Each splice holds its side's lane, so it is
/// ordered with the side's own reads and writes.
async fn splice_copy(src: SpliceEnd<'_>, dst: SpliceEnd<'_>) -> io::Result<u64> {
    let (pipe_r, pipe_w) = pipe()?;
    let mut total = 0u64;
    loop {
        let n = fill_pipe(src, &pipe_w, &pipe_r).await?;
        if n == 0 {
            return Ok(total);
        }
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
                Err(e) => return Err(e),
            }
        }
        total += n as u64;
    }
}

/// Moves the next bytes of `src` into the (empty) pipe: its leftover first, then a splice.
async fn fill_pipe(src: SpliceEnd<'_>, pipe_w: &SharedFd, pipe_r: &SharedFd) -> io::Result<usize> {
    loop {
        let mut guard = src.lane().acquire().await;
        if guard.has_leftover() {
            // At most PIPE_BUF bytes: a pipe write that size into an empty pipe is whole.
            let (n, buf) = guard.take_leftover(Vec::with_capacity(libc::PIPE_BUF));
            drop(guard);
            let (res, _) = op::write_at(pipe_w, buf, u64::MAX).await;
            let written = res?;
            debug_assert_eq!(written, n);
            return Ok(written);
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
