//! Wakes that must wait until the driver is free again.
//!
//! The driver frees op cells while it reaps (and while it handles a cancel): an op's buffer,
//! a stream's undelivered items. Giving a provided buffer back can make a stalled stream ready
//! to re-arm, and its waker is user code: one that polls its task at once (an executor that
//! runs futures inline) would submit to the ring the driver still holds, and a destructor it
//! runs could do the same. So code that may run there wakes through [`wake_all`], which, inside
//! a [`collecting`] scope opened by the driver's caller, only collects the wakers; the caller
//! wakes them once the driver is released, as it wakes the wakers of completed ops. Anywhere
//! else (a buffer dropped by a task, on another thread) it wakes at once.
//!
//! Owns: the per-thread pointer to the innermost open scope's collection. Knows nothing of the
//! driver or the shard.
//!
//! The driver opens a scope for every reap, so a scope costs what the common reap (nothing
//! deferred) can afford: a thread-local pointer swapped in and back, no allocation, no
//! `RefCell`, and nothing to move out when nothing was collected.

use std::cell::Cell;
use std::ptr;
use std::task::Waker;

thread_local! {
    /// The collection of the innermost open scope on this thread, or null outside any.
    static SCOPE: Cell<*mut Vec<Waker>> = const { Cell::new(ptr::null_mut()) };
}

/// Wakes `wakers`, or, inside a [`collecting`] scope on this thread, hands them to it.
pub(crate) fn wake_all(wakers: impl IntoIterator<Item = Waker>) {
    let scope = SCOPE.with(Cell::get);
    if scope.is_null() {
        wakers.into_iter().for_each(Waker::wake);
        return;
    }
    for waker in wakers {
        // SAFETY: a non-null `SCOPE` is the `into` of a `collecting` call still running on
        // this thread (its guard puts the outer value back before that call returns or
        // unwinds), and this call runs inside it, so the vector is alive. Nothing else uses
        // it meanwhile: `collecting` holds its `&mut` without touching it, and the mutable
        // borrow made here ends with the `push`, which runs no waker or destructor (so a scope opened
        // by the iterator's own code, nested and closed inside `next`, never overlaps it).
        unsafe { (*scope).push(waker) };
    }
}

/// Runs `f` with the wakes [`wake_all`] is asked for on this thread collected into `into`
/// rather than done (also if `f` unwinds). Scopes nest: the innermost collects.
#[inline(always)]
pub(crate) fn collecting<R>(into: &mut Vec<Waker>, f: impl FnOnce() -> R) -> R {
    /// Puts the enclosing scope's collection back, on return and on unwind.
    struct Restore(*mut Vec<Waker>);
    impl Drop for Restore {
        #[inline(always)]
        fn drop(&mut self) {
            SCOPE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPE.with(|s| s.replace(ptr::from_mut(into))));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn wakes_at_once_outside_a_scope_and_collects_inside_one() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        wake_all([Waker::from(count.clone())]);
        assert_eq!(count.0.load(SeqCst), 1);
        let mut later = Vec::new();
        collecting(&mut later, || {
            wake_all([Waker::from(count.clone())]);
            let mut inner = Vec::new();
            collecting(&mut inner, || wake_all([Waker::from(count.clone())]));
            assert_eq!(inner.len(), 1, "the innermost scope collects");
        });
        assert_eq!(count.0.load(SeqCst), 1, "nothing woken inside the scope");
        assert_eq!(later.len(), 1);
        wake_all(later);
        assert_eq!(count.0.load(SeqCst), 2);
    }

    #[test]
    fn a_scope_closed_by_a_panic_collects_what_came_before_and_no_more() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let mut later = Vec::new();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            collecting(&mut later, || {
                wake_all([Waker::from(count.clone())]);
                panic!("inside the scope");
            })
        }));
        assert!(unwound.is_err());
        assert_eq!(later.len(), 1, "the wake before the panic was collected");
        wake_all([Waker::from(count.clone())]);
        assert_eq!(
            count.0.load(SeqCst),
            1,
            "outside the scope again: woken at once"
        );
        assert_eq!(later.len(), 1);
    }

    #[test]
    fn wakers_whose_iterator_opens_its_own_scope_all_reach_the_outer_one() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let mut later = Vec::new();
        collecting(&mut later, || {
            // Producing each waker opens and closes a scope of its own (as dropping a
            // stream's items could), between the outer scope's pushes.
            wake_all((0..3).map(|_| {
                let mut inner = Vec::new();
                collecting(&mut inner, || wake_all([Waker::from(count.clone())]));
                assert_eq!(inner.len(), 1);
                Waker::from(count.clone())
            }));
        });
        assert_eq!(later.len(), 3);
        assert_eq!(count.0.load(SeqCst), 0, "nothing woken inside the scopes");
    }
}
