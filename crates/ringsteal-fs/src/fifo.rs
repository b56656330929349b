//! Named pipes (FIFOs) opened as `open(2)`, std and tokio open them: a read-only open waits
//! for a writer, a write-only open for a reader.
//!
//! `IORING_OP_OPENAT` first tries the open without blocking (the kernel adds `O_NONBLOCK`
//! for that attempt and clears it on the file afterwards), and a FIFO answers such an open
//! at once: a writer with no reader gets `ENXIO`, a reader gets its end before any writer
//! came (and its first read then says end of stream). So a write-only open that fails with
//! `ENXIO` is made again, blocking, on the blocking pool; and a read-only open that got a
//! FIFO keeps its own end (a writer already waiting is then never left without a reader)
//! and waits, with a poll of that end, until it is readable: bytes came, or a writer came
//! and went since the open (`POLLHUP`). Then a read does not wait for a writer either, as
//! after std's open. (A second, blocking read-only open to wait for a writer missed one that
//! was waiting already, was let go by the early end, and wrote and closed before it ran:
//! `echo hi > fifo` started first; and the other end it opened to let its thread go when
//! cancelled lingered, pairing with later writers.) The open returns when the writer
//! writes or leaves rather than when it opens, which only a caller timing the open sees.
//! Opens that ask for `O_NONBLOCK` themselves get the kernel's answer as it is, and so do
//! `O_PATH` ones, which open no end at all.
//!
//! Owns: those two corrections. May not: touch other opens beyond one `fstat` of a
//! read-only one.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Mutex};

use ringsteal_rt::op::{self, SharedFd};

use crate::blocking::spawn_blocking;
use crate::cstr::cstr;

/// True if `err` is a FIFO's answer to a write-only open without a reader, where the
/// caller did not ask for `O_NONBLOCK` (and so expects the open to wait).
pub(crate) fn writer_without_reader(err: &io::Error, flags: i32) -> bool {
    err.raw_os_error() == Some(libc::ENXIO)
        && flags & libc::O_ACCMODE == libc::O_WRONLY
        && flags & (libc::O_NONBLOCK | libc::O_PATH) == 0
}

/// True if `fd`, opened read-only without `O_NONBLOCK`, is a FIFO's read end: the open
/// returned without waiting for a writer.
pub(crate) fn reader_opened_early(fd: &OwnedFd, flags: i32) -> io::Result<bool> {
    if flags & libc::O_ACCMODE != libc::O_RDONLY || flags & (libc::O_NONBLOCK | libc::O_PATH) != 0 {
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

/// A write-only `open(2)` on the blocking pool ([`writer_without_reader`]): it waits for a
/// reader as std's does.
///
/// Dropped while that `open(2)` waits, it lets the blocking thread go: it opens a read end
/// itself, without waiting, and keeps it open until that `open(2)` has returned (both ends
/// are then closed). Without this a cancelled open (a `timeout` around
/// `File::open`) would hold a blocking thread until some other process opened the FIFO,
/// hold up the runtime's shutdown as long, and that process would meet an end nobody
/// reads or writes (its writes failing with `EPIPE`).
pub(crate) async fn open_blocking(path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let path: CString = cstr(path)?;
    let wait = Arc::new(Mutex::new(Wait::default()));
    let mut release = ReleaseOnDrop {
        wait: wait.clone(),
        path: path.clone(),
        armed: true,
    };
    let opened = spawn_blocking(move || {
        {
            let mut w = lock(&wait);
            if w.cancelled {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            w.started = true;
        }
        // SAFETY: `path` is a NUL-terminated string that lives across the call.
        let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) };
        let result = if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: the descriptor is new and owned by nothing else.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        };
        let other_end = {
            let mut w = lock(&wait);
            w.finished = true;
            w.other_end.take()
        };
        drop(other_end);
        result
    })?;
    let result = opened.await.map_err(io::Error::other)?;
    release.armed = false;
    result
}

/// Waits until `reader`, the caller's early read end of a FIFO, is readable: it has bytes,
/// or a writer came and went since it opened (`POLLHUP`). One request, which a dropped
/// open cancels; no thread and no other end of the FIFO is involved.
///
/// One case waits longer than std's open: a writer that was already waiting when the early
/// end opened and that closes without writing (it counted as a writer before the end
/// opened, so no `POLLHUP` comes): the wait goes on until another writer comes and writes
/// or leaves. std's open would have returned, and a read seen end of stream.
pub(crate) async fn wait_for_writer(reader: &SharedFd) -> io::Result<()> {
    op::poll_add(reader, libc::POLLIN as u32).await.map(drop)
}

/// What a blocking FIFO open and its future share.
#[derive(Default)]
struct Wait {
    /// The future was dropped: the open must not start, or must be let go.
    cancelled: bool,
    /// The blocking thread is at (or in) its `open(2)`.
    started: bool,
    /// Its `open(2)` returned.
    finished: bool,
    /// The other end the dropped future opened, closed once the `open(2)` returned.
    other_end: Option<OwnedFd>,
}

fn lock(wait: &Mutex<Wait>) -> std::sync::MutexGuard<'_, Wait> {
    wait.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Lets a waiting `open(2)` go when [`open_blocking`]'s future is dropped before it returned.
struct ReleaseOnDrop {
    wait: Arc<Mutex<Wait>>,
    path: CString,
    armed: bool,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut w = lock(&self.wait);
        w.cancelled = true;
        if !w.started || w.finished {
            return; // it will not start, or has nothing left to wait for
        }
        // A read end, without waiting: one always opens, and lets the waiting writer go.
        // SAFETY: `path` is a NUL-terminated string that lives across the call; O_NONBLOCK
        // makes the open of a FIFO return at once.
        let fd = unsafe {
            libc::open(
                self.path.as_ptr(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd >= 0 {
            // SAFETY: the descriptor is new and owned by nothing else.
            w.other_end = Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
}
