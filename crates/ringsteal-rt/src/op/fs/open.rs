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

/// The operation of [`openat`]: yields the new descriptor, owned.
///
/// ```
/// use std::ffi::CString;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let path = std::env::temp_dir().join(format!("ringsteal-doc-openat-{}", std::process::id()));
///     let c_path = CString::new(path.to_str().unwrap()).unwrap();
///     let fd = op::openat(None, c_path, libc::O_CREAT | libc::O_RDWR, 0o600).await.unwrap();
///     let file = SharedFd::new(fd);
///     op::write_at(&file, "opened through the ring", 0).await.0.unwrap();
///     std::fs::remove_file(&path).unwrap();
/// });
/// ```
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
    /// A file system request: it completes on its own.
    fn holds_paused_clock(&self) -> bool {
        true
    }
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

/// The operation of [`close`]. The descriptor is closed whatever happens: by the kernel once
/// the request ran, whatever it answered (so it is never closed twice), or with `close(2)` if
/// the request never ran (not submitted, or cancelled first) or the kernel refused it (an
/// io_uring instance's descriptor, which `IORING_OP_CLOSE` will not close).
///
/// ```
/// use ringsteal_rt::op;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let file = std::fs::File::open("/dev/null").unwrap();
///     op::close(file.into()).await.unwrap();
/// });
/// ```
#[derive(Debug)]
pub struct Close {
    /// Owned until the close's completion says the kernel took the descriptor: if the op is
    /// never submitted, or is cancelled before it ran, it is closed here on drop.
    fd: Option<OwnedFd>,
}

// SAFETY: references no memory. The descriptor stays owned by the op while the kernel closes
// it; `complete` gives up ownership (without closing) once the kernel has run the close.
unsafe impl Operation for Close {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        let raw = self
            .fd
            .as_ref()
            .expect("close has its descriptor")
            .as_raw_fd();
        Sqes::One(opcode::close(raw))
    }
    fn complete(mut self, results: &[(i32, u32)]) -> io::Result<()> {
        let res = results[0].0;
        if res == -libc::ECANCELED {
            // Cancelled before it ran: by its link timeout (`with_timeout`; see
            // `TIMED_OUT_RESULT` below), or, with the future gone, by its drop. The
            // descriptor is still ours: the OwnedFd closes it on drop, with close(2).
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the close was cancelled before it ran (its timeout expired); the descriptor \
                 was closed with close(2) instead",
            ));
        }
        if res == -libc::EBADF && self.fd.as_ref().is_some_and(is_io_uring) {
            // `IORING_OP_CLOSE` refuses an io_uring instance's descriptor with `EBADF` and
            // leaves it in the table (the kernel's only `EBADF` for a descriptor that is
            // open, as one we own is): close(2) takes it.
            drop(self.fd.take());
            return Ok(());
        }
        // The kernel ran the close and took the descriptor out of the table, whatever it
        // answered (ETIMEDOUT from a network file system included): closing it again could
        // close a descriptor that reuses the number.
        std::mem::forget(self.fd.take());
        cqe_result(res).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        // Not submitted: the OwnedFd (still here) closes it on drop.
        drop(self.fd);
        Err(err)
    }
    /// A close its link timeout cancelled never ran; only `-ECANCELED` says so for sure.
    const TIMED_OUT_RESULT: i32 = -libc::ECANCELED;
}

