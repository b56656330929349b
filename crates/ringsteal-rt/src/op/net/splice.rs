//! `IORING_OP_SPLICE`: moves bytes between two descriptors, one of them a pipe, without
//! copying them through user space.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::limits::sqe_len;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Moves up to `len` bytes from `fd_in` (at `off_in`, or `u64::MAX` for its position or a
/// pipe) to `fd_out` (likewise), one of them a pipe. Yields the byte count (0: end of input).
/// The kernel runs a splice on one of its worker threads, where it may block until data
/// arrives; dropping the future cancels it.
pub fn splice(
    fd_in: &SharedFd,
    off_in: u64,
    fd_out: &SharedFd,
    off_out: u64,
    len: usize,
    flags: u32,
) -> Op<Splice> {
    Op::new(Splice::new(fd_in, off_in, fd_out, off_out, len, flags))
}

/// The operation of [`splice`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     use std::os::fd::FromRawFd;
///     let mut fds = [0; 2];
///     // SAFETY: pipe writes two new descriptors, owned below.
///     assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
///     let (r, w) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
///     std::io::Write::write_all(&mut &w, b"spliced").unwrap();
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (r, a, b) = (SharedFd::new(r.into()), SharedFd::new(a.into()), SharedFd::new(b.into()));
///     // Pipe to socket, in the kernel.
///     assert_eq!(op::splice(&r, u64::MAX, &a, u64::MAX, 7, 0).await.unwrap(), 7);
///     let (n, buf) = op::recv(&b, Vec::with_capacity(16), 0).await;
///     assert_eq!(&buf[..n.unwrap()], b"spliced");
/// });
/// ```
#[derive(Debug)]
pub struct Splice {
    fd_in: SharedFd,
    off_in: u64,
    fd_out: SharedFd,
    off_out: u64,
    len: u32,
    flags: u32,
}

impl Splice {
    /// The operation's data, to wrap before [`Op::new`]; arguments as for [`splice`].
    pub fn new(
        fd_in: &SharedFd,
        off_in: u64,
        fd_out: &SharedFd,
        off_out: u64,
        len: usize,
        flags: u32,
    ) -> Self {
        Splice {
            fd_in: fd_in.clone(),
            off_in,
            fd_out: fd_out.clone(),
            off_out,
            len: sqe_len(len),
            flags,
        }
    }
}

// SAFETY: references no memory; both descriptors are held until the completion.
unsafe impl Operation for Splice {
    type Output = io::Result<usize>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::splice(
            self.fd_in.as_raw_fd(),
            self.off_in,
            self.fd_out.as_raw_fd(),
            self.off_out,
            self.len,
            self.flags,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<usize> {
        cqe_result(results[0].0).map(|n| n as usize)
    }
    fn fail(self, err: io::Error) -> io::Result<usize> {
        Err(err)
    }
}
