//! [`RemoteShard`]: the part of a shard that other threads touch: its inbox, its stealable
//! queues, its sleeping flag and its doorbell.
//!
//! The sleep/wake protocol lives in [`SleepFlag`] (`sleep_flag.rs`, model-checked with loom
//! by `scripts/loom.sh` and stress-tested by `tests/wake_stress.rs`):
//!
//! * the sleeper stores `sleeping = true`, issues a SeqCst fence, re-checks every queue it
//!   can be fed through, and only then blocks in `io_uring_enter`;
//! * a waker pushes into a queue, issues a SeqCst fence, then reads `sleeping`; if it is true
//!   it *swaps* it to false and, only if the swap saw true, rings the doorbell.
//!
//! The fences guarantee that one side sees the other's store, so a wake is never lost; the
//! swap guarantees one doorbell per sleep, however many wakers race.
//!
//! The doorbell names the shard's ring fd (MSG_RING) or eventfd. Both are closed when the
//! shard exits, and a closed fd number can be reused by an unrelated file; so senders
//! register in `senders` around the send, and an exiting shard sets `closed` and waits for
//! `senders` to reach zero before it closes anything. The doorbells that need no ring of the
//! caller's own (the eventfd write, ring-less MSG_RING) are rung here, under that guard;
//! a MSG_RING from a shard's ring is the shard's (`Shard::msg_ring_doorbell`).

use std::os::fd::RawFd;
use std::ptr::NonNull;
#[cfg(test)]
use std::sync::atomic::AtomicU32;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_deque::{Injector, Stealer};

use super::reservation::Reservation;
use super::sleep_flag::SleepFlag;
use crate::driver::signal_eventfd;
use crate::driver::user_data::TAG_DOORBELL;
use crate::op::raw::OpHeader;
use crate::stats::ShardCounters;
use crate::task::Notified;
use crate::util::drain_queue;

/// A request another thread asks this shard to carry out on its ring or wheel.
pub(crate) enum RemoteCmd {
    /// Submit `ASYNC_CANCEL` for this op (a reference for the cancel's CQE is held).
    CancelOp(OpRef),
    /// Remove this timer entry from the wheel.
    CancelTimer(crate::time::TimerKey),
    /// Move this timer entry to a new deadline, keeping its waker (`Sleep::reset` called
    /// away from the timer's shard).
    ResetTimer(crate::time::TimerKey, std::time::Instant),
    /// Insert this timer of a `Sleep` polled off the shards (`time/foreign.rs`).
    ForeignTimer(std::sync::Arc<crate::time::ForeignTimer>),
}

/// An op pointer that may cross threads (it carries a counted reference).
pub(crate) struct OpRef(pub(crate) NonNull<OpHeader>);
// SAFETY: op headers are Sync (see `op/raw.rs`); the reference is released on the owner shard.
unsafe impl Send for OpRef {}

/// How a doorbell reaches this shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Doorbell {
    /// Via `IORING_OP_MSG_RING` from the sender's own ring.
    MsgRing,
    /// Via `IORING_REGISTER_SEND_MSG_RING` (no ring needed).
    SendMsgRing,
    /// Via a write to the shard's eventfd.
    EventFd,
}

