//! [`Readiness`]: waiting until a descriptor is ready for one direction of I/O, the only
//! kernel-facing step of poll-based I/O that depends on the backend.
//!
//! Today the wait is an `IORING_OP_POLL_ADD` on the ring of the shard that polls (ADR-0014):
//! one-shot (armed per wait), or multishot (armed once and kept, reporting every wakeup of
//! the descriptor: reads of a connection wait this way). The readiness (epoll) driver
//! planned for rings that are refused will answer the same three calls (`poll_ready`,
//! `clear_ready`, drop) from its epoll set instead; the non-blocking system calls that
//! follow a readiness (`sys.rs`) are the same for both.
//!
//! Owns: one direction's readiness flag and its armed poll request.
//! May not: read or write the descriptor (the caller does, after `poll_ready`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::op::{self, Op, PollAdd, PollEvents, SharedFd};

/// One direction's readiness of a descriptor: *maybe ready* (try the system call), or not
/// ready (wait for a poll request to complete first).
///
/// It starts as maybe-ready, so the first operation is tried at once. After a system call
/// returns `EAGAIN` the caller [clears](Self::clear_ready) it; the next
/// [`poll_ready`](Self::poll_ready) then arms a one-shot `POLL_ADD` and stays pending until
/// the kernel reports the descriptor ready. The kernel checks readiness when the poll is
/// armed, so a byte that arrived between the `EAGAIN` and the arming completes it at once:
/// no wakeup is lost. Dropping a `Readiness` whose poll is armed cancels the poll (it
/// references no memory; the descriptor stays open until its completion).
///
/// ```
/// use std::future::poll_fn;
/// use ringsteal_rt::io::Readiness;
/// use ringsteal_rt::op::SharedFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let a = SharedFd::new(a.into());
///     let mut readable = Readiness::new(&a, Readiness::READ);
///     poll_fn(|cx| readable.poll_ready(cx)).await.unwrap(); // maybe-ready at first
///     readable.clear_ready(); // as after a read that found nothing
///     std::io::Write::write_all(&mut &b, b"x").unwrap();
///     poll_fn(|cx| readable.poll_ready(cx)).await.unwrap(); // the kernel says: readable
/// });
/// ```
#[derive(Debug)]
pub struct Readiness {
    fd: SharedFd,
    events: u32,
    ready: bool,
    /// A hang-up or the end of the peer's stream was reported: ready from now on.
    closed: bool,
    wait: Wait,
}

#[derive(Debug)]
enum Wait {
    /// A one-shot poll, armed while waiting.
    OneShot(Option<Op<PollAdd>>),
    /// A multishot poll, armed at the first wait and kept; reports queue up while nobody
    /// waits and are drained by the next wait.
    Multishot(PollEvents),
}

impl Readiness {
    /// Interest in reading: `POLLIN`, and `POLLRDHUP` so that the peer's end of stream is
    /// reported even to a multishot poll that saw its last data already (errors and
    /// hang-ups are always reported).
    pub const READ: u32 = (libc::POLLIN | libc::POLLRDHUP) as u32;
    /// Interest in writing: `POLLOUT` (errors and hang-ups also count as ready).
    pub const WRITE: u32 = libc::POLLOUT as u32;

    /// Readiness of `fd` for `events` ([`READ`](Self::READ) or [`WRITE`](Self::WRITE)),
    /// starting as maybe-ready, waited for with a one-shot poll each time.
    pub fn new(fd: &SharedFd, events: u32) -> Self {
        Self {
            fd: fd.clone(),
            events,
            ready: true,
            closed: false,
            wait: Wait::OneShot(None),
        }
    }

    /// As [`new`](Self::new), waited for with one multishot poll armed at the first wait
    /// and kept until this value is dropped: no request per wait. For a direction that
    /// waits often (a connection's reads); a report that arrives while nobody waits costs
    /// one completion.
    pub fn multishot(fd: &SharedFd, events: u32) -> Self {
        Self {
            fd: fd.clone(),
            events,
            ready: true,
            closed: false,
            wait: Wait::Multishot(op::poll_multishot(fd, events)),
        }
    }

