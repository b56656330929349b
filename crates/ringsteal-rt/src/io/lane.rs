//! [`Lane`]: orders the reads (or the writes) of one byte stream and keeps the bytes of a
//! read whose future was dropped.
//!
//! A read or write of a stream is an io_uring request that outlives its future when the
//! future is dropped: the cancel may lose the race, and the request then completes anyway,
//! with data. Two rules keep a stream that is still used intact:
//!
//! * **One request per direction at a time.** A read (or write) holds its direction's
//!   [`LaneGuard`] from before it is submitted until its last completion has arrived, even
//!   if its future is gone (the guard travels inside the op, see [`InLane`](super::InLane)).
//!   The next request of that direction waits for the guard, so it can never overtake the
//!   rest of an abandoned one.
//! * **Nothing read is dropped.** When an abandoned read completes with data, its bytes go
//!   into the lane's *leftover*; the next read is served from there before it asks the
//!   kernel again. When it completes with the end of the stream or an error (a reset), that
//!   is kept too, behind the bytes, and the next read returns it once, as the abandoned one
//!   would have: a loop that drops a read every round (a `select!` whose other branch keeps
//!   winning) still sees the peer's end at its next read, without another trip through the
//!   ring.
//!
//! **The uncontended fast path.** Beside the lock, a lane keeps one atomic state word:
//! `HELD` (a request, or a [`Lane::poll_free`] closure, holds the lane), `WAITERS` (a task is
//! registered to be woken when it is let go), `LEFTOVER` (there are kept bytes) and `END`
//! (a kept end of stream or error). Taking a
//! free lane is one compare-and-swap of the word; letting it go is one compare-and-swap when
//! nobody waits; [`LaneGuard::has_leftover`] is a load. The lock is taken only to wait, to
//! wake, to touch the kept bytes and by `poll_free`. The protocol:
//!
//! * A task sets `WAITERS` only under the lock, by a compare-and-swap that also finds `HELD`
//!   still set, and queues itself before it unlocks. A holder that lets go clears `HELD`
//!   by a compare-and-swap that expects `WAITERS` clear; if it finds `WAITERS` set it takes
//!   the lock (so every registration in progress has finished) and *hands the lane over*:
//!   `HELD` stays set, the first queued [`Acquire`] future is marked as the lane's new
//!   holder (`granted`) and woken, and `WAITERS` is cleared if nobody else waits; with no
//!   future queued it clears both bits. Whichever compare-and-swap comes first, the waiter
//!   either sees the lane free and takes it, or is woken: no wake is lost. The handover is
//!   what makes the lane fair: a holder that lets go and asks again in the same poll (a task
//!   writing in a loop) finds the lane held for the waiter and queues behind it, instead of
//!   taking it back before the woken waiter runs. `WAITERS` is never set while the lane is
//!   free, so taking a free lane never skips a waiter.
//! * A queued future that is dropped gives up its place, but its waker is still woken at
//!   the next letting go (a caller that polls a fresh `acquire()` each time, as the receive
//!   stream does, waits as it always did); one dropped after the lane was handed to it hands
//!   it on (or frees it), as its guard would have.
//! * `poll_free` callers are not queued for a handover (a poll-based read has no future
//!   whose drop could hand the lane on): they are woken at every letting go, and try again.
//! * `poll_free` takes the lock, then sets `HELD` (by compare-and-swap, as a request would),
//!   runs its closure, clears `HELD` and unlocks. `HELD` keeps requests out while the
//!   closure runs (a request that finds it set goes to the lock and waits there, as it
//!   always did); the lock keeps other `poll_free` calls and every slow path out. So, under
//!   the lock, `HELD` always means that a request holds the lane.
//! * Only the holder changes the kept bytes and end, under the lock, and it sets or clears
//!   `LEFTOVER` and `END` in step; the next holder sees them through the word's acquire and
//!   release.
//!
//! Owns: the lane's state (its state word; waiters and leftover bytes behind one lock).
//! May not: submit anything (the stream types and `InLane` do); it is plain memory and runs
//! under Miri.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::{self, Relaxed, Release};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::buf::{IoBufMut, IoVecBufMut};
use crate::loom::sync::atomic::AtomicUsize;
use crate::loom::sync::Mutex;

/// One direction of a stream: who may submit next, and bytes an abandoned read left behind.
/// Cloning shares the lane (the halves of a split stream share their stream's lanes).
///
/// ```
/// use ringsteal_rt::io::Lane;
///
/// let lane = Lane::new();
/// let mut guard = lane.try_acquire().expect("a new lane is free");
/// assert!(lane.try_acquire().is_none(), "one holder at a time");
/// guard.unread(b"kept");
/// let (n, buf) = guard.take_leftover(Vec::with_capacity(8));
/// assert_eq!(&buf[..n], b"kept");
/// drop(guard);
/// assert!(lane.try_acquire().is_some());
/// ```
#[derive(Clone, Default)]
pub struct Lane {
    inner: Arc<Shared>,
}

/// A request or a `poll_free` closure holds the lane.
const HELD: usize = 1;
/// At least one waker is registered (only ever set while `HELD` is).
const WAITERS: usize = 2;
/// There are kept bytes (`State::pending` is not empty).
const LEFTOVER: usize = 4;
/// An end of stream or an error is kept (`State::end`).
const END: usize = 8;

/// What a lane's clones and guards share: the state word and the locked part.
struct Shared {
    /// `HELD | WAITERS | LEFTOVER | END` (see the module docs).
    word: AtomicUsize,
    locked: Mutex<State>,
    /// A dropped read's end is kept ([`Lane::new`]), or not ([`Lane::bytes_only`]).
    keeps_ends: bool,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            word: AtomicUsize::new(0),
            locked: Mutex::new(State::default()),
            keeps_ends: true,
        }
    }
}

