//! [`Polling`]: what the shard is polling right now (a task, or `block_on`'s future), so
//! [`wake_after_reap`](super::context::wake_after_reap) can tell a yield of that poll from
//! one made under an executor nested inside it, and `task::id()` can name the task.
//!
//! A future that yields under `futures::executor::block_on` (or any executor run inside a
//! task) hands over that executor's waker. Deferring it to the shard's next reap would never
//! wake it: the shard is blocked in that very poll (the deadlock of tokio issue 6996). Only
//! the waker of what the shard polls is deferred; any other is woken at once. A waker a
//! combinator wraps (`FuturesUnordered`'s) is woken at once too, but the shard notes it
//! (`Shard::yielded_through_other_waker`): the combinator wakes the task, and the task,
//! requeued as its poll ends, goes after the reap as its own yield would. A nested
//! executor's future is polled again at once, and its thread never blocks on the reap.
//!
//! Owns: the slots (the task, its id, `block_on`'s waker). May not: dereference a task's
//! address (it is only compared), or keep `block_on`'s waker past the guard that borrows it.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::task::Waker;

use crate::task::{Header, Id};

#[derive(Default)]
pub(crate) struct Polling {
    /// The task being polled (null between polls).
    task: Cell<Option<NonNull<Header>>>,
    /// Its id (meaningful while `task` is set), for `task::id()`.
    id: Cell<Option<Id>>,
    /// `block_on`'s waker while the shard serves a `block_on` (null otherwise).
    main: Cell<Option<NonNull<Waker>>>,
}

impl Polling {
    /// Marks `task`, of id `id`, as the one being polled until [`end_task`](Self::end_task):
    /// three stores per poll, with no thread-local lookup.
    #[inline]
    pub(crate) fn start_task(&self, task: NonNull<Header>, id: Id) {
        self.task.set(Some(task));
        self.id.set(Some(id));
    }

    /// The id of the task being polled, if one is.
    pub(crate) fn task_id(&self) -> Option<Id> {
        self.task.get().and(self.id.get())
    }

    #[inline]
    pub(crate) fn end_task(&self) {
        self.task.set(None);
    }

    /// Marks `waker` as `block_on`'s until the guard is dropped.
    pub(crate) fn serve_block_on<'a>(&'a self, waker: &'a Waker) -> BlockOnGuard<'a> {
        self.main.set(Some(NonNull::from(waker)));
        BlockOnGuard {
            polling: self,
            _waker: PhantomData,
        }
    }

    /// Whether `task` is the task being polled.
    #[inline]
    pub(crate) fn is_task(&self, task: &crate::task::Notified) -> bool {
        self.task.get() == Some(task.as_ptr())
    }

    /// Whether `waker` wakes what the shard is polling: the task being polled, or, between
    /// task polls, `block_on`'s future.
    pub(crate) fn is_polled(&self, waker: &Waker) -> bool {
        if let Some(task) = self.task.get() {
            return crate::task::wakes_task(task, waker);
        }
        // SAFETY: `main` is set only while a `BlockOnGuard` lives, which borrows the waker.
        self.main
            .get()
            .is_some_and(|main| unsafe { main.as_ref() }.will_wake(waker))
    }
}

/// Clears `block_on`'s waker on drop (also when its future panics).
pub(crate) struct BlockOnGuard<'a> {
    polling: &'a Polling,
    _waker: PhantomData<&'a Waker>,
}

impl Drop for BlockOnGuard<'_> {
    fn drop(&mut self) {
        self.polling.main.set(None);
    }
}
