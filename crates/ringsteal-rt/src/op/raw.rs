//! The heap cell of an in-flight operation, shared by its future and the shard's driver.
//!
//! Owns: the op's reference count, its results, its waker and the data the kernel reads or
//! writes (buffers, paths, iovecs, sockaddrs, timespecs). The cell is freed only when the
//! future is gone *and* every CQE that names it has been reaped: that is the whole of the
//! "never free memory the kernel may still write" rule for ops, and it also means a late CQE
//! can never find a reused address (no generation counter needed).
//!
//! An op submits up to [`MAX_SQES`] linked SQEs (e.g. read + write, or an op + its
//! `LINK_TIMEOUT`); the CQE of SQE `i` carries tag `i`. The op is complete when every one of
//! them has arrived; only then does the future take its data back.
//!
//! References: one for the future, one per SQE, one per `ASYNC_CANCEL` aimed at the cell.
//! Whoever drops the last frees the cell. The driver also records here which SQEs have
//! completed and how far cancelling the op has got (a linked op is cancelled request by
//! request: `driver/cancel.rs`); only the op's shard touches those fields.
//!
//! The header is shared by every kind of cell: an [`OpCell`] (an [`Operation`], which
//! completes once) and a stream cell (`op/stream/cell.rs`, which delivers a queue of results).
//! What differs between them is reached through the header's [`OpVTable`]: how to free the
//! cell, what a CQE with `IORING_CQE_F_MORE` means, what the last CQE becomes, and how a
//! cancel should find the request.
//!
//! May not: submit anything (the future and the driver do).

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};
use std::task::Waker;

use ringsteal_uring::abi::{__kernel_timespec, IORING_CQE_F_MORE, IORING_CQE_F_NOTIF};

use super::Operation;
use crate::sync::atomic_waker::AtomicWaker;
use crate::util::{block_cache, contain_panic};

/// Most SQEs one op submits (its own, linked, plus a link timeout).
pub(crate) const MAX_SQES: usize = 3;

/// Where an op's link timeout sits among its SQEs: right behind the first, which it bounds.
pub(crate) const TIMEOUT_SLOT: usize = 1;

/// In `OpHeader::shape`: the number of SQEs submitted (at most [`MAX_SQES`]).
const SHAPE_SQES: u8 = 0b11;
/// In `OpHeader::shape`: SQE [`TIMEOUT_SLOT`] is a link timeout.
const SHAPE_LINK_TIMEOUT: u8 = 0b100;
/// In `OpHeader::shape`: bit `SHAPE_NOTIFIES_SHIFT + i` is set if SQE `i` may be a
/// zero-copy send (`Operation::ZERO_COPY_SEND`), which posts its result with
/// `IORING_CQE_F_MORE` and then a notification.
const SHAPE_NOTIFIES_SHIFT: u8 = 3;
const _: () = assert!(
    SHAPE_NOTIFIES_SHIFT as usize + MAX_SQES <= 8,
    "fits the byte"
);

/// The type-independent part of an op cell (first field of [`OpCell`]).
#[repr(C, align(8))]
pub(crate) struct OpHeader {
    refs: AtomicU32,
    /// CQEs still expected before the results are complete.
    pending: AtomicU32,
    results: UnsafeCell<[(i32, u32); MAX_SQES]>,
    waker: AtomicWaker,
    /// The shard whose ring the op was submitted to.
    pub(crate) shard: u32,
    /// Set before submission, never changed: the number of SQEs submitted (bits
    /// [`SHAPE_SQES`]) and whether SQE [`TIMEOUT_SLOT`] is a link timeout
    /// ([`SHAPE_LINK_TIMEOUT`]). One byte with `done` and `cancel` beside it, so the fields
    /// the driver needs to cancel a linked op fit where the header had padding.
    shape: AtomicU8,
    /// Driver side: bit `i` is set once SQE `i`'s last CQE has been reaped.
    done: AtomicU8,
    /// Driver side: how far cancelling this op has got (`driver/cancel.rs` owns the meaning).
    cancel: AtomicU16,
    /// What this kind of cell does differently (one static table per cell type).
    vtable: &'static OpVTable,
}

/// [`OpVTable::end`]: the cell, the SQE's index, and the CQE's `res` and `flags`.
pub(crate) type EndFn = unsafe fn(NonNull<OpHeader>, usize, i32, u32);

