//! Polling, completing, cancelling and freeing a task: the type-aware functions behind the
//! vtable.
//!
//! Owns: every access to the future/output slot and to the join waker slot, following the
//! rules of `state.rs`: the future is touched only by the thread that holds `RUNNING`; the
//! output is written before `COMPLETE` and afterwards belongs to the `JoinHandle` (or, if it
//! has none, is dropped here); the join waker slot belongs to the `JoinHandle` while
//! `JOIN_WAKER` is clear, and to the runtime while `JOIN_WAKER` and `COMPLETE` are both set.
//!
//! Panics of the future, of its destructor and of its output's destructor are caught: a task
//! never takes its shard down.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::error::JoinError;
use super::id::CurrentId;
use super::raw::{Cell, Header, Stage, HOME_BLOCKING};
use super::state::{ToIdle, ToRunning};
use super::waker::waker_ref;
use super::{Notified, Schedule, TaskRef};

/// # Safety
/// `ptr` must point at a live `Cell<F, S>`.
unsafe fn cell<'a, F: Future, S>(ptr: NonNull<Header>) -> &'a Cell<F, S> {
    // SAFETY: the header is the first field of the repr(C) cell.
    unsafe { ptr.cast::<Cell<F, S>>().as_ref() }
}

/// Runs a queued task; consumes the queued reference.
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>` for which the caller owned one queued reference.
pub(super) unsafe fn poll<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    let task = TaskRef(ptr);
    match cell.header.state.transition_to_running() {
        ToRunning::Skip => {
            // SAFETY: drops the queued reference we were given.
            unsafe { drop_reference::<F, S>(ptr) }
        }
        ToRunning::Cancel => {
            bind_if_first_poll(cell, task);
            // SAFETY: we hold RUNNING and two references (owner and queued).
            unsafe { cancel_and_complete::<F, S>(ptr, 2) }
        }
        ToRunning::Poll => {
            bind_if_first_poll(cell, task);
            // SAFETY: we hold a reference for the whole poll, so the borrowed waker is valid.
            let waker = unsafe { waker_ref(ptr) };
            let mut cx = Context::from_waker(&waker);
            // The task is current (`task::id()`) through its poll and, if it ends here, the
            // drop of its future, as in tokio: the poller marks it so (a shard in its
            // `Polling`, without a thread-local; the blocking pool with `CurrentId`).
            let res = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: RUNNING gives this thread exclusive access to the stage; the future
                // is never moved out of the heap cell while Running, so pinning is sound.
                let stage = unsafe { &mut *cell.stage.get() };
                match stage {
                    // SAFETY: as above: the future stays in place until it is dropped.
                    Stage::Running(fut) => unsafe { Pin::new_unchecked(fut) }.poll(&mut cx),
                    _ => unreachable!("a task is polled only while its future is present"),
                }
            }));
            match res {
                Ok(Poll::Pending) => match cell.header.state.transition_to_idle() {
                    // The transition dropped the queued reference.
                    ToIdle::Idle => {}
                    // Woken while running: requeue it, reusing the queued reference.
                    // SAFETY: we own that reference.
                    ToIdle::Notified => unsafe { schedule::<F, S>(ptr) },
                    // SAFETY: still RUNNING, holding the owner and queued references.
                    ToIdle::Cancel => unsafe { cancel_and_complete::<F, S>(ptr, 2) },
                },
                // SAFETY: RUNNING, holding the owner and queued references.
                Ok(Poll::Ready(out)) => unsafe { complete::<F, S>(ptr, Ok(out), 2) },
                // SAFETY: as above.
                Err(panic) => unsafe {
                    complete::<F, S>(ptr, Err(JoinError::panic(cell.header.id, panic)), 2)
                },
            }
        }
    }
}

fn bind_if_first_poll<F: Future, S: Schedule>(cell: &Cell<F, S>, task: TaskRef) {
    // SAFETY: the links are only touched by the thread that polls the task (its home), and
    // this thread holds RUNNING.
    let linked = unsafe { *cell.header.linked.get() };
    if !linked && cell.header.raw_home() != HOME_BLOCKING {
        cell.scheduler.bind(&task);
    }
}

/// Drops the future (catching a panic in its destructor) and completes as cancelled.
///
/// Functions that may free the cell take the raw pointer, never `&Cell`: a reference argument
/// must stay valid for the whole call, which freeing would break.
///
/// # Safety
/// The caller holds RUNNING and `refs` references that completion releases.
unsafe fn cancel_and_complete<F: Future, S: Schedule>(ptr: NonNull<Header>, refs: usize) {
    // SAFETY: the caller's references keep the cell alive here.
    let cell = unsafe { cell::<F, S>(ptr) };
    let id = cell.header.id;
    // Cancelled outside a poll (abort, shutdown), the future's destructor runs as the task.
    let _current = CurrentId::enter(id);
    let err = match drop_future(cell) {
        Ok(()) => JoinError::cancelled(id),
        Err(panic) => JoinError::panic(id, panic),
    };
    // SAFETY: forwarded from the caller.
    unsafe { complete::<F, S>(ptr, Err(err), refs) }
}

fn drop_future<F: Future, S>(cell: &Cell<F, S>) -> std::thread::Result<()> {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller holds RUNNING: exclusive access to the stage.
        unsafe { *cell.stage.get() = Stage::Consumed };
    }))
}

/// Stores the result, publishes COMPLETE, wakes the joiner, releases `refs` references.
///
/// # Safety
/// The caller holds RUNNING and `refs` references (owner, and the queued one if any).
unsafe fn complete<F: Future, S: Schedule>(
    ptr: NonNull<Header>,
    result: Result<F::Output, JoinError>,
    refs: usize,
) {
    // SAFETY: the caller's references keep the cell alive until the `ref_dec` below; this
    // local reference is not used after it.
    let cell = unsafe { cell::<F, S>(ptr) };
    // Drop the future first (it may hold resources the output's reader expects released),
    // then store the result. A future whose destructor panics after it returned its output
    // ended in a panic, as tokio reports it: the output is dropped (its own destructor's
    // panic caught too). A panic already being reported stays the one reported.
    let result = match (drop_future(cell), result) {
        (Err(panic), Ok(out)) => {
            let _ = catch_unwind(AssertUnwindSafe(move || drop(out)));
            Err(JoinError::panic(cell.header.id, panic))
        }
        (_, result) => result,
    };
    // SAFETY: RUNNING: exclusive access to the stage until COMPLETE is published below.
    unsafe { *cell.stage.get() = Stage::Finished(result) };
    let prev = cell.header.state.transition_to_complete();
    if !prev.is_join_interested() {
        // Nobody will read the output: drop it here, catching a panicking destructor.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: without join interest nobody else reads the stage.
            unsafe { *cell.stage.get() = Stage::Consumed };
        }));
    } else if prev.is_join_waker_set() {
        // SAFETY: JOIN_WAKER and COMPLETE are set: the slot is ours to read until we clear
        // JOIN_WAKER; the JoinHandle cannot change it any more.
        let waker = unsafe { (*cell.join_waker.get()).as_ref() };
        if let Some(w) = waker {
            // The waker is the JoinHandle owner's (any executor's): a panic in it must not
            // unwind through the shard with this task half completed.
            let _ = catch_unwind(AssertUnwindSafe(|| w.wake_by_ref()));
        }
        let after = cell.header.state.unset_join_waker_after_complete();
        if !after.is_join_interested() {
            // The JoinHandle went away meanwhile and left the slot to us. Dropping the waker
            // runs foreign code too.
            let _ = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: JOIN_INTEREST is gone, so nobody else touches the slot.
                unsafe { *cell.join_waker.get() = None };
            }));
        }
    }
    cell.scheduler.release(&TaskRef(ptr));
    if cell.header.state.ref_dec(refs) {
        // SAFETY: those were the last references.
        unsafe { dealloc::<F, S>(ptr) }
    }
}

/// Queues the task through its scheduler (consumes one reference).
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>` and the caller must own one reference.
pub(super) unsafe fn schedule<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // Derived from the raw cell pointer (whole-cell provenance), not from a reference: the
    // task may be freed by another thread as soon as it is queued.
    let cell_ptr = ptr.cast::<Cell<F, S>>().as_ptr();
    // SAFETY: the cell is live (the caller owns a reference); addr_of_mut creates no reference.
    let scheduler =
        unsafe { NonNull::new_unchecked(std::ptr::addr_of_mut!((*cell_ptr).scheduler)) };
    // SAFETY: the caller's reference becomes the Notified's; `scheduler` belongs to this task.
    unsafe { S::schedule(scheduler, Notified::from_raw(TaskRef(ptr))) }
}

