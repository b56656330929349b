//! The atomic state word of a task: lifecycle bits and a reference count in one `usize`.
//!
//! Owns: every transition of a task's state and every change of its reference count. Each
//! transition is a single CAS loop (or one `fetch_*`) so that wakers, the polling shard, the
//! `JoinHandle` and aborts on any thread agree on who does what.
//!
//! References are held by: the *owner* (the runtime, until the task completes or is shut
//! down), each queued [`Notified`](super::Notified), the `JoinHandle`, each `Waker` and each
//! `AbortHandle`. The thread whose decrement reaches zero frees the task.
//!
//! May not: touch the task's future, output or waker slot; the harness does that, guided by
//! what these transitions return.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use crate::loom::sync::atomic::AtomicUsize;

/// Being polled (or being cancelled) by exactly one thread.
const RUNNING: usize = 1 << 0;
/// The future is gone and the output (or the error) is stored.
const COMPLETE: usize = 1 << 1;
/// Queued to run, or to be rescheduled when the current poll ends.
const NOTIFIED: usize = 1 << 2;
/// Abort was requested.
const CANCELLED: usize = 1 << 3;
/// A `JoinHandle` exists and wants the output.
const JOIN_INTEREST: usize = 1 << 4;
/// The join waker slot holds a waker that the runtime may read (see `harness.rs`).
const JOIN_WAKER: usize = 1 << 5;

const REF_SHIFT: usize = 6;
const REF_ONE: usize = 1 << REF_SHIFT;

/// Initial state: notified (it is about to be queued), joinable, three references (the
/// owner, the queued `Notified`, the `JoinHandle`).
const INITIAL: usize = NOTIFIED | JOIN_INTEREST | (3 * REF_ONE);

/// A copy of the state word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot(usize);

impl Snapshot {
    pub(crate) fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    pub(crate) fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    pub(crate) fn is_notified(self) -> bool {
        self.0 & NOTIFIED != 0
    }
    pub(crate) fn is_cancelled(self) -> bool {
        self.0 & CANCELLED != 0
    }
    pub(crate) fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    pub(crate) fn is_join_waker_set(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    pub(crate) fn ref_count(self) -> usize {
        self.0 >> REF_SHIFT
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("running", &self.is_running())
            .field("complete", &self.is_complete())
            .field("notified", &self.is_notified())
            .field("cancelled", &self.is_cancelled())
            .field("join_interest", &self.is_join_interested())
            .field("join_waker", &self.is_join_waker_set())
            .field("refs", &self.ref_count())
            .finish()
    }
}

/// What `transition_to_running` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToRunning {
    /// Poll the future.
    Poll,
    /// Abort was requested: cancel instead of polling.
    Cancel,
    /// Someone else runs or already completed it: drop the queued reference.
    Skip,
}

/// What `transition_to_idle` found after a `Pending` poll.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToIdle {
    /// Idle; the queued reference was dropped with the transition.
    Idle,
    /// Woken during the poll: reschedule, reusing the queued reference.
    Notified,
    /// Aborted during the poll: cancel now (still RUNNING).
    Cancel,
}

/// What a wake must do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToNotified {
    /// Nothing (already queued, running, or complete).
    Nothing,
    /// Queue it (a reference for the `Notified` is held).
    Submit,
    /// The last reference was dropped: free it.
    Dealloc,
}

/// The state word.
pub(crate) struct State(AtomicUsize);

impl State {
    pub(crate) fn new() -> Self {
        Self(AtomicUsize::new(INITIAL))
    }

    pub(crate) fn load(&self) -> Snapshot {
        Snapshot(self.0.load(Acquire))
    }

