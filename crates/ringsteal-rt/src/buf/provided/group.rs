//! [`BufGroup`]: one shard's provided-buffer ring (`IORING_REGISTER_PBUF_RING`), shared by the
//! shard (whose multishot receives select from it) and every [`RecvBuf`] taken from it.
//!
//! This is the one place the runtime uses `ringsteal_uring::BufRing`: registering it on the
//! shard's ring, taking the buffer a completion names, handing buffers back (from any thread),
//! and its lifetime at shutdown.
//!
//! Lifetime: the shard registers the group on its own ring, on its own thread, the first
//! time a stream needs it. The group is retired when the shard's driver is dropped, after
//! the shutdown drain has reaped the last CQE of every request that selects from it; if the
//! drain did not finish, the group is leaked (the kernel may still write into its buffers).
//! On retirement, if no buffer is held, the `BufRing` is dropped at once (unregistered from
//! the live ring, unmapped). Otherwise it stays until the last held buffer comes back, so the
//! buffers stay mapped for their holders; its own share of the ring's descriptor keeps the
//! io_uring instance alive that long, so its unregistration names the right ring rather than
//! a descriptor number that a later ring may have reused. The last buffer usually comes back
//! on another thread, which the shard's `SINGLE_ISSUER` ring refuses to unregister from; the
//! `BufRing` then holds the last share of the descriptor, and its drop closes the ring (which
//! ends the group) before it unmaps the memory. If the drain did not finish, the
//! group is abandoned: the `BufRing` is leaked but lets go of the descriptor, so the ring
//! still closes (and the kernel cancels what is in flight on it).
//!
//! May not: submit anything or wake anyone while locked (wakers are returned, or woken after
//! the lock is released).

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Waker;

use parking_lot::Mutex;
use ringsteal_uring::{io_uring_cqe, BufRing, Ring};

use super::ledger::{Ledger, WaiterKey};
use super::RecvBuf;
use crate::util::contain_panic;

/// The buffer group id every shard uses on its own ring.
pub(crate) const RECV_GROUP: u16 = 0;

/// A shard's provided-buffer group.
pub(crate) struct BufGroup {
    inner: Mutex<Inner>,
    buf_len: u32,
    /// The shard's `bufs_in_use` gauge (the runtime's stats read it).
    in_use: Arc<AtomicU64>,
}

struct Inner {
    ledger: Ledger,
    /// The registered ring and its buffers; `None` once released (or abandoned).
    bufs: Option<BufRing>,
}

impl BufGroup {
    /// Registers `count` buffers of `buf_len` bytes with `ring` as group [`RECV_GROUP`].
    /// Must run on the ring's own thread (`SINGLE_ISSUER` rings refuse registration from
    /// others).
    pub(crate) fn register(
        ring: &Ring,
        count: u16,
        buf_len: u32,
        in_use: Arc<AtomicU64>,
    ) -> io::Result<Arc<Self>> {
        let bufs = BufRing::new(ring, RECV_GROUP, count, buf_len)?;
        Ok(Arc::new(Self {
            inner: Mutex::new(Inner {
                ledger: Ledger::new(u32::from(count)),
                bufs: Some(bufs),
            }),
            buf_len,
            in_use,
        }))
    }

    /// The group id to name in SQEs.
    pub(crate) fn id(&self) -> u16 {
        RECV_GROUP
    }

