//! The driver: one per shard, the only owner of the shard's ring. Knows what every
//! `user_data` means (`user_data.rs`).
//!
//! Files, one job each: `submit.rs` (pushing SQEs, the backlog the kernel's `EBUSY` leaves,
//! submitting), `reap.rs` (reaping CQEs and routing each by its tag), `cancel.rs` (cancelling
//! one op, or everything at shutdown), `park.rs` (blocking in `io_uring_enter` until a CQE or
//! a deadline), `eventfd.rs` (the fallback doorbell's armed read), `msg_send.rs` (MSG_RING
//! doorbells and messages to other shards, and the messages awaiting their send's CQE),
//! `setup.rs` (creating the ring), `backlog.rs` (SQEs waiting for room), `bufs.rs` (the
//! shard's provided-buffer group, and retiring it at the end).
//!
//! May not: run tasks or wake them itself, or decide when to shut down. Reaping collects
//! wakers into the caller's [`Reaped`] buffer and the shard wakes them after the driver is no
//! longer borrowed, so a wake that rings another shard's doorbell can use this ring again.
//! The shutdown drain (`shard/drain.rs`) is a loop of the primitives here.

mod backlog;
mod bufs;
mod cancel;
#[cfg(test)]
mod cancel_tests;
mod eventfd;
mod lost;
mod msg_send;
mod park;
mod reap;
mod setup;
mod submit;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod user_data;

pub(crate) use eventfd::signal as signal_eventfd;
pub(crate) use msg_send::SentMessage;
pub(crate) use setup::{create_ring, RingOptions, SqPoll};
pub use setup::{RingMode, RingRefusal, RingSetup};

/// The smallest SQ a ring gets: room for the most SQEs one operation links (a linked copy
/// with a timeout), rounded up to a power of two as the kernel does.
pub(crate) const MIN_RING_ENTRIES: u32 = backlog::GROUP.next_power_of_two() as u32;

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::task::Waker;

use ringsteal_uring::{io_uring_cqe, Ring};

use crate::op::raw::OpHeader;
use crate::stats::ShardCounters;
use backlog::Backlog;
use eventfd::EventFd;
use msg_send::MessagesInFlight;

/// What a reap produced, for the shard to act on once the driver is released.
#[derive(Default)]
pub(crate) struct Reaped {
    pub(crate) wakers: Vec<Waker>,
    /// Raw messages from MSG_RING completions: (sequence number, truncated; payload).
    pub(crate) messages: VecDeque<(u64, u64)>,
    /// Shards whose doorbell this shard sent by MSG_RING and the kernel refused: the shard
    /// rings their eventfd instead (ADR-0006).
    pub(crate) failed_doorbells: Vec<usize>,
    /// Messages this shard sent by MSG_RING and the kernel refused: the shard queues them
    /// for their target and rings its eventfd (the sender had claimed its doorbell).
    pub(crate) failed_messages: Vec<SentMessage>,
    /// The errno every `io_uring_enter` of the ring now fails with, once, when the ring was
    /// found lost (`lost.rs`): the shard stops the runtime.
    pub(crate) lost_ring: Option<i32>,
}