/// The shared half of a shard.
pub(crate) struct RemoteShard {
    /// Started tasks woken from other threads, and tasks placed here from other threads.
    pub(crate) inbox: Injector<Notified>,
    /// Stealable tasks placed here from other threads (`StealablePreferred`); any shard may
    /// steal from it.
    pub(crate) stealable: Injector<Notified>,
    /// Steals from the shard's own stealable deque.
    pub(crate) stealer: OnceLock<Stealer<Notified>>,
    /// Requests from other threads (op cancels, timer removals).
    pub(crate) cmds: Injector<RemoteCmd>,
    /// Raw messages sent without MSG_RING (fallback path).
    pub(crate) messages: Injector<(u64, u64)>,
    /// The sequence number of the next raw message sent here (see `msg.rs`).
    pub(crate) msg_seq: AtomicU64,
    pub(crate) sleeping: SleepFlag,
    /// A thread is running this shard (false for shard 0 outside `block_on`).
    pub(crate) driven: AtomicBool,
    /// The shard ran out of work and has not found any since (spinning, parked, or woken and
    /// not yet running anything). A hint for handing work over; never needed for correctness.
    pub(crate) idle: AtomicBool,
    /// When the shard's next timer is due, in nanoseconds of the runtime's clock since its
    /// origin, published as it parks (`u64::MAX`: none, or not parked). A shard that is about
    /// to wake for its own timers is not idle enough to take started tasks
    /// (`shard/move_started.rs`). A hint, as `idle`.
    pub(crate) parked_until_ns: AtomicU64,
    /// When the shard last became idle, in nanoseconds of real time since the runtime's
    /// clock origin (`Shard::real_ns`). A shard idle for only a moment between bursts of
    /// its own work takes no started tasks (`shard/move_started.rs`). A hint, as `idle`.
    pub(crate) idle_since_ns: AtomicU64,
    /// Work handed over to this shard while it was idle, kept for it for a moment
    /// (`reservation.rs`).
    pub(crate) reservation: Reservation,
    closed: AtomicBool,
    senders: AtomicUsize,
    ring_fd: AtomicI32,
    eventfd: AtomicI32,
    pub(crate) counters: ShardCounters,
    /// Tests: how many more times this shard's worker loop panics (a runtime bug, simulated).
    #[cfg(test)]
    pub(crate) loop_panics: AtomicU32,
}

impl RemoteShard {
    /// A shard's shared half; work handed over to it is kept for it at most `reservation`.
    pub(crate) fn new(reservation: Duration) -> Self {
        Self {
            inbox: Injector::new(),
            stealable: Injector::new(),
            stealer: OnceLock::new(),
            cmds: Injector::new(),
            messages: Injector::new(),
            msg_seq: AtomicU64::new(0),
            // Until a thread drives it, the shard counts as asleep: wakes ring its doorbell,
            // whose completion waits in its ring for the thread that comes to drive it.
            sleeping: SleepFlag::new(true),
            driven: AtomicBool::new(false),
            parked_until_ns: AtomicU64::new(u64::MAX),
            idle_since_ns: AtomicU64::new(0),
            // A new shard has no work: the first spawns can be handed over to it.
            idle: AtomicBool::new(true),
            reservation: Reservation::lasting(reservation),
            closed: AtomicBool::new(false),
            senders: AtomicUsize::new(0),
            ring_fd: AtomicI32::new(-1),
            eventfd: AtomicI32::new(-1),
            counters: ShardCounters::default(),
            #[cfg(test)]
            loop_panics: AtomicU32::new(0),
        }
    }

    /// Tests: panics (out of the worker loop) if `loop_panics` asks for it.
    #[cfg(test)]
    pub(crate) fn panic_if_asked(&self) {
        let take = |n: u32| n.checked_sub(1);
        if self.loop_panics.fetch_update(SeqCst, SeqCst, take).is_ok() {
            panic!("INTENTIONAL test panic in a shard's loop (a simulated runtime bug)");
        }
    }

    /// Publishes the descriptors doorbells use. Called once, before the shard is visible.
    pub(crate) fn publish_fds(&self, ring_fd: RawFd, eventfd: Option<RawFd>) {
        self.ring_fd.store(ring_fd, Release);
        self.eventfd.store(eventfd.unwrap_or(-1), Release);
    }

    pub(crate) fn ring_fd(&self) -> RawFd {
        self.ring_fd.load(Acquire)
    }

    pub(crate) fn eventfd(&self) -> RawFd {
        self.eventfd.load(Acquire)
    }

    /// Waker side: after pushing work, claims the doorbell if the shard sleeps. True means
    /// the caller must ring it (exactly one caller per sleep gets true).
    pub(crate) fn claim_doorbell(&self) -> bool {
        self.sleeping.claim_doorbell()
    }

    /// Sleeper side: publishes the intent to sleep. The caller must re-check its queues after
    /// this and call [`wake_up`](Self::wake_up) if it finds work or when it wakes.
    pub(crate) fn prepare_sleep(&self) {
        self.sleeping.prepare_sleep();
    }

    /// Sleeper side: awake again (see [`SleepFlag::wake_up`]).
    pub(crate) fn wake_up(&self) {
        self.sleeping.wake_up();
    }