/// The operations of one kind of cell. Each function receives the header of a live cell of
/// that kind.
pub(crate) struct OpVTable {
    /// Frees the whole cell (the last reference was dropped).
    pub(crate) free: unsafe fn(NonNull<OpHeader>),
    /// Driver side: a CQE of SQE `index` with `IORING_CQE_F_MORE` (more CQEs of that SQE
    /// follow): records it, and pushes any waker to wake into the vector.
    pub(crate) more: unsafe fn(NonNull<OpHeader>, usize, i32, u32, &mut Vec<Waker>),
    /// Driver side: the last CQE of SQE `index` (one without `IORING_CQE_F_MORE`), just
    /// before it is recorded and may complete the op: a stream turns it into its last item
    /// here, on the submitting shard, so what it names (a provided buffer) is owned while
    /// its group is registered. `None` for cells that only record it.
    pub(crate) end: Option<EndFn>,
    /// The descriptor the request is on, if a cancel should also look for it by descriptor
    /// (`IORING_ASYNC_CANCEL_FD`): multishot requests. Each aim at such a cell's request is
    /// then a pair of cancels judged as one attempt (`driver/cancel.rs`); the kinds that
    /// answer it have one request, SQE 0.
    pub(crate) cancel_fd: unsafe fn(NonNull<OpHeader>) -> Option<RawFd>,
}

// SAFETY: each result slot is written once by the driver of the op's shard before `pending`
// is decremented (Release) and read by the future only after it observed `pending == 0`
// (Acquire); everything else is atomic.
unsafe impl Send for OpHeader {}
// SAFETY: as above.
unsafe impl Sync for OpHeader {}

/// An op cell: the header, the operation's data, and the timespec of its link timeout.
#[repr(C)]
pub(crate) struct OpCell<T> {
    pub(crate) header: OpHeader,
    /// `None` once the future took the data back.
    pub(crate) data: UnsafeCell<Option<T>>,
    pub(crate) timeout: UnsafeCell<__kernel_timespec>,
}

impl<T: Operation> OpCell<T> {
    const VTABLE: &'static OpVTable = &OpVTable {
        free: free::<T>,
        more: keep_in_slot::<T>,
        end: if T::REPORTS_REQUEST_ENDS {
            Some(report_end::<T>)
        } else {
            None
        },
        cancel_fd: no_cancel_fd,
    };

    /// Allocates a cell holding `data` with only the future's reference; the SQE references
    /// are added by [`OpHeader::set_expected`] just before submission.
    #[inline]
    pub(crate) fn allocate(data: T, shard: usize) -> NonNull<OpCell<T>> {
        let ptr = block_cache::allocate(Layout::new::<OpCell<T>>()).cast::<OpCell<T>>();
        let cell = ptr.as_ptr();
        // SAFETY: freshly allocated for exactly this type; each field is written in place
        // (built on the stack and copied, the cell cost twice the stores).
        unsafe {
            std::ptr::addr_of_mut!((*cell).header).write(OpHeader::new(shard, Self::VTABLE));
            std::ptr::addr_of_mut!((*cell).data).write(UnsafeCell::new(Some(data)));
            std::ptr::addr_of_mut!((*cell).timeout)
                .write(UnsafeCell::new(__kernel_timespec::default()));
        }
        ptr
    }
}

/// Frees the cell. If the op completed but its future never took the result (it was dropped
/// first), the result is built and dropped here, so that what the kernel created for it (an
/// opened descriptor, say) is closed rather than leaked.
unsafe fn free<T: Operation>(ptr: NonNull<OpHeader>) {
    let cell = ptr.cast::<OpCell<T>>();
    // SAFETY: the cell was made by `allocate`; no references remain, so we may move its
    // contents out and release the block.
    let OpCell { header, data, .. } = unsafe { cell.as_ptr().read() };
    // SAFETY: allocated by block_cache::allocate with this layout; its contents were moved out.
    unsafe { block_cache::deallocate(cell.cast(), Layout::new::<OpCell<T>>()) };
    // User code runs here (`complete`, the data's and the waker's destructors), usually on
    // the driver's reaping path: a panic in it must not unwind through the driver.
    contain_panic(move || {
        let complete = header.pending.load(Ordering::Acquire) == 0;
        let results = complete.then(|| header.op_results(T::TIMED_OUT_RESULT));
        drop(header);
        if let Some(data) = data.into_inner() {
            if let Some(results) = results {
                drop(data.complete(&results));
            }
        }
    });
}

