//! `IORING_OP_FSYNC`, `IORING_OP_FALLOCATE`, `IORING_OP_FTRUNCATE`.

use std::io;
use std::os::fd::AsRawFd;

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// `fsync` (or `fdatasync` when `datasync`).
pub fn fsync(fd: &SharedFd, datasync: bool) -> Op<Fsync> {
    Op::new(Fsync {
        fd: fd.clone(),
        datasync,
    })
}

/// The operation of [`fsync`].
#[derive(Debug)]
pub struct Fsync {
    fd: SharedFd,
    datasync: bool,
}

// SAFETY: references no memory.
unsafe impl Operation for Fsync {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::fsync(self.fd.as_raw_fd(), self.datasync))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

/// `fallocate(fd, mode, offset, len)`.
pub fn fallocate(fd: &SharedFd, mode: i32, offset: u64, len: u64) -> Op<Fallocate> {
    Op::new(Fallocate {
        fd: fd.clone(),
        mode,
        offset,
        len,
    })
}

/// The operation of [`fallocate`].
#[derive(Debug)]
pub struct Fallocate {
    fd: SharedFd,
    mode: i32,
    offset: u64,
    len: u64,
}

// SAFETY: references no memory.
unsafe impl Operation for Fallocate {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::fallocate(
            self.fd.as_raw_fd(),
            self.mode,
            self.offset,
            self.len,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

/// `ftruncate(fd, len)` (`IORING_OP_FTRUNCATE`, Linux 6.9; probe before use).
pub fn ftruncate(fd: &SharedFd, len: u64) -> Op<Ftruncate> {
    Op::new(Ftruncate {
        fd: fd.clone(),
        len,
    })
}

/// The operation of [`ftruncate`].
#[derive(Debug)]
pub struct Ftruncate {
    fd: SharedFd,
    len: u64,
}

// SAFETY: references no memory.
unsafe impl Operation for Ftruncate {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::ftruncate(self.fd.as_raw_fd(), self.len))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}
