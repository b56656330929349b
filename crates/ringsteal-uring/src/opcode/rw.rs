//! READ, WRITE, READV, WRITEV, the fixed-buffer variants, FSYNC, FALLOCATE, FADVISE,
//! SPLICE and FTRUNCATE.

use std::os::fd::RawFd;

use super::base;
use crate::abi::*;

/// `IORING_OP_READ`: `pread(fd, buf, len, offset)`; `offset = u64::MAX` reads at the file
/// position. The kernel writes `buf` until the CQE.
pub fn read(fd: RawFd, buf: *mut u8, len: u32, offset: u64) -> io_uring_sqe {
    base(IORING_OP_READ, fd, buf as u64, len, offset)
}

/// `IORING_OP_READ` into a provided buffer of group `group` (no buffer of our own).
pub fn read_provided(fd: RawFd, len: u32, offset: u64, group: u16) -> io_uring_sqe {
    base(IORING_OP_READ, fd, 0, len, offset).with_buf_group(group)
}

/// `IORING_OP_WRITE`: `pwrite(fd, buf, len, offset)`. The kernel reads `buf` until the CQE.
pub fn write(fd: RawFd, buf: *const u8, len: u32, offset: u64) -> io_uring_sqe {
    base(IORING_OP_WRITE, fd, buf as u64, len, offset)
}

/// `IORING_OP_READV`: `preadv2(fd, iov, iovcnt, offset)`. The iovec array and the buffers
/// must stay valid until the CQE.
pub fn readv(fd: RawFd, iov: *const libc::iovec, iovcnt: u32, offset: u64) -> io_uring_sqe {
    base(IORING_OP_READV, fd, iov as u64, iovcnt, offset)
}

/// `IORING_OP_WRITEV`: `pwritev2(fd, iov, iovcnt, offset)`.
pub fn writev(fd: RawFd, iov: *const libc::iovec, iovcnt: u32, offset: u64) -> io_uring_sqe {
    base(IORING_OP_WRITEV, fd, iov as u64, iovcnt, offset)
}

/// `IORING_OP_READ_FIXED` into registered buffer `buf_index` (`buf..buf+len` inside it).
pub fn read_fixed(fd: RawFd, buf: *mut u8, len: u32, offset: u64, buf_index: u16) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_READ_FIXED, fd, buf as u64, len, offset);
    sqe.buf.buf_index = buf_index;
    sqe
}

/// `IORING_OP_WRITE_FIXED` from registered buffer `buf_index`.
pub fn write_fixed(
    fd: RawFd,
    buf: *const u8,
    len: u32,
    offset: u64,
    buf_index: u16,
) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_WRITE_FIXED, fd, buf as u64, len, offset);
    sqe.buf.buf_index = buf_index;
    sqe
}

/// `IORING_OP_FSYNC`; `datasync` selects `fdatasync`.
pub fn fsync(fd: RawFd, datasync: bool) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_FSYNC, fd, 0, 0, 0);
    sqe.op_flags.fsync_flags = if datasync { IORING_FSYNC_DATASYNC } else { 0 };
    sqe
}

/// `IORING_OP_FALLOCATE`: `fallocate(fd, mode, offset, len)`.
pub fn fallocate(fd: RawFd, mode: i32, offset: u64, len: u64) -> io_uring_sqe {
    base(IORING_OP_FALLOCATE, fd, len, mode as u32, offset)
}

/// `IORING_OP_FADVISE`: `posix_fadvise(fd, offset, len, advice)`.
pub fn fadvise(fd: RawFd, offset: u64, len: u32, advice: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_FADVISE, fd, 0, len, offset);
    sqe.op_flags.fadvise_advice = advice as u32;
    sqe
}

/// `IORING_OP_FTRUNCATE`: `ftruncate(fd, len)` (6.9).
pub fn ftruncate(fd: RawFd, len: u64) -> io_uring_sqe {
    base(IORING_OP_FTRUNCATE, fd, 0, 0, len)
}

/// `IORING_OP_SPLICE`: `splice(fd_in, off_in, fd_out, off_out, len, flags)`; an offset of
/// `u64::MAX` means "no offset" (pipes).
pub fn splice(
    fd_in: RawFd,
    off_in: u64,
    fd_out: RawFd,
    off_out: u64,
    len: u32,
    flags: u32,
) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_SPLICE, fd_out, 0, len, off_out);
    sqe.addr.splice_off_in = off_in;
    sqe.file_index.splice_fd_in = fd_in;
    sqe.op_flags.splice_flags = flags;
    sqe
}