impl Shared {
    /// Holds the lane if it is free: the fast path, one compare-and-swap and no lock.
    fn try_hold(&self) -> bool {
        let mut s = self.word.load(Relaxed);
        while s & HELD == 0 {
            match self
                .word
                .compare_exchange(s, s | HELD, Ordering::Acquire, Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
        false
    }

    /// Under the lock: sets `HELD` if the lane is free (true), else `WAITERS` (false), in one
    /// compare-and-swap, which is what makes a racing fast release see a waiter (module
    /// docs). The caller queues itself before it unlocks.
    fn hold_or_flag_waiters(&self) -> bool {
        let mut s = self.word.load(Relaxed);
        loop {
            let next = if s & HELD == 0 { s | HELD } else { s | WAITERS };
            match self
                .word
                .compare_exchange(s, next, Ordering::Acquire, Relaxed)
            {
                Ok(_) => return s & HELD == 0,
                Err(now) => s = now,
            }
        }
    }

    /// Under the lock (`st`), for an [`Acquire`] future with its place in the queue
    /// (`ticket`, once it has one): takes the lane if it was handed to it, or if it is free;
    /// else queues (or stays queued) with `waker`.
    fn hold_or_queue(&self, st: &mut State, waker: &Waker, ticket: &mut Option<Ticket>) -> bool {
        if let Some(t) = *ticket {
            if st.granted == Some(t) {
                // Handed over: `HELD` was kept set for this future.
                st.granted = None;
                *ticket = None;
                return true;
            }
            if let Some(w) = st.waiters.iter_mut().find(|w| w.ticket == Some(t)) {
                if !w.waker.will_wake(waker) {
                    w.waker = waker.clone();
                }
            }
            return false;
        }
        if self.hold_or_flag_waiters() {
            return true;
        }
        st.next_ticket += 1;
        let t = Ticket::new(st.next_ticket).expect("counts up from 1");
        st.waiters.push_back(Waiter {
            ticket: Some(t),
            waker: waker.clone(),
        });
        *ticket = Some(t);
        false
    }

    /// Under the lock (`st`), for `poll_free`: takes the lane if it is free, else registers
    /// `waker` to be woken at the next letting go (no handover: see the module docs).
    fn hold_or_wait(&self, st: &mut State, waker: &Waker) -> bool {
        if self.hold_or_flag_waiters() {
            return true;
        }
        if !st
            .waiters
            .iter()
            .any(|w| w.ticket.is_none() && w.waker.will_wake(waker))
        {
            st.waiters.push_back(Waiter {
                ticket: None,
                waker: waker.clone(),
            });
        }
        false
    }

    /// Lets go of a lane held by a request: one compare-and-swap if nobody waits, else, under
    /// the lock, hands it to the first queued future (module docs).
    fn release(&self) {
        let mut s = self.word.load(Relaxed);
        while s & WAITERS == 0 {
            match self.word.compare_exchange(s, s & !HELD, Release, Relaxed) {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
        self.release_to_waiters();
    }

    /// The slow path of [`release`](Self::release), out of line like `Acquire::poll_slow`:
    /// wakes every `poll_free` waiter, and hands the lane to the first queued future (or,
    /// with none, frees it). The wakes run after the lock is let go.
    #[cold]
    #[inline(never)]
    fn release_to_waiters(&self) {
        let mut wake = Vec::new();
        {
            let mut st = self.locked.lock();
            let mut i = 0;
            while i < st.waiters.len() {
                if st.waiters[i].ticket.is_none() {
                    let w = st.waiters.remove(i).expect("in range");
                    wake.push(w.waker);
                } else {
                    i += 1;
                }
            }
            match st.waiters.pop_front() {
                Some(next) => {
                    // `HELD` stays set, now on `next`'s behalf; the lock orders this
                    // holder's writes before `next`'s critical section.
                    st.granted = next.ticket;
                    if st.waiters.is_empty() {
                        self.word.fetch_and(!WAITERS, Relaxed);
                    }
                    wake.push(next.waker);
                }
                None => {
                    self.word.fetch_and(!(HELD | WAITERS), Release);
                }
            }
        }
        // A guard may be let go while the driver reaps: the write lane of a write-then-read
        // pair whose send is done (`WriteThenRead`), a dropped read's at its last completion.
        // Wakers that poll their task inline must not find the ring borrowed then.
        crate::util::wake_later::wake_all(wake);
    }

    /// A queued [`Acquire`] future (`ticket`) is dropped: it gives up its place, or, if the
    /// lane was handed to it meanwhile, lets go of the lane as its guard would have.
    #[cold]
    #[inline(never)]
    fn leave_queue(&self, ticket: Ticket) {
        let mut st = self.locked.lock();
        if st.granted == Some(ticket) {
            st.granted = None;
            drop(st);
            self.release();
            return;
        }
        // Its place in the queue is given up, but its waker stays for one wake at the next
        // letting go, as a `poll_free` caller's: a caller that polls a fresh `acquire()`
        // each time (and drops it when pending) is still woken to try again.
        if let Some(w) = st.waiters.iter_mut().find(|w| w.ticket == Some(ticket)) {
            w.ticket = None;
        }
    }

    /// Sets or clears `LEFTOVER` and `END` after the holder changed what is kept (`st`,
    /// under the lock). Relaxed: the next holder sees them through `HELD`'s release and
    /// acquire.
    fn note_leftover(&self, st: &State) {
        let want = if st.pending().is_empty() { 0 } else { LEFTOVER }
            | if st.end.is_some() { END } else { 0 };
        let have = self.word.load(Relaxed) & (LEFTOVER | END);
        if want & !have != 0 {
            self.word.fetch_or(want & !have, Relaxed);
        }
        if have & !want != 0 {
            self.word.fetch_and(!(have & !want), Relaxed);
        }
    }
}

/// Clears `HELD` when a `poll_free` closure returns or unwinds. A plain store is enough: while
/// `poll_free` holds both the lock and `HELD`, nobody else changes the word (`WAITERS` is set
/// under the lock only, a fast acquire's compare-and-swap fails without writing, and
/// `LEFTOVER` and `END` change only by the holder).
struct FreeOnDrop<'a>(&'a Shared);

impl Drop for FreeOnDrop<'_> {
    fn drop(&mut self) {
        let s = self.0.word.load(Relaxed);
        self.0.word.store(s & !HELD, Release);
    }
}

/// The locked part of a lane.
#[derive(Default)]
struct State {
    /// Who waits for the lane, in the order they came.
    waiters: VecDeque<Waiter>,
    /// The queued future the lane was handed to, until it takes it (`HELD` stays set).
    granted: Option<Ticket>,
    /// The ticket of the last future queued (0: none yet).
    next_ticket: u64,
    /// Bytes read by an abandoned request, not yet delivered: `leftover[start..]`.
    leftover: Vec<u8>,
    start: usize,
    /// The end an abandoned read met (`None` inside: end of stream), for the read after the
    /// leftover bytes.
    end: Option<Option<std::io::Error>>,
}

/// A queued future's place in the queue (non-zero, so that an `Option` of it is one word
/// and `Acquire` two).
type Ticket = std::num::NonZeroU64;

/// A task waiting for the lane.
struct Waiter {
    /// An [`Acquire`] future's place in the queue (it can be handed the lane); `None` for a
    /// `poll_free` caller (woken when the lane is let go, to try again).
    ticket: Option<Ticket>,
    waker: Waker,
}

impl State {
    fn pending(&self) -> &[u8] {
        &self.leftover[self.start..]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.leftover.len() {
            self.leftover = Vec::new();
            self.start = 0;
        }
    }
}

impl Lane {
    /// A free lane with no leftover, which keeps what a dropped read met: its bytes, then its
    /// end of stream or error ([`LaneGuard::keep_end`]). For a socket, whose end stays and
    /// whose reset the kernel reports once.
    pub fn new() -> Self {
        Self::default()
    }

    /// A lane that keeps a dropped read's bytes but not its end: for what can go on after
    /// an end of stream (a file that grows or is seeked, a FIFO that a new writer opens, a
    /// terminal after `^D`), where the next read must ask the kernel again.
    ///
    /// ```
    /// let lane = ringsteal_rt::io::Lane::bytes_only();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.keep_end(None);
    /// assert!(!guard.has_kept());
    /// ```
    pub fn bytes_only() -> Self {
        Self {
            inner: Arc::new(Shared {
                keeps_ends: false,
                ..Shared::default()
            }),
        }
    }

    /// Waits until no other request of this direction is in flight, then holds the lane.
    pub fn acquire(&self) -> Acquire<'_> {
        Acquire {
            lane: self,
            ticket: None,
        }
    }

    /// [`acquire`](Self::acquire) as a future that owns a handle of the lane, for a type that
    /// polls by hand and must keep its place in the queue between polls (a stream's
    /// `poll_next`): dropping an [`Acquire`] at every `Pending` gives the place up each time.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::{Context, Poll};
    /// use ringsteal_rt::io::{AcquireOwned, Lane, LaneGuard};
    ///
    /// /// Reads by hand: keeps its place while it waits for the lane.
    /// struct Reader {
    ///     lane: Lane,
    ///     waiting: Option<AcquireOwned>,
    /// }
    ///
    /// impl Reader {
    ///     fn poll_lane(&mut self, cx: &mut Context<'_>) -> Poll<LaneGuard> {
    ///         let lane = &self.lane;
    ///         let waiting = self.waiting.get_or_insert_with(|| lane.acquire_owned());
    ///         let guard = std::task::ready!(Pin::new(waiting).poll(cx));
    ///         self.waiting = None;
    ///         Poll::Ready(guard)
    ///     }
    /// }
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let mut reader = Reader { lane: Lane::new(), waiting: None };
    ///     let guard = std::future::poll_fn(|cx| reader.poll_lane(cx)).await;
    ///     assert!(reader.lane.is_held());
    ///     drop(guard);
    /// });
    /// ```
    pub fn acquire_owned(&self) -> AcquireOwned {
        AcquireOwned {
            lane: self.clone(),
            ticket: None,
        }
    }

    /// Holds the lane if it is free.
    pub fn try_acquire(&self) -> Option<LaneGuard> {
        if !self.inner.try_hold() {
            // `HELD` may be a `poll_free` closure's, which ends before its lock is free:
            // under the lock, it is a request's.
            let _st = self.inner.locked.lock();
            if !self.inner.try_hold() {
                return None;
            }
        }
        Some(self.guard())
    }

    fn guard(&self) -> LaneGuard {
        LaneGuard {
            lane: self.inner.clone(),
        }
    }

    /// Runs `f` under the lane's lock if no request holds the lane; pending otherwise, with
    /// `cx` registered to be woken when the holder lets go. For a poll-based read or write
    /// (ADR-0014), which needs the lane for one non-blocking system call only: run inside
    /// `f`, that call cannot be overtaken or split by an owned-buffer request (one of those
    /// waits for the lock until `f` has returned), and it costs the lock and one
    /// compare-and-swap instead of a future that takes and frees the lane.
    /// `f` gets the lane's [`Leftover`], to serve what an abandoned read kept first.
    ///
    /// `f` must be short and must not block or touch this lane: other threads wait for it.
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    ///
    /// struct Ignore;
    /// impl Wake for Ignore {
    ///     fn wake(self: Arc<Self>) {}
    /// }
    /// let waker = Waker::from(Arc::new(Ignore));
    /// let mut cx = Context::from_waker(&waker);
    /// let lane = ringsteal_rt::io::Lane::new();
    /// lane.try_acquire().unwrap().unread(b"kept");
    /// let mut dst = [MaybeUninit::<u8>::uninit(); 8];
    /// let taken = lane.poll_free(&mut cx, |leftover| leftover.take_into(&mut dst));
    /// assert_eq!(taken, Poll::Ready(4));
    /// let held = lane.try_acquire().unwrap();
    /// assert!(lane.poll_free(&mut cx, |_| ()).is_pending(), "a request holds the lane");
    /// drop(held);
    /// ```
    pub fn poll_free<R>(
        &self,
        cx: &mut Context<'_>,
        f: impl FnOnce(&mut Leftover<'_>) -> R,
    ) -> Poll<R> {
        // The lock first, then `HELD`: see the module docs for how they compose.
        let mut st = self.inner.locked.lock();
        if !self.inner.hold_or_wait(&mut st, cx.waker()) {
            return Poll::Pending;
        }
        let free = FreeOnDrop(&self.inner);
        let out = f(&mut Leftover {
            st: &mut st,
            shared: &self.inner,
        });
        drop(free);
        Poll::Ready(out)
    }

    /// True if an abandoned read left bytes that the next read will return.
    pub fn has_leftover(&self) -> bool {
        self.inner.word.load(Ordering::Acquire) & LEFTOVER != 0
    }

    /// True if leftover bytes or a kept end wait for the next read (a read would not wait).
    pub fn has_kept(&self) -> bool {
        self.inner.word.load(Ordering::Acquire) & (LEFTOVER | END) != 0
    }

    /// True if a request holds the lane.
    pub fn is_held(&self) -> bool {
        if self.inner.word.load(Ordering::Acquire) & HELD == 0 {
            return false;
        }
        // `HELD` may be a `poll_free` closure's: under the lock, it is a request's.
        let _st = self.inner.locked.lock();
        self.inner.word.load(Ordering::Acquire) & HELD != 0
    }
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let leftover = self.inner.locked.lock().pending().len();
        f.debug_struct("Lane")
            .field("held", &self.is_held())
            .field("leftover", &leftover)
            .finish()
    }
}

/// The bytes an abandoned read of a lane kept, seen under the lane's lock
/// ([`Lane::poll_free`]).
///
/// ```
/// use std::mem::MaybeUninit;
/// use std::sync::Arc;
/// use std::task::{Context, Poll, Wake, Waker};
///
/// struct Ignore;
/// impl Wake for Ignore {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Ignore));
/// let lane = ringsteal_rt::io::Lane::new();
/// let mut dst = [MaybeUninit::<u8>::uninit(); 8];
/// let none = lane.poll_free(&mut Context::from_waker(&waker), |l| l.take_into(&mut dst));
/// assert_eq!(none, Poll::Ready(0), "nothing kept");
/// ```
pub struct Leftover<'a> {
    st: &'a mut State,
    shared: &'a Shared,
}

