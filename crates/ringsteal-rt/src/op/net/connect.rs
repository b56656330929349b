//! `IORING_OP_CONNECT`: the address lives in the op.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use super::SockAddr;
use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// Connects `fd` to `addr`. The op holds the descriptor until its completion, so dropping
/// the future (which cancels the connect) never closes a socket the kernel still uses.
pub fn connect(fd: &SharedFd, addr: SockAddr) -> Op<Connect> {
    Op::new(Connect {
        fd: fd.clone(),
        addr,
    })
}

/// The operation of [`connect`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     use ringsteal_rt::op::{self, SharedFd, SockAddr};
///     let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
///     let fd = SharedFd::new(op::socket(libc::AF_INET, libc::SOCK_STREAM, 0).await.unwrap());
///     op::connect(&fd, SockAddr::from_std(&listener.local_addr().unwrap())).await.unwrap();
///     assert!(listener.accept().is_ok());
/// });
/// ```
#[derive(Debug)]
pub struct Connect {
    fd: SharedFd,
    addr: SockAddr,
}

// SAFETY: the SQE points at `addr`, inside the op.
unsafe impl Operation for Connect {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::connect(
            self.fd.as_raw_fd(),
            self.addr.as_ptr(),
            self.addr.len(),
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}
