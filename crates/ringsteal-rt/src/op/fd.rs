//! [`SharedFd`]: a file descriptor shared by its owner and the ops in flight on it, closed
//! only when the last of them lets go, so an op never acts on a reused descriptor number;
//! and [`IntoOwned`], for the owner who wants it back (to close it and hear the result) once
//! the others have let go.
//!
//! Every op clones the handle and drops it at its end, so the count is one word: the number
//! of holders, which is also the reference count of the allocation (one locked instruction
//! per clone and per drop), and two flags for the owner waiting in `into_owned`: `WAITING`
//! (it registered its waker; cleared again if it gives up waiting) and `LEAVING` (the holder
//! whose drop leaves the owner alone is between letting go and waking it). Exactly one
//! party frees the allocation: the holder whose drop takes the count to 0 with `LEAVING`
//! clear, or else the leaving holder, which sees the count at 0 when it clears `LEAVING`.

use std::fmt;
use std::future::Future;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU8, AtomicUsize, Ordering::*};
use std::task::{Context, Poll};

use crate::sync::atomic_waker::AtomicWaker;

/// In `Inner::state`: the owner waits in `into_owned` (its waker is registered).
const WAITING: usize = 1 << (usize::BITS - 1);
/// In `Inner::state`: a holder let go, leaving the waiting owner alone, and has not woken it
/// yet: the allocation is still in use.
const LEAVING: usize = 1 << (usize::BITS - 2);
/// In `Inner::state`: the number of holders.
const COUNT: usize = !(WAITING | LEAVING);

/// In `Inner::kind`: not asked yet.
const KIND_UNKNOWN: u8 = 0;
/// In `Inner::kind`: a regular file or a block device.
const KIND_ON_ITS_OWN: u8 = 1;
/// In `Inner::kind`: anything else (a pipe, a socket, a terminal, an eventfd...).
const KIND_MAY_WAIT: u8 = 2;

/// True if `fd` is a regular file or a block device (`fstat`; false if that fails).
fn kind_completes_on_its_own(fd: RawFd) -> bool {
    // SAFETY: all-zero is a valid `stat`, which fstat fills; the caller's holder keeps `fd`
    // open for the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    matches!(st.st_mode & libc::S_IFMT, libc::S_IFREG | libc::S_IFBLK)
}

/// A reference-counted owned descriptor. Every op on it holds a clone until its last CQE.
///
/// ```
/// use ringsteal_rt::op::SharedFd;
/// use std::os::fd::AsRawFd;
///
/// let file = std::fs::File::open("/dev/null").unwrap();
/// let raw = file.as_raw_fd();
/// let fd = SharedFd::new(file.into());
/// assert_eq!(fd.as_raw_fd(), raw);
/// ```
pub struct SharedFd {
    inner: NonNull<Inner>,
}

// SAFETY: a counted reference to `Inner`, which is Send and Sync (a descriptor, atomics and
// the waker slot), like an `Arc<Inner>`.
unsafe impl Send for SharedFd {}
// SAFETY: as above.
unsafe impl Sync for SharedFd {}

struct Inner {
    fd: OwnedFd,
    /// What [`SharedFd::completes_on_its_own`] found (`KIND_*`), asked once.
    kind: AtomicU8,
    /// Holders (`COUNT`), `WAITING` and `LEAVING`. The last holder frees the allocation.
    state: AtomicUsize,
    /// The holder waiting in `into_owned`, if any.
    last_holder: AtomicWaker,
}

impl SharedFd {
    /// Takes ownership of `fd`.
    pub fn new(fd: OwnedFd) -> Self {
        let inner = Box::new(Inner {
            fd,
            kind: AtomicU8::new(KIND_UNKNOWN),
            state: AtomicUsize::new(1),
            last_holder: AtomicWaker::new(),
        });
        Self {
            inner: NonNull::from(Box::leak(inner)),
        }
    }