    /// Runs `send` with the shard's descriptors guaranteed open, unless the shard is closed.
    pub(crate) fn with_open_fds(&self, send: impl FnOnce(RawFd, RawFd)) {
        self.senders.fetch_add(1, SeqCst);
        if !self.closed.load(SeqCst) {
            send(self.ring_fd(), self.eventfd());
        }
        self.senders.fetch_sub(1, SeqCst);
    }

    /// Rings this shard's doorbell from a thread that has no ring of its own (or may not use
    /// it): ring-less MSG_RING if `foreign` says the kernel has it, the eventfd otherwise or
    /// if that fails. Nothing once the shard is closed. The caller claimed the doorbell.
    /// Returns true if it went by ring-less MSG_RING (which the sender's counters count).
    pub(crate) fn ring_from_any_thread(&self, foreign: Doorbell) -> bool {
        let mut by_msg_ring = false;
        self.with_open_fds(|ring_fd, eventfd| {
            if foreign == Doorbell::SendMsgRing
                && ringsteal_uring::send_msg_ring(ring_fd, 0, TAG_DOORBELL).is_ok()
            {
                by_msg_ring = true;
                return;
            }
            self.write_eventfd(eventfd);
        });
        by_msg_ring
    }

    /// Rings this shard's eventfd (the doorbell every thread can use; ADR-0006), unless the
    /// shard is closed. Also the fallback of a MSG_RING doorbell that failed (nested inside
    /// the sender's own `with_open_fds`, it keeps the descriptors open throughout).
    pub(crate) fn ring_eventfd(&self) {
        self.with_open_fds(|_, eventfd| self.write_eventfd(eventfd));
    }

    /// The one eventfd doorbell write. Only inside `with_open_fds`, with the fd it passed.
    fn write_eventfd(&self, eventfd: RawFd) {
        if eventfd >= 0 {
            // Counted first: the shard may wake and count the wake before this thread gets
            // on after the write, and stats must never show more wakes than doorbells.
            self.counters.eventfd_doorbells.incr();
            signal_eventfd(eventfd);
        }
    }

    /// Exiting shard: no new sender may start, and returns once none is mid-send.
    pub(crate) fn close(&self) {
        self.closed.store(true, SeqCst);
        self.driven.store(false, SeqCst);
        while self.senders.load(SeqCst) != 0 {
            std::hint::spin_loop();
        }
    }

    /// Gives up the commands queued here without carrying them out, once this shard has
    /// drained its ring and stopped: an op cancel releases the reference it held (the op has
    /// completed, so this may free it; or the drain gave up, and the references of its
    /// unreaped CQEs keep it, leaked, for the kernel); a timer command finds no wheel.
    pub(crate) fn release_cmds(&self) {
        drain_queue(&self.cmds, |cmd| match cmd {
            // SAFETY: the command owned one reference on the op.
            RemoteCmd::CancelOp(op) => unsafe { crate::op::raw::release(op.0) },
            RemoteCmd::CancelTimer(_) | RemoteCmd::ResetTimer(..) => {}
            RemoteCmd::ForeignTimer(timer) => timer.abandon(),
        });
    }

    /// True if thieves may take from this shard's queues now: not while work handed over to
    /// it is reserved for it (`reservation.rs`), unless no thread drives it.
    pub(crate) fn open_to_thieves(&self) -> bool {
        self.reserved_for().is_none()
    }

    /// How much longer thieves should leave this shard's queues alone (`None`: not at all).
    pub(crate) fn reserved_for(&self) -> Option<Duration> {
        if !self.reservation.is_set() || !self.driven.load(Relaxed) {
            return None;
        }
        self.reservation.left()
    }

    /// True if tasks that have not started are queued here (either queue).
    pub(crate) fn has_stealable(&self) -> bool {
        self.stealer.get().is_some_and(|s| !s.is_empty()) || !self.stealable.is_empty()
    }

    /// True if other threads left anything for this shard.
    pub(crate) fn has_remote_work(&self) -> bool {
        !self.inbox.is_empty()
            || !self.cmds.is_empty()
            || !self.messages.is_empty()
            || !self.stealable.is_empty()
    }

    /// Tasks waiting for this shard outside its run queue, as any thread sees them: its own
    /// stealable deque, the stealable tasks placed here, and its inbox (for stats).
    pub(crate) fn queued_outside_run_queue(&self) -> usize {
        self.stealer.get().map_or(0, Stealer::len) + self.stealable.len() + self.inbox.len()
    }
}
