//! The thread-local context: which shard (if any) the current thread runs, and which runtime
//! a blocking-pool or user thread belongs to.
//!
//! Owns: the `CURRENT` pointer (set only while a shard runs on this thread, by `ShardGuard`)
//! and the entered runtime handle (`enter()`, blocking threads).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::Shard;
use crate::shared::Shared;

thread_local! {
    static CURRENT: Cell<*const Shard> = const { Cell::new(std::ptr::null()) };
    static ENTERED: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `f` with the shard this thread runs, if any.
#[inline]
pub(crate) fn with_shard<R>(f: impl FnOnce(Option<&Shard>) -> R) -> R {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is non-null only between `ShardGuard::enter` and its drop, during which
    // the shard outlives every use on this thread.
    f(unsafe { ptr.as_ref() })
}

/// Runs `f` with the current shard if it belongs to `shared`'s runtime.
#[inline]
pub(crate) fn with_shard_of<R>(shared: *const Shared, f: impl FnOnce(Option<&Shard>) -> R) -> R {
    with_shard(|s| f(s.filter(|s| Arc::as_ptr(&s.shared) == shared)))
}

/// Runs `f` with the runtime of the current thread (its shard's, or the one entered), without
/// cloning the `Arc` on a shard (the spawn hot path).
#[inline]
pub(crate) fn with_current_shared<R>(f: impl FnOnce(Option<&Arc<Shared>>) -> R) -> R {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: as in `with_shard`.
    if let Some(shard) = unsafe { ptr.as_ref() } {
        return f(Some(&shard.shared));
    }
    let entered = ENTERED.with(|e| e.borrow().clone());
    f(entered.as_ref())
}

/// Now on the clock of the current thread's runtime (paused time while a test has paused
/// it), or `std::time::Instant::now()` on a thread of no runtime.
#[inline]
pub(crate) fn clock_now() -> std::time::Instant {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: as in `with_shard`.
    if let Some(shard) = unsafe { ptr.as_ref() } {
        return shard.shared.clock.now();
    }
    ENTERED.with(|e| {
        e.borrow()
            .as_ref()
            .map_or_else(std::time::Instant::now, |shared| shared.clock.now())
    })
}

/// Marks this thread as running `shard` until dropped.
pub(crate) struct ShardGuard {
    prev: *const Shard,
}

impl ShardGuard {
    pub(crate) fn enter(shard: &Shard) -> Self {
        let prev = CURRENT.with(|c| c.replace(shard as *const Shard));
        Self { prev }
    }
}

impl Drop for ShardGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

/// True if this thread currently runs a shard (of any runtime).
pub(crate) fn on_shard() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// The runtime of the current thread: its shard's, or the one entered.
pub(crate) fn current_shared() -> Option<Arc<Shared>> {
    with_shard(|s| s.map(|s| s.shared.clone())).or_else(|| ENTERED.with(|e| e.borrow().clone()))
}

/// Makes `shared` the current runtime of this (non-shard) thread until the guard drops.
pub(crate) struct EnterGuard {
    prev: Option<Arc<Shared>>,
}

impl EnterGuard {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let prev = ENTERED.with(|e| e.replace(Some(shared)));
        Self { prev }
    }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        ENTERED.with(|e| *e.borrow_mut() = prev);
    }
}
