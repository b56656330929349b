//! Cancel-safe datagram receives: a datagram the kernel delivered to a receive whose future
//! was dropped (the `select!` branch not taken, the `timeout` that fired first) is kept for
//! the socket's next receive instead of being lost, as tokio's `recv` and `recv_from` lose
//! none that way.
//!
//! The request's output is built at its last completion even when its future is gone (the
//! runtime calls `Operation::complete` for that too, and drops the output): dropped without
//! having been taken, the output copies its datagram into [`KeptDatagrams`]. Receives, peeks,
//! `try_recv`s and readiness waits look there first, so concurrent receives still run side
//! by side (no lane); only a kept datagram costs a lock. Every receive is a `RECVMSG`, also
//! `recv` on a connected socket, so that a kept datagram always has its sender for a
//! `recv_from` that takes it.
//!
//! A receive dropped while its request is in flight is counted until that request ends
//! (its cancel lands within a tick): a new receive waits for those first, then looks at
//! the kept datagrams, and only then asks the kernel. Otherwise a `select!` loop's next
//! receive would be in the kernel already when the dropped one's datagram is kept, and
//! would wait for another datagram with that one stuck in the queue. The receives that do
//! not wait (`try_recv`, `try_recv_buf`, `try_io`) say `WouldBlock` meanwhile, rather than
//! take a later datagram from the kernel ahead of it. A receive already waiting in the
//! kernel (another task's) does not take a datagram kept after it started; the next
//! receive does. A kept datagram is what the dropped receive's buffer held: a longer one
//! was cut to that buffer by the kernel (tokio's dropped receive, which took nothing, loses
//! nothing of it).
//!
//! Owns: the kept datagrams and the receives that fill them.
//! May not: hold the socket's descriptor (a dropped socket closes at once).

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::op::{Abandoned, OnAbandon, Op, RecvFrom, SharedFd, SockAddr};

/// The most datagrams kept per socket. Each is one a dropped receive took, so reaching it
/// takes that many dropped receives with nothing received in between; past it the newest
/// is discarded, as the kernel discards datagrams that find a full receive buffer.
pub(crate) const KEPT_LIMIT: usize = 1024;

/// One datagram a dropped receive took: what its buffer held, and its sender.
#[derive(Debug)]
struct Kept {
    payload: Box<[u8]>,
    from: SockAddr,
}

/// The datagrams of a socket's dropped receives, oldest first, and the dropped receives
/// whose requests are still in flight.
#[derive(Debug, Default)]
pub(crate) struct KeptDatagrams {
    /// How many are queued: the common case, none, costs a receive a load and no lock.
    count: AtomicUsize,
    /// Receives dropped with their request in flight, until it ends (lowered under the
    /// lock, so a waiter that saw it above zero is woken).
    abandoned: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    queue: VecDeque<Kept>,
    /// Receives waiting for the abandoned ones to end.
    waiters: Vec<Waker>,
}

impl KeptDatagrams {
    /// The queue; no code panics while holding it, so a poisoned lock is still sound.
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no dropped receive's request is in flight (its datagram, if it got one,
    /// is kept by then): the first step of every receive and readiness wait.
    pub(crate) async fn abandoned_ended(&self) {
        poll_fn(|cx| self.poll_abandoned_ended(cx)).await;
    }

