//! Operations: every io_uring request as a future ([`Op`]).
//!
//! * **Lazy submission.** Nothing happens until the first poll; then the op's data moves into
//!   a heap cell (`raw.rs`) and its SQE goes to the ring of the shard that polls it.
//! * **Owned memory.** Buffers, paths, iovecs and sockaddrs live in the cell, which is freed
//!   only after the last CQE naming it: dropping an in-flight `Op` submits
//!   `IORING_OP_ASYNC_CANCEL` (on the op's own ring, asked for by message if dropped on another
//!   thread; for a linked op, at each of its requests still in flight in turn, see
//!   `driver/cancel.rs`) and leaves the memory to the driver, which frees it when the last CQE
//!   arrives. At
//!   shutdown the runtime waits for those CQEs (and leaks, never frees, what does not come).
//! * **Send.** An `Op` may move between threads after it was submitted: completion is
//!   published through atomics and its waker slot, not through the shard's state.
//! * **Deadlines and links.** [`Op::with_timeout`] links an `IORING_OP_LINK_TIMEOUT` behind
//!   the op; ops made of two linked SQEs (`IOSQE_IO_LINK`, e.g. [`copy_linked`]) run back to
//!   back in the kernel with no round trip through user space.
//!
//! * **Streams of completions.** A multishot request posts many CQEs from one SQE:
//!   [`accept_multishot`], [`recv_multishot`] and [`recvmsg_multishot`] are streams of
//!   owned results (`op/stream/`), falling back to single-shot requests where the kernel
//!   lacks the multishot form; [`send_zc`] returns its buffer only after the zero-copy
//!   notification.
//!
//! The functions here are the low-level op API the `fs`, `net` and `process` crates wrap.

mod fd;
mod fs;
mod limits;
mod net;
mod on_abandon;
mod poll;
mod process;
pub(crate) mod raw;
mod send_zc;
mod stream;
mod support;

pub use fd::{IntoOwned, SharedFd};
pub use fs::*;
pub use net::*;
pub use on_abandon::{Abandoned, Claimed, OnAbandon};
pub use poll::{poll_add, poll_readable, PollAdd, PollReadable};
pub(crate) use poll::{poll_add_by_number, PollAddByNumber};
pub use process::*;
pub use send_zc::{send_zc, SendZc};
pub(crate) use stream::poll::poll_multishot_by_number;
pub use stream::*;

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};
use std::time::Duration;

use ringsteal_uring::abi::{
    __kernel_timespec, IOSQE_ASYNC, IOSQE_CQE_SKIP_SUCCESS, IOSQE_IO_HARDLINK, IOSQE_IO_LINK,
};
use ringsteal_uring::{io_uring_sqe, opcode};

use crate::driver::user_data::{pointer, TAG_OP};
use crate::shard::context;
use crate::shard::run_here_or_send;
use crate::shard::sched::SchedHandle;
use crate::shared::remote::{OpRef, RemoteCmd};
use raw::{release, release_completed, release_many, OpCell, OpHeader, MAX_SQES, TIMEOUT_SLOT};

/// The SQEs of one operation: one, or two linked ones. `user_data` is set by [`Op`].
/// Returned by [`Operation::prepare`].
///
/// ```
/// use ringsteal_rt::op::Sqes;
/// use ringsteal_uring::opcode;
///
/// // A write that runs only if the read before it filled its whole buffer (copy_linked).
/// let mut buf = [0u8; 8];
/// let read = opcode::read(0, buf.as_mut_ptr(), buf.len() as u32, 0);
/// let write = opcode::write(1, buf.as_ptr(), buf.len() as u32, 0);
/// let sqes = Sqes::Linked(read, write);
/// assert!(matches!(sqes, Sqes::Linked(..)));
/// assert!(matches!(Sqes::One(opcode::nop()), Sqes::One(_)));
/// ```
#[derive(Debug)]
pub enum Sqes {
    /// A single request.
    One(io_uring_sqe),
    /// Two requests; `Op` adds `IOSQE_IO_LINK` to the first, so the second starts only if the
    /// first succeeds completely (a short read or write breaks the chain).
    Linked(io_uring_sqe, io_uring_sqe),
}

