//! The fallback doorbell: an eventfd with a read kept armed on the shard's ring, so a write
//! from any thread completes that read and wakes the shard out of `io_uring_enter`.
//!
//! Owns: the eventfd, the buffer its read fills (leaked, never freed, while a read may be in
//! flight), arming the read and re-arming it when it completes (until shutdown).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

use ringsteal_uring::opcode;

use super::user_data::{TAG_EVENTFD, TAG_IGNORE};
use super::Driver;
use crate::stats::ShardCounters;

/// An eventfd and the 8-byte buffer its armed read fills.
pub(crate) struct EventFd {
    fd: OwnedFd,
    /// From `Box::into_raw`. Written by the kernel while a read is armed: freed (by `Drop`)
    /// only when no read is in flight, leaked otherwise.
    buf: NonNull<u64>,
    /// A read into `buf` may be in flight.
    pub(crate) armed: bool,
    /// Shutdown drain: a cancel of the armed read was submitted.
    cancelling: bool,
}

// SAFETY: `buf` is owned like a `Box<u64>` (which is Send); the kernel's use of it is what
// `armed` tracks.
unsafe impl Send for EventFd {}

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
            buf: NonNull::from(Box::leak(Box::new(0u64))),
            armed: false,
            cancelling: false,
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The buffer for the armed read.
    pub(crate) fn buf_ptr(&mut self) -> *mut u8 {
        self.buf.as_ptr().cast()
    }
}

impl Drop for EventFd {
    /// Frees the buffer only if no read is armed: a driver dropped without draining (a shard
    /// unwinding, shutdown past its deadline) leaves the kernel free to write it later.
    fn drop(&mut self) {
        if !self.armed {
            // SAFETY: from `Box::into_raw` (via `Box::leak`) in `new`, freed only here, and
            // no read the kernel could complete into it is in flight.
            drop(unsafe { Box::from_raw(self.buf.as_ptr()) });
        }
    }
}

impl Driver {
    /// Arms the eventfd read, if there is an eventfd, no read is armed and the driver is not
    /// shutting down. Fails quietly when the SQ is full: `park` retries before it sleeps.
    pub(super) fn arm_eventfd(&mut self) {
        // A lost ring would take the read back and fail it at every reap, for ever.
        if self.draining || self.lost.is_some() {
            return;
        }
        self.push_eventfd_read();
    }

    /// Shutdown drain, before it waits: while op completions are still owed, keeps the read
    /// armed, so that a doorbell (a cancel another thread asks for) ends the wait; once none
    /// is, or only zero-copy notifications are (which the drain does not wait for), cancels
    /// it (by its exact `user_data`, which every kernel supports), so the wait ends with its
    /// CQE and nothing of the eventfd is left to the kernel.
    pub(super) fn eventfd_for_drain(&mut self, counters: &ShardCounters) {
        let Some(efd) = self.eventfd.as_ref() else {
            return;
        };
        if self.in_flight > self.notifications_owed.len() {
            self.push_eventfd_read();
        } else if efd.armed && !efd.cancelling {
            let sqe = opcode::cancel(TAG_EVENTFD, 0).with_user_data(TAG_IGNORE);
            // SAFETY: a cancel references no memory.
            let pushed = unsafe { self.push(std::slice::from_ref(&sqe), counters) }.is_ok();
            if let Some(efd) = self.eventfd.as_mut() {
                efd.cancelling = pushed;
            }
        }
    }

    /// Pushes the eventfd read, if there is an eventfd and no read is armed.
    fn push_eventfd_read(&mut self) {
        let Some(efd) = self.eventfd.as_mut() else {
            return;
        };
        if efd.armed {
            return;
        }
        let sqe = opcode::read(efd.fd(), efd.buf_ptr(), 8, u64::MAX).with_user_data(TAG_EVENTFD);
        // SAFETY: the 8-byte buffer is boxed inside `efd`, which outlives the read: at
        // shutdown the driver waits for this CQE or leaks the buffer.
        if unsafe { self.ring.push(&sqe) }.is_ok() {
            efd.armed = true;
        }
    }

    /// The armed read completed: a doorbell woke us (re-arm), or, shutting down, the read was
    /// cancelled or rang (leave it: the drain re-arms it while it needs it).
    pub(super) fn eventfd_read_completed(&mut self, counters: &ShardCounters) {
        if let Some(efd) = self.eventfd.as_mut() {
            efd.armed = false;
            efd.cancelling = false;
        }
        if !self.draining {
            counters.eventfd_wakes.incr();
            self.arm_eventfd();
        }
    }
}

/// Rings a shard's eventfd from any thread.
pub(crate) fn signal(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a valid local; the fd is kept open by the doorbell protocol
    // (see `shared/remote.rs`) for as long as a sender may use it. EAGAIN (counter saturated)
    // means the shard is already signalled.
    unsafe {
        libc::write(fd, (&one as *const u64).cast(), 8);
    }
}
