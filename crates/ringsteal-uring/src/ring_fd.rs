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
use crate::ring::Ring;
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

impl Ring {
    /// Registers the ring's descriptor with the calling thread (`IORING_REGISTER_RING_FDS`);
    /// from then on the ring enters the kernel through the registered slot. A kernel without
    /// it (before 5.18: `EINVAL`) or a full table (16 slots per thread: `EBUSY`) returns the
    /// error and leaves the ring entering by its descriptor, which works the same, only with
    /// a lookup per call. Registering twice is a no-op.
    ///
    /// ```
    /// use ringsteal_uring::{opcode, Ring};
    ///
    /// let mut ring = Ring::new(4)?;
    /// // SAFETY: this thread is the only one that uses the ring, and it drops it.
    /// if unsafe { ring.register_ring_fd() }.is_ok() {
    ///     assert!(ring.ring_fd_registered());
    /// }
    /// // SAFETY: a NOP references no memory.
    /// unsafe { ring.push(&opcode::nop().with_user_data(3)) }.unwrap();
    /// ring.submit_and_wait(1)?;
    /// assert_eq!(ring.pop_cqe().unwrap().user_data, 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Safety
    /// A registration belongs to the calling thread: another thread using the slot would name
    /// nothing, or a ring of its own. So from this call until the ring is dropped, every call
    /// on it that enters the kernel (the submits, waits and flushes), and the drop itself,
    /// must happen on the calling thread.
    pub unsafe fn register_ring_fd(&mut self) -> io::Result<()> {
        if self.ring_fd_registered() {
            return Ok(());
        }
        let mut update = io_uring_rsrc_update {
            // Any free slot: the kernel writes the one it took back into `offset`.
            offset: u32::MAX,
            data: self.fd() as u64,
            ..Default::default()
        };
        // SAFETY: `update` lives for the call and names one open descriptor, this ring's.
        let n = unsafe {
            sys::io_uring_register(
                self.fd(),
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
        self.set_registration(RingFdRegistration {
            ring_fd: self.fd(),
            index: update.offset,
        });
        Ok(())
    }
}
