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
//! Owns: the per-thread stack of open scopes. Knows nothing of the driver or the shard.

use std::cell::RefCell;
use std::task::Waker;

thread_local! {
    /// One collection per open scope, innermost last.
    static SCOPES: RefCell<Vec<Vec<Waker>>> = const { RefCell::new(Vec::new()) };
}

/// Wakes `wakers`, or, inside a [`collecting`] scope on this thread, hands them to it.
pub(crate) fn wake_all(wakers: impl IntoIterator<Item = Waker>) {
    let mut wakers = wakers.into_iter().peekable();
    if wakers.peek().is_none() {
        return;
    }
    // The borrow ends before any waker runs: a wake may come back here.
    let now: Vec<Waker> = SCOPES.with(|s| match s.borrow_mut().last_mut() {
        Some(scope) => {
            scope.extend(wakers);
            Vec::new()
        }
        None => wakers.collect(),
    });
    now.into_iter().for_each(Waker::wake);
}

/// Runs `f` with the wakes [`wake_all`] is asked for on this thread collected into `into`
/// rather than done (also if `f` unwinds). Scopes nest: the innermost collects.
pub(crate) fn collecting<R>(into: &mut Vec<Waker>, f: impl FnOnce() -> R) -> R {
    struct Scope<'a>(&'a mut Vec<Waker>);
    impl Drop for Scope<'_> {
        fn drop(&mut self) {
            let collected = SCOPES.with(|s| s.borrow_mut().pop()).unwrap_or_default();
            self.0.extend(collected);
        }
    }
    SCOPES.with(|s| s.borrow_mut().push(Vec::new()));
    let _scope = Scope(into);
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
}
