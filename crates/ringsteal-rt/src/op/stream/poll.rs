//! Multishot `IORING_OP_POLL_ADD` (`IORING_POLL_ADD_MULTI`, 5.13): one request that stays armed
//! on a descriptor and posts a completion each time the kernel wakes the descriptor's waiters
//! with a requested event, until it is cancelled or the kernel ends it. It is how the
//! readiness path of poll-based I/O (`io/poll/readiness.rs`, ADR-0014) waits for a socket
//! to become readable without arming a new request each time.
//!
//! Policy: every completion is one readiness report (the ready mask). `poll_ready` drains
//! every report queued and yields their union; when the kernel ends the request (a full CQ,
//! an error) the last result is yielded and the poll re-armed at the next call. Nothing is
//! owned by a report, so nothing can leak.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll, Waker};

use ringsteal_uring::{io_uring_sqe, opcode};

use super::cell::{Release, Source};
use super::{not_on_shard, Multishot, Polled};
use crate::op::{cqe_result, SharedFd};
use crate::shard::context;
use crate::shard::sched::SchedHandle;

/// Reports readiness of `fd` for `events` (`libc::POLLIN`, ...) as a stream of masks: one
/// multishot `POLL_ADD`, submitted on the first poll on the polling shard's ring and
/// cancelled when the value is dropped.
///
/// ```
/// use std::future::poll_fn;
/// use std::io::Write;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let mut readable = op::poll_multishot(&SharedFd::new(a.into()), libc::POLLIN as u32);
///     b.write_all(b"x").unwrap();
///     let mask = poll_fn(|cx| readable.poll_ready(cx)).await.unwrap();
///     assert_ne!(mask & libc::POLLIN as u32, 0);
/// });
/// ```
pub fn poll_multishot(fd: &SharedFd, events: u32) -> PollEvents {
    PollEvents::with_source(PollSource {
        fd: Watched::Shared(fd.clone()),
        events,
    })
}

/// [`poll_multishot`] on a descriptor the caller owns and names by number (a
/// [`ReadinessCache`](crate::io::ReadinessCache)'s waits), as
/// [`poll_add_by_number`](crate::op::poll_add_by_number) is [`poll_add`](crate::op::poll_add):
/// the caller keeps the number open while the value lives and drops it (which cancels the
/// request) before closing the descriptor.
pub(crate) fn poll_multishot_by_number(fd: RawFd, events: u32) -> PollEvents {
    PollEvents::with_source(PollSource {
        fd: Watched::Number(fd),
        events,
    })
}

/// The stream of readiness reports of [`poll_multishot`].
///
/// ```
/// fn is_send<T: Send>() {}
/// is_send::<ringsteal_rt::op::PollEvents>();
/// ```
pub struct PollEvents {
    armed: Multishot<PollSource>,
    /// The request's data while nothing is armed.
    source: Option<PollSource>,
}

impl PollEvents {
    fn with_source(source: PollSource) -> Self {
        Self {
            armed: Multishot::new(),
            source: Some(source),
        }
    }

    /// Ready with the union of the readiness reports queued since the last call (at least
    /// one); pending, with `cx` registered, while none is. Arms the poll on the current
    /// shard first if nothing is armed. An error of the request (or a poll off a shard) is
    /// returned; the next call re-arms.
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u32>> {
        if !self.armed.is_armed() {
            let source = self
                .source
                .take()
                .expect("the source is here while unarmed");
            let armed = context::with_shard(|shard| match shard {
                Some(shard) => self.armed.arm(shard, source, cx.waker()),
                None => Err((source, not_on_shard())),
            });
            if let Err((source, e)) = armed {
                self.source = Some(source);
                return Poll::Ready(Err(e));
            }
        }
        match self.armed.poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Polled::Item(first)) => {
                let mut mask = first?;
                while let Some(more) = self.armed.try_item() {
                    mask |= more?;
                }
                Poll::Ready(Ok(mask))
            }
            Poll::Ready(Polled::Ended(last, source)) => {
                self.source = Some(source);
                Poll::Ready(last)
            }
        }
    }

    /// Drops the reports queued so far if they are certainly stale, that is, if the poll is
    /// armed on the calling thread's shard of the same runtime: that shard's driver is the
    /// only one that queues reports, and it does so between task polls, so every queued
    /// report is of a wakeup before the caller's latest system call (which found the
    /// descriptor not ready). On any other thread a report may be arriving right now: they
    /// are kept (the next wait then returns at once; the cost is one system call). Returns
    /// the union of the dropped reports' masks (`None`: nothing was dropped), so that the
    /// caller keeps what must not be forgotten (a hang-up is reported once).
    pub fn clear_stale_reports(&mut self) -> Option<u32> {
        if self.armed_here() != Some(true) {
            return None;
        }
        let mut mask = 0;
        while let Some(report) = self.armed.try_item() {
            // An error report (the request is ending) counts as everything ready.
            mask |= report.unwrap_or(u32::MAX);
        }
        Some(mask)
    }

    /// True if the poll is armed on the ring of another shard, or of another runtime (one
    /// dropped since, whose shutdown ended the request), than the calling shard's: its
    /// reports reach this value only when that shard runs. False if nothing is armed, and
    /// on a thread that is no shard. Nothing is lost by dropping such a value and polling a
    /// new one here: a poll armed anew reports the descriptor's readiness at once.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::task::Poll;
    /// use ringsteal_rt::op::{self, SharedFd};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let mut readable = op::poll_multishot(&SharedFd::new(a.into()), libc::POLLIN as u32);
    /// let readable = rt.block_on(async move {
    ///     assert!(!readable.armed_elsewhere(), "not armed yet");
    ///     poll_fn(|cx| Poll::Ready(readable.poll_ready(cx).is_pending())).await;
    ///     assert!(!readable.armed_elsewhere(), "armed on this shard's ring");
    ///     readable
    /// });
    /// let on_shard_1 = rt.handle().spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
    ///     readable.armed_elsewhere()
    /// });
    /// assert!(rt.block_on(on_shard_1).unwrap(), "armed on shard 0's ring");
    /// ```
    pub fn armed_elsewhere(&self) -> bool {
        self.armed_here() == Some(false)
    }

    /// Takes every report queued so far, wherever the poll is armed, and returns the union
    /// of their masks. Error reports are dropped: they end the request, which is being let
    /// go of (by [`Readiness`](crate::io::Readiness) when it moved to another shard).
    pub(crate) fn take_queued_masks(&mut self) -> u32 {
        let mut mask = 0;
        while let Some(report) = self.armed.try_item() {
            mask |= report.unwrap_or(0);
        }
        mask
    }

    /// Whether the poll is armed on the calling shard's ring (of the same runtime); `None`
    /// if nothing is armed or the caller is no shard.
    fn armed_here(&self) -> Option<bool> {
        context::runs_shard(
            self.armed.armed_shard()?,
            self.armed.runtime().map(SchedHandle::shared),
        )
    }

    /// Requests submitted so far (the first arming and every re-arm).
    pub fn armings(&self) -> u64 {
        self.armed.armings()
    }
}

