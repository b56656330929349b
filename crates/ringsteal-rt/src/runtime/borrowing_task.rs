//! Runs a future that borrows from the caller's stack as a task, for
//! [`RuntimeHandle::block_on`](super::RuntimeHandle::block_on) (ADR-0042).
//!
//! A task must be `'static` because a spawner may return while it runs. A caller that blocks
//! until the task is over cannot: it is `std::thread::scope`'s argument. So the future is
//! boxed, its lifetime erased, and its output written into the caller's frame; the caller
//! returns only after the task's `JoinHandle` has resolved, which happens only after the
//! harness has dropped the future (`task/harness.rs`, `complete`: the future is dropped before
//! COMPLETE is published, on every path: finished, panicked, cancelled, never started).
//!
//! Owns: the erasure and the output slot. May not: return, or unwind, before the task is over:
//! an unwind between the spawn and the end of the wait aborts the process instead, since the
//! task could still run with the caller's borrows.

use std::future::Future;
use std::pin::Pin;

use super::RuntimeHandle;
use crate::task::JoinError;

/// Where the task writes the future's output: a slot in the caller's frame.
struct OutputSlot<T>(*mut Option<T>);

// SAFETY: the pointer is written once, on the task's shard, while the caller waits without
// touching the slot; it reads the slot only after the task's JoinHandle resolved (COMPLETE is
// published with release ordering after the write, and read with acquire ordering). Sending
// it is sending a `T` to the caller: `T: Send`.
unsafe impl<T: Send> Send for OutputSlot<T> {}

impl<T> OutputSlot<T> {
    /// Stores `value`.
    ///
    /// # Safety
    /// The slot's frame must still be waiting for the task (see the module docs).
    unsafe fn put(self, value: T) {
        // SAFETY: by the caller's contract the slot is alive and nobody else touches it.
        unsafe { *self.0 = Some(value) };
    }
}

/// Aborts the process if dropped: armed across the part of the call that must not unwind.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        // Reached only by unwinding (the normal path forgets it): the task may still run
        // and use the caller's borrows, so returning would let it write freed stack memory.
        eprintln!(
            "ringsteal: RuntimeHandle::block_on unwound while its task could still run; \
             aborting (the task borrows the caller's stack)"
        );
        std::process::abort();
    }
}

/// Runs `future` as a task on `handle`'s runtime and waits for it: its output, or the task's
/// error (a panic in it, or a cancellation by the runtime's shutdown).
pub(super) fn run_and_wait<F>(handle: &RuntimeHandle, future: F) -> Result<F::Output, JoinError>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut out: Option<F::Output> = None;
    let slot = OutputSlot(&mut out);
    let task: Pin<Box<dyn Future<Output = ()> + Send + '_>> = Box::pin(async move {
        let value = future.await;
        // SAFETY: this runs inside the task, and the caller below waits for the task to be
        // over (its future dropped) before it leaves this function.
        unsafe { slot.put(value) };
    });
    // SAFETY: only the lifetime changes (same type otherwise, same layout). The task is over,
    // its future dropped, before this function returns or unwinds: the wait below returns only
    // once the JoinHandle resolved, which the harness does only after dropping the future, and
    // an unwind before that point aborts (`AbortOnUnwind`). The output reaches the caller
    // through `out`, so nothing of lifetime `'_` outlives the call.
    let task: Pin<Box<dyn Future<Output = ()> + Send + 'static>> =
        unsafe { std::mem::transmute(task) };
    let bomb = AbortOnUnwind;
    let joined = crate::util::park_on(handle.spawn(task));
    std::mem::forget(bomb);
    joined.map(|()| {
        out.take()
            .expect("the task stored its output before completing")
    })
}
