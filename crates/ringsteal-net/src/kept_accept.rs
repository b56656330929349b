//! Cancel-safe `accept()`: a connection the kernel accepted for an accept whose future was
//! dropped (the `select!` branch not taken, the `timeout` that fired first), or for a dropped
//! [`Incoming`](crate::Incoming) that nobody took, is kept for the listener's next accept,
//! or its next `Incoming`, instead of being closed: tokio's `accept` loses no connection
//! that way either.
//!
//! The request's output is built at its last completion even when its future is gone (the
//! runtime calls `Operation::complete` for that too, and drops the output): dropped without
//! having been taken, the output puts its connection into [`Kept`] (`op::OnAbandon`).
//!
//! Owns: the kept connections and the accept request that fills them.
//! May not: hold the listener's handle: a dropped listener must stop listening at once
//! (ADR-0010), not when an abandoned accept completes.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use ringsteal_rt::op::{Abandoned, Accept, OnAbandon, Op, SharedFd, SockAddr};

/// Connections accepted for abandoned accepts of one listener, oldest first, and the
/// accepts waiting for one.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// How many are queued: the common case, none, costs `take` a load and no lock.
    count: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    conns: VecDeque<(OwnedFd, SockAddr)>,
    /// Accepts (and `Incoming`s) waiting on the kernel, woken when a connection is kept: an
    /// abandoned request's completion may arrive after they asked the kernel for a new one.
    waiters: Vec<(u64, Waker)>,
    next_waiter: u64,
}

/// A waiter's place among [`Kept`]'s waiters (none until it first waits).
#[derive(Debug, Default)]
pub(crate) struct WaitSlot(Option<u64>);

impl Kept {
    /// The queue; no code panics while holding it, so a poisoned lock is still sound.
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The oldest kept connection, if any.
    pub(crate) fn take(&self) -> Option<(OwnedFd, SockAddr)> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        Self::pop(&mut self.inner(), &self.count)
    }

    fn pop(inner: &mut Inner, count: &AtomicUsize) -> Option<(OwnedFd, SockAddr)> {
        let conn = inner.conns.pop_front();
        if conn.is_some() {
            count.fetch_sub(1, Ordering::Release);
        }
        conn
    }

    /// The oldest kept connection, or `Pending` with `cx`'s waker in `slot`, woken when one
    /// is kept. A waiter that stops waiting gives its slot back ([`stop_waiting`]).
    ///
    /// [`stop_waiting`]: Self::stop_waiting
    pub(crate) fn poll_take(
        &self,
        slot: &mut WaitSlot,
        cx: &mut Context<'_>,
    ) -> Poll<(OwnedFd, SockAddr)> {
        let mut inner = self.inner();
        if let Some(conn) = Self::pop(&mut inner, &self.count) {
            Self::remove(&mut inner, slot);
            return Poll::Ready(conn);
        }
        let waker = cx.waker();
        let id = slot.0;
        match inner.waiters.iter_mut().find(|(w, _)| Some(*w) == id) {
            Some((_, w)) => w.clone_from(waker),
            None => {
                // New, or woken (a keep takes every waiter out).
                let id = inner.next_waiter;
                inner.next_waiter += 1;
                inner.waiters.push((id, waker.clone()));
                slot.0 = Some(id);
            }
        }
        Poll::Pending
    }

    /// Takes `slot`'s waker out, if it is still registered.
    pub(crate) fn stop_waiting(&self, slot: &mut WaitSlot) {
        if slot.0.is_some() {
            Self::remove(&mut self.inner(), slot);
        }
    }

    fn remove(inner: &mut Inner, slot: &mut WaitSlot) {
        if let Some(id) = slot.0.take() {
            inner.waiters.retain(|(w, _)| *w != id);
        }
    }

    fn keep(&self, conn: (OwnedFd, SockAddr)) {
        let waiters = {
            let mut inner = self.inner();
            inner.conns.push_back(conn);
            self.count.fetch_add(1, Ordering::Release);
            std::mem::take(&mut inner.waiters)
        };
        // Usually on the driver's reaping path (an abandoned request's output, a dropped
        // `Incoming`'s sink): the wakes wait for the driver to be free.
        ringsteal_rt::op::wake_after_reap(waiters.into_iter().map(|(_, waker)| waker));
    }

    /// Keeps a connection a dropped `Incoming` accepted (no address came with it: the peer's
    /// is asked for now; a peer already gone leaves it empty, and the `accept()` that takes
    /// it asks again, as it does for any address it cannot read).
    pub(crate) fn keep_accepted(&self, conn: OwnedFd) {
        let peer = SockAddr::peer_of(conn.as_fd()).unwrap_or_else(|_| SockAddr::empty());
        self.keep((conn, peer));
    }
}

/// One connection from the listener `fd`: a kept one first, else a new accept request whose
/// connection, if its future is dropped after the kernel accepted, goes to `kept`. While the
/// request waits, a connection kept meanwhile (an abandoned request completed late) is
/// taken instead, and this request is dropped in turn, keeping what it may have accepted.
pub(crate) async fn accept(fd: &SharedFd, kept: &Arc<Kept>) -> io::Result<(OwnedFd, SockAddr)> {
    if let Some(conn) = kept.take() {
        return Ok(conn);
    }
    let mut op = std::pin::pin!(Op::new(OnAbandon::new(
        Accept::new(fd),
        KeepConnection(kept.clone())
    )));
    let mut waiting = Waiting {
        kept,
        slot: WaitSlot::default(),
    };
    std::future::poll_fn(|cx| {
        if let Poll::Ready(accepted) = op.as_mut().poll(cx) {
            return Poll::Ready(accepted.into_inner());
        }
        kept.poll_take(&mut waiting.slot, cx).map(Ok)
    })
    .await
}

/// Gives a waiting accept's slot back when it ends, however it ends.
struct Waiting<'a> {
    kept: &'a Kept,
    slot: WaitSlot,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.kept.stop_waiting(&mut self.slot);
    }
}

/// Where an abandoned accept's connection goes: the listener's kept queue.
struct KeepConnection(Arc<Kept>);

impl Abandoned<io::Result<(OwnedFd, SockAddr)>> for KeepConnection {
    fn abandoned(self, conn: io::Result<(OwnedFd, SockAddr)>) {
        if let Ok(conn) = conn {
            self.0.keep(conn);
        }
    }
}