/// # Safety
/// `ptr` must point at a live `Cell<F, S>` and the caller must own one reference.
unsafe fn drop_reference<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    if cell.header.state.ref_dec(1) {
        // SAFETY: that was the last reference.
        unsafe { dealloc::<F, S>(ptr) }
    }
}

/// Frees the cell, dropping whatever it still holds (the scheduler handle included).
///
/// # Safety
/// No references remain.
pub(super) unsafe fn dealloc<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // A panicking destructor (of the scheduler handle or a leftover output) must not unwind
    // into the shard; the memory is then leaked rather than freed half-dropped.
    // SAFETY: the cell came from raw::allocate and nobody refers to it now.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        super::raw::free::<F, S>(ptr)
    }));
}

/// Moves the output into `*dst` if the task completed, or stores the waker to be woken when
/// it does.
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>`, the caller must be its `JoinHandle`, and `dst`
/// must point at a `Poll<Result<F::Output, JoinError>>`.
pub(super) unsafe fn try_read_output<F: Future, S: Schedule>(
    ptr: NonNull<Header>,
    dst: *mut (),
    waker: &Waker,
) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    if !can_read_output(cell, waker) {
        return;
    }
    // SAFETY: COMPLETE is set and we hold join interest: the stage is ours.
    let stage = unsafe { std::mem::replace(&mut *cell.stage.get(), Stage::Consumed) };
    let out = match stage {
        Stage::Finished(res) => res,
        _ => panic!("JoinHandle polled after it returned Ready"),
    };
    // SAFETY: the caller passes a pointer to a Poll of the right type.
    unsafe { *dst.cast::<Poll<Result<F::Output, JoinError>>>() = Poll::Ready(out) };
}

/// True if the output can be read now; otherwise arranges for `waker` to be woken.
fn can_read_output<F: Future, S>(cell: &Cell<F, S>, waker: &Waker) -> bool {
    let state = &cell.header.state;
    let snapshot = state.load();
    if snapshot.is_complete() {
        return true;
    }
    if snapshot.is_join_waker_set() {
        // SAFETY: while JOIN_WAKER is set and COMPLETE is not, only the JoinHandle writes the
        // slot, and the runtime does not read it; a shared read is fine.
        let same = unsafe { (*cell.join_waker.get()).as_ref() }.is_some_and(|w| w.will_wake(waker));
        if same {
            return false;
        }
        if state.unset_join_waker().is_err() {
            return true; // completed meanwhile
        }
    }
    // JOIN_WAKER is clear: the slot is ours.
    // SAFETY: exclusive access to the slot while JOIN_WAKER is clear.
    unsafe { *cell.join_waker.get() = Some(waker.clone()) };
    match state.set_join_waker() {
        Ok(()) => false,
        Err(_) => {
            // Completed before we published the waker: the slot is still ours; clear it.
            // SAFETY: JOIN_WAKER was never set, so the runtime never reads the slot.
            unsafe { *cell.join_waker.get() = None };
            true
        }
    }
}

/// Drops the join handle: gives up join interest, drops the output if it is there, drops the
/// handle's reference.
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>` and the caller must be its `JoinHandle`.
pub(super) unsafe fn drop_join_handle<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    let prev = cell.header.state.drop_join_interest();
    if prev.is_complete() {
        // The output is ours (the runtime saw join interest and left it).
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: COMPLETE with join interest: the stage belongs to the JoinHandle.
            unsafe { *cell.stage.get() = Stage::Consumed };
        }));
    }
    if !prev.is_join_waker_set() || !prev.is_complete() {
        // The slot is ours: either JOIN_WAKER was clear, or we cleared it before completion.
        // SAFETY: exclusive access to the slot, per the rule above.
        unsafe { *cell.join_waker.get() = None };
    }
    // SAFETY: drops the JoinHandle's reference.
    unsafe { drop_reference::<F, S>(ptr) }
}

