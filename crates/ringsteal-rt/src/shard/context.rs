//! The thread-local context: which shard (if any) the current thread runs, and which runtime
//! a blocking-pool or user thread belongs to.
//!
//! Owns: the `CURRENT` pointer (set only while a shard runs on this thread, by `ShardGuard`)
//! and the entered runtime handle (`enter()`, blocking threads).
//!
//! Two questions have two answers on a shard thread inside another runtime's `enter()`:
//! *the current runtime* (what `spawn`, `spawn_blocking` and `RuntimeHandle::current` use)
//! is the innermost one made current, the entered one if it was entered after the shard
//! started running here (as tokio's `Handle::enter` inside a runtime); *the driving
//! runtime* (whose ring this thread's ops and timers go to, whose clock they read) is always
//! the shard's. Both are per thread, not per task: a guard held across an `.await` makes the
//! entered runtime current for every task the shard polls meanwhile (documented on
//! `RuntimeHandle::enter`, as the reason to drop the guard before awaiting).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::Shard;
use crate::shared::Shared;

thread_local! {
    static CURRENT: Cell<*const Shard> = const { Cell::new(std::ptr::null()) };
    /// True while a runtime entered after the current shard guard is still entered: it, not
    /// the shard's runtime, is the current runtime.
    static ENTERED_OVER_SHARD: Cell<bool> = const { Cell::new(false) };
    /// The number of the first `EnterGuard` made after the current shard guard.
    static SHARD_FIRST_GUARD: Cell<u64> = const { Cell::new(0) };
    /// The runtimes entered on this thread, innermost last, each with its guard's number.
    static ENTERED: RefCell<Vec<(u64, Arc<Shared>)>> = const { RefCell::new(Vec::new()) };
    /// The number of the next `EnterGuard` made on this thread.
    static NEXT_GUARD: Cell<u64> = const { Cell::new(0) };
}

/// The innermost runtime entered on this thread; none once the thread's record of them is
/// gone (asked from another thread-local's destructor as the thread exits: `spawn` or
/// `RuntimeHandle::try_current` in a `Drop` must get "no runtime" there, not a panic, which
/// in a thread-local's destructor aborts the process).
fn entered() -> Option<Arc<Shared>> {
    ENTERED
        .try_with(|e| e.borrow().last().map(|(_, shared)| shared.clone()))
        .ok()
        .flatten()
}

/// Runs `f` with the shard this thread runs, if any.
#[inline]
pub(crate) fn with_shard<R>(f: impl FnOnce(Option<&Shard>) -> R) -> R {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is non-null only between `ShardGuard::enter` and its drop, during which
    // the shard outlives every use on this thread.
    f(unsafe { ptr.as_ref() })
}

/// Wakes `waker` once this thread's shard has next taken in its completions, timers and
/// inbox, after the tasks those woke (at once on a thread that runs no shard): the yield of
/// a task that gives way to I/O, as tokio defers a yield until its driver has been polled.
/// A plain `wake_by_ref` would queue the task behind only what is already runnable, and the
/// shard's tick would poll it again before looking at its ring.
///
/// Only the waker of what the shard is polling is deferred (`polling.rs`): any other, an
/// executor's nested inside that poll above all, is woken at once, since that executor may
/// block the shard until it is; the task being polled, if that wake requeues it (a
/// combinator's waker wakes it), then goes after the reap all the same.
pub(crate) fn wake_after_reap(waker: &std::task::Waker) {
    with_shard(|shard| match shard {
        Some(shard) if shard.polling.is_polled(waker) => shard.woken_after_reap.push(waker),
        Some(shard) => {
            shard.yielded_through_other_waker.set(true);
            waker.wake_by_ref();
        }
        None => waker.wake_by_ref(),
    })
}

/// The id of the task this thread's shard is polling, if any (`task::try_id`).
pub(crate) fn polled_task_id() -> Option<crate::task::Id> {
    with_shard(|shard| shard.and_then(|s| s.polling.task_id()))
}

/// Whether the calling thread runs shard `index` of the runtime `runtime`: `None` on a
/// thread that runs no shard, `Some(false)` on another shard (of any runtime), or if there is
/// no runtime. How an op or a stream tells whether the request it left on a ring is on the
/// calling shard's (`runtime`: its task's `SchedHandle::shared`).
pub(crate) fn runs_shard(index: usize, runtime: Option<&Shared>) -> Option<bool> {
    with_shard(|cur| {
        cur.map(|s| {
            s.index == index && runtime.is_some_and(|r| std::ptr::eq(r, Arc::as_ptr(&s.shared)))
        })
    })
}

/// Runs `f` with the current shard if it belongs to `shared`'s runtime.
#[inline]
pub(crate) fn with_shard_of<R>(shared: *const Shared, f: impl FnOnce(Option<&Shard>) -> R) -> R {
    with_shard(|s| f(s.filter(|s| Arc::as_ptr(&s.shared) == shared)))
}