/// What an operation does: builds its SQEs from its data (already at its final heap address)
/// and turns the CQE results into an output (giving buffers back). Implement it to submit an
/// opcode ringsteal does not wrap yet; [`Op::new`] turns it into a future.
///
/// ```
/// use std::io;
/// use ringsteal_rt::op::{Op, Operation, Sqes};
///
/// /// A NOP as a user-defined operation: any opcode can be wrapped the same way.
/// struct MyNop;
///
/// // SAFETY: a NOP references no memory, and ends with one CQE.
/// unsafe impl Operation for MyNop {
///     type Output = io::Result<u32>;
///     fn prepare(&mut self) -> Sqes {
///         Sqes::One(ringsteal_uring::opcode::nop())
///     }
///     fn complete(self, results: &[(i32, u32)]) -> io::Result<u32> {
///         let (res, _flags) = results[0];
///         if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as u32) }
///     }
///     fn fail(self, err: io::Error) -> io::Result<u32> {
///         Err(err)
///     }
/// }
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// assert_eq!(rt.block_on(Op::new(MyNop)).unwrap(), 0);
/// ```
///
/// # Safety
/// The runtime frees the op's memory when the CQE it takes for each SQE's *last* one has
/// arrived, so an implementation must keep to these rules:
///
/// * Every pointer `prepare` puts into an SQE must point into `self` (or memory `self` owns)
///   and stay valid while `self` is not moved or dropped.
/// * Each SQE must end with exactly one CQE without `IORING_CQE_F_MORE`, and the kernel must
///   be done with the op's memory once that CQE is posted. CQEs with `F_MORE` before it
///   (multishot requests, the first CQE of `SEND_ZC`) neither complete the op nor free it; the
///   result of such a CQE is kept in its slot, and a final `IORING_CQE_F_NOTIF` CQE (the
///   `SEND_ZC` notification) adds its flags to it without replacing its `res`. A multishot
///   request therefore completes only when it ends (e.g. is cancelled), with its last result.
/// * Link and skip flags are the runtime's: `Op` clears `IOSQE_IO_LINK`, `IOSQE_IO_HARDLINK`
///   and `IOSQE_CQE_SKIP_SUCCESS` on the SQEs `prepare` returns (and links them itself as
///   [`Sqes`] and [`Op::with_timeout`] say), and overwrites `user_data`.
/// * An SQE must not make the kernel post CQEs under another `user_data` to a ringsteal ring
///   (e.g. `IORING_OP_MSG_RING` at a shard's ring) nor cancel, remove or update other
///   requests (`ASYNC_CANCEL`, `TIMEOUT_REMOVE`, `POLL_REMOVE`, ...): the runtime's own
///   requests and other ops' cells depend on their CQEs arriving as submitted.
pub unsafe trait Operation: Send + 'static {
    /// What the future yields.
    type Output;

    /// The SQE(s), without `user_data` (the op sets it).
    fn prepare(&mut self) -> Sqes;

    /// The output, from the `(res, flags)` of each SQE in order (`res < 0` is `-errno`).
    /// Also called, with the output dropped, when the op completed after its future was
    /// dropped, so that resources the kernel created (descriptors) are released.
    fn complete(self, results: &[(i32, u32)]) -> Self::Output;

    /// The output for an op that could not be submitted (buffers come back with `err`).
    fn fail(self, err: io::Error) -> Self::Output;

    /// The result [`complete`](Self::complete) sees for a request that the op's link timeout
    /// ([`Op::with_timeout`]) cancelled (the kernel reports `-ECANCELED`): `-ETIMEDOUT` by
    /// default, so that the op fails with `ErrorKind::TimedOut`. An op whose `complete` must
    /// tell a request that never ran from one that ran and failed keeps `-ECANCELED`, which
    /// no request that ran reports: a close, say, since the kernel takes the descriptor
    /// whatever a close that ran answers, `ETIMEDOUT` included.
    const TIMED_OUT_RESULT: i32 = -libc::ETIMEDOUT;

    /// True if the first SQE `prepare` returns may be a zero-copy send (`SEND_ZC`,
    /// `SENDMSG_ZC`). Its result comes in a CQE with `IORING_CQE_F_MORE`, after which the
    /// request is over and only its notification is owed: an op dropped then is not
    /// cancelled (a cancel would find nothing). Left `false` for such a send, a dropped op
    /// costs some cancels that find nothing (a bounded number) before its notification
    /// arrives; set `true` for anything else, a dropped multishot request that has posted a
    /// CQE would stay armed.
    const ZERO_COPY_SEND: bool = false;

    /// Called once a zero-copy send ([`ZERO_COPY_SEND`](Self::ZERO_COPY_SEND)) has posted
    /// its result (its CQE with `IORING_CQE_F_MORE`). The request is over then; until its
    /// notification the kernel keeps only the buffer's pages, and the notification comes
    /// once the peer has acknowledged the data, which a peer that stops reading may never
    /// do while the socket is open. So drop here what only the request needed, above all a
    /// reference that keeps the socket's descriptor open: held to the notification, it
    /// would keep the socket open after its owner closed it, and with it the notification
    /// away, for as long as such a peer likes. Every buffer the SQE points into must stay.
    ///
    /// Runs on the driver of the op's shard, at most once per op; the op's future, possibly
    /// on another thread, reaches the op only once it is complete. A panic here is caught
    /// and ignored. Default: nothing.
    fn send_result_posted(&mut self) {}

    /// The opcode this op needs that a supported kernel may lack (`IORING_OP_*`), for the
    /// ops that have a fallback elsewhere (`ftruncate`, `waitid`, `socket`): where the
    /// runtime may not use it (an older kernel, or taken away by
    /// [`Builder::without_feature`](crate::Builder::without_feature)), the op fails at its
    /// first poll with `ErrorKind::Unsupported` naming the opcode, rather than the kernel's
    /// bare `EINVAL`. `None` (the default) checks nothing: every other opcode is older
    /// than the oldest kernel the runtime supports.
    const REQUIRES: Option<u8> = None;

    /// True if the runtime should call [`request_ended`](Self::request_ended) as each of
    /// the op's requests ends. Off by default: the call costs every completion of the op's
    /// type a look into its data.
    const REPORTS_REQUEST_ENDS: bool = false;

    /// Called once the last CQE of the op's request `index` (its place in what `prepare`
    /// returned; a link timeout is not reported) has arrived, with that CQE's `res`, before
    /// the op completes, if [`REPORTS_REQUEST_ENDS`](Self::REPORTS_REQUEST_ENDS) is set. For
    /// an op of linked requests to let go early of what only the first request needed (a
    /// lane's guard: [`WriteThenRead`](crate::io::WriteThenRead) frees its write lane when
    /// its write has sent everything, not when its read completes). The kernel is done
    /// with that request, not with the op: buffers of the other request must stay.
    ///
    /// Runs on the driver of the op's shard, at most once per request; the op's future
    /// reaches the op only once it is complete. A panic here is caught and ignored.
    /// Default: nothing.
    fn request_ended(&mut self, index: usize, res: i32) {
        let _ = (index, res);
    }

    /// True if the request completes on its own, without anything outside the process
    /// acting (a read of a regular file, an `fsync`, an `open`), so that a paused clock
    /// ([`time::pause`](crate::time::pause)) should not auto-advance while it is in flight,
    /// as tokio's does not while its blocking pool runs a file call. False (the default) for
    /// what may wait on a peer or a user: sockets, pipes, polls, timeouts. Asked once, at
    /// submission, only while the clock is paused.
    fn holds_paused_clock(&self) -> bool {
        false
    }
}

