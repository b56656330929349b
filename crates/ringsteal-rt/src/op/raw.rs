//! The heap cell of an in-flight operation, shared by its future and the shard's driver.
//!
//! Owns: the op's reference count, its result, its waker and the data the kernel reads or
//! writes (buffers, paths, iovecs, sockaddrs, timespecs). The cell is freed only when the
//! future is gone *and* every CQE that names it has been reaped: that is the whole of the
//! "never free memory the kernel may still write" rule for ops, and it also means a late CQE
//! can never find a reused address.
//!
//! References: one for the future, one per SQE whose CQE will name the cell (the op itself,
//! its link timeout, a cancel aimed at it). Whoever drops the last frees the cell.
//!
//! May not: submit anything (the future and the driver do).

use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Waker;

use crate::sync::atomic_waker::AtomicWaker;

/// The type-independent part of an op cell (first field of [`OpCell`]).
#[repr(C, align(8))]
pub(crate) struct OpHeader {
    refs: AtomicU32,
    complete: AtomicBool,
    res: UnsafeCell<i32>,
    flags: UnsafeCell<u32>,
    waker: AtomicWaker,
    /// The shard whose ring the op was submitted to.
    pub(crate) shard: u32,
    /// Frees the whole cell.
    free: unsafe fn(NonNull<OpHeader>),
}

// SAFETY: `res`/`flags` are written once by the driver before `complete` is set with Release
// and read by the future only after observing it with Acquire; everything else is atomic.
unsafe impl Send for OpHeader {}
// SAFETY: as above.
unsafe impl Sync for OpHeader {}

/// An op cell: the header and the operation's data.
#[repr(C)]
pub(crate) struct OpCell<T> {
    pub(crate) header: OpHeader,
    pub(crate) data: UnsafeCell<T>,
}

impl<T> OpCell<T> {
    /// Allocates a cell holding `data`, with the future's reference and `cqes` driver
    /// references (one per SQE that will post a CQE naming it).
    pub(crate) fn allocate(data: T, shard: usize, cqes: u32) -> NonNull<OpCell<T>> {
        let cell = Box::new(OpCell {
            header: OpHeader {
                refs: AtomicU32::new(1 + cqes),
                complete: AtomicBool::new(false),
                res: UnsafeCell::new(0),
                flags: UnsafeCell::new(0),
                waker: AtomicWaker::new(),
                shard: shard as u32,
                free: free::<T>,
            },
            data: UnsafeCell::new(data),
        });
        NonNull::from(Box::leak(cell))
    }
}

unsafe fn free<T>(ptr: NonNull<OpHeader>) {
    // SAFETY: the cell was made by Box::new in `allocate`; no references remain.
    drop(unsafe { Box::from_raw(ptr.cast::<OpCell<T>>().as_ptr()) });
}

impl OpHeader {
    /// Takes one more reference (for a cancel SQE about to be submitted).
    pub(crate) fn add_ref(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    /// True once the main completion has been recorded.
    pub(crate) fn is_complete(&self) -> bool {
        self.complete.load(Ordering::Acquire)
    }

    /// The recorded `(res, flags)`; only after [`is_complete`](Self::is_complete) returned true.
    pub(crate) fn result(&self) -> (i32, u32) {
        debug_assert!(self.complete.load(Ordering::Relaxed));
        // SAFETY: written once before `complete` was published (Release), read after an
        // Acquire load observed it; never written again.
        unsafe { (*self.res.get(), *self.flags.get()) }
    }

    /// Registers the future's waker.
    pub(crate) fn register(&self, waker: &Waker) {
        self.waker.register(waker);
    }

    /// Driver side: records the main completion and returns the waker to wake.
    pub(crate) fn complete(&self, res: i32, flags: u32) -> Option<Waker> {
        // SAFETY: only the driver of the op's shard writes these, once, before publishing.
        unsafe {
            *self.res.get() = res;
            *self.flags.get() = flags;
        }
        self.complete.store(true, Ordering::Release);
        self.waker.take()
    }
}

/// Drops one reference; frees the cell if it was the last.
///
/// # Safety
/// `ptr` must point at a live op cell and the caller must own one reference.
pub(crate) unsafe fn release(ptr: NonNull<OpHeader>) {
    // SAFETY: the caller's reference keeps the cell alive until the decrement.
    let header = unsafe { ptr.as_ref() };
    if header.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        let free_fn = header.free;
        // SAFETY: that was the last reference.
        unsafe { free_fn(ptr) }
    }
}
