//! [`StreamCell`]: the heap cell of one armed request that posts a stream of CQEs (a
//! multishot accept or receive, or one single-shot step of a stream's fallback).
//!
//! It shares the op cell's header (`op/raw.rs`: references, the last CQE's result, the
//! waker) and adds the request's data (the [`Source`]: descriptor, buffer group, msghdr,
//! heap buffer) and the [`ItemQueue`] of results delivered so far. Every CQE with
//! `IORING_CQE_F_MORE` becomes an item right away, on the submitting shard's thread (that is
//! when a provided buffer or an accepted descriptor becomes owned), and wakes the consumer;
//! the CQE without it ends the request: it becomes the request's last item at once too (a
//! provided buffer it names is owned while its group is still registered: a shutdown may
//! retire the group before anyone looks), kept in the cell for the consumer, or, if the
//! consumer is gone, released when the cell is freed.
//!
//! Lifetime: as every op cell, freed by whoever drops the last reference: the consumer's,
//! one per armed SQE (released by its last CQE), one per cancel. So nothing the kernel may
//! write is freed before the CQE without `F_MORE`, including at shutdown.
//!
//! May not: decide what to do when a request ends (re-arm, stall, surface an error: each
//! family's stream does), or submit anything.

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::task::Waker;

use ringsteal_uring::io_uring_sqe;

use super::queue::{ItemQueue, Pushed};
use crate::op::raw::{OpHeader, OpVTable};
use crate::util::wake_later::wake_all;
use crate::util::{block_cache, contain_panic};

/// What a completion of a stream may carry that must not be dropped on the floor when
/// nobody takes it: an accepted descriptor (closed), a provided buffer (handed back to its
/// ring; any stream this un-stalls is pushed into `wakers`, not woken here).
pub(crate) trait Release {
    /// Gives up whatever `self` owns.
    fn release(self, wakers: &mut Vec<Waker>);
}

/// One family of request that delivers a stream of CQEs: its data while armed, and what its
/// CQEs mean.
///
/// # Safety
/// The SQE `prepare` returns must point only into `self` (or memory it owns), must not set
/// link or skip flags, and must end with exactly one CQE without `IORING_CQE_F_MORE`, after
/// which the kernel is done with that memory.
pub(crate) unsafe trait Source: Send + 'static {
    /// One delivered result.
    type Item: Release + Send + 'static;

    /// The descriptor the request is on (a cancel also looks for it by descriptor).
    fn fd(&self) -> RawFd;

    /// The SQE, built at the source's final address (`user_data` is set by the stream).
    fn prepare(&mut self) -> io_uring_sqe;

    /// The item of a CQE with `F_MORE`. Runs on the submitting shard's thread.
    ///
    /// # Safety
    /// `(res, flags)` is a CQE the kernel posted for this source's request, passed once.
    unsafe fn item(&self, res: i32, flags: u32) -> Self::Item;

    /// The item of the request's last CQE (the one without `F_MORE`). Runs on the
    /// submitting shard's thread, as the driver reaps that CQE (the kernel is done with the
    /// source by then). By default the same as [`item`](Self::item); a single-shot step moves
    /// its heap buffer out here.
    ///
    /// # Safety
    /// As for [`item`](Self::item).
    unsafe fn last(&mut self, res: i32, flags: u32) -> Self::Item {
        // SAFETY: forwarded from the caller.
        unsafe { self.item(res, flags) }
    }

    /// How many items may wait in the queue before the request is cancelled, so that a
    /// consumer that stops taking them stops the kernel from producing more (accepted
    /// connections: [`ACCEPT_AHEAD`](super::accept::ACCEPT_AHEAD)). `None`: no bound (the
    /// family is bounded otherwise, as receives are by their buffer group).
    const AHEAD_LIMIT: Option<usize> = None;

    /// Folds `item` into `newest`, the newest item still queued, and returns `None`, if
    /// together they say no more than `newest` would (readiness reports: their masks OR).
    /// By default nothing folds: every item is queued.
    fn merge(_newest: &mut Self::Item, item: Self::Item) -> Option<Self::Item> {
        Some(item)
    }
}

/// The cell: the shared header first (the driver only sees it), then the stream's parts.
#[repr(C)]
pub(crate) struct StreamCell<S: Source> {
    pub(crate) header: OpHeader,
    /// The source's descriptor, fixed at allocation (read by cancels on the shard's thread).
    fd: RawFd,
    /// `None` once the consumer took the source back (after the last CQE).
    source: UnsafeCell<Option<S>>,
    /// The item of the last CQE, made by the driver before the request completes; `None`
    /// until then, and once the consumer took it.
    last: UnsafeCell<Option<S::Item>>,
    /// Set by the driver when the queue reached [`Source::AHEAD_LIMIT`] and it asked for the
    /// request's cancel; read by the consumer once the request ended (whose Release
    /// publishes it).
    pub(crate) paused: AtomicBool,
    pub(crate) queue: ItemQueue<S::Item>,
}