enum State<T> {
    Unsubmitted(T),
    Submitted(NonNull<OpCell<T>>),
    Done,
}

/// An io_uring operation as a future. See the [module docs](self).
///
/// Submitted on its first poll, to the ring of the shard that polls it. Dropped while in
/// flight, it asks the kernel to cancel the request and leaves its memory (buffers included)
/// to the runtime until the last completion; a request that completed in that race keeps its
/// result to itself (a raw `recv`'s bytes are then lost: the book's chapter on I/O and owned
/// buffers says when that matters). A deadline set with [`with_timeout`](Op::with_timeout)
/// ends the request in the kernel instead, and hands the buffer back. The functions of this
/// module each return one.
///
/// ```
/// use std::time::Duration;
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     op::nop().await.unwrap();
///     let (rx, tx) = std::os::unix::net::UnixStream::pair().unwrap();
///     let rx = SharedFd::new(rx.into());
///     // Nothing to read yet: the kernel ends the recv at its deadline.
///     let (res, buf) = op::recv(&rx, Vec::with_capacity(8), 0)
///         .with_timeout(Duration::from_millis(2))
///         .await;
///     assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
///     std::io::Write::write_all(&mut &tx, b"kept").unwrap();
///     let (n, buf) = op::recv(&rx, buf, 0).await; // the same buffer, given back
///     assert_eq!(&buf[..n.unwrap()], b"kept");
/// });
/// ```
#[must_use = "an Op does nothing unless polled (it is submitted on its first poll)"]
pub struct Op<T> {
    state: State<T>,
    timeout: Option<Duration>,
    /// Submit with `IOSQE_ASYNC`.
    force_async: bool,
    /// SQEs submitted (the link timeout included).
    sqes: usize,
    /// A link timeout was submitted with the op (decided at submission: `timeout` set later
    /// is ignored).
    linked_timeout: bool,
    /// The runtime the op was submitted to, to ask its shard for a cancel from elsewhere.
    runtime: Option<SchedHandle>,
}

