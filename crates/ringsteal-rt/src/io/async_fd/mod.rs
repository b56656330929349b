//! [`AsyncFd`]: tokio's `AsyncFd`, readiness for a descriptor the program owns and reads or
//! writes itself (a tun device, an inotify instance, a netlink socket, a serial port).
//!
//! The waits go through a [`ReadinessCache`]: each that finds nothing ready in the cache is
//! a one-shot `IORING_OP_POLL_ADD` on the ring of the shard that polls it, and what a poll
//! reports is cached until a guard clears it after the descriptor said `EAGAIN`, as in
//! tokio's edge-triggered model; so a descriptor that stays ready costs no poll per call.
//!
//! Owns: the descriptor's owner, its readiness cache, the directions it was made for.
//! `guard.rs` holds the guards that `try_io` and `clear_ready` go through.
//! May not: read or write the descriptor (the program does, in `try_io`).

mod guard;

pub use guard::{AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{ready, Context, Poll};

use crate::io::{Interest, ReadinessCache, ReadyEvent};

/// Readiness for a descriptor you own, as tokio's `AsyncFd`: wait until it is readable or
/// writable, make the non-blocking system call yourself inside
/// [`try_io`](AsyncFdReadyGuard::try_io), and wait again when it says `WouldBlock`.
///
/// The descriptor must be in non-blocking mode (`O_NONBLOCK`), as for tokio, or a read in
/// `try_io` can block the shard, and must stay the same while the `AsyncFd` holds it (do not
/// swap it through `get_mut`), as for tokio. It closes when the inner value is dropped; if a
/// wait was in the kernel then, the kernel holds the file until that wait's cancel lands
/// (within a tick of the shard that armed it), so a peer may see the close that much later.
/// The inner value is any `AsRawFd`: a `std` type, an `OwnedFd`, your own device type.
///
/// Differences from tokio: a wait asks the kernel with a one-shot `POLL_ADD` on the polling
/// shard's ring, so an `AsyncFd` may be shared between tasks on any shards; and a regular
/// file, which epoll refuses (tokio's `new` fails), is accepted here and always reported
/// ready, as `poll(2)` does. Readiness for sockets the runtime made is on the sockets
/// themselves (`readable`, `try_read`, ...); `AsyncFd` is for descriptors it did not make.
///
/// ```
/// use std::io::Read;
/// use std::os::unix::net::UnixStream;
/// use ringsteal_rt::io::AsyncFd;
///
/// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
/// rt.block_on(async {
///     let (a, b) = UnixStream::pair()?;
///     a.set_nonblocking(true)?;
///     let a = AsyncFd::new(a)?;
///     std::io::Write::write_all(&mut &b, b"ping")?;
///     let mut buf = [0; 16];
///     let n = loop {
///         let mut guard = a.readable().await?;
///         match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
///             Ok(result) => break result?,
///             Err(_would_block) => continue, // readiness cleared: wait again
///         }
///     };
///     assert_eq!(&buf[..n], b"ping");
///     Ok::<(), std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct AsyncFd<T: AsRawFd> {
    /// Declared before `inner`: the cancels of its polls are asked for before the
    /// descriptor closes.
    cache: ReadinessCache,
    interest: Interest,
    inner: T,
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Wraps `inner` for waits in both directions.
    ///
    /// # Errors
    /// `EBADF` if `inner` names no open descriptor.
    pub fn new(inner: T) -> io::Result<Self> {
        Self::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Wraps `inner` for waits in the directions of `interest` only; a wait for another
    /// direction fails with `InvalidInput` (under tokio it would never end).
    ///
    /// # Errors
    /// `EBADF` if `inner` names no open descriptor.
    ///
    /// ```
    /// use ringsteal_rt::io::{AsyncFd, Interest};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    ///     a.set_nonblocking(true).unwrap();
    ///     let a = AsyncFd::with_interest(a, Interest::WRITABLE).unwrap();
    ///     a.writable().await.unwrap(); // room in the send buffer
    ///     let err = a.readable().await.unwrap_err();
    ///     assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    /// });
    /// ```
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<Self> {
        // SAFETY: F_GETFD reads the descriptor's flags and passes no memory.
        if unsafe { libc::fcntl(inner.as_raw_fd(), libc::F_GETFD) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            cache: ReadinessCache::new(),
            interest,
            inner,
        })
    }

    /// The inner value.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The inner value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Gives the inner value back, cancelling a wait of the `poll_*_ready` methods first.
    pub fn into_inner(self) -> T {
        let Self { cache, inner, .. } = self;
        drop(cache);
        inner
    }

    /// Waits until the descriptor is ready for one of `interest`'s directions (or has an
    /// error or a closed side), and gives a guard that says what is ready.
    ///
    /// Cancel-safe: dropped, it has consumed nothing.
    ///
    /// # Errors
    /// The poll's (`EBADF`, ...), or `InvalidInput` for a direction the `AsyncFd` was not
    /// made for.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.wait(interest).await?;
        Ok(AsyncFdReadyGuard::new(self, event))
    }

    /// [`ready`](Self::ready), with a guard that lends the `AsyncFd` mutably.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = self.wait(interest).await?;
        Ok(AsyncFdReadyMutGuard::new(self, event))
    }

    /// Waits until a read would not block: `ready(Interest::READABLE)`.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    /// [`readable`](Self::readable), with a guard that lends the `AsyncFd` mutably.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits until a write would not block: `ready(Interest::WRITABLE)`.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// [`writable`](Self::writable), with a guard that lends the `AsyncFd` mutably.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Runs `f` each time the descriptor is ready for `interest`, until it returns something
    /// other than `WouldBlock`, as tokio's `async_io`.
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use ringsteal_rt::io::{AsyncFd, Interest};
    ///
    /// let rt = ringsteal_rt::Runtime::builder().shards(1).build().unwrap();
    /// rt.block_on(async {
    ///     let (a, b) = std::os::unix::net::UnixStream::pair()?;
    ///     a.set_nonblocking(true)?;
    ///     let a = AsyncFd::new(a)?;
    ///     a.async_io(Interest::WRITABLE, |s| (&*s).write(b"hi")).await?;
    ///     let mut buf = [0; 2];
    ///     (&b).read_exact(&mut buf)?;
    ///     assert_eq!(&buf, b"hi");
    ///     Ok::<(), std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    /// `f`'s, or as for [`ready`](Self::ready).
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            let mut guard = self.ready(interest).await?;
            if let Ok(result) = guard.try_io(|fd| f(fd.get_ref())) {
                return result;
            }
        }
    }

    /// [`async_io`](Self::async_io), with `f` given the inner value mutably.
    ///
    /// # Errors
    /// `f`'s, or as for [`ready`](Self::ready).
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            let mut guard = self.ready_mut(interest).await?;
            if let Ok(result) = guard.try_io(|fd| f(fd.get_mut())) {
                return result;
            }
        }
    }

    /// Polls for read readiness, as tokio's `poll_read_ready`: only the task of the latest
    /// call is woken (one poll is kept per direction across calls).
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_wait(cx, Interest::READABLE))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// [`poll_read_ready`](Self::poll_read_ready), with a guard that lends the `AsyncFd`
    /// mutably.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_wait(cx, Interest::READABLE))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Polls for write readiness, as tokio's `poll_write_ready` (see
    /// [`poll_read_ready`](Self::poll_read_ready)).
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_wait(cx, Interest::WRITABLE))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// [`poll_write_ready`](Self::poll_write_ready), with a guard that lends the `AsyncFd`
    /// mutably.
    ///
    /// # Errors
    /// As for [`ready`](Self::ready).
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_wait(cx, Interest::WRITABLE))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Waits with a poll of its own until the cache has something for `interest`.
    async fn wait(&self, interest: Interest) -> io::Result<ReadyEvent> {
        let interest = self.allowed(interest)?;
        self.cache.ready(&self.inner, interest).await
    }

    /// Waits with the kept poll of `direction` (`poll_*_ready`).
    fn poll_wait(&self, cx: &mut Context<'_>, direction: Interest) -> Poll<io::Result<ReadyEvent>> {
        self.allowed(direction)?;
        if direction.is_readable() {
            self.cache.poll_read_ready(cx, &self.inner)
        } else {
            self.cache.poll_write_ready(cx, &self.inner)
        }
    }

    /// The part of `interest` this `AsyncFd` was made for, or `InvalidInput` if none.
    fn allowed(&self, interest: Interest) -> io::Result<Interest> {
        let read = interest.is_readable() && self.interest.is_readable();
        let write = interest.is_writable() && self.interest.is_writable();
        match (read, write) {
            (true, true) => Ok(Interest::READABLE | Interest::WRITABLE),
            (true, false) => Ok(Interest::READABLE),
            (false, true) => Ok(Interest::WRITABLE),
            (false, false) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the AsyncFd was not made for this interest (AsyncFd::with_interest)",
            )),
        }
    }

    /// Clears what `event` reported (a guard's `clear_ready`).
    fn clear(&self, event: ReadyEvent) {
        self.cache.clear(event);
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open while `inner`, which owns it and is borrowed
        // with `self`, lives.
        unsafe { BorrowedFd::borrow_raw(self.inner.as_raw_fd()) }
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}
