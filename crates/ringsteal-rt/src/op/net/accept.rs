//! `IORING_OP_ACCEPT` (single shot): the peer's address is written into storage in the op.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use ringsteal_uring::opcode;

use super::SockAddr;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Accepts one connection on the listening socket `fd`: the new descriptor (`SOCK_CLOEXEC`)
/// and the peer's address. The new descriptor is owned from the moment the kernel reports it:
/// if the future was dropped and the accept won the race with its cancellation, the
/// connection is closed, not leaked.
pub fn accept(fd: &SharedFd) -> Op<Accept> {
    Op::new(Accept::new(fd))
}

/// The operation of [`accept`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd};
///     let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
///     let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
///     let (_conn, peer) = op::accept(&SharedFd::new(listener.into())).await.unwrap();
///     assert_eq!(peer.as_std(), Some(client.local_addr().unwrap()));
/// });
/// ```
#[derive(Debug)]
pub struct Accept {
    fd: SharedFd,
    addr: SockAddr,
}

impl Accept {
    /// The operation's data, to wrap before [`Op::new`]; [`accept`] is this, wrapped.
    pub fn new(fd: &SharedFd) -> Self {
        Accept {
            fd: fd.clone(),
            addr: SockAddr::empty(),
        }
    }
}

// SAFETY: the SQE points at `addr` and its length, both inside the op.
unsafe impl Operation for Accept {
    type Output = io::Result<(OwnedFd, SockAddr)>;
    fn prepare(&mut self) -> Sqes {
        let fd = self.fd.as_raw_fd();
        let addr = self.addr.as_mut_ptr();
        let len: *mut libc::socklen_t = self.addr.len_mut();
        Sqes::One(opcode::accept(fd, addr, len, libc::SOCK_CLOEXEC))
    }
    fn complete(self, results: &[(i32, u32)]) -> Self::Output {
        let fd = cqe_result(results[0].0)?;
        // SAFETY: a non-negative result of ACCEPT is a new descriptor nobody else owns; if
        // the future is gone, the OwnedFd built here is dropped, closing it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        Ok((fd, self.addr))
    }
    fn fail(self, err: io::Error) -> Self::Output {
        Err(err)
    }
}