// SAFETY: the data is Send; once submitted, the cell is shared with the driver only through
// atomics and the waker slot (see raw.rs). Bounded by `Send`, not `Operation` (which implies
// it): a future holding an `Op<Write<&'static str>>` must be provably Send to the compiler
// for every lifetime it erases inside an `async` block, and `&'a str: Send` holds for every
// `'a` where the buffer trait holds for `'static` only (a `spawn` of such a future failed to
// compile: "implementation of `IoBuf` is not general enough").
unsafe impl<T: Send> Send for Op<T> {}
// SAFETY: `&Op` gives access to nothing.
unsafe impl<T: Send> Sync for Op<T> {}

impl<T> Unpin for Op<T> {}

impl<T: Operation> Op<T> {
    /// An op that submits `data`'s SQEs on its first poll.
    pub fn new(data: T) -> Self {
        Self {
            state: State::Unsubmitted(data),
            timeout: None,
            force_async: false,
            sqes: 0,
            linked_timeout: false,
            runtime: None,
        }
    }

    /// Bounds the operation by `timeout` in the kernel (`IORING_OP_LINK_TIMEOUT`): if it has
    /// not completed by then it is cancelled and fails with `ErrorKind::TimedOut` (buffers
    /// still come back). Must be called before the first poll, which submits the op: called
    /// later, it is ignored (the op runs without a deadline).
    ///
    /// A link timeout bounds the one request linked right before it, so for an op made of two
    /// linked SQEs (such as [`copy_linked`]) the deadline bounds the *first* one, the one that
    /// may wait (the read): if it expires, the second is cancelled too and the op fails with
    /// `TimedOut`; once the first has completed in time, the second runs without a deadline.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (rx, _tx) = std::os::unix::net::UnixStream::pair().unwrap();
    ///     let fd = ringsteal_rt::op::SharedFd::new(rx.into());
    ///     // Nobody writes: the read times out in the kernel.
    ///     let (res, buf) = ringsteal_rt::op::read_at(&fd, Vec::with_capacity(16), u64::MAX)
    ///         .with_timeout(Duration::from_millis(5))
    ///         .await;
    ///     assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
    ///     assert_eq!(buf.capacity(), 16);
    /// });
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if matches!(self.state, State::Unsubmitted(_)) {
            self.timeout = Some(timeout);
        }
        self
    }

    /// Runs the operation in the kernel's worker pool (`IOSQE_ASYNC`) instead of first trying
    /// it inline in the shard's `io_uring_enter`. A large page-cache read otherwise copies
    /// inline, holding the shard (and every other task on it) for the whole copy; forced
    /// async, it copies on a kernel worker thread, several in parallel. Costs a worker
    /// hand-off, so it only pays for large transfers. For an op of linked requests (such as
    /// [`copy_linked`]) it applies to each of them (not to a link timeout). Must be called
    /// before the first poll; called later, it has no effect.
    pub fn force_async(mut self) -> Self {
        self.force_async = true;
        self
    }

    /// True if this thread runs a ringsteal shard and the op was submitted to another one (of
    /// this runtime or of another): its completion is reaped, and its waker woken, only when
    /// that shard runs, which for shard 0 is only inside `block_on`, and never again once its
    /// runtime has shut down (which cancels the op). False before the first poll, and on a
    /// thread that is no shard.
    ///
    /// An op whose result nothing depends on (a poll for readiness, say) can then be dropped
    /// and made again here, so that it completes where it is awaited. Dropping it cancels it
    /// on its own shard; whatever it did there is lost.
    ///
    /// ```
    /// let rt = ringsteal_rt::Runtime::builder().shards(2).build().unwrap();
    /// let (rx, _tx) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let fd = ringsteal_rt::op::SharedFd::new(rx.into());
    /// let mut poll = ringsteal_rt::op::poll_readable(&fd);
    /// rt.block_on(async {
    ///     assert!(!poll.submitted_elsewhere(), "not submitted yet");
    ///     // One poll submits it, to this shard's ring.
    ///     std::future::poll_fn(|cx| {
    ///         assert!(std::pin::Pin::new(&mut poll).poll(cx).is_pending());
    ///         std::task::Poll::Ready(())
    ///     })
    ///     .await;
    ///     assert!(!poll.submitted_elsewhere(), "on this shard's ring");
    ///     let poll = ringsteal_rt::spawn_with(ringsteal_rt::Placement::Pinned(1), async move {
    ///         let elsewhere = poll.submitted_elsewhere();
    ///         (poll, elsewhere)
    ///     });
    ///     assert!(poll.await.unwrap().1, "shard 1 did not submit it");
    /// });
    /// # use std::future::Future;
    /// ```
    pub fn submitted_elsewhere(&self) -> bool {
        let State::Submitted(cell) = self.state else {
            return false;
        };
        // SAFETY: the future's reference keeps the cell alive; `shard` never changes.
        let shard = unsafe { (*cell.as_ptr()).header.shard } as usize;
        context::runs_shard(shard, self.runtime.as_ref().map(SchedHandle::shared)) == Some(false)
    }

    fn submit(&mut self, cx: &mut Context<'_>) -> Result<(), T::Output> {
        let State::Unsubmitted(data) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!()
        };
        context::with_shard(|cur| {
            let Some(shard) = cur else {
                return Err(data.fail(io::Error::other(
                    "ringsteal I/O must be polled on a ringsteal shard (inside a task or Runtime::block_on)",
                )));
            };
            if let Some(opcode) = T::REQUIRES {
                if !shard
                    .shared
                    .features
                    .supports(crate::Feature::Opcode(opcode))
                {
                    return Err(data.fail(unsupported(opcode)));
                }
            }
            let cell = OpCell::allocate(data, shard.index);
            // SAFETY: the cell is fresh and only ours; the data now sits at its final address.
            let prepared = unsafe {
                (*(*cell.as_ptr()).data.get())
                    .as_mut()
                    .expect("data present")
                    .prepare()
            };
            let timespec = self.timeout.map(|t| {
                // SAFETY: the timespec lives in the cell, which outlives every CQE; the cell
                // is not shared yet.
                unsafe {
                    *(*cell.as_ptr()).timeout.get() = __kernel_timespec::from_duration(t);
                    (*cell.as_ptr()).timeout.get() as *const __kernel_timespec
                }
            });
            let mut sqes = [io_uring_sqe::zeroed(); MAX_SQES];
            let n = assemble(&mut sqes, prepared, self.force_async, timespec);
            if timespec.is_some() {
                // SAFETY: the cell is not shared yet.
                unsafe { (*cell.as_ptr()).header.set_link_timeout() };
            }
            let header = cell.cast::<OpHeader>();
            for (i, sqe) in sqes[..n].iter_mut().enumerate() {
                sqe.user_data = pointer(header.as_ptr() as *const (), TAG_OP + i as u64);
            }
            // SAFETY: the header is live (we hold a reference).
            let h = unsafe { header.as_ref() };
            h.set_expected(n as u32);
            if T::ZERO_COPY_SEND {
                h.set_notifies(0);
            }
            // SAFETY: the cell is not shared yet (its SQEs are pushed below).
            unsafe { h.register_unshared(cx.waker()) };
            // SAFETY: every pointer in the SQEs points into the cell, which lives until the
            // last of these CQEs (each holds a reference).
            let pushed = unsafe {
                shard
                    .driver
                    .borrow_mut()
                    .push_op(&sqes[..n], shard.counters())
            };
            if let Err(e) = pushed {
                // Nothing reached the kernel: take the data back and free the cell.
                release_many(h, n as u32);
                // SAFETY: not submitted, so the kernel never saw the data.
                let data = unsafe { OpCell::take_data(cell) };
                // SAFETY: drops the last (the future's) reference.
                unsafe { release(header) };
                return Err(data.fail(e));
            }
            self.sqes = n;
            self.linked_timeout = self.timeout.is_some();
            if shard.shared.clock.is_paused() {
                // SAFETY: the data stays in the cell until the op completes; only read here.
                let holds = unsafe { (*(*cell.as_ptr()).data.get()).as_ref() }
                    .is_some_and(Operation::holds_paused_clock);
                if holds {
                    shard.hold_clock_for(header);
                }
            }
            self.runtime = Some(SchedHandle::new(&shard.shared, Some(shard)));
            self.state = State::Submitted(cell);
            Ok(())
        })
    }
}

