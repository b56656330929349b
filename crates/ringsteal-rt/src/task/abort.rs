//! [`AbortHandle`]: cancels a task without owning its output.

use std::fmt;

use super::id::Id;
use super::state::ToNotified;
use super::TaskRef;

/// Cancels a spawned task from anywhere. Cloneable; does not keep the output.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let handle = ringsteal_rt::spawn(std::future::pending::<()>());
///     let abort = handle.abort_handle();
///     abort.abort();
///     assert!(handle.await.unwrap_err().is_cancelled());
///     assert!(abort.is_finished());
/// });
/// ```
pub struct AbortHandle {
    raw: TaskRef,
}

impl AbortHandle {
    /// # Safety
    /// The caller hands over one reference to the task.
    pub(crate) unsafe fn from_raw(raw: TaskRef) -> Self {
        Self { raw }
    }

    /// Requests cancellation (see [`JoinHandle::abort`](super::JoinHandle::abort)).
    pub fn abort(&self) {
        abort_task(self.raw);
    }

    /// The task's id (see [`JoinHandle::id`](super::JoinHandle::id)).
    pub fn id(&self) -> Id {
        self.raw.header().id
    }

    /// True once the task has completed, panicked or been cancelled.
    pub fn is_finished(&self) -> bool {
        self.raw.header().state.load().is_complete()
    }
}

/// Marks a task cancelled and, if it is idle, queues it so its home shard drops it.
pub(super) fn abort_task(task: TaskRef) {
    let h = task.header();
    if h.state.transition_to_notified_and_cancel() == ToNotified::Submit {
        // SAFETY: the transition took the reference the queue entry owns.
        unsafe { (h.vtable.schedule)(task.as_ptr()) }
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> Self {
        self.raw.header().state.ref_inc();
        Self { raw: self.raw }
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        let h = self.raw.header();
        if h.state.ref_dec(1) {
            // SAFETY: ours was the last reference.
            unsafe { (h.vtable.dealloc)(self.raw.as_ptr()) }
        }
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.id())
            .field("finished", &self.is_finished())
            .finish()
    }
}

// SAFETY: an AbortHandle only touches the atomic state and queues the task, both thread-safe.
unsafe impl Send for AbortHandle {}
// SAFETY: as above.
unsafe impl Sync for AbortHandle {}
