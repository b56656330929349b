//! The file requests a paused clock waits for (ADR-0013): a shard's list of the op cells
//! submitted while its clock was paused whose operation completes on its own
//! ([`Operation::holds_paused_clock`](crate::op::Operation::holds_paused_clock)).
//!
//! Owns: the list and a reference on each listed cell, so a look at it is safe whenever the
//! request completes. A request holds the clock from its submission to its last completion,
//! as tokio's blocking-pool file call holds its clock for the call itself: whether its future
//! has seen the result does not matter. Kept only while paused (a paused clock needs a
//! single shard), so a running clock's ops pay one test of the flag at submission.
//! May not: free a cell other than by giving back its own reference.

use std::cell::RefCell;
use std::ptr::NonNull;
use std::task::Waker;

use super::Shard;
use crate::op::raw::{release, OpHeader};
use crate::util::wake_later::collecting;

/// The list (in [`Shard`]); `prune_at` bounds its growth when no auto-advance prunes it.
#[derive(Default)]
pub(crate) struct ClockHolds {
    cells: RefCell<Vec<NonNull<OpHeader>>>,
    prune_at: std::cell::Cell<usize>,
}

/// A list longer than this is pruned at the next submission (then at twice what is left).
const FIRST_PRUNE: usize = 64;

impl Shard {
    /// Lists `op`, just submitted while the clock is paused, taking a reference on it.
    #[cold]
    #[inline(never)]
    pub(crate) fn hold_clock_for(&self, op: NonNull<OpHeader>) {
        // SAFETY: the caller (the op's submission) holds a reference on the cell.
        unsafe { op.as_ref() }.add_ref();
        let holds = &self.clock_holds;
        let len = holds.cells.borrow().len();
        if len >= holds.prune_at.get().max(FIRST_PRUNE) {
            self.release_completed_holds();
            let left = holds.cells.borrow().len();
            holds.prune_at.set((left * 2).max(FIRST_PRUNE));
        }
        holds.cells.borrow_mut().push(op);
    }

    /// Gives back the list's reference on each request that has completed; true if one is
    /// still in flight (the clock waits for it). Wakes what freeing a cell woke.
    pub(crate) fn release_completed_holds(&self) -> bool {
        let mut woken: Vec<Waker> = Vec::new();
        let in_flight = collecting(&mut woken, || {
            let mut cells = self.clock_holds.cells.borrow_mut();
            let done: Vec<NonNull<OpHeader>> = {
                let mut done = Vec::new();
                cells.retain(|&op| {
                    // SAFETY: the list's reference keeps the cell alive.
                    let complete = unsafe { op.as_ref() }.is_complete();
                    if complete {
                        done.push(op);
                    }
                    !complete
                });
                done
            };
            let in_flight = !cells.is_empty();
            drop(cells);
            for op in done {
                // SAFETY: gives back the reference `hold_clock_for` took.
                unsafe { release(op) };
            }
            in_flight
        });
        woken.into_iter().for_each(Waker::wake);
        in_flight
    }

    /// At shutdown, after the drain: gives back every listed reference (a cell whose request
    /// is still in flight keeps the references of its requests).
    pub(crate) fn release_all_holds(&self) {
        let cells = std::mem::take(&mut *self.clock_holds.cells.borrow_mut());
        for op in cells {
            // SAFETY: gives back the reference `hold_clock_for` took.
            unsafe { release(op) };
        }
    }
}
