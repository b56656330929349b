//! Streams of completions: one SQE, many CQEs (`IORING_CQE_F_MORE`), delivered to a consumer
//! as they arrive. The families built on it, one file each, are the low-level API the `net`
//! crate wraps:
//!
//! * [`accept_multishot`] (`accept.rs`): a stream of accepted connections;
//! * [`recv_multishot`] (`recv.rs`): a stream of received bytes in provided buffers;
//! * [`recvmsg_multishot`] (`recvmsg.rs`): a stream of datagrams with their source addresses;
//! * [`poll_multishot`] (`poll.rs`): a stream of readiness reports of a descriptor;
//! * `RecvOnce` (`recv_once.rs`): one single-shot receive that selects a provided buffer (the
//!   armed-request machinery for a request whose only CQE is its last), for
//!   [`ProvidedRead`](crate::io::ProvidedRead).
//!
//! Each is a stream with `poll_next` and `next().await`, ending (`None`) when no more can
//! come. Where the kernel (or the builder) lacks the multishot form or provided buffers, the
//! same stream runs on single-shot requests, one at a time, with the same items in the same
//! order: callers never choose a path.
//!
//! The machinery is [`Multishot`] (this file): arming a [`Source`] on the current shard's
//! ring (`cell.rs`, a [`StreamCell`]), taking delivered items and the request's end, and on
//! drop closing the queue (releasing what it holds), cancelling the request if it is still
//! armed (by `user_data` and by descriptor) and leaving the cell to its last CQE. What to do
//! when a request ends (re-arm, wait for buffers, back off, surface an error, stop) is each
//! family's policy. ADR-0008 records the design.
//!
//! May not: touch the ring except through the driver's `push_op`, or free a cell (the last
//! reference does).

mod accept;
mod cell;
pub(crate) mod poll;
mod queue;
mod receiver;
mod recv;
mod recv_once;
mod recvmsg;

pub use accept::{accept_multishot, AcceptStream, ACCEPT_AHEAD};
pub use poll::{poll_multishot, PollEvents};
pub(crate) use receiver::Event;
pub(crate) use recv::recv_event;
pub use recv::{recv_multishot, RecvStream};
pub(crate) use recv_once::{Once, RecvOnce};
pub use recvmsg::{recvmsg_multishot, Datagram, RecvMsgStream};

use std::io;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use crate::driver::user_data::{pointer, TAG_OP};
use crate::op::raw::{release, release_many, OpHeader};
use crate::shard::sched::SchedHandle;
use crate::shard::Shard;
use cell::{Release, Source, StreamCell};
use queue::Sink;

/// What [`Multishot::poll_next`] yields.
pub(crate) enum Polled<S: Source> {
    /// A result the request delivered while it stays armed.
    Item(S::Item),
    /// The request ended: its last result, and the source back for the next arming.
    Ended(S::Item, S),
}

/// One stream's armed request, if any.
pub(crate) struct Multishot<S: Source> {
    cell: Option<NonNull<StreamCell<S>>>,
    /// The runtime the latest request was submitted to, to ask its shard for a cancel.
    runtime: Option<SchedHandle>,
    /// Requests submitted so far (the first arming and every re-arm).
    armed: u64,
    /// The latest request that ended had been cancelled because its queue reached the
    /// source's bound (`Source::AHEAD_LIMIT`).
    paused: bool,
}

// SAFETY: the source and items are Send; the cell is shared with the driver only through
// atomics, the queue's lock and the waker slot (see `cell.rs`).
unsafe impl<S: Source> Send for Multishot<S> {}
// SAFETY: `&Multishot` gives access to nothing.
unsafe impl<S: Source> Sync for Multishot<S> {}

impl<S: Source> Multishot<S> {
    pub(crate) fn new() -> Self {
        Self {
            cell: None,
            runtime: None,
            armed: 0,
            paused: false,
        }
    }