/// True if `fd` is an io_uring instance (what `/proc` names it): asked only after the kernel
/// refused to close it with `EBADF`, to tell that refusal (the descriptor still there) from a
/// file whose own flush failed with `EBADF` (the descriptor gone, its number free for reuse).
fn is_io_uring(fd: &OwnedFd) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .is_ok_and(|target| target.as_os_str() == "anon_inode:[io_uring]")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A descriptor of its own socket, and its inode: a number reused by another test's
    /// descriptor after a close is not mistaken for ours.
    fn new_fd() -> (OwnedFd, (RawFd, u64)) {
        let (a, _) = std::os::unix::net::UnixStream::pair().unwrap();
        let fd: OwnedFd = a.into();
        let id = (fd.as_raw_fd(), inode(fd.as_raw_fd()).unwrap());
        (fd, id)
    }

    fn inode(fd: RawFd) -> Option<u64> {
        // SAFETY: fstat writes into a local stat buffer; a closed descriptor fails with EBADF.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            (libc::fstat(fd, &mut st) == 0).then_some(st.st_ino)
        }
    }

    fn is_open((fd, ino): (RawFd, u64)) -> bool {
        inode(fd) == Some(ino)
    }

    #[test]
    fn a_close_prepared_but_never_submitted_closes_its_descriptor() {
        let (fd, raw) = new_fd();
        let mut close = Close { fd: Some(fd) };
        let _ = close.prepare();
        assert!(is_open(raw));
        let err = close.fail(io::Error::other("the push failed")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert!(!is_open(raw), "the descriptor leaked");
    }

    #[test]
    fn a_close_cancelled_before_it_ran_closes_its_descriptor() {
        let (fd, raw) = new_fd();
        let mut close = Close { fd: Some(fd) };
        let _ = close.prepare();
        let res = close.complete(&[(-libc::ECANCELED, 0)]);
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert!(!is_open(raw), "the descriptor leaked");
    }

    /// A close whose link timeout (`with_timeout`) cancelled it before it ran: the kernel
    /// reports `-ECANCELED` for the close and `-ETIME` for the timer. (A close cancelled that
    /// way waits in the kernel's worker pool, where only files with a `flush` method, such as
    /// NFS, FUSE or overlayfs files, send it; so these CQEs are written by hand, and the op
    /// is completed through `Op::poll`, as a real one is.)
    #[test]
    fn a_close_its_timeout_cancelled_before_it_ran_closes_its_descriptor_and_times_out() {
        let (fd, raw) = new_fd();
        let res = crate::op::tests::complete_by_hand(
            close(fd),
            &[(-libc::ECANCELED, 0), (-libc::ETIME, 0)],
            true,
        );
        assert_eq!(res.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert!(!is_open(raw), "the timed-out close leaked its descriptor");
    }

    /// A close that ran, failed with `ETIMEDOUT` itself (a network file system), and beat
    /// its timeout: the kernel took the descriptor; it must not be closed again.
    #[test]
    fn a_close_that_ran_and_failed_with_etimedout_leaves_the_descriptor_to_the_kernel() {
        let (fd, raw) = new_fd();
        let res = crate::op::tests::complete_by_hand(
            close(fd),
            &[(-libc::ETIMEDOUT, 0), (-libc::ECANCELED, 0)],
            true,
        );
        assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::ETIMEDOUT));
        assert!(is_open(raw), "closed twice");
        // SAFETY: the descriptor is still open (the kernel did not really close it here) and
        // owned by nobody now.
        drop(unsafe { OwnedFd::from_raw_fd(raw.0) });
    }

    #[test]
    fn an_io_uring_descriptor_the_kernel_refuses_to_close_is_closed_with_close_2() {
        let ring = ringsteal_uring::Ring::new(2).unwrap();
        // SAFETY: a duplicate of the ring's descriptor, owned by this test from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(libc::dup(ring.fd())) };
        assert!(fd.as_raw_fd() >= 0);
        let raw = (fd.as_raw_fd(), inode(fd.as_raw_fd()).unwrap());
        let rt = crate::Runtime::builder().shards(1).build().unwrap();
        // Through the ring for real: the kernel answers `EBADF` and keeps the descriptor.
        rt.block_on(close(fd)).expect("closed with close(2)");
        assert!(!is_open(raw), "the io_uring descriptor leaked");
        // A plain socket that failed with `EBADF` (as a flush could) is the kernel's.
        let (fd, raw) = new_fd();
        let mut close = Close { fd: Some(fd) };
        let _ = close.prepare();
        assert_eq!(
            close
                .complete(&[(-libc::EBADF, 0)])
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EBADF)
        );
        assert!(is_open(raw), "closed twice");
        // SAFETY: the descriptor is still open (the kernel did not close it here) and owned
        // by nobody now.
        drop(unsafe { OwnedFd::from_raw_fd(raw.0) });
    }

    #[test]
    fn a_close_the_kernel_ran_leaves_the_descriptor_to_it() {
        let (fd, raw) = new_fd();
        let mut close = Close { fd: Some(fd) };
        let _ = close.prepare();
        // Pretend the kernel closed it; it did not here, so nothing else may have closed it.
        close.complete(&[(0, 0)]).unwrap();
        assert!(is_open(raw), "closed twice");
        // SAFETY: the descriptor is still open and owned by nobody now.
        drop(unsafe { OwnedFd::from_raw_fd(raw.0) });
    }
}
