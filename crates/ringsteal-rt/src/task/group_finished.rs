//! How a [`TaskGroup`](super::TaskGroup)'s tasks say they finished, so that `join_next` polls
//! only the handles of finished tasks instead of every handle in the group.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::task::Waker;

use parking_lot::Mutex;

use crate::sync::atomic_waker::AtomicWaker;

/// The ids of a group's tasks that finished (completed, panicked or were aborted) and have
/// not been looked at yet, and the waker of the `join_next` waiting for one.
pub(super) struct Finished {
    ids: Mutex<Vec<u64>>,
    waiter: AtomicWaker,
}

impl Default for Finished {
    fn default() -> Self {
        Self {
            ids: Mutex::default(),
            waiter: AtomicWaker::new(),
        }
    }
}

impl Finished {
    /// Registers the waiting `join_next`; call before [`take`](Self::take) so that no
    /// announcement falls between the two.
    pub(super) fn register(&self, waker: &Waker) {
        self.waiter.register(waker);
    }

    /// Moves the announced ids, in the order they were announced, to the back of `into`.
    pub(super) fn take(&self, into: &mut VecDeque<u64>) {
        into.extend(self.ids.lock().drain(..));
    }

    /// Forgets every announcement (the group joined everything another way).
    pub(super) fn clear(&self) {
        self.ids.lock().clear();
    }

    fn announce(&self, id: u64) {
        self.ids.lock().push(id);
        if let Some(w) = self.waiter.take() {
            w.wake();
        }
    }
}

/// Wraps a group task's future so that it announces `id` when its future is dropped: after
/// it completes, when it panics, when it is aborted (started or not), or at shutdown. The
/// announcement comes just before the task stores its output, so the handle may still be
/// pending when `join_next` first looks: its own waker covers that gap.
pub(super) fn announcing<F: Future>(
    future: F,
    id: u64,
    finished: Arc<Finished>,
) -> impl Future<Output = F::Output> {
    let guard = Announce { id, finished };
    async move {
        let _guard = guard;
        future.await
    }
}

/// [`announcing`] for a blocking closure: it announces `id` when it returns, panics, or
/// is dropped without running (the pool shut down first).
pub(super) fn announcing_fn<R>(
    f: impl FnOnce() -> R,
    id: u64,
    finished: Arc<Finished>,
) -> impl FnOnce() -> R {
    let guard = Announce { id, finished };
    move || {
        let _guard = guard;
        f()
    }
}

struct Announce {
    id: u64,
    finished: Arc<Finished>,
}

impl Drop for Announce {
    fn drop(&mut self) {
        self.finished.announce(self.id);
    }
}