    /// True if the descriptor's reads and writes complete without anything outside the
    /// process acting: a regular file or a block device, not a pipe, a terminal or a
    /// socket. A paused clock ([`time::pause`](crate::time::pause)) does not auto-advance
    /// while a read or write of such a descriptor (`read_at`, `write_at`, `readv_at`,
    /// `writev_at`, at any offset; a `copy_linked` between two) is in flight, as tokio's
    /// does not while its blocking pool runs a file call; a read of a pipe or a socket
    /// (whose offset io_uring ignores) may wait for a peer for ever, and holding the clock
    /// for it would stop a paused test's time. Asked of the kernel (`fstat`) the first time,
    /// which only a paused clock does, and kept.
    ///
    /// ```
    /// use ringsteal_rt::op::SharedFd;
    ///
    /// let file = SharedFd::new(std::fs::File::open("/proc/self/stat").unwrap().into());
    /// assert!(file.completes_on_its_own());
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// assert!(!SharedFd::new(a.into()).completes_on_its_own());
    /// ```
    pub fn completes_on_its_own(&self) -> bool {
        match self.inner().kind.load(Relaxed) {
            KIND_ON_ITS_OWN => true,
            KIND_MAY_WAIT => false,
            _ => {
                let own = kind_completes_on_its_own(self.as_raw_fd());
                let kind = if own { KIND_ON_ITS_OWN } else { KIND_MAY_WAIT };
                self.inner().kind.store(kind, Relaxed);
                own
            }
        }
    }

    #[inline]
    fn inner(&self) -> &Inner {
        // SAFETY: this holder's count keeps the allocation alive.
        unsafe { self.inner.as_ref() }
    }

    /// The descriptor, if no op (and no clone) holds it any more.
    pub fn try_unwrap(self) -> Result<OwnedFd, Self> {
        let state = self.inner().state.load(Acquire);
        // Alone, and nobody who let go still touches the allocation (`LEAVING`).
        if state & COUNT != 1 || state & LEAVING != 0 {
            return Err(self);
        }
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the only holder, and every other one is done with the allocation (the
        // Acquire load saw their last writes): it is ours to take apart, once.
        let inner = unsafe { Box::from_raw(this.inner.as_ptr()) };
        Ok(inner.fd)
    }

    /// Waits until every other holder (ops in flight on the descriptor, and clones) has let
    /// go, then yields the descriptor. An op dropped while in flight lets go when its
    /// cancellation completes; one still awaited, when it completes (a zero-copy send, when
    /// it has posted its result: its buffer waits for the notification, the descriptor
    /// does not).
    ///
    /// Meant for the owner: two holders waiting this way at once wait for each other for
    /// ever, as does one whose own task holds an op on the descriptor that it awaits only
    /// afterwards.
    ///
    /// ```
    /// use ringsteal_rt::op::SharedFd;
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let fd = SharedFd::new(std::fs::File::open("/dev/null").unwrap().into());
    ///     let held = fd.clone();
    ///     let later = ringsteal_rt::spawn(async move { drop(held) });
    ///     let owned = fd.into_owned().await;
    ///     later.await.unwrap();
    ///     drop(owned);
    /// });
    /// ```
    pub fn into_owned(self) -> IntoOwned {
        IntoOwned { fd: Some(self) }
    }

    /// Number of holders (the owner plus ops in flight plus clones).
    pub fn holders(&self) -> usize {
        self.inner().state.load(Acquire) & COUNT
    }
}

impl Clone for SharedFd {
    #[inline]
    fn clone(&self) -> Self {
        let prev = self.inner().state.fetch_add(1, Relaxed);
        if prev & COUNT >= COUNT / 2 {
            // As `Arc`: a count this high means clones are being leaked.
            std::process::abort();
        }
        Self { inner: self.inner }
    }
}

impl Drop for SharedFd {
    #[inline]
    fn drop(&mut self) {
        let inner = self.inner();
        let mut cur = inner.state.load(Relaxed);
        loop {
            // Leaving the waiting owner alone: mark it, so that it does not free the
            // allocation before its waker was taken and `LEAVING` cleared.
            let next = if cur & WAITING != 0 && cur & COUNT == 2 {
                (cur - 1) | LEAVING
            } else {
                cur - 1
            };
            // Release: this holder's uses of the descriptor come before whoever frees it.
            match inner
                .state
                .compare_exchange_weak(cur, next, Release, Relaxed)
            {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        // Only the two ends that still own a claim on the allocation may touch it again: any
        // other holder's last access was the decrement above, after which the owner may free
        // it (even making a reference to it, as `let_go` does, would race with that). The
        // last holder's claim is void while a leaving holder still uses the allocation
        // (`LEAVING`): that one frees it instead.
        if (cur & COUNT == 1 && cur & LEAVING == 0) || (cur & WAITING != 0 && cur & COUNT == 2) {
            self.let_go(cur);
        }
    }
}

impl SharedFd {
    /// The rarer ends of a drop that took the count down from `before`: the last holder
    /// frees the allocation; the one that left the waiting owner alone wakes it.
    #[cold]
    #[inline(never)]
    fn let_go(&self, before: usize) {
        let inner = self.inner();
        if before & WAITING != 0 && before & COUNT == 2 {
            let waiter = inner.last_holder.take();
            // This holder's last use of the allocation: the owner may take it apart once it
            // sees `LEAVING` clear. If the owner let go meanwhile (it gave up waiting and
            // dropped its handle, taking the count to 0 while `LEAVING` was set), freeing is
            // left to us; Acquire: after its uses.
            let prev = inner.state.fetch_and(!LEAVING, AcqRel);
            if prev & COUNT == 0 {
                // SAFETY: no holder is left and the one that took the count to 0 saw
                // `LEAVING` set, so it did not free the allocation: ours to free, once.
                drop(unsafe { Box::from_raw(self.inner.as_ptr()) });
            }
            if let Some(w) = waiter {
                // A holder may let go inside the driver's reap (an op cell freed there, a
                // zero-copy send dropping its descriptor at its result): then the wake waits
                // until the driver is free, as every wake from that path does.
                crate::util::wake_later::wake_all([w]);
            }
        } else if before & COUNT == 1 {
            // The last holder: every other one let go (Release), seen through this fence.
            fence(Acquire);
            // SAFETY: no holder is left: the allocation is ours to free, once.
            drop(unsafe { Box::from_raw(self.inner.as_ptr()) });
        }
    }
}

impl AsRawFd for SharedFd {
    #[inline]
    fn as_raw_fd(&self) -> RawFd {
        self.inner().fd.as_raw_fd()
    }
}

impl fmt::Debug for SharedFd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedFd")
            .field("fd", &self.as_raw_fd())
            .field("holders", &self.holders())
            .finish()
    }
}

/// The future returned by [`SharedFd::into_owned`]: completes with the [`OwnedFd`](std::os::fd::OwnedFd)
/// once every other holder (clones, ops in flight) has let go, so the descriptor can be
/// closed or handed on knowing no request still names it.
///
/// ```
/// use ringsteal_rt::op::{self, SharedFd};
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
///     let fd = SharedFd::new(a.into());
///     op::send(&fd, "bye", 0).await.0.unwrap();
///     assert_eq!(fd.holders(), 1); // the send's hold ended with it
///     let owned: std::os::fd::OwnedFd = fd.into_owned().await;
///     op::close(owned).await.unwrap();
/// });
/// ```
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct IntoOwned {
    fd: Option<SharedFd>,
}

impl Drop for IntoOwned {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            // Given up waiting: no holder may take this owner for waiting any more (a stale
            // `WAITING` would make every later drop at two holders a "leaving" one).
            fd.inner().state.fetch_and(!WAITING, AcqRel);
            drop(fd);
        }
    }
}

