//! The fallback doorbell: an eventfd with a read kept armed on the shard's ring, so a write
//! from any thread completes that read and wakes the shard out of `io_uring_enter`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An eventfd and the 8-byte buffer its armed read fills.
pub(crate) struct EventFd {
    fd: OwnedFd,
    /// Written by the kernel while a read is armed: freed only when no read is in flight.
    buf: Box<u64>,
    pub(crate) armed: bool,
}

impl EventFd {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: eventfd returned a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self {
            fd,
            buf: Box::new(0),
            armed: false,
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The buffer for the armed read.
    pub(crate) fn buf_ptr(&mut self) -> *mut u8 {
        (&mut *self.buf as *mut u64).cast()
    }

    /// Leaks the buffer if a read might still be in flight (shutdown could not drain it).
    pub(crate) fn leak_if_armed(self) {
        if self.armed {
            std::mem::forget(self.buf);
        }
    }
}

/// Rings a shard's eventfd from any thread.
pub(crate) fn signal(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a valid local; the fd is kept open by the doorbell protocol
    // (see `shard/remote.rs`) for as long as a sender may use it. EAGAIN (counter saturated)
    // means the shard is already signalled.
    unsafe {
        libc::write(fd, (&one as *const u64).cast(), 8);
    }
}
