//! One wait of a [`ReadinessCache`](super::ReadinessCache) for the kernel's word: a one-shot
//! `POLL_ADD`, or, while the descriptor reports an error that may stay, an edge-triggered
//! wait on a multishot poll.
//!
//! Why two: the kernel reports `POLLERR` to every poll, whatever it asked for, for as long
//! as the condition lasts, and some errors last until someone reads them (an entry in the
//! socket's error queue: `IP_RECVERR`, transmit timestamps, `MSG_ZEROCOPY` completions). A
//! one-shot poll sees such an error at once each time it is armed. The cache reports it
//! once, as ready (tokio's epoll, edge-triggered, does the same); but if the caller's
//! system call then says `EAGAIN` and the next wait armed another one-shot poll, the wait
//! would return at once again: a task that ignores its error queue would go round once
//! per shard tick without ever sleeping. So after two polls in a row that reported an
//! error and nothing else asked for (with a `WouldBlock` between them: the error was not
//! one a `recv` returns and clears), the next waits watch for *changes*: a multishot poll
//! reports the descriptor's state when armed and then once per wakeup of the descriptor,
//! and its first report is skipped if it says only that error again. A report without the
//! error ends that.
//!
//! What this misses: a second error-only wakeup that lands before the multishot poll is
//! armed is taken for the first report and skipped; the wait then ends at the next wakeup
//! (data, room, a hang-up, another error). Only a caller that does not read its error queue
//! gets here, and such a caller does not act on errors anyway.
//!
//! May not: record or clear readiness (the cache does).

use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::op::{self, Op, PollAddByNumber, PollEvents};

/// A wait armed (or to be armed at its first poll) for one call.
#[derive(Debug)]
pub(super) enum Wait {
    OneShot(Op<PollAddByNumber>),
    /// `first`: the next report is the first, which may only repeat the lasting error.
    Edge {
        reports: PollEvents,
        first: bool,
    },
}

impl Wait {
    /// A wait for `events` on `fd`: edge-triggered if the descriptor reports an error that
    /// stays (`lasting_error`).
    pub(super) fn new(fd: RawFd, events: u32, lasting_error: bool) -> Self {
        if lasting_error {
            Wait::Edge {
                reports: op::poll_multishot_by_number(fd, events),
                first: true,
            }
        } else {
            Wait::OneShot(op::poll_add_by_number(fd, events))
        }
    }

    /// True if the request is armed on another shard's ring (or another runtime's): its
    /// completion would reach the caller only when that shard ran, if ever.
    pub(super) fn armed_elsewhere(&self) -> bool {
        match self {
            Wait::OneShot(op) => op.submitted_elsewhere(),
            Wait::Edge { reports, .. } => reports.armed_elsewhere(),
        }
    }

    /// True for an edge-triggered wait.
    pub(super) fn is_edge(&self) -> bool {
        matches!(self, Wait::Edge { .. })
    }

    /// The ready events (`revents`) the wait ends with; for an edge-triggered one, not a
    /// first report that says only the lasting error.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>, events: u32) -> Poll<io::Result<u32>> {
        match self {
            Wait::OneShot(op) => Pin::new(op).poll(cx),
            Wait::Edge { reports, first } => loop {
                let revents = ready!(reports.poll_ready(cx))?;
                if std::mem::take(first) && only_an_error(revents, events) {
                    continue;
                }
                return Poll::Ready(Ok(revents));
            },
        }
    }
}

/// True if `revents` has an error and nothing else the poll asked for (`events`) or that
/// stays (a hang-up): what a descriptor with an unread error-queue entry reports to every
/// poll.
pub(super) fn only_an_error(revents: u32, events: u32) -> bool {
    revents & libc::POLLERR as u32 != 0 && revents & (events | libc::POLLHUP as u32) == 0
}

#[cfg(test)]
mod tests {
    use super::only_an_error;

    #[test]
    fn an_error_alone_is_told_from_one_with_what_was_asked_for() {
        let (err, inn, out, hup) = (
            libc::POLLERR as u32,
            libc::POLLIN as u32,
            libc::POLLOUT as u32,
            libc::POLLHUP as u32,
        );
        assert!(only_an_error(err, inn));
        assert!(
            only_an_error(err | out, inn),
            "room says nothing to a reader"
        );
        assert!(!only_an_error(err | inn, inn));
        assert!(
            !only_an_error(err | hup, inn),
            "a hang-up stays: not this case"
        );
        assert!(!only_an_error(inn, inn));
        assert!(!only_an_error(0, inn));
    }
}
