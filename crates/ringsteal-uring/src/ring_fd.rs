//! Registering a ring's own descriptor with the thread that enters it
//! (`IORING_REGISTER_RING_FDS`, Linux 5.18), so that `io_uring_enter` names the ring by an
//! index into the thread's table (`IORING_ENTER_REGISTERED_RING`) instead of by its
//! descriptor: the kernel then skips the descriptor-table lookup and the reference it takes
//! and drops on the file for every call (two locked instructions in a process with more than
//! one thread).
//!
//! Owns: the registration, given back when the ring is dropped (the kernel's table has 16
//! slots per thread, and a registered ring stays alive while its slot holds it). May not:
//! decide who enters the ring, which the caller's contract fixes.

use std::io;
use std::os::fd::RawFd;

use crate::abi::*;
use crate::sys;

/// A ring descriptor registered with the thread that made it; unregistered when dropped.
#[derive(Debug)]
pub(crate) struct RingFdRegistration {
    /// The ring's descriptor: the ring drops this after the registration, so it is open.
    ring_fd: RawFd,
    /// The slot in the registering thread's table.
    index: u32,
}

impl RingFdRegistration {
    /// Registers `ring_fd` with the calling thread (`IORING_REGISTER_RING_FDS`, into any free
    /// slot of its table).
    ///
    /// # Safety
    /// `ring_fd` is an open io_uring descriptor that stays open until this registration is
    /// dropped, and the drop happens on the calling thread (whose table holds the slot).
    pub(crate) unsafe fn register(ring_fd: RawFd) -> io::Result<Self> {
        let mut update = io_uring_rsrc_update {
            // Any free slot: the kernel writes the one it took back into `offset`.
            offset: u32::MAX,
            data: ring_fd as u64,
            ..Default::default()
        };
        // SAFETY: `update` lives for the call and names one open descriptor, the ring's.
        let n = unsafe {
            sys::io_uring_register(
                ring_fd,
                IORING_REGISTER_RING_FDS,
                (&mut update as *mut io_uring_rsrc_update).cast(),
                1,
            )
        }?;
        if n != 1 {
            return Err(io::Error::other(
                "IORING_REGISTER_RING_FDS registered no descriptor",
            ));
        }
        Ok(Self {
            ring_fd,
            index: update.offset,
        })
    }

    /// The slot to pass to `io_uring_enter` with `IORING_ENTER_REGISTERED_RING`.
    #[inline]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }
}

impl Drop for RingFdRegistration {
    fn drop(&mut self) {
        let update = io_uring_rsrc_update {
            offset: self.index,
            ..Default::default()
        };
        // SAFETY: `update` lives for the call. The contract of `register_ring_fd` puts this
        // drop on the registering thread, whose table holds this slot; an error (none is
        // expected) leaves the slot to be freed when the thread exits.
        let _ = unsafe {
            sys::io_uring_register(
                self.ring_fd,
                IORING_UNREGISTER_RING_FDS,
                (&update as *const io_uring_rsrc_update).cast(),
                1,
            )
        };
    }
}
