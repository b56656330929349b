//! Tasks: one allocation per spawned future, reference counted, scheduled by placement.
//!
//! Owns: the task cell (`raw.rs`: header, scheduler, future-or-output, join waker), the state
//! machine (`state.rs`), polling, completing and cancelling (`harness.rs`), wakers
//! (`waker.rs`), `JoinHandle`/`JoinError`/`AbortHandle` (`join.rs`, `error.rs`, `abort.rs`) and
//! the per-shard list of started tasks (`list.rs`).
//!
//! May not: decide where a task runs. That is the crate-private `Schedule` trait, implemented by
//! the runtime (and by a test scheduler in this module's Miri tests).
//!
//! Public here: [`JoinHandle`], [`JoinError`], [`AbortHandle`], [`TaskGroup`], task ids ([`Id`],
//! [`id`], [`try_id`]; `id.rs`), and task-local
//! values ([`LocalKey`], declared with [`task_local!`](crate::task_local); `local_key.rs`).

pub(crate) mod abort;
mod error;
mod group;
mod group_finished;
mod harness;
mod id;
mod join;
mod list;
mod local_key;
mod local_on;
mod raw;
mod state;
mod waker;

#[cfg(test)]
mod tests;

pub use abort::AbortHandle;
pub use error::JoinError;
pub use group::TaskGroup;
pub use id::{id, try_id, Id};
pub use join::JoinHandle;
pub(crate) use list::OwnedTasks;
pub use local_key::{AccessError, LocalKey, TaskLocalFuture};
pub(crate) use local_on::LocalOn;
pub(crate) use raw::{Header, HOME_BLOCKING, HOME_UNSET};
pub(crate) use waker::wakes_task;

use std::future::Future;
use std::ptr::NonNull;

/// Where a notified task goes. Implemented by the runtime; every method is called with the
/// task's state already transitioned (see `state.rs`).
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// Queues a task that was woken or aborted. The task has a home shard.
    ///
    /// Takes the scheduler by raw pointer because it lives inside the task: once `task` is
    /// queued, another thread may run it to completion and free the cell, scheduler included.
    /// An implementation copies what it needs out of `this` before queuing and never touches
    /// `this` afterwards.
    ///
    /// # Safety
    /// `this` must point at the scheduler of the live task `task`.
    unsafe fn schedule(this: NonNull<Self>, task: Notified);

    /// The current thread is about to poll `task` for the first time, or the first time since
    /// it moved: record it as the task's home and keep it in the shard's list of started
    /// tasks.
    fn bind(&self, task: &TaskRef);

    /// `task` completed on its home thread: forget it.
    fn release(&self, task: &TaskRef);
}

/// An untyped, non-owning pointer to a task. Copy freely; it does not keep the task alive.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TaskRef(NonNull<Header>);

// SAFETY: a TaskRef is an address; what may be done through it is governed by the task's
// state machine, which is thread-safe. Futures that are !Send are only ever polled or dropped
// on their home shard (guaranteed by the spawn functions), never through a stray TaskRef.
unsafe impl Send for TaskRef {}
// SAFETY: as above.
unsafe impl Sync for TaskRef {}

impl TaskRef {
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a TaskRef is only used while some reference keeps the task alive.
        unsafe { self.0.as_ref() }
    }

    pub(crate) fn as_ptr(&self) -> NonNull<Header> {
        self.0
    }

    /// # Safety
    /// `ptr` must point at a live task header.
    pub(crate) unsafe fn from_ptr(ptr: NonNull<Header>) -> Self {
        Self(ptr)
    }
}

/// A task that is queued to run: holds one reference. Running it (or dropping it) consumes
/// that reference.
pub(crate) struct Notified(TaskRef);

impl Notified {
    /// Takes over a reference the caller already counted.
    ///
    /// # Safety
    /// The caller must own one reference to the task that this `Notified` now owns.
    pub(crate) unsafe fn from_raw(task: TaskRef) -> Self {
        Self(task)
    }

    /// Polls the task once (or cancels it, if aborted). Call only on a shard thread; the
    /// task's home becomes this thread's shard if it has none.
    pub(crate) fn run(self) {
        let ptr = self.0 .0;
        std::mem::forget(self);
        // SAFETY: `ptr` is live (we owned a reference, now handed to `poll`).
        unsafe { (ptr.as_ref().vtable.poll)(ptr) }
    }