impl Future for IntoOwned {
    type Output = OwnedFd;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<OwnedFd> {
        let fd = self.fd.take().expect("IntoOwned polled after it completed");
        // Registered, then announced, before looking: a holder that leaves us alone after
        // the look sees WAITING and wakes us.
        fd.inner().last_holder.register(cx.waker());
        fd.inner().state.fetch_or(WAITING, AcqRel);
        match fd.try_unwrap() {
            Ok(owned) => Poll::Ready(owned),
            Err(fd) => {
                if fd.holders() == 1 {
                    // The last other holder is between letting go and waking us: look again
                    // soon.
                    cx.waker().wake_by_ref();
                }
                self.fd = Some(fd);
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The two ends of a pipe: a descriptor Miri can make too (it cannot open files).
    fn pipe() -> (std::fs::File, OwnedFd) {
        use std::os::fd::FromRawFd;
        let mut ends = [0; 2];
        // SAFETY: `ends` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors, each owned once from here on.
        unsafe {
            (
                std::fs::File::from_raw_fd(ends[0]),
                OwnedFd::from_raw_fd(ends[1]),
            )
        }
    }

    fn shared() -> SharedFd {
        SharedFd::new(pipe().1)
    }

    #[test]
    fn try_unwrap_gives_the_descriptor_back_only_to_the_last_holder() {
        let fd = shared();
        let other = fd.clone();
        assert_eq!(fd.holders(), 2);
        let fd = fd.try_unwrap().unwrap_err();
        drop(other);
        assert_eq!(fd.holders(), 1);
        assert!(fd.try_unwrap().is_ok());
    }

    #[test]
    fn into_owned_waits_until_every_other_holder_let_go_on_any_thread() {
        use std::sync::mpsc;
        use std::task::Wake;

        struct Notify(mpsc::Sender<()>);
        impl Wake for Notify {
            fn wake(self: Arc<Self>) {
                let _ = self.0.send(());
            }
        }
        let rounds = if cfg!(miri) { 10 } else { 100 };
        for _ in 0..rounds {
            let fd = shared();
            let holders: Vec<SharedFd> = (0..3).map(|_| fd.clone()).collect();
            let (tx, rx) = mpsc::channel();
            let waker = std::task::Waker::from(Arc::new(Notify(tx)));
            let mut cx = Context::from_waker(&waker);
            let mut owned = fd.into_owned();
            assert!(Pin::new(&mut owned).poll(&mut cx).is_pending());
            let threads: Vec<_> = holders
                .into_iter()
                .map(|h| std::thread::spawn(move || drop(h)))
                .collect();
            // Polled again at each wake until ready: the last holder's drop must wake it.
            let fd = loop {
                if let Poll::Ready(fd) = Pin::new(&mut owned).poll(&mut cx) {
                    break fd;
                }
                rx.recv_timeout(std::time::Duration::from_secs(20))
                    .expect("HUNG: the last holder's drop did not wake the waiter");
            };
            threads.into_iter().for_each(|t| t.join().unwrap());
            drop(fd);
        }
    }

    fn ignore_wakes() -> std::task::Waker {
        use std::task::Wake;
        struct Ignore;
        impl Wake for Ignore {
            fn wake(self: Arc<Self>) {}
        }
        std::task::Waker::from(Arc::new(Ignore))
    }

    /// An `into_owned` given up after its first poll (`file.close()` under a timeout that
    /// fired) leaves no trace: the remaining holders, dropped on two threads at once, free
    /// the allocation once and after every use (Miri saw a use after free here when
    /// `WAITING` stayed set).
    #[test]
    fn an_into_owned_given_up_leaves_the_other_holders_a_plain_count() {
        let waker = ignore_wakes();
        let mut cx = Context::from_waker(&waker);
        let rounds = if cfg!(miri) { 20 } else { 1000 };
        for _ in 0..rounds {
            let fd = shared();
            let (a, b) = (fd.clone(), fd.clone());
            let mut owned = fd.into_owned();
            assert!(Pin::new(&mut owned).poll(&mut cx).is_pending());
            drop(owned);
            assert_eq!(b.holders(), 2);
            let t = std::thread::spawn(move || drop(a));
            drop(b);
            t.join().unwrap();
        }
    }

    /// The owner gives up waiting while the last other holder leaves it alone on another
    /// thread: whichever ends second frees the allocation, never while the other still
    /// uses it.
    #[test]
    fn an_owner_giving_up_while_the_last_other_holder_leaves_frees_once() {
        let waker = ignore_wakes();
        let mut cx = Context::from_waker(&waker);
        let rounds = if cfg!(miri) { 20 } else { 1000 };
        for _ in 0..rounds {
            let fd = shared();
            let other = fd.clone();
            let mut owned = fd.into_owned();
            assert!(Pin::new(&mut owned).poll(&mut cx).is_pending());
            let start = Arc::new(std::sync::Barrier::new(2));
            let t = {
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    drop(other)
                })
            };
            start.wait();
            drop(owned);
            t.join().unwrap();
        }
    }

    #[test]
    fn the_descriptor_closes_with_its_last_holder_on_any_thread() {
        use std::io::Read;
        let rounds = if cfg!(miri) { 10 } else { 100 };
        for _ in 0..rounds {
            let (mut reader, writer) = pipe();
            let fd = SharedFd::new(writer);
            let clones: Vec<SharedFd> = (0..4).map(|_| fd.clone()).collect();
            assert_eq!(fd.holders(), 5);
            drop(fd);
            let threads: Vec<_> = clones
                .into_iter()
                .map(|c| std::thread::spawn(move || drop(c)))
                .collect();
            threads.into_iter().for_each(|t| t.join().unwrap());
            // End of file: the last holder closed the only write end.
            assert_eq!(reader.read(&mut [0u8; 1]).unwrap(), 0);
        }
    }
}