impl<T: Operation> Future for Op<T> {
    type Output = T::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T::Output> {
        if let State::Unsubmitted(_) = self.state {
            return match self.submit(cx) {
                // Submission registered the waker, and no CQE can have been reaped since:
                // the driver reaps between polls, never during one.
                Ok(()) => Poll::Pending,
                Err(out) => Poll::Ready(out),
            };
        }
        let State::Submitted(cell) = self.state else {
            panic!("an Op was polled after it completed");
        };
        // SAFETY: the future's reference keeps the cell alive.
        let header = unsafe { &(*cell.as_ptr()).header };
        if !header.is_complete() {
            header.register(cx.waker());
            if !header.is_complete() {
                return Poll::Pending;
            }
        }
        // One request and no link timeout (most ops): its slot is the result, as it stands.
        let single = self.sqes == 1;
        let results = if single {
            [header.first_result(); MAX_SQES]
        } else {
            header.op_results(T::TIMED_OUT_RESULT)
        };
        // SAFETY: every CQE has arrived: the kernel is done with the data.
        let data = unsafe { OpCell::take_data(cell) };
        self.state = State::Done;
        let n = self.sqes - usize::from(self.linked_timeout);
        // SAFETY: drops the future's reference; the data was taken.
        unsafe { release_completed(cell) };
        Poll::Ready(data.complete(&results[..n]))
    }
}

