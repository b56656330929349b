//! `IORING_OP_OPENAT` and `IORING_OP_CLOSE`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use ringsteal_uring::opcode;

use crate::op::{cqe_result, Op, Operation, SharedFd, Sqes};

/// `openat(dirfd or AT_FDCWD, path, flags | O_CLOEXEC, mode)`. The new descriptor is owned:
/// if the future is dropped after the kernel opened the file, the descriptor is closed.
pub fn openat(dirfd: Option<&SharedFd>, path: CString, flags: i32, mode: u32) -> Op<OpenAt> {
    Op::new(OpenAt {
        dirfd: dirfd.cloned(),
        path,
        flags: flags | libc::O_CLOEXEC,
        mode,
    })
}

/// The operation of [`openat`].
#[derive(Debug)]
pub struct OpenAt {
    dirfd: Option<SharedFd>,
    path: CString,
    flags: i32,
    mode: u32,
}

fn raw_dirfd(fd: &Option<SharedFd>) -> RawFd {
    fd.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd)
}

// SAFETY: the SQE points at `path`, a heap C string owned by the op.
unsafe impl Operation for OpenAt {
    type Output = io::Result<OwnedFd>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::openat(
            raw_dirfd(&self.dirfd),
            &self.path,
            self.flags,
            self.mode,
        ))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<OwnedFd> {
        // SAFETY: a non-negative result of OPENAT is a new descriptor nobody else owns.
        cqe_result(results[0].0).map(|fd| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }
    fn fail(self, err: io::Error) -> io::Result<OwnedFd> {
        Err(err)
    }
}

/// `close(fd)` through the ring.
pub fn close(fd: OwnedFd) -> Op<Close> {
    Op::new(Close { fd: Some(fd) })
}

/// The operation of [`close`].
#[derive(Debug)]
pub struct Close {
    fd: Option<OwnedFd>,
}

// SAFETY: references no memory. The descriptor is handed to the kernel to close: `prepare`
// forgets the OwnedFd (so it is not closed twice).
unsafe impl Operation for Close {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        let fd = self.fd.take().expect("close is prepared once");
        let raw = fd.as_raw_fd();
        std::mem::forget(fd);
        Sqes::One(opcode::close(raw))
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        // Not submitted: the OwnedFd (still here) closes it on drop.
        drop(self.fd);
        Err(err)
    }
}