impl Leftover<'_> {
    /// Moves kept bytes into `dst`, as a read would; how many (0: nothing kept).
    pub fn take_into(&mut self, dst: &mut [std::mem::MaybeUninit<u8>]) -> usize {
        copy_into(self.shared, self.st, dst, true)
    }
}

impl std::fmt::Debug for Leftover<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leftover")
            .field("len", &self.st.pending().len())
            .finish()
    }
}

/// The future of [`Lane::acquire`].
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let lane = ringsteal_rt::io::Lane::new();
///     let first = lane.acquire().await;
///     let waiter = {
///         let lane = lane.clone();
///         ringsteal_rt::spawn(async move { drop(lane.acquire().await) })
///     };
///     ringsteal_rt::yield_now().await;
///     drop(first); // lets the waiter in
///     waiter.await.unwrap();
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Acquire<'a> {
    lane: &'a Lane,
    /// Its place in the lane's queue, once it waits there.
    ticket: Option<Ticket>,
}

impl Future for Acquire<'_> {
    type Output = LaneGuard;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<LaneGuard> {
        let this = &mut *self;
        poll_acquire(this.lane, &mut this.ticket, cx)
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        leave(self.lane, &mut self.ticket);
    }
}

/// The poll of [`Acquire`] and [`AcquireOwned`]: takes a free lane with one
/// compare-and-swap, else waits for it under the lock (`ticket`: the place in the queue).
#[inline(always)]
fn poll_acquire(lane: &Lane, ticket: &mut Option<Ticket>, cx: &mut Context<'_>) -> Poll<LaneGuard> {
    if ticket.is_none() && lane.inner.try_hold() {
        return Poll::Ready(lane.guard());
    }
    acquire_slow(lane, ticket, cx)
}