    /// True while a request is in flight (armed and its end not yet taken).
    pub(crate) fn is_armed(&self) -> bool {
        self.cell.is_some()
    }

    /// Requests submitted so far.
    pub(crate) fn armings(&self) -> u64 {
        self.armed
    }

    /// Submits `source`'s request on `shard`'s ring, with `waker` registered for its
    /// results. Counts a re-arm if it is not the stream's first. On failure nothing reached
    /// the kernel and the source comes back with the error.
    pub(crate) fn arm(
        &mut self,
        shard: &Shard,
        source: S,
        waker: &Waker,
    ) -> Result<(), (S, io::Error)> {
        debug_assert!(self.cell.is_none(), "armed twice");
        let cell = StreamCell::allocate(source, shard.index);
        // SAFETY: the cell is fresh and only ours; the source now sits at its final address.
        let sqe = unsafe { StreamCell::source_mut(cell) }.prepare();
        let header = cell.cast::<OpHeader>();
        let sqe = sqe.with_user_data(pointer(header.as_ptr() as *const (), TAG_OP));
        // SAFETY: the header is live (we hold a reference).
        let h = unsafe { header.as_ref() };
        h.set_expected(1);
        // SAFETY: the cell is not shared yet (its SQE is pushed below).
        unsafe { h.register_unshared(waker) };
        // SAFETY: every pointer in the SQE points into the cell, which lives until the CQE
        // without F_MORE (the SQE holds a reference until then).
        let pushed = unsafe {
            shard
                .driver
                .borrow_mut()
                .push_op(std::slice::from_ref(&sqe), shard.counters())
        };
        if let Err(e) = pushed {
            release_many(h, 1);
            // SAFETY: not submitted, so the kernel never saw the source.
            let source = unsafe { StreamCell::take_source(cell) };
            // SAFETY: drops the last (our) reference.
            unsafe { release(header) };
            return Err((source, e));
        }
        if self.armed > 0 {
            shard.counters().stream_rearms.incr();
        }
        self.armed += 1;
        // The runtime a cancel must go to is the one of the latest request (a stream may
        // be moved, rarely, to another runtime's task between requests).
        let same_runtime = self
            .runtime
            .as_ref()
            .is_some_and(|r| r.is_of(&shard.shared));
        if !same_runtime {
            self.runtime = Some(SchedHandle::new(&shard.shared, Some(shard)));
        }
        self.cell = Some(cell);
        Ok(())
    }

    /// The next delivered item, or the request's end. Only while armed.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Polled<S>> {
        let cell = self.cell.expect("polled a stream with nothing armed");
        // SAFETY: our reference keeps the cell alive.
        let c = unsafe { cell.as_ref() };
        if let Some(item) = c.queue.pop() {
            return Poll::Ready(Polled::Item(item));
        }
        if !c.header.is_complete() {
            c.header.register(cx.waker());
            // An item or the end may have arrived before the registration.
            if let Some(item) = c.queue.pop() {
                return Poll::Ready(Polled::Item(item));
            }
            if !c.header.is_complete() {
                return Poll::Pending;
            }
        }
        // The end: every item was queued before it (the driver handles one ring's CQEs in
        // order, and the Acquire that saw the end sees those pushes).
        if let Some(item) = c.queue.pop() {
            return Poll::Ready(Polled::Item(item));
        }
        // SAFETY: the last CQE arrived: the kernel is done with the source, and the driver
        // made the last item before completing the request.
        let (source, last) =
            unsafe { (StreamCell::take_source(cell), StreamCell::take_last(cell)) };
        self.paused = c.paused.load(std::sync::atomic::Ordering::Relaxed);
        self.cell = None;
        // SAFETY: drops our reference; the cell has no SQE left, so this frees it.
        unsafe { release(cell.cast()) };
        Poll::Ready(Polled::Ended(last, source))
    }

    /// The next delivered item, if one is queued; never registers a waker.
    pub(crate) fn try_item(&self) -> Option<S::Item> {
        let cell = self.cell?;
        // SAFETY: our reference keeps the cell alive.
        unsafe { cell.as_ref() }.queue.pop()
    }

    /// True if the request whose end [`poll_next`](Self::poll_next) last yielded had been
    /// cancelled because its queue reached the source's bound: its `ECANCELED` is the
    /// stream's own pause, not a reason to end.
    pub(crate) fn ended_at_bound(&self) -> bool {
        self.paused
    }

    /// The shard the armed request was submitted to.
    pub(crate) fn armed_shard(&self) -> Option<usize> {
        // SAFETY: our reference keeps the cell alive; `shard` never changes.
        self.cell
            .map(|c| unsafe { c.as_ref() }.header.shard as usize)
    }

    /// The runtime the latest request was submitted to.
    pub(crate) fn runtime(&self) -> Option<&SchedHandle> {
        self.runtime.as_ref()
    }
}