impl std::fmt::Debug for PollEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollEvents")
            .field("armed", &self.armed.is_armed())
            .finish()
    }
}

struct PollSource {
    fd: Watched,
    events: u32,
}

/// The descriptor a poll watches.
enum Watched {
    /// Held open by the source until the last CQE.
    Shared(SharedFd),
    /// Kept open by the maker ([`poll_multishot_by_number`]).
    Number(RawFd),
}

impl PollSource {
    fn raw_fd(&self) -> RawFd {
        match &self.fd {
            Watched::Shared(fd) => fd.as_raw_fd(),
            Watched::Number(fd) => *fd,
        }
    }
}

// SAFETY: a poll references no memory and has no effect on the file it watches. A shared
// descriptor is held open by the source, which lives in the cell until the last CQE. One
// named by number is kept open by its maker until it has dropped the value, which cancels
// the request (by descriptor and `user_data` together, so a cancel that lands after the
// number was reused touches no other request); once the kernel has taken the SQE it holds
// the file itself until the poll ends. If the number is closed before that, the poll fails
// (`EBADF`) or watches whatever file reused the number until its cancel lands, which does
// nothing to that file: the reasoning of `PollAddByNumber`.
unsafe impl Source for PollSource {
    type Item = io::Result<u32>;

    fn fd(&self) -> RawFd {
        self.raw_fd()
    }

    fn prepare(&mut self) -> io_uring_sqe {
        opcode::poll_add(self.raw_fd(), self.events, true)
    }

    unsafe fn item(&self, res: i32, _flags: u32) -> Self::Item {
        cqe_result(res)
    }

    /// Reports fold into one mask: a reader that never finds the descriptor drained (its
    /// reads always full) takes none of them, and would otherwise hold one per wakeup of
    /// the descriptor for as long as it reads. Every consumer ORs what is queued anyway.
    /// An error stays an item of its own.
    fn merge(newest: &mut Self::Item, item: Self::Item) -> Option<Self::Item> {
        match (newest, item) {
            (Ok(mask), Ok(more)) => {
                *mask |= more;
                None
            }
            (_, item) => Some(item),
        }
    }
}

impl Release for u32 {
    fn release(self, _: &mut Vec<Waker>) {}
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::io::Write;
    use std::task::Poll;

    use crate::op::{self, SharedFd};

    /// A reader that keeps finding data never drains the reports (it never waits), so they
    /// must not pile up: they fold into one.
    #[test]
    fn reports_nobody_takes_fold_into_one() {
        let rt = crate::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(async {
            let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
            let a = SharedFd::new(a.into());
            let mut reports = op::poll_multishot(&a, libc::POLLIN as u32);
            // Armed (nothing to read yet).
            assert!(poll_fn(|cx| Poll::Ready(reports.poll_ready(cx).is_pending())).await);
            for _ in 0..200 {
                b.write_all(b"x").unwrap();
                // An enter and a reap, so the wakeup's report is posted and queued.
                op::nop().await.unwrap();
            }
            let mut queued = 0;
            let mut mask = 0;
            while let Some(report) = reports.armed.try_item() {
                queued += 1;
                mask |= report.unwrap();
            }
            assert!(queued <= 1, "{queued} reports queued");
            assert_ne!(mask & libc::POLLIN as u32, 0);
        });
    }
}