impl<T> Drop for Op<T> {
    #[inline]
    fn drop(&mut self) {
        let State::Submitted(cell) = self.state else {
            return;
        };
        let header_ptr = cell.cast::<OpHeader>();
        // SAFETY: the future's reference keeps the cell alive.
        let header = unsafe { header_ptr.as_ref() };
        if !header.is_complete() {
            cancel(header_ptr, self.runtime.as_ref());
        }
        // SAFETY: drops the future's reference; the driver frees the cell (and the buffer in
        // it) at the last CQE if that has not arrived yet.
        unsafe { release(header_ptr) };
    }
}

/// Writes the SQEs of an op into `sqes`, in submission order, and returns how many: its own
/// (see [`runtime_flags_only`]), linked as [`Sqes`] says, with `IOSQE_ASYNC` on each of them
/// if `force_async`, and a `LINK_TIMEOUT` on `timespec` behind the first if given (at
/// [`TIMEOUT_SLOT`]). `user_data` is left for the caller. (Written in place: returning the
/// array by value cost the single-shot op path a copy of it.)
#[inline]
fn assemble(
    sqes: &mut [io_uring_sqe; MAX_SQES],
    prepared: Sqes,
    force_async: bool,
    timespec: Option<*const __kernel_timespec>,
) -> usize {
    let async_flag = if force_async { IOSQE_ASYNC } else { 0 };
    let own = |sqe| runtime_flags_only(sqe).with_flags(async_flag);
    let mut n = match prepared {
        Sqes::One(a) => {
            sqes[0] = own(a);
            1
        }
        Sqes::Linked(a, b) => {
            sqes[0] = own(a).with_flags(IOSQE_IO_LINK);
            sqes[1] = own(b);
            2
        }
    };
    if let Some(ts) = timespec {
        // A link timeout bounds the request right before it: it goes behind the first SQE
        // (the one that may wait), at TIMEOUT_SLOT. Behind a linked pair's second SQE it would
        // be armed only once the first completed, and a first request that never completes
        // (a read of an idle pipe) would wait forever.
        let mut timer = opcode::link_timeout(ts, 0);
        if n == 2 {
            // The chain goes on through the timeout to the second SQE.
            timer = timer.with_flags(IOSQE_IO_LINK);
            sqes[2] = sqes[1];
        }
        sqes[0] = sqes[0].with_flags(IOSQE_IO_LINK);
        sqes[TIMEOUT_SLOT] = timer;
        n += 1;
    }
    n
}

/// `sqe` without the link and skip flags an [`Operation`] may not set (see its `# Safety`):
/// a link would chain it to whatever SQE comes next in the ring, and a skipped CQE would
/// never complete the op.
fn runtime_flags_only(mut sqe: io_uring_sqe) -> io_uring_sqe {
    sqe.flags &= !(IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS);
    sqe
}

/// Wakes `wakers`, or, when called from code the driver runs while it reaps (the output of
/// an op whose future was dropped, being dropped; a stream's `abandon_into` sink), once
/// the driver is free again, as it wakes the tasks of completed ops: a waker that polls its
/// task inline must not find the ring borrowed, and one that panics must not unwind
/// through the reap. For destructors and sinks of your own that wake tasks.
///
/// ```
/// use std::sync::Arc;
/// use std::task::{Wake, Waker};
///
/// struct Count(std::sync::atomic::AtomicUsize);
/// impl Wake for Count {
///     fn wake(self: Arc<Self>) {
///         self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
///     }
/// }
/// let count = Arc::new(Count(Default::default()));
/// // Outside the driver's reap, it wakes at once.
/// ringsteal_rt::op::wake_after_reap([Waker::from(count.clone())]);
/// assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
/// ```
pub fn wake_after_reap(wakers: impl IntoIterator<Item = std::task::Waker>) {
    crate::util::wake_later::wake_all(wakers);
}

