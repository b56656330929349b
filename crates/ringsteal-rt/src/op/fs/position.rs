//! [`PositionMend`]: the file position after a short write at the position (offset `-1`) of
//! a regular file or block device.
//!
//! io_uring finishes a short write to a regular file on a worker (it retries the rest). If
//! that retry fails (a full disk, `RLIMIT_FSIZE`, a quota), the completion reports the bytes
//! written before the failure, as a write(2) would, but the kernel (6.18 here) leaves the
//! file position where the write began: `kiocb_done` moves it only for a non-negative result
//! of the last attempt. The next write at the position then overwrote those bytes and
//! reported success again, for ever: a `write_all` of 16 MiB onto an 8 MiB file system
//! returned `Ok` with the file holding the buffer's second half (found by a review).
//!
//! So a write at the position of such a file reads the position before it is submitted (one
//! `lseek`), and after a short completion that left the position there moves it over the
//! bytes written (to the end of the file for `O_APPEND`, where the bytes went). A kernel
//! that moves the position itself leaves nothing to mend. The caller must keep other
//! requests at the position out meanwhile (the file's write lane does, and reads wait for it).
//!
//! May not: touch a descriptor whose position io_uring ignores (a pipe, a socket).

use std::os::fd::AsRawFd;

use crate::op::SharedFd;

/// The position before a write at the position, to mend after a short completion.
#[derive(Debug, Default)]
pub(crate) struct PositionMend {
    /// The position when the write was submitted; `None` if there is nothing to mend (an
    /// explicit offset, a descriptor without a shared position, or `lseek` failed).
    before: Option<i64>,
}

impl PositionMend {
    /// Reads the position of `fd` if a write at `pos` may need mending: `pos == u64::MAX`
    /// on a regular file or block device. Called as the write is prepared for submission.
    pub(crate) fn before(fd: &SharedFd, pos: u64) -> Self {
        if pos != u64::MAX || !fd.completes_on_its_own() {
            return Self::default();
        }
        // SAFETY: lseek passes no memory; the caller's holder keeps `fd` open.
        let at = unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_CUR) };
        Self {
            before: (at >= 0).then_some(at),
        }
    }

    /// After the write completed with `res` of `requested` bytes: if it wrote some but not
    /// all and the position did not move, moves it over them.
    pub(crate) fn after(&self, fd: &SharedFd, res: i32, requested: usize) {
        let Some(before) = self.before else { return };
        if res <= 0 || res as usize >= requested {
            return;
        }
        let fd = fd.as_raw_fd();
        // SAFETY: lseek passes no memory; the caller's holder keeps `fd` open.
        if unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) } != before {
            return; // moved: by the write itself (a kernel without the fault) or by another
        }
        // SAFETY: fcntl(F_GETFL) passes no memory; as above.
        let append = unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_APPEND != 0;
        // SAFETY: as above.
        unsafe {
            if append {
                libc::lseek(fd, 0, libc::SEEK_END);
            } else {
                libc::lseek(fd, before + i64::from(res), libc::SEEK_SET);
            }
        }
    }
}
