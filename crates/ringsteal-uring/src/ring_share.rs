//! [`RingShare`]: a ring's descriptor, shared by the [`Ring`](crate::Ring) and the
//! [`BufRing`](crate::BufRing)s registered on it, and the memory that must outlive it.
//!
//! Owns: the descriptor, closed when the last share goes; and the mappings of buffer rings
//! whose group could not be unregistered (a `SINGLE_ISSUER` ring refuses `io_uring_register`
//! from every thread but its issuer, with `EEXIST`). Such a group stays registered, so the
//! kernel could still hand its buffer addresses to a request, until the io_uring instance
//! ends; its memory is kept here and unmapped only after the descriptor is closed, when no
//! request can be submitted any more. May not: unmap anything while the descriptor is open.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, PoisonError};

use crate::mmap::Mmap;

/// A ring's descriptor and the memory to free once it is closed.
#[derive(Debug)]
pub(crate) struct RingShare {
    // Field order matters for drop: the descriptor closes before the orphans are unmapped.
    fd: OwnedFd,
    /// Mappings of groups still registered on this ring whose `BufRing` is gone.
    orphans: Mutex<Vec<Mmap>>,
}

impl RingShare {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        Self {
            fd,
            orphans: Mutex::new(Vec::new()),
        }
    }

    /// The descriptor.
    #[inline]
    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Keeps `mappings` until the descriptor is closed: a group that could not be
    /// unregistered may still hand their addresses to the kernel until then.
    pub(crate) fn keep_until_closed(&self, mappings: impl IntoIterator<Item = Mmap>) {
        self.orphans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(mappings);
    }
}
