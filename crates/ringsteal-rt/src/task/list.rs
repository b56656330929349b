//! [`OwnedTasks`]: the intrusive list of tasks a shard has started and not yet completed, so
//! shutdown can cancel every one of them on the thread that owns it.
//!
//! Owns: the `links` of each task in the list. Touched only by the shard's own thread (the
//! type is `!Send`), so no synchronisation is needed; a task is linked at its first poll on
//! the shard and unlinked when it completes, is shut down, or moves to another shard
//! (`shard/move_started.rs`; it is linked there at its next poll). The list holds the task's
//! owner reference.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::raw::Header;
use super::TaskRef;

/// Tasks started on one shard.
pub(crate) struct OwnedTasks {
    head: Cell<Option<NonNull<Header>>>,
    len: Cell<usize>,
    _not_send: PhantomData<*const ()>,
}

impl OwnedTasks {
    pub(crate) fn new() -> Self {
        Self {
            head: Cell::new(None),
            len: Cell::new(0),
            _not_send: PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    /// Links `task` at the front.
    pub(crate) fn push(&self, task: &TaskRef) {
        let ptr = task.as_ptr();
        // SAFETY: the task is live (the caller polls it) and its links are only touched by
        // this shard's thread, which is the current one.
        unsafe {
            let linked = &mut *task.header().linked.get();
            debug_assert!(!*linked);
            *linked = true;
            let links = &mut *task.header().links.get();
            links.prev = None;
            links.next = self.head.get();
            if let Some(old) = self.head.get() {
                (*old.as_ref().links.get()).prev = Some(ptr);
            }
        }
        self.head.set(Some(ptr));
        self.len.set(self.len.get() + 1);
    }

    /// Unlinks `task` if it is linked; true if it was.
    pub(crate) fn remove(&self, task: &TaskRef) -> bool {
        // SAFETY: as in `push`; linked neighbours are live because the list holds their owner
        // references.
        unsafe {
            let linked = &mut *task.header().linked.get();
            if !*linked {
                return false;
            }
            *linked = false;
            let links = &mut *task.header().links.get();
            match links.prev {
                Some(prev) => (*prev.as_ref().links.get()).next = links.next,
                None => self.head.set(links.next),
            }
            if let Some(next) = links.next {
                (*next.as_ref().links.get()).prev = links.prev;
            }
            links.prev = None;
            links.next = None;
        }
        self.len.set(self.len.get() - 1);
        true
    }

    /// Calls `f` with every task in the list, front to back. `f` must not unlink any.
    pub(crate) fn for_each(&self, mut f: impl FnMut(TaskRef)) {
        let mut next = self.head.get();
        while let Some(ptr) = next {
            // SAFETY: a linked task is live (the list holds its owner reference).
            let task = unsafe { TaskRef::from_ptr(ptr) };
            // SAFETY: its links are touched only by this thread, the list's.
            next = unsafe { (*task.header().links.get()).next };
            f(task);
        }
    }

    /// Unlinks and returns the first task. Its header says `linked = false` afterwards, but the
    /// caller now holds the owner reference the list held.
    pub(crate) fn pop(&self) -> Option<TaskRef> {
        let head = self.head.get()?;
        // SAFETY: the head is live: the list holds its owner reference.
        let task = unsafe { TaskRef::from_ptr(head) };
        self.remove(&task);
        Some(task)
    }
}