/// `OpVTable::more` of an [`OpCell`]: the result is kept in the SQE's slot, nobody is woken.
/// If it is a zero-copy send's result, whose notification follows, the op drops what only
/// the request needed ([`Operation::send_result_posted`]).
unsafe fn keep_in_slot<T: Operation>(
    op: NonNull<OpHeader>,
    index: usize,
    res: i32,
    flags: u32,
    _: &mut Vec<Waker>,
) {
    // SAFETY: the caller's SQE reference keeps the cell alive.
    let header = unsafe { op.as_ref() };
    header.record_more(index, res, flags);
    if !header.notifies(index) {
        return;
    }
    // SAFETY: the cell is an `OpCell<T>` (this function is its vtable's). Its data is the
    // driver's alone until the op completes: the future takes it only after observing
    // `pending == 0` (Acquire), which the notification's Release store, after this on this
    // thread, publishes; and nothing else touches it in between (`free` needs every
    // reference gone, this SQE's included).
    let data = unsafe { (*(*op.cast::<OpCell<T>>().as_ptr()).data.get()).as_mut() };
    if let Some(data) = data {
        contain_panic(|| data.send_result_posted());
    }
}

/// `OpVTable::end` of an [`OpCell`] whose operation asked to hear of each request's end
/// ([`Operation::REPORTS_REQUEST_ENDS`]): tells it which of its own requests ended (a link
/// timeout, at [`TIMEOUT_SLOT`], is not one of them).
unsafe fn report_end<T: Operation>(op: NonNull<OpHeader>, index: usize, res: i32, _: u32) {
    // SAFETY: the caller's SQE reference keeps the cell alive.
    let header = unsafe { op.as_ref() };
    let own = match (header.has_link_timeout(), index) {
        (true, TIMEOUT_SLOT) => return,
        (true, i) if i > TIMEOUT_SLOT => i - 1,
        (_, i) => i,
    };
    // SAFETY: the cell is an `OpCell<T>` (this function is its vtable's). Its data is the
    // driver's alone until the op completes: this SQE's CQE has not been counted yet
    // (`complete` runs after this), so `pending` is not 0 and the future cannot have taken
    // the data; `free` needs every reference gone, this SQE's included.
    let data = unsafe { (*(*op.cast::<OpCell<T>>().as_ptr()).data.get()).as_mut() };
    if let Some(data) = data {
        contain_panic(|| data.request_ended(own, res));
    }
}

/// `OpVTable::cancel_fd` of cells whose requests are found by `user_data` alone.
unsafe fn no_cancel_fd(_: NonNull<OpHeader>) -> Option<RawFd> {
    None
}

impl OpHeader {
    /// A header with only the future's reference, for a cell of the kind `vtable` describes.
    pub(crate) fn new(shard: usize, vtable: &'static OpVTable) -> Self {
        OpHeader {
            refs: AtomicU32::new(1),
            pending: AtomicU32::new(0),
            results: UnsafeCell::new([(0, 0); MAX_SQES]),
            waker: AtomicWaker::new(),
            shard: shard as u32,
            shape: AtomicU8::new(0),
            done: AtomicU8::new(0),
            cancel: AtomicU16::new(0),
            vtable,
        }
    }

    /// Driver side: a CQE with `IORING_CQE_F_MORE` of SQE `index` of the op at `op` (see
    /// [`OpVTable::more`]).
    ///
    /// # Safety
    /// `op` is a live cell and the SQE's reference is still held.
    #[inline]
    pub(crate) unsafe fn more(
        op: NonNull<OpHeader>,
        index: usize,
        res: i32,
        flags: u32,
        wakers: &mut Vec<Waker>,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { (op.as_ref().vtable.more)(op, index, res, flags, wakers) }
    }

