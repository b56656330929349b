//! [`AtomicWaker`]: one waker slot shared by one registering side (a future, on any thread)
//! and one waking side (a shard completing an operation).
//!
//! The protocol: the registrant takes a `REGISTERING` lock bit to write the slot; the waker
//! sets `WAKING` and, if it got the slot free, takes the waker out. If a wake arrives while a
//! registration holds the lock, the registrant sees `WAKING` when it releases and wakes
//! itself. Either way the registered waker is woken exactly once and no wake is lost.

use std::cell::UnsafeCell;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::task::Waker;

use crate::loom::sync::atomic::AtomicUsize;

const WAITING: usize = 0;
const REGISTERING: usize = 1;
const WAKING: usize = 2;

/// A waker slot for one registrant and one waker.
pub(crate) struct AtomicWaker {
    state: AtomicUsize,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the slot is accessed only by whoever holds the REGISTERING or WAKING lock bit.
unsafe impl Send for AtomicWaker {}
// SAFETY: as above.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    pub(crate) fn new() -> Self {
        Self {
            state: AtomicUsize::new(WAITING),
            waker: UnsafeCell::new(None),
        }
    }

    /// Stores `waker` to be woken by the next [`take`](Self::take)/[`wake`](Self::wake).
    pub(crate) fn register(&self, waker: &Waker) {
        match self
            .state
            .compare_exchange(WAITING, REGISTERING, Acquire, Acquire)
        {
            Ok(_) => {
                // SAFETY: REGISTERING gives exclusive access to the slot.
                unsafe {
                    let slot = &mut *self.waker.get();
                    match slot {
                        Some(old) if old.will_wake(waker) => {}
                        _ => *slot = Some(waker.clone()),
                    }
                }
                if let Err(actual) =
                    self.state
                        .compare_exchange(REGISTERING, WAITING, AcqRel, Acquire)
                {
                    // A wake arrived while we held the lock: it left the waker to us.
                    debug_assert_eq!(actual, REGISTERING | WAKING);
                    // SAFETY: the waking side does not touch the slot while REGISTERING is set.
                    let w = unsafe { (*self.waker.get()).take() };
                    self.state.swap(WAITING, AcqRel);
                    if let Some(w) = w {
                        w.wake();
                    }
                }
            }
            Err(WAKING) => {
                // A wake is in progress right now: make sure this poll happens again.
                waker.wake_by_ref();
            }
            Err(_) => {
                // Concurrent registration: impossible with one registrant, harmless anyway.
                waker.wake_by_ref();
            }
        }
    }

    /// Takes the registered waker for the caller to wake (or `None`). Call after publishing
    /// whatever the registrant will check after registering.
    pub(crate) fn take(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, AcqRel) {
            WAITING => {
                // SAFETY: we set WAKING from WAITING: exclusive access to the slot.
                let w = unsafe { (*self.waker.get()).take() };
                self.state.fetch_and(!WAKING, Release);
                w
            }
            _ => None, // a registrant holds the lock and will see WAKING, or a wake is running
        }
    }
}

impl Drop for AtomicWaker {
    fn drop(&mut self) {
        // Exclusive access: nothing else can be using the slot.
        self.waker.get_mut().take();
    }
}
