//! [`WokenAfterReap`]: the tasks that yielded until the shard has taken in its completions
//! (`context::wake_after_reap`), woken by the next `maintain`: by their wakers, or, for a
//! task whose yield went through a waker some combinator wraps, the task itself, queued
//! when its poll ended (`Shard::yielded_through_other_waker`).
//!
//! Asked on every tick and every idle check, nearly always empty: the question is one byte
//! read, not a `RefCell` borrow.

use std::cell::{Cell, RefCell};
use std::task::Waker;

use super::Shard;
use crate::task::Notified;
use crate::util::contain_panic;

#[derive(Default)]
pub(crate) struct WokenAfterReap {
    wakers: RefCell<Vec<Waker>>,
    tasks: RefCell<Vec<Notified>>,
    any: Cell<bool>,
}

impl WokenAfterReap {
    pub(crate) fn push(&self, waker: &Waker) {
        self.wakers.borrow_mut().push(waker.clone());
        self.any.set(true);
    }

    /// A queued task, to go back to the run queue after the reap.
    pub(crate) fn push_task(&self, task: Notified) {
        self.tasks.borrow_mut().push(task);
        self.any.set(true);
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        !self.any.get()
    }

    /// Takes every waker and every task, each in the order they were pushed.
    pub(crate) fn take(&self) -> (Vec<Waker>, Vec<Notified>) {
        self.any.set(false);
        (
            std::mem::take(&mut *self.wakers.borrow_mut()),
            std::mem::take(&mut *self.tasks.borrow_mut()),
        )
    }
}

impl Shard {
    /// Wakes the wakers that waited for the reap and queues the tasks that did (each wake
    /// under `contain_panic`: one that panics must not lose the others). The caller checked
    /// [`WokenAfterReap::is_empty`].
    pub(crate) fn release_woken_after_reap(&self) {
        let (wakers, tasks) = self.woken_after_reap.take();
        for w in wakers {
            contain_panic(|| w.wake());
        }
        for task in tasks {
            self.push_local(task);
        }
    }
}