/// Runs `f` with the current runtime (see the module docs: the shard's, unless a runtime was
/// entered over it; off a shard, the one entered), without cloning the `Arc` on a shard (the
/// spawn hot path).
#[inline]
pub(crate) fn with_current_shared<R>(f: impl FnOnce(Option<&Arc<Shared>>) -> R) -> R {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: as in `with_shard`.
    if let Some(shard) = unsafe { ptr.as_ref() } {
        if !ENTERED_OVER_SHARD.with(Cell::get) {
            return f(Some(&shard.shared));
        }
    }
    f(entered().as_ref())
}

/// Runs `f` with the driving runtime (see the module docs: the shard's on a shard thread,
/// else the one entered): the runtime whose ring an op made here goes to.
#[inline]
pub(crate) fn with_driving_shared<R>(f: impl FnOnce(Option<&Arc<Shared>>) -> R) -> R {
    let ptr = CURRENT.with(Cell::get);
    // SAFETY: as in `with_shard`.
    if let Some(shard) = unsafe { ptr.as_ref() } {
        return f(Some(&shard.shared));
    }
    f(entered().as_ref())
}

/// Now on the clock of the driving runtime (paused time while a test has paused
/// it), or `std::time::Instant::now()` on a thread of no runtime.
#[inline]
pub(crate) fn clock_now() -> std::time::Instant {
    with_driving_shared(|s| s.map_or_else(std::time::Instant::now, |shared| shared.clock.now()))
}

/// Marks this thread as running `shard` until dropped. Runtimes entered before it stop
/// being current while it lasts (the shard's runtime is); those entered after it are.
pub(crate) struct ShardGuard {
    prev: *const Shard,
    prev_first_guard: u64,
}

impl ShardGuard {
    pub(crate) fn enter(shard: &Shard) -> Self {
        // A shard allocates task and op cells: blocks freed here are worth keeping.
        crate::util::block_cache::keep_freed_blocks();
        let prev = CURRENT.with(|c| c.replace(shard as *const Shard));
        let first = NEXT_GUARD.with(Cell::get);
        let prev_first_guard = SHARD_FIRST_GUARD.with(|f| f.replace(first));
        ENTERED_OVER_SHARD.with(|o| o.set(false));
        Self {
            prev,
            prev_first_guard,
        }
    }
}

impl Drop for ShardGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
        SHARD_FIRST_GUARD.with(|f| f.set(self.prev_first_guard));
        let _ = ENTERED.try_with(|e| note_entered_over_shard(&e.borrow()));
    }
}

/// Recomputes [`ENTERED_OVER_SHARD`] from the stack of entered runtimes: true on a shard
/// thread whose innermost entered runtime was entered after the shard guard.
fn note_entered_over_shard(stack: &[(u64, Arc<Shared>)]) {
    let on_shard = CURRENT.with(|c| !c.get().is_null());
    let first = SHARD_FIRST_GUARD.with(Cell::get);
    let over = on_shard && stack.last().is_some_and(|(id, _)| *id >= first);
    ENTERED_OVER_SHARD.with(|o| o.set(over));
}

/// True if this thread currently runs a shard (of any runtime).
pub(crate) fn on_shard() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// The current runtime (see the module docs).
pub(crate) fn current_shared() -> Option<Arc<Shared>> {
    with_current_shared(|s| s.cloned())
}

/// The driving runtime (see the module docs).
pub(crate) fn driving_shared() -> Option<Arc<Shared>> {
    with_driving_shared(|s| s.cloned())
}

/// Makes `shared` the current runtime of this thread until the guard drops (on a shard
/// thread too: see the module docs).
/// Guards nest; one dropped out of order takes only its own runtime off the thread (the
/// innermost one still entered stays current), so no runtime stays current after all its
/// guards are gone.
pub(crate) struct EnterGuard {
    id: u64,
    /// Dropped on the thread that entered (the stack is that thread's).
    _this_thread: std::marker::PhantomData<*const ()>,
}

impl EnterGuard {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let id = NEXT_GUARD.with(|n| n.replace(n.get().wrapping_add(1)));
        // Once the thread's record is gone (a thread-local's destructor as the thread exits)
        // the guard enters nothing: what it would make possible fails as it does off a
        // runtime (`try_spawn`'s `NotOnShard`), rather than the destructor aborting.
        let _ = ENTERED.try_with(|e| {
            let mut stack = e.borrow_mut();
            stack.push((id, shared));
            note_entered_over_shard(&stack);
        });
        Self {
            id,
            _this_thread: std::marker::PhantomData,
        }
    }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        // Taken out before it is dropped: a runtime's last reference may go with it, and
        // its drop must not find the stack borrowed.
        // (Nothing to take out once the record is gone: it dropped its runtimes with it.)
        let gone = ENTERED.try_with(|e| {
            let mut stack = e.borrow_mut();
            let at = stack.iter().rposition(|(id, _)| *id == self.id)?;
            let gone = stack.remove(at);
            note_entered_over_shard(&stack);
            Some(gone)
        });
        drop(gone);
    }
}