/// Asks the op's shard to cancel it: directly if this thread is that shard, by message
/// otherwise. Takes the reference the cancel's CQE will release.
pub(crate) fn cancel(op: NonNull<OpHeader>, runtime: Option<&SchedHandle>) {
    if let Some(runtime) = runtime {
        cancel_in(op, runtime.shared());
    }
}

/// As [`cancel`], from the driver's reaping path on the op's own shard (the driver is
/// borrowed, so the cancel is queued as a command for the shard's next tick). The caller
/// holds a reference (a CQE's). Off a shard (nothing to ask), does nothing.
pub(crate) fn cancel_from_driver(op: NonNull<OpHeader>) {
    context::with_shard(|shard| {
        if let Some(shard) = shard {
            cancel_in(op, &shard.shared);
        }
    });
}

fn cancel_in(op: NonNull<OpHeader>, shared: &crate::shared::Shared) {
    // SAFETY: the caller holds a reference.
    let header = unsafe { op.as_ref() };
    header.add_ref();
    let shard = header.shard as usize;
    shared.shards[shard].counters.ops_cancelled.incr();
    run_here_or_send(
        shared,
        shard,
        |s| s.try_cancel_op(op),
        || RemoteCmd::CancelOp(OpRef(op)),
    );
}

impl<T: Operation> fmt::Debug for Op<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Unsubmitted(_) => "unsubmitted",
            State::Submitted(_) => "in flight",
            State::Done => "done",
        };
        f.debug_struct("Op")
            .field("state", &state)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Maps a CQE result to `io::Result`.
pub(crate) fn cqe_result(res: i32) -> io::Result<u32> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res))
    } else {
        Ok(res as u32)
    }
}

/// `IORING_OP_NOP`: completes at once with `Ok(())`. Useful to measure the op path.
pub fn nop() -> Op<Nop> {
    Op::new(Nop(()))
}

/// The operation of [`nop`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     for _ in 0..100 {
///         ringsteal_rt::op::nop().await.unwrap(); // a round trip through the ring
///     }
/// });
/// ```
#[derive(Debug)]
pub struct Nop(());

// SAFETY: a NOP references no memory.
unsafe impl Operation for Nop {
    type Output = io::Result<()>;
    fn prepare(&mut self) -> Sqes {
        Sqes::One(opcode::nop())
    }
    fn complete(self, results: &[(i32, u32)]) -> io::Result<()> {
        cqe_result(results[0].0).map(drop)
    }
    fn fail(self, err: io::Error) -> io::Result<()> {
        Err(err)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Completes `op` as if the kernel had posted `results` for its SQEs (the op itself, and
    /// with `timeout`, its link timeout at `TIMEOUT_SLOT`), through `Op::poll`: no ring. For
    /// completions no test can make the kernel post on demand.
    pub(crate) fn complete_by_hand<T: Operation>(
        mut op: Op<T>,
        results: &[(i32, u32)],
        timeout: bool,
    ) -> T::Output {
        let State::Unsubmitted(data) = std::mem::replace(&mut op.state, State::Done) else {
            panic!("the op was submitted already");
        };
        let cell = OpCell::allocate(data, 0);
        // SAFETY: the cell is fresh and only ours.
        let header = unsafe { &(*cell.as_ptr()).header };
        if timeout {
            header.set_link_timeout();
        }
        header.set_expected(results.len() as u32);
        for (i, &(res, flags)) in results.iter().enumerate() {
            assert!(header.complete(i, res, flags).is_some() == (i + 1 == results.len()));
            // SAFETY: the reference SQE `i` would have held; the future's keeps the cell.
            unsafe { release(cell.cast()) };
        }
        op.state = State::Submitted(cell);
        op.sqes = results.len();
        op.linked_timeout = timeout;
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
        match Pin::new(&mut op).poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(out) => out,
            Poll::Pending => unreachable!("every CQE has arrived"),
        }
    }

    fn assembled(
        prepared: Sqes,
        force_async: bool,
        timespec: Option<*const __kernel_timespec>,
    ) -> ([io_uring_sqe; MAX_SQES], usize) {
        let mut sqes = [io_uring_sqe::zeroed(); MAX_SQES];
        let n = assemble(&mut sqes, prepared, force_async, timespec);
        (sqes, n)
    }

    fn flags(sqes: &[io_uring_sqe]) -> Vec<u8> {
        sqes.iter().map(|s| s.flags).collect()
    }

    #[test]
    fn force_async_marks_a_single_request() {
        let (sqes, n) = assembled(Sqes::One(opcode::nop()), true, None);
        assert_eq!(flags(&sqes[..n]), [IOSQE_ASYNC]);
    }

    #[test]
    fn force_async_marks_every_request_of_a_linked_op() {
        let (sqes, n) = assembled(Sqes::Linked(opcode::nop(), opcode::nop()), true, None);
        assert_eq!(
            flags(&sqes[..n]),
            [IOSQE_ASYNC | IOSQE_IO_LINK, IOSQE_ASYNC]
        );
    }

    #[test]
    fn force_async_leaves_the_link_timeout_alone() {
        let ts = __kernel_timespec::default();
        let (sqes, n) = assembled(Sqes::Linked(opcode::nop(), opcode::nop()), true, Some(&ts));
        assert_eq!(
            flags(&sqes[..n]),
            [IOSQE_ASYNC | IOSQE_IO_LINK, IOSQE_IO_LINK, IOSQE_ASYNC]
        );
        assert_eq!(
            sqes[TIMEOUT_SLOT].opcode,
            ringsteal_uring::abi::IORING_OP_LINK_TIMEOUT
        );
    }

    #[test]
    fn without_force_async_no_request_is_marked() {
        let ts = __kernel_timespec::default();
        let (sqes, n) = assembled(Sqes::Linked(opcode::nop(), opcode::nop()), false, Some(&ts));
        assert_eq!(flags(&sqes[..n]), [IOSQE_IO_LINK, IOSQE_IO_LINK, 0]);
        let (sqes, n) = assembled(Sqes::One(opcode::nop()), false, None);
        assert_eq!(flags(&sqes[..n]), [0]);
    }
}

#[cfg(test)]
mod late_cancel_tests {
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;

