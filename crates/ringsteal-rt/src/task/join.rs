//! [`JoinHandle`]: awaits a task's output; dropping it detaches the task.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::abort::{abort_task, AbortHandle};
use super::error::JoinError;
use super::id::Id;
use super::TaskRef;

/// An owned permission to await a spawned task's output.
///
/// Awaiting it yields `Ok(output)`, or `Err(JoinError)` if the task panicked or was aborted.
/// Dropping it *detaches* the task: the task keeps running and its output is dropped.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
/// let sum = rt.block_on(async {
///     let a = ringsteal_rt::spawn(async { 20 });
///     let b = ringsteal_rt::spawn(async { 22 });
///     a.await.unwrap() + b.await.unwrap()
/// });
/// assert_eq!(sum, 42);
/// ```
pub struct JoinHandle<T> {
    raw: TaskRef,
    _output: PhantomData<T>,
}

// The output lives in the task cell, never inline: moving the handle moves no `T`, so a
// handle can be polled through `&mut` (as tokio's can) whatever `T` is.
impl<T> Unpin for JoinHandle<T> {}

// SAFETY: the handle only moves the output `T` out of the task (or drops it), so it may cross
// threads when `T` may.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` allows only `is_finished` and `abort`, both thread-safe.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    /// # Safety
    /// The caller hands over the task's join reference and join interest; the task's output
    /// type must be `T`.
    pub(crate) unsafe fn from_raw(raw: TaskRef) -> Self {
        Self {
            raw,
            _output: PhantomData,
        }
    }

    /// Requests cancellation. A task that has not started never runs; a running task is
    /// dropped at its next `.await` point (the poll in progress finishes first). Awaiting the
    /// handle then yields a cancelled [`JoinError`] (unless the task had already completed).
    pub fn abort(&self) {
        abort_task(self.raw);
    }

    /// True once the task has completed, panicked or been cancelled.
    pub fn is_finished(&self) -> bool {
        self.raw.header().state.load().is_complete()
    }

    /// The task's id, as [`task::id()`](super::id) returns inside it.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let handle = ringsteal_rt::spawn(async {});
    ///     assert_eq!(handle.id(), handle.abort_handle().id());
    /// });
    /// ```
    pub fn id(&self) -> Id {
        self.raw.header().id
    }

    /// A handle that can abort the task without owning its output.
    pub fn abort_handle(&self) -> AbortHandle {
        self.raw.header().state.ref_inc();
        // SAFETY: we just took the reference the AbortHandle owns.
        unsafe { AbortHandle::from_raw(self.raw) }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut out: Poll<Result<T, JoinError>> = Poll::Pending;
        let ptr = self.raw.as_ptr();
        // SAFETY: we are the JoinHandle of a live task whose output type is T, and `out` is a
        // Poll of exactly that type.
        unsafe {
            (self.raw.header().vtable.try_read_output)(
                ptr,
                &mut out as *mut _ as *mut (),
                cx.waker(),
            )
        };
        out
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if self.raw.header().state.drop_join_handle_fast() {
            return;
        }
        // SAFETY: we are the JoinHandle, handing back our reference and interest.
        unsafe { (self.raw.header().vtable.drop_join_handle)(self.raw.as_ptr()) }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id())
            .field("finished", &self.is_finished())
            .finish()
    }
}