/// Cancels a started task in place during shutdown; releases the owner reference.
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>`, called on its home thread, after it left the
/// owner list (which held the owner reference).
pub(super) unsafe fn shutdown<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    if cell.header.state.transition_to_shutdown() {
        // SAFETY: we hold RUNNING and the owner reference.
        unsafe { cancel_and_complete::<F, S>(ptr, 1) }
    }
}

/// A queued reference dropped without running. A task that is in no shard's list of started
/// tasks is cancelled here: one that never started, or a started one on its way to another
/// shard (`shard/move_started.rs`). Either may be dropped on any thread: only `Send` futures
/// and `Send` closures are queued across threads, and only `Send` tasks move.
///
/// # Safety
/// `ptr` must point at a live `Cell<F, S>` and the caller must own one queued reference.
pub(super) unsafe fn drop_notified<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: forwarded from the caller.
    let cell = unsafe { cell::<F, S>(ptr) };
    // SAFETY: an unlinked task's links are untouched by anyone but the thread holding it
    // (the queue handed it over with the release and acquire of its push and pop).
    let listed = unsafe { *cell.header.linked.get() };
    if !listed && cell.header.state.transition_to_shutdown() {
        // SAFETY: we hold RUNNING, the queued reference and (unlisted) the owner reference.
        unsafe { cancel_and_complete::<F, S>(ptr, 2) }
    } else {
        // SAFETY: drops the queued reference.
        unsafe { drop_reference::<F, S>(ptr) }
    }
}