/// A shard's ring and its bookkeeping.
pub(crate) struct Driver {
    ring: Ring,
    /// The provided-buffer group registered on the ring, if a stream needed one.
    bufs: bufs::GroupSlot,
    mode: RingMode,
    /// CQEs still owed to op cells (main, second, cancel).
    in_flight: usize,
    /// Zero-copy sends whose result is in (their cells' addresses): the kernel only reads
    /// their pages now, and posts the notification once the peer has acknowledged the data,
    /// which a peer that stopped reading may never do. A send leaves at its notification.
    notifications_owed: std::collections::HashSet<usize>,
    /// Of `in_flight`, the notifications a shutdown gave up waiting for
    /// ([`give_up_notifications`](Self::give_up_notifications)).
    notifications_given_up: usize,
    eventfd: Option<EventFd>,
    cqes: Box<[io_uring_cqe]>,
    /// The CQEs of `cqes` taken off the ring and not yet dispatched: empty between reaps,
    /// except after a dispatch that unwound (a runtime bug: user code is contained where it
    /// runs), when it is the rest of that batch, which the next reap dispatches first.
    undispatched: std::ops::Range<usize>,
    /// SQEs that found the SQ full while the kernel refused submissions (`EBUSY`/`EAGAIN`):
    /// moved into the SQ, in order, as soon as it has room.
    backlog: Backlog,
    /// The kernel's SQ head when `sqes_submitted` last counted (see
    /// [`count_consumed`](Self::count_consumed)).
    sq_counted: u32,
    /// Raw messages sent by MSG_RING, until their send's CQE says whether they arrived.
    messages_in_flight: MessagesInFlight,
    /// Tests: how many more submissions fail with `WouldBlock` as `EBUSY` would.
    #[cfg(test)]
    pub(crate) refuse_submits: u32,
    /// Tests: the dispatch of the CQE whose `user_data` this is panics (once).
    #[cfg(test)]
    pub(crate) panic_dispatching: Option<u64>,
    /// Tests: the errors (positive errno values, last first) that the next MSG_RINGs fail
    /// with after submission, as the kernel would report them on this ring.
    #[cfg(test)]
    pub(crate) refuse_msg_rings: Vec<i32>,
    /// Shutdown may cancel with `IORING_ASYNC_CANCEL_ANY | ALL` (see
    /// [`cancel_all`](Self::cancel_all)).
    cancel_any: bool,
    /// A stream's request is also looked for by descriptor (`cancel.rs`, `cancel_by_fd`):
    /// until the kernel refuses that cancel's key (`EINVAL`, before 6.6), after which only
    /// the by-`user_data` cancel is sent.
    cancel_by_fd: bool,
    /// Tests: flags added to every by-descriptor cancel (an unknown one makes the kernel
    /// refuse it, as one without the `USERDATA` key does).
    #[cfg(test)]
    pub(crate) by_fd_extra_flags: u32,
    /// Shutting down: everything was cancelled, and the eventfd read is no longer re-armed.
    draining: bool,
    /// The last reap entered the kernel because `IORING_SQ_TASKRUN` was set, found no
    /// completion, and left the flag set: until the next reap, the flag does not keep the
    /// shard awake (see [`has_completions`](Self::has_completions)).
    taskrun_stale: bool,
    /// The errno with which `io_uring_enter` refuses this ring for good (`lost.rs`).
    lost: Option<i32>,
    /// The loss was handed to the shard (in [`Reaped::lost_ring`]).
    lost_reported: bool,
}

impl Driver {
    /// Tests: the ring, to put it in states the kernel makes rarely.
    #[cfg(test)]
    pub(crate) fn ring(&self) -> &Ring {
        &self.ring
    }

    pub(crate) fn new(ring: Ring, mode: RingMode, with_eventfd: bool) -> io::Result<Self> {
        let eventfd = if with_eventfd {
            Some(EventFd::new()?)
        } else {
            None
        };
        let mut d = Self {
            sq_counted: ring.sq_consumed(),
            ring,
            bufs: bufs::GroupSlot::Unused,
            mode,
            in_flight: 0,
            notifications_owed: std::collections::HashSet::new(),
            notifications_given_up: 0,
            eventfd,
            cqes: vec![io_uring_cqe::default(); 256].into_boxed_slice(),
            undispatched: 0..0,
            cancel_any: true,
            cancel_by_fd: true,
            #[cfg(test)]
            by_fd_extra_flags: 0,
            draining: false,
            taskrun_stale: false,
            lost: None,
            lost_reported: false,
            backlog: Backlog::default(),
            messages_in_flight: MessagesInFlight::default(),
            #[cfg(test)]
            refuse_submits: 0,
            #[cfg(test)]
            panic_dispatching: None,
            #[cfg(test)]
            refuse_msg_rings: Vec::new(),
        };
        d.arm_eventfd();
        Ok(d)
    }

    /// Whether [`cancel_all`](Self::cancel_all) may use `IORING_ASYNC_CANCEL_ANY` (off: as on
    /// 5.15–5.18).
    pub(crate) fn set_cancel_any(&mut self, allow: bool) {
        self.cancel_any = allow;
    }

