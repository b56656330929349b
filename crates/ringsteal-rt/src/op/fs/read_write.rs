//! `IORING_OP_READ` and `IORING_OP_WRITE` at an offset, with owned buffers.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::position::PositionMend;
use crate::buf::{BufResult, IoBuf, IoBufMut};
use crate::op::limits::sqe_len;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Reads into `buf` (up to its capacity) from `fd` at `pos` (`u64::MAX`: the file position).
/// Yields the byte count (0 at end of file) and the buffer, its initialised length extended.
pub fn read_at<B: IoBufMut>(fd: &SharedFd, buf: B, pos: u64) -> Op<ReadAt<B>> {
    Op::new(ReadAt::new(fd, buf, pos))
}

/// The operation of [`read_at`]: yields the byte count and the buffer.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("readat");
///     op::write_at(&file, "0123456789", 0).await.0.unwrap();
///     let (n, buf) = op::read_at(&file, Vec::with_capacity(4), 6).await;
///     assert_eq!(&buf[..n.unwrap()], b"6789");
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct ReadAt<B> {
    fd: SharedFd,
    buf: B,
    pos: u64,
}

impl<B: IoBufMut> ReadAt<B> {
    /// The operation's data, to wrap (e.g. in [`InLane`](crate::io::InLane)) before
    /// [`Op::new`]; [`read_at`] is `Op::new(ReadAt::new(..))`.
    pub fn new(fd: &SharedFd, buf: B, pos: u64) -> Self {
        ReadAt {
            fd: fd.clone(),
            buf,
            pos,
        }
    }
}

// SAFETY: the SQE points into `buf`, which the op owns (stable storage, IoBufMut contract).
unsafe impl<B: IoBufMut> Operation for ReadAt<B> {
    type Output = BufResult<usize, B>;

    #[inline]
    fn prepare(&mut self) -> Sqes {
        let len = sqe_len(self.buf.bytes_total());
        Sqes::One(opcode::read(
            self.fd.as_raw_fd(),
            self.buf.stable_mut_ptr(),
            len,
            self.pos,
        ))
    }

    #[inline]
    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let res = cqe_result(results[0].0).map(|n| {
            // The kernel reads at most the length asked for; clamped all the same, so that
            // a count past the buffer could never mark memory beyond it initialised.
            let n = (n as usize).min(self.buf.bytes_total());
            // SAFETY: the kernel wrote n bytes at the start of the buffer.
            unsafe { self.buf.set_init(n) };
            n
        });
        (res, self.buf)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }

    /// On a descriptor that [`completes_on_its_own`](SharedFd::completes_on_its_own), at any
    /// offset (io_uring ignores the offset of a pipe or a socket, which may wait for ever).
    fn holds_paused_clock(&self) -> bool {
        self.fd.completes_on_its_own()
    }
}

/// Writes the initialised bytes of `buf` to `fd` at `pos` (`u64::MAX`: the file position,
/// e.g. for `O_APPEND`). Yields the byte count (possibly short) and the buffer.
///
/// At the position of a regular file or block device, the position is read (`lseek`) as
/// the write is submitted, and moved over the bytes written if the write comes back short
/// and the kernel left it where it was (io_uring does, when its worker's retry of the rest
/// fails; the next write would then overwrite them). Keep other requests at the position
/// out meanwhile, as a `File`'s write lane does.
pub fn write_at<B: IoBuf>(fd: &SharedFd, buf: B, pos: u64) -> Op<WriteAt<B>> {
    Op::new(WriteAt::new(fd, buf, pos))
}

/// The operation of [`write_at`]: yields the byte count written (it may be short) and
/// the buffer.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("writeat");
///     let (n, buf) = op::write_at(&file, b"hello".to_vec(), 3).await;
///     assert_eq!((n.unwrap(), buf.len()), (5, 5));
///     let (n, got) = op::read_at(&file, Vec::with_capacity(16), 0).await;
///     assert_eq!(&got[..n.unwrap()], b"\0\0\0hello"); // a hole before offset 3
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct WriteAt<B> {
    fd: SharedFd,
    buf: B,
    pos: u64,
    mend: PositionMend,
}

impl<B: IoBuf> WriteAt<B> {
    /// The operation's data, to wrap before [`Op::new`].
    pub fn new(fd: &SharedFd, buf: B, pos: u64) -> Self {
        WriteAt {
            fd: fd.clone(),
            buf,
            pos,
            mend: PositionMend::default(),
        }
    }
}

// SAFETY: the SQE points into `buf`, which the op owns.
unsafe impl<B: IoBuf> Operation for WriteAt<B> {
    type Output = BufResult<usize, B>;

    #[inline]
    fn prepare(&mut self) -> Sqes {
        let len = sqe_len(self.buf.bytes_init());
        self.mend = PositionMend::before(&self.fd, self.pos);
        Sqes::One(opcode::write(
            self.fd.as_raw_fd(),
            self.buf.stable_ptr(),
            len,
            self.pos,
        ))
    }

    #[inline]
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        let requested = sqe_len(self.buf.bytes_init()) as usize;
        self.mend.after(&self.fd, results[0].0, requested);
        (cqe_result(results[0].0).map(|n| n as usize), self.buf)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.buf)
    }

    /// On a descriptor that [`completes_on_its_own`](SharedFd::completes_on_its_own), at any
    /// offset (io_uring ignores the offset of a pipe or a socket, which may wait for ever).
    fn holds_paused_clock(&self) -> bool {
        self.fd.completes_on_its_own()
    }
}
