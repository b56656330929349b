//! The `Waker` of a task: a pointer to its header with one reference.
//!
//! Owns: the `RawWakerVTable`. Waking goes through the state machine, and only a transition
//! that returns `Submit` queues the task, so a task is queued at most once however many
//! wakers fire.

use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use super::raw::Header;
use super::state::ToNotified;

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A waker borrowed for one poll, without taking a reference.
///
/// # Safety
/// The caller must hold a reference to the task for as long as the waker is used to wake,
/// clone or drop anything (clones take their own). A waker that is only compared
/// (`will_wake`, which reads its data and vtable pointers, never the task) needs none.
pub(super) unsafe fn waker_ref(ptr: NonNull<Header>) -> ManuallyDrop<Waker> {
    // SAFETY: the vtable functions uphold the RawWaker contract for a task header pointer;
    // ManuallyDrop keeps the borrowed waker from releasing a reference it never took.
    ManuallyDrop::new(unsafe { Waker::from_raw(RawWaker::new(ptr.as_ptr() as *const (), &VTABLE)) })
}

/// Whether `waker` wakes the task at `task` (false for another task's, another executor's,
/// or one a combinator wraps). Only compares: `task` need not be live.
pub(crate) fn wakes_task(task: NonNull<Header>, waker: &Waker) -> bool {
    // SAFETY: the borrowed waker is only compared (`will_wake` looks at its data pointer and
    // vtable, never at the task) and `ManuallyDrop` keeps it from releasing anything: the
    // comparison-only case of `waker_ref`'s contract, which needs no reference.
    unsafe { waker_ref(task) }.will_wake(waker)
}

/// The task pointer, with the provenance of the whole cell (never derive it from a `&Header`,
/// which only covers the header).
fn ptr(data: *const ()) -> NonNull<Header> {
    // SAFETY: waker data is never null: it is a task header pointer.
    unsafe { NonNull::new_unchecked(data as *mut Header) }
}

fn header<'a>(data: *const ()) -> &'a Header {
    // SAFETY: waker data is always a live task header: every waker owns a reference (or, for
    // `waker_ref`, borrows one the poller holds).
    unsafe { &*(data as *const Header) }
}

unsafe fn clone(data: *const ()) -> RawWaker {
    header(data).state.ref_inc();
    RawWaker::new(data, &VTABLE)
}

unsafe fn wake(data: *const ()) {
    let h = header(data);
    match h.state.transition_to_notified_by_val() {
        // SAFETY: our reference becomes the queued one.
        ToNotified::Submit => unsafe { (h.vtable.schedule)(ptr(data)) },
        // SAFETY: ours was the last reference.
        ToNotified::Dealloc => unsafe { (h.vtable.dealloc)(ptr(data)) },
        ToNotified::Nothing => {}
    }
}

unsafe fn wake_by_ref(data: *const ()) {
    let h = header(data);
    if h.state.transition_to_notified_by_ref() == ToNotified::Submit {
        // SAFETY: the transition took a new reference for the queue.
        unsafe { (h.vtable.schedule)(ptr(data)) }
    }
}

unsafe fn drop_waker(data: *const ()) {
    let h = header(data);
    if h.state.ref_dec(1) {
        // SAFETY: ours was the last reference.
        unsafe { (h.vtable.dealloc)(ptr(data)) }
    }
}
