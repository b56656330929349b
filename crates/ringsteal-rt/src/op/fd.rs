//! [`SharedFd`]: a file descriptor shared by its owner and the ops in flight on it, closed
//! only when the last of them lets go, so an op never acts on a reused descriptor number;
//! and [`IntoOwned`], for the owner who wants it back (to close it and hear the result) once
//! the others have let go.

use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::sync::atomic_waker::AtomicWaker;

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
    inner: ManuallyDrop<Arc<Inner>>,
}

struct Inner {
    fd: OwnedFd,
    /// The `SharedFd`s alive. Counted apart from the `Arc` so that the step down to one
    /// can wake the holder waiting in [`SharedFd::into_owned`].
    holders: AtomicUsize,
    /// The holder waiting in `into_owned`, if any.
    last_holder: AtomicWaker,
}

impl SharedFd {
    /// Takes ownership of `fd`.
    pub fn new(fd: OwnedFd) -> Self {
        Self {
            inner: ManuallyDrop::new(Arc::new(Inner {
                fd,
                holders: AtomicUsize::new(1),
                last_holder: AtomicWaker::new(),
            })),
        }
    }

    /// The descriptor, if no op (and no clone) holds it any more.
    pub fn try_unwrap(self) -> Result<OwnedFd, Self> {
        if self.inner.holders.load(Acquire) != 1 {
            return Err(self);
        }
        match Arc::try_unwrap(self.into_arc()) {
            Ok(inner) => Ok(inner.fd),
            // Another holder has let go (the count says one) but is still dropping its `Arc`.
            Err(arc) => Err(Self {
                inner: ManuallyDrop::new(arc),
            }),
        }
    }

    /// Waits until every other holder (ops in flight on the descriptor, and clones) has let
    /// go, then yields the descriptor. An op dropped while in flight lets go when its
    /// cancellation completes; one still awaited, when it completes.
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
        self.inner.holders.load(Acquire)
    }

    /// The `Arc`, without letting go as a holder (the caller is the last one, or rebuilds
    /// a `SharedFd` from it).
    fn into_arc(self) -> Arc<Inner> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the Arc is moved out once.
        unsafe { ManuallyDrop::take(&mut this.inner) }
    }
}

impl Clone for SharedFd {
    fn clone(&self) -> Self {
        self.inner.holders.fetch_add(1, Relaxed);
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for SharedFd {
    fn drop(&mut self) {
        let left = self.inner.holders.fetch_sub(1, AcqRel) - 1;
        // Taken before the Arc goes: the waiter may free `Inner` as soon as it can unwrap.
        let waiter = (left == 1).then(|| self.inner.last_holder.take()).flatten();
        // SAFETY: dropped once, here; `inner` is not used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.inner) };
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

impl AsRawFd for SharedFd {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.fd.as_raw_fd()
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

/// The future returned by [`SharedFd::into_owned`].
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct IntoOwned {
    fd: Option<SharedFd>,
}

impl Future for IntoOwned {
    type Output = OwnedFd;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<OwnedFd> {
        let fd = self.fd.take().expect("IntoOwned polled after it completed");
        // Registered before looking: a holder that lets go after the look wakes us.
        fd.inner.last_holder.register(cx.waker());
        match fd.try_unwrap() {
            Ok(owned) => Poll::Ready(owned),
            Err(fd) => {
                if fd.holders() == 1 {
                    // The last other holder is between its two decrements: look again soon.
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

    fn dev_null() -> SharedFd {
        SharedFd::new(std::fs::File::open("/dev/null").unwrap().into())
    }

    #[test]
    fn try_unwrap_gives_the_descriptor_back_only_to_the_last_holder() {
        let fd = dev_null();
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
        for _ in 0..100 {
            let fd = dev_null();
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
}