    /// Driver side: the last CQE of SQE `index` of the op at `op`, before
    /// [`complete`](Self::complete) records it (see [`OpVTable::end`]).
    ///
    /// # Safety
    /// `op` is a live cell, the SQE's reference is still held, and this is that SQE's last
    /// CQE, passed once.
    #[inline]
    pub(crate) unsafe fn end(op: NonNull<OpHeader>, index: usize, res: i32, flags: u32) {
        // SAFETY: forwarded from the caller.
        if let Some(end) = unsafe { op.as_ref() }.vtable.end {
            // SAFETY: forwarded from the caller.
            unsafe { end(op, index, res, flags) }
        }
    }

    /// The descriptor a cancel of the op at `op` should also match (see
    /// [`OpVTable::cancel_fd`]).
    ///
    /// # Safety
    /// `op` is a live cell.
    pub(crate) unsafe fn cancel_fd(op: NonNull<OpHeader>) -> Option<RawFd> {
        // SAFETY: forwarded from the caller.
        unsafe { (op.as_ref().vtable.cancel_fd)(op) }
    }

    /// Takes the waker registered by the future (driver side, after queueing a result).
    #[inline]
    pub(crate) fn take_waker(&self) -> Option<Waker> {
        self.waker.take()
    }

    /// The `(res, flags)` of the last CQE of SQE 0, for a one-SQE op; only after
    /// [`is_complete`](Self::is_complete).
    #[inline]
    pub(crate) fn first_result(&self) -> (i32, u32) {
        self.results()[0]
    }

    /// Tests, on the op's own shard thread: the `(res, flags)` recorded so far for SQE
    /// `index`, complete or not (the driver writes it on this same thread).
    #[cfg(test)]
    pub(crate) fn slot_for_tests(&self, index: usize) -> (i32, u32) {
        // SAFETY: the caller runs on the shard whose driver writes the slot, so no write is
        // concurrent with this read.
        unsafe { (*self.results.get())[index] }
    }