    use super::*;

    /// An op that waits until its descriptor is readable, and says when its data is dropped.
    struct Watched {
        fd: SharedFd,
        dropped: Arc<AtomicBool>,
    }

    impl Drop for Watched {
        fn drop(&mut self) {
            self.dropped.store(true, SeqCst);
        }
    }

    // SAFETY: a poll references no memory; the op holds the descriptor until its CQE.
    unsafe impl Operation for Watched {
        type Output = ();
        fn prepare(&mut self) -> Sqes {
            Sqes::One(opcode::poll_add(
                self.fd.as_raw_fd(),
                libc::POLLIN as u32,
                false,
            ))
        }
        fn complete(self, _: &[(i32, u32)]) {}
        fn fail(self, _: io::Error) {}
    }

    /// `Op::drop` reads that its op is not complete and asks for a cancel. If meanwhile the
    /// shard completes the op, finishes its drain and the runtime sweeps its queues, the
    /// cancel is queued where nobody looks any more: it must still give its reference up (as
    /// the sweep does), or the op, with its buffer and descriptor, is never freed. Here the
    /// runtime is gone before the cancel is asked for, which is where that race ends.
    #[test]
    fn a_cancel_queued_after_the_final_sweep_gives_its_reference_up() {
        let dropped = Arc::new(AtomicBool::new(false));
        let (rx, _tx) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut op = Op::new(Watched {
            fd: SharedFd::new(rx.into()),
            dropped: dropped.clone(),
        });
        let rt = crate::Runtime::builder().shards(1).build().unwrap();
        rt.block_on(std::future::poll_fn(|cx| {
            let polled = Pin::new(&mut op).poll(cx);
            assert!(polled.is_pending(), "nobody writes: the poll waits");
            Poll::Ready(())
        }));
        // The shutdown cancels the poll and reaps its CQE: the op is complete, and only the
        // future's reference is left. Then the final sweep.
        drop(rt);
        let State::Submitted(cell) = op.state else {
            panic!("the op was submitted");
        };
        // SAFETY: the future's reference keeps the cell alive.
        assert!(unsafe { cell.as_ref() }.header.is_complete());
        // What `Op::drop` does after it found the op incomplete: the cancel, then its own
        // reference. (`op.state` is left as it is, so the drop below gives that up.)
        cancel(cell.cast(), op.runtime.as_ref());
        drop(op);
        assert!(
            dropped.load(SeqCst),
            "a cancel queued after the sweep kept the op, its data and its descriptor alive"
        );
    }
}

/// The error of an op whose opcode ([`Operation::REQUIRES`]) this runtime may not use.
#[cold]
fn unsupported(opcode: u8) -> io::Error {
    let name = ringsteal_uring::abi::opcode_name(opcode).unwrap_or("?");
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "io_uring opcode {opcode} (IORING_OP_{name}) is not available: this kernel lacks it \
             or Builder::without_feature took it away"
        ),
    )
}