    /// `WouldBlock` while a dropped receive's request is in flight: the datagram it may
    /// hold came before any the kernel still has, so a receive that does not wait must not
    /// take one of those first (the waiting forms wait for it, as `readable` does).
    pub(crate) fn none_in_flight(&self) -> io::Result<()> {
        match self.abandoned.load(Ordering::Acquire) {
            0 => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "a dropped receive's datagram comes first: wait until the socket is readable",
            )),
        }
    }

    pub(crate) fn poll_abandoned_ended(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.abandoned.load(Ordering::Acquire) == 0 {
            return Poll::Ready(());
        }
        let mut inner = self.inner();
        if self.abandoned.load(Ordering::Acquire) == 0 {
            return Poll::Ready(());
        }
        if !inner.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            inner.waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// A dropped receive's request ended: wakes the receives waiting for that, after the
    /// reap that got here (they may run on this shard).
    fn one_abandoned_ended(&self) {
        debug_assert!(self.abandoned.load(Ordering::Acquire) > 0);
        let waiters = {
            let mut inner = self.inner();
            self.abandoned.fetch_sub(1, Ordering::AcqRel);
            std::mem::take(&mut inner.waiters)
        };
        ringsteal_rt::op::wake_after_reap(waiters);
    }

    /// True if a datagram is kept: a read would not wait.
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    fn keep(&self, payload: &[u8], from: SockAddr) {
        let mut inner = self.inner();
        if inner.queue.len() < KEPT_LIMIT {
            inner.queue.push_back(Kept {
                payload: payload.into(),
                from,
            });
            self.count.store(inner.queue.len(), Ordering::Release);
        }
    }

    /// Copies the oldest kept datagram to `dst` (cut to `room` bytes, as a receive cuts a
    /// longer datagram) and, unless `peek`, takes it from the queue. Yields the bytes copied
    /// and the sender.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `room` bytes (initialised or not).
    unsafe fn copy_oldest(
        &self,
        peek: bool,
        dst: *mut u8,
        room: usize,
    ) -> Option<(usize, SockAddr)> {
        if !self.any() {
            return None;
        }
        let mut inner = self.inner();
        let queue = &mut inner.queue;
        let oldest = queue.front()?;
        let n = oldest.payload.len().min(room);
        // SAFETY: the caller's contract covers `room` >= n bytes at `dst`; the payload is
        // a separate allocation, so the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(oldest.payload.as_ptr(), dst, n) };
        let from = oldest.from;
        if !peek {
            queue.pop_front();
            self.count.store(queue.len(), Ordering::Release);
        }
        Some((n, from))
    }

    /// [`copy_oldest`](Self::copy_oldest) into an owned buffer, from its start.
    fn copy_oldest_into<B: IoBufMut>(&self, peek: bool, buf: &mut B) -> Option<(usize, SockAddr)> {
        // SAFETY: `IoBufMut`'s contract: `stable_mut_ptr` points at `bytes_total()` bytes
        // the buffer lets be written.
        let got = unsafe { self.copy_oldest(peek, buf.stable_mut_ptr(), buf.bytes_total()) }?;
        // SAFETY: the first `got.0` bytes were just written.
        unsafe { buf.set_init(got.0) };
        Some(got)
    }

    /// Takes the oldest kept datagram into `dst` without waiting (`try_recv`'s first step),
    /// or, if `peek`, copies it and leaves it queued (`try_peek_from`'s).
    pub(crate) fn copy_into_slice(&self, peek: bool, dst: &mut [u8]) -> Option<(usize, SockAddr)> {
        // SAFETY: a slice is valid for writes of its length.
        unsafe { self.copy_oldest(peek, dst.as_mut_ptr(), dst.len()) }
    }

    /// Takes the oldest kept datagram into memory not initialised yet (`try_recv_buf`'s
    /// first step): on `Some((n, _))` the first `n` bytes of `dst` are.
    #[cfg(feature = "bytes")]
    pub(crate) fn take_into_uninit(
        &self,
        dst: &mut [std::mem::MaybeUninit<u8>],
    ) -> Option<(usize, SockAddr)> {
        // SAFETY: a slice is valid for writes of its length, initialised or not.
        unsafe { self.copy_oldest(false, dst.as_mut_ptr().cast(), dst.len()) }
    }
}

/// Where an abandoned receive's datagram goes: the socket's kept queue, and the count of
/// abandoned receives falls.
struct KeepDatagram(Arc<KeptDatagrams>);

impl<B: IoBuf> Abandoned<BufResult<(usize, SockAddr), B>> for KeepDatagram {
    fn abandoned(self, (res, buf): BufResult<(usize, SockAddr), B>) {
        /// Counts the request as ended even if keeping its datagram unwinds.
        struct Ended<'a>(&'a KeptDatagrams);
        impl Drop for Ended<'_> {
            fn drop(&mut self) {
                self.0.one_abandoned_ended();
            }
        }
        let _ended = Ended(&self.0);
        if let Ok((n, from)) = res {
            self.0.keep(received(&buf, n), from);
        }
    }
}

