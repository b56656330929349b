//! The submission queue: SQE slots shared with the kernel, and the tail that publishes them.
//!
//! Owns: the mapped SQ ring and SQE array, and the application's private tail. Ordering:
//! SQEs are written with plain stores, then the tail is published with a `Release` store so
//! the kernel sees complete SQEs; the kernel's head is read with `Acquire` so a slot is reused
//! only after the kernel has finished reading it. May not: enter the kernel (see `ring.rs`).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::abi::{io_uring_params, io_uring_sqe, IORING_SETUP_NO_SQARRAY};
use crate::mmap::Mmap;

/// The submission side of a ring.
#[derive(Debug)]
pub(crate) struct SubmissionQueue {
    khead: *const AtomicU32,
    ktail: *const AtomicU32,
    kflags: *const AtomicU32,
    kdropped: *const AtomicU32,
    mask: u32,
    entries: u32,
    sqes: *mut io_uring_sqe,
    /// Our tail: SQEs up to here are written; published to `ktail` by `publish`.
    tail: u32,
}

impl SubmissionQueue {
    /// Wires the queue to its mappings and fills the index array with the identity.
    ///
    /// # Safety
    /// `ring` and `sqes` must be the SQ ring and SQE mappings of the ring set up with `p`.
    pub(crate) unsafe fn new(ring: &Mmap, sqes: &Mmap, p: &io_uring_params) -> Self {
        let off = &p.sq_off;
        // SAFETY: the kernel placed these fields at these offsets inside the SQ ring mapping,
        // 4-byte aligned, as `p.sq_off` reports.
        unsafe {
            let q = Self {
                khead: ring.at(off.head),
                ktail: ring.at(off.tail),
                kflags: ring.at(off.flags),
                kdropped: ring.at(off.dropped),
                mask: *ring.at::<u32>(off.ring_mask),
                entries: *ring.at::<u32>(off.ring_entries),
                sqes: sqes.as_ptr().cast(),
                tail: (*ring.at::<AtomicU32>(off.tail)).load(Ordering::Relaxed),
            };
            if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
                // Identity mapping: SQE slot i is array entry i, written once, never again.
                let array: *mut u32 = ring.at(off.array);
                for i in 0..q.entries {
                    array.add(i as usize).write(i);
                }
            }
            q
        }
    }

    /// Number of SQ slots.
    pub(crate) fn entries(&self) -> u32 {
        self.entries
    }

    /// The kernel's SQ head: how many SQEs it has consumed since the ring was made (wrapping).
    #[inline]
    pub(crate) fn khead(&self) -> u32 {
        // SAFETY: `khead` points into the live SQ ring mapping; the kernel writes it
        // atomically; Acquire pairs with the kernel's release after it read the SQEs.
        unsafe { (*self.khead).load(Ordering::Acquire) }
    }

    /// Slots written but not yet consumed by the kernel (published or not).
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.tail.wrapping_sub(self.khead())
    }

    /// Free slots.
    #[inline]
    pub(crate) fn space_left(&self) -> u32 {
        self.entries - self.len()
    }

    /// The SQ flags word (`IORING_SQ_*`), as the kernel last set it.
    #[inline]
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: `kflags` points into the live SQ ring mapping; the kernel updates it with
        // atomic bit operations.
        unsafe { (*self.kflags).load(Ordering::Acquire) }
    }

    /// Sets `bits` in the SQ flags word, with the atomic OR the kernel uses (see
    /// [`Ring::mark_taskrun_without_work`](crate::Ring::mark_taskrun_without_work)).
    pub(crate) fn set_flags(&self, bits: u32) {
        // SAFETY: as in `flags`; the mapping is writable (the tail lives in it too), and an
        // atomic OR is what the kernel itself does to this word.
        unsafe { (*self.kflags).fetch_or(bits, Ordering::Release) };
    }

    /// Number of invalid SQEs the kernel dropped.
    pub(crate) fn dropped(&self) -> u32 {
        // SAFETY: as in `flags`.
        unsafe { (*self.kdropped).load(Ordering::Relaxed) }
    }

    /// Copies `sqes` into consecutive slots, all or none. Returns false when they do not fit.
    ///
    /// # Safety
    /// See [`crate::Ring::push`].
    #[inline]
    pub(crate) unsafe fn push(&mut self, sqes: &[io_uring_sqe]) -> bool {
        if (self.space_left() as usize) < sqes.len() {
            return false;
        }
        for sqe in sqes {
            let idx = (self.tail & self.mask) as usize;
            // SAFETY: idx < entries, so the slot lies inside the SQE array; the kernel has
            // consumed it (space_left counted it free after an Acquire load of the head).
            unsafe { self.sqes.add(idx).write(*sqe) };
            self.tail = self.tail.wrapping_add(1);
        }
        true
    }

    /// Overwrites the most recently written SQE if the kernel has not consumed it yet.
    /// Returns false (and writes nothing) if it has.
    ///
    /// # Safety
    /// The kernel must not be reading the SQ meanwhile: no `io_uring_enter` on this ring from
    /// another thread, and no SQPOLL thread. `sqe` is under [`crate::Ring::push`]'s contract.
    pub(crate) unsafe fn replace_last(&mut self, sqe: &io_uring_sqe) -> bool {
        if self.len() == 0 {
            return false;
        }
        let idx = (self.tail.wrapping_sub(1) & self.mask) as usize;
        // SAFETY: idx < entries; the slot holds an SQE the kernel has not consumed (the head,
        // read with Acquire, is behind the tail) and, by the caller's contract, is not reading
        // now. It reads the slot again only at a later enter, after the tail is published
        // again with Release, which orders this write before it.
        unsafe { self.sqes.add(idx).write(*sqe) };
        true
    }

    /// Takes back every SQE the kernel has not consumed, oldest first, into `out`: the tail
    /// (ours and the published one) goes back to the kernel's head, so none of them is ever
    /// submitted.
    ///
    /// # Safety
    /// As for [`replace_last`](Self::replace_last): the kernel must not be reading the SQ
    /// meanwhile.
    pub(crate) unsafe fn withdraw_pending(&mut self, out: &mut Vec<io_uring_sqe>) {
        let head = self.khead();
        let mut at = head;
        while at != self.tail {
            let idx = (at & self.mask) as usize;
            // SAFETY: idx < entries; the slot holds an SQE written here and not consumed
            // (between the head and our tail), which nothing else writes.
            out.push(unsafe { self.sqes.add(idx).read() });
            at = at.wrapping_add(1);
        }
        self.tail = head;
        // SAFETY: `ktail` points into the live SQ ring mapping. The kernel, not reading now,
        // sees no entries at its next enter (tail equals its head), and slots from the head
        // on are written again only by later pushes, published with Release.
        unsafe { (*self.ktail).store(head, Ordering::Release) };
    }

    /// Publishes every written SQE to the kernel; returns how many are waiting to be consumed.
    #[inline]
    pub(crate) fn publish(&mut self) -> u32 {
        // SAFETY: `ktail` points into the live SQ ring mapping. Release makes the SQE writes
        // visible to the kernel before the new tail.
        unsafe { (*self.ktail).store(self.tail, Ordering::Release) };
        self.len()
    }
}
