//! OPENAT, CLOSE, STATX, RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT and LINKAT.
//!
//! Path arguments are NUL-terminated C strings that must stay valid until the CQE (the kernel
//! may copy them late, in a worker).

use std::ffi::CStr;
use std::os::fd::RawFd;

use super::base;
use crate::abi::*;

/// `IORING_OP_OPENAT`: `openat(dirfd, path, flags, mode)`.
pub fn openat(dirfd: RawFd, path: &CStr, flags: i32, mode: u32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_OPENAT, dirfd, path.as_ptr() as u64, mode, 0);
    sqe.op_flags.open_flags = flags as u32;
    sqe
}

/// `IORING_OP_CLOSE`: `close(fd)`.
pub fn close(fd: RawFd) -> io_uring_sqe {
    base(IORING_OP_CLOSE, fd, 0, 0, 0)
}

/// `IORING_OP_STATX`: `statx(dirfd, path, flags, mask, statxbuf)`; the kernel writes
/// `*statxbuf` until the CQE.
pub fn statx(
    dirfd: RawFd,
    path: &CStr,
    flags: i32,
    mask: u32,
    statxbuf: *mut libc::statx,
) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_STATX, dirfd, path.as_ptr() as u64, mask, 0);
    sqe.off.addr2 = statxbuf as u64;
    sqe.op_flags.statx_flags = flags as u32;
    sqe
}

/// `IORING_OP_RENAMEAT`: `renameat2(olddirfd, oldpath, newdirfd, newpath, flags)`.
pub fn renameat(
    olddirfd: RawFd,
    oldpath: &CStr,
    newdirfd: RawFd,
    newpath: &CStr,
    flags: u32,
) -> io_uring_sqe {
    let mut sqe = base(
        IORING_OP_RENAMEAT,
        olddirfd,
        oldpath.as_ptr() as u64,
        newdirfd as u32,
        0,
    );
    sqe.off.addr2 = newpath.as_ptr() as u64;
    sqe.op_flags.rename_flags = flags;
    sqe
}

/// `IORING_OP_UNLINKAT`: `unlinkat(dirfd, path, flags)` (`AT_REMOVEDIR` removes a directory).
pub fn unlinkat(dirfd: RawFd, path: &CStr, flags: i32) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_UNLINKAT, dirfd, path.as_ptr() as u64, 0, 0);
    sqe.op_flags.unlink_flags = flags as u32;
    sqe
}

/// `IORING_OP_MKDIRAT`: `mkdirat(dirfd, path, mode)`.
pub fn mkdirat(dirfd: RawFd, path: &CStr, mode: u32) -> io_uring_sqe {
    base(IORING_OP_MKDIRAT, dirfd, path.as_ptr() as u64, mode, 0)
}

/// `IORING_OP_SYMLINKAT`: `symlinkat(target, newdirfd, linkpath)`.
pub fn symlinkat(target: &CStr, newdirfd: RawFd, linkpath: &CStr) -> io_uring_sqe {
    let mut sqe = base(IORING_OP_SYMLINKAT, newdirfd, target.as_ptr() as u64, 0, 0);
    sqe.off.addr2 = linkpath.as_ptr() as u64;
    sqe
}

/// `IORING_OP_LINKAT`: `linkat(olddirfd, oldpath, newdirfd, newpath, flags)`.
pub fn linkat(
    olddirfd: RawFd,
    oldpath: &CStr,
    newdirfd: RawFd,
    newpath: &CStr,
    flags: i32,
) -> io_uring_sqe {
    let mut sqe = base(
        IORING_OP_LINKAT,
        olddirfd,
        oldpath.as_ptr() as u64,
        newdirfd as u32,
        0,
    );
    sqe.off.addr2 = newpath.as_ptr() as u64;
    sqe.op_flags.hardlink_flags = flags as u32;
    sqe
}
