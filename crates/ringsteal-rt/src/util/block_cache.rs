//! Per-thread caches of freed small blocks, for task and op cells.
//!
//! Every spawn allocates a task cell and every I/O an op cell; both are freed soon after, often
//! by the same shard. Keeping freed blocks in a per-thread free list per size class turns that
//! churn into two pointer moves, avoids contention in the global allocator between shards, and
//! keeps the pages warm. A block may be freed on any thread; it joins that thread's cache if
//! the thread keeps freed blocks ([`keep_freed_blocks`]: shard threads, which allocate
//! cells), else goes back to the global allocator. A blocking-pool thread that drops the
//! last reference to a detached `spawn_blocking` task's cell never allocates one, so a cache
//! there would only grow (up to its bound, on each of hundreds of threads). Each class keeps
//! at most [`CACHE_BYTES`] worth, the rest goes back to the global allocator, as does
//! everything a thread caches when it exits.

use std::alloc::{alloc, dealloc as global_dealloc, handle_alloc_error, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;

/// Block sizes served from the cache; larger (or more aligned) layouts use the global
/// allocator directly.
const CLASSES: [usize; 8] = [64, 96, 128, 192, 256, 384, 512, 768];
/// Alignment of every cached block.
const ALIGN: usize = 16;
/// Most bytes kept per class per thread.
const CACHE_BYTES: usize = 512 * 1024;

struct Cache {
    free: [Vec<NonNull<u8>>; CLASSES.len()],
    /// Blocks freed on this thread are kept ([`keep_freed_blocks`]).
    keeps: bool,
}

impl Drop for Cache {
    fn drop(&mut self) {
        for (class, list) in self.free.iter_mut().enumerate() {
            let layout = class_layout(class);
            for block in list.drain(..) {
                // SAFETY: every cached block was allocated with exactly this layout.
                unsafe { global_dealloc(block.as_ptr(), layout) };
            }
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache { free: [const { Vec::new() }; CLASSES.len()], keeps: false }) };
}

/// From now on, blocks freed on this thread join its cache (a thread that allocates cells:
/// a shard's). Elsewhere they go back to the global allocator.
pub(crate) fn keep_freed_blocks() {
    let _ = CACHE.try_with(|c| c.borrow_mut().keeps = true);
}

/// The class serving `layout`. Inlined and written as a plain loop over a constant table,
/// so that for a layout known at compile time (every caller's: `Layout::new::<Cell>()`) the
/// whole choice folds away.
#[inline(always)]
const fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > ALIGN {
        return None;
    }
    let mut class = 0;
    while class < CLASSES.len() {
        if layout.size() <= CLASSES[class] {
            return Some(class);
        }
        class += 1;
    }
    None
}

fn class_layout(class: usize) -> Layout {
    // SAFETY: sizes are non-zero multiples of the power-of-two ALIGN.
    unsafe { Layout::from_size_align_unchecked(CLASSES[class], ALIGN) }
}

/// Allocates memory for `layout` (non-zero size). The cached path is inlined; the global
/// allocator is the cold path.
#[inline]
pub(crate) fn allocate(layout: Layout) -> NonNull<u8> {
    let Some(class) = class_of(layout) else {
        return allocate_global(layout);
    };
    let reused = CACHE
        .try_with(|c| c.borrow_mut().free[class].pop())
        .ok()
        .flatten();
    match reused {
        Some(block) => block,
        None => allocate_global(class_layout(class)),
    }
}

#[cold]
#[inline(never)]
fn allocate_global(layout: Layout) -> NonNull<u8> {
    // SAFETY: the layout has a non-zero size (callers allocate real cells).
    let ptr = unsafe { alloc(layout) };
    NonNull::new(ptr).unwrap_or_else(|| handle_alloc_error(layout))
}

