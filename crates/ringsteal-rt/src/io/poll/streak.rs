//! The yield a poll-based transfer makes after a streak of transfers that did not wait.
//!
//! A poll-based read or write on a socket that stays ready returns `Ready` every time, so a
//! task looping over `.await`s of them (a pipelining client's connection read through
//! `tokio::io`'s traits) would never return `Pending`, and its shard would run nothing else:
//! no other task, no completion, no timer. tokio's coop budget makes such a task yield after
//! 128 operations; here a thread that made [`MAX_STREAK`] poll-based transfers in a row
//! without one that waited makes the next return `Pending` once, and its task is woken once
//! the shard has taken in its completions (so the I/O of the shard's other tasks gets in
//! first), as `ringsteal-net`'s inline transfers hand the next one to the ring after as many.
//!
//! Owns: the per-thread count. May not: delay a transfer that had to wait anyway.

use std::cell::Cell;
use std::task::{Context, Poll};

/// Transfers a thread makes in a row that do not wait before one yields.
pub(crate) const MAX_STREAK: u32 = 64;

thread_local! {
    static STREAK: Cell<u32> = const { Cell::new(0) };
}

/// Runs the transfer `step` unless this thread's streak is spent, in which case the task is
/// woken and `Pending` returned (the streak starts again). A transfer that completes extends
/// the streak; one that waits ends it.
pub(crate) fn within_streak<T>(
    cx: &mut Context<'_>,
    step: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    let streak = STREAK.with(Cell::get);
    if streak >= MAX_STREAK {
        STREAK.with(|s| s.set(0));
        crate::shard::context::wake_after_reap(cx.waker());
        return Poll::Pending;
    }
    let out = step(cx);
    STREAK.with(|s| s.set(if out.is_ready() { streak + 1 } else { 0 }));
    out
}