impl<S: Source> StreamCell<S> {
    const VTABLE: &'static OpVTable = &OpVTable {
        free: free::<S>,
        more: more::<S>,
        end: Some(end::<S>),
        cancel_fd: cancel_fd::<S>,
    };

    /// Allocates a cell holding `source` with only the consumer's reference.
    pub(crate) fn allocate(source: S, shard: usize) -> NonNull<StreamCell<S>> {
        let cell = StreamCell {
            header: OpHeader::new(shard, Self::VTABLE),
            fd: source.fd(),
            source: UnsafeCell::new(Some(source)),
            last: UnsafeCell::new(None),
            paused: AtomicBool::new(false),
            queue: ItemQueue::new(),
        };
        let ptr = block_cache::allocate(Layout::new::<StreamCell<S>>()).cast::<StreamCell<S>>();
        // SAFETY: freshly allocated for exactly this type.
        unsafe { ptr.as_ptr().write(cell) };
        ptr
    }

    /// The source, to build the SQE.
    ///
    /// # Safety
    /// Only before submission: nobody else reaches the cell yet.
    pub(crate) unsafe fn source_mut<'a>(cell: NonNull<Self>) -> &'a mut S {
        // SAFETY: forwarded from the caller; the cell outlives the SQE built from this.
        unsafe { (*(*cell.as_ptr()).source.get()).as_mut() }.expect("source present")
    }

    /// Takes the source back.
    ///
    /// # Safety
    /// The kernel must be done with it: the last CQE arrived, or nothing was submitted.
    pub(crate) unsafe fn take_source(cell: NonNull<Self>) -> S {
        // SAFETY: forwarded from the caller; only the consumer takes it, once.
        unsafe { (*(*cell.as_ptr()).source.get()).take() }.expect("source is taken once")
    }

    /// Takes the item of the request's last CQE.
    ///
    /// # Safety
    /// The request must have completed (`is_complete`, observed by the caller), so the
    /// driver wrote the item before; only the consumer takes it, once.
    pub(crate) unsafe fn take_last(cell: NonNull<Self>) -> S::Item {
        // SAFETY: forwarded from the caller: written before the Release that completed the
        // request, which the caller's Acquire observed; nobody else touches it now.
        unsafe { (*(*cell.as_ptr()).last.get()).take() }.expect("the last item is taken once")
    }
}

/// `OpVTable::more`: one more result of the stream: becomes an item now, queued for the
/// consumer (whose waker is taken), or released at once if the consumer is gone.
unsafe fn more<S: Source>(
    op: NonNull<OpHeader>,
    _index: usize,
    res: i32,
    flags: u32,
    wakers: &mut Vec<Waker>,
) {
    let cell = op.cast::<StreamCell<S>>();
    // SAFETY: the SQE's reference keeps the cell alive; the source stays in the cell while
    // the request is armed, and the consumer takes it only after the last CQE, which comes
    // after this one.
    let (cell, source) = unsafe {
        let cell = cell.as_ref();
        (
            cell,
            (*cell.source.get())
                .as_ref()
                .expect("armed stream has its source"),
        )
    };
    // SAFETY: a CQE of this cell's request, delivered once by the driver.
    let item = unsafe { source.item(res, flags) };
    match cell.queue.push_or_merge(item, S::merge, wakers) {
        Pushed::Queued => {
            wakers.extend(cell.header.take_waker());
            if let Some(limit) = S::AHEAD_LIMIT {
                if cell.queue.len() >= limit && !cell.paused.swap(true, Relaxed) {
                    // The consumer is this far behind: stop the kernel producing more. The
                    // request ends with `ECANCELED` behind what it delivered, and the
                    // stream re-arms once its consumer has taken all of it.
                    crate::op::cancel_from_driver(op);
                }
            }
        }
        Pushed::Sunk => {}
        Pushed::Refused(item) => item.release(wakers),
    }
}

/// `OpVTable::end`: the request's last CQE becomes its last item now, on the submitting
/// shard, kept in the cell until the consumer (or the cell's destructor) takes it.
unsafe fn end<S: Source>(op: NonNull<OpHeader>, _index: usize, res: i32, flags: u32) {
    let cell = op.cast::<StreamCell<S>>();
    // SAFETY: the SQE's reference keeps the cell alive. Until the request completes (the
    // driver records this CQE right after this), the source and the last item are the
    // driver's alone: the consumer takes them only once it has seen the completion, whose
    // Release publishes what is written here.
    unsafe {
        let cell = cell.as_ref();
        let source = (*cell.source.get())
            .as_mut()
            .expect("armed stream has its source");
        // A CQE of this cell's request, its last, delivered once by the driver.
        let item = source.last(res, flags);
        *cell.last.get() = Some(item);
    }
}

/// `OpVTable::cancel_fd`: streams are cancelled by descriptor too.
unsafe fn cancel_fd<S: Source>(op: NonNull<OpHeader>) -> Option<RawFd> {
    // SAFETY: the caller's reference keeps the cell alive; `fd` never changes.
    Some(unsafe { op.cast::<StreamCell<S>>().as_ref() }.fd)
}

/// `OpVTable::free`: the last reference is gone. What the consumer left behind, the queued
/// items and, if the request ended, its last item, goes to the sink the consumer left, or
/// is released; then the sink is dropped.
unsafe fn free<S: Source>(op: NonNull<OpHeader>) {
    let cell = op.cast::<StreamCell<S>>();
    // SAFETY: made by `allocate`; no references remain, so its contents may move out.
    let StreamCell {
        header,
        source,
        last,
        queue,
        ..
    } = unsafe { cell.as_ptr().read() };
    // SAFETY: allocated by block_cache::allocate with this layout; its contents moved out.
    unsafe { block_cache::deallocate(cell.cast(), Layout::new::<StreamCell<S>>()) };
    // Item and source destructors (closing descriptors, returning buffers, waking stalled
    // streams) run here, usually on the driver's reaping path: contain a panic in them.
    contain_panic(move || {
        drop(header);
        let mut wakers = Vec::new();
        let (items, mut sink) = queue.finish();
        let mut give_up = |item: S::Item, wakers: &mut Vec<Waker>| match &mut sink {
            Some(sink) => sink(item, wakers),
            None => item.release(wakers),
        };
        for item in items {
            give_up(item, &mut wakers);
        }
        if let Some(last) = last.into_inner() {
            give_up(last, &mut wakers);
        }
        drop(source);
        drop(sink);
        // Usually inside the driver's reap: the wakes wait for it to end.
        wake_all(wakers);
    });
}
