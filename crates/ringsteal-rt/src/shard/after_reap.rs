//! [`WokenAfterReap`]: the tasks that yielded until the shard has taken in its completions
//! (`context::wake_after_reap`), woken by the next `maintain`.
//!
//! Asked on every tick and every idle check, nearly always empty: the question is one byte
//! read, not a `RefCell` borrow.

use std::cell::{Cell, RefCell};
use std::task::Waker;

#[derive(Default)]
pub(crate) struct WokenAfterReap {
    wakers: RefCell<Vec<Waker>>,
    any: Cell<bool>,
}

impl WokenAfterReap {
    pub(crate) fn push(&self, waker: &Waker) {
        self.wakers.borrow_mut().push(waker.clone());
        self.any.set(true);
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        !self.any.get()
    }

    /// Takes every waker, in the order they were pushed.
    pub(crate) fn take(&self) -> Vec<Waker> {
        self.any.set(false);
        std::mem::take(&mut *self.wakers.borrow_mut())
    }
}