/// A receive's request, counted as abandoned if it is dropped while in flight (its output,
/// dropped by the runtime at the request's end, goes to [`KeepDatagram`], which counts it
/// as ended).
struct Abandonable<'a, B: IoBufMut> {
    op: Op<OnAbandon<RecvFrom<B>, KeepDatagram>>,
    kept: &'a KeptDatagrams,
    /// The last poll left the request in flight.
    in_flight: bool,
}

impl<'a, B: IoBufMut> Abandonable<'a, B> {
    fn new(fd: &SharedFd, buf: B, kept: &'a Arc<KeptDatagrams>) -> Self {
        let op = Op::new(OnAbandon::new(
            RecvFrom::new(fd, buf),
            KeepDatagram(kept.clone()),
        ));
        Self {
            op,
            kept,
            in_flight: false,
        }
    }

    async fn run(mut self) -> BufResult<(usize, SockAddr), B> {
        let out = poll_fn(|cx| {
            let polled = Pin::new(&mut self.op).poll(cx);
            self.in_flight = polled.is_pending();
            polled
        })
        .await;
        out.into_inner()
    }
}

impl<B: IoBufMut> Drop for Abandonable<'_, B> {
    fn drop(&mut self) {
        // Before `op` is dropped (fields drop after this): its output may be dropped, and
        // counted as ended, right then. A request never submitted (no poll yet) has no
        // output, and one whose output was taken is not in flight.
        if self.in_flight {
            self.kept.abandoned.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// The bytes a receive put into `buf` (its count clamped to what the buffer holds).
fn received<B: IoBuf>(buf: &B, n: usize) -> &[u8] {
    let n = n.min(buf.bytes_init());
    if n == 0 {
        return &[];
    }
    // SAFETY: `IoBuf`'s contract: `stable_ptr` points at `bytes_init()` initialised bytes,
    // and n <= bytes_init(); not null, as n > 0.
    unsafe { std::slice::from_raw_parts(buf.stable_ptr(), n) }
}

/// The error for a receive into a buffer with no room: the kernel would take a datagram
/// and discard all of it.
pub(crate) fn no_room() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a datagram receive needs a buffer with room (capacity 0 would discard the datagram)",
    )
}

/// `recv_from` (`peek`: `peek_from`) on a datagram socket: the oldest kept datagram, else one
/// `IORING_OP_RECVMSG`, whose datagram is kept if the future is dropped (a peek's stays
/// queued in the kernel). `recv` is this without the address.
pub(crate) async fn recv_from<B: IoBufMut>(
    fd: &SharedFd,
    kept: &Arc<KeptDatagrams>,
    mut buf: B,
    peek: bool,
) -> BufResult<(usize, SockAddr), B> {
    if buf.bytes_total() == 0 {
        return (Err(no_room()), buf);
    }
    kept.abandoned_ended().await;
    if let Some(got) = kept.copy_oldest_into(peek, &mut buf) {
        return (Ok(got), buf);
    }
    if peek {
        Op::new(RecvFrom::peeking(fd, buf)).await
    } else {
        Abandonable::new(fd, buf, kept).run().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_datagrams_come_back_oldest_first_cut_to_fit_and_bounded() {
        let kept = KeptDatagrams::default();
        let from = SockAddr::empty();
        assert!(!kept.any());
        kept.keep(b"first", from);
        kept.keep(b"second", from);
        let mut small = [0; 3];
        // SAFETY: `small` is valid for writes of its 3 bytes.
        let peeked = unsafe { kept.copy_oldest(true, small.as_mut_ptr(), small.len()) };
        assert_eq!(peeked.map(|(n, _)| n), Some(3));
        assert_eq!(&small, b"fir", "a peek cuts to fit and leaves it queued");
        let mut buf = Vec::with_capacity(16);
        assert_eq!(
            kept.copy_oldest_into(false, &mut buf).map(|(n, _)| n),
            Some(5)
        );
        assert_eq!(buf, b"first");
        assert_eq!(
            kept.copy_into_slice(false, &mut [0; 16]).map(|(n, _)| n),
            Some(6)
        );
        assert!(!kept.any());
        for _ in 0..KEPT_LIMIT + 5 {
            kept.keep(b"x", from);
        }
        assert_eq!(kept.inner().queue.len(), KEPT_LIMIT);
    }
}
