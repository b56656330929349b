//! Waiting for a child through its pidfd: the wait in flight ([`PendingWait`]), the step that
//! drives it ([`poll_reap`], for `Child::wait`) and the look `try_wait` takes at it.
//!
//! The wait only learns that the child has exited; reaping is a `waitid(WNOHANG)` on the
//! pidfd afterwards, on the thread that polls the wait. Where the runtime may use it, the wait
//! is an `IORING_OP_WAITID` with `WNOWAIT` (it leaves the child a zombie); otherwise a
//! `POLL_ADD` on the pidfd. Either way the op in flight consumes nothing: it is kept in the
//! `Child` across calls (a dropped `wait()` future loses nothing, the next call picks the same
//! op up), and it may be dropped at any point, even once the kernel has completed it, without
//! losing the exit status, which stays with the zombie. So the child is reaped, and its pid
//! given up, only where `Child` sees it (`id()` is `None` from then on). And a wait polled on
//! another shard than the one its op went to (a `Child` handed to a task elsewhere, or to
//! another runtime) drops that op and waits where it is polled: the first shard may not run
//! again (shard 0 outside `block_on`), or its runtime may have shut down, cancelling the op.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};

use ringsteal_rt::op::{self, Op, PollReadable, SharedFd, WaitId};

/// A wait for a child to exit (its op is submitted on the first poll).
#[derive(Debug)]
pub(crate) enum PendingWait {
    /// `IORING_OP_WAITID` with `WNOWAIT`: completes once the child has exited.
    Waitid(Op<WaitId>),
    /// `POLL_ADD` on the pidfd: completes once the child has exited.
    Exit(Op<PollReadable>),
}

impl PendingWait {
    fn start(pidfd: &SharedFd) -> Self {
        if op::waitid_available() {
            PendingWait::Waitid(op::wait_exit_pidfd(pidfd))
        } else {
            PendingWait::Exit(op::poll_readable(pidfd))
        }
    }

    /// The op was submitted to another shard than the one polling it (see
    /// `Op::submitted_elsewhere`).
    fn submitted_elsewhere(&self) -> bool {
        match self {
            PendingWait::Waitid(op) => op.submitted_elsewhere(),
            PendingWait::Exit(op) => op.submitted_elsewhere(),
        }
    }

    /// Polls the op: `Ready(Ok)` once the child has exited.
    fn poll_exited(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            PendingWait::Waitid(op) => Pin::new(op).poll(cx).map(|r| r.map(drop)),
            PendingWait::Exit(op) => Pin::new(op).poll(cx),
        }
    }
}

/// Drives the wait in `pending` (starting one if there is none) until the child has been
/// reaped; `pending` is `None` again once this returns `Ready`.
pub(crate) fn poll_reap(
    pending: &mut Option<PendingWait>,
    pidfd: &SharedFd,
    cx: &mut Context<'_>,
) -> Poll<io::Result<ExitStatus>> {
    loop {
        if pending
            .as_ref()
            .is_some_and(PendingWait::submitted_elsewhere)
        {
            // Left on the ring of the shard (or runtime) an earlier `wait()` was polled on,
            // whose completions only that shard reaps, if it ever runs again: wait here
            // instead. The op never reaps, so dropping it loses nothing.
            *pending = None;
        }
        let wait = pending.get_or_insert_with(|| PendingWait::start(pidfd));
        let exited = match wait.poll_exited(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(res) => res,
        };
        *pending = None;
        exited?;
        // The child has exited and nothing has reaped it, so this finds it (the loop only
        // guards against a wake-up that was not an exit).
        if let Some(status) = op::try_reap_pidfd(pidfd)? {
            return Poll::Ready(Ok(status));
        }
    }
}

/// Polls the wait in `pending` once without a task to wake (from `try_wait`): the reaped
/// status if it has completed, `None` if it is still in flight or there is none. Never starts
/// a wait.
pub(crate) fn poll_pending_now(
    pending: &mut Option<PendingWait>,
    pidfd: &SharedFd,
) -> Option<io::Result<ExitStatus>> {
    let waker = std::task::Waker::from(std::sync::Arc::new(NoWake));
    let mut cx = Context::from_waker(&waker);
    match pending.as_mut()?.poll_exited(&mut cx) {
        Poll::Pending => None,
        Poll::Ready(_) => {
            *pending = None;
            // Exited, or the wait failed: either way, what waitid(WNOHANG) finds now is the
            // answer. A failed wait says nothing about the child (a runtime's shutdown
            // cancelled it: `ECANCELED` for a child that has exited meanwhile), and it never
            // reaps, so nothing is lost by not reporting it; a `wait()` starts a new one.
            op::try_reap_pidfd(pidfd).transpose()
        }
    }
}

/// A waker for a poll nobody waits on: the op keeps its result until the next real poll.
struct NoWake;

impl std::task::Wake for NoWake {
    fn wake(self: std::sync::Arc<Self>) {}
}