/// Frees memory from [`allocate`] with the same `layout`.
///
/// # Safety
/// `ptr` must come from `allocate(layout)` and not be used afterwards.
#[inline]
pub(crate) unsafe fn deallocate(ptr: NonNull<u8>, layout: Layout) {
    let Some(class) = class_of(layout) else {
        // SAFETY: allocated by the global allocator with this layout.
        unsafe { deallocate_global(ptr, layout) };
        return;
    };
    let cap = CACHE_BYTES / CLASSES[class];
    let kept = CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            let keeps = c.keeps;
            let list = &mut c.free[class];
            if keeps && list.len() < cap {
                list.push(ptr);
                true
            } else {
                false
            }
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: cached-class blocks are allocated with the class layout.
        unsafe { deallocate_global(ptr, class_layout(class)) };
    }
}

/// # Safety
/// `ptr` was allocated by the global allocator with `layout` and is not used afterwards.
#[cold]
#[inline(never)]
unsafe fn deallocate_global(ptr: NonNull<u8>, layout: Layout) {
    // SAFETY: forwarded from the caller.
    unsafe { global_dealloc(ptr.as_ptr(), layout) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of `class` in this thread's cache.
    fn cached(class: usize) -> usize {
        CACHE.with(|c| c.borrow().free[class].len())
    }

    #[test]
    fn freed_blocks_are_reused_by_the_same_class_and_large_ones_bypass_the_cache() {
        keep_freed_blocks();
        let small = Layout::from_size_align(100, 8).unwrap();
        let a = allocate(small);
        // SAFETY: from allocate(small).
        unsafe { deallocate(a, small) };
        let other_same_class = Layout::from_size_align(120, 16).unwrap();
        let b = allocate(other_same_class);
        assert_eq!(a, b, "a block of the same class is reused");
        // SAFETY: from allocate(other_same_class).
        unsafe { deallocate(b, other_same_class) };
        let big = Layout::from_size_align(4096, 8).unwrap();
        let c = allocate(big);
        // SAFETY: from allocate(big).
        unsafe { deallocate(c, big) };
        let overaligned = Layout::from_size_align(64, 64).unwrap();
        let d = allocate(overaligned);
        assert_eq!(d.as_ptr() as usize % 64, 0);
        // SAFETY: from allocate(overaligned).
        unsafe { deallocate(d, overaligned) };
    }

    #[test]
    fn blocks_freed_on_another_thread_join_that_threads_cache() {
        let l = Layout::from_size_align(200, 8).unwrap();
        /// Carries the block (with its provenance, for Miri) to the other thread.
        struct Block(NonNull<u8>);
        // SAFETY: the block is plain memory owned by whoever holds it.
        unsafe impl Send for Block {}
        impl Block {
            fn into_inner(self) -> NonNull<u8> {
                self.0
            }
        }
        let block = Block(allocate(l));
        let addr = block.0.as_ptr() as usize;
        std::thread::spawn(move || {
            keep_freed_blocks();
            let p = block.into_inner();
            // SAFETY: from allocate(l) on the parent thread.
            unsafe { deallocate(p, l) };
            let q = allocate(l);
            assert_eq!(q.as_ptr() as usize, addr);
            // SAFETY: from allocate(l).
            unsafe { deallocate(q, l) };
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_does_not_keep_freed_blocks_gives_them_back() {
        let l = Layout::from_size_align(200, 8).unwrap();
        let class = class_of(l).unwrap();
        std::thread::spawn(move || {
            for _ in 0..3 {
                let p = allocate(l);
                // SAFETY: from allocate(l).
                unsafe { deallocate(p, l) };
            }
            assert_eq!(
                cached(class),
                0,
                "a thread that allocates no cells kept blocks"
            );
            keep_freed_blocks();
            let p = allocate(l);
            // SAFETY: from allocate(l).
            unsafe { deallocate(p, l) };
            assert_eq!(cached(class), 1);
        })
        .join()
        .unwrap();
    }
}