    /// Ready if the descriptor may be ready; otherwise arms a poll (once) and is pending
    /// until it completes, with `cx`'s waker woken then. An error of the poll request (a
    /// refused opcode, the runtime shutting down under the wait) is returned as is.
    ///
    /// A poll armed on another shard's ring (the value moved between tasks, or out of a
    /// `block_on`) or on a runtime dropped since is replaced by one armed here: its
    /// completion would reach this task only when that shard ran, if ever. A poll consumes
    /// nothing and a new one reports the descriptor's state at once, so nothing is lost.
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.ready {
            return Poll::Ready(Ok(()));
        }
        self.rearm_if_elsewhere();
        match &mut self.wait {
            Wait::OneShot(armed) => {
                let op = armed.get_or_insert_with(|| op::poll_add(&self.fd, self.events));
                let res = ready!(Pin::new(op).poll(cx));
                *armed = None;
                let mask = res?;
                if mask & (self.events | libc::POLLHUP as u32) == 0 {
                    // Only a condition the kernel always reports and that may stay true
                    // (the peer's half-close for a write, an error-queue entry): a one-shot
                    // poll sees it at once each time it is armed, so waiting that way would
                    // spin. From now on wait with a multishot poll, which reports it once.
                    self.wait = Wait::Multishot(op::poll_multishot(&self.fd, self.events));
                }
                self.note(mask);
            }
            Wait::Multishot(reports) => {
                let mask = ready!(reports.poll_ready(cx))?;
                self.note(mask);
            }
        }
        self.ready = true;
        Poll::Ready(Ok(()))
    }

    /// Drops a wait armed on another shard's (or runtime's) ring, keeping what its reports
    /// said that stays true (a hang-up), so that the next wait is armed on this shard.
    fn rearm_if_elsewhere(&mut self) {
        match &mut self.wait {
            Wait::OneShot(armed) => {
                if armed.as_ref().is_some_and(Op::submitted_elsewhere) {
                    *armed = None;
                }
            }
            Wait::Multishot(reports) => {
                if reports.armed_elsewhere() {
                    let mut kept =
                        std::mem::replace(reports, op::poll_multishot(&self.fd, self.events));
                    // Reports its shard queued and nobody took: a hang-up among them is
                    // reported once, and must not be forgotten.
                    let queued = kept.take_queued_masks();
                    self.note(queued);
                }
            }
        }
    }

    /// Marks the descriptor not ready: the system call said `EAGAIN` (or a short transfer
    /// says the socket is drained or full). The next `poll_ready` waits for the kernel.
    pub fn clear_ready(&mut self) {
        self.ready = self.closed;
        if let Wait::Multishot(reports) = &mut self.wait {
            // Reports queued before the system call that found nothing are stale; waiting on
            // them would cost another system call per wait.
            if let Some(dropped) = reports.clear_stale_reports() {
                self.note(dropped);
            }
        }
    }

    /// Remembers a hang-up, or (for an interest in reading) a read side closed by the peer:
    /// a multishot poll is edge-triggered and reports each of them once, but they stay true,
    /// so from then on the descriptor counts as ready for good (the system calls return end
    /// of stream or the error). The peer's half-close says nothing of writing (the kernel
    /// reports it to every poll), and an error (`POLLERR`) makes the descriptor ready once,
    /// not for good: it may be a passing condition (an entry in the socket's error queue, a
    /// transmit timestamp say) after which `recv` or `send` still says `EAGAIN`; a fatal one
    /// also hangs the socket up (`POLLHUP`), and the system call returns it.
    fn note(&mut self, mask: u32) {
        let stays = libc::POLLHUP as u32 | (self.events & libc::POLLRDHUP as u32);
        if mask & stays != 0 {
            self.closed = true;
            self.ready = true;
        } else if mask & libc::POLLERR as u32 != 0 {
            self.ready = true;
        }
    }

    /// True while the next operation will be tried without waiting.
    pub fn is_ready(&self) -> bool {
        self.ready
    }
}
