//! The completion queue: CQEs the kernel posts, and the head that frees their slots.
//!
//! Owns: the mapped CQ ring. Ordering: the kernel's tail is read with `Acquire` so the CQEs
//! before it are complete; our head is stored with `Release` after we copied the CQEs out, so
//! the kernel never overwrites a CQE we are still reading. May not: enter the kernel.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::abi::{io_uring_cqe, io_uring_params};
use crate::mmap::Mmap;

/// The completion side of a ring.
#[derive(Debug)]
pub(crate) struct CompletionQueue {
    khead: *const AtomicU32,
    ktail: *const AtomicU32,
    koverflow: *const AtomicU32,
    mask: u32,
    entries: u32,
    cqes: *const io_uring_cqe,
    /// Our head: CQEs before it have been consumed.
    head: u32,
}

impl CompletionQueue {
    /// Wires the queue to its mapping.
    ///
    /// # Safety
    /// `ring` must be the CQ ring mapping of the ring set up with `p`.
    pub(crate) unsafe fn new(ring: &Mmap, p: &io_uring_params) -> Self {
        let off = &p.cq_off;
        // SAFETY: the kernel placed these fields at these offsets inside the CQ ring mapping,
        // suitably aligned, as `p.cq_off` reports.
        unsafe {
            Self {
                khead: ring.at(off.head),
                ktail: ring.at(off.tail),
                koverflow: ring.at(off.overflow),
                mask: *ring.at::<u32>(off.ring_mask),
                entries: *ring.at::<u32>(off.ring_entries),
                cqes: ring.at(off.cqes),
                head: (*ring.at::<AtomicU32>(off.head)).load(Ordering::Relaxed),
            }
        }
    }

    /// Number of CQ slots.
    pub(crate) fn entries(&self) -> u32 {
        self.entries
    }

    #[inline]
    fn ktail(&self) -> u32 {
        // SAFETY: `ktail` points into the live CQ ring mapping; Acquire pairs with the
        // kernel's release store after writing the CQEs.
        unsafe { (*self.ktail).load(Ordering::Acquire) }
    }

    /// CQEs ready to be consumed.
    #[inline]
    pub(crate) fn ready(&self) -> u32 {
        self.ktail().wrapping_sub(self.head)
    }

    /// CQEs the kernel had to drop (only without `FEAT_NODROP`).
    pub(crate) fn overflow(&self) -> u32 {
        // SAFETY: `koverflow` points into the live CQ ring mapping.
        unsafe { (*self.koverflow).load(Ordering::Relaxed) }
    }

    /// Copies up to `out.len()` ready CQEs into `out`, frees their slots, returns the count.
    #[inline]
    pub(crate) fn copy_into(&mut self, out: &mut [io_uring_cqe]) -> usize {
        let ready = self.ready() as usize;
        let n = ready.min(out.len());
        for (i, slot) in out.iter_mut().take(n).enumerate() {
            let idx = (self.head.wrapping_add(i as u32) & self.mask) as usize;
            // SAFETY: idx < entries; the CQE at idx was published by the kernel (it lies
            // before the tail we loaded with Acquire) and not yet released by our head.
            *slot = unsafe { self.cqes.add(idx).read() };
        }
        self.advance(n as u32);
        n
    }

    /// Consumes the oldest ready CQE, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<io_uring_cqe> {
        if self.ready() == 0 {
            return None;
        }
        let idx = (self.head & self.mask) as usize;
        // SAFETY: as in `copy_into`.
        let cqe = unsafe { self.cqes.add(idx).read() };
        self.advance(1);
        Some(cqe)
    }

    #[inline]
    fn advance(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        self.head = self.head.wrapping_add(n);
        // SAFETY: `khead` points into the live CQ ring mapping. Release orders our reads of
        // the CQEs before the kernel may reuse their slots.
        unsafe { (*self.khead).store(self.head, Ordering::Release) };
    }
}
