//! [`SchedHandle`]: what a task holds to reach its runtime, and the `Schedule` glue.
//!
//! Every task keeps the runtime's `Shared` alive (a waker may fire after the runtime is
//! dropped and must still find the queues). Counting that with one `Arc` clone per task would
//! bounce the `Arc`'s cache line between shards on every spawn and every free; instead each
//! shard holds a batch of references ("credits") and hands them out and takes them back
//! locally. A shard gives its credits back when it exits; threads that are not shards use the
//! `Arc` count directly.

use std::ptr::NonNull;
use std::sync::Arc;

use super::context;
use super::Shard;
use crate::shared::Shared;
use crate::task::{Notified, Schedule, TaskRef};

const CREDIT_BATCH: usize = 256;

/// One counted reference to a runtime's `Shared`, held by a task.
pub(crate) struct SchedHandle {
    shared: NonNull<Shared>,
}

// SAFETY: `Shared` is Sync and this is a counted reference to it, like an Arc.
unsafe impl Send for SchedHandle {}
// SAFETY: as above.
unsafe impl Sync for SchedHandle {}

impl SchedHandle {
    /// A reference taken from `shard`'s credits (it must be a shard of `shared`'s runtime),
    /// or straight from the `Arc`.
    pub(crate) fn new(shared: &Arc<Shared>, shard: Option<&Shard>) -> Self {
        let ptr = Arc::as_ptr(shared);
        match shard {
            Some(s) => {
                debug_assert!(std::ptr::eq(Arc::as_ptr(&s.shared), ptr));
                let c = s.credits.get();
                if c == 0 {
                    for _ in 0..CREDIT_BATCH {
                        // SAFETY: `ptr` comes from a live Arc.
                        unsafe { Arc::increment_strong_count(ptr) };
                    }
                    s.credits.set(CREDIT_BATCH - 1);
                } else {
                    s.credits.set(c - 1);
                }
            }
            // SAFETY: `ptr` comes from a live Arc.
            None => unsafe { Arc::increment_strong_count(ptr) },
        }
        // SAFETY: Arc::as_ptr is never null.
        let shared = unsafe { NonNull::new_unchecked(ptr as *mut Shared) };
        Self { shared }
    }

    pub(crate) fn shared(&self) -> &Shared {
        // SAFETY: this handle holds a strong count, so `Shared` is alive.
        unsafe { self.shared.as_ref() }
    }

    /// A new `Arc` of the runtime.
    pub(crate) fn shared_arc(&self) -> Arc<Shared> {
        let ptr = self.shared.as_ptr() as *const Shared;
        // SAFETY: this handle holds a strong count, so the allocation is alive; the new count
        // is the returned Arc's.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// True if this is a handle of the runtime `shared`.
    pub(crate) fn is_of(&self, shared: &Arc<Shared>) -> bool {
        std::ptr::eq(self.shared(), Arc::as_ptr(shared))
    }
}

impl Drop for SchedHandle {
    #[inline]
    fn drop(&mut self) {
        let ptr = self.shared.as_ptr() as *const Shared;
        let pooled = context::with_shard_of(ptr, |cur| match cur {
            Some(s) => {
                let mut c = s.credits.get() + 1;
                if c > 2 * CREDIT_BATCH {
                    for _ in 0..CREDIT_BATCH {
                        // SAFETY: the shard itself holds an Arc, so these never reach zero.
                        unsafe { Arc::decrement_strong_count(ptr) };
                    }
                    c -= CREDIT_BATCH;
                }
                s.credits.set(c);
                true
            }
            None => false,
        });
        if !pooled {
            // SAFETY: this handle owned one strong count.
            unsafe { Arc::decrement_strong_count(ptr) };
        }
    }
}

/// Gives a shard's credits back to the `Arc` (the shard is exiting).
pub(crate) fn return_credits(shard: &Shard) {
    let ptr = Arc::as_ptr(&shard.shared);
    for _ in 0..shard.credits.replace(0) {
        // SAFETY: each credit is one strong count; the shard's own Arc keeps the count above 0.
        unsafe { Arc::decrement_strong_count(ptr) };
    }
}

impl Schedule for SchedHandle {
    #[inline]
    unsafe fn schedule(this: NonNull<Self>, task: Notified) {
        // SAFETY: the caller passes a live handle; we copy the runtime pointer out of it and
        // do not touch the handle (which lives in the task) after queuing the task.
        let shared = unsafe { this.as_ref() }.shared;
        // SAFETY: the task holds a counted reference to `Shared` until it is freed, and it
        // cannot be freed before it is queued. On a shard of this runtime the shard's own Arc
        // keeps `Shared` alive after the push too.
        let Some(task) = unsafe { shared.as_ref() }.schedule_woken(task) else {
            return;
        };
        // Any other thread: once queued, the task may run and free its reference at once,
        // possibly the last (the runtime dropped meanwhile), while the push still rings the
        // doorbell. So take a reference of our own first; only this path pays for it.
        // SAFETY: `shared` came from `Arc::as_ptr` (see `new`) and the unqueued task still
        // holds a strong count on it, so the count is at least 1 and this one is ours.
        let keep = unsafe {
            Arc::increment_strong_count(shared.as_ptr());
            Arc::from_raw(shared.as_ptr() as *const Shared)
        };
        keep.schedule_foreign(task);
    }

    fn bind(&self, task: &TaskRef) {
        context::with_shard_of(self.shared.as_ptr(), |cur| {
            if let Some(s) = cur {
                s.bind(task);
            }
        });
    }

    fn release(&self, task: &TaskRef) {
        context::with_shard_of(self.shared.as_ptr(), |cur| {
            if let Some(s) = cur {
                s.release(task);
            }
        });
    }
}