    /// Takes the buffer a completion `(res, flags)` names, if it names one
    /// (`IORING_CQE_F_BUFFER`): the application holds it from here until the `RecvBuf` is
    /// dropped. Its length is `res` (0 for an end of file or an error that still consumed a
    /// buffer, which the caller then simply drops).
    ///
    /// # Safety
    /// `(res, flags)` is a completion the kernel posted on this group's ring for a request
    /// that selected from this group, taken once.
    pub(crate) unsafe fn take(self: &Arc<Self>, res: i32, flags: u32) -> Option<RecvBuf> {
        // No buffer named: nothing to take (and no lock to take for it).
        BufRing::buffer_id(flags)?;
        let cqe = io_uring_cqe {
            user_data: 0,
            res,
            flags,
        };
        let mut inner = self.inner.lock();
        let Inner { ledger, bufs, .. } = &mut *inner;
        // A group is retired only after the last CQE of every request selecting from it.
        let bufs = bufs.as_mut()?;
        // SAFETY: forwarded from the caller: the kernel is done writing that buffer.
        let (bid, data) = unsafe { bufs.take(&cqe) }?;
        let (ptr, len) = (data.as_ptr(), data.len());
        if !ledger.taken() {
            // Not reachable: `BufRing::take` refuses a buffer that is already held.
            bufs.recycle(bid);
            return None;
        }
        self.in_use
            .store(u64::from(ledger.in_use()), Ordering::Relaxed);
        drop(inner);
        // SAFETY: `ptr` points into the group's buffer mapping, which stays mapped while this
        // `RecvBuf` holds the group; `BufRing` hands out slices of a fixed mapping.
        Some(unsafe {
            RecvBuf::provided(
                self.clone(),
                bid,
                NonNull::new_unchecked(ptr as *mut u8),
                len,
            )
        })
    }

    /// Gives buffer `bid` back to the kernel (from any thread). Returns the stalled streams
    /// to wake, if that made enough buffers free for them.
    pub(crate) fn give_back(&self, bid: u16) -> Vec<Waker> {
        let mut inner = self.inner.lock();
        let back = inner.ledger.given_back();
        self.in_use
            .store(u64::from(inner.ledger.in_use()), Ordering::Relaxed);
        if back.recycle {
            if let Some(bufs) = inner.bufs.as_mut() {
                bufs.recycle(bid);
            }
        }
        if back.release {
            let bufs = inner.bufs.take();
            drop(inner);
            drop(bufs);
        }
        back.wake
    }

    /// A multishot receive ended for want of buffers: true if the stream should re-arm now,
    /// false if its waker was registered to be woken once enough buffers came back.
    pub(crate) fn ready_or_wait(&self, key: &mut Option<WaiterKey>, waker: &Waker) -> bool {
        self.inner.lock().ledger.ready_or_wait(key, waker)
    }

    /// A stalled stream went away.
    pub(crate) fn forget_waiter(&self, key: &mut Option<WaiterKey>) {
        if key.is_some() {
            self.inner.lock().ledger.forget(key);
        }
    }

    /// Retires the group: its shard's ring has reaped the last CQE of every request that
    /// selects from it and is about to be closed. Runs on the shard's thread. If no buffer
    /// is held the group is unregistered and unmapped now; otherwise when the last buffer
    /// comes back (see the module docs).
    pub(crate) fn retire(&self) {
        let mut inner = self.inner.lock();
        let (wake, release_now) = inner.ledger.retire();
        let bufs = if release_now { inner.bufs.take() } else { None };
        drop(inner);
        drop(bufs);
        wake_contained(wake);
    }

    /// Gives the group up while requests that select from it may still be in flight (the
    /// shutdown drain did not finish): its memory is never freed, since the kernel may still
    /// write into it, but the ring may close. Buffers still held stay valid; nothing goes
    /// back to the kernel.
    pub(crate) fn abandon(&self) {
        let mut inner = self.inner.lock();
        let (wake, _) = inner.ledger.retire();
        let bufs = inner.bufs.take();
        drop(inner);
        if let Some(bufs) = bufs {
            bufs.leak();
        }
        wake_contained(wake);
    }
}

/// Wakes the streams that waited for buffers, at the group's retirement (a shard's
/// shutdown): a panic in a user's waker is contained, so it cannot cut the drain short.
fn wake_contained(wakers: Vec<Waker>) {
    for w in wakers {
        contain_panic(|| w.wake());
    }
}

impl std::fmt::Debug for BufGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufGroup")
            .field("group", &RECV_GROUP)
            .field("buf_len", &self.buf_len)
            .field("in_use", &self.in_use.load(Ordering::Relaxed))
            .finish()
    }
}