    fn update<R>(&self, mut f: impl FnMut(usize) -> (Option<usize>, R)) -> R {
        let mut cur = self.0.load(Acquire);
        loop {
            let (next, ret) = f(cur);
            let Some(next) = next else { return ret };
            match self.0.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => return ret,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A queued task is about to be polled.
    #[inline]
    pub(crate) fn transition_to_running(&self) -> ToRunning {
        self.update(|s| {
            if s & (RUNNING | COMPLETE) != 0 {
                return (None, ToRunning::Skip);
            }
            let next = (s | RUNNING) & !NOTIFIED;
            let ret = if s & CANCELLED != 0 {
                ToRunning::Cancel
            } else {
                ToRunning::Poll
            };
            (Some(next), ret)
        })
    }

    /// The poll returned `Pending`. Going idle also drops the poller's queued reference, in
    /// the same locked instruction (the owner's reference keeps the count above zero); woken
    /// meanwhile (`Notified`), the poller keeps it to queue the task again.
    #[inline]
    pub(crate) fn transition_to_idle(&self) -> ToIdle {
        self.update(|s| {
            debug_assert!(s & RUNNING != 0);
            if s & CANCELLED != 0 {
                return (None, ToIdle::Cancel);
            }
            if s & NOTIFIED != 0 {
                return (Some(s & !RUNNING), ToIdle::Notified);
            }
            debug_assert!(
                s >> REF_SHIFT >= 2,
                "the owner and the poller hold references"
            );
            (Some((s & !RUNNING) - REF_ONE), ToIdle::Idle)
        })
    }

    /// The future finished (or was cancelled) and its result is stored. Returns the state
    /// before the transition.
    pub(crate) fn transition_to_complete(&self) -> Snapshot {
        let prev = Snapshot(self.0.fetch_xor(RUNNING | COMPLETE, AcqRel));
        debug_assert!(prev.is_running() && !prev.is_complete());
        prev
    }

    /// Shutdown wants to cancel an idle task in place. True if the caller now runs it.
    pub(crate) fn transition_to_shutdown(&self) -> bool {
        self.update(|s| {
            if s & (RUNNING | COMPLETE) != 0 {
                return (None, false);
            }
            (Some(s | RUNNING | CANCELLED), true)
        })
    }

    /// A waker consumed by value: its reference either becomes the queued reference or is
    /// dropped.
    pub(crate) fn transition_to_notified_by_val(&self) -> ToNotified {
        self.update(|s| {
            if s & RUNNING != 0 {
                // The poller reschedules; our reference goes (it cannot be the last: the
                // poller holds one).
                (Some((s | NOTIFIED) - REF_ONE), ToNotified::Nothing)
            } else if s & (COMPLETE | NOTIFIED) != 0 {
                let next = s - REF_ONE;
                let ret = if next >> REF_SHIFT == 0 {
                    ToNotified::Dealloc
                } else {
                    ToNotified::Nothing
                };
                (Some(next), ret)
            } else {
                (Some(s | NOTIFIED), ToNotified::Submit)
            }
        })
    }

    /// A waker used by reference: takes a new reference if it queues the task.
    pub(crate) fn transition_to_notified_by_ref(&self) -> ToNotified {
        self.update(|s| {
            if s & RUNNING != 0 {
                if s & NOTIFIED != 0 {
                    return (None, ToNotified::Nothing);
                }
                (Some(s | NOTIFIED), ToNotified::Nothing)
            } else if s & (COMPLETE | NOTIFIED) != 0 {
                (None, ToNotified::Nothing)
            } else {
                (Some((s | NOTIFIED) + REF_ONE), ToNotified::Submit)
            }
        })
    }

    /// Abort: marks the task cancelled. `Submit` means the caller must queue it (a reference
    /// was taken); otherwise whoever runs or dequeues it next sees the flag.
    pub(crate) fn transition_to_notified_and_cancel(&self) -> ToNotified {
        self.update(|s| {
            if s & (CANCELLED | COMPLETE) != 0 {
                (None, ToNotified::Nothing)
            } else if s & (RUNNING | NOTIFIED) != 0 {
                (Some(s | CANCELLED | NOTIFIED), ToNotified::Nothing)
            } else {
                (
                    Some((s | CANCELLED | NOTIFIED) + REF_ONE),
                    ToNotified::Submit,
                )
            }
        })
    }

    /// The `JoinHandle` stores a waker: called with the slot written, sets `JOIN_WAKER`.
    /// Fails (returns the state) if the task completed meanwhile.
    pub(crate) fn set_join_waker(&self) -> Result<(), Snapshot> {
        self.update(|s| {
            debug_assert!(s & JOIN_INTEREST != 0 && s & JOIN_WAKER == 0);
            if s & COMPLETE != 0 {
                return (None, Err(Snapshot(s)));
            }
            (Some(s | JOIN_WAKER), Ok(()))
        })
    }

    /// The `JoinHandle` takes the waker slot back to replace the waker. Fails if the task
    /// completed (the runtime may be reading the slot).
    pub(crate) fn unset_join_waker(&self) -> Result<(), Snapshot> {
        self.update(|s| {
            debug_assert!(s & JOIN_INTEREST != 0 && s & JOIN_WAKER != 0);
            if s & COMPLETE != 0 {
                return (None, Err(Snapshot(s)));
            }
            (Some(s & !JOIN_WAKER), Ok(()))
        })
    }

    /// The runtime finished waking the join waker after completion: hands the slot back.
    /// Returns the state before, so the caller knows if the `JoinHandle` is gone (then the
    /// caller drops the waker).
    pub(crate) fn unset_join_waker_after_complete(&self) -> Snapshot {
        Snapshot(self.0.fetch_and(!JOIN_WAKER, AcqRel))
    }

    /// The `JoinHandle` is dropped. Returns the state before. If the task had not completed,
    /// `JOIN_WAKER` is cleared too and the slot belongs to the caller.
    pub(crate) fn drop_join_interest(&self) -> Snapshot {
        self.update(|s| {
            debug_assert!(s & JOIN_INTEREST != 0);
            let mut next = s & !JOIN_INTEREST;
            if s & COMPLETE == 0 {
                next &= !JOIN_WAKER;
            }
            (Some(next), Snapshot(s))
        })
    }

    pub(crate) fn ref_inc(&self) {
        // Relaxed suffices: the caller already holds a reference, so the task cannot be
        // freed concurrently (the same argument as `Arc::clone`).
        let prev = self.0.fetch_add(REF_ONE, Relaxed);
        // Overflow of the reference count would be a use-after-free waiting to happen.
        if prev > usize::MAX / 2 {
            std::process::abort();
        }
    }

    /// Drops `n` references; true if they were the last.
    pub(crate) fn ref_dec(&self, n: usize) -> bool {
        let prev = self.0.fetch_sub(n * REF_ONE, AcqRel);
        debug_assert!(prev >> REF_SHIFT >= n, "task reference count underflow");
        prev >> REF_SHIFT == n
    }

    /// Only for the detached-spawn fast path: drops the join handle in the initial state.
    pub(crate) fn drop_join_handle_fast(&self) -> bool {
        self.0
            .compare_exchange(
                INITIAL,
                (INITIAL - REF_ONE) & !JOIN_INTEREST,
                Release,
                Relaxed,
            )
            .is_ok()
    }
}
