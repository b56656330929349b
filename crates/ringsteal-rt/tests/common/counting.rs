//! A global allocator that counts, per thread, the allocations made, and for the whole
//! process the bytes allocated and not yet freed: for the test binaries that check a path
//! allocates nothing (or one buffer), or holds no memory while it waits. A binary opts in with
//! `#[global_allocator] static ALLOCATOR: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// Allocations at least this large are also counted apart, by [`large_allocations`]: the
/// smallest read buffer.
pub const LARGE: usize = 4096;

/// The system allocator, counting each thread's allocations (growing one counts as one).
pub struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static LARGE_ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Bytes allocated and not yet freed, process-wide.
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

/// The process's bytes allocated and not yet freed (through this allocator).
pub fn live_bytes() -> isize {
    LIVE_BYTES.load(Relaxed)
}

fn count(size: usize) {
    // `try_with`: the allocator also runs while threads exit.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    if size >= LARGE {
        let _ = LARGE_ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

/// This thread's allocations so far, of any size.
pub fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// This thread's allocations of [`LARGE`] bytes or more so far.
pub fn large_allocations() -> usize {
    LARGE_ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards every call to `System` unchanged; counting allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        LIVE_BYTES.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        LIVE_BYTES.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        LIVE_BYTES.fetch_add(new_size as isize - layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}