/// The lane is held (or the future with `ticket` is queued): wait for it under the lock. Out
/// of line, so that the fast path saves no registers for it.
#[cold]
#[inline(never)]
fn acquire_slow(lane: &Lane, ticket: &mut Option<Ticket>, cx: &mut Context<'_>) -> Poll<LaneGuard> {
    let inner = &lane.inner;
    let mut st = inner.locked.lock();
    if inner.hold_or_queue(&mut st, cx.waker(), ticket) {
        return Poll::Ready(lane.guard());
    }
    Poll::Pending
}

/// The drop of [`Acquire`] and [`AcquireOwned`]: gives up the place in the queue (or the lane,
/// if it was handed over meanwhile).
#[inline(always)]
fn leave(lane: &Lane, ticket: &mut Option<Ticket>) {
    if let Some(ticket) = ticket.take() {
        lane.inner.leave_queue(ticket);
    }
}

/// The future of [`Lane::acquire_owned`]: an [`Acquire`] that holds a handle of its lane
/// instead of borrowing it, so a struct can keep it, and its place in the queue, across
/// polls.
///
/// ```
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let lane = ringsteal_rt::io::Lane::new();
///     let first = lane.acquire().await;
///     // 'static: can be moved into a task, or kept in a struct between polls.
///     let waiter = ringsteal_rt::spawn(lane.acquire_owned());
///     ringsteal_rt::yield_now().await;
///     drop(first); // hands the lane to the waiter
///     drop(waiter.await.unwrap());
///     assert!(!lane.is_held());
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct AcquireOwned {
    lane: Lane,
    /// Its place in the lane's queue, once it waits there.
    ticket: Option<Ticket>,
}

