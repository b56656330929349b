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