impl<S: Source> Multishot<S> {
    /// Lets go of the armed request, if any: cancels it if it is still armed, and gives what
    /// it delivered and nobody took (queued now, or delivered until its last CQE) to `sink`
    /// in order, or releases it if there is no sink. The sink is dropped after the request's
    /// last CQE (at once if nothing is armed).
    pub(crate) fn abandon(&mut self, sink: Option<Sink<S::Item>>) {
        let Some(cell) = self.cell.take() else { return };
        // SAFETY: our reference keeps the cell alive.
        let c = unsafe { cell.as_ref() };
        let mut wakers = Vec::new();
        match sink {
            Some(sink) => c.queue.close_into(sink, &mut wakers),
            None => {
                for item in c.queue.close() {
                    item.release(&mut wakers);
                }
            }
        }
        let header = cell.cast::<OpHeader>();
        if !c.header.is_complete() {
            crate::op::cancel(header, self.runtime.as_ref());
        }
        // SAFETY: drops our reference; the driver frees the cell (releasing what the
        // request still delivers) at its last CQE if that has not arrived yet.
        unsafe { release(header) };
        // A stream dropped by a destructor the driver runs waits for the driver to be free.
        crate::util::wake_later::wake_all(wakers);
    }
}

impl<S: Source> Drop for Multishot<S> {
    fn drop(&mut self) {
        self.abandon(None);
    }
}

impl Release for std::os::fd::OwnedFd {
    fn release(self, _: &mut Vec<Waker>) {
        drop(self);
    }
}

impl Release for crate::buf::RecvBuf {
    fn release(self, wakers: &mut Vec<Waker>) {
        self.release_into(wakers);
    }
}

impl<T: Release> Release for io::Result<T> {
    fn release(self, wakers: &mut Vec<Waker>) {
        if let Ok(t) = self {
            t.release(wakers);
        }
    }
}

/// The error of a stream polled off a ringsteal shard (it cannot submit anything).
pub(crate) fn not_on_shard() -> io::Error {
    io::Error::other(
        "ringsteal I/O must be polled on a ringsteal shard (inside a task or Runtime::block_on)",
    )
}

/// The current shard's provided-buffer group, if this runtime receives with multishot
/// requests into provided buffers (the kernel has both and the builder took neither away)
/// and the group could be registered.
pub(crate) fn recv_group(shard: &Shard) -> Option<std::sync::Arc<crate::buf::provided::BufGroup>> {
    use crate::features::Feature;
    let features = &shard.shared.features;
    if !features.supports(Feature::MultishotRecv) || !features.supports(Feature::ProvidedBufferRing)
    {
        return None;
    }
    let config = &shard.shared.config;
    let group = shard.driver.try_borrow_mut().ok()?.recv_group(
        config.recv_buf_count,
        config.recv_buf_len,
        &shard.counters().bufs_in_use.0,
    );
    if group.is_none() {
        // Refused, now or at an earlier stream's first ask: say so in the stats.
        shard.counters().recv_buffers_refused.set(1);
    }
    group
}