impl Future for AcquireOwned {
    type Output = LaneGuard;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<LaneGuard> {
        let this = &mut *self;
        poll_acquire(&this.lane, &mut this.ticket, cx)
    }
}

impl Drop for AcquireOwned {
    fn drop(&mut self) {
        leave(&self.lane, &mut self.ticket);
    }
}

/// The right to submit the next request of a lane's direction, and access to its leftover.
/// Dropping it hands the lane to the task that has waited longest, or frees it.
///
/// ```
/// let lane = ringsteal_rt::io::Lane::new();
/// let mut guard = lane.try_acquire().unwrap();
/// guard.unread(b"abc");
/// let (n, peeked) = guard.peek_leftover(vec![0u8; 2]);
/// assert_eq!(&peeked[..n], b"ab");
/// assert!(guard.has_leftover(), "a peek consumes nothing");
/// ```
pub struct LaneGuard {
    lane: Arc<Shared>,
}

impl LaneGuard {
    /// True if there are leftover bytes to deliver before reading from the kernel again.
    pub fn has_leftover(&self) -> bool {
        // Only the holder changes `LEFTOVER`, and this guard is the holder.
        self.lane.word.load(Relaxed) & LEFTOVER != 0
    }

    /// True if leftover bytes or a kept end ([`keep_end`](Self::keep_end)) wait for the next
    /// read: it is served by [`take_kept`](Self::take_kept) rather than the kernel. One load.
    pub fn has_kept(&self) -> bool {
        // Only the holder changes these bits, and this guard is the holder.
        self.lane.word.load(Relaxed) & (LEFTOVER | END) != 0
    }

    /// What the next read returns without asking the kernel: leftover bytes moved into `buf`
    /// (as [`take_leftover`](Self::take_leftover)), else the kept end (`Ok(0)` for end of
    /// stream, or the error), taken; `Err(buf)` if nothing is kept.
    ///
    /// ```
    /// let lane = ringsteal_rt::io::Lane::new();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.unread(b"ab");
    /// guard.keep_end(None);
    /// let (n, buf) = guard.take_kept(vec![0u8; 8]).ok().unwrap();
    /// assert_eq!(&buf[..n.unwrap()], b"ab");
    /// let (end, _) = guard.take_kept(vec![0u8; 8]).ok().unwrap();
    /// assert_eq!(end.unwrap(), 0, "then the end of stream, once");
    /// assert!(!guard.has_kept());
    /// ```
    /// A `buf` with no room takes nothing (the end stays for a read that has room).
    #[allow(clippy::type_complexity)]
    pub fn take_kept<B: IoBufMut>(&mut self, buf: B) -> Result<(std::io::Result<usize>, B), B> {
        if buf.bytes_total() == 0 {
            return Err(buf);
        }
        if self.has_leftover() {
            let (n, buf) = self.take_leftover(buf);
            return Ok((Ok(n), buf));
        }
        match self.take_end() {
            Some(end) => Ok((end, buf)),
            None => Err(buf),
        }
    }

    /// Keeps the end an abandoned read met, behind the leftover bytes, for the next read to
    /// return once: `None` for end of stream, else the error (a reset). An end already kept
    /// stays (the first one met is the one a read would have returned). Nothing on a lane
    /// made by [`Lane::bytes_only`].
    pub fn keep_end(&mut self, error: Option<std::io::Error>) {
        if !self.lane.keeps_ends {
            return;
        }
        let mut st = self.lane.locked.lock();
        if st.end.is_none() {
            st.end = Some(error);
            self.lane.note_leftover(&st);
        }
    }

    /// Takes the kept end, if no leftover bytes come before it: `Ok(0)` for end of stream,
    /// or the error. For readers into other buffer shapes than [`take_kept`]'s (which call
    /// it only with room to read into).
    ///
    /// [`take_kept`]: Self::take_kept
    pub fn take_end(&mut self) -> Option<std::io::Result<usize>> {
        if self.lane.word.load(Relaxed) & END == 0 || self.has_leftover() {
            return None;
        }
        let mut st = self.lane.locked.lock();
        let end = st.end.take();
        self.lane.note_leftover(&st);
        end.map(|e| e.map_or(Ok(0), Err))
    }

    /// Drops a kept end: for a reader that is about to ask the kernel itself, which answers
    /// for the stream as it is now.
    #[inline]
    pub fn forget_end(&mut self) {
        if self.lane.word.load(Relaxed) & END != 0 {
            let mut st = self.lane.locked.lock();
            st.end = None;
            self.lane.note_leftover(&st);
        }
    }

    /// Moves leftover bytes into `buf` (from its start, up to its capacity), as a read would.
    pub fn take_leftover<B: IoBufMut>(&mut self, buf: B) -> (usize, B) {
        self.copy_leftover(buf, true)
    }

    /// Takes all the leftover bytes out of the lane (none: an empty `Vec`): for a file that
    /// gives them back to the kernel by moving its position back over them before a write.
    ///
    /// ```
    /// let lane = ringsteal_rt::io::Lane::new();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.unread(b"abc");
    /// assert_eq!(guard.take_all_leftover(), b"abc");
    /// assert!(!guard.has_leftover());
    /// ```
    pub fn take_all_leftover(&mut self) -> Vec<u8> {
        let mut st = self.lane.locked.lock();
        let all = st.pending().to_vec();
        st.consume(all.len());
        self.lane.note_leftover(&st);
        all
    }

    /// Copies leftover bytes into `buf` without consuming them, as a peek would.
    pub fn peek_leftover<B: IoBufMut>(&mut self, buf: B) -> (usize, B) {
        self.copy_leftover(buf, false)
    }

