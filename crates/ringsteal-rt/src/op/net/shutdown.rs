//! `IORING_OP_SHUTDOWN` (Linux 5.11).

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// `shutdown(fd, how)` through the ring: `Read`, `Write` (sends FIN after queued data) or
/// `Both`.
pub fn shutdown(fd: &SharedFd, how: std::net::Shutdown) -> Op<Shutdown> {
    Op::new(Shutdown::new(fd, how))
}

/// The operation of [`shutdown`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let (a, b) = (SharedFd::new(a.into()), SharedFd::new(b.into()));
///     op::shutdown(&a, std::net::Shutdown::Write).await.unwrap();
///     let (n, _) = op::recv(&b, Vec::with_capacity(8), 0).await;
///     assert_eq!(n.unwrap(), 0, "end of stream");
/// });
/// ```
#[derive(Debug)]
pub struct Shutdown {
    fd: SharedFd,
    how: i32,
}

impl Shutdown {
    /// The operation's data, to wrap before [`Op::new`].
    pub fn new(fd: &SharedFd, how: std::net::Shutdown) -> Self {
        let how = match how {
            std::net::Shutdown::Read => libc::SHUT_RD,
            std::net::Shutdown::Write => libc::SHUT_WR,
            std::net::Shutdown::Both => libc::SHUT_RDWR,
        };
        Shutdown {
            fd: fd.clone(),
            how,
        }
    }
}

// SAFETY: references no memory.
unsafe impl Operation for Shutdown {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::shutdown(self.fd.as_raw_fd(), self.how))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}
