//! Waiting for a child through its pidfd: the wait in flight ([`PendingWait`]), the step that
//! drives it ([`poll_reap`], for `Child::wait`) and the look `try_wait` takes at it.
//!
//! The wait is an `IORING_OP_WAITID` (it waits and reaps in the kernel) where the runtime may
//! use one, or a `POLL_ADD` on the pidfd followed by `waitid(WNOHANG)`. The op in flight is
//! kept in the `Child` across calls, so a `wait()` future that is dropped loses nothing: the
//! next call picks the same op up, and an exit status the kernel has already written into it
//! is never thrown away.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};

use ringsteal_rt::op::{self, Op, PollReadable, SharedFd, WaitId};

/// A wait for a child that has been started (its op is submitted on the first poll).
#[derive(Debug)]
pub(crate) enum PendingWait {
    /// `IORING_OP_WAITID`: completes with the status, the child reaped.
    Waitid(Op<WaitId>),
    /// `POLL_ADD` on the pidfd: completes when the child has exited; then `waitid(WNOHANG)`.
    Exit(Op<PollReadable>),
}

impl PendingWait {
    fn start(pidfd: &SharedFd) -> Self {
        if op::waitid_available() {
            PendingWait::Waitid(op::waitid_pidfd(pidfd))
        } else {
            PendingWait::Exit(op::poll_readable(pidfd))
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
        let wait = pending.get_or_insert_with(|| PendingWait::start(pidfd));
        let exited = match wait {
            PendingWait::Waitid(op) => match Pin::new(op).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(res) => {
                    *pending = None;
                    return Poll::Ready(res);
                }
            },
            PendingWait::Exit(op) => match Pin::new(op).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(res) => res,
            },
        };
        *pending = None;
        exited?;
        // The pidfd is readable: the child has exited, so this finds it (the loop only guards
        // against a wake-up that was not an exit).
        if let Some(status) = op::try_reap_pidfd(pidfd)? {
            return Poll::Ready(Ok(status));
        }
    }
}

/// Polls the wait in `pending` once without a task to wake (from `try_wait`): its result if it
/// has completed, `None` if it is still in flight or there is none. Never starts a wait.
pub(crate) fn poll_pending_now(
    pending: &mut Option<PendingWait>,
    pidfd: &SharedFd,
) -> Option<io::Result<ExitStatus>> {
    pending.as_ref()?;
    let waker = std::task::Waker::from(std::sync::Arc::new(NoWake));
    let mut cx = Context::from_waker(&waker);
    match pending.as_mut()? {
        PendingWait::Waitid(op) => match Pin::new(op).poll(&mut cx) {
            Poll::Pending => None,
            Poll::Ready(res) => {
                *pending = None;
                Some(res)
            }
        },
        PendingWait::Exit(op) => match Pin::new(op).poll(&mut cx) {
            Poll::Pending => None,
            Poll::Ready(res) => {
                *pending = None;
                // Exited (or the poll failed): the caller reaps with waitid(WNOHANG).
                res.err()
                    .map(Err)
                    .or_else(|| op::try_reap_pidfd(pidfd).transpose())
            }
        },
    }
}

/// A waker for a poll nobody waits on: the op keeps its result until the next real poll.
struct NoWake;

impl std::task::Wake for NoWake {
    fn wake(self: std::sync::Arc<Self>) {}
}