    /// Copies leftover bytes into `dst` (a borrowed, possibly uninitialised slice, as a
    /// poll-based peek gets) without consuming them; returns how many (0: no leftover).
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    ///
    /// let lane = ringsteal_rt::io::Lane::new();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.unread(b"abc");
    /// let mut dst = [MaybeUninit::<u8>::uninit(); 2];
    /// assert_eq!(guard.peek_leftover_into(&mut dst), 2);
    /// assert_eq!(guard.take_all_leftover(), b"abc", "all still kept");
    /// ```
    pub fn peek_leftover_into(&mut self, dst: &mut [std::mem::MaybeUninit<u8>]) -> usize {
        copy_into(&self.lane, &mut self.lane.locked.lock(), dst, false)
    }

    fn copy_leftover<B: IoBufMut>(&mut self, mut buf: B, consume: bool) -> (usize, B) {
        let mut st = self.lane.locked.lock();
        let n = st.pending().len().min(buf.bytes_total());
        // SAFETY: `buf` is valid for writes of bytes_total() >= n bytes (IoBufMut contract)
        // and cannot overlap the lane's own Vec; the n bytes are then initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(st.pending().as_ptr(), buf.stable_mut_ptr(), n);
            buf.set_init(n);
        }
        if consume {
            st.consume(n);
            self.lane.note_leftover(&st);
        }
        (n, buf)
    }

    /// Moves leftover bytes into `dst` (a borrowed, possibly uninitialised slice, as a
    /// poll-based read gets), as a read would; returns how many (0: no leftover). One lock.
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    ///
    /// let lane = ringsteal_rt::io::Lane::new();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.unread(b"abc");
    /// let mut dst = [MaybeUninit::<u8>::uninit(); 2];
    /// assert_eq!(guard.take_leftover_into(&mut dst), 2);
    /// assert!(guard.has_leftover(), "one byte is still kept");
    /// ```
    pub fn take_leftover_into(&mut self, dst: &mut [std::mem::MaybeUninit<u8>]) -> usize {
        copy_into(&self.lane, &mut self.lane.locked.lock(), dst, true)
    }

    /// Moves leftover bytes into `bufs` in order, as a vectored read would.
    pub fn take_leftover_vectored<B: IoVecBufMut>(&mut self, mut bufs: B) -> (usize, B) {
        let mut st = self.lane.locked.lock();
        let mut done = 0;
        for iov in bufs.iovecs_mut() {
            let n = (st.pending().len() - done).min(iov.iov_len);
            // SAFETY: each iovec describes writable capacity of one of `bufs` (IoVecBufMut
            // contract); n stays within it and within the leftover.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    st.pending().as_ptr().add(done),
                    iov.iov_base.cast::<u8>(),
                    n,
                )
            };
            done += n;
            if done == st.pending().len() {
                break;
            }
        }
        // SAFETY: the first `done` bytes across the buffers, in order, were just written.
        unsafe { bufs.set_init(done) };
        st.consume(done);
        self.lane.note_leftover(&st);
        (done, bufs)
    }

    /// Adds `bytes` at the end of the leftover: the next reads return them after what is
    /// already there (a receive stream giving back, in order, data it received and nobody
    /// took).
    ///
    /// ```
    /// let lane = ringsteal_rt::io::Lane::new();
    /// let mut guard = lane.try_acquire().unwrap();
    /// guard.keep(b"first ");
    /// guard.keep(b"second");
    /// let (n, buf) = guard.take_leftover(Vec::with_capacity(32));
    /// assert_eq!(&buf[..n], b"first second");
    /// ```
    pub fn keep(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut st = self.lane.locked.lock();
        if st.start > 0 {
            let start = st.start;
            st.leftover.drain(..start);
            st.start = 0;
        }
        st.leftover.extend_from_slice(bytes);
        self.lane.note_leftover(&st);
    }

    /// Puts `bytes` back in front of the leftover: the next read returns them first.
    pub fn unread(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut st = self.lane.locked.lock();
        if st.pending().is_empty() {
            st.leftover = bytes.to_vec();
            st.start = 0;
        } else {
            let mut joined = Vec::with_capacity(bytes.len() + st.pending().len());
            joined.extend_from_slice(bytes);
            joined.extend_from_slice(st.pending());
            st.leftover = joined;
            st.start = 0;
        }
        self.lane.note_leftover(&st);
    }
}

/// Copies the kept bytes of `st` (the locked part of `shared`) into `dst`, taking them if
/// `consume` (a read) or not (a peek); how many.
fn copy_into(
    shared: &Shared,
    st: &mut State,
    dst: &mut [std::mem::MaybeUninit<u8>],
    consume: bool,
) -> usize {
    let n = st.pending().len().min(dst.len());
    if n == 0 {
        return 0;
    }
    // SAFETY: `dst` is valid for writes of its length >= n and is a borrow the caller holds,
    // so it cannot overlap the lane's own Vec; MaybeUninit<u8> has u8's layout.
    unsafe {
        std::ptr::copy_nonoverlapping(st.pending().as_ptr(), dst.as_mut_ptr().cast::<u8>(), n)
    };
    if consume {
        st.consume(n);
        shared.note_leftover(st);
    }
    n
}

impl Drop for LaneGuard {
    fn drop(&mut self) {
        self.lane.release();
    }
}