    /// Registers the ring's descriptor with the calling thread, so that the shard's enters
    /// (one per tick with I/O in flight) skip the kernel's descriptor lookup and its two
    /// locked instructions. Where the kernel refuses (before 5.18, or all 16 slots of the
    /// thread taken) the ring enters by its descriptor, as before.
    ///
    /// # Safety
    /// As for `Ring::register_ring_fd`: every later enter of this ring, and the driver's drop,
    /// happen on the calling thread.
    pub(crate) unsafe fn register_ring_fd(&mut self) {
        // SAFETY: forwarded from the caller.
        let _ = unsafe { self.ring.register_ring_fd() };
    }

    /// Caps the io-wq workers this ring may start for unbounded requests (the bounded class
    /// keeps the kernel's limit). A kernel that refuses (none since 5.15 should) keeps its
    /// own limit: nothing else depends on it.
    pub(crate) fn limit_io_workers(&self, unbounded: u32) {
        let _ = self.ring.register_iowq_max_workers(0, unbounded);
    }

    pub(crate) fn ring_fd(&self) -> RawFd {
        self.ring.fd()
    }

    pub(crate) fn eventfd(&self) -> Option<RawFd> {
        self.eventfd.as_ref().map(EventFd::fd)
    }

    pub(crate) fn mode(&self) -> RingMode {
        self.mode
    }

    /// True if every request that selects a provided buffer has had its last CQE: nothing
    /// is owed but the notifications a shutdown gave up waiting for (zero-copy sends select
    /// no buffer).
    pub(crate) fn selects_no_more_buffers(&self) -> bool {
        self.in_flight == self.notifications_given_up
    }

    /// True if nothing the kernel could still write is in flight: every op CQE has arrived
    /// and no eventfd read is armed.
    pub(crate) fn is_quiescent(&self) -> bool {
        self.in_flight == 0 && !self.eventfd.as_ref().is_some_and(|e| e.armed)
    }

    /// True if the only CQEs still owed are notifications of zero-copy sends whose result is
    /// in (and no eventfd read is armed): the kernel writes nothing more into this process's
    /// memory, it only reads the send buffers' pages until the peer acknowledges the data.
    /// A shutdown stops waiting then and leaks those cells (with their buffers) instead: a
    /// peer that stopped reading would otherwise hold it for the whole shutdown timeout.
    pub(crate) fn owes_only_notifications(&self) -> bool {
        self.in_flight == self.notifications_owed.len()
            && !self.eventfd.as_ref().is_some_and(|e| e.armed)
    }

    /// Gives up on the notifications still owed (a shutdown that will not wait for them):
    /// their cells stay allocated for good, listed in [`GIVEN_UP`] so that they stay
    /// reachable (a leak checker sees a deliberate leak, not a lost one).
    pub(crate) fn give_up_notifications(&mut self) {
        let cells = std::mem::take(&mut self.notifications_owed);
        self.notifications_given_up += cells.len();
        GIVEN_UP
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(cells);
    }

    /// Notes a zero-copy send's result (its CQE with `F_MORE`): only its notification is
    /// owed now.
    #[cold]
    #[inline(never)]
    pub(super) fn notification_owed(&mut self, op: NonNull<OpHeader>) {
        self.notifications_owed.insert(op.as_ptr() as usize);
    }

    /// Notes a notification's arrival (before its cell may be freed).
    #[cold]
    #[inline(never)]
    pub(super) fn notification_arrived(&mut self, op: NonNull<OpHeader>) {
        self.notifications_owed.remove(&(op.as_ptr() as usize));
    }

    /// Counts `cqes` more CQEs owed to op cells (SQEs just queued).
    fn add_in_flight(&mut self, cqes: usize, counters: &ShardCounters) {
        self.in_flight += cqes;
        counters.ops_in_flight.set(self.in_flight as u64);
    }
}

/// The cells of zero-copy sends whose notification a shutdown did not wait for
/// ([`Driver::give_up_notifications`]): never freed, since the kernel may read their
/// buffers' pages until the peer acknowledges the data.
static GIVEN_UP: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
