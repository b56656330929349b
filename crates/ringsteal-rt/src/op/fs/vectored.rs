//! `IORING_OP_READV` and `IORING_OP_WRITEV`: the iovec array lives in the op.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::position::PositionMend;
use crate::buf::{BufResult, IoVecBuf, IoVecBufMut};
use crate::op::limits::sqe_iovecs;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Reads into `bufs` in order from `fd` at `pos`.
pub fn readv_at<B: IoVecBufMut>(fd: &SharedFd, bufs: B, pos: u64) -> Op<ReadvAt<B>> {
    Op::new(ReadvAt {
        fd: fd.clone(),
        bufs,
        iovecs: Vec::new(),
        pos,
    })
}

/// The operation of [`readv_at`]: yields the total byte count and the buffers.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("readvat");
///     op::write_at(&file, "keyvalue", 0).await.0.unwrap();
///     let bufs = vec![Vec::with_capacity(3), Vec::with_capacity(5)];
///     let (n, bufs) = op::readv_at(&file, bufs, 0).await;
///     assert_eq!(n.unwrap(), 8);
///     assert_eq!((&bufs[0][..], &bufs[1][..]), (&b"key"[..], &b"value"[..]));
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct ReadvAt<B> {
    fd: SharedFd,
    bufs: B,
    iovecs: Vec<libc::iovec>,
    pos: u64,
}

// SAFETY: `iovecs` is a heap array owned by the op; its entries point into `bufs`.
unsafe impl<B: IoVecBufMut> Operation for ReadvAt<B> {
    type Output = BufResult<usize, B>;

    fn prepare(&mut self) -> Sqes {
        self.iovecs = sqe_iovecs(self.bufs.iovecs_mut());
        Sqes::One(opcode::readv(
            self.fd.as_raw_fd(),
            self.iovecs.as_ptr(),
            self.iovecs.len() as u32,
            self.pos,
        ))
    }

    fn complete(mut self, results: &[(i32, u32)]) -> Self::Output {
        let res = cqe_result(results[0].0).map(|n| {
            // SAFETY: the kernel filled n bytes across the buffers in order.
            unsafe { self.bufs.set_init(n as usize) };
            n as usize
        });
        (res, self.bufs)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.bufs)
    }

    /// On a descriptor that [`completes_on_its_own`](SharedFd::completes_on_its_own), at any
    /// offset (io_uring ignores the offset of a pipe or a socket, which may wait for ever).
    fn holds_paused_clock(&self) -> bool {
        self.fd.completes_on_its_own()
    }
}

// SAFETY: iovecs are plain (pointer, length) pairs into buffers the op owns.
unsafe impl<B: Send> Send for ReadvAt<B> {}
// SAFETY: as above.
unsafe impl<B: Send> Send for WritevAt<B> {}

/// Writes `bufs` in order to `fd` at `pos`.
pub fn writev_at<B: IoVecBuf>(fd: &SharedFd, bufs: B, pos: u64) -> Op<WritevAt<B>> {
    Op::new(WritevAt::new(fd, bufs, pos))
}

/// The operation of [`writev_at`]: yields the total byte count and the buffers.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = temp_file("writevat");
///     let lines = vec![b"one\n".to_vec(), b"two\n".to_vec()];
///     let (n, lines) = op::writev_at(&file, lines, 0).await;
///     assert_eq!((n.unwrap(), lines.len()), (8, 2));
/// });
/// # fn temp_file(name: &str) -> SharedFd {
/// #     let path = std::env::temp_dir().join(format!("ringsteal-doc-{name}-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
/// #     std::fs::remove_file(&path).unwrap();
/// #     SharedFd::new(f.into())
/// # }
/// ```
#[derive(Debug)]
pub struct WritevAt<B> {
    fd: SharedFd,
    bufs: B,
    iovecs: Vec<libc::iovec>,
    pos: u64,
    mend: PositionMend,
}

impl<B: IoVecBuf> WritevAt<B> {
    /// The operation's data, to wrap before [`Op::new`] (or in a lane: `io::InLane`);
    /// [`writev_at`] is this, wrapped.
    pub fn new(fd: &SharedFd, bufs: B, pos: u64) -> Self {
        WritevAt {
            fd: fd.clone(),
            bufs,
            iovecs: Vec::new(),
            pos,
            mend: PositionMend::default(),
        }
    }
}

// SAFETY: as for ReadvAt.
unsafe impl<B: IoVecBuf> Operation for WritevAt<B> {
    type Output = BufResult<usize, B>;

    fn prepare(&mut self) -> Sqes {
        self.iovecs = sqe_iovecs(self.bufs.iovecs());
        self.mend = PositionMend::before(&self.fd, self.pos);
        Sqes::One(opcode::writev(
            self.fd.as_raw_fd(),
            self.iovecs.as_ptr(),
            self.iovecs.len() as u32,
            self.pos,
        ))
    }

    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        let requested = self.iovecs.iter().map(|v| v.iov_len).sum();
        self.mend.after(&self.fd, results[0].0, requested);
        (cqe_result(results[0].0).map(|n| n as usize), self.bufs)
    }

    fn fail(self, err: io::Error) -> Self::Output {
        (Err(err), self.bufs)
    }

    /// On a descriptor that [`completes_on_its_own`](SharedFd::completes_on_its_own), at any
    /// offset (io_uring ignores the offset of a pipe or a socket, which may wait for ever).
    fn holds_paused_clock(&self) -> bool {
        self.fd.completes_on_its_own()
    }
}