impl std::fmt::Debug for LaneGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneGuard")
            .field("leftover", &self.lane.locked.lock().pending().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct CountWakes(AtomicUsize);
    impl Wake for CountWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker_counting(wakes: &Arc<CountWakes>) -> Waker {
        Waker::from(wakes.clone())
    }

    /// Polls `a`, then `b`, each of which must queue behind the lane's holder.
    fn queue_both(a: &mut Acquire<'_>, b: &mut Acquire<'_>, cx: &mut Context<'_>) {
        assert!(Pin::new(a).poll(cx).is_pending());
        assert!(Pin::new(b).poll(cx).is_pending());
    }

    #[test]
    fn a_kept_end_comes_after_every_kept_byte_and_only_once() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.keep(b"abc");
        g.keep_end(None);
        g.keep_end(Some(std::io::Error::from_raw_os_error(libc::ECONNRESET)));
        assert!(g.take_end().is_none(), "not before the bytes");
        let (n, buf) = g.take_kept(vec![0u8; 2]).ok().unwrap();
        assert_eq!(&buf[..n.unwrap()], b"ab");
        g.unread(b"z");
        let (n, buf) = g.take_kept(vec![0u8; 8]).ok().unwrap();
        assert_eq!(&buf[..n.unwrap()], b"zc");
        // The first end kept is the one a read would have met.
        assert_eq!(g.take_end().unwrap().unwrap(), 0);
        assert!(!g.has_kept() && g.take_end().is_none());
        drop(g);
        assert!(!lane.has_kept());
    }

    #[test]
    fn a_forgotten_end_is_gone_and_the_bytes_stay() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.keep(b"x");
        g.keep_end(None);
        g.forget_end();
        assert!(g.has_leftover() && g.has_kept());
        let (n, _) = g.take_kept(vec![0u8; 8]).ok().unwrap();
        assert_eq!(n.unwrap(), 1);
        assert!(!g.has_kept(), "no end left to serve");
    }

    #[test]
    fn waiters_get_the_lane_in_the_order_they_came_and_a_holder_asking_again_queues() {
        let lane = Lane::new();
        let first = lane.try_acquire().unwrap();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = waker_counting(&wakes);
        let mut cx = Context::from_waker(&waker);
        let (mut a, mut b) = (lane.acquire(), lane.acquire());
        queue_both(&mut a, &mut b, &mut cx);
        drop(first);
        // Handed to `a`: a newcomer, and `b`, find it held.
        assert!(
            lane.try_acquire().is_none(),
            "a newcomer overtook the queue"
        );
        assert!(Pin::new(&mut b).poll(&mut cx).is_pending());
        let Poll::Ready(held_by_a) = Pin::new(&mut a).poll(&mut cx) else {
            panic!("the lane was not handed to the first waiter");
        };
        // `a` lets go and asks again at once (a task writing in a loop): it queues behind `b`.
        drop(held_by_a);
        let mut a_again = lane.acquire();
        assert!(Pin::new(&mut a_again).poll(&mut cx).is_pending());
        let Poll::Ready(held_by_b) = Pin::new(&mut b).poll(&mut cx) else {
            panic!("the second waiter was overtaken");
        };
        drop(held_by_b);
        assert!(Pin::new(&mut a_again).poll(&mut cx).is_ready());
        assert!(wakes.0.load(Ordering::SeqCst) >= 2);
    }

    #[test]
    fn an_owned_acquire_kept_across_polls_keeps_its_place_and_one_waiter_entry() {
        let lane = Lane::new();
        let first = lane.try_acquire().unwrap();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = waker_counting(&wakes);
        let mut cx = Context::from_waker(&waker);
        let mut kept = lane.acquire_owned();
        for _ in 0..100 {
            assert!(Pin::new(&mut kept).poll(&mut cx).is_pending());
        }
        assert_eq!(
            lane.inner.locked.lock().waiters.len(),
            1,
            "one entry, however many polls"
        );
        let mut later = lane.acquire();
        assert!(Pin::new(&mut later).poll(&mut cx).is_pending());
        drop(first);
        assert!(
            Pin::new(&mut later).poll(&mut cx).is_pending(),
            "overtook the queue"
        );
        let Poll::Ready(guard) = Pin::new(&mut kept).poll(&mut cx) else {
            panic!("the lane was not handed to the first waiter");
        };
        drop(guard);
        assert!(Pin::new(&mut later).poll(&mut cx).is_ready());
    }

    #[test]
    fn a_waiter_dropped_after_the_lane_was_handed_to_it_hands_it_on() {
        let lane = Lane::new();
        let first = lane.try_acquire().unwrap();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = waker_counting(&wakes);
        let mut cx = Context::from_waker(&waker);
        let (mut a, mut b) = (lane.acquire(), lane.acquire());
        queue_both(&mut a, &mut b, &mut cx);
        drop(first); // handed to `a`
        drop(a); // which never takes it
        assert!(Pin::new(&mut b).poll(&mut cx).is_ready(), "lost with `a`");
        drop(b);
        let mut c = lane.acquire();
        assert!(Pin::new(&mut c).poll(&mut cx).is_ready(), "free again");
    }

    #[test]
    fn a_poll_free_caller_is_woken_when_the_lane_is_let_go() {
        let lane = Lane::new();
        let first = lane.try_acquire().unwrap();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = waker_counting(&wakes);
        let mut cx = Context::from_waker(&waker);
        assert!(lane.poll_free(&mut cx, |_| ()).is_pending());
        drop(first);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert!(lane.poll_free(&mut cx, |_| ()).is_ready());
        assert!(!lane.is_held());
    }

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let lane = Lane::new();
        let first = lane.try_acquire().unwrap();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut second = lane.acquire();
        assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        drop(first);
        // At least once (Miri's `will_wake` may not recognise the repeat poll's waker).
        assert!(wakes.0.load(Ordering::SeqCst) >= 1);
        assert!(Pin::new(&mut second).poll(&mut cx).is_ready());
    }

    #[test]
    fn poll_free_runs_only_while_no_request_holds_the_lane_and_waits_for_it_otherwise() {
        let lane = Lane::new();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut held = lane.try_acquire().unwrap();
        held.unread(b"kept");
        let mut ran = false;
        assert!(lane.poll_free(&mut cx, |_| ran = true).is_pending());
        assert!(!ran, "nothing runs while a request holds the lane");
        drop(held);
        assert!(wakes.0.load(Ordering::SeqCst) >= 1, "woken when it lets go");
        let mut dst = [std::mem::MaybeUninit::<u8>::uninit(); 3];
        let taken = lane.poll_free(&mut cx, |leftover| leftover.take_into(&mut dst));
        assert_eq!(taken, Poll::Ready(3));
        assert!(lane.has_leftover(), "one byte is still kept");
        assert!(!lane.is_held(), "the lane was never taken");
    }

    #[test]
    fn has_leftover_follows_every_change_of_the_kept_bytes() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        assert!(!g.has_leftover() && !lane.has_leftover());
        g.keep(b"ab");
        assert!(g.has_leftover() && lane.has_leftover());
        let mut one = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        assert_eq!(g.take_leftover_into(&mut one), 1);
        assert!(g.has_leftover(), "one byte is still kept");
        let (n, _) = g.peek_leftover(vec![0u8; 4]);
        assert_eq!(n, 1);
        assert!(g.has_leftover(), "a peek consumes nothing");
        let (n, _) = g.take_leftover_vectored(vec![Vec::with_capacity(4)]);
        assert_eq!(n, 1);
        assert!(!g.has_leftover() && !lane.has_leftover());
        g.unread(b"c");
        drop(g);
        assert!(lane.has_leftover(), "kept across holders");
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes);
        let mut dst = [std::mem::MaybeUninit::<u8>::uninit(); 4];
        let taken = lane.poll_free(&mut Context::from_waker(&waker), |l| l.take_into(&mut dst));
        assert_eq!(taken, Poll::Ready(1));
        assert!(!lane.has_leftover());
        assert!(!lane.try_acquire().unwrap().has_leftover());
    }

    #[test]
    fn a_panicking_poll_free_closure_leaves_the_lane_free() {
        let lane = Lane::new();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes);
        let mut cx = Context::from_waker(&waker);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = lane.poll_free(&mut cx, |_| -> () { panic!("closure fails") });
        }));
        assert!(unwound.is_err());
        assert!(!lane.is_held());
        assert!(
            lane.try_acquire().is_some(),
            "a request can still take the lane"
        );
        assert!(lane.poll_free(&mut cx, |_| ()).is_ready());
    }

    #[test]
    fn no_request_starts_while_a_poll_free_closure_runs() {
        let lane = Lane::new();
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let other = lane.clone();
        let inside = lane.poll_free(&mut cx, |_| {
            // From another thread, as a fast acquire during the closure would be: the lane
            // is taken, so a request cannot start.
            std::thread::scope(|s| s.spawn(|| other.inner.try_hold()).join().unwrap())
        });
        assert_eq!(
            inside,
            Poll::Ready(false),
            "no request starts while the closure runs"
        );
        assert!(!lane.is_held(), "and the lane is free once it has returned");
        assert!(lane.try_acquire().is_some());
    }

    #[test]
    fn leftover_is_served_in_order_across_reads() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.unread(b"world");
        g.unread(b"hello ");
        let (n, a) = g.take_leftover(Vec::with_capacity(4));
        assert_eq!((n, &a[..]), (4, &b"hell"[..]));
        let (n, p) = g.peek_leftover(vec![0u8; 3]);
        assert_eq!((n, &p[..]), (3, &b"o w"[..]));
        let (n, b) = g.take_leftover(Vec::with_capacity(64));
        assert_eq!((n, &b[..]), (7, &b"o world"[..]));
        assert!(!g.has_leftover());
        assert!(!lane.has_leftover());
    }

    #[test]
    fn kept_bytes_follow_the_leftover_already_there() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.keep(b"abc");
        let (n, _) = g.take_leftover(Vec::with_capacity(1));
        assert_eq!(n, 1);
        g.keep(b"de");
        g.keep(b"");
        g.unread(b"_");
        let (n, buf) = g.take_leftover(Vec::with_capacity(16));
        assert_eq!(&buf[..n], b"_bcde");
        assert!(!lane.has_leftover());
    }

    #[test]
    fn a_vectored_take_fills_buffers_in_order() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.unread(b"abcdefg");
        let bufs = vec![
            Vec::with_capacity(2),
            Vec::with_capacity(3),
            Vec::with_capacity(4),
        ];
        let (n, bufs) = g.take_leftover_vectored(bufs);
        assert_eq!(n, 7);
        assert_eq!(bufs, [&b"ab"[..], &b"cde"[..], &b"fg"[..]]);
    }

    #[test]
    fn a_take_into_a_borrowed_slice_consumes_only_what_fits() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        let mut dst = [std::mem::MaybeUninit::<u8>::uninit(); 3];
        assert_eq!(g.take_leftover_into(&mut dst), 0, "nothing kept yet");
        g.unread(b"hello");
        assert_eq!(g.take_leftover_into(&mut dst), 3);
        // SAFETY: the three bytes were just written.
        let got: Vec<u8> = dst.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert_eq!(got, b"hel");
        let (n, rest) = g.take_leftover(Vec::with_capacity(8));
        assert_eq!(&rest[..n], b"lo");
    }

    #[test]
    fn a_peek_into_a_borrowed_slice_copies_and_keeps_everything() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        let mut dst = [std::mem::MaybeUninit::<u8>::uninit(); 3];
        assert_eq!(g.peek_leftover_into(&mut dst), 0, "nothing kept yet");
        g.unread(b"hello");
        assert_eq!(g.peek_leftover_into(&mut dst), 3);
        // SAFETY: the three bytes were just written.
        let got: Vec<u8> = dst.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert_eq!(got, b"hel");
        assert!(g.has_leftover());
        let (n, all) = g.take_leftover(Vec::with_capacity(8));
        assert_eq!(&all[..n], b"hello", "the peek took nothing");
        assert!(!g.has_leftover());
    }

    #[test]
    fn a_take_into_an_initialised_buffer_overwrites_its_start() {
        let lane = Lane::new();
        let mut g = lane.try_acquire().unwrap();
        g.unread(b"xy");
        let (n, buf) = g.take_leftover(b"abcd".to_vec());
        assert_eq!((n, &buf[..]), (2, &b"xycd"[..]));
    }
}

/// Loom models of the state word (`scripts/loom.sh`).
#[cfg(all(test, loom))]
#[path = "lane_loom_tests.rs"]
mod loom_tests;
