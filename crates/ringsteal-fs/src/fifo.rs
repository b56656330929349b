//! Named pipes (FIFOs) opened as `open(2)`, std and tokio open them: a read-only open waits
//! for a writer, a write-only open for a reader.
//!
//! `IORING_OP_OPENAT` first tries the open without blocking (the kernel adds `O_NONBLOCK`
//! for that attempt and clears it on the file afterwards), and a FIFO answers such an open
//! at once: a writer with no reader gets `ENXIO`, a reader gets its end before any writer
//! came (and its first read then says end of stream). So a write-only open that fails with
//! `ENXIO` is made again, blocking, on the blocking pool; and a read-only open that got a
//! FIFO waits on the blocking pool, with a second read-only open, until a writer came, while
//! keeping its own end (a writer already waiting is then never left without a reader).
//! Opens that ask for `O_NONBLOCK` themselves get the kernel's answer as it is.
//!
//! Owns: those two corrections. May not: touch other opens beyond one `fstat` of a
//! read-only one.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use crate::blocking::spawn_blocking;
use crate::cstr::cstr;

/// True if `err` is a FIFO's answer to a write-only open without a reader, where the
/// caller did not ask for `O_NONBLOCK` (and so expects the open to wait).
pub(crate) fn writer_without_reader(err: &io::Error, flags: i32) -> bool {
    err.raw_os_error() == Some(libc::ENXIO)
        && flags & libc::O_ACCMODE == libc::O_WRONLY
        && flags & libc::O_NONBLOCK == 0
}

/// True if `fd`, opened read-only without `O_NONBLOCK`, is a FIFO's read end: the open
/// returned without waiting for a writer.
pub(crate) fn reader_opened_early(fd: &OwnedFd, flags: i32) -> io::Result<bool> {
    if flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_NONBLOCK != 0 {
        return Ok(false);
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `stat` into the pointed-to storage, which is large enough.
    if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded, so it filled the struct.
    let mode = unsafe { st.assume_init() }.st_mode;
    Ok(mode & libc::S_IFMT == libc::S_IFIFO)
}

/// `open(2)` on the blocking pool: it waits as std's does (for a FIFO's other end).
pub(crate) async fn open_blocking(path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let path: CString = cstr(path)?;
    let opened = spawn_blocking(move || {
        // SAFETY: `path` is a NUL-terminated string that lives across the call.
        let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor is new and owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    })?;
    opened.await.map_err(io::Error::other)?
}

/// Waits until the FIFO at `path` has a writer (a second read-only open, on the blocking
/// pool, returns once one came; the caller keeps its own end open meanwhile).
pub(crate) async fn wait_for_writer(path: &Path) -> io::Result<()> {
    open_blocking(path, libc::O_RDONLY, 0).await.map(drop)
}