    /// Takes one more reference (for a cancel SQE about to be submitted).
    #[inline]
    pub(crate) fn add_ref(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    /// True once every CQE has arrived.
    #[inline]
    pub(crate) fn is_complete(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }

    /// The `(res, flags)` of each SQE; only after [`is_complete`](Self::is_complete).
    #[inline]
    pub(crate) fn results(&self) -> [(i32, u32); MAX_SQES] {
        debug_assert!(self.pending.load(Ordering::Relaxed) == 0);
        // SAFETY: all slots were written before `pending` reached zero (Release), observed
        // with Acquire by `is_complete`; never written again.
        unsafe { *self.results.get() }
    }

    /// Before submission: SQE [`TIMEOUT_SLOT`] is a link timeout.
    pub(crate) fn set_link_timeout(&self) {
        // Not shared yet: a plain update.
        let shape = self.shape.load(Ordering::Relaxed);
        self.shape
            .store(shape | SHAPE_LINK_TIMEOUT, Ordering::Relaxed);
    }

    /// Whether SQE [`TIMEOUT_SLOT`] is a link timeout. Relaxed: written before submission,
    /// which happens before any completion and before the op is shared with another thread.
    fn has_link_timeout(&self) -> bool {
        self.shape.load(Ordering::Relaxed) & SHAPE_LINK_TIMEOUT != 0
    }

    /// The `(res, flags)` of the op's own SQEs, in order, with the link timeout's taken out
    /// (the slots past the op's own SQEs are meaningless). If the timeout expired, the
    /// requests it cancelled report `timed_out` (the op's `Operation::TIMED_OUT_RESULT`).
    /// Only after [`is_complete`](Self::is_complete).
    pub(crate) fn op_results(&self, timed_out: i32) -> [(i32, u32); MAX_SQES] {
        let mut results = self.results();
        // Written before submission, which happens before any completion, which happens
        // before the Acquire load of `pending` that allowed this call.
        if self.has_link_timeout() {
            let timer = results[TIMEOUT_SLOT].0;
            results.copy_within(TIMEOUT_SLOT + 1.., TIMEOUT_SLOT);
            results[MAX_SQES - 1] = (-libc::ECANCELED, 0);
            if timer == -libc::ETIME {
                for r in results.iter_mut().filter(|r| r.0 == -libc::ECANCELED) {
                    r.0 = timed_out;
                }
            }
        }
        results
    }

    /// Registers the future's waker.
    #[inline]
    pub(crate) fn register(&self, waker: &Waker) {
        self.waker.register(waker);
    }

    /// Registers the future's waker before submission, when nothing else can reach the cell
    /// yet: a plain store (`AtomicWaker::register_unshared`), no locked instruction.
    ///
    /// # Safety
    /// The cell is not shared yet: no SQE naming it was pushed, no reference handed out.
    #[inline]
    pub(crate) unsafe fn register_unshared(&self, waker: &Waker) {
        // SAFETY: forwarded from the caller.
        unsafe { self.waker.register_unshared(waker) }
    }

    /// Driver side: records a CQE of SQE `index` that has `IORING_CQE_F_MORE` (more CQEs of
    /// that SQE follow): its result, but not as the SQE's last.
    pub(crate) fn record_more(&self, index: usize, res: i32, flags: u32) {
        // SAFETY: only the driver of the op's shard writes; the future reads the slots only
        // after `pending` reached zero, which cannot happen before this SQE's last CQE.
        unsafe { (*self.results.get())[index] = (res, flags) };
    }

    /// Driver side: records the last CQE of SQE `index`. If that was the last expected CQE,
    /// returns `Some` with the waker to wake (if one is registered). A zero-copy send's
    /// notification (`IORING_CQE_F_NOTIF`) keeps the `res` of the CQE before it and adds its
    /// flags.
    #[inline]
    pub(crate) fn complete(&self, index: usize, res: i32, flags: u32) -> Option<Option<Waker>> {
        // SAFETY: only the driver of the op's shard writes, before the Release store below
        // publishes the slot; the future reads it only after that.
        let slot = unsafe { &mut (*self.results.get())[index] };
        if flags & IORING_CQE_F_NOTIF != 0 {
            slot.1 |= flags;
        } else {
            *slot = (res, flags);
        }
        self.finish(index);
        // After submission only this driver writes `pending`: a load and a store, no locked
        // instruction. The Release store publishes the results to the future's Acquire load.
        let left = self.pending.load(Ordering::Relaxed) - 1;
        self.pending.store(left, Ordering::Release);
        // The last wake of this cell: the future checks `pending` after registering.
        (left == 0).then(|| self.waker.take_final())
    }

    /// Before submission: the op will post `sqes` CQEs, each holding a reference. The cell is
    /// not shared yet, so plain updates do (no locked instruction).
    #[inline]
    pub(crate) fn set_expected(&self, sqes: u32) {
        let refs = self.refs.load(Ordering::Relaxed);
        self.refs.store(refs + sqes, Ordering::Relaxed);
        self.pending.store(sqes, Ordering::Relaxed);
        debug_assert!(sqes as usize <= MAX_SQES);
        let shape = self.shape.load(Ordering::Relaxed);
        self.shape
            .store(shape | (sqes as u8 & SHAPE_SQES), Ordering::Relaxed);
    }

    /// Before submission: SQE `sqe` may be a zero-copy send (see [`first_cancellable_sqe`]).
    /// The cell is not shared yet.
    ///
    /// [`first_cancellable_sqe`]: Self::first_cancellable_sqe
    pub(crate) fn set_notifies(&self, sqe: usize) {
        let shape = self.shape.load(Ordering::Relaxed);
        self.shape.store(
            shape | 1 << (SHAPE_NOTIFIES_SHIFT as usize + sqe),
            Ordering::Relaxed,
        );
    }

    /// True if SQE `sqe` may be a zero-copy send ([`set_notifies`](Self::set_notifies)).
    pub(crate) fn notifies(&self, sqe: usize) -> bool {
        self.shape.load(Ordering::Relaxed) & 1 << (SHAPE_NOTIFIES_SHIFT as usize + sqe) != 0
    }

    /// Driver side: the first of the op's own SQEs (in link order, the link timeout left
    /// out) that a cancel can still reach: its last CQE has not been reaped yet, and it is
    /// not a zero-copy send that owes only its notification. That one posted its result
    /// already (a CQE with `IORING_CQE_F_MORE`, kept by `record_more`): the request is over,
    /// a cancel would find nothing (`-ENOENT`), and the notification comes on its own. Any
    /// other request that posted a CQE with `F_MORE` (a multishot request of the user's own
    /// `Operation`) is still armed, and reachable.
    pub(crate) fn first_cancellable_sqe(&self) -> Option<usize> {
        let done = self.done.load(Ordering::Relaxed);
        let timeout = self.has_link_timeout();
        let shape = self.shape.load(Ordering::Relaxed);
        // SAFETY: driver side, the only writer of the slots; nothing else reads them
        // before every SQE is done.
        let results = unsafe { &*self.results.get() };
        let owes_only_its_notification =
            |i: usize| self.notifies(i) && results[i].1 & IORING_CQE_F_MORE != 0;
        (0..usize::from(shape & SHAPE_SQES))
            .filter(|&i| !(timeout && i == TIMEOUT_SLOT))
            .find(|&i| done & (1 << i) == 0 && !owes_only_its_notification(i))
    }

    /// Driver side: records that SQE `index`'s last CQE was reaped.
    fn finish(&self, index: usize) {
        // Only the driver of the op's shard writes `done`: no read-modify-write needed.
        let done = self.done.load(Ordering::Relaxed);
        self.done.store(done | 1 << index, Ordering::Relaxed);
    }

    /// Driver side: true once SQE `sqe`'s last CQE has been reaped.
    pub(crate) fn sqe_done(&self, sqe: usize) -> bool {
        self.done.load(Ordering::Relaxed) & (1 << sqe) != 0
    }

    /// Driver side: the state of cancelling this op (0 until a cancel was asked for).
    pub(crate) fn cancel_state(&self) -> u16 {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Driver side: records the state of cancelling this op.
    pub(crate) fn set_cancel_state(&self, state: u16) {
        self.cancel.store(state, Ordering::Relaxed);
    }
}

/// Drops one reference; frees the cell if it was the last.
///
/// # Safety
/// `ptr` must point at a live op cell and the caller must own one reference.
pub(crate) unsafe fn release(ptr: NonNull<OpHeader>) {
    // SAFETY: the caller's reference keeps the cell alive until the decrement.
    let header = unsafe { ptr.as_ref() };
    if header.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        let free_fn = header.vtable.free;
        // SAFETY: that was the last reference.
        unsafe { free_fn(ptr) }
    }
}

/// The future's release of an op it completed and took the data of: drops its reference
/// and, if that was the last (the usual case: every CQE's reference went first), frees the
/// cell in place: with the data taken and the results read, only the waker slot is left to
/// drop. A cancel's reference may still be out (a cancel racing the completion); then its
/// CQE frees the cell through the vtable.
///
/// # Safety
/// `cell` is a live op cell, the caller owns one reference, and the data was taken.
#[inline]
pub(crate) unsafe fn release_completed<T: Operation>(cell: NonNull<OpCell<T>>) {
    // SAFETY: the caller's reference keeps the cell alive until the decrement.
    let header = unsafe { &(*cell.as_ptr()).header };
    if header.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        // SAFETY: that was the last reference: nobody else reaches the cell. The data was
        // taken (`None`) and the timespec is plain, so dropping the header is all that is
        // left before the block goes back.
        unsafe {
            std::ptr::drop_in_place(std::ptr::addr_of_mut!((*cell.as_ptr()).header));
            debug_assert!((*(*cell.as_ptr()).data.get()).is_none());
            block_cache::deallocate(cell.cast(), Layout::new::<OpCell<T>>());
        }
    }
}

/// Drops `n` references (never the last: the caller keeps one).
pub(crate) fn release_many(header: &OpHeader, n: u32) {
    let prev = header.refs.fetch_sub(n, Ordering::AcqRel);
    debug_assert!(prev > n);
}

impl<T> OpCell<T> {
    /// Takes the data back (after the last CQE, or from an op that was never submitted).
    ///
    /// # Safety
    /// The kernel must be done with the data: every CQE arrived, or nothing was submitted.
    pub(crate) unsafe fn take_data(cell: NonNull<OpCell<T>>) -> T {
        // SAFETY: forwarded from the caller; the future is the only one taking the data.
        unsafe { (*(*cell.as_ptr()).data.get()).take() }.expect("op data is taken once")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header every cell starts with stays at the size ADR-0008's instruction counts were
    /// taken with: what cancelling a linked op records (`shape`, `done`, `cancel`) sits in what
    /// was padding before the table pointer.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_op_header_is_72_bytes() {
        assert_eq!(std::mem::size_of::<OpHeader>(), 72);
    }
}