    /// The task's address (to compare with, as `Polling` does).
    pub(crate) fn as_ptr(&self) -> NonNull<Header> {
        self.0.as_ptr()
    }

    /// The task's id.
    pub(crate) fn id(&self) -> Id {
        self.0.header().id
    }

    /// [`run`](Self::run), marking the task as the current one of this thread for
    /// `task::id()` meanwhile: for pollers that are not shards (the blocking pool). A shard
    /// marks the task it polls in its `Polling` instead, which costs no thread-local.
    pub(crate) fn run_as_current(self) {
        let _current = id::CurrentId::enter(self.id());
        self.run();
    }

    /// The task's home shard, or `None` before its first poll.
    pub(crate) fn home(&self) -> Option<usize> {
        self.0.header().home()
    }

    /// The task itself (to unlink it from its shard's list when it moves).
    pub(crate) fn task_ref(&self) -> TaskRef {
        self.0
    }

    /// True if the task may move to another shard between polls.
    pub(crate) fn is_movable(&self) -> bool {
        self.0.header().movable
    }
}

impl Drop for Notified {
    fn drop(&mut self) {
        // A queued task that will never run (the runtime is shutting down): cancel it if it
        // never started, then drop the queue's reference.
        let ptr = self.0 .0;
        // SAFETY: we own a reference, so the task is live; `shutdown_unstarted` consumes it.
        unsafe { (ptr.as_ref().vtable.drop_notified)(ptr) }
    }
}

impl std::fmt::Debug for Notified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Notified").field(&self.0 .0).finish()
    }
}

/// Allocates a task. Returns the queued reference and the join handle; the caller queues the
/// `Notified` (the owner reference is implicit in the initial state).
pub(crate) fn new_task<F, S>(
    future: F,
    scheduler: S,
    home: u32,
) -> (Notified, JoinHandle<F::Output>)
where
    F: Future + 'static,
    S: Schedule,
{
    new_task_with(future, scheduler, home, false)
}

/// [`new_task`], saying whether the task may move between shards once started
/// ([`Header::movable`]: only for `Send` futures).
pub(crate) fn new_task_with<F, S>(
    future: F,
    scheduler: S,
    home: u32,
    movable: bool,
) -> (Notified, JoinHandle<F::Output>)
where
    F: Future + 'static,
    S: Schedule,
{
    let ptr = raw::allocate(future, scheduler, home, movable);
    // SAFETY: the initial state counts three references: the owner (implicit), this
    // Notified and the JoinHandle.
    unsafe {
        (
            Notified::from_raw(TaskRef(ptr)),
            JoinHandle::from_raw(TaskRef(ptr)),
        )
    }
}

/// Wakes `task` as its own waker's `wake_by_ref` would. The caller must hold a reference to
/// it for the call (a shard's list of started tasks holds one).
pub(crate) fn wake_by_ref(task: TaskRef) {
    // SAFETY: the caller holds a reference for the duration of the call, which is all a
    // borrowed waker needs.
    unsafe { waker::waker_ref(task.0) }.wake_by_ref();
}

/// Cancels a started task in place during shutdown (on its home thread). The task must have
/// been removed from its owner's list already.
pub(crate) fn shutdown(task: TaskRef) {
    let ptr = task.0;
    // SAFETY: the owner list held the owner reference, so the task is live.
    unsafe { (ptr.as_ref().vtable.shutdown)(ptr) }
}

/// A scheduler for tasks that never run (spawned during shutdown).
struct Detached;

impl Schedule for Detached {
    unsafe fn schedule(_: NonNull<Self>, task: Notified) {
        drop(task);
    }
    fn bind(&self, _: &TaskRef) {}
    fn release(&self, _: &TaskRef) {}
}

/// A `JoinHandle` that yields a cancelled `JoinError`: for spawns refused at shutdown.
pub(crate) fn cancelled_join_handle<T: Send + 'static>() -> JoinHandle<T> {
    cancelled_local_join_handle()
}

/// As [`cancelled_join_handle`], for outputs that need not be `Send`.
pub(crate) fn cancelled_local_join_handle<T: 'static>() -> JoinHandle<T> {
    let (task, join) = new_task(std::future::pending::<T>(), Detached, HOME_UNSET);
    drop(task);
    join
}
